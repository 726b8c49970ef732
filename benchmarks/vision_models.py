# SPDX-License-Identifier: Apache-2.0
"""The models table of issue #15: torchvision's own classes, quantized as their users do (the
quantizable classes through eager fuse_model / prepare / convert, the float classes through FX
prepare_fx / convert_fx; tests/test_vision.py builds them the same way), exported with
qrt_export, then per model and flow: how many output values equal torch qnnpack's, the blob
size, and batch-1 latency of qrt against torch qnnpack at one thread (interleaved rounds,
medians; every call takes the float input and returns float logits).

Usage: python benchmarks/vision_models.py [--models mobilenet_v2 resnet18 ...]
       [--flows eager fx] [--rounds 5] [--calls 3] [--inputs 4]
(needs torch and torchvision; random weights, BatchNorm statistics re-estimated on random
inputs; 224x224, InceptionV3 299x299).
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: F401,E402 - numpy loads after OPENBLAS_NUM_THREADS is set

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
warnings.filterwarnings("ignore")

MODELS = [("mobilenet_v2", 224), ("mobilenet_v3_large", 224), ("resnet18", 224),
          ("resnet50", 224), ("googlenet", 224), ("inception_v3", 299)]


def _median_ms(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", default=[m for m, _ in MODELS])
    ap.add_argument("--flows", nargs="+", default=["eager", "fx"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--inputs", type=int, default=4, help="random inputs compared (batch 1)")
    a = ap.parse_args()
    import torch
    import qrt
    import qrt_export
    from test_vision import _eager, _fx
    torch.set_num_threads(1)
    qrt.set_num_threads(1)
    sizes = dict(MODELS)
    print("| model | flow | size | exact values | blob MB | qrt ms | torch qnnpack ms "
          "| torch / qrt |")
    print("|---|---|---|---|---|---|---|---|")
    for name in a.models:
        size = sizes[name]
        for flow in a.flows:
            tm = (_eager if flow == "eager" else _fx)(name, size)
            torch.backends.quantized.engine = "qnnpack"
            g = torch.Generator().manual_seed(5)
            x = torch.randn(1, 3, size, size, generator=g)
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "m.bin")
                qrt_export.export(tm, x, path, verbose=False)
                mb = os.path.getsize(path) / 1e6
                q = qrt.load(path)
                eq = tot = 0
                for _ in range(a.inputs):
                    xb = torch.randn(1, 3, size, size, generator=g)
                    with torch.inference_mode():
                        want = tm(xb).numpy()
                    got = q(xb.numpy())
                    eq += int((got == want).sum())
                    tot += want.size
                xn = x.numpy()
                with torch.inference_mode():
                    tm(x), q(xn)
                    tq, tt = [], []
                    for _ in range(a.rounds):
                        tq.append(_median_ms(lambda: q(xn), a.calls))
                        tt.append(_median_ms(lambda: tm(x), a.calls))
                mq, mt = statistics.median(tq), statistics.median(tt)
                print(f"| {name} | {flow} | {size} | {100 * eq / tot:.4f} % of {tot} | {mb:.2f} "
                      f"| {mq:.2f} | {mt:.2f} | {mt / mq:.2f}x |", flush=True)


if __name__ == "__main__":
    main()

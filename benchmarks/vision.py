# SPDX-License-Identifier: Apache-2.0
"""Batch-1, one-thread latency of torchvision's quantizable MobileNetV2 (224x224): qrt vs torch
(qnnpack engine, the exactness reference, and the x86/fbgemm engines), side by side in one
process, interleaved rounds, medians and minimums.

Usage: python benchmarks/vision.py [--arch mobilenet_v2] [--size 224] [--rounds 7] [--calls 20]
(needs torch and torchvision). Random weights, BatchNorm statistics re-estimated on random
inputs (tests/_torch_models.py). Every timed call takes the float input and returns the float
output (quantize and dequantize included). The qrt blob is checked exact vs torch qnnpack first.
Peers (onnxruntime, LiteRT): /work/shared/bench/vision and docs peer-performance section 13.
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import warnings


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
warnings.filterwarnings("ignore")


def quant_model(tvq, arch, engine, size, seed=0):
    import torch
    from _torch_models import bn_recalibrate
    torch.backends.quantized.engine = engine
    torch.manual_seed(seed)
    m = bn_recalibrate(getattr(tvq, arch)(weights=None, quantize=False), (4, 3, size, size))
    m.eval().fuse_model()
    m.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    torch.ao.quantization.prepare(m, inplace=True)
    g = torch.Generator().manual_seed(123)
    with torch.inference_mode():
        for _ in range(4):
            m(torch.randn(1, 3, size, size, generator=g))
    torch.ao.quantization.convert(m, inplace=True)
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="mobilenet_v2")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20)
    a = ap.parse_args()
    import torch
    from _torch_models import torchvision
    torchvision()
    from torchvision.models import quantization as tvq
    import qrt
    import qrt_export
    torch.set_num_threads(1)
    qrt.set_num_threads(1)
    x = torch.randn(1, 3, a.size, a.size, generator=torch.Generator().manual_seed(7))
    xn = x.numpy()
    tq = quant_model(tvq, a.arch, "qnnpack", a.size)
    tmp = tempfile.TemporaryDirectory()
    path = os.path.join(tmp.name, f"{a.arch}.bin")
    torch.backends.quantized.engine = "qnnpack"
    rep = qrt_export.export(tq, x, path, verbose=False)
    q = qrt.load(path)
    with torch.inference_mode():
        want = tq(x).numpy()
    exact = float((q(xn) == want).mean())
    print(f"{a.arch} {a.size}x{a.size}: qrt vs torch qnnpack {100 * exact:.4f} % exact, "
          f"{rep.macs / 1e6:.2f} M MACs")
    engines = {"torch qnnpack": ("qnnpack", tq)}
    for eng in ("x86", "fbgemm"):
        engines[f"torch {eng}"] = (eng, quant_model(tvq, a.arch, eng, a.size))

    def run_torch(eng, m):
        def f():
            torch.backends.quantized.engine = eng
            with torch.inference_mode():
                m(x)
        return f
    fns = {"qrt": lambda: q(xn)}
    fns.update({k: run_torch(*v) for k, v in engines.items()})
    for f in fns.values():
        f()
        f()
    times = {k: [] for k in fns}
    for _ in range(a.rounds):
        order = list(fns)
        random.shuffle(order)
        for k in order:
            t0 = time.perf_counter()
            for _ in range(a.calls):
                fns[k]()
            times[k].append(1e3 * (time.perf_counter() - t0) / a.calls)
    base = statistics.median(times["qrt"])
    print(f"one thread, batch 1, {a.rounds} rounds x {a.calls} calls (order shuffled per round)")
    for k, ts in times.items():
        med = statistics.median(ts)
        print(f"  {k:14s} {med:8.2f} ms median ({min(ts):.2f} min)   {med / base:5.2f}x qrt's"
              f"   {rep.macs / med / 1e6:6.1f} GMAC/s")
    prof = q.profile(xn)
    by = {}
    for r in prof.rows:
        kind = r["op"] + (" dw" if r["op"].startswith("conv2d") and _dw(q, r["index"]) else "")
        t, n = by.get(kind, (0.0, 0))
        by[kind] = (t + r["us"], n + 1)
    total = sum(t for t, _ in by.values())
    print(f"qrt profile: {total / 1e3:.2f} ms in ops")
    for kind, (t, n) in sorted(by.items(), key=lambda kv: -kv[1][0]):
        if t > 0:
            print(f"  {kind:22s} x{n:3d} {t / 1e3:7.2f} ms  {100 * t / total:5.1f} %")


def _dw(q, index):
    node = q.graph.nodes[index]
    w = node.params.get("weight")
    return w is not None and w.shape[1] == 1 and node.attrs.get("groups", 1) > 1


if __name__ == "__main__":
    main()

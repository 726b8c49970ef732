# SPDX-License-Identifier: Apache-2.0
"""Batch-1 latency of the seed example of issue 15: torchvision's float MobileNetV2 through
``torch.quantization.quantize_dynamic(m, {Conv2d, Linear})``, which quantizes only the Linear
(torch 2.13 has no dynamic Conv2d), exported by qrt-export and run by qrt's float32 ops
(float_conv2d, float_batch_norm, float_clamp, the float pools, linear_dynamic), against torch's
float model and torch's quantize_dynamic model, and against the static int8 model that
``qrt-export --calibrate`` makes of the same file (torch.ao FX, qnnpack).

Usage: python benchmarks/vision_dynamic.py [--size 224] [--rounds 7] [--calls 10]
Needs torch and torchvision. One thread everywhere: torch.set_num_threads(1),
qrt.set_num_threads(1) and OPENBLAS_NUM_THREADS=1 (numpy's BLAS, which qrt's float GEMMs use),
set before numpy is imported. Random weights, BatchNorm statistics re-estimated on random
inputs (tests/_torch_models.py). Interleaved rounds (order shuffled per round), medians and
ratios to qrt float's median.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

# one thread means one thread: numpy's OpenBLAS (qrt's float matmuls) would otherwise start
# its own pool on bigger products (set before numpy loads it)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
warnings.filterwarnings("ignore")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=10)
    a = ap.parse_args()
    import torch
    from _torch_models import bn_recalibrate, torchvision
    tv = torchvision()
    import qrt
    import qrt_export
    torch.set_num_threads(1)
    qrt.set_num_threads(1)
    torch.manual_seed(0)
    m = bn_recalibrate(tv.models.mobilenet_v2(weights=None), (4, 3, a.size, a.size)).eval()
    torch.backends.quantized.engine = "qnnpack"   # packs the dynamic Linear for qnnpack
    qm = torch.quantization.quantize_dynamic(m, {torch.nn.Conv2d, torch.nn.Linear},
                                             dtype=torch.qint8)
    g = torch.Generator().manual_seed(7)
    x = torch.randn(1, 3, a.size, a.size, generator=g)
    xn = x.numpy()
    calib = [torch.randn(4, 3, a.size, a.size, generator=g) for _ in range(2)]
    tmp = tempfile.TemporaryDirectory()
    pf, ps = os.path.join(tmp.name, "float.bin"), os.path.join(tmp.name, "static.bin")
    torch.backends.quantized.engine = "qnnpack"
    rep = qrt_export.export(qm, x, pf, verbose=False)
    rep_s = qrt_export.export(qm, x, ps, calibration_data=calib, verbose=False)
    qf, qs = qrt.load(pf), qrt.load(ps)
    with torch.inference_mode():
        want_f, want_d = m(x).numpy(), qm(x).numpy()
    got = qf(xn)
    err = float(np.abs(got - want_d).max() / (np.abs(want_d).max() + 1))
    err_f = float(np.abs(got - want_f).max() / (np.abs(want_f).max() + 1))
    print(f"mobilenet_v2 {a.size}x{a.size}: {rep.macs / 1e6:.1f} M MACs, "
          f"{100.0 * rep.float_macs / rep.macs:.1f} % in float32 ops; qrt float vs torch "
          f"quantize_dynamic (qnnpack): max|d| / (max|t| + 1) = {err:.2e}; vs torch float: "
          f"{err_f:.2e} (the dynamic Linear's int8 rounding)")
    with torch.inference_mode():
        want_s = rep_s.torch_model(x).numpy()
    print(f"static int8 (qrt-export --calibrate): qrt vs torch qnnpack "
          f"{100.0 * float((qs(xn) == want_s).mean()):.4f} % exact; blobs: float "
          f"{rep.nbytes / 1e6:.1f} MB, static {rep_s.nbytes / 1e6:.1f} MB")

    def run_torch(model, eng):
        def f():
            torch.backends.quantized.engine = eng
            with torch.inference_mode():
                model(x)
        return f
    fns = {"qrt float (dynamic)": lambda: qf(xn),
           "torch float": run_torch(m, "x86"),
           "torch dynamic (qnnpack)": run_torch(qm, "qnnpack"),
           "qrt static int8": lambda: qs(xn)}
    for f in fns.values():
        f()
        f()
    times = {k: [] for k in fns}
    cpu = {k: [] for k in fns}
    for _ in range(a.rounds):
        order = list(fns)
        random.shuffle(order)
        for k in order:
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(a.calls):
                fns[k]()
            cpu[k].append(1e3 * (time.process_time() - c0) / a.calls)
            times[k].append(1e3 * (time.perf_counter() - t0) / a.calls)
    base = statistics.median(times["qrt float (dynamic)"])
    cbase = statistics.median(cpu["qrt float (dynamic)"])
    print(f"1 thread, batch 1, {a.rounds} rounds x {a.calls} calls (order shuffled per round); "
          "ratio = median / qrt float's median; CPU = process time (what a shared host's "
          "wall clock hides)")
    for k, ts in times.items():
        med, cmed = statistics.median(ts), statistics.median(cpu[k])
        print(f"  {k:24s} wall {med:8.2f} ms median ({min(ts):.2f} min) {med / base:5.2f}x   "
              f"CPU {cmed:8.2f} ms median ({min(cpu[k]):.2f} min) {cmed / cbase:5.2f}x")
    st = statistics.median(times["qrt static int8"])
    cst = statistics.median(cpu["qrt static int8"])
    print(f"static int8 over float on qrt: {base / st:.2f}x faster (wall), {cbase / cst:.2f}x "
          "(CPU)")
    prof = qf.profile(xn)
    by = {}
    for r in prof.rows:
        node = qf.graph.nodes[r["index"]]
        w = node.params.get("weight")
        kind = r["op"]
        if kind == "float_conv2d" and w is not None:
            kind += (" dw" if w.shape[1] == 1 and node.attrs["groups"] > 1 else
                     " 1x1" if w.shape[2:] == (1, 1) else " kxk")
        t, n = by.get(kind, (0.0, 0))
        by[kind] = (t + r["us"], n + 1)
    total = sum(t for t, _ in by.values())
    print(f"qrt float profile (1 thread): {total / 1e3:.2f} ms in ops")
    for kind, (t, n) in sorted(by.items(), key=lambda kv: -kv[1][0]):
        if t > 0:
            print(f"  {kind:22s} x{n:3d} {t / 1e3:7.2f} ms  {100 * t / total:5.1f} %")


if __name__ == "__main__":
    main()

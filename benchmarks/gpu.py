# SPDX-License-Identifier: Apache-2.0
"""GPU vs CPU: the conv1d benchmark shapes and the demo model, with a bit-exactness check.

Run on a machine with an NVIDIA GPU and CuPy (``pip install qrt[gpu]``)::

    python benchmarks/gpu.py [--shapes conv1d_shapes.json] [--repeat 20] [--model qrt/data/demo.bin]

For every shape it prints the median time per call on the CPU (qrt.functional.conv1d; torch's
qnnpack engine when this checkout has no qrt conv yet) and on the GPU (DeviceConv1d, weights
resident, input already on the device, synchronised), and whether the GPU integers equal the CPU
integers.  Without CuPy or a GPU it says what is missing and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _shapes_path(arg):
    for p in (arg, os.environ.get("QRT_BENCH_SHAPES"),
              os.path.join(ROOT, "benchmarks", "conv1d_shapes.json"),
              "/work/shared/bench/conv1d_shapes.json"):
        if p and os.path.exists(p):
            return p
    sys.exit("no conv1d_shapes.json found: pass --shapes PATH or set QRT_BENCH_SHAPES")


def _median_time(fn, repeat, sync=None):
    fn()  # warm-up (compiles kernels, fills caches)
    if sync:
        sync()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def _cpu_conv(shape, x, w, wscales, bias, sa, za, so, zo):
    """(callable returning the quint8 output as numpy, label) for the CPU reference."""
    import qrt
    conv = getattr(qrt.functional, "conv1d", None)
    kw = dict(stride=shape["stride"], padding=shape["padding"], dilation=shape["dilation"],
              groups=shape["groups"], scale=so, zero_point=zo)
    if conv is not None:
        xq = qrt.from_int_repr(x, sa, za, qrt.quint8)
        wq = qrt.from_int_repr_per_channel(w, wscales, np.zeros(len(wscales), np.int64), 0,
                                           qrt.qint8)
        return (lambda: conv(xq, wq, bias, **kw).int_repr()), "qrt cpu"
    try:
        import torch
    except ImportError:
        return None, "no CPU conv1d (qrt.functional.conv1d missing, torch not installed)"
    torch.backends.quantized.engine = "qnnpack"
    torch.set_num_threads(1)
    xq = torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), sa, za)
    wq = torch._make_per_channel_quantized_tensor(torch.from_numpy(w), torch.from_numpy(wscales),
                                                  torch.zeros(len(wscales), dtype=torch.long), 0)
    qF = torch.ao.nn.quantized.functional
    tb = torch.from_numpy(bias)
    return (lambda: qF.conv1d(xq, wq, tb, **kw).int_repr().numpy()), "torch qnnpack (1 thread)"


def bench_shapes(cb, cp, path, repeat):
    with open(path, encoding="utf-8") as f:
        shapes = json.load(f)["shapes"]
    rng = np.random.default_rng(0)
    print(f"{'shape':<16} {'cpu ms':>9} {'gpu ms':>9} {'speed-up':>9}  exact  (cpu = ...)")
    all_exact = True
    for s in shapes:
        cg = s["cin"] // s["groups"]
        x = rng.integers(0, 256, (s["n"], s["cin"], s["length"]), dtype=np.uint8)
        w = rng.integers(-127, 128, (s["cout"], cg, s["kernel"]), dtype=np.int8)
        wscales = rng.uniform(0.002, 0.02, s["cout"])
        bias = rng.normal(0, 1, s["cout"]).astype(np.float32)
        sa, za, so, zo = 0.05, 128, 0.1, 120
        layer = cb.DeviceConv1d(w, wscales, np.zeros(s["cout"], np.int64), bias,
                                stride=s["stride"], padding=s["padding"],
                                dilation=s["dilation"], groups=s["groups"])
        dx = cb.DeviceQTensor(cp.asarray(x), sa, za)
        out = cp.empty(layer.out_shape(x.shape), dtype=cp.uint8)
        t_gpu = _median_time(lambda: layer(dx, so, zo, out=out), repeat,
                             cp.cuda.Stream.null.synchronize)
        cpu_fn, label = _cpu_conv(s, x, w, wscales, bias, sa, za, so, zo)
        if cpu_fn is None:
            print(f"{s['name']:<16} {'-':>9} {t_gpu * 1e3:9.3f} {'-':>9}  ?      ({label})")
            continue
        t_cpu = _median_time(cpu_fn, max(3, repeat // 4))
        exact = bool(np.array_equal(np.asarray(cpu_fn()), cp.asnumpy(out)))
        all_exact &= exact
        print(f"{s['name']:<16} {t_cpu * 1e3:9.3f} {t_gpu * 1e3:9.3f} {t_cpu / t_gpu:9.1f}  "
              f"{'yes' if exact else 'NO':<5}  ({label})")
    return all_exact


def bench_model(cb, cp, path, repeat):
    import qrt
    if not os.path.exists(path):
        print(f"model: {path} not found; skipped")
        return True
    dev = cb.load(path)
    e = dev.blob.tensors[dev.blob.inputs[0]]
    rng = np.random.default_rng(1)
    ok = True
    for batch in (1, 64):
        shape = ((batch,) + tuple(e.shape[1:])) if e.batched else tuple(e.shape)
        x = rng.normal(0, 1, shape).astype(np.float32)
        dx = cp.asarray(x)
        t_gpu = _median_time(lambda: dev(dx, as_cupy=True), repeat,
                             cp.cuda.Stream.null.synchronize)
        line = f"model {os.path.basename(path)} batch {shape[0]:>3}: gpu {t_gpu * 1e3:8.3f} ms"
        if hasattr(qrt, "load"):
            cpu = qrt.load(path)
            t_cpu = _median_time(lambda: cpu(x), max(3, repeat // 4))
            def ints(r):
                return [np.asarray(v.int_repr() if hasattr(v, "int_repr") else v)
                        for v in (r if isinstance(r, tuple) else (r,))]
            exact = all(np.array_equal(a, b) for a, b in zip(ints(dev(x)), ints(cpu(x))))
            ok &= exact
            line += f", cpu {t_cpu * 1e3:8.3f} ms, speed-up {t_cpu / t_gpu:6.1f}, " \
                    f"exact {'yes' if exact else 'NO'}"
        print(line)
    return ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", help="conv1d_shapes.json")
    ap.add_argument("--model", default=os.path.join(ROOT, "qrt", "data", "demo.bin"))
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    from qrt import backends
    try:
        cb = backends.get("cupy")
    except backends.BackendUnavailable as e:
        print(f"benchmarks/gpu.py needs a GPU: {e}", file=sys.stderr)
        return 2
    cp = cb.cp
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"GPU: {name}; CuPy {cp.__version__}")
    ok = bench_shapes(cb, cp, _shapes_path(args.shapes), args.repeat)
    ok &= bench_model(cb, cp, args.model, args.repeat)
    print("all GPU results bit-exact with the CPU" if ok else "MISMATCH between GPU and CPU")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

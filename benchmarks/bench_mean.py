# SPDX-License-Identifier: Apache-2.0
"""Quantized mean over time (op ``mean``) and quantized batch norm (op ``batch_norm``): qrt vs
torch 2.13 (qnnpack engine), one thread, side by side in one process.

Usage: python benchmarks/bench_mean.py [--repeat R]   (needs torch and qrt_export).  Prints
the median microseconds per call over R interleaved rounds: qrt's bound op alone (the kernel
call a model plan makes), the qrt model call (one-op blob: input checks and copy-in, the op,
copy-out), torch's op on a quantized tensor, and torch / qrt for both.
"""

import argparse
import statistics
import tempfile
import timeit
import warnings
from pathlib import Path

import numpy as np
import torch

import qrt
from qrt_export import BlobBuilder

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
torch.backends.quantized.engine = "qnnpack"


def one_op(path, kind, x, out_shape, params=(), attrs=None, out_qparams=None):
    b = BlobBuilder()
    xi = b.activation("x", "quint8", x.shape, scale=x.q_scale(), zero_point=x.q_zero_point())
    s, z = out_qparams or (x.q_scale(), x.q_zero_point())
    yi = b.activation("y", "quint8", out_shape, scale=s, zero_point=z)
    ps = [b.constant(f"p{i}", np.ascontiguousarray(p, np.float32)) for i, p in enumerate(params)]
    b.op(kind, "op", [xi], [yi], ps, attrs or {})
    b.inputs, b.outputs = [xi], [yi]
    b.write(path)
    return qrt.load(path)


def interleaved(fns, number, repeat):
    ts = [[] for _ in fns]
    for _ in range(repeat):
        for t, fn in zip(ts, fns):
            t.append(timeit.timeit(fn, number=number))
    return [1e6 * statistics.median(t) / number for t in ts]


def bound(model, x):
    """The one op's bound call (fn, args, kwargs) on the plan's buffers, as the model runs it."""
    plan = model._exec.plan(model._in_shapes((x,)))
    (_, call), = plan.bound
    return call


def row(name, shape, o_us, q_us, t_us):
    print(f"| {name} | {shape} | {o_us:.1f} | {q_us:.1f} | {t_us:.1f} | {t_us / o_us:.2f} | "
          f"{t_us / q_us:.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    qrt.set_num_threads(1)
    rng = np.random.default_rng(0)
    tmp = Path(tempfile.mkdtemp())
    print("| op | shape | qrt op us | qrt model us | torch us | torch/qrt op | torch/qrt model |")
    print("|---|---|---|---|---|---|---|")
    for shape in [(1, 64, 100), (1, 64, 1000), (1, 128, 250), (8, 64, 1000), (1, 16, 16000)]:
        codes = rng.integers(0, 256, shape).astype(np.uint8)
        x = qrt.from_int_repr(codes, 0.05, 120)
        tx = torch._make_per_tensor_quantized_tensor(torch.from_numpy(codes.copy()), 0.05, 120)
        m = one_op(tmp / "mean.bin", "mean", x, shape[:-1])
        assert np.array_equal(m(x).int_repr(), torch.mean(tx, -1).int_repr().numpy())
        n = max(20, int(2e6 // codes.size))
        fn, a, k = bound(m, x)
        o_us, q_us, t_us = interleaved([lambda: fn(*a, **k), lambda: m(x),
                                        lambda: torch.mean(tx, -1)], n, args.repeat)
        row("mean (last dim)", shape, o_us, q_us, t_us)
        c = shape[1]
        w, bb = rng.uniform(0.5, 2, c), rng.normal(0, 1, c)
        mu, var = rng.normal(0, 1, c), rng.uniform(0.5, 2, c)
        mb = one_op(tmp / "bn.bin", "batch_norm", x, shape, (w, bb, mu, var),
                    {"eps": 1e-5}, (0.03, 100))
        tp = [torch.from_numpy(np.asarray(a, np.float32)) for a in (w, bb, mu, var)]

        def tbn():
            return torch.ops.quantized.batch_norm1d(tx, *tp, 1e-5, 0.03, 100)
        assert np.array_equal(mb(x).int_repr(), tbn().int_repr().numpy())
        fn, a, k = bound(mb, x)
        o_us, q_us, t_us = interleaved([lambda: fn(*a, **k), lambda: mb(x), tbn], max(10, n // 4),
                                       args.repeat)
        row("batch_norm1d", shape, o_us, q_us, t_us)


if __name__ == "__main__":
    main()

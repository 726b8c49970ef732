#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Quantize / dequantize throughput, qrt vs torch, in one process.

For 1M and 16M float32 values, quint8 and qint8, per-tensor and per-channel (64 channels on
axis 0 and on the last axis): the median of ``--repeat`` timed runs of each op, with torch on
1 thread (``torch.set_num_threads(1)``) and on its default thread count.  qrt is
single-threaded.  Prints Melem/s and the ratio torch_time / qrt_time (> 1: qrt is faster).

    python benchmarks/quantize.py [--sizes 1M,16M] [--repeat 15] [--variant -1]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

import qrt
from qrt import _quant, _tensor


def median_time(fn, repeat):
    fn()  # warm-up (page faults, caches)
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def parse_size(s):
    s = s.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20}.get(s[-1], 1)
    return int(float(s.rstrip("KM")) * mult)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1M,16M")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--variant", type=int, default=-1,
                    help="qrt C variant: -1 best, 0 reference, 1 AVX2, 2 AVX-512")
    args = ap.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch
    warnings.filterwarnings("ignore")
    default_threads = torch.get_num_threads()
    v = args.variant
    print(f"qrt {qrt.__version__} (variant {_quant.pick(v)}; best on this CPU "
          f"{_quant.isa()}: 0 ref, 1 AVX2, 2 AVX-512), torch {torch.__version__}, "
          f"numpy {np.__version__}; torch default threads {default_threads}")
    print(f"{'case':44s} {'qrt ms':>8s} {'torch1 ms':>9s} {'ratio1':>7s} "
          f"{'torchN ms':>9s} {'ratioN':>7s}  qrt Melem/s")
    rows = []
    for n in (parse_size(s) for s in args.sizes.split(",")):
        rng = np.random.default_rng(0)
        x = (rng.standard_normal(n) * 3).astype(np.float32)
        tx = torch.from_numpy(x)
        for name in ("quint8", "qint8"):
            dt, tdt = getattr(qrt, name), getattr(torch, name)
            zp = 3 if name == "quint8" else -3
            cases = []
            # per-tensor
            q = _tensor._quantize_per_tensor_impl(x, 0.02, zp, dt, v)
            tq = torch.quantize_per_tensor(tx, 0.02, zp, tdt)
            cases.append((f"quantize per-tensor {name}",
                          lambda: _tensor._quantize_per_tensor_impl(x, 0.02, zp, dt, v),
                          lambda: torch.quantize_per_tensor(tx, 0.02, zp, tdt)))
            cases.append((f"dequantize per-tensor {name}",
                          lambda q=q: _tensor._dequantize_impl(q, v),
                          lambda tq=tq: tq.dequantize()))
            # per-channel, 64 channels, channel axis first and last
            for axis, shape in ((0, (64, n // 64)), (1, (n // 64, 64))):
                xs = x.reshape(shape)
                txs = tx.reshape(shape)
                sc = np.linspace(0.01, 0.05, 64)
                zps = np.full(64, zp, np.int64)
                tsc, tzp = torch.from_numpy(sc), torch.from_numpy(zps)
                sc_, zp_, inv = _tensor._per_channel_params(sc, zps, 64, dt)
                qc = _tensor._quantize_per_channel_impl(xs, sc_, zp_, inv, axis, dt, v)
                tqc = torch.quantize_per_channel(txs, tsc, tzp, axis, tdt)
                assert np.array_equal(qc.int_repr(), tqc.int_repr().numpy())
                cases.append((f"quantize per-channel {name} axis={axis}",
                              lambda xs=xs, a=axis: _tensor._quantize_per_channel_impl(
                                  xs, sc_, zp_, inv, a, dt, v),
                              lambda txs=txs, a=axis: torch.quantize_per_channel(
                                  txs, tsc, tzp, a, tdt)))
                cases.append((f"dequantize per-channel {name} axis={axis}",
                              lambda qc=qc: _tensor._dequantize_impl(qc, v),
                              lambda tqc=tqc: tqc.dequantize()))
            assert np.array_equal(q.int_repr(), tq.int_repr().numpy())
            for label, f_qrt, f_torch in cases:
                t_q = median_time(f_qrt, args.repeat)
                torch.set_num_threads(1)
                t_1 = median_time(f_torch, args.repeat)
                torch.set_num_threads(default_threads)
                t_n = median_time(f_torch, args.repeat)
                size = f"{n >> 20}M" if n >= 1 << 20 else str(n)
                rows.append((t_1 / t_q, t_n / t_q))
                print(f"{size:>4s} {label:39s} {t_q * 1e3:8.3f} {t_1 * 1e3:9.3f} "
                      f"{t_1 / t_q:7.2f} {t_n * 1e3:9.3f} {t_n / t_q:7.2f}  {n / t_q / 1e6:8.0f}")
    g1 = statistics.geometric_mean(r[0] for r in rows)
    gn = statistics.geometric_mean(r[1] for r in rows)
    print(f"geometric mean speed-up of qrt over torch: {g1:.2f}x (torch 1 thread), "
          f"{gn:.2f}x (torch {default_threads} threads); min {min(r[0] for r in rows):.2f}x / "
          f"{min(r[1] for r in rows):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

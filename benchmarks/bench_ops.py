# SPDX-License-Identifier: Apache-2.0
"""Time qrt.functional's ops against torch 2.13 (qnnpack engine, one thread).

Usage: python benchmarks/bench_ops.py [--pool] [--repeat R]   (needs torch).  Prints median
microseconds per call, with qrt writing into a preallocated ``out`` where the op takes one.

``--pool``: only the pooling section: for each shape (the demo's at batch 1 and 64, and
N=8, C=64, L=1000) the kernel alone (qrt._ops with ``variant=0``, the reference, against the
variant this CPU runs), the qrt.functional call before (reference kernel) and after (SIMD),
and torch; then the demo model's per-op profile with the reference and with the SIMD
pooling kernels.
"""

import argparse
import statistics
import timeit
import warnings

import numpy as np
import torch

import qrt
import qrt.functional as F

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
torch.backends.quantized.engine = "qnnpack"
tF = torch.nn.functional


def tq(x):
    ints = torch.from_numpy(np.ascontiguousarray(x.int_repr()).copy())
    return torch._make_per_tensor_quantized_tensor(ints, x.q_scale(), x.q_zero_point())


def med_us(fn, number=50, repeat=7):
    return 1e6 * min(timeit.repeat(fn, number=number, repeat=repeat)) / number


class _RefPoolOps:
    """qrt._ops with the pooling kernels forced to the reference (variant=0): "before"."""

    def __init__(self, ops):
        self._o = ops

    def __getattr__(self, name):
        f = getattr(self._o, name)
        if name in ("max_pool1d", "avg_pool1d", "adaptive_avg_pool1d"):
            return lambda *a, **k: f(*a, variant=0, **k)
        return f


class _pool_ref:
    """Context: qrt.functional's pooling runs the reference kernel."""

    def __enter__(self):
        import qrt.functional._ops as fo
        self._fo, self._saved = fo, fo._ops
        fo._ops = _RefPoolOps(fo._ops)

    def __exit__(self, *exc):
        self._fo._ops = self._saved


def med_of(fn, number, repeat):
    """Median over `repeat` runs of the per-call microseconds of `number` calls."""
    return 1e6 * statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number


def interleaved(fns, number, repeat):
    """Per-call microseconds of each fn: median over `repeat` rounds, the fns timed in turn
    within each round (so load drift on a shared machine hits all of them alike)."""
    ts = [[] for _ in fns]
    for _ in range(repeat):
        for t, (fn, ctx) in zip(ts, fns):
            with ctx():
                t.append(timeit.timeit(fn, number=number))
    return [1e6 * statistics.median(t) / number for t in ts]


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return None


def bench_pool(repeat=9):
    from qrt import _ops
    rng = np.random.default_rng(0)
    isa = {0: "ref", 1: "avx2", 3: "neon"}[_ops.pool_isa()]
    print(f"pooling kernels: reference vs {isa}; medians of {repeat} repeats (us per call)")
    print("| op | shape | kernel ref | kernel simd | ref/simd | F before | F after | "
          "before/after | torch | torch/after |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cases = [
        ("max_pool1d k2 s2 (demo)", (1, 32, 64), dict(kind="max", k=2, s=2, p=0)),
        ("adaptive_avg_pool1d 1 (demo)", (1, 32, 32), dict(kind="adaptive", o=1)),
        ("max_pool1d k2 s2 (demo)", (64, 32, 64), dict(kind="max", k=2, s=2, p=0)),
        ("adaptive_avg_pool1d 1 (demo)", (64, 32, 32), dict(kind="adaptive", o=1)),
        ("max_pool1d k2 s2", (8, 64, 1000), dict(kind="max", k=2, s=2, p=0)),
        ("max_pool1d k3 s1 p1", (8, 64, 1000), dict(kind="max", k=3, s=1, p=1)),
        ("max_pool1d k3 s2 p1", (8, 64, 1000), dict(kind="max", k=3, s=2, p=1)),
        ("avg_pool1d k2 s2 (qnnp)", (8, 64, 1000), dict(kind="avg", k=2, s=2, p=0)),
        ("avg_pool1d k3 s1 p1 (qnnp)", (8, 64, 1000), dict(kind="avg", k=3, s=1, p=1)),
        ("adaptive_avg_pool1d 1", (8, 64, 1000), dict(kind="adaptive", o=1)),
        ("adaptive_avg_pool1d 7 (generic)", (8, 64, 1000), dict(kind="adaptive", o=7)),
    ]
    for name, shape, c in cases:
        a = qrt.from_int_repr(rng.integers(0, 256, shape).astype(np.uint8), 0.05, 3)
        ta = tq(a)
        rows = a.int_repr().reshape(-1, shape[-1])
        if c["kind"] == "max":
            f = lambda: F.max_pool1d(a, c["k"], c["s"], c["p"])  # noqa: E731
            t = lambda: tF.max_pool1d(ta, c["k"], c["s"], c["p"])  # noqa: E731
            o = f()
            o2 = o.int_repr().reshape(rows.shape[0], -1)
            kern = lambda v: _ops.max_pool1d(rows, o2, c["k"], c["s"], c["p"], 1,  # noqa: E731
                                             variant=v)
            fo = lambda: F.max_pool1d(a, c["k"], c["s"], c["p"], out=o)  # noqa: E731
        elif c["kind"] == "avg":
            f = lambda: F.avg_pool1d(a, c["k"], c["s"], c["p"])  # noqa: E731
            t = lambda: tF.avg_pool1d(ta, c["k"], c["s"], c["p"])  # noqa: E731
            o = f()
            o2 = o.int_repr().reshape(rows.shape[0], -1)
            sc = float(np.float32(np.float32(0.05) / np.float32(np.float32(0.05) * c["k"])))
            kern = lambda v: _ops.avg_pool1d(rows, o2, c["k"], c["s"], c["p"], 3,  # noqa: E731
                                             True, True, sc, False, variant=v)
            fo = lambda: F.avg_pool1d(a, c["k"], c["s"], c["p"], out=o)  # noqa: E731
        else:
            t = lambda: tF.adaptive_avg_pool1d(ta, c["o"])  # noqa: E731
            o = F.adaptive_avg_pool1d(a, c["o"])
            o2 = o.int_repr().reshape(rows.shape[0], -1)
            if shape[-1] % c["o"] == 0 and shape[-1] != c["o"]:
                k = shape[-1] // c["o"]
                sc = float(np.float32(np.float32(0.05) / np.float32(np.float32(0.05) * k)))
                kern = lambda v: _ops.avg_pool1d(rows, o2, k, k, 0, 3, True,  # noqa: E731
                                                 True, sc, False, variant=v)
            else:
                kern = lambda v: _ops.adaptive_avg_pool1d(rows, o2, variant=v)  # noqa: E731
            fo = lambda: F.adaptive_avg_pool1d(a, c["o"], out=o)  # noqa: E731
        np.testing.assert_array_equal(o.int_repr(), t().int_repr().numpy())  # same integers
        n = max(20, int(2e5 // max(1, a.int_repr().size // 16)))
        k_ref, k_simd, f_before, f_after, t_us = interleaved(
            [(lambda: kern(0), _nothing), (lambda: kern(-1), _nothing), (fo, _pool_ref),
             (fo, _nothing), (t, _nothing)], n, repeat)
        print(f"| {name} | {shape} | {k_ref:.2f} | {k_simd:.2f} | {k_ref / k_simd:.2f} | "
              f"{f_before:.1f} | {f_after:.1f} | {f_before / f_after:.2f} | {t_us:.1f} | "
              f"{t_us / f_after:.2f} |")


def demo_profile(iters=300):
    from qrt.__main__ import _bench_inputs
    from qrt.data import path as data_path
    m = qrt.load(data_path("demo.bin"))
    for batch in (1, 64):
        xs = _bench_inputs(m, batch)
        it = iters if batch == 1 else max(30, iters // 5)
        rounds = 7  # before and after alternate, `it // rounds` runs each, medians of rounds
        bs, afs = [], []
        for _ in range(rounds):
            with _pool_ref():
                bs.append(m.profile(*xs, iters=max(5, it // rounds), warmup=3))
            afs.append(m.profile(*xs, iters=max(5, it // rounds), warmup=3))
        np.testing.assert_array_equal(bs[0].outputs, afs[0].outputs)

        def med(ps, f):
            return statistics.median(f(p) for p in ps)
        print(f"\ndemo profile, batch {batch} ({rounds} alternating rounds of "
              f"{max(5, it // rounds)} runs): pooling ops and totals, us")
        print("| op | before (ref) | after (simd) | before/after |")
        print("|---|---|---|---|")
        for k, r in enumerate(afs[0].rows):
            if "pool" in r["op"]:
                b = med(bs, lambda p: p.rows[k]["us"])
                a = med(afs, lambda p: p.rows[k]["us"])
                print(f"| {r['op']} {r['name']} | {b:.2f} | {a:.2f} | {b / a:.2f} |")
        for label, f in (("all ops", lambda p: p.ops_us), ("whole call", lambda p: p.call_us)):
            b, a = med(bs, f), med(afs, f)
            print(f"| {label} | {b:.1f} | {a:.1f} | {b / a:.2f} |")
        print("\nafter (last round):\n" + afs[-1].table())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", action="store_true", help="only the pooling section")
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    if args.pool:
        qrt.set_num_threads(1)  # as torch above; the pooling kernels are single-threaded
        bench_pool(args.repeat)
        demo_profile()
        return
    rng = np.random.default_rng(0)
    print("| op | shape | qrt us | torch us | torch/qrt |")
    print("|---|---|---|---|---|")
    for shape in [(1, 16, 4000), (1, 64, 1000), (1, 128, 250)]:
        a = qrt.from_int_repr(rng.integers(0, 256, shape).astype(np.uint8), 0.05, 120)
        b = qrt.from_int_repr(rng.integers(0, 256, shape).astype(np.uint8), 0.04, 130)
        ta, tb = tq(a), tq(b)
        o_same = F.relu(a)
        o_add = F.add(a, b, 0.07, 100)
        o_mp = F.max_pool1d(a, 2)
        o_ap = F.avg_pool1d(a, 2)
        o_hs = F.hardswish(a, 0.03, 50)
        cases = [
            ("relu", lambda: F.relu(a, out=o_same), lambda: torch.relu(ta)),
            ("add", lambda: F.add(a, b, 0.07, 100, out=o_add),
             lambda: torch.ops.quantized.add(ta, tb, 0.07, 100)),
            ("max_pool1d k2", lambda: F.max_pool1d(a, 2, out=o_mp),
             lambda: tF.max_pool1d(ta, 2)),
            ("avg_pool1d k2", lambda: F.avg_pool1d(a, 2, out=o_ap),
             lambda: tF.avg_pool1d(ta, 2)),
            ("adaptive_avg_pool1d 1", lambda: F.adaptive_avg_pool1d(a, 1),
             lambda: tF.adaptive_avg_pool1d(ta, 1)),
            ("hardswish", lambda: F.hardswish(a, 0.03, 50, out=o_hs),
             lambda: torch.ops.quantized.hardswish(ta, 0.03, 50)),
            ("sigmoid", lambda: F.sigmoid(a), lambda: torch.sigmoid(ta)),
            ("cat dim1", lambda: F.cat([a, b], 1), lambda: torch.cat([ta, tb], 1)),
        ]
        for name, ours, theirs in cases:
            q_us, t_us = med_us(ours), med_us(theirs)
            print(f"| {name} | {shape} | {q_us:.1f} | {t_us:.1f} | {t_us / q_us:.2f} |")


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: Apache-2.0
"""Measure how often qrt.functional's ops equal torch 2.13 under each quantized engine.

Usage: python tools/measure_ops_agreement.py [n_cases_per_op]   (needs torch)

For every op it draws random configurations (shapes, qparams with power-of-two scales half the
time, so that rounding ties are frequent, kernel/stride/padding/dilation/ceil_mode/
count_include_pad) and prints, per engine, exact cases / cases and exact elements / elements.
"refused" counts the cases the engine raised on.  The numbers in docs/ops.md come from this
script.  torch runs with one thread (see docs/ops.md on ATen's per-thread vector tails).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import torch

import qrt
import qrt.functional as F

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
tF = torch.nn.functional
ENGINES = ["qnnpack", "x86", "fbgemm"]
# Column "oracle": qnnpack, or fbgemm where qnnpack refuses or where qrt deliberately follows
# fbgemm (docs/ops.md).  Generators may return the engine as a third item.


def tq(x):
    ints = torch.from_numpy(np.ascontiguousarray(x.int_repr()).copy())
    return torch._make_per_tensor_quantized_tensor(ints, x.q_scale(), x.q_zero_point())


def rq(rng, shape, dt=qrt.quint8, scale=None):
    if scale is None:
        scale = float(2.0 ** rng.integers(-8, 0)) if rng.random() < 0.5 else float(
            rng.uniform(1e-3, 0.4))
    ints = rng.integers(dt.qmin, dt.qmax + 1, shape).astype(dt.numpy_dtype)
    return qrt.from_int_repr(ints, scale, int(rng.integers(dt.qmin, dt.qmax + 1)), dt)


def scale(rng):
    return float(2.0 ** rng.integers(-8, 0)) if rng.random() < 0.5 else float(
        rng.uniform(1e-3, 0.4))


def gen_relu(rng):
    x = rq(rng, (2, 3, int(rng.integers(1, 100))))
    return lambda: F.relu(x), lambda: torch.relu(tq(x))


def gen_add(rng, relu=False, dt=qrt.quint8):
    shp = (int(rng.integers(1, 3)), 3, int(rng.integers(1, 200)))
    a, b = rq(rng, shp, dt), rq(rng, shp, dt)
    so, zo = scale(rng), int(rng.integers(dt.qmin, dt.qmax + 1))
    op = torch.ops.quantized.add_relu if relu else torch.ops.quantized.add
    fn = F.add_relu if relu else F.add
    return lambda: fn(a, b, so, zo), lambda: op(tq(a), tq(b), so, zo)


def _pool_x(rng, dt=qrt.quint8):
    return rq(rng, (int(rng.integers(1, 3)), int(rng.choice([1, 2, 3, 8, 17])),
                    int(rng.integers(1, 40))), dt)


def _olen(L, k, s, p, d, ceil):
    num = L + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= L + p:
        o -= 1
    return o


def gen_max_pool1d(rng):
    while True:
        x = _pool_x(rng)
        k = int(rng.integers(1, 7))
        s, p, d = int(rng.integers(1, 4)), int(rng.integers(0, k // 2 + 1)), int(rng.integers(1, 4))
        ceil = bool(rng.random() < 0.3)
        if _olen(x.shape[-1], k, s, p, d, ceil) >= 1:
            return (lambda: F.max_pool1d(x, k, s, p, d, ceil),
                    lambda: tF.max_pool1d(tq(x), k, s, p, d, ceil),
                    "fbgemm" if k == 1 or (d > 1 and p > 0) else "qnnpack")


def gen_avg_pool1d(rng, dt=qrt.quint8):
    while True:
        x = _pool_x(rng, dt)
        k = int(rng.integers(1, 7))
        s, p = int(rng.integers(1, 4)), int(rng.integers(0, k // 2 + 1))
        ceil, cip = bool(rng.random() < 0.3), bool(rng.random() < 0.5)
        if _olen(x.shape[-1], k, s, p, 1, ceil) >= 1:
            return (lambda: F.avg_pool1d(x, k, s, p, ceil, cip),
                    lambda: tF.avg_pool1d(tq(x), k, s, p, ceil, cip),
                    "fbgemm" if k == 1 or (dt is qrt.quint8 and not cip and p > 0 and not ceil)
                    else "qnnpack")


def gen_adaptive(rng):
    x = _pool_x(rng)
    L = x.shape[-1]
    o = int(rng.choice([v for v in range(1, L + 1) if L % v == 0])) if rng.random() < 0.5 \
        else int(rng.integers(1, L + 5))
    return lambda: F.adaptive_avg_pool1d(x, o), lambda: tF.adaptive_avg_pool1d(tq(x), o)


def gen_hardswish(rng, dt=qrt.quint8):
    x = rq(rng, (3, int(rng.integers(1, 200))), dt)
    so, zo = scale(rng), int(rng.integers(dt.qmin, dt.qmax + 1))
    return lambda: F.hardswish(x, so, zo), lambda: torch.ops.quantized.hardswish(tq(x), so, zo)


def gen_sigmoid(rng, dt=qrt.quint8):
    x = rq(rng, (3, int(rng.integers(1, 200))), dt, scale=scale(rng) * 16)
    return lambda: F.sigmoid(x), lambda: torch.sigmoid(tq(x))


def gen_cat(rng):
    xs = [rq(rng, (2, int(rng.integers(1, 5)), 7)) for _ in range(3)]
    so, zo = scale(rng), int(rng.integers(0, 256))
    return (lambda: F.cat(xs, 1, so, zo),
            lambda: torch.ops.quantized.cat([tq(x) for x in xs], 1, so, zo))


OPS = {
    "relu": gen_relu, "add": gen_add, "add_relu": lambda r: gen_add(r, True),
    "max_pool1d": gen_max_pool1d, "avg_pool1d": gen_avg_pool1d,
    "adaptive_avg_pool1d": gen_adaptive, "hardswish": gen_hardswish, "sigmoid": gen_sigmoid,
    "cat": gen_cat,
    "add (qint8)": lambda r: gen_add(r, False, qrt.qint8),
    "add_relu (qint8)": lambda r: gen_add(r, True, qrt.qint8),
    "avg_pool1d (qint8)": lambda r: gen_avg_pool1d(r, qrt.qint8),
    "hardswish (qint8)": lambda r: gen_hardswish(r, qrt.qint8),
    "sigmoid (qint8)": lambda r: gen_sigmoid(r, qrt.qint8),
}


def main(n: int) -> None:
    print(f"torch {torch.__version__}, capability {torch.backends.cpu.get_cpu_capability()}, "
          f"{n} cases per op")
    cols = ["oracle"] + ENGINES
    print("| op | " + " | ".join(f"{e}: cases, elements (refused)" for e in cols) + " |")
    print("|---|" + "---|" * len(cols))
    for seed, (name, gen) in enumerate(OPS.items()):
        rng = np.random.default_rng(500 + seed)
        cols = ["oracle"] + ENGINES
        stats = {e: [0, 0, 0, 0, 0] for e in cols}  # cases ok, cases, elems ok, elems, refused
        for _ in range(n):
            ours, theirs, *oracle = gen(rng)
            got = ours().int_repr()
            for e in cols:
                eng = e
                if e == "oracle":
                    eng = oracle[0] if oracle else "qnnpack"
                torch.backends.quantized.engine = eng
                try:
                    want = theirs().int_repr().numpy()
                except RuntimeError:
                    if e == "oracle":  # refused by qnnpack: qrt follows fbgemm
                        torch.backends.quantized.engine = "fbgemm"
                        want = theirs().int_repr().numpy()
                    else:
                        stats[e][4] += 1
                        continue
                st = stats[e]
                eq = int((got == want).sum()) if got.shape == want.shape else 0
                st[0] += eq == got.size
                st[1] += 1
                st[2] += eq
                st[3] += got.size
        cells = []
        for e in cols:
            c_ok, c, e_ok, el, ref = stats[e]
            pct = 100.0 * e_ok / max(el, 1)
            cells.append(f"{c_ok}/{c}, {pct:.3f} % of {el}" + (f" ({ref})" if ref else ""))
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)

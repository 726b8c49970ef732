# SPDX-License-Identifier: Apache-2.0
"""Regenerate tests/data/<op>_<case>.npz: torch 2.13 results for qrt.functional's ops.

Usage: python tools/gen_golden_ops.py [outdir]   (needs torch; the tests that read the files
do not).  Each file holds cases ``c<i>_<field>`` plus ``meta_*`` strings (generator, versions,
engine).  Every case is computed with torch's qnnpack engine, except those qnnpack refuses or
mishandles, which use fbgemm exactly as qrt does (docs/ops.md); field ``engine`` says which.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")
tF = torch.nn.functional
QINFO = {"quint8": (0, 255, np.uint8, torch.quint8), "qint8": (-128, 127, np.int8, torch.qint8)}


def tq(ints, scale, zp):
    return torch._make_per_tensor_quantized_tensor(torch.from_numpy(ints.copy()), scale, zp)


def rand_ints(rng, shape, dt):
    lo, hi, npdt, _ = QINFO[dt]
    return rng.integers(lo, hi + 1, shape).astype(npdt)


def run(engine, fn):
    torch.backends.quantized.engine = engine
    return fn().int_repr().numpy()


def pooled(fn, t):
    """QNNPACK's pooling kernels refuse unbatched [C, L]; qrt computes it as [1, C, L]."""
    try:
        return fn(t)
    except RuntimeError:
        if t.dim() != 2:
            raise
        return fn(t.unsqueeze(0))[0]


def cases_relu(rng):
    out = []
    for i in range(8):
        dt = "qint8" if i % 2 else "quint8"
        x = rand_ints(rng, (2, 3, int(rng.integers(1, 40))), dt)
        s, z = float(rng.uniform(0.01, 0.3)), int(rng.integers(*QINFO[dt][:2]))
        y = run("qnnpack", lambda: torch.relu(tq(x, s, z)))
        out.append(dict(dtype=dt, x=x, scale=s, zp=z, y=y, engine="qnnpack"))
    return out


def _add(rng, dt, relu, shape_a, shape_b, so, zo, sa=None, sb=None):
    a, b = rand_ints(rng, shape_a, dt), rand_ints(rng, shape_b, dt)
    sa = float(2.0 ** rng.integers(-8, 0)) if sa is None else sa
    sb = float(2.0 ** rng.integers(-8, 0)) if sb is None else sb
    za, zb = (int(v) for v in rng.integers(*QINFO[dt][:2], size=2))
    op = torch.ops.quantized.add_relu if relu else torch.ops.quantized.add
    ta, tb = tq(a, sa, za), tq(b, sb, zb)
    try:
        y, eng = run("qnnpack", lambda: op(ta, tb, so, zo)), "qnnpack"
    except RuntimeError:
        y, eng = run("fbgemm", lambda: op(ta, tb, so, zo)), "fbgemm"
    return dict(dtype=dt, relu=int(relu), a=a, b=b, sa=sa, za=za, sb=sb, zb=zb, so=so, zo=zo,
                y=y, engine=eng)


def cases_add_qnnpack(rng):
    out = []
    for i in range(12):
        shp = (2, 3, int(rng.integers(1, 100)))
        out.append(_add(rng, "quint8", i % 2 == 1, shp, shp, float(2.0 ** rng.integers(-7, 0)),
                        int(rng.integers(0, 256))))
    out.append(_add(rng, "quint8", False, (3, 40), (3, 40), 1.0, 128, sa=2.0**-11.5,
                    sb=2.0**-12))  # shift > 31 quirk
    return out


def cases_add_fallback(rng):
    torch.set_num_threads(1)
    out = [
        _add(rng, "quint8", False, (2, 130), (2, 130), 2.0**-14, 17, sa=2.0**-4, sb=2.0**-5),
        _add(rng, "quint8", True, (2, 130), (2, 130), 2.0**-3, 255),
        _add(rng, "quint8", False, (2, 3, 70), (3, 1), 2.0**-5, 100),
        _add(rng, "qint8", True, (2, 3, 70), (2, 3, 70), 2.0**-5, -3),
        _add(rng, "qint8", False, (1, 3, 1), (4, 3, 66), 2.0**-6, 5),
    ]
    return out


def _pool_geom(rng, dt, dil):
    shape = (int(rng.integers(1, 3)), int(rng.choice([1, 3, 8])), int(rng.integers(4, 30)))
    if rng.random() < 0.2:
        shape = shape[1:]
    k = int(rng.integers(1, 6))
    return dict(dtype=dt, x=rand_ints(rng, shape, dt), scale=float(rng.uniform(0.01, 0.5)),
                zp=int(rng.integers(*QINFO[dt][:2])), k=k, s=int(rng.integers(1, 4)),
                p=int(rng.integers(0, k // 2 + 1)), d=int(rng.integers(1, 3)) if dil else 1,
                ceil=int(rng.random() < 0.3), cip=int(rng.random() < 0.6))


def _valid(c):
    L, k, s, p, d = c["x"].shape[-1], c["k"], c["s"], c["p"], c["d"]
    num = L + 2 * p - d * (k - 1) - 1 + (s - 1 if c["ceil"] else 0)
    o = num // s + 1
    if c["ceil"] and (o - 1) * s >= L + p:
        o -= 1
    return o >= 1


def cases_max_pool1d(rng):
    out = []
    while len(out) < 16:
        c = _pool_geom(rng, "qint8" if len(out) % 3 == 2 else "quint8", True)
        if not _valid(c):
            continue
        eng = "fbgemm" if c["k"] == 1 or (c["d"] > 1 and c["p"] > 0) else "qnnpack"
        t = tq(c["x"], c["scale"], c["zp"])
        c["y"] = run(eng, lambda: pooled(
            lambda u: tF.max_pool1d(u, c["k"], c["s"], c["p"], c["d"], bool(c["ceil"])), t))
        c["engine"] = eng
        out.append(c)
    return out


def cases_avg_pool1d(rng):
    out = []
    while len(out) < 16:
        c = _pool_geom(rng, "qint8" if len(out) % 3 == 2 else "quint8", False)
        if not _valid(c):
            continue
        qn = c["dtype"] == "quint8" and not c["ceil"] and c["k"] > 1
        eng = "fbgemm" if c["k"] == 1 or (qn and not c["cip"] and c["p"] > 0) else "qnnpack"
        t = tq(c["x"], c["scale"], c["zp"])
        c["y"] = run(eng, lambda: pooled(
            lambda u: tF.avg_pool1d(u, c["k"], c["s"], c["p"], bool(c["ceil"]), bool(c["cip"])),
            t))
        c["engine"] = eng
        out.append(c)
    return out


def cases_adaptive_avg_pool1d(rng):
    out = []
    for i in range(12):
        dt = "qint8" if i % 3 == 2 else "quint8"
        L = int(rng.integers(2, 40))
        o = int(rng.choice([v for v in range(1, L) if L % v == 0])) if i % 2 else int(
            rng.integers(1, L + 5))
        x = rand_ints(rng, (2, int(rng.choice([1, 4])), L), dt)
        s, z = float(rng.uniform(0.01, 0.5)), int(rng.integers(*QINFO[dt][:2]))
        y = run("qnnpack", lambda: tF.adaptive_avg_pool1d(tq(x, s, z), o))
        out.append(dict(dtype=dt, x=x, scale=s, zp=z, o=o, y=y, engine="qnnpack"))
    return out


def cases_hardswish(rng):
    x = np.arange(256, dtype=np.uint8)
    out = []
    for _ in range(16):
        s, z = float(rng.uniform(0.005, 0.1)), int(rng.integers(0, 256))
        so, zo = float(rng.uniform(0.005, 0.1)), int(rng.integers(0, 256))
        y = run("qnnpack", lambda: torch.ops.quantized.hardswish(tq(x, s, z), so, zo))
        out.append(dict(dtype="quint8", x=x, scale=s, zp=z, so=so, zo=zo, y=y,
                        engine="qnnpack"))
    return out


def cases_sigmoid(rng):
    x = np.arange(256, dtype=np.uint8)
    out = []
    for _ in range(16):
        s, z = float(rng.uniform(0.005, 0.5)), int(rng.integers(0, 256))
        y = run("qnnpack", lambda: torch.sigmoid(tq(x, s, z)))
        out.append(dict(dtype="quint8", x=x, scale=s, zp=z, y=y, engine="qnnpack"))
    return out


def cases_cat(rng):
    out = []
    for i in range(10):
        dt = "qint8" if i % 3 == 2 else "quint8"
        dim = int(rng.integers(0, 3))
        xs, qp = [], []
        for j in range(3):
            shp = [2, 3, 5]
            shp[dim] = int(rng.integers(1, 4))
            xs.append(rand_ints(rng, tuple(shp), dt))
            qp.append((float(2.0 ** rng.integers(-7, -1)), int(rng.integers(*QINFO[dt][:2]))))
        so = float(2.0 ** rng.integers(-7, -1))
        zo = int(rng.integers(*QINFO[dt][:2]))
        ts = [tq(x, s, z) for x, (s, z) in zip(xs, qp)]
        y = run("qnnpack", lambda: torch.ops.quantized.cat(ts, dim, so, zo))
        c = dict(dtype=dt, dim=dim, so=so, zo=zo, y=y, engine="qnnpack", n=3)
        for j, (x, (s, z)) in enumerate(zip(xs, qp)):
            c[f"x{j}"], c[f"s{j}"], c[f"z{j}"] = x, s, z
        out.append(c)
    return out


FILES = {
    "relu_mixed": cases_relu,
    "add_qnnpack": cases_add_qnnpack,
    "add_fallback": cases_add_fallback,
    "max_pool1d_mixed": cases_max_pool1d,
    "avg_pool1d_mixed": cases_avg_pool1d,
    "adaptive_avg_pool1d_mixed": cases_adaptive_avg_pool1d,
    "hardswish_exhaustive": cases_hardswish,
    "sigmoid_exhaustive": cases_sigmoid,
    "cat_mixed": cases_cat,
}


def main(outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    for seed, (name, fn) in enumerate(FILES.items()):
        cases = fn(np.random.default_rng(1000 + seed))
        arrays = {
            "meta_generator": np.array(f"Generated by tools/gen_golden_ops.py (seed {1000 + seed})."
                                       " Do not edit."),
            "meta_torch": np.array(torch.__version__),
            "meta_ncases": np.array(len(cases)),
        }
        for i, c in enumerate(cases):
            for k, v in c.items():
                arrays[f"c{i}_{k}"] = np.asarray(v)
        path = os.path.join(outdir, f"{name}.npz")
        np.savez_compressed(path, **arrays)
        print(f"{path}: {len(cases)} cases, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..",
                                                              "tests", "data"))

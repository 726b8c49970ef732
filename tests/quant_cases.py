# SPDX-License-Identifier: Apache-2.0
"""Hard inputs for quantize/dequantize conformance (shared by tests and tools/gen_golden.py).

Not shipped.  Everything is vectorised numpy; no torch.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32

#: Values every batch contains: signed zeros, infinities, NaNs (quiet, negative, payload),
#: denormals, the float32 extremes and values near the int32 limits.
SPECIALS = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1e-40, -1e-40,
     1.1754942e-38, -1.1754942e-38, 3.4028235e38, -3.4028235e38, 2.0**31, -(2.0**31),
     2147483520.0, -2147483520.0, 2.0**24 + 2, 1e10, -1e10, 0.5, -0.5, 1.5, -1.5],
    dtype=F32)
SPECIALS = np.concatenate([SPECIALS, np.array([0x7FC00001, 0xFFC00000, 0x7F800001],
                                              np.uint32).view(F32)])


def qrange(dtype_name: str):
    return {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-(2**31), 2**31 - 1)}[dtype_name]


def random_scale(rng, i: int) -> float:
    """Log-uniform scales over 1e-7..1e4; every third one a power of two (exact ties)."""
    if i % 3 == 0:
        return float(2.0 ** int(rng.integers(-20, 8)))
    if i % 7 == 1:  # a double that is not a float32: torch rounds it to float32 first
        return float(np.exp(rng.uniform(-16, 9))) * (1 + 1e-12)
    return float(np.exp(rng.uniform(-16, 9)))


def random_zero_point(rng, dtype_name: str, i: int) -> int:
    lo, hi = qrange(dtype_name)
    if dtype_name == "qint32":
        if i % 4 == 0:  # anywhere in int32 (float32(zp) rounds)
            return int(rng.integers(lo, hi, endpoint=True))
        return int(rng.integers(-1000, 1001))
    if i % 5 == 0:
        return int(rng.choice([lo, hi, (lo + hi) // 2, 0 if lo < 0 else lo]))
    return int(rng.integers(lo, hi, endpoint=True))


def hard_values(rng, scale, zero_point, n: int, dtype_name: str = "quint8") -> np.ndarray:
    """n float32 values that stress rounding for this (scale, zero point).

    A quarter exact multiples (k + 1/2)*scale, a quarter one ulp either side of them, a
    quarter x whose product x*(1/scale) lands on a tie, the rest uniform over 1.3x the
    representable range, plus the SPECIALS; shuffled.  ``scale`` and ``zero_point`` may be
    arrays broadcast against n (per-channel use).
    """
    s = np.asarray(scale, np.float64).astype(F32)
    inv = (F32(1.0) / s).astype(F32)
    lo, hi = qrange(dtype_name)
    zp = np.asarray(zero_point, np.float64)
    span = min(hi - lo, 4000)
    k = rng.integers(-span, span + 1, n).astype(np.float64) + np.clip(-zp, -1e6, 1e6)
    ties = ((k + 0.5) * s).astype(F32)
    with np.errstate(over="ignore", invalid="ignore"):
        ulp = np.where(rng.random(n) < 0.5, np.nextafter(ties, F32(np.inf)),
                       np.nextafter(ties, F32(-np.inf))).astype(F32)
        # x with f32(x*inv) == k + 1/2 exactly, when that x exists (scalar-path ties)
        pt = ((k + 0.5) / inv).astype(F32)
        uni = (rng.uniform(-1.3, 1.3, n) * (span / 2 + np.abs(zp)) * s).astype(F32)
    pick = rng.integers(0, 4, n)
    out = np.select([pick == 0, pick == 1, pick == 2], [ties, ulp, pt], uni).astype(F32)
    # huge and tiny magnitudes
    if n > 64:
        j = rng.integers(0, n, n // 64)
        with np.errstate(over="ignore"):
            out[j] = (rng.choice([-1, 1], j.size)
                      * 10.0 ** rng.uniform(-44, 38, j.size)).astype(F32)
    m = min(n, SPECIALS.size)
    if s.ndim == 0:
        out[:m] = SPECIALS[:m]
        return rng.permutation(out)
    # per-element scales: keep each value with its own scale; specials go anywhere
    out[rng.choice(n, m, replace=False)] = SPECIALS[:m]
    return out


def per_tensor_cases(rng, dtype_name: str, n_configs: int, per_config: int):
    """[(x, scale, zero_point)] for n_configs random configurations."""
    cases = []
    for i in range(n_configs):
        s = random_scale(rng, i)
        z = random_zero_point(rng, dtype_name, i)
        cases.append((hard_values(rng, s, z, per_config, dtype_name), s, z))
    return cases


def per_channel_case(rng, dtype_name: str, shape, axis: int, i: int = 0):
    """(x, scales float64, zero_points int64) for a per-channel tensor of this shape."""
    c = shape[axis]
    scales = np.array([random_scale(rng, i + j) for j in range(c)], np.float64)
    zps = np.array([random_zero_point(rng, dtype_name, i + j) for j in range(c)], np.int64)
    bshape = [1] * len(shape)
    bshape[axis] = c
    n = int(np.prod(shape))
    # hard values per channel: build per element with broadcast scales
    s_e = np.broadcast_to(scales.reshape(bshape), shape).reshape(-1)
    z_e = np.broadcast_to(zps.reshape(bshape), shape).reshape(-1)
    x = hard_values(rng, s_e, z_e, n, dtype_name) if n else np.zeros(0, F32)
    return x.reshape(shape), scales, zps


def random_shapes(rng, n: int):
    """n (shape, axis) pairs: 1..4-d, every axis, inner sizes below and above 16."""
    out = []
    for i in range(n):
        nd = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 9, nd))
        if i % 4 == 0:
            shape = shape[:-1] + (int(rng.integers(17, 70)),)
        axis = int(rng.integers(0, nd))
        out.append((shape, axis))
    return out


# ---- observers ----------------------------------------------------------------------------------
OBSERVER_KINDS = ("MinMaxObserver", "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver",
                  "MovingAveragePerChannelMinMaxObserver")
CUSTOM_RANGES = {"quint8": [None, (0, 127), (0, 15), (0, 255), (0, 200)],
                 "qint8": [None, (-8, 7), (-64, 63), (-128, 127), (-100, 100)],
                 "qint32": [None, (-(2**31), 2**31 - 1), (-1000, 1000)]}


def observer_configs():
    """Every observer configuration: kind x dtype x qscheme x reduce_range x custom range.

    Each is a dict of qrt-spelled constructor arguments plus "kind"; configurations torch
    refuses (symmetric quint8 with reduce_range) are included with "refused": True.
    """
    out = []
    for kind in OBSERVER_KINDS:
        per_channel = "PerChannel" in kind
        for dtype in ("quint8", "qint8", "qint32"):
            for sym in (False, True):
                for rr in (False, True):
                    for cr in CUSTOM_RANGES[dtype]:
                        qs = ("per_channel_" if per_channel else "per_tensor_") + \
                            ("symmetric" if sym else "affine")
                        cfg = {"kind": kind, "dtype": dtype, "qscheme": qs, "reduce_range": rr}
                        if cr is not None:
                            cfg["quant_min"], cfg["quant_max"] = cr
                        if "MovingAverage" in kind:
                            cfg["averaging_constant"] = 0.01 if len(out) % 2 else 0.25
                        if per_channel:
                            cfg["ch_axis"] = (0, 1, 2, -1)[len(out) % 4]
                        cfg["refused"] = bool(sym and rr and dtype == "quint8")
                        out.append(cfg)
    return out


def observer_batches(rng, n: int = 4, shape=(3, 5, 7)):
    """Batches that move the running min/max: mixed sign, all positive, all negative, spiky."""
    bs = []
    for i in range(n):
        x = rng.standard_normal(shape) * (10.0 ** rng.uniform(-3, 2))
        kind = i % 4
        if kind == 1:
            x = np.abs(x) + rng.uniform(0, 1)
        elif kind == 2:
            x = -np.abs(x) - rng.uniform(0, 1)
        elif kind == 3:
            x.flat[rng.integers(0, x.size, 3)] *= 50
            x.flat[0] = -0.0
        bs.append(x.astype(F32))
    return bs


def _observer_kwargs(cfg):
    return {k: v for k, v in cfg.items() if k not in ("kind", "refused")}


def make_qrt_observer(cfg):
    import qrt
    from qrt import quantization

    kw = _observer_kwargs(cfg)
    kw["dtype"] = getattr(qrt, kw["dtype"])
    kw["qscheme"] = getattr(qrt, kw["qscheme"])
    return getattr(quantization, cfg["kind"])(**kw)


def make_torch_observer(torch, cfg):
    from torch.ao.quantization import observer

    kw = _observer_kwargs(cfg)
    kw["dtype"] = getattr(torch, kw["dtype"])
    kw["qscheme"] = getattr(torch, kw["qscheme"])
    return getattr(observer, cfg["kind"])(**kw)


def encode_configs(cfgs):
    """Observer configurations as plain arrays (for an .npz without pickles)."""
    return {
        "kind": np.array([OBSERVER_KINDS.index(c["kind"]) for c in cfgs], np.int64),
        "dtype": np.array([c["dtype"] for c in cfgs]),
        "qscheme": np.array([c["qscheme"] for c in cfgs]),
        "reduce_range": np.array([c["reduce_range"] for c in cfgs]),
        "quant_min": np.array([c.get("quant_min", 0) for c in cfgs], np.int64),
        "quant_max": np.array([c.get("quant_max", 0) for c in cfgs], np.int64),
        "custom_range": np.array(["quant_min" in c for c in cfgs]),
        "averaging_constant": np.array([c.get("averaging_constant", np.nan) for c in cfgs]),
        "ch_axis": np.array([c.get("ch_axis", 0) for c in cfgs], np.int64),
        "refused": np.array([c["refused"] for c in cfgs]),
    }


def decode_configs(g):
    out = []
    for i in range(g["kind"].size):
        kind = OBSERVER_KINDS[int(g["kind"][i])]
        c = {"kind": kind, "dtype": str(g["dtype"][i]), "qscheme": str(g["qscheme"][i]),
             "reduce_range": bool(g["reduce_range"][i]), "refused": bool(g["refused"][i])}
        if g["custom_range"][i]:
            c["quant_min"], c["quant_max"] = int(g["quant_min"][i]), int(g["quant_max"][i])
        if "MovingAverage" in kind:
            c["averaging_constant"] = float(g["averaging_constant"][i])
        if "PerChannel" in kind:
            c["ch_axis"] = int(g["ch_axis"][i])
        out.append(c)
    return out

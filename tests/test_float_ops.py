# SPDX-License-Identifier: Apache-2.0
"""Float32 ops of float sections against torch's float32 CPU ops (docs/float-ops.md).

Each op runs as a one-op blob through qrt.load (the whole runtime path: reader, validation,
shape inference, plan, bind, dry run) on random shapes and on edge values (NaN, +-inf, -0.0,
denormals, huge, exp's overflow limits). The bounds checked are the contract's:

* element-wise: |qrt - torch| <= U ulp(torch) + A (U, A per op; NaN where torch has NaN,
  the same infinities);
* reductions, norms, linear, conv1d, matmul: |qrt - torch| <= n * eps * S, eps = 2**-23,
  n the summation length and S the op's magnitude term (see ``bound_*`` below).

``python tests/test_float_ops.py`` prints the worst observed ratio error / bound per op (the
table of docs/float-ops.md). Skipped without torch.
"""

from __future__ import annotations

import itertools
import os
import platform
import sys
import warnings

import numpy as np
import pytest

import qrt
from qrt_export import BlobBuilder

ARM32 = platform.machine().startswith("arm")  # armv7l (32-bit Raspberry Pi OS)

EPS = float(2.0 ** -23)
F32 = np.float32

EDGE = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-40, 1.2e-38,
                 -1.2e-38, 3e38, -3e38, 1e30, -1e30, 88.72, -88.72, 89.0, -89.0, -103.0,
                 -104.0, 1.0, -1.0, 3.0, -3.0, 6.0, -6.0, 2.5, -2.5, 10.0, -10.0, 20.0, -20.0,
                 1e-7, -1e-7, 0.5, -0.5, 1e5, -1e5, 4.0, -4.0, 5.5, -5.5, 9.0, -9.0],
                np.float32)


def _torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch
    return torch


def run_op(tmp_path, kind, inputs, out_shape, attrs=None, params=()):
    """One-op blob: float32 inputs -> kind -> float32 output, loaded and run by qrt."""
    b = BlobBuilder()
    ins = [b.activation(f"in{k}", "float32", np.shape(x)) for k, x in enumerate(inputs)]
    ps = [b.constant(f"p{k}", np.asarray(p, np.float32)) for k, p in enumerate(params)]
    y = b.activation("out", "float32", out_shape)
    b.op(kind, "op", ins, [y], ps, attrs or {})
    b.inputs, b.outputs = ins, [y]
    path = os.path.join(str(tmp_path), f"{kind}.bin")
    b.write(path)
    m = qrt.load(path)
    return m(*[np.ascontiguousarray(x, np.float32) for x in inputs])


def check_nonfinite(q, t, what):
    q, t = np.asarray(q, np.float64), np.asarray(t, np.float64)
    assert q.shape == t.shape, (what, q.shape, t.shape)
    assert np.array_equal(np.isnan(q), np.isnan(t)), f"{what}: NaN positions differ"
    inf = np.isinf(t)
    assert np.array_equal(q[inf], t[inf]), f"{what}: infinities differ"
    return np.isfinite(t)


def ulp_error(q, t, x=None, atol_per_x=0.0, what=""):
    """Worst (|q - t| - atol) / ulp(t) over finite t (the element-wise contract)."""
    fin = check_nonfinite(q, t, what)
    assert np.isfinite(np.asarray(q, np.float64)[fin]).all(), f"{what}: finite vs non-finite"
    qd, td = np.asarray(q, np.float64)[fin], np.asarray(t, np.float64)[fin]
    ulp = np.spacing(np.abs(np.asarray(t, np.float32)[fin])).astype(np.float64)
    d = np.abs(qd - td)
    if x is not None and callable(atol_per_x):   # extra ulps as a function of x
        extra = np.broadcast_to(atol_per_x(np.asarray(x, np.float64)), np.shape(t))[fin]
        d = np.maximum(d - extra * ulp, 0.0)
    elif x is not None and atol_per_x:
        ax = np.abs(np.broadcast_to(np.asarray(x, np.float64), np.shape(t))[fin])
        d = np.maximum(d - atol_per_x * ax, 0.0)
    return float((d / ulp).max(initial=0.0))


def sum_ratio(q, t, scale, n, what=""):
    """Worst |q - t| / (n * eps * scale) over finite t (the summation contract)."""
    fin = check_nonfinite(q, t, what)
    qd, td = np.asarray(q, np.float64)[fin], np.asarray(t, np.float64)[fin]
    assert np.isfinite(qd).all(), f"{what}: finite vs non-finite"
    s = np.broadcast_to(np.asarray(scale, np.float64), np.shape(t))[fin]
    d = np.abs(qd - td)
    tiny = np.float64(np.finfo(np.float32).tiny)
    return float((d / (max(n, 1) * EPS * (s + tiny))).max(initial=0.0))


# ---- element-wise ----------------------------------------------------------------------------
def _unary_cases():
    """(id, kind, attrs, params, torch_fn(torch, x), U ulps, A per |x|)."""
    def F(t):
        return t.nn.functional
    w3 = np.array([0.25, -0.5, 2.0], np.float32)
    return [
        ("gelu", "float_gelu", {}, (), lambda t, x: F(t).gelu(x), 4, 2.0 ** -21),
        ("gelu_tanh", "float_gelu", {"approximate": "tanh"}, (),
         lambda t, x: F(t).gelu(x, approximate="tanh"), 4, 2.0 ** -21),
        ("silu", "float_silu", {}, (), lambda t, x: F(t).silu(x), 4, 0),
        ("tanh", "float_tanh", {}, (), lambda t, x: t.tanh(x), 4, 0),
        ("sigmoid", "float_sigmoid", {}, (), lambda t, x: t.sigmoid(x), 4, 0),
        ("elu", "float_elu", {"alpha": 0.7}, (), lambda t, x: F(t).elu(x, 0.7), 4, 0),
        ("selu", "float_elu", {"alpha": 1.6732632423543772, "scale": 1.0507009873554805},
         (), lambda t, x: t.selu(x), 4, 0),
        ("celu", "float_elu", {"alpha": 2.0, "input_scale": 0.5}, (),
         lambda t, x: t.celu(x, 2.0), 4, 0),
        ("leaky_relu", "float_leaky_relu", {"negative_slope": 0.1}, (),
         lambda t, x: F(t).leaky_relu(x, 0.1), 0, 0),
        ("hardswish", "float_hardswish", {}, (), lambda t, x: F(t).hardswish(x), 1, 0),
        ("hardsigmoid", "float_hardsigmoid", {}, (), lambda t, x: F(t).hardsigmoid(x), 1, 0),
        ("relu6", "float_clamp", {"min": 0.0, "max": 6.0}, (), lambda t, x: F(t).relu6(x),
         0, 0),
        ("hardtanh", "float_clamp", {"min": -1.5, "max": 0.7}, (),
         lambda t, x: F(t).hardtanh(x, -1.5, 0.7), 0, 0),
        ("clamp_min", "float_clamp", {"min": 0.3, "has_max": False}, (),
         lambda t, x: t.clamp(x, min=0.3), 0, 0),
        ("clamp_max", "float_clamp", {"max": -0.3, "has_min": False}, (),
         lambda t, x: t.clamp(x, max=-0.3), 0, 0),
        ("exp", "float_exp", {}, (), lambda t, x: t.exp(x), 4, 0),
        ("log", "float_log", {}, (), lambda t, x: t.log(x), 4, 0),
        ("sqrt", "float_sqrt", {}, (), lambda t, x: t.sqrt(x), 1, 0),
    ] + [(f"pow{e}", "float_pow", {"exponent": e}, (),
          (lambda e: lambda t, x: t.pow(x, e))(e), 4, 0)
         for e in (2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 1.0)] + [
        # torch's vectorised powf is exp(e * log(x)) in float32: its error grows with
        # |e ln x| (qrt's is 0.5 ulp); the bound is 4 + |e ln x| ulp
        (f"pow{e}", "float_pow", {"exponent": e}, (),
         (lambda e: lambda t, x: t.pow(x, e))(e), 4, (lambda e: lambda x: np.nan_to_num(
             np.abs(e * np.log(np.abs(x) + 1e-300)), nan=0.0, posinf=0.0))(e))
        for e in (1.7, -2.5, 0.3)] + [
        ("prelu", "float_prelu", {}, (w3,),
         lambda t, x: F(t).prelu(x, t.from_numpy(w3)), 0, 0),
    ]


UNARY = _unary_cases()


def _unary_inputs(rng, prelu):
    xs = [EDGE.reshape(3, 3, 5), (rng.standard_normal((2, 3, 17)) * 3).astype(np.float32),
          (rng.standard_normal((4, 3, 33)) * 40).astype(np.float32),
          rng.uniform(-7, 7, (1, 3, 257)).astype(np.float32)]
    if not prelu:
        xs.append(rng.uniform(1e-3, 30, (5, 7)).astype(np.float32))
    return xs


def measure_unary(tmp_path, case, rng):
    t = _torch()
    name, kind, attrs, params, fn, U, A = case
    worst = 0.0
    for x in _unary_inputs(rng, kind == "float_prelu"):
        want = fn(t, t.from_numpy(x.copy())).numpy()
        if name == "gelu" and t.backends.cpu.get_cpu_capability() != "AVX512":
            # qrt follows torch 2.13's AVX512 gelu: NaN at +inf, +inf past x > FLT_MAX / 2;
            # torch's AVX2 and DEFAULT kernels give +inf and x there (docs/float-ops.md)
            with np.errstate(over="ignore"):
                big = np.abs(x) > np.float32(np.finfo(np.float32).max / 2)
            want = np.where(x == np.inf, np.float32(np.nan),
                            np.where(big & (x > 0), np.float32(np.inf), want))
        got = run_op(tmp_path, kind, [x], want.shape, attrs, params)
        worst = max(worst, ulp_error(got, want, x, A, f"{name} {x.shape}"))
    return worst


@pytest.mark.parametrize("case", UNARY, ids=[c[0] for c in UNARY])
def test_unary_matches_torch(torch, tmp_path, case, rng):
    worst = measure_unary(tmp_path, case, rng)
    assert worst <= case[5], f"{case[0]}: {worst} ulp > {case[5]}"


# ---- binary ----------------------------------------------------------------------------------
BIN = [("float_add", "add"), ("float_sub", "sub"), ("float_mul", "mul"), ("float_div", "div")]


def measure_binary(tmp_path, kind, op, rng):
    t = _torch()
    tf = getattr(t, op)
    worst = 0.0
    shapes = [((2, 3, 5), (3, 1)), ((4, 1), (1, 5)), ((3, 4), (3, 4)), ((45,), (45,))]
    for sa, sb in shapes:
        a = (rng.standard_normal(sa) * 10).astype(np.float32)
        bb = (rng.standard_normal(sb) * 10).astype(np.float32)
        if sa == (45,):
            a, bb = EDGE.copy(), EDGE[::-1].copy()
        want = tf(t.from_numpy(a), t.from_numpy(bb)).numpy()
        got = run_op(tmp_path, kind, [a, bb], want.shape)
        worst = max(worst, ulp_error(got, want, what=f"{op} {sa} {sb}"))
        want = tf(t.from_numpy(a), t.from_numpy(bb)).numpy()   # constant operand
        got = run_op(tmp_path, kind, [a], want.shape, params=(bb,))
        worst = max(worst, ulp_error(got, want, what=f"{op} const {sa} {sb}"))
    x = np.concatenate([EDGE, (rng.standard_normal(100) * 5).astype(np.float32)])
    for s in (0.1, -3.0, 7.0, 0.0, 1e-3):
        for rev in (False, True):
            want = (tf(s, t.from_numpy(x)) if rev and op != "sub" and op != "div" else
                    (s - t.from_numpy(x) if rev and op == "sub" else
                     (s / t.from_numpy(x) if rev else tf(t.from_numpy(x), s)))).numpy()
            got = run_op(tmp_path, kind, [x], want.shape, {"scalar": s, "reverse": rev})
            worst = max(worst, ulp_error(got, want, what=f"{op} scalar {s} rev={rev}"))
    return worst


@pytest.mark.parametrize("kind,op", BIN, ids=[b[1] for b in BIN])
def test_binary_matches_torch_bit_for_bit(torch, tmp_path, kind, op, rng):
    assert measure_binary(tmp_path, kind, op, rng) == 0.0


MATMUL_SHAPES = [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((4,), (4, 5)), ((2, 1, 3, 4),
                 (3, 4, 2)), ((6,), (6,)), ((3, 64), (64,)), ((2, 7, 300), (2, 300, 3))]


def measure_matmul(tmp_path, rng):
    t = _torch()
    worst = 0.0
    for sa, sb in MATMUL_SHAPES:
        a = rng.standard_normal(sa).astype(np.float32)
        bb = rng.standard_normal(sb).astype(np.float32)
        want = t.matmul(t.from_numpy(a), t.from_numpy(bb)).numpy()
        got = run_op(tmp_path, "float_matmul", [a, bb], want.shape)
        scale = np.matmul(np.abs(a).astype(np.float64), np.abs(bb).astype(np.float64))
        worst = max(worst, sum_ratio(got, want, scale, sa[-1], f"matmul {sa} {sb}"))
    return worst


def test_matmul_matches_torch(torch, tmp_path, rng):
    assert measure_matmul(tmp_path, rng) <= 1.0


# ---- reductions ------------------------------------------------------------------------------
def _red_inputs(rng):
    e = EDGE[:40].reshape(4, 10)
    return [rng.standard_normal((2, 3, 7)).astype(np.float32) * 5,
            rng.standard_normal((3, 1000)).astype(np.float32) * 30,
            rng.uniform(-100, 100, (2, 5, 64)).astype(np.float32),
            np.concatenate([e, rng.standard_normal((4, 10)).astype(np.float32)], 0),
            np.float32(rng.standard_normal((6, 9))) * np.float32(1e-39)]


def measure_softmax(tmp_path, rng, log):
    t = _torch()
    kind = "float_log_softmax" if log else "float_softmax"
    worst = 0.0
    for x in _red_inputs(rng):
        for dim in range(-x.ndim, x.ndim):
            tx = t.from_numpy(x.copy())
            want = (t.log_softmax if log else t.softmax)(tx, dim).numpy()
            got = run_op(tmp_path, kind, [x], want.shape, {"dim": dim})
            n = x.shape[dim]
            with np.errstate(all="ignore"):
                m = np.max(x, axis=dim, keepdims=True).astype(np.float64)
                scale = (1.0 + np.abs(x) + np.abs(m) + np.abs(want)) if log else \
                    np.abs(want)
            worst = max(worst, sum_ratio(got, want, scale, n + 4, f"{kind} {x.shape} {dim}"))
    return worst


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_softmax_matches_torch(torch, tmp_path, rng, log):
    assert measure_softmax(tmp_path, rng, log) <= 1.0


def measure_reduce(tmp_path, rng, op):
    t = _torch()
    kind = f"float_{op}"
    worst = 0.0
    for x in _red_inputs(rng):
        nd = x.ndim
        dimsets = [[d] for d in range(-nd, nd)] + [list(c) for c in
                                                   itertools.combinations(range(nd), 2)] + [[]]
        for dims, keep in itertools.product(dimsets, (False, True)):
            tx = t.from_numpy(x.copy())
            tf = getattr(t, op)
            want = (tf(tx, dim=dims, keepdim=keep) if dims else tf(tx)).numpy()
            if not dims and keep:
                continue
            got = run_op(tmp_path, kind, [x], want.shape, {"dims": dims, "keepdim": keep})
            axes = tuple(d % nd for d in dims) if dims else tuple(range(nd))
            n = int(np.prod([x.shape[a] for a in axes]))
            with np.errstate(all="ignore"):
                s = np.sum(np.abs(x.astype(np.float64)), axis=axes, keepdims=keep)
                if op == "mean":
                    s = s / n + np.abs(want)
            worst = max(worst, sum_ratio(got, want, s, n + 2, f"{op} {x.shape} {dims} {keep}"))
    return worst


@pytest.mark.parametrize("op", ["mean", "sum"])
def test_reduce_matches_torch(torch, tmp_path, rng, op):
    assert measure_reduce(tmp_path, rng, op) <= 1.0


# ---- norms -----------------------------------------------------------------------------------
def norm_scale(x, want, axes, w, b, eps, n):
    """|gamma| * rstd * (|x| + |mean|) + |beta| (float64), per element."""
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=axes, keepdims=True)
    var = ((x64 - mu) ** 2).mean(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    g = 1.0 if w is None else np.abs(w.astype(np.float64))
    bb = 0.0 if b is None else np.abs(b.astype(np.float64))
    return g * rstd * (np.abs(x64) + np.abs(mu) + 1.0) + bb


def measure_norms(tmp_path, rng):
    t = _torch()
    F = t.nn.functional
    worst = {}

    def upd(k, v):
        worst[k] = max(worst.get(k, 0.0), v)
    for shape, scale, off in [((2, 6, 11), 1.0, 0.0), ((3, 8, 200), 50.0, 10.0),
                              ((1, 4, 3), 1e-3, 0.0), ((4, 6, 1000), 2.0, -3.0)]:
        x = (rng.standard_normal(shape) * scale + off).astype(np.float32)
        c = shape[1]
        w = rng.standard_normal(c).astype(np.float32)
        b = rng.standard_normal(c).astype(np.float32)
        tx = t.from_numpy(x.copy())
        for eps in (1e-5, 1e-3):
            # layer norm over the last 1 and 2 dims
            for k in (1, 2):
                ns = shape[-k:]
                lw = rng.standard_normal(ns).astype(np.float32)
                lb = rng.standard_normal(ns).astype(np.float32)
                for aff in (True, False):
                    want = F.layer_norm(tx, ns, t.from_numpy(lw) if aff else None,
                                        t.from_numpy(lb) if aff else None, eps).numpy()
                    got = run_op(tmp_path, "float_layer_norm", [x], want.shape,
                                 {"normalized_shape": list(ns), "eps": eps},
                                 (lw, lb) if aff else ())
                    axes = tuple(range(x.ndim - k, x.ndim))
                    s = norm_scale(x, want, axes, lw if aff else None, lb if aff else None,
                                   eps, None)
                    n = int(np.prod(ns))
                    upd("layer_norm", sum_ratio(got, want, s, n, f"layer_norm {shape} {k}"))
            cs = (c, 1)
            for g in (1, 2, c):
                want = F.group_norm(tx, g, t.from_numpy(w), t.from_numpy(b), eps).numpy()
                got = run_op(tmp_path, "float_group_norm", [x], want.shape,
                             {"num_groups": g, "eps": eps}, (w, b))
                xg = x.reshape(shape[0], g, -1)
                s = norm_scale(xg, None, (2,), None, None, eps, None).reshape(shape) * \
                    np.abs(w.reshape(cs)) + np.abs(b.reshape(cs))
                upd("group_norm", sum_ratio(got, want, s, xg.shape[2],
                                            f"group_norm {shape} {g}"))
            for aff in (True, False):
                want = F.instance_norm(tx, weight=t.from_numpy(w) if aff else None,
                                       bias=t.from_numpy(b) if aff else None, eps=eps).numpy()
                got = run_op(tmp_path, "float_instance_norm", [x], want.shape, {"eps": eps},
                             (w, b) if aff else ())
                s = norm_scale(x, None, (2,), w.reshape(cs) if aff else None,
                               b.reshape(cs) if aff else None, eps, None)
                upd("instance_norm", sum_ratio(got, want, s, shape[2],
                                               f"instance_norm {shape}"))
            rm = rng.standard_normal(c).astype(np.float32)
            rv = rng.uniform(0.01, 3, c).astype(np.float32)
            for xx in (x, x[:, :, 0].copy()):
                txx = t.from_numpy(xx.copy())
                ccs = (c,) + (1,) * (xx.ndim - 2)
                for aff in (True, False):
                    want = F.batch_norm(txx, t.from_numpy(rm), t.from_numpy(rv),
                                        t.from_numpy(w) if aff else None,
                                        t.from_numpy(b) if aff else None, False, 0.1,
                                        eps).numpy()
                    got = run_op(tmp_path, "float_batch_norm", [xx], want.shape, {"eps": eps},
                                 (rm, rv, w, b) if aff else (rm, rv))
                    rstd = 1.0 / np.sqrt(rv.astype(np.float64) + eps)
                    s = (np.abs(w).reshape(ccs) if aff else 1.0) * rstd.reshape(ccs) * (
                        np.abs(xx) + np.abs(rm).reshape(ccs) + 1.0) + \
                        (np.abs(b).reshape(ccs) if aff else 0.0)
                    upd("batch_norm", sum_ratio(got, want, s, 4, f"batch_norm {xx.shape}"))
    # edge values: NaN/inf propagate through a row (torch: the whole row is NaN)
    x = np.concatenate([EDGE[:40].reshape(2, 2, 10), np.ones((2, 2, 10), np.float32)], 1)
    tx = t.from_numpy(x.copy())
    want = F.layer_norm(tx, (10,), eps=1e-5).numpy()
    got = run_op(tmp_path, "float_layer_norm", [x], want.shape,
                 {"normalized_shape": [10], "eps": 1e-5})
    check_nonfinite(got, want, "layer_norm edge")
    return worst


def test_norms_match_torch(torch, tmp_path, rng):
    worst = measure_norms(tmp_path, rng)
    assert set(worst) == {"layer_norm", "group_norm", "instance_norm", "batch_norm"}
    for k, v in worst.items():
        assert v <= 1.0, (k, v)


# ---- linear / conv1d ---------------------------------------------------------------------------
def measure_linear_conv(tmp_path, rng):
    t = _torch()
    F = t.nn.functional
    worst = {"linear": 0.0, "conv1d": 0.0}
    for xs, o in [((5, 16), 7), ((2, 3, 300), 4), ((16,), 3), ((1, 1024), 10)]:
        x = rng.standard_normal(xs).astype(np.float32)
        w = rng.standard_normal((o, xs[-1])).astype(np.float32)
        b = rng.standard_normal(o).astype(np.float32)
        for bias in (True, False):
            want = F.linear(t.from_numpy(x), t.from_numpy(w),
                            t.from_numpy(b) if bias else None).numpy()
            got = run_op(tmp_path, "float_linear", [x], want.shape, {},
                         (w, b) if bias else (w,))
            s = np.abs(x.astype(np.float64)) @ np.abs(w.T.astype(np.float64)) + \
                (np.abs(b) if bias else 0.0)
            worst["linear"] = max(worst["linear"], sum_ratio(got, want, s, xs[-1] + 1,
                                                             f"linear {xs}"))
    cfgs = [(1, 3, 8, 5, 20, 1, 0, 1, 1), (2, 4, 6, 3, 33, 2, 1, 1, 2),
            (2, 6, 6, 3, 40, 1, 2, 2, 6), (1, 8, 4, 1, 17, 1, 0, 1, 1),
            (3, 4, 8, 7, 64, 3, 3, 2, 4), (1, 16, 32, 9, 200, 1, 4, 1, 1),
            (2, 2, 2, 4, 9, 4, 0, 1, 1), (2, 5, 5, 1, 12, 2, 3, 1, 5)]
    for n, ci, co, k, length, s, p, d, g in cfgs:
        x = rng.standard_normal((n, ci, length)).astype(np.float32)
        w = rng.standard_normal((co, ci // g, k)).astype(np.float32)
        b = rng.standard_normal(co).astype(np.float32)
        for bias in (True, False):
            kw = dict(stride=s, padding=p, dilation=d, groups=g)
            want = F.conv1d(t.from_numpy(x), t.from_numpy(w),
                            t.from_numpy(b) if bias else None, **kw).numpy()
            got = run_op(tmp_path, "float_conv1d", [x], want.shape, kw,
                         (w, b) if bias else (w,))
            sc = F.conv1d(t.from_numpy(np.abs(x)).double(), t.from_numpy(np.abs(w)).double(),
                          t.from_numpy(np.abs(b)).double() if bias else None, **kw).numpy()
            worst["conv1d"] = max(worst["conv1d"], sum_ratio(got, want, sc, ci // g * k + 1,
                                                             f"conv1d {kw}"))
    # unbatched (C, L) input
    x = rng.standard_normal((4, 30)).astype(np.float32)
    w = rng.standard_normal((3, 4, 3)).astype(np.float32)
    want = F.conv1d(t.from_numpy(x), t.from_numpy(w), padding=1).numpy()
    got = run_op(tmp_path, "float_conv1d", [x], want.shape, {"padding": 1}, (w,))
    sc = F.conv1d(t.from_numpy(np.abs(x)).double(), t.from_numpy(np.abs(w)).double(),
                  padding=1).numpy()
    worst["conv1d"] = max(worst["conv1d"], sum_ratio(got, want, sc, 12, "conv1d unbatched"))
    return worst


def test_linear_conv1d_match_torch(torch, tmp_path, rng):
    for k, v in measure_linear_conv(tmp_path, rng).items():
        assert v <= 1.0, (k, v)


# ---- load-time checks --------------------------------------------------------------------------
def test_float_ops_refuse_quantized_tensors_and_bad_params(tmp_path):
    from qrt._format.reader import FormatError
    b = BlobBuilder()
    x = b.activation("x", "quint8", (1, 4), scale=0.1, zero_point=0)
    y = b.activation("y", "float32", (1, 4))
    b.op("float_tanh", "t", [x], [y])
    b.inputs, b.outputs = [x], [y]
    b.write(tmp_path / "a.bin")
    with pytest.raises(FormatError, match="float32"):
        qrt.load(tmp_path / "a.bin")
    b = BlobBuilder()
    x = b.activation("x", "float32", (2, 4))
    y = b.activation("y", "float32", (2, 3))
    w = b.constant("w", np.zeros((3, 5), np.float32))
    b.op("float_linear", "l", [x], [y], [w])
    b.inputs, b.outputs = [x], [y]
    b.write(tmp_path / "b.bin")
    with pytest.raises(FormatError, match="in_features"):
        qrt.load(tmp_path / "b.bin")


def test_float_ops_do_not_warn_on_edge_values(tmp_path):
    """inf/NaN/overflow inputs give torch's values and no numpy RuntimeWarning (torch does not
    warn); the filter is scoped to qrt's float op modules (docs/float-ops.md)."""
    x = EDGE.reshape(5, 9)
    cases = [("float_exp", {}, ()), ("float_log", {}, ()), ("float_sqrt", {}, ()),
             ("float_sigmoid", {}, ()), ("float_silu", {}, ()), ("float_elu", {}, ()),
             ("float_gelu", {}, ()), ("float_pow", {"exponent": 1.7}, ()),
             ("float_div", {"scalar": 0.0}, ()), ("float_div", {"scalar": 0.0, "reverse": True},
                                                  ()),
             ("float_mul", {}, (x,)), ("float_softmax", {"dim": 1}, ()),
             ("float_log_softmax", {"dim": 1}, ()), ("float_mean", {"dims": [1]}, ()),
             ("float_layer_norm", {"normalized_shape": [9]}, ())]
    with warnings.catch_warnings(record=True) as rec:
        for kind, attrs, params in cases:
            shape = (5,) if kind == "float_mean" else x.shape
            run_op(tmp_path, kind, [x], shape, attrs, params)
    # armv7 numpy also warns in one of its float64 -> float32 casts (values are still torch's)
    allowed = ("overflow encountered in cast",) if ARM32 else ()
    assert not [w for w in rec if issubclass(w.category, RuntimeWarning)
                and str(w.message) not in allowed], [str(w.message) for w in rec]


def test_float_op_codes_are_in_their_range():
    from qrt.ops import BY_NAME
    codes = {d.code for n, d in BY_NAME.items() if n.startswith("float_")}
    assert codes and all(40 <= c <= 99 for c in codes)


# ---- golden twin (no torch needed) ------------------------------------------------------------
GOLDEN = "float_ops.npz"


def golden_cases(rng):
    """Cases for tests/data/float_ops.npz: (kind, attrs, inputs, params, want, tol), ``tol``
    the contract's per-element bound computed from torch's result (float64)."""
    t = _torch()
    F = t.nn.functional
    out = []
    xe = np.concatenate([EDGE, (rng.standard_normal(51) * 4).astype(np.float32)]).reshape(
        2, 3, 16)
    for name, kind, attrs, params, fn, U, A in UNARY:
        want = fn(t, t.from_numpy(xe.copy())).numpy()
        ulp = np.spacing(np.abs(want)).astype(np.float64)
        if callable(A):
            tol = (U + A(xe.astype(np.float64))) * ulp
        else:
            tol = U * ulp + (A * np.abs(xe.astype(np.float64)) if A else 0.0)
        out.append((kind, attrs, [xe], list(params), want, np.nan_to_num(tol, nan=0.0)))
    a = (rng.standard_normal((2, 3, 5)) * 10).astype(np.float32)
    b = (rng.standard_normal((3, 1)) * 10).astype(np.float32)
    for kind, op in BIN:
        want = getattr(t, op)(t.from_numpy(a), t.from_numpy(b)).numpy()
        out.append((kind, {}, [a, b], [], want, np.zeros(want.shape)))
        want = getattr(t, op)(t.from_numpy(a), 0.3).numpy()
        out.append((kind, {"scalar": 0.3}, [a], [], want, np.zeros(want.shape)))
    x = (rng.standard_normal((3, 40)) * 20).astype(np.float32)
    x64 = x.astype(np.float64)
    for log in (False, True):
        want = (t.log_softmax if log else t.softmax)(t.from_numpy(x), 1).numpy()
        m = x64.max(1, keepdims=True)
        sc = (1 + np.abs(x64) + np.abs(m) + np.abs(want)) if log else np.abs(want)
        out.append(("float_log_softmax" if log else "float_softmax", {"dim": 1}, [x], [], want,
                    44 * EPS * sc))
    for op in ("sum", "mean"):
        want = getattr(t, op)(t.from_numpy(x), dim=[1], keepdim=True).numpy()
        sc = np.abs(x64).sum(1, keepdims=True)
        if op == "mean":
            sc = sc / 40 + np.abs(want)
        out.append((f"float_{op}", {"dims": [1], "keepdim": True}, [x], [], want,
                    42 * EPS * sc))
    w = rng.standard_normal(40).astype(np.float32)
    bb = rng.standard_normal(40).astype(np.float32)
    want = F.layer_norm(t.from_numpy(x), (40,), t.from_numpy(w), t.from_numpy(bb)).numpy()
    sc = norm_scale(x, want, (1,), w, bb, 1e-5, None)
    out.append(("float_layer_norm", {"normalized_shape": [40], "eps": 1e-5}, [x], [w, bb],
                want, 40 * EPS * sc))
    wl = rng.standard_normal((7, 40)).astype(np.float32)
    want = F.linear(t.from_numpy(x), t.from_numpy(wl), t.from_numpy(bb[:7])).numpy()
    sc = np.abs(x64) @ np.abs(wl.T.astype(np.float64)) + np.abs(bb[:7])
    out.append(("float_linear", {}, [x], [wl, bb[:7]], want, 41 * EPS * sc))
    xc = rng.standard_normal((2, 4, 30)).astype(np.float32)
    wc = rng.standard_normal((6, 2, 3)).astype(np.float32)
    kw = {"stride": 2, "padding": 2, "dilation": 2, "groups": 2}
    want = F.conv1d(t.from_numpy(xc), t.from_numpy(wc), t.from_numpy(bb[:6]), **kw).numpy()
    sc = F.conv1d(t.from_numpy(np.abs(xc)).double(), t.from_numpy(np.abs(wc)).double(),
                  t.from_numpy(np.abs(bb[:6])).double(), **kw).numpy()
    out.append(("float_conv1d", kw, [xc], [wc, bb[:6]], want, 7 * EPS * sc))
    return out


def write_golden(path):
    import json
    cases = golden_cases(np.random.default_rng(1234))
    arrays, meta = {}, []
    for i, (kind, attrs, ins, params, want, tol) in enumerate(cases):
        meta.append({"kind": kind, "attrs": attrs, "inputs": len(ins), "params": len(params)})
        for k, a in enumerate(ins):
            arrays[f"c{i}_in{k}"] = a
        for k, a in enumerate(params):
            arrays[f"c{i}_p{k}"] = a
        arrays[f"c{i}_want"], arrays[f"c{i}_tol"] = want, tol.astype(np.float64)
    arrays["meta"] = np.array(json.dumps(meta))
    t = _torch()
    arrays["torch_version"] = np.array(t.__version__)
    np.savez_compressed(path, **arrays)
    return len(cases)


def test_float_ops_golden(tmp_path):
    """The torch-free twin: qrt against torch's results stored in tests/data/float_ops.npz
    (``python tests/test_float_ops.py --golden`` rewrites it), within the contract's bounds."""
    import json
    sys.path.insert(0, os.path.dirname(__file__))
    from conftest import load_golden
    g = load_golden(GOLDEN)
    meta = json.loads(str(g["meta"]))
    assert len(meta) >= 40
    for i, c in enumerate(meta):
        ins = [g[f"c{i}_in{k}"] for k in range(c["inputs"])]
        ps = [g[f"c{i}_p{k}"] for k in range(c["params"])]
        want, tol = g[f"c{i}_want"], g[f"c{i}_tol"]
        got = run_op(tmp_path, c["kind"], ins, want.shape, c["attrs"], ps)
        if ARM32 and c["inputs"] == 1 and ins[0].shape == want.shape:
            # armv7 numpy flushes subnormal *inputs* too (sqrt(-1e-45) is -0 there, NaN in
            # torch): compare those positions only for finiteness-free agreement below
            x0 = np.asarray(ins[0], np.float64)
            flushed = (x0 != 0) & (np.abs(x0) < np.finfo(np.float32).tiny)
            got = np.where(flushed, want, got)
        fin = check_nonfinite(got, want, f"golden {i} {c['kind']}")
        if ARM32:  # armv7 numpy's NEON float32 functions: bounds x4 there (docs/float-ops.md)
            tol = tol * 4
        d = np.abs(got.astype(np.float64) - want.astype(np.float64))
        bad = fin & ~(d <= tol)
        if ARM32:  # armv7 numpy flushes subnormal results and intermediates to zero
            bad &= ~((np.abs(want) < 1e-30) & (got == 0))
        assert not bad.any(), (i, c, got[bad][:4], want[bad][:4], tol[bad][:4])


if __name__ == "__main__":  # the table of docs/float-ops.md
    import pathlib
    import tempfile
    if "--golden" in sys.argv:
        out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", GOLDEN)
        print(f"wrote {write_golden(out)} cases to {out}")
        sys.exit(0)
    tmp = pathlib.Path(tempfile.mkdtemp())
    rng = np.random.default_rng(0)
    rows = [(c[0], measure_unary(tmp, c, rng), f"{c[5]} ulp" + (
        " + |e ln x| ulp" if callable(c[6]) else f" + {c[6]:g}|x|" if c[6] else ""))
        for c in UNARY]
    rows += [(op, measure_binary(tmp, k, op, rng), "0 ulp") for k, op in BIN]
    rows += [("matmul", measure_matmul(tmp, rng), "ratio 1")]
    rows += [("softmax", measure_softmax(tmp, rng, False), "ratio 1"),
             ("log_softmax", measure_softmax(tmp, rng, True), "ratio 1")]
    rows += [(op, measure_reduce(tmp, rng, op), "ratio 1") for op in ("mean", "sum")]
    rows += [(k, v, "ratio 1") for k, v in measure_norms(tmp, rng).items()]
    rows += [(k, v, "ratio 1") for k, v in measure_linear_conv(tmp, rng).items()]
    for name, v, bound in rows:
        print(f"| {name} | {v:.4g} | {bound} |")
    sys.exit(0)


# ---- conv_transpose1d ------------------------------------------------------------------------
def test_conv_transpose1d_matches_torch(torch, tmp_path, rng):
    """float ConvTranspose1d (what quantize_dynamic leaves of an autoencoder's decoder) within
    the summation bound: n = in/groups x k + 1 terms at most reach each output."""
    t = _torch()
    F = t.nn.functional
    worst = 0.0
    # n, ci, co, k, L, stride, padding, output_padding, dilation, groups
    cfgs = [(1, 3, 4, 3, 10, 1, 0, 0, 1, 1), (2, 4, 6, 4, 17, 2, 1, 1, 1, 2),
            (2, 6, 6, 3, 9, 3, 2, 2, 2, 6), (1, 8, 2, 1, 5, 1, 0, 0, 1, 1),
            (3, 4, 8, 5, 13, 4, 2, 3, 1, 4), (1, 16, 8, 7, 31, 2, 3, 1, 3, 1),
            (1, 2, 3, 2, 1, 1, 0, 0, 1, 1), (2, 5, 10, 4, 6, 2, 0, 1, 2, 5)]
    for n, ci, co, k, length, s, p, op, d, g in cfgs:
        x = rng.standard_normal((n, ci, length)).astype(np.float32)
        w = rng.standard_normal((ci, co // g, k)).astype(np.float32)
        b = rng.standard_normal(co).astype(np.float32)
        for bias in (True, False):
            kw = dict(stride=s, padding=p, output_padding=op, dilation=d, groups=g)
            want = F.conv_transpose1d(t.from_numpy(x), t.from_numpy(w),
                                      t.from_numpy(b) if bias else None, **kw).numpy()
            got = run_op(tmp_path, "float_conv_transpose1d", [x], want.shape, kw,
                         (w, b) if bias else (w,))
            sc = F.conv_transpose1d(t.from_numpy(np.abs(x)).double(),
                                    t.from_numpy(np.abs(w)).double(),
                                    t.from_numpy(np.abs(b)).double() if bias else None,
                                    **kw).numpy()
            worst = max(worst, sum_ratio(got, want, sc, ci // g * k + 1, f"convT {kw}"))
    x = rng.standard_normal((4, 7)).astype(np.float32)          # unbatched (C, L)
    w = rng.standard_normal((4, 3, 3)).astype(np.float32)
    want = F.conv_transpose1d(t.from_numpy(x), t.from_numpy(w), stride=2).numpy()
    got = run_op(tmp_path, "float_conv_transpose1d", [x], want.shape, {"stride": 2}, (w,))
    sc = F.conv_transpose1d(t.from_numpy(np.abs(x)).double(), t.from_numpy(np.abs(w)).double(),
                            stride=2).numpy()
    worst = max(worst, sum_ratio(got, want, sc, 13, "convT unbatched"))
    assert worst <= 1.0, worst


def test_conv_transpose1d_export_dynamic(torch, tmp_path):
    """A float ConvTranspose1d module in a float section exports and agrees with torch."""
    t = _torch()
    import qrt_export
    t.backends.quantized.engine = "qnnpack"
    t.manual_seed(0)
    net = t.nn.Sequential(t.nn.ConvTranspose1d(3, 5, 4, stride=2, padding=1, output_padding=1),
                          t.nn.ReLU(), t.nn.Linear(15, 4)).eval()
    qm = t.ao.quantization.quantize_dynamic(net, {t.nn.Linear}, dtype=t.qint8)
    ex = t.randn(2, 3, 7)
    qrt_export.export(qm, ex, tmp_path / "ct.bin", verbose=False)
    m = qrt.load(tmp_path / "ct.bin")
    x = t.randn(2, 3, 7)
    with t.no_grad():
        want = qm(x).numpy()
    got = m(x.numpy())
    assert np.abs(got - want).max() <= 1e-5 * (np.abs(want).max() + 1)


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_float_conv1d_padding_modes_export(torch, tmp_path, mode):
    """A float Conv1d with any padding_mode (what quantize_dynamic leaves of it) exports as
    pad -> float_conv1d, as torch computes it; the same for padding='same'."""
    t = _torch()
    import qrt_export
    t.backends.quantized.engine = "qnnpack"
    t.manual_seed(1)
    for padding, k in ((3, 5), ("same", 4), (0, 3)):
        net = t.nn.Sequential(t.nn.Conv1d(3, 4, k, padding=padding, padding_mode=mode),
                              t.nn.ReLU(), t.nn.Conv1d(4, 2, 3, padding=1,
                                                       padding_mode=mode)).eval()
        ex = t.randn(2, 3, 16)
        path = tmp_path / f"{mode}-{padding}.bin"
        qrt_export.export(net, ex, path, verbose=False, keep_float=True)
        m = qrt.load(path)
        for L in (16, 9):
            x = t.randn(2, 3, L)
            with t.no_grad():
                want = net(x).numpy()
            got = m(x.numpy())
            assert got.shape == want.shape
            assert np.abs(got - want).max() <= 1e-5 * (np.abs(want).max() + 1), (mode, padding)

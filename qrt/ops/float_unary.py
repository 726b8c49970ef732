# SPDX-License-Identifier: Apache-2.0
"""Float32 element-wise ops of float sections (codes 40..53, docs/float-ops.md).

Each one follows torch's CPU formula step by step in float32 (e.g. sigmoid is
``1 / (1 + exp(-x))``, hardswish ``x * clamp(x + 3, 0, 6) / 6``), so the only differences
from torch are the last-bit differences of the transcendental functions (numpy's vs Sleef's).
GELU's erf is the exception: numpy has none, so ``1 + erf(z)`` is evaluated in float32 by
a polynomial for ``|z| < 1`` and by a rational approximation of ``erfc(-z)`` with an exp of
qrt's own above (absolute error < 1.4e-7 |x| on gelu, torch's own is 3.7e-7 |x|), in plain
float32 multiplies and adds, so that the C loop of include/qrt/float_gelu.h has the same bits.
"""

from __future__ import annotations

import numpy as np

from qrt.ops._core import Bool, Choice, Float, Param, ShapeError, define
from qrt.ops._float import F32, FloatOp, channel_shape, quiet

_ONE, _ZERO, _THREE, _SIX = F32(1.0), F32(0.0), F32(3.0), F32(6.0)
_INF, _NAN, _HALF = F32(np.inf), F32(np.nan), F32(0.5)


class _Unary(FloatOp):
    """y = f(x), same shape; ``kernel(node, x, y)`` returns the zero-argument call."""

    def bind(self, node, ins, outs):
        return self.kernel(node, ins[0], outs[0]), (), {}

    def kernel(self, node, x, y):  # pragma: no cover - overridden
        raise NotImplementedError


# False: GELU (erf) by the numpy steps below, kept as the readable specification; True: the
# same steps in C (include/qrt/float_gelu.h) where x and y are contiguous.  Tests run both.
_USE_C_GELU = True

# ---- 1 + erf (for GELU), all float32: src/float_gelu_body.h runs the same steps ---------------
_ERF_SMALL = tuple(F32(c) for c in (1.1283791e+00, -3.7612319e-01, 1.1280131e-01,
                                    -2.6709961e-02, 4.9160300e-03, -5.6254020e-04))
_ERFC = tuple(F32(c) for c in (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                               0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277))
_EXP_P = tuple(F32(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                                4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1))
_MAGIC = F32(12582912.0)            # 1.5 * 2^23: x + magic - magic = rint(x)


def _horner(acc, v, coefs):
    """acc <- coefs[0] v^(n-1) + ... + coefs[-1] (float32, one multiply and add a step)."""
    acc.fill(coefs[0])
    for c in coefs[1:]:
        np.multiply(acc, v, out=acc)
        np.add(acc, c, out=acc)
    return acc


def _exp32(x, r, k, p, ki):
    """x <- exp(x) in place, src/float_exp_body.h's qrt_exp32 step by step (float32 scratch
    r, k, p and int32 scratch ki of x's shape): Cephes' expf, 2^k as two normal factors."""
    np.maximum(x, F32(-104.0), out=x)     # the C selects keep NaN; so do maximum / minimum
    np.minimum(x, F32(89.0), out=x)
    np.multiply(x, F32(1.44269504), out=k)
    np.add(k, _MAGIC, out=k)
    np.subtract(k.view(np.int32), _MAGIC.view(np.int32), out=ki)   # the low bits hold k
    np.subtract(k, _MAGIC, out=k)
    np.multiply(k, F32(0.693359375), out=r)
    np.subtract(x, r, out=r)
    np.multiply(k, F32(-2.12194440e-4), out=p)
    np.subtract(r, p, out=r)
    _horner(p, r, _EXP_P)
    np.multiply(r, r, out=x)
    np.multiply(p, x, out=p)
    np.add(p, r, out=p)
    np.add(p, _ONE, out=p)
    # 2^k = 2^(k/2) 2^(k - k/2), k/2 truncated as C does
    k1 = k.view(np.int32)
    np.right_shift(ki, 31, out=k1)
    np.subtract(ki, k1, out=k1)
    np.right_shift(k1, 1, out=k1)
    np.subtract(ki, k1, out=ki)
    for f in (k1, ki):
        np.add(f, 127, out=f)
        np.left_shift(f, 23, out=f)
        np.multiply(p, f.view(np.float32), out=p)
    np.copyto(x, p)
    return x


class _GeluSteps:
    """y = gelu(x), erf form, in float32 numpy steps (the specification of
    src/float_gelu_body.h): 1 + erf(z) = 1 + z P(z^2) for |z| < 1, else erfc(-z) by
    Numerical Recipes' erfcc, t exp(-z^2 + P(t)), t = 1 / (1 + |z|/2)."""

    def __init__(self, shape):
        self.b = [np.empty(shape, np.float32) for _ in range(8)]
        self.ki = np.empty(shape, np.int32)
        self.m = np.empty(shape, bool)

    def __call__(self, x, y):
        z, a, s, sm, t, q, w, v = self.b
        m = self.m
        np.multiply(x, F32(np.sqrt(0.5)), out=z)
        np.abs(z, out=a)
        np.multiply(z, z, out=s)
        _horner(sm, s, _ERF_SMALL[::-1])
        np.multiply(sm, z, out=sm)
        np.add(sm, _ONE, out=sm)                      # |z| < 1: 1 + erf(z)
        np.multiply(a, _HALF, out=t)
        np.add(t, _ONE, out=t)
        np.divide(_ONE, t, out=t)
        _horner(q, t, _ERFC[::-1])
        np.subtract(q, s, out=q)
        _exp32(q, s, w, v, self.ki)                   # s, w, v: scratch here
        np.multiply(q, t, out=q)                      # erfc(|z|)
        np.greater(z, _ZERO, out=m)
        np.subtract(F32(2.0), q, out=q, where=m)      # erfc(-z) = 2 - erfc(z) for z > 0
        np.less(a, _ONE, out=m)
        np.copyto(q, sm, where=m)
        np.multiply(q, x, out=y)                      # torch: inf for |x| > FLT_MAX / 2
        np.multiply(y, _HALF, out=y)
        np.equal(x, _INF, out=m)                      # torch: gelu(+inf) is NaN
        np.copyto(y, _NAN, where=m)


@define
class Gelu(_Unary):
    name, code = "float_gelu", 40
    doc = "float32 GELU (nn.GELU, F.gelu): approximate 'none' (erf) or 'tanh'"
    attrs = {"approximate": Choice("none", "tanh", default="none")}

    def kernel(self, node, x, y):
        if node.attrs["approximate"] == "tanh":
            beta, kappa, half = F32(np.sqrt(2.0) * (2.0 / np.sqrt(np.pi)) * 0.5), \
                F32(0.044715), F32(0.5)
            t = np.empty_like(y)

            def run():
                np.multiply(x, x, out=t)
                np.multiply(t, x, out=t)
                np.multiply(t, kappa, out=t)
                np.add(t, x, out=t)
                np.multiply(t, beta, out=t)
                np.tanh(t, out=t)
                np.add(t, _ONE, out=t)
                np.multiply(x, half, out=y)
                np.multiply(y, t, out=y)
            return run
        if x.flags.c_contiguous and y.flags.c_contiguous and _USE_C_GELU:
            from qrt import _ops
            x1, y1 = x.reshape(-1), y.reshape(-1)
            # the same steps in C (include/qrt/float_gelu.h), vectorised
            return lambda: _ops.gelu_erf_f32(x1, y1)
        steps = _GeluSteps(x.shape)

        def run():
            with np.errstate(all="ignore"):
                steps(x, y)
        return run


@define
class Silu(_Unary):
    name, code = "float_silu", 41
    doc = "float32 SiLU / swish (nn.SiLU, F.silu): x / (1 + exp(-x))"

    def kernel(self, node, x, y):
        def run():
            np.negative(x, out=y)
            np.exp(y, out=y)
            np.add(y, _ONE, out=y)
            np.divide(x, y, out=y)
        return run


@define
class Tanh(_Unary):
    name, code = "float_tanh", 42
    doc = "float32 tanh (nn.Tanh, torch.tanh, Tensor.tanh)"

    def bind(self, node, ins, outs):
        return np.tanh, (ins[0],), {"out": outs[0]}


@define
class FSigmoid(_Unary):
    name, code = "float_sigmoid", 43
    doc = "float32 sigmoid (nn.Sigmoid, torch.sigmoid on a float tensor): 1 / (1 + exp(-x))"

    def kernel(self, node, x, y):
        neg, exp, add, rec = np.negative, np.exp, np.add, np.reciprocal

        def run():   # out positional: the same ufunc calls, less argument parsing per call
            neg(x, y)
            exp(y, y)
            add(y, _ONE, y)
            rec(y, y)
        return run


@define
class Elu(_Unary):
    name, code = "float_elu", 44
    doc = "float32 ELU / CELU / SELU: x > 0 ? scale*x : alpha*scale*expm1(input_scale*x)"
    attrs = {"alpha": Float(default=1.0), "scale": Float(default=1.0),
             "input_scale": Float(default=1.0)}

    def kernel(self, node, x, y):
        a = node.attrs
        neg = F32(a["alpha"]) * F32(a["scale"])
        pos, ips = F32(a["scale"]), F32(a["input_scale"])
        mask = np.empty(x.shape, bool)
        t = np.empty_like(y)

        def run():
            np.greater(x, _ZERO, out=mask)
            np.multiply(x, ips, out=t)
            np.expm1(t, out=t)
            np.multiply(t, neg, out=y)
            np.multiply(x, pos, out=t)
            np.copyto(y, t, where=mask)
        return run


@define
class LeakyRelu(_Unary):
    name, code = "float_leaky_relu", 45
    doc = "float32 LeakyReLU: x > 0 ? x : negative_slope * x"
    attrs = {"negative_slope": Float(default=0.01)}

    def kernel(self, node, x, y):
        s = F32(node.attrs["negative_slope"])
        mask = np.empty(x.shape, bool)

        def run():
            np.greater(x, _ZERO, out=mask)
            np.multiply(x, s, out=y)
            np.copyto(y, x, where=mask)
        return run


def _relu6_plus3(x, y):
    """y = min(max(x + 3, 0), 6), the shared part of hardswish and hardsigmoid (torch's order)."""
    np.add(x, _THREE, out=y)
    np.maximum(y, _ZERO, out=y)
    np.minimum(y, _SIX, out=y)


@define
class Hardswish(_Unary):
    name, code = "float_hardswish", 46
    doc = "float32 hardswish (nn.Hardswish, F.hardswish): x * min(max(x + 3, 0), 6) / 6"

    def kernel(self, node, x, y):
        def run():
            _relu6_plus3(x, y)
            np.multiply(x, y, out=y)
            np.divide(y, _SIX, out=y)
        return run


@define
class Hardsigmoid(_Unary):
    name, code = "float_hardsigmoid", 47
    doc = "float32 hardsigmoid (nn.Hardsigmoid, F.hardsigmoid): min(max(x + 3, 0), 6) / 6"

    def kernel(self, node, x, y):
        def run():
            _relu6_plus3(x, y)
            np.divide(y, _SIX, out=y)
        return run


@define
class Clamp(_Unary):
    name, code = "float_clamp", 48
    doc = "float32 clamp / clip / hardtanh / relu6: min(max(x, min), max), NaN propagates"
    attrs = {"min": Float(default=0.0), "max": Float(default=0.0),
             "has_min": Bool(default=True), "has_max": Bool(default=True)}

    def check(self, node):
        a = node.attrs
        if not (a["has_min"] or a["has_max"]):
            raise node.fail("clamp needs a min or a max")

    def kernel(self, node, x, y):
        a = node.attrs
        lo, hi = F32(a["min"]), F32(a["max"])
        if a["has_min"] and a["has_max"]:
            def run():
                np.maximum(x, lo, out=y)
                np.minimum(y, hi, out=y)
        elif a["has_min"]:
            def run():
                np.maximum(x, lo, out=y)
        else:
            def run():
                np.minimum(x, hi, out=y)
        return run


@define
class Exp(_Unary):
    name, code = "float_exp", 49
    doc = "float32 exp (torch.exp, Tensor.exp)"

    def bind(self, node, ins, outs):
        return quiet(np.exp), (ins[0], outs[0]), {}


@define
class Log(_Unary):
    name, code = "float_log", 50
    doc = "float32 log (torch.log, Tensor.log)"

    def bind(self, node, ins, outs):
        return quiet(np.log), (ins[0], outs[0]), {}


@define
class Sqrt(_Unary):
    name, code = "float_sqrt", 51
    doc = "float32 sqrt (torch.sqrt, Tensor.sqrt)"

    def bind(self, node, ins, outs):
        return quiet(np.sqrt), (ins[0], outs[0]), {}


@define
class Pow(_Unary):
    name, code = "float_pow", 52
    doc = "float32 pow with a scalar exponent (torch.pow, x ** c); torch's special cases " \
          "(2, 3, 0.5, -0.5, -1, -2) in float32, others via float64 power rounded once"
    attrs = {"exponent": Float()}

    def kernel(self, node, x, y):
        e = node.attrs["exponent"]
        if e == 2.0:
            return lambda: np.multiply(x, x, out=y)
        if e == 3.0:
            def run():
                np.multiply(x, x, out=y)
                np.multiply(y, x, out=y)
            return run
        if e == 0.5:
            return lambda: np.sqrt(x, out=y)
        if e == -0.5:
            def run():
                np.sqrt(x, out=y)
                np.reciprocal(y, out=y)
            return run
        if e == -1.0:
            return lambda: np.reciprocal(x, out=y)
        if e == -2.0:
            def run():
                np.multiply(x, x, out=y)
                np.reciprocal(y, out=y)
            return run
        if e == 1.0:
            return lambda: np.copyto(y, x)
        # numpy's float32 power is up to ~9 ulp off (torch's Sleef powf: 1 ulp): evaluate
        # in float64 and round once
        t = np.empty(x.shape, np.float64)

        def run():
            np.power(x, e, out=t, dtype=np.float64)
            np.copyto(y, t, casting="same_kind")
        return run


@define
class Prelu(_Unary):
    name, code = "float_prelu", 53
    doc = "float32 PReLU (nn.PReLU, F.prelu): x > 0 ? x : weight[c] * x, c = dim 1"
    params = (Param("weight", "float32"),)

    def check(self, node):
        w = node.params["weight"]
        x = node.inputs[0]
        c = x.shape[1] if len(x.shape) >= 2 else 1
        if len(w.shape) != 1 or w.shape[0] not in (1, c):
            raise node.fail(f"weight must have 1 or {c} values, has shape {tuple(w.shape)}")

    def infer(self, node, shapes):
        s = tuple(shapes[0])
        c = s[1] if len(s) >= 2 else 1
        if node.params["weight"].shape[0] not in (1, c):
            raise ShapeError(f"PReLU weight has {node.params['weight'].shape[0]} values, the "
                             f"input {s} has {c} channels")
        return [s]

    def kernel(self, node, x, y):
        w = np.asarray(node.array("weight"), F32)
        w = w.reshape(channel_shape(x.ndim, w.shape[0])) if x.ndim >= 2 and w.shape[0] > 1 \
            else w.reshape(())
        mask = np.empty(x.shape, bool)

        def run():
            np.greater(x, _ZERO, out=mask)
            np.multiply(x, w, out=y)
            np.copyto(y, x, where=mask)
        return run


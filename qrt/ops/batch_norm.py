# SPDX-License-Identifier: Apache-2.0
"""Quantized batch norm over dim 1 of a [N, C] or [N, C, L] tensor: torch 2.13's
``quantized::batch_norm1d`` / ``batch_norm1d_relu`` (and ``quantized::batch_norm(_relu)`` on
2-d / 3-d inputs), aten/src/ATen/native/quantized/cpu/Normalization.cpp.

torch folds the statistics into two float32 vectors (``compute_fused_params``)::

    inv   = f32(1.0 / (double) sqrtf(var + f32(eps)))
    alpha = f32((double) f32(inv * w) * (in_scale / out_scale))          # scales: doubles
    beta  = f32((double) f32(b - f32(f32(mean * inv) * w)) / out_scale)

and its kernel (``q_batch_norm_kernel``, the AVX2 build on x86 even on an AVX512 CPU) computes
``y = fmaf(alpha[c], (float)(q - in_zp), beta[c])`` (a fused multiply-add, measured: the
unfused form differs on constructed ties) then rounds half to even and adds the output zero
point.  Its two loops differ only on values beyond the int32 range: the first
``C - C % vec`` channels of each row take the vector quantizer (``min(y, 2^31 - 128)``, NaN ->
``2^31 - 128``, an int32 conversion where below-range values become ``INT32_MIN``, the zero
point added with int32 wrap-around, then saturation), the other channels the scalar one
(``lrintf`` to a 64-bit long, where NaN and out-of-range values become ``INT64_MIN``, the zero
point added with int64 wrap-around, then the clamp).  relu: ``max(., out_zp)``.

An 8-bit code takes 256 values, so ``prepare`` evaluates this once per channel and code
(numpy, an exact emulation of float32 fmaf through float64) and a call is one table lookup per
element (qrt_lut_channels_8_ref): the same integers on every platform.  qint32 codes are
computed per element (``batch_norm_qint32``, numpy).
"""

from __future__ import annotations

import numpy as np

from qrt.ops._core import Choice, Float, Int, OpDef, Param, ShapeError, define

_F32, _F64 = np.float32, np.float64
_RANGE = {"quint8": (0, 255), "qint8": (-128, 127)}
_VEC_MAX = _F32(2147483520.0)   # 2^31 - 128: the largest float32 below 2^31


def fma_f32(a, b, c):
    """Correctly rounded float32 ``a * b + c`` (C's fmaf) for float32 arrays, elementwise.

    The product of two float32 is exact in float64; the float64 sum is rounded once, and its
    error is known exactly (two-sum).  Rounding that sum to float32 is then wrong only when it
    lands exactly halfway between two float32 while the exact sum does not: the error's sign
    then says which neighbour is nearer."""
    a, b, c = (np.asarray(v, _F32) for v in (a, b, c))
    with np.errstate(all="ignore"):
        p = a.astype(_F64) * b.astype(_F64)
        c64 = c.astype(_F64)
        s = p + c64
        bb = s - p
        err = (p - (s - bb)) + (c64 - bb)
        f = s.astype(_F32)
        d = s - f.astype(_F64)
        nxt = np.nextafter(f, np.where(d > 0, _F32(np.inf), _F32(-np.inf)))
        tie = (d != 0) & (err != 0) & np.isfinite(f) & \
            (f.astype(_F64) + nxt.astype(_F64) == 2.0 * s)
        beyond = tie & (np.sign(err) == np.sign(d))
    return np.where(beyond, nxt, f)


def fused_params(weight, bias, mean, var, eps, in_scale, out_scale):
    """torch's ``compute_fused_params``: (alpha, beta) float32 [C]."""
    w, b, m, v = (np.asarray(x, _F32).reshape(-1) for x in (weight, bias, mean, var))
    with np.errstate(all="ignore"):
        inv = (1.0 / np.sqrt(v + _F32(eps)).astype(_F64)).astype(_F32)
        alpha = ((inv * w).astype(_F64) * (float(in_scale) / float(out_scale))).astype(_F32)
        beta = ((b - (m * inv) * w).astype(_F64) / float(out_scale)).astype(_F32)
    return alpha, beta


_CHUNK = 4096   # channels per table block in prepare


def table(alpha, beta, in_zp, out_zp, dtype, relu, vec, vec_channels=None):
    """The output code of every (channel, input code): [C, 256] indexed by the code's byte.
    ``vec_channels`` ([C] bool, default: the first C - C % vec) marks the channels that take
    ATen's vector quantizer."""
    lo, hi = _RANGE[dtype]
    byte = np.arange(256, dtype=np.int64)
    code = byte if dtype == "quint8" else np.where(byte < 128, byte, byte - 256)
    x = (code - int(in_zp)).astype(_F32)[None, :]
    y = fma_f32(alpha.reshape(-1, 1), x, beta.reshape(-1, 1))
    zo = np.int64(out_zp)
    with np.errstate(all="ignore"):
        # vector quantizer: min (NaN -> the bound), cvtps2dq, int32 add, saturate
        yv = np.where(np.isnan(y), _VEC_MAX, np.minimum(y, _VEC_MAX)).astype(_F64)
        iv = np.rint(yv)
        iv = np.where(iv < -2.0 ** 31, -2.0 ** 31, iv).astype(np.int64) + zo
        iv = ((iv + 2 ** 31) & 0xFFFFFFFF) - 2 ** 31
        # scalar: lrintf (64-bit long), int64 add (wraps), clamp
        r = np.rint(y.astype(_F64))
        bad = ~np.isfinite(r) | (np.abs(r) >= 2.0 ** 63)
        isc = np.where(bad, 0.0, r).astype(np.int64)
        isc = np.where(bad, np.iinfo(np.int64).min, isc) + zo
    c = alpha.shape[0]
    if vec_channels is None:
        vec_channels = np.arange(c) < c - c % vec
    vec_ch = np.asarray(vec_channels, bool)[:, None]
    v = np.where(vec_ch, iv, isc)
    if relu:
        v = np.maximum(v, zo)
    v = np.clip(v, lo, hi)
    return v.astype(np.uint8 if dtype == "quint8" else np.int8)


_I32 = (-(1 << 31), (1 << 31) - 1)


def batch_norm_qint32(q, in_zp, out_zp, alpha, beta, relu, vec):
    """torch's kernel on qint32 codes [N, C(, L)], computed per element (no table: 2^32 codes).

    Vector channels: ``x = f32(f32(q) - f32(zp))`` (its dequantize with a fake scale of 1, one
    rounding), then quantize_val with scale 1: ``clamp(rne(f32(y + f32(out_zp))))``, NaN ->
    INT32_MIN; scalar channels: ``x = (float)(q - zp)``, ``lrintf`` as for 8 bits."""
    c = q.shape[1]
    sh = (1, c) + (1,) * (q.ndim - 2)
    a, b = alpha.reshape(sh), beta.reshape(sh)
    lo, hi = _I32
    with np.errstate(all="ignore"):
        xv = (q.astype(_F32) - _F32(in_zp)).astype(_F32)
        tv = np.rint((fma_f32(a, xv, b) + _F32(out_zp)).astype(_F32)).astype(_F64)
        iv = np.where(np.isnan(tv), lo, np.clip(tv, lo, hi)).astype(np.int64)
        r = np.rint(fma_f32(a, (q.astype(np.int64) - in_zp).astype(_F32), b).astype(_F64))
        bad = ~np.isfinite(r) | (np.abs(r) >= 2.0 ** 63)
        isc = np.where(bad, np.iinfo(np.int64).min, np.where(bad, 0.0, r).astype(np.int64))
        isc = np.clip(isc + np.int64(out_zp), lo, hi)
    v = np.where((np.arange(c) < c - c % vec).reshape(sh), iv, isc)
    if relu:
        v = np.maximum(v, out_zp)
    return v.astype(np.int32)


@define
class BatchNorm(OpDef):
    name, code = "batch_norm", 29
    doc = ("quantized batch_norm1d / batch_norm1d_relu over dim 1 of [N, C] or [N, C, L] "
           "(torch.ops.quantized.batch_norm1d, quantized.batch_norm)")
    attrs = {"eps": Float(lo=0.0, default=1e-5),
             "activation": Choice("none", "relu", default="none"),
             "vec": Int(1, 64, default=8, doc="ATen's float vector width in its batch-norm "
                        "kernel: the first C - C % vec channels take its vector quantizer")}
    params = (Param("weight", "float32"), Param("bias", "float32"),
              Param("running_mean", "float32"), Param("running_var", "float32"))

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype not in ("quint8", "qint8", "qint32") or x.qscheme != "per_tensor_affine":
            raise node.fail(f"takes a per-tensor quint8/qint8/qint32 tensor, not {x.dtype} "
                            f"{x.qscheme}")
        if y.dtype != x.dtype or y.qscheme != "per_tensor_affine":
            raise node.fail(f"the output must be per-tensor {x.dtype}, is {y.dtype}")
        c = self.channels(node)
        for p in self.params:
            t = node.params[p.name]
            if len(t.shape) != 1 or int(t.shape[0]) != c:
                raise node.fail(f"parameter {p.name!r} must have shape ({c},), has "
                                f"{tuple(t.shape)}")

    @staticmethod
    def channels(node):
        s = node.params["weight"].shape
        return int(s[0]) if len(s) == 1 else -1

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        c = self.channels(node)
        if len(x) not in (2, 3) or x[1] != c:
            raise ShapeError(f"takes [N, {c}] or [N, {c}, L] input, got {x}")
        return [x]

    def prepare(self, node):
        x, y = node.inputs[0], node.outputs[0]
        alpha, beta = fused_params(node.array("weight"), node.array("bias"),
                                   node.array("running_mean"), node.array("running_var"),
                                   node.attrs["eps"], x.scale, y.scale)
        relu, vec = node.attrs["activation"] == "relu", node.attrs["vec"]
        if x.dtype == "qint32":
            return alpha, beta
        c = alpha.shape[0]
        out = np.empty((c, 256), np.uint8)
        nvec = c - c % vec
        for c0 in range(0, c, _CHUNK):   # bounded float64 temporaries, whatever C the file has
            c1 = min(c, c0 + _CHUNK)
            t = table(alpha[c0:c1], beta[c0:c1], x.zero_point, y.zero_point, x.dtype, relu,
                      vec, np.arange(c0, c1) < nvec)
            out[c0:c1] = t.view(np.uint8)
        return out

    def bind(self, node, ins, outs):
        from qrt import _ops
        src = ins[0].int_repr()
        dst = outs[0].int_repr()
        if node.inputs[0].dtype == "qint32":
            alpha, beta = node.state
            x_t, y_t = node.inputs[0], node.outputs[0]
            relu, vec = node.attrs["activation"] == "relu", node.attrs["vec"]

            def run():
                dst[...] = batch_norm_qint32(src, x_t.zero_point, y_t.zero_point, alpha, beta,
                                             relu, vec)
            return run, (), {}
        shape3 = src.shape if src.ndim == 3 else src.shape + (1,)
        x3 = src.view(np.uint8).reshape(shape3)
        y3 = dst.view(np.uint8).reshape(shape3)
        return _ops.lut_channels, (node.state, x3, y3), {}

    def describe(self, attrs):
        parts = [] if attrs.get("activation", "none") == "none" else ["relu"]
        return ", ".join(parts + [f"eps={attrs.get('eps', 1e-5)}"])

# SPDX-License-Identifier: Apache-2.0
"""NumPy int64 oracles for conv1d / linear (torch 2.13 qnnpack arithmetic). Not shipped."""

import numpy as np

INT32_MIN = -(2**31)
f32 = np.float32


def conv1d_acc(x, w, w_zp, x_zp, stride=1, pad_left=0, pad_right=0, dilation=1, groups=1):
    """Exact accumulators [N, C_out, L_out] (int64) of a zero-point-padded conv1d."""
    x = np.asarray(x).astype(np.int64)
    w = np.asarray(w).astype(np.int64)
    n, c, length = x.shape
    c_out, cg, k = w.shape
    xp = np.pad(x - x_zp, ((0, 0), (0, 0), (pad_left, pad_right)))
    lo = (length + pad_left + pad_right - dilation * (k - 1) - 1) // stride + 1
    idx = np.arange(lo)[None, :] * stride + np.arange(k)[:, None] * dilation  # [K, L_out]
    cols = xp[:, :, idx].reshape(n, groups, cg, k, lo)
    ws = (w - np.asarray(w_zp, np.int64).reshape(-1, 1, 1)).reshape(groups, c_out // groups,
                                                                     cg, k)
    acc = np.einsum("ngckt,gock->ngot", cols, ws, optimize=True)
    return acc.reshape(n, c_out, lo)


def quantize_bias(bias, w_scales, in_scale):
    """torch's QuantizeBias: qint32 with scale (double)w_scale*(double)in_scale, no FMA."""
    s32 = (np.asarray(w_scales, np.float64) * float(in_scale)).astype(f32)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        inv = f32(1.0) / s32
        t = (np.asarray(bias, f32) * inv).astype(f32)
        t = (t + f32(0.0)).astype(f32)
        r = np.rint(t).astype(np.float64)
    out = np.clip(r, INT32_MIN, 2**31 - 1)
    out[np.isnan(r)] = INT32_MIN
    return out.astype(np.int64)


def requant_scale(w_scales, in_scale, out_scale):
    """rs = f32(f32(sw * sa) * f32(1 / so))."""
    sw = np.asarray(w_scales, np.float64).astype(f32)
    return ((sw * f32(in_scale)).astype(f32) * (f32(1.0) / f32(out_scale))).astype(f32)


def cvt_rne(y):
    """cvtps2dq: round half to even, NaN / out of int32 range -> INT32_MIN."""
    y = np.asarray(y, f32)
    ok = (y >= f32(-2147483648.0)) & (y < f32(2147483648.0))
    r = np.where(ok, np.rint(np.where(ok, y, 0)), INT32_MIN)
    return r.astype(np.int64)


def requantize(acc, bias_q, rs, out_zp, relu=False, axis=1):
    """uint8 output of QNNPACK's fp32 requantization; per-channel arrays along ``axis``."""
    shape = [1] * acc.ndim
    shape[axis] = -1
    v = np.asarray(acc, np.int64) + np.asarray(bias_q, np.int64).reshape(shape)
    v = ((v + 2**31) % 2**32) - 2**31  # int32 wrap, as paddd
    y = (v.astype(f32) * np.asarray(rs, f32).reshape(shape)).astype(f32)
    q = cvt_rne(y) + out_zp
    return np.clip(q, out_zp if relu else 0, 255).astype(np.uint8)


def conv1d(x, x_scale, x_zp, w, w_scales, w_zps, bias, out_scale, out_zp, stride=1, pad_left=0,
           pad_right=None, dilation=1, groups=1, relu=False):
    """Full quantized conv1d: uint8 [N, C_out, L_out]."""
    pad_right = pad_left if pad_right is None else pad_right
    c_out = w.shape[0]
    w_scales = np.broadcast_to(np.asarray(w_scales, np.float64), (c_out,))
    w_zps = np.broadcast_to(np.asarray(w_zps, np.int64), (c_out,))
    acc = conv1d_acc(x, w, w_zps, x_zp, stride, pad_left, pad_right, dilation, groups)
    bq = np.zeros(c_out, np.int64) if bias is None else quantize_bias(bias, w_scales, x_scale)
    return requantize(acc, bq, requant_scale(w_scales, x_scale, out_scale), out_zp, relu)


def linear(x, x_scale, x_zp, w, w_scales, w_zps, bias, out_scale, out_zp, relu=False):
    """Quantized linear: x uint8 [..., in], w int8 [out, in] -> uint8 [..., out]."""
    c_out = w.shape[0]
    w_scales = np.broadcast_to(np.asarray(w_scales, np.float64), (c_out,))
    w_zps = np.broadcast_to(np.asarray(w_zps, np.int64), (c_out,))
    acc = (np.asarray(x, np.int64) - x_zp) @ (np.asarray(w, np.int64) - w_zps[:, None]).T
    bq = np.zeros(c_out, np.int64) if bias is None else quantize_bias(bias, w_scales, x_scale)
    return requantize(acc, bq, requant_scale(w_scales, x_scale, out_scale), out_zp, relu,
                      axis=acc.ndim - 1)


def linear_dynamic_from_q(xq, x_scale, x_zp, w, w_scales, w_zps, bias):
    """Dynamic linear after the input was quantized: f32(f32(f32(acc) * f32(sw*f32(s))) + b)."""
    c_out = w.shape[0]
    w_scales = np.broadcast_to(np.asarray(w_scales, np.float64), (c_out,))
    w_zps = np.broadcast_to(np.asarray(w_zps, np.int64), (c_out,))
    acc = (np.asarray(xq, np.int64) - x_zp) @ (np.asarray(w, np.int64) - w_zps[:, None]).T
    m = (w_scales.astype(f32) * f32(x_scale)).astype(f32)
    b = np.zeros(c_out, f32) if bias is None else np.asarray(bias, f32)
    return ((acc.astype(np.int32).astype(f32) * m).astype(f32) + b).astype(f32)

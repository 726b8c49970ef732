# SPDX-License-Identifier: Apache-2.0
"""2-d pooling on NCHW codes: max_pool2d, avg_pool2d, adaptive_avg_pool2d, adaptive_max_pool2d.

max_pool2d, avg_pool2d and the QNNPACK case of adaptive_avg_pool2d run the direct 2-d kernel
(include/qrt/pool2d.h, src/pool2d.c, ``qrt._ops.Pool2dPlan``): per output row, the window's
image rows reduced into one padded row, then each output's taps along it; no im2col.  Its
arithmetic is the 1-d pooling kernels' (include/qrt/ref/pool1d_ref.h), in two dimensions:

- max_pool2d: padding holds qmin (it never wins; a window without a real position gives qmin,
  as ATen's generic kernel).  QNNPACK's edge replication with dilation and padding is not
  reproduced (as max_pool1d).
- avg_pool2d: quint8 without ceil_mode takes QNNPACK's formula (torch's qnnpack engine):
  acc = sum(x - zp) over the window (padding holds zp), y = rne(f32(acc) * f32(s/f32(s*kh*kw)))
  + zp.  QNNPACK ignores count_include_pad=False (with padding) and divisor_override; qrt
  honours them, with fbgemm's result.  That and everything else (ceil_mode, qint8) takes
  ATen's generic NCHW formula: acc = sum of real (x - zp),
  div = divisor_override or (count_include_pad ? window clipped to the padded image : real
  positions), y = rne(f32(f32(f32(acc) * f32(1/div)) + zp)).
- adaptive_avg_pool2d: quint8 whose H, W are multiples of the output's (not equal to it) runs
  QNNPACK's average pooling with kernel = stride = (H/Ho, W/Wo), as torch's qnnpack engine;
  anything else ATen's generic bins (start = floor(i*L/O), end = ceil((i+1)*L/O)) with
  y = rne(f32(f32(sum of raw codes) * f32(1/(kh*kw)))).
- adaptive_max_pool2d: torch's bins, exact (a max is a max), codes or float32.

max_pool2d, avg_pool2d and adaptive_avg_pool2d also take float32 (qrt/ops/float_pool.py).
"""

from __future__ import annotations

import numpy as np

from qrt._geometry import pool_out_len
from qrt.ops._core import Bool, Int, Ints, OpDef, ShapeError, define, same_qparams

_K = 1 << 20
_F32 = np.float32


def _hw(v, default=None):
    return tuple(v) if v is not None else default


def _qrange(dtype):
    return (0, 255) if dtype == np.uint8 else (-128, 127)


class _Pool2d(OpDef):
    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype == "float32" or y.dtype == "float32":
            if x.dtype != y.dtype:
                raise node.fail(f"pools float32 to float32, got {x.dtype} -> {y.dtype}")
        elif x.dtype not in ("quint8", "qint8") or x.qscheme != "per_tensor_affine":
            raise node.fail("pools per-tensor quint8/qint8 or float32 tensors")
        else:
            same_qparams(node, x, y, self.name)
        a = node.attrs
        if "padding" in a:
            k = a["kernel_size"]
            for i in (0, 1):
                if a["padding"][i] > k[i] // 2:
                    raise node.fail(f"attribute 'padding' {a['padding']} must be at most half "
                                    f"of kernel_size {k} (as torch)")

    def geometry(self, node, h, w):
        a = node.attrs
        k = a["kernel_size"]
        s = _hw(a.get("stride"), tuple(k))
        p = a.get("padding", [0, 0])
        d = a.get("dilation", [1, 1])
        cm = a.get("ceil_mode", False)
        return (pool_out_len(h, k[0], s[0], p[0], d[0], cm),
                pool_out_len(w, k[1], s[1], p[1], d[1], cm))

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        if len(x) not in (3, 4) or x[-1] < 1 or x[-2] < 1:
            raise ShapeError(f"input must be [N, C, H, W] or [C, H, W] with H, W >= 1, got {x}")
        ho, wo = self.geometry(node, x[-2], x[-1])
        if ho < 1 or wo < 1:
            raise ShapeError(f"input {x[-2]}x{x[-1]} gives an output of {ho}x{wo}")
        return [x[:-2] + (ho, wo)]

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        return pool2d_binding(self.name, x, y, node.attrs)


_COMMON = {"kernel_size": Ints(2, 1, _K), "stride": Ints(2, 1, _K, default=None),
           "padding": Ints(2, 0, _K // 2, default=[0, 0]), "ceil_mode": Bool(default=False)}


@define
class MaxPool2d(_Pool2d):
    name, code = "max_pool2d", 111
    doc = "max_pool2d (nn.MaxPool2d, F.max_pool2d), quint8/qint8/float32 NCHW"
    attrs = dict(_COMMON, dilation=Ints(2, 1, _K, default=[1, 1]))


@define
class AvgPool2d(_Pool2d):
    name, code = "avg_pool2d", 112
    doc = "avg_pool2d (nn.AvgPool2d, F.avg_pool2d), quint8/qint8/float32 NCHW"
    attrs = dict(_COMMON, count_include_pad=Bool(default=True),
                 divisor_override=Int(1, _K, default=None, nullable=True))


@define
class AdaptiveAvgPool2d(_Pool2d):
    name, code = "adaptive_avg_pool2d", 113
    doc = ("adaptive_avg_pool2d (nn.AdaptiveAvgPool2d, F.adaptive_avg_pool2d), "
           "quint8/qint8/float32")
    attrs = {"output_size": Ints(2, 1, _K)}

    def geometry(self, node, h, w):
        return tuple(node.attrs["output_size"])


@define
class AdaptiveMaxPool2d(_Pool2d):
    name, code = "adaptive_max_pool2d", 114
    doc = "adaptive_max_pool2d (nn.AdaptiveMaxPool2d, F.adaptive_max_pool2d), codes or float32"
    attrs = {"output_size": Ints(2, 1, _K)}

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype not in ("quint8", "qint8", "float32"):
            raise node.fail(f"pools quint8, qint8 or float32 tensors, not {x.dtype}")
        same_qparams(node, x, y, self.name)

    def geometry(self, node, h, w):
        return tuple(node.attrs["output_size"])


# ---- the computation (shared by the op bindings and qrt.functional-style calls in tests) ----
def _bins(L, o):
    starts = np.array([(i * L) // o for i in range(o)], np.intp)
    ends = np.array([-(-((i + 1) * L) // o) for i in range(o)], np.intp)
    return starts, ends


def _adaptive_index(L, o):
    """[o, widest bin] indices (the last one repeated: same max, and sums use a mask)."""
    s, e = _bins(L, o)
    width = int((e - s).max())
    idx = np.minimum(s[:, None] + np.arange(width)[None, :], (e - 1)[:, None])
    valid = (s[:, None] + np.arange(width)[None, :]) < e[:, None]
    return idx, valid, (e - s)


def _arrays(x, y):
    xa = x.int_repr() if hasattr(x, "int_repr") else x
    ya = y.int_repr() if hasattr(y, "int_repr") else y
    return xa, ya


def pool2d_binding(kind, x, y, attrs):
    """``(fn, args, kwargs)`` computing pooling ``kind`` of ``x`` into ``y`` (fixed buffers)."""
    from qrt import _ops
    xa, ya = _arrays(x, y)
    if xa.ndim == 3:
        xa, ya = xa[None], ya[None]
    n, c, h, w = xa.shape
    ho, wo = ya.shape[-2:]
    if not ya.flags.c_contiguous:
        raise ValueError(f"{kind}: the output must be contiguous")
    dt = xa.dtype
    is_float = dt == np.float32
    if is_float and kind != "adaptive_max_pool2d":
        from qrt.ops.float_pool import pool2d_binding as float_pool2d
        return float_pool2d(kind, xa, ya, attrs)
    if kind == "adaptive_max_pool2d" or (kind == "adaptive_avg_pool2d" and not (
            dt == np.uint8 and h % ho == 0 and w % wo == 0 and (h, w) != (ho, wo))):
        return _adaptive_binding(kind, xa, ya)
    zp = int(x.q_zero_point())
    if kind == "adaptive_avg_pool2d":
        k = (h // ho, w // wo)
        s, p, d, cm, cip, dov = k, (0, 0), (1, 1), False, True, None
    else:
        k = tuple(attrs["kernel_size"])
        s = _hw(attrs.get("stride"), k)
        p = tuple(attrs.get("padding", (0, 0)))
        d = tuple(attrs.get("dilation", (1, 1)))
        cm = bool(attrs.get("ceil_mode", False))
        cip = bool(attrs.get("count_include_pad", True))
        dov = attrs.get("divisor_override")
    K = k[0] * k[1]
    # one window over each whole plane of a contiguous input (a global pool: MobileNet's
    # adaptive_avg_pool2d to 1x1): the planes are [n*c, h*w] rows, which the 1-d kernel
    # reads in place
    whole = (ho, wo) == (1, 1) and k == (h, w) and p == (0, 0) and xa.flags.c_contiguous
    xs = tuple(x._strides)
    if len(xs) == 3:
        xs = (0,) + xs
    if whole and kind != "max_pool2d" and dt == np.uint8 and not cm and dov is None:
        sf = _F32(x.q_scale())
        scale = float(_F32(sf / _F32(sf * _F32(K))))
        return _ops.avg_pool1d, (xa.reshape(n * c, K), ya.reshape(n * c, 1), K, K, 0, zp,
                                 True, True, scale), {}
    if n * c == 0:
        return (lambda: None), (), {}
    signed = dt == np.int8
    ybuf = ya.reshape(-1).view(np.uint8)
    base, off = x._storage, x._offset
    if kind == "max_pool2d":
        plan = _ops.Pool2dPlan("max", signed, (n, c, h, w), xs, (ho, wo), k, s, p, d)
    else:
        # QNNPACK ignores count_include_pad=False and divisor_override (torch's qnnpack engine
        # divides by kh*kw anyway): qrt honours them with fbgemm's (ATen's generic) result, as
        # avg_pool1d does (docs/ops.md, "Where qrt and torch's qnnpack engine differ")
        qnnp = dt == np.uint8 and not cm and dov is None and (cip or p == (0, 0))
        sf = _F32(x.q_scale())
        plan = _ops.Pool2dPlan("avg", signed, (n, c, h, w), xs, (ho, wo), k, s, p, (1, 1), zp,
                               qnnpack=qnnp, scale=float(_F32(sf / _F32(sf * _F32(K)))),
                               count_include_pad=cip, divisor=int(dov or 0))
    return plan.run, (base, off, ybuf, 0), {}


def _divisors(h, w, ho, wo, k, s, p, cip, dov):
    if dov is not None:
        return np.full(ho * wo, float(dov))

    def one(L, Lo, kk, ss, pp):
        hs = np.arange(Lo) * ss - pp
        he = np.minimum(hs + kk, L + pp)
        pool = he - hs
        real = np.minimum(he, L) - np.maximum(hs, 0)
        return pool if cip else real
    dh, dw_ = one(h, ho, k[0], s[0], p[0]), one(w, wo, k[1], s[1], p[1])
    return (dh[:, None] * dw_[None, :]).reshape(-1).astype(np.float64)


def _adaptive_binding(kind, xa, ya):
    n, c, h, w = xa.shape
    ho, wo = ya.shape[-2:]
    ih, vh, kh = _adaptive_index(h, ho)
    iw, vw, kw = _adaptive_index(w, wo)
    if kind == "adaptive_max_pool2d":
        def run():
            g = xa[:, :, ih][:, :, :, :, iw]  # [n, c, ho, bh, wo, bw]
            np.max(g, axis=(3, 5), out=ya)
        return run, (), {}
    qmin, qmax = _qrange(xa.dtype)
    mask = (vh[:, :, None, None] & vw[None, None, :, :]).astype(np.int32)
    rcp = (_F32(1.0) / (kh[:, None] * kw[None, :]).astype(_F32)).astype(_F32)

    def run():
        g = xa[:, :, ih][:, :, :, :, iw].astype(np.int32)
        acc = np.einsum("ncabde,abde->ncad", g, mask)
        v = acc.astype(_F32) * rcp
        ya[...] = np.clip(np.rint(v), qmin, qmax)
    return run, (), {}


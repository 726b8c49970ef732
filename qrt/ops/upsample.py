# SPDX-License-Identifier: Apache-2.0
"""upsample2d: nn.Upsample / F.interpolate on NCHW tensors (nearest, nearest-exact, bilinear).

Quantized (quint8/qint8) as torch 2.13's quantized kernels compute it (aten/.../quantized/cpu/
UpSampleNearest2d.cpp, UpSampleBilinear2d.cpp, kernels/QuantizedOpKernels.cpp), same qparams
in and out:

- Source indices. ``scale`` is ``f32(1 / scale_factor)`` when the scale factor reaches the
  kernel (``recompute_scale_factor`` not set), else ``f32(in) / f32(out)``; nearest:
  ``min(floor(f32(i * scale)), in - 1)``; nearest-exact: ``min(floor(f32((i + 0.5) * scale)),
  in - 1)`` (the product in double); bilinear: ``align_corners`` ? ``scale * i`` with scale
  ``f32(in - 1) / f32(out - 1)`` : ``max(scale * (i + 0.5) - 0.5, 0)``, ``i0 = int(src)``,
  ``l1 = src - i0``, ``l0 = 1 - l1``, the second tap ``i0 + 1`` clipped at the edge.
- Bilinear value, float32: ``r = l0 * (m0 * p00 + m1 * p01) + l1 * (m0 * p10 + m1 * p11) - zp``
  and ``q = clamp(rne(f32(r + zp)))`` (fbgemm's scalar quantize at scale 1). torch has two
  kernels: a contiguous NCHW input runs the generic loop (every product and sum rounded to
  float32); a channels-last input (any qnnpack conv output; also an NCHW tensor with C == 1 or
  H == W == 1, which is channels-last contiguous too) runs ``qupsample_bilinear2d_nhwc``,
  built for AVX2 with FMA contraction: its source index is ``fmaf(scale, i + 0.5, -0.5)``, its
  first ``8 * (C // 8)`` channels (the vector loop) compute ``fmaf(m1, p01, m0 * p00)`` and
  ``fmaf(l1, B, l0 * A)``, the rest (scalar tail) ``fmaf(m0, p00, m1 * p01)`` and
  ``fmaf(l0, A, l1 * B)`` (measured, exact). The ``layout`` attribute says which torch took at
  export (the memory format of its input there).
- torch's NHWC kernel writes channels-last order into an output it allocates in the input's
  suggested format: for a contiguous NCHW input with H == W == 1 (and C > 1) the output holds
  the NHWC-ordered results under NCHW strides. qrt reproduces that scramble.

float32 tensors (float sections): nearest and nearest-exact copy (exact); bilinear computes the
generic loop's float32 expression (docs/float-ops.md bound).
"""

from __future__ import annotations

import math

import numpy as np

from qrt import _ops
from qrt.ops._core import Bool, Choice, Float, Ints, OpDef, ShapeError, define, same_qparams

_F32, _F64 = np.float32, np.float64
_BIG = 1 << 24
_RANGE = {"quint8": (0, 255), "qint8": (-128, 127)}


def fmaf(a, b, c):
    """float32 fused multiply-add, one rounding: the float64 product of two float32 is exact;
    the float64 sum is made round-to-odd (its TwoSum error says whether it is inexact; an
    inexact sum with an even last bit moves one ulp toward the exact value), so its rounding
    to float32 is the correctly rounded a * b + c (53 >= 24 + 2 bits)."""
    p = np.multiply(np.asarray(a, _F32), np.asarray(b, _F32), dtype=_F64)
    c = np.asarray(c, _F64)
    s = p + c
    bb = s - p
    e = (p - (s - bb)) + (c - bb)
    inexact = e != 0
    if inexact.any():
        bits = np.array(s, _F64).view(np.int64)
        fix = inexact & ((bits & 1) == 0)
        # toward e: +1 in the bit pattern grows the magnitude, so the step is +1 when e and s
        # have the same sign, -1 otherwise (s != 0 here: an exact zero sum has e == 0)
        step = np.where((e > 0) == (s > 0), 1, -1) * fix
        s = (bits + step).view(_F64)
    return np.asarray(s, _F64).astype(_F32)


def out_size(a, n):
    """Output size of spatial dim ``n`` (0: H, 1: W) for input size ``L``."""
    def f(L):
        if a["size"] is not None:
            return a["size"][n]
        return int(math.floor(float(L) * a["scale_factor"][n]))
    return f


def _scale(a, n, L, Lo, bilinear):
    """The float32 ratio torch's kernel uses (area_pixel_compute_scale / compute_scales_value)."""
    if bilinear and a["align_corners"]:
        return _F32(_F32(L - 1) / _F32(Lo - 1)) if Lo > 1 else _F32(0)
    sf = a["scale_factor"]
    if a["kernel_scales"] and sf is not None and sf[n] > 0:
        return _F32(1.0 / sf[n])
    return _F32(_F32(L) / _F32(Lo))


def nearest_index(scale, L, Lo, exact):
    i = np.arange(Lo, dtype=np.int64)
    if exact:
        v = ((i.astype(_F64) + 0.5) * _F64(scale)).astype(_F32)
    else:
        v = i.astype(_F32) * scale
    # np.intp: np.take(..., out=) casts its indices 'safe' to intp (int32 on armv7l)
    return np.minimum(np.floor(v).astype(np.intp), L - 1)


def linear_taps(scale, L, Lo, align_corners, fused):
    """(i0, i1, l0, l1) per output position: torch's area_pixel_compute_source_index (with the
    FMA of the NHWC kernel's build when ``fused``)."""
    i = np.arange(Lo, dtype=np.int64)
    fi = i.astype(_F32)
    if align_corners:
        src = fi * scale
    else:
        h = fi + _F32(0.5)
        src = fmaf(scale, h, _F32(-0.5)) if fused else (scale * h) - _F32(0.5)
        src = np.where(src < 0, _F32(0), src).astype(_F32)
    i0 = src.astype(np.int64)
    i1 = i0 + (i0 < L - 1)
    l1 = (src - i0.astype(_F32)).astype(_F32)
    l0 = (_F32(1) - l1).astype(_F32)
    return i0, i1, l0, l1


@define
class Upsample2d(OpDef):
    name, code = "upsample2d", 116
    doc = ("nn.Upsample / F.interpolate of NCHW tensors: nearest, nearest-exact, bilinear "
           "(align_corners True/False), by size or scale factor; quantized exactly as torch, "
           "float32 too")
    attrs = {"mode": Choice("nearest", "nearest_exact", "bilinear"),
             "align_corners": Bool(default=False),
             "size": Ints(2, 1, _BIG, default=None, doc="[H, W] out, or null (scale_factor)"),
             "scale_h": Float(0.0, 1e6, default=0.0, doc="scale factor of H (0: size given)"),
             "scale_w": Float(0.0, 1e6, default=0.0, doc="scale factor of W (0: size given)"),
             "kernel_scales": Bool(default=True,
                                   doc="the scale factors reach the kernel (F.interpolate's "
                                       "recompute_scale_factor not set)"),
             "layout": Choice("nchw", "nhwc", default="nchw",
                              doc="torch's memory format of the input at export")}

    def _a(self, node):
        a = dict(node.attrs)
        sh, sw = a["scale_h"], a["scale_w"]
        a["scale_factor"] = None if a["size"] is not None else (sh, sw)
        return a

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        a = node.attrs
        if x.dtype not in ("quint8", "qint8", "float32") or x.qscheme == "per_channel_affine":
            raise node.fail(f"takes per-tensor quint8/qint8 or float32 tensors, not {x.dtype}")
        same_qparams(node, x, y, self.name)
        scales = a["scale_h"] > 0 and a["scale_w"] > 0
        if (a["size"] is None) != scales or (a["size"] is not None and
                                             (a["scale_h"] or a["scale_w"])):
            raise node.fail("give either size or both scale factors (> 0)", "R25")
        if a["align_corners"] and a["mode"] != "bilinear":
            raise node.fail("align_corners is for bilinear only (as torch)", "R25")

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        if len(x) != 4 or min(x[1:]) < 1:
            raise ShapeError(f"input must be [N, C, H >= 1, W >= 1], got {x}")
        a = self._a(node)
        oh, ow = out_size(a, 0)(x[2]), out_size(a, 1)(x[3])
        if oh < 1 or ow < 1 or oh > _BIG or ow > _BIG:
            raise ShapeError(f"input {x[2]}x{x[3]} gives an output of {oh}x{ow}")
        return [(x[0], x[1], oh, ow)]

    def bind(self, node, ins, outs):
        a = self._a(node)
        x = ins[0] if isinstance(ins[0], np.ndarray) else ins[0].int_repr()
        y = outs[0] if isinstance(outs[0], np.ndarray) else outs[0].int_repr()
        n, c, h, w = x.shape
        oh, ow = y.shape[-2:]
        mode = a["mode"]
        is_float = x.dtype == np.float32
        nhwc = a["layout"] == "nhwc" or c == 1 or h * w == 1
        scramble = not is_float and a["layout"] == "nchw" and h * w == 1 and c > 1
        if mode != "bilinear":
            hi = nearest_index(_scale(a, 0, h, oh, False), h, oh, mode == "nearest_exact")
            wi = nearest_index(_scale(a, 1, w, ow, False), w, ow, mode == "nearest_exact")
            tmp = np.empty((n, c, oh, w), x.dtype)
            res = np.empty(y.shape, x.dtype) if scramble else y

            def run():
                np.take(x, hi, axis=2, out=tmp)
                np.take(tmp, wi, axis=3, out=res)
                if scramble:
                    y.reshape(-1)[...] = res.transpose(0, 2, 3, 1).reshape(-1)
            return run, (), {}
        ac = a["align_corners"]
        fused = nhwc and not is_float
        th = linear_taps(_scale(a, 0, h, oh, True), h, oh, ac, fused)
        tw = linear_taps(_scale(a, 1, w, ow, True), w, ow, ac, fused)
        if is_float:
            zp, lo, hi_ = 0.0, 0, 0
        else:
            zp = float(node.inputs[0].zero_point)
            lo, hi_ = _RANGE[node.inputs[0].dtype]
        nv = 8 * (c // 8) if fused else 0
        if not nhwc and (h, w) == (oh, ow):
            return (lambda: np.copyto(y, x)), (), {}
        taps = [np.ascontiguousarray(t, np.int32 if k < 2 else _F32)
                for tt in (th, tw) for k, t in enumerate(tt)]
        dt = {np.dtype(np.uint8): 0, np.dtype(np.int8): 1, np.dtype(_F32): 2}[x.dtype]
        res = np.empty(y.shape, x.dtype) if scramble else y
        xb, rb = x.reshape(-1).view(np.uint8), res.reshape(-1).view(np.uint8)
        work = np.empty(2 * ow, _F32)
        args = (xb, rb, dt, n * c, c, h, w, oh, ow, *taps, work)
        kw = {"fused": fused, "nv": nv, "zp": zp, "lo": lo, "hi": hi_}
        if not scramble:
            return _ops.upsample_bilinear, args, kw

        def run():
            _ops.upsample_bilinear(*args, **kw)
            y.reshape(-1)[...] = res.transpose(0, 2, 3, 1).reshape(-1)
        return run, (), {}


def bilinear_numpy(x, th, tw, fused, nv, zp, lo, hi):
    """The bilinear formula of the module docstring in numpy (the kernel's specification in
    the tests): x [N, C, H, W] uint8/int8/float32, th / tw the (i0, i1, l0, l1) taps of
    linear_taps; returns the float32 result (float input) or the clamped codes (float32)."""
    c = x.shape[1]
    l0, l1 = th[2].reshape(-1, 1), th[3].reshape(-1, 1)
    m0, m1 = tw[2], tw[3]

    def value(p00, p01, p10, p11, vec):
        if not fused:
            A = m0 * p00 + m1 * p01
            B = m0 * p10 + m1 * p11
            return l0 * A + l1 * B
        if vec:
            A = fmaf(m1, p01, m0 * p00)
            B = fmaf(m1, p11, m0 * p10)
            return fmaf(l1, B, l0 * A)
        A = fmaf(m0, p00, m1 * p01)
        B = fmaf(m0, p10, m1 * p11)
        return fmaf(l0, A, l1 * B)

    xf = x.astype(_F32)
    rows0, rows1 = xf[:, :, th[0]], xf[:, :, th[1]]
    taps = (rows0[..., tw[0]], rows0[..., tw[1]], rows1[..., tw[0]], rows1[..., tw[1]])
    if nv == 0 or nv == c:
        r = value(*taps, vec=nv == c)
    else:
        r = np.concatenate([value(*(t[:, :nv] for t in taps), vec=True),
                            value(*(t[:, nv:] for t in taps), vec=False)], axis=1)
    if x.dtype == _F32:
        return r
    zp = _F32(zp)
    r = (r - zp).astype(_F32)
    return np.clip(np.rint((r + zp).astype(_F32)), lo, hi)

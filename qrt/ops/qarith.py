# SPDX-License-Identifier: Apache-2.0
"""Quantized arithmetic: mul (tensor x tensor, broadcasting, fused relu), mean over the last dim.

``mul`` is torch 2.13's own ``qmul`` kernel (QNNPACK has no mul; the qnnpack engine runs ATen's
generic kernel for quint8): ``c = (a - za) * (b - zb)`` in int32, then
``clamp(zo + rne(f32(c) * m))`` with ``m = f32(f32(sa * sb) * f32(1 / so))`` (every product in
float32, as ``requantize_from_int``); its vector and scalar loops compute the same.
mul_scalar and add_scalar are functions of the code: the exporter lowers them to ``lut``.
"""

from __future__ import annotations

import numpy as np

from qrt.ops._core import (Choice, Float, Int, Ints, OpDef, Param, ShapeError, define,
                          same_qparams)

_F32 = np.float32
_RANGE = {"quint8": (0, 255), "qint8": (-128, 127)}


def _codes(v):
    return v.int_repr()


@define
class Mul(OpDef):
    name, code = "mul", 28
    inputs = (2, 2)
    doc = "quantized mul / mul_relu (FloatFunctional.mul, QFunctional, FX), broadcasting"
    attrs = {"activation": Choice("none", "relu", default="none")}

    def validate(self, node):
        for t in node.inputs + node.outputs:
            if t.dtype != "quint8" or t.qscheme != "per_tensor_affine":
                raise node.fail("multiplies per-tensor quint8 tensors (torch runs qint8 mul "
                                "through XNNPACK, which qrt does not reproduce)")

    def infer(self, node, shapes):
        try:
            return [tuple(np.broadcast_shapes(tuple(shapes[0]), tuple(shapes[1])))]
        except ValueError:
            raise ShapeError(f"input shapes {tuple(shapes[0])} and {tuple(shapes[1])} do not "
                             "broadcast") from None

    def bind(self, node, ins, outs):
        a_t, b_t, y_t = node.inputs[0], node.inputs[1], node.outputs[0]
        y = _codes(outs[0])
        shape = y.shape
        a = np.broadcast_to(_codes(ins[0]), shape)
        b = np.broadcast_to(_codes(ins[1]), shape)
        inv = _F32(1.0) / _F32(y_t.scale)
        m = _F32(_F32(_F32(a_t.scale) * _F32(b_t.scale)) * inv)
        za, zb = np.int32(a_t.zero_point), np.int32(b_t.zero_point)
        lo, hi = _RANGE[y_t.dtype]
        if node.attrs["activation"] == "relu":
            lo = max(lo, y_t.zero_point)
        lo, hi = _F32(lo - y_t.zero_point), _F32(hi - y_t.zero_point)
        zo = _F32(y_t.zero_point)
        fast = _rows_binding(_codes(ins[0]), _codes(ins[1]), y, za, zb, m, lo, hi, zo)
        if fast is not None:
            return fast
        ia = np.empty(shape, np.int32)
        ib = np.empty(shape, np.int32)
        f = np.empty(shape, _F32)

        def run():   # the specification (qrt_mul_rows_u8 computes the same steps)
            np.subtract(a, za, out=ia, dtype=np.int32)
            np.subtract(b, zb, out=ib, dtype=np.int32)
            np.multiply(ia, ib, out=ia)
            np.copyto(f, ia, casting="unsafe")     # |c| <= 65025: exact in float32
            np.multiply(f, m, out=f)
            np.rint(f, out=f)                       # lrintf: round half to even
            np.clip(f, lo, hi, out=f)
            np.add(f, zo, out=f)
            np.copyto(y, f, casting="unsafe")
        return run, (), {}


def _rows_binding(a, b, y, za, zb, m, lo, hi, zo):
    """The C loop for contiguous operands of the same shape, or a [N, C, 1, 1] scale over a
    contiguous [N, C, H, W] (either order: the integer product commutes); None: numpy."""
    from qrt import _ops
    if not (np.isfinite(m) and y.flags.c_contiguous and y.size):
        return None
    if a.shape != y.shape:
        a, b, za, zb = b, a, zb, za
    if a.shape != y.shape or not a.flags.c_contiguous or not b.flags.c_contiguous:
        return None
    if b.shape == y.shape:
        rows, per_row = 1, False
    elif y.ndim >= 3 and b.ndim == y.ndim and b.shape[:2] == y.shape[:2] and \
            all(d == 1 for d in b.shape[2:]):
        rows, per_row = y.shape[0] * y.shape[1], True
    else:
        return None
    a2, y2 = a.reshape(rows, -1), y.reshape(rows, -1)
    return _ops.mul_rows_u8, (a2, b.reshape(-1), y2, per_row, int(za), int(zb), float(m),
                              float(lo), float(hi), float(zo)), {}


# ---- mean over the last dim ------------------------------------------------------------------
@define
class Mean(OpDef):
    name, code = "mean", 31
    doc = ("torch.mean / Tensor.mean over the last dim of a quantized tensor (torch's "
           "qmean_inner_dim kernel: integer sum of the codes, float32 divide, round half to even)")
    attrs = {"keepdim": Choice("false", "true", default="false"),
             "vec": Int(1, 64, default=8, doc="unused: files that carry it still load")}

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype not in ("quint8", "qint8", "qint32") or x.qscheme != "per_tensor_affine":
            raise node.fail(f"takes a per-tensor quint8/qint8/qint32 tensor, not {x.dtype}")
        same_qparams(node, x, y, "mean")

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        if not x or x[-1] < 1:
            raise ShapeError(f"mean over the last dim needs a non-empty last dim, got {x}")
        return [x[:-1] + (1,) if node.attrs["keepdim"] == "true" else x[:-1]]

    def bind(self, node, ins, outs):
        # torch 2.13 (ReduceOps.cpp, mean_out_quantized_cpu): a contiguous tensor reduced over
        # its innermost dim takes qmean_inner_dim_stub on every engine and dtype: the codes are
        # summed exactly (int64), the sum converted to float32, divided by float32(L) and
        # rounded half to even; the zero point cancels (same qparams in and out). The C
        # kernel: include/qrt/ref/qarith_ref.h.
        from qrt import _ops
        codes = _codes(ins[0])
        rows = codes.reshape(-1, codes.shape[-1])
        return _ops.mean_rows, (rows, _codes(outs[0]).reshape(-1)), {}


# ---- LayerNorm on quantized tensors ------------------------------------------------------------
@define
class LayerNorm(OpDef):
    name, code = "layer_norm", 107
    doc = ("quantized LayerNorm over the last dims (torch.ops.quantized.layer_norm: nnq.LayerNorm, "
           "F.layer_norm in an FX-quantized graph), per-tensor quint8 / qint8 in and out")
    attrs = {"normalized_shape": Ints(lo=1, min_len=1), "eps": Float(lo=0.0, default=1e-5)}
    params = (Param("weight", "float32", optional=True), Param("bias", "float32",
                                                               optional=True))

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype not in _RANGE or x.qscheme != "per_tensor_affine":
            raise node.fail(f"takes a per-tensor quint8/qint8 tensor, not {x.dtype} {x.qscheme}")
        if y.dtype != x.dtype or y.qscheme != "per_tensor_affine":
            raise node.fail(f"the output must be per-tensor {x.dtype}, is {y.dtype}")
        from qrt.ops.float_nn import _check_vec
        _check_vec(node, ("weight", "bias"), int(np.prod(node.attrs["normalized_shape"])))

    def infer(self, node, shapes):
        from qrt.ops.float_nn import ends_with
        return [ends_with(shapes[0], node.attrs["normalized_shape"])]

    def bind(self, node, ins, outs):
        from qrt import _ops
        x_t, y_t = node.inputs[0], node.outputs[0]
        x, y = _codes(ins[0]), _codes(outs[0])
        n = int(np.prod(node.attrs["normalized_shape"]))
        m = x.size // n if n else 0
        params = []
        for k in ("weight", "bias"):
            a = node.array(k)
            params.append(None if a is None else np.ascontiguousarray(a, _F32).reshape(-1))
        lo, hi = _RANGE[y_t.dtype]
        args = (float(_F32(x_t.scale)), int(x_t.zero_point), float(_F32(y_t.scale)),
                int(y_t.zero_point), float(node.attrs["eps"]), params[0], params[1], lo, hi)
        if not (m and n):
            return (lambda: None), (), {}
        if x.flags.c_contiguous and y.flags.c_contiguous:
            x2, y2 = x.reshape(m, n), y.reshape(m, n)
            return _ops.qlayer_norm_rows, (x2, y2) + args, {}

        def strided():
            t = np.ascontiguousarray(x).reshape(m, n)
            _ops.qlayer_norm_rows(t, t, *args)
            np.copyto(y, t.reshape(y.shape))
        return strided, (), {}

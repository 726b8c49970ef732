# SPDX-License-Identifier: Apache-2.0
"""lut: an element-wise function of the 8-bit input code, as a 256-entry table.

The exporter computes the table with torch itself (torch's op run on all 256 codes of the
input's qparams), so the op is exact by construction: torch's quantized tanh, elu,
leaky_relu, relu6, hardtanh, clamp, hardsigmoid, add_scalar, mul_scalar, and the FX pattern
``dequantize -> unary float ops -> quantize_per_tensor``.

Where torch computes the function differently in its vectorised loop and its scalar tail
(ATen's generic kernels, float ops with a SLEEF vector path), a second table ``tail`` holds the
scalar results: over the flattened (contiguous) tensor, whole chunks of ``vec_codes`` codes take
``table`` and the last ``n % vec_codes`` take ``tail`` (what torch does single-threaded, or for
tensors below ATen's grain size of 32768 elements).
"""

from __future__ import annotations

import numpy as np

from qrt import _ops
from qrt.ops._core import Int, OpDef, Param, Str, define

_Q = ("quint8", "qint8")


@define
class Lut(OpDef):
    name, code = "lut", 33
    doc = ("256-entry code table (computed by torch at export): quantized tanh, elu, "
           "leaky_relu, relu6, hardtanh, clamp, hardsigmoid, add_scalar, mul_scalar, and "
           "dequantize -> unary float ops -> quantize")
    params = (Param("table", "uint8"), Param("tail", "uint8", optional=True))
    attrs = {"fn": Str(128, default="", doc="what the table computes (for summaries)"),
             "vec_codes": Int(1, 1 << 20, default=64,
                              doc="with 'tail': torch's vector chunk in codes")}

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype not in _Q or x.qscheme != "per_tensor_affine" or y.dtype not in _Q or \
                y.qscheme != "per_tensor_affine":
            raise node.fail("maps a per-tensor quint8/qint8 tensor to a per-tensor quint8/qint8 "
                            "tensor")
        for p in ("table", "tail"):
            t = node.params.get(p)
            if t is not None and tuple(t.shape) != (256,):
                raise node.fail(f"parameter {p!r} must have shape (256,), has {t.shape}")

    def bind(self, node, ins, outs):
        src = ins[0].int_repr().reshape(-1).view(np.uint8)
        dst = outs[0].int_repr().reshape(-1).view(np.uint8)
        table, tail = node.array("table"), node.array("tail")
        if tail is None:
            return _ops.lut, (table, src, dst), {}
        n = src.shape[0]
        return _ops.lut2, (table, tail, src, dst, n - n % node.attrs["vec_codes"]), {}

    def describe(self, attrs):
        return f"fn={attrs.get('fn')}" if attrs.get("fn") else ""

# SPDX-License-Identifier: Apache-2.0
"""quantize (float32 -> per-tensor quint8/qint8/qint32) and dequantize (-> float32)."""

from __future__ import annotations

import numpy as np

from qrt import _quant
from qrt.ops._core import OpDef, define


@define
class Quantize(OpDef):
    name, code, since = "quantize", 1, (1, 0)
    doc = "torch.quantize_per_tensor / QuantStub: float32 -> per-tensor quantized"

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype != "float32" or y.qscheme != "per_tensor_affine":
            raise node.fail("maps a float32 tensor to a per-tensor quantized one")

    def bind(self, node, ins, outs):
        t = node.outputs[0]
        src = ins[0].reshape(-1)
        dst = outs[0].int_repr().reshape(-1)
        inv = float(np.float32(1.0) / np.float32(t.scale))
        if t.dtype == "quint8":
            return _quant.quantize_fma_u8, (src, dst, inv, float(t.zero_point), 0.0, 255.0), {}
        if t.dtype == "qint8":
            return _quant.quantize_fma_s8, (src, dst, inv, float(t.zero_point), -128.0,
                                            127.0), {}
        return _quant.quantize_rows, (src.reshape(1, 1, -1), dst.reshape(1, 1, -1),
                                      np.array([inv], np.float32),
                                      np.array([t.zero_point], np.float32),
                                      float(-(2**31)), float(2**31 - 1), -(2**31)), {}

    def prepare_cuda(self, node, dev):
        dev.require_q(node, node.outputs[0], ("quint8", "qint8"))
        return True

    def bind_cuda(self, node, ins, outs, dev):
        e = node.outputs[0]
        return lambda: dev.quantize_per_tensor(ins[0], e.scale, e.zero_point, e.dtype,
                                               out=outs[0])


@define
class Dequantize(OpDef):
    name, code, since = "dequantize", 2, (1, 0)
    doc = "Tensor.dequantize / DeQuantStub: per-tensor quantized -> float32"

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.qscheme != "per_tensor_affine" or y.dtype != "float32":
            raise node.fail("maps a per-tensor quantized tensor to float32")

    def bind(self, node, ins, outs):
        t = node.inputs[0]
        return _quant.dequantize_tensor, (ins[0].int_repr().reshape(-1), outs[0].reshape(-1),
                                          float(np.float32(t.scale)), t.zero_point), {}

    def prepare_cuda(self, node, dev):
        dev.require_q(node, node.inputs[0], ("quint8", "qint8"))
        return True

    def bind_cuda(self, node, ins, outs, dev):
        return lambda: dev.dequantize(ins[0], out=outs[0])

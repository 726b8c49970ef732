# SPDX-License-Identifier: Apache-2.0
"""Element-wise ops: relu (quantized and float32), add (fused relu), hardswish, sigmoid.

relu and add also take qint32 tensors (ATen's generic kernels, as torch's qnnpack engine)."""

from __future__ import annotations

import numpy as np

from qrt.ops._core import Choice, OpDef, ShapeError, define, legacy_kwargs, same_qparams

_Q = ("quint8", "qint8")


def _functional(name):
    import qrt.functional as F
    return getattr(F, name)


@define
class Relu(OpDef):
    name, code, since = "relu", 8, (1, 0)
    doc = "relu (nn.ReLU, F.relu, torch.relu): quantized max(q, zp), or float32"

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype == "float32":
            if y.dtype != "float32":
                raise node.fail("float32 relu must produce float32")
        elif x.dtype in _Q + ("qint32",):
            same_qparams(node, x, y, "relu")
        else:
            raise node.fail(f"takes quint8, qint8, qint32 or float32, not {x.dtype}")

    def bind(self, node, ins, outs):
        if node.inputs[0].dtype == "float32":
            return np.maximum, (ins[0], np.float32(0.0)), {"out": outs[0]}
        return _functional("relu"), (ins[0],), {"out": outs[0]}

    def prepare_cuda(self, node, dev):
        dev.require_q(node, node.inputs[0], _Q)
        return True

    def bind_cuda(self, node, ins, outs, dev):
        return lambda: dev.functional.relu(ins[0], out=outs[0])


@define
class Add(OpDef):
    name, code = "add", 9
    legacy = {"add_relu": (10, {"activation": "relu"})}
    inputs = (2, 2)
    doc = "quantized add / add_relu (FloatFunctional, QFunctional, FX), output qparams own"
    attrs = {"activation": Choice("none", "relu", default="none")}

    def upgrade(self, node, attrs, params, version):
        kw = legacy_kwargs(node, attrs, out_qparams=True)
        if kw:
            raise node.fail(f"unknown keyword {sorted(kw)[0]!r}")
        return {}, self.name_params(params, node.fail)

    def validate(self, node):
        # qint8: torch's qnnpack engine runs XNNPACK's add, which qrt does not reproduce
        dt = node.inputs[0].dtype
        for t in node.inputs + node.outputs:
            if t.dtype not in ("quint8", "qint32") or t.dtype != dt or \
                    t.qscheme != "per_tensor_affine":
                raise node.fail("adds per-tensor quint8 (or qint32) tensors of one dtype")

    def infer(self, node, shapes):
        if tuple(shapes[0]) != tuple(shapes[1]):
            raise ShapeError(f"input shapes {tuple(shapes[0])} and {tuple(shapes[1])} differ")
        return [tuple(shapes[0])]

    def bind(self, node, ins, outs):
        y = node.outputs[0]
        relu = node.attrs["activation"] == "relu"
        fast = _qnnp_binding(ins, outs[0], y.scale, y.zero_point, relu)
        if fast is not None:
            return fast
        fn = _functional("add_relu" if relu else "add")
        return fn, (ins[0], ins[1], y.scale, y.zero_point), {"out": outs[0]}

    def prepare_cuda(self, node, dev):
        y = node.outputs[0]
        dev.require_add(node, node.inputs, y.scale, y.zero_point,
                        node.attrs["activation"] == "relu")
        return True

    def bind_cuda(self, node, ins, outs, dev):
        y = node.outputs[0]
        fn = dev.functional.add_relu if node.attrs["activation"] == "relu" else \
            dev.functional.add
        return lambda: fn(ins[0], ins[1], y.scale, y.zero_point, out=outs[0])


def _qnnp_binding(ins, out, scale, zero_point, relu):
    """The plan's call of a quint8 add that QNNPACK's kernel takes: the kernel itself on the
    flat codes of the plan's fixed buffers, its parameters computed once (what qrt.functional.add
    computes per call: same kernel, same integers).  None: the generic path."""
    from qrt import _ops
    from qrt._dtypes import quint8
    a, b = ins
    if a.dtype is not quint8 or b.dtype is not quint8 or out.dtype is not quint8 or \
            a.shape != b.shape or a.shape != out.shape or a.ndim == 0 or a.numel() == 0:
        return None
    codes = [t.int_repr() for t in (a, b, out)]
    if not all(c.flags.c_contiguous for c in codes):
        return None
    sa, za, sb, zb = float(np.float32(a.q_scale())), a.q_zero_point(), \
        float(np.float32(b.q_scale())), b.q_zero_point()
    so = float(np.float32(scale))
    if not _ops.add_qnnp_supported(sa, za, sb, zb, so, zero_point, relu):
        return None
    kern = _ops.AddQnnp(sa, za, sb, zb, so, zero_point, relu)
    return kern.bind(*(c.reshape(-1) for c in codes)), (), {}


class _Table(OpDef):
    """An element-wise function of the 8-bit code (its output qparams are the tensor's)."""

    def upgrade(self, node, attrs, params, version):
        kw = legacy_kwargs(node, attrs, out_qparams=True)
        if kw:
            raise node.fail(f"unknown keyword {sorted(kw)[0]!r}")
        return {}, {}

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype not in _Q or x.qscheme != "per_tensor_affine" or y.dtype != x.dtype or \
                y.qscheme != "per_tensor_affine":
            raise node.fail("maps a per-tensor quint8/qint8 tensor to one of the same dtype")

    def prepare_cuda(self, node, dev):
        dev.require_q(node, node.inputs[0], _Q)
        return True


@define
class Hardswish(_Table):
    name, code = "hardswish", 14
    doc = "quantized hardswish (nnq.Hardswish)"

    def bind(self, node, ins, outs):
        y = node.outputs[0]
        x, o = ins[0], outs[0]
        if node.inputs[0].dtype == "quint8" and x.is_contiguous() and o.is_contiguous():
            # QNNPACK's table, built once here (what functional.hardswish builds per call)
            # and applied by the lut kernel to the plan's fixed buffers
            from qrt import _ops
            from qrt._tensor import _check_out_alias
            _check_out_alias(o, (x,), "hardswish", exact_ok=True)
            table = np.empty(256, np.uint8)
            _ops.hardswish_lut(table, np.float32(x.q_scale()), x.q_zero_point(),
                               np.float32(y.scale), y.zero_point)
            xf, of = x.int_repr().reshape(-1), o.int_repr().reshape(-1)
            return _ops.lut, (table, xf.view(np.uint8), of.view(np.uint8)), {}
        return _functional("hardswish"), (ins[0], y.scale, y.zero_point), {"out": outs[0]}

    def bind_cuda(self, node, ins, outs, dev):
        y = node.outputs[0]
        return lambda: dev.functional.hardswish(ins[0], y.scale, y.zero_point, out=outs[0])


@define
class Sigmoid(_Table):
    name, code = "sigmoid", 15
    doc = "quantized sigmoid (output qparams fixed by torch: 1/256, 0 or -128)"

    def bind(self, node, ins, outs):
        return _functional("sigmoid"), (ins[0],), {"out": outs[0]}

    def bind_cuda(self, node, ins, outs, dev):
        return lambda: dev.functional.sigmoid(ins[0], out=outs[0])

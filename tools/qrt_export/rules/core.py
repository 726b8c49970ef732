# SPDX-License-Identifier: Apache-2.0
"""Rules for the ops of the 1-d core: quantize/dequantize, conv1d, linear (static, dynamic),
relu, add, pooling, hardswish, sigmoid, cat, flatten/reshape/identity."""

from __future__ import annotations

from qrt_export.rules import Decline, function, method, module, prepass


# ---- quantize / dequantize -------------------------------------------------------------------
def _nnq():
    import torch.ao.nn.quantized as nnq
    return nnq


@module(lambda: (_nnq().Quantize,), "quantize (QuantStub/Quantize, torch.quantize_per_tensor)")
def quantize_module(cx, node, m):
    cx.quantize(node)


@function(lambda: (__import__("torch").quantize_per_tensor,), "torch.quantize_per_tensor")
def quantize_fn(cx, node, target):
    cx.quantize(node)


@module(lambda: (_nnq().DeQuantize,), "dequantize (DeQuantStub/DeQuantize, Tensor.dequantize)")
def dequantize_module(cx, node, m):
    if _fuse_lut(cx, node):
        return
    cx.emit("dequantize", node, [node.args[0]])


def _fuse_lut(cx, node):
    """dequantize -> unary float ops -> quantize: one lut op (qrt_export/rules/lut.py)."""
    from qrt_export.rules.lut import fuse_dequantize
    return fuse_dequantize(cx, node)


@function(lambda: (__import__("torch").dequantize,), "torch.dequantize")
def dequantize_fn(cx, node, target):
    if _fuse_lut(cx, node):
        return
    cx.emit("dequantize", node, [node.args[0]])


@method(("dequantize",), "Tensor.dequantize")
def dequantize_method(cx, node, name):
    if _fuse_lut(cx, node):
        return
    cx.emit("dequantize", node, [node.args[0]])


# ---- layers ----------------------------------------------------------------------------------
def _layers():
    import torch.ao.nn.intrinsic.quantized as nniq
    import torch.ao.nn.quantized.dynamic as nnqd
    nnq = _nnq()
    return nniq, nnq, nnqd


@module(lambda: (_layers()[0].ConvReLU1d,), "quantized ConvReLU1d (eager, FX, QAT-converted)")
def conv_relu1d(cx, node, m):
    _conv(cx, node, "conv_relu1d", m)


@module(lambda: (_layers()[1].Conv1d,), "quantized Conv1d (eager, FX, QAT-converted; "
        "padding_mode zeros or reflect)")
def conv1d(cx, node, m):
    _conv(cx, node, "conv1d", m)


def _conv(cx, node, kind, m):
    """padding_mode != 'zeros': torch pads the quantized input with F.pad(mode) and convolves
    with padding 0 (torch/ao/nn/quantized/modules/conv.py): lowered as pad -> conv1d."""
    mode = getattr(m, "padding_mode", "zeros")
    if mode == "zeros":
        cx.layer("conv1d", node, kind, m)
        return
    from qrt_export.rules.layout import conv_padding
    x, m0 = conv_padding(cx, node, m, mode)
    cx.layer("conv1d", node, kind, m0, x=x)


@module(lambda: (_layers()[0].LinearReLU,), "quantized LinearReLU")
def linear_relu(cx, node, m):
    cx.layer("linear", node, "linear_relu", m)


@module(lambda: (_layers()[2].Linear,), "dynamic quantized Linear (quantize_dynamic)")
def linear_dynamic(cx, node, m):
    cx.layer("linear_dynamic", node, "linear_dynamic", m)


@module(lambda: (_layers()[1].Linear,), "quantized Linear")
def linear(cx, node, m):
    cx.layer("linear", node, "linear", m)


def _qlinear_fns():
    import torch
    return (torch.ops.quantized.linear, torch.ops.quantized.linear.default,
            torch.ops.quantized.linear_relu, torch.ops.quantized.linear_relu.default)


@function(_qlinear_fns, "quantized::linear / linear_relu with packed weights (FX's "
          "functional F.linear, e.g. timm's Linear classifier)")
def linear_packed_fn(cx, node, target):
    """FX quantizes a traced ``F.linear(x, self.weight, self.bias)`` (a Linear subclass with
    its own forward) to ``quantized::linear(x, packed, scale, zero_point)``: the same layer as
    nnq.Linear, rebuilt from the unpacked weight."""
    import torch
    import torch.ao.nn.intrinsic.quantized as nniq
    import torch.ao.nn.quantized as nnq
    args = [cx.value(a) for a in node.args[:4]]
    if len(args) != 4:
        cx.unsupported(node, "quantized::linear without its packed weight, scale and zero point")
    packed, scale, zp = args[1], args[2], args[3]
    try:
        w, b = torch.ops.quantized.linear_unpack(packed)
    except Exception as e:  # noqa: BLE001 - torch raises many types
        cx.unsupported(node, f"quantized::linear whose weight does not unpack ({e})")
    relu = "relu" in str(target)
    m = (nniq.LinearReLU if relu else nnq.Linear)(w.shape[1], w.shape[0])
    m.set_weight_bias(w, b)
    m.scale, m.zero_point = float(scale), int(zp)
    cx.layer("linear", node, "linear_relu" if relu else "linear", m)


# ---- element-wise ------------------------------------------------------------------------------
def _relu_modules():
    import torch.nn as nn
    return (nn.ReLU,)


@module(_relu_modules, "relu (nn.ReLU, F.relu, torch.relu, Tensor.relu)")
def relu_module(cx, node, m):
    if isinstance(m, _nnq().ReLU6):  # a subclass of nn.ReLU: the lut rules take it
        raise Decline("module torch.ao.nn.quantized.ReLU6")
    cx.emit("relu", node, [node.args[0]])


@function(lambda: (__import__("torch").relu, __import__("torch").nn.functional.relu,
                   __import__("torch").relu_), "F.relu / torch.relu")
def relu_fn(cx, node, target):
    cx.emit("relu", node, [node.args[0]])


@method(("relu", "relu_"), "Tensor.relu")
def relu_method(cx, node, name):
    cx.emit("relu", node, [node.args[0]])


def _qadd():
    import torch
    q = torch.ops.quantized
    return (q.add, q.add.default, q.add_relu, q.add_relu.default)


@function(_qadd, "quantized add / add_relu (FloatFunctional, QFunctional, FX)")
def add(cx, node, target):
    if not hasattr(node.args[1], "name"):  # add.Scalar: a lut (rules/qarith.py)
        raise Decline("a scalar operand")
    act = "relu" if "relu" in str(target) else "none"
    cx.emit("add", node, [node.args[0], node.args[1]], attrs={"activation": act})


@module(lambda: (_nnq().Hardswish,), "hardswish (quantized)")
def hardswish(cx, node, m):
    cx.emit("hardswish", node, [node.args[0]])


def _sigmoid(cx, node):
    """quantized sigmoid (8-bit table) on a quantized tensor, float_sigmoid on a float one."""
    x = node.args[0]
    if cx.is_quantized(x):
        cx.emit("sigmoid", node, [x])
    else:
        from qrt_export.rules.float_unary import unary
        unary(cx, node, "float_sigmoid", "sigmoid")


@module(lambda: (__import__("torch").nn.Sigmoid,), "sigmoid (nn.Sigmoid, torch.sigmoid)")
def sigmoid_module(cx, node, m):
    _sigmoid(cx, node)


@function(lambda: (__import__("torch").sigmoid, __import__("torch").nn.functional.sigmoid),
          "torch.sigmoid / F.sigmoid (quantized or float)")
def sigmoid_fn(cx, node, target):
    _sigmoid(cx, node)


@method(("sigmoid",), "Tensor.sigmoid")
def sigmoid_method(cx, node, name):
    _sigmoid(cx, node)


# ---- pooling -----------------------------------------------------------------------------------
@module(lambda: (__import__("torch").nn.MaxPool1d,), "max_pool1d (nn.MaxPool1d, F.max_pool1d)")
def max_pool1d_module(cx, node, m):
    cx.pool("max_pool1d", node, m.kernel_size, m.stride, m.padding, dilation=m.dilation,
            ceil_mode=m.ceil_mode)


@module(lambda: (__import__("torch").nn.AvgPool1d,), "avg_pool1d (nn.AvgPool1d, F.avg_pool1d)")
def avg_pool1d_module(cx, node, m):
    cx.pool("avg_pool1d", node, m.kernel_size, m.stride, m.padding, ceil_mode=m.ceil_mode,
            count_include_pad=m.count_include_pad)


@module(lambda: (__import__("torch").nn.AdaptiveAvgPool1d,),
        "adaptive_avg_pool1d (nn.AdaptiveAvgPool1d, F.adaptive_avg_pool1d)")
def adaptive_avg_pool1d_module(cx, node, m):
    cx.emit("adaptive_avg_pool1d", node, [node.args[0]],
            attrs={"output_size": cx.int1(m.output_size)})


def _F():
    import torch
    return torch, torch.nn.functional


@function(lambda: (_F()[1].max_pool1d, _F()[0].max_pool1d), "F.max_pool1d")
def max_pool1d_fn(cx, node, target):
    cx.fpool("max_pool1d", node, ("kernel_size", "stride", "padding", "dilation", "ceil_mode"))


@function(lambda: (_F()[1].avg_pool1d, _F()[0].avg_pool1d), "F.avg_pool1d")
def avg_pool1d_fn(cx, node, target):
    cx.fpool("avg_pool1d", node, ("kernel_size", "stride", "padding", "ceil_mode",
                                  "count_include_pad"))


@function(lambda: (_F()[1].adaptive_avg_pool1d, _F()[0].adaptive_avg_pool1d),
          "F.adaptive_avg_pool1d")
def adaptive_avg_pool1d_fn(cx, node, target):
    os_ = node.kwargs.get("output_size", node.args[1] if len(node.args) > 1 else None)
    cx.emit("adaptive_avg_pool1d", node, [node.args[0]], attrs={"output_size": cx.int1(os_)})


# ---- shape ops ---------------------------------------------------------------------------------
@function(lambda: (_F()[0].cat, _F()[0].concat, _F()[0].ops.quantized.cat), "cat / concat "
          "(a zero tensor operand, torch.zeros_like(x) / torch.zeros / a constant: a zero pad)")
def cat(cx, node, target):
    tensors = list(node.args[0])
    dim = int(node.kwargs.get("dim", node.args[1] if len(node.args) > 1 else 0))
    zeros = getattr(cx, "zero_operands", set())
    if any(hasattr(a, "name") and a.name in zeros for a in tensors):
        _zero_cat(cx, node, tensors, dim, zeros)
        return
    cx.emit("cat", node, tensors, attrs={"dim": dim})


def _zero_cat(cx, node, tensors, dim, zeros):
    """cat([x, zeros]) (ECG ResNets widen their shortcut with ``torch.zeros_like``): a zero pad
    of ``x`` along ``dim``, the same values and, quantized, the same codes (torch's cat keeps
    x's scale and zero point, and the pad writes the code of 0.0)."""
    from qrt_export.rules.layout import _pad_attrs
    live = [a for a in tensors if not (hasattr(a, "name") and a.name in zeros)]
    if len(live) != 1:
        cx.unsupported(node, "cat of zero tensors and more than one other tensor")
    x = live[0]
    xv, out = cx.value(x), cx.value(node)
    if xv.is_quantized != out.is_quantized or (xv.is_quantized and (
            xv.q_scale() != out.q_scale() or xv.q_zero_point() != out.q_zero_point())):
        cx.unsupported(node, "cat of a zero tensor at other quantization parameters")
    nd = xv.dim()
    d = dim % nd
    k = tensors.index(x)
    before = sum(int(cx.value(a).shape[d]) for a in tensors[:k])
    after = sum(int(cx.value(a).shape[d]) for a in tensors[k + 1:])
    pads = [0, 0] * (nd - 1 - d) + [before, after]
    if len(pads) > 4:
        cx.unsupported(node, f"cat of a zero tensor along dim {dim} of a {nd}-d tensor (the "
                       "pad op pads the last two dims)")
    cx.emit("pad", node, [x], attrs=_pad_attrs(cx, node, x, pads, "constant", 0.0))


def _zero_source(cx, n):
    """The nodes making ``n`` when it is an all-zero tensor made from shapes only: a factory
    (torch.zeros_like / zeros, Tensor.new_zeros, a constant an export folded), or a quantize of
    one (FX quantizes ``zeros_like(x.dequantize())``); None otherwise."""
    import torch
    v = cx.value(n)
    if not isinstance(v, torch.Tensor) or \
            ((v.int_repr() != v.q_zero_point()).any() if v.is_quantized else v.any()):
        return None
    if (n.op == "call_function" and n.target in (torch.zeros_like, torch.zeros)) or \
            (n.op == "call_method" and n.target == "new_zeros"):
        # its input is read for its shape only: dropped with it when nothing else reads it
        dead = [a for a in n.all_input_nodes if len(a.users) == 1 and
                a.op in ("call_method", "call_function") and
                (a.target == "dequantize" or a.target is torch.dequantize)]
        return [n] + dead
    if n.op == "get_attr":
        return [n]
    if n.op == "call_function" and n.target is torch.quantize_per_tensor and \
            hasattr(n.args[0], "op") and len(n.args[0].users) == 1:
        src = _zero_source(cx, n.args[0])
        return None if src is None else [n] + src
    return None


def _zero_operands(cx):
    """Zero tensors made from shapes only (:func:`_zero_source`) read only by cats: not
    lowered, the cat pads instead."""
    import torch
    cx.zero_operands = set()
    cats = (torch.cat, torch.concat, torch.ops.quantized.cat)
    for n in cx.gm.graph.nodes:
        if not n.users or not all(u.op == "call_function" and u.target in cats and
                                  n in list(u.args[0]) for u in n.users):
            continue
        src = _zero_source(cx, n)
        if src is not None:
            cx.zero_operands.add(n.name)
            cx.done.update(m.name for m in src)


prepass(_zero_operands)


def _flatten_attrs(node, default_start):
    names = ("start_dim", "end_dim")
    args = dict(zip(names, node.args[1:]))
    args.update({k: v for k, v in node.kwargs.items() if k in names})
    return {"start_dim": int(args.get("start_dim", default_start)),
            "end_dim": int(args.get("end_dim", -1))}


@module(lambda: (__import__("torch").nn.Flatten,), "flatten (nn.Flatten, torch.flatten)")
def flatten_module(cx, node, m):
    cx.emit("flatten", node, [node.args[0]],
            attrs={"start_dim": int(m.start_dim), "end_dim": int(m.end_dim)})


@function(lambda: (_F()[0].flatten,), "torch.flatten")
def flatten_fn(cx, node, target):
    cx.emit("flatten", node, [node.args[0]], attrs=_flatten_attrs(node, 0))


@method(("flatten",), "Tensor.flatten")
def flatten_method(cx, node, name):
    cx.emit("flatten", node, [node.args[0]], attrs=_flatten_attrs(node, 0))


@function(lambda: (_F()[0].reshape,), "reshape / view (-1 and x.size(d) follow the input)")
def reshape_fn(cx, node, target):
    from qrt_export.rules.layout import emit_view
    shape = node.kwargs.get("shape", node.args[1] if len(node.args) > 1 else None)
    emit_view(cx, node, node.args[0], shape)


@method(("view", "reshape"), "Tensor.view / Tensor.reshape")
def reshape_method(cx, node, name):
    from qrt_export.rules.layout import emit_view
    shape = node.args[1:]
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    emit_view(cx, node, node.args[0], node.kwargs.get("shape", shape))


@module(lambda: (__import__("torch").nn.Identity, __import__("torch").nn.Dropout),
        "identity, dropout (eval)")
def identity_module(cx, node, m):
    cx.emit("identity", node, [node.args[0]])


@function(lambda: (_F()[1].dropout,), "F.dropout (eval)")
def dropout_fn(cx, node, target):
    cx.emit("identity", node, [node.args[0]])


@method(("contiguous", "detach"), "Tensor.contiguous / detach")
def identity_method(cx, node, name):
    cx.emit("identity", node, [node.args[0]])

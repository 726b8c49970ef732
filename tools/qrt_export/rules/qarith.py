# SPDX-License-Identifier: Apache-2.0
"""Rules for quantized arithmetic: quantized mul / mul_relu (FloatFunctional.mul, QFunctional,
FX) -> ``mul``; add_scalar / mul_scalar (and their relu variants), functions of the code whose
output qparams torch derives from the input's -> ``lut`` (table computed by torch)."""

from __future__ import annotations

from qrt_export.rules import Decline, function, method, module
from qrt_export.rules.lut import emit_lut


def _is_node(v):
    return hasattr(v, "op") and hasattr(v, "users")


def _q(*names):
    import torch
    q = torch.ops.quantized
    out = []
    for n in names:
        op = getattr(q, n, None)
        if op is not None:
            out.append(op)
            out += [getattr(op, o) for o in op.overloads()]
    return tuple(out)


@function(lambda: _q("mul", "mul_relu"), "quantized mul / mul_relu (FloatFunctional.mul, FX; "
          "quint8, broadcasting), x * sigmoid(x)")
def qmul(cx, node, target):
    a, b = node.args[0], node.args[1]
    relu = "relu" in str(target)
    if not _is_node(b):  # mul.Scalar
        qscalar(cx, node, target)
        return
    import torch
    for v in (cx.value(a), cx.value(b)):
        if not (isinstance(v, torch.Tensor) and v.is_quantized and v.dtype == torch.quint8):
            cx.unsupported(node, "quantized mul of non-quint8 tensors (torch runs qint8 mul "
                           "through XNNPACK)")
    cx.emit("mul", node, [a, b], attrs={"activation": "relu" if relu else "none"})


@function(lambda: _q("mul_scalar", "mul_scalar_relu", "add_scalar", "add_scalar_relu", "add",
                     "add_relu"),
          "quantized add_scalar / mul_scalar (FloatFunctional, FX x * c + c) as a 256-entry "
          "table")
def qscalar(cx, node, target):
    x, c = node.args[0], node.args[1]
    if _is_node(c):
        raise Decline("the scalar is computed at run time")
    kw = dict(node.kwargs)
    emit_lut(cx, node, x, lambda t: target(t, c, *node.args[2:], **kw), str(target))


def _mean(cx, node):
    import torch
    x = node.args[0]
    xv = cx.value(x)
    if not (isinstance(xv, torch.Tensor) and xv.is_quantized):
        raise Decline("float input")
    dim = node.kwargs.get("dim", node.args[1] if len(node.args) > 1 else None)
    keep = node.kwargs.get("keepdim", node.args[2] if len(node.args) > 2 else False)
    if isinstance(dim, (tuple, list)) and len(dim) == 1:
        dim = dim[0]
    if xv.dtype not in (torch.quint8, torch.qint8, torch.qint32):
        cx.unsupported(node, f"quantized mean of a {xv.dtype} tensor")
    if _qnnpack_global_mean(cx, node, x, xv, dim, keep):
        return
    if not xv.is_contiguous():
        # torch takes its integer qmean_inner_dim kernel only for contiguous tensors; a
        # permuted or sliced one goes through dequantize -> float mean -> quantize
        cx.unsupported(node, "quantized mean of a non-contiguous tensor (torch then rounds "
                       "through a float mean; qrt reproduces the contiguous kernel only: "
                       "call .contiguous() before the mean)")
    if node.kwargs.get("dtype") is not None or not isinstance(dim, int) or \
            dim % xv.dim() != xv.dim() - 1:
        cx.unsupported(node, f"quantized mean over dim={dim!r} (qrt: the last dim)")
    cx.emit("mean", node, [x], attrs={"keepdim": "true" if keep else "false"})


def _qnnpack_global_mean(cx, node, x, xv, dim, keep):
    """torch 2.13's mean_out_quantized_cpu: on the qnnpack engine, a 4-d quint8 tensor
    reduced over dim=[2, 3] exactly as written (the literal list, not [-2, -1]) takes
    qnnpack's global average pooling whatever its memory layout (ShuffleNetV2's
    ``x.mean([2, 3])`` on a channels-last conv output): acc = sum(x - zp) over H*W,
    y = rne(f32(acc) * f32(s / f32(s * H*W))) + zp, the qparams kept. That is qrt's
    adaptive_avg_pool2d to 1x1 (QNNPACK's average pool with kernel = stride = H, W), then a
    squeeze unless keepdim."""
    import torch
    if node.kwargs.get("dtype") is not None or xv.dtype != torch.quint8 or xv.dim() != 4 or \
            not isinstance(dim, (tuple, list)) or len(dim) != 2 or \
            any(type(d) is not int for d in dim) or tuple(dim) != (2, 3):
        return False
    from qrt_export.rules.layout import _mid
    if keep:
        cx.emit("adaptive_avg_pool2d", node, [x], attrs={"output_size": [1, 1]})
        return True
    from qrt_export._export import _source
    t, _ = _mid(cx, f"{node.name}.pool", lambda v: torch.mean(v, [2, 3], keepdim=True), x)
    # its own name: the export check compares an op with the torch value of its name's node
    cx.b.op("adaptive_avg_pool2d", f"{node.name}.pool", [cx.tensor(x)], [t], [],
            {"output_size": [1, 1]}, _source(node, cx.gm))
    cx.emit("squeeze", node, [t], attrs={"dims": [2, 3]})
    return True


@function(lambda: (__import__("torch").mean,), "quantized torch.mean over the last (time) dim; "
          "over dims [2, 3] of a 4-d quint8 tensor (qnnpack's global average pool)")
def mean_fn(cx, node, target):
    _mean(cx, node)


@method(("mean",), "quantized Tensor.mean over the last (time) dim; over dims [2, 3] of a "
        "4-d quint8 tensor (qnnpack's global average pool)")
def mean_method(cx, node, name):
    _mean(cx, node)


# ---- quantized LayerNorm ---------------------------------------------------------------------
def _qlayer_norm(cx, node, x, ns, w, b, eps, what):
    import torch
    xv = cx.value(x)
    if not (isinstance(xv, torch.Tensor) and xv.is_quantized and
            xv.dtype in (torch.quint8, torch.qint8) and
            xv.qscheme() == torch.per_tensor_affine):
        raise Decline(f"{what} of a tensor that is not per-tensor quint8 / qint8")
    from qrt_export.rules._float import param
    ps = [None if v is None else param(cx, node, v, lb) for lb, v in (("weight", w),
                                                                          ("bias", b))]
    if ps[0] is None and ps[1] is not None:
        cx.unsupported(node, f"{what} with a bias and no weight")
    ps = [p for p in ps if p is not None]
    ns = [int(ns)] if isinstance(ns, int) else [int(d) for d in ns]
    cx.emit("layer_norm", node, [x], ps, attrs={"normalized_shape": ns, "eps": float(eps)})


@function(lambda: _q("layer_norm"), "quantized layer_norm (torch.ops.quantized.layer_norm: "
          "F.layer_norm in an FX-quantized graph; quint8 / qint8)")
def qlayer_norm_fn(cx, node, target):
    from qrt_export.rules._float import arg, scalar
    _qlayer_norm(cx, node, arg(node, 0, "input"), arg(node, 1, "normalized_shape"),
                 arg(node, 2, "weight"), arg(node, 3, "bias"),
                 scalar(cx, node, arg(node, 4, "eps", 1e-5), "eps"), "quantized layer_norm")


def _nnq_layer_norm():
    import torch.ao.nn.quantized as nnq
    return (nnq.LayerNorm,)


@module(_nnq_layer_norm, "quantized LayerNorm module (nnq.LayerNorm, eager / FX; quint8 / "
        "qint8)")
def qlayer_norm_module(cx, node, m):
    _qlayer_norm(cx, node, node.args[0], m.normalized_shape, m.weight, m.bias, m.eps,
                 "quantized LayerNorm")

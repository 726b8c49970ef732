# SPDX-License-Identifier: Apache-2.0
"""Rules for 2-d (NCHW) models: quantized Conv2d / ConvReLU2d (eager fused and FX; BatchNorm2d
is folded into the conv by torch's fuse_modules / prepare_fx before it reaches qrt) and the 2-d
pools (qrt/ops/conv.py, qrt/ops/pool2d.py)."""

from __future__ import annotations

from qrt_export.rules import function, module


def _conv_types():
    import torch.ao.nn.intrinsic.quantized as nniq
    import torch.ao.nn.quantized as nnq
    return nniq, nnq


def _conv2d(cx, node, kind, m):
    """padding_mode 'reflect': torch pads the quantized input with F.pad and convolves with
    padding 0 (torch/ao/nn/quantized/modules/conv.py): lowered as pad -> conv2d."""
    mode = getattr(m, "padding_mode", "zeros")
    if mode == "zeros":
        cx.layer("conv2d", node, kind, m)
        return
    from qrt_export.rules.layout import conv2d_padding
    x, m0 = conv2d_padding(cx, node, m, mode)
    cx.layer("conv2d", node, kind, m0, x=x)


@module(lambda: (_conv_types()[0].ConvReLU2d,), "quantized ConvReLU2d (eager fused, FX, "
        "QAT-converted)")
def conv_relu2d(cx, node, m):
    _conv2d(cx, node, "conv_relu2d", m)


@module(lambda: (_conv_types()[1].Conv2d,), "quantized Conv2d (eager, FX, QAT-converted; every "
        "stride, padding, dilation and groups, depthwise with channel multiplier)")
def conv2d(cx, node, m):
    _conv2d(cx, node, "conv2d", m)


# ---- 2-d pooling (qrt/ops/pool2d.py) -------------------------------------------------------
def _pair(cx, node, v, what, default=None):
    if v is None:
        if default is None:
            cx.unsupported(node, f"{what}=None")
        return list(default)
    if hasattr(v, "op"):
        cx.unsupported(node, f"{what} computed in forward()")
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            v = (v[0], v[0])
        if len(v) != 2 or any(type(i) is not int for i in v):
            cx.unsupported(node, f"{what}={v!r} (qrt pools take two integers)")
        return [int(v[0]), int(v[1])]
    if type(v) is not int:
        cx.unsupported(node, f"{what}={v!r}")
    return [int(v), int(v)]


def _pool2d(cx, node, kind, a):
    if a.get("return_indices"):
        cx.unsupported(node, f"{kind}(return_indices=True)")
    k = _pair(cx, node, a.get("kernel_size"), "kernel_size")
    s = a.get("stride")
    attrs = {"kernel_size": k,
             "stride": k if s in (None, (), []) else _pair(cx, node, s, "stride"),
             "padding": _pair(cx, node, a.get("padding", 0), "padding"),
             "ceil_mode": bool(a.get("ceil_mode", False))}
    if kind == "max_pool2d":
        attrs["dilation"] = _pair(cx, node, a.get("dilation", 1), "dilation")
    else:
        attrs["count_include_pad"] = bool(a.get("count_include_pad", True))
        dov = a.get("divisor_override")
        if dov is not None and (type(dov) is not int or dov < 1):
            cx.unsupported(node, f"divisor_override={dov!r}")
        attrs["divisor_override"] = dov
    cx.emit(kind, node, [node.args[0]], attrs=attrs)


def _adaptive2d(cx, node, kind, output_size, return_indices=False):
    if return_indices:
        cx.unsupported(node, f"{kind}(return_indices=True)")
    if isinstance(output_size, (tuple, list)) and any(v is None for v in output_size):
        cx.unsupported(node, f"{kind} with output_size {output_size!r} (None keeps the input "
                       "size: give the size)")
    cx.emit(kind, node, [node.args[0]],
            attrs={"output_size": _pair(cx, node, output_size, "output_size")})


def _nn():
    import torch
    return torch.nn


def _fn():
    import torch
    return torch, torch.nn.functional


@module(lambda: (_nn().MaxPool2d,), "max_pool2d (nn.MaxPool2d, F.max_pool2d)")
def max_pool2d_module(cx, node, m):
    _pool2d(cx, node, "max_pool2d", {k: getattr(m, k) for k in (
        "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices")})


@module(lambda: (_nn().AvgPool2d,), "avg_pool2d (nn.AvgPool2d, F.avg_pool2d)")
def avg_pool2d_module(cx, node, m):
    _pool2d(cx, node, "avg_pool2d", {k: getattr(m, k) for k in (
        "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
        "divisor_override")})


@module(lambda: (_nn().AdaptiveAvgPool2d,), "adaptive_avg_pool2d (nn.AdaptiveAvgPool2d, "
        "F.adaptive_avg_pool2d)")
def adaptive_avg_pool2d_module(cx, node, m):
    _adaptive2d(cx, node, "adaptive_avg_pool2d", m.output_size)


@module(lambda: (_nn().AdaptiveMaxPool2d,), "adaptive_max_pool2d (nn.AdaptiveMaxPool2d, "
        "F.adaptive_max_pool2d)")
def adaptive_max_pool2d_module(cx, node, m):
    _adaptive2d(cx, node, "adaptive_max_pool2d", m.output_size, m.return_indices)


def _args(node, names):
    a = dict(zip(("input",) + names, node.args))
    a.update(node.kwargs)
    return a


@function(lambda: (_fn()[1].max_pool2d, _fn()[0].max_pool2d), "F.max_pool2d")
def max_pool2d_fn(cx, node, target):
    _pool2d(cx, node, "max_pool2d", _args(node, ("kernel_size", "stride", "padding",
                                                 "dilation", "ceil_mode", "return_indices")))


@function(lambda: (_fn()[1].avg_pool2d, _fn()[0]._C._nn.avg_pool2d), "F.avg_pool2d")
def avg_pool2d_fn(cx, node, target):
    _pool2d(cx, node, "avg_pool2d", _args(node, ("kernel_size", "stride", "padding",
                                                 "ceil_mode", "count_include_pad",
                                                 "divisor_override")))


@function(lambda: (_fn()[1].adaptive_avg_pool2d,), "F.adaptive_avg_pool2d")
def adaptive_avg_pool2d_fn(cx, node, target):
    a = _args(node, ("output_size",))
    _adaptive2d(cx, node, "adaptive_avg_pool2d", a.get("output_size"))


@function(lambda: (_fn()[1].adaptive_max_pool2d,), "F.adaptive_max_pool2d")
def adaptive_max_pool2d_fn(cx, node, target):
    a = _args(node, ("output_size", "return_indices"))
    _adaptive2d(cx, node, "adaptive_max_pool2d", a.get("output_size"),
                a.get("return_indices", False))


# ---- transposed conv (qrt/ops/conv_transpose.py) -------------------------------------------
@module(lambda: (_conv_types()[1].ConvTranspose2d,), "quantized ConvTranspose2d (eager, FX; "
        "every stride, padding, output_padding, dilation, groups; per-tensor weights, or "
        "per output channel with groups=1)")
def conv_transpose2d(cx, node, m):
    import numpy as np
    import torch
    if getattr(m, "padding_mode", "zeros") != "zeros":
        cx.unsupported(node, f"ConvTranspose2d(padding_mode={m.padding_mode!r})")
    w = m.weight()
    c_out, g = int(m.out_channels), int(m.groups)
    if w.dtype != torch.qint8:
        cx.unsupported(node, f"ConvTranspose2d with {w.dtype} weights")
    ints = w.int_repr().numpy().copy()
    if w.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        scales = np.full(c_out, w.q_scale(), np.float64)
        zps = np.full(c_out, w.q_zero_point(), np.int32)
        qs = "per_tensor_affine"
    elif w.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric) and \
            w.q_per_channel_axis() == 1 and g == 1:
        # qnnpack reads one requantization scale per output channel: axis 1 of [C_in, C_out,
        # kh, kw] (axis 0 makes torch fail: "requantization scale must be finite")
        scales = w.q_per_channel_scales().numpy().astype(np.float64)
        zps = w.q_per_channel_zero_points().numpy().astype(np.int32)
        qs = "per_channel_affine"
    else:
        cx.unsupported(node, "ConvTranspose2d with per-channel weights other than along the "
                       "output channels (axis 1) of an ungrouped layer")
    arrays = {"weight": ints, "weight_scale": scales, "weight_zero_point": zps}
    b = m.bias()
    if b is not None:
        arrays["bias"] = b.detach().to(torch.float32).numpy().copy()
    params = [cx.b.constant(f"{node.name}.{k}", v) for k, v in arrays.items()]
    attrs = {"stride": [int(v) for v in m.stride], "padding": [int(v) for v in m.padding],
             "output_padding": [int(v) for v in m.output_padding],
             "dilation": [int(v) for v in m.dilation], "groups": g,
             "weight_qscheme": qs, "activation": "none"}
    cx.emit("conv_transpose2d", node, [node.args[0]], params, attrs)


# ---- upsampling (qrt/ops/upsample.py) ------------------------------------------------------
_MODES = {"nearest": "nearest", "nearest-exact": "nearest_exact", "bilinear": "bilinear"}


def _upsample(cx, node, x, size, scale_factor, mode, align_corners, recompute, antialias=False):
    import torch
    from torch._prims_common import suggest_memory_format
    xv = cx.value(x)
    if not isinstance(xv, torch.Tensor) or xv.dim() != 4:
        cx.unsupported(node, "interpolate of a tensor that is not 4-d NCHW")
    if xv.is_quantized and xv.dtype not in (torch.quint8, torch.qint8):
        cx.unsupported(node, f"interpolate of a {xv.dtype} tensor")
    if not xv.is_quantized and xv.dtype != torch.float32:
        cx.unsupported(node, f"interpolate of a {xv.dtype} tensor")
    if mode not in _MODES:
        cx.unsupported(node, f"interpolate mode {mode!r} (qrt: nearest, nearest-exact, "
                       "bilinear)")
    if antialias:
        cx.unsupported(node, "interpolate(antialias=True)")
    size, scale_factor = (_shape_const(cx, node, v) for v in (size, scale_factor))
    attrs = {"mode": _MODES[mode], "align_corners": bool(align_corners) if mode == "bilinear"
             else False,
             "layout": "nhwc" if suggest_memory_format(xv) == torch.channels_last else "nchw"}
    if size is not None:
        s = list(size) if isinstance(size, (tuple, list)) else [size, size]
        if len(s) != 2 or any(type(i) is not int or i < 1 for i in s):
            cx.unsupported(node, f"interpolate size={size!r}")
        attrs["size"] = s
    elif scale_factor is not None:
        f = list(scale_factor) if isinstance(scale_factor, (tuple, list)) else \
            [scale_factor, scale_factor]
        if len(f) != 2 or any(not isinstance(i, (int, float)) or not i > 0 for i in f):
            cx.unsupported(node, f"interpolate scale_factor={scale_factor!r}")
        attrs["scale_h"], attrs["scale_w"] = float(f[0]), float(f[1])
        attrs["kernel_scales"] = not recompute
    else:
        cx.unsupported(node, "interpolate without size or scale_factor")
    cx.emit("upsample2d", node, [x], attrs=attrs)


def _shape_const(cx, node, v):
    """A size / scale_factor argument computed in forward() from shapes only
    (``F.interpolate(x, size=inp.shape[-2:])``, torchvision's segmentation heads): its value
    at the exported shapes, which qrt's input check fixes (a blob takes other batch sizes
    only). A value computed from a tensor's values is refused."""
    import torch
    from qrt_export._export import _from_shapes

    def one(a):
        if not hasattr(a, "op"):
            return a
        if not _from_shapes(a, cx.v):
            cx.unsupported(node, "interpolate size / scale_factor computed in forward() from "
                           "a tensor's values (qrt folds sizes computed from shapes only)")
        val = cx.value(a)
        return tuple(int(i) for i in val) if isinstance(val, (torch.Size, tuple, list)) \
            else val
    if isinstance(v, (tuple, list)):
        v = type(v)(one(i) for i in v)
        return tuple(j for i in v for j in (i if isinstance(i, tuple) else (i,)))
    return one(v)


@module(lambda: (_nn().Upsample,), "nn.Upsample / UpsamplingNearest2d / UpsamplingBilinear2d "
        "(nearest, nearest-exact, bilinear; quantized exact, float32)")
def upsample_module(cx, node, m):
    _upsample(cx, node, node.args[0], m.size, m.scale_factor, m.mode, m.align_corners,
              m.recompute_scale_factor)


@function(lambda: (_fn()[1].interpolate, _fn()[1].upsample), "F.interpolate / F.upsample "
          "(nearest, nearest-exact, bilinear; 4-d)")
def interpolate_fn(cx, node, target):
    a = _args(node, ("size", "scale_factor", "mode", "align_corners", "recompute_scale_factor",
                     "antialias"))
    _upsample(cx, node, node.args[0], a.get("size"), a.get("scale_factor"),
              a.get("mode", "nearest"), a.get("align_corners"),
              a.get("recompute_scale_factor"), a.get("antialias", False))


@function(lambda: (_fn()[1].upsample_nearest, _fn()[1].upsample_bilinear),
          "F.upsample_nearest / F.upsample_bilinear (align_corners=True)")
def upsample_fn(cx, node, target):
    a = _args(node, ("size", "scale_factor"))
    bil = target is _fn()[1].upsample_bilinear
    _upsample(cx, node, node.args[0], a.get("size"), a.get("scale_factor"),
              "bilinear" if bil else "nearest", bil, None)

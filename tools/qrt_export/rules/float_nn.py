# SPDX-License-Identifier: Apache-2.0
"""Rules for float32 LayerNorm / GroupNorm / InstanceNorm1d / BatchNorm1d / BatchNorm2d (eval),
Linear, Conv1d and Conv2d left in float (qrt/ops/float_nn.py). Quantized counterparts
(nnq.LayerNorm...) are subclasses of the float modules: a quantized input is refused, not run
as float."""

from __future__ import annotations

from qrt_export.rules import function, module
from qrt_export.rules._float import arg, param, require_float, scalar


def _nn():
    import torch.nn as nn
    return nn


def _F():
    import torch
    return torch, torch.nn.functional


def _emit(cx, node, kind, what, x, ps, attrs=None):
    """Emit ``kind`` on float input ``x`` with params ``ps`` = [(label, value or None)] in the
    op's slot order (absent trailing slots are left out; a bias without weight gets a weight
    of ones, exact since x * 1 == x)."""
    import torch
    require_float(cx, node, what, x)
    d = dict(ps)
    if "weight" in d and d["weight"] is None and d.get("bias") is not None:
        b = d["bias"]
        d["weight"] = torch.ones_like(cx.value(b) if hasattr(b, "op") else b)
    vals = [(lb, d[lb]) for lb, _ in ps]
    while vals and vals[-1][1] is None:
        vals.pop()
    for lb, v in vals:
        if v is None:
            cx.unsupported(node, f"{what} without {lb}")
    cx.emit(kind, node, [x], [param(cx, node, v, lb) for lb, v in vals], attrs or {})


# ---- norms -----------------------------------------------------------------------------------
@module(lambda: (_nn().LayerNorm,), "float LayerNorm (nn.LayerNorm, F.layer_norm)")
def layer_norm_module(cx, node, m):
    _emit(cx, node, "float_layer_norm", "LayerNorm", node.args[0],
          [("weight", m.weight), ("bias", m.bias)],
          {"normalized_shape": [int(d) for d in m.normalized_shape], "eps": float(m.eps)})


@function(lambda: (_F()[1].layer_norm, _F()[0].layer_norm), "F.layer_norm (float)")
def layer_norm_fn(cx, node, target):
    ns = arg(node, 1, "normalized_shape")
    ns = [int(ns)] if isinstance(ns, int) else [int(d) for d in ns]
    _emit(cx, node, "float_layer_norm", "layer_norm", arg(node, 0, "input"),
          [("weight", arg(node, 2, "weight")), ("bias", arg(node, 3, "bias"))],
          {"normalized_shape": ns, "eps": scalar(cx, node, arg(node, 4, "eps", 1e-5), "eps")})


@module(lambda: (_nn().GroupNorm,), "float GroupNorm (nn.GroupNorm, F.group_norm)")
def group_norm_module(cx, node, m):
    _emit(cx, node, "float_group_norm", "GroupNorm", node.args[0],
          [("weight", m.weight), ("bias", m.bias)],
          {"num_groups": int(m.num_groups), "eps": float(m.eps)})


@function(lambda: (_F()[1].group_norm, _F()[0].group_norm), "F.group_norm (float)")
def group_norm_fn(cx, node, target):
    _emit(cx, node, "float_group_norm", "group_norm", arg(node, 0, "input"),
          [("weight", arg(node, 2, "weight")), ("bias", arg(node, 3, "bias"))],
          {"num_groups": int(arg(node, 1, "num_groups")),
           "eps": scalar(cx, node, arg(node, 4, "eps", 1e-5), "eps")})


def _batched(cx, node, x, what):
    if cx.value(x).dim() < 2:
        cx.unsupported(node, f"{what} on a {cx.value(x).dim()}-d input")


@module(lambda: (_nn().InstanceNorm1d,), "float InstanceNorm1d (nn.InstanceNorm1d, "
        "F.instance_norm)")
def instance_norm_module(cx, node, m):
    x = node.args[0]
    require_float(cx, node, "InstanceNorm1d", x)
    if cx.value(x).dim() != 3:
        cx.unsupported(node, "InstanceNorm1d on an unbatched (C, L) input")
    if m.track_running_stats and m.running_mean is not None:   # eval: running statistics
        return _emit(cx, node, "float_batch_norm", "InstanceNorm1d", x,
                     [("running_mean", m.running_mean), ("running_var", m.running_var),
                      ("weight", m.weight), ("bias", m.bias)], {"eps": float(m.eps)})
    _emit(cx, node, "float_instance_norm", "InstanceNorm1d", x,
          [("weight", m.weight), ("bias", m.bias)], {"eps": float(m.eps)})


@function(lambda: (_F()[1].instance_norm, _F()[0].instance_norm), "F.instance_norm (float)")
def instance_norm_fn(cx, node, target):
    x = arg(node, 0, "input")
    rm, rv = arg(node, 1, "running_mean"), arg(node, 2, "running_var")
    w, b = arg(node, 3, "weight"), arg(node, 4, "bias")
    use_input = arg(node, 5, "use_input_stats", True)
    eps = scalar(cx, node, arg(node, 7, "eps", 1e-5), "eps")
    _batched(cx, node, x, "instance_norm")
    if use_input:
        return _emit(cx, node, "float_instance_norm", "instance_norm", x,
                     [("weight", w), ("bias", b)], {"eps": eps})
    _emit(cx, node, "float_batch_norm", "instance_norm", x,
          [("running_mean", rm), ("running_var", rv), ("weight", w), ("bias", b)],
          {"eps": eps})


@module(lambda: (_nn().BatchNorm1d, _nn().BatchNorm2d), "float BatchNorm1d / BatchNorm2d in "
        "eval (nn.BatchNorm1d, nn.BatchNorm2d, F.batch_norm; running statistics)")
def batch_norm_module(cx, node, m):
    x = node.args[0]
    what = type(m).__name__
    if m.training or m.running_mean is None:
        cx.unsupported(node, f"{what} with batch statistics (training mode or "
                       "track_running_stats=False)")
    _batched(cx, node, x, what)
    if isinstance(m, _nn().BatchNorm2d) and cx.value(x).dim() != 4:
        cx.unsupported(node, f"BatchNorm2d on a {cx.value(x).dim()}-d input (torch takes "
                       "(N, C, H, W))")
    _emit(cx, node, "float_batch_norm", what, x,
          [("running_mean", m.running_mean), ("running_var", m.running_var),
           ("weight", m.weight), ("bias", m.bias)], {"eps": float(m.eps)})


@function(lambda: (_F()[1].batch_norm, _F()[0].batch_norm), "F.batch_norm (float, eval)")
def batch_norm_fn(cx, node, target):
    x = arg(node, 0, "input")
    if arg(node, 5, "training", False):
        cx.unsupported(node, "batch_norm with training=True")
    _batched(cx, node, x, "batch_norm")
    _emit(cx, node, "float_batch_norm", "batch_norm", x,
          [("running_mean", arg(node, 1, "running_mean")),
           ("running_var", arg(node, 2, "running_var")),
           ("weight", arg(node, 3, "weight")), ("bias", arg(node, 4, "bias"))],
          {"eps": scalar(cx, node, arg(node, 7, "eps", 1e-5), "eps")})


# ---- linear / conv1d -----------------------------------------------------------------------------
@module(lambda: (_nn().Linear,), "float Linear (nn.Linear left in float, F.linear)")
def linear_module(cx, node, m):
    _emit(cx, node, "float_linear", "Linear", node.args[0],
          [("weight", m.weight), ("bias", m.bias)])


@function(lambda: (_F()[1].linear,), "F.linear (float, constant weight)")
def linear_fn(cx, node, target):
    _emit(cx, node, "float_linear", "linear", arg(node, 0, "input"),
          [("weight", arg(node, 1, "weight")), ("bias", arg(node, 2, "bias"))])


def _conv_padding(cx, node, padding, k, dilation):
    if isinstance(padding, str):
        if padding == "valid":
            return 0
        total = dilation * (k - 1)
        if padding == "same" and total % 2 == 0:
            return total // 2
        cx.unsupported(node, f"conv1d padding={padding!r} with an odd total padding")
    return cx.int1(padding)


def _conv(cx, node, what, x, w, b, stride, padding, dilation, groups):
    wv = cx.value(w) if hasattr(w, "op") else w
    k = int(wv.shape[-1])
    d = cx.int1(dilation)
    attrs = {"stride": cx.int1(stride), "padding": _conv_padding(cx, node, padding, k, d),
             "dilation": d, "groups": int(groups)}
    _emit(cx, node, "float_conv1d", what, x, [("weight", w), ("bias", b)], attrs)


@module(lambda: (_nn().Conv1d,), "float Conv1d (nn.Conv1d left in float, F.conv1d; every "
        "padding_mode)")
def conv1d_module(cx, node, m):
    x, padding = node.args[0], m.padding
    same_odd = m.padding == "same" and sum(m._reversed_padding_repeated_twice) % 2
    if m.padding_mode != "zeros" or same_odd:   # a pad op (reflect / replicate / circular, or
        # the asymmetric zeros of an odd 'same'), then the conv
        from qrt_export.rules.layout import float_conv_pad
        x, padding = float_conv_pad(cx, node, m)
    _conv(cx, node, "Conv1d", x, folded_weight(m), m.bias, m.stride, padding, m.dilation,
          m.groups)


def folded_weight(m, name="weight"):
    """The weight torch computes for module ``m`` at its next call, as a plain tensor: weight
    normalisation folded, ``g * v / ||v||`` with torch's own ``torch._weight_norm`` (the
    hook-based ``torch.nn.utils.weight_norm``, whose ``m.weight`` attribute is only refreshed
    by a forward), or the parametrization evaluated (``torch.nn.utils.parametrizations``:
    ``weight_norm``, ``spectral_norm``... ``m.weight`` runs it)."""
    import torch
    from torch.nn.utils.weight_norm import WeightNorm
    with torch.no_grad():
        for h in m._forward_pre_hooks.values():
            if isinstance(h, WeightNorm) and h.name == name:
                return torch._weight_norm(getattr(m, name + "_v"), getattr(m, name + "_g"),
                                          h.dim).detach()
        return getattr(m, name).detach()


@function(lambda: (_F()[1].conv1d, _F()[0].conv1d), "F.conv1d (float, constant weight)")
def conv1d_fn(cx, node, target):
    _conv(cx, node, "conv1d", arg(node, 0, "input"), arg(node, 1, "weight"),
          arg(node, 2, "bias"), arg(node, 3, "stride", 1), arg(node, 4, "padding", 0),
          arg(node, 5, "dilation", 1), arg(node, 6, "groups", 1))


def _conv_transpose(cx, node, what, x, w, b, stride, padding, output_padding, groups, dilation):
    attrs = {"stride": cx.int1(stride), "padding": cx.int1(padding),
             "output_padding": cx.int1(output_padding), "dilation": cx.int1(dilation),
             "groups": int(groups)}
    _emit(cx, node, "float_conv_transpose1d", what, x, [("weight", w), ("bias", b)], attrs)


@module(lambda: (_nn().ConvTranspose1d,), "float ConvTranspose1d (left in float, e.g. by "
        "quantize_dynamic; F.conv_transpose1d)")
def conv_transpose1d_module(cx, node, m):
    if len(node.args) > 1 or node.kwargs.get("output_size") is not None:
        cx.unsupported(node, "float ConvTranspose1d called with output_size")
    _conv_transpose(cx, node, "ConvTranspose1d", node.args[0], folded_weight(m), m.bias,
                    m.stride, m.padding, m.output_padding, m.groups, m.dilation)


@function(lambda: (_F()[1].conv_transpose1d, _F()[0].conv_transpose1d),
          "F.conv_transpose1d (float, constant weight)")
def conv_transpose1d_fn(cx, node, target):
    _conv_transpose(cx, node, "conv_transpose1d", arg(node, 0, "input"), arg(node, 1, "weight"),
                    arg(node, 2, "bias"), arg(node, 3, "stride", 1), arg(node, 4, "padding", 0),
                    arg(node, 5, "output_padding", 0), arg(node, 6, "groups", 1),
                    arg(node, 7, "dilation", 1))


# ---- conv2d ------------------------------------------------------------------------------------
def _conv2d_pads(cx, node, padding, k, dilation):
    """[top, bottom, left, right] of torch's padding: ints, 'valid', or 'same' (an odd total
    puts the extra zero after, as torch's F.conv2d(padding='same') pads)."""
    if isinstance(padding, str):
        if padding == "valid":
            return [0, 0, 0, 0]
        if padding != "same":
            cx.unsupported(node, f"conv2d padding={padding!r}")
        out = []
        for kd, d in zip(k, dilation):
            total = d * (kd - 1)
            out += [total // 2, total - total // 2]
        return out
    p = _pair(cx, node, padding, "padding")
    return [p[0], p[0], p[1], p[1]]


def _pair(cx, node, v, what):
    if hasattr(v, "op"):
        cx.unsupported(node, f"{what} computed in forward()")
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            v = (v[0], v[0])
        if len(v) != 2 or any(type(i) is not int for i in v):
            cx.unsupported(node, f"{what}={v!r} (two integers expected)")
        return [int(v[0]), int(v[1])]
    if type(v) is not int:
        cx.unsupported(node, f"{what}={v!r}")
    return [int(v), int(v)]


def _conv2d(cx, node, what, x, w, b, stride, padding, dilation, groups, mode="zeros"):
    wv = cx.value(w) if hasattr(w, "op") else w
    if wv.dim() != 4:
        cx.unsupported(node, f"{what} with a {wv.dim()}-d weight")
    d = _pair(cx, node, dilation, "dilation")
    attrs = {"stride": _pair(cx, node, stride, "stride"),
             "padding": _conv2d_pads(cx, node, padding, tuple(wv.shape[2:]), d),
             "dilation": d, "groups": int(groups), "padding_mode": mode}
    _emit(cx, node, "float_conv2d", what, x, [("weight", w), ("bias", b)], attrs)


@module(lambda: (_nn().Conv2d,), "float Conv2d (nn.Conv2d left in float, e.g. by "
        "quantize_dynamic; F.conv2d; every padding_mode, 'same'/'valid', groups)")
def conv2d_module(cx, node, m):
    x = node.args[0]
    if m.padding_mode not in ("zeros", "reflect", "replicate", "circular"):
        cx.unsupported(node, f"Conv2d padding_mode={m.padding_mode!r}")
    if m.padding_mode == "zeros":
        padding = m.padding
    else:  # torch pads by _reversed_padding_repeated_twice (left, right, top, bottom)
        r = [int(v) for v in m._reversed_padding_repeated_twice]
        padding = None
        pads = [r[2], r[3], r[0], r[1]]
    if padding is not None:
        return _conv2d(cx, node, "Conv2d", x, folded_weight(m), m.bias, m.stride, padding,
                       m.dilation, m.groups)
    wv = folded_weight(m)
    d = _pair(cx, node, m.dilation, "dilation")
    _emit(cx, node, "float_conv2d", "Conv2d", x, [("weight", wv), ("bias", m.bias)],
          {"stride": _pair(cx, node, m.stride, "stride"), "padding": pads, "dilation": d,
           "groups": int(m.groups), "padding_mode": m.padding_mode})


@function(lambda: (_F()[1].conv2d, _F()[0].conv2d), "F.conv2d (float, constant weight)")
def conv2d_fn(cx, node, target):
    _conv2d(cx, node, "conv2d", arg(node, 0, "input"), arg(node, 1, "weight"),
            arg(node, 2, "bias"), arg(node, 3, "stride", 1), arg(node, 4, "padding", 0),
            arg(node, 5, "dilation", 1), arg(node, 6, "groups", 1))

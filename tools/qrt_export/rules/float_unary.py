# SPDX-License-Identifier: Apache-2.0
"""Rules for the float32 element-wise ops (qrt/ops/float_unary.py): activations and
exp/log/sqrt/pow on float tensors. A quantized input is refused with its source line (torch's
quantized versions of these are other ops). sigmoid dispatches in rules/core.py."""

from __future__ import annotations

import math

from qrt_export.rules import function, method, module
from qrt_export.rules._float import arg, is_node, param, require_float, scalar


def _nn():
    import torch.nn as nn
    return nn


def _F():
    import torch
    return torch, torch.nn.functional


def unary(cx, node, kind, what, attrs=None, params=()):
    x = node.args[0] if node.args else node.kwargs.get("input")
    require_float(cx, node, what, x)
    cx.emit(kind, node, [x], list(params), attrs or {})


# ---- modules -----------------------------------------------------------------------------------
@module(lambda: (_nn().GELU,), "float GELU (nn.GELU, F.gelu; none/tanh)")
def gelu_module(cx, node, m):
    unary(cx, node, "float_gelu", "GELU", {"approximate": m.approximate})


@module(lambda: (_nn().SiLU,), "float SiLU (nn.SiLU, F.silu)")
def silu_module(cx, node, m):
    unary(cx, node, "float_silu", "SiLU")


@module(lambda: (_nn().Tanh,), "float tanh (nn.Tanh, torch.tanh, Tensor.tanh)")
def tanh_module(cx, node, m):
    unary(cx, node, "float_tanh", "tanh")


@module(lambda: (_nn().ELU,), "float ELU (nn.ELU, F.elu)")
def elu_module(cx, node, m):
    unary(cx, node, "float_elu", "ELU", {"alpha": float(m.alpha)})


@module(lambda: (_nn().CELU,), "float CELU (nn.CELU, F.celu)")
def celu_module(cx, node, m):
    unary(cx, node, "float_elu", "CELU", {"alpha": float(m.alpha),
                                          "input_scale": 1.0 / float(m.alpha)})


_SELU = {"alpha": 1.6732632423543772848170429916717,
         "scale": 1.0507009873554804934193349852946}


@module(lambda: (_nn().SELU,), "float SELU (nn.SELU, F.selu)")
def selu_module(cx, node, m):
    unary(cx, node, "float_elu", "SELU", dict(_SELU))


@module(lambda: (_nn().LeakyReLU,), "float LeakyReLU (nn.LeakyReLU, F.leaky_relu)")
def leaky_relu_module(cx, node, m):
    unary(cx, node, "float_leaky_relu", "LeakyReLU",
          {"negative_slope": float(m.negative_slope)})


@module(lambda: (_nn().PReLU,), "float PReLU (nn.PReLU, F.prelu)")
def prelu_module(cx, node, m):
    unary(cx, node, "float_prelu", "PReLU", params=[param(cx, node, m.weight, "weight")])


@module(lambda: (_nn().Hardswish,), "float hardswish (nn.Hardswish, F.hardswish)")
def hardswish_module(cx, node, m):
    unary(cx, node, "float_hardswish", "hardswish")


@module(lambda: (_nn().Hardsigmoid,), "float hardsigmoid (nn.Hardsigmoid, F.hardsigmoid)")
def hardsigmoid_module(cx, node, m):
    unary(cx, node, "float_hardsigmoid", "hardsigmoid")


@module(lambda: (_nn().Hardtanh,), "float hardtanh / ReLU6 (nn.Hardtanh, nn.ReLU6, "
        "F.hardtanh, F.relu6)")
def hardtanh_module(cx, node, m):   # nn.ReLU6 is a Hardtanh(0, 6)
    unary(cx, node, "float_clamp", type(m).__name__,
          {"min": float(m.min_val), "max": float(m.max_val)})


# ---- functions -----------------------------------------------------------------------------------
@function(lambda: (_F()[1].gelu,), "F.gelu (float)")
def gelu_fn(cx, node, target):
    unary(cx, node, "float_gelu", "gelu",
          {"approximate": str(arg(node, 1, "approximate", "none"))})


@function(lambda: (_F()[1].silu,), "F.silu (float)")
def silu_fn(cx, node, target):
    unary(cx, node, "float_silu", "silu")


@function(lambda: (_F()[0].tanh, _F()[1].tanh), "torch.tanh (float)")
def tanh_fn(cx, node, target):
    unary(cx, node, "float_tanh", "tanh")


@function(lambda: (_F()[1].elu,), "F.elu (float)")
def elu_fn(cx, node, target):
    unary(cx, node, "float_elu", "elu",
          {"alpha": scalar(cx, node, arg(node, 1, "alpha", 1.0), "alpha")})


@function(lambda: (_F()[1].celu, _F()[0].celu), "F.celu (float)")
def celu_fn(cx, node, target):
    a = scalar(cx, node, arg(node, 1, "alpha", 1.0), "alpha")
    unary(cx, node, "float_elu", "celu", {"alpha": a, "input_scale": 1.0 / a})


@function(lambda: (_F()[1].selu, _F()[0].selu), "F.selu (float)")
def selu_fn(cx, node, target):
    unary(cx, node, "float_elu", "selu", dict(_SELU))


@function(lambda: (_F()[1].leaky_relu,), "F.leaky_relu (float)")
def leaky_relu_fn(cx, node, target):
    unary(cx, node, "float_leaky_relu", "leaky_relu",
          {"negative_slope": scalar(cx, node, arg(node, 1, "negative_slope", 0.01),
                                    "negative_slope")})


@function(lambda: (_F()[1].prelu, _F()[0].prelu), "F.prelu (float, constant weight)")
def prelu_fn(cx, node, target):
    unary(cx, node, "float_prelu", "prelu",
          params=[param(cx, node, arg(node, 1, "weight"), "weight")])


@function(lambda: (_F()[1].hardswish,), "F.hardswish (float)")
def hardswish_fn(cx, node, target):
    unary(cx, node, "float_hardswish", "hardswish")


@function(lambda: (_F()[1].hardsigmoid,), "F.hardsigmoid (float)")
def hardsigmoid_fn(cx, node, target):
    unary(cx, node, "float_hardsigmoid", "hardsigmoid")


@function(lambda: (_F()[1].relu6,), "F.relu6 (float)")
def relu6_fn(cx, node, target):
    unary(cx, node, "float_clamp", "relu6", {"min": 0.0, "max": 6.0})


@function(lambda: (_F()[1].hardtanh,), "F.hardtanh (float)")
def hardtanh_fn(cx, node, target):
    unary(cx, node, "float_clamp", "hardtanh",
          {"min": scalar(cx, node, arg(node, 1, "min_val", -1.0), "min_val"),
           "max": scalar(cx, node, arg(node, 2, "max_val", 1.0), "max_val")})


def _clamp(cx, node):
    lo, hi = arg(node, 1, "min"), arg(node, 2, "max")
    attrs = {"has_min": lo is not None, "has_max": hi is not None}
    if lo is None and hi is None:
        cx.unsupported(node, "clamp without min and max")
    if lo is not None:
        attrs["min"] = scalar(cx, node, lo, "clamp min")
    if hi is not None:
        attrs["max"] = scalar(cx, node, hi, "clamp max")
    unary(cx, node, "float_clamp", "clamp", attrs)


@function(lambda: (_F()[0].clamp, _F()[0].clip), "torch.clamp / torch.clip (float, scalar "
          "bounds)")
def clamp_fn(cx, node, target):
    _clamp(cx, node)


@method(("clamp", "clip"), "Tensor.clamp / Tensor.clip (float)")
def clamp_method(cx, node, name):
    _clamp(cx, node)


@function(lambda: (_F()[0].exp,), "torch.exp (float)")
def exp_fn(cx, node, target):
    unary(cx, node, "float_exp", "exp")


@function(lambda: (_F()[0].log,), "torch.log (float)")
def log_fn(cx, node, target):
    unary(cx, node, "float_log", "log")


@function(lambda: (_F()[0].sqrt,), "torch.sqrt (float)")
def sqrt_fn(cx, node, target):
    unary(cx, node, "float_sqrt", "sqrt")


def _pow(cx, node):
    e = arg(node, 1, "exponent")
    if is_node(e) or not isinstance(e, (int, float)) or isinstance(e, bool) or \
            not math.isfinite(e):
        cx.unsupported(node, "pow with a tensor or non-finite exponent (a finite Python "
                       "number is supported)")
    unary(cx, node, "float_pow", "pow", {"exponent": float(e)})


@function(lambda: (_F()[0].pow, __import__("operator").pow), "torch.pow / x ** c (float, "
          "scalar exponent)")
def pow_fn(cx, node, target):
    if not is_node(node.args[0]):
        cx.unsupported(node, "pow with a scalar base")
    _pow(cx, node)


@method(("tanh", "exp", "log", "sqrt", "pow"), "Tensor.tanh / exp / log / sqrt / pow (float)")
def unary_method(cx, node, name):
    if name == "pow":
        _pow(cx, node)
    else:
        unary(cx, node, f"float_{name}", name)

# SPDX-License-Identifier: Apache-2.0
"""Rules for float32 softmax / log_softmax / mean / sum (qrt/ops/float_reduce.py)."""

from __future__ import annotations

from qrt_export.rules import function, method, module
from qrt_export.rules._float import arg, require_float, softmax_dim


def _torch():
    import torch
    return torch


def softmax(cx, node, log, x, dim, dtype=None):
    what = "log_softmax" if log else "softmax"
    require_float(cx, node, what, x)
    if dtype is not None:
        cx.unsupported(node, f"{what} with dtype={dtype}")
    cx.emit("float_log_softmax" if log else "float_softmax", node, [x],
            attrs={"dim": softmax_dim(cx, node, x, dim)})


@module(lambda: (_torch().nn.Softmax,), "float softmax (nn.Softmax, F.softmax, "
        "Tensor.softmax)")
def softmax_module(cx, node, m):
    softmax(cx, node, False, node.args[0], m.dim)  # nnq.Softmax (a subclass): refused


@module(lambda: (_torch().nn.LogSoftmax,), "float log_softmax (nn.LogSoftmax, "
        "F.log_softmax, Tensor.log_softmax)")
def log_softmax_module(cx, node, m):
    softmax(cx, node, True, node.args[0], m.dim)


def _softmax_call(cx, node, log):
    softmax(cx, node, log, arg(node, 0, "input"), arg(node, 1, "dim"),
            node.kwargs.get("dtype", node.args[3] if len(node.args) > 3 else None))


@function(lambda: (_torch().nn.functional.softmax, _torch().softmax),
          "F.softmax / torch.softmax (float)")
def softmax_fn(cx, node, target):
    if target is _torch().softmax:
        return softmax(cx, node, False, arg(node, 0, "input"), arg(node, 1, "dim"),
                       arg(node, 2, "dtype"))
    _softmax_call(cx, node, False)


@function(lambda: (_torch().nn.functional.log_softmax, _torch().log_softmax),
          "F.log_softmax / torch.log_softmax (float)")
def log_softmax_fn(cx, node, target):
    if target is _torch().log_softmax:
        return softmax(cx, node, True, arg(node, 0, "input"), arg(node, 1, "dim"),
                       arg(node, 2, "dtype"))
    _softmax_call(cx, node, True)


@method(("softmax", "log_softmax"), "Tensor.softmax / Tensor.log_softmax (float)")
def softmax_method(cx, node, name):
    softmax(cx, node, name == "log_softmax", node.args[0], arg(node, 1, "dim"),
            arg(node, 2, "dtype"))


def reduce(cx, node, op):
    x = arg(node, 0, "input")
    require_float(cx, node, op, x)
    dim = arg(node, 1, "dim")
    keep = arg(node, 2, "keepdim", False)
    if node.kwargs.get("dtype") is not None:
        cx.unsupported(node, f"{op} with dtype={node.kwargs['dtype']}")
    if dim is None:
        dims = []
    elif isinstance(dim, int):
        dims = [dim]
    elif isinstance(dim, (tuple, list)) and all(isinstance(d, int) for d in dim):
        dims = list(dim)
    else:
        cx.unsupported(node, f"{op} over dims {dim!r} (integers are supported)")
    if not isinstance(keep, bool):
        cx.unsupported(node, f"{op} with keepdim={keep!r}")
    nd = cx.value(x).dim()
    if dims and nd and len(set(d % nd for d in dims)) == nd and not keep:
        dims = []
    cx.emit(f"float_{op}", node, [x], attrs={"dims": dims, "keepdim": bool(keep)})


@function(lambda: (_torch().mean,), "torch.mean (float, over dims, keepdim)")
def mean_fn(cx, node, target):
    reduce(cx, node, "mean")


@function(lambda: (_torch().sum,), "torch.sum (float, over dims, keepdim)")
def sum_fn(cx, node, target):
    reduce(cx, node, "sum")


@method(("mean", "sum"), "Tensor.mean / Tensor.sum (float)")
def reduce_method(cx, node, name):
    reduce(cx, node, name)

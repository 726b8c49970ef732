# SPDX-License-Identifier: Apache-2.0
"""Rules for float32 add/sub/mul/div (tensor-tensor with broadcasting, tensor-constant,
tensor-scalar) and matmul (qrt/ops/float_binary.py). Quantized add is
``torch.ops.quantized.add`` (rules/core.py); these targets on quantized tensors are refused."""

from __future__ import annotations

import operator

from qrt_export.rules import function, method
from qrt_export.rules._float import arg, is_node, is_tensor, param, require_float, scalar

_KIND = {"add": "float_add", "sub": "float_sub", "mul": "float_mul", "div": "float_div"}


def binary(cx, node, op, a, b):
    """``a op b`` where at least one operand is a float tensor node."""
    kind = _KIND[op]
    if op in ("add", "sub"):
        alpha = node.kwargs.get("alpha", 1)
        if alpha != 1:
            cx.unsupported(node, f"torch.{op} with alpha={alpha!r}")
    if op == "div" and node.kwargs.get("rounding_mode") is not None:
        cx.unsupported(node, f"torch.div with rounding_mode={node.kwargs['rounding_mode']!r}")
    ta, tb = is_tensor(cx, a), is_tensor(cx, b)
    if not ta and not tb:
        cx.unsupported(node, f"{op} of two non-tensors")
    require_float(cx, node, op, *[x for x, t in ((a, ta), (b, tb)) if t])
    if ta and tb:
        ca, cb = a.op == "get_attr", b.op == "get_attr"
        if ca and cb:
            cx.unsupported(node, f"{op} of two constants")
        if not ca and not cb:
            return cx.emit(kind, node, [a, b])
        x, c, rev = (b, a, True) if ca else (a, b, False)
        return cx.emit(kind, node, [x], [param(cx, node, c, "other")], {"reverse": rev})
    x, s, rev = (a, b, False) if ta else (b, a, True)
    if is_node(s) and s.op == "get_attr":
        return cx.emit(kind, node, [x], [param(cx, node, s, "other")], {"reverse": rev})
    cx.emit(kind, node, [x], attrs={"scalar": scalar(cx, node, s, f"{op} operand"),
                                    "reverse": rev})


def _torch():
    import torch
    return torch


_OPS = {operator.add: "add", operator.iadd: "add", operator.sub: "sub", operator.isub: "sub",
        operator.mul: "mul", operator.imul: "mul", operator.truediv: "div",
        operator.itruediv: "div"}


def _targets():
    t = _torch()
    return tuple(_OPS) + (t.add, t.sub, t.subtract, t.mul, t.multiply, t.div, t.divide,
                          t.true_divide, t.rsub)


def _name_of(target):
    t = _torch()
    if target in _OPS:
        return _OPS[target]
    return {t.add: "add", t.sub: "sub", t.subtract: "sub", t.mul: "mul", t.multiply: "mul",
            t.div: "div", t.divide: "div", t.true_divide: "div"}.get(target)


@function(_targets, "float add/sub/mul/div (operator +, -, *, /, torch.add/sub/mul/div/rsub "
          "on float tensors; tensor, constant or scalar operand)")
def binary_fn(cx, node, target):
    a, b = arg(node, 0, "input"), arg(node, 1, "other")
    if target is _torch().rsub:
        return binary(cx, node, "sub", b, a)
    binary(cx, node, _name_of(target), a, b)


_METHODS = {"add": "add", "add_": "add", "sub": "sub", "sub_": "sub", "mul": "mul",
            "mul_": "mul", "div": "div", "div_": "div", "true_divide": "div",
            "__radd__": "add", "__rmul__": "mul"}


@method(tuple(_METHODS) + ("__rsub__", "__rtruediv__", "__rdiv__"),
        "Tensor.add / sub / mul / div (float)")
def binary_method(cx, node, name):
    a, b = node.args[0], arg(node, 1, "other")
    if name in ("__rsub__", "__rtruediv__", "__rdiv__"):
        return binary(cx, node, "sub" if name == "__rsub__" else "div", b, a)
    binary(cx, node, _METHODS[name], a, b)


def _matmul(cx, node, a, b):
    require_float(cx, node, "matmul", a, b)
    if not (is_tensor(cx, a) and is_tensor(cx, b)) or a.op == "get_attr" or \
            b.op == "get_attr":
        cx.unsupported(node, "matmul with a constant operand (use nn.Linear / F.linear)")
    cx.emit("float_matmul", node, [a, b])


@function(lambda: (_torch().matmul, operator.matmul, _torch().bmm, _torch().mm),
          "float matmul (torch.matmul, @, torch.bmm, torch.mm)")
def matmul_fn(cx, node, target):
    _matmul(cx, node, arg(node, 0, "input"), arg(node, 1, "other"))


@method(("matmul", "bmm", "mm"), "Tensor.matmul / bmm / mm (float)")
def matmul_method(cx, node, name):
    _matmul(cx, node, node.args[0], arg(node, 1, "other"))

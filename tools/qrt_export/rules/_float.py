# SPDX-License-Identifier: Apache-2.0
"""Helpers of the float-section rules (rules/float_*.py): argument parsing, the float/quantized
check, constant parameters (module weights, get_attr operands)."""

from __future__ import annotations

import numpy as np

def arg(node, i, name, default=None):
    """Argument ``name`` (position ``i``) of a call node, or ``default``."""
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(name, default)


def is_node(a) -> bool:
    return hasattr(a, "op") and hasattr(a, "name")


def is_tensor(cx, a) -> bool:
    import torch
    return is_node(a) and isinstance(cx.value(a), torch.Tensor)


def require_float(cx, node, what, *xs):
    """Refuse (UnsupportedError naming the source line) a float op applied to a quantized
    tensor: torch runs some of these on quantized tensors, qrt only on float ones."""
    for x in xs:
        if cx.is_quantized(x):  # another rule (a quantized op, a table) may take it
            from qrt_export.rules import Decline
            raise Decline(f"{what} on a quantized tensor: qrt runs {what} on float tensors "
                          "here (dequantize before it)")
        if is_node(x):
            v = cx.value(x)
            if getattr(v, "dtype", None) is not None and str(v.dtype) != "torch.float32":
                cx.unsupported(node, f"{what} on a {v.dtype} tensor (float32 only)")


def array(t) -> np.ndarray:
    return np.ascontiguousarray(t.detach().cpu().numpy(), dtype=np.float32)


def param(cx, node, a, label):
    """A constant float parameter: a module tensor, a get_attr node or None (absent)."""
    import torch
    if a is None:
        return None
    if is_node(a):
        if a.op != "get_attr":
            cx.unsupported(node, f"{label} computed inside the graph (qrt takes a constant "
                           f"{label} here)")
        a = cx.value(a)
    if not isinstance(a, torch.Tensor):
        cx.unsupported(node, f"{label} of type {type(a).__name__}")
    if a.is_quantized or a.dtype != torch.float32:
        cx.unsupported(node, f"{label} of dtype {a.dtype} (float32 only)")
    return cx.constant(f"{node.name}.{label}", array(a))


def scalar(cx, node, a, label):
    """A Python number argument as a float (a node yielding one is refused: qrt does not
    compute scalars from shapes here)."""
    if is_node(a) or isinstance(a, bool) or not isinstance(a, (int, float)):
        cx.unsupported(node, f"{label} of type {type(cx.value(a)).__name__} (a Python number "
                       "is expected)")
    return float(a)


def softmax_dim(cx, node, x, dim):
    if dim is None:  # torch's legacy implicit dim
        nd = cx.value(x).dim()
        return 0 if nd in (0, 1, 3) else 1
    return int(dim)

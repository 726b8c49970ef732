# SPDX-License-Identifier: Apache-2.0
"""Shared pieces of the float32 ops (float sections, docs/float-ops.md): dtype checks,
broadcast shapes, and the quiet call wrapper.

Every float op computes in numpy float32 on the plan's fixed buffers (``out=``, scratch made
once per plan in ``bind``). NaN/inf propagate as IEEE arithmetic does, as in torch; numpy's
floating-point warnings (overflow in exp, division by zero...) are silenced for the call,
since torch does not warn either.
"""

from __future__ import annotations

import numpy as np

from qrt.ops._core import OpDef, ShapeError

F32 = np.float32
__all__ = ["F32", "FloatOp", "broadcast", "quiet", "channel_shape"]


def quiet(fn):
    """``fn(*args)`` with numpy's floating-point warnings off (torch does not warn)."""
    def run(*args):
        with np.errstate(all="ignore"):
            fn(*args)
    run.__name__ = getattr(fn, "__name__", "run")
    return run


def broadcast(*shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ShapeError(f"shapes {[tuple(s) for s in shapes]} do not broadcast") from None


def channel_shape(ndim: int, c: int) -> tuple:
    """Shape that broadcasts a per-channel (dim 1) vector of length ``c`` over ndim dims."""
    return (c,) + (1,) * (ndim - 2) if ndim >= 2 else (c,)


class FloatOp(OpDef):
    """A float32 op: every activation operand and every parameter is float32."""

    def validate(self, node):
        for t in list(node.inputs) + list(node.outputs):
            if t.dtype != "float32":
                raise node.fail(f"takes and returns float32 tensors, {t.name} is {t.dtype}")
        self.check(node)

    def check(self, node):
        """Op-specific load-time checks (attributes against params)."""

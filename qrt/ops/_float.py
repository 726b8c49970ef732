# SPDX-License-Identifier: Apache-2.0
"""Shared pieces of the float32 ops (float sections, docs/float-ops.md): dtype checks,
broadcast shapes, and the quiet call wrapper.

Every float op computes in numpy float32 on the plan's fixed buffers (``out=``, scratch made
once per plan in ``bind``). NaN/inf propagate as IEEE arithmetic does, as in torch. numpy's
floating-point RuntimeWarnings (overflow in exp, division by zero...) raised inside these
modules are filtered out, since torch does not warn either: a warnings filter scoped to the
float op modules, not ``np.errstate`` per call (that costs ~2 us per op, more than most
batch-1 float ops take). Bound calls therefore run in Python frames of these modules: a
closure of the op's module, or :func:`quiet` around a bare ufunc.
"""

from __future__ import annotations

import warnings

import numpy as np

from qrt.ops._core import OpDef, ShapeError

F32 = np.float32
__all__ = ["F32", "FloatOp", "broadcast", "quiet", "channel_shape"]


_FILTER_ARGS = dict(action="ignore", message=r".* encountered in ", category=RuntimeWarning,
                    module=r"qrt\.ops\.(_float|float_[a-z]+)$")


def ensure_quiet():
    """Install the scoped filter if it is not in ``warnings.filters`` (a ``catch_warnings``
    around the import, e.g. pytest's around collection, drops it on exit): at import and at
    every float op's load."""
    for f in warnings.filters:
        if f[0] == "ignore" and f[2] is RuntimeWarning and f[3] is not None and \
                f[3].pattern == _FILTER_ARGS["module"]:
            return
    warnings.filterwarnings(**_FILTER_ARGS)


ensure_quiet()


def quiet(fn):
    """``fn(*args)`` called from a frame of this module, where numpy's floating-point
    RuntimeWarnings are filtered out (for bare ufuncs; op closures live in float_*.py)."""
    def run(*args):
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
        ensure_quiet()
        for t in list(node.inputs) + list(node.outputs):
            if t.dtype != "float32":
                raise node.fail(f"takes and returns float32 tensors, {t.name} is {t.dtype}")
        self.check(node)

    def check(self, node):
        """Op-specific load-time checks (attributes against params)."""

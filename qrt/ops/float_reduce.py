# SPDX-License-Identifier: Apache-2.0
"""Float32 reductions of float sections (codes 70..73, docs/float-ops.md): softmax and
log_softmax over one dim, mean and sum over dims.

softmax follows torch: m = max(x), e = exp(x - m), y = e / sum(e); log_softmax:
y = x - m - log(sum(exp(x - m))). Sums are numpy's float32 pairwise sums (torch uses a
cascade sum): both are within the summation bound of docs/float-ops.md. softmax over the last
dim of contiguous tensors runs in C (include/qrt/float_softmax.h: qrt's float32 exp, 16
partial sums in a fixed order), within the same bound.
"""

from __future__ import annotations

import numpy as np

from qrt.ops._core import Bool, Int, Ints, ShapeError, define
from qrt.ops._float import FloatOp, quiet

# the ufunc reductions themselves (np.max / np.sum add ~1 us of Python per call)
_max, _sum = np.maximum.reduce, np.add.reduce


def _axis(d, nd):
    if nd == 0:
        if d not in (0, -1):
            raise ShapeError(f"dim {d} is out of range for a 0-d tensor")
        return None
    if not -nd <= d < nd:
        raise ShapeError(f"dim {d} is out of range for {nd}-d input")
    return d % nd


class _Softmax(FloatOp):
    attrs = {"dim": Int(-6, 5)}

    def infer(self, node, shapes):
        _axis(node.attrs["dim"], len(shapes[0]))
        return [tuple(shapes[0])]

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        ax = _axis(node.attrs["dim"], x.ndim)
        if ax is None:           # 0-d: one element
            x, y, ax = x.reshape(1), y.reshape(1), 0
        red = list(x.shape)
        red[ax] = 1
        m = np.empty(red, np.float32)
        s = np.empty(red, np.float32)
        return self.kernel(x, y, ax, m, s), (), {}


def _exp_sum(x, y, ax, m, s):
    """The shared first pass of softmax and log_softmax: m = max, y = exp(x - m), s = sum y."""
    _max(x, axis=ax, keepdims=True, out=m)
    np.subtract(x, m, out=y)
    np.exp(y, out=y)
    _sum(y, axis=ax, keepdims=True, out=s)


@define
class Softmax(_Softmax):
    name, code = "float_softmax", 70
    doc = "float32 softmax over dim (nn.Softmax, F.softmax, Tensor.softmax)"

    @staticmethod
    def kernel(x, y, ax, m, s):
        if ax == x.ndim - 1 and x.size and x.flags.c_contiguous and y.flags.c_contiguous:
            from qrt import _ops
            x2, y2 = x.reshape(-1, x.shape[-1]), y.reshape(-1, x.shape[-1])
            return lambda: _ops.softmax_rows_f32(x2, y2)

        def run():
            _exp_sum(x, y, ax, m, s)
            np.divide(y, s, out=y)
        return run


@define
class LogSoftmax(_Softmax):
    name, code = "float_log_softmax", 71
    doc = "float32 log_softmax over dim (nn.LogSoftmax, F.log_softmax, Tensor.log_softmax)"

    @staticmethod
    def kernel(x, y, ax, m, s):
        def run():
            _exp_sum(x, y, ax, m, s)
            np.log(s, out=s)
            np.add(s, m, out=s)
            np.subtract(x, s, out=y)
        return run


class _Reduce(FloatOp):
    attrs = {"dims": Ints(lo=-6, hi=5, default=[]), "keepdim": Bool(default=False)}

    def _axes(self, node, nd):
        dims = node.attrs["dims"]
        if not dims:
            return tuple(range(nd))
        axes = []
        for d in dims:
            a = _axis(d, nd)
            if a is None:
                return ()
            if a in axes:
                raise ShapeError(f"dim {d} is repeated in {dims}")
            axes.append(a)
        return tuple(sorted(axes))

    def infer(self, node, shapes):
        s = tuple(shapes[0])
        axes = self._axes(node, len(s))
        if node.attrs["keepdim"]:
            return [tuple(1 if i in axes else d for i, d in enumerate(s))]
        return [tuple(d for i, d in enumerate(s) if i not in axes)]

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        axes = self._axes(node, x.ndim)
        if not axes:
            return quiet(np.copyto), (y, x), {}
        return self.kernel(x, y, axes, node.attrs["keepdim"]), (), {}


@define
class Mean(_Reduce):
    name, code = "float_mean", 72
    doc = "float32 mean over dims (torch.mean, Tensor.mean; keepdim)"

    @staticmethod
    def kernel(x, y, axes, keep):
        n = 1
        for a in axes:
            n *= x.shape[a]
        inv = np.float32(1.0 / n) if n else np.float32(np.nan)

        def run():   # torch: sum * (1 / n)
            _sum(x, axis=axes, keepdims=keep, out=y)
            np.multiply(y, inv, out=y)
        return run


@define
class Sum(_Reduce):
    name, code = "float_sum", 73
    doc = "float32 sum over dims (torch.sum, Tensor.sum; keepdim)"

    @staticmethod
    def kernel(x, y, axes, keep):
        def run():
            _sum(x, axis=axes, keepdims=keep, out=y)
        return run

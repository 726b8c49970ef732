# SPDX-License-Identifier: Apache-2.0
"""Float32 binary ops of float sections (codes 60..64, docs/float-ops.md): add, sub, mul, div
with numpy (= torch) broadcasting, against a tensor, a constant or a scalar; and matmul.

add/sub/mul/div are one IEEE operation per element, as in torch: bit-identical results. The
scalar is rounded to float32 first (torch does the same with a Python number and a float32
tensor). ``reverse`` computes ``other op x`` (``2 - x``, ``1 / x``).
"""

from __future__ import annotations

import numpy as np

from qrt.ops._core import Bool, Float, Param, ShapeError, define
from qrt.ops._float import F32, FloatOp, broadcast, quiet


class _Binary(FloatOp):
    inputs = (1, 2)
    params = (Param("other", "float32", optional=True),)
    attrs = {"scalar": Float(default=0.0), "reverse": Bool(default=False)}
    ufunc = None

    def check(self, node):
        if len(node.inputs) == 2 and "other" in node.params:
            raise node.fail("takes a second input or a constant 'other', not both")

    def _other_shape(self, node, shapes):
        if len(shapes) == 2:
            return tuple(shapes[1])
        if "other" in node.params:
            return tuple(node.params["other"].shape)
        return ()

    def infer(self, node, shapes):
        return [broadcast(shapes[0], self._other_shape(node, shapes))]

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        if len(ins) == 2:
            o = ins[1]
        elif "other" in node.params:
            o = np.asarray(node.array("other"), F32)
        else:
            o = F32(node.attrs["scalar"])
        if node.attrs["reverse"] and self.ufunc is np.divide and np.ndim(o) == 0:
            # torch's ``s / x`` (Tensor.__rtruediv__) is ``x.reciprocal() * s``
            def run():
                np.reciprocal(x, out=y)
                np.multiply(y, o, out=y)
            return run, (), {}
        a, b = (o, x) if node.attrs["reverse"] else (x, o)
        return quiet(self.ufunc), (a, b, y), {}


@define
class FAdd(_Binary):
    name, code = "float_add", 60
    doc = "float32 add (operator.add, torch.add, Tensor.add on float tensors; broadcasting)"
    ufunc = np.add


@define
class FSub(_Binary):
    name, code = "float_sub", 61
    doc = "float32 sub (operator.sub, torch.sub, rsub)"
    ufunc = np.subtract


@define
class FMul(_Binary):
    name, code = "float_mul", 62
    doc = "float32 mul (operator.mul, torch.mul, Tensor.mul on float tensors)"
    ufunc = np.multiply


@define
class FDiv(_Binary):
    name, code = "float_div", 63
    doc = "float32 true division (operator.truediv, torch.div, Tensor.div)"
    ufunc = np.divide


def matmul_shape(a, b):
    """torch.matmul's (= numpy's) result shape."""
    a, b = tuple(a), tuple(b)
    if not a or not b:
        raise ShapeError("matmul takes tensors of at least 1 dimension")
    A = (1,) + a if len(a) == 1 else a
    B = b + (1,) if len(b) == 1 else b
    if A[-1] != B[-2]:
        raise ShapeError(f"matmul: shapes {a} and {b} do not match ({A[-1]} != {B[-2]})")
    out = broadcast(A[:-2], B[:-2]) + (A[-2], B[-1])
    if len(b) == 1:
        out = out[:-1]
    if len(a) == 1:
        out = out[:-2] + out[-1:] if len(b) > 1 else out[:-1]
    return out


@define
class Matmul(FloatOp):
    name, code = "float_matmul", 64
    inputs = (2, 2)
    doc = "float32 matmul (torch.matmul, operator.matmul, Tensor.matmul, torch.bmm)"

    def infer(self, node, shapes):
        return [matmul_shape(shapes[0], shapes[1])]

    def macs(self, node, shapes):
        a, b = tuple(shapes[0]), tuple(shapes[1])
        out = matmul_shape(a, b)
        n = 1
        for d in out:
            n *= int(d)
        return n * int(a[-1])

    def bind(self, node, ins, outs):
        return quiet(np.matmul), (ins[0], ins[1], outs[0]), {}

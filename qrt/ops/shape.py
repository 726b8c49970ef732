# SPDX-License-Identifier: Apache-2.0
"""Shape ops: cat (requantizing), and the views flatten, reshape, identity (no kernel)."""

from __future__ import annotations

from qrt.ops._core import Int, OpDef, ShapeError, define, legacy_kwargs, numel


@define
class Cat(OpDef):
    name, code = "cat", 16
    inputs = (1, None)
    doc = "cat / concat / quantized.cat along one dim (inputs requantized to the output's)"
    attrs = {"dim": Int(-6, 5, default=0)}

    def upgrade(self, node, attrs, params, version):
        return legacy_kwargs(node, attrs, out_qparams=True), {}

    def validate(self, node):
        y = node.outputs[0]
        if y.dtype == "float32":   # float sections (e.g. pt2e float regions): a plain copy
            for x in node.inputs:
                if x.dtype != "float32":
                    raise node.fail("a float32 cat takes float32 tensors only")
            return
        for x in node.inputs:
            if x.dtype != y.dtype or x.dtype not in ("quint8", "qint8", "qint32") or \
                    x.qscheme != "per_tensor_affine" or y.qscheme != "per_tensor_affine":
                raise node.fail("concatenates per-tensor quint8/qint8/qint32 tensors of the "
                                "output's dtype")

    def infer(self, node, shapes):
        s0 = tuple(shapes[0])
        nd = len(s0)
        d = node.attrs["dim"]
        if not -nd <= d < nd:
            raise ShapeError(f"dim {d} is out of range for {nd}-d inputs")
        d %= nd
        for s in shapes[1:]:
            if len(s) != nd or tuple(s[:d]) + tuple(s[d + 1:]) != s0[:d] + s0[d + 1:]:
                raise ShapeError(f"input shapes {[tuple(x) for x in shapes]} differ outside "
                                 f"dim {d}")
        out = list(s0)
        out[d] = sum(int(s[d]) for s in shapes)
        return [tuple(out)]

    def bind(self, node, ins, outs):
        import qrt.functional as F
        y = node.outputs[0]
        if y.dtype == "float32":
            import numpy as np
            return np.concatenate, (list(ins),), {"axis": node.attrs["dim"], "out": outs[0]}
        return F.cat, (list(ins),), {"dim": node.attrs["dim"], "scale": y.scale,
                                     "zero_point": y.zero_point, "out": outs[0]}

    def prepare_cuda(self, node, dev):
        for x in node.inputs:
            dev.require_q(node, x, ("quint8", "qint8"))
        return True

    def bind_cuda(self, node, ins, outs, dev):
        y = node.outputs[0]
        return lambda: dev.functional.cat(list(ins), dim=node.attrs["dim"], scale=y.scale,
                                          zero_point=y.zero_point, out=outs[0])


class _View(OpDef):
    """The output is a view of the input (same dtype and qparams); no kernel runs."""

    alias = True
    since = (1, 0)

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype != y.dtype or (x.scale, x.zero_point) != (y.scale, y.zero_point):
            raise node.fail(f"a view cannot change {x.dtype} into {y.dtype} (or its qparams)")
        if numel(x.shape) != numel(y.shape):
            raise node.fail(f"cannot view {x.shape} as {y.shape}")

    def bind(self, node, ins, outs):
        return None

    def prepare_cuda(self, node, dev):
        return True

    def bind_cuda(self, node, ins, outs, dev):
        return None


@define
class Flatten(_View):
    name, code = "flatten", 17
    doc = "flatten (nn.Flatten, torch.flatten, Tensor.flatten)"
    attrs = {"start_dim": Int(-6, 5, default=None, nullable=True),
             "end_dim": Int(-6, 5, default=-1)}

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        s = node.attrs["start_dim"]
        if s is None:  # files before 1.2: the stored output shape tells the flattened dims
            s = len(node.outputs[0].shape) - 1
        e = node.attrs["end_dim"]
        nd = max(len(x), 1)
        if not (-nd <= s < nd and -nd <= e < nd) or s % nd > e % nd:
            raise ShapeError(f"cannot flatten dims {s}..{e} of a {len(x)}-d input")
        if not x:
            return [(1,)]
        s, e = s % nd, e % nd
        return [x[:s] + (numel(x[s:e + 1]),) + x[e + 1:]]


@define
class Reshape(_View):
    name, code = "reshape", 18
    doc = "reshape / view (the exported shape; a batched tensor keeps the input's batch)"

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        y = node.outputs[0]
        out = tuple(y.shape)
        if y.batched and x and node.inputs[0].batched:
            rest = numel(out[1:])
            if rest == 0 or numel(x) % rest:
                raise ShapeError(f"cannot view {x} as (N,) + {out[1:]}")
            out = (numel(x) // rest,) + out[1:]
        if numel(out) != numel(x):
            raise ShapeError(f"cannot view {x} as {out}")
        return [out]


@define
class Identity(_View):
    name, code = "identity", 19
    doc = "identity, dropout (eval), contiguous, detach"

# SPDX-License-Identifier: Apache-2.0
"""Layout ops on quantized (quint8/qint8/qint32) and float32 tensors: pad, permute, slice,
split, unsqueeze, squeeze, view.

Every one copies (or views) codes unchanged: the output has the input's dtype and qparams, so
the result is exact by construction. Shapes follow the input's at run time (a slice ``:-k``
stays relative to the end, a permute permutes whatever shape comes, a view's ``-1`` and the
dims copied from the input are recomputed). Kernels are numpy on the plan's fixed buffers,
bound once: no call allocates.
"""

from __future__ import annotations

import numpy as np

from qrt.ops.shape import _View
from qrt.ops._core import (INT_MAX, Choice, Float, Int, Ints, OpDef, ShapeError, define,
                           numel, same_qparams)

_DTYPES = ("quint8", "qint8", "qint32", "float32")
_BIG = 1 << 30
SLICE_END = INT_MAX   # a slice stop meaning "to the end"


def _arr(v):
    """The writable numpy array behind a plan view (a QTensor's codes, or the ndarray)."""
    return v if isinstance(v, np.ndarray) else v.int_repr()


def _check_same(node, what):
    x = node.inputs[0]
    if x.dtype not in _DTYPES or x.qscheme == "per_channel_affine":
        raise node.fail(f"{what} takes per-tensor quint8/qint8/qint32 or float32 tensors, not "
                        f"{x.dtype}")
    for y in node.outputs:
        same_qparams(node, x, y, what)


def _dim(d, nd, what="dim"):
    if not -nd <= d < nd:
        raise ShapeError(f"{what} {d} is out of range for a {nd}-d input")
    return d % nd


class _Copy(OpDef):
    """Output = a rearrangement of the input's codes (same dtype and qparams)."""

    def validate(self, node):
        _check_same(node, self.name)


# ---- pad ---------------------------------------------------------------------------------------
def pad_index(L, left, right, mode):
    """Input index of each output position of a last-dim pad ([L + left + right] intp, the
    index type np.take(out=...) accepts on 32-bit platforms too; -1 where a constant pad writes
    its value). Negative padding crops, as torch's F.pad."""
    j = np.arange(L + left + right, dtype=np.intp) - left
    if mode == "constant":
        return np.where((j >= 0) & (j < L), j, -1)
    if mode == "reflect":
        j = np.abs(j)
        return np.where(j >= L, 2 * (L - 1) - j, j)
    if mode == "replicate":
        return np.clip(j, 0, L - 1)
    # circular: torch crops first, then wraps around what is left
    c0, lc = max(-left, 0), L + min(left, 0) + min(right, 0)
    return c0 + np.mod(np.arange(L + left + right, dtype=np.intp) - max(left, 0), lc)


def _pad_dim(L, left, right, mode, what):
    """Output size of one padded dim (ShapeError where torch's F.pad refuses)."""
    lo = L + left + right
    if lo < 1:
        raise ShapeError(f"padding {left, right} of a {what} of size {L} leaves {lo} outputs")
    if mode == "reflect" and not (max(left, right) < L):
        raise ShapeError(f"reflect padding {left, right} must be smaller than the {what} "
                         f"size {L}")
    lc = L + min(left, 0) + min(right, 0)
    if mode == "circular" and not (max(left, right) <= lc and lc >= 1):
        raise ShapeError(f"circular padding {left, right} must be at most the (cropped) "
                         f"{what} size {lc}")
    if mode == "replicate" and L < 1:
        raise ShapeError("replicate padding needs a non-empty input")
    return lo


@define
class Pad(_Copy):
    name, code = "pad", 21
    doc = ("F.pad over the last dim or the last two (constant, reflect, replicate, circular; "
           "negative = crop) and the padding of a quantized Conv1d / Conv2d with "
           "padding_mode != 'zeros'")
    attrs = {"pads": Ints(None, -_BIG, _BIG, min_len=2, max_len=4,
                          doc="[left, right] of the last dim, then [top, bottom] of the one "
                              "before (F.pad's order); 2 or 4 values"),
             "mode": Choice("constant", "reflect", "replicate", "circular",
                            default="constant"),
             "value": Float(default=0.0, doc="constant mode: the value (float32 tensors)"),
             "code": Int(-(1 << 31), INT_MAX, default=None, nullable=True,
                         doc="constant mode on a quantized tensor: the code written (torch's "
                             "quantization of value with the tensor's qparams)")}

    def validate(self, node):
        super().validate(node)
        x, a = node.inputs[0], node.attrs
        if len(a["pads"]) not in (2, 4):
            raise node.fail(f"attribute 'pads' must hold 2 or 4 integers, got "
                            f"{len(a['pads'])}", "R25")
        if a["mode"] == "constant" and x.dtype != "float32":
            lo, hi = {"quint8": (0, 255), "qint8": (-128, 127)}.get(
                x.dtype, (-(1 << 31), INT_MAX))
            c = self.fill_code(node)
            if not lo <= c <= hi:
                raise node.fail(f"attribute 'code' {c} is outside the {x.dtype} range", "R25")

    @staticmethod
    def fill_code(node):
        x, a = node.inputs[0], node.attrs
        if a["code"] is not None:
            return a["code"]
        lo, hi = {"quint8": (0, 255), "qint8": (-128, 127)}.get(x.dtype, (-(1 << 31), INT_MAX))
        return int(min(max(x.zero_point + int(np.rint(a["value"] / x.scale)), lo), hi))

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        pads = node.attrs["pads"]
        nd = len(pads) // 2
        if len(x) < nd:
            raise ShapeError(f"cannot pad the last {nd} dims of a {len(x)}-d tensor")
        mode = node.attrs["mode"]
        out = list(x)
        for k in range(nd):  # k = 0: the last dim
            out[-1 - k] = _pad_dim(x[-1 - k], pads[2 * k], pads[2 * k + 1], mode,
                                   "last dim" if k == 0 else "second-last dim")
        return [tuple(out)]

    def bind(self, node, ins, outs):
        x, y = _arr(ins[0]), _arr(outs[0])
        pads = node.attrs["pads"]
        nd = len(pads) // 2
        mode = node.attrs["mode"]
        if mode == "constant":
            v = np.float32(node.attrs["value"]) if x.dtype == np.float32 else \
                y.dtype.type(self.fill_code(node))
            dst, src = [Ellipsis], [Ellipsis]
            for k in range(nd):   # the output interior and the input part it shows
                left, right = pads[2 * k], pads[2 * k + 1]
                lo = y.shape[-1 - k]
                s0, s1 = max(left, 0), lo - max(right, 0)
                i0 = max(-left, 0)
                dst.insert(1, slice(s0, s1))
                src.insert(1, slice(i0, i0 + (s1 - s0)))
            d, sv = y[tuple(dst)], x[tuple(src)]

            def run():
                y.fill(v)
                np.copyto(d, sv)
            return run, (), {}
        idx_w = pad_index(x.shape[-1], pads[0], pads[1], mode)
        if nd == 1:
            return np.take, (x, idx_w), {"axis": -1, "out": y, "mode": "clip"}
        idx_h = pad_index(x.shape[-2], pads[2], pads[3], mode)
        tmp = np.empty(x.shape[:-1] + (y.shape[-1],), x.dtype)

        def run2():
            np.take(x, idx_w, axis=-1, out=tmp, mode="clip")
            np.take(tmp, idx_h, axis=-2, out=y, mode="clip")
        return run2, (), {}


# ---- permute -----------------------------------------------------------------------------------
@define
class Permute(_Copy):
    name, code = "permute", 22
    doc = "permute / transpose / Tensor.T / swapaxes (a copy into contiguous order)"
    attrs = {"dims": Ints(None, 0, 5, min_len=1)}

    def validate(self, node):
        super().validate(node)
        d = node.attrs["dims"]
        if sorted(d) != list(range(len(d))):
            raise node.fail(f"attribute 'dims' {d} is not a permutation", "R25")

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        d = node.attrs["dims"]
        if len(x) != len(d):
            raise ShapeError(f"permutation {d} needs a {len(d)}-d input, got {x}")
        return [tuple(x[i] for i in d)]

    def bind(self, node, ins, outs):
        x, y = _arr(ins[0]), _arr(outs[0])
        fast = permute_as_transpose(x, node.attrs["dims"], y)
        if fast is not None:
            return fast
        return np.copyto, (y, x.transpose(node.attrs["dims"])), {}


def permute_as_transpose(x, dims, y):
    """``(fn, args, kwargs)`` copying ``x.transpose(dims)`` into the contiguous ``y`` with the
    batched 2-d transpose kernel (include/qrt/transpose.h) when the permutation, its adjacent
    dimensions merged, is one: [A][B] <- [B][A] or [N][A][B] <- [N][B][A], with the input
    innermost dimension moving (NCHW -> NHWC and back).  None otherwise: numpy's strided copy
    (which reads one element per source cache line there, 0.4 ns a byte)."""
    from qrt import _ops
    esize = x.dtype.itemsize
    if esize not in (1, 2, 4) or not x.flags.c_contiguous or not y.flags.c_contiguous or \
            x.size < 64:
        return None
    v = x.transpose(dims)
    shape, strides = [], []
    for n, st in zip(v.shape, v.strides):   # output order; drop size-1, merge adjacent runs
        if n == 1:
            continue
        if shape and strides[-1] == st * n:
            shape[-1] *= n
            strides[-1] = st
        else:
            shape.append(n)
            strides.append(st)
    if len(shape) == 2 and strides[0] == esize:
        batch, bs = 1, 0
    elif len(shape) == 3 and strides[1] == esize:
        batch, bs = shape[0], strides[0] // esize
        shape, strides = shape[1:], strides[1:]
    else:
        return None
    cols, rows, rs = shape[0], shape[1], strides[1] // esize  # y[b][c][r] = x[b][r][c]
    src = x.reshape(-1).view(np.uint8)
    dst = y.reshape(-1).view(np.uint8)
    return _ops.transpose2d, (src, dst, esize, batch, rows, cols, bs, rs), {}


# ---- slice -------------------------------------------------------------------------------------
def _slices(node, x):
    """numpy index tuple of a slice node for input shape ``x`` (ShapeError when it refuses)."""
    a = node.attrs
    nd = len(x)
    idx = [slice(None)] * nd
    for d, st, sp, sk in zip(a["dims"], a["starts"], a["stops"], a["steps"]):
        d = _dim(d, nd)
        idx[d] = slice(st, None if sp == SLICE_END else sp, sk)
    for d, i in zip(a["index_dims"], a["indices"]):
        d = _dim(d, nd)
        L = x[d]
        if not -L <= i < L:
            raise ShapeError(f"index {i} is out of range for dim {d} of size {L}")
        idx[d] = i % L
    return tuple(idx)


@define
class Slice(_Copy):
    name, code = "slice", 23
    doc = ("getitem: x[:, :, :-k], x[..., a:b:s], x[:, i] (slices with steps >= 1, negative "
           "bounds relative to the end, integer indices drop the dim)")
    attrs = {"dims": Ints(None, -6, 5, default=[]),
             "starts": Ints(None, -INT_MAX, INT_MAX, default=[]),
             "stops": Ints(None, -INT_MAX, INT_MAX, default=[],
                           doc=f"{SLICE_END} = to the end"),
             "steps": Ints(None, 1, INT_MAX, default=[]),
             "index_dims": Ints(None, -6, 5, default=[]),
             "indices": Ints(None, -INT_MAX, INT_MAX, default=[])}

    def validate(self, node):
        super().validate(node)
        a = node.attrs
        if not len(a["dims"]) == len(a["starts"]) == len(a["stops"]) == len(a["steps"]) or \
                len(a["index_dims"]) != len(a["indices"]):
            raise node.fail("dims/starts/stops/steps (and index_dims/indices) must have equal "
                            "lengths", "R25")

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        idx = _slices(node, x)
        out = []
        for d, s in enumerate(idx):
            if isinstance(s, slice):
                out.append(len(range(*s.indices(x[d]))))
        return [tuple(out)]

    def bind(self, node, ins, outs):
        x = _arr(ins[0])
        return np.copyto, (_arr(outs[0]), x[_slices(node, x.shape)]), {}


# ---- split / chunk -----------------------------------------------------------------------------
@define
class Split(_Copy):
    name, code = "split", 24
    outputs = (1, None)
    doc = "chunk / split / tensor_split / unbind-free split along one dim (several outputs)"
    attrs = {"dim": Int(-6, 5, default=0),
             "chunks": Int(1, INT_MAX, default=None, nullable=True,
                           doc="torch.chunk: ceil(size / chunks) per piece"),
             "split_size": Int(1, INT_MAX, default=None, nullable=True,
                               doc="Tensor.split(int): pieces of this size, the last smaller"),
             "sizes": Ints(None, 0, INT_MAX, default=None, max_len=1 << 16,
                           doc="Tensor.split(list): the sizes (sum = the dim's size)")}

    def validate(self, node):
        super().validate(node)
        a = node.attrs
        if sum(a[k] is not None for k in ("chunks", "split_size", "sizes")) != 1:
            raise node.fail("exactly one of chunks, split_size, sizes", "R25")

    def sizes(self, node, n):
        a = node.attrs
        if a["sizes"] is not None:
            if sum(a["sizes"]) != n:
                raise ShapeError(f"split sizes {a['sizes']} do not add up to {n}")
            return list(a["sizes"])
        step = a["split_size"] if a["split_size"] is not None else -(-n // a["chunks"])
        if n == 0:
            return [0]
        return [min(step, n - i) for i in range(0, n, step)]

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        d = _dim(node.attrs["dim"], len(x))
        sz = self.sizes(node, x[d])
        k = len(node.outputs)
        if len(sz) != k:
            raise ShapeError(f"splitting size {x[d]} gives {len(sz)} pieces; the graph uses "
                             f"{k}")
        return [x[:d] + (s,) + x[d + 1:] for s in sz]

    def bind(self, node, ins, outs):
        x = _arr(ins[0])
        d = node.attrs["dim"] % x.ndim
        pairs, off = [], 0
        for o in outs:
            o = _arr(o)
            n = o.shape[d]
            pairs.append((o, x[(slice(None),) * d + (slice(off, off + n),)]))
            off += n

        def run():
            for dst, src in pairs:
                np.copyto(dst, src)
        return run, (), {}


# ---- views: unsqueeze, squeeze, view -----------------------------------------------------------
class _Alias(_View):
    """The output is a view of the input (contiguous in, contiguous out); no kernel runs."""

    since = (1, 2)   # (qrt.ops.shape's views are 1.0 ops; these arrived in 1.2)

    def validate(self, node):
        _check_same(node, self.name)


@define
class Unsqueeze(_Alias):
    name, code = "unsqueeze", 25
    doc = "unsqueeze / x[:, None]"
    attrs = {"dim": Int(-7, 6)}

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        d = _dim(node.attrs["dim"], len(x) + 1)
        return [x[:d] + (1,) + x[d:]]


@define
class Squeeze(_Alias):
    name, code = "squeeze", 26
    doc = "squeeze (all size-1 dims, or the given dims where they have size 1)"
    attrs = {"dims": Ints(None, -6, 5, default=None, max_len=6)}

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        dims = node.attrs["dims"]
        if dims is None:
            return [tuple(s for s in x if s != 1)]
        if not x:
            return [x]
        drop = {_dim(d, len(x)) for d in dims}
        return [tuple(s for i, s in enumerate(x) if not (i in drop and s == 1))]


@define
class View(_Alias):
    name, code = "view", 27
    doc = ("view / reshape with -1 and dims taken from the input (x.view(x.size(0), -1)): "
           "recomputed from the input shape at every shape")
    attrs = {"shape": Ints(None, -1, INT_MAX, max_len=6,
                           doc="the target shape; -1 = inferred"),
             "copy_dims": Ints(None, -1, 5, default=[], max_len=6,
                               doc="per target dim: the input dim whose size it takes, or -1")}

    def validate(self, node):
        super().validate(node)
        a = node.attrs
        if a["copy_dims"] and len(a["copy_dims"]) != len(a["shape"]):
            raise node.fail("copy_dims must be as long as shape", "R25")
        if sum(1 for i, s in enumerate(a["shape"]) if s == -1 and
               not (a["copy_dims"] and a["copy_dims"][i] >= 0)) > 1:
            raise node.fail("at most one -1 in shape", "R25")

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        a = node.attrs
        out = list(a["shape"])
        for i, c in enumerate(a["copy_dims"]):
            if c >= 0:
                if c >= len(x):
                    raise ShapeError(f"the view copies dim {c} of a {len(x)}-d input")
                out[i] = x[c]
        n = numel(x)
        if -1 in out:
            rest = numel(s for s in out if s != -1)
            if rest == 0 or n % rest:
                raise ShapeError(f"cannot view {x} as {tuple(a['shape'])}")
            out[out.index(-1)] = n // rest
        if numel(out) != n:
            raise ShapeError(f"cannot view {x} as {tuple(out)}")
        return [tuple(out)]

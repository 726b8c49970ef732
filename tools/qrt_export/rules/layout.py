# SPDX-License-Identifier: Apache-2.0
"""Rules for the layout ops (qrt/ops/layout.py), on quantized and float32 tensors: F.pad (and
the padding of a quantized Conv1d with padding_mode != 'zeros'), permute / transpose,
getitem slicing, chunk / split, unsqueeze / squeeze, view / reshape with -1."""

from __future__ import annotations

import copy
import operator

from qrt.ops.layout import SLICE_END
from qrt_export.rules import Decline, function, method, module


def _torch():
    import torch
    return torch


def _F():
    import torch.nn.functional as F
    return F


def _is_node(v):
    return hasattr(v, "op") and hasattr(v, "users")


def _arg(node, i, name, default=None):
    if name in node.kwargs:
        return node.kwargs[name]
    return node.args[i] if len(node.args) > i else default


def _ndim(cx, x):
    v = cx.value(x)
    if v is None or not hasattr(v, "dim"):
        raise Decline("its input is not a tensor")
    return v.dim()


def _int(cx, node, v, what):
    if _is_node(v) or isinstance(v, bool):
        cx.unsupported(node, f"{what} computed at run time ({v}); qrt needs a constant")
    try:
        return int(v)
    except (TypeError, ValueError):
        cx.unsupported(node, f"{what} {v!r} (an integer is needed)")


def _mid(cx, name, torch_fn, x):
    """An intermediate activation: torch_fn applied to x's recorded values (both batches)."""
    v = torch_fn(cx.value(x))
    v2 = None
    if cx.v2 is not None and x.name in cx.v2:
        try:
            v2 = torch_fn(cx.v2[x.name])
        except Exception:  # noqa: BLE001 - only used to tell the batch dim
            v2 = None
    return cx.new_tensor(name, v, v2), v


# ---- pad ---------------------------------------------------------------------------------------
_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_attrs(cx, node, x, pads, mode, value):
    import torch
    xv = cx.value(x)
    attrs = {"pads": [int(p) for p in pads], "mode": mode}
    if mode == "constant":
        value = 0.0 if value is None else float(value)
        attrs["value"] = value
        if xv.is_quantized:  # the code torch writes: F.pad of a one-element tensor
            one = torch._make_per_tensor_quantized_tensor(
                torch.zeros((1, 1, 1), dtype={torch.quint8: torch.uint8,
                                              torch.qint8: torch.int8,
                                              torch.qint32: torch.int32}[xv.dtype]),
                xv.q_scale(), xv.q_zero_point())
            one = torch.nn.functional.pad(one, (1, 0), mode="constant", value=value)
            attrs["code"] = int(one.int_repr()[0, 0, 0])
    return attrs


def refuse_conv_padding_modes(model):
    """UnsupportedError for a quantized conv whose padding_mode torch 2.13 cannot run (it
    takes 'zeros' and 'reflect'; its quantized F.pad has no replicate/circular kernel)."""
    import torch.ao.nn.quantized as nnq
    from qrt_export._export import UnsupportedError
    for name, m in model.named_modules():
        mode = getattr(m, "padding_mode", "zeros")
        if isinstance(m, (nnq.Conv1d, nnq.Conv2d)) and mode not in ("zeros", "reflect"):
            raise UnsupportedError(
                f"module {name} ({type(m).__name__}): padding_mode={mode!r} on a quantized "
                "conv, which torch 2.13 cannot run (its quantized F.pad has no "
                f"{mode} kernel) and qrt does not guess; use 'zeros' or 'reflect', or keep "
                "the conv in float")


def conv_padding(cx, node, m, mode):
    """(padded input tensor, a copy of conv m with padding 0): torch 2.13's quantized conv with
    padding_mode != 'zeros' runs ``F.pad(x, [p, p], mode)`` then the conv with padding 0."""
    if isinstance(m.padding, str) or len(m.padding) != 1:
        cx.unsupported(node, f"quantized Conv1d with padding={m.padding!r} and "
                       f"padding_mode={mode!r}")
    if mode not in _MODES[1:]:
        cx.unsupported(node, f"quantized Conv1d with padding_mode={mode!r}")
    p = int(m.padding[0])
    x = node.args[0]
    m0 = copy.copy(m)
    m0.padding = (0,)
    if p == 0:
        return x, m0
    F = _F()
    try:
        t, _ = _mid(cx, f"{node.name}.pad", lambda v: F.pad(v, [p, p], mode=mode), x)
    except (RuntimeError, NotImplementedError) as e:
        cx.unsupported(node, f"quantized Conv1d with padding_mode={mode!r} (torch itself "
                       f"cannot pad this input: {str(e).splitlines()[0][:120]})")
    cx.emit("pad", node, [x], attrs=_pad_attrs(cx, node, x, (p, p), mode, None), outputs=[t])
    return t, m0


def conv2d_padding(cx, node, m, mode):
    """conv_padding for a quantized Conv2d: torch runs ``F.pad(x, [pw, pw, ph, ph], mode)``
    (``_reversed_padding_repeated_twice``) then the conv with padding 0."""
    if isinstance(m.padding, str) or len(m.padding) != 2:
        cx.unsupported(node, f"quantized Conv2d with padding={m.padding!r} and "
                       f"padding_mode={mode!r}")
    if mode != "reflect":
        cx.unsupported(node, f"quantized Conv2d with padding_mode={mode!r} (torch 2.13 runs "
                       "'zeros' and 'reflect' only)")
    ph, pw = int(m.padding[0]), int(m.padding[1])
    x = node.args[0]
    m0 = copy.copy(m)
    m0.padding = (0, 0)
    if (ph, pw) == (0, 0):
        return x, m0
    pads = [pw, pw, ph, ph]
    F = _F()
    try:
        t, _ = _mid(cx, f"{node.name}.pad", lambda v: F.pad(v, pads, mode=mode), x)
    except (RuntimeError, NotImplementedError) as e:
        cx.unsupported(node, f"quantized Conv2d with padding_mode={mode!r} (torch itself "
                       f"cannot pad this input: {str(e).splitlines()[0][:120]})")
    from qrt_export._export import _source
    # its own name: the export check compares an op with the torch value of its name's node
    cx.b.op("pad", f"{node.name}.pad", [cx.tensor(x)], [t], [],
            _pad_attrs(cx, node, x, pads, mode, None), _source(node, cx.gm))
    return t, m0


def float_conv_pad(cx, node, m):
    """(padded input tensor, 0): torch's float Conv1d with padding_mode != 'zeros' runs
    ``F.pad(x, m._reversed_padding_repeated_twice, mode)`` then the conv with padding 0; with
    'zeros' and padding='same' of an odd total, the extra zero goes on the right."""
    mode = "constant" if m.padding_mode == "zeros" else m.padding_mode  # zeros: 'same', odd
    if mode not in _MODES:
        cx.unsupported(node, f"float Conv1d with padding_mode={mode!r}")
    pads = [int(p) for p in m._reversed_padding_repeated_twice]
    x = node.args[0]
    if pads == [0, 0]:
        return x, 0
    F = _F()
    t, _ = _mid(cx, f"{node.name}.pad", lambda v: F.pad(v, pads, mode=mode), x)
    cx.emit("pad", node, [x], attrs=_pad_attrs(cx, node, x, pads, mode, None), outputs=[t])
    return t, 0


def _pad_fns():
    return (_F().pad, getattr(_torch()._C._nn, "pad", _F().pad))


@function(_pad_fns, "F.pad over the last dim or the last two (constant, reflect, replicate, "
          "circular; negative pads crop), quantized or float32")
def pad_fn(cx, node, target):
    x = node.args[0]
    pads = _arg(node, 1, "pad")
    mode = _arg(node, 2, "mode", "constant") or "constant"
    value = _arg(node, 3, "value", None)
    if _is_node(pads) or len(pads) not in (2, 4):
        cx.unsupported(node, f"F.pad with pad={pads!r} (qrt pads the last dim or the last "
                       "two: [left, right] or [left, right, top, bottom])")
    if mode not in _MODES:
        cx.unsupported(node, f"F.pad mode {mode!r}")
    pads = [_int(cx, node, p, "pad") for p in pads]
    cx.emit("pad", node, [x], attrs=_pad_attrs(cx, node, x, pads, mode, value))


@module(lambda: (_torch().nn.ConstantPad1d, _torch().nn.ReflectionPad1d,
                 _torch().nn.ReplicationPad1d, _torch().nn.CircularPad1d,
                 _torch().nn.ConstantPad2d, _torch().nn.ReflectionPad2d,
                 _torch().nn.ReplicationPad2d, _torch().nn.CircularPad2d),
        "nn.ConstantPad1d/2d (ZeroPad2d) / ReflectionPad1d/2d / ReplicationPad1d/2d / "
        "CircularPad1d/2d")
def pad_module(cx, node, m):
    nn = _torch().nn
    mode = ("constant" if isinstance(m, (nn.ConstantPad1d, nn.ConstantPad2d)) else
            "reflect" if isinstance(m, (nn.ReflectionPad1d, nn.ReflectionPad2d)) else
            "replicate" if isinstance(m, (nn.ReplicationPad1d, nn.ReplicationPad2d))
            else "circular")
    x = node.args[0]
    cx.emit("pad", node, [x], attrs=_pad_attrs(cx, node, x, tuple(m.padding), mode,
                                               getattr(m, "value", None)))


# ---- permute / transpose -------------------------------------------------------------------
def _permute(cx, node, x, dims):
    nd = _ndim(cx, x)
    dims = [_int(cx, node, d, "permute dim") % max(nd, 1) for d in dims]
    if sorted(dims) != list(range(nd)):
        cx.unsupported(node, f"permute dims {dims} of a {nd}-d tensor")
    if dims == list(range(nd)):
        cx.emit("identity", node, [x])
    else:
        cx.emit("permute", node, [x], attrs={"dims": dims})


def _transpose(cx, node, x, d0, d1):
    nd = _ndim(cx, x)
    d0, d1 = _int(cx, node, d0, "dim") % nd, _int(cx, node, d1, "dim") % nd
    dims = list(range(nd))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    _permute(cx, node, x, dims)


@method(("permute",), "Tensor.permute")
def permute_method(cx, node, name):
    dims = node.args[1:] or node.kwargs.get("dims", ())
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    _permute(cx, node, node.args[0], dims)


@function(lambda: (_torch().permute,), "torch.permute")
def permute_fn(cx, node, target):
    _permute(cx, node, node.args[0], _arg(node, 1, "dims"))


@method(("transpose", "swapaxes", "swapdims"), "Tensor.transpose / swapaxes")
def transpose_method(cx, node, name):
    _transpose(cx, node, node.args[0], _arg(node, 1, "dim0"), _arg(node, 2, "dim1"))


@function(lambda: (_torch().transpose, _torch().swapaxes, _torch().swapdims),
          "torch.transpose / swapaxes")
def transpose_fn(cx, node, target):
    _transpose(cx, node, node.args[0], _arg(node, 1, "dim0"), _arg(node, 2, "dim1"))


@method(("t",), "Tensor.t (2-d)")
def t_method(cx, node, name):
    _permute(cx, node, node.args[0], list(range(_ndim(cx, node.args[0])))[::-1])


# ---- getitem -----------------------------------------------------------------------------------
@function(lambda: (operator.getitem,), "getitem slicing: x[:, :, :-k], x[..., a:b:s], x[:, i], "
          "x[:, None]")
def getitem(cx, node, target):
    x, index = node.args[0], node.args[1]
    nd = _ndim(cx, x)
    items = list(index) if isinstance(index, tuple) else [index]
    if sum(i is Ellipsis for i in items) > 1:
        cx.unsupported(node, "an index with two ellipses")
    n_real = sum(1 for i in items if i is not None and i is not Ellipsis)
    if n_real > nd:
        cx.unsupported(node, f"index {index!r} of a {nd}-d tensor")
    expanded = []
    for i in items:
        if i is Ellipsis:
            expanded += [slice(None)] * (nd - n_real)
        else:
            expanded.append(i)
    while sum(1 for i in expanded if i is not None) < nd:
        expanded.append(slice(None))
    a = {"dims": [], "starts": [], "stops": [], "steps": [], "index_dims": [], "indices": []}
    new_axes = []            # output positions of None, in the final result
    d, out_pos = 0, 0
    torch_index = []         # the index without None (what the slice op computes)
    for i in expanded:
        if i is None:
            new_axes.append(out_pos)
            out_pos += 1
            continue
        if isinstance(i, slice):
            st = 0 if i.start is None else _int(cx, node, i.start, "slice start")
            sp = SLICE_END if i.stop is None else _int(cx, node, i.stop, "slice stop")
            sk = 1 if i.step is None else _int(cx, node, i.step, "slice step")
            if sk < 1:
                cx.unsupported(node, f"slice step {sk}")
            if (st, sp, sk) != (0, SLICE_END, 1):
                a["dims"].append(d)
                a["starts"].append(st)
                a["stops"].append(sp)
                a["steps"].append(sk)
            out_pos += 1
        elif _is_node(i) or not isinstance(i, int) or isinstance(i, bool):
            cx.unsupported(node, f"tensor index {i!r} (advanced indexing)")
        else:
            a["index_dims"].append(d)
            a["indices"].append(int(i))
        torch_index.append(i)
        d += 1
    sliced = bool(a["dims"] or a["index_dims"])
    if not new_axes:
        cx.emit("slice" if sliced else "identity", node, [x], attrs=a if sliced else None)
        return
    cur, cur_val = x, cx.value(x)
    if sliced:
        t, cur_val = _mid(cx, f"{node.name}.slice", lambda v: v[tuple(torch_index)], x)
        cx.emit("slice", node, [x], attrs=a, outputs=[t])
        cur = t
    for k, pos in enumerate(new_axes):
        last = k == len(new_axes) - 1
        if last:
            cx.emit("unsqueeze", node, [cur], attrs={"dim": pos})
        else:
            cur_val = cur_val.unsqueeze(pos)
            t = cx.new_tensor(f"{node.name}.unsqueeze{k}", cur_val)
            cx.emit("unsqueeze", node, [cur], attrs={"dim": pos}, outputs=[t])
            cur = t


@method(("narrow",), "Tensor.narrow")
def narrow_method(cx, node, name):
    x = node.args[0]
    nd = _ndim(cx, x)
    d = _int(cx, node, _arg(node, 1, "dim"), "dim") % nd
    st = _int(cx, node, _arg(node, 2, "start"), "start")
    ln = _int(cx, node, _arg(node, 3, "length"), "length")
    if st < 0:
        cx.unsupported(node, "narrow with a negative start")
    cx.emit("slice", node, [x], attrs={"dims": [d], "starts": [st], "stops": [st + ln],
                                       "steps": [1]})


# ---- chunk / split -----------------------------------------------------------------------------
def _split(cx, node, x, dim, attrs):
    nd = _ndim(cx, x)
    attrs = dict(attrs, dim=_int(cx, node, dim, "dim") % nd)
    cx.emit_multi("split", node, [x], attrs=attrs)


@method(("chunk",), "Tensor.chunk")
def chunk_method(cx, node, name):
    _split(cx, node, node.args[0], _arg(node, 2, "dim", 0),
           {"chunks": _int(cx, node, _arg(node, 1, "chunks"), "chunks")})


@function(lambda: (_torch().chunk,), "torch.chunk")
def chunk_fn(cx, node, target):
    chunk_method(cx, node, "chunk")


def _split_sizes(cx, node, s):
    if isinstance(s, (tuple, list)):
        return {"sizes": [_int(cx, node, v, "split size") for v in s]}
    return {"split_size": _int(cx, node, s, "split size")}


@method(("split",), "Tensor.split")
def split_method(cx, node, name):
    s = _arg(node, 1, "split_size", None)
    if s is None:
        s = node.kwargs.get("split_size_or_sections")
    _split(cx, node, node.args[0], _arg(node, 2, "dim", 0), _split_sizes(cx, node, s))


@function(lambda: (_torch().split,), "torch.split")
def split_fn(cx, node, target):
    s = _arg(node, 1, "split_size_or_sections")
    _split(cx, node, node.args[0], _arg(node, 2, "dim", 0), _split_sizes(cx, node, s))


# ---- unsqueeze / squeeze -----------------------------------------------------------------------
@method(("unsqueeze",), "Tensor.unsqueeze")
def unsqueeze_method(cx, node, name):
    x = node.args[0]
    nd = _ndim(cx, x)
    cx.emit("unsqueeze", node, [x],
            attrs={"dim": _int(cx, node, _arg(node, 1, "dim"), "dim") % (nd + 1)})


@function(lambda: (_torch().unsqueeze,), "torch.unsqueeze")
def unsqueeze_fn(cx, node, target):
    unsqueeze_method(cx, node, "unsqueeze")


@method(("squeeze",), "Tensor.squeeze")
def squeeze_method(cx, node, name):
    x = node.args[0]
    nd = _ndim(cx, x)
    d = _arg(node, 1, "dim", None)
    if d is None:
        attrs = {}
    else:
        ds = d if isinstance(d, (tuple, list)) else [d]
        attrs = {"dims": [_int(cx, node, v, "dim") % max(nd, 1) for v in ds]}
    cx.emit("squeeze", node, [x], attrs=attrs)


@function(lambda: (_torch().squeeze,), "torch.squeeze")
def squeeze_fn(cx, node, target):
    squeeze_method(cx, node, "squeeze")


# ---- view / reshape ----------------------------------------------------------------------------
def _size_of(n):
    """(tensor node, dim) when node is ``t.size(d)`` / ``t.shape[d]`` / ``t.size()[d]``."""
    if not _is_node(n):
        return None
    if n.op == "call_method" and n.target == "size" and len(n.args) >= 2 and \
            isinstance(n.args[1], int):
        return n.args[0], n.args[1]
    if n.op == "call_function" and n.target is operator.getitem and isinstance(n.args[1], int):
        base = n.args[0]
        if _is_node(base) and ((base.op == "call_function" and base.target is getattr and
                                base.args[1] == "shape") or
                               (base.op == "call_method" and base.target == "size" and
                                len(base.args) == 1)):
            return base.args[0], n.args[1]
    return None


def _same_dim(cx, x, t, d):
    """The dim of x whose size is ``t.size(d)`` (t is x, or a tensor whose dim d has x's size
    at both batch sizes seen at export), or None."""
    xv, tv = cx.value(x), cx.value(t)
    if not (hasattr(xv, "shape") and hasattr(tv, "shape")) or not -tv.dim() <= d < tv.dim():
        return None
    d %= tv.dim()
    if t is x:
        return d
    x2 = cx.v2.get(x.name) if cx.v2 is not None else None
    t2 = cx.v2.get(t.name) if cx.v2 is not None else None
    cands = []
    for k in range(xv.dim()):
        if xv.shape[k] != tv.shape[d]:
            continue
        if x2 is not None and t2 is not None and hasattr(x2, "shape") and \
                hasattr(t2, "shape") and x2.dim() == xv.dim() and t2.dim() == tv.dim() and \
                x2.shape[k] != t2.shape[d]:
            continue
        cands.append(k)
    k = xv.dim() - (tv.dim() - d)
    if xv.dim() != tv.dim() and d > 0 and k in cands:
        # t of another rank (the 4-d input of a channel-shuffle view of a 5-d tensor, where
        # groups, H and W may all be 2): its trailing dims are x's trailing dims
        return k
    if d in cands:
        return d
    return cands[0] if len(cands) == 1 else None


def emit_view(cx, node, x, shape):
    """A ``view`` op whose target shape follows the input: literal sizes, -1, and sizes read
    from the input (``x.size(0)``) stay symbolic; other computed sizes become -1 when the
    shape has none, else the value seen at export."""
    if shape is None or _is_node(shape):
        cx.emit("reshape", node, [x])     # shape computed as a whole at run time: as exported
        return
    if isinstance(shape, int):
        shape = [shape]
    out = tuple(cx.value(node).shape)
    if len(out) != len(shape):
        cx.unsupported(node, f"view to {shape!r}")
    dims, copy_dims = [], []
    has_neg = any(isinstance(s, int) and s == -1 for s in shape)
    for k, s in enumerate(shape):
        if isinstance(s, int) and not isinstance(s, bool):
            dims.append(int(s))
            copy_dims.append(-1)
            continue
        hit = _size_of(s)
        src = None if hit is None else _same_dim(cx, x, hit[0], hit[1])
        if src is not None:
            dims.append(-1)
            copy_dims.append(src)
        elif not has_neg:
            dims.append(-1)
            copy_dims.append(-1)
            has_neg = True
        else:
            dims.append(int(out[k]))
            copy_dims.append(-1)
    attrs = {"shape": dims}
    if any(c >= 0 for c in copy_dims):
        attrs["copy_dims"] = copy_dims
    cx.emit("view", node, [x], attrs=attrs)

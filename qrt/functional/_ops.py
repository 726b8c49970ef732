# SPDX-License-Identifier: Apache-2.0
"""Element-wise, pooling and shape ops over QTensor, bit-exact with torch 2.13's qnnpack engine.

Where QNNPACK refuses a case (or mishandles it) qrt runs what torch's fbgemm/x86 engine runs
instead; docs/ops.md lists every such case with its formula.  Every op takes ``out=``: a
contiguous QTensor of the result's shape, dtype and qparams to write into.
"""

from __future__ import annotations

import operator
from typing import Optional, Sequence

import numpy as np

from qrt import _ops
from qrt._geometry import pool_out_len
from qrt._storage import Storage
from qrt._tensor import (QTensor, _check_out_alias, _check_scale, _check_zero_point,
                         _contiguous_strides, per_tensor_affine, qint8, qint32, quint8)

__all__ = [
    "relu", "add", "add_relu", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "hardswish",
    "sigmoid", "cat", "flatten", "reshape",
]

# ATen's Vectorized<quint8/qint8> holds 64 codes on an AVX512 build (torch's default CPU
# capability on this machine); its generic add runs the vector formula on whole 64-element
# chunks of each row and the scalar formula on the rest (docs/ops.md, "add").
_ATEN_VEC_CODES = 64
_F32 = np.float32
_F32_TINY = np.finfo(np.float32).tiny  # smallest normal float32


# ---- argument helpers ------------------------------------------------------------------------
def _qtensor(x, what, dtypes=(quint8, qint8)) -> QTensor:
    if not isinstance(x, QTensor):
        raise TypeError(f"{what} must be a qrt.QTensor, got {type(x).__name__}")
    if x._qscheme is not per_tensor_affine:
        raise ValueError(f"{what} must be per-tensor quantized, got {x._qscheme.name}")
    if x._dtype not in dtypes:
        names = " or ".join(repr(d) for d in dtypes)
        raise TypeError(f"{what} must have dtype {names}, got {x._dtype!r}")
    return x


def _codes(x: QTensor) -> np.ndarray:
    """C-contiguous integer codes of x (a zero-copy view when x is contiguous)."""
    arr = x.int_repr()
    return arr if arr.flags.c_contiguous else arr.copy()  # copy() keeps 0-d arrays 0-d


def _int(v, what) -> int:
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise ValueError(f"{what} must be an int or a 1-tuple, got {v!r}")
        v = v[0]
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, got {v!r}")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(v).__name__}") from None


def _result(shape, dtype, scale, zero_point, out, what="out"):
    """(QTensor to return, its flat writable codes); checks a caller-provided ``out``."""
    shape = tuple(int(d) for d in shape)
    if out is None:
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        st = Storage.empty(n * dtype.itemsize)
        t = QTensor._wrap(st, shape, _contiguous_strides(shape), 0, dtype, per_tensor_affine,
                          float(scale), int(zero_point), None, None, None)
    else:
        if not isinstance(out, QTensor):
            raise TypeError(f"{what} must be a qrt.QTensor, got {type(out).__name__}")
        if out._qscheme is not per_tensor_affine or out._dtype is not dtype:
            raise TypeError(f"{what} must be a per-tensor {dtype!r} tensor, got "
                            f"{out._qscheme.name} {out._dtype!r}")
        if out.shape != shape:
            raise ValueError(f"{what} has shape {out.shape}; the result has shape {shape}")
        if not out.is_contiguous():
            raise ValueError(f"{what} must be contiguous")
        if out._storage.readonly:
            raise ValueError(f"{what} is read-only (it views a read-only buffer or mapping)")
        if out._scale != float(scale) or out._zero_point != int(zero_point):
            raise ValueError(f"{what} has qparams ({out._scale!r}, {out._zero_point}); the "
                             f"result needs ({float(scale)!r}, {int(zero_point)})")
        t = out
    return t, t.int_repr().reshape(-1)


def _no_overlap(res: QTensor, inputs, what="out"):
    """Pooling and cat read inputs after writing outputs: they must not share memory."""
    for x in inputs:
        if np.may_share_memory(res.int_repr(), x.int_repr()):
            raise ValueError(f"{what} must not share memory with the input")


def _rows(codes: np.ndarray) -> np.ndarray:
    """[N, C, L] or [C, L] codes as [N*C, L]."""
    return codes.reshape(-1, codes.shape[-1])


def _pool_input(x, what="input", dtypes=(quint8, qint8)) -> QTensor:
    x = _qtensor(x, what, dtypes)
    if x.ndim not in (2, 3):
        raise ValueError(f"{what} must be [N, C, L] or unbatched [C, L], got shape {x.shape}")
    if x.shape[-1] < 1:
        raise ValueError(f"{what} has an empty length dimension (shape {x.shape})")
    return x


# ATen's NHWC average pooling vectorises channels in groups of Vectorized<qint>::size() / 4
# (16 on an AVX512 build); the remaining C % 16 channels take its scalar loop.
_ATEN_NHWC_CHANNEL_BLOCK = 16


def _pool_into(x: QTensor, flat: np.ndarray, lo: int, generic: bool, kernel) -> None:
    """Run ``kernel(out2d, nhwc_vec)`` on the [N*C, lo] output rows, reproducing torch 2.13.

    An [N, C, 1] input (C > 1) is also channels-last, so ATen's generic pooling kernels take
    their NHWC branch: (1) its result is written in [N, lo, C] order into the [N, C, lo]
    output, which torch then reads as [N, C, lo] (every engine); (2) average pooling rounds
    its vectorised channels (the first C - C % 16) before adding the zero point.  QNNPACK's
    own kernels are not affected.  qrt reproduces both (docs/ops.md, "pooling layout quirk").
    """
    if not (generic and x.ndim == 3 and x.shape[-1] == 1 and x.shape[1] > 1):
        kernel(flat.reshape(-1, lo), False)
        return
    n, c = x.shape[0], x.shape[1]
    tmp = np.empty((n, c, lo), x._dtype.numpy_dtype)
    kernel(tmp.reshape(-1, lo), False)
    nv = c - c % _ATEN_NHWC_CHANNEL_BLOCK
    if nv:
        vec = np.empty_like(tmp)
        kernel(vec.reshape(-1, lo), True)
        tmp[:, :nv] = vec[:, :nv]
    flat[:] = (tmp.transpose(0, 2, 1) if lo > 1 else tmp).reshape(-1)


_pool_len = pool_out_len  # torch's pooling_output_shape (qrt/_geometry.py)


# (L, kernel_size, stride, padding, dilation, ceil_mode) -> _pool_geometry's result, for plain
# int / None / bool arguments only (a model calls the same pooling layer again and again).
_POOL_GEOMETRY_CACHE: dict = {}
_POOL_GEOMETRY_CACHE_MAX = 512


def _pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode):
    """(k, s, p, d, lo) of a pooling call, checked; valid plain-int arguments are cached."""
    plain = (type(kernel_size) is int and (stride is None or type(stride) is int)
             and type(padding) is int and type(dilation) is int and type(ceil_mode) is bool)
    if plain:
        key = (x.shape[-1], kernel_size, stride, padding, dilation, ceil_mode)
        hit = _POOL_GEOMETRY_CACHE.get(key)
        if hit is not None:
            return hit
    g = _pool_geometry_checked(x, kernel_size, stride, padding, dilation, ceil_mode)
    if plain and len(_POOL_GEOMETRY_CACHE) < _POOL_GEOMETRY_CACHE_MAX:
        _POOL_GEOMETRY_CACHE[key] = g
    return g


def _pool_geometry_checked(x, kernel_size, stride, padding, dilation, ceil_mode):
    k = _int(kernel_size, "kernel_size")
    if k < 1:
        raise ValueError(f"kernel_size must be >= 1, got {k}")
    if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0):
        s = k
    else:
        s = _int(stride, "stride")
        if s < 1:
            raise ValueError(f"stride must be >= 1, got {s}")
    p = _int(padding, "padding")
    if p < 0:
        raise ValueError(f"padding must be >= 0, got {p}")
    if p > k // 2:
        raise ValueError(f"padding must be at most half of kernel_size, got padding={p} and "
                         f"kernel_size={k}")
    d = _int(dilation, "dilation")
    if d < 1:
        raise ValueError(f"dilation must be >= 1, got {d}")
    if not isinstance(ceil_mode, (bool, np.bool_)):
        raise TypeError(f"ceil_mode must be a bool, got {type(ceil_mode).__name__}")
    lo = _pool_len(x.shape[-1], k, s, p, d, bool(ceil_mode))
    if lo < 1:
        raise ValueError(f"the output length would be {lo} (input length {x.shape[-1]}, "
                         f"kernel_size={k}, stride={s}, padding={p}, dilation={d})")
    return k, s, p, d, lo


# ---- element-wise -------------------------------------------------------------------------
def relu(input: QTensor, inplace: bool = False, *, out: Optional[QTensor] = None) -> QTensor:
    """Quantized relu, ``max(q, zero_point)`` with the input's qparams (``torch.relu(q)``).

    ``inplace=True`` writes into ``input`` (and returns it); ``out`` then must be None.
    """
    x = _qtensor(input, "input", (quint8, qint8, qint32))
    if x._dtype is qint32:
        return _relu_qint32(x, inplace, out)
    if inplace:
        if out is not None:
            raise ValueError("relu: give either inplace=True or out, not both")
        if x.is_contiguous():
            flat = x.int_repr().reshape(-1)
            _ops.relu(flat, flat, x._zero_point)
        else:
            view = x.int_repr()
            view[...] = np.maximum(view, view.dtype.type(x._zero_point))
        return x
    res, flat = _result(x.shape, x._dtype, x._scale, x._zero_point, out)
    if out is not None:
        _check_out_alias(res, (x,), "relu", exact_ok=True)
    _ops.relu(_codes(x).reshape(-1), flat, x._zero_point)
    return res


def _relu_qint32(x, inplace, out):
    """qint32 relu: ATen's generic kernel, max(q, zp) (QNNPACK takes quint8 only)."""
    zp = np.int32(x._zero_point)
    if inplace:
        if out is not None:
            raise ValueError("relu: give either inplace=True or out, not both")
        view = x.int_repr()
        np.maximum(view, zp, out=view)
        return x
    res, flat = _result(x.shape, qint32, x._scale, x._zero_point, out)
    if out is not None:
        _check_out_alias(res, (x,), "relu", exact_ok=True)
    np.maximum(_codes(x).reshape(-1), zp, out=flat)
    return res


# ATen's Vectorized<qint32> holds 16 codes on an AVX512 build: its generic add runs the vector
# formula on whole 16-element chunks of each row and the scalar formula on the rest.
_ATEN_VEC_QINT32 = 16


def _add_qint32(a, b, so, zo, relu_fused, shape, flat):
    """torch 2.13's qadd_kernel on qint32 tensors (docs/ops.md, "add"): dequantize (vector:
    ``fmaf(f32(q), s, f32(s * -f32(zp)))``; scalar: ``f32(s * f32(wrap32(q - zp)))``), float32
    sum, relu, then quantize_val: ``clamp(rne(f32(f32(c * f32(1/so)) + f32(zo))))``, NaN ->
    INT32_MIN."""
    from qrt import _quant
    from qrt.ops.batch_norm import fma_f32
    inner = _inner_run(shape, a.shape, b.shape)
    nvec = inner - inner % _ATEN_VEC_QINT32
    c = np.empty(shape, _F32).reshape(-1, inner)
    for t, dst_sum in ((a, False), (b, True)):
        q = np.ascontiguousarray(np.broadcast_to(_codes(t), shape)).reshape(-1, inner)
        s32 = _F32(t._scale)
        d = np.empty(q.shape, _F32)
        _quant.dequantize_tensor(q.reshape(-1), d.reshape(-1), float(s32), t._zero_point)
        if nvec:
            premul = _F32(s32 * -_F32(t._zero_point))
            d[:, :nvec] = fma_f32(q[:, :nvec].astype(_F32), s32, premul)
        if dst_sum:
            np.add(c, d, out=c)
        else:
            c[...] = d
    if relu_fused:
        np.maximum(c, _F32(0.0), out=c)
    inv = np.array([_F32(1.0) / _F32(so)], _F32)
    _quant.quantize_rows(c.reshape(1, 1, -1), flat.reshape(1, 1, -1), inv,
                         np.array([zo], _F32), float(qint32.qmin), float(qint32.qmax),
                         qint32.qmin)


def _add(a, b, scale, zero_point, relu_fused, out, what):
    a = _qtensor(a, "a", (quint8, qint8, qint32))
    b = _qtensor(b, "b", (quint8, qint8, qint32))
    if a._dtype is not b._dtype:
        raise TypeError(f"{what}: a and b must have the same dtype, got {a._dtype!r} and "
                        f"{b._dtype!r}")
    so = _check_scale(scale, "scale")
    zo = _check_zero_point(zero_point, a._dtype, "zero_point")
    try:
        shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    except ValueError:
        raise ValueError(f"{what}: shapes {a.shape} and {b.shape} do not broadcast") from None
    res, flat = _result(shape, a._dtype, so, zo, out)
    if flat.size == 0:
        return res
    if out is not None:
        _check_out_alias(res, (a, b), what, exact_ok=True)
    if a._dtype is qint32:
        _add_qint32(a, b, so, zo, relu_fused, shape, flat)
        return res
    sa, za, sb, zb = _F32(a._scale), a._zero_point, _F32(b._scale), b._zero_point
    so32 = _F32(so)
    if (a._dtype is quint8 and a.shape == b.shape and a.ndim > 0
            and _ops.add_qnnp_supported(sa, za, sb, zb, so32, zo, relu_fused)):
        _ops.add_qnnp(_codes(a).reshape(-1), _codes(b).reshape(-1), flat, sa, za, sb, zb, so32,
                      zo, relu_fused)
        return res
    # ATen's generic kernel: TensorIterator coalesces the broadcast dimensions and runs each
    # innermost row through the vectorised loop (whole chunks) plus a scalar tail.
    inner = _inner_run(shape, a.shape, b.shape)
    ca = np.ascontiguousarray(np.broadcast_to(_codes(a), shape)).reshape(-1, inner)
    cb = np.ascontiguousarray(np.broadcast_to(_codes(b), shape)).reshape(-1, inner)
    nvec = inner - inner % _ATEN_VEC_CODES
    _ops.add_float(ca, cb, flat.reshape(-1, inner), sa, za, sb, zb, so32, zo, relu_fused, nvec)
    return res


def _inner_run(shape, shape_a, shape_b) -> int:
    """Length of the innermost dimension after TensorIterator's coalescing."""
    nd = len(shape)
    if nd == 0:
        return 1

    def strides(s):
        s = (1,) * (nd - len(s)) + tuple(s)
        st = _contiguous_strides(s)
        return [0 if s[i] == 1 else st[i] for i in range(nd)]

    ops = [_contiguous_strides(shape), strides(shape_a), strides(shape_b)]
    dims = [i for i in range(nd) if shape[i] != 1]
    if not dims:
        return 1
    inner_dim = dims[-1]
    run = shape[inner_dim]
    for outer_dim in reversed(dims[:-1]):
        if all(st[inner_dim] * run == st[outer_dim] for st in ops):
            run *= shape[outer_dim]
        else:
            break
    return run


def add(a: QTensor, b: QTensor, scale: float, zero_point: int, *,
        out: Optional[QTensor] = None) -> QTensor:
    """Quantized add (``torch.ops.quantized.add``) with output qparams ``(scale, zero_point)``.

    quint8 tensors of one shape take QNNPACK's fixed-point kernel; broadcasting, qint8, 0-d
    tensors and scale ratios QNNPACK refuses take ATen's generic float kernel (docs/ops.md).
    """
    return _add(a, b, scale, zero_point, False, out, "add")


def add_relu(a: QTensor, b: QTensor, scale: float, zero_point: int, *,
             out: Optional[QTensor] = None) -> QTensor:
    """``torch.ops.quantized.add_relu``: add, then clamp below at ``zero_point``."""
    return _add(a, b, scale, zero_point, True, out, "add_relu")


def _aten_lut2(x, flat, tables):
    """Apply ATen's vector table to whole 64-code chunks and its scalar table to the tail."""
    src = _codes(x).reshape(-1).view(np.uint8)
    n = src.shape[0]
    _ops.lut2(tables[0], tables[1], src, flat.view(np.uint8), n - n % _ATEN_VEC_CODES)


def hardswish(input: QTensor, scale: float, zero_point: int, *,
              out: Optional[QTensor] = None) -> QTensor:
    """``torch.ops.quantized.hardswish`` with output qparams ``(scale, zero_point)``.

    quint8 uses QNNPACK's 256-entry table; qint8 ATen's generic kernel (two tables: whole
    64-code chunks and the tail round differently, docs/ops.md).
    """
    x = _qtensor(input, "input")
    so = _check_scale(scale, "scale")
    zo = _check_zero_point(zero_point, x._dtype, "zero_point")
    res, flat = _result(x.shape, x._dtype, so, zo, out)
    if out is not None:
        _check_out_alias(res, (x,), "hardswish", exact_ok=True)
    if x._dtype is quint8:
        table = np.empty(256, np.uint8)
        _ops.hardswish_lut(table, _F32(x._scale), x._zero_point, _F32(so), zo)
        _ops.lut(table, _codes(x).reshape(-1), flat)
    else:
        tables = (np.empty(256, np.uint8), np.empty(256, np.uint8))
        _ops.hardswish_luts_aten(tables[0], tables[1], x._scale, x._zero_point, so, zo, True)
        _aten_lut2(x, flat, tables)
    return res


def sigmoid(input: QTensor, *, out: Optional[QTensor] = None) -> QTensor:
    """``torch.sigmoid`` of a quantized tensor; output qparams fixed as torch's: (1/256, 0) for
    quint8 (QNNPACK's table), (1/256, -128) for qint8 (ATen's generic kernel)."""
    x = _qtensor(input, "input")
    if x._dtype is quint8:
        res, flat = _result(x.shape, quint8, 1.0 / 256.0, 0, out)
        if out is not None:
            _check_out_alias(res, (x,), "sigmoid", exact_ok=True)
        table = np.empty(256, np.uint8)
        _ops.sigmoid_lut(table, _F32(x._scale), x._zero_point)
        _ops.lut(table, _codes(x).reshape(-1), flat)
    else:
        res, flat = _result(x.shape, qint8, 1.0 / 256.0, -128, out)
        if out is not None:
            _check_out_alias(res, (x,), "sigmoid", exact_ok=True)
        tables = (np.empty(256, np.uint8), np.empty(256, np.uint8))
        _ops.sigmoid_luts_aten(tables[0], tables[1], x._scale, x._zero_point, True)
        _aten_lut2(x, flat, tables)
    return res


# ---- pooling ---------------------------------------------------------------------------------
def _pool_out(x: QTensor, shape, out):
    """(result, its flat codes, x's C-contiguous codes as [rows, L]): ``_result`` and
    ``_no_overlap`` for a pooling output, reading each tensor's codes once.  An ``out`` that
    ``_result`` would accept as it is takes a shortcut past its checks (same conditions)."""
    if (type(out) is QTensor and out._qscheme is per_tensor_affine and out._dtype is x._dtype
            and out.shape == shape and out._scale == x._scale
            and out._zero_point == x._zero_point and out.is_contiguous()):
        res = out
    else:
        res, _ = _result(shape, x._dtype, x._scale, x._zero_point, out)
    flat = res.int_repr().reshape(-1)
    xr = x.int_repr()
    if np.may_share_memory(flat, xr):
        raise ValueError("out must not share memory with the input")
    return res, flat, _rows(xr if xr.flags.c_contiguous else xr.copy())


def max_pool1d(input: QTensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, *, out: Optional[QTensor] = None) -> QTensor:
    """Quantized max pooling over the last dimension of [N, C, L] or [C, L].

    Positions in the padding never win (fbgemm's rule; QNNPACK's edge replication with
    dilation and padding, and its refusal of kernel_size=1, are not reproduced).
    """
    x = _pool_input(input, dtypes=(quint8, qint8, qint32))
    k, s, p, d, lo = _pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode)
    res, flat, rows = _pool_out(x, x.shape[:-1] + (lo,), out)
    if x._dtype is qint32:   # ATen's generic kernel (numpy): the max of the real positions
        _pool_into(x, flat, lo, True, lambda o2d, _: _max_pool_np(rows, o2d, k, s, p, d))
        return res
    # torch's qnnpack engine runs QNNPACK's kernel for quint8 without ceil_mode; qrt follows
    # fbgemm (ATen's generic kernel) where QNNPACK replicates the edge (dilation + padding).
    generic = x._dtype is not quint8 or bool(ceil_mode) or (d > 1 and p > 0)
    _pool_into(x, flat, lo, generic, lambda o2d, _: _ops.max_pool1d(rows, o2d, k, s, p, d))
    return res


def _max_pool_np(rows, out2d, k, s, p, d):
    """Max over each window's positions inside [0, L) (padding never wins; a window without
    one keeps the dtype's lowest code, as ATen), one strided pass per kernel tap."""
    L, lo = rows.shape[1], out2d.shape[1]
    out2d.fill(np.iinfo(rows.dtype).min)
    t = np.arange(lo, dtype=np.int64) * s - p
    for j in range(k):
        pos = t + j * d
        ok = np.flatnonzero((pos >= 0) & (pos < L))   # increasing positions: one run
        if ok.size:
            i0, i1 = int(ok[0]), int(ok[-1]) + 1
            src = rows[:, int(pos[i0]):int(pos[i1 - 1]) + 1:s]
            np.maximum(out2d[:, i0:i1], src, out=out2d[:, i0:i1])


def avg_pool1d(input: QTensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, *, out: Optional[QTensor] = None) -> QTensor:
    """Quantized average pooling over the last dimension of [N, C, L] or [C, L].

    quint8 with ceil_mode=False and kernel_size > 1 uses QNNPACK's formula, unless
    count_include_pad=False with padding (QNNPACK ignores the flag; qrt then uses ATen's
    generic formula, as for ceil_mode, kernel_size=1 and qint8).
    """
    x = _pool_input(input)
    k, s, p, _, lo = _pool_geometry(x, kernel_size, stride, padding, 1, ceil_mode)
    if not isinstance(count_include_pad, (bool, np.bool_)):
        raise TypeError("count_include_pad must be a bool")
    res, flat, rows = _pool_out(x, x.shape[:-1] + (lo,), out)
    qnnp = (x._dtype is quint8 and not ceil_mode and k > 1
            and (count_include_pad or p == 0))
    _pool_into(x, flat, lo, not qnnp,
               lambda o2d, vec: _avg(x, rows, o2d, k, s, p, qnnp, bool(count_include_pad),
                                     vec))
    return res


def _avg_args(x, rows, out2d, k, s, p, qnnp, count_include_pad, nhwc_vec=False):
    sf = _F32(x._scale)
    scale = _F32(sf / _F32(sf * _F32(k))) if qnnp else 0.0
    return (rows, out2d, k, s, p, x._zero_point, qnnp, count_include_pad, scale, nhwc_vec)


def _avg(x, rows, out2d, k, s, p, qnnp, count_include_pad, nhwc_vec=False):
    _ops.avg_pool1d(*_avg_args(x, rows, out2d, k, s, p, qnnp, count_include_pad, nhwc_vec))


_POOL_ATTRS = {
    "max_pool1d": {"kernel_size", "stride", "padding", "dilation", "ceil_mode"},
    "avg_pool1d": {"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"},
    "adaptive_avg_pool1d": {"output_size"},
}


def pool_binding(kind: str, input: QTensor, out: QTensor, attrs: dict):
    """``(kernel, args)`` running pooling op ``kind`` (``max_pool1d``, ``avg_pool1d`` or
    ``adaptive_avg_pool1d`` with keyword attributes ``attrs``) from ``input`` into ``out`` as one
    kernel call on fixed buffers: what a model plan binds once, so a call skips the argument
    checks.  The same decisions as the functions above; None where only they can run it (the
    [N, C>1, 1] layout quirk, or an ``out`` / input that is not a plain contiguous view)."""
    known = _POOL_ATTRS.get(kind)
    if known is None or not set(attrs) <= known:
        return None  # the function itself names what it does not take
    if isinstance(input, QTensor) and input._dtype is qint32:
        return None  # qint32 max pooling: numpy in the function itself
    x = _pool_input(input)
    if x.ndim == 3 and x.shape[-1] == 1 and x.shape[1] > 1:
        return None
    if kind == "adaptive_avg_pool1d":
        lo = _int(attrs["output_size"], "output_size")
        if lo < 1:
            raise ValueError(f"output_size must be >= 1, got {lo}")
    else:
        d = attrs.get("dilation", 1) if kind == "max_pool1d" else 1
        k, s, p, d, lo = _pool_geometry(x, attrs["kernel_size"], attrs.get("stride"),
                                        attrs.get("padding", 0), d, attrs.get("ceil_mode", False))
    res, flat, rows = _pool_out(x, x.shape[:-1] + (lo,), out)
    if res is not out or not np.shares_memory(rows, x.int_repr()):
        return None
    o2d = flat.reshape(-1, lo)
    if kind == "max_pool1d":
        return _ops.max_pool1d, (rows, o2d, k, s, p, d)
    if kind == "avg_pool1d":
        cip = attrs.get("count_include_pad", True)
        if not isinstance(cip, (bool, np.bool_)):
            raise TypeError("count_include_pad must be a bool")
        qnnp = (x._dtype is quint8 and not attrs.get("ceil_mode", False) and k > 1
                and (cip or p == 0))
        return _ops.avg_pool1d, _avg_args(x, rows, o2d, k, s, p, qnnp, bool(cip))
    L = x.shape[-1]
    if x._dtype is quint8 and L % lo == 0 and L != lo:
        k = L // lo
        return _ops.avg_pool1d, _avg_args(x, rows, o2d, k, k, 0, True, True)
    return _ops.adaptive_avg_pool1d, (rows, o2d)


def adaptive_avg_pool1d(input: QTensor, output_size, *,
                        out: Optional[QTensor] = None) -> QTensor:
    """Quantized adaptive average pooling to ``output_size`` over the last dimension.

    quint8 with L % output_size == 0 and L != output_size runs QNNPACK's average pooling with
    kernel = stride = L / output_size (as torch's qnnpack engine); anything else ATen's generic
    adaptive kernel.
    """
    x = _pool_input(input)
    o = _int(output_size, "output_size")
    if o < 1:
        raise ValueError(f"output_size must be >= 1, got {o}")
    L = x.shape[-1]
    res, flat, rows = _pool_out(x, x.shape[:-1] + (o,), out)
    if x._dtype is quint8 and L % o == 0 and L != o:
        k = L // o
        _avg(x, rows, flat.reshape(-1, o), k, k, 0, True, True)
    else:
        _pool_into(x, flat, o, True, lambda o2d, _: _ops.adaptive_avg_pool1d(rows, o2d))
    return res


# ---- shape ops ---------------------------------------------------------------------------------
def cat(tensors: Sequence[QTensor], dim: int = 0, scale: Optional[float] = None,
        zero_point: Optional[int] = None, *, out: Optional[QTensor] = None) -> QTensor:
    """Concatenate along ``dim`` (``torch.cat`` / ``torch.ops.quantized.cat``).

    The output qparams default to the first tensor's; as torch, every input is dequantized and
    the concatenation quantized with the output qparams (an identity for inputs that already
    have them).
    """
    if isinstance(tensors, QTensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError("tensors must be a list or tuple of qrt.QTensor")
    if len(tensors) == 0:
        raise ValueError("cat needs at least one tensor")
    xs = [_qtensor(t, f"tensors[{i}]", (quint8, qint8, qint32)) for i, t in enumerate(tensors)]
    dt = xs[0]._dtype
    nd = xs[0].ndim
    if nd == 0:
        raise ValueError("cat: zero-dimensional tensors cannot be concatenated")
    for i, t in enumerate(xs[1:], 1):
        if t._dtype is not dt:
            raise TypeError(f"tensors[{i}] has dtype {t._dtype!r}; tensors[0] has {dt!r}")
        if t.ndim != nd:
            raise ValueError(f"tensors[{i}] has {t.ndim} dimensions; tensors[0] has {nd}")
    d = _int(dim, "dim")
    if not -nd <= d < nd:
        raise ValueError(f"dim={d} is out of range for {nd}-d tensors")
    d %= nd
    for i, t in enumerate(xs[1:], 1):
        if t.shape[:d] + t.shape[d + 1:] != xs[0].shape[:d] + xs[0].shape[d + 1:]:
            raise ValueError(f"tensors[{i}] has shape {t.shape}, which differs from "
                             f"tensors[0]'s {xs[0].shape} outside dim {d}")
    so = xs[0]._scale if scale is None else _check_scale(scale, "scale")
    zo = xs[0]._zero_point if zero_point is None else _check_zero_point(zero_point, dt,
                                                                           "zero_point")
    shape = list(xs[0].shape)
    shape[d] = sum(t.shape[d] for t in xs)
    res, flat = _result(shape, dt, so, zo, out)
    _no_overlap(res, xs)
    outer = int(np.prod(shape[:d], dtype=np.int64))
    inner = int(np.prod(shape[d + 1:], dtype=np.int64))
    out2d = flat.reshape(outer, shape[d] * inner)
    so32 = _F32(so)
    if dt is qint32:
        _cat_qint32(xs, out2d, d, inner, outer, so32, zo)
        return res
    off = 0
    for t in xs:
        n = t.shape[d] * inner
        if n and outer:
            src = _codes(t).reshape(outer, n)
            if _F32(t._scale) == so32 and t._zero_point == zo and so32 >= _F32_TINY:
                # dequantize + quantize with the same normal float32 scale is the identity:
                # |x * inv - (q - zp)| <= 255 * 2^-23 < 1/2 (docs/ops.md, "cat").
                out2d[:, off:off + n] = src
            else:
                _ops.requant_copy(src, out2d[:, off:off + n], _F32(t._scale), t._zero_point,
                                  so32, zo)
        off += n
    return res


def _cat_qint32(xs, out2d, d, inner, outer, so32, zo):
    """torch's quantized_cat_impl on qint32: dequantize every input, cat, quantize_per_tensor
    (never an identity: float32 holds 24 bits of a code)."""
    from qrt import _quant
    f = np.empty(out2d.shape, _F32)
    off = 0
    for t in xs:
        n = t.shape[d] * inner
        if n and outer:
            src = _codes(t).reshape(-1)
            tmp = np.empty(src.shape[0], _F32)
            _quant.dequantize_tensor(src, tmp, float(_F32(t._scale)), t._zero_point)
            f[:, off:off + n] = tmp.reshape(outer, n)
        off += n
    _quant.quantize_rows(f.reshape(1, 1, -1), out2d.reshape(1, 1, -1),
                         np.array([_F32(1.0) / so32], _F32), np.array([zo], _F32),
                         float(qint32.qmin), float(qint32.qmax), qint32.qmin)


def flatten(input: QTensor, start_dim: int = 0, end_dim: int = -1) -> QTensor:
    """``torch.flatten``: a view of contiguous tensors (a copy otherwise)."""
    x = _qtensor(input, "input", (quint8, qint8, qint32))
    nd = max(x.ndim, 1)
    s = _int(start_dim, "start_dim")
    e = _int(end_dim, "end_dim")
    if not -nd <= s < nd:
        raise ValueError(f"start_dim={s} is out of range for a {x.ndim}-d tensor")
    if not -nd <= e < nd:
        raise ValueError(f"end_dim={e} is out of range for a {x.ndim}-d tensor")
    if s % nd > e % nd:
        raise ValueError(f"start_dim={s} comes after end_dim={e}")
    return x.flatten(s, e)


def reshape(input: QTensor, shape) -> QTensor:
    """``torch.reshape``: a view of contiguous tensors (a copy otherwise)."""
    x = _qtensor(input, "input", (quint8, qint8, qint32))
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape must be a tuple of integers, got {type(shape).__name__}")
    dims = tuple(_int(v, "shape") for v in shape)
    if any(v < -1 for v in dims):
        raise ValueError(f"shape {dims} has a negative dimension")
    return x.reshape(dims)


# SPDX-License-Identifier: Apache-2.0
"""The quantize / dequantize API: quantize_per_tensor, quantize_per_channel, dequantize,
from_int_repr(_per_channel), with torch's arithmetic (docs/quantization.md)."""

from __future__ import annotations

from typing import Tuple

import numpy as np

from qrt import _quant
from qrt._checks import (_check_axis, _check_scale, _check_zero_point, _float_input,
                         _per_channel_params)
from qrt._dtypes import (_BY_NUMPY, QDType, as_dtype, per_channel_affine, per_tensor_affine,
                         qint8, quint8)
from qrt._storage import Storage
from qrt._strides import _contiguous_strides
from qrt._tensor import QTensor, _new_tensor


# ---- quantize / dequantize ----------------------------------------------------------------
def quantize_per_tensor(x, scale, zero_point, dtype) -> QTensor:
    """Quantize float values to a per-tensor affine QTensor, bit-exact with torch 2.13.

    Parameters
    ----------
    x : array_like of float
        float32 values (float16/float64 are converted to float32 first, as ``.float()``).
    scale : float
        Positive and finite, with a finite float32 value and reciprocal; used as
        float32 like torch does (``q_scale()`` returns it unchanged).
    zero_point : int
        Inside the dtype's range.
    dtype : qrt.quint8, qrt.qint8 or qrt.qint32

    Returns
    -------
    QTensor
        quint8/qint8: ``clamp(rne(fmaf(x, 1/scale, zp)))``; qint32:
        ``clamp(rne((x * (1/scale)) + zp))`` (see docs/quantization.md).
    """
    dt = as_dtype(dtype)
    s = _check_scale(scale)
    z = _check_zero_point(zero_point, dt)
    xf = _float_input(x)
    return _quantize_per_tensor_impl(xf, s, z, dt)


def _quantize_per_tensor_impl(xf: np.ndarray, s: float, z: int, dt: QDType,
                              variant: int = -1) -> QTensor:
    """quantize_per_tensor on validated arguments; ``variant`` picks the C variant."""
    st, flat = _new_tensor(xf.shape, dt)
    inv = np.float32(1.0) / np.float32(s)
    src = xf.reshape(-1)
    if dt is quint8:
        _quant.quantize_fma_u8(src, flat, inv, float(z), 0.0, 255.0, variant)
    elif dt is qint8:
        _quant.quantize_fma_s8(src, flat, inv, float(z), -128.0, 127.0, variant)
    else:
        _quant.quantize_rows(src.reshape(1, 1, -1), flat.reshape(1, 1, -1),
                             np.array([inv], np.float32), np.array([z], np.float32),
                             float(dt.qmin), float(dt.qmax), dt.qmin, variant)
    return QTensor._wrap(st, xf.shape, _contiguous_strides(xf.shape), 0, dt, per_tensor_affine,
                         s, z, None, None, None)


def _split3(shape, axis):
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    return outer, shape[axis], inner


def quantize_per_channel(x, scales, zero_points, axis, dtype) -> QTensor:
    """Quantize with one (scale, zero_point) per slice along ``axis``, bit-exact with torch.

    Parameters
    ----------
    x : array_like of float
        At least 1-d; float16/float64 are converted to float32 first.
    scales : array_like of float, shape (x.shape[axis],)
        Positive and finite; kept as float64 (``q_per_channel_scales()``), used as float32.
    zero_points : array_like of int, shape (x.shape[axis],)
        Inside the dtype's range; kept as int64.
    axis : int
        The channel axis (negative counts from the end).
    dtype : qrt.quint8, qrt.qint8 or qrt.qint32

    Returns
    -------
    QTensor
        ``clamp(rne((x * (1/scale[c])) + zp[c]))`` per channel; NaN gives 0 (quint8/qint8)
        or INT32_MIN (qint32), as torch.
    """
    dt = as_dtype(dtype)
    xf = _float_input(x)
    if xf.ndim == 0:
        raise ValueError("quantize_per_channel needs at least a 1-d input")
    ax = _check_axis(axis, xf.ndim)
    sc, zp, inv = _per_channel_params(scales, zero_points, xf.shape[ax], dt)
    return _quantize_per_channel_impl(xf, sc, zp, inv, ax, dt)


def _quantize_per_channel_impl(xf, sc, zp, inv, ax, dt, variant: int = -1) -> QTensor:
    """quantize_per_channel on validated arguments; ``variant`` picks the C variant."""
    st, flat = _new_tensor(xf.shape, dt)
    o, c, i = _split3(xf.shape, ax)
    _quant.quantize_rows(xf.reshape(o, c, i), flat.reshape(o, c, i), inv.astype(np.float32),
                         zp.astype(np.float32), float(dt.qmin), float(dt.qmax), 0, variant)
    return QTensor._wrap(st, xf.shape, _contiguous_strides(xf.shape), 0, dt, per_channel_affine,
                         None, None, sc, zp, ax)


def dequantize(q: QTensor) -> np.ndarray:
    """float32 values of a QTensor, with torch's exact arithmetic.

    Per-tensor: ``f32(f32(scale) * f32(q - zp))`` (qint32: ``q - zp`` wraps modulo 2**32 as
    torch's int32 subtraction does).  Per-channel: ``f32(f32(q - zp[c]) * scale[c])`` with the
    product in float64.
    """
    if not isinstance(q, QTensor):
        raise TypeError(f"dequantize expects a qrt.QTensor, got {type(q).__name__}")
    return _dequantize_impl(q)


def _dequantize_impl(q: QTensor, variant: int = -1) -> np.ndarray:
    ints = np.ascontiguousarray(q.int_repr())
    out = np.empty(q.shape, dtype=np.float32)
    if q._qscheme is per_tensor_affine:
        _quant.dequantize_tensor(ints.reshape(-1), out.reshape(-1),
                                 np.float32(q._scale), q._zero_point, variant)
    else:
        o, c, i = _split3(q.shape, q._axis)
        _quant.dequantize_rows(ints.reshape(o, c, i), out.reshape(o, c, i), q._scales,
                               q._zero_points.astype(np.float32), variant)
    return out


def _storage_of(ints: np.ndarray) -> Tuple[Storage, np.ndarray]:
    """A Storage over the array's memory (zero-copy when C-contiguous, else a copy)."""
    if not ints.flags.c_contiguous:
        ints = np.ascontiguousarray(ints)
    return Storage.from_buffer(ints.reshape(-1).view(np.uint8) if ints.size else
                               np.zeros(0, np.uint8)), ints


def _int_dtype(ints: np.ndarray, dtype) -> QDType:
    if dtype is None:
        dt = _BY_NUMPY.get(ints.dtype)
        if dt is None:
            raise TypeError(f"from_int_repr: integers of dtype {ints.dtype} have no quantized "
                            "dtype (uint8, int8 or int32 expected)")
        return dt
    dt = as_dtype(dtype)
    if ints.dtype != dt.numpy_dtype:
        raise TypeError(f"from_int_repr: {dt!r} needs {dt.numpy_dtype} integers, got {ints.dtype}")
    return dt


def from_int_repr(ints, scale, zero_point, dtype=None) -> QTensor:
    """Wrap existing integers (a uint8 image, say) as a per-tensor QTensor without copying."""
    arr = np.asarray(ints)
    dt = _int_dtype(arr, dtype)
    s = _check_scale(scale)
    z = _check_zero_point(zero_point, dt)
    st, arr = _storage_of(arr)
    return QTensor._wrap(st, arr.shape, _contiguous_strides(arr.shape), 0, dt, per_tensor_affine,
                         s, z, None, None, None)


def from_int_repr_per_channel(ints, scales, zero_points, axis, dtype=None) -> QTensor:
    """Wrap existing integers as a per-channel QTensor without copying."""
    arr = np.asarray(ints)
    dt = _int_dtype(arr, dtype)
    if arr.ndim == 0:
        raise ValueError("per-channel tensors need at least one dimension")
    ax = _check_axis(axis, arr.ndim)
    sc, zp, _ = _per_channel_params(scales, zero_points, arr.shape[ax], dt)
    st, arr = _storage_of(arr)
    return QTensor._wrap(st, arr.shape, _contiguous_strides(arr.shape), 0, dt, per_channel_affine,
                         None, None, sc, zp, ax)

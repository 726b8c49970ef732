# SPDX-License-Identifier: Apache-2.0
"""Quantized dtypes, qschemes and QTensor: a Storage plus shape, strides, offset and qparams."""

from __future__ import annotations

import math
import operator
from typing import Optional, Sequence, Tuple

import numpy as np

from qrt import _quant
from qrt._storage import Storage

__all__ = [
    "QDType", "quint8", "qint8", "qint32", "QScheme", "per_tensor_affine", "per_channel_affine",
    "per_tensor_symmetric", "per_channel_symmetric", "QTensor", "quantize_per_tensor",
    "quantize_per_channel", "dequantize", "from_int_repr", "from_int_repr_per_channel",
    "as_dtype",
]


class QDType:
    """A quantized element type: ``qrt.quint8``, ``qrt.qint8`` or ``qrt.qint32``."""

    __slots__ = ("name", "code", "itemsize", "qmin", "qmax", "numpy_dtype")

    def __init__(self, name: str, code: int, numpy_dtype, qmin: int, qmax: int):
        self.name = name
        self.code = code
        self.numpy_dtype = np.dtype(numpy_dtype)
        self.itemsize = self.numpy_dtype.itemsize
        self.qmin = qmin
        self.qmax = qmax

    def __repr__(self):
        return f"qrt.{self.name}"

    def __reduce__(self):
        return (as_dtype, (self.name,))


# Codes match qrt_dtype in include/qrt/types.h (and the blob format).
quint8 = QDType("quint8", 1, np.uint8, 0, 255)
qint8 = QDType("qint8", 2, np.int8, -128, 127)
qint32 = QDType("qint32", 3, np.int32, -(2**31), 2**31 - 1)
_DTYPES = {d.name: d for d in (quint8, qint8, qint32)}
_BY_NUMPY = {np.dtype(np.uint8): quint8, np.dtype(np.int8): qint8, np.dtype(np.int32): qint32}


def as_dtype(dtype, what: str = "dtype") -> QDType:
    """Resolve a QDType, its name ('quint8') or torch's spelling ('torch.quint8')."""
    if isinstance(dtype, QDType):
        return dtype
    if isinstance(dtype, str):
        key = dtype.split(".")[-1]
        if key in _DTYPES:
            return _DTYPES[key]
        raise ValueError(f"{what}: unknown quantized dtype {dtype!r}; expected one of "
                         f"{sorted(_DTYPES)}")
    raise TypeError(f"{what}: expected qrt.quint8, qrt.qint8 or qrt.qint32, got {dtype!r}")


class QScheme:
    """A quantization scheme, named as torch's."""

    __slots__ = ("name", "code")

    def __init__(self, name: str, code: int):
        self.name = name
        self.code = code

    def __repr__(self):
        return f"qrt.{self.name}"

    def __reduce__(self):
        return (_qscheme_by_name, (self.name,))


per_tensor_affine = QScheme("per_tensor_affine", 1)
per_channel_affine = QScheme("per_channel_affine", 2)
per_tensor_symmetric = QScheme("per_tensor_symmetric", 3)
per_channel_symmetric = QScheme("per_channel_symmetric", 4)
_QSCHEMES = {q.name: q for q in (per_tensor_affine, per_channel_affine, per_tensor_symmetric,
                                 per_channel_symmetric)}


def _qscheme_by_name(name):
    return _QSCHEMES[name]


# ---- argument checks ---------------------------------------------------------------------------
def _check_scale(scale, what="scale") -> float:
    """A positive finite scale whose float32 value and reciprocal are finite and non-zero."""
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, (int, float, np.integer,
                                                                      np.floating)):
        if isinstance(scale, np.ndarray) and scale.size == 1:
            scale = scale.item()
        else:
            raise TypeError(f"{what} must be a real number, got {type(scale).__name__}")
    s = float(scale)
    if not math.isfinite(s) or s <= 0.0:
        raise ValueError(f"{what} must be positive and finite, got {s!r}")
    if 1.1754943508222875e-38 <= s <= 3.0e38:  # float32 normal range: always usable
        return s
    with np.errstate(over="ignore", divide="ignore"):
        s32 = np.float32(s)
        ok = s32 != 0 and np.isfinite(s32) and np.isfinite(np.float32(1.0) / s32)
    if not ok:
        raise ValueError(f"{what}={s!r} is outside float32's usable range "
                         "(its float32 value or reciprocal is 0 or inf)")
    return s


def _check_zero_point(zp, dtype: QDType, what="zero_point") -> int:
    if isinstance(zp, (bool, np.bool_)):  # torch's argument parser refuses bools as ints
        raise TypeError(f"{what} must be an integer, got bool ({zp!r})")
    try:
        z = operator.index(zp)
    except TypeError:
        if isinstance(zp, np.ndarray) and zp.size == 1 and zp.dtype.kind in "iu":
            z = int(zp.item())
        else:
            raise TypeError(f"{what} must be an integer, got {type(zp).__name__}") from None
    if not dtype.qmin <= z <= dtype.qmax:
        raise ValueError(f"{what}={z} is outside the range of {dtype!r} "
                         f"[{dtype.qmin}, {dtype.qmax}]")
    return int(z)


def _check_axis(axis, ndim: int, what="axis") -> int:
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, got bool ({axis!r})")
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise ValueError(f"{what}={a} is out of range for a {ndim}-d tensor")
    return a % ndim


def _float_input(x, what="input") -> np.ndarray:
    """float32 C-contiguous array; float16/float64 are converted (as torch's .float() would)."""
    arr = np.asarray(x)
    if arr.dtype.kind != "f":
        raise TypeError(f"{what} must be a floating-point array, got dtype {arr.dtype}")
    with np.errstate(over="ignore"):  # float64 beyond float32 becomes +-inf, as .float()
        return np.asarray(arr, dtype=np.float32, order="C")  # keeps 0-d arrays 0-d


def _per_channel_params(scales, zero_points, n_ch: int, dtype: QDType):
    sc = np.asarray(scales)
    zp = np.asarray(zero_points)
    if sc.ndim != 1 or zp.ndim != 1:
        raise ValueError("scales and zero_points must be 1-d")
    if sc.shape[0] != n_ch or zp.shape[0] != n_ch:
        raise ValueError(f"scales ({sc.shape[0]}) and zero_points ({zp.shape[0]}) must have one "
                         f"entry per channel ({n_ch})")
    if sc.dtype.kind not in "fiu":
        raise TypeError(f"scales must be real numbers, got dtype {sc.dtype}")
    if zp.dtype.kind not in "iu":
        if zp.dtype.kind == "f" and np.all(zp == np.round(zp)):
            zp = zp.astype(np.int64)
        else:
            raise TypeError(f"zero_points must be integers, got dtype {zp.dtype}")
    sc = sc.astype(np.float64)
    zp = zp.astype(np.int64)
    bad = ~np.isfinite(sc) | (sc <= 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"scales[{i}]={sc[i]!r} must be positive and finite")
    with np.errstate(divide="ignore", over="ignore"):
        s32 = sc.astype(np.float32)
        inv = np.float32(1.0) / s32
    bad = (s32 == 0) | ~np.isfinite(s32) | ~np.isfinite(inv)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"scales[{i}]={sc[i]!r} is outside float32's usable range")
    bad = (zp < dtype.qmin) | (zp > dtype.qmax)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"zero_points[{i}]={zp[i]} is outside the range of {dtype!r} "
                         f"[{dtype.qmin}, {dtype.qmax}]")
    return sc, zp, inv


def _contiguous_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    strides = []
    acc = 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= max(int(d), 1)
    return tuple(reversed(strides))


def _as_shape(shape) -> Tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of integers, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"shape {out} has a negative dimension")
    return out


def _wrap_dim(dim, ndim: int, what: str = "dim") -> int:
    """A dim in [-ndim, ndim) made non-negative; IndexError (as torch) when out of range."""
    try:
        d = operator.index(dim)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(dim).__name__}") from None
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"{what}={d} is out of range (expected to be in range of [{-n}, "
                         f"{n - 1}])")
    return d % n


def _shape_args(args, what: str = "shape") -> Tuple[int, ...]:
    """``f(2, 3)`` or ``f((2, 3))`` -> (2, 3)."""
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        args = args[0]
    try:
        return tuple(operator.index(d) for d in args)
    except TypeError:
        raise TypeError(f"{what} must be integers, got {args!r}") from None


def _infer_shape(shape: Tuple[int, ...], numel: int) -> Tuple[int, ...]:
    """torch's infer_size: at most one -1, no other negative size, same element count."""
    infer = None
    known = 1
    for i, d in enumerate(shape):
        if d == -1:
            if infer is not None:
                raise ValueError("only one dimension can be inferred (-1)")
            infer = i
        elif d < 0:
            raise ValueError(f"invalid shape dimension {d}")
        else:
            known *= d
    if infer is not None:
        if known == 0 or numel % known:
            raise ValueError(f"shape {list(shape)} is invalid for input of size {numel}")
        shape = shape[:infer] + (numel // known,) + shape[infer + 1:]
    elif known != numel:
        raise ValueError(f"shape {list(shape)} is invalid for input of size {numel}")
    return shape


def _compute_stride(oldshape, oldstride, newshape) -> Optional[Tuple[int, ...]]:
    """ATen's computeStride: strides for viewing (oldshape, oldstride) as newshape, or None
    when no view exists (then reshape copies)."""
    if not oldshape:
        return (1,) * len(newshape)
    numel = math.prod(oldshape)
    if numel == 0 and tuple(oldshape) == tuple(newshape):
        return tuple(oldstride)
    newstride = [0] * len(newshape)
    if numel == 0:
        for d in range(len(newshape) - 1, -1, -1):
            newstride[d] = 1 if d == len(newshape) - 1 else \
                max(newshape[d + 1], 1) * newstride[d + 1]
        return tuple(newstride)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and
                             oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


def _is_contiguous(shape, strides) -> bool:
    """torch's compute_contiguous: size-1 dims may have any stride; empty is contiguous."""
    if any(d == 0 for d in shape):
        return True
    z = 1
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1:
            if s != z:
                return False
            z *= d
    return True


def _channels_last_like(shape, strides, order) -> bool:
    """c10's is_channels_last_strides_{2d_s4,3d_s5}."""
    mn = 0
    if strides[1] == 0:
        return False
    for d in order:
        if shape[d] == 0 or strides[d] < mn:
            return False
        if d == 0 and mn == strides[1]:
            return False
        mn = strides[d]
        if shape[d] > 1:
            mn *= shape[d]
    return True


def _clone_strides(shape, strides) -> Tuple[int, ...]:
    """Strides of torch's quantized clone() (memory_format=preserve -> suggest_memory_format)."""
    if len(shape) == 4 and _channels_last_like(shape, strides, (1, 3, 2, 0)):
        n, c, h, w = shape
        return (h * w * c, 1, w * c, c)
    if len(shape) == 5 and _channels_last_like(shape, strides, (1, 4, 3, 2, 0)):
        n, c, d, h, w = shape
        return (d * h * w * c, 1, h * w * c, w * c, c)
    return _contiguous_strides(shape)


# ---- QTensor ------------------------------------------------------------------------------------
class QTensor:
    """A quantized tensor: integers in a :class:`Storage` plus quantization parameters.

    ``QTensor(storage, shape, dtype, scale, zero_point, offset=0, strides=None)`` wraps an
    existing storage without copying (per-channel: pass ``scales``, ``zero_points`` and
    ``axis`` instead of ``scale`` and ``zero_point``).  ``offset`` and ``strides`` count
    elements, as torch's ``storage_offset()`` and ``stride()`` do.
    """

    # ``_pin`` is a memoryview of the storage: a live buffer export, so that
    # ``storage().resize_()`` refuses while this tensor can reach the memory.
    __slots__ = ("_storage", "_shape", "_strides", "_offset", "_dtype", "_qscheme", "_scale",
                 "_zero_point", "_scales", "_zero_points", "_axis", "_pin")

    def __init__(self, storage: Storage, shape, dtype, scale=None, zero_point=None, offset=0,
                 strides=None, *, scales=None, zero_points=None, axis=None):
        if not isinstance(storage, Storage):
            raise TypeError(f"storage must be a qrt.Storage, got {type(storage).__name__}")
        dt = as_dtype(dtype)
        shp = _as_shape(shape)
        off = operator.index(offset)
        if off < 0:
            raise ValueError(f"offset={off} must be >= 0")
        if strides is None:
            st = _contiguous_strides(shp)
        else:
            try:
                st = tuple(operator.index(x) for x in strides)
            except TypeError:
                raise TypeError(f"strides must be a sequence of integers, got "
                                f"{strides!r}") from None
            if any(x < 0 for x in st):
                raise ValueError(f"strides {st} must be >= 0 (torch has no negative strides)")
        if len(st) != len(shp):
            raise ValueError(f"strides {st} and shape {shp} have different lengths")
        # Every element must lie inside the storage: check the extreme byte touched.
        if all(d > 0 for d in shp):
            last = off + sum((d - 1) * s for d, s in zip(shp, st))
            if (last + 1) * dt.itemsize > storage.nbytes:
                raise ValueError(f"a {dt!r} tensor of shape {shp}, strides {st} and offset {off} "
                                 f"needs {(last + 1) * dt.itemsize} bytes; the storage has "
                                 f"{storage.nbytes}")
        if off * dt.itemsize > storage.nbytes:
            raise ValueError(f"offset={off} lies outside the storage ({storage.nbytes} bytes)")
        if (storage.data_ptr() + off * dt.itemsize) % dt.itemsize:
            raise ValueError(f"{dt!r} data must be {dt.itemsize}-byte aligned")
        self._storage = storage
        self._pin = memoryview(storage)
        self._shape = shp
        self._strides = st
        self._offset = off
        self._dtype = dt
        if scales is not None or zero_points is not None or axis is not None:
            if scale is not None or zero_point is not None:
                raise ValueError("give either scale/zero_point or scales/zero_points/axis")
            if scales is None or zero_points is None or axis is None:
                raise ValueError("per-channel tensors need scales, zero_points and axis")
            ax = _check_axis(axis, len(shp))
            sc, zp, _ = _per_channel_params(scales, zero_points, shp[ax], dt)
            self._qscheme = per_channel_affine
            self._scales, self._zero_points, self._axis = sc, zp, ax
            self._scale = self._zero_point = None
        else:
            self._qscheme = per_tensor_affine
            self._scale = _check_scale(1.0 if scale is None else scale)
            self._zero_point = _check_zero_point(0 if zero_point is None else zero_point, dt)
            self._scales = self._zero_points = self._axis = None

    @classmethod
    def per_channel(cls, storage: Storage, shape, dtype, scales, zero_points, axis: int,
                    offset=0, strides=None) -> "QTensor":
        """The per-channel form over an existing storage (no copy): one (scale, zero_point)
        per index of ``axis``; scales kept as float64 and zero points as int64, as torch."""
        return cls(storage, shape, dtype, offset=offset, strides=strides, scales=scales,
                   zero_points=zero_points, axis=axis)

    @classmethod
    def _wrap(cls, storage, shape, strides, offset, dtype, qscheme, scale, zero_point, scales,
              zero_points, axis):
        """Internal constructor: trusts its (already validated) arguments."""
        t = cls.__new__(cls)
        t._storage, t._shape, t._strides, t._offset = storage, shape, strides, offset
        t._pin = memoryview(storage)
        t._dtype, t._qscheme = dtype, qscheme
        t._scale, t._zero_point = scale, zero_point
        t._scales, t._zero_points, t._axis = scales, zero_points, axis
        return t

    def __reduce__(self):
        # Not the slots: ``_pin`` (a memoryview) cannot be pickled; the rebuilt tensor pins
        # its storage again.
        return (QTensor._wrap, (self._storage, self._shape, self._strides, self._offset,
                                self._dtype, self._qscheme, self._scale, self._zero_point,
                                self._scales, self._zero_points, self._axis))

    def _with_layout(self, shape, strides, offset, axis=None):
        return QTensor._wrap(self._storage, shape, strides, offset, self._dtype, self._qscheme,
                             self._scale, self._zero_point, self._scales, self._zero_points,
                             self._axis if axis is None else axis)

    # ---- properties, named as torch's ---------------------------------------------------------
    @property
    def shape(self) -> Tuple[int, ...]:
        return self._shape

    def size(self, dim: Optional[int] = None):
        return self._shape if dim is None else self._shape[dim]

    def stride(self, dim: Optional[int] = None):
        return self._strides if dim is None else self._strides[dim]

    def storage_offset(self) -> int:
        return self._offset

    @property
    def dtype(self) -> QDType:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        return int(np.prod(self._shape, dtype=np.int64)) if self._shape else 1

    def element_size(self) -> int:
        return self._dtype.itemsize

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def storage(self) -> Storage:
        return self._storage

    def qscheme(self) -> QScheme:
        return self._qscheme

    def _per_tensor(self, what):
        if self._qscheme is not per_tensor_affine:
            raise ValueError(f"{what}() is for per-tensor quantized tensors; this one is "
                             f"{self._qscheme.name}")

    def _per_channel(self, what):
        if self._qscheme is not per_channel_affine:
            raise ValueError(f"{what}() is for per-channel quantized tensors; this one is "
                             f"{self._qscheme.name}")

    def q_scale(self) -> float:
        self._per_tensor("q_scale")
        return self._scale

    def q_zero_point(self) -> int:
        self._per_tensor("q_zero_point")
        return self._zero_point

    def q_per_channel_scales(self) -> np.ndarray:
        self._per_channel("q_per_channel_scales")
        return self._scales.copy()

    def q_per_channel_zero_points(self) -> np.ndarray:
        self._per_channel("q_per_channel_zero_points")
        return self._zero_points.copy()

    def q_per_channel_axis(self) -> int:
        self._per_channel("q_per_channel_axis")
        return self._axis

    def is_contiguous(self) -> bool:
        """As torch: sizes-1 dims may have any stride; empty tensors are contiguous."""
        return _is_contiguous(self._shape, self._strides)

    def data_ptr(self) -> int:
        """Address of the first element (``storage().data_ptr()`` plus the offset in bytes)."""
        return self._storage.data_ptr() + self._offset * self._dtype.itemsize

    # ---- data ------------------------------------------------------------------------------
    def int_repr(self) -> np.ndarray:
        """The integers as a numpy array sharing this tensor's memory (no copy)."""
        it = self._dtype.itemsize
        if 0 in self._shape:  # nothing to share; numpy would check the strides' reach
            return np.empty(self._shape, dtype=self._dtype.numpy_dtype)
        # Through np.frombuffer, whose array holds a buffer export (a memoryview) of the
        # storage: np.ndarray(buffer=storage) would release it at once, and resize_ could
        # then free memory this array still points at.
        return np.ndarray(self._shape, dtype=self._dtype.numpy_dtype,
                          buffer=np.frombuffer(self._storage, np.uint8),
                          offset=self._offset * it, strides=tuple(s * it for s in self._strides))

    def dequantize(self) -> np.ndarray:
        """float32 values, with torch's exact arithmetic."""
        return dequantize(self)

    # ---- copies and views (torch's rules: see docs/tensors.md) ------------------------------
    def _copy(self, strides) -> "QTensor":
        """A copy of the integers in new memory laid out with ``strides``."""
        it = self._dtype.itemsize
        st = Storage.empty(math.prod(self._shape) * it)
        dst = np.ndarray(self._shape, dtype=self._dtype.numpy_dtype, buffer=st,
                         strides=tuple(s * it for s in strides))
        np.copyto(dst, self.int_repr())
        return QTensor._wrap(st, self._shape, tuple(strides), 0, self._dtype, self._qscheme,
                             self._scale, self._zero_point, self._scales, self._zero_points,
                             self._axis)

    def contiguous(self) -> "QTensor":
        """self when already contiguous (torch's definition), else a contiguous copy."""
        if self.is_contiguous():
            return self
        return self._copy(_contiguous_strides(self._shape))

    def clone(self) -> "QTensor":
        """A copy in new memory, laid out as torch's quantized ``clone()``.

        Contiguous, except that a 4-d (5-d) tensor whose strides look channels-last keeps the
        channels-last layout (torch's ``suggest_memory_format``).
        """
        return self._copy(_clone_strides(self._shape, self._strides))

    def _new_axis_after_reshape(self, shape) -> Optional[int]:
        """Where the channel axis lands in ``shape``, or ValueError when a reshape splits or
        merges it (torch would keep the axis number and mislabel the channels)."""
        if self._qscheme is not per_channel_affine:
            return None
        ax = self._axis
        before = math.prod(self._shape[:ax])
        n_ch = self._shape[ax]
        acc = 1
        for k, d in enumerate(shape):
            if acc == before and d == n_ch:
                return k
            acc *= d
        raise ValueError(f"cannot reshape a per-channel tensor of shape {self._shape} (channel "
                         f"axis {ax}) into {tuple(shape)}: the channel axis would be split or "
                         "merged")

    def view(self, *shape) -> "QTensor":
        """A view with a new shape sharing memory; ValueError where torch's ``view`` fails
        (the strides cannot express it; use :meth:`reshape`)."""
        shp = _infer_shape(_shape_args(shape), self.numel())
        ax = self._new_axis_after_reshape(shp)
        st = _compute_stride(self._shape, self._strides, shp)
        if st is None:
            raise ValueError(f"view of shape {shp} is not compatible with this tensor's shape "
                             f"{self._shape} and strides {self._strides}; use reshape()")
        return self._with_layout(shp, st, self._offset, ax)

    def reshape(self, *shape) -> "QTensor":
        """A view where torch's reshape gives one (the strides allow it), else a contiguous
        copy.  A per-channel tensor's channel axis must survive unchanged."""
        shp = _infer_shape(_shape_args(shape), self.numel())
        ax = self._new_axis_after_reshape(shp)
        st = _compute_stride(self._shape, self._strides, shp)
        if st is not None:
            return self._with_layout(shp, st, self._offset, ax)
        src = self._copy(_contiguous_strides(self._shape))
        return src._with_layout(shp, _contiguous_strides(shp), 0, ax)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "QTensor":
        """Merge dims ``start_dim..end_dim`` (a view when possible, as torch)."""
        if self.ndim == 0:
            return self.reshape(1)
        s = _wrap_dim(start_dim, self.ndim, "start_dim")
        e = _wrap_dim(end_dim, self.ndim, "end_dim")
        if s > e:
            raise ValueError("flatten: start_dim comes after end_dim")
        if s == e:
            return self
        shp = self._shape
        return self.reshape(shp[:s] + (math.prod(shp[s:e + 1]),) + shp[e + 1:])

    def permute(self, *dims) -> "QTensor":
        """A view with the dims reordered (shares memory).

        Unlike torch (which refuses any permutation of a per-channel tensor), the channel
        axis follows its dim.
        """
        dims = _shape_args(dims, "dims")
        nd = self.ndim
        if len(dims) != nd:
            raise ValueError(f"permute: {len(dims)} dims given for a {nd}-d tensor")
        perm = tuple(_wrap_dim(d, nd, "dims") for d in dims)
        if len(set(perm)) != nd:
            raise ValueError(f"permute: duplicate dims in {tuple(dims)}")
        ax = None if self._axis is None else perm.index(self._axis)
        return self._with_layout(tuple(self._shape[p] for p in perm),
                                 tuple(self._strides[p] for p in perm), self._offset, ax)

    def transpose(self, dim0: int, dim1: int) -> "QTensor":
        """A view with two dims swapped."""
        nd = max(self.ndim, 1)
        a = _wrap_dim(dim0, nd, "dim0")
        b = _wrap_dim(dim1, nd, "dim1")
        if self.ndim == 0 or a == b:
            return self._with_layout(self._shape, self._strides, self._offset)
        perm = list(range(self.ndim))
        perm[a], perm[b] = b, a
        return self.permute(perm)

    swapaxes = transpose

    @property
    def T(self) -> "QTensor":
        """All dims reversed (torch deprecates this for ndim != 2 but still does it)."""
        return self.permute(tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self) -> "QTensor":
        """The last two dims swapped."""
        if self.ndim < 2:
            raise ValueError(f"mT needs a tensor of at least 2 dims, got {self.ndim}")
        return self.transpose(-2, -1)

    def select(self, dim: int, index: int) -> "QTensor":
        """The view at ``index`` along ``dim`` (that dim removed).

        Per-channel tensors: selecting along the channel axis raises ValueError (torch
        raises too), selecting along another dim keeps every channel.
        """
        if self.ndim == 0:
            raise IndexError("select() cannot be applied to a 0-d tensor")
        d = _wrap_dim(dim, self.ndim, "dim")
        try:
            i = operator.index(index)
        except TypeError:
            raise TypeError(f"index must be an integer, got {type(index).__name__}") from None
        n = self._shape[d]
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for dimension {d} with size {n}")
        i %= n
        ax = self._axis
        if ax is not None:
            if d == ax:
                raise ValueError(f"cannot select one channel (dim {d}) of a per-channel tensor; "
                                 "slice it with k:k+1 instead")
            if d < ax:
                ax -= 1
        return self._with_layout(self._shape[:d] + self._shape[d + 1:],
                                 self._strides[:d] + self._strides[d + 1:],
                                 self._offset + i * self._strides[d], ax)

    def _slice(self, d: int, start, stop, step) -> "QTensor":
        if step is None:
            step = 1
        else:
            try:
                step = operator.index(step)
            except TypeError:
                raise IndexError(f"slice step must be an integer, got {step!r}") from None
        if step == 0:
            raise ValueError("slice step cannot be zero")
        if step < 0:
            raise ValueError("step must be greater than zero (as for torch tensors)")
        n = self._shape[d]
        try:
            lo, hi, _ = slice(start, stop, 1).indices(n)
        except TypeError:
            raise IndexError(f"slice bounds must be integers or None, got "
                             f"{start!r}:{stop!r}") from None
        hi = max(hi, lo)
        length = (hi - lo + step - 1) // step
        shape = self._shape[:d] + (length,) + self._shape[d + 1:]
        strides = self._strides[:d] + (self._strides[d] * step,) + self._strides[d + 1:]
        t = self._with_layout(shape, strides, self._offset + lo * self._strides[d])
        if self._axis == d:
            sel = slice(lo, hi, step)
            t._scales = self._scales[sel].copy()
            t._zero_points = self._zero_points[sel].copy()
        return t

    def narrow(self, dim: int, start: int, length: int) -> "QTensor":
        """The view of ``length`` entries from ``start`` along ``dim`` (as torch.narrow)."""
        if self.ndim == 0:
            raise IndexError("narrow() cannot be applied to a 0-d tensor")
        d = _wrap_dim(dim, self.ndim, "dim")
        n = self._shape[d]
        s = operator.index(start)
        ln = operator.index(length)
        if not -n <= s <= n:
            raise IndexError(f"narrow: start {s} is out of range for dimension {d} of size {n}")
        if s < 0:
            s += n
        if ln < 0 or s + ln > n:
            raise ValueError(f"narrow: start ({s}) + length ({ln}) exceeds dimension size ({n})")
        return self._slice(d, s, s + ln, 1)

    def unsqueeze(self, dim: int) -> "QTensor":
        """A view with a new size-1 dim at ``dim``."""
        d = _wrap_dim(dim, self.ndim + 1, "dim")
        st = 1 if d >= self.ndim else self._shape[d] * self._strides[d]
        ax = self._axis
        if ax is not None and d <= ax:
            ax += 1
        return self._with_layout(self._shape[:d] + (1,) + self._shape[d:],
                                 self._strides[:d] + (st,) + self._strides[d:], self._offset, ax)

    def squeeze(self, dim=None) -> "QTensor":
        """A view without size-1 dims (all of them, or those among ``dim``)."""
        nd = self.ndim
        if dim is None:
            drop = {k for k, n in enumerate(self._shape) if n == 1}
        else:
            dims = dim if isinstance(dim, (tuple, list)) else (dim,)
            drop = {k for k in (_wrap_dim(x, max(nd, 1), "dim") for x in dims)
                    if nd and self._shape[k] == 1}
        ax = self._axis
        if ax is not None:
            if ax in drop:
                raise ValueError("squeeze: the channel axis of a per-channel tensor cannot be "
                                 "squeezed")
            ax -= sum(1 for k in drop if k < ax)
        keep = [k for k in range(nd) if k not in drop]
        return self._with_layout(tuple(self._shape[k] for k in keep),
                                 tuple(self._strides[k] for k in keep), self._offset, ax)

    def __getitem__(self, key) -> "QTensor":
        """Basic indexing as torch: integers, slices (step > 0), ``None`` and ``...``; the
        result is a view.  Lists, arrays and booleans (advanced indexing) raise IndexError."""
        if not isinstance(key, tuple):
            key = (key,)
        consumed = 0
        for k in key:
            if k is None or k is Ellipsis:
                continue
            if isinstance(k, slice):
                consumed += 1
                continue
            if isinstance(k, (bool, np.bool_)) or not hasattr(k, "__index__") or \
                    getattr(k, "ndim", 0) != 0:
                raise IndexError(f"qrt.QTensor supports basic indexing only (integers, slices, "
                                 f"None, ...); got {type(k).__name__}. Index int_repr() for "
                                 "advanced indexing.")
            consumed += 1
        if consumed > self.ndim:
            raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
        if sum(1 for k in key if k is Ellipsis) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        t = self
        d = 0
        for k in key:
            if k is None:
                t = t.unsqueeze(d)
                d += 1
            elif k is Ellipsis:
                d += self.ndim - consumed
            elif isinstance(k, slice):
                t = t._slice(d, k.start, k.stop, k.step)
                d += 1
            else:
                t = t.select(d, k)
        if t is self:
            t = self._with_layout(self._shape, self._strides, self._offset)
        return t

    def __iter__(self):
        for i in range(len(self)):
            yield self.select(0, i)

    def __repr__(self):
        if self._qscheme is per_tensor_affine:
            q = f"scale={self._scale!r}, zero_point={self._zero_point}"
        else:
            q = f"axis={self._axis}, scales={self._scales.tolist()!r}, " \
                f"zero_points={self._zero_points.tolist()!r}"
        return f"qrt.QTensor(shape={self._shape}, dtype={self._dtype!r}, {q})"


def _new_tensor(shape, dtype: QDType) -> Tuple[Storage, np.ndarray]:
    n = math.prod(shape)
    st = Storage.empty(n * dtype.itemsize)
    return st, np.frombuffer(st, dtype=dtype.numpy_dtype)


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


def _byte_extent(t: QTensor) -> Tuple[int, int]:
    """[first, last + 1) addresses of the bytes ``t`` can touch ((0, 0) when empty)."""
    if 0 in t._shape:
        return 0, 0
    it = t._dtype.itemsize
    lo = t._storage.data_ptr() + t._offset * it
    return lo, lo + (sum((d - 1) * s for d, s in zip(t._shape, t._strides)) + 1) * it


def _check_out_alias(out: QTensor, inputs, what: str, exact_ok: bool) -> None:
    """Refuse an ``out`` that overlaps an input, except an exact alias where allowed.

    ``exact_ok``: the kernel reads element i of each input before it writes element i of
    the output (elementwise ops), so ``out`` may *be* an input (same address, shape and
    strides). Any other overlap gives wrong answers (an output shifted by one element from
    its input reads codes it has already overwritten), so it is a ValueError.
    """
    o0, o1 = _byte_extent(out)
    if o0 == o1:
        return
    for x in inputs:
        x0, x1 = _byte_extent(x)
        if x0 >= o1 or o0 >= x1:
            continue
        if exact_ok and x0 == o0 and x._shape == out._shape and x._strides == out._strides \
                and x._dtype.itemsize == out._dtype.itemsize:
            continue
        kind = "partly overlaps" if exact_ok else "shares memory with"
        raise ValueError(f"{what}: out {kind} an input; give a separate output tensor"
                         + (" (or exactly the input, for in-place)" if exact_ok else ""))

# SPDX-License-Identifier: Apache-2.0
"""QTensor: a Storage plus shape, strides, offset and qparams (torch's quantized tensor).

Dtypes and qschemes live in qrt/_dtypes.py, argument checks in qrt/_checks.py, stride rules
in qrt/_strides.py and the quantize API in qrt/_quantize.py; this module re-exports them so
``from qrt._tensor import ...`` keeps working.
"""

from __future__ import annotations

import math
import operator
from typing import Optional, Tuple

import numpy as np

from qrt._checks import (_check_axis, _check_scale, _check_zero_point, _float_input,  # noqa
                         _per_channel_params)
from qrt._dtypes import (_QSCHEMES, QDType, QScheme, _qscheme_by_name, as_dtype, per_channel_affine,  # noqa
                         per_channel_symmetric, per_tensor_affine, per_tensor_symmetric, qint8,
                         qint32, quint8)
from qrt._storage import Storage
from qrt._strides import (_as_shape, _channels_last_like, _clone_strides,  # noqa: F401
                          _compute_stride, _contiguous_strides, _infer_shape, _is_contiguous,
                          _shape_args, _wrap_dim)

__all__ = [
    "QDType", "quint8", "qint8", "qint32", "QScheme", "per_tensor_affine", "per_channel_affine",
    "per_tensor_symmetric", "per_channel_symmetric", "QTensor", "quantize_per_tensor",
    "quantize_per_channel", "dequantize", "from_int_repr", "from_int_repr_per_channel",
    "as_dtype",
]


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

    # ---- what a torch user reaches for (issue #48) ------------------------------------------
    @property
    def is_quantized(self) -> bool:
        """Always True, as torch's ``Tensor.is_quantized`` on a quantized tensor."""
        return True

    def _no_implicit_floats(self, what):
        return TypeError(
            f"{what}: a quantized tensor ({self._dtype.name}) has no plain numpy form, as in "
            "torch; say which numbers you want: q.int_repr() (the integer codes, no copy) or "
            "q.dequantize() (float32 values)")

    def __array__(self, dtype=None, copy=None):
        raise self._no_implicit_floats("np.asarray(qtensor)")

    def numpy(self):
        """Refused, as torch refuses it: use :meth:`int_repr` or :meth:`dequantize`."""
        raise self._no_implicit_floats("QTensor.numpy()")

    def tolist(self):
        """Refused, as torch refuses it: ``q.dequantize().tolist()`` gives the values."""
        raise self._no_implicit_floats("QTensor.tolist()")

    def float(self):
        """Refused (torch raises too): :meth:`dequantize` gives the float32 values."""
        raise self._no_implicit_floats("QTensor.float()")

    def item(self) -> float:
        """The dequantized value of a one-element tensor, as a Python float (as torch)."""
        if self.numel() != 1:
            raise ValueError(f"QTensor.item(): a tensor with {self.numel()} elements cannot "
                             "be converted to a scalar")
        return float(self.dequantize().reshape(-1)[0])

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

from qrt._quantize import (_dequantize_impl, _int_dtype, _quantize_per_channel_impl,  # noqa
                           _quantize_per_tensor_impl, _split3, _storage_of, dequantize,
                           from_int_repr, from_int_repr_per_channel, quantize_per_channel,
                           quantize_per_tensor)

# SPDX-License-Identifier: Apache-2.0
"""qrt.Storage: a fixed-size, 64-byte-aligned uint8 buffer (owned, borrowed or memory-mapped)."""

from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release, PyObject_CheckBuffer,
                             PyBUF_SIMPLE,
                             PyBUF_WRITABLE, PyBUF_FORMAT, PyBUF_ND, PyBUF_STRIDES)
from cpython.ref cimport Py_REFCNT
from libc.stdint cimport uint8_t, uintptr_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memmove, memset

import mmap as _mmap
import operator as _operator
import os as _os

cdef extern from "stdlib.h" nogil:
    int posix_memalign(void **memptr, size_t alignment, size_t size)

ALIGNMENT = 64
cdef size_t _ALIGN = 64

cdef uint8_t* _aligned_alloc(Py_ssize_t n) except NULL:
    cdef void* p = NULL
    # Never ask for 0 bytes: an empty storage still has a valid, aligned pointer.
    cdef size_t want = <size_t>n if n > 0 else _ALIGN
    if posix_memalign(&p, _ALIGN, want) != 0 or p == NULL:
        raise MemoryError(f"Storage: cannot allocate {n} bytes")
    return <uint8_t*>p


cdef int _byte_value(object v, str what) except -1:
    try:
        iv = _operator.index(v)
    except TypeError:
        raise TypeError(f"{what}: expected an integer in 0..255, got {type(v).__name__}") from None
    if iv < 0 or iv > 255:
        raise ValueError(f"{what}: value {iv} is outside 0..255")
    return <int>iv


class _NBytes(int):
    """``Storage.nbytes``: an int that can also be called, since torch's is a method."""
    __slots__ = ()

    def __call__(self):
        return int(self)


cdef class Storage:
    """A fixed-size uint8 buffer: what ``torch.QUInt8Storage`` is to torch.

    Create one with :meth:`empty`, :meth:`full`, :meth:`from_buffer` or :meth:`from_file`.
    Owned memory is 64-byte aligned; slices are views that share memory; the buffer
    protocol (``memoryview``, ``bytes``, ``np.frombuffer``) shares memory too.
    """
    cdef uint8_t* _ptr
    cdef Py_ssize_t _n
    cdef bint _owned
    cdef bint _readonly
    cdef bint _shared
    cdef bint _mapped
    cdef int _exports
    cdef bint _has_view
    cdef Py_buffer _view
    cdef object _base
    cdef object _file_id
    cdef Py_ssize_t _shape[1]
    cdef Py_ssize_t _strides[1]

    def __cinit__(self):
        self._ptr = NULL
        self._n = 0
        self._owned = False
        self._readonly = False
        self._shared = False
        self._mapped = False
        self._exports = 0
        self._has_view = False
        self._base = None
        self._file_id = None

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError("Storage() takes no arguments; use Storage.empty, Storage.full, "
                            "Storage.from_buffer or Storage.from_file")
        if self._ptr == NULL and not self._has_view:
            # Storage() is an empty owned storage, like torch.UntypedStorage().
            self._ptr = _aligned_alloc(0)
            self._n = 0
            self._owned = True

    def __dealloc__(self):
        if self._has_view:
            PyBuffer_Release(&self._view)
            self._has_view = False
        if self._owned and self._ptr != NULL:
            free(self._ptr)
        self._ptr = NULL

    # ---- constructors ---------------------------------------------------------------------
    @staticmethod
    def empty(nbytes):
        """A new owned storage of ``nbytes`` uninitialised bytes (64-byte aligned)."""
        cdef Py_ssize_t n = _checked_size(nbytes, "Storage.empty: nbytes")
        cdef Storage s = Storage.__new__(Storage)
        s._ptr = _aligned_alloc(n)
        s._n = n
        s._owned = True
        return s

    @staticmethod
    def full(nbytes, fill_value):
        """A new owned storage of ``nbytes`` bytes, each equal to ``fill_value`` (0..255)."""
        cdef int v = _byte_value(fill_value, "Storage.full: fill_value")
        cdef Storage s = Storage.empty(nbytes)
        memset(s._ptr, v, <size_t>s._n)
        return s

    @staticmethod
    def from_buffer(obj):
        """A zero-copy view of any C-contiguous buffer; keeps ``obj`` alive.

        A read-only buffer (``bytes``, a read-only array) gives a read-only storage.
        """
        cdef Storage s = Storage.__new__(Storage)
        s._attach(obj, 0, -1)
        return s

    @staticmethod
    def from_file(path, shared=False, nbytes=None, *, readonly=False, mmap=True):
        """Memory-map ``path`` (or read it into memory with ``mmap=False``).

        Parameters
        ----------
        shared : bool
            True: writes go through to the file (MAP_SHARED); the file is grown to
            ``nbytes`` if it is shorter, as torch does. False: a private copy-on-write
            mapping; the file is never changed.
        nbytes : int, optional
            Bytes to map from the start of the file (default: the file's size).
        readonly : bool
            Map read-only; any write raises.
        mmap : bool
            False: copy the bytes into owned, 64-byte-aligned memory and close the file.
            Nothing another process later does to the file (truncating it, writing into
            it) can then reach this storage; a mapping dies of SIGBUS when its file
            shrinks (docs/blob-format.md, "Threat model"). Not with ``shared=True``.

        Raises
        ------
        IsADirectoryError, qrt._fileio.NotARegularFileError
            ``path`` is a directory, FIFO, socket or character device (a FIFO is never
            opened: reading it would block).
        """
        from qrt import _fileio
        fspath = _os.fspath(path)
        if shared and not mmap:
            raise ValueError("Storage.from_file: shared=True writes through a mapping; it "
                             "cannot be combined with mmap=False")
        rw = bool(shared and not readonly)
        fd, st = _fileio.open_for_reading(fspath, "Storage.from_file", write=rw, create=rw)
        cdef Storage s
        try:
            size = _fileio.file_size(fd, st)
            if nbytes is None:
                n = size
            else:
                n = _checked_size(nbytes, "Storage.from_file: nbytes")
            if n > size:
                if rw:
                    _os.ftruncate(fd, n)
                else:
                    raise ValueError(f"Storage.from_file: nbytes={n} is larger than the file "
                                     f"{fspath!r} ({size} bytes)")
            if not mmap:
                s = Storage.empty(n)
                if n:
                    _fileio.read_into(fd, s, n, fspath)
                s._readonly = bool(readonly)
                s._file_id = (st.st_dev, st.st_ino)
                return s
            if n == 0:
                # mmap cannot map 0 bytes: an empty storage that behaves as a mapping
                # (cannot be resized) stands in for it.
                s = Storage.empty(0)
                s._shared = bool(shared)
                s._readonly = bool(readonly)
                s._mapped = True
                s._file_id = (st.st_dev, st.st_ino)
                return s
            if readonly:
                access = _mmap.ACCESS_READ
            elif shared:
                access = _mmap.ACCESS_WRITE
            else:
                access = _mmap.ACCESS_COPY
            mm = _mmap.mmap(fd, n, access=access)
        finally:
            _os.close(fd)
        s = Storage.__new__(Storage)
        s._attach(mm, 0, -1)
        s._mapped = True
        s._shared = bool(shared)
        s._file_id = (st.st_dev, st.st_ino)
        return s

    @property
    def file_id(self):
        """``(st_dev, st_ino)`` of the file :meth:`from_file` read or mapped, else None.

        ``os.stat(path)`` with the same id means the path still names that file (it was
        not replaced by a rename), so a shorter size means it was truncated in place.
        """
        return self._file_id

    @property
    def mapped(self):
        """True when the bytes are a memory mapping of a file (``from_file(mmap=True)``)."""
        return bool(self._mapped)

    cdef int _attach(self, object obj, Py_ssize_t start, Py_ssize_t stop) except -1:
        """Borrow obj's buffer, writable if it can be, and view bytes [start, stop)."""
        try:
            PyObject_GetBuffer(obj, &self._view, PyBUF_SIMPLE | PyBUF_WRITABLE)
            self._readonly = False
        except TypeError:
            raise TypeError(f"Storage.from_buffer: {type(obj).__name__} does not support the "
                            "buffer protocol") from None
        except (BufferError, ValueError):
            # Read-only exporters refuse a writable request (BufferError from most, ValueError
            # from numpy); ask again for read-only access.
            try:
                PyObject_GetBuffer(obj, &self._view, PyBUF_SIMPLE)
            except (BufferError, ValueError) as e:
                raise ValueError(f"Storage.from_buffer: {type(obj).__name__} does not expose "
                                 f"one contiguous block of memory ({e})") from None
            self._readonly = True
        self._has_view = True
        if stop < 0:
            stop = self._view.len
        self._ptr = <uint8_t*>self._view.buf + start
        self._n = stop - start
        self._base = obj
        if isinstance(obj, Storage):
            self._shared = (<Storage>obj)._shared
            self._mapped = (<Storage>obj)._mapped
            if (<Storage>obj)._readonly:
                self._readonly = True
        return 0

    # ---- buffer protocol -----------------------------------------------------------------
    def __getbuffer__(self, Py_buffer *buffer, int flags):
        if (flags & PyBUF_WRITABLE) and self._readonly:
            raise BufferError("Storage is read-only")
        self._shape[0] = self._n
        self._strides[0] = 1
        buffer.buf = <void*>self._ptr
        buffer.obj = self
        buffer.len = self._n
        buffer.readonly = self._readonly
        buffer.itemsize = 1
        if flags & PyBUF_FORMAT:
            buffer.format = b"B"
        else:
            buffer.format = NULL
        buffer.ndim = 1
        buffer.shape = self._shape if (flags & PyBUF_ND) else NULL
        buffer.strides = self._strides if (flags & PyBUF_STRIDES) == PyBUF_STRIDES else NULL
        buffer.suboffsets = NULL
        buffer.internal = NULL
        self._exports += 1

    def __releasebuffer__(self, Py_buffer *buffer):
        self._exports -= 1

    # ---- sizes and flags -----------------------------------------------------------------
    def __len__(self):
        return self._n

    @property
    def nbytes(self):
        """Size in bytes: ``s.nbytes``, or ``s.nbytes()`` as torch's storages spell it."""
        return _NBytes(self._n)

    def size(self):
        """Number of elements (bytes), as torch's ``Storage.size()``."""
        return self._n

    def element_size(self):
        return 1

    def data_ptr(self):
        """Address of the first byte."""
        return <uintptr_t>self._ptr

    def is_shared(self):
        """True for a ``from_file(shared=True)`` mapping (writes reach the file)."""
        return bool(self._shared)

    @property
    def readonly(self):
        """True when writes are refused (read-only buffer or mapping)."""
        return bool(self._readonly)

    @property
    def owned(self):
        """True when this storage owns its memory (and so can be resized)."""
        return bool(self._owned and not self._mapped)

    @property
    def base(self):
        """The object whose memory this storage views (None when it owns its memory)."""
        return self._base

    def __repr__(self):
        kind = "mapped" if self._mapped else ("owned" if self._owned else "view")
        ro = ", readonly" if self._readonly else ""
        return f"qrt.Storage(nbytes={self._n}, {kind}{ro})"

    # ---- element access ------------------------------------------------------------------
    cdef Py_ssize_t _index(self, object i) except -1:
        k = _operator.index(i)  # a Python int: no overflow for huge indices
        if k < 0:
            k += self._n
        if k < 0 or k >= self._n:
            raise IndexError(f"Storage index {i} is out of range for {self._n} bytes")
        return <Py_ssize_t>k

    cdef tuple _range(self, slice sl):
        start, stop, step = sl.indices(self._n)
        if step != 1:
            raise ValueError("Storage slices must be contiguous (step 1)")
        if stop < start:
            stop = start
        return start, stop

    cdef int _check_writable(self) except -1:
        if self._readonly:
            raise TypeError("Storage is read-only: it views a read-only buffer or mapping")
        return 0

    def __getitem__(self, key):
        cdef Storage v
        if isinstance(key, slice):
            start, stop = self._range(key)
            v = Storage.__new__(Storage)
            v._attach(self, start, stop)
            return v
        try:
            k = self._index(key)
        except TypeError:
            raise TypeError(f"Storage indices must be integers or slices, not "
                            f"{type(key).__name__}") from None
        return self._ptr[k]

    def __setitem__(self, key, value):
        self._check_writable()
        cdef Py_ssize_t k, start, stop
        if isinstance(key, slice):
            start, stop = self._range(key)
            self._assign(start, stop, value)
            return
        try:
            k = self._index(key)
        except TypeError:
            raise TypeError(f"Storage indices must be integers or slices, not "
                            f"{type(key).__name__}") from None
        self._ptr[k] = <uint8_t>_byte_value(value, "Storage item assignment")

    cdef int _assign(self, Py_ssize_t start, Py_ssize_t stop, object value,
                     str what="Storage slice assignment") except -1:
        cdef Py_ssize_t n = stop - start
        cdef Py_buffer src
        # An integer (numpy integer scalars and 0-d arrays too, though they export buffers).
        if hasattr(value, "__index__") and (not PyObject_CheckBuffer(value) or
                                            getattr(value, "ndim", 1) == 0):
            memset(self._ptr + start, _byte_value(value, what), <size_t>n)
            return 0
        try:
            PyObject_GetBuffer(value, &src, PyBUF_SIMPLE)
        except (TypeError, BufferError, ValueError) as e:
            if isinstance(e, TypeError):
                raise TypeError(f"{what} takes an int, a bytes-like object or a Storage, not "
                                f"{type(value).__name__}") from None
            raise ValueError(f"{what}: {type(value).__name__} does not expose one contiguous "
                             f"block of memory ({e})") from None
        try:
            if src.len != n:
                raise ValueError(f"{what}: {src.len} bytes given for {n} bytes")
            memmove(self._ptr + start, src.buf, <size_t>n)
        finally:
            PyBuffer_Release(&src)
        return 0

    # ---- bulk operations -----------------------------------------------------------------
    def fill_(self, value):
        """Set every byte to ``value`` (0..255); returns self."""
        cdef int v = _byte_value(value, "Storage.fill_")
        self._check_writable()
        memset(self._ptr, v, <size_t>self._n)
        return self

    def copy_(self, other):
        """Copy all bytes of ``other`` (a Storage or bytes-like of the same size); returns self."""
        self._check_writable()
        self._assign(0, self._n, other, "Storage.copy_")
        return self

    def resize_(self, nbytes):
        """Resize an owned storage in place: keeps the prefix, zero-fills any new bytes.

        Views and mappings cannot be resized, nor can a storage whose memory is exported
        (a live numpy array, memoryview or slice of it).
        """
        cdef Py_ssize_t n = _checked_size(nbytes, "Storage.resize_: nbytes")
        if self._readonly:
            raise ValueError("Storage.resize_: this storage is read-only")
        if not self._owned or self._mapped:
            kind = "a memory-mapped file" if self._mapped else "a view of another buffer"
            raise ValueError(f"Storage.resize_: this storage is {kind}; only a storage that "
                             "owns its memory can be resized")
        if self._exports > 0:
            raise BufferError(f"Storage.resize_: {self._exports} live view(s) of this storage "
                              "(numpy arrays, memoryviews, slices or QTensors) would dangle")
        # numpy's ``np.ndarray(buffer=storage)`` releases its buffer export at once and keeps
        # only a reference to this object as ``base``: such an array is invisible to the
        # export count. Any reference beyond the caller's own may be one, so refuse then.
        if Py_REFCNT(self) > _refs_of_a_caller:
            raise BufferError(f"Storage.resize_: {Py_REFCNT(self) - _refs_of_a_caller} other "
                              "reference(s) to this storage exist (a numpy array made with "
                              "np.ndarray(buffer=...) holds one) and may view its memory; "
                              "resize a storage only while nothing else refers to it")
        if n == self._n:
            return self
        cdef uint8_t* p = _aligned_alloc(n)
        cdef Py_ssize_t keep = n if n < self._n else self._n
        if keep > 0:
            memcpy(p, self._ptr, <size_t>keep)
        if n > keep:
            memset(p + keep, 0, <size_t>(n - keep))
        free(self._ptr)
        self._ptr = p
        self._n = n
        return self

    def tobytes(self):
        """A bytes copy of the contents."""
        return (<char*>self._ptr)[:self._n]

    def numpy(self):
        """A zero-copy ``numpy.uint8`` array over this storage (read-only if it is)."""
        import numpy as np
        return np.frombuffer(self, dtype=np.uint8)

    def tolist(self):
        return list(self.tobytes())

    def clone(self):
        """An owned, writable copy."""
        cdef Storage s = Storage.empty(self._n)
        if self._n:
            memcpy(s._ptr, self._ptr, <size_t>self._n)
        return s

    def __reduce__(self):
        return (_rebuild, (self.tobytes(),))

    def _refcount(self):
        """Py_REFCNT(self) as a method sees it (calibrates resize_'s reference check)."""
        return Py_REFCNT(self)


# The references a Storage has while a Python caller runs ``s.resize_(n)`` on a local
# variable: the variable, plus the interpreter's own for the call on CPythons that do not
# borrow it. Measured once, from Python bytecode, so the check follows the interpreter.
_probe_ns = {"Storage": Storage}
exec("def _probe():\n    s = Storage.empty(0)\n    return s._refcount()\n", _probe_ns)
cdef Py_ssize_t _refs_of_a_caller = _probe_ns["_probe"]()
del _probe_ns


def _rebuild(data):
    s = Storage.empty(len(data))
    s.copy_(data)
    return s


cdef Py_ssize_t _checked_size(object n, str what) except -1:
    try:
        v = _operator.index(n)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(n).__name__}") from None
    if v < 0:
        raise ValueError(f"{what} must be >= 0, got {v}")
    if v > <Py_ssize_t>(((<size_t>-1) >> 1) - 64):
        raise ValueError(f"{what}={v} is too large")
    return <Py_ssize_t>v

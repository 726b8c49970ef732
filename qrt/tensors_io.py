# SPDX-License-Identifier: Apache-2.0
"""``qrt.save`` / ``qrt.load_tensors``: named tensors in the blob container (format 1.1).

A tensor file is a ``.bin`` blob whose header carries ``QRT_BLOB_FLAG_TENSORS``: constants
only (no ops, no IO, rule R23). It is written by the one blob writer
(``qrt_export._writer.BlobBuilder``, torch-free) and read by the one blob reader
(:func:`qrt.loader.read_blob`), so every structural rule and both checksums of a model file
apply to it too. Quantized tensors keep their qparams exactly: a per-tensor scale is stored as
f64, per-channel scales as an f64 tensor and zero points as an s64 tensor (as torch keeps
them), referenced from the quantized entry.
"""

from __future__ import annotations

from typing import Dict, Mapping, Union

import numpy as np

from qrt import _blob as B
from qrt._storage import Storage
from qrt._tensor import (QTensor, _contiguous_strides, _per_channel_params, as_dtype,
                         per_channel_affine, per_tensor_affine)
from qrt._format.reader import FormatError, read_blob

__all__ = ["save", "load_tensors"]

# numpy dtypes a tensor file stores as plain (non-quantized) tensors
_PLAIN = {np.dtype(npdt).newbyteorder("="): name for code, (name, npdt) in B.DTYPES.items()
          if code not in B.QUANTIZED_DTYPES}
_MAX_NAME = 180  # bytes; leaves room for the per-channel helper suffixes within 255


def _check_name(name) -> str:
    if not isinstance(name, str):
        raise TypeError(f"tensor names must be str, got {type(name).__name__} ({name!r})")
    if not name or len(name.encode("utf-8")) > _MAX_NAME:
        raise ValueError(f"tensor name {name!r} must be 1..{_MAX_NAME} bytes of UTF-8")
    return name


def save(tensors: Mapping[str, Union[QTensor, np.ndarray]], path, *, meta=None) -> int:
    """Write named tensors to ``path`` as a qrt tensor file; returns the file size.

    Parameters
    ----------
    tensors : mapping of str to QTensor or numpy array
        QTensors (per-tensor or per-channel, any layout: stored contiguous) and plain arrays
        of dtype float32/float64, int8/16/32/64 or uint8/16/32, up to 6 dims.
    path : str or os.PathLike
    meta : dict, optional
        Extra JSON-serialisable metadata stored in the file's META section.
    """
    from qrt._format.writer import BlobBuilder  # the single blob writer (torch-free)
    if not isinstance(tensors, Mapping):
        raise TypeError(f"tensors must be a dict of name -> QTensor/ndarray, got "
                        f"{type(tensors).__name__}")
    b = BlobBuilder()
    names = [_check_name(k) for k in tensors]
    reserved = {f"{k}/q_per_channel_{w}" for k, v in tensors.items()
                if isinstance(v, QTensor) and v._qscheme is per_channel_affine
                for w in ("scales", "zero_points")}
    clash = reserved.intersection(names)
    if clash:
        raise ValueError(f"tensor name {sorted(clash)[0]!r} collides with the per-channel "
                         "qparams stored for another tensor")
    for name, v in tensors.items():
        if isinstance(v, QTensor):
            if v.ndim > B.MAX_NDIM:
                raise ValueError(f"tensors[{name!r}] has {v.ndim} dims; at most {B.MAX_NDIM}")
            ints = np.asarray(v.int_repr(), order="C")
            if v._qscheme is per_tensor_affine:
                b.quantized_constant(name, ints, v.dtype.name, scale=v._scale,
                                     zero_point=v._zero_point)
            else:
                b.quantized_constant(name, ints, v.dtype.name, scales=v._scales,
                                     zero_points=v._zero_points, axis=v._axis)
        elif isinstance(v, np.ndarray):
            key = v.dtype.newbyteorder("=") if v.dtype.byteorder in "<>" else v.dtype
            if key not in _PLAIN:
                raise TypeError(f"tensors[{name!r}]: numpy dtype {v.dtype} cannot be stored "
                                f"(one of {sorted(str(d) for d in _PLAIN)})")
            if v.ndim > B.MAX_NDIM:
                raise ValueError(f"tensors[{name!r}] has {v.ndim} dims; at most {B.MAX_NDIM}")
            b.constant(name, v.astype(key.newbyteorder("<"), copy=False))
        else:
            raise TypeError(f"tensors[{name!r}] must be a qrt.QTensor or a numpy array, got "
                            f"{type(v).__module__}.{type(v).__name__}")
    from qrt import __version__
    b.meta = {"kind": "tensors", "writer": f"qrt.save {__version__}"}
    if meta:
        b.meta.update(dict(meta))
    b.flags |= B.FLAG_TENSORS
    data = b.to_bytes()
    # Never write into an existing file: tensors still mapped from an older version of
    # ``path`` (load_tensors(mmap=True)) keep their inode instead of seeing the file
    # truncated under them (which would kill the process with SIGBUS).
    from qrt._fileio import replace_file
    replace_file(path, data)
    return len(data)


def load_tensors(path, mmap: bool = True, *, verify: bool = True
                 ) -> Dict[str, Union[QTensor, np.ndarray]]:
    """Read a tensor file written by :func:`save` (or ``qrt-export --tensors``).

    Parameters
    ----------
    path : str or os.PathLike
    mmap : bool
        True: every tensor is a zero-copy, read-only view of the mapped file (QTensors share
        one read-only :class:`Storage`); the file must then not be truncated or written in
        place while they live (docs/blob-format.md, "Threat model"). False: the file is read
        into memory (never mapped), each tensor is copied into its own writable memory and
        nothing later done to the file can reach them.
    verify : bool
        Check the payload checksum too (structure and metadata checksum are always checked).

    Raises
    ------
    qrt.FormatError
        The file is not a valid tensor file (a model blob, a corrupted file, a bad dtype
        code, invalid qparams, ...); the message names the rule and the tensor.
    """
    blob = read_blob(path, verify=verify, mmap=mmap)
    if not blob.tensor_file:
        raise FormatError("R23", "this is a model blob, not a tensor file; load it with "
                          "qrt.load", path=blob.path)
    T = blob.tensors
    helpers = {i for t in T if t.qscheme == "per_channel_affine"
               for i in (t.scales_index, t.zero_points_index)}
    out: Dict[str, Union[QTensor, np.ndarray]] = {}
    for t in T:
        if t.index in helpers:
            continue
        if t.qscheme == "none":
            out[t.name] = t.array if mmap else np.array(t.array)
            continue
        dt = as_dtype(t.dtype)
        if mmap:
            st, off = blob.storage, t.data_offset // dt.itemsize
        else:
            st, off = Storage.empty(t.nbytes), 0
            if t.nbytes:
                np.frombuffer(st, np.uint8)[:] = blob.storage[t.data_offset:
                                                              t.data_offset + t.nbytes]
        strides = _contiguous_strides(t.shape)
        if t.qscheme == "per_tensor_affine":
            out[t.name] = QTensor._wrap(st, t.shape, strides, off, dt, per_tensor_affine,
                                        t.scale, t.zero_point, None, None, None)
            continue
        try:  # values the table rules do not cover: positive usable scales, zps in range
            sc, zp, _ = _per_channel_params(T[t.scales_index].array,
                                            T[t.zero_points_index].array,
                                            t.shape[t.axis], dt)
        except (ValueError, TypeError) as e:
            raise FormatError("R14", f"tensor {t.index} ({t.name}): per-channel qparams: {e}",
                              section="TENSORS", path=blob.path) from None
        out[t.name] = QTensor._wrap(st, t.shape, strides, off, dt, per_channel_affine, None,
                                    None, sc, zp, t.axis)
    return out

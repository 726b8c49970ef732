# SPDX-License-Identifier: Apache-2.0
"""Quantized dtypes (quint8, qint8, qint32) and qschemes, as torch names them."""

from __future__ import annotations

import numpy as np

__all__ = ["QDType", "quint8", "qint8", "qint32", "as_dtype", "QScheme", "per_tensor_affine",
           "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric"]


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


# Codes match QRT_BLOB_DTYPE_* in include/qrt/blob.h (the blob format).
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
    if _is_torch_object(dtype) and str(dtype).split(".")[-1] in _DTYPES:
        raise TypeError(f"{what}={dtype}: qrt does not use torch's objects (it never imports "
                        f"torch); use qrt.{str(dtype).split('.')[-1]}")
    raise TypeError(f"{what}: expected qrt.quint8, qrt.qint8 or qrt.qint32, got {dtype!r}")


def _is_torch_object(v) -> bool:
    """``torch.quint8``, ``torch.per_tensor_symmetric``...: a value of a torch type."""
    return type(v).__module__.split(".")[0] == "torch"


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

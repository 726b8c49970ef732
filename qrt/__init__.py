# SPDX-License-Identifier: Apache-2.0
"""qrt: run PyTorch-quantized models without torch, bit-exact with torch's qnnpack engine.

numpy is the only dependency; torch is never imported by the runtime.
"""

import os as _os

from qrt._storage import Storage
from qrt._tensor import (QDType, QScheme, QTensor, dequantize, from_int_repr,
                         from_int_repr_per_channel, per_channel_affine, per_channel_symmetric,
                         per_tensor_affine, per_tensor_symmetric, qint8, qint32,
                         quantize_per_channel, quantize_per_tensor, quint8)
from qrt._conv1d import get_num_threads, set_num_threads
from qrt import functional, nn, ops, quantization
from qrt.loader import FormatError, load
from qrt.model import Model
from qrt.tensors_io import load_tensors, save
from qrt.custom_ops import register_op, registered_ops, unregister_op

__version__ = "0.2.0"

__all__ = [
    "Storage", "QDType", "QScheme", "QTensor", "quint8", "qint8", "qint32",
    "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
    "quantize_per_tensor", "quantize_per_channel", "dequantize", "from_int_repr",
    "from_int_repr_per_channel", "functional", "nn", "quantization", "load", "Model",
    "FormatError", "get_include", "set_num_threads", "get_num_threads", "__version__", "save",
    "load_tensors", "register_op", "unregister_op", "registered_ops", "ops",
]


def get_include() -> str:
    """Directory holding qrt's C headers (``qrt/*.h``), for extensions built against qrt."""
    return _os.path.join(_os.path.dirname(__file__), "include")

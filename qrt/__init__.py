# SPDX-License-Identifier: Apache-2.0
"""qrt: run PyTorch-quantized models without torch, bit-exact with torch's qnnpack engine.

numpy is the only dependency; torch is never imported by the runtime. The names below are
imported on first use (PEP 562), so ``import qrt`` and the ``qrt`` command's argument parsing
cost almost nothing, and a Ctrl-C there is handled by the command, not shown as a traceback
from numpy's import.
"""

import os as _os
from typing import TYPE_CHECKING

__version__ = "0.2.0"

# public name -> the module that defines it (a module itself when the name is a submodule)
_LAZY = {
    "Storage": "qrt._storage",
    **{n: "qrt._tensor" for n in (
        "QDType", "QScheme", "QTensor", "dequantize", "from_int_repr",
        "from_int_repr_per_channel", "per_channel_affine", "per_channel_symmetric",
        "per_tensor_affine", "per_tensor_symmetric", "qint8", "qint32", "quantize_per_channel",
        "quantize_per_tensor", "quint8")},
    "get_num_threads": "qrt._conv1d", "set_num_threads": "qrt._conv1d",
    "functional": None, "nn": None, "ops": None, "quantization": None,
    "FormatError": "qrt.loader", "load": "qrt.loader",
    "Model": "qrt.model",
    "load_tensors": "qrt.tensors_io", "save": "qrt.tensors_io",
    "register_op": "qrt.custom_ops", "registered_ops": "qrt.custom_ops",
    "unregister_op": "qrt.custom_ops",
}

__all__ = [
    "Storage", "QDType", "QScheme", "QTensor", "quint8", "qint8", "qint32",
    "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
    "quantize_per_tensor", "quantize_per_channel", "dequantize", "from_int_repr",
    "from_int_repr_per_channel", "functional", "nn", "quantization", "load", "Model",
    "FormatError", "get_include", "set_num_threads", "get_num_threads", "__version__", "save",
    "load_tensors", "register_op", "unregister_op", "registered_ops", "ops",
]

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ imports these
    from qrt import functional, nn, ops, quantization
    from qrt._conv1d import get_num_threads, set_num_threads
    from qrt._storage import Storage
    from qrt._tensor import (QDType, QScheme, QTensor, dequantize, from_int_repr,
                             from_int_repr_per_channel, per_channel_affine,
                             per_channel_symmetric, per_tensor_affine, per_tensor_symmetric,
                             qint8, qint32, quantize_per_channel, quantize_per_tensor, quint8)
    from qrt.custom_ops import register_op, registered_ops, unregister_op
    from qrt.loader import FormatError, load
    from qrt.model import Model
    from qrt.tensors_io import load_tensors, save


def __getattr__(name):
    """Import a public name on first use (PEP 562) and keep it in the module's namespace."""
    if name not in _LAZY:
        raise AttributeError(f"module 'qrt' has no attribute {name!r}")
    import importlib
    where = _LAZY[name]
    value = importlib.import_module(f"qrt.{name}") if where is None else \
        getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def get_include() -> str:
    """Directory holding qrt's C headers (``qrt/*.h``), for extensions built against qrt."""
    return _os.path.join(_os.path.dirname(__file__), "include")

# SPDX-License-Identifier: Apache-2.0
"""qrt-export: the only writer of qrt ``.bin`` blobs.

``qrt_export.export(model, example_inputs, path)`` traces a quantized torch model (eager,
FX, QAT-converted, dynamic, saved with ``torch.save``; a torchao pt2e program: GraphModule,
ExportedProgram or ``.pt2``; or a float model it quantizes itself)
and writes one flat blob that ``qrt.load`` runs without torch. torch is imported only when
a function here is called.
"""

from typing import TYPE_CHECKING

# public name -> the module that defines it, imported on first use (PEP 562): the
# ``qrt-export`` command parses its arguments (and takes a Ctrl-C) before numpy, qrt and torch
# load
_LAZY = {
    **{n: "qrt_export._export" for n in (
        "EXPORTER_VERSION", "SUPPORTED", "ExportError", "ExportReport", "MismatchError",
        "UnsupportedError", "agreement", "check_ops", "export", "quantize_float_model")},
    "BlobBuilder": "qrt_export._writer",
    "PT2EError": "qrt_export.pt2e",
    "register": "qrt_export.custom", "unregister": "qrt_export.custom",
}

__all__ = ["export", "quantize_float_model", "agreement", "ExportReport", "UnsupportedError",
           "BlobBuilder", "SUPPORTED", "__version__", "register", "unregister", "ExportError",
           "MismatchError", "check_ops", "PT2EError"]

if TYPE_CHECKING:
    from qrt_export._export import EXPORTER_VERSION  # noqa: F401
    from qrt_export._export import (SUPPORTED, ExportError, ExportReport, MismatchError,
                                    UnsupportedError, agreement, check_ops, export,
                                    quantize_float_model)
    from qrt_export._writer import BlobBuilder
    from qrt_export.custom import register, unregister
    from qrt_export.pt2e import PT2EError


def __getattr__(name):
    import importlib
    if name == "__version__":
        value = importlib.import_module("qrt").__version__
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'qrt_export' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})

# SPDX-License-Identifier: Apache-2.0
"""qrt-export: the only writer of qrt ``.bin`` blobs.

``qrt_export.export(model, example_inputs, path)`` traces a quantized torch model (eager,
FX, QAT-converted, dynamic, saved with ``torch.save``; a torchao pt2e program: GraphModule,
ExportedProgram or ``.pt2``; or a float model it quantizes itself)
and writes one flat blob that ``qrt.load`` runs without torch. torch is imported only when
a function here is called.
"""

from qrt_export._export import (EXPORTER_VERSION, SUPPORTED, ExportError, ExportReport,
                                MismatchError, UnsupportedError, agreement, check_ops, export,
                                quantize_float_model)
from qrt_export._writer import BlobBuilder
from qrt_export.pt2e import PT2EError
from qrt_export.custom import register, unregister

__version__ = EXPORTER_VERSION
__all__ = ["export", "quantize_float_model", "agreement", "ExportReport", "UnsupportedError",
           "BlobBuilder", "SUPPORTED", "__version__", "register", "unregister", "ExportError",
           "MismatchError", "check_ops", "PT2EError"]

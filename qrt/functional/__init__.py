# SPDX-License-Identifier: Apache-2.0
"""Quantized ops over QTensor, mirroring ``torch.ao.nn.quantized.functional``.

Every op is bit-exact with torch 2.13's qnnpack engine (see docs/quantization.md).
"""

from qrt.functional._conv import *  # noqa: F401,F403  conv1d, linear, linear_dynamic
from qrt.functional._conv import __all__ as _conv_all
from qrt.functional._ops import *  # noqa: F401,F403  relu, add, pooling, activations, cat
from qrt.functional._ops import __all__ as _ops_all

__all__ = list(_conv_all) + list(_ops_all)

# SPDX-License-Identifier: Apache-2.0
"""Quantized ops over QTensor, mirroring ``torch.ao.nn.quantized.functional``.

Every op is bit-exact with torch 2.13's qnnpack engine (see docs/quantization.md).

What is here: the 1-D and shape-free ops (conv1d, conv1d_relu, linear, linear_relu,
linear_dynamic, relu, add, add_relu, max_pool1d, avg_pool1d, adaptive_avg_pool1d, hardswish,
sigmoid, cat, flatten, reshape). What is not: the 2-D ops (conv2d, pooling 2d, upsample,
conv_transpose) and the float32 ops (softmax, layer_norm, GELU, float conv / linear...) run
inside models only, as the op kinds of ``qrt.ops`` that ``qrt.load`` builds (docs/ops.md,
docs/float-ops.md); for 2-D convolutions outside a model use the layers ``qrt.nn.Conv2d`` /
``qrt.nn.ConvReLU2d``.
"""

from qrt.functional._conv import *  # noqa: F401,F403  conv1d, linear, linear_dynamic
from qrt.functional._conv import __all__ as _conv_all
from qrt.functional._ops import *  # noqa: F401,F403  relu, add, pooling, activations, cat
from qrt.functional._ops import __all__ as _ops_all

__all__ = list(_conv_all) + list(_ops_all)

# Device tensors (qrt.backends.cupy_backend.DeviceQTensor) are routed to the GPU backend's op of
# the same name; CPU calls go straight through (docs/gpu.md).  cupy is never imported here.
from qrt.backends import device_dispatch as _device_dispatch  # noqa: E402

for _name in ("conv1d", "conv1d_relu", "linear", "linear_relu", "linear_dynamic", "relu", "add",
              "add_relu", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "hardswish",
              "sigmoid", "cat", "flatten", "reshape"):
    if _name in globals():
        globals()[_name] = _device_dispatch(_name)(globals()[_name])
del _name

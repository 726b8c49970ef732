# SPDX-License-Identifier: Apache-2.0
"""conv1d, linear, linear_relu and linear_dynamic over QTensor, bit-exact with torch 2.13 qnnpack.

These mirror ``torch.ao.nn.quantized.functional``: like torch they pack the weight on every
call; use the layers in :mod:`qrt.nn` to pack once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

from qrt._tensor import as_dtype, quint8

if TYPE_CHECKING:
    import numpy as np

    from qrt._tensor import QDType, QTensor

    _IntOrSeq = Union[int, Sequence[int]]

__all__ = ["conv1d", "conv1d_relu", "linear", "linear_relu", "linear_dynamic"]


def _nn():
    from qrt import nn  # late import: qrt.nn imports qrt._tensor, which is already loaded

    return nn


def _conv(cls, input, weight, bias, stride, padding, dilation, groups, padding_mode, scale,
          zero_point, dtype, out):
    nn = _nn()
    if padding_mode != "zeros":
        raise nn.UnsupportedError("Only zero-padding is supported! (padding_mode="
                                  f"{padding_mode!r}, as torch's quantized conv1d)")
    if as_dtype(dtype) is not quint8:
        raise nn.UnsupportedError(f"dtype={dtype!r}: only qrt.quint8 output is supported "
                                  "(as torch)")
    nn._input_qtensor(input)
    from qrt._tensor import QTensor
    if not isinstance(weight, QTensor):
        raise TypeError(f"weight must be a qrt.QTensor, got {type(weight).__name__}")
    if weight.ndim != 3:
        raise ValueError(f"weight must be [C_out, C_in/groups, K], got shape {weight.shape}")
    if input.ndim not in (2, 3):
        raise ValueError(f"input must be [N, C_in, L] or [C_in, L], got shape {input.shape}")
    g = nn._pos_int(groups, "groups")
    c_out, cg, k = weight.shape
    c_in = input.shape[-2]
    if cg * g != c_in:
        raise ValueError(f"weight expects {cg} input channels per group x groups={g} = {cg * g}, "
                         f"but the input has {c_in} channels")
    m = cls(c_in, c_out, k, stride=stride, padding=padding, dilation=dilation, groups=g,
            bias=bias is not None)
    m._set_output_qparams(scale, zero_point)
    m.set_weight_bias(weight, bias)
    return m(input, out=out)


def conv1d(input: QTensor, weight: QTensor, bias: Optional[np.ndarray] = None,
           stride: _IntOrSeq = 1, padding: _IntOrSeq = 0, dilation: _IntOrSeq = 1,
           groups: int = 1, padding_mode: str = "zeros", scale: float = 1.0,
           zero_point: int = 0, dtype: QDType = quint8, *,
           out: Optional[QTensor] = None) -> QTensor:
    """Quantized 1-d convolution (``torch.ao.nn.quantized.functional.conv1d``).

    Parameters
    ----------
    input : QTensor
        quint8 per-tensor, ``[N, C_in, L]`` or unbatched ``[C_in, L]``; any strides.
    weight : QTensor
        qint8 ``[C_out, C_in/groups, K]``, per-tensor or per-channel along axis 0.
    bias : array_like of float32, shape ``[C_out]``, or None
    stride, dilation, groups : int
    padding : int, (left, right), 'valid' or 'same'
        'same': left = dilation*(K-1)//2, the rest on the right (torch's float rule; stride 1).
    padding_mode : 'zeros'
        Anything else raises NotImplementedError (also a ValueError), as torch.
    scale, zero_point : output quantization parameters.
    dtype : qrt.quint8 (the only output dtype torch supports).
    out : QTensor, optional
        Preallocated contiguous quint8 output with exactly ``scale`` / ``zero_point``.
    """
    return _conv(_nn().Conv1d, input, weight, bias, stride, padding, dilation, groups,
                 padding_mode, scale, zero_point, dtype, out)


def conv1d_relu(input: QTensor, weight: QTensor, bias: Optional[np.ndarray] = None,
                stride: _IntOrSeq = 1, padding: _IntOrSeq = 0, dilation: _IntOrSeq = 1,
                groups: int = 1, padding_mode: str = "zeros", scale: float = 1.0,
                zero_point: int = 0, dtype: QDType = quint8, *,
                out: Optional[QTensor] = None) -> QTensor:
    """``conv1d`` fused with relu (torch's ``quantized::conv1d_relu``)."""
    return _conv(_nn().ConvReLU1d, input, weight, bias, stride, padding, dilation, groups,
                 padding_mode, scale, zero_point, dtype, out)


def _linear(cls, input, weight, bias, scale, zero_point, out):
    nn = _nn()
    nn._input_qtensor(input)
    # torch's functional linear takes the input's qparams when scale / zero_point are None
    scale = input.q_scale() if scale is None else scale
    zero_point = input.q_zero_point() if zero_point is None else zero_point
    from qrt._tensor import QTensor
    if not isinstance(weight, QTensor):
        raise TypeError(f"weight must be a qrt.QTensor, got {type(weight).__name__}")
    if weight.ndim != 2:
        raise ValueError(f"weight must be [out_features, in_features], got shape {weight.shape}")
    if input.ndim < 1 or input.shape[-1] != weight.shape[1]:
        raise ValueError(f"input has shape {input.shape}; the weight expects "
                         f"[..., {weight.shape[1]}]")
    m = cls(weight.shape[1], weight.shape[0], bias=bias is not None)
    m._set_output_qparams(scale, zero_point)
    m.set_weight_bias(weight, bias)
    return m(input, out=out)


def linear(input: QTensor, weight: QTensor, bias: Optional[np.ndarray] = None,
           scale: Optional[float] = 1.0, zero_point: Optional[int] = 0, *,
           out: Optional[QTensor] = None) -> QTensor:
    """Quantized linear (``torch.ao.nn.quantized.functional.linear``), qnnpack arithmetic.

    ``input`` quint8 ``[..., in]``; ``weight`` qint8 ``[out, in]`` per-tensor or per-channel
    (axis 0); ``bias`` float32 ``[out]`` or None; output quint8 ``[..., out]`` with ``scale`` /
    ``zero_point`` (None: the input's, as torch's functional linear).
    """
    return _linear(_nn().Linear, input, weight, bias, scale, zero_point, out)


def linear_relu(input: QTensor, weight: QTensor, bias: Optional[np.ndarray] = None,
                scale: Optional[float] = 1.0, zero_point: Optional[int] = 0, *,
                out: Optional[QTensor] = None) -> QTensor:
    """``linear`` fused with relu (torch's ``quantized::linear_relu``)."""
    return _linear(_nn().LinearReLU, input, weight, bias, scale, zero_point, out)


def linear_dynamic(x_float: np.ndarray, weight: QTensor, bias: Optional[np.ndarray] = None,
                   reduce_range: bool = False, *,
                   out: Optional[np.ndarray] = None) -> np.ndarray:
    """Dynamic quantized linear: float32 in, float32 out (``quantized::linear_dynamic``, qnnpack).

    The input is quantized per call with torch's ChooseQuantizationParams over its min/max;
    ``reduce_range`` is accepted and ignored, as torch's qnnpack engine does.
    """
    nn = _nn()
    from qrt._tensor import QTensor
    if not isinstance(weight, QTensor):
        raise TypeError(f"weight must be a qrt.QTensor, got {type(weight).__name__}")
    if weight.ndim != 2:
        raise ValueError(f"weight must be [out_features, in_features], got shape {weight.shape}")
    m = nn.DynamicLinear(weight.shape[1], weight.shape[0], bias=bias is not None,
                         reduce_range=reduce_range)
    m.set_weight_bias(weight, bias)
    return m(x_float, out=out)

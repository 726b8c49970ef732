# SPDX-License-Identifier: Apache-2.0
"""torch quantized module -> qrt.nn module (whose packed_arrays()/config() go into the blob)."""

from __future__ import annotations

from typing import Any, Dict

import numpy as np

_CLASSES = {"conv1d": "Conv1d", "conv_relu1d": "ConvReLU1d", "conv2d": "Conv2d",
            "conv_relu2d": "ConvReLU2d", "linear": "Linear",
            "linear_relu": "LinearReLU", "linear_dynamic": "DynamicLinear"}


def torch_weight(w) -> Dict[str, Any]:
    """A qint8 torch weight as numpy ints plus per-channel qparams (per-tensor broadcast)."""
    import torch
    ints = w.int_repr().numpy().copy()
    if w.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
        scales = w.q_per_channel_scales().numpy().astype(np.float64)
        zps = w.q_per_channel_zero_points().numpy().astype(np.int64)
        if w.q_per_channel_axis() != 0:
            raise ValueError("per-channel weights must be quantized along axis 0")
    elif w.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        scales = np.full(ints.shape[0], w.q_scale(), np.float64)
        zps = np.full(ints.shape[0], w.q_zero_point(), np.int64)
    else:
        raise ValueError(f"weight qscheme {w.qscheme()} is not supported")
    if w.dtype != torch.qint8:
        raise ValueError(f"weights must be qint8, got {w.dtype}")
    return {"ints": ints, "scales": scales, "zero_points": zps,
            "per_channel": w.qscheme() in (torch.per_channel_affine,
                                           torch.per_channel_symmetric)}


def qrt_module(kind: str, m):
    """Build the qrt.nn module equal to torch module ``m`` (packing done by qrt.nn)."""
    import qrt
    import qrt.nn as nn
    cls = getattr(nn, _CLASSES[kind])
    from_torch = getattr(cls, "from_torch", None)
    if from_torch is not None:
        return from_torch(m)
    if kind in ("conv1d", "conv_relu1d"):
        w = torch_weight(m.weight())
        bias = None if m.bias() is None else m.bias().detach().numpy().astype(np.float32)
        pad = m.padding if isinstance(m.padding, str) else int(m.padding[0])
        q = cls(int(m.in_channels), int(m.out_channels), int(m.kernel_size[0]),
                stride=int(m.stride[0]), padding=pad, dilation=int(m.dilation[0]),
                groups=int(m.groups), bias=bias is not None)
        q.set_weight_bias(_qweight(qrt, w), bias)
        _out_qparams(q, m)
        return q
    if kind in ("conv2d", "conv_relu2d"):
        w = torch_weight(m.weight())
        bias = None if m.bias() is None else m.bias().detach().numpy().astype(np.float32)
        q = cls(int(m.in_channels), int(m.out_channels), tuple(map(int, m.kernel_size)),
                stride=tuple(map(int, m.stride)), padding=tuple(map(int, m.padding)),
                dilation=tuple(map(int, m.dilation)), groups=int(m.groups),
                bias=bias is not None)
        q.set_weight_bias(_qweight(qrt, w), bias)
        _out_qparams(q, m)
        return q
    wt, bt = m._weight_bias()
    w = torch_weight(wt)
    bias = None if bt is None else bt.detach().numpy().astype(np.float32)
    q = cls(int(m.in_features), int(m.out_features), bias=bias is not None)
    q.set_weight_bias(_qweight(qrt, w), bias)
    if kind != "linear_dynamic":
        _out_qparams(q, m)
    return q


def _out_qparams(q, m):
    scale, zp = float(m.scale), int(m.zero_point)
    setter = getattr(q, "_set_output_qparams", None)
    if setter is not None:
        setter(scale, zp)
    else:
        q.scale, q.zero_point = scale, zp


def _qweight(qrt, w):
    if w["per_channel"]:
        return qrt.from_int_repr_per_channel(w["ints"], w["scales"], w["zero_points"], 0,
                                             qrt.qint8)
    return qrt.from_int_repr(w["ints"], float(w["scales"][0]), int(w["zero_points"][0]),
                             qrt.qint8)

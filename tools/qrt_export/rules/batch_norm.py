# SPDX-License-Identifier: Apache-2.0
"""Rules for the quantized batch norm: ``torch.ops.quantized.batch_norm1d(_relu)`` and
``quantized.batch_norm(_relu)`` on a [N, C] / [N, C, L] tensor -> ``batch_norm``
(qrt/ops/batch_norm.py). torch 2.13's eager and FX flows leave a BatchNorm1d that is not
folded into a conv in float (dequantize -> BatchNorm1d -> quantize: ``float_batch_norm``); this
op is what a model gets when it calls the quantized kernel itself."""

from __future__ import annotations

from qrt_export.rules import function
from qrt_export.rules._float import arg, param, scalar


def _targets():
    import torch
    q = torch.ops.quantized
    out = []
    for n in ("batch_norm1d", "batch_norm1d_relu", "batch_norm", "batch_norm_relu"):
        op = getattr(q, n, None)
        if op is not None:
            out.append(op)
            out += [getattr(op, o) for o in op.overloads()]
    return tuple(out)


@function(_targets, "quantized batch_norm1d / batch_norm1d_relu (torch.ops.quantized."
          "batch_norm1d, quantized.batch_norm on [N, C] / [N, C, L]; quint8, qint8, qint32)")
def qbatch_norm(cx, node, target):
    import torch
    x = arg(node, 0, "input")
    xv = cx.value(x)
    if not (isinstance(xv, torch.Tensor) and xv.is_quantized and
            xv.dtype in (torch.quint8, torch.qint8, torch.qint32)):
        cx.unsupported(node, "quantized batch_norm of a tensor that is not quint8/qint8/qint32")
    if xv.dim() not in (2, 3):
        cx.unsupported(node, f"quantized batch_norm of a {xv.dim()}-d tensor (qrt: [N, C] or "
                       "[N, C, L])")
    names = ("weight", "bias", "mean", "var")
    vals = [arg(node, i + 1, n) for i, n in enumerate(names)]
    for n, v in zip(names, vals):
        if v is None:
            cx.unsupported(node, f"quantized batch_norm without {n}")
    ps = [param(cx, node, v, n) for n, v in zip(names, vals)]
    eps = scalar(cx, node, arg(node, 5, "eps"), "eps")
    relu = "relu" in str(target)
    cx.emit("batch_norm", node, [x], ps,
            attrs={"eps": eps, "activation": "relu" if relu else "none"})

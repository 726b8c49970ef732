# SPDX-License-Identifier: Apache-2.0
"""Rules: quantized ConvTranspose1d -> conv_transpose1d (raw weights once); AdaptiveMaxPool1d."""

from __future__ import annotations

import numpy as np

from qrt_export.rules import function, module


def _types():
    import torch.ao.nn.quantized as nnq
    return (nnq.ConvTranspose1d,)


@module(_types, "quantized ConvTranspose1d (every stride/padding/output_padding/groups/dilation)")
def conv_transpose1d(cx, node, m):
    import torch
    from qrt_export._modules import torch_weight
    if getattr(m, "padding_mode", "zeros") != "zeros":
        cx.unsupported(node, f"ConvTranspose1d(padding_mode={m.padding_mode!r})")
    w = torch_weight(m.weight())
    c_out = int(m.out_channels)
    scales, zps = w["scales"], w["zero_points"]
    if w["per_channel"]:  # along axis 0 = input channels: not one scale per output channel
        cx.unsupported(node, "ConvTranspose1d with per-channel weights (torch quantizes "
                       "them along the input channels; qnnpack's default is per tensor)")
    arrays = {"weight": w["ints"],
              "weight_scale": np.full(c_out, scales[0], np.float64),
              "weight_zero_point": np.full(c_out, zps[0], np.int32)}
    b = m.bias()
    if b is not None:
        arrays["bias"] = b.detach().to(torch.float32).numpy().copy()
    params = [cx.b.constant(f"{node.name}.{k}", v) for k, v in arrays.items()]
    attrs = {"stride": int(m.stride[0]), "padding": int(m.padding[0]),
             "output_padding": int(m.output_padding[0]), "dilation": int(m.dilation[0]),
             "groups": int(m.groups), "weight_qscheme": "per_tensor_affine",
             "activation": "none"}
    cx.emit("conv_transpose1d", node, [node.args[0]], params, attrs)


# ---- adaptive max pooling (qrt/ops/adaptive_max_pool.py) ----------------------------------
def _amp():
    import torch
    return (torch.nn.AdaptiveMaxPool1d,)


@module(_amp, "adaptive_max_pool1d (nn.AdaptiveMaxPool1d, F.adaptive_max_pool1d)")
def adaptive_max_pool1d_module(cx, node, m):
    if m.return_indices:
        cx.unsupported(node, "AdaptiveMaxPool1d(return_indices=True)")
    cx.emit("adaptive_max_pool1d", node, [node.args[0]],
            attrs={"output_size": cx.int1(m.output_size)})


def _amp_fn():
    import torch
    return (torch.nn.functional.adaptive_max_pool1d, torch.adaptive_max_pool1d)


@function(_amp_fn, "F.adaptive_max_pool1d")
def adaptive_max_pool1d_fn(cx, node, target):
    kw = dict(zip(("input", "output_size", "return_indices"), node.args))
    kw.update(node.kwargs)
    if kw.get("return_indices"):
        cx.unsupported(node, "adaptive_max_pool1d(return_indices=True)")
    cx.emit("adaptive_max_pool1d", node, [node.args[0]],
            attrs={"output_size": cx.int1(kw["output_size"])})

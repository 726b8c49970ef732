# SPDX-License-Identifier: Apache-2.0
"""Models still in their quantization-aware-training state: converted before export.

A model prepared with ``torch.ao.quantization.prepare_qat`` (eager) or
``torch.ao.quantization.quantize_fx.prepare_qat_fx`` (FX) carries FakeQuantize modules.
``qrt_export.export`` converts a copy with torch.ao (``convert`` / ``convert_fx``, in eval
mode, under the qnnpack engine) and exports the converted model, so users need not know the
convert step. The user's model is left as it was (training mode included).
"""

from __future__ import annotations

import copy

__all__ = ["is_qat_prepared", "convert_qat"]


def is_qat_prepared(model) -> bool:
    """True when ``model`` holds FakeQuantize modules (prepare_qat / prepare_qat_fx)."""
    from torch.ao.quantization.fake_quantize import FakeQuantizeBase
    return any(isinstance(m, FakeQuantizeBase) for m in model.modules())


def _is_fx_observed(model) -> bool:
    import torch.fx as fx
    if not isinstance(model, fx.GraphModule):
        return False
    try:
        from torch.ao.quantization.fx.graph_module import _is_observed_module
        return bool(_is_observed_module(model))
    except ImportError:  # older/newer torch: the attribute prepare_fx leaves in meta
        return "_observed_graph_module_attrs" in getattr(model, "meta", {})


def convert_qat(model):
    """A converted (quantized) copy of a QAT-prepared model; eager or FX."""
    import torch
    from torch.ao.quantization import convert
    from torch.ao.quantization.quantize_fx import convert_fx
    was_training = model.training
    try:
        m = copy.deepcopy(model).eval()
    finally:
        model.train(was_training)
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = "qnnpack"
    try:
        with torch.no_grad():
            if _is_fx_observed(m):
                return convert_fx(m)
            return convert(m, inplace=False)
    finally:
        torch.backends.quantized.engine = old

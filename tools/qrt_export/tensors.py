# SPDX-License-Identifier: Apache-2.0
"""``qrt-export --tensors ckpt.pt -o weights.bin``: a torch state_dict as a qrt tensor file.

Quantized tensors keep their qparams exactly (per-tensor scale as f64, per-channel scales as
f64 and zero points as s64, as torch holds them); float and integer tensors are stored as
they are. A quantized Linear's ``<prefix>._packed_params._packed_params`` (weight, bias)
tuple becomes ``<prefix>.weight`` and ``<prefix>.bias``. Entries that are not tensors
(``torch.dtype`` markers, ...) are skipped and listed in the file's metadata.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Tuple

import qrt

__all__ = ["state_dict_to_qrt", "export_tensors"]

_PACKED = "._packed_params._packed_params"


def _to_qrt(name, t):
    import torch
    if t.is_quantized:
        dt = {torch.quint8: qrt.quint8, torch.qint8: qrt.qint8, torch.qint32: qrt.qint32}.get(
            t.dtype)
        if dt is None:
            raise ValueError(f"{name}: quantized dtype {t.dtype} is not supported by qrt")
        ints = t.int_repr().contiguous().numpy()
        qs = t.qscheme()
        if qs in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            return qrt.from_int_repr(ints.copy(), float(t.q_scale()), int(t.q_zero_point()), dt)
        if qs in (torch.per_channel_affine, torch.per_channel_symmetric):
            return qrt.from_int_repr_per_channel(
                ints.copy(), t.q_per_channel_scales().to(torch.float64).numpy(),
                t.q_per_channel_zero_points().to(torch.int64).numpy(),
                int(t.q_per_channel_axis()), dt)
        raise ValueError(f"{name}: qscheme {qs} is not supported by qrt (per-tensor and "
                         "per-channel affine only)")
    return t.detach().contiguous().cpu().numpy().copy()


def state_dict_to_qrt(sd) -> Tuple[Dict[str, Any], List[str]]:
    """{name: QTensor/ndarray} for qrt.save, plus the names of skipped non-tensor entries."""
    import torch
    if not isinstance(sd, dict):
        raise TypeError(f"expected a state_dict (dict), got {type(sd).__name__}")
    if "state_dict" in sd and isinstance(sd["state_dict"], dict):
        sd = sd["state_dict"]
    out: Dict[str, Any] = {}
    skipped: List[str] = []
    for k, v in sd.items():
        if isinstance(v, torch.Tensor):
            out[k] = _to_qrt(k, v)
        elif k.endswith(_PACKED) and isinstance(v, (tuple, list)):
            prefix = k[:-len(_PACKED)]
            for part, t in zip(("weight", "bias"), v):
                if isinstance(t, torch.Tensor):
                    out[f"{prefix}.{part}"] = _to_qrt(f"{prefix}.{part}", t)
        elif isinstance(v, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in v):
            for i, t in enumerate(v):
                out[f"{k}.{i}"] = _to_qrt(f"{k}.{i}", t)
        else:
            skipped.append(k)
    return out, skipped


def export_tensors(ckpt, path) -> int:
    """Write a checkpoint (a path or a state_dict) as a qrt tensor file; returns its size."""
    import torch
    src = None
    if isinstance(ckpt, (str, os.PathLike)):
        src = os.fspath(ckpt)
        ckpt = torch.load(src, map_location="cpu", weights_only=True)
    tensors, skipped = state_dict_to_qrt(ckpt)
    meta = {"exporter": "qrt-export --tensors", "torch_version": torch.__version__}
    if src:
        meta["source"] = src
    if skipped:
        meta["skipped"] = skipped
    return qrt.save(tensors, path, meta=meta)


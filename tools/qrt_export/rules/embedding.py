# SPDX-License-Identifier: Apache-2.0
"""Rules: nn.Embedding / nn.EmbeddingBag (float tables) and torch's weight-only quantized
torch.ao.nn.quantized.Embedding / EmbeddingBag (eager ``float_qparams_weight_only_qconfig``
and FX with a qconfig mapping using it) -> qrt/ops/embedding.py. Their index operands must be
int64/int32 model inputs (docs/export.md "Embeddings")."""

from __future__ import annotations

import numpy as np

from qrt_export.rules import function, module
from qrt_export.rules._float import array, is_node, param


def _nnq():
    import torch.ao.nn.quantized as nnq
    return nnq


def _nn():
    import torch.nn as nn
    return nn


def _call_args(node, names):
    out = dict(zip(names, node.args))
    out.update(node.kwargs)
    return [out.get(n) for n in names]


def _index(cx, node, a, what):
    """``a`` must be an int64/int32 tensor that is a model input (qrt rule R28)."""
    import torch
    v = cx.value(a)
    if not is_node(a) or not isinstance(v, torch.Tensor) or v.is_quantized or \
            v.dtype not in (torch.int64, torch.int32):
        cx.unsupported(node, f"{what} of dtype {getattr(v, 'dtype', type(v).__name__)} "
                       "(int64/int32 index tensors only)")
    if a.op != "placeholder":
        cx.unsupported(node, f"{what} computed inside the graph ({a.name}): qrt takes indices "
                       "and offsets straight from the model's inputs")
    return a


def _weights(cx, node, a):
    import torch
    v = cx.value(a)
    if not is_node(a) or not isinstance(v, torch.Tensor) or v.is_quantized or \
            v.dtype != torch.float32:
        cx.unsupported(node, "per_sample_weights that are not a float32 tensor")
    return a


def _bag_operands(cx, node, include_last, x, offsets, psw):
    """(inputs, attrs) shared by the float and quantized EmbeddingBag rules."""
    ins = [_index(cx, node, x, "EmbeddingBag input")]
    nd = cx.value(x).dim()
    if offsets is not None:
        if nd != 1:
            cx.unsupported(node, f"EmbeddingBag with offsets on a {nd}-d input (torch takes "
                           "1-d indices with offsets)")
        ins.append(_index(cx, node, offsets, "EmbeddingBag offsets"))
    elif nd != 2:
        cx.unsupported(node, f"EmbeddingBag without offsets on a {nd}-d input (2-d only)")
    elif include_last:
        cx.unsupported(node, "EmbeddingBag(include_last_offset=True) on a 2-d input")
    if psw is not None:
        ins.append(_weights(cx, node, psw))
    attrs = {"offsets": offsets is not None, "include_last_offset": bool(include_last),
             "per_sample_weights": psw is not None}
    return ins, attrs


def _refuse_max_norm(cx, node, max_norm, what):
    if max_norm is not None:
        cx.unsupported(node, f"{what}(max_norm={max_norm}): torch renormalises the table "
                       "rows in place at every call; qrt runs fixed tables (max_norm=None only)")


_BAG_ARGS = ("input", "offsets", "per_sample_weights")


# ---- weight-only quantized tables (registered first; nnq.EmbeddingBag subclasses Embedding) --
def _qtable(cx, node, m, what, bits_ok):
    import torch
    w = m.weight()
    if w.qscheme() != torch.per_channel_affine_float_qparams:
        cx.unsupported(node, f"{what} with {w.qscheme()} weights "
                       "(per_channel_affine_float_qparams only)")
    bits = {torch.quint8: 8, torch.quint4x2: 4}.get(w.dtype)
    if bits not in bits_ok:
        cx.unsupported(node, f"{what} with {w.dtype} weights")
    # torch's table is [N, D] (4-bit: D rounded up to even, and so is its output); its codes
    # one byte each, or (4-bit) packed in pairs, low nibble first, flattened by int_repr
    n, dim = (int(d) for d in w.shape)
    codes = np.ascontiguousarray(w.int_repr().numpy(), dtype=np.uint8).reshape(
        n, dim if bits == 8 else (dim + 1) // 2)
    scales = w.q_per_channel_scales().numpy().astype(np.float32)
    zps = w.q_per_channel_zero_points().numpy().astype(np.float32)
    b = cx.b
    params = [b.constant(f"{node.name}.weight", codes),
              b.constant(f"{node.name}.scales", scales),
              b.constant(f"{node.name}.zero_points", zps)]
    return params, {"bits": bits, "embedding_dim": dim}


@module(lambda: (_nnq().EmbeddingBag,), "weight-only quantized EmbeddingBag "
        "(torch.ao.nn.quantized.EmbeddingBag, quint8/quint4x2; a sum, as torch computes)")
def qembedding_bag(cx, node, m):
    if getattr(m, "pruned_weights", False):
        cx.unsupported(node, "quantized EmbeddingBag with pruned weights")
    if len(node.args) > 3 or node.kwargs.get("compressed_indices_mapping") is not None:
        cx.unsupported(node, "quantized EmbeddingBag with compressed_indices_mapping")
    params, attrs = _qtable(cx, node, m, "quantized EmbeddingBag", (8, 4))
    ins, a = _bag_operands(cx, node, m.include_last_offset, *_call_args(node, _BAG_ARGS))
    cx.emit("qembedding_bag", node, ins, params, dict(attrs, **a))


@module(lambda: (_nnq().Embedding,), "weight-only quantized Embedding "
        "(torch.ao.nn.quantized.Embedding, quint8, float_qparams_weight_only_qconfig)")
def qembedding(cx, node, m):
    params, attrs = _qtable(cx, node, m, "quantized Embedding", (8,))
    cx.emit("qembedding", node, [_index(cx, node, node.args[0], "Embedding input")], params,
            attrs)


# ---- float tables ------------------------------------------------------------------------------
def _F():
    import torch
    return torch.nn.functional


def _pad(padding_idx, n_rows):
    if padding_idx is None:
        return None
    p = int(padding_idx)
    return p + n_rows if p < 0 else p   # torch's normalisation of a negative padding_idx


@module(lambda: (_nn().Embedding,), "float Embedding (nn.Embedding; padding_idx, max_norm=None)")
def embedding(cx, node, m):
    _refuse_max_norm(cx, node, m.max_norm, "Embedding")
    x = _index(cx, node, node.args[0] if node.args else node.kwargs.get("input"),
               "Embedding input")
    cx.emit("embedding", node, [x], [cx.constant(f"{node.name}.weight", array(m.weight))])


@function(lambda: (_F().embedding,), "F.embedding (float table; max_norm=None)")
def embedding_fn(cx, node, target):
    x, w, _, max_norm = _call_args(node, ("input", "weight", "padding_idx", "max_norm"))
    _refuse_max_norm(cx, node, max_norm, "embedding")
    cx.emit("embedding", node, [_index(cx, node, x, "embedding input")],
            [param(cx, node, w, "weight")])


@module(lambda: (_nn().EmbeddingBag,), "float EmbeddingBag (nn.EmbeddingBag: sum/mean/max, "
        "offsets or 2-d input, include_last_offset, per_sample_weights, padding_idx)")
def embedding_bag(cx, node, m):
    _refuse_max_norm(cx, node, m.max_norm, "EmbeddingBag")
    ins, attrs = _bag_operands(cx, node, m.include_last_offset, *_call_args(node, _BAG_ARGS))
    attrs["mode"] = str(m.mode)
    attrs["padding_idx"] = _pad(m.padding_idx, int(m.weight.shape[0]))
    cx.emit("embedding_bag", node, ins, [cx.constant(f"{node.name}.weight", array(m.weight))],
            attrs)


@function(lambda: (_F().embedding_bag,), "F.embedding_bag (float table; max_norm=None)")
def embedding_bag_fn(cx, node, target):
    names = ("input", "weight", "offsets", "max_norm", "norm_type", "scale_grad_by_freq",
             "mode", "sparse", "per_sample_weights", "include_last_offset", "padding_idx")
    a = dict(zip(names, _call_args(node, names)))
    _refuse_max_norm(cx, node, a["max_norm"], "embedding_bag")
    mode = a["mode"] if a["mode"] is not None else "mean"
    if mode not in ("sum", "mean", "max"):
        cx.unsupported(node, f"embedding_bag(mode={mode!r})")
    w = param(cx, node, a["weight"], "weight")
    ins, attrs = _bag_operands(cx, node, bool(a["include_last_offset"]), a["input"],
                               a["offsets"], a["per_sample_weights"])
    attrs["mode"] = mode
    attrs["padding_idx"] = _pad(a["padding_idx"], int(cx.b.tensors[w].shape[0]))
    cx.emit("embedding_bag", node, ins, [w], attrs)

# SPDX-License-Identifier: Apache-2.0
"""Rules for self-attention and transformer encoders: nn.MultiheadAttention,
nn.TransformerEncoderLayer and nn.TransformerEncoder (torch.fx leaf modules) lowered to qrt's
float ops (float_linear, float_mul, float_matmul, float_softmax, float_layer_norm, float_add,
float_gelu, relu) plus view/permute, and ``linear_dynamic`` for the feed-forward Linears that
``quantize_dynamic`` swaps (MultiheadAttention's ``out_proj``, a NonDynamicallyQuantizableLinear,
and its packed ``in_proj_weight`` stay float).

The math follows torch's slow path (``F.multi_head_attention_forward`` with need_weights=True):
q, k, v = x W_q^T + b_q, ...; per head ``softmax((q * sqrt(1/d)) @ k^T) @ v``; heads joined;
out_proj. torch's fused kernels (``_native_multi_head_attention``,
``_transformer_encoder_layer_fwd``, scaled_dot_product_attention) compute the same values in
another order: results agree within the float contract (docs/float-ops.md), not bit for bit.
Self-attention only (query is key is value), no bias_k/bias_v, no add_zero_attn.

Masks (``attn_mask`` 2-d [L, S] or 3-d [N*heads, L, S], ``key_padding_mask`` [N, S]; the
encoders' ``mask`` / ``src_mask`` and ``src_key_padding_mask``; ``is_causal`` is torch's hint
that the mask given is causal and changes no value): bool masks become torch's float form
(True -> -inf, F._canonical_mask), the two are summed (attn_mask + key_padding_mask, as torch
merges them) and added to the scores before the softmax (torch's ``baddbmm(mask, q, k^T)``);
a fully masked row gives NaN, as torch's slow path. A mask computed from constants only (a
buffer, ``nn.Transformer.generate_square_subsequent_mask(x.size(1))``) is baked into the file
(its nodes fold away); a float32 mask computed from the model inputs is an op input (bool
tensors cannot be qrt inputs: pass the float form, 0 keeps and -inf masks).
TransformerEncoder with a key padding mask: where torch takes its nested-tensor path (eval,
batch_first, no grad...), its padded positions come out 0; the lowering then multiplies the
output by the keep mask (constant, or exp(mask) for a 0 / -inf input mask), as torch's value
at export shows.

Intermediate ops get names of their own (``<node>.q``, ``<node>.l0.attn``...): the export
check compares the last op, named after the torch node, with torch's value.
"""

from __future__ import annotations

import math

from qrt_export.rules import function, method, module
from qrt_export.rules._float import array, is_node


def _nn():
    import torch.nn as nn
    return nn


class _H:
    """A lowered tensor: blob index, torch value at the example batch and at batch + 1."""

    def __init__(self, t, v, v2):
        self.t, self.v, self.v2 = t, v, v2


class _Seq:
    """Emits a chain of ops for one torch node, recomputing each intermediate value with torch
    (its shape, and from the batch + 1 run whether dim 0 is the batch)."""

    def __init__(self, cx, node):
        from qrt_export._export import _source
        self.cx, self.node, self.src = cx, node, _source(node, cx.gm)
        self.n = 0

    def input(self, x):
        cx = self.cx
        v2 = cx.v2.get(x.name) if cx.v2 is not None else None
        return _H(cx.tensor(x), cx.value(x), v2)

    def op(self, kind, ins, fn, params=(), attrs=None, name=None, out=None):
        """``kind`` on handles ``ins``; ``fn`` computes torch's value from theirs. ``out``: a
        tensor index already made for the result (the node's own output)."""
        import torch
        with torch.no_grad():
            v = fn(*[h.v for h in ins])
            v2 = None
            if all(h.v2 is not None for h in ins):
                try:
                    v2 = fn(*[h.v2 for h in ins])
                except Exception:  # noqa: BLE001 - only used to tell the batch dim
                    v2 = None
        self.n += 1
        name = name or f"{self.node.name}.{self.n}_{kind}"
        t = out if out is not None else self.cx.new_tensor(name, v, v2)
        self.cx.b.op(kind, name, [h.t for h in ins], [t], list(params), attrs or {}, self.src)
        return _H(t, v, v2)

    def const(self, label, t):
        return self.cx.constant(f"{self.node.name}.{label}", array(t))

    # ---- building blocks ----------------------------------------------------------------
    def linear(self, h, m, label, w=None, b=None):
        """``m`` (a float nn.Linear or a dynamic quantized Linear), or float ``w``/``b``."""
        import torch.nn.functional as F
        from qrt_export.rules.core import _layers
        if m is not None and isinstance(m, _layers()[2].Linear):
            import numpy as np

            import qrt.ops
            from qrt_export._modules import qrt_module
            if getattr(m, "_packed_params", None) is not None and \
                    m._packed_params.dtype != __import__("torch").qint8:
                self.cx.unsupported(self.node, f"{label}: float16 dynamic quantization")
            attrs, arrays = qrt.ops.get("linear_dynamic").encode(qrt_module("linear_dynamic", m))
            ps = [self.cx.constant(f"{self.node.name}.{label}.{k}", np.asarray(a))
                  for k, a in arrays.items()]
            return self.op("linear_dynamic", [h], lambda x: m(x), ps, attrs,
                           name=f"{self.node.name}.{label}")
        if m is not None:
            if not isinstance(m, _nn().Linear):
                self.cx.unsupported(self.node, f"{label} of type {type(m).__name__}")
            w, b = m.weight.detach(), None if m.bias is None else m.bias.detach()
        ps = [self.const(f"{label}.weight", w)] + ([] if b is None else
                                                    [self.const(f"{label}.bias", b)])
        return self.op("float_linear", [h], lambda x: F.linear(x, w, b), ps,
                       name=f"{self.node.name}.{label}")

    def layer_norm(self, h, m, label, out=None):
        """LayerNorm module ``m``; ``out``: the node's own output tensor (named after it)."""
        import torch.nn.functional as F
        if not isinstance(m, _nn().LayerNorm) or m.weight is None or m.bias is None:
            self.cx.unsupported(self.node, f"{label}: {type(m).__name__} (a LayerNorm with "
                                "weight and bias is expected)")
        ns = [int(d) for d in m.normalized_shape]
        name = self.node.name if out is not None else f"{self.node.name}.{label}"
        return self.op("float_layer_norm", [h],
                       lambda x: F.layer_norm(x, ns, m.weight, m.bias, m.eps),
                       [self.const(f"{label}.weight", m.weight.detach()),
                        self.const(f"{label}.bias", m.bias.detach())],
                       {"normalized_shape": ns, "eps": float(m.eps)}, name=name, out=out)

    def add(self, a, b, out=None, name=None):
        return self.op("float_add", [a, b], lambda x, y: x + y, out=out, name=name)

    def permute(self, h, dims):
        return self.op("permute", [h], lambda x: x.permute(*dims).contiguous(),
                       attrs={"dims": list(dims)})

    def view(self, h, shape, copy_dims):
        def fn(x):
            s = [x.shape[c] if c >= 0 else d for d, c in zip(shape, copy_dims)]
            return x.reshape(s)
        return self.op("view", [h], fn, attrs={"shape": list(shape), "copy_dims": list(copy_dims)})

    def attention(self, h, m, label, batch_first, mask=None):
        """MultiheadAttention(x, x, x) on handle ``h``; returns the attention output handle.
        ``mask``: a :class:`_Mask` (added to the scores) or None."""
        import torch
        cx, node = self.cx, self.node
        if not m._qkv_same_embed_dim or m.in_proj_weight is None:
            cx.unsupported(node, f"{label}: MultiheadAttention with kdim/vdim != embed_dim")
        if m.bias_k is not None or m.bias_v is not None:
            cx.unsupported(node, f"{label}: MultiheadAttention with add_bias_kv")
        if m.add_zero_attn:
            cx.unsupported(node, f"{label}: MultiheadAttention with add_zero_attn")
        E, H = int(m.embed_dim), int(m.num_heads)
        hd = E // H
        if not batch_first:   # [L, B, E] -> [B, L, E]
            h = self.permute(h, (1, 0, 2))
        W = m.in_proj_weight.detach()
        Bi = None if m.in_proj_bias is None else m.in_proj_bias.detach()
        qkv = []
        for k, nm in enumerate("qkv"):
            p = self.linear(h, None, f"{label}.{nm}", W[k * E:(k + 1) * E],
                            None if Bi is None else Bi[k * E:(k + 1) * E])
            p = self.view(p, (-1, -1, H, hd), (0, 1, -1, -1))      # [B, L, H, hd]
            qkv.append(p)
        q = self.permute(qkv[0], (0, 2, 1, 3))                       # [B, H, L, hd]
        kt = self.permute(qkv[1], (0, 2, 3, 1))                      # [B, H, hd, L]
        v = self.permute(qkv[2], (0, 2, 1, 3))                       # [B, H, L, hd]
        s = math.sqrt(1.0 / float(hd))
        q = self.op("float_mul", [q], lambda x: x * s, attrs={"scalar": s})
        a = self.op("float_matmul", [q, kt], torch.matmul)           # [B, H, L, L]
        if mask is not None:
            a = mask.add_to(self, a, H)
        a = self.op("float_softmax", [a], lambda x: torch.softmax(x, -1), attrs={"dim": -1})
        o = self.op("float_matmul", [a, v], torch.matmul)            # [B, H, L, hd]
        o = self.permute(o, (0, 2, 1, 3))                            # [B, L, H, hd]
        o = self.view(o, (-1, -1, E), (0, 1, -1))                    # [B, L, E]
        o = self.linear(o, m.out_proj, f"{label}.out_proj")
        if not batch_first:
            o = self.permute(o, (1, 0, 2))
        return o

    def activation(self, h, layer, label):
        import torch
        import torch.nn.functional as F
        act = layer.activation
        kind = getattr(layer, "activation_relu_or_gelu", 0)
        if act is F.relu or isinstance(act, _nn().ReLU) or kind == 1:
            return self.op("relu", [h], torch.relu, name=f"{self.node.name}.{label}")
        if act is F.gelu or (isinstance(act, _nn().GELU) and act.approximate == "none") or \
                kind == 2:
            return self.op("float_gelu", [h], F.gelu, attrs={"approximate": "none"},
                           name=f"{self.node.name}.{label}")
        self.cx.unsupported(self.node, f"{label}: encoder layer activation {act!r} (relu and "
                            "gelu are supported)")

    def encoder_layer(self, x, m, label, batch_first, out=None, mask=None):
        def sa(h):
            return self.attention(h, m.self_attn, f"{label}.self_attn", batch_first, mask)

        def ff(h):
            y = self.linear(h, m.linear1, f"{label}.linear1")
            y = self.activation(y, m, f"{label}.act")
            return self.linear(y, m.linear2, f"{label}.linear2")
        if m.norm_first:
            x = self.add(x, sa(self.layer_norm(x, m.norm1, f"{label}.norm1")))
            return self.add(x, ff(self.layer_norm(x, m.norm2, f"{label}.norm2")), out=out,
                            name=None if out is None else self.node.name)
        x = self.layer_norm(self.add(x, sa(x)), m.norm1, f"{label}.norm1")
        return self.layer_norm(self.add(x, ff(x)), m.norm2, f"{label}.norm2", out=out)


def _arg(node, i, name, default=None):
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(name, default)


def _check_input(cx, node, x, what):
    import torch
    if not is_node(x) or not isinstance(cx.value(x), torch.Tensor):
        cx.unsupported(node, f"{what} on a non-tensor input")
    v = cx.value(x)
    if v.is_quantized or v.dtype != torch.float32:
        cx.unsupported(node, f"{what} on a {v.dtype} tensor (float32 only)")
    if v.dim() != 3:
        cx.unsupported(node, f"{what} on a {v.dim()}-d input (batched 3-d inputs only)")


# ---- masks --------------------------------------------------------------------------------
def _mask_names(m):
    """((position, keyword names), ...) of the attention-mask and key-padding-mask arguments
    of module ``m``'s forward, or None for other modules."""
    nn = _nn()
    if isinstance(m, nn.MultiheadAttention):
        return (5, ("attn_mask",)), (3, ("key_padding_mask",))
    if isinstance(m, (nn.TransformerEncoderLayer, nn.TransformerEncoder)):
        return (1, ("src_mask", "mask")), (2, ("src_key_padding_mask",))
    return None


def _arg_any(node, i, names):
    if len(node.args) > i:
        return node.args[i]
    for nm in names:
        if nm in node.kwargs:
            return node.kwargs[nm]
    return None


def _shape_only(n):
    """x.size(...), x.dim(), x.shape: their value does not depend on x's values."""
    import operator
    if n.op == "call_method" and n.target in ("size", "dim"):
        return True
    return n.op == "call_function" and n.target in (getattr, operator.getitem) and \
        len(n.args) >= 2 and n.args[1] in ("shape", "ndim") and n.target is getattr


def _subgraph(a):
    """(nodes computing ``a`` except placeholders and shape reads, reaches a model input)."""
    seen, stack, reaches = set(), [a], False
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        if n.op == "placeholder":
            reaches = True
            continue
        seen.add(n)
        if _shape_only(n):
            continue
        stack.extend(n.all_input_nodes)
    return seen, reaches


def _fold_constant_masks(cx):
    """Mask arguments computed from constants only: their nodes are not lowered (the rule
    bakes the mask's value), when nothing else reads them."""
    users_ok = set()
    masks = []
    for node in cx.gm.graph.nodes:
        if node.op != "call_module":
            continue
        try:
            names = _mask_names(cx.gm.get_submodule(node.target))
        except AttributeError:
            names = None
        if names is None:
            continue
        users_ok.add(node)
        for i, nm in names:
            a = _arg_any(node, i, nm)
            if is_node(a):
                masks.append(a)
    for a in masks:
        nodes, reaches = _subgraph(a)
        if reaches:
            continue
        for n in nodes:
            if n.op in ("call_function", "call_method", "call_module") and not _shape_only(n) \
                    and all(u in nodes or u in users_ok for u in n.users):
                cx.done.add(n.name)


from qrt_export.rules import prepass  # noqa: E402

prepass(_fold_constant_masks)


class _Mask:
    """The additive float mask of one attention node: a constant (torch tensor of 4 dims,
    broadcastable to the scores [B, heads, L, S]) or a lowered handle of 4 dims."""

    def __init__(self, const=None, handle=None, pad=None):
        self.const, self.handle = const, handle
        self.pad = pad  # the key padding mask: ("const", bool [N, S]) / ("input", handle [N, S])
        self._cst = None

    def add_to(self, seq, a, heads):
        if self.handle is not None:
            return seq.op("float_add", [a, self.handle], lambda x, y: x + y)
        if self._cst is None:
            self._cst = seq.const("mask", self.const)
        c = self.const
        return seq.op("float_add", [a], lambda x: x + c, [self._cst])


def _one_mask(cx, node, a, what, kind):
    """None, ("const", float tensor) or ("input", node) for a mask argument."""
    import torch
    if a is None or a is False:
        return None
    if not is_node(a):
        cx.unsupported(node, f"{what}: {kind} that is not a tensor")
    v = cx.value(a)
    if not isinstance(v, torch.Tensor):
        cx.unsupported(node, f"{what}: {kind} that is not a tensor")
    _, reaches = _subgraph(a)
    if reaches:
        if v.dtype != torch.float32:
            cx.unsupported(node, f"{what}: a {v.dtype} {kind} computed from the model inputs "
                           "(qrt takes float32 masks as inputs: 0 keeps, -inf masks; bool "
                           "masks only as constants)")
        return ("input", a)
    if v.dtype == torch.bool:
        return ("const", torch.zeros(v.shape).masked_fill(v, float("-inf")))
    if v.dtype != torch.float32:
        cx.unsupported(node, f"{what}: a {v.dtype} {kind} (bool or float32)")
    return ("const", v.detach().clone())


def _masks(cx, node, seq, m, what, heads, batch_first_x):
    """The node's merged additive mask (:class:`_Mask`) or None."""
    (ia, na), (ik, nk) = _mask_names(m)
    attn = _one_mask(cx, node, _arg_any(node, ia, na), what, "attention mask")
    kpm = _one_mask(cx, node, _arg_any(node, ik, nk), what, "key padding mask")
    if attn is None and kpm is None:
        return None
    x = cx.value(_arg(node, 0, "query" if isinstance(m, _nn().MultiheadAttention) else "src"))
    n_b, L = (x.shape[0], x.shape[1]) if batch_first_x else (x.shape[1], x.shape[0])
    parts = []
    if attn is not None:
        v = cx.value(attn[1]) if attn[0] == "input" else attn[1]
        if v.dim() == 2 and tuple(v.shape) == (L, L):
            shape, copy = (1, 1, L, L), (-1, -1, -1, -1)
        elif v.dim() == 3 and tuple(v.shape) == (n_b * heads, L, L):
            shape, copy = (-1, heads, L, L), (-1, -1, -1, -1)
        else:
            cx.unsupported(node, f"{what}: attention mask of shape {tuple(v.shape)} (expected "
                           f"[L, S] = [{L}, {L}] or [N*heads, L, S])")
        parts.append((attn, shape, copy))
    if kpm is not None:
        v = cx.value(kpm[1]) if kpm[0] == "input" else kpm[1]
        if v.dim() != 2 or tuple(v.shape) != (n_b, L):
            cx.unsupported(node, f"{what}: key padding mask of shape {tuple(v.shape)} "
                           f"(expected [N, S] = [{n_b}, {L}])")
        parts.append((kpm, (-1, 1, 1, L), (0, -1, -1, -1)))
    consts = [p[0][1].reshape(p[1]) for p in parts if p[0][0] == "const"]
    inputs = [p for p in parts if p[0][0] == "input"]
    const = None
    for c in consts:  # torch: attn_mask + key_padding_mask
        const = c if const is None else const + c
    pad = None
    if kpm is not None:
        pad = ("const", kpm[1] != 0) if kpm[0] == "const" else ("input", seq.input(kpm[1]))
    if not inputs:
        return _Mask(const=const, pad=pad)
    h = None
    for (kind_a, shape, copy) in inputs:
        hi = seq.view(seq.input(kind_a[1]), shape, copy)
        h = hi if h is None else seq.op("float_add", [h, hi], lambda x, y: x + y)
    if const is not None:
        c = const
        h = seq.op("float_add", [h], lambda x: x + c, [seq.const("mask", c)])
    return _Mask(handle=h, pad=pad)


def _finish_with(seq, h, out_t):
    """Copy handle ``h`` into the node's output tensor ``out_t`` (a view of the same shape)."""
    nd = h.v.dim()
    return seq.op("view", [h], lambda x: x.clone(), attrs={"shape": [-1] * nd,
                                                           "copy_dims": list(range(nd))},
                  name=seq.node.name, out=out_t)


@module(lambda: (_nn().MultiheadAttention,), "float MultiheadAttention self-attention "
        "(query is key is value; batch_first or not; attn_mask 2-d / 3-d and key_padding_mask, "
        "bool or float; need_weights output unused)")
def multihead_attention(cx, node, m):
    q, k, v = (_arg(node, i, nm) for i, nm in ((0, "query"), (1, "key"), (2, "value")))
    if not (q is k is v):
        cx.unsupported(node, "MultiheadAttention with distinct query/key/value (self-attention "
                       "only: query is key is value)")
    _check_input(cx, node, q, "MultiheadAttention")
    for u in cx.users(node):  # (attn_output, attn_weights): weights must be unused
        if u.op == "call_function" and len(u.args) == 2 and u.args[1] in (1, -1):
            if u.users:
                cx.unsupported(node, "MultiheadAttention attention weights used (qrt returns "
                               "the attention output only)")
            cx.done.add(u.name)
    seq = _Seq(cx, node)
    mask = _masks(cx, node, seq, m, "MultiheadAttention", int(m.num_heads), bool(m.batch_first))
    h = seq.attention(seq.input(q), m, "attn", bool(m.batch_first), mask)
    val = cx.value(node)
    v2s = cx.v2.get(node.name) if cx.v2 is not None else None
    out_t = cx.new_tensor(f"{node.name}.0", val[0],
                          v2s[0] if isinstance(v2s, (tuple, list)) else None)
    cx.tensor_of[f"{node.name}.0"] = out_t
    _finish_with(seq, h, out_t)


def _layer_args(cx, node, what):
    x = _arg(node, 0, "src")
    _check_input(cx, node, x, what)
    if _arg(node, 3, "is_causal") and _arg_any(node, 1, ("src_mask", "mask")) is None:
        cx.unsupported(node, f"{what} with is_causal=True and no mask (torch needs the mask "
                       "too: is_causal is a hint)")
    return x


@module(lambda: (_nn().TransformerEncoderLayer,), "float / quantize_dynamic "
        "TransformerEncoderLayer (relu or gelu, norm_first, batch_first; src_mask, "
        "src_key_padding_mask, is_causal)")
def encoder_layer(cx, node, m):
    x = _layer_args(cx, node, "TransformerEncoderLayer")
    seq = _Seq(cx, node)
    bf = bool(m.self_attn.batch_first)
    mask = _masks(cx, node, seq, m, "TransformerEncoderLayer", int(m.self_attn.num_heads), bf)
    seq.encoder_layer(seq.input(x), m, "l0", bf, out=cx.tensor(node), mask=mask)


@module(lambda: (_nn().TransformerEncoder,), "float / quantize_dynamic TransformerEncoder "
        "(its TransformerEncoderLayers and final norm; mask, src_key_padding_mask, is_causal)")
def encoder(cx, node, m):
    import torch
    x = _layer_args(cx, node, "TransformerEncoder")
    seq = _Seq(cx, node)
    h = seq.input(x)
    layers = list(m.layers)
    if not layers or not all(isinstance(lay, _nn().TransformerEncoderLayer) for lay in layers):
        cx.unsupported(node, "TransformerEncoder whose layers are not TransformerEncoderLayers")
    bf = bool(layers[0].self_attn.batch_first)
    if any(bool(lay.self_attn.batch_first) != bf for lay in layers):
        cx.unsupported(node, "TransformerEncoder whose layers differ in batch_first")
    mask = _masks(cx, node, seq, layers[0], "TransformerEncoder",
                  int(layers[0].self_attn.num_heads), bf)
    if mask is not None and any(int(lay.self_attn.num_heads) != int(
            layers[0].self_attn.num_heads) for lay in layers):
        cx.unsupported(node, "masked TransformerEncoder whose layers differ in num_heads")
    # torch's nested-tensor path zeroes the padded positions of the output
    zero_pad = False
    if mask is not None and mask.pad is not None and bf:
        val = cx.value(node)
        padv = mask.pad[1] if mask.pad[0] == "const" else (mask.pad[1].v != 0)
        zero_pad = bool(padv.any()) and bool((val[padv] == 0).all())
    out = cx.tensor(node)
    for i, lay in enumerate(layers):
        last = i == len(layers) - 1 and m.norm is None and not zero_pad
        h = seq.encoder_layer(h, lay, f"l{i}", bf, out=out if last else None, mask=mask)
    if m.norm is not None:
        h = seq.layer_norm(h, m.norm, "norm", out=None if zero_pad else out)
    if zero_pad:
        if mask.pad[0] == "const":
            keep = (~mask.pad[1]).float().unsqueeze(-1)
            seq.op("float_mul", [h], lambda t: t * keep, [seq.const("keep", keep)],
                   name=node.name, out=out)
        else:   # exp: 0 -> 1 (kept), -inf -> 0 (padded)
            k = seq.view(mask.pad[1], (-1, -1, 1), (0, 1, -1))
            k = seq.op("float_exp", [k], torch.exp)
            seq.op("float_mul", [h, k], lambda t, w: t * w, name=node.name, out=out)


# ---- class token: param.expand(x.shape[0], -1, -1) ------------------------------------------
def _batch_of(a):
    """The tensor node X when ``a`` is X.shape[0] / X.size(0) / X.size()[0], else None."""
    import operator
    if not is_node(a):
        return None
    if a.op == "call_method" and a.target == "size" and len(a.args) == 2 and a.args[1] == 0:
        return a.args[0]
    if a.op == "call_function" and a.target is operator.getitem and a.args[1] == 0:
        s = a.args[0]
        if is_node(s) and s.op == "call_function" and s.target is getattr and \
                s.args[1] == "shape":
            return s.args[0]
        if is_node(s) and s.op == "call_method" and s.target == "size" and len(s.args) == 1:
            return s.args[0]
    return None


@method(("expand",), "Tensor.expand of a constant (class token: "
        "self.cls.expand(x.shape[0], -1, -1), batch from x, float or quantized)")
def expand_constant(cx, node, target):
    import torch
    src, sizes = node.args[0], list(node.args[1:])
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = list(sizes[0])
    if not is_node(src) or src.op != "get_attr":
        cx.unsupported(node, "Tensor.expand of a tensor computed in forward() (qrt expands "
                       "a constant parameter by the batch size only)")
    c = cx.value(src)
    x = _batch_of(sizes[0]) if sizes else None
    ok = (x is not None and isinstance(c, torch.Tensor) and c.dtype == torch.float32
          and not c.is_quantized and c.dim() == len(sizes) and c.shape[0] == 1
          and all(s == -1 or s == c.shape[i] for i, s in enumerate(sizes[1:], 1)))
    xv = cx.value(x) if x is not None else None
    quantized = isinstance(xv, torch.Tensor) and xv.is_quantized and \
        xv.qscheme() == torch.per_tensor_affine
    if not ok or not isinstance(xv, torch.Tensor) or xv.dim() != c.dim() or \
            not (quantized or xv.dtype == torch.float32):
        cx.unsupported(node, "Tensor.expand other than a float constant of leading size 1 "
                       "expanded to (x.shape[0], -1, ...) of an input x of as many dims "
                       "(float32 or per-tensor quantized)")
    nd = c.dim()
    seq = _Seq(cx, node)
    h = seq.input(x)
    # x[:, :1, :1] * 0 + c: [B, 1, 1] broadcast with c [1, T, E] (x's first element must be
    # finite: a NaN or inf there makes the token NaN, as torch's attention would after it)
    h = seq.op("slice", [h], lambda t: t[(slice(None),) + (slice(0, 1),) * (nd - 1)].contiguous(),
               attrs={"dims": list(range(1, nd)), "starts": [0] * (nd - 1),
                      "stops": [1] * (nd - 1), "steps": [1] * (nd - 1)})
    if quantized:   # x quantized (timm's ViT under FX static): its codes, dequantized, finite
        h = seq.op("dequantize", [h], lambda t: t.dequantize())
    h = seq.op("float_mul", [h], lambda t: t * 0.0, attrs={"scalar": 0.0})
    cst = cx.constant(f"{node.name}.value", array(c))
    seq.op("float_add", [h], lambda t: t + c, [cst], name=node.name, out=cx.tensor(node))


def batch_constant(cx, qnode, attr) -> int:
    """``torch.quantize_per_tensor`` of a parameter (``qnode``; ``attr``: its get_attr), which
    torch adds to activations (timm ViT's pos_embed under FX static, a quantized add of it), as
    an activation of the model's batch, made where an op first reads it: the first float model
    input x, one element per sample (x[:, :1, ...] viewed [B, 1, ...] with as many dims as the
    parameter), times 0, plus the parameter, quantized with its qparams (x's first elements
    must be finite, as they are for any input the model can take). Returns the tensor index."""
    import torch
    c, qv = cx.value(attr), cx.value(qnode)
    xs = [n for n in cx.gm.graph.nodes if n.op == "placeholder" and
          isinstance(cx.value(n), torch.Tensor) and cx.value(n).dtype == torch.float32 and
          cx.value(n).dim() >= 1]
    if not (isinstance(c, torch.Tensor) and c.dtype == torch.float32 and c.dim() >= 1 and
            c.shape[0] == 1 and isinstance(qv, torch.Tensor) and qv.is_quantized and
            qv.qscheme() == torch.per_tensor_affine) or not xs:
        cx.unsupported(qnode, f"quantize of the parameter {attr.target} (qrt quantizes a "
                       "float32 parameter of leading size 1 in a model with a float input)")
    x = xs[0]
    nx, nd = cx.value(x).dim(), c.dim()
    seq = _Seq(cx, qnode)
    h = seq.input(x)
    h = seq.op("slice", [h], lambda t: t[(slice(None),) + (slice(0, 1),) * (nx - 1)]
               .contiguous(), attrs={"dims": list(range(1, nx)), "starts": [0] * (nx - 1),
                                     "stops": [1] * (nx - 1), "steps": [1] * (nx - 1)})
    if nx != nd:
        h = seq.op("reshape", [h], lambda t: t.reshape((t.shape[0],) + (1,) * (nd - 1)))
    h = seq.op("float_mul", [h], lambda t: t * 0.0, attrs={"scalar": 0.0})
    cst = cx.constant(f"{qnode.name}.value", array(c))
    h = seq.op("float_add", [h], lambda t: t + c, [cst])
    s, z, dt = qv.q_scale(), qv.q_zero_point(), qv.dtype
    h = seq.op("quantize", [h], lambda t: torch.quantize_per_tensor(t, s, z, dt),
               name=qnode.name)
    cx.tensor_of[qnode.name] = h.t
    return h.t


# ---- an attention_mask input as an additive mask (qrt/ops/embedding.py, padding_mask) --------
def padding_additive_mask(mask):
    """torch's value of the ``padding_mask`` op: an int attention mask [N, S] (1 = attend, 0 =
    padding, HF transformers' ``attention_mask``) as the additive float32 mask attention adds
    to its scores (0 or -inf). qrt_export/capture.py puts it where the model's own mask code
    (index arithmetic on the input) builds the equivalent boolean mask."""
    import torch
    return torch.zeros(mask.shape, dtype=torch.float32).masked_fill(mask == 0, float("-inf"))


@function(lambda: (padding_additive_mask,), "an int attention_mask input [N, S] as the additive "
          "mask of F.scaled_dot_product_attention (HF transformers' padding masks)")
def padding_mask_fn(cx, node, target):
    x = node.args[0]
    if not is_node(x) or x.op != "placeholder":
        cx.unsupported(node, "a padding mask that is not a model input")
    cx.emit("padding_mask", node, [x])


# SPDX-License-Identifier: Apache-2.0
"""Rules for torch's dynamic-quantized recurrent modules (quantize_dynamic): LSTM, GRU,
LSTMCell, GRUCell, RNNCell -> one ``rnn_dynamic`` op each (qrt/ops/rnn.py).

The initial state is an op input when forward() passes it (``lstm(x, (h0, c0))``), zeros
otherwise (torch's default); the final states are op outputs, picked by the getitem nodes
that unpack ``(output, (h_n, c_n))``."""

from __future__ import annotations

import numpy as np

from qrt_export.rules import Decline, module


def _nnqd():
    import torch.ao.nn.quantized.dynamic as nnqd
    return nnqd


def _qweight(w):
    """(int8 [rows, cols], float64 scales [rows], int32 zero points [rows]) of a qint8 tensor."""
    import torch
    if w.dtype != torch.qint8:
        raise Decline(f"weights of dtype {w.dtype} (only qint8 dynamic quantization)")
    rows = w.shape[0]
    if w.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        sc = np.full(rows, float(w.q_scale()), np.float64)
        zp = np.full(rows, int(w.q_zero_point()), np.int32)
    elif w.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric) and \
            w.q_per_channel_axis() == 0:
        sc = w.q_per_channel_scales().numpy().astype(np.float64)
        zp = w.q_per_channel_zero_points().numpy().astype(np.int32)
    else:
        raise Decline(f"weight qscheme {w.qscheme()}")
    return np.ascontiguousarray(w.int_repr().numpy()), sc, zp


def _bias(b, rows):
    if b is None:
        return np.zeros(rows, np.float32)
    return np.ascontiguousarray(b.detach().float().numpy())


def _pairs(m, cell):
    """[(w_ih, b_ih, w_hh, b_hh)] per layer and direction, torch's order."""
    wb = m._weight_bias()
    w, b = wb["weight"], wb["bias"]
    if cell:
        return [(w["weight_ih"], b["bias_ih"], w["weight_hh"], b["bias_hh"])]
    out = []
    for layer in range(m.num_layers):
        for d in range(2 if m.bidirectional else 1):
            s = f"_l{layer}{'_reverse' if d else ''}"
            out.append((w["weight_ih" + s], b.get("bias_ih" + s), w["weight_hh" + s],
                        b.get("bias_hh" + s)))
    return out


def _state_args(node):
    hx = node.args[1] if len(node.args) > 1 else node.kwargs.get("hx")
    if hx is None:
        return []
    items = list(hx) if isinstance(hx, (tuple, list)) else [hx]
    if not all(hasattr(a, "op") for a in items):
        raise Decline("an initial state that is not a tensor computed by the model")
    return items


def _emit(cx, node, m, mode, cell):
    import torch
    if getattr(m, "dtype", torch.qint8) != torch.qint8 or \
            getattr(m, "weight_dtype", torch.qint8) != torch.qint8:
        raise Decline("float16 dynamic quantization (only qint8)")
    if len(node.args) < 1 or not hasattr(node.args[0], "op"):
        raise Decline("input is not a tensor")
    states = _state_args(node)
    params = []
    names = ("w_ih", "w_ih_scale", "w_ih_zero_point", "b_ih",
             "w_hh", "w_hh_scale", "w_hh_zero_point", "b_hh")
    dirs = 1 if cell else (2 if m.bidirectional else 1)
    for k, (wi, bi, wh, bh) in enumerate(_pairs(m, cell)):
        layer, d = divmod(k, dirs)
        prefix = f"{node.name}.l{layer}{'_reverse' if d else ''}"
        wiq, wis, wiz = _qweight(wi)
        whq, whs, whz = _qweight(wh)
        arrays = (wiq, wis, wiz, _bias(bi, wiq.shape[0]), whq, whs, whz,
                  _bias(bh, whq.shape[0]))
        params += [cx.constant(f"{prefix}.{n}", a) for n, a in zip(names, arrays)]
    attrs = {"mode": mode, "hidden_size": int(m.hidden_size)}
    if cell:
        attrs["cell"] = True
    else:
        attrs.update(num_layers=int(m.num_layers), bidirectional=bool(m.bidirectional),
                     batch_first=bool(m.batch_first))
    emit_recurrent(cx, node, "rnn_dynamic", mode, cell, states, params, attrs)


@module(lambda: (_nnqd().LSTM,), "dynamic quantized LSTM (quantize_dynamic; layers, "
        "bidirectional, batch_first, (h0, c0) in, (h_n, c_n) out)")
def lstm(cx, node, m):
    _emit(cx, node, m, "lstm", False)


@module(lambda: (_nnqd().GRU,), "dynamic quantized GRU (quantize_dynamic; layers, "
        "bidirectional, batch_first, h0 in, h_n out)")
def gru(cx, node, m):
    _emit(cx, node, m, "gru", False)


@module(lambda: (_nnqd().LSTMCell,), "dynamic quantized LSTMCell")
def lstm_cell(cx, node, m):
    _emit(cx, node, m, "lstm", True)


@module(lambda: (_nnqd().GRUCell,), "dynamic quantized GRUCell")
def gru_cell(cx, node, m):
    _emit(cx, node, m, "gru", True)


@module(lambda: (_nnqd().RNNCell,), "dynamic quantized RNNCell (tanh, relu)")
def rnn_cell(cx, node, m):
    _emit(cx, node, m, "rnn_" + m.nonlinearity, True)


def emit_recurrent(cx, node, kind, mode, cell, states, params, attrs):
    """Emit op ``kind`` (rnn_dynamic or rnn_float) for a recurrent module call and bind its
    outputs as torch returns them: a cell's h (or (h, c)), a layer's (y, h_n) or
    (y, (h_n, c_n)), including the getitem(lstm, 1) that the graph unpacks."""
    val = cx.value(node)
    v2 = cx.v2.get(node.name) if cx.v2 is not None else None

    def t(name, v, w):
        return cx.new_tensor(name, v, w)

    def pick(v, *idx):
        for i in idx:
            if not isinstance(v, (tuple, list)) or len(v) <= i:
                return None
            v = v[i]
        return v
    if cell and mode != "lstm":
        cx.emit(kind, node, [node.args[0]] + states, params, attrs)
        return
    if cell:  # (h, c)
        outs = [t(f"{node.name}.{k}", val[k], pick(v2, k)) for k in range(2)]
        cx.tensor_of.update({f"{node.name}.{k}": i for k, i in enumerate(outs)})
    elif mode == "lstm":  # (y, (h_n, c_n))
        outs = [t(f"{node.name}.0", val[0], pick(v2, 0)),
                t(f"{node.name}.1.0", val[1][0], pick(v2, 1, 0)),
                t(f"{node.name}.1.1", val[1][1], pick(v2, 1, 1))]
        cx.tensor_of.update({f"{node.name}.0": outs[0], f"{node.name}.1.0": outs[1],
                             f"{node.name}.1.1": outs[2]})
        for u in cx.users(node):  # getitem(lstm, 1) -> (h_n, c_n), unpacked by getitems
            if u.op == "call_function" and len(u.args) == 2 and u.args[1] in (1, -1):
                cx.tensor_of[f"{u.name}.0"], cx.tensor_of[f"{u.name}.1"] = outs[1], outs[2]
                cx.done.add(u.name)
    else:  # (y, h_n)
        outs = [t(f"{node.name}.{k}", val[k], pick(v2, k)) for k in range(2)]
        cx.tensor_of.update({f"{node.name}.{k}": i for k, i in enumerate(outs)})
    cx.emit(kind, node, [node.args[0]] + states, params, attrs, outputs=outs)

# SPDX-License-Identifier: Apache-2.0
"""Rules for torch's float recurrent modules (nn.LSTM with proj_size, nn.GRU, nn.RNN,
nn.LSTMCell, nn.GRUCell, nn.RNNCell) left in float -> one ``rnn_float`` op each
(qrt/ops/rnn_float.py). State in and out as the dynamic-quantized rules (rules/rnn.py)."""

from __future__ import annotations

import numpy as np

from qrt_export.rules import Decline, module
from qrt_export.rules.rnn import _state_args, emit_recurrent


def _f32(t, rows=None):
    if t is None:
        return np.zeros(rows, np.float32)
    import torch
    if t.dtype != torch.float32:
        raise Decline(f"a float recurrent module with {t.dtype} weights (float32 only)")
    return np.ascontiguousarray(t.detach().numpy(), np.float32)


def _groups(m, cell, proj):
    """[[w_ih, b_ih, w_hh, b_hh(, w_hr)]] per layer and direction, torch's order."""
    if cell:
        g = m.weight_ih.shape[0]
        return [[_f32(m.weight_ih), _f32(m.bias_ih, g), _f32(m.weight_hh), _f32(m.bias_hh, g)]]
    out = []
    for layer in range(m.num_layers):
        for d in range(2 if m.bidirectional else 1):
            s = f"_l{layer}{'_reverse' if d else ''}"
            w_ih = getattr(m, "weight_ih" + s)
            g = w_ih.shape[0]
            grp = [_f32(w_ih), _f32(getattr(m, "bias_ih" + s, None), g),
                   _f32(getattr(m, "weight_hh" + s)), _f32(getattr(m, "bias_hh" + s, None), g)]
            if proj:
                grp.append(_f32(getattr(m, "weight_hr" + s)))
            out.append(grp)
    return out


def _emit(cx, node, m, mode, cell):
    if len(node.args) < 1 or not hasattr(node.args[0], "op"):
        raise Decline("input is not a tensor")
    x = cx.value(node.args[0])
    if x.dim() != (2 if cell else 3):
        raise Decline(f"an unbatched input ({x.dim()}-d; qrt takes batched inputs: "
                      f"{'[batch, input]' if cell else '[seq, batch, input]'})")
    states = _state_args(node)
    proj = 0 if cell else int(getattr(m, "proj_size", 0) or 0)
    dirs = 1 if cell else (2 if m.bidirectional else 1)
    slots = ("w_ih", "b_ih", "w_hh", "b_hh", "w_hr")
    params = []
    for k, grp in enumerate(_groups(m, cell, proj)):
        layer, d = divmod(k, dirs)
        prefix = f"{node.name}.l{layer}{'_reverse' if d else ''}"
        params += [cx.constant(f"{prefix}.{n}", a) for n, a in zip(slots, grp)]
    attrs = {"mode": mode, "hidden_size": int(m.hidden_size)}
    if cell:
        attrs["cell"] = True
    else:
        attrs.update(num_layers=int(m.num_layers), bidirectional=bool(m.bidirectional),
                     batch_first=bool(m.batch_first))
        if proj:
            attrs["proj_size"] = proj
    emit_recurrent(cx, node, "rnn_float", mode, cell, states, params, attrs)


def _nn():
    import torch
    return torch.nn


@module(lambda: (_nn().LSTM,), "float LSTM (layers, bidirectional, batch_first, bias, "
        "proj_size, (h0, c0) in, (h_n, c_n) out)")
def lstm(cx, node, m):
    _emit(cx, node, m, "lstm", False)


@module(lambda: (_nn().GRU,), "float GRU (layers, bidirectional, batch_first, bias, h0 in, "
        "h_n out)")
def gru(cx, node, m):
    _emit(cx, node, m, "gru", False)


@module(lambda: (_nn().RNN,), "float RNN (tanh, relu; layers, bidirectional, batch_first, "
        "bias, h0 in, h_n out)")
def rnn(cx, node, m):
    _emit(cx, node, m, "rnn_" + m.nonlinearity, False)


@module(lambda: (_nn().LSTMCell,), "float LSTMCell")
def lstm_cell(cx, node, m):
    _emit(cx, node, m, "lstm", True)


@module(lambda: (_nn().GRUCell,), "float GRUCell")
def gru_cell(cx, node, m):
    _emit(cx, node, m, "gru", True)


@module(lambda: (_nn().RNNCell,), "float RNNCell (tanh, relu)")
def rnn_cell(cx, node, m):
    _emit(cx, node, m, "rnn_" + m.nonlinearity, True)

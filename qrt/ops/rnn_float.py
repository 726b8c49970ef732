# SPDX-License-Identifier: Apache-2.0
"""rnn_float (code 131): torch's float32 nn.LSTM (with proj_size) / nn.GRU / nn.RNN (tanh,
relu), whole modules (layers, directions, batch_first) and the LSTMCell / GRUCell / RNNCell
cells, left in float in a model (a float model, ``quantize_dynamic({nn.Linear})``, float RNNs
behind quantized convolutions).

The arithmetic is torch's CPU float path (aten/src/ATen/native/RNN.cpp, ``FullLayer`` with
``pre_compute_input``): per layer and direction the input projection of the whole sequence
``gi = x W_ih^T + b_ih`` (``T*B`` rows), per step ``gh = h W_hh^T + b_hh`` and the gates in
float32 in torch's order: LSTM ``g = gh + gi``, i, f, o = sigmoid, g = tanh,
``c' = f*c + i*g``, ``h' = o*tanh(c')`` (then ``h' = W_hr h'`` with proj_size); GRU
``r, z = sigmoid(gh + gi)`` (first 2H), ``n = tanh(gi_n + gh_n*r)``, ``h' = (h - n)*z + n``;
RNN ``h' = tanh|relu(gh + gi)``. Dot products in the fixed order of include/qrt/rnn_float.h
(torch's BLAS sums in another order), exp / tanh Cephes' float32 polynomials (torch's Sleef is
a few ulp away): docs/float-ops.md "Float recurrent layers" states the bound. NaN and infinity
propagate (no error, as torch). One thread.

Operands: ``x`` ([T, B, I], or [B, T, I] with batch_first; cells [B, I]), then optionally
``h0`` ([L*D, B, R]; cells [B, H]) and for LSTM ``c0`` ([L*D, B, H]); outputs ``y``
([T, B, D*R] or batch-first), ``h_n`` and for LSTM ``c_n``; cells return ``h`` (and ``c``).
R = proj_size if set, else H. Params per layer l and direction (``l{l}`` / ``l{l}_reverse``):
``w_ih`` [G*H, I_l], ``b_ih`` [G*H], ``w_hh`` [G*H, R], ``b_hh`` [G*H], and with proj_size
``w_hr`` [R, H], all float32; G = 4 (LSTM, gates i f g o), 3 (GRU, r z n), 1 (RNN). A module
without bias stores zero biases.
"""

from __future__ import annotations

import numpy as np

from qrt.ops._core import Bool, Choice, Int, OpDef, Param, ShapeError, define
from qrt.ops.rnn import check_io

_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}
_MODE_CODE = {"lstm": 0, "gru": 1, "rnn_tanh": 2, "rnn_relu": 3}   # include/qrt/rnn.h
_SLOTS = ("w_ih", "b_ih", "w_hh", "b_hh")
MAX_LAYERS = 64
# -1: the best dot-product variant; 0 (QRT_ISA_REF): the reference (tests compare the two)
_VARIANT = -1


def pack(w):
    """w [n, k] float32 -> the panel layout of include/qrt/rnn_float.h (8 outputs per panel,
    zero rows padding the last): wp[(o // 8) * k * 8 + i * 8 + o % 8] = w[o, i]."""
    n, k = w.shape
    p = -(-n // 8)
    wz = np.zeros((p * 8, k), np.float32)
    wz[:n] = w
    return np.ascontiguousarray(wz.reshape(p, 8, k).transpose(0, 2, 1)).reshape(-1)


def slot_names(num_layers, directions, proj):
    """Parameter names in blob order: l{l}[_reverse].{slot}."""
    slots = _SLOTS + (("w_hr",) if proj else ())
    return [f"l{layer}{'_reverse' if d else ''}.{s}" for layer in range(num_layers)
            for d in range(directions) for s in slots]


@define
class RnnFloat(OpDef):
    name, code = "rnn_float", 131
    doc = ("float32 LSTM (proj_size too) / GRU / RNN (tanh, relu) and LSTMCell / GRUCell / "
           "RNNCell; optional initial state inputs, final states out")
    inputs = (1, 3)
    outputs = (1, 3)
    # the slots of one (layer, direction): 4, or 5 with proj_size (w_hr); named
    # l{layer}[_reverse].{slot} (check_params)
    params = tuple(Param(n, "float32") for n in _SLOTS) + (Param("w_hr", "float32", True),)
    attrs = {"mode": Choice("lstm", "gru", "rnn_tanh", "rnn_relu"),
             "hidden_size": Int(1, 1 << 16),
             "num_layers": Int(1, MAX_LAYERS, default=1),
             "bidirectional": Bool(default=False),
             "batch_first": Bool(default=False),
             "proj_size": Int(0, 1 << 16, default=0, doc="LSTM projection size (0: none)"),
             "cell": Bool(default=False,
                          doc="a cell: x [B, I], state [B, H], no time or layer dimension")}

    # ---- parameters ------------------------------------------------------------------------
    def name_params(self, entries, node_fail):
        if not entries:
            raise node_fail("takes 4 (5 with proj_size) constant parameters per layer and "
                            "direction (w_ih, b_ih, w_hh, b_hh[, w_hr]), has none")
        return {f"#{k}": t for k, t in enumerate(entries)}

    def check_params(self, node):
        a = node.attrs
        dirs = 2 if a["bidirectional"] else 1
        names = slot_names(a["num_layers"], dirs, a["proj_size"])
        entries = [node.params[f"#{k}"] for k in range(len(node.params))]
        if len(entries) != len(names):
            raise node.fail(f"num_layers={a['num_layers']} x {dirs} direction(s)"
                            f"{' with proj_size' if a['proj_size'] else ''} needs "
                            f"{len(names)} constant parameters, has {len(entries)}")
        node.params = dict(zip(names, entries))
        for name in names:
            t = node.params[name]
            if t.np_dtype.name != "float32" and t.dtype != "float32":
                raise node.fail(f"parameter {name!r} must be float32, is {t.dtype}")

    def validate(self, node):
        a = node.attrs
        mode, h, p = a["mode"], a["hidden_size"], a["proj_size"]
        g, dirs, layers = _GATES[mode], 2 if a["bidirectional"] else 1, a["num_layers"]
        if a["cell"] and (layers != 1 or dirs != 1 or a["batch_first"] or p):
            raise node.fail("a cell has one layer, one direction, no batch_first and no "
                            "proj_size")
        if p and (mode != "lstm" or p >= h):
            raise node.fail(f"proj_size={p} needs an LSTM with hidden_size > proj_size "
                            "(torch's rule)")
        r = p or h
        i_size = check_io(node, mode, a["cell"])
        for layer in range(layers):
            for d in range(dirs):
                pre = f"l{layer}{'_reverse' if d else ''}."
                want = {"w_ih": (g * h, i_size if layer == 0 else dirs * r),
                        "b_ih": (g * h,), "w_hh": (g * h, r), "b_hh": (g * h,)}
                if p:
                    want["w_hr"] = (p, h)
                for s, shape in want.items():
                    got = tuple(node.params[pre + s].shape)
                    if got != shape or 0 in got:
                        raise node.fail(f"parameter {pre}{s} must have shape {shape}, has "
                                        f"{got}")

    # ---- shapes ----------------------------------------------------------------------------
    def _geometry(self, node, shapes):
        """(T, B, I, h state shape, c state shape) from the input shapes."""
        a = node.attrs
        h, dirs = a["hidden_size"], 2 if a["bidirectional"] else 1
        r = a["proj_size"] or h
        i_size = node.params["l0.w_ih"].shape[1]
        x = tuple(shapes[0])
        xname = node.inputs[0].name
        if a["cell"]:
            if len(x) != 2 or x[1] != i_size or x[0] < 1:
                raise ShapeError(f"input {xname!r} must be [batch >= 1, {i_size}], got {x}")
            t, b = 1, x[0]
            st = [(b, h), (b, h)]
        else:
            lay = "[batch, seq, input]" if a["batch_first"] else "[seq, batch, input]"
            if len(x) != 3 or x[2] != i_size or x[0] < 1 or x[1] < 1:
                raise ShapeError(f"input {xname!r} must be {lay} with input = {i_size} and "
                                 f"seq, batch >= 1, got {x}")
            t, b = (x[1], x[0]) if a["batch_first"] else (x[0], x[1])
            st = [(a["num_layers"] * dirs, b, r), (a["num_layers"] * dirs, b, h)]
        for k in range(1, len(shapes)):
            if tuple(shapes[k]) != st[k - 1]:
                what = ("h0", "c0")[k - 1]
                raise ShapeError(f"state input {what} ({node.inputs[k].name!r}) must have shape "
                                 f"{st[k - 1]}, got {tuple(shapes[k])}")
        return t, b, i_size, st

    def infer(self, node, shapes):
        a = node.attrs
        t, b, _, st = self._geometry(node, shapes)
        n_state = 2 if a["mode"] == "lstm" else 1
        if a["cell"]:
            return st[:n_state]
        dr = (2 if a["bidirectional"] else 1) * (a["proj_size"] or a["hidden_size"])
        y = (b, t, dr) if a["batch_first"] else (t, b, dr)
        return [y] + st[:n_state]

    def macs(self, node, shapes):
        try:
            t, b, i_size, _ = self._geometry(node, shapes)
        except (ShapeError, IndexError):
            return 0
        a = node.attrs
        h, p = a["hidden_size"], a["proj_size"]
        r = p or h
        gh = _GATES[a["mode"]] * h
        dirs = 2 if a["bidirectional"] else 1
        total = 0
        for layer in range(a["num_layers"]):
            cols = i_size if layer == 0 else dirs * r
            total += dirs * t * b * (gh * (cols + r) + p * h)
        return total

    # ---- CPU -------------------------------------------------------------------------------
    def prepare(self, node):
        a = node.attrs
        dirs = 2 if a["bidirectional"] else 1
        groups = []
        for layer in range(a["num_layers"]):
            for d in range(dirs):
                pre = f"l{layer}{'_reverse' if d else ''}."
                g = {s: np.ascontiguousarray(node.array(pre + s), np.float32)
                     for s in _SLOTS + (("w_hr",) if a["proj_size"] else ())}
                groups.append((pack(g["w_ih"]), g["w_ih"].shape[0], g["b_ih"],
                               pack(g["w_hh"]), g["b_hh"],
                               pack(g["w_hr"]) if a["proj_size"] else None))
        return groups

    def bind(self, node, ins, outs):
        from qrt import _ops
        a = node.attrs
        mode, h, p = a["mode"], a["hidden_size"], a["proj_size"]
        g = _GATES[mode]
        r = p or h
        dirs = 2 if a["bidirectional"] else 1
        layers, cell, bf = a["num_layers"], a["cell"], a["batch_first"]
        t_len, b, i_size, _ = self._geometry(node, [v.shape for v in ins])
        n_state = 2 if mode == "lstm" else 1
        h0 = ins[1] if len(ins) > 1 else None
        c0 = ins[2] if len(ins) > 2 else None
        x = ins[0]
        if cell:
            h_out = outs[0].reshape(1, b, h)
            c_out = outs[1].reshape(1, b, h) if n_state == 2 else None
            y_final = None
            h0 = None if h0 is None else h0.reshape(1, b, h)
            c0 = None if c0 is None else c0.reshape(1, b, h)
            x = x.reshape(1, b, i_size)
        else:
            y_final, h_out = outs[0], outs[1]
            c_out = outs[2] if n_state == 2 else None
        dr = dirs * r
        shape_y = (b, t_len, dr) if bf else (t_len, b, dr)
        bufs = [np.empty(shape_y, np.float32) for _ in range(min(layers - 1, 2))]
        gi = np.empty((t_len * b, g * h), np.float32)
        gi1 = gi.reshape(-1)
        gh = np.empty(b * g * h, np.float32)
        hf = np.empty(b * h, np.float32) if p else None
        gi_st, gi_sb = ((g * h, t_len * g * h) if bf else (b * g * h, g * h))
        y_st, y_sb = ((dr, t_len * dr) if bf else (b * dr, dr))
        code = _MODE_CODE[mode]
        groups = node.state
        steps = []
        for layer in range(layers):
            src = x if layer == 0 else bufs[(layer - 1) % 2]
            dst = y_final if layer == layers - 1 else bufs[layer % 2]
            in_cols = i_size if layer == 0 else dr
            for d in range(dirs):
                k = layer * dirs + d
                steps.append((src, in_cols, groups[k], dst, d, k))
        variant = _VARIANT
        linear, rnn = _ops.linear_f32, _ops.rnn_float_run

        def run():
            for src, in_cols, (w_ih, n_ih, b_ih, w_hh, b_hh, w_hr), dst, d, k in steps:
                src2 = src.reshape(t_len * b, in_cols) if src.flags.c_contiguous else \
                    np.ascontiguousarray(src).reshape(t_len * b, in_cols)
                linear(src2, w_ih, n_ih, b_ih, gi, variant)
                hs = h_out[k]
                if h0 is None:
                    hs.fill(0.0)
                else:
                    np.copyto(hs, h0[k])
                cs1 = None
                if mode == "lstm":
                    cs = c_out[k]
                    if c0 is None:
                        cs.fill(0.0)
                    else:
                        np.copyto(cs, c0[k])
                    cs1 = cs.reshape(-1)
                rnn(code, b, h, p, w_hh, b_hh, w_hr, gi1, 0, gi_st, gi_sb,
                    None if dst is None else dst.reshape(-1), d * r, y_st, y_sb,
                    hs.reshape(-1), cs1, gh, hf, t_len, bool(d), variant)
        return run, (), {}

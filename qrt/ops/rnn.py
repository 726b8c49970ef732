# SPDX-License-Identifier: Apache-2.0
"""rnn_dynamic (code 130): torch's dynamic-quantized LSTM / GRU / RNN (tanh, relu), whole
modules (layers, directions, batch_first) and the LSTMCell / GRUCell / RNNCell cells.

The arithmetic is torch's ``quantized_lstm`` / ``quantized_gru`` / ``quantized_*_cell_dynamic``
with ``QuantizedCellParamsDynamic`` under the qnnpack engine (aten/src/ATen/native/RNN.cpp):

* per layer and direction, the input projection of the **whole sequence** is one dynamic linear
  (``linear_ih`` over ``T*B`` rows: one per-tensor min/max, one quantization, b_ih added in
  the GEMM's float epilogue), exactly :class:`qrt.nn.DynamicLinear`;
* per step, the hidden projection is one dynamic linear of ``h`` (``B`` rows, its own min/max
  quantization, b_hh in the epilogue), exactly :class:`qrt.nn.DynamicLinear`;
* the gates in float32 in torch's order: LSTM ``g = gh + gi``, i, f, o = sigmoid, g = tanh,
  ``c' = f*c + i*g``, ``h' = o*tanh(c')``; GRU ``r, z = sigmoid(gh + gi)`` (first 2H),
  ``n = tanh(gi_n + gh_n*r)``, ``h' = (h - n)*z + n``; RNN ``h' = tanh|relu(gh + gi)``;
* the reverse direction reads the same layer input (its own ``linear_ih``) backwards; layer
  ``l+1`` reads the concatenated [forward, reverse] output of layer ``l``; dropout is ignored
  (eval).

The integer part (activation qparams, int32 accumulators) is torch's, given the same float
input; exp / tanh are Cephes' float32 polynomials in the C loop (numpy's in the numpy loop),
a few ulp from torch's Sleef (docs/float-ops.md "Recurrent layers" states how the difference
propagates over steps).

Operands: ``x`` ([T, B, I], or [B, T, I] with batch_first; cells [B, I]), then optionally
``h0`` ([L*D, B, H]; cells [B, H]) and for LSTM ``c0``; outputs ``y`` ([T, B, D*H] or
batch-first), ``h_n`` and for LSTM ``c_n`` ([L*D, B, H]); cells return ``h`` (and ``c``).
Params, per layer l and direction (``l{l}`` / ``l{l}_reverse``), 8 each: ``w_ih`` int8
[G*H, I_l], ``w_ih_scale`` float64 [G*H], ``w_ih_zero_point`` int32 [G*H], ``b_ih`` float32
[G*H], then the same four for ``hh`` ([G*H, H]); G = 4 (LSTM, gates i f g o), 3 (GRU, r z n),
1 (RNN). A module without bias stores zero biases (adding +0.0 changes no value).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from qrt.ops._core import Bool, Choice, Int, OpDef, Param, ShapeError, define

_F32 = np.float32
_ONE = _F32(1.0)
_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}
_SLOTS = (("w_ih", "int8"), ("w_ih_scale", "float64"), ("w_ih_zero_point", "int32"),
          ("b_ih", "float32"), ("w_hh", "int8"), ("w_hh_scale", "float64"),
          ("w_hh_zero_point", "int32"), ("b_hh", "float32"))
MAX_LAYERS = 64
_MODE_CODE = {"lstm": 0, "gru": 1, "rnn_tanh": 2, "rnn_relu": 3}   # include/qrt/rnn.h
# False: the step loop in C (include/qrt/rnn.h, Cephes exp/tanh). True: the same steps with
# numpy ufuncs (numpy's float32 exp/tanh), kept as the readable specification; tests run both.
_USE_NUMPY_LOOP = False


def slot_names(num_layers, directions):
    """Parameter names in blob order: l{l}[_reverse].{slot}."""
    return [f"l{layer}{'_reverse' if d else ''}.{s}" for layer in range(num_layers)
            for d in range(directions) for s, _ in _SLOTS]


class _Gemm:
    """One dynamic linear on fixed buffers: torch's per-call min/max quantization of ``x``
    (``rows x c_in`` float32, C-contiguous), the int8 GEMM, f32(acc * f32(sw * s)) + b."""

    __slots__ = ("plan", "xq", "xq1", "rs", "ws", "name")

    def __init__(self, m, rows, name):
        from qrt._tensor import _contiguous_strides
        self.xq = np.empty((rows, m._c_in), np.uint8)
        self.xq1 = self.xq.reshape(-1)
        self.rs = np.empty(m._c_out, np.float32)
        self.ws = m._wscale32
        self.plan, _ = m._linear_plan(self.xq.shape, _contiguous_strides(self.xq.shape), 1.0, 0,
                                      self.rs)
        self.name = name

    def __call__(self, x1, y1):
        # min / max, choose_qparams (qrt_choose_qparams_u8 == qrt.quantization's, tested),
        # quantize, rs = f32(sw * f32(s)) and the kernel in one C call
        if not self.plan.run_dynamic_f32(x1, self.xq1, y1, self.ws, self.rs):
            raise self.nonfinite()

    def nonfinite(self):
        return ValueError(f"{self.name}: NaN or infinity in the values to quantize; "
                          "torch's dynamic quantization fails on it too")


def _sigmoid(x, out):
    """torch's vectorised float sigmoid formula: 1 / (1 + exp(-x))."""
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, _ONE, out=out)
    np.reciprocal(out, out=out)


@define
class RnnDynamic(OpDef):
    name, code = "rnn_dynamic", 130
    doc = ("dynamic quantized LSTM / GRU / RNN (quantize_dynamic), LSTMCell / GRUCell / "
           "RNNCell; float32 in and out, optional initial state inputs, final states out")
    inputs = (1, 3)
    outputs = (1, 3)
    # the slots of one (layer, direction); a file holds num_layers x directions groups of 8,
    # named l{layer}[_reverse].{slot} (check_params)
    params = tuple(Param(n, d) for n, d in _SLOTS)
    attrs = {"mode": Choice("lstm", "gru", "rnn_tanh", "rnn_relu"),
             "hidden_size": Int(1, 1 << 16),
             "num_layers": Int(1, MAX_LAYERS, default=1),
             "bidirectional": Bool(default=False),
             "batch_first": Bool(default=False),
             "cell": Bool(default=False,
                          doc="a cell: x [B, I], state [B, H], no time or layer dimension")}

    # ---- parameters: 8 per (layer, direction), names from the attributes -------------------
    def name_params(self, entries, node_fail):
        if not entries or len(entries) % 8:
            raise node_fail(f"takes 8 constant parameters per layer and direction "
                            f"({', '.join(s for s, _ in _SLOTS)}), has {len(entries)}")
        return {f"#{k}": t for k, t in enumerate(entries)}

    def check_params(self, node):
        a = node.attrs
        dirs = 2 if a["bidirectional"] else 1
        names = slot_names(a["num_layers"], dirs)
        entries = [node.params[f"#{k}"] for k in range(len(node.params))]
        if len(entries) != len(names):
            raise node.fail(f"num_layers={a['num_layers']} x {dirs} direction(s) needs "
                            f"{len(names)} constant parameters, has {len(entries)}")
        node.params = dict(zip(names, entries))
        for k, name in enumerate(names):
            want = _SLOTS[k % 8][1]
            t = node.params[name]
            if t.np_dtype.name != want and t.dtype != want:
                raise node.fail(f"parameter {name!r} must be {want}, is {t.dtype}")

    def validate(self, node):
        a = node.attrs
        mode, h = a["mode"], a["hidden_size"]
        g, dirs, layers = _GATES[mode], 2 if a["bidirectional"] else 1, a["num_layers"]
        if a["cell"] and (layers != 1 or dirs != 1 or a["batch_first"]):
            raise node.fail("a cell has one layer, one direction and no batch_first")
        i_size = check_io(node, mode, a["cell"])
        for layer in range(layers):
            for d in range(dirs):
                p = f"l{layer}{'_reverse' if d else ''}."
                for part, cols in (("ih", i_size if layer == 0 else dirs * h), ("hh", h)):
                    w = tuple(node.params[p + f"w_{part}"].shape)
                    if len(w) != 2 or w[0] != g * h or w[1] != cols or cols < 1:
                        raise node.fail(f"parameter {p}w_{part} must be [{g * h}, "
                                        f"{cols if cols else 'input_size'}], has shape {w}")
                    self._check_qparams(node, p + part, g * h)

    @staticmethod
    def _check_qparams(node, prefix, rows):
        p, part = prefix.rsplit(".", 1)
        sc = node.array(f"{p}.w_{part}_scale")
        zp = node.array(f"{p}.w_{part}_zero_point")
        b = node.array(f"{p}.b_{part}")
        for name, arr in (("w_%s_scale" % part, sc), ("w_%s_zero_point" % part, zp),
                          ("b_%s" % part, b)):
            if arr.shape != (rows,):
                raise node.fail(f"parameter {p}.{name} must have shape ({rows},), has "
                                f"{arr.shape}")
        with np.errstate(all="ignore"):
            s32 = sc.astype(np.float32)
            ok = np.isfinite(sc) & (sc > 0) & np.isfinite(s32) & (s32 > 0) & \
                np.isfinite(np.float32(1.0) / s32)
        if not ok.all():
            raise node.fail(f"{p}.w_{part}_scale must be positive, finite and usable as "
                            "float32 (its reciprocal too)", "R14")
        if zp.min() < -128 or zp.max() > 127:
            raise node.fail(f"{p}.w_{part}_zero_point must lie in [-128, 127]", "R14")
        if not np.isfinite(b).all():
            raise node.fail(f"{p}.b_{part} holds NaN or infinity", "R14")

    # ---- shapes ----------------------------------------------------------------------------
    def _geometry(self, node, shapes):
        """(T, B, I, state shape) from the input shapes; ShapeError naming a bad input."""
        a = node.attrs
        h, dirs = a["hidden_size"], 2 if a["bidirectional"] else 1
        i_size = node.params["l0.w_ih"].shape[1]
        x = tuple(shapes[0])
        xname = node.inputs[0].name
        if a["cell"]:
            if len(x) != 2 or x[1] != i_size or x[0] < 1:
                raise ShapeError(f"input {xname!r} must be [batch >= 1, {i_size}], got {x}")
            t, b = 1, x[0]
            st = (b, h)
        else:
            lay = "[batch, seq, input]" if a["batch_first"] else "[seq, batch, input]"
            if len(x) != 3 or x[2] != i_size or x[0] < 1 or x[1] < 1:
                raise ShapeError(f"input {xname!r} must be {lay} with input = {i_size} and "
                                 f"seq, batch >= 1, got {x}")
            t, b = (x[1], x[0]) if a["batch_first"] else (x[0], x[1])
            st = (a["num_layers"] * dirs, b, h)
        for k in range(1, len(shapes)):
            if tuple(shapes[k]) != st:
                what = ("h0", "c0")[k - 1]
                raise ShapeError(f"state input {what} ({node.inputs[k].name!r}) must have shape "
                                 f"{st}, got {tuple(shapes[k])}")
        return t, b, i_size, st

    def infer(self, node, shapes):
        a = node.attrs
        t, b, _, st = self._geometry(node, shapes)
        n_state = 2 if a["mode"] == "lstm" else 1
        if a["cell"]:
            return [st] * n_state
        dh = (2 if a["bidirectional"] else 1) * a["hidden_size"]
        y = (b, t, dh) if a["batch_first"] else (t, b, dh)
        return [y] + [st] * n_state

    def macs(self, node, shapes):
        try:
            t, b, i_size, _ = self._geometry(node, shapes)
        except (ShapeError, IndexError):
            return 0
        a = node.attrs
        gh = _GATES[a["mode"]] * a["hidden_size"]
        dirs = 2 if a["bidirectional"] else 1
        total = 0
        for layer in range(a["num_layers"]):
            cols = i_size if layer == 0 else dirs * a["hidden_size"]
            total += dirs * t * b * gh * (cols + a["hidden_size"])
        return total

    # ---- CPU -------------------------------------------------------------------------------
    def prepare(self, node):
        import qrt.nn as nn
        a = node.attrs
        dirs = 2 if a["bidirectional"] else 1
        mods = []
        for layer in range(a["num_layers"]):
            for d in range(dirs):
                p = f"l{layer}{'_reverse' if d else ''}."
                pair = []
                for part in ("ih", "hh"):
                    w = node.array(p + f"w_{part}")
                    m = nn.DynamicLinear(w.shape[1], w.shape[0], bias=True)
                    sc = node.array(p + f"w_{part}_scale")
                    zp = node.array(p + f"w_{part}_zero_point")
                    per_tensor = bool((sc == sc[0]).all() and (zp == zp[0]).all())
                    m._install_raw(w.reshape(w.shape[0], w.shape[1], 1), sc, zp,
                                   node.array(p + f"b_{part}"),
                                   "per_tensor_affine" if per_tensor else "per_channel_affine")
                    pair.append(m)
                mods.append(tuple(pair))
        return mods

    def bind(self, node, ins, outs):
        a = node.attrs
        mode, h = a["mode"], a["hidden_size"]
        g = _GATES[mode]
        dirs = 2 if a["bidirectional"] else 1
        layers, cell, bf = a["num_layers"], a["cell"], a["batch_first"]
        x = ins[0]
        t_len, b, i_size, st = self._geometry(node, [v.shape for v in ins])
        n_state = 2 if mode == "lstm" else 1
        h0 = ins[1] if len(ins) > 1 else None
        c0 = ins[2] if len(ins) > 2 else None
        if cell:
            h_out = outs[0].reshape(1, b, h)
            c_out = outs[1].reshape(1, b, h) if n_state == 2 else None
            y_final = None
            h0 = None if h0 is None else h0.reshape(1, b, h)
            c0 = None if c0 is None else c0.reshape(1, b, h)
            x3 = x.reshape(1, b, i_size)
        else:
            y_final = outs[0]
            h_out = outs[1]
            c_out = outs[2] if n_state == 2 else None
            x3 = x
        # per layer: its input (the model input or the previous layer's output) and output
        shape_y = (b, t_len, dirs * h) if bf else (t_len, b, dirs * h)
        bufs = [np.empty(shape_y, np.float32) for _ in range(min(layers - 1, 2))]
        gi = np.empty((t_len * b, g * h), np.float32)
        gi3 = gi.reshape((b, t_len, g * h) if bf else (t_len, b, g * h))
        gates = np.empty((b, g * h), np.float32)
        s_buf = np.empty((b, g * h), np.float32)
        tmp = np.empty((b, h), np.float32)
        mods = node.state
        steps = []
        for layer in range(layers):
            src = x3 if layer == 0 else bufs[(layer - 1) % 2]
            dst = (y_final if y_final is not None else None) if layer == layers - 1 else \
                bufs[layer % 2]
            in_cols = i_size if layer == 0 else dirs * h
            for d in range(dirs):
                k = layer * dirs + d
                mi, mh = mods[k]
                gemm_ih = _Gemm(mi, t_len * b, f"{node.name} layer {layer} input")
                gemm_hh = _Gemm(mh, b, f"{node.name} layer {layer} hidden state")
                steps.append((src.reshape(t_len * b, in_cols).reshape(-1) if src.flags.c_contiguous
                              else None, src, in_cols, gemm_ih, gemm_hh, dst, d, k))
        gi1 = gi.reshape(-1)
        gates1 = gates.reshape(-1)
        sig_hi = 2 * h
        dh = dirs * h
        gi_st, gi_sb = ((g * h, t_len * g * h) if bf else (b * g * h, g * h))
        y_st, y_sb = ((dh, t_len * dh) if bf else (b * dh, dh))
        code = _MODE_CODE[mode]
        from qrt import _conv1d

        def run_py(gemm_hh, dst, d, hs1, cs1):
            hs = hs1.reshape(b, h)
            cs = None if cs1 is None else cs1.reshape(b, h)
            for t in (range(t_len - 1, -1, -1) if d else range(t_len)):
                git = gi3[:, t] if bf else gi3[t]
                gemm_hh(hs1, gates1)
                if mode == "lstm":
                    np.add(gates, git, out=gates)
                    _sigmoid(gates, s_buf)
                    np.tanh(gates[:, 2 * h:3 * h], out=tmp)
                    np.multiply(s_buf[:, h:2 * h], cs, out=cs)
                    np.multiply(s_buf[:, :h], tmp, out=tmp)
                    np.add(cs, tmp, out=cs)
                    np.tanh(cs, out=tmp)
                    np.multiply(s_buf[:, 3 * h:], tmp, out=hs)
                elif mode == "gru":
                    np.add(gates[:, :sig_hi], git[:, :sig_hi], out=gates[:, :sig_hi])
                    _sigmoid(gates[:, :sig_hi], s_buf[:, :sig_hi])
                    np.multiply(gates[:, 2 * h:], s_buf[:, :h], out=tmp)
                    np.add(git[:, 2 * h:], tmp, out=tmp)
                    np.tanh(tmp, out=tmp)
                    np.subtract(hs, tmp, out=hs)
                    np.multiply(hs, s_buf[:, h:2 * h], out=hs)
                    np.add(hs, tmp, out=hs)
                else:
                    np.add(gates, git, out=gates)
                    if mode == "rnn_tanh":
                        np.tanh(gates, out=hs)
                    else:
                        np.maximum(gates, _F32(0.0), out=hs)
                if dst is not None:
                    if bf:
                        dst[:, t, d * h:(d + 1) * h] = hs
                    else:
                        dst[t, :, d * h:(d + 1) * h] = hs

        # per layer and direction, fixed at bind: the state views (arena buffers) and, for
        # the C loop, its call with every argument checked once (_conv1d.RnnLayer)
        plan = []
        for src1, src, in_cols, gemm_ih, gemm_hh, dst, d, k in steps:
            hs1 = h_out[k].reshape(-1)
            h01 = None if h0 is None else h0[k].reshape(-1)
            cs1 = c_out[k].reshape(-1) if mode == "lstm" else None
            c01 = None if c0 is None or mode != "lstm" else c0[k].reshape(-1)
            ih = gemm_ih      # the input projection, run here unless the C layer runs it
            if _USE_NUMPY_LOOP:
                layer = partial(run_py, gemm_hh, dst, d, hs1, cs1)
            else:
                c_layer = _conv1d.RnnLayer(
                    gemm_hh.plan, code, g, gemm_hh.ws, gemm_hh.rs, gi1, 0, gi_st, gi_sb,
                    None if dst is None else dst.reshape(-1), d * h, y_st, y_sb, hs1, cs1,
                    gates1, gemm_hh.xq1, t_len, bool(d))
                if src1 is not None:
                    # the same dynamic linear in the layer's C call (packed GEMV per row)
                    c_layer.set_input(gemm_ih.plan, src1, gemm_ih.xq1, gemm_ih.ws, gemm_ih.rs,
                                      gi1, gemm_ih.name)
                    ih = None
                layer = c_layer.run
            plan.append((src1, src, ih, hs1, h01, cs1, c01, layer))

        def run():
            for src1, src, gemm_ih, hs1, h01, cs1, c01, layer in plan:
                # gemm_ih(x, gi1), its plan called directly (_Gemm.__call__'s error)
                if gemm_ih is not None and not gemm_ih.plan.run_dynamic_f32(
                        src1 if src1 is not None else np.ascontiguousarray(src).reshape(-1),
                        gemm_ih.xq1, gi1, gemm_ih.ws, gemm_ih.rs):
                    raise gemm_ih.nonfinite()
                if h01 is None:
                    hs1.fill(0.0)
                else:
                    np.copyto(hs1, h01)
                if cs1 is not None:
                    if c01 is None:
                        cs1.fill(0.0)
                    else:
                        np.copyto(cs1, c01)
                layer()
        return run, (), {}


def check_io(node, mode, cell):
    """The checks rnn_dynamic and rnn_float share: inputs x [+ state], outputs [y +] state,
    all float32; returns input_size (0 when l0.w_ih is not 2-d: the caller's shape check
    names it)."""
    n_state = 2 if mode == "lstm" else 1
    n_in, n_out = len(node.inputs), len(node.outputs)
    if n_in not in (1, 1 + n_state):
        raise node.fail(f"{mode} takes x{' and (h0, c0)' if n_state == 2 else ' and h0'}"
                        f", has {n_in} inputs")
    want_out = n_state if cell else 1 + n_state
    if n_out != want_out:
        raise node.fail(f"{'cell ' if cell else ''}{mode} has {want_out} outputs, "
                        f"the op lists {n_out}")
    for t in list(node.inputs) + list(node.outputs):
        if t.dtype != "float32":
            raise node.fail(f"takes and returns float32 tensors, {t.name} is {t.dtype}")
    i_size = node.params["l0.w_ih"].shape
    return i_size[1] if len(i_size) == 2 else 0

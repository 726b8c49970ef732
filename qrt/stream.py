# SPDX-License-Identifier: Apache-2.0
"""Streaming inference (issue 46): ``model.stream()`` runs a loaded 1-d model chunk by chunk.

A :class:`Schedule` is derived once per model (and time axis) from the loaded graph: which
axis of every tensor is time (propagated from the input's time axis; layout ops move it), and
one small adapter per op that says how the op's output frames follow from its input frames.
A :class:`Stream` holds one adapter *state* per op (ring buffers of the input frames an op
still needs, running sums, alignment buffers) and runs each op's existing offline kernel on
the frames that are computable now, so a streamed output frame is computed by the same kernel
from the same codes as in ``model(whole)``: concatenated streamed outputs equal the offline
run bit for bit (docs/streaming.md).

Adapters (``_RULES`` below, by op kind):
  * frame-local ops (quantize, dequantize, relu, add, float elementwise, layout ops that keep
    or move the time axis, linear / batch norm / softmax over a non-time axis): run on the new
    frames; several inputs are aligned (frames of the earlier branch wait for the later one);
  * windowed ops along time (conv1d, float_conv1d, max_pool1d, avg_pool1d): the op re-bound
    with padding 0 runs on a buffer holding the frames still needed; left padding is the
    initial buffer content (zero-point codes; the smallest code for max pooling), right padding
    (and ceil_mode's partial window) is appended at ``flush()``;
  * conv_transpose1d: the op re-bound with padding 0 runs on the input frames that contribute
    to the output frames now complete;
  * slice along time (TCN's chomp): drops / holds back frames;
  * global average pooling over time (one output): running integer sums (float: float64); each
    call gives the pool over every frame of its input seen so far (the final call = offline);
  * float LSTM / GRU (rnn_float, unidirectional): (h, c) carried from call to call;
  * ``x[:, -1]`` along time: the last frame seen.

Anything else along time (normalisation over time, a reduction over time mid-graph,
quantize_dynamic's RNN, a bidirectional RNN, ...) is refused when the schedule is made, with
a ValueError naming the op and why.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from functools import partial
from typing import Dict, List, Optional

import numpy as np

from qrt.ops import ShapeError

__all__ = ["Stream", "Schedule", "MAX_STATE_BYTES"]

MAX_STATE_BYTES = 1 << 30       # no stream keeps more than this many bytes of state
_BIND_CACHE = 4                 # bound windows (input shapes) kept per op and stream
_BIND_KEEP_BYTES = 1 << 14      # a binding with more buffer bytes is used once, not kept

# frame-local ops: output frame t depends only on input frame t (checked per op below)
_LOCAL = {"quantize", "dequantize", "relu", "sigmoid", "hardswish", "lut", "add", "mul",
          "identity", "flatten", "reshape", "view", "squeeze", "unsqueeze", "permute",
          "float_add", "float_sub", "float_mul", "float_div", "float_exp", "float_log",
          "float_sqrt", "float_pow", "float_tanh", "float_sigmoid", "float_silu", "float_gelu",
          "float_elu", "float_leaky_relu", "float_hardswish", "float_hardsigmoid",
          "float_clamp", "float_prelu", "float_batch_norm", "batch_norm", "linear",
          "float_linear", "cat", "float_softmax", "float_log_softmax",
          "layer_norm", "float_layer_norm", "slice", "float_mean", "float_sum", "mean"}
_NUMPY_REDUCE = {"float_softmax", "float_log_softmax", "float_mean", "float_sum",
                 "float_linear"}
_WINDOW = {"conv1d", "float_conv1d", "max_pool1d", "avg_pool1d"}
_GLOBAL = {"adaptive_avg_pool1d", "avg_pool1d"}
_WHY = {"rnn_dynamic": "quantize_dynamic's recurrent op quantizes its input with one min/max "
                       "over the whole sequence (torch's arithmetic): no chunk of it gives the "
                       "same codes",
        "linear_dynamic": "quantize_dynamic's Linear quantizes its input with one min/max over "
                          "every frame (torch's arithmetic): a chunk of it gives other codes",
        "float_group_norm": "it normalises over the whole sequence",
        "float_instance_norm": "it normalises over the whole sequence",
        "adaptive_max_pool1d": "it pools over the whole sequence",
        "float_matmul": "it mixes frames (attention over time needs the whole sequence)",
        "pad": "padding along time is not streamed",
        "split": "it has several outputs"}


class _Refuse(ValueError):
    pass


def _refuse(node, why):
    e = _Refuse(f"cannot stream op {node.index} {node.kind} '{node.name}': {why}")
    e.op_index = node.index
    return e


def _min_code(t):
    return {"quint8": 0, "qint8": -128, "qint32": -(1 << 31)}[t.dtype]


def _np_dtype(t):
    return t.np_dtype


# ---- the schedule: static, shared by every stream of a model ---------------------------------
class _Op:
    """Static streaming description of one node."""

    kind = "local"
    node = None
    run_node = None        # the node the stream binds (padding removed for windowed ops)
    in_axes: List[Optional[int]]
    out_axis: Optional[int]
    frame_bytes = 0        # bytes of one input frame per batch item (state bound)
    hold = 0               # frames of state per batch item (bound)
    two = False            # run on >= 2 frames (numpy reductions: see _local)


class Schedule:
    """How a model streams: per tensor its time axis, per op an adapter (see module doc)."""

    def __init__(self, model, time_axis: Optional[int] = None):
        self.model = model
        g = model.graph
        self.inp = g.inputs[0]
        # other inputs: only the initial state of a recurrent op (Silero-style forward(x, h,
        # c)): the stream starts it at zeros and carries it itself
        self.extra = list(g.inputs[1:])
        for i in self.extra:
            readers = [(n, n.input_ids.index(i)) for n in g.nodes if i in n.input_ids]
            if i in g.outputs or not readers or any(
                    n.kind != "rnn_float" or k == 0 or n.input_ids.count(i) > 1
                    for n, k in readers):
                raise ValueError(f"streaming takes one input along time; input "
                                 f"{g.tensors[i].name!r} is not only a recurrent op's "
                                 f"initial state")
        t = g.tensors[self.inp]
        shape0 = tuple(model._exec.plan(model._exported_shapes(model._batch0)).shapes[self.inp])
        rank = len(shape0)
        if rank < 2:
            raise ValueError(f"streaming needs an input with a time axis, the input has shape "
                             f"{shape0}")
        self.in_shape0 = shape0
        cands = [time_axis] if time_axis is not None else \
            ([rank - 1, 1] if rank >= 3 else [rank - 1])
        err = None
        for ax in cands:
            if ax is None or not -rank <= ax < rank:
                raise ValueError(f"time_axis {ax} is not an axis of the input {shape0}")
            ax %= rank
            if t.batched and ax == 0:
                raise ValueError("the time axis cannot be the batch axis")
            try:
                self._build(ax)
                return
            except _Refuse as e:
                if err is None or e.op_index > err.op_index:
                    err = e             # the candidate that got furthest says why
        raise err

    def _build(self, ax):
        m, g = self.model, self.model.graph
        self.in_axis = ax
        axes: Dict[int, Optional[int]] = {self.inp: ax}
        la: Dict[int, int] = {self.inp: 0}       # lookahead in input frames
        tail: Dict[int, int] = {self.inp: 0}     # frames guaranteed to follow (lower bound)
        rate: Dict[int, float] = {self.inp: 1.0}  # input frames per frame
        for i in self.extra:                     # initial recurrent state: no time axis
            axes[i], la[i], tail[i], rate[i] = None, 0, 0, 0.0
        ops: List[_Op] = []
        for n in g.nodes:
            ins = [axes[i] for i in n.input_ids]
            o = self._op(n, ins, la, tail, rate)
            ops.append(o)
            o.out_axes = getattr(o, "out_axes", None) or [o.out_axis]
            for i, a in zip(n.output_ids, o.out_axes):
                axes[i] = a
        self.ops = ops
        self.axes = axes
        self.lookahead = la
        self.latency = max([la[i] for i in g.outputs], default=0)
        self.outputs = list(g.outputs)
        shapes = m._exec.plan(m._exported_shapes(m._batch0)).shapes
        self.out_shapes0 = {i: tuple(shapes[i]) for i in g.outputs}
        self.state_bound = sum(o.hold * o.frame_bytes for o in ops)  # per batch item

    def table(self) -> str:
        """Per op with state: its adapter and its state bound per batch item; then the
        latency and the total (``qrt inspect``)."""
        lines = [f"streaming (time axis {self.in_axis} of the input): latency "
                 f"{self.latency} input frames, state <= {self.state_bound} B per batch item"]
        for o in self.ops:
            if o.hold * o.frame_bytes or o.kind == "global":
                n = o.node
                lines.append(f"  {n.index:>4} {n.kind:<20} {n.name[:24]:<24} {o.kind:<9} "
                             f"state <= {o.hold * o.frame_bytes} B"
                             + (" + running sums" if o.kind == "global" else "")
                             + f"  lookahead {self.lookahead[n.output_ids[0]]}")
        return "\n".join(lines)

    # each op's adapter, its output's time axis, lookahead, tail and rate
    def _op(self, n, ins, la, tail, rate) -> _Op:
        o = _Op()
        o.node, o.run_node, o.in_axes = n, n, ins
        i0, out = n.input_ids[0], n.output_ids[0]
        timed = [a for a in ins if a is not None]
        if n.kind in _WHY and timed:
            raise _refuse(n, _WHY[n.kind])
        if n.kind == "rnn_float" and timed:
            return self._rnn(n, o, ins, la, tail, rate)
        if len(n.output_ids) != 1:
            raise _refuse(n, "it has several outputs")
        if not timed:                       # after a global pool: runs once per call
            o.kind, o.out_axis = "timeless", None
            la[out], tail[out], rate[out] = max(la[i] for i in n.input_ids), 0, 0.0
            return o
        if len(timed) != len(ins):
            raise _refuse(n, "it combines a tensor along time with one that is not (a value "
                          "over the whole sequence used mid-graph)")
        k = n.kind
        ax = ins[0]
        rank = len(self._shape(n, 0))
        a = n.attrs
        if k in _WHY:
            raise _refuse(n, _WHY[k])
        if k in _GLOBAL and (k == "adaptive_avg_pool1d" or a.get("whole_length")):
            if ax != rank - 1:
                raise _refuse(n, "it pools an axis that is not time")
            if k == "adaptive_avg_pool1d" and a["output_size"] != 1:
                raise _refuse(n, "an adaptive pool to more than one output needs the whole "
                              "length")
            o.kind, o.out_axis = "global", None
            o.frame_bytes, o.hold = 0, 0
            la[out], tail[out], rate[out] = la[i0], 0, 0.0
            return o
        if k in _WINDOW:
            return self._window(n, o, ax, rank, la, tail, rate)
        if k in ("conv_transpose1d", "float_conv_transpose1d"):
            return self._transpose(n, o, ax, rank, la, tail, rate)
        if k == "slice":
            dims = [d % rank for d in a["dims"]] + [d % rank for d in a["index_dims"]]
            if a["index_dims"] and a["index_dims"][0] % rank == ax and not a["dims"] and \
                    len(a["index_dims"]) == 1 and a["indices"][0] == -1:
                o.kind, o.out_axis = "last", None   # x[:, -1]: the last frame seen so far
                la[out], tail[out], rate[out] = la[i0], 0, 0.0
                return o
            if ax in dims:
                return self._slice(n, o, ax, rank, la, tail, rate)
        if k not in _LOCAL:
            raise _refuse(n, "streaming is not defined for this op along time")
        # frame-local: the op must not reduce / mix along time
        if k in ("linear", "float_linear") and ax == rank - 1:
            raise _refuse(n, "it mixes the time axis (the last axis)")
        if k in ("float_softmax", "float_log_softmax", "cat") and a["dim"] % rank == ax:
            raise _refuse(n, "it works along the time axis")
        if k in ("layer_norm", "float_layer_norm") and \
                ax >= rank - len(a["normalized_shape"]):
            raise _refuse(n, "it normalises over the time axis")
        if k in ("float_mean", "float_sum") and (a["dims"] is None or
                                                 ax in [d % rank for d in a["dims"]]):
            raise _refuse(n, "it reduces over the whole sequence mid-graph")
        if k == "mean":
            raise _refuse(n, "it reduces over the whole sequence mid-graph")
        if len(set(rate[i] for i in n.input_ids)) > 1:
            raise _refuse(n, "its inputs run at different frame rates")
        o.kind = "local"
        o.out_axis = self._moved_axis(n, ax)
        # numpy reduces an axis in another order when it is the only one left (a chunk of
        # one frame makes the reduced axis contiguous: pairwise sums): such float ops run
        # on at least two frames (docs/streaming.md)
        o.two = k in _NUMPY_REDUCE and n.inputs[0].qscheme == "none"
        if len(ins) > 1:
            o.kind = "align"
            o.frame_bytes = sum(self._frame_bytes(n, j, ax) for j in range(len(ins)))
            # the earlier branch waits for the later one: at most their lookahead difference
            # (in frames of this rate) plus one stride's worth (counted in the state bound)
            las = [la[i] for i in n.input_ids]
            r = rate[i0] or 1.0
            o.hold = int((max(las) - min(las)) / r) + 2
        la[out] = max(la[i] for i in n.input_ids)
        tail[out] = min(tail[i] for i in n.input_ids)
        rate[out] = rate[i0]
        return o

    def _shape(self, n, j, out=False):
        sh = self.model._exec.plan(self.model._exported_shapes(self.model._batch0)).shapes
        return sh[(n.output_ids if out else n.input_ids)[j]]

    def _frame_bytes(self, n, j, ax):
        s = list(self._shape(n, j))
        if n.inputs[j].batched and s:
            s[0] = 1
        s[ax] = 1
        return int(np.prod(s)) * n.inputs[j].np_dtype.itemsize

    def _moved_axis(self, n, ax):
        """Where an op puts the time axis: infer at two lengths, the one axis that follows."""
        base = list(self._shape(n, 0))
        got = []
        for L in (3, 5):
            shp = [list(self._shape(n, j)) for j in range(len(n.input_ids))]
            for s in shp:
                s[ax] = L
            try:
                got.append(n.op.infer(n, [tuple(s) for s in shp])[0])
            except (ShapeError, ValueError, IndexError, KeyError, TypeError, ZeroDivisionError,
                    OverflowError, AttributeError):
                raise _refuse(n, "it does not take inputs of another length along time")
        a3, a5 = got
        moved = [d for d in range(len(a3)) if len(a3) == len(a5) and a3[d] != a5[d]]
        if len(moved) != 1 or (a3[moved[0]], a5[moved[0]]) != (3, 5):
            raise _refuse(n, f"it reshapes the time axis (input {tuple(base)})")
        return moved[0]

    def _window(self, n, o, ax, rank, la, tail, rate):
        a = n.attrs
        i0, out = n.input_ids[0], n.output_ids[0]
        if ax != rank - 1:
            raise _refuse(n, "time is not its last axis")
        k = n.kind
        if k in ("conv1d", "float_conv1d"):
            w = n.params.get("weight")
            ksz = int(w.shape[-1])
            d, s = a["dilation"], a["stride"]
            p = a["padding"]
            pl, pr = (p, p) if isinstance(p, int) else (p[0], p[-1])
            if isinstance(p, list) and len(p) not in (1, 2):
                raise _refuse(n, f"padding {p}")
            pad = n.inputs[0].zero_point if n.inputs[0].qscheme != "none" else 0.0
            attrs = dict(a, padding=[0, 0] if isinstance(p, list) and len(p) == 2 else
                         ([0] if isinstance(p, list) else 0))
            ceil = False
        else:
            ksz, d = a["kernel_size"], a.get("dilation", 1)
            s = a.get("stride") or ksz
            pl = pr = a.get("padding", 0)
            ceil = a.get("ceil_mode", False)
            x = n.inputs[0]
            if k == "avg_pool1d" and ceil:
                raise _refuse(n, "an average pool with ceil_mode divides its last window by "
                              "what it covers")
            if k == "avg_pool1d" and pl and not (x.dtype == "quint8" and ksz > 1 and
                                                 a.get("count_include_pad", True)):
                raise _refuse(n, "an average pool with padding divides its edge windows by "
                              "what they cover (only quint8 with count_include_pad, "
                              "QNNPACK's average, reads padding as zero-point frames)")
            if k == "avg_pool1d":
                pad = x.zero_point if x.qscheme != "none" else 0.0
            else:
                pad = _min_code(x) if x.qscheme != "none" else -np.inf
            attrs = dict(a, padding=0, ceil_mode=False)
        run = replace(n, attrs=attrs)
        run.state = n.op.prepare(run)
        o.kind, o.run_node, o.out_axis = "window", run, ax
        o.span, o.stride, o.pl, o.pr, o.ceil, o.pad = (ksz - 1) * d + 1, s, pl, pr, ceil, pad
        o.kernel, o.dil = ksz, d
        o.frame_bytes = self._frame_bytes(n, 0, ax)
        o.hold = o.span + s
        la[out] = la[i0] + int(rate[i0] * pr)
        tail[out] = (tail[i0] + pr) // s
        rate[out] = rate[i0] * s
        return o

    def _transpose(self, n, o, ax, rank, la, tail, rate):
        a = n.attrs
        i0, out = n.input_ids[0], n.output_ids[0]
        if ax != rank - 1:
            raise _refuse(n, "time is not its last axis")
        ksz = int(n.params["weight"].shape[-1])
        s, p, op, d = a["stride"], a["padding"], a["output_padding"], a["dilation"]
        o.span, o.stride, o.p, o.op, o.dil = (ksz - 1) * d + 1, s, p, op, d
        o.run_node = {}
        for extra in range(0, op + 1):   # output_padding of the flush window (< stride)
            run = replace(n, attrs=dict(a, padding=0, output_padding=extra))
            try:
                run.state = n.op.prepare(run)
            except (ValueError, TypeError, KeyError, IndexError, OverflowError):
                continue                # torch's output_padding rule
            o.run_node[extra] = run
        if 0 not in o.run_node or max(0, op - p) not in o.run_node:
            raise _refuse(n, "its weights do not bind without padding")
        o.kind, o.out_axis = "transpose", ax
        o.frame_bytes = self._frame_bytes(n, 0, ax)
        o.hold = o.span // s + 2
        la[out] = la[i0]
        tail[out] = max(0, (tail[i0] - 1) * s - p + o.span + op)
        rate[out] = rate[i0] / s
        return o

    def _rnn(self, n, o, ins, la, tail, rate):
        a = n.attrs
        i0 = n.input_ids[0]
        if a["cell"]:
            raise _refuse(n, "a cell takes one step, not a sequence")
        if a["bidirectional"]:
            raise _refuse(n, "its reverse direction needs the whole sequence")
        if any(i not in self.extra for i in n.input_ids[1:]):
            raise _refuse(n, "its initial state is computed by the graph (only a model input, "
                          "started at zeros by the stream, can be carried)")
        want = 1 if a["batch_first"] else 0
        if ins[0] != want:
            raise _refuse(n, f"time is axis {want} of its input, the stream's time is axis "
                          f"{ins[0]}")
        o.kind, o.out_axis = "rnn", want
        o.out_axes = [want] + [None] * (len(n.output_ids) - 1)
        o.frame_bytes, o.hold = 0, 0
        for k, i in enumerate(n.output_ids):
            la[i], tail[i], rate[i] = la[i0], (tail[i0] if k == 0 else 0), \
                (rate[i0] if k == 0 else 0.0)
        return o

    def _slice(self, n, o, ax, rank, la, tail, rate):
        a = n.attrs
        i0, out = n.input_ids[0], n.output_ids[0]
        dims = [d % rank for d in a["dims"]]
        if a["index_dims"] or dims != [ax]:
            raise _refuse(n, "it slices time together with other axes / by index")
        start, stop, step = a["starts"][0], a["stops"][0], a["steps"][0]
        if step != 1 or start < 0:
            raise _refuse(n, "a slice along time that counts from the end or steps needs the "
                          "whole sequence")
        o.kind, o.out_axis, o.start, o.stop = "slice", ax, start, stop
        o.frame_bytes = self._frame_bytes(n, 0, ax)
        drop = -stop if stop < 0 else 0
        o.hold = max(0, drop - tail[i0])
        o.keep_back = o.hold
        la[out] = max(0, la[i0] - int(rate[i0] * drop))
        tail[out] = max(0, tail[i0] - drop)
        rate[out] = rate[i0]
        return o


# ---- running one op on arbitrary shapes: its own buffers, bound once per shape ---------------
class _Runner:
    """One op bound on this stream's own buffers, once per input shape (``_BIND_CACHE``
    shapes kept): copy the frames in, run the bound kernel, return the output buffer."""

    def __init__(self, node):
        self.node = node
        self.cache: Dict[tuple, tuple] = {}

    def __call__(self, arrays):
        if len(arrays) == 1:
            x = arrays[0]
            e = self.cache.get(x.shape)
            if e is None:
                e = self._bind((x.shape,), x.shape)
            np.copyto(e[0][0], x)
        else:
            key = tuple([x.shape for x in arrays])
            e = self.cache.get(key)
            if e is None:
                e = self._bind(key, key)
            for dst, x in zip(e[0], arrays):
                np.copyto(dst, x)
        e[3] = True
        e[2]()
        return e[1]        # valid until this runner runs again (the next call)

    def sweep(self):
        """Drop the bindings not used since the last sweep (a warm-up chunk's shapes)."""
        for k in [k for k, e in self.cache.items() if not e[3]]:
            del self.cache[k]
        for e in self.cache.values():
            e[3] = False

    def _bind(self, shapes, key):
        from qrt.model import CPUBackend as B
        n = self.node
        oshape = tuple(int(d) for d in n.op.infer(n, list(shapes))[0])
        views_in = [B.view(B.alloc(max(1, int(np.prod(s)) * t.np_dtype.itemsize)), 0, t, s)
                    for s, t in zip(shapes, n.inputs)]
        t = n.outputs[0]
        vo = B.view(B.alloc(max(1, int(np.prod(oshape)) * t.np_dtype.itemsize)), 0, t, oshape)
        fn, args, kw = n.op.bind(n, views_in, [vo])
        thunk = _direct_conv1d(fn, args, views_in, vo)
        if thunk is None:
            thunk = fn if not args and not kw else partial(fn, *args, **kw)
        e = [[B.input_view(v) for v in views_in], B.input_view(vo), thunk, True]
        if sum(a.nbytes for a in e[0]) + e[1].nbytes <= _BIND_KEEP_BYTES:
            if len(self.cache) >= _BIND_CACHE:
                self.cache.clear()
            self.cache[key] = e         # (a big first chunk's buffers are not kept)
        return e


def _direct_conv1d(fn, args, ins, out):
    """A qrt.nn.Conv1d bound call as its prepared kernel plan on these fixed buffers (the
    plan its ``_call`` looks up on every call, resolved once here); None for anything else."""
    from qrt.nn import Conv1d
    m = getattr(fn, "__self__", None)
    if not isinstance(m, Conv1d) or getattr(fn, "__name__", "") != "_call" or \
            len(args) < 2 or args[0] is not ins[0] or args[1] is not out:
        return None
    fn(*args)                               # makes (and caches) the plan for these buffers
    x = ins[0]
    key = (x._shape, x._strides, x._dtype, x._qscheme, x._scale, x._zero_point,
           m.scale, m.zero_point, m._variant)
    entry = m._plans.get(key)
    if entry is None or m._out_qtensor(out, entry[1]) is not out:
        return None
    return partial(entry[0].run_u8, x._storage, x._offset, out._storage, out._offset)


class _RnnRunner:
    """A recurrent op bound with (h0, c0) inputs this stream owns: each call starts from the
    state the previous one ended with (torch's sequence = its chunks with (h, c) carried)."""

    def __init__(self, node):
        self.node = node
        self.cache: Dict[tuple, tuple] = {}
        self.h = None      # [h0, c0] arrays, made at the first chunk (zeros: torch's default)

    def state(self):
        return [v.copy() for v in self.h]

    def __call__(self, x):
        n = self.node
        e = self.cache.get(x.shape)
        if e is None:
            shapes = n.op.infer(n, [x.shape])
            if self.h is None:
                self.h = [np.zeros(sh, np.float32) for sh in shapes[1:]]
            xin = np.empty(x.shape, np.float32)
            outs = [np.empty(sh, np.float32) for sh in shapes]
            fn, args, kw = n.op.bind(n, [xin] + self.h, outs)
            e = (xin, outs, fn, args, kw)
            if xin.nbytes + sum(o.nbytes for o in outs) <= _BIND_KEEP_BYTES:
                if len(self.cache) >= _BIND_CACHE:
                    self.cache.clear()
                self.cache[x.shape] = e
        xin, outs, fn, args, kw = e
        np.copyto(xin, x)
        fn(*args, **kw)
        for h, o in zip(self.h, outs[1:]):
            np.copyto(h, o)
        return [v.copy() for v in outs]


def _take(x, ax, a, b):
    if ax == x.ndim - 1:
        return x[..., a:b]
    idx = [slice(None)] * x.ndim
    idx[ax] = slice(a, b)
    return x[tuple(idx)]


def _cat(a, b, ax):
    """``a`` then ``b`` along ``ax``, as an array the caller owns (state never keeps a view of
    a runner's buffer or of the caller's chunk)."""
    if a is None or a.shape[ax] == 0:
        return b.copy()
    if b.shape[ax] == 0:
        return a
    return np.concatenate([a, b], axis=ax)


def _frames(x, ax, n, value, dtype):
    shp = list(x.shape)
    shp[ax] = n
    return np.full(shp, value, dtype)


# ---- a stream ----------------------------------------------------------------------------------
class Stream:
    """One stream over a loaded model (see :meth:`qrt.Model.stream`): ``s(chunk)`` takes the
    next frames along time and returns the output frames they complete, ``s.flush()`` ends the
    signal, ``s.reset()`` starts a new one. Each stream has its own state and buffers: use one
    stream per thread (a stream itself is not for concurrent calls)."""

    def __init__(self, model, schedule: Schedule):
        self.model = model
        self.sched = schedule
        self._runners = [self._runner(o) for o in schedule.ops]
        self._lock = threading.Lock()
        self.reset()

    @staticmethod
    def _runner(o):
        if o.node.op.alias or o.kind in ("slice", "global", "last"):
            return None
        if o.kind == "rnn":
            return _RnnRunner(o.node)
        if o.kind == "transpose":
            return {k: _Runner(n) for k, n in o.run_node.items()}
        return _Runner(o.run_node)

    @property
    def latency(self) -> int:
        """Lookahead in input frames: a streamed output frame waits for this many input
        frames past its own (0 for a causal model)."""
        return self.sched.latency

    def _sched_table(self) -> str:
        return self.sched.table()

    @property
    def time_axis(self) -> int:
        return self.sched.in_axis

    @property
    def state_nbytes(self) -> int:
        """Bytes of state this stream holds now (frame buffers, running sums)."""
        n = 0
        for st in self._st:
            for v in st.values():
                if isinstance(v, np.ndarray):
                    n += v.nbytes
                elif isinstance(v, list):
                    n += sum(x.nbytes for x in v if isinstance(x, np.ndarray))
        for r in self._runners:
            if isinstance(r, _RnnRunner) and r.h is not None:
                n += sum(h.nbytes for h in r.h)
        return n

    @property
    def scratch_nbytes(self) -> int:
        """Bytes of the per-stream buffers the ops are bound on (input and output of each op
        per window shape met, at most ``_BIND_CACHE`` shapes per op): memory, not state."""
        n = 0
        for r in self._runners:
            rs = r.values() if isinstance(r, dict) else [r]
            for q in rs:
                if isinstance(q, _Runner):
                    n += sum(sum(a.nbytes for a in e[0]) + e[1].nbytes
                             for e in q.cache.values())
                elif isinstance(q, _RnnRunner):
                    n += sum(e[0].nbytes + sum(o.nbytes for o in e[1])
                             for e in q.cache.values())
        return n

    def reset(self) -> None:
        """Forget the signal: the next chunk starts a new one."""
        self._st = [dict() for _ in self.sched.ops]
        self._steps = [(_STEP[o.kind], o, run, st, tuple(o.node.input_ids),
                        o.node.output_ids[0] if len(o.node.output_ids) == 1 else None)
                       for o, run, st in zip(self.sched.ops, self._runners, self._st)]
        for r in self._runners:
            if isinstance(r, _RnnRunner):   # its bound calls hold the old state arrays
                r.h = None
                r.cache.clear()
        self._batch_shape = None
        self._fast = None       # (dtype, ndim, time axis, dims before, dims after) checked
        self._calls = 0
        self._n_in = 0
        self._done = False
        self._values = {}

    # ---- input checks (before any state changes) ----
    def _check(self, x):
        sch = self.sched
        spec = self.model.inputs[0]
        t = self.model.graph.tensors[sch.inp]
        from qrt._tensor import QTensor
        if t.qscheme == "none":
            if not isinstance(x, np.ndarray) or isinstance(x, QTensor) or \
                    x.dtype != np.dtype(t.np_dtype):
                got = getattr(x, "dtype", type(x).__name__)
                raise ValueError(f"stream input {spec.name!r}: expected a {t.dtype} numpy "
                                 f"array, got dtype {got}")
            arr = x
        else:
            if not isinstance(x, QTensor) or x.dtype.name != t.dtype or \
                    (x.q_scale(), x.q_zero_point()) != (t.scale, t.zero_point):
                raise ValueError(f"stream input {spec.name!r}: expected a {t.dtype} QTensor "
                                 f"with scale={t.scale!r}, zero_point={t.zero_point}")
            arr = np.asarray(x.int_repr())
        ax = sch.in_axis
        want = list(sch.in_shape0)
        if arr.ndim != len(want):
            raise ValueError(f"stream input {spec.name!r}: expected {len(want)} dims (time on "
                             f"axis {ax}), got shape {tuple(arr.shape)}")
        other = [d for k, d in enumerate(arr.shape) if k != ax]
        ref = self._batch_shape
        if ref is None:
            ref = [d for k, d in enumerate(want) if k != ax]
            if t.batched and not self.model._fixed_batch:
                ref[0] = arr.shape[0]
        if list(other) != list(ref) or (t.batched and arr.shape[0] < 1):
            exp = list(ref)
            exp.insert(ax, "T")
            raise ValueError(f"stream input {spec.name!r}: expected shape {tuple(exp)} "
                             f"(any T >= 0 along axis {ax}), got {tuple(arr.shape)}")
        if self._done:
            raise ValueError("this stream was flushed: reset() it before the next signal")
        if self._batch_shape is None:
            per_item = sch.state_bound
            batch = arr.shape[0] if t.batched else 1
            if per_item * batch > MAX_STATE_BYTES:
                raise ValueError(f"this stream would keep about {per_item * batch} bytes of "
                                 f"state, more than {MAX_STATE_BYTES}")
        return arr, other

    def __call__(self, chunk):
        with self._lock:
            self._calls += 1
            if not self._calls & 63:        # every 64 calls: free bindings no longer used
                for r in self._runners:
                    if isinstance(r, _Runner):
                        r.sweep()
                    elif isinstance(r, dict):
                        for q in r.values():
                            q.sweep()
            fast = self._fast
            if fast is not None and type(chunk) is np.ndarray and chunk.dtype is fast[0] and \
                    chunk.ndim == fast[1] and chunk.shape[:fast[2]] == fast[3] and \
                    chunk.shape[fast[2] + 1:] == fast[4] and not self._done:
                # the checks below passed for this dtype and these other dims already
                self._n_in += chunk.shape[fast[2]]
                return self._run(chunk if chunk.flags.c_contiguous else
                                 np.ascontiguousarray(chunk), final=False)
            arr, other = self._check(chunk)
            self._batch_shape = other
            if type(chunk) is np.ndarray:
                ax = self.sched.in_axis
                self._fast = (chunk.dtype, chunk.ndim, ax, chunk.shape[:ax],
                              chunk.shape[ax + 1:])
            self._n_in += arr.shape[self.sched.in_axis]
            return self._run(np.ascontiguousarray(arr), final=False)

    def flush(self):
        """End of signal: the outputs held back by lookahead (the offline run's right
        padding), then the stream takes no more chunks until :meth:`reset`."""
        with self._lock:
            if self._batch_shape is None:
                raise ValueError("flush() before any input: the stream has seen no frames")
            if self._done:
                raise ValueError("this stream was already flushed")
            sch = self.sched
            shp = list(self._batch_shape)
            shp.insert(sch.in_axis, 0)
            t = self.model.graph.tensors[sch.inp]
            out = self._run(np.zeros(shp, t.np_dtype), final=True)
            self._done = True
            return out

    # ---- the per-call schedule ----
    def _run(self, x, final):
        sch, g = self.sched, self.model.graph
        vals: Dict[int, Optional[np.ndarray]] = {sch.inp: x}
        get = vals.get
        for fn, o, run, st, in_ids, out_id in self._steps:
            v = fn(self, o, run, st, [get(i) for i in in_ids], final)
            if out_id is None:          # several outputs
                for i, vi in zip(o.node.output_ids, v):
                    vals[i] = vi
            else:
                vals[out_id] = v
        outs = []
        for i in sch.outputs:
            v = vals.get(i)
            ax = sch.axes[i]
            if ax is None:
                if v is not None:
                    v = v.copy()
                    self._values[i] = v
                outs.append(self._wrap(i, v))
                continue
            if v is None:
                shp = list(sch.out_shapes0[i])
                if g.tensors[i].batched:
                    shp[0] = self._batch_shape[0]
                shp[ax] = 0
                v = np.zeros(shp, g.tensors[i].np_dtype)
            else:
                v = v.copy()            # the caller's: runner buffers are reused
            outs.append(self._wrap(i, v))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _wrap(self, i, v):
        t = self.model.graph.tensors[i]
        if v is None or t.qscheme == "none":
            return v
        from qrt._quantize import from_int_repr
        return from_int_repr(v, t.scale, t.zero_point, t.dtype)

    # ---- adapters ----
    def _local(self, o, run, st, ins, final):
        x = ins[0]
        if x is None or x.shape[o.in_axes[0]] == 0:
            return None
        if run is None:     # alias op: the same codes, reshaped
            shp = o.node.op.infer(o.node, [x.shape])[0]
            return x.reshape(shp)
        ax = o.in_axes[0]
        if o.two and x.shape[ax] == 1:   # the same summation order as a longer run
            y = run([np.concatenate([x, x], axis=ax)])
            return _take(y, o.out_axis, 0, 1)
        return run([x])

    def _timeless(self, o, run, st, ins, final):
        if any(v is None for v in ins):
            return None
        if run is None:
            return ins[0].reshape(o.node.op.infer(o.node, [ins[0].shape])[0])
        return run(ins)

    def _align(self, o, run, st, ins, final):
        bufs = st.get("bufs") or [None] * len(ins)
        for j, (x, ax) in enumerate(zip(ins, o.in_axes)):
            if x is not None:
                bufs[j] = _cat(bufs[j], x, ax)
        st["bufs"] = bufs
        if any(b is None for b in bufs):
            return None
        m = min(b.shape[ax] for b, ax in zip(bufs, o.in_axes))
        if m == 0:
            return None
        now = [_take(b, ax, 0, m) for b, ax in zip(bufs, o.in_axes)]
        st["bufs"] = [_take(b, ax, m, None) for b, ax in zip(bufs, o.in_axes)]
        return run(now)

    def _window(self, o, run, st, ins, final):
        x = ins[0]
        ax = o.in_axes[0]
        buf = st.get("buf")
        if x is not None:
            if buf is None:             # left padding: the first frames of the window
                buf = _frames(x, ax, o.pl, o.pad, x.dtype)
                st["n"] = 0
            st["n"] += x.shape[ax]
            skip = st.get("skip", 0)    # stride > span: frames no window reads
            if skip:
                k = min(skip, x.shape[ax])
                x = _take(x, ax, k, None)
                st["skip"] = skip - k
            buf = _cat(buf, x, ax)
        if buf is None:
            return None
        if final:
            L = st["n"]
            extra = o.pr
            if o.ceil:                  # the partial last window of ceil_mode
                from qrt._geometry import pool_out_len
                lo = pool_out_len(L, o.kernel, o.stride, o.pl, o.dil, True)
                extra = max(extra, (lo - 1) * o.stride + o.span - (o.pl + L))
            if extra > 0:
                buf = _cat(buf, _frames(buf, ax, extra, o.pad, buf.dtype), ax)
        have = buf.shape[ax]
        m = (have - o.span) // o.stride + 1 if have >= o.span else 0
        if m <= 0:
            st["buf"] = buf
            return None
        y = run([_take(buf, ax, 0, (m - 1) * o.stride + o.span)])
        st["skip"] = st.get("skip", 0) + max(0, m * o.stride - have)
        st["buf"] = np.ascontiguousarray(_take(buf, ax, m * o.stride, None))
        return y

    def _transpose(self, o, run, st, ins, final):
        x = ins[0]
        ax = o.in_axes[0]
        s, p, span = o.stride, o.p, o.span
        buf = st.get("buf")             # input frames from index st["i0"] on
        if x is not None and x.shape[ax]:
            if buf is None:
                st["i0"], st["a"], st["n"] = 0, 0, 0
            buf = _cat(buf, x, ax)
            st["n"] += x.shape[ax]
        if buf is None:
            return None
        n, i0, a = st["n"], st["i0"], st["a"]
        L_out = (n - 1) * s - 2 * p + span + o.op     # the offline length if it ended now
        natural_end = (n - 1) * s + span - p          # global index after the window's end
        # before the end: outputs every contributing input of which has arrived, and that
        # the window computes (a kernel shorter than the stride leaves bias-only frames
        # after it: they come with the next input)
        b = L_out if final else min(n * s - p, L_out, natural_end)
        if b <= a:
            st["buf"] = buf
            return None
        extra = max(0, L_out - natural_end) if final else 0
        y = run[extra]([buf])                         # outputs from global i0 * s - p on
        off = i0 * s - p
        y = np.ascontiguousarray(_take(y, ax, a - off, b - off))
        # keep the inputs that contribute to outputs >= b
        # (and the input whose outputs start at or before b: the next window starts there)
        first = max(0, -(-(b + p - span + 1) // s))
        first = min(first, (b + p) // s, n)
        if first > i0:
            buf = np.ascontiguousarray(_take(buf, ax, first - i0, None))
            st["i0"] = first
        st["buf"], st["a"] = buf, b
        return y

    def _slice(self, o, run, st, ins, final):
        x = ins[0]
        ax = o.in_axes[0]
        buf = st.get("buf")
        if x is not None:
            buf = _cat(buf, x, ax)
            st.setdefault("pos", 0)    # global index of buf's first frame
            st["n"] = st.get("n", 0) + x.shape[ax]
        if buf is None:
            return None
        pos, n = st["pos"], st["n"]
        start, stop = o.start, o.stop
        if stop < 0:
            end = n + stop if final else n - o.keep_back
        else:
            end = min(stop, n)
        lo = max(start, pos)
        if end <= lo:
            y = None
            drop = min(max(0, lo - pos), buf.shape[ax])
        else:
            y = np.ascontiguousarray(_take(buf, ax, lo - pos, end - pos))
            drop = end - pos
        st["buf"] = np.ascontiguousarray(_take(buf, ax, drop, None))
        st["pos"] = pos + drop
        return y

    def _rnn(self, o, run, st, ins, final):
        x = ins[0]
        if x is not None and x.shape[o.in_axes[0]]:
            st["n"] = 1
            return run(x)
        if final and st.get("n"):
            return [None] + run.state()
        return [None] * len(o.node.output_ids)

    def _last(self, o, run, st, ins, final):
        x = ins[0]
        ax = o.in_axes[0]
        if x is not None and x.shape[ax]:
            st["v"] = np.ascontiguousarray(np.take(x, x.shape[ax] - 1, axis=ax))
            return st["v"]
        return st.get("v") if final else None

    def _global(self, o, run, st, ins, final):
        x = ins[0]
        flt = o.node.inputs[0].qscheme == "none"
        if x is not None and x.shape[-1]:
            acc = st.get("acc")
            s = x.astype(np.float64 if flt else np.int64).sum(axis=-1, keepdims=True)
            st["acc"] = s if acc is None else acc + s
            st["n"] = st.get("n", 0) + x.shape[-1]
        elif not final:
            return None
        if "acc" not in st:
            return None
        if flt:     # float64 running sum (offline: float32 pairwise sum; docs/streaming.md)
            return (st["acc"] * (1.0 / st["n"])).astype(np.float32)
        return _pool_codes(o.node, st["acc"], st["n"])


def _pool_codes(node, acc64, n):
    """What the bound kernel gives for a whole-length average of ``n`` frames whose codes sum
    to ``acc64`` (qrt/functional/_ops.py pool_binding, include/qrt/ref/pool1d_ref.h): quint8
    over n > 1 frames: QNNPACK's average pool (kernel = stride = n) as torch's qnnpack engine;
    else ATen's generic adaptive kernel (adaptive_avg_pool1d) or average pool (avg_pool1d)."""
    t = node.inputs[0]
    f32 = np.float32
    qmin, qmax = {"quint8": (0, 255), "qint8": (-128, 127)}[t.dtype]
    zp = t.zero_point
    acc = acc64.astype(np.int32)                # the kernels' int32 accumulator
    if t.dtype == "quint8" and n > 1:
        sf = f32(t.scale)
        scale = f32(sf / f32(sf * f32(n)))
        v = np.rint((acc - np.int32(n * zp)).astype(f32) * scale) + f32(zp)
    elif node.kind == "adaptive_avg_pool1d":
        v = np.rint(acc.astype(f32) * (f32(1.0) / f32(n)))
    else:                                       # GENERIC avg_pool1d, count_include_pad
        rcp = f32(1.0 / float(n))
        v = np.rint((acc - np.int32(n * zp)).astype(f32) * rcp + f32(zp))
    return np.clip(v, qmin, qmax).astype(t.np_dtype)


_STEP = {"local": Stream._local, "timeless": Stream._timeless, "align": Stream._align,
         "window": Stream._window, "transpose": Stream._transpose, "slice": Stream._slice,
         "global": Stream._global, "rnn": Stream._rnn, "last": Stream._last}

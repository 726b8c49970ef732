# SPDX-License-Identifier: Apache-2.0
"""qrt.Model: a loaded blob run on the CPU by the shared graph executor (qrt/executor.py).

Weights are views of the mapping, packed once at load by each op's definition (qrt/ops). For
each tuple of input shapes a plan is made once (an LRU of PLAN_CACHE_SIZE plans): shapes are
inferred op by op, every activation gets a fixed place in a single arena ``Storage`` sized
from tensor lifetimes, and every op gets its argument views. A call then copies the inputs
in, runs the bound kernel calls and copies the outputs out: no op allocates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from qrt._format.reader import Blob, FormatError, TensorEntry
from qrt._storage import Storage
from qrt._tensor import QTensor, _contiguous_strides, as_dtype, per_tensor_affine
from qrt.executor import Executor, Graph
from qrt.ops.embedding import INDEX_DTYPES

__all__ = ["Model", "Profile", "TensorSpec"]

_F32_DT = np.dtype(np.float32)


@dataclass(frozen=True)
class TensorSpec:
    """A model input or output: name, shape (batch dim = None when it varies), dtype, qparams."""

    name: str
    shape: Tuple[Optional[int], ...]
    dtype: str
    scale: Optional[float] = None
    zero_point: Optional[int] = None

    @property
    def qparams(self):
        return None if self.scale is None else (self.scale, self.zero_point)


@dataclass
class Profile:
    """Result of :meth:`Model.profile`: per-op medians of one call.

    rows: dicts with index, op, name, shape (output), us (median microseconds), share (of the
    summed op medians, 0..1), macs.  ops_us: sum of the op medians; call_us: median of a whole
    normal call; overhead_us = call_us - ops_us (input copies, checks, output copies, Python
    dispatch between ops).
    """

    batch: Optional[int]
    iters: int
    rows: List[Dict[str, Any]]
    ops_us: float
    call_us: float
    overhead_us: float
    outputs: Any = None

    def __str__(self):   # print(model.profile(x)) shows the table, not the dataclass
        return self.table()

    def table(self) -> str:
        """The rows as a fixed-width text table, with a totals line."""
        lines = [f"{'#':>3}  {'op':<20} {'name':<24} {'output shape':<16} {'median us':>10} "
                 f"{'share':>7} {'MACs':>10}"]
        for r in self.rows:
            lines.append(f"{r['index']:>3}  {r['op']:<20} {r['name'][:24]:<24} "
                         f"{str(r['shape']):<16} {r['us']:>10.2f} {100 * r['share']:>6.1f}% "
                         f"{r['macs']:>10}")
        lines.append(f"ops {self.ops_us:.2f} us + Python overhead {self.overhead_us:.2f} us "
                     f"= call {self.call_us:.2f} us (medians of {self.iters} runs)")
        return "\n".join(lines)


def _checked_batch(model: "Model", batch, what: str = "batch") -> int:
    """A run-time batch size as an int >= 1 whose arena stays under the plan bound (a
    problem of the call, a ``ValueError``, not of the file), without planning it."""
    from qrt.executor import MAX_ARENA
    if isinstance(batch, (bool, np.bool_)) or not hasattr(batch, "__index__"):
        raise TypeError(f"{what} must be an integer, got {type(batch).__name__}")
    b = batch.__index__()
    if b < 1:
        raise ValueError(f"{what} must be >= 1, got {b}")
    if model._fixed_batch and b != model._batch0:
        raise ValueError(f"this model only runs at batch size {model._batch0}")
    b0 = model._batch0 or 1
    need = -(-model.arena_nbytes * b // b0)  # activations scale with the batch at most
    if need > MAX_ARENA:
        raise ValueError(f"{what} {b} would need about {need} bytes of activations, more "
                         f"than the {MAX_ARENA}-byte bound of one plan")
    return b


class CPUBackend:
    """The executor's CPU backend: arena Storages, QTensor/ndarray views, each op's bind()."""

    name = "cpu"

    def supports(self, node):
        return None

    def unsupported(self, missing):  # pragma: no cover - the CPU runs every op kind
        n, why = missing[0]
        raise n.fail(why)

    def prepare(self, node):
        try:
            node.state = node.op.prepare(node)
        except FormatError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, OverflowError) as e:
            raise node.fail(f"invalid parameters: {e}") from None

    @staticmethod
    def alloc(nbytes, zero=False):
        st = Storage.empty(nbytes)
        if zero:
            st.fill_(0)
        return st

    @staticmethod
    def view(arena, offset, t: TensorEntry, shape):
        if t.qscheme == "per_tensor_affine":
            it = t.np_dtype.itemsize
            return QTensor._wrap(arena, shape, _contiguous_strides(shape), offset // it,
                                 as_dtype(t.dtype), per_tensor_affine, t.scale, t.zero_point,
                                 None, None, None)
        n = 1
        for d in shape:
            n *= int(d)
        return np.frombuffer(arena, dtype=t.np_dtype, count=n, offset=offset).reshape(shape)

    @staticmethod
    def bind(node, ins, outs):
        return node.op.bind(node, ins, outs)

    @staticmethod
    def input_view(v):
        return v.int_repr() if isinstance(v, QTensor) else v

    direct_inputs = True  # the executor may point an input's one reader at the caller's array

    @staticmethod
    def direct_source(node, call):
        """The source argument of this bound call when the executor may replace it with the
        caller's contiguous float32 array of the same shape (flattened): the quantize of a
        float input (qrt.ops.quant binds the kernel on the flat input view); else None."""
        from qrt import _quant
        fn, args, kw = call
        if node.kind == "quantize" and fn in (_quant.quantize_fma_u8, _quant.quantize_fma_s8) \
                and args and not kw:
            return args[0]
        return None

    @staticmethod
    def fill_neutral(plan, entries):
        for t, v in zip(entries, plan.in_views):
            v[...] = t.zero_point if t.qscheme == "per_tensor_affine" else 0

    @staticmethod
    def reset_state(plan):
        for st in plan.state_buffers.values():
            st.fill_(0)


def _copy_in(dst, x):
    # dtypes were checked by Model._in_shapes; "safe" only widens int32 indices to int64
    np.copyto(dst, x.int_repr() if isinstance(x, QTensor) else x, casting="safe")


def _copy_out(v):
    return v.clone() if isinstance(v, QTensor) else v.copy()


class Model:
    """A quantized model loaded from a qrt blob; call it like the torch model.

    Use :func:`qrt.load` to create one. ``model(x)`` takes float32 arrays (QTensors for
    quantized inputs, int64/int32 arrays of the declared dtype for index inputs, int32 also
    for an int64 one) and returns float32 arrays (or QTensors), as the exported torch model.
    Inputs may have any shape the graph's ops accept (another batch size, another length):
    shapes are inferred op by op, and a shape an op refuses is a ValueError naming that op.
    """

    def __init__(self, blob: Blob):
        if blob.tensor_file:
            raise FormatError("R23", "this is a tensor file (written by qrt.save), not a "
                              "model; read it with qrt.load_tensors", path=blob.path)
        self._blob = blob
        self._t: List[TensorEntry] = blob.tensors
        self.path = blob.path
        self.meta = blob.meta
        self._fixed_batch = blob.fixed_batch
        self.graph = Graph(blob)
        ins = [self._t[i] for i in blob.inputs]
        self._batch0 = ins[0].shape[0] if ins[0].batched else None
        batches = {t.shape[0] for t in self._t if t.kind != "constant" and t.batched}
        if len(batches) > 1 or (batches and self._batch0 is None):
            raise FormatError("R22", f"batched tensors disagree on the exported batch size "
                              f"({sorted(batches)[:4]}; the first input is "
                              f"{'not batched' if self._batch0 is None else self._batch0})",
                              section="TENSORS", path=self.path)
        self.inputs = [self._spec(t) for t in ins]
        self._n_in = len(ins)
        self._in_io, self._out_io = _io_meta(blob, len(ins), len(blob.outputs))
        self._all_f32 = all(t.dtype == "float32" and t.qscheme == "none" for t in ins)
        self.outputs = [self._spec(self._t[i]) for i in blob.outputs]
        self.weights_nbytes = sum(t.nbytes for t in self._t if t.kind == "constant")
        # Shapes (R22) and the memory bound (R27) are checked before anything is packed or
        # allocated.
        shapes = self.graph.check_exported_shapes()
        self._exec = Executor(self.graph, CPUBackend())
        self._exec.arena_limit_check(shapes, self.weights_nbytes)
        self._exec.prepare()
        self._lock = self._exec._lock
        plan = self._exec.plan(self._exported_shapes(self._batch0))
        self.arena_nbytes = plan.nbytes
        self._exec.dry_run(plan)

    def stream(self, time_axis: Optional[int] = None) -> "qrt.stream.Stream":  # noqa: F821
        """A new :class:`qrt.stream.Stream` over this model: ``s(chunk)`` runs the next frames
        along time, ``s.flush()`` ends the signal (docs/streaming.md). Streams are independent
        (their own state); the streaming schedule is derived once per time axis and shared.
        ValueError names the op when the model cannot be streamed."""
        from qrt.stream import Schedule, Stream
        key = time_axis
        with self._lock:
            cache = self.__dict__.setdefault("_schedules", {})
            sched = cache.get(key)
            if sched is None:
                sched = cache[key] = Schedule(self, time_axis)
        return Stream(self, sched)

    @property
    def _plans(self):
        return self._exec._plans

    def reset_state(self) -> None:
        """Zero every state tensor (streaming windows, recurrent state) of every plan."""
        with self._lock:
            for plan in self._exec._plans.values():
                CPUBackend.reset_state(plan)

    # ---- shapes -------------------------------------------------------------------------------
    def _spec(self, t: TensorEntry) -> TensorSpec:
        shape = tuple(None if (k == 0 and t.batched and not self._fixed_batch) else d
                      for k, d in enumerate(t.shape))
        if t.qscheme == "per_tensor_affine":
            return TensorSpec(t.name, shape, t.dtype, t.scale, t.zero_point)
        return TensorSpec(t.name, shape, t.dtype)

    def _exported_shapes(self, batch):
        out = []
        for i in self._blob.inputs:
            t = self._t[i]
            out.append((batch,) + t.shape[1:] if t.batched and batch is not None else t.shape)
        return out

    def _in_shapes(self, args) -> List[tuple]:
        if len(args) != len(self.inputs):
            raise TypeError(f"model takes {len(self.inputs)} input(s) "
                            f"({', '.join(s.name for s in self.inputs)}), got {len(args)}")
        batch = None
        shapes = []
        for x, spec, i in zip(args, self.inputs, self._blob.inputs):
            shape = tuple(x.shape) if hasattr(x, "shape") else None
            if shape is None:
                raise TypeError(f"input {spec.name!r}: expected a numpy array or qrt.QTensor, "
                                f"got {type(x).__name__}")
            if spec.dtype == "float32":
                if isinstance(x, QTensor) or np.asarray(x).dtype != np.float32:
                    got = x.dtype if hasattr(x, "dtype") else type(x).__name__
                    how = " (convert it with x.astype(np.float32))" if \
                        isinstance(x, np.ndarray) and x.dtype.kind in "fiub" else ""
                    raise ValueError(f"input {spec.name!r}: expected a float32 array of shape "
                                     f"{self._shape_str(spec)}, got dtype {got}{how}")
            elif spec.dtype in INDEX_DTYPES:   # embedding indices / offsets (R28)
                # the exported dtype, or int32 for an int64 input (lossless; numpy's default
                # integer on a 32-bit Raspberry Pi OS)
                ok_dt = (np.dtype(spec.dtype),) + \
                    ((np.dtype(np.int32),) if spec.dtype == "int64" else ())
                if isinstance(x, QTensor) or np.asarray(x).dtype not in ok_dt:
                    got = x.dtype if hasattr(x, "dtype") else type(x).__name__
                    also = " (or int32)" if spec.dtype == "int64" else ""
                    raise ValueError(f"input {spec.name!r}: expected an {spec.dtype}{also} index "
                                     f"array of shape {self._shape_str(spec)}, got dtype {got}"
                                     f" (convert it with .astype(np.{spec.dtype}))")
            else:
                if not isinstance(x, QTensor) or x.dtype.name != spec.dtype or \
                        x.qscheme() is not per_tensor_affine or \
                        (x.q_scale(), x.q_zero_point()) != (spec.scale, spec.zero_point):
                    raise ValueError(f"input {spec.name!r}: expected a {spec.dtype} QTensor "
                                     f"with scale={spec.scale!r}, zero_point="
                                     f"{spec.zero_point}, shape {self._shape_str(spec)}; got "
                                     f"{x!r}")
            t = self._t[i]
            ok = len(shape) == len(spec.shape)
            if ok and t.batched:
                if shape[0] < 1 or (batch is not None and shape[0] != batch) or \
                        (self._fixed_batch and shape[0] != self._batch0):
                    ok = False
                batch = shape[0]
            if not ok and spec.dtype in INDEX_DTYPES and not t.batched:
                raise ValueError(f"input {spec.name!r}: expected {len(spec.shape)}-d indices "
                                 f"(any length), got shape {shape}")
            if not ok and t.batched and len(shape) == len(spec.shape) and shape[0] == 0:
                raise ValueError(f"input {spec.name!r}: the batch is empty (shape {shape}); "
                                 f"give at least one sample of shape {self._shape_str(spec)}")
            if not ok:
                raise ValueError(f"input {spec.name!r}: expected shape {self._shape_str(spec)}, "
                                 f"got {shape}")
            shapes.append(shape)
        if batch is not None and hasattr(self, "arena_nbytes"):
            _checked_batch(self, batch, "input batch")  # before numpy touches a huge input
        return shapes

    @staticmethod
    def _shape_str(spec) -> str:
        return "(" + ", ".join("N" if d is None else str(d) for d in spec.shape) + \
            ("," if len(spec.shape) == 1 else "") + ")"

    # ---- running -----------------------------------------------------------------------------
    def __call__(self, *inputs):
        """Run the model. Returns one output, or a tuple when the model has several.

        Calls are serialised per model (the arena is shared); load the blob twice to run
        two calls in parallel (the weights are shared through the page cache).
        """
        plan = None
        if self._all_f32 and len(inputs) == self._n_in:
            # fast path: plain native float32 arrays of shapes already planned (so already
            # validated by _in_shapes: a plan exists only for shapes that passed it or were
            # made from the exported shapes); any other input (QTensor, subclass, another
            # dtype or byte order, new shape) takes the checked path below
            plan = self._exec.cached(tuple([
                x.shape if type(x) is np.ndarray and x.dtype is _F32_DT else None
                for x in inputs]))
        if plan is None:
            if self._in_io is not None and (len(inputs) != self._n_in or any(
                    isinstance(x, (tuple, list, dict)) for x in inputs)):
                inputs = _io_flatten(self._in_io, inputs)   # forward()'s own structure
            plan = self._exec.plan(self._in_shapes(inputs))
        outs = self._exec.run(plan, inputs, _copy_in, _copy_out)
        if self._out_io is not None:
            return _io_build(self._out_io, iter(outs))
        return outs[0] if len(outs) == 1 else outs

    def flat(self, *inputs) -> tuple:
        """Run the model and return its outputs as one flat tuple in the blob's order (names:
        ``model.outputs``), whatever structure forward() returned."""
        out = self(*inputs)
        if self._out_io is None:
            return out if isinstance(out, tuple) else (out,)
        return tuple(_io_leaves_of(out))

    def run(self, *inputs):
        """Same as calling the model."""
        return self(*inputs)

    def profile(self, *inputs, iters: int = 100, warmup: int = 5) -> "Profile":
        """Time every op of one call over ``iters`` runs (after ``warmup``); see :class:`Profile`.

        Each run makes one normal call (timed whole) and one instrumented pass that times
        every bound op call with ``time.perf_counter_ns``; rows hold per-op medians.  The
        normal call path is not changed.  ``Profile.outputs`` is the instrumented pass's
        result (equal to ``self(*inputs)``).
        """
        import time
        iters, warmup = int(iters), int(warmup)
        if iters < 1 or warmup < 0:
            raise ValueError("profile: iters must be >= 1 and warmup >= 0")
        in_shapes = self._in_shapes(inputs)
        clock = time.perf_counter_ns
        plan = self._exec.plan(in_shapes)
        nodes = self.graph.nodes
        where = {id(n): k for k, n in enumerate(nodes)}
        per_op = np.zeros((iters, len(nodes)), np.int64)
        whole = np.zeros(iters, np.int64)
        outs = None
        for it in range(-warmup, iters):
            t0 = clock()
            self(*inputs)
            t1 = clock()
            with self._lock:
                for x, dst in zip(inputs, plan.in_views):
                    _copy_in(dst, x)
                row = per_op[it] if it >= 0 else per_op[0]
                for n, call in plan.bound:
                    a = clock()
                    call[0](*call[1], **call[2])
                    row[where[id(n)]] = clock() - a
                if it == iters - 1:
                    outs = tuple(_copy_out(v) for v in plan.out_views)
            if it >= 0:
                whole[it] = t1 - t0
        med = np.median(per_op, axis=0) / 1e3
        summed = float(med.sum())
        rows = []
        for r, us in zip(self._rows(plan), med):
            rows.append({"index": r["index"], "op": r["op"], "name": r["name"],
                         "shape": r["shape"], "us": float(us),
                         "share": float(us) / summed if summed > 0 else 0.0,
                         "macs": r["macs"]})
        call_us = float(np.median(whole)) / 1e3
        batch = in_shapes[0][0] if self._t[self._blob.inputs[0]].batched else None
        return Profile(batch=batch, iters=iters, rows=rows, ops_us=summed, call_us=call_us,
                       overhead_us=call_us - summed,
                       outputs=outs[0] if len(outs) == 1 else outs)

    # ---- introspection -------------------------------------------------------------------------
    @property
    def ops(self):
        return list(self._blob.ops)

    @property
    def tensors(self):
        return list(self._t)

    def verify(self) -> None:
        """Re-check the file's bytes against the checksums validated at load.

        Raises :class:`qrt.FormatError` (R8 metadata, R12 weights, R7 file truncated in place)
        when the mapped file changed since :func:`qrt.load`; one CRC-32 pass over the file.
        """
        from qrt._format.reader import verify_blob
        verify_blob(self._blob)

    def _batch_plan(self, batch):
        if batch is None:
            return self._exec.plan(self._exported_shapes(self._batch0))
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)):
            raise TypeError(f"batch must be an integer, got {type(batch).__name__}")
        batch = int(batch)
        if batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        if self._batch0 is None:
            raise ValueError("this model has no batch dimension")
        if self._fixed_batch and batch != self._batch0:
            raise ValueError(f"this model only runs at batch size {self._batch0}")
        return self._exec.plan(self._exported_shapes(batch))

    def arena_nbytes_for(self, batch: int) -> int:
        """Arena bytes needed at ``batch`` (plans and caches that batch size)."""
        return self._batch_plan(batch).nbytes

    def macs(self, batch: Optional[int] = None) -> int:
        return sum(r["macs"] for r in self._rows(self._batch_plan(batch)))

    def _rows(self, plan):
        rows = []
        for n in self.graph.nodes:
            o = n.outputs[0]
            shapes = [plan.shapes[i] for i in n.input_ids]
            rows.append({"index": n.index, "op": n.label, "name": n.name,
                         "shape": plan.shapes[n.output_ids[0]], "dtype": o.dtype,
                         "qparams": (o.scale, o.zero_point) if o.qscheme != "none" else None,
                         "macs": n.op.macs(n, shapes), "attrs": n.op.describe(n.attrs),
                         "weight_bytes": sum(t.nbytes for t in n.params.values())})
        return rows

    def summary(self, batch: Optional[int] = None) -> str:
        """A per-op table: op, output shape, qparams, MACs, weight bytes."""
        rows = self._rows(self._batch_plan(batch))
        lines = [f"{'#':>3}  {'op':<20} {'name':<24} {'output shape':<18} {'qparams':<24} "
                 f"{'MACs':>10} {'weights':>9}"]
        for r in rows:
            q = "-" if r["qparams"] is None else f"{r['qparams'][0]:.4g}, {r['qparams'][1]}"
            lines.append(f"{r['index']:>3}  {r['op']:<20} {r['name'][:24]:<24} "
                         f"{str(r['shape']):<18} {q:<24} {r['macs']:>10} "
                         f"{r['weight_bytes']:>9}")
        lines.append(f"total: {len(rows)} ops, {sum(r['macs'] for r in rows)} MACs, weights "
                     f"{self.weights_nbytes} B, arena {self.arena_nbytes} B")
        return "\n".join(lines)

    def __repr__(self):
        ins = ", ".join(f"{s.name}{self._shape_str(s)}:{s.dtype}" for s in self.inputs)
        outs = ", ".join(f"{s.name}{self._shape_str(s)}:{s.dtype}" for s in self.outputs)
        return (f"qrt.Model({self.path!r}, ops={len(self._blob.ops)}, inputs=[{ins}], "
                f"outputs=[{outs}], weights={self.weights_nbytes} B, "
                f"arena={self.arena_nbytes} B)")


# ---- forward()'s argument and result structure (blob meta "io", docs/blob-format.md) ----------
_IO_DEPTH = 16


def _io_leaves(spec, depth=0) -> int:
    """Number of tensors a spec holds; ValueError when it is not a well-formed spec."""
    if depth > _IO_DEPTH:
        raise ValueError("nested too deep")
    if spec is None:
        return 1
    if spec == "none":
        return 0
    if isinstance(spec, dict) and len(spec) == 1:
        (kind, kids), = spec.items()
        if kind in ("tuple", "list") and isinstance(kids, list):
            return sum(_io_leaves(c, depth + 1) for c in kids)
        if kind == "dict" and isinstance(kids, list) and all(
                isinstance(kv, list) and len(kv) == 2 and isinstance(kv[0], str)
                for kv in kids):
            return sum(_io_leaves(c, depth + 1) for _, c in kids)
    raise ValueError(f"not a structure: {str(spec)[:80]}")


def _io_meta(blob, n_in, n_out):
    """(inputs spec or None, outputs spec or None) from the blob's meta "io" (R8: a spec that
    does not describe exactly the blob's inputs / outputs is refused)."""
    io = blob.meta.get("io") if isinstance(blob.meta, dict) else None
    if io is None:
        return None, None
    specs = []
    for key, n in (("inputs", n_in), ("outputs", n_out)):
        spec = io.get(key) if isinstance(io, dict) else None
        if spec is None:
            specs.append(None)
            continue
        try:
            k = _io_leaves(spec)
            if key == "inputs" and "tuple" not in spec:
                raise ValueError("the inputs are not a tuple of arguments")
        except (ValueError, TypeError, AttributeError) as e:
            raise FormatError("R8", f"metadata 'io' {key}: {e}", section="META",
                              path=blob.path) from None
        if k != n:
            raise FormatError("R8", f"metadata 'io' {key} holds {k} tensors, the blob has {n}",
                              section="META", path=blob.path)
        specs.append(spec)
    return specs[0], specs[1]


def _io_flatten(spec, args):
    """The flat inputs of forward()'s arguments ``args`` (tuples, lists, dicts as exported)."""
    out = []

    def walk(sp, v, where):
        if sp is None:
            out.append(v)
        elif sp == "none":
            if v is not None:
                raise TypeError(f"{where}: expected None, got {type(v).__name__}")
        elif "dict" in sp:
            if not isinstance(v, dict):
                raise TypeError(f"{where}: expected a dict with keys "
                                f"{[k for k, _ in sp['dict']]}, got {type(v).__name__}")
            for k, c in sp["dict"]:
                if k not in v:
                    raise TypeError(f"{where}: missing key {k!r}")
                walk(c, v[k], f"{where}[{k!r}]")
        else:
            kids = sp.get("tuple", sp.get("list"))
            if not isinstance(v, (tuple, list)) or len(v) != len(kids):
                raise TypeError(f"{where}: expected a tuple of {len(kids)}, got "
                                f"{type(v).__name__}"
                                + (f" of {len(v)}" if isinstance(v, (tuple, list)) else ""))
            for i, (c, x) in enumerate(zip(kids, v)):
                walk(c, x, f"{where}[{i}]")
    walk(spec, tuple(args), "inputs")
    return tuple(out)


def _io_build(spec, it):
    """forward()'s result structure from the flat outputs."""
    if spec is None:
        return next(it)
    if spec == "none":
        return None
    if "dict" in spec:
        return {k: _io_build(c, it) for k, c in spec["dict"]}
    kids = [_io_build(c, it) for c in spec.get("tuple", spec.get("list"))]
    return tuple(kids) if "tuple" in spec else kids


def _io_leaves_of(v):
    if isinstance(v, dict):
        for x in v.values():
            yield from _io_leaves_of(x)
    elif isinstance(v, (tuple, list)):
        for x in v:
            yield from _io_leaves_of(x)
    elif v is not None:
        yield v


# SPDX-License-Identifier: Apache-2.0
"""qrt.Model: a loaded blob. Weights are views of the mapping; activations live in one arena.

Each op is prepared once at load (modules built with ``from_packed``, no repacking). For each
batch size a plan is made once (and cached): every activation gets a fixed place in a single
arena ``Storage`` sized from tensor lifetimes, and every op gets its argument views. A call
then copies the inputs in, runs the prepared ops and copies the outputs out: no op allocates.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from qrt import _quant
from qrt._storage import Storage
from qrt._tensor import QTensor, _contiguous_strides, as_dtype, per_tensor_affine
from qrt.loader import Blob, FormatError, TensorEntry

__all__ = ["Model", "Profile", "TensorSpec"]

_ALIGN = 64
_MAX_ARENA = 1 << 40  # no plan is ever bigger than this; shapes past it are corrupt
# Ops run by a qrt.nn module built from the blob's packed arrays.
MODULE_OPS = {"conv1d": "Conv1d", "conv_relu1d": "ConvReLU1d", "linear": "Linear",
              "linear_relu": "LinearReLU", "linear_dynamic": "DynamicLinear"}
# Ops run by qrt.functional.<name>(*inputs, **attrs["kwargs"], out=output).
FUNCTIONAL_OPS = ("relu", "add", "add_relu", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d",
                  "hardswish", "sigmoid", "cat")
# Ops whose output is a view of their input (arena tensors are always contiguous).
ALIAS_OPS = ("flatten", "reshape", "identity")
# Number of (inputs, outputs) each op kind takes; None = any >= 1.
_ARITY = {"quantize": (1, 1), "dequantize": (1, 1), "add": (2, 1), "add_relu": (2, 1),
          "cat": (None, 1), "custom": (None, 1)}


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


def _checked_batch(model: "Model", batch, what: str = "batch") -> int:
    """A run-time batch size as an int >= 1 whose arena stays under the plan bound.

    A batch that would need more than ``_MAX_ARENA`` bytes of activations is a problem of
    the call (a ``ValueError``), not of the file: the exported batch planned fine at load.
    """
    if isinstance(batch, (bool, np.bool_)) or not hasattr(batch, "__index__"):
        raise TypeError(f"{what} must be an integer, got {type(batch).__name__}")
    b = batch.__index__()
    if b < 1:
        raise ValueError(f"{what} must be >= 1, got {b}")
    if model._fixed_batch and b != model._batch0:
        raise ValueError(f"this model only runs at batch size {model._batch0}")
    b0 = model._batch0 or 1
    need = -(-model.arena_nbytes * b // b0)  # activations scale with the batch at most
    if need > _MAX_ARENA:
        raise ValueError(f"{what} {b} would need about {need} bytes of activations, more "
                         f"than the {_MAX_ARENA}-byte bound of one plan")
    return b


def _nbytes(shape, itemsize) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n * itemsize


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


class _Plan:
    """Arena placement + bound op calls for one batch size."""

    __slots__ = ("batch", "arena", "nbytes", "views", "calls", "in_views", "out_views",
                 "shapes")


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


class Model:
    """A quantized model loaded from a qrt blob; call it like the torch model.

    Use :func:`qrt.load` to create one. ``model(x)`` takes float32 arrays (or QTensors for
    quantized inputs) and returns float32 arrays (or QTensors), as the exported torch model.
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
        self._aliases: Dict[int, int] = {}  # alias output tensor -> root tensor
        self._prepared: List[Tuple[str, Any]] = []
        self._prepare_ops()
        self.weights_nbytes = sum(t.nbytes for t in self._t if t.kind == "constant")
        ins = [self._t[i] for i in blob.inputs]
        self._batch0 = ins[0].shape[0] if ins[0].batched else None
        batches = {t.shape[0] for t in self._t if t.kind == "activation" and t.batched}
        if len(batches) > 1 or (batches and self._batch0 is None):
            raise FormatError("R22", f"batched tensors disagree on the exported batch size "
                              f"({sorted(batches)[:4]}; the first input is "
                              f"{'not batched' if self._batch0 is None else self._batch0})",
                              section="TENSORS", path=self.path)
        self.inputs = [self._spec(t) for t in ins]
        self.outputs = [self._spec(self._t[i]) for i in blob.outputs]
        self._plans: Dict[Optional[int], _Plan] = {}
        self._lock = threading.Lock()
        # Plan once at the exported batch size: this also checks shapes (R22).
        self._plan(self._batch0)
        self.arena_nbytes = self._plans[self._batch0].nbytes
        self._dry_run()

    # ---- load-time preparation --------------------------------------------------------------
    def _err(self, op, msg, rule="R21"):
        if op is None:
            return FormatError(rule, msg, section="OPS", path=self.path)
        return FormatError(rule, f"{op.kind} '{op.name}': {msg}", section="OPS", op=op.index,
                           path=self.path)

    def _spec(self, t: TensorEntry) -> TensorSpec:
        shape = tuple(None if (k == 0 and t.batched and not self._fixed_batch) else d
                      for k, d in enumerate(t.shape))
        if t.qscheme == "per_tensor_affine":
            return TensorSpec(t.name, shape, t.dtype, t.scale, t.zero_point)
        return TensorSpec(t.name, shape, t.dtype)

    def _prepare_ops(self):
        import qrt.functional as F
        for op in self._blob.ops:
            ins = [self._t[i] for i in op.inputs]
            outs = [self._t[i] for i in op.outputs]
            n_in, n_out = _ARITY.get(op.kind, (1, 1))
            if (n_in is not None and len(ins) != n_in) or len(outs) != n_out or not ins:
                raise self._err(op, f"takes {n_in or '>= 1'} input(s) and {n_out} output(s), "
                                f"has {len(ins)} and {len(outs)}")
            if op.kind not in MODULE_OPS and op.params:
                raise self._err(op, "takes no constant parameters")
            if op.kind == "quantize":
                if ins[0].dtype != "float32" or outs[0].qscheme != "per_tensor_affine":
                    raise self._err(op, "maps a float32 tensor to a per-tensor quantized one")
                self._prepared.append(("quantize", None))
            elif op.kind == "dequantize":
                if ins[0].qscheme != "per_tensor_affine" or outs[0].dtype != "float32":
                    raise self._err(op, "maps a per-tensor quantized tensor to float32")
                self._prepared.append(("dequantize", None))
            elif op.kind in MODULE_OPS:
                import qrt.nn as nn
                cls = getattr(nn, MODULE_OPS[op.kind], None)
                if cls is None:
                    raise self._err(op, f"this qrt has no qrt.nn.{MODULE_OPS[op.kind]}")
                names = op.attrs.get("params")
                config = op.attrs.get("config")
                if not isinstance(names, list) or len(names) != len(op.params) or \
                        not isinstance(config, dict) or len(set(map(str, names))) != len(names):
                    raise self._err(op, "attributes need 'config' (object) and 'params' (one "
                                    "unique name per parameter tensor)")
                arrays = {str(k): self._t[i].array for k, i in zip(names, op.params)}
                try:
                    mod = cls.from_packed(config, arrays)
                except (ValueError, TypeError, KeyError, IndexError) as e:
                    raise self._err(op, f"invalid packed module: {e}") from None
                self._prepared.append(("module", mod))
            elif op.kind == "relu" and ins[0].dtype == "float32":
                # float relu (dynamic-quantized models run their activations in float)
                if outs[0].dtype != "float32":
                    raise self._err(op, "float32 relu must produce float32")
                self._prepared.append(("float_relu", None))
            elif op.kind in FUNCTIONAL_OPS:
                fn = getattr(F, op.kind, None)
                if fn is None:
                    raise self._err(op, f"this qrt has no qrt.functional.{op.kind}")
                kw = op.attrs.get("kwargs", {})
                if not isinstance(kw, dict):
                    raise self._err(op, "attribute 'kwargs' must be an object")
                self._prepared.append(("functional", (fn, kw)))
            elif op.kind in ALIAS_OPS:
                if _numel(ins[0].shape) != _numel(outs[0].shape) or \
                        ins[0].dtype != outs[0].dtype or \
                        (ins[0].scale, ins[0].zero_point) != (outs[0].scale, outs[0].zero_point):
                    raise self._err(op, f"a view cannot change {ins[0].shape} {ins[0].dtype} "
                                    f"into {outs[0].shape} {outs[0].dtype} (or its qparams)")
                root = self._aliases.get(op.inputs[0], op.inputs[0])
                self._aliases[op.outputs[0]] = root
                self._prepared.append(("alias", None))
            elif op.kind == "custom":  # format 1.1: qrt.register_op (qrt/custom_ops.py)
                from qrt import custom_ops
                self._prepared.append(("custom", custom_ops.prepare(op, ins, outs, self._err)))
            else:  # pragma: no cover - every kind in qrt._blob.OPS is handled above
                raise self._err(op, "unsupported op kind")
            for t in ins + outs:
                if t.qscheme == "per_channel_affine":
                    raise self._err(op, f"activation {t.name} is per-channel quantized")

    # ---- planning ---------------------------------------------------------------------------
    def _shape(self, t: TensorEntry, batch) -> tuple:
        if t.batched and batch is not None:
            return (batch,) + t.shape[1:]
        return t.shape

    def _plan(self, batch) -> _Plan:
        plan = self._plans.get(batch)
        if plan is not None:
            return plan
        blob, T = self._blob, self._t
        n_ops = len(blob.ops)
        shapes = {i: self._shape(T[i], batch) for i in range(len(T)) if T[i].kind ==
                  "activation"}
        # Lifetimes of buffers (alias roots): [first write, last read].
        life: Dict[int, List[int]] = {}

        def touch(i, k):
            r = self._aliases.get(i, i)
            if r in life:
                life[r][0] = min(life[r][0], k)
                life[r][1] = max(life[r][1], k)
            else:
                life[r] = [k, k]
        for i in blob.inputs:
            touch(i, -1)
        for k, op in enumerate(blob.ops):
            for i in op.inputs + op.outputs:
                touch(i, k)
        for i in blob.outputs:
            touch(i, n_ops)
        for op, (kind, obj) in zip(blob.ops, self._prepared):
            self._check_shapes(op, kind, obj, [shapes[i] for i in op.inputs],
                               shapes[op.outputs[0]])
        sizes = {r: -(-_nbytes(shapes[r], T[r].np_dtype.itemsize) // _ALIGN) * _ALIGN
                 for r in life}
        total_need = sum(sizes.values())
        if total_need > _MAX_ARENA:
            raise self._err(blob.ops[0] if blob.ops else None,
                            f"activations need {total_need} bytes (> {_MAX_ARENA})", "R22")
        placed: List[Tuple[int, int, int, int]] = []  # (offset, size, first, last)
        offsets: Dict[int, int] = {}
        for r in sorted(life, key=lambda r: (-sizes[r], life[r][0], r)):
            f, last = life[r]
            busy = sorted((o, o + s) for o, s, f2, l2 in placed if not (l2 < f or last < f2))
            off = 0
            for a, b in busy:
                if off + sizes[r] <= a:
                    break
                off = max(off, b)
            offsets[r] = off
            placed.append((off, sizes[r], f, last))
        total = max([o + s for o, s, _, _ in placed], default=0)
        arena = Storage.empty(max(total, 1))
        views: Dict[int, Any] = {}
        for i, shp in shapes.items():
            r = self._aliases.get(i, i)
            if r not in offsets:
                continue  # tensor never used
            t = T[i]
            it = t.np_dtype.itemsize
            if t.qscheme == "per_tensor_affine":
                views[i] = QTensor._wrap(arena, shp, _contiguous_strides(shp), offsets[r] // it,
                                         as_dtype(t.dtype), per_tensor_affine, t.scale,
                                         t.zero_point, None, None, None)
            else:
                views[i] = np.frombuffer(arena, dtype=t.np_dtype, count=_numel(shp),
                                         offset=offsets[r]).reshape(shp)
        plan = _Plan()
        plan.batch, plan.arena, plan.nbytes, plan.views, plan.shapes = \
            batch, arena, total, views, shapes
        plan.calls = [self._bind(op, prep, views, shapes)
                      for op, prep in zip(blob.ops, self._prepared)]
        plan.in_views = [self._flat_or_q(views[i]) for i in blob.inputs]
        plan.out_views = [views[i] for i in blob.outputs]
        self._plans[batch] = plan
        return plan

    def _dry_run(self):
        """Run every op once at load on neutral inputs: any attribute a kernel refuses is a
        FormatError naming the op now, not a ValueError at the first call (R21)."""
        plan = self._plans[self._batch0]
        for i, v in zip(self._blob.inputs, plan.in_views):
            t = self._t[i]
            v[...] = t.zero_point if t.qscheme == "per_tensor_affine" else 0
        for op, call in zip(self._blob.ops, plan.calls):
            if call is None:
                continue
            try:
                call[0](*call[1], **call[2])
            except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError,
                    OverflowError, NotImplementedError) as e:
                raise self._err(op, f"the op refuses its blob attributes: "
                                f"{type(e).__name__}: {e}") from None

    @staticmethod
    def _flat_or_q(v):
        return v.int_repr() if isinstance(v, QTensor) else v

    def _bind(self, op, prep, views, shapes) -> Optional[Tuple[Callable, tuple, dict]]:
        kind, obj = prep
        ins = [views[i] for i in op.inputs]
        out = views[op.outputs[0]]
        in_shapes = [shapes[i] for i in op.inputs]
        out_shape = shapes[op.outputs[0]]
        if kind == "quantize":
            t = self._t[op.outputs[0]]
            src = ins[0].reshape(-1)
            dst = out.int_repr().reshape(-1)
            inv = float(np.float32(1.0) / np.float32(t.scale))
            if t.dtype == "quint8":
                return _quant.quantize_fma_u8, (src, dst, inv, float(t.zero_point), 0.0,
                                                255.0), {}
            if t.dtype == "qint8":
                return _quant.quantize_fma_s8, (src, dst, inv, float(t.zero_point), -128.0,
                                                127.0), {}
            return _quant.quantize_rows, (src.reshape(1, 1, -1), dst.reshape(1, 1, -1),
                                          np.array([inv], np.float32),
                                          np.array([t.zero_point], np.float32),
                                          float(-(2**31)), float(2**31 - 1), -(2**31)), {}
        if kind == "dequantize":
            t = self._t[op.inputs[0]]
            return _quant.dequantize_tensor, (ins[0].int_repr().reshape(-1), out.reshape(-1),
                                              float(np.float32(t.scale)), t.zero_point), {}
        if kind == "float_relu":
            return np.maximum, (ins[0], np.float32(0.0)), {"out": out}
        if kind == "alias":
            return None
        if kind == "module":
            return obj, (ins[0],), {"out": out}
        if kind == "custom":
            from qrt import custom_ops
            reg, attrs, out_entry = obj
            return custom_ops.binder(reg, attrs, out_entry, op.attrs["op"]), \
                tuple(ins) + (out,), {}
        fn, kw = obj
        if op.kind in ("max_pool1d", "avg_pool1d", "adaptive_avg_pool1d"):
            # one kernel call on the plan's fixed buffers (the checks ran here, once)
            from qrt.functional._ops import pool_binding
            b = pool_binding(op.kind, ins[0], out, kw)
            if b is not None:
                return b[0], b[1], {}
        kwargs = dict(kw)
        kwargs["out"] = out
        if op.kind == "cat":
            return fn, (list(ins),), kwargs
        return fn, tuple(ins), kwargs

    def _check_shapes(self, op, kind, obj, ins, out):
        """R22: the stored output shape is what the op computes from its input shapes."""
        def bad(want):
            raise self._err(op, f"computes shape {tuple(want)} from {ins}, the blob says "
                            f"{tuple(out)}", "R22")
        k = op.kind
        if kind in ("quantize", "dequantize", "float_relu") or k in ("relu", "hardswish",
                                                                      "sigmoid"):
            if ins[0] != out:
                bad(ins[0])
        elif k in ("add", "add_relu"):
            if ins[0] != out or ins[1] != out:
                bad(ins[0])
        elif kind == "alias":
            if _numel(ins[0]) != _numel(out):
                raise self._err(op, f"cannot view {ins[0]} as {out}", "R22")
        elif kind == "module":
            want = self._module_shape(obj, ins[0])
            if want is None or tuple(want) != tuple(out):
                bad(want if want is not None else ("invalid input shape",))
        elif k in ("max_pool1d", "avg_pool1d", "adaptive_avg_pool1d"):
            kw = obj[1]
            if len(ins[0]) < 2 or ins[0][:-1] != out[:-1]:
                bad(ins[0][:-1] + ("?",))
            L = ins[0][-1]
            try:
                if k == "adaptive_avg_pool1d":
                    lo = int(kw["output_size"])
                else:
                    kk = int(kw["kernel_size"])
                    st = int(kw.get("stride") or kk)
                    pd = int(kw.get("padding", 0))
                    dl = int(kw.get("dilation", 1))
                    if kk < 1 or st < 1 or dl < 1 or pd < 0:
                        raise ValueError("non-positive kernel/stride/dilation")
                    span = L + 2 * pd - dl * (kk - 1) - 1
                    if kw.get("ceil_mode"):
                        lo = -(-span // st) + 1
                        if (lo - 1) * st >= L + pd:
                            lo -= 1
                    else:
                        lo = span // st + 1
            except (KeyError, TypeError, ValueError) as e:
                raise self._err(op, f"invalid pooling attributes ({e})") from None
            if lo != out[-1]:
                bad(out[:-1] + (lo,))
        elif k == "cat":
            try:
                d = int(obj[1].get("dim", 0)) % max(len(out), 1)
            except (TypeError, ValueError):
                raise self._err(op, "invalid cat dim") from None
            ok = all(len(s) == len(out) and all(a == b for j, (a, b) in enumerate(zip(s, out))
                                                if j != d) for s in ins)
            if not ok or sum(s[d] for s in ins) != out[d]:
                bad(("cat of",) + tuple(ins))

    @staticmethod
    def _module_shape(mod, shape):
        f = getattr(mod, "output_shape", None)
        if f is None:
            return None
        try:
            return f(tuple(shape))
        except (ValueError, TypeError):
            return None

    # ---- running -----------------------------------------------------------------------------
    def _batch_of(self, args) -> Optional[int]:
        if len(args) != len(self.inputs):
            raise TypeError(f"model takes {len(self.inputs)} input(s) "
                            f"({', '.join(s.name for s in self.inputs)}), got {len(args)}")
        batch = None
        for x, spec in zip(args, self.inputs):
            shape = tuple(x.shape) if hasattr(x, "shape") else None
            if shape is None:
                raise TypeError(f"input {spec.name!r}: expected a numpy array or qrt.QTensor, "
                                f"got {type(x).__name__}")
            if spec.dtype == "float32":
                if isinstance(x, QTensor) or np.asarray(x).dtype != np.float32:
                    got = x.dtype if hasattr(x, "dtype") else type(x).__name__
                    raise ValueError(f"input {spec.name!r}: expected a float32 array of shape "
                                     f"{self._shape_str(spec)}, got dtype {got}")
            else:
                if not isinstance(x, QTensor) or x.dtype.name != spec.dtype or \
                        x.qscheme() is not per_tensor_affine or \
                        (x.q_scale(), x.q_zero_point()) != (spec.scale, spec.zero_point):
                    raise ValueError(f"input {spec.name!r}: expected a {spec.dtype} QTensor "
                                     f"with scale={spec.scale!r}, zero_point="
                                     f"{spec.zero_point}, shape {self._shape_str(spec)}; got "
                                     f"{x!r}")
            want = spec.shape
            ok = len(shape) == len(want) and all(w is None or w == s
                                                 for w, s in zip(want, shape))
            if ok and want and want[0] is None:
                if shape[0] < 1 or (batch is not None and shape[0] != batch):
                    ok = False
                batch = shape[0]
            if not ok:
                raise ValueError(f"input {spec.name!r}: expected shape {self._shape_str(spec)}, "
                                 f"got {shape}")
        if batch is not None and hasattr(self, "arena_nbytes"):
            _checked_batch(self, batch, "input batch")
        return batch if batch is not None else self._batch0

    @staticmethod
    def _shape_str(spec) -> str:
        return "(" + ", ".join("N" if d is None else str(d) for d in spec.shape) + \
            ("," if len(spec.shape) == 1 else "") + ")"

    def __call__(self, *inputs):
        """Run the model. Returns one output, or a tuple when the model has several.

        Calls are serialised per model (the arena is shared); load the blob twice to run
        two calls in parallel (the weights are shared through the page cache).
        """
        batch = self._batch_of(inputs)
        with self._lock:
            plan = self._plan(batch)
            for x, dst in zip(inputs, plan.in_views):
                np.copyto(dst, x.int_repr() if isinstance(x, QTensor) else x, casting="no")
            for call in plan.calls:
                if call is not None:
                    call[0](*call[1], **call[2])
            outs = tuple(v.clone() if isinstance(v, QTensor) else v.copy()
                         for v in plan.out_views)
        return outs[0] if len(outs) == 1 else outs

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
        batch = self._batch_of(inputs)
        clock = time.perf_counter_ns
        with self._lock:
            plan = self._plan(batch)
        calls = plan.calls
        per_op = np.zeros((iters, len(calls)), np.int64)
        whole = np.zeros(iters, np.int64)
        outs = None
        for it in range(-warmup, iters):
            t0 = clock()
            self(*inputs)
            t1 = clock()
            with self._lock:
                for x, dst in zip(inputs, plan.in_views):
                    np.copyto(dst, x.int_repr() if isinstance(x, QTensor) else x, casting="no")
                row = per_op[it] if it >= 0 else per_op[0]
                for k, call in enumerate(calls):
                    if call is not None:
                        a = clock()
                        call[0](*call[1], **call[2])
                        row[k] = clock() - a
                if it == iters - 1:
                    outs = tuple(v.clone() if isinstance(v, QTensor) else v.copy()
                                 for v in plan.out_views)
            if it >= 0:
                whole[it] = t1 - t0
        med = np.median(per_op, axis=0) / 1e3
        summed = float(med.sum())
        rows = []
        for r, us in zip(self._rows(batch), med):
            rows.append({"index": r["index"], "op": r["op"], "name": r["name"],
                         "shape": r["shape"], "us": float(us),
                         "share": float(us) / summed if summed > 0 else 0.0,
                         "macs": r["macs"]})
        call_us = float(np.median(whole)) / 1e3
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
        from qrt.loader import verify_blob
        verify_blob(self._blob)

    def arena_nbytes_for(self, batch: int) -> int:
        """Arena bytes needed at ``batch`` (plans and caches that batch size)."""
        return self._plan(_checked_batch(self, batch)).nbytes

    def macs(self, batch: Optional[int] = None) -> int:
        return sum(r["macs"] for r in self._rows(None if batch is None
                                                 else _checked_batch(self, batch)))

    def _rows(self, batch=None):
        plan = self._plan(self._batch0 if batch is None else batch)
        rows = []
        for op, (kind, obj) in zip(self._blob.ops, self._prepared):
            o = self._t[op.outputs[0]]
            macs = 0
            if kind == "module" and hasattr(obj, "macs"):
                try:
                    macs = int(obj.macs(tuple(plan.shapes[op.inputs[0]])))
                except (ValueError, TypeError):
                    macs = 0
            rows.append({"index": op.index, "op": op.kind, "name": op.name,
                         "shape": plan.shapes[op.outputs[0]], "dtype": o.dtype,
                         "qparams": (o.scale, o.zero_point) if o.qscheme != "none" else None,
                         "macs": macs,
                         "weight_bytes": sum(self._t[i].nbytes for i in op.params)})
        return rows

    def summary(self, batch: Optional[int] = None) -> str:
        """A per-op table: op, output shape, qparams, MACs, weight bytes."""
        rows = self._rows(batch)
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

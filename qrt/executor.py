# SPDX-License-Identifier: Apache-2.0
"""One graph executor over backends: nodes from a blob, shape inference, the arena planner,
plans cached by input shape (bounded LRU), and the call loop.

``qrt.Model`` (CPU) and the CuPy ``DeviceModel`` are this executor with a different backend.
A backend provides ``supports(node)`` (None or the reason it cannot run the node),
``prepare(node)`` (load-time work, e.g. packing weights), ``alloc(nbytes)`` (one arena),
``view(arena, offset, entry, shape)`` and ``bind(node, ins, outs)`` (the call on fixed
buffers). The graph, the shapes and the memory plan are the same for every backend.

Tensor kinds the planner knows (:func:`tensor_class`):
  * ``activation``: quantized, placed in the arena by lifetime;
  * ``float``: a float32 activation (float sections), placed the same way;
  * ``state``: persists between calls (streaming windows, RNN hidden state): its own buffer,
    zero-initialised when the plan is made and never shared with another tensor;
  * ``constant``: weights, read in place from the mapping (never in the arena).
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from functools import partial
from typing import Any, Callable, Dict, List, Sequence, Tuple

import numpy as _np

from qrt._format.reader import Blob, FormatError, TensorEntry
from qrt.ops import BY_CODE, BY_NAME, Node, ShapeError

__all__ = ["Graph", "Executor", "plan_arena", "tensor_class", "PLAN_CACHE_SIZE"]

_F32 = _np.dtype(_np.float32)
ALIGN = 64
PLAN_CACHE_SIZE = 32        # plans (one per distinct input shape) kept, least recently used out
# no plan is ever bigger than this (on 32-bit hosts, armv7: half the address space)
MAX_ARENA = min(1 << 40, sys.maxsize // 2)
# R27: at the exported shapes a file may ask for at most this many activation bytes, or
# ARENA_RATIO x (input bytes + weight bytes) when that is larger.
MAX_EXPORT_ARENA = 1 << 30
ARENA_RATIO = 256


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _nbytes(shape, itemsize) -> int:
    return _numel(shape) * itemsize


def tensor_class(t: TensorEntry) -> str:
    """The planner's kind of a tensor entry (see the module docstring)."""
    if t.kind == "constant":
        return "constant"
    if t.kind == "state":
        return "state"
    return "float" if t.qscheme == "none" else "activation"


def plan_arena(sizes: Dict[int, int], life: Dict[int, Tuple[int, int]]
               ) -> Tuple[Dict[int, int], int]:
    """Offsets for buffers of ``sizes`` bytes live over ``life`` = [first, last] op index:
    largest first, each at the lowest offset free during its lifetime. Returns (offsets,
    total bytes). Shared by every backend."""
    placed: List[Tuple[int, int, int, int]] = []  # (offset, size, first, last)
    offsets: Dict[int, int] = {}
    for r in sorted(sizes, key=lambda r: (-sizes[r], life[r][0], r)):
        f, last = life[r]
        busy = sorted((o, o + s) for o, s, f2, l2 in placed if not (l2 < f or last < f2))
        off = 0
        for a, b in busy:
            if off + sizes[r] <= a:
                break
            off = max(off, b)
        offsets[r] = off
        placed.append((off, sizes[r], f, last))
    return offsets, max([o + s for o, s, _, _ in placed], default=0)


class Graph:
    """A blob's ops resolved against their definitions: attributes validated against the
    schema (R25), parameters named and checked, dtypes and qparams checked (R21)."""

    def __init__(self, blob: Blob):
        self.blob = blob
        self.tensors = blob.tensors
        self.path = blob.path
        self.nodes: List[Node] = [self._node(op) for op in blob.ops]
        self.inputs = list(blob.inputs)
        self.outputs = list(blob.outputs)
        self.aliases: Dict[int, int] = {}   # alias output tensor -> root tensor
        for n, op in zip(self.nodes, blob.ops):
            if n.op.alias:
                root = self.aliases.get(op.inputs[0], op.inputs[0])
                self.aliases[op.outputs[0]] = root

    def _node(self, op) -> Node:
        T = self.tensors
        d = BY_NAME[op.kind]
        implied = BY_CODE[d.code if op.kind == d.name else
                          next(c for c, v in BY_CODE.items() if v[2] == op.kind)][1]
        node = Node(op.index, op.name, d, {}, [T[i] for i in op.inputs],
                    [T[i] for i in op.outputs], {}, op.source, self.path, op.kind)
        node.input_ids, node.output_ids = list(op.inputs), list(op.outputs)
        lo, hi = d.inputs
        olo, ohi = d.outputs
        if not (lo <= len(op.inputs) and (hi is None or len(op.inputs) <= hi)) or \
                not (olo <= len(op.outputs) and (ohi is None or len(op.outputs) <= ohi)):
            raise node.fail(f"takes {lo}..{hi if hi is not None else 'n'} input(s) and "
                            f"{olo}..{ohi if ohi is not None else 'n'} output(s), has "
                            f"{len(op.inputs)} and {len(op.outputs)}")
        params = [T[i] for i in op.params]
        if not d.params and params:
            raise node.fail("takes no constant parameters")
        attrs = dict(op.attrs)
        if self.blob.version < d.since:
            attrs, named = d.upgrade(node, attrs, params, self.blob.version)
        else:
            named = d.name_params(params, node.fail)
        for k, v in implied.items():  # legacy kinds (conv_relu1d...) imply attributes
            if attrs.get(k, v) != v:
                raise node.fail(f"op kind {op.kind} implies {k}={v!r}, the attributes say "
                                f"{attrs[k]!r}", "R25")
            attrs[k] = v
        node.attrs = d.check_attrs(attrs, lambda m, rule="R25": node.fail(m, rule))
        node.params = named
        d.check_params(node)
        for t in node.inputs + node.outputs:
            if t.qscheme == "per_channel_affine":
                raise node.fail(f"activation {t.name} is per-channel quantized")
        for k, t in enumerate(node.inputs):
            if t.dtype in ("int64", "int32") and k not in d.index_inputs:
                raise node.fail(f"reads index tensor {t.name!r} ({t.dtype}) as operand {k}, "
                                "which takes no indices", "R28")
        d.validate(node)
        return node

    # ---- shapes ----------------------------------------------------------------------------
    def infer(self, in_shapes: Sequence[tuple]) -> Dict[int, tuple]:
        """Every activation's shape from the model inputs' shapes; ShapeError names the first
        op that refuses (``err.node``)."""
        shapes: Dict[int, tuple] = {i: tuple(s) for i, s in zip(self.inputs, in_shapes)}
        batch = next((tuple(s)[0] for i, s in zip(self.inputs, in_shapes)
                      if self.tensors[i].batched and len(s)), None)
        for t in self.tensors:  # state: the stored shape, at the inputs' batch size
            if t.kind == "state":
                shapes[t.index] = ((batch,) + tuple(t.shape[1:]) if t.batched and
                                   batch is not None else tuple(t.shape))
        for n in self.nodes:
            ins = [shapes[i] for i in n.input_ids]
            try:
                outs = n.op.infer(n, ins)
                for i, s in zip(n.output_ids, outs):
                    s = tuple(int(d) for d in s)
                    if self.tensors[i].kind == "state" and s != shapes[i]:
                        raise ShapeError(f"writes state {self.tensors[i].name!r} with shape "
                                         f"{s}, the state has shape {shapes[i]}")
                    shapes[i] = s
            except ShapeError as e:
                e.node = n
                raise
        return shapes

    def check_exported_shapes(self):
        """R22: at the exported input shapes every op computes the output shape stored."""
        T = self.tensors
        try:
            shapes = self.infer([T[i].shape for i in self.inputs])
        except ShapeError as e:
            raise e.node.fail(f"refuses the exported input shapes: {e}", "R22") from None
        for n in self.nodes:
            for i in n.output_ids:
                if shapes[i] != tuple(T[i].shape):
                    raise n.fail(f"computes shape {shapes[i]} from "
                                 f"{[shapes[j] for j in n.input_ids]}, the blob says "
                                 f"{tuple(T[i].shape)}", "R22")
        return shapes

    def lifetimes(self) -> Dict[int, List[int]]:
        """[first write, last read] op index of every buffer (alias roots)."""
        life: Dict[int, List[int]] = {}

        def touch(i, k):
            r = self.aliases.get(i, i)
            if r in life:
                life[r][0] = min(life[r][0], k)
                life[r][1] = max(life[r][1], k)
            else:
                life[r] = [k, k]
        for i in self.inputs:
            touch(i, -1)
        for k, n in enumerate(self.nodes):
            for i in n.input_ids + n.output_ids:
                touch(i, k)
        for i in self.outputs:
            touch(i, len(self.nodes))
        return life


class Plan:
    """Arena placement + bound calls for one tuple of input shapes."""

    __slots__ = ("key", "arena", "nbytes", "views", "bound", "calls", "thunks", "in_views",
                 "out_views", "shapes", "state_buffers", "direct")


class Executor:
    """Runs a :class:`Graph` on a backend; plans are keyed by the input shapes (LRU)."""

    def __init__(self, graph: Graph, backend):
        self.graph = graph
        self.backend = backend
        self._plans: "OrderedDict[tuple, Plan]" = OrderedDict()
        self._lock = threading.RLock()
        missing = [(n, why) for n in graph.nodes if (why := backend.supports(n)) is not None]
        if missing:
            backend.unsupported(missing)

    def prepare(self) -> None:
        """Each node's load-time work on this backend (weights packed once)."""
        for n in self.graph.nodes:
            self.backend.prepare(n)

    # ---- planning ------------------------------------------------------------------------------
    def plan(self, in_shapes: Sequence[tuple]) -> Plan:
        key = tuple(tuple(int(d) for d in s) for s in in_shapes)
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                self._plans.move_to_end(key)
                return plan
            plan = self._make_plan(key)
            self._plans[key] = plan
            while len(self._plans) > PLAN_CACHE_SIZE:
                self._plans.popitem(last=False)
            return plan

    def cached(self, key) -> "Plan | None":
        """The plan made for ``key`` (a tuple of input shape tuples, as :meth:`plan` keys
        them) if it is cached (marked most recently used), else None; plans nothing."""
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                self._plans.move_to_end(key)
            return plan

    def shapes_for(self, in_shapes) -> Dict[int, tuple]:
        try:
            return self.graph.infer(in_shapes)
        except ShapeError as e:
            n = e.node
            raise ValueError(f"op {n.index} {n.kind} '{n.name}' cannot take input shape(s) "
                             f"{[tuple(s) for s in in_shapes]}: {e}") from None

    def _make_plan(self, key) -> Plan:
        g, T, be = self.graph, self.graph.tensors, self.backend
        shapes = self.shapes_for(key)
        life = {r: tuple(v) for r, v in g.lifetimes().items()}
        sizes, state = {}, {}
        for r in life:
            nb = -(-_nbytes(shapes[r], T[r].np_dtype.itemsize) // ALIGN) * ALIGN
            (state if tensor_class(T[r]) == "state" else sizes)[r] = nb
        need = sum(sizes.values()) + sum(state.values())
        if need > MAX_ARENA:
            raise ValueError(f"input shape(s) {list(key)}: this batch size / length would need "
                             f"{need} bytes of activations (more than {MAX_ARENA})")
        offsets, total = plan_arena(sizes, life)
        plan = Plan()
        plan.key, plan.shapes, plan.nbytes = key, shapes, total
        plan.arena = be.alloc(max(total, 1))
        plan.state_buffers = {r: be.alloc(max(nb, 1), zero=True) for r, nb in state.items()}
        views: Dict[int, Any] = {}
        for i, shp in shapes.items():
            r = g.aliases.get(i, i)
            if r in state:
                views[i] = be.view(plan.state_buffers[r], 0, T[i], shp)
            elif r in offsets:
                views[i] = be.view(plan.arena, offsets[r], T[i], shp)
        plan.views = views
        bound = []
        for n in g.nodes:
            try:
                c = be.bind(n, [views[i] for i in n.input_ids],
                            [views[i] for i in n.output_ids])
                if c is not None:
                    bound.append((n, c))
            except FormatError:
                raise
            except (ValueError, TypeError, IndexError, KeyError, OverflowError,
                    ZeroDivisionError, NotImplementedError) as e:
                raise n.fail(f"the op refuses its blob attributes: {type(e).__name__}: "
                             f"{e}") from None
        plan.bound = bound
        plan.calls = [c for _, c in bound]
        # the same calls without argument packing per call: the function itself when it
        # takes no arguments, else one functools.partial
        plan.thunks = [c[0] if not c[1] and not c[2] else partial(c[0], *c[1], **c[2])
                       for c in plan.calls]
        plan.in_views = [be.input_view(views[i]) for i in g.inputs]
        plan.out_views = [views[i] for i in g.outputs]
        plan.direct = self._direct_inputs(plan)
        return plan

    def _direct_inputs(self, plan: Plan) -> list:
        """Per model input: None, or [source, arena source] of the one op that reads it when
        the backend lets that op read the caller's array in place (the CPU backend's quantize
        of a float32 input that nothing else reads, is no output and has no alias): ``run``
        then points the op at the caller's contiguous array instead of copying it into the
        arena first (MobileNet's 600 KB input: ~1 % of a call).  The op's thunk reads its
        source from the list, so the plan's calls stay fixed."""
        g, be = self.graph, self.backend
        direct = [None] * len(g.inputs)
        if not getattr(be, "direct_inputs", False):
            return direct
        roots = set(g.aliases.values())
        for k, i in enumerate(g.inputs):
            readers = [n for n in g.nodes if i in n.input_ids]
            if len(readers) != 1 or i in g.outputs or i in roots or g.inputs.count(i) != 1:
                continue
            n = readers[0]
            j = next((j for j, (m, _) in enumerate(plan.bound) if m is n), None)
            if j is None:
                continue
            src = be.direct_source(n, plan.calls[j])
            if src is None:
                continue
            fn, args, kw = plan.calls[j]
            holder = [args[0], args[0]]
            rest = tuple(args[1:])
            plan.thunks[j] = (lambda fn=fn, h=holder, rest=rest, kw=kw: fn(h[0], *rest, **kw))
            direct[k] = holder
        return direct

    def arena_limit_check(self, shapes, weights_nbytes):
        """R27: the memory a file asks for at its exported shapes is bounded by what it
        plausibly needs; checked before anything is allocated."""
        g, T = self.graph, self.graph.tensors
        life = g.lifetimes()
        need = sum(-(-_nbytes(shapes[r], T[r].np_dtype.itemsize) // ALIGN) * ALIGN
                   for r in life)
        inputs = sum(_nbytes(shapes[i], T[i].np_dtype.itemsize) for i in g.inputs)
        cap = max(MAX_EXPORT_ARENA, ARENA_RATIO * (inputs + weights_nbytes))
        if need > cap:
            raise FormatError("R27", f"the activations need {need} bytes at the exported "
                              f"shapes, more than {cap} (max(1 GiB, {ARENA_RATIO} x the "
                              f"{inputs} input bytes + {weights_nbytes} weight bytes))",
                              section="TENSORS", path=g.path)

    def dry_run(self, plan: Plan) -> None:
        """Run every op once at load on neutral inputs: any attribute a kernel refuses is a
        FormatError naming the op now, not an error at the first call (R21)."""
        g = self.graph
        self.backend.fill_neutral(plan, [g.tensors[i] for i in g.inputs])
        for n, call in plan.bound:
            try:
                if n.op.index_inputs:   # neutral index operands that op accepts (offsets...)
                    n.op.neutral_inputs(n, [plan.views[i] for i in n.input_ids])
                call[0](*call[1], **call[2])
            except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError,
                    OverflowError, NotImplementedError) as e:
                raise n.fail(f"the op refuses its blob attributes: "
                             f"{type(e).__name__}: {e}") from None
        self.backend.reset_state(plan)

    def run(self, plan: Plan, inputs, copy_in: Callable, copy_out: Callable):
        with self._lock:
            direct = plan.direct
            for k, (x, dst) in enumerate(zip(inputs, plan.in_views)):
                h = direct[k]
                if h is not None and type(x) is _np.ndarray and x.dtype == _F32 and \
                        x.flags.c_contiguous and x.shape == dst.shape:
                    h[0] = x.reshape(-1)    # the op reads the caller's array in place
                else:
                    copy_in(dst, x)
                    if h is not None:
                        h[0] = h[1]
            try:
                for f in plan.thunks:
                    f()
            finally:
                for h in direct:            # keep no reference to the caller's array
                    if h is not None:
                        h[0] = h[1]
            return tuple([copy_out(v) for v in plan.out_views])

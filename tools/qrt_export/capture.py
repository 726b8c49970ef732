# SPDX-License-Identifier: Apache-2.0
"""Capture an ``nn.Module`` with ``torch.export`` when torch.fx cannot trace it (issue #45).

torch.fx traces Python symbolically: shape checks (``if x.ndim != 3: raise``), asserts with
no users, ``F.interpolate(x, size=x.shape[-2:])``, ``co_varnames`` tricks and tuple inputs
stop it, and most of today's model code has some of them. ``torch.export`` runs the Python
for real (non-strict: on fake tensors), so those are evaluated at the exported shapes and
vanish from the graph, which then holds only ATen ops.

torch.ao's quantized modules do not survive ``torch.export`` (their packed weights are
TorchScript objects without ``__obj_flatten__``, and their kernels take quantized tensors,
which fake tensors do not model). So before the export every torch.ao quantized or dynamic
module (and every module registered with ``qrt_export.register``, and the methods of
``QFunctional``) is swapped for a call of one opaque custom op, ``qrt_capture::leaf(xs,
idx)``: its fake kernel gives the output shapes recorded on one eager run (float32 proxies
for quantized tensors), its real kernel calls the module. The captured ATen graph is then
rewritten into the torch.fx form the lowering rules take, the leaf calls mapped back to
``call_module`` of the original modules (and ``QFunctional`` methods to the
``torch.ops.quantized`` ops they run), every other ATen op through pt2e's ATen table
(:func:`qrt_export.pt2e._float_call`), the op torch runs on whatever tensor it gets
(quantized or float, as in the eager model). So every flavour a user quantizes a model with
(eager, ``quantize_dynamic``, a float model) reaches the same rules as FX's and pt2e's.
"""

from __future__ import annotations

import operator
from typing import Any, Dict, List, Optional, Tuple

_LEAVES: List[Any] = []      # idx -> its _Leaf
_META: Dict[Tuple[int, tuple], list] = {}   # (idx, input shapes) -> output (shape, dtype)
_LIB = None
_T = object()                # a tensor's place among a leaf call's arguments


class CaptureError(ValueError):
    """torch.export could not capture the model (the message names why and where)."""


def _torch():
    import torch
    return torch


def _register():
    global _LIB
    if _LIB is not None:
        return
    torch = _torch()
    lib = torch.library.Library("qrt_capture", "FRAGMENT")
    lib.define("leaf(Tensor[] xs, int idx) -> Tensor[]")

    def real(xs, idx):
        leaf = _LEAVES[idx]
        args, kwargs = leaf.args_for(list(xs))
        return [t for t in _flat(leaf.fn(*args, **kwargs)) if isinstance(t, torch.Tensor)]

    def fake(xs, idx):
        key = (idx, tuple(tuple(x.shape) for x in xs))
        meta = _META.get(key)
        if meta is None:
            raise CaptureError(f"leaf {idx} called with input shapes {key[1]} that the eager "
                               "run did not see")
        return [torch.empty(s, dtype=d) for s, d in meta]
    lib.impl("leaf", real, "CompositeExplicitAutograd")
    torch.library.register_fake("qrt_capture::leaf", fake, lib=lib)
    _LIB = lib


def _flat(o):
    if isinstance(o, (tuple, list)):
        for t in o:
            yield from _flat(t)
    else:
        yield o


def _struct(o):
    """The nesting of a module's output: None for a leaf, a tuple of nestings otherwise."""
    if isinstance(o, (tuple, list)):
        return tuple(_struct(t) for t in o)
    return None


def is_leaf(m) -> bool:
    """A module the capture keeps whole, as a ``call_module`` of the rewritten graph: torch.ao's
    quantized, intrinsic-quantized and dynamic modules (packed weights, quantized kernels),
    registered custom ops, and every module a lowering rule takes as a module (float
    LSTM / GRU / RNN, MultiheadAttention, norms, convs...): those lower exactly as torch.fx's
    trace of the same module does; the code between them is captured as ATen ops."""
    from qrt_export import custom, rules
    if custom.lookup(m) is not None:
        return True
    mod = type(m).__module__
    if mod.startswith(("torch.ao.nn.quantized", "torch.ao.nn.intrinsic.quantized",
                       "torch.nn.quantized", "torch.nn.intrinsic.quantized")):
        return True
    return rules.find_module_rule(m) is not None


_QF_METHODS = ("add", "add_relu", "mul", "mul_relu", "cat", "add_scalar", "mul_scalar",
               "matmul")


class _Leaf:
    """Records one leaf's calls on the eager run, then stands in for it during the export."""

    def __init__(self, fn, idx):
        self.fn, self.idx = fn, idx
        self.struct: Dict[tuple, Any] = {}

    def record(self, *args, **kwargs):
        torch = _torch()
        out = self.fn(*args, **kwargs)
        flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
        tensors = [a for a in flat if isinstance(a, torch.Tensor)]
        if len(tensors) != len(flat) and not all(isinstance(a, torch.Tensor) or a is None or
                                                 isinstance(a, (int, float, bool))
                                                 for a in flat):
            raise CaptureError(f"{self.fn!r} takes an argument that is not a tensor")
        key = (self.idx, tuple(tuple(t.shape) for t in tensors))
        _META[key] = [(tuple(t.shape), torch.float32 if t.is_quantized else t.dtype)
                      for t in _flat(out) if isinstance(t, torch.Tensor)]
        self.struct[key[1]] = (spec, [a if not isinstance(a, torch.Tensor) else _T
                                      for a in flat], _struct(out))
        return out

    def args_for(self, tensors):
        """The leaf's arguments rebuilt from its tensors (non-tensor arguments as recorded)."""
        torch = _torch()
        spec, others, _ = self.struct[tuple(tuple(t.shape) for t in tensors)]
        it = iter(tensors)
        return torch.utils._pytree.tree_unflatten([next(it) if o is _T else o
                                                   for o in others], spec)

    def call(self, *args, **kwargs):
        torch = _torch()
        flat, _ = torch.utils._pytree.tree_flatten((args, kwargs))
        tensors = [a for a in flat if isinstance(a, torch.Tensor)]
        shapes = tuple(tuple(t.shape) for t in tensors)
        if shapes not in self.struct:
            raise CaptureError(f"{self.fn!r} called at input shapes {shapes} that the eager "
                               "run did not see")
        outs = torch.ops.qrt_capture.leaf(tensors, self.idx)
        it = iter(outs)

        def build(s):
            return tuple(build(u) for u in s) if isinstance(s, tuple) else next(it)
        return build(self.struct[shapes][2])


def _make_stand_in(leaf):
    torch = _torch()

    class LeafModule(torch.nn.Module):
        def forward(self, *args, **kwargs):
            return leaf.call(*args, **kwargs)
    return LeafModule()


def capture(model, inputs):
    """(fx.GraphModule in the form the rules lower, flat example inputs) for ``model`` (an
    ``nn.Module``, quantized or not) at ``inputs`` (a tuple; nested tuples / lists / dicts
    of tensors allowed). Raises :class:`CaptureError` naming why torch.export failed.

    The leaves registered for this capture are released when it returns (the rewritten graph
    calls the modules themselves): a long process exporting many models keeps none alive."""
    first = len(_LEAVES)
    try:
        return _capture(model, inputs)
    finally:
        for i in range(first, len(_LEAVES)):
            _LEAVES[i] = None
        for key in [k for k in _META if k[0] >= first]:
            del _META[key]


def _capture(model, inputs):
    torch = _torch()
    _register()
    from qrt_export._export import _engine, deepcopy_model, _qconv_state_fix
    with _engine("qnnpack"), _qconv_state_fix():
        m = deepcopy_model(model).eval()
    leaves: Dict[int, Tuple[str, Any, Optional[str]]] = {}   # idx -> (qualname, module, method)
    records: Dict[int, _Leaf] = {}

    def add_leaf(qual, mod, method=None):
        idx = len(_LEAVES)
        fn = getattr(mod, method) if method else mod
        leaf = _Leaf(fn, idx)
        _LEAVES.append(leaf)
        leaves[idx] = (qual, mod, method)
        records[idx] = leaf
        return leaf

    import torch.ao.nn.quantized as nnq
    swaps = []   # (parent, child name, original, recording stand-in, export stand-in)

    def walk(parent, prefix):
        for name, child in list(parent.named_children()):
            qual = f"{prefix}{name}"
            if isinstance(child, nnq.QFunctional):
                for meth in _QF_METHODS:
                    if getattr(child, meth, None) is None:
                        continue
                    leaf = add_leaf(qual, child, meth)
                    object.__setattr__(child, meth, leaf.record)
                    swaps.append((child, meth, None, leaf))
            elif is_leaf(child):
                leaf = add_leaf(qual, child)
                rec = _make_stand_in(leaf)
                rec.forward = leaf.record
                setattr(parent, name, rec)
                swaps.append((parent, name, child, leaf))
            else:
                walk(child, qual + ".")
    walk(m, "")
    # one eager run records every leaf call's shapes and nesting
    with _engine("qnnpack"), torch.no_grad():
        try:
            m(*inputs)
        except Exception as e:  # noqa: BLE001 - torch raises many types
            raise CaptureError(f"the model fails on the example inputs: {type(e).__name__}: "
                               f"{str(e).splitlines()[0] if str(e) else ''}") from e
    for parent, name, child, leaf in swaps:
        if child is None:    # a QFunctional method
            object.__setattr__(parent, name, leaf.call)
        else:
            setattr(parent, name, _make_stand_in(leaf))
    with _engine("qnnpack"), torch.no_grad():
        try:
            ep = torch.export.export(m, tuple(inputs), strict=False)
        except Exception as e:  # noqa: BLE001 - torch raises many types
            raise CaptureError(_export_failure(e)) from e
    gm = ep.module()
    flat_inputs = tuple(torch.utils._pytree.tree_leaves(tuple(inputs)))
    return _Rewrite(gm, leaves, records, flat_inputs).run(), flat_inputs


def _export_failure(e) -> str:
    """One line on why torch.export failed: the construct, the model's source line, and what
    to change (issue #45: a message that helps)."""
    import linecache
    import re
    import traceback
    text = str(e)
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    first = lines[0] if lines else type(e).__name__
    where = ""
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if "/torch/" not in f.filename and "/qrt_export/" not in f.filename]
    for m in re.finditer(r'File "([^"]+)", line (\d+), in (\w+)', text):
        if "/torch/" not in m.group(1) and "/qrt_export/" not in m.group(1):
            code = linecache.getline(m.group(1), int(m.group(2))).strip()
            where = f'File "{m.group(1)}", line {m.group(2)}, in {m.group(3)}' + \
                (f": {code}" if code else "")
    if not where and frames:
        f = frames[-1]
        where = f'File "{f.filename}", line {f.lineno}, in {f.name}: {f.line or ""}'.rstrip(": ")
    name = type(e).__name__
    if "DataDependent" in name or "data-dependent" in text or "GuardOnDataDependent" in text:
        what = ("control flow or a Python number computed from a tensor's values (qrt runs one "
                "fixed graph: compute the condition from shapes or constants, use torch.where "
                "for an element-wise choice, or move it out of forward())")
    else:
        what = f"{name}: {first[:300]}"
    return f"torch.export could not capture the model: {what}" + (f" at {where}" if where
                                                                 else "")


class _Rewrite:
    """The captured ATen graph -> the torch.fx form the rules lower."""

    def __init__(self, gm, leaves, records, inputs):
        import torch.fx as fx
        torch = _torch()
        self.src, self.leaves, self.records = gm, leaves, records
        self.root = torch.nn.Module()
        self.g = fx.Graph()
        self.env: Dict[str, Any] = {}
        self.const: Dict[str, Any] = {}
        self.missing: List[str] = []
        self.n_attr = 0
        self.mod_names: Dict[int, str] = {}
        self.pad_src: Dict[str, Any] = {}     # mask node -> the int input it pads by
        self.lazy: set = set()                # nodes only a mask reads (sdpa lowers them)
        self.inputs = inputs
        from qrt_export.pt2e import run_values
        from qrt_export._export import _engine
        with _engine("qnnpack"):
            self.v = run_values(gm, inputs)

    def source(self, n):
        from qrt_export._export import _source
        return _source(n, self.src)

    def attr(self, tensor):
        name = f"_capture_c_{self.n_attr}"
        self.n_attr += 1
        self.root.register_buffer(name, tensor.detach().clone())
        return self.g.get_attr(name)

    def arg(self, a):
        torch = _torch()
        if not hasattr(a, "op"):
            return a
        if a.name in self.const:
            c = self.const[a.name]
            if isinstance(c, torch.Tensor):
                key = a.name + ".attr"
                if key not in self.env:
                    self.env[key] = self.attr(c)
                return self.env[key]
            return c
        if a.name not in self.env:
            raise _Missing(a.name)
        return self.env[a.name]

    def run(self):
        import torch.fx as fx
        torch = _torch()
        sdpa = torch.ops.aten.scaled_dot_product_attention.default
        for n in self.src.graph.nodes:   # a mask's own nodes: lowered by the attention
            if n.op == "call_function" and n.target == sdpa:
                m = n.args[3] if len(n.args) > 3 else n.kwargs.get("attn_mask")
                if hasattr(m, "op"):
                    self._mark_lazy(m)
        for n in self.src.graph.nodes:
            try:
                self.node(n)
            except _Missing:
                pass
        if self.missing:
            from qrt_export._export import UnsupportedError
            raise UnsupportedError(
                f"{len(self.missing)} unsupported op(s) in the graph torch.export captured: "
                + "; ".join(self.missing) + ". The ops qrt runs are listed in "
                "docs/supported-ops.md, or run `qrt-export --list-ops`.")
        gm = fx.GraphModule(self.root, self.g)
        gm.graph.lint()
        return gm

    def _mark_lazy(self, mask):
        """The nodes computing ``mask`` that nothing but masks reads (HF's mask code: index
        arithmetic on attention_mask): not lowered one by one."""
        torch = _torch()
        sdpa = torch.ops.aten.scaled_dot_product_attention.default
        sub, stack = set(), [mask]
        while stack:
            a = stack.pop()
            if a.name in sub or a.op in ("placeholder", "get_attr"):
                continue
            sub.add(a.name)
            stack.extend(a.all_input_nodes)
        for name in sub:
            node = next(x for x in self.src.graph.nodes if x.name == name)
            if all(u.name in sub or (u.op == "call_function" and u.target == sdpa)
                   for u in node.users):
                self.lazy.add(name)

    def fail(self, n, what):
        self.missing.append(f"{what} at {self.source(n)}")

    def keep_meta(self, new, n):
        if "stack_trace" in n.meta:
            new.meta["stack_trace"] = n.meta["stack_trace"]
        return new

    def output(self, n):
        self.g.output(tuple(self.arg(o) for o in _flat(n.args[0]) if o is not None))

    def node(self, n):
        torch = _torch()
        from qrt_export.pt2e import _float_call, _is_assert, not_a_call
        val = self.v.get(n.name)
        if not_a_call(self, n, val):
            return
        if not n.users and _is_assert(n):
            return
        if n.name in self.lazy:
            return
        if n.target == torch.ops.qrt_capture.leaf.default:
            self.leaf(n)
            return
        if n.target is operator.getitem and hasattr(n.args[0], "op") and \
                n.args[0].name in self.env and isinstance(self.env[n.args[0].name], _LeafOut):
            self.env[n.name] = self.env[n.args[0].name].item(self, int(n.args[1]))
            return
        ins = list(n.all_input_nodes)
        if isinstance(val, torch.Tensor) and all(a.name in self.const for a in ins):
            self.const[n.name] = val   # every input constant (weights, folded parameters)
            return
        if not isinstance(val, torch.Tensor) and not isinstance(val, (tuple, list)):
            self.const[n.name] = val   # shape arithmetic at the exported shapes
            return
        if _in(n.target, _factories()) and isinstance(val, torch.Tensor):
            self.const[n.name] = val   # zeros_like / full / arange...: a constant here
            return
        if n.target in (torch.ops.aten.dequantize.self, torch.ops.aten.dequantize.tensor):
            new = self.g.call_method("dequantize", (self.arg(n.args[0]),))
            self.env[n.name] = self.keep_meta(new, n)
            return
        if n.target == torch.ops.aten.scaled_dot_product_attention.default:
            if self.sdpa(n):
                return
        from qrt_export.pt2e import unbind_item, unbind_key
        if unbind_item(n) is not None:      # lowered at its getitem users
            return
        if n.target is operator.getitem and hasattr(n.args[0], "op") and \
                unbind_item(n.args[0]) is not None:
            x, dim = unbind_item(n.args[0])
            key = unbind_key(self.v[x.name], dim, n.args[1])
            self.env[n.name] = self.keep_meta(
                self.g.call_function(operator.getitem, (self.arg(x), key)), n)
            return
        fn, args, kwargs = _float_call(n, self.arg)
        if fn is None:
            from qrt_export.pt2e import _opname
            self.fail(n, f"op {_opname(n.target)}")
            return
        new = self.g.call_function(fn, args, kwargs) if callable(fn) else \
            self.g.call_method(fn, args, kwargs)
        self.env[n.name] = self.keep_meta(new, n)

    def from_shapes_only(self, node) -> bool:
        """Whether ``node``'s value depends on no model input's values: every path up from it
        ends at a constant or at a tensor factory (``new_ones(x)`` reads x's shape only)."""
        facs = _factories()
        seen, stack = set(), [node]
        while stack:
            a = stack.pop()
            if a.name in seen or a.name in self.const:
                continue
            seen.add(a.name)
            if a.op == "placeholder":
                return False
            if a.op == "call_function" and _in(a.target, facs):
                continue
            stack.extend(a.all_input_nodes)
        return True

    def padding_input(self, mask):
        """The int model input [N, S] whose nonzero positions ``mask`` (a boolean attention
        mask [N or 1, heads or 1, L, S] the model computes) lets attend, or None. Found by the
        mask's ancestry (one int input) and checked by running the model's own mask code again
        on probe masks (none, random trailing padding, a random pattern, one token left):
        each must give exactly ``input[:, None, None, :] != 0`` at the mask's shape."""
        torch = _torch()
        if mask.name in self.pad_src:
            return self.pad_src[mask.name]
        self.pad_src[mask.name] = None
        seen, stack, phs = set(), [mask], []
        while stack:
            a = stack.pop()
            if a.name in seen:
                continue
            seen.add(a.name)
            if a.op == "placeholder":
                phs.append(a)
            stack.extend(a.all_input_nodes)
        places = [p for p in self.src.graph.nodes if p.op == "placeholder"]
        if len(phs) != 1:
            return None
        p = phs[0]
        pv, mv = self.v[p.name], self.v[mask.name]
        if pv.dtype not in (torch.int64, torch.int32) or pv.dim() != 2 or mv.dim() != 4 or \
                int(mv.shape[-1]) != int(pv.shape[1]) or int(mv.shape[0]) not in (1, int(
                    pv.shape[0])):
            return None
        k = places.index(p)
        g = torch.Generator().manual_seed(0)
        n_b, s_len = int(pv.shape[0]), int(pv.shape[1])
        lens = torch.randint(1, s_len + 1, (n_b,), generator=g)
        probes = [torch.ones_like(pv), (torch.arange(s_len)[None, :] < lens[:, None]).to(
            pv.dtype), torch.randint(0, 2, pv.shape, generator=g).to(pv.dtype),
            torch.zeros_like(pv).index_fill(1, torch.tensor([0]), 1), pv]
        from qrt_export.pt2e import run_values
        from qrt_export._export import _engine
        for q in probes:
            ins = list(self.inputs)
            ins[k] = q
            try:
                with _engine("qnnpack"):
                    got = run_values(self.src, ins).get(mask.name)
            except Exception:  # noqa: BLE001 - the model refuses the probe
                return None
            want = (q != 0)[:, None, None, :]
            if not isinstance(got, torch.Tensor) or got.dtype != torch.bool or \
                    not torch.equal(got, want.expand(got.shape)) or got.shape[0] != n_b:
                return None
        self.pad_src[mask.name] = p
        return p

    def sdpa(self, n) -> bool:
        """F.scaled_dot_product_attention (wav2vec2's, BERT's attention) as the float ops of its
        definition (pt2e.sdpa_nodes, shared with pt2e programs), its mask additive: HF's
        boolean padding mask computed from an int ``attention_mask`` input becomes the
        ``padding_mask`` op on that input; a mask from shapes only, a constant."""
        from qrt_export.pt2e import sdpa_args, sdpa_nodes
        torch = _torch()
        a, why = sdpa_args(n)
        if a is None:
            self.fail(n, why)
            return True
        g = self.g
        add = None
        mask = a.get("attn_mask")
        if mask is not None:
            mv = self.v.get(mask.name) if hasattr(mask, "op") else mask
            if isinstance(mv, torch.Tensor) and mv.dtype == torch.bool and \
                    hasattr(mask, "op") and mask.name not in self.const:
                src = self.padding_input(mask)
                if src is None and self.from_shapes_only(mask):
                    # a mask built from shapes only (HF wav2vec2 without an attention_mask
                    # input): a constant additive mask
                    add = self.attr(torch.zeros(mv.shape).masked_fill(~mv, float("-inf")))
                elif src is None:
                    self.fail(n, "scaled_dot_product_attention with a boolean mask computed "
                              "from the inputs that is not a key padding mask (the input's "
                              "nonzero positions, as HF transformers' attention_mask)")
                    return True
                else:
                    from qrt_export.rules.attention import padding_additive_mask
                    add = g.call_function(padding_additive_mask, (self.arg(src),))
                    add = g.call_function(torch.reshape, (add, (-1, 1, 1, int(mv.shape[-1]))))
            elif isinstance(mv, torch.Tensor) and mv.dtype == torch.bool:
                add = self.attr(torch.zeros(mv.shape).masked_fill(~mv, float("-inf")))
            else:
                add = self.arg(mask)
        out, made = sdpa_nodes(g, *(self.arg(a[x]) for x in ("query", "key", "value")),
                               self.v[a["query"].name].shape[-1], a.get("scale"), add)
        for m in made:
            self.keep_meta(m, n)
        self.env[n.name] = out
        return True

    def leaf(self, n):
        torch = _torch()
        xs, idx = n.args[0], int(n.args[1])
        if xs and all(x.name in self.const for x in xs):
            # a module on constants only (BERT's position embeddings of its position_ids
            # buffer): its outputs are constants of the graph
            self.const[n.name] = self.v[n.name]
            return
        qual, mod, method = self.leaves[idx]
        rec = self.records[idx]
        shapes = tuple(tuple(self.v[x.name].shape) for x in xs)
        spec, others, struct = rec.struct[shapes]
        tensors = iter(self.arg(x) for x in xs)
        flat = [next(tensors) if o is _T else o for o in others]
        args, kwargs = torch.utils._pytree.tree_unflatten(flat, spec)
        if method is None:
            if id(mod) not in self.mod_names:
                name = qual.replace(".", "_") or "module"
                while hasattr(self.root, name):
                    name += "_"
                self.root.add_module(name, mod)
                self.mod_names[id(mod)] = name
            new = self.g.call_module(self.mod_names[id(mod)], tuple(args), dict(kwargs))
        else:   # QFunctional.<method>: the quantized op it runs
            op = getattr(torch.ops.quantized, method)
            if method in ("add_scalar", "mul_scalar"):
                new = self.g.call_function(op, tuple(args))
            elif method == "cat":
                xs_, dim = (list(args) + [0])[:2]
                new = self.g.call_function(op, (xs_,), {"scale": mod.scale,
                                                        "zero_point": mod.zero_point,
                                                        "dim": dim})
            else:
                new = self.g.call_function(op, tuple(args), {"scale": mod.scale,
                                                             "zero_point": mod.zero_point})
        self.keep_meta(new, n)
        self.env[n.name] = _LeafOut(new, struct)


class _LeafOut:
    """A leaf call's output: its k-th flat tensor is a getitem path into the module's output."""

    def __init__(self, node, struct):
        self.node, self.struct = node, struct
        self.paths: List[tuple] = []

        def walk(s, p):
            if isinstance(s, tuple):
                for i, u in enumerate(s):
                    walk(u, p + (i,))
            else:
                self.paths.append(p)
        walk(struct, ())
        self.cache: Dict[tuple, Any] = {(): node}

    def item(self, rw, k):
        path = self.paths[k]
        for i in range(1, len(path) + 1):
            if path[:i] not in self.cache:
                self.cache[path[:i]] = rw.g.call_function(operator.getitem,
                                                          (self.cache[path[:i - 1]], path[i - 1]))
        return self.cache[path]


class _Missing(Exception):
    pass


def _in(t, s):
    try:
        return t in s
    except TypeError:
        return False


def _factories():
    """Tensor factories: their values follow from shapes and arguments only, which the
    export fixes, so they are constants of the captured graph."""
    a = _torch().ops.aten
    names = ("zeros_like", "ones_like", "full_like", "zeros", "ones", "full", "new_zeros",
             "new_ones", "new_full", "arange", "scalar_tensor", "eye", "empty_like",
             "new_empty", "empty")
    out = []
    for name in names:
        op = getattr(a, name, None)
        if op is None:
            continue
        for o in op.overloads():
            out.append(getattr(op, o))
    return tuple(out)

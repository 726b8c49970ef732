# SPDX-License-Identifier: Apache-2.0
"""Front end for torchao's pt2e flow (``prepare_pt2e`` / ``convert_pt2e``, torch.export).

A converted pt2e program is plain aten ops between ``quantize`` / ``dequantize`` calls
(``quantized_decomposed.*`` or ``torchao.quantize_affine`` / ``dequantize_affine``) with
explicit scale, zero point, quant_min/max and dtype. :func:`to_ao_graph` rewrites it into the
torch.fx form the rest of the exporter already lowers (quantized torch.ao modules and
``quantized::`` ops, ``torch.quantize_per_tensor``, ``Tensor.dequantize``, float torch
functions), so every op has one lowering (qrt_export/rules/):

- ``dq -> conv1d / conv2d / linear [-> relu] -> q``  -> ``nnq.Conv1d`` / ``nniq.ConvReLU1d``
  / ``nnq.Conv2d`` / ``nniq.ConvReLU2d`` / ``nnq.Linear`` / ``nniq.LinearReLU`` (int8 weights
  per channel or per tensor, as stored; a following hardtanh / relu6 / clamp is a table on
  the layer's codes);
- ``dq, dq -> add / mul [-> relu] -> q``     -> ``quantized::add`` / ``add_relu`` / ``mul``;
- ``dq... -> cat -> q``                      -> ``quantized::cat``;
- ``dq -> max/avg/adaptive pool (1-d, 2-d), mean, view/flatten/permute, nearest upsample... ->
  q`` -> the op on the quantized tensor (a requantize follows when the q's parameters are not
  the input's);
- ``dq -> element-wise float ops (relu, hardtanh, clamp, sigmoid...) -> q`` -> the
  ``dequantize -> float -> quantize`` chain, which the lut rule turns into one exact table;
- anything else is a float op on dequantized values (float sections: bilinear upsample,
  group_norm, layer_norm, softmax, a conv the quantizer left float...), or, when no rule
  lowers it, an error naming the aten op and its source line.

Core-aten programs (``run_decompositions``) are first normalised in a copy: a tuple op whose
other results are unused (``max_pool2d_with_indices``, ``native_layer_norm``,
``native_group_norm``, ``_native_batch_norm_legit_no_training``) becomes the aten op computing
its first result, so both forms share one lowering.

int8 activations (XNNPACK-style quantizers) are stored as quint8 with the zero point moved
by 128: ``q_u8 = q_i8 + 128`` exactly, for quantize, dequantize and every integer op.

The integers follow qrt's one integer arithmetic (qnnpack's; the export checks them
bit-exact against torch's qnnpack engine on the rewritten graph). torch's converted program
computes each op in float between dequantize and quantize instead; :func:`agreement`
measures how often the two give the same code (docs/export.md, "pt2e programs").
"""

from __future__ import annotations

import contextlib
import operator
from typing import Any, Dict, List, Optional, Tuple

import numpy as np


class PT2EError(ValueError):
    """A pt2e program whose quantize/dequantize parameters are inconsistent."""


# ---- recognising pt2e programs ----------------------------------------------------------
def _torch():
    import torch
    return torch


def _qd_ops():
    """(quantize ops, dequantize ops, per-channel dequantize ops) of both namespaces."""
    torch = _torch()
    q, dq, dqc, dyn = set(), set(), set(), set()
    register_qd_ops()
    qd = getattr(torch.ops, "quantized_decomposed", None)
    if qd is not None:
        for name, s in (("quantize_per_tensor", q), ("dequantize_per_tensor", dq),
                        ("quantize_per_channel", q), ("dequantize_per_channel", dqc),
                        ("choose_qparams", dyn), ("choose_qparams_symmetric", dyn),
                        ("choose_qparams_per_token_asymmetric", dyn)):
            op = getattr(qd, name, None)
            if op is None:
                continue
            s.add(op)
            try:
                for o in op.overloads():
                    s.add(getattr(op, o))
            except Exception:  # noqa: BLE001
                pass
    ta = getattr(torch.ops, "torchao", None)
    if ta is not None:
        for name, s in (("quantize_affine", q), ("dequantize_affine", dqc),
                        ("choose_qparams_affine", dyn)):
            try:
                op = getattr(ta, name)
                s.add(op)
                for o in op.overloads():
                    s.add(getattr(op, o))
            except Exception:  # noqa: BLE001
                pass
    return q, dq, dqc, dyn


def is_pt2e(model) -> bool:
    """An ExportedProgram, or a GraphModule with pt2e quantize/dequantize calls (checked by
    name: torchao is imported only for pt2e programs), or a torch.export GraphModule of aten
    ops: a converted program where the quantizer annotated nothing (ArmInductorQuantizer on
    a conv1d model) is float aten ops only, exported as float ops."""
    torch = _torch()
    if isinstance(model, torch.export.ExportedProgram):
        return True
    if not isinstance(model, torch.fx.GraphModule):
        return False
    calls = [n for n in model.graph.nodes if n.op == "call_function"]
    if any(str(n.target).startswith(("quantized_decomposed.", "torchao.")) for n in calls):
        return True
    return bool(calls) and all(isinstance(n.target, torch._ops.OpOverload) or
                               not isinstance(n.meta.get("val"), torch.Tensor)
                               for n in calls) and \
        any(isinstance(n.target, torch._ops.OpOverload) and n.target.namespace == "aten"
            for n in calls)


@contextlib.contextmanager
def quiet_torch_logs():
    """torch's and torchao's import and deserialisation chatter (``logging`` warnings: a
    pytree deprecation, torchao's CUDA-only extensions that do not load on a CPU build,
    torch.export's per-node deserialisation log) kept off the terminal: the exporter prints
    one line on failure, naming the cause, and its report on success."""
    import logging
    names = ("torch", "torchao", "torch.export", "torch._export", "torch.utils._pytree")
    loggers = [logging.getLogger(n) for n in names]
    old = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR + 1)
    try:
        yield
    finally:
        for lg, lv in zip(loggers, old):
            lg.setLevel(lv)


def register_qd_ops():
    """Register the quantize / dequantize ops a pt2e program calls, so that a fresh process can
    deserialise and run one: torch's ``quantized_decomposed.*`` (defined by
    ``torch.ao.quantization.fx._decomposed``, which nothing imports at ``import torch``) and
    torchao's ``torchao.quantize_affine`` family (defined when torchao's quantization package
    is imported; absent without torchao, whose programs then cannot be read anyway)."""
    torch = _torch()
    with quiet_torch_logs():
        try:
            import torch.ao.quantization.fx._decomposed  # noqa: F401 - defines the ops
        except Exception:  # noqa: BLE001 - a torch without torch.ao: torchao defines them
            pass
        if getattr(torch.ops, "torchao", None) is None or \
                not hasattr(torch.ops.torchao, "quantize_affine"):
            try:
                import torchao.quantization.pt2e  # noqa: F401 - defines torchao.* ops
            except Exception:  # noqa: BLE001 - torchao absent or broken
                pass


def load_pt2(path):
    """``torch.export.load`` of a ``.pt2`` file (a clear error for anything else), in any
    process: the quantize / dequantize ops of pt2e programs are registered first."""
    torch = _torch()
    register_qd_ops()
    try:
        with quiet_torch_logs():
            return torch.export.load(path)
    except Exception as e:  # noqa: BLE001 - torch raises many types
        raise ValueError(f"{path}: not a torch.export program (torch.export.load failed: "
                         f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
                         ) from e


def as_graph_module(model):
    torch = _torch()
    if isinstance(model, torch.export.ExportedProgram):
        return model.module()
    return model


# ---- torchao eager quantize_ configs ------------------------------------------------------
SUPPORTED_FLOWS = ("torch.ao eager / FX / QAT / quantize_dynamic models",
                   "torchao pt2e: convert_pt2e GraphModule, ExportedProgram, .pt2 file "
                   "(X86InductorQuantizer, ArmInductorQuantizer, EmbeddingQuantizer, "
                   "XNNPACK-style static quantization)")


def refuse_quantize_configs(model):
    """A model whose layers hold torchao quantized tensor subclasses (``quantize_``) is
    refused with the config named: qrt does not reproduce torchao's per-token int8 dynamic
    activations or its weight-only kernels."""
    torch = _torch()
    if not isinstance(model, torch.nn.Module):
        return
    for name, m in model.named_modules():
        w = getattr(m, "weight", None)
        if not isinstance(w, torch.Tensor) or type(w).__module__.split(".")[0] != "torchao":
            continue
        cls = type(w).__name__
        act = getattr(w, "act_quant_kwargs", None) or getattr(w, "input_quant_func", None)
        if act is None and hasattr(w, "original_weight_tensor"):
            act = getattr(w, "input_quant_func", None)
        config = ("Int8DynamicActivationInt8WeightConfig" if act is not None or
                  "LinearActivation" in cls else "Int8WeightOnlyConfig (or another weight-only "
                  "config)")
        from qrt_export._export import UnsupportedError
        raise UnsupportedError(
            f"layer {name or type(m).__name__} holds a torchao {cls} weight: the model was "
            f"quantized with torchao's quantize_({config}). qrt does not export quantize_ "
            "configs (torchao computes per-token dynamic int8 activations or weight-only "
            "kernels that qrt's integer arithmetic does not reproduce). Supported: "
            + "; ".join(SUPPORTED_FLOWS) + " -- for a Pi, quantize the float model with the "
            "pt2e flow (prepare_pt2e / convert_pt2e) or torch.ao.")


# ---- the rewrite ----------------------------------------------------------------------------
_FULL = {"uint8": (0, 255), "int8": (-128, 127), "int32": (-2 ** 31, 2 ** 31 - 1)}


class _QP:
    """Quantization parameters of one pt2e quantized value (as the graph states them)."""

    def __init__(self, scale, zp, qmin, qmax, dtype, axis=None):
        self.scale, self.zp, self.qmin, self.qmax, self.dtype, self.axis = \
            scale, zp, qmin, qmax, dtype, axis

    def key(self):
        s = np.asarray(self.scale, np.float64).ravel().tolist()
        z = np.asarray(self.zp, np.int64).ravel().tolist()
        return (tuple(s), tuple(z), int(self.qmin), int(self.qmax), str(self.dtype))


def _dtname(dt) -> str:
    return str(dt).replace("torch.", "")


def not_a_call(rw, n, val) -> bool:
    """The nodes other than call_function, as both rewriters (this module's _Rewriter and
    capture._Rewrite) take them: a placeholder is copied, a get_attr is a constant, the output
    is ``rw.output(n)``, torch.export's ``_guards_fn`` module without users is dropped, and
    anything else is refused. True when ``n`` was one of these."""
    if n.op == "placeholder":
        rw.env[n.name] = rw.g.placeholder(n.name)
    elif n.op == "get_attr":
        rw.const[n.name] = val
    elif n.op == "output":
        rw.output(n)
    elif n.op == "call_module":   # _guards_fn of torch.export's unlifted module
        if n.users:
            rw.fail(n, f"call_module {n.target}")
    elif n.op != "call_function":
        rw.fail(n, f"{n.op} {n.target}")
    else:
        return False
    return True


class _Rewriter:
    def __init__(self, gm, values):
        import torch.fx as fx
        self.src = gm
        self.v = values                        # pt2e node name -> value at the example
        self.q_ops, self.dq_ops, self.dqc_ops, self.dyn_ops = _qd_ops()
        self.root = _torch().nn.Module()
        self.g = fx.Graph()
        self.env: Dict[str, Any] = {}          # pt2e node -> new node (float or quantized)
        self.qp: Dict[str, _QP] = {}           # pt2e q node / dq node -> its qparams
        self.quant: set = set()                # pt2e nodes whose new node is quantized
        self.const: Dict[str, Any] = {}        # pt2e nodes folded to constants
        self.deq: Dict[str, Any] = {}          # new quantized node -> its dequantize node
        self.done: set = set()
        self.missing: List[str] = []
        self.bad: set = set()                  # pt2e nodes not lowered (an input failed)
        self.ref_of: Dict[str, str] = {}       # new node name -> pt2e q node it reproduces
        self.n_attr = 0

    # -- helpers
    def is_q(self, n):
        return n.op == "call_function" and _in(n.target, self.q_ops)

    def is_dq(self, n):
        return n.op == "call_function" and (_in(n.target, self.dq_ops) or
                                            _in(n.target, self.dqc_ops))

    def source(self, n):
        from qrt_export._export import _source
        return _source(n, self.src)

    def arg_value(self, a):
        return self.v.get(a.name) if _is_node(a) else a

    def qparams(self, n) -> _QP:
        """qparams of a quantize/dequantize node (both namespaces, per tensor or channel)."""
        torch = _torch()
        t = n.target
        name = str(t)
        a = [self.arg_value(x) for x in n.args]
        kw = {k: self.arg_value(x) for k, x in n.kwargs.items()}

        def f(v):
            return v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else np.asarray(v)
        if "affine" in name:   # torchao.quantize_affine / dequantize_affine
            names = ("input", "block_size", "scale", "zero_point",
                     "output_dtype" if "quantize_affine" in name and "de" not in name
                     else "input_dtype", "quant_min", "quant_max")
            d = dict(zip(names, a))
            d.update(kw)
            dt = d.get("output_dtype", d.get("input_dtype"))
            scale, zp = f(d["scale"]).astype(np.float64), d.get("zero_point")
            zp = np.zeros_like(scale, np.int64) if zp is None else f(zp).astype(np.int64)
            qmin = d.get("quant_min")
            qmax = d.get("quant_max")
            full = _FULL.get(_dtname(dt))
            qmin = full[0] if qmin is None and full else qmin
            qmax = full[1] if qmax is None and full else qmax
            axis = None
            x = d["input"]
            bs = list(d["block_size"])
            if scale.size > 1:
                shape = list(x.shape)
                axes = [k for k, (b, s) in enumerate(zip(bs, shape)) if b != s]
                if len(axes) != 1 or bs[axes[0]] != 1:
                    raise PT2EError(f"{n.name}: block_size {bs} for shape {shape} is not per "
                                    "tensor or per channel (groupwise quantization is not "
                                    "supported)")
                axis = axes[0]
            return _QP(scale.reshape(-1) if axis is not None else float(scale.reshape(-1)[0]),
                       zp.reshape(-1) if axis is not None else int(zp.reshape(-1)[0]),
                       int(qmin), int(qmax), dt, axis)
        if "per_channel" in name:
            names = ("input", "scales", "zero_points", "axis", "quant_min", "quant_max",
                     "dtype")
            d = dict(zip(names, a))
            d.update(kw)
            return _QP(f(d["scales"]).astype(np.float64).reshape(-1),
                       f(d["zero_points"]).astype(np.int64).reshape(-1), int(d["quant_min"]),
                       int(d["quant_max"]), d["dtype"], int(d["axis"]))
        names = ("input", "scale", "zero_point", "quant_min", "quant_max", "dtype")
        d = dict(zip(names, a))
        d.update(kw)
        s, z = d["scale"], d["zero_point"]
        return _QP(float(f(s).reshape(-1)[0]), int(f(z).reshape(-1)[0]), int(d["quant_min"]),
                   int(d["quant_max"]), d["dtype"])

    def attr(self, tensor, hint="c"):
        name = f"_pt2e_{hint}_{self.n_attr}"
        self.n_attr += 1
        self.root.register_buffer(name, tensor.detach().clone())
        return self.g.get_attr(name)

    def module(self, mod, hint, args):
        name = f"{hint}_{self.n_attr}"
        self.n_attr += 1
        self.root.add_module(name, mod)
        return self.g.call_module(name, tuple(args))

    def fail(self, n, what):
        self.missing.append(f"{what} at {self.source(n)}")

    # -- values in the new graph
    def float_of(self, a):
        """The new-graph node (or constant) giving pt2e node ``a``'s float value."""
        torch = _torch()
        if not _is_node(a):
            return a
        if a.name in self.const:
            c = self.const[a.name]
            if isinstance(c, torch.Tensor):
                key = a.name + ".attr"
                if key not in self.env:
                    self.env[key] = self.attr(c if not c.is_floating_point() else c.float(),
                                              "c")
                return self.env[key]
            return c
        if a.name not in self.env:
            raise _Missing(a.name)
        nn_ = self.env[a.name]
        if a.name in self.quant:   # a quantized value used by a float op: dequantize it
            if nn_.name not in self.deq:
                self.deq[nn_.name] = self.g.call_method("dequantize", (nn_,))
            return self.deq[nn_.name]
        return nn_

    def quantized_input(self, a) -> Optional[Tuple[Any, _QP]]:
        """If ``a`` is a dequantize of a quantized activation: (its new quantized node, qp)."""
        if not (_is_node(a) and self.is_dq(a) and a.name not in self.const):
            return None
        src = a.args[0]
        if not _is_node(src) or src.name not in self.quant:
            return None
        return self.env[src.name], self.qp[src.name]

    def weight(self, a):
        """``a`` as a torch.ao quantized weight (a dequantize of a constant int8 tensor)."""
        torch = _torch()
        if not (_is_node(a) and self.is_dq(a)):
            return None
        src = a.args[0]
        iv = self.v.get(src.name) if _is_node(src) else None
        if not isinstance(iv, torch.Tensor) or (_is_node(src) and src.name not in self.const):
            return None
        qp = self.qparams(a)
        if iv.dtype != torch.int8:
            return None
        if qp.axis is not None:
            if qp.axis != 0:
                return None
            return torch._make_per_channel_quantized_tensor(
                iv, torch.tensor(qp.scale, dtype=torch.float64),
                torch.tensor(qp.zp, dtype=torch.int64), 0)
        return torch._make_per_tensor_quantized_tensor(iv, float(qp.scale), int(qp.zp))

    # -- the walk
    def run(self):
        for n in self.src.graph.nodes:
            if n.name in self.done:
                continue
            try:
                self.node(n)
            except _Missing as e:  # an input was not lowered (already reported)
                self.bad.add(n.name)
                if not self.missing:
                    self.fail(n, f"input {e} of {n.name} has no value")
        if self.missing:
            from qrt_export._export import UnsupportedError
            raise UnsupportedError(
                f"{len(self.missing)} unsupported op(s) in the pt2e program: "
                + "; ".join(self.missing) + ". The ops qrt runs are listed in "
                "docs/supported-ops.md (pt2e: docs/export.md).")
        import torch.fx as fx
        gm = fx.GraphModule(self.root, self.g)
        gm.graph.lint()
        return gm

    def output(self, n):
        outs = n.args[0]
        if isinstance(outs, (tuple, list)):
            self.g.output(type(outs)(self.out_of(o) for o in outs))
        else:
            self.g.output(self.out_of(outs))

    def node(self, n):
        torch = _torch()
        val = self.v.get(n.name)
        if not_a_call(self, n, val):
            return
        # constants: every input constant (weights quantized at convert, folded params)
        ins = [a for a in n.all_input_nodes]
        if ins and all(a.name in self.const for a in ins) and isinstance(val, torch.Tensor):
            self.const[n.name] = val
            return
        if not ins and isinstance(val, torch.Tensor):
            self.const[n.name] = val
            return
        if not n.users and _is_assert(n):
            return
        if _in(n.target, self.dyn_ops):
            self.fail(n, f"{_opname(n.target)} (dynamic activation quantization: qrt runs "
                      "static quantization; the XNNPACK quantizer's is_dynamic=True and "
                      "torchao's Int8DynamicActivation configs are not supported)")
            return
        if self.is_q(n):
            self.quantize(n)
            return
        if self.is_dq(n):
            self.dequantize(n)
            return
        if self.fused(n):
            return
        self.float_op(n)

    def out_of(self, o):
        if not _is_node(o):
            return o
        if o.name in self.const:
            return self.float_of(o)
        # a dequantize output is float (as in the program); a quantize output stays codes
        return self.env[o.name] if self.is_q(o) else self.float_of(o)

    def quantize(self, n):
        torch = _torch()
        qp = self.qparams(n)
        dt = _dtname(qp.dtype)
        if qp.axis is not None:
            self.fail(n, f"{_opname(n.target)} per channel on an activation")
            return
        if dt not in ("uint8", "int8"):
            self.fail(n, f"{_opname(n.target)} to {dt} (qrt activations are 8-bit)")
            return
        lo, hi = _FULL[dt]
        if (qp.qmin, qp.qmax) != (lo, hi):
            self.fail(n, f"{_opname(n.target)} with quant_min/max [{qp.qmin}, {qp.qmax}] "
                      f"narrower than {dt} [{lo}, {hi}] (qrt's integer ops, like torch's "
                      "quantized ops, saturate to the full dtype range; quantize with the full "
                      "range, reduce_range=False)")
            return
        zp = qp.zp + (128 if dt == "int8" else 0)
        x = self.float_of(n.args[0])
        new = self.g.call_function(torch.quantize_per_tensor, (x, float(qp.scale), int(zp),
                                                               torch.quint8))
        self.set_q(n, new, qp)

    def set_q(self, n, new, qp):
        self.env[n.name] = new
        self.quant.add(n.name)
        self.qp[n.name] = qp
        self.ref_of[new.name] = n.name

    def dequantize(self, n):
        qp = self.qparams(n)
        src = n.args[0]
        if not _is_node(src):
            self.fail(n, f"{_opname(n.target)} of a non-tensor")
            return
        if src.name in self.const:  # a weight (or a constant): folded
            self.const[n.name] = self.v[n.name]
            return
        if src.name in self.bad:    # its quantize was not lowered (reported there)
            raise _Missing(src.name)
        if src.name not in self.quant:
            self.fail(n, f"{_opname(n.target)} of {src.name}, which is not a quantize output "
                      "(a pt2e program quantizes every activation it dequantizes)")
            return
        sq = self.qp[src.name]
        if sq.key() != qp.key():
            raise PT2EError(
                f"inconsistent quantize/dequantize parameters: {n.name} ({self.source(n)}) "
                f"dequantizes {src.name} with scale {qp.scale}, zero point {qp.zp}, "
                f"quant_min/max [{qp.qmin}, {qp.qmax}], {qp.dtype}, but {src.name} quantized "
                f"with scale {sq.scale}, zero point {sq.zp}, quant_min/max [{sq.qmin}, "
                f"{sq.qmax}], {sq.dtype}")
        self.env[n.name] = self.env[src.name]
        self.quant.add(n.name)
        self.qp[n.name] = sq
        # a dequantize is materialised only when a float op reads it (float_of)

    # -- dq -> op -> q patterns
    def _single_q_user(self, n, allow_relu=False, allow_clamp=False):
        """(activation node or None, q node) when n's only use is a quantize (after a relu,
        or with ``allow_clamp`` a hardtanh / clamp / relu6)."""
        users = list(n.users)
        if len(users) != 1:
            return None
        u = users[0]
        act = None
        acts = (_relu_ops() if allow_relu else ()) + (_clamp_ops() if allow_clamp else ())
        if acts and u.op == "call_function" and _in(u.target, acts) and len(u.users) == 1 \
                and u.args[0] is n:
            act, u = u, next(iter(u.users))
        if not self.is_q(u) or u.args[0] is not (act or n):
            return None
        qp = self.qparams(u)
        dt = _dtname(qp.dtype)
        if dt not in ("uint8", "int8") or qp.axis is not None or \
                (qp.qmin, qp.qmax) != _FULL[dt]:
            return None
        return act, u

    def _clamp_after(self, act, new, q):
        """layer -> hardtanh/clamp -> q: the layer quantized at q's parameters, then the clamp
        on those codes (dequantize -> clamp -> quantize, one exact table): quantizing is
        monotone, so clamp-then-quantize equals quantize-then-clamp-the-codes."""
        torch = _torch()
        fn, args, kwargs = _float_call(act, lambda a: a)
        s, z = self._out_qparams(q)
        d = self.g.call_method("dequantize", (new,))
        c = self.g.call_function(fn, (d,) + tuple(args[1:]), kwargs)
        return self.g.call_function(torch.quantize_per_tensor, (c, s, z, torch.quint8))

    def fused(self, n) -> bool:
        torch = _torch()
        aten = torch.ops.aten
        t = n.target
        if _in(t, (aten.conv1d.default, aten.conv2d.default, aten.convolution.default,
                   aten.conv_transpose1d.default)):
            return self.conv(n)
        if _in(t, (aten.linear.default, aten.addmm.default, aten.mm.default)):
            return self.linear(n)
        if _in(t, (aten.add.Tensor, aten.add_.Tensor, aten.mul.Tensor, aten.mul_.Tensor)):
            return self.binary(n)
        if _in(t, (aten.cat.default, aten.concat.default)):
            return self.cat(n)
        if _in(t, _shared_ops()):
            return self.shared(n)
        return False

    def _emit_q(self, q, new, qp_out=None):
        qp = self.qparams(q) if qp_out is None else qp_out
        self.set_q(q, new, qp)
        self.done.add(q.name)

    def _layer(self, m, what, wq, bias, x, act, relu, q):
        """Install the quantized layer module ``m`` (weights ``wq``, float ``bias``) on input
        ``x`` at q's output qparams; an activation ``act`` not fused into ``m`` (``relu`` is
        None) becomes a clamp table on its codes. Emits q's replacement."""
        m.set_weight_bias(wq, None if bias is None else bias.detach().float())
        m.scale, m.zero_point = self._out_qparams(q)
        new = self.module(m, what, [x])
        if act is not None:
            self.done.add(act.name)
            if relu is None:
                new = self._clamp_after(act, new, q)
        self._emit_q(q, new)
        return True

    def _out_qparams(self, q):
        qp = self.qparams(q)
        zp = int(qp.zp) + (128 if _dtname(qp.dtype) == "int8" else 0)
        return float(qp.scale), zp

    def conv(self, n):
        torch = _torch()
        import torch.ao.nn.intrinsic.quantized as nniq
        import torch.ao.nn.quantized as nnq
        a = list(n.args) + [None] * 9
        if n.target == torch.ops.aten.convolution.default:
            x, w, b, stride, pad, dil, transposed, opad, groups = a[:9]
            if transposed:
                return self.conv_transpose(n, x, w, b, stride, pad, opad, groups, dil)
        elif n.target == torch.ops.aten.conv_transpose1d.default:
            x, w, b, stride, pad, opad, groups, dil = a[:8]
            return self.conv_transpose(n, x, w, b, stride or [1], pad or [0], opad or [0],
                                       groups or 1, dil or [1])
        else:
            x, w, b, stride, pad, dil, groups = a[:7]
            one = [1, 1] if n.target == torch.ops.aten.conv2d.default else [1]
            stride, pad, dil, groups = (stride or one), (pad or [0] * len(one)), \
                (dil or one), groups or 1
        xi = self.quantized_input(x)
        wq = self.weight(w)
        pat = self._single_q_user(n, allow_relu=True, allow_clamp=True)
        if xi is None or wq is None or pat is None or wq.dim() not in (3, 4) or \
                isinstance(pad, str):
            return False
        act, q = pat
        relu = act if act is not None and _in(act.target, _relu_ops()) else None
        bias = None
        if b is not None:
            bias = self.v.get(b.name) if _is_node(b) else b
            if not (_is_node(b) and b.name in self.const):
                return False
        if wq.dim() == 4:   # dq -> conv2d [-> relu] -> q: nnq.Conv2d / nniq.ConvReLU2d
            cls = nniq.ConvReLU2d if relu is not None else nnq.Conv2d
            c_out, c_in_g, kh, kw = wq.shape
            m = cls(c_in_g * int(groups), c_out, (kh, kw), stride=_pair(stride),
                    padding=_pair(pad), dilation=_pair(dil), groups=int(groups),
                    bias=bias is not None)
            return self._layer(m, "conv", wq, bias, xi[0], act, relu, q)
        cls = nniq.ConvReLU1d if relu is not None else nnq.Conv1d
        c_out, c_in_g, k = wq.shape
        m = cls(c_in_g * int(groups), c_out, k, stride=int(_one(stride)),
                padding=int(_one(pad)), dilation=int(_one(dil)), groups=int(groups),
                bias=bias is not None)
        return self._layer(m, "conv", wq, bias, xi[0], act, relu, q)

    def conv_transpose(self, n, x, w, b, stride, pad, opad, groups, dil):
        """dq -> conv_transpose1d -> q with per-tensor int8 weights -> nnq.ConvTranspose1d
        (per-channel weights of a transposed conv run along its input channels: refused by
        the rule, as for torch.ao models)."""
        import torch.ao.nn.quantized as nnq
        xi = self.quantized_input(x)
        wq = self.weight(w)
        pat = self._single_q_user(n, allow_relu=True, allow_clamp=True)
        if xi is None or wq is None or pat is None or wq.dim() != 3 or wq.qscheme() not in (
                _torch().per_tensor_affine, _torch().per_tensor_symmetric):
            return False
        if b is not None and not (_is_node(b) and b.name in self.const):
            return False
        bias = None if b is None else self.v[b.name]
        c_in, c_out_g, k = wq.shape
        m = nnq.ConvTranspose1d(c_in, c_out_g * int(groups), k, stride=int(_one(stride)),
                                padding=int(_one(pad)), output_padding=int(_one(opad)),
                                groups=int(groups), bias=bias is not None,
                                dilation=int(_one(dil)))
        # no fused activation: a relu/clamp table on q's codes
        return self._layer(m, "conv_transpose", wq, bias, xi[0], pat[0], None, pat[1])

    def linear(self, n):
        import torch.ao.nn.intrinsic.quantized as nniq
        import torch.ao.nn.quantized as nnq
        parts = _linear_parts(n)
        if parts is None:
            return False
        x, w, b = parts
        xi = self.quantized_input(x)
        wq = self.weight(w)
        pat = self._single_q_user(n, allow_relu=True, allow_clamp=True)
        if xi is None or wq is None or pat is None or wq.dim() != 2:
            return False
        act, q = pat
        relu = act if act is not None and _in(act.target, _relu_ops()) else None
        bias = None
        if b is not None:
            if not (_is_node(b) and b.name in self.const):
                return False
            bias = self.v[b.name]
        cls = nniq.LinearReLU if relu is not None else nnq.Linear
        kw = {"bias" if relu is not None else "bias_": bias is not None}  # nniq.LinearReLU: bias
        m = cls(wq.shape[1], wq.shape[0], **kw)
        return self._layer(m, "linear", wq, bias, xi[0], act, relu, q)

    def binary(self, n):
        torch = _torch()
        if n.kwargs.get("alpha", 1) != 1 or len(n.args) != 2:
            return False
        ai, bi = self.quantized_input(n.args[0]), self.quantized_input(n.args[1])
        pat = self._single_q_user(n, allow_relu=True)
        if ai is None or bi is None or pat is None:
            return False
        relu, q = pat
        mul = "mul" in str(n.target)
        op = (torch.ops.quantized.mul_relu if mul else torch.ops.quantized.add_relu) \
            if relu is not None else (torch.ops.quantized.mul if mul else torch.ops.quantized.add)
        s, z = self._out_qparams(q)
        new = self.g.call_function(op, (ai[0], bi[0], s, z))
        if relu is not None:
            self.done.add(relu.name)
        self._emit_q(q, new)
        return True

    def cat(self, n):
        torch = _torch()
        xs = n.args[0]
        dim = n.kwargs.get("dim", n.args[1] if len(n.args) > 1 else 0)
        ins = [self.quantized_input(x) for x in xs]
        pat = self._single_q_user(n)
        if any(i is None for i in ins) or pat is None:
            return False
        s, z = self._out_qparams(pat[1])
        new = self.g.call_function(torch.ops.quantized.cat, ([i[0] for i in ins], int(dim),
                                                             s, z))
        self._emit_q(pat[1], new)
        return True

    def shared(self, n):
        """Ops that commute with (monotone) dequantization, run on the quantized tensor; a
        requantize follows when the q's parameters are not the input's."""
        torch = _torch()
        xi = self.quantized_input(n.args[0]) if n.args else None
        pat = self._single_q_user(n)
        if xi is None or pat is None:
            return False
        q = pat[1]
        fn, args, kwargs = _float_call(n, lambda a: xi[0] if a is n.args[0] else
                                       self.float_of(a))
        if fn is None:
            return False
        if _is_spatial_mean(n, self.v.get(n.args[0].name)):
            # core aten's adaptive_avg_pool2d(x, 1) (run_decompositions): the same op as the
            # pool it was, on the quantized tensor whatever its memory format
            fn, args, kwargs = _torch().nn.functional.adaptive_avg_pool2d, (xi[0], [1, 1]), {}
        new = self.g.call_function(fn, args, kwargs) if callable(fn) else \
            self.g.call_method(fn, args, kwargs)
        qp_in, qp_out = xi[1], self.qparams(q)
        if (qp_in.key()[:2], _dtname(qp_in.dtype)) != (qp_out.key()[:2], _dtname(qp_out.dtype)):
            s, z = self._out_qparams(q)
            d = self.g.call_method("dequantize", (new,))
            new = self.g.call_function(torch.quantize_per_tensor, (d, s, z, torch.quint8))
        self._emit_q(q, new)
        return True

    def float_op(self, n):
        torch = _torch()
        if unbind_item(n) is not None:      # lowered at its getitem users
            return
        if n.target is operator.getitem and _is_node(n.args[0]) and \
                unbind_item(n.args[0]) is not None:
            x, dim = unbind_item(n.args[0])
            key = unbind_key(self.v[x.name], dim, n.args[1])
            self.env[n.name] = self.g.call_function(operator.getitem, (self.float_of(x), key))
            return
        if n.target == torch.ops.aten.scaled_dot_product_attention.default:
            a, why = sdpa_args(n)
            if a is None:
                self.fail(n, why)
                return
            mask = a.get("attn_mask")
            mv = self.v.get(mask.name) if _is_node(mask) else mask
            if isinstance(mv, torch.Tensor) and mv.dtype == torch.bool:
                if not (_is_node(mask) and mask.name in self.const):
                    self.fail(n, "scaled_dot_product_attention with a boolean mask computed in "
                              "the program (a constant or an additive float mask is lowered)")
                    return
                mask = self.attr(torch.zeros(mv.shape).masked_fill(~mv, float("-inf")), "m")
            elif mask is not None:
                mask = self.float_of(mask)
            out, _ = sdpa_nodes(self.g, *(self.float_of(a[x]) for x in ("query", "key",
                                                                         "value")),
                                self.v[a["query"].name].shape[-1], a.get("scale"), mask)
            self.env[n.name] = out
            return
        if n.target == torch.ops.aten.adaptive_avg_pool1d.default and \
                list(n.args[1]) == [1]:   # float: a mean over the time axis
            self.env[n.name] = self.g.call_function(
                torch.mean, (self.float_of(n.args[0]), [-1], True))
            return
        fn, args, kwargs = _float_call(n, self.float_of)
        if fn is None:
            why = _WHY.get(str(n.target).split(".")[1] if "." in str(n.target) else "", "")
            self.fail(n, f"op {_opname(n.target)}" + (f" ({why})" if why else ""))
            return
        if fn is torch.nn.functional.conv2d and not _has_function_rule(fn):
            # reported, and kept in the graph so that the walk goes on (every one is named)
            self.fail(n, f"op {_opname(n.target)} '{n.name}' in float ({_float_conv_why(n)}; "
                      "qrt has no float conv2d op yet: float_conv2d is on its way)")
        new = self.g.call_function(fn, args, kwargs) if callable(fn) else \
            self.g.call_method(fn, args, kwargs)
        self.env[n.name] = new


# ---- ops one ATen node lowers to several graph nodes for: shared by pt2e and the capture ----
_SDPA_NAMES = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale",
               "enable_gqa")


def sdpa_args(n):
    """(the arguments of an aten.scaled_dot_product_attention node by name, None) or (None,
    why it is refused)."""
    a = dict(zip(_SDPA_NAMES, n.args))
    a.update(n.kwargs)
    if a.get("dropout_p", 0.0) or a.get("is_causal", False) or a.get("enable_gqa", False):
        return None, "scaled_dot_product_attention with dropout, is_causal or enable_gqa"
    return a, None


def sdpa_nodes(g, q, k, v, head_dim, scale, mask=None):
    """F.scaled_dot_product_attention as the float ops of its definition on fx graph ``g``:
    softmax(q k^T * scale [+ mask]) v (``mask``: an additive float mask node or None), each a
    float op qrt runs (matmul, mul, add, softmax). Returns (output node, the nodes made)."""
    import math
    torch = _torch()
    scale = scale or 1.0 / math.sqrt(head_dim)
    made = [g.call_function(torch.transpose, (k, -2, -1))]
    made.append(g.call_function(torch.matmul, (q, made[-1])))
    made.append(g.call_function(operator.mul, (made[-1], float(scale))))
    if mask is not None:
        made.append(g.call_function(operator.add, (made[-1], mask)))
    made.append(g.call_function(torch.softmax, (made[-1], -1)))
    made.append(g.call_function(torch.matmul, (made[-1], v)))
    return made[-1], made


def _sdpa_fns():
    torch = _torch()
    return {torch.nn.functional.scaled_dot_product_attention,
            getattr(torch._C._nn, "scaled_dot_product_attention", None)} - {None}


def _is_unbind(n):
    torch = _torch()
    return (n.op == "call_method" and n.target == "unbind") or \
        (n.op == "call_function" and n.target is torch.unbind)


def fx_attention(gm, values) -> bool:
    """Rewrite, on a torch.fx graph (FX-quantized or traced), what the torch.export path lowers
    through this module's shared table: ``x.unbind(dim)`` read by getitems becomes ``x[..., k]``
    selections (unbind_item's), and F.scaled_dot_product_attention without a mask, dropout or
    causality (timm's Attention) the float ops of its definition (sdpa_nodes). ``values``:
    torch's value of every node (the head size, the None / False arguments). Returns whether
    the graph changed (then recompiled)."""
    g = gm.graph
    sdpa = _sdpa_fns()
    changed = False
    for n in list(g.nodes):
        if _is_unbind(n):
            users = list(n.users)
            if not users or any(u.op != "call_function" or u.target is not operator.getitem
                                or not isinstance(u.args[1], int) for u in users):
                continue
            x = n.args[0]
            dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
            xv = values.get(x.name) if hasattr(x, "name") else None
            if not hasattr(xv, "dim") or not isinstance(dim, int):
                continue
            for u in users:
                with g.inserting_before(u):
                    new = g.call_function(operator.getitem,
                                          (x, unbind_key(xv, dim, u.args[1])))
                new.meta = dict(u.meta)
                u.replace_all_uses_with(new)
                g.erase_node(u)
            g.erase_node(n)
            changed = True
        elif n.op == "call_function" and n.target in sdpa:
            a = dict(zip(_SDPA_NAMES, n.args))
            a.update(n.kwargs)

            def val(k, default=None):
                v = a.get(k, default)
                return values.get(v.name) if hasattr(v, "op") else v
            if val("attn_mask") is not None or val("dropout_p", 0.0) or \
                    val("is_causal", False) or val("enable_gqa", False):
                continue          # refused with its reason by the rules
            qv = values.get(a["query"].name) if hasattr(a["query"], "name") else None
            if not hasattr(qv, "shape"):
                continue
            with g.inserting_before(n):
                out, made = sdpa_nodes(g, a["query"], a["key"], a["value"],
                                       int(qv.shape[-1]), val("scale"))
            for m in made:
                m.meta = dict(n.meta)
            n.replace_all_uses_with(out)
            g.erase_node(n)
            changed = True
    if changed:
        g.eliminate_dead_code()
        gm.recompile()
    return changed


def unbind_item(n):
    """(tensor node, dim) when ``n`` is aten.unbind(x, dim), else None: its getitem users
    become ``x[:, ..., k]`` selections (timm's ``q, k, v = qkv.unbind(0)``)."""
    a = _torch().ops.aten
    if n.op == "call_function" and n.target == a.unbind.int:
        return n.args[0], int(n.args[1]) if len(n.args) > 1 else int(n.kwargs.get("dim", 0))
    return None


def unbind_key(x_val, dim, k):
    nd = x_val.dim()
    return tuple([slice(None)] * (dim % nd)) + (int(k),)


# aten op name -> why qrt refuses it (added to the message)
_WHY: Dict[str, str] = {
    "dropout": "train=True: the program was converted in train mode; call torchao's "
               "move_exported_model_to_eval before convert_pt2e",
    "adaptive_max_pool1d": "it returns (values, indices)"}
_WHY["dropout_"] = _WHY["dropout"]


def _has_function_rule(fn) -> bool:
    from qrt_export.rules import find_function_rule
    return find_function_rule(fn) is not None


def _float_conv_why(n) -> str:
    """Why the program leaves conv node ``n`` in float (for the refusal message)."""
    aten = _torch().ops.aten
    users = list(n.users)
    if len(users) == 1 and _in(users[0].target, (aten.add.Tensor, aten.add_.Tensor)):
        return ("the quantizer fused it with the add that follows (X86InductorQuantizer's "
                "conv + add [+ relu] pattern: the conv's output is not quantized, torch adds "
                "it in float to the dequantized other input)")
    x = n.args[0] if n.args else None
    if not (_is_node(x) and "dequantize" in str(getattr(x, "target", ""))):
        return "its input is not quantized"
    return "its output is not quantized"


class _Missing(Exception):
    pass


def _is_node(a):
    return hasattr(a, "op") and hasattr(a, "users")


def _in(t, s):
    try:
        return t in s
    except TypeError:
        return False


def _one(v):
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise ValueError(f"expected a 1-d size, got {v!r}")
        return v[0]
    return v


def _pair(v):
    """A 2-d conv's stride / padding / dilation as a tuple of two ints."""
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    if len(v) == 1:
        v = v * 2
    if len(v) != 2:
        raise ValueError(f"expected a 2-d size, got {v!r}")
    return int(v[0]), int(v[1])


def _opname(t) -> str:
    s = str(t)
    return s if s.startswith(("aten.", "quantized_decomposed.", "torchao.")) else \
        getattr(t, "__name__", s)


def _is_assert(n):
    s = str(n.target)
    return "assert" in s or "sym_constrain_range" in s or "_check" in s


def _relu_ops():
    a = _torch().ops.aten
    return (a.relu.default, a.relu_.default)


def _linear_parts(n):
    """(x, weight [out, in], bias) of aten.linear, or of the decomposed addmm / mm against a
    transposed weight (``run_decompositions``); None for another matmul."""
    a = _torch().ops.aten
    if n.target == a.linear.default:
        args = list(n.args) + [None] * 3
        return tuple(args[:3])
    if n.kwargs.get("beta", 1) != 1 or n.kwargs.get("alpha", 1) != 1:
        return None
    if n.target == a.addmm.default:
        b, x, wt = n.args[:3]
    else:
        (x, wt), b = n.args[:2], None
    if not (_is_node(wt) and wt.op == "call_function"):
        return None
    if wt.target == a.t.default or (wt.target == a.permute.default and
                                    list(wt.args[1]) == [1, 0]) or \
            (wt.target == a.transpose.int and sorted(int(d) % 2 for d in wt.args[1:3]) == [0, 1]):
        return x, wt.args[0], b
    return None


def _is_spatial_mean(n, x):
    """``aten.mean.dim(x, [-1, -2], keepdim=True)`` over the two spatial dims of a 4-d x."""
    a = _torch().ops.aten
    if n.target != a.mean.dim or getattr(x, "dim", lambda: 0)() != 4:
        return False
    dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
    keep = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
    return bool(keep) and dims is not None and sorted(int(d) % 4 for d in dims) == [2, 3]


def _clamp_ops():
    a = _torch().ops.aten
    return (a.hardtanh.default, a.hardtanh_.default, a.clamp.default)


def _shared_ops():
    a = _torch().ops.aten
    return (a.max_pool1d.default, a.avg_pool1d.default, a.adaptive_avg_pool1d.default,
            a.mean.dim, a.flatten.using_ints, a.view.default, a.reshape.default,
            a.permute.default, a.transpose.int, a.squeeze.dim, a.squeeze.dims,
            a.unsqueeze.default,
            a.dropout.default, a.dropout_.default, a.clone.default, a.contiguous.default,
            a.adaptive_max_pool1d.default, a.max_pool2d.default, a.avg_pool2d.default,
            a.adaptive_avg_pool2d.default) + _upsample_ops(shared_only=True)


def _float_call(n, fa):
    """(torch callable or Tensor method name, args, kwargs) computing aten node ``n`` with
    arguments mapped by ``fa``; (None, None, None) when qrt has no lowering for it."""
    import torch
    import torch.fx as fx
    F = torch.nn.functional
    a = torch.ops.aten
    t = n.target
    args = fx.node.map_arg(n.args, fa)
    kw = dict(fx.node.map_arg(dict(n.kwargs), fa))

    def at(i, name=None, default=None):
        if i < len(args):
            return args[i]
        return kw.get(name, default) if name else default
    simple = {a.relu.default: torch.relu, a.relu_.default: torch.relu,
              a.sigmoid.default: torch.sigmoid, a.tanh.default: torch.tanh,
              a.exp.default: torch.exp, a.log.default: torch.log,
              a.sqrt.default: torch.sqrt, a.hardswish.default: F.hardswish,
              a.hardswish_.default: F.hardswish,
              a.hardsigmoid.default: F.hardsigmoid, a.hardsigmoid_.default: F.hardsigmoid,
              a.sigmoid_.default: torch.sigmoid, a.tanh_.default: torch.tanh,
              a.silu.default: F.silu,
              a.silu_.default: F.silu, a.sub.Tensor: operator.sub,
              a.div.Tensor: operator.truediv, a.neg.default: operator.neg,
              a.abs.default: torch.abs, a.bmm.default: torch.bmm,
              a.matmul.default: torch.matmul,
              a.add.Scalar: operator.add, a.sub.Scalar: operator.sub,
              a.mul.Scalar: operator.mul, a.div.Scalar: operator.truediv,
              a.pow.Tensor_Scalar: torch.pow}
    if _in(t, simple):
        if kw:
            return None, None, None
        return simple[t], tuple(args), {}
    if _in(t, (a.add.Tensor, a.add_.Tensor)):
        alpha = kw.pop("alpha", 1)
        if alpha != 1 or kw:
            return None, None, None
        return operator.add, tuple(args[:2]), {}
    if _in(t, (a.mul.Tensor, a.mul_.Tensor)):
        return operator.mul, tuple(args[:2]), {}
    if _in(t, (a.hardtanh.default, a.hardtanh_.default)):
        return F.hardtanh, (at(0), float(at(1, "min_val", -1.0)), float(at(2, "max_val", 1.0))), {}
    if _in(t, (a.clamp.default,)):
        return torch.clamp, (at(0), at(1, "min"), at(2, "max")), {}
    if _in(t, (a.select.int,)) and _is_node(n.args[0]) and "val" in n.args[0].meta:
        # x[:, 0] (BERT's pooler, ViT's class token): a getitem
        nd = n.args[0].meta["val"].dim()
        key = tuple([slice(None)] * (int(at(1, "dim")) % nd)) + (int(at(2, "index")),)
        return operator.getitem, (at(0), key), {}
    if _in(t, (a.prelu.default,)):
        return F.prelu, (at(0), at(1, "weight")), {}
    if _in(t, (a.to.dtype_layout, a.to.device, a.to.dtype, a._to_copy.default)):
        # a cast to the dtype the tensor already has (``x.to(other.device)`` on a CPU): a copy
        x_meta = n.args[0].meta.get("val") if _is_node(n.args[0]) else None
        out_meta = n.meta.get("val")
        if x_meta is None or out_meta is None or x_meta.dtype != out_meta.dtype:
            return None, None, None
        return "contiguous", (at(0),), {}
    if _in(t, (a.gelu.default,)):
        return F.gelu, (at(0),), {"approximate": kw.get("approximate", "none")}
    if _in(t, (a.leaky_relu.default,)):
        return F.leaky_relu, (at(0), float(at(1, "negative_slope", 0.01))), {}
    if _in(t, (a.elu.default,)):
        return F.elu, (at(0), float(at(1, "alpha", 1.0))), {}
    if _in(t, (a.softmax.int, a._softmax.default)):
        return F.softmax, (at(0), int(at(1, "dim"))), {}
    if _in(t, (a.log_softmax.int, a._log_softmax.default)):
        return F.log_softmax, (at(0), int(at(1, "dim"))), {}
    if _in(t, (a.group_norm.default,)):
        return F.group_norm, (at(0), int(at(1, "num_groups")), at(2, "weight"), at(3, "bias"),
                              float(at(4, "eps", 1e-5))), {}
    up = _upsample_call(n, at)
    if up is not None:
        return up
    if _in(t, (a.layer_norm.default,)):
        return F.layer_norm, (at(0), list(at(1)), at(2, "weight"), at(3, "bias"),
                              float(at(4, "eps", 1e-5))), {}
    if _in(t, (a.conv2d.default,)):
        return F.conv2d, (at(0), at(1), at(2), at(3, "stride", [1, 1]), at(4, "padding", [0, 0]),
                          at(5, "dilation", [1, 1]), at(6, "groups", 1)), {}
    if _in(t, (a.conv1d.default,)):
        return F.conv1d, (at(0), at(1), at(2), at(3, "stride", [1]), at(4, "padding", [0]),
                          at(5, "dilation", [1]), at(6, "groups", 1)), {}
    if _in(t, (a.linear.default,)):
        return F.linear, (at(0), at(1), at(2)), {}
    if _in(t, (a.conv_transpose1d.default,)):
        return F.conv_transpose1d, (at(0), at(1), at(2), at(3, "stride", [1]),
                                    at(4, "padding", [0]), at(5, "output_padding", [0]),
                                    at(6, "groups", 1), at(7, "dilation", [1])), {}
    if _in(t, (a.convolution.default,)):
        x, w, b, st, pd, dl, tr, op, gr = (list(args) + [None] * 9)[:9]
        two = len(st) == 2
        if tr:
            return (F.conv_transpose2d if two else F.conv_transpose1d), \
                (x, w, b, st, pd, op, gr, dl), {}
        return (F.conv2d if two else F.conv1d), (x, w, b, st, pd, dl, gr), {}
    if _in(t, (a.embedding.default,)):   # (weight, indices, padding_idx...): the forward
        return F.embedding, (at(1), at(0)), {}   # ignores padding_idx
    if _in(t, (a.addmm.default, a.mm.default)):
        parts = _linear_parts(n)
        if parts is None:
            return None, None, None
        x, w, b = (fa(p) if _is_node(p) else p for p in parts)
        return F.linear, (x, w, b), {}
    if _in(t, (a.squeeze.dims,)):
        dims = [int(d) for d in at(1)]
        if len(dims) != 1:
            return None, None, None
        return torch.squeeze, (at(0), dims[0]), {}
    if _in(t, (a.max_pool1d.default,)):
        k = at(1)
        return F.max_pool1d, (at(0), k, at(2, "stride") or k, at(3, "padding", 0),
                              at(4, "dilation", 1), at(5, "ceil_mode", False)), {}
    if _in(t, (a.avg_pool1d.default,)):
        k = at(1)
        return F.avg_pool1d, (at(0), k, at(2, "stride") or k, at(3, "padding", 0),
                              at(4, "ceil_mode", False), at(5, "count_include_pad", True)), {}
    if _in(t, (a.adaptive_avg_pool1d.default,)):
        return F.adaptive_avg_pool1d, (at(0), at(1)), {}
    if _in(t, (a.max_pool2d.default,)):
        k = at(1)
        return F.max_pool2d, (at(0), k, at(2, "stride") or k, at(3, "padding", 0),
                              at(4, "dilation", 1), at(5, "ceil_mode", False)), {}
    if _in(t, (a.avg_pool2d.default,)):
        k = at(1)
        return F.avg_pool2d, (at(0), k, at(2, "stride") or k, at(3, "padding", 0),
                              at(4, "ceil_mode", False), at(5, "count_include_pad", True),
                              at(6, "divisor_override")), {}
    if _in(t, (a.adaptive_avg_pool2d.default,)):
        return F.adaptive_avg_pool2d, (at(0), list(at(1))), {}
    if _in(t, (a.adaptive_max_pool1d.default,)):
        return None, None, None   # returns (values, indices)
    if _in(t, (a.mean.dim,)):
        return torch.mean, (at(0), at(1, "dim"), bool(at(2, "keepdim", False))), {}
    if _in(t, (a.sum.dim_IntList,)):
        return torch.sum, (at(0), at(1, "dim"), bool(at(2, "keepdim", False))), {}
    if _in(t, (a.flatten.using_ints,)):
        return torch.flatten, (at(0), int(at(1, "start_dim", 0)), int(at(2, "end_dim", -1))), {}
    if _in(t, (a.view.default, a.reshape.default, a._unsafe_view.default)):
        return torch.reshape, (at(0), at(1)), {}
    if _in(t, (a.permute.default,)):
        return torch.permute, (at(0), at(1)), {}
    if _in(t, (a.transpose.int,)):
        return torch.transpose, (at(0), int(at(1)), int(at(2))), {}
    if _in(t, (a.unsqueeze.default,)):
        return torch.unsqueeze, (at(0), int(at(1))), {}
    if _in(t, (a.squeeze.dim,)):
        return torch.squeeze, (at(0), int(at(1))), {}
    if _in(t, (a.cat.default, a.concat.default)):
        return torch.cat, (list(at(0)), int(at(1, "dim", 0))), {}
    if _in(t, (a.dropout.default, a.dropout_.default)) and at(2, "train"):
        return None, None, None   # a program in train mode: random, nothing to export
    if _in(t, (a.dropout.default, a.dropout_.default, a.clone.default, a.contiguous.default,
               a.alias.default, a.detach.default)):
        return "contiguous", (at(0),), {}
    if _in(t, (a.sym_size.int,)):
        return "size", (at(0), int(at(1))), {}
    if t in (operator.mul, operator.floordiv, operator.add, operator.sub) and \
            not isinstance(n.meta.get("val"), torch.Tensor):
        return t, tuple(args), {}
    if _in(t, (a.slice.Tensor,)):
        dim, start, end, step = int(at(1, "dim", 0)), at(2, "start"), at(3, "end"), \
            at(4, "step", 1)
        idx = tuple([slice(None)] * (dim % max(len(n.meta["val"].shape), 1)) +
                    [slice(start, end if end is None or end < 2 ** 62 else None, step)]) \
            if "val" in n.meta else None
        if idx is None:
            return None, None, None
        return operator.getitem, (at(0), idx), {}
    if _in(t, (a.batch_norm.default,)):
        return F.batch_norm, (at(0), at(3, "running_mean"), at(4, "running_var"),
                              at(1, "weight"), at(2, "bias"), False, 0.0,
                              float(at(7, "eps", 1e-5))), {}
    if _in(t, (a.pad.default, a.constant_pad_nd.default)):
        if t == a.constant_pad_nd.default:
            return F.pad, (at(0), list(at(1)), "constant", float(at(2, "value", 0.0))), {}
        return F.pad, (at(0), list(at(1)), at(2, "mode", "constant"), at(3, "value")), {}
    return None, None, None


def _upsample_ops(shared_only=False):
    """aten's 2-d upsampling ops: (nearest, nearest-exact: a copy of input codes, run on the
    quantized tensor), (bilinear: float between dequantize and quantize, as the program)."""
    a = _torch().ops.aten
    near = tuple(getattr(a, n).default for n in ("upsample_nearest2d",
                                                 "_upsample_nearest_exact2d")) + \
        tuple(getattr(a, n).vec for n in ("upsample_nearest2d", "_upsample_nearest_exact2d"))
    return near if shared_only else near + (a.upsample_bilinear2d.default,
                                            a.upsample_bilinear2d.vec)


def _upsample_call(n, at):
    """F.interpolate for aten's upsample_{nearest,_nearest_exact,bilinear}2d (.vec: output
    size or scale factors, as F.interpolate passed them; .default: output size and optional
    scales, core aten), or None for another op."""
    import torch
    F = torch.nn.functional
    a = torch.ops.aten
    t = n.target
    if not _in(t, _upsample_ops()):
        return None
    name = str(t)
    mode = "bilinear" if "bilinear" in name else \
        "nearest-exact" if "nearest_exact" in name else "nearest"
    bil = mode == "bilinear"
    size = at(1, "output_size")
    kw = {"mode": mode}
    if bil:
        kw["align_corners"] = bool(at(2, "align_corners"))
    if _in(t, (a.upsample_nearest2d.vec, a._upsample_nearest_exact2d.vec,
               a.upsample_bilinear2d.vec)):
        sf = at(3 if bil else 2, "scale_factors")
    else:   # .default: (output_size, [align_corners,] scales_h, scales_w)
        sh, sw = at(3 if bil else 2, "scales_h"), at(4 if bil else 3, "scales_w")
        sf = None if sh is None or sw is None else [float(sh), float(sw)]
        if sf is not None:   # scales given: the kernel uses them, not in / out
            size, kw["recompute_scale_factor"] = None, False
    if size is not None:
        kw["size"] = [s if _is_node(s) else int(s) for s in size]
    else:
        kw["scale_factor"] = [float(f) for f in sf]
    return F.interpolate, (at(0),), kw


# ---- the public steps ------------------------------------------------------------------------
def run_values(gm, inputs) -> Dict[str, Any]:
    """Every node's value in the pt2e program on ``inputs``."""
    import torch
    import torch.fx as fx
    values: Dict[str, Any] = {}

    class _Rec(fx.Interpreter):
        def run_node(self, n):
            v = super().run_node(n)
            values[n.name] = v
            return v
    with torch.no_grad():
        _Rec(gm).run(*inputs)
    return values


def _tuple_ops():
    """Core aten ops (``run_decompositions``) returning a tuple of which programs use only the
    first element: target -> (aten op computing that element, its arguments from the tuple
    op's)."""
    a = _torch().ops.aten

    def pool(op):
        return op, lambda g, k: (g[0], g[1]) + tuple(g[2:6])
    return {
        a.max_pool2d_with_indices.default: pool(a.max_pool2d.default),
        a.max_pool1d_with_indices.default: pool(a.max_pool1d.default),
        # (input, normalized_shape, weight, bias, eps)
        a.native_layer_norm.default: (a.layer_norm.default, lambda g, k: tuple(g[:5])),
        # (input, weight, bias, N, C, HxW, group, eps) -> (input, group, weight, bias, eps)
        a.native_group_norm.default: (a.group_norm.default,
                                      lambda g, k: (g[0], g[6], g[1], g[2], g[7])),
        # (input, weight, bias, running_mean, running_var, momentum, eps): eval batch norm
        a._native_batch_norm_legit_no_training.default: (
            a.batch_norm.default,
            lambda g, k: (g[0], g[1], g[2], g[3], g[4], False, g[5], g[6], False)),
    }


def _first_of_tuples(gm):
    """``gm``, or a copy where each core-aten tuple op whose other results are unused (the
    indices of max_pool2d_with_indices, the mean / rstd of native_layer_norm /
    native_group_norm / _native_batch_norm_legit_no_training) is replaced by the aten op
    computing its first result, so one lowering serves both forms (source lines kept)."""
    import copy
    import torch.fx as fx
    ops = _tuple_ops()

    def only_first(n):   # positional arguments only (as run_decompositions writes them)
        return not n.kwargs and all(u.op == "call_function" and u.target is operator.getitem and
                   (u.args[1] == 0 or not u.users) for u in n.users)
    hits = [n for n in gm.graph.nodes if n.op == "call_function" and _in(n.target, ops) and
            only_first(n)]
    if not hits:
        return gm
    g = copy.deepcopy(gm.graph)
    for n in list(g.nodes):
        if not (n.op == "call_function" and _in(n.target, ops) and only_first(n)):
            continue
        op, args_of = ops[n.target]
        with g.inserting_before(n):
            new = g.call_function(op, args_of(list(n.args), dict(n.kwargs)))
        new.meta = dict(n.meta)
        if isinstance(n.meta.get("val"), (tuple, list)):
            new.meta["val"] = n.meta["val"][0]
        for u in list(n.users):
            if u.args[1] == 0:
                u.replace_all_uses_with(new)
            g.erase_node(u)
        g.erase_node(n)
    out = fx.GraphModule(gm, g)
    out.meta = dict(getattr(gm, "meta", {}))
    return out


def to_ao_graph(model, inputs):
    """(rewritten fx.GraphModule, pt2e GraphModule, map new node -> pt2e q node)."""
    gm = _first_of_tuples(as_graph_module(model))
    values = run_values(gm, inputs)
    rw = _Rewriter(gm, values)
    new = rw.run()
    return new, gm, rw.ref_of


def _codes(v, qp_dtype=None):
    """pt2e int codes (int8 or uint8) as int64 on qrt's quint8 scale (int8 + 128)."""
    import torch
    a = v.detach().cpu().numpy().astype(np.int64)
    return a + 128 if v.dtype == torch.int8 else a


def agreement(pt2e_gm, ref_of, qvalues, qmodel, inputs) -> Dict[str, Any]:
    """qrt (= torch qnnpack on the rewritten graph, ``qvalues``) against torch's converted
    pt2e program (float between dequantize and quantize).

    ``ops``: every quantize of the program recomputed from qrt's own inputs (the program is
    run with each quantize output replaced by qrt's codes), so each op is judged alone.
    ``outputs``: the program and qrt run end to end on the example, outputs compared in LSB
    of the scale they were dequantized from (float outputs: max |difference|)."""
    import torch
    import torch.fx as fx
    qrt_codes = {}
    for new_name, q_name in ref_of.items():
        v = qvalues.get(new_name)
        if isinstance(v, torch.Tensor) and v.is_quantized:
            qrt_codes[q_name] = v.int_repr().numpy().astype(np.int64)
    rows = []
    q_ops = _qd_ops()[0]

    class _Local(fx.Interpreter):
        def run_node(self, n):
            v = super().run_node(n)
            if n.name in qrt_codes and n.op == "call_function" and _in(n.target, q_ops):
                own = _codes(v)
                mine = qrt_codes[n.name]
                if own.shape == mine.shape:
                    d = np.abs(own - mine)
                    src = n.args[0]
                    prod = src.args[0] if _is_node(src) and src.args and _is_node(
                        src.args[0]) and _in(src.target, _relu_ops() + _clamp_ops()) and \
                        str(src.args[0].target).startswith(("aten.conv", "aten.linear",
                                                           "aten.add", "aten.mul")) else src
                    from qrt_export._export import _source
                    rows.append({"name": n.name, "op": _opname(getattr(prod, "target", "")),
                                 "node": getattr(prod, "name", ""),
                                 "source": _source(prod, pt2e_gm) if _is_node(prod) else "",
                                 "exact": int((d == 0).sum()), "total": int(d.size),
                                 "max_lsb": int(d.max(initial=0))})
                    rep = mine - 128 if v.dtype == torch.int8 else mine
                    v = torch.from_numpy(rep).to(v.dtype)
            return v
    with torch.no_grad():
        _Local(pt2e_gm).run(*inputs)
        t_out = pt2e_gm(*inputs)
    t_outs = [t for t in torch.utils._pytree.tree_leaves(t_out)   # tuples, dicts ({"out"})
              if isinstance(t, torch.Tensor)]
    q_in = [x.numpy() if x.dtype == torch.float32 else x for x in inputs]
    from qrt_export._export import flat_outputs
    q_outs = flat_outputs(qmodel(*q_in))
    from qrt_export._export import _output_lsb
    out = {"exact": 0, "total": 0, "max_lsb": 0.0, "max_abs": 0.0}
    flt = {"total": 0, "max_abs": 0.0, "max_ref": 0.0}
    for k, (q, t) in enumerate(zip(q_outs, t_outs)):
        a = np.asarray(q if not hasattr(q, "dequantize") else q.dequantize(), np.float64)
        tt = t.detach().float().numpy().astype(np.float64)
        d = np.abs(a - tt)
        lsb = _output_lsb(qmodel, k)
        if not lsb and not hasattr(q, "dequantize"):   # a float op's output: values
            flt["total"] += int(d.size)
            flt["max_abs"] = max(flt["max_abs"], float(d.max(initial=0.0)))
            flt["max_ref"] = max(flt["max_ref"], float(np.abs(tt).max(initial=0.0)))
            continue
        out["exact"] += int((d <= (lsb or 0) * 1e-3).sum()) if lsb else int((d == 0).sum())
        out["total"] += int(d.size)
        out["max_abs"] = max(out["max_abs"], float(d.max(initial=0.0)))
        if lsb:
            out["max_lsb"] = max(out["max_lsb"], round(float(d.max(initial=0.0)) / lsb, 3))
    if flt["total"]:
        out["float"] = flt
    ex = sum(r["exact"] for r in rows)
    tot = sum(r["total"] for r in rows)
    first = next((r for r in rows if r["exact"] != r["total"]), None)
    return {"ops": rows, "exact": ex, "total": tot,
            "max_lsb": max((r["max_lsb"] for r in rows), default=0),
            "first_diff": first, "outputs": out}


def format_agreement(a) -> List[str]:
    lines = [f"  vs torch's converted pt2e program (float between dequantize and quantize), "
             f"op by op from the same inputs: {a['exact']}/{a['total']} codes exact "
             f"({100.0 * a['exact'] / max(a['total'], 1):.4f} %), max {a['max_lsb']} LSB "
             f"over {len(a['ops'])} quantized ops"]
    f = a.get("first_diff")
    if f:
        lines.append(f"    first op that differs: {f['op']} '{f['node']}' ({f['source']}; "
                     f"quantized by {f['name']}): {f['total'] - f['exact']}/{f['total']} "
                     f"codes, max {f['max_lsb']} LSB")
    o = a["outputs"]
    parts = []
    if o["total"]:
        parts.append(f"quantized outputs {o['exact']}/{o['total']} codes exact "
                     f"({100.0 * o['exact'] / o['total']:.4f} %), max {o['max_lsb']} LSB")
    if o.get("float"):
        from qrt_export._export import format_float
        parts.append("float outputs " + format_float(o["float"]).replace("torch", "program"))
    lines.append("    end to end: " + "; ".join(parts))
    return lines

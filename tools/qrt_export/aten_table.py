# SPDX-License-Identifier: Apache-2.0
"""One lowering table keyed by ATen overload (issue #45, goal 2): for each overload, whether
qrt lowers it in float and quantized, computed from the lowering code itself, so the table
cannot drift from it.

- float: the overload is mapped by :func:`qrt_export.pt2e._float_call` (the ATen table that
  both the pt2e front end and torch.export captures use) to a torch callable or a Tensor
  method that a rule of ``qrt_export.rules`` takes; or ``capture._Rewrite.node`` handles it
  itself (``select.int``, ``dequantize``, ``scaled_dot_product_attention``, the tensor
  factories of ``capture._factories()``, ops with no tensor input, which are constants of the
  captured graph, and ops returning a shape value, fixed at the exported shapes).
- quantized: a ``dequantize -> op -> quantize`` group that ``pt2e._Rewriter.fused`` turns
  into an integer op (conv / linear / add / mul / cat / the ops run on codes,
  ``pt2e._shared_ops()``), or an element-wise op whose ``dequantize -> op -> quantize`` chain
  the lut rule makes one 256-entry table of (``rules.lut._float_unary()``). torch.ao's
  quantized modules are not ATen ops (a capture keeps them whole), so they have no row here.

No torch import at module import time: torch is imported by the functions.
"""

from __future__ import annotations

from typing import Any, Dict, List

_SHAPE = (1, 2, 4, 4)


def _torch():
    import torch
    return torch


def core_overloads() -> List[Any]:
    """torch's core ATen opset: every ``aten`` overload tagged ``torch.Tag.core``, sorted by
    name: 193 under torch 2.13. Every ``aten::`` op the dispatcher has registered is looked
    at: ``dir(torch.ops.aten)`` lists only the packets loaded so far, and in a fresh process
    misses four core overloads (``adaptive_avg_pool1d``, ``avg_pool1d``, ``resize_``,
    ``sym_is_contiguous``: the 189 of issue #45), more or fewer as other code touches ops."""
    torch = _torch()
    a = torch.ops.aten
    out = {}
    for full in torch._C._dispatch_get_all_op_names():
        if not full.startswith("aten::"):
            continue
        base, _, overload = full[len("aten::"):].partition(".")
        try:
            op = getattr(getattr(a, base), overload or "default")
        except (AttributeError, RuntimeError):
            continue
        if torch.Tag.core in op.tags:
            out[str(op)] = op
    return [out[k] for k in sorted(out)]


def name(op) -> str:
    """``add.Tensor`` for ``aten.add.Tensor``."""
    s = str(op)
    return s[len("aten."):] if s.startswith("aten.") else s


# ---- a minimal fx node for an overload ----------------------------------------------------
def _value(g, arg, counter):
    """A value for schema argument ``arg``: a placeholder for a tensor, 1 / [1] / 1.0 /
    False for numbers, None for an optional one."""
    torch = _torch()
    ty = arg.type
    kind = ty.kind()
    if kind == "OptionalType":
        return None
    if kind == "TensorType":
        return _placeholder(g, counter)
    if kind == "ListType":
        el = ty.getElementType().kind()
        if el in ("TensorType", "OptionalType"):
            return [_placeholder(g, counter), _placeholder(g, counter)]
        return [{"IntType": 1, "FloatType": 1.0, "BoolType": False}.get(el)]
    return {"IntType": 1, "FloatType": 1.0, "NumberType": 1.0, "BoolType": False,
            "StringType": "none", "ScalarTypeType": torch.float32}.get(kind)


def _placeholder(g, counter):
    torch = _torch()
    counter[0] += 1
    p = g.placeholder(f"x{counter[0]}")
    p.meta["val"] = torch.empty(_SHAPE)
    return p


def probe_node(op, linear_weight=False):
    """A call of ``op`` in a tiny ``torch.fx.Graph``: its required arguments filled per the
    schema (tensors are placeholders with ``meta["val"]``), defaulted ones left out. With
    ``linear_weight`` the second matrix of ``mm`` / ``addmm`` is ``aten.t`` of a placeholder
    (the form ``run_decompositions`` gives ``nn.Linear``)."""
    import torch.fx as fx
    torch = _torch()
    g = fx.Graph()
    counter = [0]
    args, kwargs = [], {}
    for arg in op._schema.arguments:
        if arg.has_default_value():
            continue
        v = _value(g, arg, counter)
        if arg.kwarg_only:
            kwargs[arg.name] = v
        else:
            args.append(v)
    if linear_weight:
        w = _placeholder(g, counter)
        args[-1] = g.call_function(torch.ops.aten.t.default, (w,))
    n = g.call_function(op, tuple(args), kwargs)
    n.meta["val"] = torch.empty(_SHAPE)
    return n


# ---- the columns ----------------------------------------------------------------------------
def _rule_for(fn) -> bool:
    from qrt_export import rules
    if isinstance(fn, str):
        return rules.find_method_rule(fn) is not None
    return rules.find_function_rule(fn) is not None


def _fn_name(fn) -> str:
    if isinstance(fn, str):
        return f"Tensor.{fn}"
    torch = _torch()
    mod = getattr(fn, "__module__", "") or ""
    base = getattr(fn, "__name__", str(fn))
    if getattr(torch.nn.functional, base, None) is fn:
        return f"F.{base}"
    if mod in ("_operator", "operator"):
        return f"operator.{base}"
    return f"torch.{base}"


def float_call(op):
    """(callable or method name, how) that pt2e's ATen table gives ``op``, else (None, "")."""
    from qrt_export import pt2e
    try:
        fn, _, _ = pt2e._float_call(probe_node(op), lambda a: a)
    except Exception as e:  # noqa: BLE001 - the table refused the probe's arguments
        return None, f"pt2e._float_call raised {type(e).__name__} on the probe"
    if fn is None and op in (_torch().ops.aten.mm.default, _torch().ops.aten.addmm.default):
        fn, _, _ = pt2e._float_call(probe_node(op, linear_weight=True), lambda a: a)
        if fn is not None:
            return fn, "when the second matrix is t(weight) (a decomposed nn.Linear); " \
                "a general matrix product is not lowered"
    return fn, ""


def _capture_own(op):
    """How ``capture._Rewrite.node`` handles ``op`` itself, or None."""
    from qrt_export import capture
    torch = _torch()
    a = torch.ops.aten
    if op == a.select.int:
        return "capture: x[..., i] as a getitem"
    if op in (a.dequantize.self, a.dequantize.tensor):
        return "capture: Tensor.dequantize"
    if op == a.scaled_dot_product_attention.default:
        return "capture: softmax(q k^T * scale + mask) v as float ops (no dropout / causal)"
    if capture._in(op, capture._factories()):
        return "capture: a tensor factory, folded to a constant at the exported shapes"
    return None


def _no_tensor_input(op) -> bool:
    return "Tensor" not in "".join(str(arg.type) for arg in op._schema.arguments)


def _returns(op) -> List[str]:
    return [str(r.type) for r in op._schema.returns]


def _convolution():
    """aten.convolution maps to four torch functions (1-d / 2-d, transposed or not): it is
    float-lowered when a rule takes one of them; ``how`` names the ones taken and not."""
    from qrt_export import pt2e
    torch = _torch()
    taken, not_taken = [], []
    for dims in (1, 2):
        for transposed in (False, True):
            n = probe_node(torch.ops.aten.convolution.default)
            args = list(n.args)
            args[3:6] = [[1] * dims, [0] * dims, [1] * dims]
            args[6], args[7] = transposed, [0] * dims
            n.args = tuple(args)
            fn, _, _ = pt2e._float_call(n, lambda a: a)
            (taken if fn is not None and _rule_for(fn) else not_taken).append(_fn_name(fn))
    how = " / ".join(taken) + (f" ({' / '.join(not_taken)}: no rule)" if not_taken else "")
    return bool(taken), how


def float_lowering(op):
    """(lowered, how) of ``op`` in float."""
    torch = _torch()
    own = _capture_own(op)
    if own is not None:
        return True, own
    if "backward" in name(op):
        return False, "backward op (training graphs only)"
    rets = _returns(op)
    if rets in (["int"], ["bool"]):
        return True, ("capture: a shape value (SymInt / SymBool), a constant at the exported "
                      "shapes")
    if rets == ["number"]:
        return False, ("a tensor's value as a Python number: data-dependent (folded only when "
                       "the tensor is a constant)")
    if op == torch.ops.aten.convolution.default:
        return _convolution()
    from qrt_export import pt2e
    tup = pt2e._tuple_ops().get(op)
    if tup is not None:   # (value, statistics / indices) with only the value read
        f, how = float_lowering(tup[0])
        return f, (f"as {name(tup[0])} when only its first result is read: {how}" if f else
                   how)
    fn, note = float_call(op)
    if fn is not None:
        if _rule_for(fn):
            return True, f"{_fn_name(fn)}" + (f" {note}" if note else "")
        return False, f"{_fn_name(fn)}, which no rule takes"
    if note:
        return False, note
    if _no_tensor_input(op):
        if torch.Tag.nondeterministic_seeded in op.tags:
            return False, "random: would be folded to one sample (refused as a lowering)"
        return True, "no tensor input: folded to a constant at the exported shapes"
    return False, "no mapping in pt2e._float_call"


class _FusedProbe:
    """Stands in for ``pt2e._Rewriter`` in ``_Rewriter.fused``: records which integer
    lowering the group would take."""

    def __init__(self):
        self.took = None

    def _take(self, what):
        def f(n, *a, **k):
            self.took = what
            return True
        return f

    def __getattr__(self, attr):
        if attr in ("conv", "linear", "binary", "cat", "shared"):
            return self._take(attr)
        raise AttributeError(attr)


_FUSED_HOW = {"conv": "q/dq: quantized conv (torch.ao Conv / ConvReLU)",
              "linear": "q/dq: quantized linear (torch.ao Linear / LinearReLU)",
              "binary": "q/dq: quantized::add / add_relu / mul",
              "cat": "q/dq: quantized::cat",
              "shared": "q/dq: run on the codes (a requantize if the qparams change)"}


def quantized_lowering(op, float_fn=None):
    """(lowered, how) of ``dequantize -> op -> quantize`` (pt2e's integer lowering)."""
    from qrt_export import pt2e
    from qrt_export.rules import lut
    probe = _FusedProbe()
    if pt2e._Rewriter.fused(probe, probe_node(op)):
        if probe.took == "linear" and op != _torch().ops.aten.linear.default:
            return True, _FUSED_HOW["linear"] + " when the second matrix is t(weight)"
        if probe.took == "shared" and float_fn is None:
            return False, "in pt2e._shared_ops() but pt2e._float_call has no mapping"
        return True, _FUSED_HOW[probe.took]
    if float_fn is None:
        return False, ""
    fns, methods, _ = lut._float_unary()
    if isinstance(float_fn, str):
        hit = float_fn in methods
    else:
        try:
            hit = float_fn in fns
        except TypeError:
            hit = False
    if hit:
        return True, ("q/dq: one 256-entry table (lut; rules/lut.py _float_unary) when its "
                      "other arguments are numbers, not tensors")
    return False, ""


# core overloads whose quantized form torch.ao runs as a module / quantized op of its own (FX,
# eager), which qrt lowers (rules/qarith.py); pt2e's quantizers leave them in float
_AO_QUANTIZED = {
    "native_layer_norm.default": "torch.ao: nnq.LayerNorm / quantized::layer_norm "
                                      "(op layer_norm)",
}


def lowering(op) -> Dict[str, Any]:
    """``dict(float=bool, quantized=bool, how=str)`` for ATen overload ``op``."""
    f, fhow = float_lowering(op)
    fn, _ = float_call(op)
    q, qhow = quantized_lowering(op, fn)
    if not q and name(op) in _AO_QUANTIZED:
        q, qhow = True, _AO_QUANTIZED[name(op)]
    how = "; ".join(h for h in (fhow, qhow) if h)
    return {"float": f, "quantized": q, "how": how}


def table() -> List[Dict[str, Any]]:
    """One row per core overload: ``dict(overload=name, float, quantized, how)``."""
    return [dict(overload=name(op), **lowering(op)) for op in core_overloads()]


def counts(rows) -> Dict[str, int]:
    return {"total": len(rows),
            "float": sum(r["float"] for r in rows),
            "quantized": sum(r["quantized"] for r in rows),
            "neither": sum(not r["float"] and not r["quantized"] for r in rows)}


def counts_line(rows) -> str:
    c = counts(rows)
    return (f"{c['total']} core overloads: {c['float']} lowered in float, {c['quantized']} "
            f"quantized, {c['neither']} neither.")

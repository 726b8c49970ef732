# SPDX-License-Identifier: Apache-2.0
"""Rules lowering element-wise functions of a quantized code to ``lut`` (qrt/ops/lut.py).

The table is computed by torch itself: the node's own op is run on a tensor holding all 256
codes of the input's qparams (its vector loop), and on each code alone (its scalar loop). When
the two differ, both tables are stored with torch's vector chunk, found by probing.

Lowered: torch's quantized tanh, elu, leaky_relu, relu6, hardtanh, clamp, hardsigmoid modules
and functions; quantized add_scalar / mul_scalar (qarith rules); and the pattern
``dequantize -> unary float ops -> quantize_per_tensor`` (FX graphs have it) when the
intermediate values have no other users.
"""

from __future__ import annotations

import operator

import numpy as np

from qrt_export.rules import Decline, function, method, module

_CHUNKS = (8, 16, 32, 64, 128, 256)


def _torch():
    import torch
    return torch


def _is_node(v):
    return hasattr(v, "op") and hasattr(v, "users")


def _codes_tensor(qv, codes):
    torch = _torch()
    store = {torch.quint8: torch.uint8, torch.qint8: torch.int8}[qv.dtype]
    return torch._make_per_tensor_quantized_tensor(torch.tensor(codes, dtype=store),
                                                   qv.q_scale(), qv.q_zero_point())


def _all_codes(qv):
    torch = _torch()
    return list(range(256)) if qv.dtype == torch.quint8 else list(range(-128, 128))


def _out_bytes(y):
    return y.int_repr().numpy().astype(np.int64).reshape(-1) & 0xFF


def build_tables(cx, node, xv, fn, yv):
    """(table, tail or None, vec_codes): fn (quantized tensor -> quantized tensor) on all
    codes; its output qparams must be yv's.  The table build makes hundreds of one-element
    torch calls: they run on one torch thread (with more on a loaded host each call waited
    ~40 ms for the pool instead of ~3 us; element-wise results do not depend on threads)."""
    torch = _torch()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _build_tables(torch, xv, fn, yv)
    finally:
        torch.set_num_threads(threads)


def _build_tables(torch, xv, fn, yv):
    if not xv.is_quantized or xv.dtype not in (torch.quint8, torch.qint8) or \
            xv.qscheme() not in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        raise Decline("its input is not a per-tensor quint8/qint8 tensor")
    if not (yv.is_quantized and yv.dtype in (torch.quint8, torch.qint8)):
        raise Decline("its output is not a quint8/qint8 tensor")
    codes = _all_codes(xv)
    idx = np.asarray(codes, np.int64) & 0xFF
    with torch.no_grad():
        y = fn(_codes_tensor(xv, codes))
        if not (isinstance(y, torch.Tensor) and y.is_quantized and tuple(y.shape) == (256,)):
            raise Decline("it is not element-wise")
        if (y.dtype, float(y.q_scale()), int(y.q_zero_point())) != \
                (yv.dtype, float(yv.q_scale()), int(yv.q_zero_point())):
            raise Decline("its output qparams depend on the input values")
        table = np.zeros(256, np.uint8)
        table[idx] = _out_bytes(y)
        tail = np.zeros(256, np.uint8)
        for c, i in zip(codes, idx):
            tail[i] = _out_bytes(fn(_codes_tensor(xv, [c])))[0]
        if np.array_equal(table, tail):
            return table, None, None
        diff = [c for c, i in zip(codes, idx) if table[i] != tail[i]]
        for chunk in _CHUNKS:
            ok = True
            for c in diff[:4]:
                i = c & 0xFF
                for n in (chunk - 1, chunk, chunk + 1, 2 * chunk - 1, 2 * chunk + 3):
                    got = _out_bytes(fn(_codes_tensor(xv, [c] * n)))
                    nvec = n - n % chunk
                    want = np.where(np.arange(n) < nvec, table[i], tail[i])
                    if not np.array_equal(got, want):
                        ok = False
                        break
                if not ok:
                    break
            if ok:
                return table, tail, chunk
    raise Decline("its vector and scalar loops differ in a way qrt cannot reproduce")


def emit_lut(cx, node, x, fn, label, out=None):
    """A lut op from input node x to node (or ``out``) computing ``fn`` on x's codes."""
    xv = cx.value(x)
    yv = cx.value(node if out is None else out)
    table, tail, vec = build_tables(cx, node, xv, fn, yv)
    params = [cx.b.constant(f"{node.name}.table", table)]
    attrs = {"fn": label[:128]}
    if tail is not None:
        params.append(cx.b.constant(f"{node.name}.tail", tail))
        attrs["vec_codes"] = int(vec)
    if out is None and tail is None and _nhwc_scrambled(xv, yv, table):
        _emit_nhwc_lut(cx, node, x, fn, params, attrs)
        return
    cx.emit("lut", node, [x], params=params, attrs=attrs,
            outputs=None if out is None else [out])


def _nhwc_scrambled(xv, yv, table):
    """torch 2.13's quantized clamp / hardtanh / relu6 on a channels-last [N, C, H, W] tensor
    (every qnnpack conv output is one) writes its results in memory (NHWC) order but returns
    them as a contiguous NCHW tensor: element i of the output (logical order) is the result
    for the i-th element in NHWC order. True when torch's recorded output is that."""
    torch = _torch()
    if not (isinstance(yv, torch.Tensor) and yv.is_quantized and xv.dim() == 4) or \
            xv.is_contiguous() or not xv.is_contiguous(memory_format=torch.channels_last):
        return False
    right = table[xv.int_repr().numpy().astype(np.int64) & 0xFF]
    got = _out_bytes(yv).reshape(right.shape)
    if np.array_equal(got, right):
        return False
    return np.array_equal(got, right.transpose(0, 2, 3, 1).reshape(right.shape))


def _emit_nhwc_lut(cx, node, x, fn, params, attrs):
    """lut (the right values) -> permute to NHWC -> view as [N, C, H, W]: torch's layout."""
    from qrt_export.rules.layout import _mid
    torch = _torch()

    def right(v):
        return fn(v.clone(memory_format=torch.contiguous_format))
    t_lut, _ = _mid(cx, f"{node.name}.table_out", right, x)
    t_nhwc, _ = _mid(cx, f"{node.name}.nhwc", lambda v: right(v).permute(0, 2, 3, 1), x)
    from qrt_export._export import _source
    src = _source(node, cx.gm)
    # the first two ops get names of their own: the export check compares an op with the
    # torch value of the node of its name (the scrambled one is the view's)
    cx.b.op("lut", f"{node.name}.table_out", [cx.tensor(x)], [t_lut], params, attrs, src)
    cx.b.op("permute", f"{node.name}.nhwc", [t_lut], [t_nhwc], [], {"dims": [0, 2, 3, 1]}, src)
    cx.emit("view", node, [t_nhwc], attrs={"shape": [-1, -1, -1, -1],
                                           "copy_dims": [0, 3, 1, 2]})


def _node_fn(node, x, gm):
    """A callable redoing ``node`` with its tensor input ``x`` replaced (None when node has
    another tensor input)."""
    def sub(v, t):
        if v is x:
            return t
        if _is_node(v):
            raise ValueError
        if isinstance(v, (tuple, list)):
            return type(v)(sub(a, t) for a in v)
        return v
    try:
        for a in list(node.args) + list(node.kwargs.values()):
            sub(a, None)
    except ValueError:
        return None
    if sum(a is x for a in node.args) + sum(v is x for v in node.kwargs.values()) != 1:
        return None
    if node.op == "call_module":
        m = gm.get_submodule(node.target)
        return lambda t: m(*[sub(a, t) for a in node.args],
                           **{k: sub(v, t) for k, v in node.kwargs.items()})
    if node.op == "call_function":
        return lambda t: node.target(*[sub(a, t) for a in node.args],
                                     **{k: sub(v, t) for k, v in node.kwargs.items()})
    if node.op == "call_method":
        if node.args[0] is not x:
            return None
        return lambda t: getattr(t, node.target)(*[sub(a, t) for a in node.args[1:]],
                                                 **{k: sub(v, t) for k, v in node.kwargs.items()})
    return None


def _label(node):
    t = node.target
    return t if isinstance(t, str) else getattr(t, "__name__", str(t))


# ---- quantized unary ops -> lut ------------------------------------------------------------
def _quantized_input(cx, node):
    torch = _torch()
    x = node.args[0] if node.args else None
    xv = cx.value(x)
    if not (isinstance(xv, torch.Tensor) and xv.is_quantized):
        raise Decline("float input")
    return x


def _unary_modules():
    import torch.ao.nn.quantized as nnq
    nn = _torch().nn
    return (nnq.ReLU6, nnq.ELU, nnq.LeakyReLU, nn.Tanh, nn.Hardtanh, nn.ReLU6, nn.ELU,
            nn.LeakyReLU, nn.Hardsigmoid, nn.Hardswish, nn.Sigmoid, nn.ReLU)


@module(_unary_modules, "quantized tanh / elu / leaky_relu / relu6 / hardtanh / hardsigmoid "
        "modules (nn.* on a quantized tensor, nnq.ReLU6/ELU/LeakyReLU) as a 256-entry table")
def unary_module(cx, node, m):
    x = _quantized_input(cx, node)
    fn = _node_fn(node, x, cx.gm)
    if fn is None:
        raise Decline("not a unary call")
    emit_lut(cx, node, x, fn, type(m).__name__)


def _prelu_modules():
    import torch.ao.nn.quantized as nnq
    return (nnq.PReLU, _torch().nn.PReLU)


@module(_prelu_modules, "quantized PReLU with one slope (nnq.PReLU, nn.PReLU() on a quantized "
        "tensor; ConvTasNet's) as a 256-entry table")
def prelu_module(cx, node, m):
    x = _quantized_input(cx, node)
    w = m.weight
    if w.numel() != 1:
        cx.unsupported(node, f"quantized PReLU with {w.numel()} slopes (one per channel; qrt "
                       "runs one slope, nn.PReLU())")
    fn = _node_fn(node, x, cx.gm)
    if fn is None:
        raise Decline("not a unary call")
    emit_lut(cx, node, x, fn, type(m).__name__)


def _unary_functions():
    torch = _torch()
    F = torch.nn.functional
    q = torch.ops.quantized
    fns = [torch.tanh, torch.clamp, torch.clip, F.hardtanh, F.relu6, F.elu, F.leaky_relu,
           F.hardsigmoid, F.hardswish, torch.sigmoid, F.sigmoid, torch.relu, F.relu]
    for name in ("elu", "leaky_relu", "relu6", "hardswish", "sigmoid", "hardtanh"):
        op = getattr(q, name, None)
        if op is not None:
            fns.append(op)
    return tuple(fns)


@function(_unary_functions, "quantized torch.tanh / clamp / F.hardtanh / relu6 / elu / "
          "leaky_relu / hardsigmoid (and torch.ops.quantized.*) as a 256-entry table")
def unary_fn(cx, node, target):
    x = _quantized_input(cx, node)
    fn = _node_fn(node, x, cx.gm)
    if fn is None:
        raise Decline("not a unary call")
    emit_lut(cx, node, x, fn, _label(node))


@method(("tanh", "clamp", "clip", "clamp_", "tanh_", "hardtanh", "sigmoid", "relu", "relu_"),
        "quantized Tensor.tanh / clamp / clip as a 256-entry table")
def unary_method(cx, node, name):
    unary_fn(cx, node, name)


# ---- dequantize -> unary float ops -> quantize -------------------------------------------
def _float_unary():
    torch = _torch()
    F = torch.nn.functional
    nn = torch.nn
    fns = {torch.tanh, torch.sigmoid, torch.exp, torch.abs, torch.neg, torch.square, torch.erf,
           torch.relu, torch.clamp, torch.clip, torch.sin, torch.cos, torch.sqrt, torch.rsqrt,
           torch.log, torch.log1p, torch.expm1, torch.reciprocal, F.relu, F.relu6, F.gelu,
           F.silu, F.mish, F.elu, F.selu, F.celu, F.leaky_relu, F.hardtanh, F.hardswish,
           F.hardsigmoid, F.softplus, F.softsign, F.tanhshrink, F.logsigmoid, F.sigmoid,
           F.tanh, F.dropout, torch.mul, torch.add, torch.sub, torch.div, torch.pow,
           operator.mul, operator.add, operator.sub, operator.truediv, operator.neg,
           operator.pow}
    methods = {"tanh", "sigmoid", "exp", "abs", "neg", "square", "erf", "relu", "clamp",
               "clip", "sin", "cos", "sqrt", "rsqrt", "log", "log1p", "expm1", "reciprocal",
               "mul", "add", "sub", "div", "pow", "contiguous", "float"}
    modules = (nn.Tanh, nn.Sigmoid, nn.ReLU, nn.ReLU6, nn.GELU, nn.SiLU, nn.Mish, nn.ELU,
               nn.SELU, nn.CELU, nn.LeakyReLU, nn.Hardtanh, nn.Hardswish, nn.Hardsigmoid,
               nn.Softplus, nn.Softsign, nn.Tanhshrink, nn.LogSigmoid, nn.Identity, nn.Dropout)
    return fns, methods, modules


def _is_float_unary(cx, n, x):
    fns, methods, modules = _float_unary()
    if n.op == "call_function":
        try:
            ok = n.target in fns
        except TypeError:
            ok = False
    elif n.op == "call_method":
        ok = n.target in methods
    elif n.op == "call_module":
        ok = isinstance(cx.gm.get_submodule(n.target), modules)
    else:
        ok = False
    return ok and _node_fn(n, x, cx.gm) is not None


def _is_quantize(cx, n, x):
    torch = _torch()
    import torch.ao.nn.quantized as nnq
    if n.op == "call_function" and n.target is torch.quantize_per_tensor and n.args[0] is x:
        return True
    return n.op == "call_module" and isinstance(cx.gm.get_submodule(n.target), nnq.Quantize) \
        and n.args[0] is x


def fuse_dequantize(cx, node) -> bool:
    """Lower ``dequantize -> unary float ops -> quantize`` starting at dequantize ``node`` to
    one lut op; False (nothing emitted) when the pattern does not match."""
    torch = _torch()
    x = node.args[0] if node.args else None
    xv = cx.value(x)
    if not (isinstance(xv, torch.Tensor) and xv.is_quantized and
            xv.dtype in (torch.quint8, torch.qint8)):
        return False
    chain, cur = [], node
    while True:
        users = list(cur.users)
        if len(users) != 1:
            return False
        u = users[0]
        if _is_quantize(cx, u, cur):
            break
        if not _is_float_unary(cx, u, cur):
            return False
        chain.append(u)
        cur = u
    if not chain:
        return False
    q = u
    yv = cx.value(q)
    if not (isinstance(yv, torch.Tensor) and yv.is_quantized):
        return False
    steps = [_node_fn(n, p, cx.gm) for n, p in zip(chain, [node] + chain[:-1])]
    s, zp, dt = float(yv.q_scale()), int(yv.q_zero_point()), yv.dtype

    def fn(t):
        v = t.dequantize()
        for f in steps:
            v = f(v)
        return torch.quantize_per_tensor(v, s, zp, dt)
    try:
        emit_lut(cx, node, x, fn, "dequantize->" + "->".join(_label(n) for n in chain) +
                 "->quantize", out=q)
    except Decline:
        return False
    cx.done.update(n.name for n in chain + [q])
    return True

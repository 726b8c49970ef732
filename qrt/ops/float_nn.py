# SPDX-License-Identifier: Apache-2.0
"""Float32 layers of float sections (codes 80..85, docs/float-ops.md): LayerNorm, GroupNorm,
InstanceNorm, BatchNorm (eval: running statistics), Linear and Conv1d left in float (e.g. by
``quantize_dynamic``, which only swaps Linear).

LayerNorm: torch's CPU kernel step for step, bit-exact (include/qrt/float_norm.h: torch's
Welford moments, y = fma((x - mean) * rstd, weight, bias)); GroupNorm likewise (its scale and
bias per channel). InstanceNorm: two-pass
mean and biased variance in float32 (numpy pairwise sums), rstd = 1 / sqrt(var + eps),
y = (x - mean) * rstd * weight + bias. BatchNorm folds its running
statistics once at load, as torch's CPU kernel does: alpha = weight / sqrt(var + eps),
beta = bias - mean * alpha, y = x * alpha + beta. Linear and Conv1d are float32 GEMMs (numpy's
BLAS), Conv1d on an im2col buffer made once per plan.
"""

from __future__ import annotations

import numpy as np

from qrt.ops._core import Choice, Float, Int, Ints, Param, ShapeError, define, numel
from qrt.ops._float import F32, FloatOp, channel_shape, quiet

_ONE, _ZERO = F32(1.0), F32(0.0)


def _rownorm(x2, y2, eps):
    """Per-row normalisation of the 2-d views x2 -> y2: (x - mean) * rstd."""
    m = np.empty((x2.shape[0], 1), np.float32)
    v = np.empty((x2.shape[0], 1), np.float32)
    z = np.empty((x2.shape[0], 1), np.float32)
    sq = np.empty(x2.shape, np.float32)
    e = F32(eps)
    inv = F32(1.0 / x2.shape[1]) if x2.shape[1] else F32(np.nan)
    add = np.add.reduce

    def run():
        add(x2, axis=1, keepdims=True, out=m)
        np.multiply(m, inv, out=m)
        np.subtract(x2, m, out=y2)
        np.multiply(y2, y2, out=sq)
        add(sq, axis=1, keepdims=True, out=v)
        np.multiply(v, inv, out=v)
        np.multiply(v, _ZERO, out=z)         # NaN where the variance overflowed (torch: NaN)
        np.add(v, e, out=v)
        np.sqrt(v, out=v)
        np.divide(_ONE, v, out=v)
        np.add(v, z, out=v)
        np.multiply(y2, v, out=y2)
    return run


def _affine(y, w, b):
    """y *= w; y += b (either may be None)."""
    if w is not None and b is not None:
        def run():
            np.multiply(y, w, out=y)
            np.add(y, b, out=y)
    elif w is not None:
        def run():
            np.multiply(y, w, out=y)
    elif b is not None:
        def run():
            np.add(y, b, out=y)
    else:
        return None
    return run


def _seq(*fns):
    fns = [f for f in fns if f is not None]
    if len(fns) == 1:
        return fns[0]

    def run():
        for f in fns:
            f()
    return run


def _param(node, name, shape=None):
    a = node.array(name)
    if a is None:
        return None
    a = np.asarray(a, F32)
    return a if shape is None else a.reshape(shape)


def ends_with(shape, normalized_shape) -> tuple:
    """``shape`` when it ends with ``normalized_shape`` (LayerNorm's input), else ShapeError."""
    s, ns = tuple(shape), tuple(normalized_shape)
    if len(s) < len(ns) or s[len(s) - len(ns):] != ns:
        raise ShapeError(f"input shape {s} does not end with normalized_shape {ns}")
    return s


def _check_vec(node, names, n):
    for k in names:
        t = node.params.get(k)
        if t is not None and (numel(t.shape) != n):
            raise node.fail(f"parameter {k!r} must hold {n} values, has shape "
                            f"{tuple(t.shape)}")


@define
class LayerNorm(FloatOp):
    name, code = "float_layer_norm", 80
    doc = "float32 LayerNorm over the last dims (nn.LayerNorm, F.layer_norm)"
    attrs = {"normalized_shape": Ints(lo=1, min_len=1), "eps": Float(lo=0.0, default=1e-5)}
    params = (Param("weight", "float32", optional=True), Param("bias", "float32",
                                                               optional=True))

    def check(self, node):
        _check_vec(node, ("weight", "bias"), numel(node.attrs["normalized_shape"]))

    def infer(self, node, shapes):
        return [ends_with(shapes[0], node.attrs["normalized_shape"])]

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        n = numel(node.attrs["normalized_shape"])
        m = numel(x.shape) // n if n else 0
        x2, y2 = x.reshape(m, n), y.reshape(m, n)
        w, b = _param(node, "weight", (n,)), _param(node, "bias", (n,))
        if not (n and m):
            return (lambda: None), (), {}
        from qrt import _ops
        eps = float(F32(node.attrs["eps"]))
        w = None if w is None else np.ascontiguousarray(w, F32)
        b = None if b is None else np.ascontiguousarray(b, F32)
        if x2.flags.c_contiguous and y2.flags.c_contiguous:
            # torch's CPU kernel step for step (include/qrt/float_norm.h): bit-exact
            return (lambda: _ops.layer_norm_rows_f32(x2, y2, eps, w, b)), (), {}

        def strided():   # views that reshape copies: read and write the views themselves
            t = np.ascontiguousarray(x).reshape(m, n)
            _ops.layer_norm_rows_f32(t, t, eps, w, b)
            np.copyto(y, t.reshape(y.shape))
        return strided, (), {}


class _GroupStats(FloatOp):
    """Statistics over groups of channels (dim 1) and all later dims."""

    def groups(self, node, c):
        raise NotImplementedError

    def infer(self, node, shapes):
        s = tuple(shapes[0])
        if len(s) < 2:
            raise ShapeError(f"takes (N, C, ...) input, got {s}")
        self.groups(node, s[1])
        return [s]

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        n, c = x.shape[0], x.shape[1]
        g = self.groups(node, c)
        rows = n * g
        per = numel(x.shape) // rows if rows else 0
        cs = channel_shape(x.ndim, c)
        fn = _seq(_rownorm(x.reshape(rows, per), y.reshape(rows, per), node.attrs["eps"]),
                  _affine(y, _param(node, "weight", cs), _param(node, "bias", cs)))
        return fn, (), {}


@define
class GroupNorm(_GroupStats):
    name, code = "float_group_norm", 81
    doc = "float32 GroupNorm (nn.GroupNorm, F.group_norm)"
    attrs = {"num_groups": Int(lo=1), "eps": Float(lo=0.0, default=1e-5)}
    params = (Param("weight", "float32", optional=True), Param("bias", "float32",
                                                               optional=True))

    def check(self, node):
        x = node.inputs[0]
        if len(x.shape) >= 2:
            _check_vec(node, ("weight", "bias"), x.shape[1])

    def groups(self, node, c):
        g = node.attrs["num_groups"]
        if c % g:
            raise ShapeError(f"{c} channels do not split into {g} groups")
        return g

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        n, c = x.shape[0], x.shape[1]
        g = self.groups(node, c)
        hw = numel(x.shape[2:])
        if not (n and c and hw):
            return (lambda: None), (), {}
        from qrt import _ops
        eps = float(node.attrs["eps"])      # a double in torch's GroupNorm
        w, b = _param(node, "weight", (c,)), _param(node, "bias", (c,))
        w = None if w is None else np.ascontiguousarray(w, F32)
        b = None if b is None else np.ascontiguousarray(b, F32)
        if x.flags.c_contiguous and y.flags.c_contiguous:
            # torch's CPU kernel step for step (include/qrt/float_norm.h): bit-exact
            x3, y3 = x.reshape(n, c, hw), y.reshape(n, c, hw)
            return (lambda: _ops.group_norm_f32(x3, y3, g, eps, w, b)), (), {}

        def strided():
            t = np.ascontiguousarray(x).reshape(n, c, hw)
            _ops.group_norm_f32(t, t, g, eps, w, b)
            np.copyto(y, t.reshape(y.shape))
        return strided, (), {}


@define
class InstanceNorm(_GroupStats):
    name, code = "float_instance_norm", 82
    doc = "float32 InstanceNorm1d with input statistics (nn.InstanceNorm1d, F.instance_norm)"
    attrs = {"eps": Float(lo=0.0, default=1e-5)}
    params = (Param("weight", "float32", optional=True), Param("bias", "float32",
                                                               optional=True))

    def check(self, node):
        x = node.inputs[0]
        if len(x.shape) >= 2:
            _check_vec(node, ("weight", "bias"), x.shape[1])

    def groups(self, node, c):
        return c


@define
class BatchNorm(FloatOp):
    name, code = "float_batch_norm", 83
    doc = "float32 BatchNorm1d in eval mode (running statistics; nn.BatchNorm1d, " \
          "F.batch_norm), channel dim 1"
    attrs = {"eps": Float(lo=0.0, default=1e-5)}
    params = (Param("running_mean", "float32"), Param("running_var", "float32"),
              Param("weight", "float32", optional=True), Param("bias", "float32",
                                                               optional=True))

    def check(self, node):
        c = numel(node.params["running_mean"].shape)
        _check_vec(node, ("running_var", "weight", "bias"), c)

    def infer(self, node, shapes):
        s = tuple(shapes[0])
        c = numel(node.params["running_mean"].shape)
        if len(s) < 2 or s[1] != c:
            raise ShapeError(f"takes (N, {c}, ...) input, got {s}")
        return [s]

    def prepare(self, node):
        mean = np.asarray(node.array("running_mean"), F32).reshape(-1)
        var = np.asarray(node.array("running_var"), F32).reshape(-1)
        w, b = _param(node, "weight", (-1,)), _param(node, "bias", (-1,))
        with np.errstate(all="ignore"):
            invstd = (_ONE / np.sqrt(var + F32(node.attrs["eps"]))).astype(F32)
            alpha = invstd * w if w is not None else invstd
            beta = (b if b is not None else np.zeros_like(mean)) - mean * alpha
        return alpha.astype(F32), beta.astype(F32)

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        alpha, beta = node.state
        cs = channel_shape(x.ndim, alpha.shape[0])
        a, b = alpha.reshape(cs), beta.reshape(cs)

        def run():
            np.multiply(x, a, out=y)
            np.add(y, b, out=y)
        return run, (), {}


@define
class Linear(FloatOp):
    name, code = "float_linear", 84
    doc = "float32 Linear (nn.Linear / F.linear left in float, e.g. by quantize_dynamic)"
    params = (Param("weight", "float32"), Param("bias", "float32", optional=True))

    def check(self, node):
        w = node.params["weight"]
        if len(w.shape) != 2:
            raise node.fail(f"weight must be 2-d (out, in), has shape {tuple(w.shape)}")
        _check_vec(node, ("bias",), w.shape[0])

    def infer(self, node, shapes):
        s = tuple(shapes[0])
        o, i = node.params["weight"].shape
        if not s or s[-1] != i:
            raise ShapeError(f"input shape {s} must end with in_features={i}")
        return [s[:-1] + (o,)]

    def macs(self, node, shapes):
        o, i = node.params["weight"].shape
        return numel(shapes[0]) * int(o)

    def prepare(self, node):
        return np.ascontiguousarray(np.asarray(node.array("weight"), F32).T)

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        wt, b = node.state, _param(node, "bias")
        if b is None:
            return quiet(np.matmul), (x, wt, y), {}

        def run():
            np.matmul(x, wt, out=y)
            np.add(y, b, out=y)
        return run, (), {}


def _conv_operands(node, ins, outs):
    """(x, y) as batched [N, C, L] views, the float32 weight, (groups, stride, padding,
    dilation) of a float conv op."""
    a = node.attrs
    x, y = ins[0], outs[0]
    if x.ndim == 2:
        x, y = x[None], y[None]
    w = np.asarray(node.array("weight"), F32)
    return x, y, w, (a["groups"], a["stride"], a["padding"], a["dilation"])


def _pad_index(length, lo, hi, mode):
    """Source position of each of the ``lo + length + hi`` padded positions (torch's
    reflect / replicate / circular padding)."""
    i = np.arange(-lo, length + hi)
    if mode == "reflect":
        i = np.abs(i)
        i = np.where(i > length - 1, 2 * (length - 1) - i, i)
    elif mode == "replicate":
        i = np.clip(i, 0, length - 1)
    else:  # circular
        i = np.mod(i, length)
    return i


def check_pad_mode(sizes, pads, mode):
    """ShapeError where torch refuses ``mode`` padding of these sizes."""
    for n, (lo, hi) in zip(sizes, pads):
        if mode == "reflect" and max(lo, hi) >= n:
            raise ShapeError(f"reflect padding ({lo}, {hi}) must be smaller than the input "
                             f"size {n} (as torch)")
        if mode == "circular" and max(lo, hi) > n:
            raise ShapeError(f"circular padding ({lo}, {hi}) must be at most the input size "
                             f"{n} (as torch)")


def _depthwise(xp, y, w, g, k, stride, dilation):
    """Depthwise (in/groups = 1) conv of the padded ``xp`` into ``y`` in numpy: y = w[tap 0] *
    x[tap 0], then y = y + w[tap] * x[tap] in row-major tap order (each tap a strided view of
    the input; a channel multiplier broadcasts). The specification of the C kernel
    (include/qrt/float_conv.h), which computes the same bits."""
    nsp = xp.ndim - 2
    n = xp.shape[0]
    osp = y.shape[2:]
    co = w.shape[0]
    cog, kk = co // g, int(np.prod(k))
    y5 = y.reshape((n, g, cog) + osp)
    wt = np.ascontiguousarray(w.reshape(g, cog, kk).transpose(2, 0, 1)).reshape(
        (kk, g, cog) + (1,) * nsp)
    strides = xp.strides[2:]
    taps = []
    for t in np.ndindex(*k):
        start = xp[(slice(None), slice(None)) +
                   tuple(slice(ti * di, None) for ti, di in zip(t, dilation))]
        taps.append(np.lib.stride_tricks.as_strided(
            start, (n, g, 1) + osp,
            (xp.strides[0], xp.strides[1], 0) +
            tuple(st * s for st, s in zip(strides, stride)), writeable=False))
    tmp = np.empty(y5.shape, F32)

    def run():
        np.multiply(taps[0], wt[0], out=y5)
        for j in range(1, kk):
            np.multiply(taps[j], wt[j], out=tmp)
            np.add(y5, tmp, out=y5)
    return run


# depthwise convs with at least this many output channels per input channel run the C kernel's
# channel-multiplier-innermost form (qrt_dwconv2d_f32_cm: the same bits, vectorised over the
# output channels instead of along one output row)
CM_MIN_MULT = 8


def conv_steps(x, y, w, groups, stride, pads, dilation, bias, mode="zeros", use_kernel=True):
    """Steps of a float32 convolution with any number of spatial dims (Conv1d, Conv2d):
    ``x`` [N, Ci, *S], ``y`` [N, Co, *So], ``w`` [Co, Ci/g, *K], ``pads`` per spatial dim
    (before, after), ``mode`` torch's padding_mode. The input is padded into a buffer made
    once (zeros: an interior copy; the other modes: one gather), then

    * pointwise (K = 1, stride 1, no padding): y = W x, one GEMM per group (numpy's BLAS);
    * depthwise (Ci/g = 1): y = sum over taps, in tap order, of w[:, tap] * the tap's strided
      view of the input, no column buffer (1-d and 2-d: the C kernel of
      include/qrt/float_conv.h; ``use_kernel=False``: its numpy specification,
      :func:`_depthwise`);
    * otherwise: im2col into a column buffer [N, g, Ci/g * prod(K), prod(So)] (one strided
      copy), then one GEMM per group. The bias is added last."""
    nsp = x.ndim - 2
    n, ci = x.shape[:2]
    sp = x.shape[2:]
    co, cig = w.shape[:2]
    k = w.shape[2:]
    osp = y.shape[2:]
    g = groups
    cog = co // g
    kk = int(np.prod(k))
    lo = int(np.prod(osp))
    b = None if bias is None else np.asarray(bias, F32).reshape((co,) + (1,) * nsp)
    steps = []
    padded = any(p0 or p1 for p0, p1 in pads)
    if padded:
        psp = tuple(s + p0 + p1 for s, (p0, p1) in zip(sp, pads))
        xp = np.zeros((n, ci) + psp, F32)
        if mode == "zeros":
            inner = xp[(slice(None), slice(None)) +
                       tuple(slice(p0, p0 + s) for s, (p0, _) in zip(sp, pads))]
            steps.append(lambda: np.copyto(inner, x))
        else:
            idx = np.zeros(1, np.intp)
            for s, (p0, p1) in zip(sp, pads):
                idx = (idx[:, None] * s + _pad_index(s, p0, p1, mode)[None, :]).reshape(-1)
            xf = x.reshape(n, ci, -1)
            xpf = xp.reshape(n, ci, -1)
            steps.append(lambda: np.take(xf, idx, axis=2, out=xpf))
    else:
        xp = x
    strides = xp.strides[2:]
    if all(kd == 1 for kd in k) and all(s == 1 for s in stride) and not padded:
        wg = np.ascontiguousarray(w.reshape(g, cog, cig))
        cols = x.reshape(n, g, cig, lo)
        y4 = y.reshape(n, g, cog, lo)
        steps.append(lambda: np.matmul(wg, cols, out=y4))
    elif cig == 1 and kk > 1 and nsp in (1, 2) and xp.flags.c_contiguous and \
            y.flags.c_contiguous and use_kernel:
        # depthwise 1-d (as height 1) and 2-d: the C kernel (include/qrt/float_conv.h), bias
        # included; with many output channels per input channel (a Conv1d(1, 64, k) front
        # end) its channel-multiplier-innermost form, the same bits
        from qrt import _ops
        if nsp == 1:
            k2, xp4, y4 = (1,) + k, xp.reshape(xp.shape[:2] + (1,) + xp.shape[2:]), \
                y.reshape(y.shape[:2] + (1,) + y.shape[2:])
            geo = (1, stride[0], 1, dilation[0])
        else:
            k2, xp4, y4 = k, xp, y
            geo = (stride[0], stride[1], dilation[0], dilation[1])
        bv = None if b is None else np.ascontiguousarray(b.reshape(co))
        mult = co // ci
        # bound once (_ops.DwConvF32: the arguments checked at bind, the kernel per call)
        if mult >= CM_MIN_MULT:
            wt = np.ascontiguousarray(w.reshape(ci, mult, k2[0], k2[1]).transpose(0, 2, 3, 1))
            steps.append(_ops.DwConvF32(xp4, wt, bv, y4, *geo, True).run)
        else:
            w3 = np.ascontiguousarray(w.reshape(co, k2[0], k2[1]))
            sbuf = np.empty(_ops.dwconv2d_f32_scratch(xp4.shape, w3.shape, y4.shape, *geo), F32)
            steps.append(_ops.DwConvF32(xp4, w3, bv, y4, *geo, False, sbuf).run)
        return _seq(*steps)
    elif cig == 1 and kk > 1:
        steps.append(_depthwise(xp, y, w, g, k, stride, dilation))
    else:
        wg = np.ascontiguousarray(w.reshape(g, cog, cig * kk))
        src = np.lib.stride_tricks.as_strided(
            xp, (n, g, cig) + k + osp,
            (xp.strides[0], cig * xp.strides[1], xp.strides[1]) +
            tuple(d * st for d, st in zip(dilation, strides)) +
            tuple(s * st for s, st in zip(stride, strides)), writeable=False)
        buf = np.empty((n, g, cig) + k + osp, F32)
        cols = buf.reshape(n, g, cig * kk, lo)
        y4 = y.reshape(n, g, cog, lo)
        steps.append(lambda: np.copyto(buf, src))
        steps.append(lambda: np.matmul(wg, cols, out=y4))
    if b is not None:
        steps.append(lambda: np.add(y, b, out=y))
    return _seq(*steps)


@define
class Conv1d(FloatOp):
    name, code = "float_conv1d", 85
    doc = "float32 Conv1d (nn.Conv1d / F.conv1d left in float; zeros padding)"
    attrs = {"stride": Int(lo=1, default=1), "padding": Int(default=0),
             "dilation": Int(lo=1, default=1), "groups": Int(lo=1, default=1)}
    params = (Param("weight", "float32"), Param("bias", "float32", optional=True))

    def check(self, node):
        w = node.params["weight"]
        g = node.attrs["groups"]
        if len(w.shape) != 3 or w.shape[0] % g:
            raise node.fail(f"weight must be (out, in/groups, k) with out divisible by "
                            f"groups={g}, has shape {tuple(w.shape)}")
        _check_vec(node, ("bias",), w.shape[0])

    def _out_len(self, node, length):
        a = node.attrs
        k = node.params["weight"].shape[2]
        span = a["dilation"] * (k - 1) + 1
        if length + 2 * a["padding"] < span:
            raise ShapeError(f"input length {length} (+ 2 x padding {a['padding']}) is "
                             f"shorter than the kernel span {span}")
        return (length + 2 * a["padding"] - span) // a["stride"] + 1

    def infer(self, node, shapes):
        s = tuple(shapes[0])
        co, cig, _ = node.params["weight"].shape
        if len(s) not in (2, 3) or s[-2] != cig * node.attrs["groups"]:
            raise ShapeError(f"takes (N, {cig * node.attrs['groups']}, L) input, got {s}")
        return [s[:-2] + (co, self._out_len(node, s[-1]))]

    def macs(self, node, shapes):
        co, cig, k = node.params["weight"].shape
        out = self.infer(node, shapes)[0]
        return numel(out) * int(cig) * int(k)

    def bind(self, node, ins, outs):
        x, y, w, (g, s, p, d) = _conv_operands(node, ins, outs)
        return conv_steps(x, y, w, g, (s,), ((p, p),), (d,), _param(node, "bias")), (), {}


_PMAX = 1 << 16


@define
class Conv2d(FloatOp):
    name, code = "float_conv2d", 87
    doc = ("float32 Conv2d (nn.Conv2d / F.conv2d left in float, e.g. by quantize_dynamic; "
           "every padding_mode, 'same'/'valid', dilation, groups, depthwise)")
    attrs = {"stride": Ints(2, lo=1, hi=_PMAX, default=[1, 1]),
             "padding": Ints(4, lo=0, hi=_PMAX, default=[0, 0, 0, 0],
                             doc="top, bottom, left, right"),
             "dilation": Ints(2, lo=1, hi=_PMAX, default=[1, 1]),
             "groups": Int(lo=1, default=1),
             "padding_mode": Choice("zeros", "reflect", "replicate", "circular",
                                    default="zeros")}
    params = (Param("weight", "float32"), Param("bias", "float32", optional=True))

    def check(self, node):
        w = node.params["weight"]
        g = node.attrs["groups"]
        if len(w.shape) != 4 or w.shape[0] % g or 0 in w.shape:
            raise node.fail(f"weight must be (out, in/groups, kh, kw) with out divisible by "
                            f"groups={g}, has shape {tuple(w.shape)}")
        _check_vec(node, ("bias",), w.shape[0])

    def _pads(self, node):
        p = node.attrs["padding"]
        return ((p[0], p[1]), (p[2], p[3]))

    def infer(self, node, shapes):
        a = node.attrs
        s = tuple(shapes[0])
        co, cig = node.params["weight"].shape[:2]
        k = node.params["weight"].shape[2:]
        if len(s) not in (3, 4) or s[-3] != cig * a["groups"]:
            raise ShapeError(f"takes (N, {cig * a['groups']}, H, W) input, got {s}")
        pads = self._pads(node)
        if a["padding_mode"] != "zeros":
            check_pad_mode(s[-2:], pads, a["padding_mode"])
        out = []
        for n, kd, d, st, (p0, p1) in zip(s[-2:], k, a["dilation"], a["stride"], pads):
            span = d * (kd - 1) + 1
            if n + p0 + p1 < span:
                raise ShapeError(f"input {s[-2:]} (+ padding {a['padding']}) is smaller than "
                                 f"the kernel span")
            out.append((n + p0 + p1 - span) // st + 1)
        return [s[:-3] + (co,) + tuple(out)]

    def macs(self, node, shapes):
        co, cig, kh, kw = node.params["weight"].shape
        return numel(self.infer(node, shapes)[0]) * int(cig) * int(kh) * int(kw)

    def bind(self, node, ins, outs):
        a = node.attrs
        x, y = ins[0], outs[0]
        if x.ndim == 3:
            x, y = x[None], y[None]
        w = np.asarray(node.array("weight"), F32)
        return conv_steps(x, y, w, a["groups"], tuple(a["stride"]), self._pads(node),
                          tuple(a["dilation"]), _param(node, "bias"),
                          a["padding_mode"]), (), {}


@define
class ConvTranspose1d(FloatOp):
    name, code = "float_conv_transpose1d", 86
    doc = ("float32 ConvTranspose1d (nn.ConvTranspose1d / F.conv_transpose1d left in float, "
           "e.g. by quantize_dynamic)")
    attrs = {"stride": Int(lo=1, default=1), "padding": Int(default=0),
             "output_padding": Int(default=0), "dilation": Int(lo=1, default=1),
             "groups": Int(lo=1, default=1)}
    params = (Param("weight", "float32"), Param("bias", "float32", optional=True))

    def check(self, node):
        w, a = node.params["weight"], node.attrs
        g = a["groups"]
        if len(w.shape) != 3 or w.shape[0] % g:
            raise node.fail(f"weight must be (in, out/groups, k) with in divisible by "
                            f"groups={g}, has shape {tuple(w.shape)}")
        if a["output_padding"] >= max(a["stride"], a["dilation"]):
            raise node.fail(f"output_padding {a['output_padding']} must be smaller than stride "
                            f"or dilation (torch's rule)")
        _check_vec(node, ("bias",), w.shape[1] * g)

    def _out_len(self, node, length):
        a = node.attrs
        k = node.params["weight"].shape[2]
        lo = (length - 1) * a["stride"] - 2 * a["padding"] + a["dilation"] * (k - 1) + \
            a["output_padding"] + 1
        if length < 1 or lo < 1:
            raise ShapeError(f"input length {length} gives output length {lo} (padding "
                             f"{a['padding']} too large)")
        return lo

    def infer(self, node, shapes):
        s = tuple(shapes[0])
        ci, cog, _ = node.params["weight"].shape
        if len(s) not in (2, 3) or s[-2] != ci:
            raise ShapeError(f"takes (N, {ci}, L) input, got {s}")
        return [s[:-2] + (cog * node.attrs["groups"], self._out_len(node, s[-1]))]

    def macs(self, node, shapes):
        ci, cog, k = node.params["weight"].shape
        return numel(shapes[0]) * int(cog) * int(k)

    def bind(self, node, ins, outs):
        # y = col2im(W^T x): one GEMM per group into columns [(out/g) * k, L], then each tap's
        # column row added at stride s (dilation d) into a full-length buffer, cropped by
        # padding. Tap sums are added in tap order (torch's col2im does the same).
        x, y, w, (g, s, p, d) = _conv_operands(node, ins, outs)
        n, ci, length = x.shape
        _, cog, k = w.shape
        cig, lo = ci // g, y.shape[2]
        wt = np.ascontiguousarray(w.reshape(g, cig, cog * k).transpose(0, 2, 1))
        xg = x.reshape(n, g, cig, length)
        cols = np.empty((n, g, cog * k, length), F32)
        c5 = cols.reshape(n, g * cog, k, length)
        span = (length - 1) * s + 1
        full = np.zeros((n, g * cog, max(span + d * (k - 1), p + lo)), F32)
        taps = [full[:, :, j * d:j * d + span:s] for j in range(k)]
        crop = full[:, :, p:p + lo]
        b = _param(node, "bias", (g * cog, 1))

        def run():
            np.matmul(wt, xg, out=cols)
            full.fill(0)
            for j in range(k):
                np.add(taps[j], c5[:, :, j], out=taps[j])
            np.copyto(y, crop)
            if b is not None:
                np.add(y, b, out=y)
        return run, (), {}

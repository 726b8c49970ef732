# SPDX-License-Identifier: Apache-2.0
"""1-d pooling: max_pool1d, avg_pool1d, adaptive_avg_pool1d (modules and functions).

On quantized codes (the C kernels) and on float32 tensors (float sections, e.g. the pools of a
``quantize_dynamic`` model, docs/float-ops.md): float max pooling is exact (NaN propagates, as
in torch); float average pooling sums each window in order in float32 and divides once, as
torch's CPU kernel does; a float adaptive average pool to one output is torch's mean (pairwise
float32 sum times 1/L, within the mean bound), to more outputs a windowed sum as above.
"""

from __future__ import annotations

import numpy as np

from qrt._geometry import pool_out_len
from qrt.ops._core import Bool, Int, OpDef, ShapeError, define, legacy_kwargs, same_qparams

_K = 1 << 20


class _Pool(OpDef):
    def upgrade(self, node, attrs, params, version):
        kw = legacy_kwargs(node, attrs)
        if kw.get("stride", 0) is None:
            kw.pop("stride")
        return kw, {}

    dtypes = ("quint8", "qint8")

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        _check_dtype(node, x, self.dtypes)
        same_qparams(node, x, y, self.name)
        a = node.attrs
        if "padding" in a and a["padding"] > a["kernel_size"] // 2:
            raise node.fail(f"attribute 'padding' must be at most half of kernel_size "
                            f"({a['kernel_size']}), got {a['padding']}")

    def geometry(self, node, L):
        a = node.attrs
        if a.get("whole_length"):
            return 1
        k = a["kernel_size"]
        s = a.get("stride") or k
        lo = pool_out_len(L, k, s, a.get("padding", 0), a.get("dilation", 1),
                          a.get("ceil_mode", False))
        return lo

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        if len(x) not in (2, 3) or x[-1] < 1:
            raise ShapeError(f"input must be [N, C, L] or [C, L] with L >= 1, got {x}")
        lo = self.geometry(node, x[-1])
        if lo < 1:
            raise ShapeError(f"input length {x[-1]} gives an output length of {lo}")
        return [x[:-1] + (lo,)]

    def kwargs(self, node, L=None):
        kw = {k: v for k, v in node.attrs.items() if k != "whole_length"}
        if node.attrs.get("whole_length") and L is not None:  # kernel = stride = the length
            kw["kernel_size"] = kw["stride"] = L
        return kw

    def bind(self, node, ins, outs):
        import qrt.functional as F
        from qrt.functional._ops import pool_binding
        kw = self.kwargs(node, ins[0].shape[-1])
        if _is_float(ins[0]):
            return self.bind_float(ins[0], outs[0], kw), (), {}
        b = pool_binding(self.name, ins[0], outs[0], kw)
        if b is not None:  # one kernel call on the plan's fixed buffers
            return b[0], b[1], {}
        return getattr(F, self.name), (ins[0],), dict(kw, out=outs[0])

    def bind_float(self, x, y, kw):
        k, s, p = kw["kernel_size"], kw.get("stride") or kw["kernel_size"], kw.get("padding", 0)
        d, L, Lo = kw.get("dilation", 1), x.shape[-1], y.shape[-1]
        span = (Lo - 1) * s + 1
        width = max(L + 2 * p, (k - 1) * d + span)
        fill = -np.inf if self.name == "max_pool1d" else 0.0
        xp = np.full(x.shape[:-1] + (width,), fill, np.float32)  # padded copy, made once
        inner = xp[..., p:p + L]
        taps = [xp[..., j * d:j * d + span:s] for j in range(k)]
        if self.name == "max_pool1d":
            def run():
                np.copyto(inner, x)
                np.copyto(y, taps[0])
                for t in taps[1:]:
                    np.maximum(y, t, out=y)
            return run
        # torch: divisor = window clipped to input + padding (count_include_pad) or to the input
        starts = np.arange(Lo) * s - p
        ends = np.minimum(starts + k, L + p)
        if not kw.get("count_include_pad", True):
            starts, ends = np.maximum(starts, 0), np.minimum(ends, L)
        div = (ends - starts).astype(np.float32)

        def run_avg():
            np.copyto(inner, x)
            np.copyto(y, taps[0])
            for t in taps[1:]:
                np.add(y, t, out=y)
            np.divide(y, div, out=y)
        return run_avg

    def prepare_cuda(self, node, dev):
        dev.require_q(node, node.inputs[0], ("quint8",))
        return True

    def bind_cuda(self, node, ins, outs, dev):
        fn = getattr(dev.functional, self.name)
        kw = self.kwargs(node, ins[0].shape[-1])
        return lambda: fn(ins[0], **kw, out=outs[0])


_COMMON = {"kernel_size": Int(1, _K), "stride": Int(1, _K, default=None, nullable=True),
           "padding": Int(0, _K // 2, default=0), "ceil_mode": Bool(default=False),
           # F.avg_pool1d(x, x.shape[-1]): kernel = stride = the input length, whatever it is
           "whole_length": Bool(default=False)}


@define
class MaxPool1d(_Pool):
    name, code = "max_pool1d", 11
    doc = "max_pool1d (nn.MaxPool1d, F.max_pool1d), codes or float32"
    dtypes = ("quint8", "qint8", "qint32")   # torch pools qint32 with its generic kernel
    attrs = dict(_COMMON, dilation=Int(1, _K, default=1))


@define
class AvgPool1d(_Pool):
    name, code = "avg_pool1d", 12
    doc = "avg_pool1d (nn.AvgPool1d, F.avg_pool1d), codes or float32"
    attrs = dict(_COMMON, count_include_pad=Bool(default=True))


@define
class AdaptiveAvgPool1d(_Pool):
    name, code = "adaptive_avg_pool1d", 13
    doc = "adaptive_avg_pool1d (nn.AdaptiveAvgPool1d, F.adaptive_avg_pool1d), codes or float32"
    attrs = {"output_size": Int(1, _K)}

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        _check_dtype(node, x, self.dtypes)
        same_qparams(node, x, y, self.name)

    def geometry(self, node, L):
        return node.attrs["output_size"]

    def bind_float(self, x, y, kw):
        L, Lo = x.shape[-1], y.shape[-1]
        if Lo == 1:  # torch computes this case as x.mean(-1): sum * (1 / L)
            inv = np.float32(1.0 / L)

            def run_mean():
                np.add.reduce(x, axis=-1, keepdims=True, out=y)
                np.multiply(y, inv, out=y)
            return run_mean
        wins = [(i * L // Lo, -(-(i + 1) * L // Lo)) for i in range(Lo)]

        def run():
            for i, (a, b) in enumerate(wins):
                yi = y[..., i]
                np.copyto(yi, x[..., a])
                for j in range(a + 1, b):
                    np.add(yi, x[..., j], out=yi)
                np.divide(yi, np.float32(b - a), out=yi)
        return run


def _is_float(t) -> bool:
    return isinstance(t, np.ndarray) and t.dtype == np.float32


def _check_dtype(node, x, dtypes):
    if x.dtype == "float32":
        return
    if x.dtype not in dtypes or x.qscheme != "per_tensor_affine":
        raise node.fail(f"pools per-tensor {'/'.join(dtypes)} tensors or float32 ones, "
                        f"not {x.dtype}")

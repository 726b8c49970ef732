# SPDX-License-Identifier: Apache-2.0
"""1-d pooling: max_pool1d, avg_pool1d, adaptive_avg_pool1d (modules and functions).

max_pool1d and avg_pool1d also take float32 tensors (float sections, e.g. the float regions a
pt2e quantizer leaves): numpy over the kernel taps, max exact, average as torch's (the taps
summed in order, divided by torch's divisor; docs/float-ops.md).
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

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype == "float32" and self.name in ("max_pool1d", "avg_pool1d"):
            if y.dtype != "float32":
                raise node.fail(f"float32 {self.name} must produce float32")
        elif x.dtype not in ("quint8", "qint8") or x.qscheme != "per_tensor_affine":
            raise node.fail("pools per-tensor quint8/qint8 tensors (max_pool1d and "
                            "avg_pool1d also float32)")
        else:
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
        if node.inputs[0].dtype == "float32":
            return _float_pool(self.name, ins[0], outs[0], kw), (), {}
        b = pool_binding(self.name, ins[0], outs[0], kw)
        if b is not None:  # one kernel call on the plan's fixed buffers
            return b[0], b[1], {}
        return getattr(F, self.name), (ins[0],), dict(kw, out=outs[0])

    def prepare_cuda(self, node, dev):
        dev.require_q(node, node.inputs[0], ("quint8",))
        return True

    def bind_cuda(self, node, ins, outs, dev):
        fn = getattr(dev.functional, self.name)
        kw = self.kwargs(node, ins[0].shape[-1])
        return lambda: fn(ins[0], **kw, out=outs[0])


def _float_pool(name, x, y, kw):
    """A float32 pool on fixed buffers x [.., L] -> y [.., lo]: one strided pass per kernel
    tap over the outputs whose tap lies inside the input (padding is never materialised)."""
    k = kw["kernel_size"]
    s = kw.get("stride") or k
    p = kw.get("padding", 0)
    d = kw.get("dilation", 1)
    L, lo = x.shape[-1], y.shape[-1]
    taps = []   # (output slice, input slice) of each tap
    for j in range(k):
        off = j * d - p                      # input index of output i: i * s + off
        i0 = max(0, -(off // s)) if off < 0 else 0
        i1 = min(lo, (L - 1 - off) // s + 1) if L - 1 - off >= 0 else 0
        if i1 > i0:
            taps.append((slice(i0, i1), slice(i0 * s + off, (i1 - 1) * s + off + 1, s)))
    if name == "max_pool1d":
        def run():
            y.fill(-np.inf)
            for o, i in taps:
                np.maximum(y[..., o], x[..., i], out=y[..., o])
        return run
    # torch: hstart = i*s - p, hend = min(hstart + k, L + p), size = hend - hstart;
    # clipped to [0, L]; divisor = size (count_include_pad) or the clipped size
    i = np.arange(lo)
    h0 = i * s - p
    h1 = np.minimum(h0 + k, L + p)
    size = h1 - h0
    div = size if kw.get("count_include_pad", True) else \
        np.minimum(h1, L) - np.maximum(h0, 0)
    div = np.maximum(div, 1).astype(np.float32)

    def run_avg():
        y.fill(0.0)
        for o, i in taps:
            np.add(y[..., o], x[..., i], out=y[..., o])
        np.divide(y, div, out=y)
    return run_avg


_COMMON = {"kernel_size": Int(1, _K), "stride": Int(1, _K, default=None, nullable=True),
           "padding": Int(0, _K // 2, default=0), "ceil_mode": Bool(default=False),
           # F.avg_pool1d(x, x.shape[-1]): kernel = stride = the input length, whatever it is
           "whole_length": Bool(default=False)}


@define
class MaxPool1d(_Pool):
    name, code = "max_pool1d", 11
    doc = "max_pool1d (nn.MaxPool1d, F.max_pool1d)"
    attrs = dict(_COMMON, dilation=Int(1, _K, default=1))


@define
class AvgPool1d(_Pool):
    name, code = "avg_pool1d", 12
    doc = "avg_pool1d (nn.AvgPool1d, F.avg_pool1d)"
    attrs = dict(_COMMON, count_include_pad=Bool(default=True))


@define
class AdaptiveAvgPool1d(_Pool):
    name, code = "adaptive_avg_pool1d", 13
    doc = "adaptive_avg_pool1d (nn.AdaptiveAvgPool1d, F.adaptive_avg_pool1d)"
    attrs = {"output_size": Int(1, _K)}

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype not in ("quint8", "qint8") or x.qscheme != "per_tensor_affine":
            raise node.fail("pools per-tensor quint8/qint8 tensors")
        same_qparams(node, x, y, self.name)

    def geometry(self, node, L):
        return node.attrs["output_size"]

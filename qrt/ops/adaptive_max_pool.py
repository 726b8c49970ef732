# SPDX-License-Identifier: Apache-2.0
"""adaptive_max_pool1d on quantized codes or float32 values (exact: a max is a max).

torch has no quantized adaptive max pooling (FX leaves it in float between a dequantize and a
quantize); bins are torch's: start = floor(i*L/o), end = ceil((i+1)*L/o). At bind, one gather
of the [o, widest bin] window indices into a scratch buffer, then one max over it.
"""

from __future__ import annotations

import numpy as np

from qrt.ops._core import Int, OpDef, ShapeError, define, same_qparams


def _bins(L, o):
    starts = [(i * L) // o for i in range(o)]
    ends = [-(-((i + 1) * L) // o) for i in range(o)]
    width = max(e - s for s, e in zip(starts, ends))
    idx = np.empty((o, width), np.intp)
    for i, (s, e) in enumerate(zip(starts, ends)):
        idx[i] = np.minimum(np.arange(s, s + width), e - 1)  # repeat the last: same max
    return idx


@define
class AdaptiveMaxPool1d(OpDef):
    name, code = "adaptive_max_pool1d", 101
    doc = "adaptive_max_pool1d (nn.AdaptiveMaxPool1d, F.adaptive_max_pool1d), codes or float"
    attrs = {"output_size": Int(1, 1 << 20)}

    def validate(self, node):
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype not in ("quint8", "qint8", "float32"):
            raise node.fail(f"pools quint8, qint8 or float32 tensors, not {x.dtype}")
        same_qparams(node, x, y, self.name)

    def infer(self, node, shapes):
        x = tuple(shapes[0])
        if len(x) not in (2, 3) or x[-1] < 1:
            raise ShapeError(f"input must be [N, C, L] or [C, L] with L >= 1, got {x}")
        return [x[:-1] + (node.attrs["output_size"],)]

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        xa = x.int_repr() if hasattr(x, "int_repr") else x
        ya = y.int_repr() if hasattr(y, "int_repr") else y
        o = node.attrs["output_size"]
        idx = _bins(xa.shape[-1], o)
        scratch = np.empty(xa.shape[:-1] + idx.shape, xa.dtype)
        take, amax = np.take, np.max

        def run():
            take(xa, idx, axis=-1, out=scratch)
            amax(scratch, axis=-1, out=ya)
        return run, (), {}

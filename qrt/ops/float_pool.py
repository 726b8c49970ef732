# SPDX-License-Identifier: Apache-2.0
"""float32 2-d pools: the float path of max_pool2d, avg_pool2d and adaptive_avg_pool2d
(qrt/ops/pool2d.py defines the ops; the pools of a quantize_dynamic model stay float).
In a float_* module so numpy's floating-point warnings are filtered as in every float op
(qrt/ops/_float.py).

Max pooling is a running np.maximum over the window's taps in order (padding -inf; NaN
propagates, as torch's kernel): bit-identical. Average pooling sums the taps in torch's order
(rows, then columns; padding adds +0.0) in float32 and divides once by torch's divisor;
adaptive average pooling sums each bin the same way and divides by its height, then its
width; to one output, torch computes x.mean((-1, -2)), qrt a float32 pairwise sum times
1/(H*W) (the `mean` bound of docs/float-ops.md).
"""

from __future__ import annotations

import numpy as np

from qrt.ops.pool2d import _adaptive_index, _divisors, _hw

_F32 = np.float32


def pool2d_binding(kind, xa, ya, attrs):
    """float32 2-d pools (the docstring above)."""
    n, c, h, w = xa.shape
    ho, wo = ya.shape[-2:]
    if kind == "adaptive_avg_pool2d":
        if (ho, wo) == (1, 1):
            x3, y3 = xa.reshape(n, c, h * w), ya.reshape(n, c, 1)
            inv = _F32(1.0 / (h * w))

            def run():
                np.add.reduce(x3, axis=2, keepdims=True, out=y3)
                np.multiply(y3, inv, out=y3)
            return run, (), {}
        ih, vh, kh = _adaptive_index(h, ho)
        iw, vw, kw = _adaptive_index(w, wo)
        dh = kh.astype(_F32).reshape(ho, 1)
        dw = kw.astype(_F32).reshape(1, wo)

        def run():
            g = xa[:, :, ih][:, :, :, :, iw]  # [n, c, ho, bh, wo, bw]
            g = np.where((vh[:, :, None, None] & vw[None, None, :, :]), g, _F32(0))
            acc = np.zeros((n, c, ho, wo), _F32)
            for a in range(g.shape[3]):
                for b in range(g.shape[5]):
                    np.add(acc, g[:, :, :, a, :, b], out=acc)
            np.divide(acc, dh, out=acc)
            np.divide(acc, dw, out=ya)
        return run, (), {}
    k = tuple(attrs["kernel_size"])
    s = _hw(attrs.get("stride"), k)
    p = tuple(attrs.get("padding", (0, 0)))
    d = tuple(attrs.get("dilation", (1, 1)))
    hp = max(h + 2 * p[0], (ho - 1) * s[0] + (k[0] - 1) * d[0] + 1)
    wp = max(w + 2 * p[1], (wo - 1) * s[1] + (k[1] - 1) * d[1] + 1)
    is_max = kind == "max_pool2d"
    fill = -np.inf if is_max else 0.0
    xp = np.full((n, c, hp, wp), fill, _F32)
    inner = xp[:, :, p[0]:p[0] + h, p[1]:p[1] + w]
    taps = [xp[:, :, i * d[0]:i * d[0] + (ho - 1) * s[0] + 1:s[0],
               j * d[1]:j * d[1] + (wo - 1) * s[1] + 1:s[1]]
            for i in range(k[0]) for j in range(k[1])]
    if is_max:
        def run():
            np.copyto(inner, xa)
            np.copyto(ya, taps[0])
            for t in taps[1:]:
                np.maximum(ya, t, out=ya)
        return run, (), {}
    div = _divisors(h, w, ho, wo, k, s, p, bool(attrs.get("count_include_pad", True)),
                    attrs.get("divisor_override")).astype(_F32).reshape(ho, wo)

    def run():
        np.copyto(inner, xa)
        np.copyto(ya, taps[0])
        for t in taps[1:]:
            np.add(ya, t, out=ya)
        np.divide(ya, div, out=ya)
    return run, (), {}


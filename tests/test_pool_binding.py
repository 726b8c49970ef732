# SPDX-License-Identifier: Apache-2.0
"""A model plan binds pooling ops to one kernel call (qrt.functional._ops.pool_binding); that
call must give exactly what the public functions give, and step aside where only they can run."""

import numpy as np

import qrt
import qrt.functional as F
from qrt.functional._ops import pool_binding


def _q(rng, shape, dtype):
    lo, hi = (0, 256) if dtype is qrt.quint8 else (-128, 128)
    codes = rng.integers(lo, hi, shape).astype(dtype.numpy_dtype)
    return qrt.from_int_repr(codes, float(rng.uniform(0.01, 0.2)),
                             int(rng.integers(0, 256)) if dtype is qrt.quint8
                             else int(rng.integers(-128, 128)), dtype)


def _empty_like_out(x, lo):
    shape = x.shape[:-1] + (lo,)
    codes = np.zeros(shape, x.dtype.numpy_dtype)
    return qrt.from_int_repr(codes, x.q_scale(), x.q_zero_point(), x.dtype)


def test_pool_binding_equals_functional():
    rng = np.random.default_rng(31)
    bound = 0
    for i in range(400):
        kind = ["max_pool1d", "avg_pool1d", "adaptive_avg_pool1d"][i % 3]
        dtype = qrt.quint8 if rng.random() < 0.7 else qrt.qint8
        n, c, L = int(rng.integers(1, 4)), int(rng.integers(1, 20)), int(rng.integers(1, 70))
        if i % 17 == 0:
            L = 1  # [N, C, 1]: the layout quirk stays with the functions
        x = _q(rng, (n, c, L), dtype)
        if kind == "adaptive_avg_pool1d":
            attrs = {"output_size": int(rng.integers(1, L + 2))}
            want = F.adaptive_avg_pool1d(x, **attrs)
        else:
            k = int(rng.integers(1, 6))
            attrs = {"kernel_size": k, "stride": int(rng.integers(1, 4)),
                     "padding": int(rng.integers(0, k // 2 + 1)), "ceil_mode": bool(i % 2)}
            if kind == "max_pool1d":
                attrs["dilation"] = int(rng.integers(1, 3))
            else:
                attrs["count_include_pad"] = bool(i % 4 < 2)
            try:
                want = getattr(F, kind)(x, **attrs)
            except ValueError:  # refused by the function: never bound to a kernel call
                try:
                    assert pool_binding(kind, x, _empty_like_out(x, 1), attrs) is None
                except ValueError:
                    pass
                continue
        out = _empty_like_out(x, want.shape[-1])
        b = pool_binding(kind, x, out, attrs)
        if L == 1 and c > 1:
            assert b is None
            continue
        assert b is not None, (kind, attrs, x.shape)
        b[0](*b[1])
        np.testing.assert_array_equal(out.int_repr(), want.int_repr(), err_msg=str((kind, attrs)))
        bound += 1
    assert bound > 300


def test_pool_binding_declines_unknown_attrs_and_copies():
    rng = np.random.default_rng(2)
    x = _q(rng, (2, 3, 10), qrt.quint8)
    out = _empty_like_out(x, 5)
    assert pool_binding("avg_pool1d", x, out, {"kernel_size": 2, "divisor_override": 3}) is None
    assert pool_binding("lp_pool1d", x, out, {"kernel_size": 2}) is None
    # a non-contiguous input would be copied per call: not bindable
    xt = _q(rng, (2, 10, 3), qrt.quint8).permute(0, 2, 1)
    assert pool_binding("max_pool1d", xt, _empty_like_out(xt, 5), {"kernel_size": 2}) is None

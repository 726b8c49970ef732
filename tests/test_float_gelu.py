# SPDX-License-Identifier: Apache-2.0
"""float_gelu (erf form) in C (include/qrt/float_gelu.h): the AVX2 and AVX-512 loops == the
reference loop bit for bit, and all == the float32 numpy steps of qrt/ops/float_unary.py (the
specification) bit for bit (armv7l's numpy flushes subnormals: there, nearly all)."""

import platform

import numpy as np
import pytest

from qrt import _ops
from qrt.ops import float_unary as U


def _values(rng):
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, -1e-38,
                        3.4e38, -3.4e38, 1.7e38, 5.0, -5.0, 26.0, -26.0, 40.0, -40.0, 1e-7],
                       np.float32)
    return np.concatenate([special, rng.standard_normal(20000).astype(np.float32) * 3,
                           rng.uniform(-60, 60, 5000).astype(np.float32),
                           (rng.standard_normal(3001) * 1e-20).astype(np.float32)])


def _numpy_gelu(x):
    y = np.empty_like(x)
    old, U._USE_C_GELU = U._USE_C_GELU, False
    try:
        class _N:
            attrs = {"approximate": "none"}
        with np.errstate(all="ignore"):
            U.Gelu().kernel(_N(), x, y)()
    finally:
        U._USE_C_GELU = old
    return y


def _variants():
    x = np.zeros(4, np.float32)
    best = _ops.gelu_erf_f32(x, np.empty_like(x))
    return [v for v in (1, 2) if v <= best]


@pytest.mark.parametrize("variant", _variants() or [pytest.param(1, marks=pytest.mark.skip(
    reason="no vector variant on this CPU"))])
def test_variants_equal_reference(rng, variant):
    x = _values(rng)
    ref, got = np.empty_like(x), np.empty_like(x)
    assert _ops.gelu_erf_f32(x, ref, 0) == 0
    assert _ops.gelu_erf_f32(x, got, variant) == variant
    np.testing.assert_array_equal(ref.view(np.uint32), got.view(np.uint32))


def test_c_equals_the_numpy_steps(rng):
    x = _values(rng)
    c = np.empty_like(x)
    _ops.gelu_erf_f32(x, c)
    want = _numpy_gelu(x)
    nan = np.isnan(want)
    assert (np.isnan(c) == nan).all()
    a, b = c[~nan].astype(np.float64), want[~nan].astype(np.float64)
    if not platform.machine().startswith("armv7"):
        np.testing.assert_array_equal(c[~nan].view(np.uint32), want[~nan].view(np.uint32))
        return
    # armv7l: numpy's NEON loops flush subnormal float32 inputs and results (the C reference
    # does not), so a subnormal x, or an erfc(-z) below 2^-126 (x < -13), may differ there by
    # 2^-126 |x| + one subnormal; and armv7 NEON has no divide, so numpy's float32 division
    # there is not always correctly rounded (a few last-bit differences: 2 ulp allowed)
    ax = np.abs(x[~nan]).astype(np.float64)
    with np.errstate(invalid="ignore"):   # inf - inf where both overflow
        near = np.abs(a - b) <= 2.0 ** -126 * (ax + 1.0) + 2.0 ** -22 * np.abs(b)
    assert ((a == b) | near).all()
    assert (a == b).mean() > 0.99


def test_gelu_op_uses_c_on_contiguous_views():
    class _N:
        attrs = {"approximate": "none"}
    x = np.linspace(-4, 4, 64, dtype=np.float32).reshape(8, 8)
    y = np.empty_like(x)
    U.Gelu().kernel(_N(), x, y)()
    np.testing.assert_array_equal(y, _numpy_gelu(x))
    yt = np.empty((8, 8), np.float32).T       # not contiguous: the numpy steps
    U.Gelu().kernel(_N(), x, yt)()
    np.testing.assert_array_equal(yt, _numpy_gelu(x))

# SPDX-License-Identifier: Apache-2.0
"""float_gelu (erf form) in C (include/qrt/float_gelu.h): the AVX2 loop == the reference loop
bit for bit, and both == the numpy steps of qrt/ops/float_unary.py (the specification) but
for the last bit of a float64 exp, which almost never reaches the float32 result."""

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


def test_variants_equal_reference(rng):
    x = _values(rng)
    ref, got = np.empty_like(x), np.empty_like(x)
    assert _ops.gelu_erf_f32(x, ref, 0) == 0
    isa = _ops.gelu_erf_f32(x, got)
    if isa == 0:
        pytest.skip("no vector variant on this CPU")
    np.testing.assert_array_equal(ref.view(np.uint32), got.view(np.uint32))


def test_c_equals_the_numpy_steps(rng):
    x = _values(rng)
    c = np.empty_like(x)
    _ops.gelu_erf_f32(x, c)
    want = _numpy_gelu(x)
    nan = np.isnan(want)
    assert (np.isnan(c) == nan).all()
    a, b = c[~nan].astype(np.float64), want[~nan].astype(np.float64)
    ulp = np.spacing(np.abs(want[~nan])).astype(np.float64)
    with np.errstate(invalid="ignore"):
        close = (a == b) | (np.abs(a - b) <= ulp)    # at most 1 ulp (an exp's last bit)
        # numpy on armv7 flushes subnormal float32 results (NEON): there, a subnormal C
        # result may face numpy's zero
        close |= (np.abs(a) < 2.0 ** -126) & (np.abs(b) < 2.0 ** -126)
    assert close.all()
    # x86-64, aarch64: the C steps equal numpy's on all but a few values. armv7l's numpy 2
    # (trixie, qemu cortex-a7) computes the float64 exp/erfc steps with other code: 99.78 %
    # equal there, the rest within the 1 ulp asserted above
    assert (a == b).mean() > (0.99 if platform.machine().startswith("armv7") else 0.999)


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

# SPDX-License-Identifier: Apache-2.0
"""float_layer_norm in C (include/qrt/float_norm.h) vs the numpy steps of qrt/ops/float_nn.py:
another summation order, so within docs/float-ops.md's bound n eps S with
S = |w| rstd (|x| + |mean| + 1) + |b|; NaN where the variance overflows, as torch."""

import numpy as np
import pytest

from qrt import _ops
from qrt.ops import float_nn as N

F32 = np.float32


def _numpy_ln(x2, eps, w, b):
    y = np.empty_like(x2)
    with np.errstate(all="ignore"):
        N._seq(N._rownorm(x2, y, eps), N._affine(y, w, b))()
    return y


@pytest.mark.parametrize("n", [1, 7, 8, 9, 64, 100])
@pytest.mark.parametrize("affine", [False, True])
def test_c_within_bound_of_numpy(rng, n, affine):
    x = (rng.standard_normal((13, n)) * rng.uniform(0.01, 50, (13, 1)) +
         rng.uniform(-5, 5, (13, 1))).astype(F32)
    w = rng.standard_normal(n).astype(F32) if affine else None
    b = rng.standard_normal(n).astype(F32) if affine else None
    want = _numpy_ln(x, 1e-5, w, b)
    got = np.empty_like(x)
    _ops.layer_norm_rows_f32(x, got, float(F32(1.0 / n)), float(F32(1e-5)), w, b)
    mean = x.astype(np.float64).mean(axis=1, keepdims=True)
    rstd = 1 / np.sqrt(x.astype(np.float64).var(axis=1, keepdims=True) + 1e-5)
    s = (np.abs(w) if affine else 1) * rstd * (np.abs(x) + np.abs(mean) + 1) + \
        (np.abs(b) if affine else 0)
    assert (np.abs(got.astype(np.float64) - want) <= n * 2.0 ** -23 * s).all()


def test_overflowing_variance_is_nan_and_in_place_works():
    x = np.array([[1e30, -1e30, 3.0, 0.0], [1.0, 2.0, 3.0, 4.0]], F32)
    y = x.copy()
    _ops.layer_norm_rows_f32(y, y, 0.25, float(F32(1e-5)), None, None)   # in place
    assert np.isnan(y[0]).all()
    np.testing.assert_allclose(y[1], _numpy_ln(x[1:], 1e-5, None, None)[0], rtol=1e-6)


def test_bad_arguments():
    x = np.zeros((2, 4), F32)
    with pytest.raises(ValueError):
        _ops.layer_norm_rows_f32(x, np.zeros((2, 5), F32), 0.25, 1e-5, None, None)
    with pytest.raises(ValueError):
        _ops.layer_norm_rows_f32(x, x, 0.25, 1e-5, np.zeros(3, F32), None)

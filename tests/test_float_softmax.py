# SPDX-License-Identifier: Apache-2.0
"""float_softmax over contiguous rows in C (include/qrt/float_softmax.h): every variant ==
the reference bit for bit, masked rows (-inf) give exact zeros, a fully masked row NaN as
torch, and the result is within docs/float-ops.md's softmax bound of torch float32."""

import numpy as np
import pytest

from qrt import _ops
from qrt.ops import float_reduce as R

EPS = 2.0 ** -23


def _rows(rng):
    """(name, [rows, n]) inputs: random, wide, masked, fully masked, inf / NaN, extremes."""
    out = []
    for n in (1, 3, 15, 16, 17, 64, 100, 1000):
        out.append((f"randn{n}", (rng.standard_normal((5, n)) * 8).astype(np.float32)))
    x = (rng.standard_normal((6, 64)) * 3).astype(np.float32)
    x[0, 10:] = -np.inf                    # a padding mask
    x[1, ::3] = -np.inf
    x[2, :] = -np.inf                      # fully masked: NaN (torch)
    x[3, 7] = np.inf                       # +inf: NaN row
    x[4, 9] = np.nan                       # NaN: NaN row
    x[5, :32] = -np.inf
    out.append(("masked", x))
    big = rng.uniform(-3e38, 3e38, (4, 33)).astype(np.float32)
    big[0, 0] = 3.4e38
    out.append(("huge", big))
    e = np.zeros((4, 20), np.float32)
    e[0] = np.linspace(-110, 0, 20)         # exp's underflow: subnormal and zero results
    e[1] = np.linspace(-88, 0, 20)
    e[2] = (rng.standard_normal(20) * 1e-39).astype(np.float32)   # subnormal inputs
    e[3] = np.array([-87.4, -103.0, -103.9, -104.0, -104.5, 0.0] * 3 + [1e-45, -1e-45],
                    np.float32)
    out.append(("edges", e))
    return out


def _variants():
    x = np.zeros((1, 4), np.float32)
    y = np.empty_like(x)
    best = _ops.softmax_rows_f32(x, y)
    return [v for v in (0, 1, 2) if v <= best]


@pytest.mark.parametrize("variant", _variants())
def test_variants_equal_reference(rng, variant):
    for name, x in _rows(rng):
        ref, got = np.empty_like(x), np.empty_like(x)
        with np.errstate(all="ignore"):
            assert _ops.softmax_rows_f32(x, ref, 0) == 0
            assert _ops.softmax_rows_f32(x, got, variant) == variant
        np.testing.assert_array_equal(ref.view(np.uint32), got.view(np.uint32), err_msg=name)


def test_masks_and_nan_rows(rng):
    x = _rows(rng)[8][1]
    y = np.empty_like(x)
    _ops.softmax_rows_f32(x, y)
    assert (y[0, 10:] == 0).all() and (y[1, ::3] == 0).all() and (y[5, :32] == 0).all()
    assert np.isnan(y[2:5]).all()
    assert abs(float(y[0].sum(dtype=np.float64)) - 1.0) < 1e-6
    # in place (the executor may hand the same buffer): the same bits
    z = x.copy()
    _ops.softmax_rows_f32(z, z)
    np.testing.assert_array_equal(z.view(np.uint32), y.view(np.uint32))


def test_bad_shapes_raise():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError):
        _ops.softmax_rows_f32(x, np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError):
        _ops.softmax_rows_f32(np.zeros((2, 0), np.float32), np.zeros((2, 0), np.float32))


def test_matches_torch_within_bound(torch, rng):
    worst = 0.0
    for name, x in _rows(rng):
        y = np.empty_like(x)
        with np.errstate(all="ignore"):
            _ops.softmax_rows_f32(x, y)
        t = torch.from_numpy(x).softmax(-1).numpy()
        assert np.array_equal(np.isnan(y), np.isnan(t)), name
        fin = ~np.isnan(t)
        d = np.abs(y[fin].astype(np.float64) - t[fin])
        scale = (x.shape[1] + 4) * EPS * (np.abs(t[fin].astype(np.float64))
                                          + np.finfo(np.float32).tiny)
        worst = max(worst, float((d / scale).max(initial=0.0)))
        assert ((y == 0) == (t == 0))[fin].all() or name == "edges", name
    assert worst <= 1.0, worst


def test_op_uses_c_on_the_last_dim():
    x = np.linspace(-4, 4, 2 * 3 * 8, dtype=np.float32).reshape(2, 3, 8)
    y = np.empty_like(x)
    m, s = np.empty((2, 3, 1), np.float32), np.empty((2, 3, 1), np.float32)
    R.Softmax.kernel(x, y, 2, m, s)()
    want = np.empty_like(x)
    _ops.softmax_rows_f32(x.reshape(6, 8), want.reshape(6, 8))
    np.testing.assert_array_equal(y, want)
    y1 = np.empty_like(x)                  # another dim: the numpy steps, the same bound
    m1, s1 = np.empty((2, 1, 8), np.float32), np.empty((2, 1, 8), np.float32)
    R.Softmax.kernel(x, y1, 1, m1, s1)()
    np.testing.assert_allclose(y1.sum(1), 1.0, rtol=1e-6)

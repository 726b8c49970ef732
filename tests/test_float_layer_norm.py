# SPDX-License-Identifier: Apache-2.0
"""float_layer_norm (include/qrt/float_norm.h) is torch 2.13's CPU LayerNorm step for step:
bit-exact with torch on x86-64 for every row length (the lane, chunk and cascade paths of
torch's RowwiseMoments), with and without weight / bias, in place, on hostile values, and
through the op on strided views. torch's result is the same under ATEN_CPU_CAPABILITY=avx2
and avx512 (its kernel runs 8 lanes either way)."""

import numpy as np
import pytest

from qrt import _ops

torch = pytest.importorskip("torch")
F32 = np.float32
LENGTHS = [1, 2, 7, 8, 9, 15, 16, 17, 64, 100, 127, 128, 129, 192, 255, 256, 257, 300, 768,
           1023, 1025, 2048, 2049, 4000, 8191]


def _torch_ln(x, eps, w, b):
    n = x.shape[1]
    t = torch.nn.functional.layer_norm(torch.from_numpy(x), [n],
                                       None if w is None else torch.from_numpy(w),
                                       None if b is None else torch.from_numpy(b), eps)
    return t.numpy()


def _same(a, b):
    return np.array_equal(a.view(np.int32), b.view(np.int32)) or \
        np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("affine", ["none", "both", "weight", "bias"])
def test_bit_exact_with_torch(rng, n, affine):
    rows = 9
    x = (rng.standard_normal((rows, n)) * rng.uniform(0.01, 50, (rows, 1)) +
         rng.uniform(-5, 5, (rows, 1))).astype(F32)
    w = rng.standard_normal(n).astype(F32) if affine in ("both", "weight") else None
    b = rng.standard_normal(n).astype(F32) if affine in ("both", "bias") else None
    eps = float(F32(rng.choice([1e-5, 1e-6, 1e-12])))
    got = np.empty_like(x)
    _ops.layer_norm_rows_f32(x, got, eps, w, b)
    want = _torch_ln(x, eps, w, b)
    assert _same(got, want), f"n={n}: {(got != want).sum()} of {got.size} differ"


def test_hostile_values_and_in_place():
    x = np.array([[1e30, -1e30, 3.0, 0.0], [1.0, 2.0, 3.0, 4.0], [np.inf, 1, 2, 3],
                  [np.nan, 1, 2, 3], [3e38, 3e38, -3e38, 1.0], [5.0, 5.0, 5.0, 5.0]], F32)
    want = _torch_ln(x, 1e-5, None, None)
    y = x.copy()
    with np.errstate(all="ignore"):
        _ops.layer_norm_rows_f32(y, y, float(F32(1e-5)), None, None)   # in place
    assert _same(y, want)
    assert np.isnan(y[0]).any() == np.isnan(want[0]).any()


def test_op_on_strided_views(rng):
    """The op reads a transposed (non-contiguous) input view through a contiguous copy."""
    from qrt.ops import float_nn as N
    x = rng.standard_normal((6, 5, 12)).astype(F32)
    xt = x.transpose(1, 0, 2)[:, :, :12]
    y = np.empty((5, 6, 12), F32)

    class _Node:
        attrs = {"normalized_shape": [12], "eps": 1e-5}

        def array(self, name):
            return None
    fn, a, k = N.LayerNorm().bind(_Node(), [xt], [y])
    fn(*a, **k)
    want = _torch_ln(np.ascontiguousarray(xt).reshape(-1, 12), float(F32(1e-5)), None, None)
    assert _same(y.reshape(-1, 12), want)


def test_bad_arguments():
    x = np.zeros((2, 4), F32)
    with pytest.raises(ValueError):
        _ops.layer_norm_rows_f32(x, np.zeros((2, 5), F32), 1e-5, None, None)
    with pytest.raises(ValueError):
        _ops.layer_norm_rows_f32(x, x, 1e-5, np.zeros(3, F32), None)


# ---- GroupNorm: the same moments, torch's per-channel scale and bias ----------------------
@pytest.mark.parametrize("shape,groups", [((2, 32, 50), 4), ((1, 6, 7, 9), 3), ((3, 8, 1), 8),
                                          ((1, 64, 400), 1), ((2, 12, 5, 5, 3), 2),
                                          ((1, 4, 4000), 2), ((1, 1, 3), 1)])
@pytest.mark.parametrize("affine", ["none", "both", "weight", "bias"])
def test_group_norm_bit_exact_with_torch(rng, shape, groups, affine):
    n, c = shape[0], shape[1]
    x = (rng.standard_normal(shape) * rng.uniform(0.01, 30) + rng.uniform(-3, 3)).astype(F32)
    w = rng.standard_normal(c).astype(F32) if affine in ("both", "weight") else None
    b = rng.standard_normal(c).astype(F32) if affine in ("both", "bias") else None
    want = torch.nn.functional.group_norm(
        torch.from_numpy(x), groups, None if w is None else torch.from_numpy(w),
        None if b is None else torch.from_numpy(b), 1e-5).numpy()
    got = np.empty_like(x).reshape(n, c, -1)
    _ops.group_norm_f32(x.reshape(n, c, -1), got, groups, 1e-5, w, b)
    assert _same(got.reshape(shape), want)


def test_group_norm_bad_arguments():
    x = np.zeros((1, 6, 4), F32)
    with pytest.raises(ValueError):
        _ops.group_norm_f32(x, x, 4, 1e-5, None, None)
    with pytest.raises(ValueError):
        _ops.group_norm_f32(x, np.zeros((1, 6, 5), F32), 2, 1e-5, None, None)
    with pytest.raises(ValueError):
        _ops.group_norm_f32(x, x, 2, 1e-5, np.zeros(5, F32), None)

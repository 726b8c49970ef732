# SPDX-License-Identifier: Apache-2.0
"""C kernels of include/qrt/qarith.h (quantized mean rows, per-channel tables): the numpy
int64 oracle == the C reference == the variant this CPU runs, bit for bit; no torch needed."""

import numpy as np
import pytest

from qrt import _ops

I32 = np.iinfo(np.int32)


def _oracle_mean(x):
    s = x.astype(np.int64).sum(axis=1)
    y = np.rint(s.astype(np.float32) / np.float32(x.shape[1]))
    if x.dtype == np.int32:
        return np.where(y >= 2.0 ** 31, I32.min, y).astype(np.int32)
    return y.astype(x.dtype)


@pytest.mark.parametrize("dt", [np.uint8, np.int8, np.int32])
def test_mean_rows_ref_variant_oracle(dt):
    rng = np.random.default_rng(11)
    info = np.iinfo(dt)
    for L in (1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 1000, 65535, 65536, 65537,
              140007):
        rows = 3 if L < 60000 else 1
        x = rng.integers(info.min, info.max, (rows, L), endpoint=True).astype(dt)
        if L > 2:
            x[0, :] = info.max      # the largest sums (u8: past 2^24, where float32 rounds)
        want = _oracle_mean(x)
        for v in (0, -1):
            if dt == np.int32 and v == -1:
                continue            # qint32: the reference only
            out = np.empty(rows, dt)
            if dt == np.int32:
                _ops.mean_rows(x, out)
            else:
                _ops.mean_rows(x, out, v)
            np.testing.assert_array_equal(out, want, err_msg=f"L={L} variant {v}")


def test_mean_rows_ties_and_limits():
    x = np.array([[1, 2], [3, 4], [254, 255], [0, 1]], np.uint8)   # .5 ties: round half to even
    out = np.empty(4, np.uint8)
    _ops.mean_rows(x, out)
    np.testing.assert_array_equal(out, [2, 4, 254, 0])
    x = np.array([[I32.max], [I32.min], [I32.max - 200]], np.int32)
    out = np.empty(3, np.int32)
    _ops.mean_rows(x, out)
    np.testing.assert_array_equal(out, [I32.min, I32.min, 2147483392])  # 2^31 -> INT32_MIN
    with pytest.raises(ValueError):
        _ops.mean_rows(np.zeros((2, 0), np.uint8), np.empty(2, np.uint8))
    with pytest.raises(ValueError):
        _ops.mean_rows(np.zeros((2, 3), np.uint8), np.empty(3, np.uint8))


def test_lut_channels_oracle():
    rng = np.random.default_rng(12)
    for o, c, n in ((1, 1, 1), (2, 5, 17), (3, 64, 100), (1, 7, 1)):
        lut = rng.integers(0, 256, (c, 256)).astype(np.uint8)
        x = rng.integers(0, 256, (o, c, n)).astype(np.uint8)
        out = np.empty_like(x)
        _ops.lut_channels(lut, x, out)
        np.testing.assert_array_equal(out, lut[np.arange(c)[None, :, None], x])
        _ops.lut_channels(lut, x, x)   # in place
        np.testing.assert_array_equal(x, out)
    with pytest.raises(ValueError):
        _ops.lut_channels(np.zeros((2, 256), np.uint8), np.zeros((1, 3, 4), np.uint8),
                          np.zeros((1, 3, 4), np.uint8))


def _oracle_mul(a, b, za, zb, m, lo, hi, zo):
    """qrt/ops/qarith.py's numpy steps (torch's qmul), on broadcast operands."""
    ia = a.astype(np.int32) - np.int32(za)
    ib = b.astype(np.int32) - np.int32(zb)
    f = (ia * ib).astype(np.float32) * np.float32(m)
    f = np.clip(np.rint(f), np.float32(lo), np.float32(hi)) + np.float32(zo)
    return f.astype(np.uint8)


def test_mul_rows_oracle():
    """qrt_mul_rows_u8 == the op's numpy steps: same-shape and per-row (squeeze-excitation)
    operands, every multiplier range (ties at .5, products past 2^22 and 2^31, tiny), relu
    and full clamps, lengths around the vector widths."""
    rng = np.random.default_rng(5)
    for k in range(300):
        rows, L = int(rng.integers(1, 9)), int(rng.integers(1, 80))
        a = rng.integers(0, 256, (rows, L)).astype(np.uint8)
        per_row = bool(rng.integers(2))
        b = rng.integers(0, 256, rows if per_row else rows * L).astype(np.uint8)
        za, zb, zo = (int(v) for v in rng.integers(0, 256, 3))
        m = float(np.float32(10.0 ** rng.uniform(-7, 3)))
        if k % 5 == 0:
            m = float(np.float32(0.5 ** int(rng.integers(0, 16))))   # exact ties
        if k % 7 == 0:
            m = float(np.float32(1e30))
        lo = float(max(0, zo) - zo) if k % 3 == 0 else float(-zo)    # relu or the full range
        hi = float(255 - zo)
        y = np.empty_like(a)
        _ops.mul_rows_u8(a, b, y, per_row, za, zb, m, lo, hi, float(zo))
        bb = b.reshape(rows, 1) if per_row else b.reshape(rows, L)
        np.testing.assert_array_equal(y, _oracle_mul(a, bb, za, zb, m, lo, hi, zo),
                                      err_msg=f"case {k}")


def test_mul_rows_refuses_bad_arguments():
    a = np.zeros((2, 3), np.uint8)
    y = np.zeros((2, 3), np.uint8)
    with pytest.raises(ValueError, match="one code per row"):
        _ops.mul_rows_u8(a, np.zeros(3, np.uint8), y, True, 0, 0, 1.0, 0.0, 255.0, 0.0)
    with pytest.raises(ValueError, match="output shape"):
        _ops.mul_rows_u8(a, np.zeros(2, np.uint8), y[:1], True, 0, 0, 1.0, 0.0, 255.0, 0.0)
    with pytest.raises(ValueError, match="finite"):
        _ops.mul_rows_u8(a, np.zeros(6, np.uint8), y, False, 0, 0, float("inf"), 0.0, 255.0,
                         0.0)

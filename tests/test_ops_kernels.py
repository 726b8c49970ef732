# SPDX-License-Identifier: Apache-2.0
"""Kernel-level properties of qrt._ops that need no torch: reference == dispatched variant,
and the identities qrt.functional relies on."""

import numpy as np

import qrt


def test_variants_bit_exact_with_ref():
    rng = np.random.default_rng(99)
    for n in [1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 200, 1031]:
        for dt, npdt in ((qrt.quint8, np.uint8), (qrt.qint8, np.int8)):
            a = rng.integers(dt.qmin, dt.qmax + 1, n).astype(npdt)
            b = rng.integers(dt.qmin, dt.qmax + 1, n).astype(npdt)
            zp = int(rng.integers(dt.qmin, dt.qmax + 1))
            o1, o2 = np.empty_like(a), np.empty_like(a)
            qrt._ops.relu(a, o1, zp, 0)
            qrt._ops.relu(a, o2, zp, -1)
            np.testing.assert_array_equal(o1, o2)
            args = (0.125, zp, 0.0625, 3 if dt is qrt.quint8 else -3, 0.25, 1, True)
            qrt._ops.add_float(a[None], b[None], o1[None], *args, n - n % 64, 0)
            qrt._ops.add_float(a[None], b[None], o2[None], *args, n - n % 64, -1)
            np.testing.assert_array_equal(o1, o2)
            qrt._ops.requant_copy(a[None], o1[None], 0.1, zp, 0.03, 7, 0)
            qrt._ops.requant_copy(a[None], o2[None], 0.1, zp, 0.03, 7, -1)
            np.testing.assert_array_equal(o1, o2)
        a = rng.integers(0, 256, n).astype(np.uint8)
        b = rng.integers(0, 256, n).astype(np.uint8)
        o1, o2 = np.empty_like(a), np.empty_like(a)
        qrt._ops.add_qnnp(a, b, o1, 0.1, 3, 0.07, 200, 0.05, 9, False, 0)
        qrt._ops.add_qnnp(a, b, o2, 0.1, 3, 0.07, 200, 0.05, 9, False, -1)
        np.testing.assert_array_equal(o1, o2)


def test_cat_requant_same_qparams_is_identity():
    """cat copies inputs that share the output's qparams; the requantizing kernel agrees."""
    rng = np.random.default_rng(7)
    for dt, npdt in ((qrt.quint8, np.uint8), (qrt.qint8, np.int8)):
        codes = np.arange(dt.qmin, dt.qmax + 1).astype(npdt)[None]
        for _ in range(2000):
            s = float(np.float32(10.0 ** rng.uniform(-37.5, 3)))
            zp = int(rng.integers(dt.qmin, dt.qmax + 1))
            out = np.empty_like(codes)
            qrt._ops.requant_copy(codes, out, s, zp, s, zp, -1)
            np.testing.assert_array_equal(out, codes)

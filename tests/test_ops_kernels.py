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


def test_add_qnnp_every_variant_bit_exact():
    """The QNNPACK add: every x86 variant this CPU runs (reference 0, AVX2 1, AVX-512 2) ==
    the reference, over random qparams (shifts 14..35, relu), lengths around the 16- and
    64-byte blocks, and in place (out aliasing a)."""
    rng = np.random.default_rng(2024)
    best = qrt._ops.isa()  # the element-wise variants (the add is the one with AVX-512)
    variants = [v for v in (1, 2) if v <= best]
    checked = 0
    for i in range(300):
        n = int(rng.choice([1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 4099]))
        a = rng.integers(0, 256, n).astype(np.uint8)
        b = rng.integers(0, 256, n).astype(np.uint8)
        sa, sb = 10.0 ** rng.uniform(-3, 0, 2)
        so = float(max(sa, sb) * 10.0 ** rng.uniform(-0.2, 1.5))
        prm = (float(sa), int(rng.integers(0, 256)), float(sb), int(rng.integers(0, 256)), so,
               int(rng.integers(0, 256)), bool(i % 3 == 0))
        if not qrt._ops.add_qnnp_supported(*prm):
            continue
        want = np.empty_like(a)
        qrt._ops.add_qnnp(a, b, want, *prm, 0)
        for v in variants:
            got = np.empty_like(a)
            qrt._ops.add_qnnp(a, b, got, *prm, v)
            np.testing.assert_array_equal(got, want, err_msg=f"variant {v} {n} {prm}")
            inplace = a.copy()
            qrt._ops.add_qnnp(inplace, b, inplace, *prm, v)
            np.testing.assert_array_equal(inplace, want, err_msg=f"in place, variant {v}")
        checked += 1
    assert checked > 200

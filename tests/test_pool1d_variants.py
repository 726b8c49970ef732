# SPDX-License-Identifier: Apache-2.0
"""The SIMD pooling variants (AVX2 on x86-64, NEON on Arm) are bit-exact with the reference.

Random geometries (kernel 1..8, stride 1..4, padding, dilation, ceil_mode, lengths around the
16/32/64-byte vector edges up to 200, N*C 1..70) for max, average (QNNP, GENERIC,
GENERIC_VEC) and adaptive average pooling, quint8 and qint8: the dispatched call
(``variant=-1``) equals ``variant=0`` (the reference) exactly, with canary bytes after the
output untouched, and inputs that end (or start) at a PROT_NONE page to catch any load outside
the rows.  The NEON variant itself runs under qemu in tests/test_pool1d_neon.py.
"""

import ctypes
import mmap
import sys

import numpy as np
import pytest

from qrt import _ops

from _qemu import UNDER_QEMU

# Under qemu-user (the ARM wheel runs) every case is emulated: fewer cases there; the
# freestanding NEON harness (test_pool1d_neon.py) runs 2000 per target from the x86 suite.
_SCALE = 5 if UNDER_QEMU else 1

REF = 0
EDGES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 34, 47, 48, 63, 64, 65, 66, 95, 96,
         97, 127, 128, 129, 130, 131, 160, 191, 192, 193, 200]
CANARY = 16


def _len_out(L, k, s, p, d, ceil_mode):
    num = L + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    if num < 0:
        return 0
    lo = num // s + 1
    if ceil_mode and (lo - 1) * s >= L + p:
        lo -= 1
    return lo


def _out(rows, lo, dt, rng):
    """An output [rows][lo] with CANARY random bytes after it; returns (out, buffer)."""
    buf = rng.integers(0, 256, rows * lo + CANARY).astype(np.uint8).view(dt)
    return buf[:rows * lo].reshape(rows, lo), buf


def _run(fn, x, rows, lo, dt, rng, *args, **kw):
    """Run fn(x, out, ..., variant=v) for the reference and the best variant; compare."""
    o_ref, b_ref = _out(rows, lo, dt, rng)
    o_vec, b_vec = _out(rows, lo, dt, rng)
    tail = b_vec[rows * lo:].copy()
    fn(x, o_ref, *args, variant=REF, **kw)
    fn(x, o_vec, *args, variant=-1, **kw)
    np.testing.assert_array_equal(o_vec, o_ref)
    np.testing.assert_array_equal(b_vec[rows * lo:], tail)  # nothing written past the end


def _random_case(rng):
    kind = ["max", "avg", "adaptive"][int(rng.integers(3))]
    dt = np.uint8 if rng.integers(2) else np.int8
    rows = int(rng.choice([1, 2, 3, 7, 16, 31, 32, 33, 64, 70]))
    L = int(rng.choice(EDGES))
    k = int(rng.integers(1, 9))
    s = int(rng.integers(1, 5)) if rng.integers(3) else int(rng.choice([1, 2]))
    d = int(rng.integers(1, 4)) if kind == "max" and rng.integers(2) else 1
    p = int(rng.integers(0, k // 2 + 1)) if rng.integers(3) else 0
    ceil = bool(rng.integers(2))
    return kind, dt, rows, L, k, s, p, d, ceil


def _check_case(rng, kind, dt, rows, L, k, s, p, d, ceil, x=None):
    info = np.iinfo(dt)
    if x is None:
        x = rng.integers(info.min, info.max + 1, (rows, L)).astype(dt)
    if kind == "adaptive":
        o = int(rng.integers(1, L + 1)) if rng.integers(2) else 1
        _run(_ops.adaptive_avg_pool1d, x, rows, o, dt, rng)
        return
    lo = _len_out(L, k, s, p, d, ceil)
    if lo < 1:
        return
    if kind == "max":
        _run(_ops.max_pool1d, x, rows, lo, dt, rng, k, s, p, d)
        return
    zp = int(rng.integers(info.min, info.max + 1))
    modes = [(False, False), (False, True)] + ([(True, False)] if dt is np.uint8 else [])
    for qnnp, vec in modes:
        for cip in (True, False):
            sc = float(np.float32(rng.uniform(0.05, 2.0))) if qnnp else 0.0
            _run(_ops.avg_pool1d, x, rows, lo, dt, rng, k, s, p, zp, qnnp, cip, sc, vec)


def test_pool1d_variant_selected():
    """AVX2 where the CPU has it, NEON on Arm with NEON, else the reference (-Dsimd=ref too)."""
    from qrt import _cpu
    f = _cpu.features()
    if _cpu.force_ref:
        want = 0
    elif f["avx2"]:
        want = 1
    elif f["neon"]:
        want = 3
    else:
        want = 0
    assert _ops.pool_isa() == want


def test_pool1d_variants_random_exact(rng):
    for _ in range(1500 // _SCALE):
        _check_case(rng, *_random_case(rng))


@pytest.mark.parametrize("dt", [np.uint8, np.int8])
def test_pool1d_variants_edges_exact(rng, dt):
    """Every length 1..200 for the vector paths: stride 1 (k 1..3, dilation 1..2), stride 2
    kernel 2 (the demo's max pool), stride 2 kernel 3 and the demo's adaptive pool."""
    for L in range(1, 201, 3 if UNDER_QEMU else 1):
        for kind, k, s, p, d in (("max", 2, 2, 0, 1), ("max", 3, 1, 1, 1), ("max", 2, 1, 0, 2),
                                 ("max", 3, 2, 1, 1), ("max", 1, 1, 0, 1), ("avg", 3, 1, 1, 1),
                                 ("avg", 2, 2, 0, 1)):
            _check_case(rng, kind, dt, int(rng.integers(1, 5)), L, k, s, p, d, False)
        _check_case(rng, "adaptive", dt, 3, L, 1, 1, 0, 1, False)


@pytest.mark.parametrize("dt", [np.uint8, np.int8])
def test_pool1d_variants_extreme_values(rng, dt):
    """All-min, all-max and alternating codes (saturating packs, 16-bit lane sums)."""
    info = np.iinfo(dt)
    for fill in (info.min, info.max, None):
        for L in (16, 32, 33, 64, 127, 200):
            x = np.full((5, L), fill if fill is not None else 0, dt)
            if fill is None:
                x[:, ::2] = info.max
                x[:, 1::2] = info.min
            for kind, k, s, p in (("max", 2, 2, 0), ("max", 8, 1, 4), ("avg", 8, 1, 4),
                                  ("avg", 2, 2, 1), ("avg", 5, 3, 2), ("adaptive", 1, 1, 0)):
                _check_case(rng, kind, dt, 5, L, k, s, p, 1, bool(rng.integers(2)), x=x)


def test_pool1d_demo_shapes_exact(rng):
    """The demo: max_pool1d(2, 2) of [64*32][64] and its global average pool of [64*32][32]."""
    for rows in (32, 64 * 32):
        x = rng.integers(0, 256, (rows, 64)).astype(np.uint8)
        _run(_ops.max_pool1d, x, rows, 32, np.uint8, rng, 2, 2, 0, 1)
        y = rng.integers(0, 256, (rows, 32)).astype(np.uint8)
        for zp in (0, 3, 255):
            _run(_ops.avg_pool1d, y, rows, 1, np.uint8, rng, 32, 32, 0, zp, True, True,
                 float(np.float32(0.07233 / np.float32(0.07233 * 32))))


@pytest.mark.slow
def test_pool1d_variants_random_exact_many(rng):
    for _ in range(20000):
        _check_case(rng, *_random_case(rng))


# ---- loads stay inside the input: the input touches a PROT_NONE page -------------------------
_PAGE = mmap.PAGESIZE


def _mprotect_none(m, offset):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m)) + offset
    if libc.mprotect(ctypes.c_void_p(addr), ctypes.c_size_t(_PAGE), 0) != 0:
        pytest.skip("mprotect unavailable")


@pytest.fixture(scope="module")
def guarded():
    """(mapping, data_start, data_end): bytes [start, end) are readable, the pages just
    before start and at end are PROT_NONE."""
    if not sys.platform.startswith("linux"):
        pytest.skip("needs Linux mprotect")
    m = mmap.mmap(-1, 8 * _PAGE)
    _mprotect_none(m, 0)
    _mprotect_none(m, 7 * _PAGE)
    yield m, _PAGE, 7 * _PAGE
    # the mapping stays alive with the module (numpy views may still reference it)


def _at_edge(guarded, nbytes, dt, at_end, rng):
    m, start, end = guarded
    off = end - nbytes if at_end else start
    arr = np.frombuffer(m, dtype=np.uint8, count=nbytes, offset=off)
    info = np.iinfo(dt)
    arr[:] = rng.integers(info.min, info.max + 1, nbytes).astype(dt).view(np.uint8)
    return arr.view(dt)


def test_pool1d_variants_stay_inside_input(guarded, rng):
    """A load past either end of the input faults (the test process would die)."""
    for i in range(600):
        kind, dt, rows, L, k, s, p, d, ceil = _random_case(rng)
        rows = 1 if i % 2 else min(rows, 7)
        if rows * L > 6 * _PAGE:
            continue
        x = _at_edge(guarded, rows * L, dt, bool(i % 4 < 2), rng).reshape(rows, L)
        _check_case(rng, kind, dt, rows, L, k, s, p, d, ceil, x=x)


def test_pool1d_disable_isa_selects_reference():
    """QRT_DISABLE_ISA masks the pooling variant too (read once per process)."""
    import os
    import subprocess
    env = dict(os.environ, QRT_DISABLE_ISA="avx2,neon")
    r = subprocess.run([sys.executable, "-c", "from qrt import _ops; print(_ops.pool_isa())"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0"


def test_pool1d_python_fast_paths_keep_checks(rng):
    """The geometry cache and the ``out`` shortcut of qrt.functional's pooling accept exactly
    what the full checks accept: a cached valid call does not let True, numpy ints, tuples or
    a mismatched / overlapping ``out`` through, and results stay equal."""
    import qrt
    import qrt.functional as F
    x = qrt.from_int_repr(rng.integers(0, 256, (2, 3, 40)).astype(np.uint8), 0.1, 7)
    want = F.max_pool1d(x, 2, 2)
    out = F.max_pool1d(x, 2, 2)
    for _ in range(3):  # cached now
        got = F.max_pool1d(x, kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False,
                           out=out)
        assert got is out
        np.testing.assert_array_equal(out.int_repr(), want.int_repr())
    np.testing.assert_array_equal(F.max_pool1d(x, (2,), np.int64(2)).int_repr(),
                                  want.int_repr())
    with pytest.raises(TypeError, match="kernel_size"):
        F.max_pool1d(x, True, 2)
    with pytest.raises(TypeError, match="ceil_mode"):
        F.max_pool1d(x, 2, 2, ceil_mode=1)
    with pytest.raises(ValueError, match="padding"):
        F.max_pool1d(x, 2, 2, padding=2)
    with pytest.raises(ValueError, match="shape"):
        F.max_pool1d(x, 2, 1, out=out)
    bad_q = qrt.from_int_repr(np.zeros((2, 3, 20), np.uint8), 0.2, 7)
    with pytest.raises(ValueError, match="qparams"):
        F.max_pool1d(x, 2, 2, out=bad_q)
    with pytest.raises(TypeError, match="qrt.QTensor"):
        F.max_pool1d(x, 2, 2, out=np.zeros((2, 3, 20), np.uint8))
    same = qrt.from_int_repr(np.zeros((2, 3, 40), np.uint8), 0.1, 7)
    with pytest.raises(ValueError, match="share memory"):
        F.max_pool1d(same, 1, 1, out=same)
    avg_out = F.adaptive_avg_pool1d(x, 1)
    with pytest.raises(ValueError, match="share memory"):
        F.adaptive_avg_pool1d(same, 40, out=same)
    np.testing.assert_array_equal(F.adaptive_avg_pool1d(x, 1, out=avg_out).int_repr(),
                                  F.adaptive_avg_pool1d(x, 1).int_repr())

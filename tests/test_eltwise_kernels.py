# SPDX-License-Identifier: Apache-2.0
"""The element-wise kernels' SIMD variants and thread cuts (issue #15): the quantized mul
(include/qrt/qarith.h: AVX2, AVX-512, NEON) and the 256-entry table lookup
(include/qrt/activation.h: AVX-512 VBMI, aarch64 NEON), each == the C reference byte for byte
on random and edge inputs (lengths 0..200 around the vector widths, unaligned and in-place
buffers, all 256 codes, zero points at and outside 0..255, extreme multipliers, clamp edges),
and bit-identical at 1..4 threads with the thresholds off.  Also the ASan/UBSan C driver
(tests/c/eltwise_sanitize.c) and the freestanding NEON harness under qemu-user
(tests/c/eltwise_arm_harness.c).  No torch."""

import os
import shutil
import struct
import subprocess

import numpy as np
import pytest

import qrt
from qrt import _ops

from _qemu import UNDER_QEMU
from _cdriver import run_c_driver

VARIANTS = (1, 2, 3)  # QRT_ISA_AVX2, _AVX512VNNI (the AVX-512 levels), _NEON; others fall back
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def cut_everything():
    old_t, old = qrt.get_num_threads(), _ops._set_eltwise_mt_min(0, 0)
    yield
    _ops._set_eltwise_mt_min(*old)
    qrt.set_num_threads(old_t)


def _unaligned(rng, arr):
    """A copy of arr at a random byte offset inside a larger buffer (C-contiguous)."""
    off = int(rng.integers(0, 64))
    buf = np.empty(arr.size + off, np.uint8)
    view = buf[off:off + arr.size].reshape(arr.shape)
    view[...] = arr
    return view


def _mul_case(rng, k):
    per_row = bool(k % 2)
    rows = int(rng.integers(1, 13 if per_row else 4))
    length = k % 201 if k < 402 else int(rng.integers(0, 700))
    za, zb = (int(v) for v in rng.integers(0, 256, 2))
    if k % 9 == 0:
        za, zb = 0, 255
    if k % 23 == 0:
        za = int(rng.integers(-300, 600))  # outside the variants' domain: the reference runs
    kind = k % 8
    m = [0.0, 1e-40, 3e38, -0.01, 0.5, 70.0][kind] if kind < 6 else \
        float(np.float32(10.0 ** rng.uniform(-6, -1)))
    zo = float(rng.integers(0, 256))
    lo, hi = -zo, 255.0 - zo
    if k % 5 == 1:
        lo = 0.0                                            # relu
    elif k % 5 == 2:
        lo = float(np.float32(rng.uniform(-300, 0)))        # beyond the codes, non-integer
        hi = float(np.float32(lo + rng.uniform(0, 600)))
    elif k % 5 == 3:
        zo = float(np.float32(rng.uniform(-3, 258)))        # a non-integer zero point
    a = rng.integers(0, 256, (rows, length), dtype=np.uint8)
    b = rng.integers(0, 256, rows if per_row else rows * length, dtype=np.uint8)
    if k % 11 == 0:
        a = (a > 127).astype(np.uint8) * 255
    return a, b, per_row, za, zb, m, lo, hi, zo


def _mul(a, b, per_row, za, zb, m, lo, hi, zo, variant, rng=None, inplace=False):
    if rng is not None:
        a, b = _unaligned(rng, a), _unaligned(rng, b)
    y = a if inplace else np.full_like(a, 0xA5)
    _ops.mul_rows_u8(a, b, y, per_row, za, zb, m, lo, hi, zo, variant=variant)
    return y.copy()


@pytest.mark.parametrize("variant", VARIANTS)
def test_mul_variant_bit_exact(variant):
    rng = np.random.default_rng(15)
    for k in range(700):
        case = _mul_case(rng, k)
        ref = _mul(*case, variant=0)
        got = _mul(*case, variant=variant, rng=rng, inplace=k % 3 == 0)
        np.testing.assert_array_equal(got, ref, err_msg=f"case {k}: {case[2:]}")


@pytest.mark.parametrize("variant", VARIANTS)
def test_mul_variant_every_code_pair(variant):
    """All 256 x 256 code pairs (full operand), MobileNetV3-like qparams and a relu clamp."""
    a = np.repeat(np.arange(256, dtype=np.uint8), 256).reshape(256, 256)
    b = np.tile(np.arange(256, dtype=np.uint8), 256)
    for za, zb, m, zo, relu in ((3, 0, 0.0123, 2, False), (128, 128, 1.0 / 128, 128, True),
                                (255, 0, 0.5, 0, False)):
        lo, hi = (0.0 if relu else float(-zo)), float(255 - zo)
        args = (a, b, False, za, zb, m, lo, hi, float(zo))
        np.testing.assert_array_equal(_mul(*args, variant=variant), _mul(*args, variant=0))


@pytest.mark.parametrize("threads", (2, 3, 4))
def test_mul_threads_bit_identical(cut_everything, threads):
    rng = np.random.default_rng(16)
    for shape in ((1, 120, 28, 28), (1, 960, 7, 7), (2, 5, 3, 11), (1, 3, 1, 1), (1, 1, 13, 17)):
        rows, length = shape[0] * shape[1], shape[2] * shape[3]
        a = rng.integers(0, 256, (rows, length), dtype=np.uint8)
        for per_row in (True, False):
            b = rng.integers(0, 256, rows if per_row else rows * length, dtype=np.uint8)
            args = (a, b, per_row, 3, 128, 0.0123, -3.0, 252.0, 3.0)
            qrt.set_num_threads(1)
            ref = _mul(*args, variant=0)
            qrt.set_num_threads(threads)
            np.testing.assert_array_equal(_mul(*args, variant=-1), ref, err_msg=str(shape))


def _lut_case(rng, k):
    n = k % 201 if k < 402 else int(rng.integers(256, 3000))
    x = rng.integers(0, 256, n, dtype=np.uint8)
    if n >= 256:
        x[:256] = np.arange(256)
    return rng.integers(0, 256, 256, dtype=np.uint8), rng.integers(0, 256, 256, dtype=np.uint8), x


@pytest.mark.parametrize("variant", VARIANTS)
def test_lut_variant_bit_exact(variant):
    rng = np.random.default_rng(17)
    for k in range(600):
        table, tail, x = _lut_case(rng, k)
        expect = table[x]
        xu = _unaligned(rng, x)
        out = xu if k % 3 == 0 else np.full_like(x, 0xA5)
        _ops.lut(_unaligned(rng, table), xu, out, variant=variant)
        np.testing.assert_array_equal(out, expect, err_msg=f"case {k}")
        nvec = int(rng.integers(0, x.size + 1))
        out = np.full_like(x, 0xA5)
        _ops.lut2(table, tail, _unaligned(rng, x), out, nvec, variant=variant)
        np.testing.assert_array_equal(out, np.where(np.arange(x.size) < nvec, table[x], tail[x]))


@pytest.mark.parametrize("threads", (2, 3, 4))
def test_lut_threads_bit_identical(cut_everything, threads):
    rng = np.random.default_rng(18)
    qrt.set_num_threads(threads)
    for n in (200704, 47040, 129, 4097, 1):
        table, tail, x = _lut_case(rng, 1000)
        x = rng.integers(0, 256, n, dtype=np.uint8)
        out = np.full_like(x, 0xA5)
        _ops.lut(table, x, out)
        np.testing.assert_array_equal(out, table[x])
        for nvec in (n - n % 64, n // 3, 0):
            out = np.full_like(x, 0xA5)
            _ops.lut2(table, tail, x, out, nvec)
            np.testing.assert_array_equal(out, np.where(np.arange(n) < nvec, table[x], tail[x]))


def test_isa_codes():
    assert _ops.mul_isa() in (0, 1, 2, 3) and _ops.lut_isa() in (0, 1, 2, 3)
    with pytest.raises(ValueError):
        _ops._set_eltwise_mt_min(-1, 0)


def test_eltwise_c_driver_sanitized(tmp_path):
    """tests/c/eltwise_sanitize.c under AddressSanitizer + UBSan: every variant this CPU runs,
    on 1 and 3 threads, == the reference on exact-size, unaligned buffers."""
    run_c_driver(tmp_path, "eltwise_sanitize.c", (400 if UNDER_QEMU else 1500, 3))


_CROSS = {
    "aarch64": ("aarch64-linux-gnu-gcc", "qemu-aarch64", ("cortex-a72",)),
    "armv7": ("arm-linux-gnueabihf-gcc", "qemu-arm", ("cortex-a7",)),
}


@pytest.mark.parametrize("arch", list(_CROSS))
def test_neon_eltwise_harness_under_qemu(tmp_path, arch):
    """tests/c/eltwise_arm_harness.c: random calls of the NEON mul and QNNPACK add (aarch64 and
    armv7) and the aarch64 NEON table lookup == the references, canaries after every output."""
    cc, qemu, cpus = _CROSS[arch]
    if os.environ.get("QRT_UNDER_QEMU"):
        pytest.skip("a host-side cross check; it runs in the x86-64 suite")
    if not (shutil.which(cc) and shutil.which(qemu)):
        pytest.skip(f"needs {cc} and {qemu}")
    (tmp_path / "math.h").write_text("float rintf(float);\nlong lrintf(float);\n"
                                     "float ldexpf(float, int);\n"
                                     "float fmaf(float, float, float);\n")
    (tmp_path / "string.h").write_text("#include <stddef.h>\nvoid *memcpy(void *, const void *, "
                                       "size_t);\nvoid *memset(void *, int, size_t);\n")
    exe = tmp_path / f"eltwise-{arch}"
    r = subprocess.run([cc, "-std=c11", "-O3", "-ffp-contract=off", "-ffreestanding", "-nostdlib",
                        "-static", "-fno-stack-protector", "-fno-tree-loop-distribute-patterns",
                        "-Wall", "-Werror", "-I", os.path.join(ROOT, "include"),
                        "-I", str(tmp_path),
                        os.path.join(ROOT, "tests", "c", "eltwise_arm_harness.c"), "-o", str(exe),
                        "-lgcc"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for i, cpu in enumerate(cpus):
        out = subprocess.run([qemu, "-cpu", cpu, str(exe)],
                             input=struct.pack("<IIII", 0, 800, 7 + i, 0),
                             capture_output=True, timeout=300)
        text = out.stdout.decode(errors="replace")
        assert out.returncode == 0 and text.startswith("ok 800"), f"{arch} {cpu}: {text}"

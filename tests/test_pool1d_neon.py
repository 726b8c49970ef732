# SPDX-License-Identifier: Apache-2.0
"""The NEON pooling variants (include/qrt/neon/pool1d_neon.h) equal the reference, byte for
byte: tests/c/pool1d_harness.c cross-compiled for aarch64 (qemu-aarch64 -cpu cortex-a72, a
Pi 4) and armv7 (Debian armhf's VFPv3-D16 baseline, so the variants' target("fpu=neon") is
what enables NEON; qemu-arm -cpu cortex-a7, a Pi 2), run under qemu-user.  The same harness
built natively checks the AVX2 variant.  Each run: random geometries, inputs touching a
PROT_NONE page, canaries around the outputs.  Skipped when the cross tools are missing."""

import os
import shutil
import subprocess

import pytest

from qrt import _cpu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(ROOT, "tests", "c", "pool1d_harness.c")
CASES = "2000"
_TARGETS = {
    "aarch64": ("aarch64-linux-gnu-gcc", ["qemu-aarch64", "-cpu", "cortex-a72"], []),
    "armv7": ("arm-linux-gnueabihf-gcc", ["qemu-arm", "-cpu", "cortex-a7"],
              ["-march=armv7-a", "-mfpu=vfpv3-d16", "-mfloat-abi=hard"]),
    "x86_64-avx2": ("gcc", [], []),
}


def _build(tmp_path, cc, flags):
    # no target libc headers: math.h maps to the compiler builtins
    (tmp_path / "math.h").write_text("#define rintf __builtin_rintf\n"
                                     "#define isfinite __builtin_isfinite\n")
    exe = tmp_path / "pool1d_harness"
    r = subprocess.run([cc, "-std=c11", "-O3", "-ffp-contract=off", "-ffreestanding",
                        "-nostdlib", "-static", "-fno-stack-protector", "-Wall", "-Wextra",
                        "-Werror", *flags, "-I", os.path.join(ROOT, "include"), "-I",
                        str(tmp_path), HARNESS, "-o", str(exe), "-lgcc"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return exe


@pytest.mark.parametrize("arch", list(_TARGETS))
def test_pool1d_simd_harness(tmp_path, arch):
    cc, runner, flags = _TARGETS[arch]
    if os.environ.get("QRT_UNDER_QEMU"):
        pytest.skip("a host-side cross check; it runs in the x86-64 suite")
    if arch == "x86_64-avx2":
        import platform
        if platform.machine() != "x86_64" or not _cpu.features(raw=True)["avx2"]:
            pytest.skip("needs an x86-64 CPU with AVX2")
    if not shutil.which(cc) or (runner and not shutil.which(runner[0])):
        pytest.skip(f"needs {cc}" + (f" and {runner[0]}" if runner else ""))
    exe = _build(tmp_path, cc, flags)
    out = subprocess.run([*runner, str(exe), CASES], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("ok " + CASES), \
        (out.returncode, out.stdout, out.stderr[-2000:])
    assert int(out.stdout.split()[2]) > 100_000  # outputs compared

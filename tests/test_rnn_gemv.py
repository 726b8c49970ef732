# SPDX-License-Identifier: Apache-2.0
"""The recurrent step loop's packed hidden-projection GEMVs (include/qrt/rnn_gemv.h: AVX2,
AVX-512 VNNI, NEON, each with the whole loop compiled in its unit) equal the reference loop
(hidden_gemv, compiled with the baseline flags) bit for bit: h, c and every output of every
step.  No torch: this runs under qemu on ARM too (the NEON variant).  Also
tests/c/rnn_gemv_harness.c: the GEMVs alone against the formula, cross-compiled for aarch64
and armv7 and run under qemu-user (and natively for AVX2), as tests/test_pool1d_neon.py."""

import os
import platform
import shutil
import subprocess

import numpy as np
import pytest

import qrt.nn as nn
from qrt import _conv1d
from qrt.ops import rnn as R

_ISAS = {"avx2": 1, "avx512vnni": 2, "neon": 3}


@pytest.fixture
def variant():
    yield
    _conv1d.rnn_gemv_variant(-1)


def _run(m, mode, gates, hidden, batch, steps, gi, h0, c0, isa):
    assert _conv1d.rnn_gemv_variant(isa) == isa
    gh_n = gates * hidden
    g = R._Gemm(m, batch, "t")
    h, c = h0.copy(), c0.copy()
    y = np.zeros(steps * batch * hidden, np.float32)
    _conv1d.rnn_run(g.plan, mode, gates, g.ws, g.rs, gi, 0, batch * gh_n, gh_n, y, 0,
                    batch * hidden, hidden, h, c, np.empty(batch * gh_n, np.float32), g.xq1,
                    steps, bool(mode & 1))
    return y, h, c


@pytest.mark.parametrize("isa", list(_ISAS))
@pytest.mark.parametrize("mode,gates", [(0, 4), (1, 3), (2, 1), (3, 1)])
@pytest.mark.parametrize("hidden,batch", [(1, 1), (3, 2), (7, 3), (13, 1), (33, 2), (64, 1),
                                          (130, 2)])
def test_packed_gemv_loop_equals_reference(rng, variant, isa, mode, gates, hidden, batch):
    if _conv1d.rnn_gemv_variant(_ISAS[isa]) != _ISAS[isa]:
        pytest.skip(f"this CPU has no {isa}")
    gh_n = gates * hidden
    m = nn.DynamicLinear(hidden, gh_n, bias=True)
    # full-range weights (-128 and 127 included) and zero points, per channel
    w = rng.integers(-128, 128, (gh_n, hidden, 1), dtype=np.int8)
    w.reshape(-1)[0], w.reshape(-1)[-1] = -128, 127
    m._install_raw(w, rng.uniform(1e-3, 3e-2, gh_n),
                   rng.integers(-128, 128, gh_n).astype(np.int32),
                   rng.standard_normal(gh_n).astype(np.float32), "per_channel_affine")
    steps = 11
    gi = (rng.standard_normal(steps * batch * gh_n) * 2).astype(np.float32)
    h0 = rng.uniform(-1, 1, batch * hidden).astype(np.float32)
    c0 = rng.uniform(-2, 2, batch * hidden).astype(np.float32)
    ref = _run(m, mode, gates, hidden, batch, steps, gi, h0, c0, 0)
    got = _run(m, mode, gates, hidden, batch, steps, gi, h0, c0, _ISAS[isa])
    for a, b in zip(ref, got):
        np.testing.assert_array_equal(a, b)


def test_unknown_variant_runs_the_reference(variant):
    assert _conv1d.rnn_gemv_variant(0) == 0
    assert _conv1d.rnn_gemv_variant(99) == 0


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TARGETS = {
    "aarch64": ("aarch64-linux-gnu-gcc", ["qemu-aarch64", "-cpu", "cortex-a72"], []),
    "armv7": ("arm-linux-gnueabihf-gcc", ["qemu-arm", "-cpu", "cortex-a7"],
              ["-march=armv7-a", "-mfpu=vfpv3-d16", "-mfloat-abi=hard"]),
    "x86_64-avx2": ("gcc", [], ["-mavx2", "-mfma"]),
}


@pytest.mark.parametrize("arch", list(_TARGETS))
def test_gemv_harness(tmp_path, arch):
    from qrt import _cpu
    cc, runner, flags = _TARGETS[arch]
    if os.environ.get("QRT_UNDER_QEMU"):
        pytest.skip("a host-side cross check; it runs in the x86-64 suite")
    if arch.startswith("x86_64") and (platform.machine() != "x86_64" or
                                      not _cpu.features(raw=True)["avx2"]):
        pytest.skip("needs an x86-64 CPU with AVX2")
    if not shutil.which(cc) or (runner and not shutil.which(runner[0])):
        pytest.skip(f"needs {cc}" + (f" and {runner[0]}" if runner else ""))
    # no target libc headers: math.h and string.h map to the compiler builtins
    (tmp_path / "math.h").write_text("#define isfinite __builtin_isfinite\n")
    (tmp_path / "string.h").write_text("#include <stddef.h>\n#define memcpy __builtin_memcpy\n")
    exe = tmp_path / "rnn_gemv_harness"
    r = subprocess.run([cc, "-std=c11", "-O3", "-ffp-contract=off", "-ffreestanding",
                        "-nostdlib", "-static", "-fno-stack-protector", "-Wall", "-Wextra",
                        "-Werror", *flags, "-I", os.path.join(_ROOT, "include"), "-I",
                        str(tmp_path), os.path.join(_ROOT, "tests", "c", "rnn_gemv_harness.c"),
                        "-o", str(exe), "-lgcc"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = subprocess.run([*runner, str(exe), "1500"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("ok 1500"), \
        (out.returncode, out.stdout, out.stderr[-2000:])
    assert int(out.stdout.split()[2]) > 50_000  # outputs compared


@pytest.mark.parametrize("isa", ["ref"] + list(_ISAS))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("hidden", [5, 16, 37])
def test_non_finite_state_is_refused_by_every_variant(rng, variant, isa, bad, hidden):
    code = 0 if isa == "ref" else _ISAS[isa]
    if _conv1d.rnn_gemv_variant(code) != code:
        pytest.skip(f"this CPU has no {isa}")
    m = nn.DynamicLinear(hidden, 4 * hidden, bias=True)
    m._install_raw(rng.integers(-128, 128, (4 * hidden, hidden, 1), dtype=np.int8),
                   np.full(4 * hidden, 0.01), np.zeros(4 * hidden, np.int32),
                   np.zeros(4 * hidden, np.float32), "per_tensor_affine")
    h0 = rng.uniform(-1, 1, hidden).astype(np.float32)
    h0[hidden - 1 - hidden // 3] = bad
    gi = np.zeros(3 * 4 * hidden, np.float32)
    with pytest.raises(ValueError, match="NaN or infinity"):
        _run(m, 0, 4, hidden, 1, 3, gi, h0, np.zeros(hidden, np.float32), code)

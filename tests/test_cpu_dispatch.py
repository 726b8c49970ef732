# SPDX-License-Identifier: Apache-2.0
"""Run-time CPU dispatch: detected features, the variant each family selects, and the override.

Under qemu-user (tools/test-wheels-arm.sh) the emulated CPU model is known, so the selected
variants are asserted exactly: a Pi 4 (cortex-a72, no dot product) must select "neon" and so
never executes an sdot (qemu raises SIGILL for it on that model), a Pi 5 (cortex-a76) "neondot".
"""

import ast
import os
import platform
import subprocess
import sys

import pytest

from qrt import _cpu

from _qemu import QEMU_CPU, UNDER_QEMU

# qemu -cpu model -> (dotprod, conv1d variant).  Pi 3 / Zero 2: A53; Pi 4: A72; Pi 5: A76.
EXPECTED_ARM = {
    "cortex-a53": (False, "neon"),
    "cortex-a72": (False, "neon"),
    "cortex-a76": (True, "neondot"),
    "max": (True, "neondot"),
    "cortex-a7": (False, "neon"),  # 32-bit: Pi 2
    "cortex-a15": (False, "neon"),
}

FEATURES = {"neon", "dotprod", "avx2", "avx512vnni"}


def test_cpu_features_shape():
    for raw in (False, True):
        f = _cpu.features(raw=raw)
        assert set(f) == FEATURES
        assert all(isinstance(v, bool) for v in f.values())
    assert set(_cpu.selected()) >= {"quantize", "conv1d", "add", "activation", "pool1d"}


def test_cpu_compiled_for_this_machine():
    m = platform.machine()
    expected = {"aarch64": "aarch64", "arm64": "aarch64", "x86_64": "x86_64", "AMD64": "x86_64",
                "armv7l": "armv7", "armv8l": "armv7"}.get(m, "other")
    if m in ("aarch64", "arm64") and sys.maxsize < 2**32:
        expected = "armv7"  # 32-bit userland on a 64-bit kernel
    assert _cpu.compiled_for == expected


def test_cpu_features_match_architecture():
    f = _cpu.features(raw=True)
    if _cpu.force_ref:
        pytest.skip("built with -Dsimd=ref")
    if _cpu.compiled_for == "aarch64":
        assert f["neon"], "ASIMD is mandatory on AArch64 Linux"
    if _cpu.compiled_for in ("aarch64", "armv7"):
        assert not f["avx2"] and not f["avx512vnni"]
    if _cpu.compiled_for == "armv7":
        assert not f["dotprod"], "qrt does not use the AArch32 dot product"
    if _cpu.compiled_for == "x86_64":
        assert not f["neon"] and not f["dotprod"]
    if f["dotprod"]:
        assert f["neon"]


def test_cpu_conv1d_selection_follows_features():
    f, sel = _cpu.features(), _cpu.selected()["conv1d"]
    if _cpu.force_ref:
        assert sel == "ref"
    elif _cpu.compiled_for in ("aarch64", "armv7"):
        assert sel == ("neondot" if f["dotprod"] else "neon" if f["neon"] else "ref")
    elif _cpu.compiled_for == "x86_64":
        # AVX2 hosts (Haswell .. Zen 3) take the AVX2 variant; this was "ref" until the suite
        # first ran on such a host (2026-12-04, Zen 3)
        assert sel == ("avx512vnni" if f["avx512vnni"] else "avx2" if f["avx2"] else "ref")


@pytest.mark.skipif(not UNDER_QEMU, reason="needs a known qemu CPU model (QRT_UNDER_QEMU=1)")
def test_cpu_qemu_model_selects_expected_variant():
    if QEMU_CPU not in EXPECTED_ARM:
        pytest.skip(f"no expectation recorded for qemu -cpu {QEMU_CPU!r}")
    dotprod, variant = EXPECTED_ARM[QEMU_CPU]
    assert _cpu.features()["dotprod"] is dotprod
    assert _cpu.features()["neon"] is True
    assert _cpu.selected()["conv1d"] == variant


def _child_report(env_extra):
    env = dict(os.environ, **env_extra)
    code = "import qrt._cpu as c; print(sorted(k for k, v in c.features().items() if v)); " \
           "print(c.selected())"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300, check=True)
    feats, sel = r.stdout.strip().splitlines()
    sel = ast.literal_eval(sel)
    _child_report.selected = sel
    return ast.literal_eval(feats), sel["conv1d"]


# Each case starts a fresh interpreter (the variable is read once per process), which costs
# seconds under emulation: only the cases that matter on this architecture.
_DISABLE_CASES = (["dotprod", "neon"] if _cpu.compiled_for in ("aarch64", "armv7")
                  else ["avx2,avx512vnni", "all"])


@pytest.mark.parametrize("disable", _DISABLE_CASES)
def test_cpu_disable_override(disable):
    raw = {k for k, v in _cpu.features(raw=True).items() if v}
    gone = {"all": FEATURES, "neon": {"neon", "dotprod"}}.get(disable, set(disable.split(",")))
    feats, conv = _child_report({"QRT_DISABLE_ISA": disable})
    assert set(feats) == raw - gone
    x86_all = disable == "avx2,avx512vnni" and _cpu.compiled_for == "x86_64"
    if disable in ("neon", "all") or x86_all:
        assert conv == "ref"
        # every kernel family honours the override, not only conv1d
        assert set(_child_report.selected.values()) == {"ref"}, _child_report.selected
    if disable == "dotprod" and "neon" in raw and _cpu.compiled_for != "x86_64":
        assert conv == "neon"


# ---- conv1d: every variant this CPU runs is bit-exact with the C reference -------------------
def _conv_all_variants(rng, n, c_in, c_out, length, k, stride=1, dilation=1, pad=0, groups=1,
                       layout="ncl", extreme=False, f32=False):
    import numpy as np

    from qrt import _conv1d

    cg = c_in // groups
    if extreme:  # largest |(x - xz)(w - wz)| products: the exact-accumulator bound
        x = rng.choice(np.array([0, 255], np.uint8), size=(n, c_in, length))
        w = rng.choice(np.array([-128, 127], np.int8), size=(c_out, cg, k))
        wz = rng.choice(np.array([-128, 127], np.int32), size=c_out)
        xz = int(rng.choice([0, 255]))
    else:
        x = rng.integers(0, 256, (n, c_in, length), dtype=np.uint8)
        w = rng.integers(-128, 128, (c_out, cg, k), dtype=np.int8)
        wz = rng.integers(-128, 128, c_out, dtype=np.int32)
        xz = int(rng.integers(0, 256))
    if layout == "nlc":  # channels-last view: channel stride 1 (the linear layout)
        x = np.ascontiguousarray(x.transpose(0, 2, 1)).transpose(0, 2, 1)
    elif layout == "reversed":  # negative time stride
        x = np.ascontiguousarray(x[:, :, ::-1])[:, :, ::-1]
    len_out = (length + 2 * pad - dilation * (k - 1) - 1) // stride + 1
    bias_q = rng.integers(-50000, 50000, c_out, dtype=np.int32)
    scale = rng.uniform(1e-5, 2e-3, c_out).astype(np.float32)
    bias_f = rng.standard_normal(c_out).astype(np.float32)
    wpack = np.zeros(_conv1d.packed_weight_size(c_out, cg, k), np.int8)
    wsum = np.zeros(c_out, np.int32)
    _conv1d.pack_weights(w, wpack, wsum)
    outs = {}
    for v in (0, 3, -1):  # reference, baseline NEON (where supported), best for this CPU
        out = np.zeros((n, c_out, len_out), np.float32 if f32 else np.uint8)
        need = _conv1d.scratch_size(n, c_in, c_out, length, len_out, k, stride, dilation, pad,
                                    groups, variant=v)
        _conv1d.conv1d(x, w, wpack, wsum, wz, bias_q, scale, bias_f, out,
                       np.zeros(need, np.uint8), stride=stride, dilation=dilation,
                       pad_left=pad, groups=groups, input_zero=xz,
                       output_zero=128,
                       variant=v)
        outs[_conv1d.variant(v)] = out
    return outs


# Reduction lengths c_in/groups * K straddle the 16- and 32-byte NEON/sdot tiles and the
# 2048-tap gather chunk.
CONV_CASES = [
    dict(n=1, c_in=15, c_out=3, length=9, k=1),
    dict(n=1, c_in=16, c_out=3, length=9, k=1, layout="nlc"),
    dict(n=2, c_in=17, c_out=5, length=12, k=1, layout="nlc", pad=1),
    dict(n=1, c_in=11, c_out=4, length=20, k=3, stride=2, dilation=2, pad=3),
    dict(n=1, c_in=32, c_out=4, length=10, k=1, extreme=True),
    dict(n=1, c_in=33, c_out=6, length=14, k=3, pad=1, extreme=True, layout="reversed"),
    dict(n=1, c_in=12, c_out=12, length=16, k=5, groups=12, pad=2),
    dict(n=1, c_in=8, c_out=6, length=18, k=4, groups=2, layout="nlc", f32=True),
    dict(n=1, c_in=2048, c_out=2, length=2, k=1, layout="nlc"),
    dict(n=1, c_in=683, c_out=2, length=5, k=3, pad=1, extreme=True),  # 2049 taps: 2 chunks
    dict(n=1, c_in=700, c_out=3, length=4, k=3, f32=True),
]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_cpu_conv1d_variants_bit_exact(case):
    import numpy as np

    outs = _conv_all_variants(np.random.default_rng(1000 + case), **CONV_CASES[case])
    ref = outs.pop(0)
    for v, out in outs.items():
        np.testing.assert_array_equal(out, ref, err_msg=f"variant {v} vs reference")
    if not _cpu.force_ref and _cpu.compiled_for in ("aarch64", "armv7") and _cpu.features()["neon"]:
        assert 3 in outs  # the baseline NEON variant really ran
        if _cpu.features()["dotprod"]:
            assert 4 in outs  # ... and so did the sdot one

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
    assert set(_cpu.selected()) >= {"quantize", "conv1d"}


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
        assert sel == ("avx512vnni" if f["avx512vnni"] else "ref")


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
           "print(c.selected()['conv1d'])"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300, check=True)
    feats, conv = r.stdout.strip().splitlines()
    return ast.literal_eval(feats), conv


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
    if disable in ("neon", "all") or (disable == "avx2,avx512vnni" and _cpu.compiled_for == "x86_64"):
        assert conv == "ref"
    if disable == "dotprod" and "neon" in raw and _cpu.compiled_for != "x86_64":
        assert conv == "neon"

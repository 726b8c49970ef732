# SPDX-License-Identifier: Apache-2.0
"""Helpers for running the suite under qemu-user (tools/test-wheels-arm.sh).

Used two ways, neither of which touches tests/conftest.py:

* as a pytest plugin, ``pytest -p _qemu`` (the script puts tests/ on PYTHONPATH): under
  emulation it points ``sys.executable`` at a host launcher script that starts the guest
  interpreter again under the same qemu CPU model, because qemu-user does not intercept
  ``execve`` and a bare ``[sys.executable, ...]`` would fail with "Exec format error";
* as a module, ``from _qemu import UNDER_QEMU, QEMU_CPU, skip_under_qemu`` in a test file, for a
  test that still cannot run emulated (``@skip_under_qemu("why")``).

Outside emulation everything here is inert.
"""

import os
import sys

import pytest

UNDER_QEMU = os.environ.get("QRT_UNDER_QEMU") == "1"
"""True when the suite runs under qemu-user (set by tools/test-wheels-arm.sh)."""

QEMU_CPU = os.environ.get("QRT_QEMU_CPU", "") if UNDER_QEMU else ""
"""The emulated CPU model (qemu's -cpu name, e.g. cortex-a72), or "" when native."""


def skip_under_qemu(reason: str):
    """Mark a test to be skipped under qemu-user emulation, giving ``reason``."""
    return pytest.mark.skipif(UNDER_QEMU, reason=f"under qemu-user ({QEMU_CPU}): {reason}")


def pytest_configure(config):
    launcher = os.environ.get("QRT_QEMU_PYTHON")
    if UNDER_QEMU and launcher:
        sys.executable = launcher  # subprocess/multiprocessing-spawn re-enter the guest


def pytest_report_header(config):
    if UNDER_QEMU:
        return f"qrt: under qemu-user, -cpu {QEMU_CPU}; sys.executable -> {sys.executable}"
    return None

# SPDX-License-Identifier: Apache-2.0
"""Build one of the C drivers in tests/c/ and run it: the steps every driver test shares.

A driver prints "ok <cases>" and exits 0 when every case matched; the build includes the
sources it tests itself (``#include "../../src/..."``).  No compiler, or one that cannot build
the driver here (a cross host, a sanitizer runtime missing): the test skips."""

import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SANITIZE = ["-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]


def run_c_driver(tmp_path, source, args, flags=SANITIZE, timeout=300):
    """Compile tests/c/``source`` with ``flags`` (ASan + UBSan by default) and run it with
    ``args``; assert it ends "ok"."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    exe = tmp_path / (pathlib.Path(source).stem + "_" + str(abs(hash(tuple(flags))) % 10**6))
    cmd = [cc, "-std=c11", "-g", "-ffp-contract=off", *flags, f"-I{ROOT / 'include'}",
           str(ROOT / "tests" / "c" / source), "-o", str(exe), "-lpthread", "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot build the C driver: {r.stderr[-500:]}")
    r = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0 and r.stdout.startswith("ok "), r.stdout + r.stderr[-3000:]

# SPDX-License-Identifier: Apache-2.0
"""The backend registry: cupy stays unimported, and a missing CuPy or GPU is a clear error."""

import os
import subprocess
import sys

import numpy as np
import pytest

import qrt
from qrt import backends


def _run(code):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_cuda_import_qrt_never_imports_cupy():
    out = _run("import sys, qrt, qrt.backends, qrt.functional\n"
               "from qrt.backends import _qparams\n"
               "print('cupy' in sys.modules, 'cupy_backend' in str(list(sys.modules)))")
    assert out.split() == ["False", "False"]


def test_cuda_missing_cupy_is_a_clear_error():
    out = _run("import sys\n"
               "sys.modules['cupy'] = None  # as if CuPy were not installed\n"
               "from qrt import backends\n"
               "try:\n"
               "    backends.get('cupy')\n"
               "except backends.BackendUnavailable as e:\n"
               "    print('ERR', e)\n"
               "print(backends.available('cupy'), backends.available('cpu'))")
    assert "ERR device 'cuda' needs CuPy" in out
    assert "pip install qrt[gpu]" in out and "cupy-cuda13x" in out
    assert out.strip().endswith("False True")


def test_cuda_load_without_gpu_says_what_is_missing(tmp_path):
    if backends.available("cupy"):
        pytest.skip("a CUDA GPU is available here")
    with pytest.raises(backends.BackendUnavailable, match="needs (CuPy|an NVIDIA GPU)"):
        backends.load(str(tmp_path / "absent.bin"), device="cuda")
    with pytest.raises(backends.BackendUnavailable):
        backends.get("cupy")
    with pytest.raises(backends.BackendUnavailable, match="needs (CuPy|an NVIDIA GPU)"):
        qrt.load(str(tmp_path / "absent.bin"), device="cuda")
    with pytest.raises(ValueError, match="device="):
        qrt.load(str(tmp_path / "absent.bin"), device="tpu")


def test_cuda_device_names():
    assert backends.canonical_device("cpu") == "cpu"
    assert backends.canonical_device("cuda") == "cupy"
    assert backends.canonical_device("cuda:1") == "cupy"
    with pytest.raises(ValueError, match="device='tpu'"):
        backends.canonical_device("tpu")
    with pytest.raises(ValueError, match="index"):
        backends.canonical_device("cuda:x")
    with pytest.raises(TypeError, match="device must be a string"):
        backends.canonical_device(0)
    with pytest.raises(ValueError, match="unknown backend"):
        backends.get("rocm")
    with pytest.raises(ValueError, match="use qrt.load"):
        backends.load("m.bin", device="cpu")


def test_cuda_dispatch_leaves_cpu_calls_alone():
    calls = []

    @backends.device_dispatch("relu")
    def relu(x):
        calls.append(x)
        return "cpu"

    q = qrt.quantize_per_tensor(np.ones(3, np.float32), 0.1, 3, qrt.quint8)
    assert relu(q) == "cpu" and calls == [q]
    assert relu.__name__ == "relu"
    assert not backends.is_device_tensor(q)
    assert not backends.is_device_tensor(np.zeros(2))

    class Fake:
        _qrt_device = "cuda"

    assert backends.is_device_tensor(Fake())
    if not backends.available("cupy"):
        with pytest.raises(backends.BackendUnavailable):
            relu(Fake())

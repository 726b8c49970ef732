# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures: rng, the torch oracle (optional), the qnnpack engine, the gpu marker.

torch is optional: oracle tests take the ``torch`` fixture (skipped without torch) or use
``requires_torch``; every such test has a golden-vector twin in tests/data so that a run
without torch still checks the same arithmetic.
"""

from __future__ import annotations

import importlib.util
import os
import warnings

import numpy as np
import pytest

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
TORCH_VERSION = "2.13.0"

HAVE_TORCH = importlib.util.find_spec("torch") is not None
requires_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed")


def pytest_configure(config):
    # torch 2.13 warns on every quantized tensor and observer (deprecations); not our concern.
    config.addinivalue_line("filterwarnings", "ignore::UserWarning:torch")
    config.addinivalue_line("filterwarnings", "ignore::DeprecationWarning:torch")
    config.addinivalue_line("filterwarnings", "ignore::FutureWarning:torch")
    config.addinivalue_line("filterwarnings",
                            "ignore:.*quantized tensor creation functions.*:UserWarning")


@pytest.fixture(scope="session", autouse=True)
def _run_outside_the_source_tree(tmp_path_factory):
    """Run every test from an empty directory.

    Subprocesses started with ``python -c`` put their working directory first on sys.path; from
    the repository root that would import the uncompiled source folder ``qrt/`` instead of the
    installed package.
    """
    old = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(old)


def _have_cupy_gpu() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no driver, no device
        return False


def pytest_collection_modifyitems(config, items):
    """Skip tests marked ``gpu`` unless CuPy sees an NVIDIA GPU."""
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    if _have_cupy_gpu():
        return
    skip = pytest.mark.skip(reason="needs CuPy and an NVIDIA GPU")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)


@pytest.fixture
def rng(request):
    """A numpy Generator seeded from the test's name: reproducible, different per test."""
    seed = int.from_bytes(request.node.nodeid.encode(), "little") % (2**63)
    return np.random.default_rng(seed)


@pytest.fixture(scope="session")
def torch():
    """The torch module (the oracle); skips the test when torch is not installed.

    Quantized-dtype deprecation warnings (torch 2.13, pytorch#184982) are silenced.
    """
    if not HAVE_TORCH:
        pytest.skip("torch is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch as _torch
    warnings.filterwarnings("ignore", message=".*quantiz.*", category=UserWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning, module="torch")
    if _torch.__version__.split("+")[0] != TORCH_VERSION:
        warnings.warn(f"torch {_torch.__version__} is not the oracle version {TORCH_VERSION}; "
                      "mismatches may be torch's changes, not qrt bugs")
    return _torch


@pytest.fixture
def qnnpack(torch):
    """torch with ``torch.backends.quantized.engine = 'qnnpack'`` for the test; restored after."""
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = "qnnpack"
    try:
        yield torch
    finally:
        torch.backends.quantized.engine = old


@pytest.fixture
def no_warnings_from_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def golden_path(name: str) -> str:
    """Path of tests/data/<name>."""
    return os.path.join(DATA_DIR, name)


def load_golden(name: str):
    """Load tests/data/<name> (an .npz); a missing golden file fails the test (never a skip:
    a checkout without its goldens must not pass silently)."""
    p = golden_path(name)
    if not os.path.exists(p):
        pytest.fail(f"golden file {name} is missing (regenerate with tools/gen_golden.py)")
    return np.load(p, allow_pickle=False)


def assert_bits_equal(a, b, what=""):
    """Exact equality; floats compared by bit pattern (so -0.0 != 0.0), NaN equal to NaN."""
    a = np.asarray(a)
    b = np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}"
        ia = a.view(np.dtype(f"u{a.dtype.itemsize}"))
        ib = b.view(np.dtype(f"u{b.dtype.itemsize}"))
        # any NaN equals any NaN (sign and payload of a NaN scale are not part of the contract)
        bad = (ia != ib) & ~(np.isnan(a) & np.isnan(b))
    else:
        bad = a.astype(np.int64) != b.astype(np.int64)
    if bad.any():
        idx = np.argwhere(bad)[:5]
        raise AssertionError(f"{what}: {int(bad.sum())} of {a.size} differ; first at "
                             f"{idx.tolist()}: {a[tuple(idx.T)]} vs {b[tuple(idx.T)]}")


@pytest.fixture
def qnnpack_engine(torch):
    """torch's quantized engine set to qnnpack (the oracle qrt is exact with) for one test, and
    restored after it; modules use it with ``pytest.mark.usefixtures("qnnpack_engine")``."""
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = "qnnpack"
    yield
    torch.backends.quantized.engine = old

# SPDX-License-Identifier: Apache-2.0
"""One compiled C core per process: every extension module links the same qrt/libqrt_core.so,
so the thread pool and the CPU-feature cache exist once, whichever module sets or reads them.

Each check would fail with the former header-only kernels (one pool and one feature cache per
extension module): the thread count set through qrt._conv1d is read back from the core itself
through ctypes, and the feature cache filled through one module is the one another module reads.
"""

import ctypes
import importlib
import os
import subprocess
import sys

import pytest

import qrt
from qrt import _conv1d, _cpu

MODULES = ["_blob", "_conv1d", "_cpu", "_ops", "_quant", "_storage"]
CORE = os.path.join(os.path.dirname(qrt.__file__), "libqrt_core.so")


def _core():
    lib = ctypes.CDLL(CORE)  # the already loaded object: dlopen returns the same handle
    lib.qrt_pool_get_threads.restype = ctypes.c_int
    lib.qrt_pool_set_threads.argtypes = [ctypes.c_int]
    lib.qrt_cpu_features.restype = ctypes.c_uint
    lib.qrt_isa_name.restype = ctypes.c_char_p
    lib.qrt_isa_name.argtypes = [ctypes.c_int]
    return lib


def test_core_is_installed_beside_the_modules():
    assert os.path.isfile(CORE)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc/self/maps")
def test_one_core_mapped_for_all_modules():
    for m in MODULES:
        importlib.import_module("qrt." + m)
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "libqrt_core" in line}
    assert len(paths) == 1, paths
    assert os.path.samefile(paths.pop(), CORE)


def test_thread_count_is_shared():
    lib = _core()
    old = _conv1d.get_num_threads()
    try:
        _conv1d.set_num_threads(3)
        assert lib.qrt_pool_get_threads() == 3
        lib.qrt_pool_set_threads(2)
        assert _conv1d.get_num_threads() == 2
        qrt.set_num_threads(1)
        assert lib.qrt_pool_get_threads() == 1
    finally:
        _conv1d.set_num_threads(old)


def test_feature_cache_and_names_are_shared():
    lib = _core()
    f = _cpu.features()
    bits = {"neon": 1, "dotprod": 2, "avx2": 4, "avx512vnni": 8}
    assert {k: bool(lib.qrt_cpu_features() & b) for k, b in bits.items()} == f
    assert {v: lib.qrt_isa_name(v).decode() for v in _conv1d.ISA_NAMES} == _conv1d.ISA_NAMES


def test_feature_cache_filled_once_per_process():
    """QRT_DISABLE_ISA is read once per process: a change after the first kernel query (made
    through qrt._conv1d) does not reach qrt._cpu, which reads the same cache."""
    code = (
        "import os\n"
        "from qrt import _conv1d\n"
        "first = _conv1d.isa()\n"
        "os.environ['QRT_DISABLE_ISA'] = 'all'\n"
        "from qrt import _cpu\n"
        "print(_cpu.selected()['conv1d'] == _conv1d.ISA_NAMES[first])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "QRT_DISABLE_ISA"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300, check=True).stdout
    assert out.strip() == "True", out

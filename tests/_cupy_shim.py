# SPDX-License-Identifier: Apache-2.0
"""A stand-in for the few CuPy calls qrt/backends/cupy_backend.py makes, backed by NumPy, whose
``RawModule`` runs the unchanged CUDA kernels on the CPU through tools/cuda_host_harness.

It lets tests/test_backend_cupy.py exercise the backend's Python side (parameter vectors,
argument order and C types, the model's arena and lowering) without a GPU.  Each launch checks
what real CuPy would silently get wrong: every scalar must be a NumPy scalar of exactly the
kernel parameter's C type (np.int64 for long long, np.int32 for int, np.float32 for float), every
pointer a C-contiguous array, and the kernel must be defined in the source the backend compiled.
Not a CuPy replacement: the GPU run of the same tests is tests/test_backend_cupy.py[cuda].
"""

from __future__ import annotations

import ctypes
import re
import types

import numpy as np

_CTYPE_TO_NP = {ctypes.c_longlong: np.int64, ctypes.c_int: np.int32, ctypes.c_float: np.float32}


def make(lib) -> types.ModuleType:
    """A module object named 'cupy' over the harness library ``lib`` (tools/cuda_host_harness)."""
    cp = types.ModuleType("cupy")
    cp.__qrt_shim__ = True
    cp.uint8, cp.int8, cp.int32, cp.int64, cp.float32 = (np.uint8, np.int8, np.int32, np.int64,
                                                         np.float32)
    cp.ndarray = np.ndarray
    cp.asarray = lambda a, dtype=None: np.array(a, dtype=dtype, copy=True)  # host -> "device"
    cp.ascontiguousarray = lambda a, dtype=None: np.ascontiguousarray(a, dtype=dtype)
    cp.empty = lambda shape, dtype=np.float64: np.empty(shape, dtype)
    cp.empty_like = np.empty_like
    cp.zeros = lambda shape, dtype=np.float64: np.zeros(shape, dtype)
    cp.asnumpy = lambda a: np.array(a, copy=True)
    cp.launches = []  # (kernel, grid, block), for tests

    class Device:
        def __init__(self, index=0):
            self.id = int(index)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    class Runtime:
        @staticmethod
        def getDeviceCount():
            return 1

    class Function:
        def __init__(self, name):
            self.name = name
            self.fn = getattr(lib, "h_" + name[len("qrt_cu_"):])

        def __call__(self, grid, block, args):
            types_ = self.fn.argtypes[2:]
            if len(args) != len(types_):
                raise TypeError(f"{self.name}: {len(args)} arguments, the kernel takes "
                                f"{len(types_)}")
            conv = []
            for i, (a, t) in enumerate(zip(args, types_)):
                if t is ctypes.c_void_p:
                    if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
                        raise TypeError(f"{self.name} argument {i}: expected a contiguous device "
                                        f"array, got {type(a).__name__}")
                    conv.append(ctypes.c_void_p(a.ctypes.data))
                else:
                    want = _CTYPE_TO_NP[t]
                    if type(a) is not want:
                        raise TypeError(f"{self.name} argument {i}: CuPy would pass "
                                        f"{type(a).__name__}, the kernel expects {want.__name__}")
                    conv.append(a.item())
            cp.launches.append((self.name, tuple(grid), tuple(block)))
            self.fn(int(grid[0]), int(block[0]), *conv)

    class RawModule:
        def __init__(self, code=None, options=(), **_):
            self.code = code
            self.options = tuple(options)
            if "--fmad=false" not in self.options:
                raise ValueError("qrt's kernels must be compiled with --fmad=false")

        def get_function(self, name):
            if not re.search(rf'extern "C" __global__ void {name}\(', self.code):
                raise KeyError(f"kernel {name} is not defined in the compiled source")
            return Function(name)

    cp.cuda = types.SimpleNamespace(Device=Device, runtime=Runtime)
    cp.RawModule = RawModule
    return cp

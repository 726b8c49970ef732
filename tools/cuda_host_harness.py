# SPDX-License-Identifier: Apache-2.0
"""Build and load the CUDA host harness (tools/cuda_host_harness.cpp + _ref.c) with ctypes.

The harness runs the unchanged kernels of qrt/backends/cuda/*.cu on the CPU next to qrt's C
reference kernels, so tests can compare them bit for bit without a GPU.  Builds are cached by a
hash of every source and flag in ``$QRT_CUDA_HARNESS_CACHE`` (default: <tmp>/qrt-cuda-harness),
so a test session compiles once.  ``QRT_HARNESS_EXTRA_INCLUDE`` (os.pathsep-separated) adds
include directories searched after the repository's ``include/``.
"""

from __future__ import annotations

import ctypes
import glob
import hashlib
import os
import shutil
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUDA_DIR = os.path.join(ROOT, "qrt", "backends", "cuda")
TOOLS = os.path.join(ROOT, "tools")
# Exactness flags: the host branch of qrt_cuda_math.cuh must not be contracted or fast-math'd.
CXXFLAGS = ["-x", "c++", "-std=c++14", "-O2", "-ffp-contract=off", "-fno-fast-math", "-fPIC",
            "-Wall", "-Wextra"]
CFLAGS = ["-std=c11", "-O3", "-ffp-contract=off", "-fno-fast-math", "-fPIC", "-Wall", "-Wextra",
          "-Wno-unused-function"]


def compilers():
    """(c++ compiler, c compiler) found on PATH, or None.

    None under qemu-user emulation (QRT_UNDER_QEMU, set by tools/test-wheels-arm.sh): the
    compilers on PATH there are the x86-64 host's, whose library the emulated Python can't load.
    """
    if os.environ.get("QRT_UNDER_QEMU"):
        return None
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    cc = shutil.which(os.environ.get("CC", "gcc")) or shutil.which("cc")
    return (cxx, cc) if cxx and cc else None


def _includes():
    inc = [os.path.join(ROOT, "include")]
    extra = os.environ.get("QRT_HARNESS_EXTRA_INCLUDE", "")
    inc += [p for p in extra.split(os.pathsep) if p]
    return inc


def _sources():
    files = sorted(glob.glob(os.path.join(CUDA_DIR, "*.cu*")))
    files += [os.path.join(TOOLS, "cuda_host_harness.cpp"),
              os.path.join(TOOLS, "cuda_host_harness_ref.c")]
    for d in _includes():
        files += sorted(glob.glob(os.path.join(d, "qrt", "**", "*.h"), recursive=True))
    # the references are compiled sources, #included by cuda_host_harness_ref.c
    files += sorted(glob.glob(os.path.join(ROOT, "src", "**", "*.[ch]"), recursive=True))
    return files


def build() -> str:
    """Compile (once per source hash) and return the shared library's path."""
    found = compilers()
    if found is None:
        raise RuntimeError("no C/C++ compiler (g++/gcc) on PATH")
    cxx, cc = found
    h = hashlib.sha256()
    for f in _sources():
        h.update(f.encode())
        with open(f, "rb") as fh:
            h.update(fh.read())
    h.update(repr((cxx, cc, CXXFLAGS, CFLAGS, _includes())).encode())
    cache = os.environ.get("QRT_CUDA_HARNESS_CACHE",
                           os.path.join(tempfile.gettempdir(), "qrt-cuda-harness"))
    os.makedirs(cache, exist_ok=True)
    lib = os.path.join(cache, f"harness-{h.hexdigest()[:16]}.so")
    if os.path.exists(lib):
        return lib
    work = tempfile.mkdtemp(dir=cache)
    inc = [f"-I{d}" for d in _includes()]
    ho, ro, tmp = (os.path.join(work, n) for n in ("h.o", "r.o", "lib.so"))
    subprocess.run([cxx, *CXXFLAGS, f"-I{CUDA_DIR}", "-c",
                    os.path.join(TOOLS, "cuda_host_harness.cpp"), "-o", ho],
                   check=True, capture_output=True, text=True)
    subprocess.run([cc, *CFLAGS, *inc, "-c", os.path.join(TOOLS, "cuda_host_harness_ref.c"),
                    "-o", ro], check=True, capture_output=True, text=True)
    subprocess.run([cxx, "-shared", ho, ro, "-o", tmp, "-lm"], check=True, capture_output=True,
                   text=True)
    os.replace(tmp, lib)
    shutil.rmtree(work, ignore_errors=True)
    return lib


def load() -> ctypes.CDLL:
    """The harness library with argument types declared."""
    lib = ctypes.CDLL(build())
    P, N, LL, F, V = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong, ctypes.c_float, None
    sig = {
        "h_conv1d": [N, N, P, P, P, P, P, P, P, P],
        "h_conv1d_dot_dp4a": [N, N, P, P, P, P, P, P, P, P, P],
        "h_quantize_f32_u8": [N, N, P, LL, F, F, F, F, P],
        "h_quantize_f32_s8": [N, N, P, LL, F, F, F, F, P],
        "h_dequantize_u8_f32": [N, N, P, LL, F, N, P],
        "h_dequantize_s8_f32": [N, N, P, LL, F, N, P],
        "h_relu_u8": [N, N, P, LL, N, P],
        "h_relu_s8": [N, N, P, LL, N, P],
        "h_add_u8": [N, N, P, P, LL, N, N, N, F, F, N, N, P],
        "h_max_pool1d_u8": [N, N, P, P, P],
        "h_avg_pool1d_u8": [N, N, P, P, N, F, P],
        "h_adaptive_avg_pool1d_u8": [N, N, P, P, P],
        "h_lut_u8": [N, N, P, LL, P, P, LL, P],
        "h_requant_copy_u8": [N, N, P, LL, LL, F, N, F, F, F, F, P, LL, LL],
        "h_requant_copy_s8": [N, N, P, LL, LL, F, N, F, F, F, F, P, LL, LL],
        "r_conv1d": [P, P, P, P, P, P, P, P],
        "r_quantize_f32_u8": [P, LL, F, F, F, F, P],
        "r_quantize_f32_s8": [P, LL, F, F, F, F, P],
        "r_dequantize_u8_f32": [P, LL, F, N, P],
        "r_dequantize_s8_f32": [P, LL, F, N, P],
        "r_have_conv1d": [],
        "r_have_ops": [],
    }
    if lib.r_have_ops():
        sig.update({
            "r_add_u8": [P, P, LL, F, N, F, N, F, N, N, P],
            "r_relu_u8": [P, LL, N, P],
            "r_max_pool1d_u8": [P, P, P],
            "r_avg_pool1d_u8": [P, P, N, F, P],
            "r_adaptive_avg_pool1d_u8": [P, P, P],
            "r_lut2_u8": [P, LL, P, P, LL, P],
            "r_requant_copy": [N, P, LL, LL, F, N, F, F, F, F, P, LL],
        })
    for name, args in sig.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = V if name.startswith("h_") or name in (
            "r_quantize_f32_u8", "r_quantize_f32_s8", "r_dequantize_u8_f32",
            "r_dequantize_s8_f32", "r_relu_u8", "r_lut2_u8", "r_requant_copy") else N
    return lib

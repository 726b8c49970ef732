# SPDX-License-Identifier: Apache-2.0
"""Every CUDA source compiles with nvcc, and its float arithmetic cannot be contracted.

* Each ``qrt/backends/cuda/*.cu`` compiles on its own to PTX (as NVRTC compiles it at run time),
  and all of them together to sm_80 and sm_90 cubins through ptxas, warnings as errors.
* In the PTX, every float32 add/mul is a ``.rn`` instruction (ptxas never fuses those into an
  FMA, the device equivalent of the CPU's -ffp-contract=off) and ``fma`` appears only in the
  quantize kernels, whose CPU formula is itself an fmaf.
Skipped, with the reason, where nvcc is absent.  Outputs are cached by a hash of the sources and
flags (``$QRT_CUDA_HARNESS_CACHE`` or <tmp>/qrt-cuda-harness), so a session compiles once.
"""

import hashlib
import os
import re
import shutil
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUDA_DIR = os.path.join(ROOT, "qrt", "backends", "cuda")
SOURCES = sorted(f for f in os.listdir(CUDA_DIR) if f.endswith(".cu"))
NVCC = shutil.which("nvcc") or next((p for p in ("/usr/local/cuda/bin/nvcc",)
                                     if os.path.exists(p)), None)
ARCHS = ("80", "90")

needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (CUDA toolkit) is not installed")


def _cache_dir():
    d = os.environ.get("QRT_CUDA_HARNESS_CACHE",
                       os.path.join(tempfile.gettempdir(), "qrt-cuda-harness"))
    os.makedirs(d, exist_ok=True)
    return d


def _digest(*parts):
    h = hashlib.sha256()
    for f in sorted(os.listdir(CUDA_DIR)):
        with open(os.path.join(CUDA_DIR, f), "rb") as fh:
            h.update(f.encode() + fh.read())
    h.update(repr((NVCC,) + parts).encode())
    return h.hexdigest()[:16]


def _nvcc(args, out):
    """Run nvcc unless `out` is cached; return the output path."""
    if os.path.exists(out):
        return out
    tmp = out + ".tmp"
    r = subprocess.run([NVCC, *args, "-o", tmp], capture_output=True, text=True, cwd=CUDA_DIR)
    if r.returncode != 0:
        pytest.fail(f"nvcc {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}")
    os.replace(tmp, out)
    return out


@pytest.fixture(scope="module")
def ptx():
    if NVCC is None:
        pytest.skip("nvcc (CUDA toolkit) is not installed")
    """{file: PTX text} for each source compiled alone (sm_80 PTX; JIT-compatible with sm_90)."""
    out = {}
    for src in SOURCES:
        flags = ["--ptx", "-arch=compute_80", "--Werror", "all-warnings", "-std=c++14"]
        path = os.path.join(_cache_dir(), f"{src}-{_digest(src, *flags)}.ptx")
        _nvcc(flags + [src], path)
        with open(path, encoding="utf-8") as f:
            out[src] = f.read()
    return out


@needs_nvcc
def test_cuda_sources_build_cubins_for_sm80_and_sm90():
    work = _cache_dir()
    unit = os.path.join(work, f"qrt_all_{_digest('unit')}.cu")
    with open(unit, "w", encoding="utf-8") as f:
        f.write("".join(f'#include "{s}"\n' for s in SOURCES))
    flags = ["-c", "--Werror", "all-warnings", "-std=c++14", f"-I{CUDA_DIR}"]
    for a in ARCHS:
        flags += ["-gencode", f"arch=compute_{a},code=sm_{a}"]
    obj = _nvcc(flags + [unit], os.path.join(work, f"qrt_all_{_digest('cubin', *flags)}.o"))
    assert os.path.getsize(obj) > 0


def test_cuda_every_kernel_is_in_the_ptx(ptx):
    from qrt.backends import cuda_source_dir
    # The package ships exactly the sources compiled here (installed copy or the tree itself).
    for name in SOURCES:
        with open(os.path.join(cuda_source_dir(), name), "rb") as a, \
                open(os.path.join(CUDA_DIR, name), "rb") as b:
            assert a.read() == b.read(), f"installed {name} differs from the source tree"
    import ast
    with open(os.path.join(ROOT, "qrt", "backends", "cupy_backend.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    table = next(n.value for n in ast.walk(tree)
                 if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_SOURCES")
    kernels = ast.literal_eval(table)
    for kernel, src in kernels.items():
        assert src in ptx, f"{src} (for {kernel}) is not a CUDA source"
        assert re.search(rf"\.entry\s+{kernel}\s*\(", ptx[src]), f"{kernel} not found in {src}"


_FLOAT_OP = re.compile(r"^\s*(?:@!?%p\d+\s+)?(add|sub|mul|fma|mad|div)((?:\.[a-z0-9]+)*)\.f32\s",
                       re.M)


def test_cuda_float_ops_are_round_to_nearest_and_uncontracted(ptx):
    seen = 0
    for src, text in ptx.items():
        for m in _FLOAT_OP.finditer(text):
            op, mods = m.group(1), m.group(2)
            seen += 1
            assert mods.split(".")[1:2] == ["rn"], \
                f"{src}: '{m.group(0).strip()}' may be contracted or rounded differently"
            assert op != "mad", f"{src}: mad.f32 is a contractable multiply-add"
            if op == "fma":
                assert src == "qrt_quant.cu", f"{src}: unexpected fused multiply-add"
    assert seen > 0


def _nvrtc():
    try:
        from cupy_backends.cuda.libs import nvrtc
        nvrtc.getVersion()
    except Exception as e:  # noqa: BLE001 - no CuPy, or no libnvrtc: nothing to test with
        return None, str(e).splitlines()[0] if str(e) else type(e).__name__
    return nvrtc, None


def test_cuda_sources_compile_with_nvrtc_as_the_backend_does():
    """The runtime path: NVRTC (CuPy's) with the backend's own options, no GPU needed."""
    nvrtc, why = _nvrtc()
    if nvrtc is None:
        pytest.skip(f"CuPy's NVRTC binding or libnvrtc is unavailable ({why})")
    import ast
    with open(os.path.join(ROOT, "qrt", "backends", "cupy_backend.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    opts = next(ast.literal_eval(n.value) for n in ast.walk(tree)
                if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") ==
                "_NVRTC_OPTIONS")
    assert "--fmad=false" in opts
    for src in SOURCES:
        with open(os.path.join(CUDA_DIR, src), encoding="utf-8") as f:
            code = f.read()
        prog = nvrtc.createProgram(code, src, [], [])
        try:
            nvrtc.compileProgram(prog, list(opts) + [f"-I{CUDA_DIR}",
                                                     "--gpu-architecture=compute_80"])
        except Exception as e:  # noqa: BLE001
            pytest.fail(f"NVRTC rejected {src}: {e}\n{nvrtc.getProgramLog(prog)}")
        ptx = nvrtc.getPTX(prog)
        ptx = ptx.decode() if isinstance(ptx, bytes) else ptx
        for m in _FLOAT_OP.finditer(ptx):
            assert m.group(2).split(".")[1:2] == ["rn"], f"{src} (NVRTC): {m.group(0).strip()}"
            assert m.group(1) != "fma" or src == "qrt_quant.cu", f"{src} (NVRTC): fma"

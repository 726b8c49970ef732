# SPDX-License-Identifier: Apache-2.0
"""Depthwise / c_in = 1 conv1d (c_in/groups == 1): every variant this CPU runs == the reference.

On x86-64 this exercises the x86 variants; under qemu-user (tools/test-wheels-arm.sh) the NEON
ones, whose depthwise path (include/qrt/neon/conv1d_neon.h, "lanes over time") has its own
code for interior blocks, edges, partial blocks and a vectorized requantization.  The last test
cross-compiles tests/c/conv1d_dw_harness.c for aarch64 and armv7 and runs it under qemu-user
on three CPU models (skipped without the cross compilers and qemu).
"""

import os
import shutil
import struct
import subprocess

import numpy as np
import pytest

import qrt
from qrt import _conv1d

from test_conv1d import expected, layer, make, cfg_str
from _qemu import UNDER_QEMU

VARIANTS = [v for v in _conv1d.variants() if v != 0]
IDS = [_conv1d.ISA_NAMES[v] for v in VARIANTS]

# lengths around the 8 / 16 position blocks (and the 48-position x86 tiles)
LENGTHS = [1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 47, 48, 49, 63, 64, 65, 100,
           127, 128, 129, 200]
F32 = np.float32


def _scales(rng, c_out):
    """Requantization scales: ordinary, ties (powers of two), huge (|y| >= 2^31), inf, NaN."""
    kind = int(rng.integers(0, 8))
    if kind == 0:
        s = np.full(c_out, rng.choice([0.5, 0.25, 0.125]))
    elif kind == 1:
        s = 2.0 ** rng.integers(0, 31, c_out)
    elif kind == 2:
        s = rng.uniform(1e6, 1e10, c_out)
    elif kind == 3:
        s = np.where(rng.random(c_out) < 0.5, np.inf, np.nan)
    elif kind == 4:
        s = rng.choice([1e-45, 1e-40, 3e-39], c_out)  # subnormal
    else:
        s = 10.0 ** rng.uniform(-6, -1, c_out)
    return s.astype(F32)


def random_dw(rng):
    """A random c_in/groups == 1 call (arguments of _conv1d.conv1d) with odd edges."""
    g = int(rng.integers(1, 6))
    mult = int(rng.choice([1, 2, 3]))
    k = int(rng.integers(1, 10)) if rng.random() < 0.9 else int(rng.integers(10, 40))
    d = int(rng.integers(1, 4))
    s = int(rng.choice([1, 1, 2, 3]))
    length = int(rng.choice(LENGTHS)) if rng.random() < 0.8 else int(rng.integers(1, 600))
    span = d * (k - 1) + 1
    pad = int(rng.integers(0, k + 4)) if rng.random() < 0.8 else \
        length + int(rng.integers(0, span + 9))
    pad_r = int(rng.integers(0, k + 4))
    if length + pad + pad_r < span:
        pad_r = span - length - pad + int(rng.integers(0, 3))
    len_out = (length + pad + pad_r - span) // s + 1
    if rng.random() < 0.15:
        len_out = int(rng.integers(1, len_out + 1))  # shorter output: right padding implied
    n = int(rng.integers(1, 3))
    c_out = g * mult
    x = rng.integers(0, 256, (n, g, length), dtype=np.uint8)
    if rng.random() < 0.2:  # channel-reversed view: negative channel stride
        x = x[:, ::-1, :]
    w = rng.integers(-128, 128, (c_out, 1, k), dtype=np.int8)
    if rng.random() < 0.2:
        w[rng.random(w.shape) < 0.3] = rng.choice([-128, 127])
    asym = rng.random() < 0.7
    wz = (rng.integers(-128, 128, c_out) if asym else np.zeros(c_out)).astype(np.int32)
    bias_kind = rng.random()
    if bias_kind < 0.2:
        bias = rng.integers(-(2**31), 2**31, c_out, dtype=np.int64).astype(np.int32)  # wraps
    elif bias_kind < 0.4:
        bias = rng.integers(-(2**23), 2**23, c_out).astype(np.int32)
    else:
        bias = rng.integers(-10000, 10001, c_out).astype(np.int32)
    zo = int(rng.integers(0, 256))
    lo = zo if rng.random() < 0.35 else int(rng.integers(0, zo + 1))  # relu: lo = zero point
    hi = 255 if rng.random() < 0.6 else int(rng.integers(lo, 256))
    return dict(x=x, w=w, wz=wz, bias=bias, scale=_scales(rng, c_out), len_out=len_out,
                stride=s, dilation=d, pad_left=pad, groups=g,
                input_zero=int(rng.choice([0, 255])) if rng.random() < 0.2
                else int(rng.integers(0, 256)),
                output_zero=zo, output_min=lo, output_max=hi)


def run_dw(c, variant):
    x, w = c["x"], c["w"]
    n, g, length = x.shape
    c_out, cg, k = w.shape
    wpack = np.empty(_conv1d.packed_weight_size(c_out, cg, k), np.int8)
    wsum = np.empty(c_out, np.int32)
    _conv1d.pack_weights(w, wpack, wsum)
    need = _conv1d.scratch_size(n, g, c_out, length, c["len_out"], k, c["stride"], c["dilation"],
                                c["pad_left"], c["groups"], variant=variant)
    out = np.full((n, c_out, c["len_out"] + 5), 0xA5, np.uint8)  # canaries after each row
    _conv1d.conv1d(x, w, wpack, wsum, c["wz"], c["bias"], c["scale"],
                   np.zeros(c_out, np.float32), out[:, :, :c["len_out"]],
                   np.empty(max(need, 1), np.uint8), stride=c["stride"],
                   dilation=c["dilation"], pad_left=c["pad_left"], groups=c["groups"],
                   input_zero=c["input_zero"], output_zero=c["output_zero"],
                   output_min=c["output_min"], output_max=c["output_max"], variant=variant)
    assert (out[:, :, c["len_out"]:] == 0xA5).all(), "wrote past the output row"
    return out


def describe(c):
    return {k: (v if not isinstance(v, np.ndarray) else v.shape) for k, v in c.items()}


@pytest.mark.parametrize("v", VARIANTS, ids=IDS)
@pytest.mark.parametrize("seed", range(2))
def test_depthwise_variant_random(v, seed):
    rng = np.random.default_rng(4400 + seed)
    with np.errstate(all="ignore"):
        for _ in range(40 if UNDER_QEMU else 120):  # emulated: fewer (the harness runs more)
            c = random_dw(rng)
            np.testing.assert_array_equal(run_dw(c, v), run_dw(c, 0), err_msg=str(describe(c)))


@pytest.mark.parametrize("v", VARIANTS, ids=IDS)
def test_depthwise_variant_block_edges(v):
    """Every length around the blocks with the common kernels, dense enough for every edge."""
    rng = np.random.default_rng(45)
    for length in LENGTHS:
        for k, d, pad, s in ((3, 1, 1, 1), (5, 1, 2, 1), (3, 2, 2, 1), (9, 1, 4, 1), (3, 1, 1, 2),
                             (1, 1, 0, 1), (4, 3, 9, 1)):
            c = random_dw(rng)
            span = d * (k - 1) + 1
            if length + 2 * pad < span:
                continue
            c["x"] = rng.integers(0, 256, (1, 2, length), dtype=np.uint8)
            c["w"] = rng.integers(-128, 128, (4, 1, k), dtype=np.int8)
            c.update(groups=2, stride=s, dilation=d, pad_left=pad,
                     len_out=(length + 2 * pad - span) // s + 1, wz=c["wz"][:1].repeat(4),
                     bias=rng.integers(-3000, 3001, 4).astype(np.int32),
                     scale=np.full(4, 10.0 ** rng.uniform(-4, -1), F32))
            np.testing.assert_array_equal(run_dw(c, v), run_dw(c, 0), err_msg=str(describe(c)))


@pytest.mark.parametrize("v", VARIANTS, ids=IDS)
@pytest.mark.parametrize("threads", [1, 3])
def test_depthwise_layer_threads_vs_oracle(v, threads):
    """The benchmark's depthwise layer (and c_in = 1, multiplier 16) through qrt.nn with the
    layer cut over threads, against the NumPy oracle."""
    old_t, old_w = qrt.get_num_threads(), _conv1d._set_mt_min_work(0.0)
    try:
        qrt.set_num_threads(threads)
        for c in (make(1, 64, 64, 300, 3, pad=1, groups=64, seed=1, asym=True),
                  make(1, 1, 16, 500, 9, pad=4, seed=2, asym=True),
                  make(2, 8, 16, 97, 5, stride=2, pad=2, dilation=2, groups=8, seed=3)):
            x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
            np.testing.assert_array_equal(layer(c, v)(x).int_repr(), expected(c),
                                          err_msg=str(cfg_str(c)))
    finally:
        _conv1d._set_mt_min_work(old_w)
        qrt.set_num_threads(old_t)


# ---- the NEON path itself, cross-compiled and run under qemu-user -------------------------------
_CROSS = {
    "aarch64": ("aarch64-linux-gnu-gcc", "qemu-aarch64", [("cortex-a72", 0), ("cortex-a76", 1)]),
    "armv7": ("arm-linux-gnueabihf-gcc", "qemu-arm", [("cortex-a7", 0)]),
}


@pytest.mark.parametrize("arch", list(_CROSS))
def test_neon_depthwise_harness_under_qemu(tmp_path, arch):
    """tests/c/conv1d_dw_harness.c: random depthwise calls through qrt_conv1d_u8__neon (and
    __neondot on a dot-product CPU model) == qrt_conv1d_u8_ref, input rows against inaccessible
    pages (any read outside a row faults), canaries after each output row; then kernel-1 GEMM
    cases (the 1x1-conv2d microkernel path) and dense receptive-field rows (linear rows,
    kernels > 1, groups), input and weights against inaccessible pages.
    Compiled with the flags of the wheels (armv7: the Debian armhf baseline, NEON only through
    target("fpu=neon"))."""
    cc, qemu, cpus = _CROSS[arch]
    if os.environ.get("QRT_UNDER_QEMU"):
        pytest.skip("a host-side cross check; it runs in the x86-64 suite")
    if not (shutil.which(cc) and shutil.which(qemu)):
        pytest.skip(f"needs {cc} and {qemu}")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    (tmp_path / "math.h").write_text("#define fmaf __builtin_fmaf\n"
                                     "#define rintf __builtin_rintf\n")
    exe = tmp_path / f"dw-{arch}"
    r = subprocess.run([cc, "-std=c11", "-O3", "-ffp-contract=off", "-ffreestanding", "-nostdlib",
                        "-static", "-fno-stack-protector", "-Wall", "-Werror",
                        "-I", os.path.join(root, "include"), "-I", str(tmp_path),
                        os.path.join(root, "tests", "c", "conv1d_dw_harness.c"), "-o", str(exe),
                        "-lgcc"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    cases = 1200
    for i, (cpu, dot) in enumerate(cpus):
        inp = struct.pack("<IIII", 0, cases, 1000 + i, dot)
        out = subprocess.run([qemu, "-cpu", cpu, str(exe)], input=inp, capture_output=True,
                             timeout=300)
        text = out.stdout.decode(errors="replace")
        assert out.returncode == 0 and text.startswith("ok"), \
            f"{arch} {cpu}: rc {out.returncode}: {text} {out.stderr.decode(errors='replace')}"
        _, ncases, calls, dw, gemm, rows = text.split()[:6]
        assert int(ncases) == cases and int(calls) == cases * (1 + dot)
        assert int(gemm) == (cases // 4 + 1) * (1 + dot)  # kernel-1 GEMM cases
        assert int(rows) > (cases // 4) * 0.8 * (1 + dot)  # receptive-field row cases
        assert int(dw) > cases * 0.8  # most cases take the depthwise path

# SPDX-License-Identifier: Apache-2.0
"""The CUDA kernels' arithmetic, run on the CPU, equals qrt's CPU integers bit for bit.

tools/cuda_host_harness.cpp includes the unchanged qrt/backends/cuda/*.cu files with the CUDA
built-ins defined away and runs every kernel (grid-stride loop and index math included) over a
small simulated grid.  Each result is compared with exact equality against
  * qrt's C reference kernels (include/qrt/ref/conv1d_ref.h, include/qrt/quant.h), compiled with
    qrt's flags into the same library, when this checkout has them;
  * a NumPy int64 oracle of the documented formulas;
  * torch 2.13 with the qnnpack engine, when torch is installed (the project's oracle), using the
    host constants the GPU backend computes (qrt/backends/_qparams.py).
Needs only a C/C++ compiler; no GPU and no CuPy.
"""

import ctypes
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))
import cuda_host_harness as H  # noqa: E402

from qrt.backends import _qparams as Q  # noqa: E402

if H.compilers() is None:
    pytest.skip("no C/C++ compiler: the CUDA host harness cannot be built", allow_module_level=True)

F32 = np.float32
GRID, BLOCK = 3, 7  # a small simulated grid: every kernel's grid-stride loop runs several rounds


@pytest.fixture(scope="module")
def lib():
    return H.load()


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)


def ptr(a):
    return ctypes.c_void_p(a.ctypes.data)


# ---- conv1d ---------------------------------------------------------------------------------
def conv_params(n, c_in, c_out, L, lo, K, s, d, p, g, xs, ys, xz, yz, ymin, ymax, kind):
    return np.array([n, c_in, c_out, L, lo, K, s, d, p, g, *xs, *ys, xz, yz, ymin, ymax, kind],
                    dtype=np.int64)


def oracle_conv_acc(x, w, wz, s, d, p, g):
    """int64 accumulators [N][c_out][lo] of the spec (conv1d_ref.h), padding contributing 0."""
    n, c_in, L = x.shape
    c_out, cg, K = w.shape
    og = c_out // g
    lo = Q.conv1d_len_out(L, K, s, p, d)
    xz_pad = np.zeros((n, c_in, L + 2 * p + d * K + s * lo), np.int64)
    xz_pad[:, :, p:p + L] = x
    acc = np.zeros((n, c_out, lo), np.int64)
    wc = w.astype(np.int64) - wz.astype(np.int64)[:, None, None]
    for oc in range(c_out):
        gi = oc // og
        for k in range(K):
            idx = np.arange(lo) * s + k * d
            xs = xz_pad[:, gi * cg:(gi + 1) * cg, :][:, :, idx]  # [n][cg][lo]
            acc[:, oc, :] += np.einsum("ncl,c->nl", xs, wc[oc, :, k])
    return acc


def requant_oracle(acc, bq, rs, yz, ymin, ymax):
    t = (acc + bq[None, :, None]).astype(np.int64)
    t = ((t + 2**31) % 2**32 - 2**31).astype(np.int32)  # paddd wraps
    y = t.astype(F32) * rs[None, :, None]
    ok = (y >= F32(-2.0**31)) & (y < F32(2.0**31))
    r = np.where(ok, np.rint(np.where(ok, y, 0)), -(2.0**31)).astype(np.int64) + yz
    return np.clip(r, ymin, ymax).astype(np.uint8)


def random_conv_case(rng, depthwise=False):
    g = 1
    if depthwise:
        g = int(rng.integers(1, 9))
        cg, og = 1, int(rng.integers(1, 3))
    else:
        g = int(rng.choice([1, 1, 2, 3]))
        cg, og = int(rng.integers(1, 10)), int(rng.integers(1, 7))
    K, s, d = int(rng.integers(1, 6)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    p = int(rng.integers(0, 4))
    n = int(rng.integers(1, 3))
    L = int(rng.integers(max(1, d * (K - 1) + 1 - 2 * p), 40))
    c_in, c_out = cg * g, og * g
    x = rng.integers(0, 256, (n, c_in, L), dtype=np.uint8)
    w = rng.integers(-128, 128, (c_out, cg, K), dtype=np.int8)
    wz = rng.integers(-20, 21, c_out).astype(np.int32) if rng.random() < 0.5 else \
        np.zeros(c_out, np.int32)
    return x, w, wz, K, s, d, p, g


@pytest.mark.parametrize("depthwise", [False, True])
def test_cuda_conv1d_kernel_equals_reference(lib, rng, depthwise):
    have_ref = lib.r_have_conv1d() == 1
    checked_ref = 0
    for case in range(120):
        x, w, wz, K, s, d, p, g = random_conv_case(rng, depthwise)
        n, c_in, L = x.shape
        c_out = w.shape[0]
        lo = Q.conv1d_len_out(L, K, s, p, d)
        xz, yz = int(rng.integers(0, 256)), int(rng.integers(0, 256))
        relu = bool(rng.random() < 0.3)
        ymin, ymax = (yz if relu else 0), 255
        bq = rng.integers(-50000, 50000, c_out).astype(np.int32)
        rs = (rng.uniform(1e-4, 2e-2, c_out)).astype(F32)
        if case % 4 == 0:  # ties: scales that are powers of two make .5 products common
            rs = (2.0 ** -rng.integers(1, 8, c_out)).astype(F32)
        xs, ys = (c_in * L, L, 1), (c_out * lo, lo, 1)
        P = conv_params(n, c_in, c_out, L, lo, K, s, d, p, g, xs, ys, xz, yz, ymin, ymax, 0)
        bf = np.zeros(c_out, F32)
        out = np.full((n, c_out, lo), 7, np.uint8)
        lib.h_conv1d(GRID, BLOCK, ptr(P), ptr(x), ptr(w), ptr(wz), ptr(bq), ptr(rs), ptr(bf),
                     ptr(out))
        acc = oracle_conv_acc(x.astype(np.int64) - xz, w, wz, s, d, p, g)
        np.testing.assert_array_equal(out, requant_oracle(acc, bq, rs, yz, ymin, ymax))
        if have_ref:
            ref = np.full_like(out, 9)
            assert lib.r_conv1d(ptr(P), ptr(x), ptr(w), ptr(wz), ptr(bq), ptr(rs), ptr(bf),
                                ptr(ref)) == 0
            np.testing.assert_array_equal(out, ref)
            checked_ref += 1
        # float32 output (dynamic linear): f32(f32(f32(acc) * scale) + bias)
        P[-1] = 1
        bf = rng.normal(0, 3, c_out).astype(F32)
        outf = np.zeros((n, c_out, lo), F32)
        lib.h_conv1d(GRID, BLOCK, ptr(P), ptr(x), ptr(w), ptr(wz), ptr(bq), ptr(rs), ptr(bf),
                     ptr(outf))
        accf = acc.astype(np.int32).astype(F32)
        expect = (accf * rs[None, :, None]).astype(F32) + bf[None, :, None]
        np.testing.assert_array_equal(outf.view(np.uint32), expect.astype(F32).view(np.uint32))
        if have_ref:
            reff = np.zeros_like(outf)
            assert lib.r_conv1d(ptr(P), ptr(x), ptr(w), ptr(wz), ptr(bq), ptr(rs), ptr(bf),
                                ptr(reff)) == 0
            np.testing.assert_array_equal(outf.view(np.uint32), reff.view(np.uint32))
    if not have_ref:
        pytest.fail("include/qrt/ref/conv1d_ref.h is missing: the harness compared with the "
                    "NumPy oracle only")
    assert checked_ref == 120


def test_cuda_conv1d_strided_input_and_output(lib, rng):
    """The kernel honours arbitrary element strides (e.g. a [L][N][C] input, [N][L][C] output)."""
    n, c_in, c_out, L, K = 2, 5, 4, 17, 3
    x_nlc = rng.integers(0, 256, (L, n, c_in), dtype=np.uint8)  # physical [L][N][C]
    w = rng.integers(-128, 128, (c_out, c_in, K), dtype=np.int8)
    wz = np.zeros(c_out, np.int32)
    lo = Q.conv1d_len_out(L, K, 1, 1, 1)
    P = conv_params(n, c_in, c_out, L, lo, K, 1, 1, 1, 1, (c_in, 1, n * c_in),
                    (lo * c_out, 1, c_out), 3, 10, 0, 255, 0)
    bq = np.zeros(c_out, np.int32)
    rs = np.full(c_out, 1 / 512, F32)
    out = np.zeros((n, lo, c_out), np.uint8)
    bf = np.zeros(c_out, F32)
    lib.h_conv1d(GRID, BLOCK, ptr(P), ptr(x_nlc), ptr(w), ptr(wz), ptr(bq), ptr(rs), ptr(bf),
                 ptr(out))
    x = np.ascontiguousarray(x_nlc.transpose(1, 2, 0))
    acc = oracle_conv_acc(x.astype(np.int64) - 3, w, wz, 1, 1, 1, 1)
    np.testing.assert_array_equal(out.transpose(0, 2, 1),
                                  requant_oracle(acc, bq, rs, 10, 0, 255))


@pytest.mark.parametrize("c_in", [1, 3, 4, 5, 16, 31, 64])
def test_cuda_dp4a_linear_equals_general_kernel(lib, rng, c_in):
    """The __dp4a path (ring identity over signed bytes) equals the plain accumulator."""
    rows, c_out = 23, 9
    for xz, wz_max in ((0, 0), (255, 127), (128, 5), (int(rng.integers(0, 256)), 127)):
        x = rng.integers(0, 256, (rows, c_in), dtype=np.uint8)
        x[0] = 255
        w = rng.integers(-128, 128, (c_out, c_in), dtype=np.int8)
        w[0] = -128
        wz = rng.integers(-wz_max, wz_max + 1, c_out).astype(np.int32)
        wz[0] = -128 if wz_max else 0
        wsum = w.astype(np.int64).sum(1).astype(np.int32)
        P = conv_params(1, c_in, c_out, rows, rows, 1, 1, 1, 0, 1, (0, 1, c_in), (0, 1, c_out),
                        xz, 0, 0, 255, 1)
        bq = np.zeros(c_out, np.int32)
        rs = np.ones(c_out, F32)  # float output with scale 1: exact accumulators (< 2^24)
        bf = np.zeros(c_out, F32)
        a = np.zeros((rows, c_out), F32)
        b = np.zeros((rows, c_out), F32)
        lib.h_conv1d_dot_dp4a(GRID, BLOCK, ptr(P), ptr(x), ptr(w), ptr(wz), ptr(bq), ptr(rs),
                              ptr(bf), ptr(wsum), ptr(a))
        lib.h_conv1d(GRID, BLOCK, ptr(P), ptr(x), ptr(w), ptr(wz), ptr(bq), ptr(rs), ptr(bf),
                     ptr(b))
        exact = (x.astype(np.int64) - xz) @ (w.astype(np.int64) - wz[:, None]).T
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, exact.astype(F32))


# ---- quantize / dequantize -------------------------------------------------------------------
def tie_heavy_floats(rng, n, scale, zp):
    k = rng.integers(-400, 400, n).astype(np.float64)
    ties = ((k + 0.5 - zp) * scale).astype(F32)
    near = np.nextafter(ties, rng.choice([-np.inf, np.inf], n).astype(F32)).astype(F32)
    uni = rng.uniform(-300 * scale, 300 * scale, n).astype(F32)
    x = np.concatenate([ties, near, uni, np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3e38,
                                                   -3e38], F32)])
    return x


@pytest.mark.parametrize("signed", [False, True])
def test_cuda_quantize_dequantize_equal_quant_h(lib, rng, signed):
    dt, qmin, qmax = (np.int8, -128, 127) if signed else (np.uint8, 0, 255)
    hq = lib.h_quantize_f32_s8 if signed else lib.h_quantize_f32_u8
    rq = lib.r_quantize_f32_s8 if signed else lib.r_quantize_f32_u8
    hd = lib.h_dequantize_s8_f32 if signed else lib.h_dequantize_u8_f32
    rd = lib.r_dequantize_s8_f32 if signed else lib.r_dequantize_u8_f32
    for _ in range(25):
        scale = float(F32(rng.uniform(1e-3, 0.5)))
        zp = int(rng.integers(qmin, qmax + 1))
        x = tie_heavy_floats(rng, 600, scale, zp)
        inv = F32(1.0) / F32(scale)
        a, b = np.zeros(x.size, dt), np.ones(x.size, dt)
        hq(GRID, BLOCK, ptr(x), x.size, inv, float(zp), float(qmin), float(qmax), ptr(a))
        rq(ptr(x), x.size, inv, float(zp), float(qmin), float(qmax), ptr(b))
        np.testing.assert_array_equal(a, b)
        q = np.arange(qmin, qmax + 1).astype(dt)
        fa, fb = np.zeros(q.size, F32), np.ones(q.size, F32)
        hd(GRID, BLOCK, ptr(q), q.size, F32(scale), zp, ptr(fa))
        rd(ptr(q), q.size, F32(scale), zp, ptr(fb))
        np.testing.assert_array_equal(fa.view(np.uint32), fb.view(np.uint32))


def test_cuda_quantize_equals_torch(lib, rng):
    torch = pytest.importorskip("torch")
    for _ in range(5):
        scale = float(rng.uniform(1e-3, 0.3))
        zp = int(rng.integers(0, 256))
        x = tie_heavy_floats(rng, 500, float(F32(scale)), zp)
        x = x[np.isfinite(x)]
        a = np.zeros(x.size, np.uint8)
        lib.h_quantize_f32_u8(GRID, BLOCK, ptr(x), x.size, F32(1.0) / F32(scale), float(zp), 0.0,
                              255.0, ptr(a))
        t = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, torch.quint8)
        np.testing.assert_array_equal(a, t.int_repr().numpy())


# ---- element-wise ops and pooling vs torch qnnpack ------------------------------------------
@pytest.fixture
def qnnpack():
    torch = pytest.importorskip("torch")
    if "qnnpack" not in torch.backends.quantized.supported_engines:
        pytest.skip("this torch has no qnnpack engine")
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = "qnnpack"
    yield torch
    torch.backends.quantized.engine = old


def need_ops_ref(lib):
    if lib.r_have_ops() != 1:
        pytest.fail("include/qrt/ref/{add,pool1d,activation}_ref.h are missing from this "
                    "checkout: the CUDA kernels cannot be checked against them")


def test_cuda_relu(lib, rng):
    for signed in (False, True):
        dt, lo, hi = (np.int8, -128, 128) if signed else (np.uint8, 0, 256)
        q = rng.integers(lo, hi, 1000).astype(dt)
        zp = int(rng.integers(lo, hi))
        out = np.zeros_like(q)
        (lib.h_relu_s8 if signed else lib.h_relu_u8)(GRID, BLOCK, ptr(q), q.size, zp, ptr(out))
        np.testing.assert_array_equal(out, np.maximum(q, zp).astype(dt))
        if not signed and lib.r_have_ops():
            ref = np.ones_like(q)
            lib.r_relu_u8(ptr(q), q.size, zp, ptr(ref))
            np.testing.assert_array_equal(out, ref)


def test_cuda_add_equals_reference(lib, rng):
    """QNNPACK's fixed-point add over its whole accepted ratio range [2^-14, 2^8)
    (shifts 14..35, where the SSE2 mask and shift saturate), against include/qrt/ref/add_ref.h."""
    need_ops_ref(lib)
    a = rng.integers(0, 256, 4000).astype(np.uint8)
    b = rng.integers(0, 256, 4000).astype(np.uint8)
    a[:256] = np.arange(256)
    b[:256] = 255 - np.arange(256)
    done = 0
    for case in range(300):
        so = F32(rng.uniform(0.01, 1.0))
        ra, rb = (2.0 ** rng.uniform(-14.5, 8.5, 2))
        if case % 7 == 0:
            ra = 2.0 ** int(rng.integers(-14, 8))  # exact powers of two: ties in the shift
        sa, sb = F32(ra * so), F32(rb * so)
        za, zb, zo = (int(v) for v in rng.integers(0, 256, 3))
        relu = bool(case % 2)
        ref = np.zeros_like(a)
        st = lib.r_add_u8(ptr(a), ptr(b), a.size, sa, za, sb, zb, so, zo, int(relu), ptr(ref))
        if st != 0:
            continue  # QNNPACK refuses these qparams: the GPU backend refuses them too
        a_os, b_os = F32(sa / so), F32(sb / so)
        out = np.zeros_like(a)
        lib.h_add_u8(GRID, BLOCK, ptr(a), ptr(b), a.size, za, zb, zo, a_os, b_os,
                     zo if relu else 0, 255, ptr(out))
        np.testing.assert_array_equal(out, ref, err_msg=f"ratios {a_os} {b_os}")
        done += 1
    assert done > 200


def test_cuda_add_equals_torch_qnnpack(lib, rng, qnnpack):
    torch = qnnpack
    done = 0
    for case in range(60):
        sa, sb, so = (float(v) for v in rng.uniform(0.005, 0.2, 3))
        if case % 5 == 0:
            sb = sa * 2.0 ** int(rng.integers(-3, 4))
            so = sa * 2.0 ** int(rng.integers(-2, 3))
        za, zb, zo = (int(v) for v in rng.integers(0, 256, 3))
        relu = bool(case % 2)
        if relu and zo == 255:
            zo = 254
        try:
            a_os, b_os = Q.add_scale_ratios(sa, sb, so)
        except ValueError:
            continue
        qa = torch.quantize_per_tensor(torch.rand(257) * 20 - 10, sa, za, torch.quint8)
        qb = torch.quantize_per_tensor(torch.rand(257) * 20 - 10, sb, zb, torch.quint8)
        op = torch.ops.quantized.add_relu if relu else torch.ops.quantized.add
        want = op(qa, qb, so, zo).int_repr().numpy()
        a, b = qa.int_repr().numpy().copy(), qb.int_repr().numpy().copy()
        out = np.zeros(a.size, np.uint8)
        lib.h_add_u8(GRID, BLOCK, ptr(a), ptr(b), a.size, za, zb, zo, a_os, b_os,
                     zo if relu else 0, 255, ptr(out))
        np.testing.assert_array_equal(out, want)
        done += 1
    assert done > 40


def random_pool(rng, case):
    k = int(rng.integers(1, 7))
    s = int(rng.integers(1, 4))
    p = int(rng.integers(0, k // 2 + 1))
    d = int(rng.integers(1, 3)) if case % 2 else 1
    ceil = bool(case % 3 == 0)
    L = int(rng.integers(d * (k - 1) + 1, 40))
    return k, s, p, d, ceil, L


def test_cuda_pool1d_equals_reference(lib, rng):
    """max/avg pool kernels == include/qrt/ref/pool1d_ref.h (QNNP and GENERIC average modes)."""
    need_ops_ref(lib)
    for case in range(300):
        k, s, p, d, ceil, L = random_pool(rng, case)
        rows = int(rng.integers(1, 7))
        x = rng.integers(0, 256, (rows, L), dtype=np.uint8)
        lo = Q.pool1d_len_out(L, k, s, p, d, ceil)
        P = np.array([rows, L, lo, k, s, d, p, 0, 0], np.int64)
        out, ref = np.zeros((rows, lo), np.uint8), np.ones((rows, lo), np.uint8)
        assert lib.r_max_pool1d_u8(ptr(P), ptr(x), ptr(ref)) == 0
        lib.h_max_pool1d_u8(GRID, BLOCK, ptr(P), ptr(x), ptr(out))
        np.testing.assert_array_equal(out, ref, err_msg=f"max k{k} s{s} p{p} d{d} ceil{ceil}")
        lo = Q.pool1d_len_out(L, k, s, p, 1, ceil)
        cip = bool(rng.integers(0, 2))
        qnnp = not ceil and k > 1 and (cip or p == 0)
        zp = int(rng.integers(0, 256))
        scale = Q.avg_pool_scale(float(rng.uniform(0.001, 1.0)), k) if qnnp else F32(0)
        P = np.array([rows, L, lo, k, s, 1, p, 0 if qnnp else 1, int(cip)], np.int64)
        out, ref = np.zeros((rows, lo), np.uint8), np.ones((rows, lo), np.uint8)
        assert lib.r_avg_pool1d_u8(ptr(P), ptr(x), zp, scale, ptr(ref)) == 0
        lib.h_avg_pool1d_u8(GRID, BLOCK, ptr(P), ptr(x), zp, scale, ptr(out))
        np.testing.assert_array_equal(out, ref, err_msg=f"avg k{k} s{s} p{p} ceil{ceil} "
                                                        f"cip{cip}")


def test_cuda_adaptive_pool_and_lut_equal_reference(lib, rng):
    need_ops_ref(lib)
    for case in range(100):
        rows, L = int(rng.integers(1, 6)), int(rng.integers(1, 50))
        n_out = int(rng.integers(1, L + 3))
        x = rng.integers(0, 256, (rows, L), dtype=np.uint8)
        P = np.array([rows, L, n_out], np.int64)
        out, ref = np.zeros((rows, n_out), np.uint8), np.ones((rows, n_out), np.uint8)
        assert lib.r_adaptive_avg_pool1d_u8(ptr(P), ptr(x), ptr(ref)) == 0
        lib.h_adaptive_avg_pool1d_u8(GRID, BLOCK, ptr(P), ptr(x), ptr(out))
        np.testing.assert_array_equal(out, ref, err_msg=f"L{L} O{n_out}")
        t0 = rng.integers(0, 256, 256, dtype=np.uint8)
        t1 = rng.integers(0, 256, 256, dtype=np.uint8)
        n = x.size
        nvec = int(rng.integers(0, n + 1)) if case % 2 else n
        out, ref = np.zeros(n, np.uint8), np.ones(n, np.uint8)
        lib.r_lut2_u8(ptr(x), n, ptr(t0), ptr(t1), nvec, ptr(ref))
        lib.h_lut_u8(GRID, BLOCK, ptr(x), n, ptr(t0), ptr(t1), nvec, ptr(out))
        np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("signed", [False, True])
def test_cuda_cat_requant_copy_equals_reference(lib, rng, signed):
    need_ops_ref(lib)
    dt, qmin, qmax = (np.int8, -128, 127) if signed else (np.uint8, 0, 255)
    h = lib.h_requant_copy_s8 if signed else lib.h_requant_copy_u8
    for _ in range(40):
        rows, n, off = int(rng.integers(1, 6)), int(rng.integers(1, 30)), int(rng.integers(0, 9))
        stride = off + n + int(rng.integers(0, 5))
        x = rng.integers(qmin, qmax + 1, (rows, n)).astype(dt)
        s_in, s_out = F32(rng.uniform(0.01, 0.2)), F32(rng.uniform(0.01, 0.2))
        if rng.random() < 0.3:
            s_out = F32(s_in * 2.0 ** int(rng.integers(-2, 3)))  # ties
        zi, zo = int(rng.integers(qmin, qmax + 1)), int(rng.integers(qmin, qmax + 1))
        inv = F32(F32(1.0) / s_out)
        ref = np.full((rows, stride), 3, dt)
        out = ref.copy()
        lib.r_requant_copy(int(signed), ptr(x), rows, n, s_in, zi, inv, float(zo), float(qmin),
                           float(qmax), ctypes.c_void_p(ref.ctypes.data + off * ref.itemsize),
                           stride)
        h(GRID, BLOCK, ptr(x), rows, n, s_in, zi, inv, float(zo), float(qmin), float(qmax),
          ptr(out), off, stride)
        np.testing.assert_array_equal(out, ref)


def test_cuda_pool1d_equals_torch_qnnpack(lib, rng, qnnpack):
    """Against torch where qrt follows it: every case except (a) max pooling with dilation and
    padding without ceil_mode, where QNNPACK replicates the edge and qrt (CPU and GPU) lets
    padding never win, and (b) avg pooling with count_include_pad=False and padding, which
    QNNPACK ignores and qrt honours (qrt.functional documents both choices)."""
    torch = qnnpack
    for case in range(90):
        k, s, p, d, ceil, L = random_pool(rng, case)
        k = max(k, 2)  # QNNPACK refuses kernel_size 1
        p = min(p, k // 2)
        L = max(L, d * (k - 1) + 1)
        n, c = 2, int(rng.integers(2, 6))
        scale, zp = float(rng.uniform(0.01, 0.2)), int(rng.integers(0, 256))
        q = torch.quantize_per_tensor(torch.randn(n, c, L) * 5, scale, zp, torch.quint8)
        x = q.int_repr().numpy().copy()
        if not (d > 1 and p > 0 and not ceil):
            lo = Q.pool1d_len_out(L, k, s, p, d, ceil)
            P = np.array([n * c, L, lo, k, s, d, p, 0, 0], np.int64)
            want = torch.nn.functional.max_pool1d(q, k, s, p, d, ceil_mode=ceil)
            out = np.zeros((n, c, lo), np.uint8)
            lib.h_max_pool1d_u8(GRID, BLOCK, ptr(P), ptr(x), ptr(out))
            np.testing.assert_array_equal(out, want.int_repr().numpy(),
                                          err_msg=f"max k{k} s{s} p{p} d{d} ceil{ceil}")
        cip = bool(case % 4)
        qnnp = not ceil and k > 1 and (cip or p == 0)
        if not ceil and not cip and p > 0:
            continue
        lo = Q.pool1d_len_out(L, k, s, p, 1, ceil)
        P = np.array([n * c, L, lo, k, s, 1, p, 0 if qnnp else 1, int(cip)], np.int64)
        want = torch.nn.functional.avg_pool1d(q, k, s, p, ceil_mode=ceil, count_include_pad=cip)
        out = np.zeros((n, c, lo), np.uint8)
        sc = Q.avg_pool_scale(scale, k) if qnnp else F32(0)
        lib.h_avg_pool1d_u8(GRID, BLOCK, ptr(P), ptr(x), zp, sc, ptr(out))
        np.testing.assert_array_equal(out, want.int_repr().numpy(),
                                      err_msg=f"avg k{k} s{s} p{p} ceil{ceil} cip{cip}")


# ---- end to end: host constants + kernel == torch qnnpack conv1d / linear --------------------
def test_cuda_conv1d_and_linear_equal_torch_qnnpack(lib, rng, qnnpack):
    torch = qnnpack
    qF = torch.ao.nn.quantized.functional
    for case in range(36):
        depthwise = case % 3 == 0
        x8, w8, _, K, s, d, p, g = random_conv_case(rng, depthwise)
        n, c_in, L = x8.shape
        c_out, cg, _ = w8.shape
        sa, so = float(rng.uniform(0.01, 0.1)), float(rng.uniform(0.05, 0.5))
        xz, yz = int(rng.integers(0, 256)), int(rng.integers(0, 256))
        xq = torch.quantize_per_tensor(torch.randn(n, c_in, L) * 3, sa, xz, torch.quint8)
        wf = torch.randn(c_out, cg, K)
        if case % 2:
            ws = torch.rand(c_out, dtype=torch.float64) * 0.02 + 0.001
            wq = torch.quantize_per_channel(wf, ws, torch.zeros(c_out, dtype=torch.long), 0,
                                            torch.qint8)
            wsc = ws.numpy()
        else:
            wq = torch.quantize_per_tensor(wf, 0.015, 0, torch.qint8)
            wsc = np.full(c_out, 0.015)
        bias = torch.randn(c_out) * 2 if case % 4 else None
        want = qF.conv1d(xq, wq, bias, stride=s, padding=p, dilation=d, groups=g, scale=so,
                         zero_point=yz).int_repr().numpy()
        x = xq.int_repr().numpy().copy()
        w = wq.int_repr().numpy().copy()
        wz = np.zeros(c_out, np.int32)
        lo = Q.conv1d_len_out(L, K, s, p, d)
        rs = Q.conv_requant_scales(sa, wsc, so)
        bq = np.zeros(c_out, np.int32) if bias is None else \
            Q.quantize_bias_qint32(bias.numpy(), sa, wsc)
        P = conv_params(n, c_in, c_out, L, lo, K, s, d, p, g, (c_in * L, L, 1),
                        (c_out * lo, lo, 1), xz, yz, 0, 255, 0)
        out = np.zeros((n, c_out, lo), np.uint8)
        bf = np.zeros(c_out, F32)
        lib.h_conv1d(GRID, BLOCK, ptr(P), ptr(x), ptr(w), ptr(wz), ptr(bq), ptr(rs), ptr(bf),
                     ptr(out))
        np.testing.assert_array_equal(out, want, err_msg=f"case {case}")

    for case in range(24):
        rows, c_in, c_out = int(rng.integers(1, 20)), int(rng.integers(1, 70)), \
            int(rng.integers(1, 40))
        sa, so = float(rng.uniform(0.01, 0.1)), float(rng.uniform(0.05, 0.5))
        xz, yz = int(rng.integers(0, 256)), int(rng.integers(0, 256))
        xq = torch.quantize_per_tensor(torch.randn(rows, c_in) * 3, sa, xz, torch.quint8)
        wq = torch.quantize_per_tensor(torch.randn(c_out, c_in), 0.02, 0, torch.qint8)
        bias = torch.randn(c_out)
        relu = bool(case % 2)
        packed = torch.ops.quantized.linear_prepack(wq, bias)
        op = torch.ops.quantized.linear_relu if relu else torch.ops.quantized.linear
        want = op(xq, packed, so, yz).int_repr().numpy()
        x = xq.int_repr().numpy().copy()
        w = wq.int_repr().numpy().copy()
        wsc = np.full(c_out, 0.02)
        wz = np.zeros(c_out, np.int32)
        wsum = w.astype(np.int64).sum(1).astype(np.int32)
        P = conv_params(1, c_in, c_out, rows, rows, 1, 1, 1, 0, 1, (0, 1, c_in), (0, 1, c_out),
                        xz, yz, yz if relu else 0, 255, 0)
        out = np.zeros((rows, c_out), np.uint8)
        bq = Q.quantize_bias_qint32(bias.numpy(), sa, wsc)
        rs = Q.conv_requant_scales(sa, wsc, so)
        bf = np.zeros(c_out, F32)  # ctypes keeps no reference: every array gets a name
        lib.h_conv1d_dot_dp4a(GRID, BLOCK, ptr(P), ptr(x), ptr(w), ptr(wz), ptr(bq), ptr(rs),
                              ptr(bf), ptr(wsum), ptr(out))
        np.testing.assert_array_equal(out, want, err_msg=f"linear case {case}")

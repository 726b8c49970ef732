# SPDX-License-Identifier: Apache-2.0
"""Every conv1d variant this CPU runs == the reference (== the NumPy oracle), across tile edges."""

import numpy as np
import pytest

import qrt
from qrt import _conv1d

from test_conv1d import expected, layer, make, random_cfg, cfg_str
from _qemu import UNDER_QEMU
from _cdriver import SANITIZE, run_c_driver

VARIANTS = [v for v in _conv1d.variants() if v != 0]


def test_variants_listed():
    vs = _conv1d.variants()
    assert vs[0] == 0 and _conv1d.isa() in vs
    for v in vs:
        assert _conv1d.variant(v) == v  # a supported variant can be forced


@pytest.mark.parametrize("v", VARIANTS, ids=[_conv1d.ISA_NAMES[v] for v in VARIANTS])
@pytest.mark.parametrize("seed", range(3))
def test_variant_random(v, seed):
    rng = np.random.default_rng(9100 + seed)
    for i in range(50):
        c = random_cfg(rng, ties=i % 3 == 0, big=i % 4 == 0)
        want = expected(c)
        x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
        np.testing.assert_array_equal(layer(c, v)(x).int_repr(), want, err_msg=str(cfg_str(c)))


# sizes around the tiles: channels 4 / 8 / 16, positions 8 / 16 / 48, reduction pairs / quads
EDGES = [1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 47, 48, 49]


@pytest.mark.parametrize("v", VARIANTS, ids=[_conv1d.ISA_NAMES[v] for v in VARIANTS])
def test_variant_tile_edges(v):
    rng = np.random.default_rng(77)
    for co in (1, 3, 4, 5, 8, 9, 17):
        for length in EDGES + [95, 97]:
            ci = int(rng.choice([1, 2, 3, 5, 8, 13]))
            k = int(rng.integers(1, 6))
            s = int(rng.integers(1, 3))
            pad = int(rng.integers(0, k))
            if length + 2 * pad < k:
                continue
            c = make(1 + (co == 9), ci, co, length, k, s, pad, seed=co * 100 + length,
                     asym=bool(length & 1))
            x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
            np.testing.assert_array_equal(layer(c, v)(x).int_repr(), expected(c),
                                          err_msg=str(cfg_str(c)))


@pytest.mark.parametrize("v", VARIANTS, ids=[_conv1d.ISA_NAMES[v] for v in VARIANTS])
def test_variant_accumulation_bound(v):
    """The worst-case accumulator (-2 147 450 625) at the int32 bound is exact."""
    taps = _conv1d.MAX_TAPS
    ci, k = 6605, 5  # 33025 taps
    assert ci * k == taps
    c = make(1, ci, 2, 7, k, 1, 0)
    c["x"][:] = 255
    c["x_zp"] = 0
    c["w"][:] = -128
    c["w_zps"] = np.full(2 if c["per_channel"] else 1, 127)
    c["bias"] = None
    c["out_scale"] = c["x_scale"] * float(c["w_scales"][0]) * 2147450625 / 100  # y ~ -100
    c["out_zp"] = 255
    c["relu"] = False
    x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
    want = expected(c)
    assert 100 < want[0, 0, 0] < 255
    np.testing.assert_array_equal(layer(c, 0)(x).int_repr(), want)
    np.testing.assert_array_equal(layer(c, v)(x).int_repr(), want)


@pytest.mark.parametrize("v", VARIANTS, ids=[_conv1d.ISA_NAMES[v] for v in VARIANTS])
def test_variant_linear_and_dynamic(v):
    rng = np.random.default_rng(5)
    for rows, fin, fout in [(1, 37, 71), (9, 64, 130), (50, 19, 33)]:
        w = rng.integers(-128, 128, (fout, fin), dtype=np.int8)
        qw = qrt.from_int_repr_per_channel(w, rng.uniform(0.001, 0.02, fout),
                                           rng.integers(-3, 4, fout), 0)
        b = rng.standard_normal(fout).astype(np.float32)
        m0, m1 = qrt.nn.Linear(fin, fout), qrt.nn.Linear(fin, fout)
        for m, var in ((m0, 0), (m1, v)):
            m.scale, m.zero_point = 0.3, 120
            m.set_weight_bias(qw, b)
            m._variant = var
        x = qrt.from_int_repr(rng.integers(0, 256, (rows, fin), dtype=np.uint8), 0.05, 128)
        np.testing.assert_array_equal(m1(x).int_repr(), m0(x).int_repr())
        d0, d1 = qrt.nn.DynamicLinear(fin, fout), qrt.nn.DynamicLinear(fin, fout)
        for m, var in ((d0, 0), (d1, v)):
            m.set_weight_bias(qw, b)
            m._variant = var
        xf = rng.standard_normal((rows, fin)).astype(np.float32)
        np.testing.assert_array_equal(d1(xf).view(np.uint32), d0(xf).view(np.uint32))


def _c_driver(tmp_path, flags, cases, seed):
    """Build tests/c/conv1d_sanitize.c with `flags` and run it: every variant and thread count
    on exact-size buffers == the reference."""
    run_c_driver(tmp_path, "conv1d_sanitize.c", (cases, seed), flags, timeout=600)



@pytest.mark.slow
@pytest.mark.parametrize("chunk", [None, 1], ids=["default", "chunked"])
def test_sanitizers_c_driver(tmp_path, chunk):
    """tests/c/conv1d_sanitize.c under AddressSanitizer + UBSan (the command recorded in
    docs/kernels.md); `chunked` also forces the VNNI position chunks on every long row."""
    extra = [] if chunk is None else [f"-DQRT__C1_CHUNK_BYTES={chunk}"]
    _c_driver(tmp_path, SANITIZE + extra, 150, 3)


@pytest.mark.skipif(_conv1d.ISA_NAMES[_conv1d.isa()] != "avx512vnni",
                    reason="the position chunks belong to the AVX-512 VNNI variant")
def test_variant_position_chunks_c_driver(tmp_path):
    """Long rows of big layers run as position chunks (each packs its own window); built with
    chunks of 96 positions, every row over 144 outputs is cut, including chunks whose windows
    reach into the right padding.  (This driver found a chunk made only of padding.)"""
    _c_driver(tmp_path, ["-O2", "-DQRT__C1_CHUNK_BYTES=1"], 1500, 53)  # ~6 s; case 1216 was it


@pytest.mark.parametrize("v", VARIANTS, ids=[_conv1d.ISA_NAMES[v] for v in VARIANTS])
def test_variant_depthwise_edges(v):
    """Depthwise layers (one input channel per output): the VNNI four-phase path (64 positions per
    step, padding from masked loads, up to 18 weight blocks) and the NEON lanes-over-time path, at
    lengths around 16 / 64, padding wider than the input, long dilated kernels, multipliers and
    asymmetric weights; every result == the NumPy oracle."""
    rng = np.random.default_rng(4242)
    lengths = [1, 2, 3, 15, 16, 17, 60, 63, 64, 65, 127, 128, 129, 200]
    for i in range(40 if UNDER_QEMU else 120):
        g = int(rng.choice([1, 2, 3, 8, 9]))
        mult = int(rng.choice([1, 1, 2, 3]))
        k = int(rng.integers(1, 10))
        dil = int(rng.choice([1, 1, 2, 3, 7]))
        if i % 10 == 0:
            k, dil = 9, 8  # span 64: past the four-phase path's limit, runs the packed path
        length = int(rng.choice(lengths))
        pl, pr = int(rng.integers(0, k + 4)), int(rng.integers(0, k + 4))
        if length + pl + pr < (k - 1) * dil + 1:
            pr = (k - 1) * dil + 1 - length - pl
        c = make(int(rng.integers(1, 3)), g, g * mult, length, k, 1, pl, dil, g, seed=i,
                 pad_right=pr, asym=bool(i % 3 == 0), relu=bool(i % 2))
        if i % 7 == 0:  # huge outputs: the clamp and the out-of-range rule
            c["out_scale"] = c["out_scale"] * 1e-9
        x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
        np.testing.assert_array_equal(layer(c, v)(x).int_repr(), expected(c),
                                      err_msg=str(cfg_str(c)))


@pytest.mark.skipif(UNDER_QEMU, reason="the x86 VNNI chunk path; 20 M-MAC oracles are slow "
                    "under emulation")
@pytest.mark.parametrize("v", VARIANTS, ids=[_conv1d.ISA_NAMES[v] for v in VARIANTS])
def test_variant_long_rows_of_big_layers(v):
    """Rows whose packed input passes the VNNI chunk budget (128 KiB: 256 input channels x
    more than 720 positions) run as position chunks; right and left padding wider than a chunk
    (the left one once gave a false "too large" refusal), dilation and asymmetric weights
    included."""
    for i, (L, pl, pr, d) in enumerate([(1200, 1, 1, 1), (1001, 2, 700, 2), (750, 0, 0, 1),
                                        (800, 900, 2, 1)]):
        c = make(1 + i % 2, 256, 11, L, 3, 1, pl, d, seed=80 + i, pad_right=pr, asym=i == 1)
        x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
        np.testing.assert_array_equal(layer(c, v)(x).int_repr(), expected(c),
                                      err_msg=str(cfg_str(c)))


VNNI = _conv1d.ISA_NAMES[_conv1d.isa()] == "avx512vnni"


@pytest.mark.parametrize("v", VARIANTS, ids=[_conv1d.ISA_NAMES[v] for v in VARIANTS])
@pytest.mark.parametrize("seed", range(2))
def test_variant_pointwise_short_rows(v, seed):
    """Dense 1x1 layers on rows of 1..65 positions (a 1x1 conv2d on a 7x7 image is 49): the
    AVX-512 VNNI channels-in-lanes path (tiles of 1-8 positions x 1-3 channel vectors, channel
    tails past 16 / 48, asymmetric weights, fused relu) == the oracle, batched, on 1 and 2
    threads with every layer cut."""
    rng = np.random.default_rng(4400 + seed)
    old = _conv1d._set_mt_min_work(0.0)
    try:
        for i in range(40):
            ci = int(rng.choice([1, 3, 4, 5, 16, 17, 63, 96, 160, 321]))
            co = int(rng.choice([1, 7, 15, 16, 17, 33, 47, 48, 49, 63, 64, 65, 97, 160]))
            length = int(rng.choice([1, 2, 5, 7, 8, 9, 15, 16, 17, 25, 36, 48, 49, 63, 64, 65]))
            c = make(1 + (i % 5 == 0), ci, co, length, 1, seed=seed * 1000 + i,
                     asym=i % 4 == 3)
            c["relu"] = i % 2 == 1
            want = expected(c)
            x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
            for threads in (1, 2):
                qrt.set_num_threads(threads)
                np.testing.assert_array_equal(layer(c, v)(x).int_repr(), want,
                                              err_msg=f"threads {threads}: {cfg_str(c)}")
    finally:
        _conv1d._set_mt_min_work(old)
        qrt.set_num_threads(1)


@pytest.mark.parametrize("v", VARIANTS, ids=[_conv1d.ISA_NAMES[v] for v in VARIANTS])
@pytest.mark.parametrize("seed", range(2))
def test_variant_pointwise_blocks(v, seed):
    """1x1 unit-stride layers, which the AVX-512 VNNI packed path packs one position block at
    a time just before the block's tiles: rows across the block edges (16 / 48 / 64 and the
    3-vector folds of qrt__c1_block), tails that end inside a block, left and right padding
    (wider than a block too), groups, channel counts that leave a short last quad row,
    asymmetric weights, batches, channel-strided inputs (a time slice of a longer row), on 1
    and 2 threads with every layer cut: == the oracle."""
    rng = np.random.default_rng(5300 + seed)
    old = _conv1d._set_mt_min_work(0.0)
    try:
        for i in range(12 if UNDER_QEMU else 36):  # (the path is x86's; Arm runs a sample)
            g = int(rng.choice([1, 1, 1, 2, 3]))
            cg = int(rng.choice([1, 3, 4, 5, 8, 13, 16, 31, 64, 97, 144]))
            og = int(rng.choice([1, 5, 8, 16, 24, 33]))
            length = int(rng.choice([65, 66, 80, 95, 96, 97, 112, 127, 128, 129, 196, 250, 784]))
            pad = int(rng.choice([0, 0, 0, 1, 2, 17, 70]))
            c = make(1 + (i % 4 == 0), cg * g, og * g, length, 1, pad=pad, groups=g,
                     seed=seed * 1000 + i, asym=i % 3 == 2,
                     pad_right=pad if i % 5 else int(rng.integers(0, 4)))
            c["relu"] = i % 2 == 1
            cut = int(rng.integers(0, 9)) if i % 2 else 0
            want = expected(dict(c, x=c["x"][:, :, cut:], length=length - cut))
            x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])[:, :, cut:]
            for threads in (1, 2):
                qrt.set_num_threads(threads)
                np.testing.assert_array_equal(layer(c, v)(x).int_repr(), want,
                                              err_msg=f"threads {threads} cut {cut}: "
                                                      f"{cfg_str(c)}")
    finally:
        _conv1d._set_mt_min_work(old)
        qrt.set_num_threads(1)


def _pointwise_call(ci, co, length, wpack_cl, pad=0, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.integers(-128, 128, (co, ci, 1), dtype=np.int8)
    wpack = np.empty(_conv1d.packed_weight_size(co, ci, 1), np.int8)
    wsum = np.empty(co, np.int32)
    _conv1d.pack_weights(w, wpack, wsum)
    x = rng.integers(0, 256, (1, ci, length), dtype=np.uint8)
    lo = length + 2 * pad
    out = np.zeros((1, co, lo), np.uint8)
    scr = np.empty(max(_conv1d.scratch_size(1, ci, co, length, lo, 1, 1, 1, pad, 1), 1), np.uint8)
    cl = {None: None, "real": _conv1d.pack_cl(wpack, co, ci),
          "zero": np.zeros(_conv1d.cl_weight_size(co, ci), np.int8),
          "short": np.zeros(_conv1d.cl_weight_size(co, ci) - 4, np.int8)}[wpack_cl]
    _conv1d.conv1d(x, w, wpack, wsum, np.zeros(co, np.int32),
                   rng.integers(-999, 999, co).astype(np.int32), np.full(co, 2e-3, np.float32),
                   np.zeros(co, np.float32), out, scr, pad_left=pad, input_zero=7,
                   output_zero=100, wpack_cl=cl)
    return out


@pytest.mark.skipif(not VNNI, reason="the channels-in-lanes path belongs to AVX-512 VNNI")
def test_pointwise_short_rows_read_the_cl_weight():
    """The path is taken exactly where it should be: a zeroed channels-in-lanes weight changes
    the result of rows of <= cl_max_len() positions and of nothing else (longer rows, padding)."""
    top = _conv1d.cl_max_len()
    for length in (2, 9, 49, top):  # (one position with c stride 1 is the GEMV path)
        want = _pointwise_call(40, 50, length, None)
        assert np.array_equal(_pointwise_call(40, 50, length, "real"), want)
        assert not np.array_equal(_pointwise_call(40, 50, length, "zero"), want), length
    for length, pad in ((top + 1, 0), (30, 1)):
        want = _pointwise_call(40, 50, length, None, pad)
        assert np.array_equal(_pointwise_call(40, 50, length, "zero", pad), want)


def test_pointwise_cl_weight_checked():
    """A channels-in-lanes weight of the wrong size, or for a layer that is not a dense 1x1,
    is refused before any kernel runs."""
    wpack = np.zeros(_conv1d.packed_weight_size(20, 8, 1), np.int8)
    assert _conv1d.pack_cl(wpack, 20, 8).shape == (_conv1d.cl_weight_size(20, 8),)
    assert _conv1d.cl_weight_size(20, 8) == 32 * 2 * 4
    with pytest.raises(ValueError, match="wrong size"):
        _conv1d.pack_cl(wpack[:-4], 20, 8)
    with pytest.raises(ValueError, match="does not match"):
        _pointwise_call(8, 20, 9, "short")

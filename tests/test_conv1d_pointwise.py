# SPDX-License-Identifier: Apache-2.0
"""Pointwise (kernel 1) conv1d, the 1x1 conv2d / linear GEMM: every variant == the reference.

The AVX-512 VNNI variant runs these calls on its 1x1 tiles (src/x86/conv1d_avx512vnni_packed.c,
qrt__c1_tile1: 4-vector x 6-row and 3-vector x 8-row tiles, the position blocks of
qrt__c1_block, rows shared evenly between a group's tiles).  The cases walk the tile edges:
channels that are no multiple of 4 / 6 / 8, positions around 16 / 48 / 64 (1 to 14 vectors,
a 1x1 image), long rows that the position-chunk driver cuts, large channel counts, per-tensor
and per-channel weights, asymmetric weights (the window-sum correction), relu and clamp
bounds, extreme scales and wrapping biases.
"""

import numpy as np
import pytest

from qrt import _conv1d

from test_conv1d_depthwise import _scales

VARIANTS = [v for v in _conv1d.variants() if v != 0]
IDS = [_conv1d.ISA_NAMES[v] for v in VARIANTS]

LENGTHS = [1, 2, 15, 16, 17, 33, 47, 48, 49, 63, 64, 65, 80, 81, 96, 97, 112, 113, 129, 144,
           145, 160, 196, 208, 209, 224]
CHANNELS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 17, 24, 25, 31, 32, 33]


def random_pw(rng, c_in=None, c_out=None, length=None):
    """A random kernel-1 call (arguments of _conv1d.conv1d)."""
    g = 1 if rng.random() < 0.85 else int(rng.integers(2, 4))
    cg = c_in if c_in is not None else int(rng.choice(CHANNELS))
    og = c_out if c_out is not None else int(rng.choice(CHANNELS))
    length = length if length is not None else int(rng.choice(LENGTHS))
    n = int(rng.integers(1, 3))
    x = rng.integers(0, 256, (n, cg * g, length), dtype=np.uint8)
    if rng.random() < 0.1:
        x[:] = rng.choice([0, 255])
    w = rng.integers(-128, 128, (og * g, cg, 1), dtype=np.int8)
    if rng.random() < 0.2:
        w[rng.random(w.shape) < 0.3] = rng.choice([-128, 127])
    c_out = og * g
    per_channel = rng.random() < 0.6
    asym = rng.random() < 0.3
    wz = rng.integers(-128, 128, c_out if per_channel else 1) if asym else np.zeros(1, int)
    wz = np.broadcast_to(wz, (c_out,)).astype(np.int32).copy()
    bias_kind = rng.random()
    if bias_kind < 0.15:
        bias = rng.integers(-(2**31), 2**31, c_out, dtype=np.int64).astype(np.int32)  # wraps
    elif bias_kind < 0.3:
        bias = np.zeros(c_out, np.int32)
    else:
        bias = rng.integers(-100000, 100001, c_out).astype(np.int32)
    scale = _scales(rng, c_out if per_channel else 1)
    if rng.random() < 0.5:  # scales that keep y in range (the models' case)
        scale = (10.0 ** rng.uniform(-5, -3, c_out if per_channel else 1)).astype(np.float32)
    scale = np.broadcast_to(scale, (c_out,)).copy()
    zo = int(rng.integers(0, 256))
    lo = zo if rng.random() < 0.4 else (0 if rng.random() < 0.5 else int(rng.integers(0, zo + 1)))
    hi = 255 if rng.random() < 0.6 else int(rng.integers(lo, 256))
    return dict(x=x, w=w, wz=wz, bias=bias, scale=scale, groups=g,
                input_zero=int(rng.choice([0, 255])) if rng.random() < 0.2
                else int(rng.integers(0, 256)),
                output_zero=zo, output_min=lo, output_max=hi)


def run_pw(c, variant):
    x, w = c["x"], c["w"]
    n, c_in, length = x.shape
    c_out = w.shape[0]
    wpack = np.empty(_conv1d.packed_weight_size(c_out, w.shape[1], 1), np.int8)
    wsum = np.empty(c_out, np.int32)
    _conv1d.pack_weights(w, wpack, wsum)
    need = _conv1d.scratch_size(n, c_in, c_out, length, length, 1, 1, 1, 0, c["groups"],
                                variant=variant)
    out = np.full((n, c_out, length + 64), 0xA5, np.uint8)  # canaries after each row
    _conv1d.conv1d(x, w, wpack, wsum, c["wz"], c["bias"], c["scale"],
                   np.zeros(c_out, np.float32), out[:, :, :length],
                   np.empty(max(need, 1), np.uint8), groups=c["groups"],
                   input_zero=c["input_zero"], output_zero=c["output_zero"],
                   output_min=c["output_min"], output_max=c["output_max"], variant=variant)
    assert (out[:, :, length:] == 0xA5).all(), "wrote past the output row"
    return out


def describe(c):
    return {k: (v if not isinstance(v, np.ndarray) else v.shape) for k, v in c.items()}


def _check(c, v):
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(run_pw(c, v), run_pw(c, 0), err_msg=str(describe(c)))


@pytest.mark.parametrize("v", VARIANTS, ids=IDS)
@pytest.mark.parametrize("seed", range(2))
def test_pointwise_random(v, seed):
    rng = np.random.default_rng(6100 + seed)
    for _ in range(150):
        _check(random_pw(rng), v)


@pytest.mark.parametrize("v", VARIANTS, ids=IDS)
def test_pointwise_tile_edges(v):
    """Every output-channel count 1..20 (tiles of 6 and 8 rows, shared evenly) x every vector
    count 1..14 (the block plans of qrt__c1_block), plus lengths just off a vector."""
    rng = np.random.default_rng(6200)
    for co in range(1, 21):
        for nv in range(1, 15):
            length = 16 * nv - int(rng.choice([0, 0, 1, 15]))
            _check(random_pw(rng, c_in=int(rng.choice([1, 4, 5, 16, 24])), c_out=co,
                             length=length), v)


@pytest.mark.parametrize("v", VARIANTS, ids=IDS)
def test_pointwise_model_shapes(v):
    """MobileNetV2's 1x1 shapes (some reduced in length), large channels, 1x1 images and long
    rows (cut into position chunks by the VNNI driver)."""
    rng = np.random.default_rng(6300)
    for ci, co, length in [(16, 96, 3136), (24, 144, 784), (144, 24, 784), (32, 192, 784),
                           (384, 64, 196), (96, 576, 196), (576, 160, 49), (160, 960, 49),
                           (960, 320, 49), (320, 1280, 49), (1280, 7, 1), (960, 13, 2),
                           (320, 17, 1000), (1001, 9, 65)]:
        _check(random_pw(rng, c_in=ci, c_out=co, length=length), v)


@pytest.mark.parametrize("v", VARIANTS, ids=IDS)
def test_pointwise_gemv(v):
    """1-4 positions whose channels are adjacent in memory (a linear, a squeeze-excitation 1x1
    conv on a 1x1 image): the VNNI variant's GEMV path (qrt__conv1d_vnni_gemv, weight rows
    streamed one after the other with a software prefetch).  Input channels around the 64-byte
    block and the quad, output channels around the 16-channel block."""
    rng = np.random.default_rng(6400)
    for ci, co, length in [(1, 1, 1), (3, 17, 1), (63, 15, 2), (64, 16, 1), (65, 33, 4),
                           (127, 31, 3), (240, 960, 1), (960, 240, 1), (1280, 1000, 1),
                           (671, 168, 1), (2049, 5, 2)]:
        c = random_pw(rng, c_in=ci, c_out=co, length=length)
        while c["groups"] != 1:
            c = random_pw(rng, c_in=ci, c_out=co, length=length)
        n = c["x"].shape[0]
        xl = rng.integers(0, 256, (n, length, ci), dtype=np.uint8)
        c["x"] = xl.transpose(0, 2, 1)  # [N, C, L] with channel stride 1
        _check(c, v)


@pytest.mark.parametrize("seed", range(3))
def test_pointwise_plan_panels(seed):
    """A Plan of a 1x1 layer in the NEON GEMM case (>= 8 positions, 16..1024 input channels)
    holds the NEON-dot tile's weight panels on a dot-product CPU (and only there), and only for
    that case (not for a linear row); its bytes equal the reference's, through the panels, and
    the direct call's (which packs the panels on the tile's stack)."""
    from qrt import _cpu
    rng = np.random.default_rng(300 + seed)
    dot = _cpu.selected()["conv1d"] == "neondot"
    for c_in, c_out, length in ((24, 20, 49), (16, 96, 8), (40, 9, 196), (320, 33, 17),
                                (1000, 12, 9), (24, 20, 1), (8, 16, 20)):
        c = random_pw(rng, c_in=c_in, c_out=c_out, length=length)
        c["groups"] = 1
        c["x"] = c["x"][:, :c_in]
        c["w"] = c["w"][:c_out]
        for k in ("wz", "bias", "scale"):
            c[k] = c[k][:c_out].copy()
        x, w = c["x"], c["w"]
        n = x.shape[0]
        wpack = np.empty(_conv1d.packed_weight_size(c_out, c_in, 1), np.int8)
        wsum = np.empty(c_out, np.int32)
        _conv1d.pack_weights(w, wpack, wsum)
        plan = _conv1d.Plan(w, wpack, wsum, c["wz"], c["bias"], c["scale"],
                            np.zeros(c_out, np.float32), (n, c_in, length),
                            (c_in * length, length, 1), (n, c_out, length),
                            (c_out * length, length, 1), input_zero=c["input_zero"],
                            output_zero=c["output_zero"], output_min=c["output_min"],
                            output_max=c["output_max"])
        gemm = length >= 8 and 16 <= c_in <= 1024
        assert plan.dot_panels == (dot and gemm), (c_in, c_out, length)
        y = np.zeros(n * c_out * length, np.uint8)
        with np.errstate(all="ignore"):
            plan.run_u8(np.ascontiguousarray(x).reshape(-1), 0, y, 0)
            ref = run_pw(c, 0)[:, :, :length]
            np.testing.assert_array_equal(y.reshape(n, c_out, length), ref,
                                          err_msg=str(describe(c)))
            np.testing.assert_array_equal(run_pw(c, _conv1d.isa())[:, :, :length],
                                          ref)


@pytest.mark.parametrize("seed", range(2))
def test_pointwise_vnni_row_tail(seed):
    """The AVX-512 VNNI row tail (include/qrt/conv1d.h, qrt_conv1d_vnni_tail): a 1x1 row of
    more than 16 positions whose last 1..4 lie past a multiple of 16 runs them with the lanes
    over 4 positions x 4 channel quads, when no weight zero point is set and the row is not on
    the channels-in-lanes path (a plan given wpack_cl, rows of at most 64).  A plan says so
    exactly then (on a VNNI CPU, switch on) and its bytes equal the reference's with the tail
    and without it (one more 16-position vector)."""
    rng = np.random.default_rng(400 + seed)
    vnni = _conv1d.ISA_NAMES[_conv1d.isa()] == "avx512vnni"
    cases = [(112, 24, 196), (672, 16, 196), (33, 13, 49), (16, 8, 20), (200, 9, 36),
             (48, 40, 68), (24, 17, 197), (64, 8, 16), (40, 12, 100), (1000, 8, 65),
             (17, 96, 33), (96, 5, 52), (96, 24, 100), (48, 12, 196)]
    for i, (c_in, c_out, length) in enumerate(cases):
        c = random_pw(rng, c_in=c_in, c_out=c_out, length=length)
        g = c["groups"] = 1 + i % 3 if c_in % 3 == 0 and c_out % 3 == 0 else 1
        c["x"] = c["x"][:, :c_in]
        c["w"] = rng.integers(-128, 128, (c_out, c_in // g, 1), dtype=np.int8)
        c["wz"] = (c["wz"][:1].repeat(c_out) if i % 4 == 3 else np.zeros(c_out, np.int32))
        for k in ("bias", "scale"):
            c[k] = c[k][:1].repeat(c_out).copy()
        x, w = c["x"], c["w"]
        n = x.shape[0]
        wpack = np.empty(_conv1d.packed_weight_size(c_out, c_in // g, 1), np.int8)
        wsum = np.empty(c_out, np.int32)
        _conv1d.pack_weights(w, wpack, wsum)
        cl = None
        if g == 1 and i % 2 == 0:  # the channels-in-lanes weight, as a plan makes it
            cl = _conv1d.pack_cl(wpack, c_out, c_in)
        with np.errstate(all="ignore"):
            ref = run_pw(c, 0)[:, :, :length]
        for on in (True, False):
            old = _conv1d._set_conv_tail(on)
            try:
                plan = _conv1d.Plan(w, wpack, wsum, c["wz"], c["bias"], c["scale"],
                                    np.zeros(c_out, np.float32), (n, c_in, length),
                                    (c_in * length, length, 1), (n, c_out, length),
                                    (c_out * length, length, 1), input_zero=c["input_zero"],
                                    output_zero=c["output_zero"], output_min=c["output_min"],
                                    output_max=c["output_max"], groups=g, wpack_cl=cl)
                tail = (vnni and on and length > 16 and 1 <= length % 16 <= 4 and
                        not c["wz"].any() and (cl is None or length > 64))
                assert plan.vnni_tail == tail, (c_in, c_out, length, g, on)
                y = np.zeros(n * c_out * length, np.uint8)
                with np.errstate(all="ignore"):
                    plan.run_u8(np.ascontiguousarray(x).reshape(-1), 0, y, 0)
                np.testing.assert_array_equal(y.reshape(n, c_out, length), ref,
                                              err_msg=str((describe(c), on)))
            finally:
                _conv1d._set_conv_tail(old)

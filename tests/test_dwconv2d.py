# SPDX-License-Identifier: Apache-2.0
"""The direct depthwise conv2d kernel (include/qrt/dwconv2d.h): every variant == the reference
== the im2col + GEMM path (itself == torch, tests/test_conv2d.py) on random and edge
geometries without torch (these run under qemu on Arm); == torch qnnpack where torch is
installed; threads; the ASan/UBSan C driver."""

import platform

import numpy as np
import pytest

import qrt
import qrt.nn as qnn
from qrt import _conv1d, _cpu
from _cdriver import run_c_driver

from test_conv2d import _case, _torch

DW_VARIANTS = [v for v in _conv1d.dw_variants() if v != 0]
IDS = [_conv1d.ISA_NAMES[v] for v in DW_VARIANTS]


def test_dw_variants_listed():
    from qrt import _cpu
    vs = _conv1d.dw_variants()
    assert vs[0] == 0 and _conv1d.dw_isa() in vs and _conv1d.dw_variant(0) == 0
    for v in vs:
        assert _conv1d.dw_variant(v) == v  # a supported variant can be forced
    assert _cpu.selected()["dwconv2d"] == _conv1d.ISA_NAMES[_conv1d.dw_isa()]
    f = _cpu.features()
    if _cpu.force_ref:
        assert vs == [0]
    elif _cpu.compiled_for == "x86_64":
        assert _conv1d.dw_isa() == (2 if f["avx512vnni"] else 1 if f["avx2"] else 0)
    elif _cpu.compiled_for in ("aarch64", "armv7"):
        assert _conv1d.dw_isa() == (3 if f["neon"] else 0)  # dot-product CPUs run NEON


def _dw_case(rng, n, c, mult, h, w, k, s, p, d, *, per_channel, act, wzp=True):
    kh, kw = k
    co = c * mult
    wi = rng.integers(-128, 128, (co, 1, kh, kw)).astype(np.int8)
    if rng.random() < 0.2:  # extreme weights and inputs: the widest accumulators
        wi[:] = rng.choice([-128, 127], wi.shape)
    if per_channel:
        zp = rng.integers(-128, 128, co) if wzp else np.zeros(co, np.int64)
        qw = qrt.from_int_repr_per_channel(wi, rng.uniform(0.002, 0.02, co), zp, 0, qrt.qint8)
    else:
        qw = qrt.from_int_repr(wi, 0.01, int(rng.integers(-128, 128)) if wzp else 0, qrt.qint8)
    xi = rng.integers(0, 256, (n, c, h, w)).astype(np.uint8)
    return dict(n=n, ci=c, co=co, k=k, s=s, p=p, d=d, g=c, relu=act == "relu", act=act, qw=qw,
                bias=rng.standard_normal(co).astype(np.float32),
                x=qrt.from_int_repr(xi, 0.02, int(rng.integers(0, 256))),
                out=(0.05 * (1 + rng.random()), int(rng.integers(0, 256))))


def _run(case, variant, direct=True, x=None):
    old = qnn.Conv2d._dw_direct
    qnn.Conv2d._dw_direct = direct
    try:
        m = (qnn.ConvReLU2d if case["relu"] else qnn.Conv2d)(
            case["ci"], case["co"], case["k"], case["s"], case["p"], case["d"], case["g"])
        m.set_weight_bias(case["qw"], case["bias"])
        m._set_output_qparams(*case["out"])
        if case.get("act") == "clamp":
            m._clamp = (40, 200)
        m._variant = variant
        return np.asarray(m(case["x"] if x is None else x).int_repr())
    finally:
        qnn.Conv2d._dw_direct = old


def _random_geometry(rng, big=False):
    k = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
    s = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    d = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    reach = (d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1)
    p = tuple(int(rng.integers(0, r + 1)) for r in (reach[0], reach[0], reach[1], reach[1]))
    h = max(reach[0] - p[0] - p[1], 1) + int(rng.integers(0, 40 if big else 9))
    w = max(reach[1] - p[2] - p[3], 1) + int(rng.integers(0, 70 if big else 9))
    return h, w, k, s, p, d


@pytest.mark.parametrize("seed", range(3))
def test_dw_random_variants_vs_reference(seed):
    rng = np.random.default_rng(4400 + seed)
    for i in range(40):
        h, w, k, s, p, d = _random_geometry(rng, big=i % 5 == 0)
        c = int(rng.integers(1, 40 if i % 4 == 0 else 6))
        case = _dw_case(rng, int(rng.integers(1, 3)), c, int(rng.choice([1, 1, 2, 3])), h, w, k,
                        s, p, d, per_channel=bool(i & 1), act=("none", "relu", "clamp")[i % 3])
        want = _run(case, 0, direct=False)  # im2col + the conv1d reference
        cfg = (case["x"].shape, case["co"], k, s, p, d)
        np.testing.assert_array_equal(_run(case, 0), want, err_msg=f"ref {cfg}")
        for v in DW_VARIANTS:
            np.testing.assert_array_equal(_run(case, v), want, err_msg=f"{v} {cfg}")


# (n, c, mult, h, w, k, s, p(t, b, l, r), d): MobileNet layers, 1x1 images, tile edges
# (flat outputs around 16 / 32 / 64), big channel counts, stride 2 with odd sizes, dilation
EDGES = [
    (1, 32, 1, 112, 112, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    (1, 96, 1, 112, 112, (3, 3), (2, 2), (0, 1, 0, 1), (1, 1)),
    (1, 960, 1, 7, 7, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    (1, 8, 1, 1, 1, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    (1, 8, 2, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),
    (2, 5, 2, 9, 31, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),
    (1, 3, 1, 4, 61, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    (1, 3, 1, 2, 63, (1, 3), (1, 1), (0, 0, 1, 2), (1, 1)),
    (1, 3, 1, 5, 65, (3, 3), (1, 2), (1, 1, 1, 1), (1, 1)),
    (1, 4, 1, 16, 16, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2)),
    (1, 40, 1, 9, 9, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1)),
    (1, 6, 3, 17, 17, (7, 7), (3, 3), (3, 3, 3, 3), (1, 1)),
    (1, 2, 1, 3, 40, (2, 2), (5, 7), (2, 2, 2, 2), (1, 1)),  # stride > kernel
    (1, 1, 4, 12, 12, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # c_in 1: a dense conv
    # channel blocks (up to 16 input channels' planes built before their kernels run, the
    # kernel writing a contiguous output in place): counts off the block, small planes,
    # stride 2 (MobileNetV3's 5x5 too), a channel multiplier, 1x1 and odd planes
    (1, 37, 1, 7, 7, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    (2, 19, 1, 14, 14, (3, 3), (2, 2), (0, 1, 0, 1), (1, 1)),
    (1, 33, 1, 14, 14, (5, 5), (2, 2), (2, 2, 2, 2), (1, 1)),
    (1, 21, 1, 7, 7, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1)),
    (1, 18, 2, 5, 3, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),
    (3, 17, 1, 1, 1, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),
    (1, 50, 3, 2, 9, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
]


@pytest.mark.parametrize("cfg", EDGES, ids=[str(i) for i in range(len(EDGES))])
def test_dw_edges_variants_vs_reference(cfg):
    rng = np.random.default_rng(hash(str(cfg)) % 2**32)
    for pc, act in ((False, "none"), (True, "relu"), (True, "clamp")):
        case = _dw_case(rng, *cfg, per_channel=pc, act=act)
        want = _run(case, 0, direct=False)
        np.testing.assert_array_equal(_run(case, 0), want, err_msg=str(cfg))
        for v in DW_VARIANTS:
            np.testing.assert_array_equal(_run(case, v), want, err_msg=f"{cfg} {v}")


def test_dw_strided_and_unbatched_input():
    """NHWC-strided (channels-last view) and unbatched [C, H, W] inputs read in place."""
    rng = np.random.default_rng(5)
    case = _dw_case(rng, 2, 12, 2, 11, 13, (3, 3), (2, 1), (1, 1, 1, 1), (1, 1),
                    per_channel=True, act="relu")
    want = _run(case, 0, direct=False)
    x = case["x"]
    nhwc = qrt.from_int_repr(np.ascontiguousarray(np.asarray(x.int_repr()).transpose(0, 2, 3, 1)),
                             x.q_scale(), x.q_zero_point()).permute(0, 3, 1, 2)
    assert not nhwc.is_contiguous()
    x1 = qrt.from_int_repr(np.asarray(x.int_repr())[1], x.q_scale(), x.q_zero_point())
    for v in [0] + DW_VARIANTS:
        np.testing.assert_array_equal(_run(case, v, x=nhwc), want)
        np.testing.assert_array_equal(_run(case, v, x=x1), want[1])


def test_dw_threads():
    rng = np.random.default_rng(6)
    old_t, old_w = qrt.get_num_threads(), _conv1d._set_dw_mt_min_work(0)
    try:
        for cfg in EDGES[:3] + EDGES[5:6] + EDGES[14:]:
            case = _dw_case(rng, *cfg, per_channel=True, act="relu")
            qrt.set_num_threads(1)
            want = _run(case, 0)
            for t in (2, 3, 5):
                qrt.set_num_threads(t)
                for v in DW_VARIANTS:
                    np.testing.assert_array_equal(_run(case, v), want, err_msg=f"{cfg} {t}")
    finally:
        qrt.set_num_threads(old_t)
        _conv1d._set_dw_mt_min_work(old_w)


def test_dw_vs_torch():
    pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    for i in range(24):
        h, w, k, s, p, d = _random_geometry(rng, big=i % 4 == 0)
        ph, pw = p[0], p[2]  # torch: symmetric padding
        h = max(h, d[0] * (k[0] - 1) + 1 - 2 * ph)
        w = max(w, d[1] * (k[1] - 1) + 1 - 2 * pw)
        c, mult = int(rng.integers(1, 24)), int(rng.choice([1, 2]))
        case = _case(rng, int(rng.integers(1, 3)), c, c * mult, h, w, k, s, (ph, pw), d, c,
                     bool(i & 1), bool(i & 2))
        want = _torch(case)
        for v in [0] + DW_VARIANTS:
            np.testing.assert_array_equal(_run(case, v), want, err_msg=str((case["x"].shape, k)))
    for cfg in EDGES[:3]:
        n, c, mult, h, w, k, s, p, d = cfg
        case = _case(rng, n, c, c * mult, h, w, k, s, (p[0], p[2]), d, c, True, True)
        if p[0] != p[1]:
            continue
        np.testing.assert_array_equal(_run(case, -1), _torch(case), err_msg=str(cfg))


def test_dw_hostile_geometry():
    w = np.zeros((2, 9), np.int8)
    z = np.zeros(2, np.int32)
    f = np.ones(2, np.float32)
    with pytest.raises(ValueError):  # zero output size
        _conv1d.DwPlan(w, z, z, f, (1, 2, 3, 3), (18, 9, 3, 1), (3, 3), (1, 1), (1, 1), (0, 0),
                       (0, 1))
    with pytest.raises(ValueError):  # weight does not match the kernel
        _conv1d.DwPlan(w, z, z, f, (1, 2, 3, 3), (18, 9, 3, 1), (2, 2), (1, 1), (1, 1), (0, 0),
                       (2, 2))
    p = _conv1d.DwPlan(w, z, z, f, (1, 2, 3, 3), (18, 9, 3, 1), (3, 3), (1, 1), (1, 1),
                       (1, 1), (3, 3))
    with pytest.raises(ValueError):
        p.run_u8(np.zeros(17, np.uint8), 0, np.zeros(18, np.uint8), 0)  # input too small
    with pytest.raises(ValueError):
        p.run_u8(np.zeros(18, np.uint8), 0, np.zeros(17, np.uint8), 0)  # output too small
    out = np.full(18, 7, np.uint8)
    p.run_u8(np.zeros(18, np.uint8), 0, out, 0)
    assert (out == 0).all()


def test_dw_c_driver_sanitized(tmp_path):
    """tests/c/dwconv2d_sanitize.c under AddressSanitizer + UBSan: every variant this CPU runs,
    on 1 and 3 threads, == the reference on exact-size buffers."""
    run_c_driver(tmp_path, "dwconv2d_sanitize.c", (400, 9))


def test_dw_channels_in_lanes_mobilenet_kernels():
    """The channels-in-lanes path's constant-geometry loops (3x3 / 3x4 and 5x5 / 5x6 kernels at
    stride 1 and 2, compiled apart from the general loop): MobileNet's 7x7 and 14x14 layers
    (several 64-output chunks per channel: the output chunks are stored last first), its
    stride-2 layers to them, and their edges (odd planes, one-sided padding, channel tails,
    batches) == the im2col reference, every variant."""
    rng = np.random.default_rng(7900)
    for k in ((3, 3), (3, 4), (5, 5), (5, 6)):
        for s, side in ((1, 7), (1, 14), (2, 14), (2, 28)):
            for i in range(6):
                p = [(k[0] // 2, k[0] // 2, k[1] // 2, k[1] // 2), (0, 0, 0, 0),
                     (1, 0, 0, 2)][i % 3]
                h = side - i % 2
                w = side + (i == 5)
                c = int(rng.choice([16, 17, 40, 96]))
                case = _dw_case(rng, 1 + (i == 4), c, 1, h, w, k, (s, s), p, (1, 1),
                                per_channel=bool(i & 1), act=("none", "relu", "clamp")[i % 3])
                want = _run(case, 0, direct=False)
                for v in DW_VARIANTS:
                    np.testing.assert_array_equal(_run(case, v), want,
                                                  err_msg=f"{v} {case['x'].shape} {k} {s} {p}")


@pytest.mark.parametrize("seed", range(2))
def test_dw_channels_in_lanes_small_planes(seed):
    """The channels-in-lanes path (channel multiplier 1, stride 1 or 2, kernels 1x1..7x7, at
    most 256 output positions on AVX-512 VNNI and aarch64 NEON: MobileNet's 7x7 and 14x14
    layers, its 14x14 -> 7x7 stride-2 ones; at most 64 on AVX2): blocks of 16 channels with
    tails, batches, asymmetric padding, relu / clamp == the im2col reference, every variant;
    half the cases with zero weight zero points (AVX-512 VNNI: the byte-quad form where w - wz
    fits int8 at stride 1 or kernels up to 4 wide), half with weight zero points (the int16
    pairs); and the path is taken exactly there (DwPlan.cl_path).  On a VBMI CPU the cases run
    with the byte-permute path (which takes most of them) and without it (as a CPU without VBMI
    runs them), and the path is asserted without it."""
    rng = np.random.default_rng(7700 + seed)
    vnni = _conv1d.ISA_NAMES[_conv1d.dw_isa()] == "avx512vnni"
    avx2 = _conv1d.ISA_NAMES[_conv1d.dw_isa()] == "avx2"
    neon64 = _conv1d.ISA_NAMES[_conv1d.dw_isa()] == "neon" and platform.machine() == "aarch64"
    dot = neon64 and _cpu.features()["dotprod"]
    taken = 0
    for i in range(40):
        s = int(rng.integers(1, 3))
        k = (int(rng.integers(1, 8)), int(rng.integers(1, 8)) if i % 3 == 0 else 0)
        k = (k[0], k[1] or k[0])
        p = tuple(int(rng.integers(0, kk)) if kk > 1 else 0 for kk in (k[0], k[0], k[1], k[1]))
        h = max(k[0] - p[0] - p[1], 1) + int(rng.integers(0, 14))
        w = max(k[1] - p[2] - p[3], 1) + int(rng.integers(0, 14))
        c = int(rng.choice([1, 5, 16, 17, 31, 33, 70]))
        case = _dw_case(rng, int(rng.integers(1, 3)), c, 1, h, w, k, (s, s), p, (1, 1),
                        per_channel=bool(i & 1), act=("none", "relu", "clamp")[i % 3],
                        wzp=i % 4 >= 2)
        want = _run(case, 0, direct=False)
        cfg = (case["x"].shape, k, s, p)
        for alt in (True, False):  # False: without the byte-permute path and sdot planes
            old = _conv1d._set_dw_permute(alt), _conv1d._set_dw_dot(alt)
            try:
                for v in DW_VARIANTS:
                    np.testing.assert_array_equal(_run(case, v), want,
                                                  err_msg=f"{v} {cfg} permute / dot {alt}")
            finally:
                _conv1d._set_dw_permute(old[0]), _conv1d._set_dw_dot(old[1])
        ho = (h + p[0] + p[1] - k[0]) // s + 1
        wo = (w + p[2] + p[3] - k[1]) // s + 1
        wt = np.zeros((c, k[0] * k[1]), np.int8)
        z, f = np.zeros(c, np.int32), np.full(c, 1e-3, np.float32)
        old = _conv1d._set_dw_permute(False)
        try:
            plan = _conv1d.DwPlan(wt, z, z, f, (1, c, h, w), (c * h * w, h * w, w, 1), k,
                                  (s, s), (1, 1), (p[0], p[2]), (ho, wo))
            assert not plan.permute_path
            cl_path = plan.cl_path
        finally:
            _conv1d._set_dw_permute(old)
        # QRT__DWCL_MAXOUT, _AVX2, _NEON (src/dwconv2d_impl.h): 256, 64 and 256 outputs; on
        # dot-product CPUs the sdot byte planes take those over 64 (QRT__DWPD_MINOUT)
        assert cl_path == (((vnni or neon64) and ho * wo <= (64 if dot else 256)) or
                           (avx2 and ho * wo <= 64)), cfg
        # every case has the byte-plane geometry: on a dot-product CPU the sdot planes take
        # the planes over 64 outputs (the plan packed no channels-in-lanes weight for them)
        assert plan.dot_path == (dot and ho * wo > 64), cfg
        assert not _conv1d.DwPlan(wt, z, z, f, (1, c, h, w), (c * h * w, h * w, w, 1), k,
                                  (s, s), (1, 1), (p[0], p[2]), (ho, wo), cl=False).cl_path
        taken += cl_path
    assert taken > (4 if avx2 else 10) or not (vnni or avx2 or neon64)


def _each_variant_on_off(setter, case, want, cfg):
    """Every variant == want with a path switch (_conv1d._set_dw_*) on, then off."""
    for on in (True, False):
        old = setter(on)
        try:
            for v in DW_VARIANTS:
                np.testing.assert_array_equal(_run(case, v), want, err_msg=f"{v} {cfg} {on}")
        finally:
            setter(old)


@pytest.mark.parametrize("seed", range(2))
def test_dw_byte_planes(seed):
    """The byte-plane path of AVX-512 VNNI and aarch64 NEON (stride 1 or 2, dilation 1, NCHW
    rows: MobileNet's 112x112 .. 28x28 layers, and the smaller ones with a channel multiplier
    or kernels over 7): vpdpbusd on the input bytes / NEON's int8 tap pairs (smull + smlal on
    x ^ 0x80) / on dot-product CPUs sdot quads of a kernel row (run with and without them), the
    input zero point in the bias == the im2col reference, every variant, on its
    edges: flat outputs around its 16 / 64 / 128 steps, rows whose reads reach the padding on
    either side, asymmetric and one-sided padding, 3x3 / 5x5 (compiled apart) and other
    kernels, weight zero points that put w - wz outside int8 (AVX-512: split into two or three
    int8 terms, w = 127 with wz = -128 is 255 = 127 + 127 + 1; NEON: the widening kernel), and
    NEON's -128 tap pairs (a pair sum of 2 * 128 * 128 would overflow int16: the widening
    kernel too); and the path is taken exactly there (DwPlan.byte_path)."""
    rng = np.random.default_rng(8100 + seed)
    isa = _conv1d.ISA_NAMES[_conv1d.dw_isa()]
    vnni = isa == "avx512vnni" or (isa == "neon" and platform.machine() == "aarch64")
    dot = isa == "neon" and platform.machine() == "aarch64" and _cpu.features()["dotprod"]
    taken = dotted = 0
    for i in range(36):
        s = 1 + i % 2
        k = [(3, 3), (5, 5), (3, 3), (1, 1), (2, 4), (7, 7), (3, 5), (9, 9), (4, 1)][i % 9]
        p = [tuple(kk // 2 for kk in (k[0], k[0], k[1], k[1])), (0, 0, 0, 0),
             (k[0] - 1, 0, 0, k[1] - 1), (0, k[0] - 1, k[1] - 1, 0)][i % 4]
        side = int(rng.choice([17, 23, 24, 33, 40, 57, 64, 65]))
        h, w = side + int(rng.integers(0, 3)), side * s + int(rng.integers(-1, 3))
        h, w = max(h, k[0]), max(w, k[1])
        c = int(rng.choice([1, 3, 7, 16]))
        mult = int(rng.choice([1, 1, 2]))
        case = _dw_case(rng, 1 + (i % 7 == 3), c, mult, h, w, k, (s, s), p, (1, 1),
                        per_channel=bool(i & 1), act=("none", "relu", "clamp")[i % 3],
                        wzp=i % 3 != 0)
        if i % 6 == 1:  # the widest weight terms: 255 and -255 among the taps
            wi = np.asarray(case["qw"].int_repr()).copy()
            wi.reshape(wi.shape[0], -1)[:, 0] = 127
            wi.reshape(wi.shape[0], -1)[:, -1] = -128
            zp = np.where(np.arange(wi.shape[0]) % 2 == 0, -128, 127)
            case["qw"] = qrt.from_int_repr_per_channel(
                wi, rng.uniform(0.002, 0.02, wi.shape[0]), zp, 0, qrt.qint8)
        if i % 6 == 4 and k[0] * k[1] >= 2:  # -128 tap pairs (0, 1) on half the channels
            wi = np.asarray(case["qw"].int_repr()).copy()
            wi.reshape(wi.shape[0], -1)[::2, :2] = -128
            case["qw"] = qrt.from_int_repr_per_channel(
                wi, rng.uniform(0.002, 0.02, wi.shape[0]), np.zeros(wi.shape[0], np.int64), 0,
                qrt.qint8)
        want = _run(case, 0, direct=False)
        cfg = (case["x"].shape, case["co"], k, s, p)
        # off: the int8 tap pairs a CPU without the dot product runs
        _each_variant_on_off(_conv1d._set_dw_dot, case, want, cfg)
        ho = (h + p[0] + p[1] - k[0]) // s + 1
        wo = (w + p[2] + p[3] - k[1]) // s + 1
        wt = np.zeros((c * mult, k[0] * k[1]), np.int8)
        z, f = np.zeros(c * mult, np.int32), np.full(c * mult, 1e-3, np.float32)
        plan = _conv1d.DwPlan(wt, z, z, f, (1, c, h, w), (c * h * w, h * w, w, 1), k, (s, s),
                              (1, 1), (p[0], p[2]), (ho, wo))
        taken += plan.byte_path
        assert plan.byte_path == (vnni and not plan.cl_path and not plan.permute_path), cfg
        # the sdot byte planes: every byte-plane call on a dot-product CPU (aarch64)
        assert plan.dot_path == (dot and plan.byte_path), cfg
        dotted += plan.dot_path
    assert taken > 12 or not vnni
    assert dotted == (taken if dot else 0)


def test_dw_stride2_rows():
    """AVX-512 VNNI stride-2 calls that read the image rows in place (the byte planes' sums
    without the plane copies): MobileNetV2's and V3-Large's 112 -> 56 and 56 -> 28 layers and
    random wide rows around the 32-output items (17 .. 200 output columns: one item, an odd
    count, a spill past the row), padding on either side and none, kernels up to 8 wide (3x3 and
    5x5 compiled apart), weight zero points outside int8 (the split terms), multipliers,
    batches, relu / clamp == the im2col reference, with the rows on and off; the first and
    last planes of a tensor take the byte planes; DwPlan.rows_path exactly there."""
    rng = np.random.default_rng(8200)
    isa = _conv1d.ISA_NAMES[_conv1d.dw_isa()]
    cases = [((3, 3), 112, 112, (1, 1, 1, 1), 1), ((3, 3), 56, 56, (1, 1, 1, 1), 1),
             ((5, 5), 56, 56, (2, 2, 2, 2), 1)]
    widths = [34, 130, 36, 131, 63, 64, 65, 66, 67, 96, 127, 190, 256, 400]
    for i in range(28):  # every width with two kernels and paddings (1..7 items a row)
        k = [(3, 3), (5, 5), (3, 3), (1, 7), (4, 8), (2, 2), (3, 3)][i % 7]
        p = [tuple(kk // 2 for kk in (k[0], k[0], k[1], k[1])), (0, 0, 0, 0),
             (k[0] - 1, 0, 0, k[1] - 1), (0, k[0] - 1, k[1] - 1, 0)][i % 4]
        cases.append((k, int(rng.integers(k[0] + 2, 24)), widths[i % 14], p, 1 + (i % 5 == 2)))
    taken = 0
    for i, (k, h, w, p, mult) in enumerate(cases):
        c = 3 if h * w > 10000 else int(rng.choice([1, 2, 5]))
        case = _dw_case(rng, 1 + (i % 4 == 1), c, mult, h, w, k, (2, 2), p, (1, 1),
                        per_channel=bool(i & 1), act=("none", "relu", "clamp")[i % 3],
                        wzp=i % 3 == 2)
        want = _run(case, 0, direct=False)
        cfg = (case["x"].shape, case["co"], k, p)
        _each_variant_on_off(_conv1d._set_dw_rows, case, want, cfg)
        ho = (h + p[0] + p[1] - k[0]) // 2 + 1
        wo = (w + p[2] + p[3] - k[1]) // 2 + 1
        co = c * mult
        z, f = np.zeros(co, np.int32), np.full(co, 1e-3, np.float32)
        plan = _conv1d.DwPlan(np.zeros((co, k[0] * k[1]), np.int8), z, z, f, (1, c, h, w),
                              (c * h * w, h * w, w, 1), k, (2, 2), (1, 1), (p[0], p[2]), (ho, wo))
        want_rows = (isa == "avx512vnni" and plan.byte_path and wo >= 17 and k[1] <= 8)
        assert plan.rows_path == want_rows, cfg
        taken += plan.rows_path
    assert taken >= 12 or isa != "avx512vnni"


def _has_vbmi():
    """AVX-512 VBMI from the kernel's cpuinfo flags (x86 Linux; qrt's feature bit is private)."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(ln.startswith("flags") and " avx512vbmi " in ln + " " for ln in f)
    except OSError:
        return False


@pytest.mark.parametrize("seed", range(2))
def test_dw_byte_permute(seed):
    """The byte-permute path of AVX-512 VNNI CPUs with VBMI (src/x86/dwconv2d_avx512vbmi.c:
    small NCHW planes, int8 weights w - wz; groups of 16 flat outputs gathered by vpermt2b from
    127 window bytes, byte 127 input_zero for the padding): strides 1-3 per axis, dilation 1-2,
    kernels 1x1..5x5, one-sided and asymmetric padding, 1-row and 1-column images, batches,
    channel multipliers, relu / clamp == the im2col reference, every variant; weights with
    zero and with small weight zero points (taken) and with zero points that put w - wz outside
    int8 (the other paths); and MobileNet's layers take the path exactly where documented."""
    rng = np.random.default_rng(9300 + seed)
    vbmi = _conv1d.ISA_NAMES[_conv1d.dw_isa()] == "avx512vnni" and _has_vbmi()
    taken = 0
    for i in range(40):
        k = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
        s = (int(rng.integers(1, 4)), int(rng.integers(1, 4))) if i % 3 else (1 + i % 2,) * 2
        d = (1 + (i % 5 == 1), 1 + (i % 7 == 2))
        reach = (d[0] * (k[0] - 1) + 1, d[1] * (k[1] - 1) + 1)
        p = tuple(int(rng.integers(0, r + 1)) for r in (reach[0], reach[0], reach[1], reach[1]))
        h = max(reach[0] - p[0] - p[1], 1) + int(rng.integers(0, 30))
        w = max(reach[1] - p[2] - p[3], 1) + int(rng.integers(0, 30))
        if i % 8 == 5:
            h = max(reach[0] - p[0] - p[1], 1)  # one output row
        c = int(rng.choice([1, 5, 16, 33]))
        mult = 1 + (i % 6 == 3)
        case = _dw_case(rng, 1 + (i % 4 == 1), c, mult, h, w, k, s, p, d,
                        per_channel=bool(i & 1), act=("none", "relu", "clamp")[i % 3],
                        wzp=i % 10 == 9)
        if i % 5 == 2:  # small weight zero points: w - wz still inside int8
            wi = np.clip(np.asarray(case["qw"].int_repr()), -124, 124).astype(np.int8)
            case["qw"] = qrt.from_int_repr_per_channel(
                wi, rng.uniform(0.002, 0.02, wi.shape[0]),
                rng.integers(-3, 4, wi.shape[0]), 0, qrt.qint8)
        want = _run(case, 0, direct=False)
        cfg = (case["x"].shape, case["co"], k, s, p, d)
        for v in DW_VARIANTS:
            np.testing.assert_array_equal(_run(case, v), want, err_msg=f"{v} {cfg}")
        ho = (h + p[0] + p[1] - reach[0]) // s[0] + 1
        wo = (w + p[2] + p[3] - reach[1]) // s[1] + 1
        wi = np.asarray(case["qw"].int_repr()).reshape(c * mult, -1)
        qw = case["qw"]
        zp = np.asarray(qw.q_per_channel_zero_points() if qw.qscheme() is qrt.per_channel_affine
                        else np.full(c * mult, qw.q_zero_point()), np.int32)
        plan = _conv1d.DwPlan(wi, zp, zp, np.full(c * mult, 1e-3, np.float32), (1, c, h, w),
                              (c * h * w, h * w, w, 1), k, s, d, (p[0], p[2]), (ho, wo))
        fits = int((wi.astype(np.int32) - zp[:, None]).min()) >= -128 and \
            int((wi.astype(np.int32) - zp[:, None]).max()) <= 127
        assert plan.w_int8 == fits, cfg
        assert not plan.permute_path or (vbmi and fits and ho * wo <= 1024), cfg
        taken += plan.permute_path
    assert taken > 10 or not vbmi

    def path(hw, k, s, cl=True):
        ho = (hw + 2 * (k // 2) - k) // s + 1
        z, f = np.zeros(8, np.int32), np.full(8, 1e-3, np.float32)
        return _conv1d.DwPlan(np.zeros((8, k * k), np.int8), z, z, f, (1, 8, hw, hw),
                              (8 * hw * hw, hw * hw, hw, 1), (k, k), (s, s), (1, 1),
                              (k // 2, k // 2), (ho, ho), cl=cl).permute_path

    # 14x14 and 28x28 3x3 layers and the stride-2 ones to 14x14 / 7x7 take it; the 7x7 stride-1
    # layers keep the channels-in-lanes path (it ran faster there) unless it is not given;
    # 56x56 rows and 28x28 5x5 windows exceed the 127 window bytes
    assert [path(14, 3, 1), path(28, 3, 1), path(28, 3, 2), path(14, 3, 2), path(14, 5, 2),
            path(7, 3, 1), path(7, 3, 1, cl=False), path(56, 3, 1), path(28, 5, 1)] == \
        [vbmi] * 5 + [False, vbmi, False, False]

# SPDX-License-Identifier: Apache-2.0
"""How layers are cut over threads (src/conv1d_threads.c, src/dwconv2d.c, src/add.c): balanced
parts, and every cut bit-identical with one thread: conv2d (1x1, 3x3, strided, grouped,
depthwise) at MobileNet-like and odd shapes on 1..4 threads with the thresholds off, the
output buffer pre-filled with garbage so a position no part writes shows; the quantized add
(functional and the plan's bound kernel) likewise.  No torch."""

import numpy as np
import pytest

import qrt
import qrt.nn as qnn
from qrt import _conv1d, _ops

from test_conv2d import _case

THREADS = (1, 2, 3, 4)


@pytest.fixture
def cut_everything():
    old_t = qrt.get_num_threads()
    old_w = _conv1d._set_mt_min_work(0.0)
    old_dw = _conv1d._set_dw_mt_min_work(0.0)
    old_im = _conv1d._set_im2col_mt_min_bytes(0.0)
    yield
    _conv1d._set_im2col_mt_min_bytes(old_im)
    _conv1d._set_mt_min_work(old_w)
    _conv1d._set_dw_mt_min_work(old_dw)
    qrt.set_num_threads(old_t)


def _granules(n, g):
    return (n + g - 1) // g


@pytest.mark.parametrize("threads", (2, 3, 4, 7))
@pytest.mark.parametrize("len_out,c_out,c_in", [
    (196, 64, 192), (49, 160, 960), (49, 1280, 320), (1, 1000, 1280), (784, 32, 192),
    (12544, 96, 16), (97, 24, 24), (33, 8, 512), (16, 200, 200)])
def test_split_balanced(threads, len_out, c_out, c_in):
    """Every thread gets a share; parts of one axis differ by at most one granule."""
    chunks, axis, per, pt, pc = _conv1d.split(1, c_in, c_out, len_out, len_out, 1,
                                              threads=threads)
    assert chunks == pt * pc and chunks >= 1
    if chunks == 1:
        return
    assert axis == {(True, False): 1, (False, True): 2, (True, True): 3}[(pt > 1, pc > 1)]
    if _granules(len_out, 16) >= 2 * threads or _granules(c_out, 8) >= threads:
        assert chunks >= threads, (chunks, axis, pt, pc)
    for parts, units, g in ((pt, len_out, 16), (pc, c_out, 8)):
        gr = _granules(units, g)
        sizes = [gr * (k + 1) // parts - gr * k // parts for k in range(parts)]
        assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1
    if pt > 1:
        assert len_out >= 32 * pt - 31  # at least two 16-position granules per part


def test_split_batch_and_small():
    assert _conv1d.split(8, 64, 64, 1000, 1000, 3, 1, 1, 1, 1, threads=2)[:2] == (2, 0)
    # batch 3 on 2 threads would be 2 + 1 rows: positions instead
    assert _conv1d.split(3, 64, 64, 1000, 1000, 3, 1, 1, 1, 1, threads=2)[1] == 1
    assert _conv1d.split(1, 8, 8, 10, 10, 3, 1, 1, 1, 1, threads=2)[0] == 1


SHAPES = [  # n, ci, co, h, w, k, s, p, d, g
    (1, 64, 192, 14, 14, 1, 1, 0, 1, 1),    # 196 positions: 6 + 7 granules
    (1, 96, 40, 7, 7, 1, 1, 0, 1, 1),       # 49 positions: a grid on 4 threads
    (1, 32, 48, 9, 11, 1, 1, 0, 1, 1),      # odd 1x1
    (1, 3, 16, 29, 31, 3, 2, 1, 1, 1),      # stem-like: im2col, stride 2
    (1, 12, 20, 13, 17, 3, 1, 1, 1, 1),     # 3x3
    (1, 16, 24, 11, 10, 3, 2, 1, 1, 4),     # grouped, strided
    (2, 8, 24, 15, 9, 5, 1, 2, 1, 1),       # batch 2 (odd on 3 and 4 threads)
    (3, 24, 24, 7, 7, 1, 1, 0, 1, 1),       # batch 3
    (1, 5, 7, 1, 1, 1, 1, 0, 1, 1),         # one position
    (1, 8, 8, 3, 40, 3, 1, 4, 1, 1),        # padding wider than a part's input span
]
DW_SHAPES = [
    (1, 32, 32, 28, 28, 3, 1, 1, 1, 32),
    (1, 24, 24, 15, 13, 3, 2, 1, 1, 24),
    (1, 7, 7, 9, 9, 5, 1, 2, 2, 7),
    (2, 5, 10, 8, 6, 3, 1, 1, 1, 5),        # channel multiplier 2, batch 2
]


def _conv(case, out_fill):
    m = (qnn.ConvReLU2d if case["relu"] else qnn.Conv2d)(case["ci"], case["co"], case["k"],
                                                         case["s"], case["p"], case["d"],
                                                         case["g"])
    m.set_weight_bias(case["qw"], case["bias"])
    m._set_output_qparams(*case["out"])
    oshape = m.output_shape(case["x"].shape)
    y = qrt.from_int_repr(np.full(oshape, out_fill, np.uint8), *case["out"])
    return m(case["x"], out=y).int_repr().copy()


@pytest.mark.parametrize("shape", SHAPES + DW_SHAPES)
def test_conv2d_threads_identical(cut_everything, shape):
    rng = np.random.default_rng(sum(shape))
    for per_channel, relu in ((True, False), (False, True)):
        case = _case(rng, *shape, per_channel=per_channel, relu=relu)
        qrt.set_num_threads(1)
        want = _conv(case, 0)
        for t in THREADS:
            qrt.set_num_threads(t)
            for fill in (0, 255):
                np.testing.assert_array_equal(_conv(case, fill), want,
                                              err_msg=f"{shape} threads {t} fill {fill}")


def test_conv2d_threads_random(cut_everything):
    rng = np.random.default_rng(42)
    for _ in range(12):
        g = int(rng.choice([1, 1, 2]))
        ci = g * int(rng.integers(1, 24))
        co = g * int(rng.integers(1, 40))
        h, w = (int(v) for v in rng.integers(1, 30, 2))
        k = int(rng.choice([1, 3]))
        s = int(rng.choice([1, 2]))
        p = int(rng.integers(0, k))
        if h + 2 * p < k or w + 2 * p < k:
            continue
        shape = (int(rng.integers(1, 4)), ci, co, h, w, k, s, p, 1, g)
        case = _case(rng, *shape, per_channel=bool(rng.integers(2)), relu=bool(rng.integers(2)))
        qrt.set_num_threads(1)
        want = _conv(case, 0)
        for t in THREADS[1:]:
            qrt.set_num_threads(t)
            np.testing.assert_array_equal(_conv(case, 77), want, err_msg=f"{shape} t{t}")


def test_im2col_threads_identical(cut_everything):
    """The im2col step cut into row runs (qrt_im2col_u8_mt) writes the bytes of one thread:
    stride-2 stems (the SSE2 row path and its overlapping last vector), odd widths, dilation,
    padding wider than a row's first vector, channels-last input strides, batch 2."""
    rng = np.random.default_rng(77)
    cases = [((1, 3, 224, 224), (3, 3), (2, 2), (1, 1), (1, 1)),
             ((1, 3, 37, 53), (3, 3), (2, 2), (1, 1), (1, 1)),
             ((2, 5, 19, 40), (5, 3), (2, 2), (2, 1), (2, 3)),
             ((1, 4, 9, 70), (3, 3), (1, 2), (1, 1), (0, 2)),
             ((1, 2, 5, 33), (1, 1), (2, 2), (1, 1), (0, 0))]
    for shape, k, s, d, pad in cases:
        n, c, h, w = shape
        ho = (h + 2 * pad[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
        wo = (w + 2 * pad[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
        for cl in (False, True):
            xa = rng.integers(0, 256, (n, h, w, c) if cl else shape, dtype=np.uint8)
            st = (h * w * c, 1, w * c, c) if cl else (c * h * w, h * w, w, 1)
            im = _conv1d.Im2col(shape, st, k, s, d, pad, (ho, wo), 9, _conv1d.IM2COL_CK_P)
            # the reference: gather every window element in numpy
            xp = np.full((n, c, h + 2 * pad[0] + 64, w + 2 * pad[1] + 64), 9, np.uint8)
            xv = xa.transpose(0, 3, 1, 2) if cl else xa
            xp[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + w] = xv
            want = np.empty((n, c, k[0], k[1], ho, wo), np.uint8)
            for ky in range(k[0]):
                for kx in range(k[1]):
                    want[:, :, ky, kx] = xp[:, :, ky * d[0]:ky * d[0] + s[0] * ho:s[0],
                                            kx * d[1]:kx * d[1] + s[1] * wo:s[1]]
            for t in THREADS:
                qrt.set_num_threads(t)
                assert im.parts(t) == (1 if t == 1 else min(2 * t, n * c * k[0] * k[1] * ho))
                col = np.full(im.size + 16, 0xA5, np.uint8)
                im.run(xa.reshape(-1), 0, col)
                np.testing.assert_array_equal(col[:im.size].reshape(want.shape), want,
                                              err_msg=f"{shape} {k} {s} {d} {pad} cl={cl} t{t}")
                assert (col[im.size:] == 0xA5).all()


@pytest.mark.parametrize("n", [1, 63, 64, 65, 32767, 32768, 32769, 75264, 100003])
def test_add_threads_identical(n):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 256, n, dtype=np.uint8)
    b = rng.integers(0, 256, n, dtype=np.uint8)
    prm = (0.031, 120, 0.027, 131, 0.045, 125)
    old = qrt.get_num_threads()
    try:
        want = np.empty(n, np.uint8)
        _ops.add_qnnp(a, b, want, *prm, False, 0)  # the reference, one thread
        for relu in (False, True):
            if relu:
                _ops.add_qnnp(a, b, want, *prm, True, 0)
            kern = _ops.AddQnnp(*prm, relu)
            for t in THREADS:
                qrt.set_num_threads(t)
                got = np.full(n, 3, np.uint8)
                kern(a, b, got)
                np.testing.assert_array_equal(got, want, err_msg=f"n {n} t {t} relu {relu}")
                got = np.full(n, 3, np.uint8)
                _ops.add_qnnp(a, b, got, *prm, relu)
                np.testing.assert_array_equal(got, want)
                alias = a.copy()  # out aliasing an input, element for element
                kern(alias, b, alias)
                np.testing.assert_array_equal(alias, want)
    finally:
        qrt.set_num_threads(old)


def test_add_plan_binding_equals_functional():
    """A model's add binds the kernel itself (parameters computed once): the same integers as
    qrt.functional.add, and refused qparams keep the generic path."""
    from qrt.ops.eltwise import _qnnp_binding
    rng = np.random.default_rng(5)
    shape = (1, 24, 56, 56)
    x = qrt.from_int_repr(rng.integers(0, 256, shape, dtype=np.uint8), 0.03, 128)
    r = qrt.from_int_repr(rng.integers(0, 256, shape, dtype=np.uint8), 0.05, 110)
    for relu in (False, True):
        y = qrt.from_int_repr(np.zeros(shape, np.uint8), 0.07, 100)
        fn, args, kw = _qnnp_binding((x, r), y, 0.07, 100, relu)
        fn(*args, **kw)
        f = qrt.functional.add_relu if relu else qrt.functional.add
        np.testing.assert_array_equal(y.int_repr(), f(x, r, 0.07, 100).int_repr())
    y = qrt.from_int_repr(np.zeros(shape, np.uint8), 1e-6, 100)
    assert _qnnp_binding((x, r), y, 1e-6, 100, False) is None  # ratio QNNPACK refuses
    assert _qnnp_binding((x, r[:, :, :, ::2]), y[:, :, :, ::2], 0.07, 100, False) is None


def test_conv2d_direct_binding_equals_call():
    """A plan's 1x1 / depthwise conv2d binds its kernel plan itself: the same integers as the
    layer's call; an im2col layer keeps the layer's call."""
    from qrt.ops.conv import _direct_binding
    rng = np.random.default_rng(9)
    for shape, direct in (((1, 16, 24, 9, 9, 1, 1, 0, 1, 1), True),
                          ((1, 16, 16, 9, 9, 3, 1, 1, 1, 16), True),
                          ((1, 4, 8, 9, 9, 3, 2, 1, 1, 1), False)):
        case = _case(rng, *shape, per_channel=True, relu=True)
        m = qnn.ConvReLU2d(case["ci"], case["co"], case["k"], case["s"], case["p"], case["d"],
                           case["g"])
        m.set_weight_bias(case["qw"], case["bias"])
        m._set_output_qparams(*case["out"])
        want = m(case["x"]).int_repr().copy()
        y = qrt.from_int_repr(np.zeros(want.shape, np.uint8), *case["out"])
        fast = _direct_binding(m, case["x"], y)
        assert (fast is not None) == direct, shape
        if fast is not None:
            fn, args, kw = fast
            fn(*args, **kw)
            np.testing.assert_array_equal(y.int_repr(), want)


def test_mobilenet_v2_threads_exact_vs_torch(tmp_path, cut_everything):
    """torchvision's quantizable MobileNetV2 (residual adds, depthwise, 1x1, the classifier) on
    1-4 threads with every layer cut: == torch qnnpack each time."""
    torch = pytest.importorskip("torch")
    import qrt_export
    from test_vision import _eager
    tm = _eager("mobilenet_v2", 64)
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 3, 64, 64, generator=g)
    qrt_export.export(tm, x[:1], tmp_path / "m.bin", verbose=False)
    with torch.no_grad():
        want = tm(x).numpy()
    assert np.abs(want).max() > 0
    q = qrt.load(tmp_path / "m.bin")  # after the thresholds are lowered: plans size for them
    for t in THREADS:
        qrt.set_num_threads(t)
        np.testing.assert_array_equal(q(x.numpy()), want, err_msg=f"threads {t}")

# SPDX-License-Identifier: Apache-2.0
"""Issue 16: depthwise float convolutions (in/groups = 1) of 1-d and 2-d run the C kernel of
include/qrt/float_conv.h, 1-d as height 1, and with many output channels per input channel
(a Silero-VAD-style ``Conv1d(1, 64, 32, stride=16)`` front end) its channel-multiplier-
innermost form ``qrt_dwconv2d_f32_cm``: every output bit equal to the numpy specification
(``conv_steps(..., use_kernel=False)``), NaN and infinities included, and within
docs/float-ops.md's conv1d bound of torch; the kernel's arguments are checked.
"""

import numpy as np
import pytest

from test_float_ops import run_op, sum_ratio

# n, c_in, multiplier, k, length, stride, dilation, padding
CFGS_1D = [
    (1, 1, 64, 32, 480, 16, 1, 0),      # the VAD front end
    (1, 1, 64, 32, 512, 16, 1, 0),
    (2, 3, 8, 5, 40, 2, 2, 3),
    (1, 2, 65, 4, 31, 3, 1, 1),          # one block of 64 + 1
    (1, 1, 130, 7, 50, 1, 3, 0),
    (1, 4, 1, 3, 17, 1, 1, 1),           # plain depthwise (multiplier 1)
    (2, 3, 2, 9, 33, 4, 1, 4),
    (1, 2, 7, 2, 9, 5, 4, 0),            # below the multiplier cut
    (1, 1, 16, 480, 480, 16, 1, 0),      # one output
]


def _spec_and_kernel(x, w, b, c, s, p, d, lo):
    from qrt.ops.float_nn import conv_steps
    n = x.shape[0]
    spec = np.full((n, w.shape[0], lo), np.nan, np.float32)
    conv_steps(x, spec, w, c, (s,), ((p, p),), (d,), b, "zeros", use_kernel=False)()
    y = np.full_like(spec, -7.0)
    conv_steps(x, y, w, c, (s,), ((p, p),), (d,), b, "zeros")()
    return spec, y


def test_dwconv1d_kernel_is_its_numpy_specification(rng):
    for n, c, m, k, length, s, d, p in CFGS_1D:
        x = rng.standard_normal((n, c, length)).astype(np.float32)
        w = rng.standard_normal((c * m, 1, k)).astype(np.float32)
        b = rng.standard_normal(c * m).astype(np.float32)
        lo = (length + 2 * p - d * (k - 1) - 1) // s + 1
        for bias in (b, None):
            spec, y = _spec_and_kernel(x, w, bias, c, s, p, d, lo)
            assert np.array_equal(y, spec), (n, c, m, k, s, d, p, bias is None)
        # edge values: NaN, infinities, huge and tiny inputs propagate identically (no
        # subnormals: numpy on armv7 flushes them, the C kernel does not)
        x[0, 0, :5] = [np.nan, np.inf, -np.inf, 3e38, 1e-30]
        w[0, 0, 0] = 1e30
        spec, y = _spec_and_kernel(x, w, b, c, s, p, d, lo)
        assert np.array_equal(y, spec, equal_nan=True), (n, c, m, k, s, d, p)


def test_dwconv2d_multiplier_form_is_the_same_bits(rng):
    """2-d depthwise with a multiplier >= CM_MIN_MULT: the cm form == the specification, and
    qrt_dwconv2d_f32_cm == qrt_dwconv2d_f32 called directly."""
    from qrt import _ops
    from qrt.ops.float_nn import CM_MIN_MULT, conv_steps
    for n, c, m, k, hw, st, d, pd in [(1, 2, CM_MIN_MULT, (3, 3), (9, 8), (2, 1), (1, 2), 1),
                                      (2, 1, 70, (2, 5), (6, 13), (1, 3), (2, 1), 2),
                                      (1, 3, 9, (1, 4), (5, 9), (2, 2), (1, 1), 0)]:
        x = rng.standard_normal((n, c) + hw).astype(np.float32)
        w = rng.standard_normal((c * m, 1) + k).astype(np.float32)
        b = rng.standard_normal(c * m).astype(np.float32)
        pp = ((pd, pd), (pd, pd))
        ho = (hw[0] + 2 * pd - d[0] * (k[0] - 1) - 1) // st[0] + 1
        wo = (hw[1] + 2 * pd - d[1] * (k[1] - 1) - 1) // st[1] + 1
        spec = np.full((n, c * m, ho, wo), np.nan, np.float32)
        conv_steps(x, spec, w, c, st, pp, d, b, "zeros", use_kernel=False)()
        y = np.full_like(spec, np.nan)
        conv_steps(x, y, w, c, st, pp, d, b, "zeros")()
        assert np.array_equal(y, spec), (c, m, k, st, d)
        xp = np.pad(x, ((0, 0), (0, 0), (pd, pd), (pd, pd)))
        geo = (st[0], st[1], d[0], d[1])
        wt = np.ascontiguousarray(w.reshape(c, m, *k).transpose(0, 2, 3, 1))
        for bias in (b, None):
            want = np.full_like(spec, np.nan)
            _ops.dwconv2d_f32(xp, np.ascontiguousarray(w.reshape(c * m, *k)), bias, want, *geo)
            for variant in (-1, 0):    # the best compilation, the baseline one
                got = np.full_like(spec, np.nan)
                _ops.dwconv2d_f32_cm(xp, wt, bias, got, *geo, variant)
                assert np.array_equal(got, want), (c, m, k, bias is None, variant)


def test_dwconv_cm_compilations_agree(rng):
    """The AVX2 compilation (64 accumulators a pass) == the baseline one (32) on every block
    split: multipliers around both block sizes, NaN / infinities / subnormals included."""
    from qrt import _ops
    for m in (1, 2, 31, 32, 33, 63, 64, 65, 96, 129):
        c, k, length, s = 2, 5, 23, 2
        x = rng.standard_normal((1, c, 1, length)).astype(np.float32)
        x[0, 0, 0, :4] = [np.nan, np.inf, -np.inf, 1e-45]
        wt = rng.standard_normal((c, 1, k, m)).astype(np.float32)
        wt[0, 0, 1, 0] = 3e38
        b = rng.standard_normal(c * m).astype(np.float32)
        lo = (length - k) // s + 1
        ys = []
        for variant in (-1, 0):
            y = np.full((1, c * m, 1, lo), -7.0, np.float32)
            _ops.dwconv2d_f32_cm(x, wt, b, y, 1, s, 1, 1, variant)
            ys.append(y)
        assert np.array_equal(ys[0], ys[1], equal_nan=True), m
        assert not (ys[0] == -7.0).any()


def test_dwconv2d_cm_checks_its_arguments():
    from qrt import _ops
    z = np.zeros
    f = np.float32
    with pytest.raises(ValueError, match="do not match"):    # wt channels != input channels
        _ops.dwconv2d_f32_cm(z((1, 2, 4, 4), f), z((3, 1, 3, 1), f), None, z((1, 3, 2, 2), f),
                             1, 1, 1, 1)
    with pytest.raises(ValueError, match="do not match"):    # c_in x mult != output channels
        _ops.dwconv2d_f32_cm(z((1, 2, 4, 4), f), z((2, 3, 3, 2), f), None, z((1, 3, 2, 2), f),
                             1, 1, 1, 1)
    with pytest.raises(ValueError, match="do not match"):    # batch differs
        _ops.dwconv2d_f32_cm(z((2, 1, 4, 4), f), z((1, 3, 3, 2), f), None, z((1, 2, 2, 2), f),
                             1, 1, 1, 1)
    with pytest.raises(ValueError, match="kernel rejected"):   # last window outside
        _ops.dwconv2d_f32_cm(z((1, 1, 4, 4), f), z((1, 5, 5, 2), f), None, z((1, 2, 1, 1), f),
                             1, 1, 1, 1)
    with pytest.raises(ValueError, match="kernel rejected"):   # output too long for the input
        _ops.dwconv2d_f32_cm(z((1, 1, 1, 10), f), z((1, 1, 3, 8), f), None, z((1, 8, 1, 5), f),
                             1, 2, 1, 1)
    with pytest.raises(ValueError, match="strides and dilations"):
        _ops.dwconv2d_f32_cm(z((1, 1, 1, 10), f), z((1, 1, 3, 8), f), None, z((1, 8, 1, 2), f),
                             1, 0, 1, 1)
    with pytest.raises(ValueError, match="one bias per output channel"):
        _ops.dwconv2d_f32_cm(z((1, 1, 1, 10), f), z((1, 1, 3, 8), f), z(7, f),
                             z((1, 8, 1, 2), f), 1, 1, 1, 1)
    with pytest.raises((ValueError, TypeError)):              # float64 / non-contiguous
        _ops.dwconv2d_f32_cm(z((1, 1, 1, 10)), z((1, 1, 3, 8), f), None, z((1, 8, 1, 2), f),
                             1, 1, 1, 1)
    with pytest.raises(ValueError):
        _ops.dwconv2d_f32_cm(z((1, 1, 1, 20), f)[..., ::2], z((1, 1, 3, 8), f), None,
                             z((1, 8, 1, 2), f), 1, 1, 1, 1)


def test_float_conv1d_depthwise_matches_torch(torch, tmp_path, rng):
    """float_conv1d ops through a blob, against torch float32: |q - t| <= (k + 1) eps S."""
    F = torch.nn.functional
    worst = 0.0
    for n, c, m, k, length, s, d, p in CFGS_1D[:5]:
        x = rng.standard_normal((n, c, length)).astype(np.float32)
        w = rng.standard_normal((c * m, 1, k)).astype(np.float32)
        b = rng.standard_normal(c * m).astype(np.float32)
        kw = dict(stride=s, padding=p, dilation=d, groups=c)
        want = F.conv1d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b),
                        **kw).numpy()
        got = run_op(tmp_path, "float_conv1d", [x], want.shape, kw, (w, b))
        sc = F.conv1d(torch.from_numpy(np.abs(x)).double(), torch.from_numpy(np.abs(w)).double(),
                      torch.from_numpy(np.abs(b)).double(), **kw).numpy()
        worst = max(worst, sum_ratio(got, want, sc, k + 1, f"conv1d {kw}"))
    assert worst <= 1.0, worst


def test_bound_dwconv_checks_its_arguments(rng):
    """_ops.DwConvF32 (the bound call conv_steps uses): the functions' checks at construction,
    the kernel's geometry gate at run(), and run() == the function."""
    from qrt import _ops
    z = np.zeros
    f = np.float32
    with pytest.raises(ValueError, match="do not match"):
        _ops.DwConvF32(z((1, 2, 4, 4), f), z((3, 1, 3, 1), f), None, z((1, 3, 2, 2), f),
                       1, 1, 1, 1, True)
    with pytest.raises(ValueError, match="do not match"):
        _ops.DwConvF32(z((1, 2, 4, 4), f), z((3, 3, 3), f), None, z((1, 3, 2, 2), f),
                       1, 1, 1, 1, False)
    with pytest.raises(ValueError, match="one bias"):
        _ops.DwConvF32(z((1, 1, 1, 10), f), z((1, 1, 3, 8), f), z(7, f), z((1, 8, 1, 2), f),
                       1, 1, 1, 1, True)
    with pytest.raises(ValueError, match="strides and dilations"):
        _ops.DwConvF32(z((1, 1, 1, 10), f), z((1, 1, 3, 8), f), None, z((1, 8, 1, 2), f),
                       1, 1, 0, 1, True)
    with pytest.raises((ValueError, TypeError)):
        _ops.DwConvF32(z((1, 1, 1, 10)), z((1, 1, 3, 8), f), None, z((1, 8, 1, 2), f),
                       1, 1, 1, 1, True)
    for cm in (True, False):
        w = z((1, 5, 5, 2), f) if cm else z((2, 5, 5), f)
        bad = _ops.DwConvF32(z((1, 1, 4, 4), f), w, None, z((1, 2, 1, 1), f), 1, 1, 1, 1, cm)
        with pytest.raises(ValueError, match="kernel rejected"):   # last window outside
            bad.run()
    _ops.DwConvF32(z((1, 1, 4, 4), f), z((1, 3, 3, 2), f), None, z((1, 2, 0, 2), f),
                   1, 1, 1, 1, True).run()                          # empty output: nothing
    x = rng.standard_normal((2, 3, 1, 40)).astype(np.float32)
    wt = rng.standard_normal((3, 1, 6, 9)).astype(np.float32)
    b = rng.standard_normal(27).astype(np.float32)
    want = np.full((2, 27, 1, 12), np.nan, np.float32)
    _ops.dwconv2d_f32_cm(x, wt, b, want, 1, 3, 1, 1)
    got = np.full_like(want, np.nan)
    _ops.DwConvF32(x, wt, b, got, 1, 3, 1, 1, True).run()
    assert np.array_equal(got, want)

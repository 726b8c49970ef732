# SPDX-License-Identifier: Apache-2.0
"""qrt.nn.Conv2d / ConvReLU2d (im2col + the conv1d kernels) == torch qnnpack; every conv1d
variant == the reference on 2-d layouts; hostile geometry refused."""

import numpy as np
import pytest

import qrt
import qrt.nn as qnn
from qrt import _conv1d
from _cdriver import run_c_driver

VARIANTS = _conv1d.variants()


def _case(rng, n, ci, co, h, w, k, s, p, d, g, per_channel, relu):
    kh, kw = (k, k) if isinstance(k, int) else k
    wi = rng.integers(-128, 128, (co, ci // g, kh, kw)).astype(np.int8)
    if per_channel:
        sc = rng.uniform(0.002, 0.02, co)
        zp = np.zeros(co, np.int64)
        qw = qrt.from_int_repr_per_channel(wi, sc, zp, 0, qrt.qint8)
    else:
        qw = qrt.from_int_repr(wi, 0.01, 0, qrt.qint8)
    bias = rng.standard_normal(co).astype(np.float32)
    xi = rng.integers(0, 256, (n, ci, h, w)).astype(np.uint8)
    return dict(n=n, ci=ci, co=co, k=(kh, kw), s=s, p=p, d=d, g=g, relu=relu, qw=qw,
                bias=bias, x=qrt.from_int_repr(xi, 0.02, int(rng.integers(0, 256))),
                out=(0.05 * (1 + rng.random()), int(rng.integers(0, 256))))


def _qrt(c, variant=-1):
    m = (qnn.ConvReLU2d if c["relu"] else qnn.Conv2d)(c["ci"], c["co"], c["k"], c["s"],
                                                      c["p"], c["d"], c["g"])
    m.set_weight_bias(c["qw"], c["bias"])
    m._set_output_qparams(*c["out"])
    m._variant = variant
    return m(c["x"]).int_repr()


def _torch(c):
    torch = pytest.importorskip("torch")
    torch.backends.quantized.engine = "qnnpack"
    import torch.ao.nn.intrinsic.quantized as nniq
    import torch.ao.nn.quantized as nnq
    tm = (nniq.ConvReLU2d if c["relu"] else nnq.Conv2d)(c["ci"], c["co"], c["k"], c["s"],
                                                        c["p"], c["d"], c["g"])
    qw = c["qw"]
    wi = torch.from_numpy(np.asarray(qw.int_repr()).copy())
    if qw.qscheme() is qrt.per_tensor_affine:
        tw = torch._make_per_tensor_quantized_tensor(wi, qw.q_scale(), qw.q_zero_point())
    else:
        tw = torch._make_per_channel_quantized_tensor(
            wi, torch.from_numpy(np.asarray(qw.q_per_channel_scales(), np.float64)),
            torch.from_numpy(np.asarray(qw.q_per_channel_zero_points(), np.int64)), 0)
    tm.set_weight_bias(tw, torch.from_numpy(c["bias"]))
    tm.scale, tm.zero_point = c["out"]
    x = c["x"]
    tx = torch._make_per_tensor_quantized_tensor(
        torch.from_numpy(np.asarray(x.int_repr()).copy()), x.q_scale(), x.q_zero_point())
    return tm(tx).int_repr().numpy()


def _random_cfg(rng):
    kind = rng.integers(0, 4)
    k = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
    s = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    d = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    p = (int(rng.integers(0, k[0] + 1)), int(rng.integers(0, k[1] + 1)))
    if kind == 0:      # dense
        ci, g = int(rng.integers(1, 9)), 1
        co = int(rng.integers(1, 17))
    elif kind == 1:    # grouped
        g = int(rng.integers(2, 4))
        ci, co = g * int(rng.integers(1, 4)), g * int(rng.integers(1, 4))
    else:              # depthwise, channel multiplier 1 or 2
        ci = int(rng.integers(1, 24))
        g, co = ci, ci * int(rng.integers(1, 3))
    h = max(d[0] * (k[0] - 1) + 1 - 2 * p[0], 1) + int(rng.integers(0, 9))
    w = max(d[1] * (k[1] - 1) + 1 - 2 * p[1], 1) + int(rng.integers(0, 9))
    return dict(n=int(rng.integers(1, 3)), ci=ci, co=co, h=h, w=w, k=k, s=s, p=p, d=d, g=g)


@pytest.mark.parametrize("seed", range(3))
def test_conv2d_random_vs_torch(seed):
    rng = np.random.default_rng(2000 + seed)
    for i in range(40):
        c = _random_cfg(rng)
        case = _case(rng, c["n"], c["ci"], c["co"], c["h"], c["w"], c["k"], c["s"], c["p"],
                     c["d"], c["g"], bool(i & 1), bool(i & 2))
        np.testing.assert_array_equal(_qrt(case), _torch(case), err_msg=str(c))


# (n, ci, co, h, w, k, s, p, d, g): MobileNet / ResNet shapes, 1x1 images, odd sizes, big C
EDGE = [
    (1, 3, 32, 33, 31, 3, 2, 1, 1, 1),      # stem
    (1, 3, 16, 5, 77, 3, 2, 1, 1, 1),       # stem, wide rows: 16-wide stride-2 im2col copies
    (1, 96, 96, 17, 17, 3, 2, 1, 1, 96),    # depthwise stride 2
    (2, 144, 144, 7, 9, 3, 1, 1, 1, 144),   # depthwise
    (1, 40, 40, 9, 9, 5, 1, 2, 1, 40),      # depthwise 5x5 (MobileNetV3)
    (1, 256, 512, 1, 1, 1, 1, 0, 1, 1),     # 1x1 image, pointwise
    (1, 64, 64, 1, 1, 3, 1, 1, 1, 1),       # 1x1 image, 3x3 padded: only the centre tap
    (1, 16, 32, 5, 5, 1, 2, 0, 1, 1),       # strided 1x1 (ResNet downsample)
    (1, 8, 16, 9, 9, 3, 1, 2, 2, 1),        # dilated
    (1, 6, 12, 8, 8, 3, 1, 1, 1, 6),        # depthwise with channel multiplier 2
    (1, 12, 12, 6, 7, (1, 7), 1, (0, 3), 1, 1),  # Inception 1x7
    (1, 12, 12, 7, 6, (7, 1), 1, (3, 0), 1, 1),  # Inception 7x1
    (1, 5, 7, 49, 3, 3, (3, 1), 0, 1, 1),
]


@pytest.mark.parametrize("cfg", EDGE, ids=[str(i) for i in range(len(EDGE))])
def test_conv2d_edges_vs_torch(cfg):
    rng = np.random.default_rng(hash(str(cfg)) % 2**32)
    for pc, relu in ((False, False), (True, True)):
        case = _case(rng, *cfg, pc, relu)
        want = _torch(case)
        for v in VARIANTS:
            np.testing.assert_array_equal(_qrt(case, v), want, err_msg=f"{cfg} variant {v}")


@pytest.mark.parametrize("v", [v for v in VARIANTS if v != 0],
                         ids=[_conv1d.ISA_NAMES[v] for v in VARIANTS if v != 0])
def test_conv2d_variants_equal_reference(v):
    """Without torch (ARM CI): every variant == the reference on 2-d layouts."""
    rng = np.random.default_rng(31)
    for i in range(60):
        c = _random_cfg(rng)
        case = _case(rng, c["n"], c["ci"], c["co"], c["h"], c["w"], c["k"], c["s"], c["p"],
                     c["d"], c["g"], bool(i & 1), bool(i & 2))
        np.testing.assert_array_equal(_qrt(case, v), _qrt(case, 0), err_msg=str(c))


def test_conv2d_same_valid_and_views():
    rng = np.random.default_rng(5)
    c = _case(rng, 1, 4, 6, 9, 8, (3, 4), 1, 0, (1, 2), 1, True, False)
    m = qnn.Conv2d(4, 6, (3, 4), 1, "same", (1, 2))
    m.set_weight_bias(c["qw"], c["bias"])
    m._set_output_qparams(*c["out"])
    # 'same' = d*(k-1) split as torch's float conv: (1, 1) rows, (3, 3) columns
    e = qnn.Conv2d(4, 6, (3, 4), 1, (1, 1, 3, 3), (1, 2))
    e.set_weight_bias(c["qw"], c["bias"])
    e._set_output_qparams(*c["out"])
    y = m(c["x"])
    assert y.shape == (1, 6, 9, 8)
    np.testing.assert_array_equal(y.int_repr(), e(c["x"]).int_repr())
    assert qnn.Conv2d(4, 6, 3, padding="valid").output_shape((1, 4, 9, 8)) == (1, 6, 7, 6)
    # unbatched input and a non-contiguous (transposed) input give the same integers
    x = c["x"]
    np.testing.assert_array_equal(m(x[0]).int_repr(), y.int_repr()[0])
    xt = qrt.from_int_repr(np.ascontiguousarray(np.asarray(x.int_repr()).transpose(0, 1, 3, 2)),
                           x.q_scale(), x.q_zero_point()).permute(0, 1, 3, 2)
    np.testing.assert_array_equal(m(xt).int_repr(), y.int_repr())
    p1 = qnn.Conv2d(4, 6, 1)
    p1.set_weight_bias(qrt.from_int_repr(rng.integers(-128, 128, (6, 4, 1, 1)).astype(np.int8),
                                         0.01, 0, qrt.qint8), None)
    np.testing.assert_array_equal(p1(xt).int_repr(), p1(x).int_repr())
    assert m.weight().shape == (6, 4, 3, 4)


def test_conv2d_hostile_arguments():
    with pytest.raises(TypeError):
        qnn.Conv2d(4, 4, 3.0)
    with pytest.raises(ValueError, match="divisible"):
        qnn.Conv2d(4, 6, 3, groups=4)
    with pytest.raises(ValueError, match="2-element"):
        qnn.Conv2d(4, 4, (3, 3, 3))
    with pytest.raises(ValueError, match="strided"):
        qnn.Conv2d(4, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding"):
        qnn.Conv2d(4, 4, 3, padding="full")
    with pytest.raises(NotImplementedError):
        qnn.Conv2d(4, 4, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="accumulation bound"):
        qnn.Conv2d(4000, 4, 3)
    m = qnn.Conv2d(4, 4, 3)
    w = qrt.from_int_repr(np.zeros((4, 4, 3, 3), np.int8), 0.01, 0, qrt.qint8)
    with pytest.raises(ValueError, match="expected"):
        m.set_weight_bias(qrt.from_int_repr(np.zeros((4, 4, 3, 2), np.int8), 0.01, 0,
                                            qrt.qint8))
    with pytest.raises(ValueError, match="set_weight_bias"):
        m(qrt.from_int_repr(np.zeros((1, 4, 5, 5), np.uint8), 0.1, 0))
    m.set_weight_bias(w)
    for shape, what in (((1, 3, 5, 5), "channels"), ((1, 4, 2, 5), "too small"),
                        ((4, 5, 5, 1, 1), "must be"), ((4, 5), "must be")):
        with pytest.raises(ValueError, match=what):
            m(qrt.from_int_repr(np.zeros(shape, np.uint8), 0.1, 0))
    with pytest.raises(TypeError):
        m(np.zeros((1, 4, 5, 5), np.uint8))
    with pytest.raises((ValueError, OverflowError)):
        _conv1d.Im2col((1, 1, 1 << 31, 1), (0, 0, 1, 1), (1, 1), (1, 1), (1, 1), (0, 0),
                       (1 << 31, 1), 0, 0)
    with pytest.raises(ValueError, match="column buffer"):  # 1/64 of 2^36 bytes: refused
        _conv1d.Im2col((1, 64, 1024, 1024), (1 << 26, 1 << 20, 1024, 1), (16, 16), (1, 1),
                       (1, 1), (0, 0), (1009, 1009), 0, 0)
    im = _conv1d.Im2col((1, 1, 4, 4), (16, 16, 4, 1), (3, 3), (1, 1), (1, 1), (1, 1),
                        (4, 4), 7, 0)
    with pytest.raises(ValueError, match="too small"):
        im.run(np.zeros(15, np.uint8), 0, np.zeros(im.size, np.uint8))
    with pytest.raises(ValueError, match="column buffer"):
        im.run(np.zeros(16, np.uint8), 0, np.zeros(im.size - 1, np.uint8))


def test_conv2d_depthwise_layouts_agree(monkeypatch):
    """The two depthwise layouts (grouped GEMM, default; kernel kh*kw with stride kh*kw)."""
    rng = np.random.default_rng(8)
    for cfg in [(1, 16, 16, 9, 11, 3, 1, 1, 1, 16), (2, 6, 12, 8, 7, 5, 2, 2, 1, 6),
                (1, 5, 5, 7, 7, (3, 1), (1, 2), (1, 0), (2, 1), 5)]:
        case = _case(rng, *cfg, True, True)
        want = _qrt(case, 0)
        monkeypatch.setattr(qnn.Conv2d, "_dw_taps", True)
        for v in VARIANTS:
            np.testing.assert_array_equal(_qrt(case, v), want, err_msg=str(cfg))
        monkeypatch.setattr(qnn.Conv2d, "_dw_taps", False)


def test_im2col_c_driver_sanitized(tmp_path):
    """tests/c/im2col_sanitize.c under AddressSanitizer + UBSan: every byte of both layouts
    == the definition, exact-size buffers."""
    run_c_driver(tmp_path, "im2col_sanitize.c", (400, 5))



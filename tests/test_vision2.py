# SPDX-License-Identifier: Apache-2.0
"""Quantized ConvTranspose2d, upsampling (nearest / nearest-exact / bilinear), 2-d pads and
Conv2d padding modes, the qnnpack global mean of ShuffleNetV2: exported and compared with
torch's qnnpack engine bit for bit (==), on random and edge configurations."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
from torch.ao.quantization import (DeQuantStub, QuantStub, convert, get_default_qconfig,  # noqa
                                   prepare)

import qrt  # noqa: E402
import qrt_export  # noqa: E402


def _quantized(net, shape, seed=1):
    torch.backends.quantized.engine = "qnnpack"
    net.eval().qconfig = get_default_qconfig("qnnpack")
    p = prepare(net)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _ in range(3):
            p(torch.randn(*shape, generator=g) * 2)
    return convert(p)


def _export_check(tm, x, tmp_path, others=()):
    path = tmp_path / "m.bin"
    rep = qrt_export.export(tm, x, path, verbose=False)
    ag = rep.agreement["qnnpack"]
    assert ag["exact"] == ag["total"] > 0, ag
    m = qrt.load(path)
    for x2 in (x,) + tuple(others):
        with torch.no_grad():
            want = tm(x2).numpy()
        np.testing.assert_array_equal(m(x2.numpy()), want)
    return m


# ---- ConvTranspose2d ---------------------------------------------------------------------------
class CT(nn.Module):
    def __init__(self, ci, co, k, **kw):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c = nn.ConvTranspose2d(ci, co, k, **kw)

    def forward(self, x):
        return self.dq(self.c(self.q(x)))


CT_CASES = [  # ci, co, k, stride, padding, output_padding, dilation, groups, (h, w)
    (4, 6, 3, 2, 1, 1, 1, 1, (5, 7)), (3, 5, (2, 3), (1, 2), (0, 1), (0, 1), 1, 1, (4, 4)),
    (4, 4, 3, (3, 2), (2, 1), (1, 0), (1, 2), 2, (6, 5)), (8, 8, 3, 2, 1, 1, 1, 8, (4, 4)),
    (6, 4, 1, 4, 0, 3, 1, 2, (3, 2)), (5, 7, 4, 1, 3, 0, (2, 1), 1, (9, 8)),
    (2, 2, 2, 2, 0, 0, 1, 1, (1, 1)), (3, 6, 5, 3, 4, 2, 1, 3, (2, 3)),
    (16, 8, 4, 2, 1, 0, 1, 1, (8, 8)),
]


@pytest.mark.parametrize("case", CT_CASES)
def test_conv_transpose2d_equals_torch_qnnpack(tmp_path, case):
    ci, co, k, s, p, op, d, g, (h, w) = case
    torch.manual_seed(len(str(case)))
    tm = _quantized(CT(ci, co, k, stride=s, padding=p, output_padding=op, dilation=d,
                       groups=g), (4, ci, h, w))
    others = []
    for hw in ((h + 3, w + 1), (1, 1), (1, 2)):   # those torch accepts
        x2 = torch.randn(3, ci, *hw) * 2
        try:
            tm(x2)
        except RuntimeError:
            continue
        others.append(x2)
    m = _export_check(tm, torch.randn(2, ci, h, w) * 2, tmp_path, others)
    assert [n.kind for n in m.graph.nodes] == ["quantize", "conv_transpose2d", "dequantize"]


def test_conv_transpose2d_per_channel_output_axis(tmp_path):
    """torch takes per-channel ConvTranspose2d weights along axis 1 (the output channels)."""
    import torch.ao.nn.quantized as nnq
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(3)
    tm = _quantized(CT(4, 6, 3, stride=2, padding=1, output_padding=1), (2, 4, 5, 5))
    c = tm.c
    w = torch.randn(4, 6, 3, 3)
    sc = torch.rand(6, dtype=torch.float64) * 0.02 + 0.005
    qw = torch.quantize_per_channel(w, sc, torch.zeros(6, dtype=torch.long), 1, torch.qint8)
    c.set_weight_bias(qw, torch.randn(6))
    assert isinstance(c, nnq.ConvTranspose2d)
    _export_check(tm, torch.randn(2, 4, 5, 5), tmp_path, (torch.randn(1, 4, 3, 6),))


# ---- ShuffleNetV2: qnnpack's global mean --------------------------------------------------------
def _shufflenet(size):
    from _torch_models import bn_recalibrate, torchvision
    tv = torchvision()
    from torchvision.models import quantization as tvq
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(0)
    m = tvq.shufflenet_v2_x1_0(weights=None, quantize=False)
    m = bn_recalibrate(m, (4, 3, size, size)).eval()
    m.fuse_model()
    m.qconfig = get_default_qconfig("qnnpack")
    prepare(m, inplace=True)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _ in range(2):
            m(torch.randn(2, 3, size, size, generator=g))
    convert(m, inplace=True)
    assert tv is not None
    return m


def _check_shufflenet(tmp_path, size, others=()):
    tm = _shufflenet(size)
    g = torch.Generator().manual_seed(5)
    m = _export_check(tm, torch.randn(1, 3, size, size, generator=g), tmp_path,
                      tuple(torch.randn(2, 3, s, s, generator=g) for s in (size,) + others))
    kinds = [n.kind for n in m.graph.nodes]
    assert "adaptive_avg_pool2d" in kinds and "squeeze" in kinds


def test_shufflenet_v2_eager_exact_64(tmp_path):
    """torchvision's quantizable ShuffleNetV2 (fuse_model, prepare, convert): its
    ``x.mean([2, 3])`` of a channels-last conv output is qnnpack's global average pool on the
    qnnpack engine (mean_out_quantized_cpu), exported as adaptive_avg_pool2d(1) + squeeze."""
    _check_shufflenet(tmp_path, 64, (96,))


@pytest.mark.slow
def test_shufflenet_v2_eager_exact_224(tmp_path):
    _check_shufflenet(tmp_path, 224)


@pytest.mark.parametrize("shape,dims,keep", [((2, 5, 7, 3), [2, 3], False),
                                             ((1, 3, 1, 1), [2, 3], True),
                                             ((2, 16, 9, 9), [2, 3], True)])
def test_qnnpack_mean_2_3(tmp_path, shape, dims, keep):
    """x.mean([2, 3]) of a quint8 tensor, contiguous or channels-last (a conv output)."""
    torch.manual_seed(0)

    class P(nn.Module):   # one mean of the quantize output, one of a conv output
        def __init__(self):
            super().__init__()
            self.q, self.dq = QuantStub(), DeQuantStub()
            self.c = nn.Conv2d(shape[1], shape[1], 1)

        def forward(self, x):
            x = self.q(x)
            return self.dq(x.mean(dims, keepdim=keep)), self.dq(self.c(x).mean(dims,
                                                                              keepdim=keep))
    tm = _quantized(P(), shape)
    x = torch.randn(*shape) * 3
    path = tmp_path / "m.bin"
    rep = qrt_export.export(tm, x, path, verbose=False)
    ag = rep.agreement["qnnpack"]
    assert ag["exact"] == ag["total"] > 0
    m = qrt.load(path)
    for x2 in (x, torch.randn(shape[0], shape[1], 4, 6) * 3):
        with torch.no_grad():
            want = tm(x2)
        got = m(x2.numpy())
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b.numpy())


# ---- upsampling ----------------------------------------------------------------------------------
class Up(nn.Module):
    """F.interpolate of the quantize output (contiguous NCHW) and of a conv output
    (channels-last: torch's NHWC kernel) in one net."""

    def __init__(self, c, **kw):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.conv = nn.Conv2d(c, c, 1)
        self.kw = kw

    def forward(self, x):
        x = self.q(x)
        F = nn.functional
        return self.dq(F.interpolate(x, **self.kw)), self.dq(F.interpolate(self.conv(x),
                                                                           **self.kw))


UP_CASES = [  # mode, kwargs, C, (H, W)
    ("nearest", dict(scale_factor=2), 3, (5, 4)),
    ("nearest", dict(scale_factor=3), 1, (1, 1)),
    ("nearest", dict(scale_factor=1.7), 9, (1, 1)),
    ("nearest", dict(size=(7, 3)), 17, (4, 6)),
    ("nearest-exact", dict(scale_factor=2.5), 5, (3, 7)),
    ("nearest-exact", dict(size=(1, 9)), 8, (2, 3)),
    ("bilinear", dict(scale_factor=2, align_corners=False), 3, (5, 4)),
    ("bilinear", dict(scale_factor=2, align_corners=True), 20, (4, 5)),
    ("bilinear", dict(scale_factor=3, align_corners=False), 13, (1, 1)),
    ("bilinear", dict(scale_factor=1.5, align_corners=False, recompute_scale_factor=True),
     11, (6, 5)),
    ("bilinear", dict(size=(9, 13), align_corners=False), 24, (7, 7)),
    ("bilinear", dict(size=(9, 1), align_corners=True), 7, (3, 8)),
    ("bilinear", dict(size=(5, 5), align_corners=False), 1, (5, 5)),
    ("bilinear", dict(scale_factor=(0.7, 2.3), align_corners=False), 33, (10, 6)),
]


@pytest.mark.parametrize("case", UP_CASES)
def test_upsample_equals_torch(tmp_path, case):
    mode, kw, c, (h, w) = case
    torch.manual_seed(len(str(case)))
    tm = _quantized(Up(c, mode=mode, **kw), (2, c, h, w))
    x = torch.randn(2, c, h, w) * 3
    path = tmp_path / "m.bin"
    rep = qrt_export.export(tm, x, path, verbose=False)
    ag = rep.agreement["qnnpack"]
    assert ag["exact"] == ag["total"] > 0
    m = qrt.load(path)
    shapes = [(h, w), (h + 2, w + 3)] + ([(1, 1)] if "size" in kw else [])
    for hw in shapes:
        x2 = torch.randn(3, c, *hw) * 3
        with torch.no_grad():
            want = tm(x2)
        for a, b in zip(m(x2.numpy()), want):
            np.testing.assert_array_equal(a, b.numpy())


def _upsample_op(x_codes, zp, attrs, out_shape, tmp_path):
    """quantize -> upsample2d -> dequantize at scale 1/16 (codes round-trip exactly)."""
    from qrt_export import BlobBuilder
    b = BlobBuilder()
    shp = x_codes.shape
    x = b.activation("x", "float32", shp)
    q = b.activation("xq", "quint8", shp, scale=0.0625, zero_point=zp)
    p = b.activation("p", "quint8", out_shape, scale=0.0625, zero_point=zp)
    y = b.activation("y", "float32", out_shape)
    b.op("quantize", "quant", [x], [q])
    b.op("upsample2d", "up", [q], [p], attrs=attrs)
    b.op("dequantize", "dequant", [p], [y])
    b.inputs, b.outputs = [x], [y]
    path = tmp_path / "u.bin"
    path.write_bytes(b.to_bytes())
    m = qrt.load(path)
    xf = ((x_codes.astype(np.float32) - zp) * np.float32(0.0625)).astype(np.float32)
    return np.rint(m(xf) / np.float32(0.0625) + zp).astype(np.int64)


def test_upsample_bilinear_random_layouts(tmp_path):
    """The op alone on random geometries and zero points, NCHW and channels-last inputs (both
    torch kernels, the NHWC one's vector lanes and scalar tail, 1x1 images), == torch."""
    import torch.nn.functional as F
    rng = np.random.default_rng(0)
    for t in range(40):
        c = int(rng.integers(1, 40))
        h, w = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        ac = bool(rng.integers(0, 2))
        size = (int(rng.integers(1, 20)), int(rng.integers(1, 20)))
        zp = int(rng.integers(0, 256))
        qi = rng.integers(0, 256, (2, c, h, w)).astype(np.uint8)
        q = torch._make_per_tensor_quantized_tensor(torch.from_numpy(qi), 0.0625, zp)
        for layout in ("nchw", "nhwc"):
            tq = q if layout == "nchw" else q.contiguous(memory_format=torch.channels_last)
            want = F.interpolate(tq, size=size, mode="bilinear", align_corners=ac)
            got = _upsample_op(qi, zp, {"mode": "bilinear", "align_corners": ac,
                                        "size": list(size), "layout": layout},
                               tuple(want.shape), tmp_path)
            np.testing.assert_array_equal(got, want.int_repr().numpy(),
                                          err_msg=str((t, layout, c, h, w, ac, size)))


# ---- 2-d pads and Conv2d padding modes --------------------------------------------------------
class Pad2(nn.Module):
    def __init__(self, c, pads, mode, value=0.0):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.conv = nn.Conv2d(c, c, 1)
        self.pads, self.mode, self.value = pads, mode, value

    def forward(self, x):
        x = self.q(x)
        F = nn.functional
        kw = {"value": self.value} if self.mode == "constant" else {}
        return (self.dq(F.pad(x, self.pads, mode=self.mode, **kw)),
                self.dq(F.pad(self.conv(x), self.pads, mode=self.mode, **kw)))


@pytest.mark.parametrize("pads,mode", [((1, 2, 0, 3), "constant"), ((2, 2, 1, 1), "reflect"),
                                       ((-1, 2, 3, -2), "constant"), ((0, 1, 2, 0), "reflect"),
                                       ((1, 1, 1, 1), "constant")])
def test_pad2d_quantized_equals_torch(tmp_path, pads, mode):
    torch.manual_seed(0)
    tm = _quantized(Pad2(3, pads, mode, value=0.7), (2, 3, 5, 6))
    x = torch.randn(2, 3, 5, 6)
    path = tmp_path / "m.bin"
    rep = qrt_export.export(tm, x, path, verbose=False)
    ag = rep.agreement["qnnpack"]
    assert ag["exact"] == ag["total"] > 0
    m = qrt.load(path)
    assert any(n.kind == "pad" and len(n.attrs["pads"]) == 4 for n in m.graph.nodes)
    x2 = torch.randn(1, 3, 7, 4)
    with torch.no_grad():
        want = tm(x2)
    for a, b in zip(m(x2.numpy()), want):
        np.testing.assert_array_equal(a, b.numpy())


class ConvPM(nn.Module):
    def __init__(self, mode, padding):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c1 = nn.Conv2d(3, 8, 3, padding=padding, padding_mode=mode)
        self.c2 = nn.Conv2d(8, 4, (3, 5), stride=2, padding=(1, 2), padding_mode=mode)

    def forward(self, x):
        return self.dq(self.c2(torch.relu(self.c1(self.q(x)))))


@pytest.mark.parametrize("padding", [1, (2, 1)])
def test_conv2d_reflect_padding_mode(tmp_path, padding):
    """torch's quantized Conv2d(padding_mode='reflect') is F.pad(reflect) + the conv with
    padding 0: lowered as pad -> conv2d, exact (torch's convert refuses replicate / circular:
    "'padding_mode' replicate is not supported by quantized convolution")."""
    torch.manual_seed(1)
    tm = _quantized(ConvPM("reflect", padding), (2, 3, 9, 10))
    m = _export_check(tm, torch.randn(2, 3, 9, 10), tmp_path, (torch.randn(1, 3, 6, 7),))
    kinds = [n.kind for n in m.graph.nodes]
    assert kinds.count("pad") == 2 and kinds.count("conv2d") == 2


def test_pad_attribute_lengths(tmp_path):
    """A 2-value pad (older files) and a 4-value pad load; 3 values are a FormatError."""
    from qrt_export import BlobBuilder
    for pads, ok in (([1, 2], True), ([1, 2, 0, 1], True), ([1, 2, 3], False)):
        b = BlobBuilder()
        x = b.activation("x", "float32", (1, 2, 3, 4))
        o = (1, 2, 3 + (sum(pads[2:]) if len(pads) == 4 else 0), 4 + pads[0] + pads[1])
        y = b.activation("y", "float32", o)
        b.op("pad", "p", [x], [y], attrs={"pads": pads, "mode": "constant", "value": 0.5})
        b.inputs, b.outputs = [x], [y]
        path = tmp_path / "p.bin"
        path.write_bytes(b.to_bytes())
        if ok:
            xi = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
            want = torch.nn.functional.pad(torch.from_numpy(xi), pads, value=0.5).numpy()
            np.testing.assert_array_equal(qrt.load(path)(xi), want)
        else:
            with pytest.raises(qrt.FormatError, match="pads"):
                qrt.load(path)


# ---- float sections --------------------------------------------------------------------------
class FloatNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.up1 = nn.Upsample(scale_factor=2, mode="nearest")
        self.up2 = nn.Upsample(size=(11, 9), mode="bilinear", align_corners=False)
        self.up3 = nn.UpsamplingBilinear2d(scale_factor=1.5)

    def forward(self, x):
        F = nn.functional
        y = x * 2
        outs = [self.up1(y), self.up2(y), self.up3(y),
                F.interpolate(y, scale_factor=3, mode="nearest-exact")]
        for mode in ("constant", "reflect", "replicate", "circular"):
            outs.append(F.pad(y, (1, 2, 2, 1), mode=mode))
        return tuple(outs)


def test_float_upsample_and_pad2d(tmp_path):
    """Float sections: nearest copies and pads are exact; bilinear within the float bound."""
    torch.manual_seed(0)
    net = FloatNet().eval()
    x = torch.randn(2, 3, 8, 7)
    path = tmp_path / "f.bin"
    qrt_export.export(net, x, path, verbose=False, keep_float=True)
    m = qrt.load(path)
    x2 = torch.randn(1, 3, 6, 9)
    with torch.no_grad():
        want = net(x2)
    got = m(x2.numpy())
    for k, (a, b) in enumerate(zip(got, want)):
        b = b.numpy()
        if k in (1, 2):
            assert np.abs(a - b).max() <= 4 * np.finfo(np.float32).eps * np.abs(b).max(), k
        else:
            np.testing.assert_array_equal(a, b)


# ---- a small U-Net (ConvTranspose2d + Upsample decoder) ----------------------------------------
def _cbr(ci, co):
    return nn.Sequential(nn.Conv2d(ci, co, 3, padding=1, bias=False), nn.BatchNorm2d(co),
                         nn.ReLU(inplace=True))


class TinyUNet(nn.Module):
    """The U-Net shape (Ronneberger et al. 2015) at small widths: two down steps (double 3x3
    conv-BN-ReLU, max pool), a bottleneck, an up step by ConvTranspose2d(2, stride 2) and one
    by bilinear Upsample, skip connections by cat, a 1x1 classifier. torchvision's own
    segmentation models (FCN, DeepLabV3, LR-ASPP) have no quantizable variants: this is what
    a user quantizes instead."""

    def __init__(self, c=3, k=4, w=8, eager=True):
        super().__init__()
        self.eager = eager
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.d1 = nn.Sequential(_cbr(c, w), _cbr(w, w))
        self.d2 = nn.Sequential(_cbr(w, 2 * w), _cbr(2 * w, 2 * w))
        self.mid = nn.Sequential(_cbr(2 * w, 4 * w), _cbr(4 * w, 4 * w))
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(4 * w, 2 * w, 2, stride=2)
        self.u2 = nn.Sequential(_cbr(4 * w, 2 * w), _cbr(2 * w, 2 * w))
        self.up1 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.u1 = nn.Sequential(_cbr(3 * w, w), _cbr(w, w))
        self.head = nn.Conv2d(w, k, 1)
        self.cat1 = torch.ao.nn.quantized.FloatFunctional()
        self.cat2 = torch.ao.nn.quantized.FloatFunctional()

    def forward(self, x):
        if self.eager:
            x = self.q(x)
        s1 = self.d1(x)
        s2 = self.d2(self.pool(s1))
        y = self.mid(self.pool(s2))
        y = self.u2(self.cat2.cat([self.up2(y), s2], 1))
        y = self.u1(self.cat1.cat([self.up1(y), s1], 1))
        y = self.head(y)
        return self.dq(y) if self.eager else y

    def fuse_model(self):
        for seq in (self.d1, self.d2, self.mid, self.u2, self.u1):
            for m in seq:
                torch.ao.quantization.fuse_modules(m, ["0", "1", "2"], inplace=True)


def _unet(eager, size):
    from _torch_models import bn_recalibrate
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(0)
    net = bn_recalibrate(TinyUNet(eager=eager), (4, 3, size, size)).eval()
    g = torch.Generator().manual_seed(1)
    calib = [torch.randn(2, 3, size, size, generator=g) for _ in range(2)]
    if eager:
        net.fuse_model()
        net.qconfig = get_default_qconfig("qnnpack")
        prepare(net, inplace=True)
        with torch.no_grad():
            for c in calib:
                net(c)
        return convert(net, inplace=True)
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    p = prepare_fx(net, torch.ao.quantization.get_default_qconfig_mapping("qnnpack"),
                   (calib[0],))
    with torch.no_grad():
        for c in calib:
            p(c)
    return convert_fx(p)


@pytest.mark.parametrize("eager", [True, False], ids=["eager", "fx"])
def test_tiny_unet_exact(tmp_path, eager):
    tm = _unet(eager, 32)
    g = torch.Generator().manual_seed(7)
    m = _export_check(tm, torch.randn(1, 3, 32, 32, generator=g), tmp_path,
                      (torch.randn(2, 3, 32, 32, generator=g),
                       torch.randn(1, 3, 48, 40, generator=g)))
    kinds = [n.kind for n in m.graph.nodes]
    assert "conv_transpose2d" in kinds and "upsample2d" in kinds

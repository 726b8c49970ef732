# SPDX-License-Identifier: Apache-2.0
"""torchvision's published classes, quantized as their users do, exported and compared with
torch (qnnpack engine) exactly: the quantizable models (eager fuse_model / prepare / convert)
and the float classes (FX prepare_fx / convert_fx). Random weights with BatchNorm statistics
re-estimated on random inputs (tests/_torch_models.py), so late activations are not all zero.
Fast tests run at 64x64; 224x224 (Inception: 299x299) runs are marked slow."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import qrt  # noqa: E402
import qrt_export  # noqa: E402
from _torch_models import bn_recalibrate, torchvision  # noqa: E402

_KW = {"googlenet": dict(aux_logits=False, init_weights=False),
       "inception_v3": dict(aux_logits=False, init_weights=False)}


def _eager(name, size, seed=0):
    tv = torchvision()
    from torchvision.models import quantization as tvq
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(seed)
    m = getattr(tvq, name)(weights=None, quantize=False, **_KW.get(name, {}))
    m = bn_recalibrate(m, (4, 3, size, size)).eval()
    m.fuse_model()
    m.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
    torch.ao.quantization.prepare(m, inplace=True)
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for _ in range(2):
            m(torch.randn(2, 3, size, size, generator=g))
    torch.ao.quantization.convert(m, inplace=True)
    assert tv is not None
    return m


def _fx(name, size, seed=0):
    tv = torchvision()
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(seed)
    m = getattr(tv.models, name)(weights=None, **_KW.get(name, {}))
    m = bn_recalibrate(m, (4, 3, size, size)).eval()
    g = torch.Generator().manual_seed(seed + 1)
    m = prepare_fx(m, torch.ao.quantization.get_default_qconfig_mapping("qnnpack"),
                   (torch.randn(1, 3, size, size, generator=g),))
    with torch.no_grad():
        for _ in range(2):
            m(torch.randn(2, 3, size, size, generator=g))
    return convert_fx(m)


def _check(tm, size, tmp_path, sizes=()):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(1, 3, size, size, generator=g)
    rep = qrt_export.export(tm, x, tmp_path / "m.bin", verbose=False)
    assert all(r["ok"] for r in rep.ops)
    q = qrt.load(tmp_path / "m.bin")
    for s in (size,) + tuple(sizes):
        xb = torch.randn(2, 3, s, s, generator=g)
        with torch.no_grad():
            want = tm(xb).numpy()
        got = q(xb.numpy())
        assert np.abs(want).max() > 0      # not a trivially-equal all-zero head
        np.testing.assert_array_equal(got, want)
    return q


def test_mobilenet_v2_eager_exact(tmp_path):
    """MobileNetV2 runs at any size >= 32: one blob, two input sizes."""
    _check(_eager("mobilenet_v2", 64), 64, tmp_path, sizes=(96,))


def test_resnet18_eager_exact(tmp_path):
    _check(_eager("resnet18", 64), 64, tmp_path)


def test_resnet18_fx_exact(tmp_path):
    _check(_fx("resnet18", 64), 64, tmp_path)


def test_relu6_after_conv_channels_last_layout_fx(tmp_path):
    """torch 2.13's quantized ReLU6 / hardtanh / clamp on a channels-last tensor (a qnnpack
    conv output) returns its results in NHWC order labelled NCHW; the exporter reproduces it
    (lut -> permute -> view) and the model stays exact (torchvision's MobileNetV2 under FX)."""
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU6(inplace=True),
                              torch.nn.Conv2d(8, 4, 1), torch.nn.Hardtanh(-1.0, 2.0)).eval()
    x = torch.randn(1, 3, 6, 5)
    p = prepare_fx(net, torch.ao.quantization.get_default_qconfig_mapping("qnnpack"), (x,))
    p(torch.randn(4, 3, 6, 5))
    tm = convert_fx(p)
    rep = qrt_export.export(tm, x, tmp_path / "m.bin", verbose=False)
    assert all(r["ok"] for r in rep.ops)
    kinds = [n.kind for n in qrt.load(tmp_path / "m.bin").graph.nodes]
    assert kinds.count("permute") == 2
    q = qrt.load(tmp_path / "m.bin")
    for xb in (x, torch.randn(3, 3, 7, 4)):
        with torch.no_grad():
            np.testing.assert_array_equal(q(xb.numpy()), tm(xb).numpy())


@pytest.mark.slow
def test_mobilenet_v2_fx_exact(tmp_path):
    _check(_fx("mobilenet_v2", 64), 64, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["googlenet", "resnet50", "mobilenet_v3_large"])
def test_more_eager_and_fx_exact_64(tmp_path, name):
    """MobileNetV3-Large: squeeze-excitation (mul broadcasting [N, C, 1, 1]), hardswish and
    hardsigmoid tables; GoogLeNet: ceil-mode max pools and cat; ResNet50: bottlenecks."""
    (tmp_path / "fx").mkdir()
    _check(_eager(name, 64), 64, tmp_path)
    _check(_fx(name, 64), 64, tmp_path / "fx")


@pytest.mark.slow
@pytest.mark.parametrize("name,size", [("mobilenet_v2", 224), ("mobilenet_v3_large", 224),
                                       ("resnet18", 224), ("googlenet", 224),
                                       ("resnet50", 224), ("inception_v3", 299)])
def test_eager_exact_full_size(tmp_path, name, size):
    _check(_eager(name, size), size, tmp_path)


class _Blocks(torch.nn.Module):
    """4-d patterns of the vision models in one small net: channel shuffle (view -> transpose
    -> reshape of a 5-d view, ShuffleNet), squeeze-excitation (adaptive pool, 1x1 convs,
    hardsigmoid, mul broadcasting [N, C, 1, 1] over [N, C, H, W]), hardswish, add, cat,
    dropout, flatten, Linear."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.se1, self.se2 = nn.Conv2d(8, 4, 1), nn.Conv2d(4, 8, 1)
        self.act, self.gate = nn.Hardswish(), nn.Hardsigmoid()
        self.drop = nn.Dropout(0.2)
        self.fc = nn.Linear(16 * 2 * 2, 5)

    def forward(self, x):
        x = torch.relu(self.c1(x))
        n, c, h, w = x.shape
        x = x.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)   # shuffle
        y = self.act(self.c2(x))
        s = self.gate(self.se2(torch.relu(self.se1(
            torch.nn.functional.adaptive_avg_pool2d(y, 1)))))
        y = y * s + x
        z = torch.cat([y, x], 1)
        z = torch.nn.functional.adaptive_avg_pool2d(z, (2, 2))
        return self.fc(self.drop(torch.flatten(z, 1)))


def test_vision_blocks_fx_exact(tmp_path):
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(0)
    x = torch.randn(1, 3, 12, 10)
    p = prepare_fx(_Blocks().eval(), torch.ao.quantization.get_default_qconfig_mapping(
        "qnnpack"), (x,))
    for _ in range(3):
        p(torch.randn(4, 3, 12, 10))
    tm = convert_fx(p)
    rep = qrt_export.export(tm, x, tmp_path / "b.bin", verbose=False)
    assert all(r["ok"] for r in rep.ops)
    q = qrt.load(tmp_path / "b.bin")
    kinds = {n.kind for n in q.graph.nodes}
    assert {"conv2d", "mul", "add", "cat", "lut", "linear", "adaptive_avg_pool2d"} <= kinds
    for xb in (x, torch.randn(3, 3, 12, 10), torch.randn(2, 3, 9, 16)):
        with torch.no_grad():
            np.testing.assert_array_equal(q(xb.numpy()), tm(xb).numpy())

# SPDX-License-Identifier: Apache-2.0
"""Exporter, issue 14 (quantized side): models as users write them (eager with QuantStub /
DeQuantStub, FX prepare_fx / convert_fx), exported with qrt_export.export and compared with
torch 2.13 (qnnpack engine) exactly, at the exported shape and at other lengths and batches.

Conv1d with padding_mode='reflect' (pad -> conv1d), TCN Chomp1d slicing, channels-last
transposes, chunk / split, unsqueeze / squeeze, view(x.size(0), -1), quantized mul
(x * sigmoid(x)), add_scalar / mul_scalar and torch's quantized unary functions (lut), and the
FX pattern dequantize -> unary float op -> quantize (one lut)."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.ao.quantization import (DeQuantStub, QConfig, QuantStub, convert,  # noqa: E402
                                   get_default_qconfig, get_default_qconfig_mapping, prepare)
from torch.ao.quantization.observer import MinMaxObserver  # noqa: E402
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx  # noqa: E402

import qrt  # noqa: E402
import qrt_export  # noqa: E402
from qrt_export._export import _engine  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=UserWarning)
pytestmark = pytest.mark.filterwarnings("ignore")


def rand(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def eager(model, shape, qconfig=None, n=4, seed=10):
    model = model.eval()
    model.qconfig = qconfig or get_default_qconfig("qnnpack")
    with _engine("qnnpack"):
        p = prepare(model)
        with torch.no_grad():
            for i in range(n):
                p(torch.from_numpy(rand(*shape, seed=seed + i)))
        return convert(p)


def fx(model, shape, n=4, seed=20):
    model = model.eval()
    with _engine("qnnpack"), torch.no_grad():
        p = prepare_fx(model, get_default_qconfig_mapping("qnnpack"),
                       (torch.from_numpy(rand(*shape)),))
        for i in range(n):
            p(torch.from_numpy(rand(*shape, seed=seed + i)))
        return convert_fx(p)


def export(tmp_path, tm, shape, name="m"):
    path = tmp_path / f"{name}.bin"
    qrt_export.export(tm, torch.from_numpy(rand(*shape)), path, check=False, verbose=False)
    return qrt.load(path)


def assert_exact(qm, tm, x):
    with _engine("qnnpack"), torch.no_grad():
        t = tm(torch.from_numpy(x))
    ts = t if isinstance(t, (tuple, list)) else [t]
    ys = qm.flat(x)
    for a, b in zip(ys, ts):
        b = b.int_repr().numpy() if b.is_quantized else b.numpy()
        a = a.int_repr() if isinstance(a, qrt.QTensor) else a
        assert a.shape == b.shape, (a.shape, b.shape)
        np.testing.assert_array_equal(a, b)


def kinds(qm):
    return [op.kind for op in qm._blob.ops]


# ---- the silent wrong answer: Conv1d(padding_mode='reflect') --------------------------------
class ReflectConv(nn.Module):
    def __init__(self, k, s, p, d, g=1, relu=False):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c = nn.Conv1d(4, 8, k, stride=s, padding=p, dilation=d, groups=g,
                           padding_mode="reflect")
        self.r = nn.ReLU() if relu else nn.Identity()

    def forward(self, x):
        return self.dq(self.r(self.c(self.q(x))))


GEOMS = [(3, 1, 1, 1), (5, 1, 2, 1), (3, 2, 1, 1), (3, 1, 2, 2), (7, 3, 3, 1), (4, 1, 3, 1),
         (3, 1, 4, 3), (1, 1, 0, 1), (5, 2, 4, 2)]


@pytest.mark.parametrize("k,s,p,d", GEOMS)
def test_conv_reflect_eager_exact(tmp_path, k, s, p, d):
    torch.manual_seed(k * 100 + s * 10 + p + d)
    tm = eager(ReflectConv(k, s, p, d), (2, 4, 24))
    qm = export(tmp_path, tm, (2, 4, 24))
    if p:
        assert kinds(qm)[:3] == ["quantize", "pad", "conv1d"]
        assert qm._blob.ops[2].attrs["padding"] == [0, 0]
    for shape in [(2, 4, 24), (1, 4, 31), (3, 4, 17)]:
        assert_exact(qm, tm, rand(*shape, seed=sum(shape)))


@pytest.mark.parametrize("k,s,p,d", GEOMS[:5])
def test_conv_reflect_fx_fused_relu_groups_exact(tmp_path, k, s, p, d):
    torch.manual_seed(7 + k + p)
    tm = fx(ReflectConv(k, s, p, d, g=2, relu=True), (2, 4, 24))
    qm = export(tmp_path, tm, (2, 4, 24))
    for shape in [(2, 4, 24), (1, 4, 40)]:
        assert_exact(qm, tm, rand(*shape, seed=sum(shape) + 1))


def test_conv_padding_modes_torch_refuses_are_refused(tmp_path):
    # torch 2.13's quantized conv takes zeros and reflect only; a model patched to another
    # mode cannot run in torch (its quantized F.pad has no replicate/circular kernel), and qrt
    # refuses it with a clear error instead of zero-padding
    for mode in ("replicate", "circular"):
        with pytest.raises(ValueError, match="not supported by quantized convolution"):
            torch.ao.nn.quantized.Conv1d(4, 4, 3, padding=1, padding_mode=mode)
        tm = eager(ReflectConv(3, 1, 1, 1), (2, 4, 24))
        tm.c.padding_mode = mode
        with pytest.raises(qrt_export.UnsupportedError, match=mode):
            export(tmp_path, tm, (2, 4, 24))


class FPad(nn.Module):
    def __init__(self, pads, mode, value=None):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c = nn.Conv1d(3, 3, 1)
        self.pads, self.mode, self.value = pads, mode, value

    def forward(self, x):
        x = self.c(self.q(x))
        kw = {} if self.value is None else {"value": self.value}
        x = F.pad(x, self.pads, mode=self.mode, **kw)
        y = F.pad(self.dq(x), (2, 1), mode="replicate")   # float32 pad
        return y, F.pad(self.dq(x), (-1, 3), mode="circular")


@pytest.mark.parametrize("pads,mode,value", [((2, 3), "constant", None),
                                             ((1, 0), "constant", 0.37),
                                             ((-2, 4), "constant", -1.0),
                                             ((3, 2), "reflect", None),
                                             ((-1, 2), "reflect", None)])
def test_functional_pad_quantized_and_float(tmp_path, pads, mode, value):
    tm = eager(FPad(pads, mode, value), (2, 3, 12))
    qm = export(tmp_path, tm, (2, 3, 12))
    assert kinds(qm).count("pad") == 3
    for shape in [(2, 3, 12), (1, 3, 19)]:
        assert_exact(qm, tm, rand(*shape, seed=3))


# ---- layout / shape ops in models ------------------------------------------------------------
class Chomp1d(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        return x[:, :, :-self.k].contiguous()


class TCNBlock(nn.Module):
    """locuslab TCN's TemporalBlock (without weight_norm): causal convs with Chomp1d."""

    def __init__(self, c_in, c_out, k, d):
        super().__init__()
        p = (k - 1) * d
        self.c1, self.ch1, self.r1 = nn.Conv1d(c_in, c_out, k, padding=p, dilation=d), \
            Chomp1d(p), nn.ReLU()
        self.c2, self.ch2, self.r2 = nn.Conv1d(c_out, c_out, k, padding=p, dilation=d), \
            Chomp1d(p), nn.ReLU()
        self.down = nn.Conv1d(c_in, c_out, 1)
        self.add = torch.ao.nn.quantized.FloatFunctional()
        self.relu = nn.ReLU()

    def forward(self, x):
        y = self.r1(self.ch1(self.c1(x)))
        y = self.r2(self.ch2(self.c2(y)))
        return self.relu(self.add.add(y, self.down(x)))


class TCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.b1, self.b2 = TCNBlock(3, 8, 3, 1), TCNBlock(8, 8, 3, 2)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = self.b2(self.b1(self.q(x)))
        return self.dq(self.fc(y[:, :, -1]))     # the last time step


@pytest.mark.parametrize("flavour", ["eager", "fx"])
def test_tcn_chomp_exact_at_other_lengths(tmp_path, flavour):
    torch.manual_seed(3)
    tm = (eager if flavour == "eager" else fx)(TCN(), (2, 3, 30))
    qm = export(tmp_path, tm, (2, 3, 30))
    assert "slice" in kinds(qm)
    for shape in [(2, 3, 30), (1, 3, 45), (4, 3, 12)]:
        assert_exact(qm, tm, rand(*shape, seed=shape[2]))


class IMU(nn.Module):
    """Channels-last [N, T, C] input, transposed inside; depthwise + pointwise convs; a
    chunk into two gated halves (x * sigmoid(gate)); global mean by view."""

    def __init__(self):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.dw = nn.Conv1d(6, 6, 5, padding=2, groups=6)
        self.pw = nn.Conv1d(6, 16, 1)
        self.sig = nn.Sigmoid()
        self.mul = torch.ao.nn.quantized.FloatFunctional()
        self.fc = nn.Linear(8 * 4, 3)

    def forward(self, x):
        x = self.q(x).transpose(1, 2)             # [N, C, T]
        x = self.pw(self.dw(x))
        a, g = x.chunk(2, dim=1)
        x = self.mul.mul(a, self.sig(g))
        x = x[:, :, ::4].unsqueeze(1).squeeze(1)  # strided slice, [N, 8, T/4]
        x = x.permute(0, 2, 1)                    # back to channels-last
        x = x.reshape(x.size(0), -1)
        return self.dq(self.fc(x))


@pytest.mark.parametrize("flavour", ["eager", "fx"])
def test_channels_last_imu_exact(tmp_path, flavour):
    torch.manual_seed(5)
    tm = (eager if flavour == "eager" else fx)(IMU(), (2, 16, 6))
    qm = export(tmp_path, tm, (2, 16, 6))
    assert {"permute", "split", "mul"} <= set(kinds(qm))
    for shape in [(2, 16, 6), (5, 16, 6)]:
        assert_exact(qm, tm, rand(*shape, seed=shape[0]))


class Swish(nn.Module):
    """x * sigmoid(x) on quantized tensors, and FloatFunctional add_scalar / mul_scalar."""

    def __init__(self, c_add, c_mul):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c = nn.Conv1d(3, 6, 3)
        self.sig = nn.Sigmoid()
        self.f1 = torch.ao.nn.quantized.FloatFunctional()
        self.f2 = torch.ao.nn.quantized.FloatFunctional()
        self.f3 = torch.ao.nn.quantized.FloatFunctional()
        self.c_add, self.c_mul = c_add, c_mul

    def forward(self, x):
        x = self.c(self.q(x))
        x = self.f1.mul(x, self.sig(x))
        x = self.f2.add_scalar(x, self.c_add)
        x = self.f3.mul_scalar(x, self.c_mul)
        return self.dq(x)


@pytest.mark.parametrize("c_add,c_mul", [(0.5, 2.0), (-3.0, -0.7), (40.0, 0.0), (0.0, 1.0)])
def test_swish_add_scalar_mul_scalar_exact(tmp_path, c_add, c_mul):
    torch.manual_seed(11)
    tm = eager(Swish(c_add, c_mul), (2, 3, 40))
    qm = export(tmp_path, tm, (2, 3, 40))
    assert kinds(qm).count("lut") == 2 and "mul" in kinds(qm)
    for shape in [(2, 3, 40), (1, 3, 300)]:
        assert_exact(qm, tm, rand(*shape, seed=shape[2], scale=3.0))


# ---- torch's quantized unary functions as tables: all 256 codes ----------------------------
class Act(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.act = act

    def forward(self, x):
        return self.dq(self.act(self.q(x)))


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


ACTS = [lambda: nn.Tanh(), lambda: nn.Hardtanh(-0.5, 1.25), lambda: nn.ReLU6(),
        lambda: nn.ELU(0.7), lambda: nn.LeakyReLU(0.13), lambda: nn.Hardsigmoid(),
        lambda: Fn(lambda x: torch.clamp(x, -1.1, 0.6)), lambda: Fn(torch.tanh),
        lambda: Fn(lambda x: F.hardtanh(x, -2.0, 2.0)), lambda: Fn(F.relu6),
        lambda: Fn(lambda x: F.leaky_relu(x, 0.2)), lambda: Fn(lambda x: x.clamp(-0.25, 3.0)),
        lambda: Fn(F.hardsigmoid), lambda: nn.ELU(1.5)]


def all_codes_input(tm, extra, seed):
    """Float inputs whose quantization (by the model's QuantStub) holds all 256 codes."""
    s, z = float(tm.q.scale), int(tm.q.zero_point)
    lo, hi = (0, 255) if tm.q.dtype == torch.quint8 else (-128, 127)
    codes = np.concatenate([np.arange(lo, hi + 1), np.random.default_rng(seed).integers(
        lo, hi + 1, extra)])
    return ((codes - z) * s).astype(np.float32).reshape(1, 1, -1)


@pytest.mark.parametrize("make", ACTS)
@pytest.mark.parametrize("dtype,scale", [("quint8", 1.0), ("quint8", 6.0), ("qint8", 0.3),
                                         ("qint8", 4.0)])
def test_unary_lut_all_codes_exact(tmp_path, make, dtype, scale):
    qconfig = QConfig(activation=MinMaxObserver.with_args(
        dtype=torch.quint8 if dtype == "quint8" else torch.qint8),
        weight=MinMaxObserver.with_args(dtype=torch.qint8))
    tm = eager(Act(make()), (1, 2, 50), qconfig=qconfig)
    tm.q.scale = torch.tensor([float(tm.q.scale) * scale])
    qm = export(tmp_path, tm, (1, 2, 50))
    assert "lut" in kinds(qm), kinds(qm)
    for extra in (0, 1, 63, 64 + 17, 1000):   # the vector chunks and the scalar tail
        assert_exact(qm, tm, all_codes_input(tm, extra, extra))


def test_fx_dequantize_float_unary_quantize_is_one_lut(tmp_path):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = nn.Conv1d(3, 8, 3), nn.Conv1d(8, 4, 1)

        def forward(self, x):
            x = self.c1(x)
            x = F.silu(x) * 0.5 + 0.125          # left in float by FX
            return self.c2(x)
    torch.manual_seed(2)
    tm = fx(M(), (2, 3, 40))
    qm = export(tmp_path, tm, (2, 3, 40))
    k = kinds(qm)
    # silu stays float in FX (dequantize -> silu -> quantize: one lut); FX quantizes the
    # scalar mul and add (two more luts); the only dequantize left is the model output's
    assert k.count("lut") == 3 and k.count("dequantize") == 1, k
    for shape in [(2, 3, 40), (1, 3, 300), (3, 3, 7)]:
        assert_exact(qm, tm, rand(*shape, seed=shape[2], scale=2.0))


def test_split_sizes_and_getitem_int_index(tmp_path):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.dq = QuantStub(), DeQuantStub()
            self.c = nn.Conv1d(2, 6, 1)
            self.cat = torch.ao.nn.quantized.FloatFunctional()

        def forward(self, x):
            parts = self.c(self.q(x)).split([1, 3, 2], dim=1)
            a, b, c = parts[0], parts[-2], parts[2]
            y = self.cat.cat([c, a], 1)
            return self.dq(y), self.dq(b[:, 1]), self.dq(b[..., 2:-1])
    torch.manual_seed(4)
    tm = eager(M(), (2, 2, 10))
    qm = export(tmp_path, tm, (2, 2, 10))
    for shape in [(2, 2, 10), (3, 2, 17)]:
        assert_exact(qm, tm, rand(*shape, seed=5))


class GlobalMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c = nn.Conv1d(3, 8, 5, stride=2)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x = torch.relu(self.c(self.q(x)))
        return self.dq(self.fc(torch.mean(x, -1))), self.dq(x.mean(dim=2, keepdim=True))


def test_quantized_mean_over_time_exact(tmp_path):
    torch.manual_seed(9)
    tm = eager(GlobalMean(), (2, 3, 64))
    qm = export(tmp_path, tm, (2, 3, 64))
    assert kinds(qm).count("mean") == 2
    for shape in [(2, 3, 64), (1, 3, 1001), (3, 3, 9)]:
        assert_exact(qm, tm, rand(*shape, seed=shape[2]))


def test_export_agreement_check_on_layout_model(tmp_path):
    """The exporter's own check (check=True) runs on these graphs and finds them exact."""
    torch.manual_seed(5)
    tm = eager(IMU(), (2, 16, 6))
    rep = qrt_export.export(tm, torch.from_numpy(rand(2, 16, 6)), tmp_path / "a.bin",
                            verbose=False)
    a = rep.agreement["qnnpack"]
    assert "error" not in a and a["exact"] == a["total"] > 0, a


def test_fx_plain_swish_expression(tmp_path):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = nn.Conv1d(3, 8, 3), nn.Conv1d(8, 4, 1)

        def forward(self, x):
            x = self.c1(x)
            return self.c2(x * torch.sigmoid(x))
    torch.manual_seed(8)
    tm = fx(M(), (2, 3, 40))
    qm = export(tmp_path, tm, (2, 3, 40))
    assert "mul" in kinds(qm)
    for shape in [(2, 3, 40), (1, 3, 123)]:
        assert_exact(qm, tm, rand(*shape, seed=shape[2], scale=2.0))

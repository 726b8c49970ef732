# SPDX-License-Identifier: Apache-2.0
"""End to end: quantized models with float sections (issue 14), exported and run by qrt.

Models as users write them, quantized with torch.ao (eager QuantStub/DeQuantStub, FX
prepare_fx/convert_fx under qnnpack, quantize_dynamic), with float tails and float sections
between quantized ones. Quantized tensors before any float section are compared bit for bit
with torch (qnnpack); float outputs within the end-to-end bound of docs/float-ops.md:
|qrt - torch| <= 1e-5 * (max|torch| + 1), the composition of the per-op bounds at these sizes
(the worst observed values are printed with ``-s``). Skipped without torch.
"""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.ao.quantization import (DeQuantStub, QConfigMapping, QuantStub, convert,  # noqa
                                   get_default_qconfig, get_default_qconfig_mapping, prepare,
                                   quantize_dynamic)
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx  # noqa: E402

import qrt  # noqa: E402
import qrt_export  # noqa: E402
from qrt_export._export import _engine  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=UserWarning)

E2E_RTOL = 1e-5


@pytest.fixture(autouse=True)
def _seeded():
    """Models are built with torch's default init: the same weights on every run."""
    torch.manual_seed(0)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def torch_out(model, x):
    with _engine("qnnpack"), torch.no_grad():
        return model(torch.from_numpy(x))


def float_err(got, want):
    """max |qrt - torch| / (max|torch| + 1): the end-to-end measure."""
    want = want.detach().numpy() if isinstance(want, torch.Tensor) else want
    assert got.shape == want.shape and got.dtype == np.float32
    assert np.isfinite(want).all() and np.isfinite(got).all()
    d = np.abs(got.astype(np.float64) - want.astype(np.float64)).max(initial=0.0)
    return float(d / (np.abs(want).max(initial=0.0) + 1.0))


def export(model, x, tmp_path, name="m.bin"):
    path = str(tmp_path / name)
    qrt_export.export(model, x, path, check=False, verbose=False)
    return qrt.load(path)


def kinds(qm):
    return [op.kind for op in qm._blob.ops]


def eager(model, shape, n=4):
    model.eval()
    model.qconfig = get_default_qconfig("qnnpack")
    with _engine("qnnpack"):
        p = prepare(model)
        with torch.no_grad():
            for k in range(n):
                p(torch.from_numpy(rand(*shape, seed=100 + k)))
        return convert(p)


# ---- 1: conv net -> DeQuantStub -> Linear (float) -> log_softmax ------------------------------
class ConvLogSoftmax(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c1 = nn.Conv1d(2, 8, 5, padding=2)
        self.r1 = nn.ReLU()
        self.c2 = nn.Conv1d(8, 8, 3, stride=2)
        self.r2 = nn.ReLU()
        self.fc = nn.Linear(8 * 15, 6)

    def forward(self, x):
        x = self.r2(self.c2(self.r1(self.c1(self.q(x)))))
        x = self.dq(torch.flatten(x, 1))
        return F.log_softmax(self.fc(x), dim=1)


def test_eager_conv_net_with_float_linear_log_softmax(tmp_path):
    m = ConvLogSoftmax()
    m.fc.qconfig = None
    m.eval()
    m.qconfig = get_default_qconfig("qnnpack")
    m.fc.qconfig = None
    with _engine("qnnpack"):
        p = prepare(m)
        with torch.no_grad():
            for k in range(4):
                p(torch.from_numpy(rand(3, 2, 32, seed=k)))
        qm_t = convert(p)
    assert isinstance(qm_t.fc, nn.Linear)
    x = rand(3, 2, 32, seed=7)
    qm = export(qm_t, x, tmp_path)
    assert "float_linear" in kinds(qm) and "float_log_softmax" in kinds(qm)
    err = float_err(qm(x), torch_out(qm_t, x))
    print("conv->linear->log_softmax", err)
    assert err <= E2E_RTOL
    # batch 1 and another batch size
    for xb in (x[:1], rand(5, 2, 32, seed=8)):
        assert float_err(qm(xb), torch_out(qm_t, xb)) <= E2E_RTOL


# ---- 2: dequantize -> layer_norm -> gelu -> quantize between two quantized sections --------
class LnGeluSandwich(nn.Module):
    def __init__(self):
        super().__init__()
        self.q1, self.dq1 = QuantStub(), DeQuantStub()
        self.q2, self.dq2 = QuantStub(), DeQuantStub()
        self.c1 = nn.Conv1d(3, 8, 3, padding=1)
        self.ln = nn.LayerNorm(24)
        self.gelu = nn.GELU()
        self.c2 = nn.Conv1d(8, 4, 3)

    def forward(self, x):
        x = self.dq1(self.c1(self.q1(x)))
        x = self.gelu(self.ln(x))
        return self.dq2(self.c2(self.q2(x)))


def test_eager_layer_norm_gelu_between_quantized_sections(tmp_path):
    m = LnGeluSandwich()
    with torch.no_grad():
        m.ln.weight.uniform_(0.5, 1.5)
        m.ln.bias.uniform_(-0.3, 0.3)
    m.eval()
    m.qconfig = get_default_qconfig("qnnpack")
    m.ln.qconfig = None
    m.gelu.qconfig = None
    with _engine("qnnpack"):
        p = prepare(m)
        with torch.no_grad():
            for k in range(4):
                p(torch.from_numpy(rand(2, 3, 24, seed=k)))
        qm_t = convert(p)
    x = rand(2, 3, 24, seed=9)
    qm = export(qm_t, x, tmp_path)
    ks = kinds(qm)
    assert ks.count("quantize") == 2 and "float_layer_norm" in ks and "float_gelu" in ks
    got = qm(x)
    want = torch_out(qm_t, x)
    # the output is dequantized from a quantized conv fed by the requantized float section:
    # a 1-ulp float difference may move a value across a rounding boundary of quantize
    lsb = qrt_export._export._output_lsb(qm, 0)
    d = np.abs(got.astype(np.float64) - want.numpy().astype(np.float64)) / lsb
    print("ln+gelu sandwich: exact", float((d < 1e-6).mean()), "max LSB", float(d.max()))
    assert d.max() <= 1.0 + 1e-6 and (d < 1e-6).mean() >= 0.99
    # the quantized section before the float one is exact, the float section within bound
    with _engine("qnnpack"), torch.no_grad():
        tq = qm_t.c1(qm_t.q1(torch.from_numpy(x)))
        tf = qm_t.gelu(qm_t.ln(tq.dequantize()))
    first = _prefix_model(tmp_path, qm_t, x)
    qc1, qf = first(x)
    assert np.array_equal(qc1.int_repr(), tq.int_repr().numpy())
    assert float_err(qf, tf) <= E2E_RTOL


def _prefix_model(tmp_path, qm_t, x):
    class Prefix(nn.Module):
        def __init__(self, src):
            super().__init__()
            self.q1, self.c1, self.ln, self.gelu = src.q1, src.c1, src.ln, src.gelu

        def forward(self, x):
            y = self.c1(self.q1(x))
            return y, self.gelu(self.ln(y.dequantize()))
    return export(Prefix(qm_t).eval(), x, tmp_path, "prefix.bin")


# ---- 3: quantize_dynamic({nn.Linear}) with float Conv1d + BatchNorm1d + ReLU + softmax ------
class DynamicNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 12, 5, stride=2, padding=2, dilation=1)
        self.bn = nn.BatchNorm1d(12)
        self.relu = nn.ReLU()
        self.dw = nn.Conv1d(12, 12, 3, padding="same", dilation=2, groups=12, bias=False)
        self.fc = nn.Linear(12 * 20, 10)

    def forward(self, x):
        x = self.relu(self.bn(self.conv(x)))
        x = self.dw(x)
        x = torch.flatten(x, 1)
        return torch.softmax(self.fc(x), dim=-1)


def test_quantize_dynamic_with_float_conv_batchnorm_softmax(tmp_path):
    m = DynamicNet()
    with torch.no_grad():
        m.bn.running_mean.uniform_(-0.5, 0.5)
        m.bn.running_var.uniform_(0.5, 2.0)
        m.bn.weight.uniform_(0.5, 1.5)
        m.bn.bias.uniform_(-0.2, 0.2)
    m.eval()
    with _engine("qnnpack"):
        dm = quantize_dynamic(m, {nn.Linear}, dtype=torch.qint8)
    x = rand(2, 4, 40, seed=3)
    qm = export(dm, x, tmp_path)
    ks = kinds(qm)
    assert {"float_conv1d", "float_batch_norm", "relu", "linear_dynamic",
            "float_softmax"} <= set(ks), ks
    err = float_err(qm(x), torch_out(dm, x))
    print("quantize_dynamic conv+bn+relu+softmax", err)
    assert err <= E2E_RTOL
    assert float_err(qm(x[:1]), torch_out(dm, x[:1])) <= E2E_RTOL


# ---- 4: FX: float regions from a QConfigMapping, float arithmetic --------------------------
class FxNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(3, 8, 3, padding=1)
        self.r1 = nn.ReLU()
        self.ln = nn.LayerNorm(16)
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        x = self.r1(self.c1(x))
        x = self.ln(x)
        x = x * torch.sigmoid(x) + 0.5 * x.mean(dim=-1, keepdim=True)
        x = F.silu(x) - x / 3.0
        return self.head(x).softmax(-1)


def test_fx_float_sections_and_float_arithmetic(tmp_path):
    m = FxNet().eval()
    qmap = get_default_qconfig_mapping("qnnpack")
    for name in ("ln", "head"):
        qmap = qmap.set_module_name(name, None)
    qmap = qmap.set_object_type(torch.sigmoid, None).set_object_type(F.silu, None) \
        .set_object_type("mean", None).set_object_type(torch.mul, None) \
        .set_object_type(torch.add, None)
    import operator
    qmap = qmap.set_object_type(operator.mul, None).set_object_type(operator.add, None) \
        .set_object_type(operator.sub, None).set_object_type(operator.truediv, None)
    ex = (torch.from_numpy(rand(2, 3, 16)),)
    with _engine("qnnpack"):
        p = prepare_fx(m, qmap, ex)
        with torch.no_grad():
            for k in range(4):
                p(torch.from_numpy(rand(2, 3, 16, seed=k)))
        qm_t = convert_fx(p)
    x = rand(2, 3, 16, seed=5)
    qm = export(qm_t, x, tmp_path)
    ks = kinds(qm)
    assert {"conv1d", "dequantize", "float_layer_norm", "float_sigmoid", "float_mul",
            "float_add", "float_mean", "float_silu", "float_sub", "float_div",
            "float_linear", "float_softmax"} <= set(ks), ks
    err = float_err(qm(x), torch_out(qm_t, x))
    print("fx float sections", err)
    assert err <= E2E_RTOL


# ---- 5: a float op on a quantized tensor is refused, not run as float ------------------------
class QuantizedTanh(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c = nn.Conv1d(2, 4, 3)
        self.t = nn.Tanh()

    def forward(self, x):
        return self.dq(self.t(self.c(self.q(x))))


def test_float_rule_declines_a_quantized_input(tmp_path):
    """nn.Tanh on a quantized tensor is torch's quantized tanh: the float rule declines it
    and the table rule (qrt/ops/lut.py) takes it, exactly."""
    qm_t = eager(QuantizedTanh(), (2, 2, 10))
    x = rand(2, 2, 10, seed=3)
    qm = export(qm_t, x, tmp_path)
    assert "lut" in kinds(qm) and "float_tanh" not in kinds(qm)
    np.testing.assert_array_equal(qm(x), torch_out(qm_t, x))


def test_quantized_sigmoid_still_quantized_and_float_sigmoid_float(tmp_path):
    class Both(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.dq = QuantStub(), DeQuantStub()
            self.c = nn.Conv1d(2, 4, 3)
            self.s = nn.Sigmoid()

        def forward(self, x):
            y = self.s(self.c(self.q(x)))
            return torch.sigmoid(self.dq(y) * 4.0 - 2.0)
    qm_t = eager(Both(), (2, 2, 10))
    x = rand(2, 2, 10, seed=1)
    qm = export(qm_t, x, tmp_path)
    ks = kinds(qm)
    assert "sigmoid" in ks and "float_sigmoid" in ks and "float_mul" in ks, ks
    assert float_err(qm(x), torch_out(qm_t, x)) <= E2E_RTOL


# ---- 6: one float tail with every float rule kind (modules, functions, methods, get_attr) ---
class _Tail(nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.gn = nn.GroupNorm(2, 6)
        self.inorm = nn.InstanceNorm1d(6, affine=True)
        self.bn_stats = nn.InstanceNorm1d(6, track_running_stats=True)
        self.prelu = nn.PReLU(6)
        self.elu, self.lrelu = nn.ELU(0.5), nn.LeakyReLU(0.2)
        self.celu, self.selu, self.silu = nn.CELU(1.5), nn.SELU(), nn.SiLU()
        self.hs, self.hsig = nn.Hardswish(), nn.Hardsigmoid()
        self.r6, self.ht = nn.ReLU6(), nn.Hardtanh(-0.5, 0.5)
        self.tanh, self.gelu_t = nn.Tanh(), nn.GELU(approximate="tanh")
        self.w = nn.Parameter(torch.randn(6, 1, generator=g))
        self.wc = nn.Parameter(torch.randn(4, 6, 3, generator=g) * 0.3)
        self.bc = nn.Parameter(torch.randn(4, generator=g))
        self.wl = nn.Parameter(torch.randn(3, 16, generator=g) * 0.2)
        self.ln_w = nn.Parameter(torch.rand(16, generator=g) + 0.5)
        self.sm = nn.Softmax(dim=1)
        with torch.no_grad():
            self.bn_stats.running_mean.uniform_(-0.2, 0.2)
            self.bn_stats.running_var.uniform_(0.5, 2.0)
            self.prelu.weight.uniform_(-0.5, 0.5)

    def forward(self, x):
        x = self.bn_stats(self.inorm(self.gn(x)))
        x = self.prelu(x)
        a = self.elu(x) + self.lrelu(x) - 0.25 * self.celu(x) + self.selu(x) / 4.0
        b = self.hs(a) * self.hsig(a) + self.silu(a)
        c = self.r6(b) - self.ht(b) + F.relu6(a) + F.hardtanh(a, -0.2, 0.3)
        d = self.tanh(c) + self.gelu_t(c) + F.gelu(c) + F.elu(c, 0.3) + F.leaky_relu(c, 0.05)
        d = d * self.w + F.hardswish(d) - F.hardsigmoid(d) + F.silu(d) + torch.tanh(d)
        d = torch.clamp(d, -1.0, 1.0) + d.clamp(min=0.0).tanh() + \
            torch.clip(d, max=0.5).clamp(-2.0)
        e = torch.exp(d)
        f = torch.log(e + 1.0) + e.log() - d.exp().sqrt() + (1.0 - e) / 8.0
        g = torch.sqrt(f * f + 1.0) ** 1.5 + f.pow(2) - torch.pow(f, 3)
        h = F.conv1d(g, self.wc, self.bc, padding=1, dilation=1)
        s = h.sum(dim=1, keepdim=True) + torch.sum(h, (1, 2), keepdim=True) + h.mean(-1, True)
        h = h / (s * s + 1.0) + torch.mean(h, dim=2, keepdim=True) - 2.0 / (h * h + 1.0)
        h = F.layer_norm(h, (16,), self.ln_w, None, 1e-4)
        h = F.group_norm(h, 2, None, None, 1e-5) + F.instance_norm(h)
        m = torch.matmul(h, g.reshape(g.shape[0], 16, 6)) + \
            (h @ h.reshape(-1, 16, 4)).sum(-1, keepdim=True)
        lin = F.linear(h, self.wl)
        out = m.flatten(1)
        return F.log_softmax(out, -1) + self.sm(lin.flatten(1)).mean(-1, keepdim=True) + \
            lin.softmax(-1).sum()


class FloatZoo(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c = nn.Conv1d(2, 6, 3, padding=1)
        self.r = nn.ReLU()
        self.tail = _Tail()

    def forward(self, x):
        return self.tail(self.dq(self.r(self.c(self.q(x)))))


def test_float_tail_with_every_rule_kind(tmp_path):
    m = FloatZoo().eval()
    m.qconfig = get_default_qconfig("qnnpack")
    m.tail.qconfig = None
    with _engine("qnnpack"):
        p = prepare(m)
        with torch.no_grad():
            for k in range(4):
                p(torch.from_numpy(rand(2, 2, 16, seed=k)))
        qm_t = convert(p)
    x = rand(2, 2, 16, seed=11)
    qm = export(qm_t, x, tmp_path)
    ks = set(kinds(qm))
    want_kinds = {"float_group_norm", "float_instance_norm", "float_batch_norm", "float_prelu",
                  "float_elu", "float_leaky_relu", "float_silu", "float_hardswish",
                  "float_hardsigmoid", "float_clamp", "float_tanh", "float_gelu",
                  "float_exp", "float_log", "float_sqrt", "float_pow", "float_conv1d",
                  "float_sum", "float_mean", "float_div", "float_layer_norm", "float_matmul",
                  "float_linear", "float_log_softmax", "float_softmax", "float_add",
                  "float_sub", "float_mul"}
    assert want_kinds <= ks, want_kinds - ks
    err = float_err(qm(x), torch_out(qm_t, x))
    print("float zoo", err)
    # ~100 chained float ops with five normalisations of small-variance rows (each op within
    # its own bound, tests/test_float_ops.py) amplify the last-bit differences: measured
    # 1e-6..2.5e-4 of max|y| over weight seeds; the short float sections above stay within
    # E2E_RTOL
    assert err <= 1e-3

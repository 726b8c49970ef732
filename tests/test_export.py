# SPDX-License-Identifier: Apache-2.0
"""End to end: torch model -> qrt_export -> qrt.load -> equal to torch (qnnpack).

Every accepted input kind (eager, fused, QAT-converted, FX, dynamic, torch.save file, float
model + calibration, state_dict via the CLI) and several architectures (residual adds,
dilations, depthwise, pooling variants, batch sizes). Skipped without torch.
"""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
from torch.ao.quantization import (DeQuantStub, QuantStub, convert, fuse_modules,  # noqa: E402
                                   get_default_qat_qconfig, get_default_qconfig,
                                   get_default_qconfig_mapping, prepare, prepare_qat,
                                   quantize_dynamic)
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx  # noqa: E402

import qrt  # noqa: E402
import qrt_export  # noqa: E402
from qrt_export._export import _engine, _repack  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=UserWarning)


def check_equal(qmodel, tmodel, x, *, engine="qnnpack"):
    """qrt vs torch (repacked for ``engine``): >= 99.9 % exact, never more than 1 LSB off."""
    tm = _repack(tmodel, engine)
    with _engine(engine), torch.no_grad():
        t = tm(torch.from_numpy(x))
    y = qmodel(x)
    if isinstance(t, torch.Tensor) and t.is_quantized:
        d = np.abs(y.int_repr().astype(np.int64) - t.int_repr().numpy().astype(np.int64))
    else:
        lsb = qrt_export._export._output_lsb(qmodel, 0)
        d = np.abs(y.astype(np.float64) - t.numpy().astype(np.float64))
        if lsb is not None:
            d = d / lsb
    exact = float((d == 0).mean())
    assert exact >= 0.999 and d.max() <= 1.0 + 1e-9, (exact, d.max())
    return exact, float(d.max())


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---- models ----------------------------------------------------------------------------------
class EagerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c1 = nn.Conv1d(3, 16, 5, padding=2)
        self.r1 = nn.ReLU()
        self.dw = nn.Conv1d(16, 16, 3, padding=2, dilation=2, groups=16)
        self.r2 = nn.ReLU()
        self.c2 = nn.Conv1d(16, 8, 3, stride=2)
        self.pool = nn.MaxPool1d(2)
        self.fc = nn.Linear(8 * 7, 6)
        self.fr = nn.ReLU()
        self.fc2 = nn.Linear(6, 4)

    def forward(self, x):
        x = self.q(x)
        x = self.r1(self.c1(x))
        x = self.r2(self.dw(x))
        x = self.pool(self.c2(x))
        x = torch.flatten(x, 1)
        x = self.fc2(self.fr(self.fc(x)))
        return self.dq(x)


def calibrate(p, shape, n=4):
    with torch.no_grad():
        for s in range(n):
            p(torch.from_numpy(rand(*shape, seed=100 + s)))


def eager_model(qconfig="qnnpack", fuse=True):
    torch.manual_seed(0)
    m = EagerNet().eval()
    if fuse:
        m = fuse_modules(m, [["c1", "r1"], ["dw", "r2"], ["fc", "fr"]])
    m.qconfig = get_default_qconfig(qconfig)
    with _engine("qnnpack" if qconfig == "qnnpack" else "x86"):
        p = prepare(m)
        calibrate(p, (8, 3, 30))
        return convert(p)


class ResNet1d(nn.Module):
    """Residual adds, avg/adaptive pooling, hardswish, cat, view."""

    def __init__(self):
        super().__init__()
        self.c0 = nn.Conv1d(2, 8, 3, padding=1)
        self.b0 = nn.BatchNorm1d(8)
        self.c1 = nn.Conv1d(8, 8, 3, padding=1)
        self.c2 = nn.Conv1d(8, 8, 3, padding=2, dilation=2, groups=8)
        self.avg = nn.AvgPool1d(3, stride=2, padding=1)
        self.c3 = nn.Conv1d(8, 8, 1)
        self.hs = nn.Hardswish()
        self.gap = nn.AdaptiveAvgPool1d(4)
        self.fc = nn.Linear(64, 5)

    def forward(self, x):
        x = torch.relu(self.b0(self.c0(x)))
        y = torch.relu(self.c1(x))
        x = torch.relu(x + self.c2(y))
        x = self.avg(x)
        z = self.hs(self.c3(x))
        x = torch.cat([x + z, z], 1)
        x = self.gap(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


def fx_model(net=None, shape=(8, 2, 40)):
    torch.manual_seed(1)
    net = (net or ResNet1d()).eval()
    with _engine("qnnpack"):
        p = prepare_fx(net, get_default_qconfig_mapping("qnnpack"),
                       (torch.from_numpy(rand(*shape)),))
        calibrate(p, shape)
        return convert_fx(p)


# ---- tests -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def eager_blob(tmp_path_factory):
    tm = eager_model()
    p = tmp_path_factory.mktemp("e") / "eager.bin"
    rep = qrt_export.export(tm, rand(4, 3, 30), p, verbose=False)
    return tm, qrt.load(p), rep


@pytest.mark.parametrize("batch", [1, 4, 7])
def test_export_eager_fused_batches(eager_blob, batch):
    tm, qm, _ = eager_blob
    check_equal(qm, tm, rand(batch, 3, 30, seed=batch))


def test_export_report_agreement(eager_blob):
    _, qm, rep = eager_blob
    a = rep.agreement["qnnpack"]
    assert a["exact"] == a["total"] and a["max_lsb"] == 0
    assert rep.macs == qm.macs() > 0 and rep.arena_nbytes == qm.arena_nbytes
    assert "vs torch (qnnpack)" in str(rep)
    assert qm.meta["torch_version"] == torch.__version__


def test_export_eager_unfused_per_channel_x86(tmp_path):
    tm = eager_model("x86", fuse=False)  # per-channel weights, reduce_range activations
    p = tmp_path / "m.bin"
    qrt_export.export(tm, rand(2, 3, 30), p, verbose=False)
    check_equal(qrt.load(p), tm, rand(5, 3, 30, seed=3))


def test_export_qat_converted(tmp_path):
    torch.manual_seed(0)
    m = EagerNet().train()
    m = torch.ao.quantization.fuse_modules_qat(m, [["c1", "r1"], ["dw", "r2"], ["fc", "fr"]])
    m.qconfig = get_default_qat_qconfig("qnnpack")
    with _engine("qnnpack"):
        p = prepare_qat(m)
        opt = torch.optim.SGD(p.parameters(), lr=0.01)
        for s in range(3):
            loss = p(torch.from_numpy(rand(8, 3, 30, seed=s))).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        p.eval()
        tm = convert(p)
    path = tmp_path / "qat.bin"
    qrt_export.export(tm, rand(2, 3, 30), path, verbose=False)
    check_equal(qrt.load(path), tm, rand(3, 3, 30, seed=9))


@pytest.mark.parametrize("batch", [1, 3])
def test_export_fx_residual_pooling(tmp_path, batch):
    tm = fx_model()
    p = tmp_path / "fx.bin"
    qrt_export.export(tm, rand(2, 2, 40), p, verbose=False)
    qm = qrt.load(p)
    kinds = {n.label for n in qm.graph.nodes}
    want = {"add", "add+relu", "avg_pool1d", "adaptive_avg_pool1d", "hardswish", "cat"}
    assert want <= kinds, kinds
    check_equal(qm, tm, rand(batch, 2, 40, seed=batch))


class PoolNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv1d(4, 6, 3)
        self.mp = nn.MaxPool1d(3, stride=2, padding=1, dilation=1, ceil_mode=True)
        self.ap = nn.AvgPool1d(2, ceil_mode=False)

    def forward(self, x):
        x = torch.relu(self.c(x))
        x = nn.functional.max_pool1d(x, 2)
        x = self.mp(x)
        return torch.sigmoid(self.ap(x))


def test_export_fx_functional_pools_sigmoid(tmp_path):
    tm = fx_model(PoolNet(), (4, 4, 50))
    p = tmp_path / "pool.bin"
    qrt_export.export(tm, rand(2, 4, 50), p, verbose=False)
    check_equal(qrt.load(p), tm, rand(3, 4, 50, seed=5))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_export_dynamic(tmp_path):
    torch.manual_seed(0)
    with _engine("qnnpack"):
        tm = quantize_dynamic(MLP().eval(), {nn.Linear}, dtype=torch.qint8)
    p = tmp_path / "dyn.bin"
    qrt_export.export(tm, rand(4, 20), p, verbose=False)
    qm = qrt.load(p)
    assert [op.kind for op in qm.ops] == ["linear_dynamic", "relu", "linear_dynamic"]
    x = rand(6, 20, seed=2)
    with _engine("qnnpack"), torch.no_grad():
        t = _repack(tm, "qnnpack")(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(qm(x), t)


@pytest.mark.parametrize("kind", ["eager", "fx"])
def test_export_torch_save_file(tmp_path, eager_blob, kind):
    """A whole model saved with torch.save (torch 2.13 cannot even reload these unaided)."""
    tm = eager_blob[0] if kind == "eager" else fx_model()
    shape = (2, 3, 30) if kind == "eager" else (2, 2, 40)
    f = tmp_path / "whole.pt"
    torch.save(tm, f)
    p = tmp_path / "m.bin"
    rep = qrt_export.export(str(f), rand(*shape), p, verbose=False)
    assert rep.agreement["qnnpack"]["exact"] == rep.agreement["qnnpack"]["total"]
    assert qrt.load(p).meta["source"] == str(f)
    check_equal(qrt.load(p), tm, rand(3, *shape[1:], seed=8))


def test_export_float_model_with_calibration(tmp_path):
    torch.manual_seed(0)
    net = ResNet1d().eval()
    calib = [torch.from_numpy(rand(8, 2, 40, seed=s)) for s in range(3)]
    p = tmp_path / "f.bin"
    rep = qrt_export.export(net, rand(2, 2, 40), p, calibration_data=calib, verbose=False)
    qm = qrt.load(p)
    assert "quantized by qrt-export" in qm.meta["model_kind"]
    check_equal(qm, rep.torch_model, rand(3, 2, 40, seed=4))


def test_export_float_model_folds_bn_fuses_relu(tmp_path):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv1d(3, 8, 3), nn.BatchNorm1d(8), nn.ReLU(), nn.MaxPool1d(2),
                        nn.Flatten(), nn.Linear(8 * 9, 4), nn.ReLU()).eval()
    p = tmp_path / "s.bin"
    rep = qrt_export.export(net, rand(4, 3, 20), p, verbose=False,
                            calibration_data=[rand(8, 3, 20, seed=k) for k in range(3)])
    qm = qrt.load(p)
    kinds = [n.label for n in qm.graph.nodes]
    assert "conv1d+relu" in kinds and "linear+relu" in kinds, kinds
    check_equal(qm, rep.torch_model, rand(5, 3, 20, seed=4))


MODEL_SRC = '''
import torch.nn as nn
class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv1d(1, 4, 3, padding=1)
        self.r = nn.ReLU()
        self.p = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(4, 3)
    def forward(self, x):
        return self.fc(self.p(self.r(self.c(x))).flatten(1))
'''


def test_export_cli_state_dict(tmp_path):
    (tmp_path / "mynets.py").write_text(MODEL_SRC)
    sys.path.insert(0, str(tmp_path))
    try:
        import mynets
        torch.manual_seed(0)
        torch.save(mynets.SmallNet().state_dict(), tmp_path / "ckpt.pt")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("mynets", None)
    np.save(tmp_path / "x.npy", rand(4, 1, 16))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    cmd = [sys.executable, "-m", "qrt_export", "--model", "mynets:SmallNet", "--weights",
           str(tmp_path / "ckpt.pt"), "--input", str(tmp_path / "x.npy"), "-o",
           str(tmp_path / "s.bin")]
    # a float model is not quantized silently on one batch: --calibrate is required
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 3 and "--calibrate" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "s.bin").exists()
    np.save(tmp_path / "calib.npy", rand(64, 1, 16, seed=3))
    r = subprocess.run(cmd + ["--calibrate", str(tmp_path / "calib.npy")], capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "DeprecationWarning" not in r.stderr and "torch.ao" in r.stderr
    assert "vs torch (qnnpack)" in r.stderr and "100.0000 %" in r.stderr
    m = qrt.load(tmp_path / "s.bin")
    assert m(rand(2, 1, 16)).shape == (2, 3)


class Unsupported(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c = nn.Conv1d(2, 2, 1)

    def forward(self, x):
        y = self.dq(self.c(self.q(x)))
        y = torch.cumsum(y, -1)
        return torch.flip(y, [-1])


def test_export_reports_every_unsupported_op(tmp_path):
    m = Unsupported().eval()
    m.qconfig = get_default_qconfig("qnnpack")
    with _engine("qnnpack"):
        p = prepare(m)
        calibrate(p, (2, 2, 5))
        tm = convert(p)
    with pytest.raises(qrt_export.UnsupportedError) as ei:
        qrt_export.export(tm, rand(1, 2, 5), tmp_path / "u.bin", verbose=False)
    msg = str(ei.value)
    assert msg.startswith("2 unsupported op(s)"), msg
    assert "cumsum" in msg and "flip" in msg            # every op, in one run
    assert "test_export.py\", line" in msg and "torch.flip(y" in msg, msg  # where
    # a pointer, not the whole list
    assert "docs/supported-ops.md" in msg and "max_pool1d" not in msg
    assert not (tmp_path / "u.bin").exists()


class EagerResidual(nn.Module):
    """Eager-mode residual add / add_relu / cat through FloatFunctional, avg pooling."""

    def __init__(self):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c1 = nn.Conv1d(4, 8, 3, padding=1)
        self.c2 = nn.Conv1d(8, 8, 5, padding=4, dilation=2, groups=4)
        self.add = torch.ao.nn.quantized.FloatFunctional()
        self.add_relu = torch.ao.nn.quantized.FloatFunctional()
        self.cat = torch.ao.nn.quantized.FloatFunctional()
        self.pool = nn.AvgPool1d(2)
        self.gap = nn.AdaptiveAvgPool1d(3)

    def forward(self, x):
        x = self.q(x)
        h = self.c1(x)
        y = self.add.add(h, self.c2(h))
        z = self.add_relu.add_relu(y, h)
        x = self.cat.cat([self.pool(z), self.pool(y)], 1)
        return self.dq(self.gap(x))


def test_export_eager_floatfunctional_residual(tmp_path):
    torch.manual_seed(3)
    m = EagerResidual().eval()
    m.qconfig = get_default_qconfig("qnnpack")
    with _engine("qnnpack"):
        p = prepare(m)
        calibrate(p, (6, 4, 24))
        tm = convert(p)
    path = tmp_path / "res.bin"
    qrt_export.export(tm, rand(2, 4, 24), path, verbose=False)
    qm = qrt.load(path)
    kinds = [n.label for n in qm.graph.nodes]
    assert {"add", "add+relu", "cat", "avg_pool1d", "adaptive_avg_pool1d"} <= set(kinds), kinds
    for b in (1, 5):
        check_equal(qm, tm, rand(b, 4, 24, seed=b))

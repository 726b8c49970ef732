# SPDX-License-Identifier: Apache-2.0
"""The export check (issue #44): every op is judged on torch's own inputs, float outputs
against a bound that follows torch's own float32 variation, "LSB" only for quantized tensors.

The models the check used to refuse although they agree with torch: torchaudio's DeepSpeech
under ``quantize_dynamic`` (a dynamic linear's accepted input rounding then failed the relu,
hardtanh and permute after it), torchvision's MobileNetV2 through X86InductorQuantizer on
random inputs (a float conv + add whose value lands next to a rounding boundary of the next
quantize), and the same MobileNetV2 through ``quantize_dynamic`` (float convs). A real
mismatch still fails: tests/test_custom_ops.py::test_export_mismatch_names_the_first_diverging_op.
"""

import importlib.util
import os
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402

import qrt  # noqa: E402
import qrt_export  # noqa: E402
from qrt_export import _export as E  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=UserWarning)


def _torchaudio_class(module, name):
    """A torchaudio model class from its source file (torchaudio's compiled extension does not
    load over this CPU torch; the model files are plain Python)."""
    spec = importlib.util.find_spec("torchaudio")
    if spec is None:
        pytest.skip("torchaudio is not installed")
    path = os.path.join(os.path.dirname(spec.origin), "models", f"{module}.py")
    ns: dict = {}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), ns)
    return ns[name]


def _all_on_torch_inputs(rep):
    assert rep.ops and all(r["ok"] for r in rep.ops), [r for r in rep.ops if not r["ok"]][:3]
    assert all(r["inputs"] == "torch" for r in rep.ops), \
        [r for r in rep.ops if r["inputs"] != "torch"][:3]


def test_deepspeech_dynamic_is_accepted(tmp_path):
    """The issue's DeepSpeech: 3 random inputs that each failed at 'relu_3' before."""
    DeepSpeech = _torchaudio_class("deepspeech", "DeepSpeech")
    torch.manual_seed(0)
    m = DeepSpeech(n_feature=80, n_hidden=512, n_class=29).eval()
    qm = torch.ao.quantization.quantize_dynamic(m, {nn.Linear}, dtype=torch.qint8)
    for seed in range(3):
        x = torch.randn(1, 1, 200, 80, generator=torch.Generator().manual_seed(seed))
        rep = qrt_export.export(qm, x, tmp_path / "m.bin", verbose=False)
        _all_on_torch_inputs(rep)
        f = rep.agreement["qnnpack"]["float"]
        assert f["max_abs"] <= 1e-4 * f["max_ref"], f
        with E._engine("qnnpack"), torch.no_grad():
            t = E._repack(qm, "qnnpack")(x).numpy()   # packed for qnnpack, as qrt follows
        y = qrt.load(tmp_path / "m.bin")(x.numpy())
        assert np.abs(y - t).max() <= 1e-4 * np.abs(t).max()


def test_mobilenet_v2_x86_inductor_random_inputs(tmp_path):
    """X86InductorQuantizer leaves convs before adds in float: a float value next to a rounding
    boundary of the quantize after it used to fail the export on some inputs. Each quantize is
    now fed torch's own float input, so its codes are torch's exactly, on every input."""
    from _pt2e import QUANTIZERS, pt2e_quantize
    from _torch_models import bn_recalibrate, torchvision
    tv = torchvision()
    torch.manual_seed(0)
    m = tv.models.mobilenet_v2().eval()
    bn_recalibrate(m, (2, 3, 64, 64))
    ex = (torch.randn(1, 3, 64, 64),)
    c = pt2e_quantize(m, ex, QUANTIZERS["x86"](), [torch.randn(1, 3, 64, 64)
                                                   for _ in range(4)])
    n_float = 0
    for seed in range(6):
        x = torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(seed))
        rep = qrt_export.export(c, x, tmp_path / "m.bin", verbose=False)
        _all_on_torch_inputs(rep)
        n_float = sum("max_abs" in r for r in rep.ops)
        assert rep.pt2e["exact"] >= 0.999 * rep.pt2e["total"]
    assert n_float > 0    # the float convs were judged as float ops


def test_mobilenet_v2_dynamic_float_section(tmp_path):
    """quantize_dynamic({Linear}) leaves MobileNetV2's convs float: each op on torch's inputs
    is within its bound, the report compares the float output with torch's own oneDNN on/off
    difference, and says "LSB" only of quantized tensors."""
    from _torch_models import bn_recalibrate, torchvision
    tv = torchvision()
    torch.manual_seed(1)
    m = tv.models.mobilenet_v2().eval()
    bn_recalibrate(m, (2, 3, 64, 64))
    qm = torch.ao.quantization.quantize_dynamic(m, {nn.Linear}, dtype=torch.qint8)
    x = torch.randn(1, 3, 96, 96)
    rep = qrt_export.export(qm, x, tmp_path / "m.bin", verbose=False)
    _all_on_torch_inputs(rep)
    f = rep.agreement["qnnpack"]["float"]
    assert f["torch_var"] > 0 and rep.agreement["qnnpack"]["total"] == 0
    # end to end, a classifier input next to a rounding boundary of the dynamic quantization
    # moves the logits by one input step times a weight column (6.5e-4 here, where torch's
    # own oneDNN on / off differ by 2e-6 without a flip): reported, not judged
    assert f["max_abs"] <= 1e-2 * f["max_ref"], f
    convs = [r for r in rep.ops if r["op"] == "float_conv2d"]
    assert len(convs) == 52 and all(r["max_abs"] <= 1e-5 * (r["max_ref"] + 1) for r in convs)
    text = str(rep)
    assert "LSB" not in text and "elements exact" not in text, text
    assert "oneDNN on vs off" in text and "float outputs max |difference|" in text, text


def test_quantized_outputs_report_codes_in_lsb(tmp_path):
    from torch.ao.quantization import QuantStub, convert, get_default_qconfig, prepare

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.c = QuantStub(), nn.Conv1d(2, 4, 3)

        def forward(self, x):
            return self.c(self.q(x))
    with E._engine("qnnpack"):
        n = Net().eval()
        n.qconfig = get_default_qconfig("qnnpack")
        p = prepare(n)
        p(torch.randn(4, 2, 16))
        qm = convert(p)
    rep = qrt_export.export(qm, torch.randn(2, 2, 16), tmp_path / "m.bin", verbose=False)
    a = rep.agreement["qnnpack"]
    assert a["exact"] == a["total"] > 0 and "float" not in a
    assert "quantized outputs 112/112 codes exact (100.0000 %), max 0 LSB" in str(rep), str(rep)


def _dynamic_linear_case(tmp_path):
    """relu -> dynamic linear, with "torch's" relu output one float32 step across a rounding
    boundary of the dynamic quantization from qrt's: the linear's outputs then differ by one
    input step times a heavy weight column, far beyond FLOAT_RTOL, on qrt's own input."""
    from torch.ao.quantization import quantize_dynamic
    torch.manual_seed(3)
    fm = nn.Sequential(nn.ReLU(), nn.Linear(16, 8)).eval()
    with torch.no_grad():
        fm[1].weight[:, 5] = 4.0
    with E._engine("qnnpack"):
        dm = quantize_dynamic(fm, {nn.Linear}, dtype=torch.qint8)
    x = torch.rand(1, 16) * 2.0
    x[0, 0], x[0, 1] = 0.0, 2.0   # pin the dynamic range: element 5 moves inside it
    path = tmp_path / "m.bin"
    qrt_export.export(dm, (x,), path, verbose=False, check=False)
    m = qrt.load(path)

    def torch_lin(v):
        with E._engine("qnnpack"), torch.no_grad():
            return dm[1](v)
    lo, hi = np.float32(0.7), np.float32(0.7 + 2.0 / 255)
    at = lambda v: torch_lin(torch.cat([x[:, :5], torch.tensor([[float(v)]]), x[:, 6:]], 1))  # noqa: E731
    assert not torch.equal(at(lo), at(hi))
    while np.nextafter(lo, hi) != hi:
        mid = np.float32((np.float64(lo) + np.float64(hi)) / 2)
        mid = mid if mid not in (lo, hi) else np.nextafter(lo, hi)
        if torch.equal(at(mid), at(lo)):
            lo = mid
        else:
            hi = mid
    x[0, 5] = float(lo)                      # qrt's relu output: lo
    t_in = x.clone()
    t_in[0, 5] = float(hi)                   # "torch's" relu output: the next float32
    return m, x, t_in, torch_lin(t_in), at(lo)


def test_each_op_is_judged_on_torchs_inputs(tmp_path):
    """An accepted float difference upstream (one float32 step in the relu) never fails a later
    op: the linear is run on torch's relu output, where it agrees; a wrong op still fails."""
    m, x, t_in, want, own = _dynamic_linear_case(tmp_path)
    relu, lin = m.graph.nodes[0], m.graph.nodes[-1]
    assert lin.label == "linear_dynamic"
    assert (want - own).abs().max() > E.FLOAT_RTOL * want.abs().max()
    rows = E.check_ops(m, {relu.name: t_in, lin.name: want}, (x,))
    row = {r["name"]: r for r in rows}
    assert row[lin.name]["ok"] and row[lin.name]["inputs"] == "torch", row
    assert row[lin.name]["max_abs"] <= E.FLOAT_RTOL * float(want.abs().max())
    assert row[relu.name]["ok"] and row[relu.name]["max_abs"] > 0   # one float32 step
    rows = E.check_ops(m, {relu.name: t_in, lin.name: want + 1.0}, (x,))
    bad = E._first_mismatch(rows)
    assert bad is not None and bad["name"] == lin.name
    msg = E.describe_row(bad)
    assert "beyond its bound" in msg and "LSB" not in msg, msg


def test_float_bound_follows_torch_variation(tmp_path, monkeypatch):
    """A float op beyond FLOAT_RTOL passes when torch itself varies by at least half as much
    on that op (oneDNN on / off), and fails when it does not; torch_variation is what torch
    computes on its two paths for the same inputs."""
    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                        nn.Conv2d(16, 32, 3, padding=1)).eval()
    torch.manual_seed(0)
    x = torch.randn(1, 3, 24, 24)
    path = tmp_path / "m.bin"
    rep = qrt_export.export(net, x, path, verbose=False, keep_float=True)
    assert all(r["ok"] for r in rep.ops)
    gm = E._trace(net)
    values = E._run_nodes(gm, (x,))
    var = E.torch_variation(gm, values)
    with torch.no_grad(), torch.backends.mkldnn.flags(enabled=False):
        alt = net[2](values[[n for n in gm.graph.nodes if n.op == "call_module"][1].name])
    conv2 = [n for n in gm.graph.nodes if n.op == "call_module"][2].name
    assert var[conv2] == pytest.approx(float((alt - values[conv2]).abs().max()), rel=0, abs=0)
    m = qrt.load(path)
    t = values[conv2]
    delta = 3 * E.FLOAT_RTOL * float(t.abs().max())
    off = dict(values)
    off[conv2] = t + delta                     # "torch" now differs from qrt by delta
    rows = {r["name"]: r for r in E.check_ops(m, off, (x,))}
    assert not rows[conv2]["ok"]               # without torch's variation: beyond the bound
    monkeypatch.setattr(E, "torch_variation", lambda gm, values: {conv2: 0.6 * delta})
    rows = {r["name"]: r for r in E.check_ops(m, off, (x,), gm=gm)}
    assert rows[conv2]["ok"] and rows[conv2]["torch_var"] == 0.6 * delta
    monkeypatch.setattr(E, "torch_variation", lambda gm, values: {conv2: 0.4 * delta})
    rows = {r["name"]: r for r in E.check_ops(m, off, (x,), gm=gm)}
    assert not rows[conv2]["ok"] and "oneDNN on vs off" in E.describe_row(rows[conv2])

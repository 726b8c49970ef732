# SPDX-License-Identifier: Apache-2.0
"""Issue 14: the published 1-d models, in every way users quantize them, exported and compared
with torch (qnnpack) on fresh inputs.

Models (tests/models_1d.py, tests/_flavours.py): torchaudio's Wav2Letter (waveform, mfcc; its
forward with the final log_softmax, published widths 250 / 2000), the M5
speech-commands tutorial network at 8000 and 16000 samples, the Hannun et al. ECG ResNet,
locuslab's TCN (hook-based weight_norm as published, and parametrizations.weight_norm), a
channels-last IMU classifier and a Conv1d / ConvTranspose1d autoencoder. Flavours: eager
(QuantWrapper + fuse_modules), FX, QAT (FX and eager), quantize_dynamic.

On every fresh input, every op qrt runs is compared with torch's value of the same graph node
(``check_ops``): quantized tensors exactly (==), float tensors within the export's float
contract; the model output is then compared as a whole: exactly when it is a dequantized
quantized tensor, within ``1e-5 * (max|torch| + 1)`` (docs/float-ops.md, end to end) when a
float op computed it. Pairs that torch itself cannot quantize as written are asserted to fail
inside torch (the reason is in docs/export.md).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import _flavours as F  # noqa: E402

import qrt  # noqa: E402
import qrt_export  # noqa: E402
from qrt_export._export import _engine, _repack, _run_nodes, _trace, check_ops  # noqa: E402

E2E_RTOL = 1e-5

# what each (model, flavour) pair gives; everything not listed is "exact" (output = a
# dequantized quantized tensor, equal to torch's)
FLOAT_OUT = "float"    # a float op computes the output (log_softmax, quantize_dynamic's floats)
NA = "na"              # torch cannot quantize the model as written (NotApplicable)
LSB1 = "lsb1"          # torch leaves a conv float inside a quantized graph: see below

_W2L = {"eager": NA, "qat_eager": NA, "fx": FLOAT_OUT, "qat": FLOAT_OUT, "dynamic": FLOAT_OUT}
_M5 = dict(_W2L)
_TCN = {"eager": NA, "qat_eager": NA, "qat": NA, "dynamic": FLOAT_OUT}
EXPECT = {
    "wav2letter_waveform": _W2L, "wav2letter_mfcc": _W2L,
    "m5_8000": _M5, "m5_16000": _M5,
    "ecg_resnet": {"eager": NA, "qat_eager": NA, "dynamic": FLOAT_OUT},
    "tcn": _TCN,
    "tcn_parametrized": dict(_TCN, fx=LSB1),
    "imu": {"dynamic": FLOAT_OUT},
    "autoencoder": {"dynamic": FLOAT_OUT},
}
# torch's reason, checked against its error message
NA_REASON = {
    "wav2letter_waveform": "_log_softmax", "wav2letter_mfcc": "_log_softmax",
    "m5_16000": "_log_softmax",
    "m5_8000": "Average Pooling",          # qnnpack's kernel-1 pool fails before log_softmax
    "ecg_resnet": "native_batch_norm",     # pre-activation BatchNorm1d on a quantized tensor
    # eager convert moves the WeightNorm pre-hook onto the quantized conv, which has no g / v
    ("tcn", "eager"): "weight_g", ("tcn", "qat_eager"): "weight_g",
    # hook-based weight_norm: its weight is a plain tensor, qat.Conv1d wants a Parameter
    ("tcn", "qat"): "Parameter",
    # parametrized convs: torch's from_float asserts the exact type Conv1d
    "tcn_parametrized": "ParametrizedConv1d",
}

def _pairs():
    for name, spec in F.SPECS.items():
        for fl in F.FLAVOURS:
            # every pair runs in CI (about 60 s here, Wav2Letter the largest part)
            yield pytest.param(name, fl, id=f"{name}-{fl}")


def _fresh_inputs(spec):
    return [F.inputs(s, 900 + k) for k, s in enumerate([spec.shape] + spec.other_shapes)]


def _op_rows(tm, qm, x):
    with _engine("qnnpack"):
        gm = _trace(_repack(tm, "qnnpack"))
        refused = {}
        vals = _run_nodes(gm, (x,), refused)
    return check_ops(qm, vals, (x,), refused)


@pytest.mark.parametrize("name,flavour", list(_pairs()))
def test_model_flavour(tmp_path, name, flavour):
    spec = F.SPECS[name]
    want_kind = EXPECT.get(name, {}).get(flavour, "exact")
    if want_kind == NA:
        why = NA_REASON.get((name, flavour), NA_REASON.get(name))
        with pytest.raises(F.NotApplicable, match=why):
            F.quantize(spec, flavour)
        return
    tm, ex = F.quantize(spec, flavour)
    path = tmp_path / f"{name}-{flavour}.bin"
    rep = qrt_export.export(tm, ex, path, **F.export_kwargs(flavour))
    assert all(r["ok"] or r["note"] for r in rep.ops)
    qm = qrt.load(path)
    if (name, flavour) == ("tcn", "fx"):
        _check_fx_weight_norm_weights(tm, qm)
    for k, x in enumerate(_fresh_inputs(spec)):
        got = qm(x.numpy())
        want = F.torch_run(tm, x)
        if want_kind == "exact":
            np.testing.assert_array_equal(got, want.numpy())
        elif want_kind == FLOAT_OUT:
            d, rel = F.float_err(got, want)
            assert rel <= E2E_RTOL, (d, rel)
        if want_kind == LSB1:
            # torch FX leaves ParametrizedConv1d float (its qconfig lookup does not see through
            # the parametrization) between dequantize and quantize: qrt's float conv is within
            # the float contract, and the quantize after it may round a value that lands within
            # an ulp of a rounding boundary the other way: at most 1 LSB, rarely.
            rows = _op_rows(tm, qm, x)
            for r in rows:
                assert r["ok"] or r.get("max_lsb", 0) <= 1 or "max_abs" in r, r
            lsb = qrt_export._export._output_lsb(qm, 0)
            assert np.abs(got - want.numpy()).max() <= lsb * 1.0001
            assert (got == want.numpy()).mean() >= 0.99
        elif k == 0:  # op by op on the first fresh input
            rows = _op_rows(tm, qm, x)
            bad = [r for r in rows if not (r["ok"] or r["note"])]
            assert not bad, bad[:3]


# ---- weight normalisation folded at export ---------------------------------------------------
def _check_fx_weight_norm_weights(tm, qm):
    """FX quantizes the hook-based weight-normed convs from their computed weight: the blob's
    qint8 weights are torch's converted ones."""
    got = _conv_weights(qm, "conv1d")
    want = [m.weight().int_repr().numpy() for m in tm.modules()
            if isinstance(m, torch.ao.nn.quantized.Conv1d)]
    assert len(got) == len(want) == 8
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.reshape(w.shape), w)


def _conv_weights(qm, kind):
    b = qm._blob
    return [np.array(b.tensors[op.params[0]].array) for op in b.ops if op.kind == kind]


def _torch_conv_weights(model):
    from torch.nn.utils.weight_norm import WeightNorm
    out = []
    for m in model.modules():
        if isinstance(m, torch.nn.Conv1d):
            hooks = [h for h in m._forward_pre_hooks.values() if isinstance(h, WeightNorm)]
            with torch.no_grad():
                w = torch._weight_norm(m.weight_v, m.weight_g, hooks[0].dim) if hooks \
                    else m.weight
            out.append(w.detach().numpy())
    return out


@pytest.mark.parametrize("parametrized", [False, True], ids=["weight_norm", "parametrizations"])
def test_weight_norm_folded_equals_torch_weight(tmp_path, parametrized):
    """The float convs of a TCN (keep_float) carry torch's computed g * v / ||v||, bit for bit,
    also after g changed without a forward (the hook-based weight_norm's ``m.weight`` attribute
    is then stale: the exporter recomputes it as torch's next call will)."""
    torch.manual_seed(0)
    model = F.SPECS["tcn_parametrized" if parametrized else "tcn"].build().eval()
    x = F.inputs((2, 3, 40), 1)
    with torch.no_grad():
        model(x)
        for m in model.modules():   # change every g after the last forward
            if hasattr(m, "weight_g"):
                m.weight_g.mul_(1.5)
            if hasattr(m, "parametrizations"):
                m.parametrizations.weight.original0.mul_(1.5)
    want = _torch_conv_weights(model)
    qrt_export.export(model, x, tmp_path / "tcn.bin", keep_float=True, verbose=False)
    got = _conv_weights(qrt.load(tmp_path / "tcn.bin"), "float_conv1d")
    assert len(got) == len(want) == 8   # 3 blocks x 2 weight-normed convs + 2 downsamples
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    qm = qrt.load(tmp_path / "tcn.bin")
    d, rel = F.float_err(qm(x.numpy()), F.torch_run(model, x))
    assert rel <= E2E_RTOL


def test_float_pools_match_torch(tmp_path):
    """max_pool1d / avg_pool1d / adaptive_avg_pool1d on float32 tensors (a quantize_dynamic
    model's pools): max exact, windowed averages exact (sequential float32 sum, one divide, as
    torch), adaptive to one output within the mean bound."""
    import torch.nn as nn

    class P(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.MaxPool1d(3, 2, padding=1, ceil_mode=True)
            self.b = nn.MaxPool1d(2, dilation=2)
            self.c = nn.AvgPool1d(3, 2, padding=1, ceil_mode=True, count_include_pad=False)
            self.d = nn.AvgPool1d(4, padding=2)
            self.e = nn.AdaptiveAvgPool1d(3)
            self.f = nn.AdaptiveAvgPool1d(1)
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return (self.a(x), self.b(x), self.c(x), self.d(x), self.e(x), self.f(x),
                    torch.nn.functional.avg_pool1d(x, x.shape[-1]), self.fc(x[:, :, :4]))

    m = torch.ao.quantization.quantize_dynamic(P().eval(), {nn.Linear}, dtype=torch.qint8)
    x = F.inputs((2, 5, 23), 3)
    x[0, 1, 4] = float("nan")
    qrt_export.export(m, x, tmp_path / "p.bin", verbose=False, check=False)
    qm = qrt.load(tmp_path / "p.bin")
    for xx in (x, F.inputs((3, 5, 40), 4)):
        got = qm(xx.numpy())
        want = F.torch_run(m, xx)
        for k, (g, w) in enumerate(zip(got[:7], want[:7])):
            w = w.numpy()
            if k == 5 or k == 6:
                assert np.allclose(g, w, rtol=0, atol=1e-6 * (np.nanmax(np.abs(w)) + 1),
                                   equal_nan=True)
            else:
                np.testing.assert_array_equal(g, w)


def test_inplace_relu_after_float_conv(tmp_path):
    """nn.ReLU(inplace=True) after a float conv (Wav2Letter's layers, quantize_dynamic): the
    export check compares the conv with torch's conv output, not the relu that overwrote it."""
    import torch.nn as nn
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv1d(2, 4, 3), nn.ReLU(inplace=True), nn.Conv1d(4, 4, 3),
                      nn.ReLU(inplace=True)).eval()
    x = F.inputs((1, 2, 24), 0)
    rep = qrt_export.export(m, x, tmp_path / "m.bin", keep_float=True, verbose=False)
    assert [r["op"] for r in rep.ops] == ["float_conv1d", "relu", "float_conv1d", "relu"]
    assert all(r["ok"] for r in rep.ops)


def test_cli_keep_float(tmp_path):
    """qrt-export --keep-float writes a float model (quantize_dynamic without nn.Linear) as
    float32 ops; without it the float model is refused (exit code 3)."""
    import subprocess
    import sys
    import torch.nn as nn
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv1d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool1d(2)).eval()
    torch.save(m, tmp_path / "m.pt")
    x = F.inputs((2, 2, 16), 0)
    np.save(tmp_path / "x.npy", x.numpy())
    cmd = [sys.executable, "-m", "qrt_export", str(tmp_path / "m.pt"), "--input",
           str(tmp_path / "x.npy"), "-o", str(tmp_path / "m.bin")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 3 and "--keep-float" in r.stderr, r.stderr
    r = subprocess.run(cmd + ["--keep-float"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    qm = qrt.load(tmp_path / "m.bin")
    assert [op.kind for op in qm._blob.ops] == ["float_conv1d", "relu", "max_pool1d"]
    d, rel = F.float_err(qm(x.numpy()), F.torch_run(m, x))
    assert rel <= E2E_RTOL

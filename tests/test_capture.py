# SPDX-License-Identifier: Apache-2.0
"""torch.export capture (issue #45, qrt_export/capture.py): models torch.fx cannot take export
through the same lowering rules, in every flavour users quantize them with; the graph glue
(shape checks, asserts, shape arithmetic, tensor factories, tuple / dict inputs and outputs)
never reaches the user; a capture that fails says what, where and what to change.

The published models (transformers, timm, torchaudio, torchvision) are in tests/test_zoo.py;
these are the mechanisms, on small models written the way such code is written."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import qrt  # noqa: E402
import qrt_export  # noqa: E402
from qrt_export import _export as E  # noqa: E402
from qrt_export.capture import capture  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=UserWarning)


class Checked(nn.Module):
    """Input checks torch.fx cannot trace (``if x.ndim != 3: raise``, an assert on a shape),
    a tuple state argument, a dict output, a tensor factory and shape arithmetic."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 16, 3, padding=1)
        self.lin = nn.Linear(16, 8)
        self.lstm = nn.LSTM(8, 8, batch_first=True)

    def forward(self, x, state):
        if x.ndim != 3:
            raise ValueError(f"expected (N, C, T), got {tuple(x.shape)}")
        assert x.shape[1] == 4, "4 channels"
        y = torch.relu(self.conv(x)).transpose(1, 2)
        y = self.lin(y)
        y, (h, c) = self.lstm(y, state)
        z = torch.cat([y, torch.zeros_like(y)], -1)
        n = z.shape[1] // 2
        return {"out": z[:, :n], "h": h, "c": c}


def _qnnpack(m, *args):
    with E._engine("qnnpack"), torch.no_grad():
        return E._repack(m, "qnnpack")(*args)


def test_dynamic_model_torch_fx_cannot_trace(tmp_path):
    """quantize_dynamic of a model with shape checks and a tuple state: captured with
    torch.export (the report says why), every op on torch's inputs within the contract, the
    dict output and the (h, c) input flattened in pytree order, outputs equal to torch."""
    torch.manual_seed(0)
    m = torch.ao.quantization.quantize_dynamic(Checked().eval(), {nn.Linear, nn.LSTM},
                                               dtype=torch.qint8)
    x = torch.randn(2, 4, 20)
    state = (torch.randn(1, 2, 8) * 0.1, torch.randn(1, 2, 8) * 0.1)
    rep = qrt_export.export(m, (x, state), tmp_path / "m.bin", verbose=False)
    assert "captured with torch.export" in rep.model_kind, rep.model_kind
    assert rep.ops and all(r["ok"] for r in rep.ops)
    qm = qrt.load(tmp_path / "m.bin")
    assert len(qm.graph.inputs) == 3 and len(qm.graph.outputs) == 3
    y = qm.flat(x.numpy(), state[0].numpy(), state[1].numpy())
    t = _qnnpack(m, x, state)
    d = qm(x.numpy(), (state[0].numpy(), state[1].numpy()))   # forward()'s own structure
    assert isinstance(d, dict) and list(d) == ["out", "h", "c"]
    assert [s.name for s in qm.outputs] == ["out", "h", "c"]
    assert [s.name for s in qm.inputs] == ["x", "state_0", "state_1"]
    assert np.array_equal(d["h"], y[1])
    for a, b in zip(y, (t["out"], t["h"], t["c"])):
        assert a.shape == tuple(b.shape)
        assert np.abs(a - b.numpy()).max() <= 1e-5 * (np.abs(b.numpy()).max() + 1)


def test_forced_capture_equals_fx(tmp_path):
    """A model both paths take: the same ops and the same integers."""
    from torch.ao.quantization import QuantStub, DeQuantStub, convert, get_default_qconfig
    from torch.ao.quantization import prepare

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.dq = QuantStub(), DeQuantStub()
            self.c1 = nn.Conv1d(3, 8, 5, padding=2)
            self.c2 = nn.Conv1d(8, 8, 3, padding=1)
            self.f = torch.ao.nn.quantized.FloatFunctional()
            self.fc = nn.Linear(8, 4)

        def forward(self, x):
            x = self.q(x)
            a = torch.relu(self.c1(x))
            b = self.f.add_relu(a, self.c2(a))
            b = F.adaptive_avg_pool1d(b, 1).flatten(1)
            return self.dq(self.fc(b))
    with E._engine("qnnpack"):
        n = Net().eval()
        n.qconfig = get_default_qconfig("qnnpack")
        p = prepare(n)
        for _ in range(4):
            p(torch.randn(4, 3, 32))
        qm = convert(p)
    x = torch.randn(3, 3, 32)
    r_fx = qrt_export.export(qm, x, tmp_path / "fx.bin", verbose=False, capture="fx")
    r_ex = qrt_export.export(qm, x, tmp_path / "ex.bin", verbose=False, capture="export")
    assert "captured with torch.export" in r_ex.model_kind
    for r in (r_fx, r_ex):
        assert r.agreement["qnnpack"]["exact"] == r.agreement["qnnpack"]["total"] > 0
    kinds = [[n.kind for n in qrt.load(p).graph.nodes if n.kind != "identity"]
             for p in (tmp_path / "fx.bin", tmp_path / "ex.bin")]
    assert kinds[0] == kinds[1], kinds
    assert np.array_equal(qrt.load(tmp_path / "fx.bin")(x.numpy()),
                          qrt.load(tmp_path / "ex.bin")(x.numpy()))


class Branchy(nn.Module):
    """Shape-dependent control flow (as ConvTasNet's input checks): float model."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(1, 8, 9, padding=4)
        self.prelu = nn.PReLU()
        self.dec = nn.ConvTranspose1d(8, 1, 4, stride=2, padding=1)

    def forward(self, x):
        if x.dim() == 2:
            x = x.unsqueeze(1)
        if x.shape[-1] % 2:
            raise ValueError("even lengths only")
        y = self.prelu(self.c1(x))
        return self.dec(F.max_pool1d(y, 2))


def test_float_model_calibrated_through_capture(tmp_path):
    """--calibrate on a float model torch.fx cannot trace: torch.ao FX quantizes the graph
    torch.export captured (calibration in batches of the example's size); a transposed conv
    takes per-tensor weights, one-slope PReLU a table; the integers equal torch's."""
    torch.manual_seed(1)
    m = Branchy().eval()
    x = torch.randn(2, 1, 64)
    calib = [torch.randn(7, 1, 64) for _ in range(3)]   # 7: not a multiple of the batch 2
    rep = qrt_export.export(m, x, tmp_path / "m.bin", verbose=False, calibration_data=calib)
    assert "torch.export captured" in rep.model_kind, rep.model_kind
    assert all(r["ok"] for r in rep.ops)
    kinds = {n.kind for n in qrt.load(tmp_path / "m.bin").graph.nodes}
    assert {"conv1d", "lut", "conv_transpose1d"} <= kinds, kinds
    a = rep.agreement["qnnpack"]
    assert a["exact"] == a["total"] > 0 or a["float"]["max_abs"] == 0, a


def test_capture_failure_names_construct_line_and_route(tmp_path):
    class Data(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv1d(2, 4, 3)

        def forward(self, x):
            y = self.c(x)
            if y.sum() > 0:
                return y * 2
            return y
    with pytest.raises(qrt_export.UnsupportedError) as ei:
        qrt_export.export(Data().eval(), torch.randn(1, 2, 16), tmp_path / "m.bin",
                          verbose=False, keep_float=True)
    msg = str(ei.value)
    assert "torch.fx" in msg and "torch.export could not capture" in msg, msg
    assert "a tensor's values" in msg and "torch.where" in msg, msg
    assert "if y.sum() > 0:" in msg and "test_capture.py" in msg, msg


def test_zero_channel_pad_shortcut_fx_static(tmp_path):
    """cat([x, torch.zeros_like(x)], 1) (ECG ResNets' widened shortcut) through torch.fx
    static quantization: a zero pad with the same codes."""
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv1d(8, 16, 3, padding=1)
            self.pool = nn.MaxPool1d(2)
            self.c2 = nn.Conv1d(16, 16, 3, stride=2, padding=1)

        def forward(self, x):
            sc = self.pool(x)
            sc = torch.cat([sc, torch.zeros_like(sc)], 1)
            return torch.relu(self.c2(torch.relu(self.c(x))) + sc)
    torch.manual_seed(2)
    m = Block().eval()
    rep = qrt_export.export(m, torch.randn(2, 8, 32), tmp_path / "m.bin", verbose=False,
                            calibration_data=[torch.randn(8, 8, 32) for _ in range(3)])
    assert "captured" not in rep.model_kind   # torch.fx's own path
    assert rep.agreement["qnnpack"]["exact"] == rep.agreement["qnnpack"]["total"] > 0
    assert "pad" in [n.kind for n in qrt.load(tmp_path / "m.bin").graph.nodes]


def test_interpolate_size_from_shapes_folds_and_from_values_is_refused(tmp_path):
    class Seg(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 4, 3, stride=4, padding=1)

        def forward(self, x):
            return F.interpolate(self.c(x), size=x.shape[-2:], mode="bilinear",
                                 align_corners=False)
    torch.manual_seed(3)
    rep = qrt_export.export(Seg().eval(), torch.randn(1, 3, 32, 32), tmp_path / "m.bin",
                            verbose=False, calibration_data=[torch.randn(2, 3, 32, 32)])
    assert rep.agreement["qnnpack"]["exact"] == rep.agreement["qnnpack"]["total"] > 0
    gm = E._trace(Seg().eval())
    node = next(n for n in gm.graph.nodes if n.op == "call_function" and
                n.target is F.interpolate)
    assert E._from_shapes(node.kwargs["size"], {})

    def from_values(x):
        return x.sum().item() + x.shape[-1]
    gm = torch.fx.symbolic_trace(from_values)
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    assert not E._from_shapes(out, {})   # .item(): a tensor's values, never folded


def test_capture_rewrite_is_run_on_real_quantized_tensors():
    """The capture's opaque leaves run the real modules: the rewritten graph gives torch's
    own integers for an eager quantized model with a QFunctional add."""
    from torch.ao.quantization import QuantStub, convert, get_default_qconfig, prepare

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = QuantStub()
            self.c = nn.Conv1d(2, 2, 3, padding=1)
            self.f = torch.ao.nn.quantized.FloatFunctional()

        def forward(self, x):
            x = self.q(x)
            return self.f.add(self.c(x), x)
    with E._engine("qnnpack"):
        n = Net().eval()
        n.qconfig = get_default_qconfig("qnnpack")
        p = prepare(n)
        p(torch.randn(4, 2, 16))
        qm = convert(p)
        x = torch.randn(2, 2, 16)
        gm, flat = capture(qm, (x,))
        with torch.no_grad():
            a, b = gm(*flat)[0], qm(x)
    assert torch.equal(a.int_repr(), b.int_repr())
    assert any(n.target is torch.ops.quantized.add for n in gm.graph.nodes)


def test_bert_dynamic_padding_masks_at_run_time(tmp_path):
    """PyTorch's BERT dynamic-quantization tutorial model (transformers' own class, tiny
    config): torch.fx cannot trace it; captured, its attention_mask input becomes the additive
    mask of its attention (padding_mask op), and other padding patterns at run time give
    torch's logits."""
    from _torch_models import torchvision
    torchvision()      # transformers imports torchvision, whose compiled ops do not load here
    tf = pytest.importorskip("transformers")
    cfg = tf.BertConfig(vocab_size=500, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64,
                        max_position_embeddings=32, num_labels=3)
    torch.manual_seed(0)
    m = tf.BertForSequenceClassification(cfg).eval()
    qm = torch.ao.quantization.quantize_dynamic(m, {nn.Linear}, dtype=torch.qint8)
    ids = torch.randint(0, 500, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.int64)
    mask[1, 7:] = 0
    tt = torch.zeros(2, 12, dtype=torch.int64)
    tt[:, 6:] = 1
    rep = qrt_export.export(qm, (ids, mask, tt), tmp_path / "m.bin", verbose=False)
    assert "captured with torch.export" in rep.model_kind and all(r["ok"] for r in rep.ops)
    q = qrt.load(tmp_path / "m.bin")
    assert "padding_mask" in [n.kind for n in q.graph.nodes]
    for pad in ([12, 12], [3, 9], [1, 12]):
        mk = torch.zeros(2, 12, dtype=torch.int64)
        for r, n in enumerate(pad):
            mk[r, :n] = 1
        t = _qnnpack(qm, ids, mk, tt).logits.numpy()
        y = q(ids.numpy(), mk.numpy(), tt.numpy())["logits"]   # HF's output, by name
        assert np.abs(y - t).max() <= 1e-4 * (np.abs(t).max() + 1e-3), (pad, y, t)


def test_capture_releases_its_leaves():
    """The opaque leaves (and the modules they hold) live only while one capture runs."""
    from qrt_export import capture as C
    m = torch.ao.quantization.quantize_dynamic(Checked().eval(), {nn.Linear, nn.LSTM},
                                               dtype=torch.qint8)
    x = torch.randn(2, 4, 20)
    state = (torch.zeros(1, 2, 8), torch.zeros(1, 2, 8))
    first = len(C._LEAVES)
    gm, flat = capture(m, (x, state))
    assert len(C._LEAVES) > first and all(v is None for v in C._LEAVES[first:])
    assert not any(k[0] >= first for k in C._META)
    with torch.no_grad():
        gm(*flat)      # the rewritten graph calls the modules, not the leaves

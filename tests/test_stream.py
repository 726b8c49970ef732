# SPDX-License-Identifier: Apache-2.0
"""Issue 46: streaming inference. For any chunking, the concatenated outputs of ``s(chunk)`` and
``s.flush()`` equal ``model(whole)`` bit for bit (quantized outputs and float ops computed in
the same order); bad chunks leave the state unchanged; what cannot stream is refused by name."""

import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from torch import nn  # noqa: E402

import _flavours as F  # noqa: E402
from _torch_models import sequence_models  # noqa: E402
import qrt  # noqa: E402
import qrt_export  # noqa: E402
from test_models_1d import fx_quantize  # noqa: E402


class Gated(nn.Module):
    """WaveNet-style: causal dilated convs (left padding only), tanh * sigmoid gate, residual
    add of branches with different delays, a 'same' padded conv (lookahead), strided tail."""

    def __init__(self, c=8):
        super().__init__()
        self.inp = nn.Conv1d(2, c, 1)
        self.f = nn.ModuleList([nn.Conv1d(c, c, 2, dilation=d) for d in (1, 2, 4)])
        self.g = nn.ModuleList([nn.Conv1d(c, c, 2, dilation=d) for d in (1, 2, 4)])
        self.pads = [d for d in (1, 2, 4)]
        self.same = nn.Conv1d(c, c, 5, padding=2)
        self.down = nn.Conv1d(c, 4, 3, stride=2, padding=1)
        self.pool = nn.MaxPool1d(3, stride=2, padding=1)
        self.avg = nn.AvgPool1d(3, stride=1, padding=1)

    def forward(self, x):
        x = self.inp(x)
        for f, g, p in zip(self.f, self.g, self.pads):
            y = torch.tanh(f(x)) * torch.sigmoid(g(x))
            x = x[:, :, p:] + y            # residual of a shorter branch: aligned
        x = torch.relu(self.same(x))
        return self.avg(self.pool(self.down(x)))


class GRUTagger(nn.Module):
    """Conv front end, a 2-layer GRU over time (float in FX static), per-frame Linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(8, 16, 3, padding=1)
        self.gru = nn.GRU(16, 24, num_layers=2, batch_first=True)
        self.fc = nn.Linear(24, 5)

    def forward(self, x):                   # x: [N, C, T]
        y, _ = self.gru(torch.relu(self.conv(x)).transpose(1, 2))
        return self.fc(y)


def _tc_resnet8():
    import _pt2e
    return _pt2e.TCResNet8()


def _export(tmp, name, build, shape):
    torch.manual_seed(0)
    tm, ex = fx_quantize(build(), shape)
    path = tmp / f"{name}.bin"
    qrt_export.export(tm, ex, path, verbose=False)
    return qrt.load(path)


MODELS = {
    "tcn": (F.SPECS["tcn"].build, (2, 3, 40)),
    "ecg_resnet": (F.SPECS["ecg_resnet"].build, (2, 1, 128)),
    "imu": (F.SPECS["imu"].build, (2, 64, 6)),
    "autoencoder": (F.SPECS["autoencoder"].build, (2, 1, 64)),
    "m5_16000": (F.SPECS["m5_16000"].build, (1, 1, 16000)),
    "gated": (Gated, (2, 2, 64)),
    "kws_lstm": (sequence_models().KWS, (2, 30, 40)),   # [N, T, C]: float LSTM, y[:, -1]
    "gru_tagger": (GRUTagger, (2, 8, 30)),
    "tc_resnet8": (_tc_resnet8, (2, 40, 64)),
    "wav2letter_mfcc": (F.SPECS["wav2letter_mfcc"].build, (1, 13, 24)),   # + log_softmax
}
LENGTHS = {"m5_16000": 16000}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stream")
    return {k: _export(tmp, k, b, s) for k, (b, s) in MODELS.items()}


def _signal(m, s, L, batch=2, seed=0):
    shp = [batch if d is None else d for d in m.inputs[0].shape]
    shp[s.time_axis] = L
    return np.random.default_rng(seed).standard_normal(shp).astype(np.float32)


def _streamed(s, x, cuts):
    ax = s.time_axis
    outs = [s(np.take(x, range(a, b), axis=ax)) for a, b in zip([0] + cuts, cuts + [x.shape[ax]])]
    outs.append(s.flush())
    return outs


def _joined(m, s, outs):
    oax = s.sched.axes[m.graph.outputs[0]]
    if oax is None:          # a value over time (global pool): the last one is the offline one
        return outs[-1]
    return np.concatenate(outs, axis=oax)


def _check(m, x, cuts):
    s = m.stream()
    got = _joined(m, s, _streamed(s, x, cuts))
    want = m(x)
    assert got.shape == want.shape
    if m.graph.tensors[m.graph.outputs[0]].qscheme == "none" and \
            m.graph.nodes[-1].kind.startswith("float_"):
        np.testing.assert_array_equal(got, want)   # same float ops in the same order
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(MODELS))
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_chunking_equals_offline(models, name, data):
    m = models[name]
    s = m.stream()
    L = LENGTHS.get(name, data.draw(st.integers(60, 300), "L"))
    x = _signal(m, s, L, seed=data.draw(st.integers(0, 1000), "seed"))
    k = data.draw(st.integers(0, min(12, L - 1)), "cuts")
    cuts = sorted(set(data.draw(st.lists(st.integers(1, L - 1), min_size=k, max_size=k))))
    _check(m, x, cuts)


@pytest.mark.parametrize("name", sorted(set(MODELS) - {"m5_16000"}))
def test_every_length_near_the_strides(models, name):
    """Lengths 40..71: every remainder of the strides (ceil_mode windows, strided 1x1
    shortcuts that skip frames, odd lengths into global pools)."""
    m = models[name]
    rng = np.random.default_rng(7)
    for L in range(40, 72):
        x = _signal(m, m.stream(), L, seed=L)
        cuts = sorted(set(rng.integers(1, L, 3).tolist()))
        _check(m, x, cuts)


@pytest.mark.parametrize("name", ["tcn", "gated", "autoencoder", "kws_lstm", "tc_resnet8",
                                  "wav2letter_mfcc"])
def test_one_frame_at_a_time(models, name):
    m = models[name]
    s = m.stream()
    x = _signal(m, s, 70)
    _check(m, x, list(range(1, 70)))


def test_latency_and_causality(models):
    tcn = models["tcn"].stream()
    assert tcn.latency == 0
    x = _signal(models["tcn"], tcn, 50)
    want = models["tcn"](x)
    got = tcn(x[:, :, :20])           # causal: every input frame gives its output frame now
    np.testing.assert_array_equal(got, want[:, :, :20])
    assert models["gated"].stream().latency > 0
    assert models["ecg_resnet"].stream().latency > 0


def test_global_pool_is_the_pool_over_what_was_seen(models):
    m = models["imu"]
    s = m.stream()
    x = _signal(m, s, 128)
    a = s(x[:, :64])
    assert a is not None and a.shape == m(x).shape
    np.testing.assert_array_equal(_joined(m, s, [s(x[:, 64:]), s.flush()]), m(x))


def test_independent_streams_in_threads(models):
    m = models["gated"]
    xs = [_signal(m, m.stream(), 200, seed=k) for k in range(4)]
    want = [m(x) for x in xs]
    got = [None] * 4

    def work(k):
        s = m.stream()
        rng = np.random.default_rng(k)
        cuts = sorted(set(rng.integers(1, 200, 15).tolist()))
        got[k] = _joined(m, s, _streamed(s, xs[k], cuts))
    th = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_bad_chunk_leaves_state_unchanged(models):
    m = models["tcn"]
    s = m.stream()
    x = _signal(m, s, 60)
    outs = [s(x[:, :, :20])]
    with pytest.raises(ValueError, match="expected a float32"):
        s(x[:, :, 20:30].astype(np.float64))
    with pytest.raises(ValueError, match="expected shape"):
        s(np.zeros((2, 4, 10), np.float32))          # wrong channel count
    with pytest.raises(ValueError, match="expected shape"):
        s(np.zeros((3, 3, 10), np.float32))          # another batch size mid-stream
    with pytest.raises(ValueError, match="expected a float32"):
        s([[0.0]])
    outs += [s(x[:, :, 20:]), s.flush()]
    np.testing.assert_array_equal(np.concatenate(outs, axis=2), m(x))
    with pytest.raises(ValueError, match="flushed"):
        s(x)
    s.reset()
    np.testing.assert_array_equal(np.concatenate([s(x), s.flush()], axis=2), m(x))


def test_empty_output_and_reset(models):
    m = models["gated"]
    s = m.stream()
    x = _signal(m, s, 80)
    y = s(x[:, :, :1])                               # the receptive field is not filled yet
    assert y.shape[2] == 0 and y.shape[:2] == m(x).shape[:2]
    assert s.state_nbytes > 0 and s.scratch_nbytes > 0


class _GroupNormMid(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv1d(2, 4, 3)
        self.gn = nn.GroupNorm(2, 4)

    def forward(self, x):
        return self.gn(self.c(x))


def test_refuses_what_needs_the_whole_sequence(tmp_path):
    class SE(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv1d(2, 4, 3)
            self.p = nn.AdaptiveAvgPool1d(1)

        def forward(self, x):
            y = self.c(x)
            return y * self.p(y)
    m = _export(tmp_path, "se", SE, (2, 2, 32))
    with pytest.raises(ValueError, match="cannot stream op .* mul .*whole sequence"):
        m.stream()
    torch.manual_seed(0)
    dm = torch.ao.quantization.quantize_dynamic(sequence_models().KWS().eval(),
                                                {nn.LSTM, nn.Linear}, dtype=torch.qint8)
    qrt_export.export(dm, (torch.randn(2, 30, 40),), tmp_path / "dyn.bin", verbose=False)
    with pytest.raises(ValueError, match="rnn_dynamic .*min/max over the whole sequence"):
        qrt.load(tmp_path / "dyn.bin").stream()
    class FrameLinear(nn.Module):
        def __init__(self):
            super().__init__()
            self.c, self.fc = nn.Conv1d(2, 8, 3), nn.Linear(8, 4)

        def forward(self, x):
            return self.fc(self.c(x).transpose(1, 2))
    dm = torch.ao.quantization.quantize_dynamic(FrameLinear().eval(), {nn.Linear},
                                                dtype=torch.qint8)
    qrt_export.export(dm, (torch.randn(2, 2, 32),), tmp_path / "fl.bin", keep_float=True,
                      verbose=False)
    with pytest.raises(ValueError, match="linear_dynamic .*min/max over every frame"):
        qrt.load(tmp_path / "fl.bin").stream()
    m = _export(tmp_path, "gn", _GroupNormMid, (2, 2, 32))
    with pytest.raises(ValueError, match="cannot stream op .*group_norm.*whole sequence"):
        m.stream()


def test_cli_stream_and_inspect(models, tmp_path, capsys):
    from qrt.__main__ import main
    m = models["tcn"]
    x = _signal(m, m.stream(), 500, batch=1)
    np.save(tmp_path / "long.npy", x)
    path = m.path
    assert main(["stream", path, "--input", str(tmp_path / "long.npy"), "--chunk", "160",
                 "-o", str(tmp_path / "y.npy")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), m(x))
    assert main(["inspect", path]) == 0
    out = capsys.readouterr().out
    assert "streaming (time axis 2 of the input): latency 0 input frames" in out
    assert main(["stream", path, "--input", str(tmp_path / "long.npy"), "--chunk", "0"]) == 2


@pytest.mark.parametrize("name", ["tcn", "autoencoder", "imu", "ecg_resnet"])
def test_float_models_within_the_float_bound(tmp_path, name):
    """quantize_dynamic leaves these models float (float_conv1d, float_conv_transpose1d, a
    float global average): BLAS sums a convolution in an order that depends on the number of
    frames, and the float global pool is a float64 running sum: streamed outputs agree within
    1e-6 x max|offline| (docs/streaming.md)."""
    tm, ex = F.quantize(F.SPECS[name], "dynamic")
    qrt_export.export(tm, ex, tmp_path / "f.bin", **F.export_kwargs("dynamic"))
    m = qrt.load(tmp_path / "f.bin")
    rng = np.random.default_rng(3)
    for L in (64, 77, 128):
        s = m.stream()
        x = _signal(m, s, L, seed=L)
        cuts = sorted(set(rng.integers(1, L, 5).tolist()))
        got, want = _joined(m, s, _streamed(s, x, cuts)), m(x)
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max()


def test_state_bound_refused_before_any_state(models, monkeypatch):
    import qrt.stream as S
    m = models["tc_resnet8"]
    s = m.stream()
    x = _signal(m, s, 64)
    monkeypatch.setattr(S, "MAX_STATE_BYTES", 100)
    with pytest.raises(ValueError, match="bytes of state"):
        s(x)
    assert s.state_nbytes == 0
    monkeypatch.undo()
    _check(m, x, [5, 30])
    np.testing.assert_array_equal(_joined(m, s, [s(x), s.flush()]), m(x))


def test_silero_style_vad_carries_its_lstm_state(tmp_path):
    """forward(x, h, c) (FX static: a float LSTM whose initial state is a model input): the
    stream takes the signal only, starts (h, c) at zeros and carries them; after any chunking
    (prob, h, c) equal model(whole, 0, 0)."""
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(0)
    z = torch.zeros(1, 1, 32)
    ex = (torch.randn(1, 1, 480), z, z)
    p = prepare_fx(sequence_models().VAD().eval(), get_default_qconfig_mapping("qnnpack"), ex)
    with torch.no_grad():
        for _ in range(3):
            p(torch.randn(1, 1, 480), z, z)
    qrt_export.export(convert_fx(p), ex, tmp_path / "vad.bin", verbose=False)
    m = qrt.load(tmp_path / "vad.bin")
    x = np.random.default_rng(0).standard_normal((1, 1, 4800)).astype(np.float32)
    want = m(x, z.numpy(), z.numpy())
    rng = np.random.default_rng(1)
    for cuts in ([480 * k for k in range(1, 10)], sorted(set(rng.integers(1, 4800, 9)))):
        s = m.stream()
        assert s.latency == 0
        outs = _streamed(s, x, list(cuts))
        for got, w in zip(outs[-1], want):
            np.testing.assert_array_equal(got, w)


def _geometries():
    out = []
    for k, s, d in [(1, 1, 1), (3, 1, 1), (3, 2, 1), (5, 3, 2), (4, 4, 1), (2, 3, 1), (7, 2, 3),
                    (1, 3, 1)]:
        span = d * (k - 1) + 1
        out += [("conv", k, s, d, p, 0) for p in sorted({0, span // 2, span - 1})]
    for k, s, d in [(3, 2, 1), (4, 2, 1), (5, 3, 2), (2, 2, 1), (3, 1, 1), (1, 2, 1), (4, 3, 1)]:
        for p in sorted({0, 1, d * (k - 1) // 2}):
            out += [("tconv", k, s, d, p, op) for op in sorted({0, max(0, min(s, d) - 1)})]
    for k, s, p, ceil in [(3, 2, 1, True), (2, 2, 0, True), (3, 3, 1, False), (5, 2, 2, True),
                          (2, 3, 0, True), (3, 1, 1, False)]:
        out += [("max", k, s, 1, p, ceil), ("avg", k, s, 1, p, False)]
    return out


class _One(nn.Module):
    def __init__(self, kind, k, s, d, p, extra):
        super().__init__()
        if kind == "conv":
            self.m = nn.Conv1d(3, 4, k, stride=s, dilation=d, padding=p)
        elif kind == "tconv":
            self.m = nn.ConvTranspose1d(3, 4, k, stride=s, dilation=d, padding=p,
                                        output_padding=extra)
        elif kind == "max":
            self.m = nn.MaxPool1d(k, s, p, ceil_mode=extra)
        else:
            self.m = nn.AvgPool1d(k, s, p)

    def forward(self, x):
        return self.m(x)


@pytest.mark.parametrize("geo", _geometries(), ids=lambda g: "-".join(map(str, g)))
def test_every_geometry(tmp_path, geo):
    """conv1d / conv_transpose1d / max_pool1d / avg_pool1d of many kernels, strides,
    dilations, paddings, output paddings and ceil modes (kernels shorter than the stride
    included): random cuts and one frame at a time equal the offline run."""
    m = _export(tmp_path, "one", lambda: _One(*geo), (2, 3, 40))
    rng = np.random.default_rng(0)
    for L in range(12, 40, 3):
        x = _signal(m, m.stream(), L, seed=L)
        try:
            m(x)
        except ValueError:               # too short for this geometry offline
            continue
        _check(m, x, sorted(set(rng.integers(1, L, 3).tolist())))
        _check(m, x, list(range(1, L)))


def test_warm_up_buffers_are_freed(models):
    """Bindings a stream has not used between two sweeps (every 64 calls: a long first
    chunk's shapes) are dropped; the results stay exact."""
    m = models["tcn"]
    s = m.stream()
    x = _signal(m, s, 450, batch=1)
    outs = [s(x[:, :, :300])]
    big = s.scratch_nbytes
    outs += [s(x[:, :, k:k + 1]) for k in range(300, 450)]   # two sweeps
    assert s.scratch_nbytes < big / 4
    outs.append(s.flush())
    np.testing.assert_array_equal(np.concatenate(outs, axis=2), m(x))

# SPDX-License-Identifier: Apache-2.0
"""rnn_dynamic: torch's dynamic-quantized LSTM / GRU / cells, exported and compared with torch
(qnnpack), the C step loop and the numpy one, state in and out, hostile inputs.

Contract (docs/float-ops.md "Recurrent layers"): the integer part (activation qparams, int32
accumulators) is torch's given the same float input; the gates are float32 within a few ulp
per step. A step where those ulp move one quantized code of h adds at most a fraction of the
hidden state's quantization step, which then decays: long sequences are checked against that.
"""

import zlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import qrt  # noqa: E402
import qrt_export  # noqa: E402
from qrt import _conv1d  # noqa: E402
from qrt.ops import ShapeError  # noqa: E402
from qrt.ops import rnn as R  # noqa: E402
from qrt.quantization import choose_qparams  # noqa: E402
from _torch_models import sequence_models  # noqa: E402

SHORT = 1e-6      # |qrt - torch| on short sequences (values <= 1: a few ulp per step)
LONG = 2e-3       # over 1000 steps (a flipped code of h, decayed)


@pytest.fixture(autouse=True)
def _qnnpack():
    torch.backends.quantized.engine = "qnnpack"


@pytest.fixture(params=[False, True], ids=["c_loop", "numpy_loop"])
def loop(request, monkeypatch):
    monkeypatch.setattr(R, "_USE_NUMPY_LOOP", request.param)
    return request.param


class Wrap(torch.nn.Module):
    """Calls one recurrent module on x (zero initial state), returns what it returns."""

    def __init__(self, mod, n_state=0):
        super().__init__()
        self.r = mod

    def forward(self, x):
        return self.r(x)


class WrapState(torch.nn.Module):
    def __init__(self, mod):
        super().__init__()
        self.r = mod

    def forward(self, x, h):
        return self.r(x, h)


class WrapLSTMState(torch.nn.Module):
    def __init__(self, mod):
        super().__init__()
        self.r = mod

    def forward(self, x, h, c):
        return self.r(x, (h, c))


def dyn(mod):
    types = {type(mod)}
    return torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(mod).eval(), types,
                                                  dtype=torch.qint8)[0]


def flat(v):
    if isinstance(v, (tuple, list)):
        return [x for item in v for x in flat(item)]
    return [v.detach().numpy()]


def run_both(tmp_path, wrapper, inputs, name="m", example=None):
    path = tmp_path / f"{name}.bin"
    qrt_export.export(wrapper, tuple(example or inputs), path, verbose=False, check=False)
    m = qrt.load(path)
    got = list(m.flat(*[x.numpy() for x in inputs]))   # (y, (h, c)) flattened
    with torch.no_grad():
        want = flat(wrapper(*inputs))
    assert len(got) == len(want)
    return m, got, want


def maxdiff(got, want):
    return max(float(np.abs(g.astype(np.float64) - w).max()) for g, w in zip(got, want))


# torch refuses bias=False: from_float asserts bias, and quantized_lstm "requires biases"
CASES = [  # mode, input, hidden, layers, bidirectional, batch_first, bias, T, B
    ("lstm", 5, 7, 1, False, False, True, 6, 3),
    ("lstm", 3, 1, 2, True, True, True, 4, 2),        # hidden 1
    ("lstm", 17, 33, 2, False, True, True, 1, 1),     # sequence 1
    ("lstm", 8, 16, 3, True, False, True, 9, 4),
    ("gru", 5, 7, 1, False, False, True, 6, 3),
    ("gru", 4, 1, 2, True, True, True, 5, 2),
    ("gru", 12, 40, 2, True, False, True, 11, 1),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_rnn_modules_match_torch(tmp_path, loop, case):
    mode, i, h, layers, bi, bf, bias, t, b = case
    # a fixed seed per case (hash() of a str is salted per process): a seed whose float ulps
    # flip one code of a step's quantized h is off by up to ~1e-3 instead (docs/float-ops.md)
    torch.manual_seed(zlib.crc32(repr(case).encode()) % 1000)
    cls = torch.nn.LSTM if mode == "lstm" else torch.nn.GRU
    mod = dyn(cls(i, h, num_layers=layers, bidirectional=bi, batch_first=bf, bias=bias))
    x = torch.randn((b, t, i) if bf else (t, b, i))
    _, got, want = run_both(tmp_path, Wrap(mod, 0), [x])
    assert maxdiff(got, want) <= SHORT
    # state carried in, final state out
    d = 2 if bi else 1
    h0 = torch.randn(layers * d, b, h)
    if mode == "lstm":
        c0 = torch.randn(layers * d, b, h)
        _, got, want = run_both(tmp_path, WrapLSTMState(mod), [x, h0, c0], "s")
    else:
        _, got, want = run_both(tmp_path, WrapState(mod), [x, h0], "s")
    assert maxdiff(got, want) <= SHORT


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("i,h,b,bias", [(5, 7, 3, True), (1, 1, 1, True), (20, 33, 2, True)])
def test_rnn_cells_match_torch(tmp_path, kind, i, h, b, bias):
    # (torch's dynamic cells require bias=True: from_float asserts it)
    torch.manual_seed(i * 100 + h)
    if kind == "lstm":
        cell = torch.nn.LSTMCell(i, h, bias=bias)
    elif kind == "gru":
        cell = torch.nn.GRUCell(i, h, bias=bias)
    else:
        cell = torch.nn.RNNCell(i, h, bias=bias, nonlinearity=kind[4:])
    mod = dyn(cell)
    x = torch.randn(b, i)
    _, got, want = run_both(tmp_path, Wrap(mod, 0), [x])
    assert maxdiff(got, want) <= SHORT
    hx = torch.randn(b, h)
    if kind == "lstm":
        _, got, want = run_both(tmp_path, WrapLSTMState(mod), [x, hx, torch.randn(b, h)], "s")
    else:
        _, got, want = run_both(tmp_path, WrapState(mod), [x, hx], "s")
    assert maxdiff(got, want) <= SHORT


def test_state_carried_across_calls_equals_one_long_call(tmp_path):
    """Silero-style streaming: (y, (h, c)) of one chunk fed to the next equals torch's."""
    torch.manual_seed(3)
    mod = dyn(torch.nn.LSTM(6, 10, num_layers=2, batch_first=True))
    w = WrapLSTMState(mod)
    x = torch.randn(1, 4, 6)
    h, c = torch.zeros(2, 1, 10), torch.zeros(2, 1, 10)
    path = tmp_path / "s.bin"
    qrt_export.export(w, (x, h, c), path, verbose=False, check=False)
    m = qrt.load(path)
    qh, qc = h.numpy(), c.numpy()
    th, tc = h, c
    for k in range(25):
        xk = torch.randn(1, 4, 6) * (1 + k % 3)
        y, (qh, qc) = m(xk.numpy(), qh, qc)   # flat inputs; (y, (h, c)) as forward() returns
        with torch.no_grad():
            ty, (th, tc) = w(xk, th, tc)
        assert max(np.abs(y - ty.numpy()).max(), np.abs(qh - th.numpy()).max(),
                   np.abs(qc - tc.numpy()).max()) <= 1e-5


@pytest.mark.parametrize("kind", ["lstm", "gru"])
@pytest.mark.parametrize("scale", [1.0, 50.0], ids=["random", "saturated"])
def test_long_sequences_stay_within_bound(tmp_path, kind, scale):
    torch.manual_seed(7)
    cls = torch.nn.LSTM if kind == "lstm" else torch.nn.GRU
    mod = dyn(cls(12, 32))
    x = torch.randn(1000, 1, 12) * scale
    _, got, want = run_both(tmp_path, Wrap(mod, 0), [x], example=[x[:3]])
    d = np.abs(got[0].astype(np.float64) - want[0])
    assert d[:10].max() <= SHORT
    assert d.max() <= LONG


def test_choose_qparams_c_equals_python(rng):
    vals = [0.0, 1e-30, -1e-30, 1e-8, 6.1e-5, 1.5e-2, 0.5, 1.0, 3.0, 1e6, 3e38]
    pairs = [(a, b) for a in vals for b in vals] + [(-a, b) for a in vals for b in vals]
    pairs += [tuple(sorted(rng.standard_normal(2) * 10 ** rng.uniform(-8, 8)))
              for _ in range(2000)]
    for lo, hi in pairs:
        lo, hi = float(np.float32(min(lo, hi))), float(np.float32(max(lo, hi)))
        assert _conv1d.choose_qparams_u8(lo, hi) == choose_qparams(lo, hi, 0, 255, False), \
            (lo, hi)


def test_first_step_integer_part_is_torch(tmp_path, loop):
    """One step from a given state: torch's qparams and accumulators; only the gates' float
    functions differ (a few ulp)."""
    torch.manual_seed(11)
    mod = dyn(torch.nn.LSTMCell(9, 13))
    x, hx, cx = torch.randn(4, 9), torch.randn(4, 13) * 3, torch.randn(4, 13)
    _, got, want = run_both(tmp_path, WrapLSTMState(mod), [x, hx, cx])
    for g, w in zip(got, want):  # 4 ulp(max(|t|, 1)): c' = f*c + i*g may cancel to ~0
        ulp = np.abs(g.astype(np.float64) - w) / np.spacing(np.maximum(np.abs(w), 1)
                                                             .astype(np.float32))
        assert ulp.max() <= 4


# ---- hostile inputs ----------------------------------------------------------------------------
def _state_model(tmp_path):
    torch.manual_seed(0)
    mod = dyn(torch.nn.LSTM(4, 5, num_layers=2))
    w = WrapLSTMState(mod)
    x, h, c = torch.randn(3, 2, 4), torch.zeros(2, 2, 5), torch.zeros(2, 2, 5)
    path = tmp_path / "s.bin"
    qrt_export.export(w, (x, h, c), path, verbose=False, check=False)
    return qrt.load(path), x.numpy(), h.numpy(), c.numpy()


def test_wrong_state_shape_names_the_input(tmp_path):
    m, x, h, c = _state_model(tmp_path)
    with pytest.raises(ValueError, match="h"):
        m(x, np.zeros((2, 2, 6), np.float32), c)
    with pytest.raises(ValueError, match="c"):
        m(x, h, np.zeros((1, 2, 5), np.float32))
    with pytest.raises(TypeError):
        m(x, h)


def test_wrong_state_shape_at_the_op_names_h0(tmp_path):
    m, x, h, c = _state_model(tmp_path)
    node = m.graph.nodes[0]
    with pytest.raises(ShapeError, match="h0"):
        node.op.infer(node, [x.shape, (2, 2, 6), c.shape])


def test_nan_input_is_a_value_error(tmp_path):
    m, x, h, c = _state_model(tmp_path)
    bad = x.copy()
    bad[1, 0, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        m(bad, h, c)
    hb = h.copy()
    hb[0, 1, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        m(x, hb, c)
    m(x, h, c)  # the model still runs


def test_param_count_and_shapes_are_checked():
    from qrt.ops import BY_NAME
    d = BY_NAME["rnn_dynamic"]
    with pytest.raises(Exception, match="8 constant parameters"):
        d.name_params([object()] * 7, lambda msg: ValueError(msg))


def test_rnn_run_checks_its_buffers():
    import qrt.nn as nn
    m = nn.DynamicLinear(3, 12, bias=True)
    m._install_raw(np.ones((12, 3, 1), np.int8), np.full(12, 0.01), np.zeros(12, np.int32),
                   np.zeros(12, np.float32), "per_tensor_affine")
    g = R._Gemm(m, 2, "t")
    h = np.zeros(6, np.float32)
    c = np.zeros(6, np.float32)
    gh = np.zeros(24, np.float32)
    gi = np.zeros(5 * 24, np.float32)
    _conv1d.rnn_run(g.plan, 0, 4, g.ws, g.rs, gi, 0, 24, 12, None, 0, 0, 0, h, c, gh, g.xq1, 5,
                    False)
    with pytest.raises(ValueError, match="gi"):
        _conv1d.rnn_run(g.plan, 0, 4, g.ws, g.rs, gi, 0, 24, 12, None, 0, 0, 0, h, c, gh,
                        g.xq1, 6, False)
    with pytest.raises(ValueError, match="y"):
        _conv1d.rnn_run(g.plan, 0, 4, g.ws, g.rs, gi, 0, 24, 12, np.zeros(10, np.float32), 0,
                        3, 3, h, c, gh, g.xq1, 5, False)
    with pytest.raises(ValueError):
        _conv1d.rnn_run(g.plan, 1, 4, g.ws, g.rs, gi, 0, 24, 12, None, 0, 0, 0, h, c, gh,
                        g.xq1, 5, False)   # GRU has 3 gates, not 4
    with pytest.raises(ValueError):
        _conv1d.rnn_run(g.plan, 0, 4, g.ws, np.zeros(12, np.float32), gi, 0, 24, 12, None, 0,
                        0, 0, h, c, gh, g.xq1, 5, False)   # not the plan's scale buffer


@pytest.mark.parametrize("mode,gates", [(0, 4), (1, 3), (2, 1), (3, 1)])
@pytest.mark.parametrize("hidden,batch", [(1, 1), (7, 3), (64, 2), (130, 1)])
def test_loop_gemv_equals_the_linear_kernel(rng, mode, gates, hidden, batch):
    """The step loop's own GEMV (the default) == the conv/linear kernel, bit for bit, with
    per-channel weights and nonzero weight zero points."""
    import qrt.nn as nn
    gh_n = gates * hidden
    m = nn.DynamicLinear(hidden, gh_n, bias=True)
    m._install_raw(rng.integers(-128, 128, (gh_n, hidden, 1), dtype=np.int8),
                   rng.uniform(1e-3, 2e-2, gh_n), rng.integers(-20, 20, gh_n).astype(np.int32),
                   rng.standard_normal(gh_n).astype(np.float32), "per_channel_affine")
    steps = 9
    gi = rng.standard_normal(steps * batch * gh_n).astype(np.float32)
    outs = []
    for gemv in (True, False):
        g = R._Gemm(m, batch, "t")
        h = (rng.standard_normal(batch * hidden) * 0).astype(np.float32) + 0.3
        c = np.full(batch * hidden, -0.2, np.float32)
        y = np.zeros(steps * batch * hidden, np.float32)
        _conv1d.rnn_run(g.plan, mode, gates, g.ws, g.rs, gi, 0, batch * gh_n, gh_n, y, 0,
                        batch * hidden, hidden, h, c, np.empty(batch * gh_n, np.float32),
                        g.xq1, steps, False, gemv)
        outs.append((y, h, c))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


# ---- the models, end to end (export with the op-by-op check, then compare) ----------
KWS, VAD = sequence_models().KWS, sequence_models().VAD


class GRUClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(40, 128, batch_first=True)
        self.fc = torch.nn.Linear(128, 10)

    def forward(self, x):
        _, h = self.gru(x)
        return self.fc(h[0])


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(32, 48, batch_first=True, bidirectional=True)
        self.fc = torch.nn.Linear(96, 9)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y)


@pytest.mark.parametrize("cls,shape", [(KWS, (2, 30, 40)), (GRUClassifier, (3, 25, 40)),
                                       (Tagger, (2, 15, 32))], ids=["kws", "gru", "tagger"])
def test_models_end_to_end(tmp_path, cls, shape):
    torch.manual_seed(5)
    fm = cls().eval()
    dm = torch.ao.quantization.quantize_dynamic(
        fm, {torch.nn.LSTM, torch.nn.GRU, torch.nn.Linear}, dtype=torch.qint8)
    x = torch.randn(*shape)
    rep = qrt_export.export(dm, (x,), tmp_path / "m.bin", verbose=False)
    assert rep.agreement["qnnpack"]["max_lsb"] <= SHORT
    m = qrt.load(tmp_path / "m.bin")
    for b, t in ((1, shape[1]), (shape[0], 2 * shape[1])):  # other batch and length
        xi = torch.randn(b, t, shape[2])
        with torch.no_grad():
            want = dm(xi).numpy()
        assert np.abs(m(xi.numpy()) - want).max() <= SHORT


def test_silero_style_streaming_end_to_end(tmp_path):
    torch.manual_seed(6)
    fm = VAD().eval()
    dm = torch.ao.quantization.quantize_dynamic(fm, {torch.nn.LSTM, torch.nn.Linear},
                                                dtype=torch.qint8)
    x, h, c = torch.randn(1, 1, 480), torch.zeros(1, 1, 32), torch.zeros(1, 1, 32)
    qrt_export.export(dm, (x, h, c), tmp_path / "vad.bin", verbose=False)
    m = qrt.load(tmp_path / "vad.bin")
    qh, qc, th, tc = h.numpy(), c.numpy(), h, c
    for _ in range(20):  # 20 chunks of 30 ms, state carried by the caller
        xk = torch.randn(1, 1, 480)
        p, qh, qc = m(xk.numpy(), qh, qc)
        with torch.no_grad():
            tp, th, tc = dm(xk, th, tc)
        assert np.abs(p - tp.numpy()).max() <= 1e-5
        assert np.abs(qh - th.numpy()).max() <= 1e-5 and np.abs(qc - tc.numpy()).max() <= 1e-5

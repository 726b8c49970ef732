"""rnn_float: torch's float32 LSTM (proj_size) / GRU / RNN / cells, exported and compared with
torch, the reference dot product against the SIMD one, state in and out, NaN, hostile calls.

Contract (docs/float-ops.md "Float recurrent layers"): one step from the same state is within
4 ulp(max(|t|, 1)) + eps * S of torch's t, S the largest sum of |weight * operand| (+ |bias|)
of a gate row, eps = 2^-23; the gates are contractive, so over 1000 steps the outputs (h, at
most 1 in magnitude) stay within LONG of torch's.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import qrt  # noqa: E402
import qrt_export  # noqa: E402
from qrt import _ops  # noqa: E402
from qrt.ops import BY_NAME, ShapeError  # noqa: E402
from qrt.ops import rnn_float as RF  # noqa: E402
from _torch_models import sequence_models  # noqa: E402

nn = torch.nn
EPS = 2.0 ** -23
SHORT = 1e-6     # |qrt - torch| on short sequences, inputs ~N(0, 1)
LONG = 1e-5      # over 1000 steps, random and 50x-saturated inputs (measured <= 1.6e-6)


@pytest.fixture(params=[-1, pytest.param(0, marks=pytest.mark.slow)], ids=["best", "ref"])
def variant(request, monkeypatch):
    monkeypatch.setattr(RF, "_VARIANT", request.param)
    return request.param


class Wrap(nn.Module):
    def __init__(self, mod):
        super().__init__()
        self.r = mod

    def forward(self, x):
        return self.r(x)


class WrapState(nn.Module):
    def __init__(self, mod):
        super().__init__()
        self.r = mod

    def forward(self, x, h):
        return self.r(x, h)


class WrapLSTMState(nn.Module):
    def __init__(self, mod):
        super().__init__()
        self.r = mod

    def forward(self, x, h, c):
        return self.r(x, (h, c))


def flat(v):
    if isinstance(v, (tuple, list)):
        return [x for item in v for x in flat(item)]
    return [v.detach().numpy() if hasattr(v, "detach") else v]


def run_both(tmp_path, w, inputs, example=None):
    path = tmp_path / "m.bin"
    qrt_export.export(w, tuple(example or inputs), path, verbose=False, keep_float=True,
                      check=False)
    m = qrt.load(path)
    with torch.no_grad():
        want = flat(w(*inputs))
    got = flat(m(*[x.numpy() for x in inputs]))
    assert [g.shape for g in got] == [t.shape for t in want]
    return m, got, want


MODULES = [
    ("lstm", lambda: nn.LSTM(12, 20)),
    ("lstm_2l_bi_bf", lambda: nn.LSTM(12, 20, num_layers=2, bidirectional=True,
                                      batch_first=True)),
    ("lstm_proj", lambda: nn.LSTM(12, 20, num_layers=2, bidirectional=True, proj_size=7)),
    ("lstm_nobias", lambda: nn.LSTM(12, 9, bias=False)),
    ("gru_2l_bi", lambda: nn.GRU(12, 20, num_layers=2, bidirectional=True)),
    ("gru_bf_nobias", lambda: nn.GRU(12, 17, batch_first=True, bias=False)),
    ("rnn_tanh_3l", lambda: nn.RNN(12, 20, num_layers=3)),
    ("rnn_relu_bi", lambda: nn.RNN(12, 20, nonlinearity="relu", bidirectional=True)),
]


@pytest.mark.parametrize("name,make", MODULES, ids=[n for n, _ in MODULES])
def test_modules_match_torch(tmp_path, variant, name, make):
    torch.manual_seed(3)
    mod = make().eval()
    x = torch.randn(3, 6, 12) if mod.batch_first else torch.randn(6, 3, 12)
    m, got, want = run_both(tmp_path, Wrap(mod), [x])
    for g, t in zip(got, want):
        assert np.abs(g - t).max() <= SHORT
    # another batch and length through the same file
    x2 = torch.randn(1, 11, 12) if mod.batch_first else torch.randn(11, 1, 12)
    with torch.no_grad():
        want2 = flat(Wrap(mod)(x2))
    for g, t in zip(flat(m(x2.numpy())), want2):
        assert np.abs(g - t).max() <= SHORT


@pytest.mark.parametrize("name,make", MODULES[:5] + MODULES[6:7], ids=[
    n for n, _ in MODULES[:5] + MODULES[6:7]])
def test_initial_state_in_final_state_out(tmp_path, name, make):
    torch.manual_seed(4)
    mod = make().eval()
    d = 2 if mod.bidirectional else 1
    r = getattr(mod, "proj_size", 0) or mod.hidden_size
    x = torch.randn(3, 5, 12) if mod.batch_first else torch.randn(5, 3, 12)
    h = torch.randn(mod.num_layers * d, 3, r).clamp(-1, 1)
    if isinstance(mod, nn.LSTM):
        c = torch.randn(mod.num_layers * d, 3, mod.hidden_size)
        _, got, want = run_both(tmp_path, WrapLSTMState(mod), [x, h, c])
    else:
        _, got, want = run_both(tmp_path, WrapState(mod), [x, h])
    for g, t in zip(got, want):
        assert np.abs(g - t).max() <= 4 * SHORT


def _step_bound(mod, x, h, want):
    """4 ulp(max(|t|, 1)) + eps * S per batch row (S: the largest |w|.|operand| + |b| sum)."""
    s = x.abs() @ mod.weight_ih.abs().T + h.abs() @ mod.weight_hh.abs().T
    if mod.bias:
        s = s + mod.bias_ih.abs() + mod.bias_hh.abs()
    s = s.detach().numpy().max(1, keepdims=True)
    return 4 * np.spacing(np.maximum(np.abs(want), 1).astype(np.float32)) + EPS * s


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("scale", [1.0, 11.0, 1000.0], ids=["random", "x11", "saturated"])
@pytest.mark.parametrize("bias", [True, False])
def test_one_step_within_the_stated_bound(tmp_path, kind, scale, bias):
    torch.manual_seed(2)
    if kind == "lstm":
        mod = nn.LSTMCell(40, 64, bias=bias)
    elif kind == "gru":
        mod = nn.GRUCell(40, 64, bias=bias)
    else:
        mod = nn.RNNCell(40, 64, bias=bias, nonlinearity=kind[4:])
    mod.eval()
    x, h = torch.randn(8, 40) * scale, torch.randn(8, 64).clamp(-1, 1)
    if kind == "lstm":
        c = torch.randn(8, 64) * 3
        _, got, want = run_both(tmp_path, WrapLSTMState(mod), [x, h, c])
    else:
        _, got, want = run_both(tmp_path, WrapState(mod), [x, h])
    for g, t in zip(got, want):
        assert (np.abs(g.astype(np.float64) - t) <= _step_bound(mod, x, h, t)).all()


@pytest.mark.parametrize("kind,scale", [
    ("lstm", 50.0), ("gru", 50.0),
    pytest.param("lstm", 1.0, marks=pytest.mark.slow),
    pytest.param("gru", 1.0, marks=pytest.mark.slow),
    pytest.param("rnn_tanh", 1.0, marks=pytest.mark.slow),
    pytest.param("rnn_tanh", 50.0, marks=pytest.mark.slow),
    pytest.param("lstm_proj", 1.0, marks=pytest.mark.slow),
    pytest.param("lstm_proj", 50.0, marks=pytest.mark.slow)])
def test_1000_steps_stay_within_bound(tmp_path, kind, scale):
    torch.manual_seed(1)
    mod = {"lstm": lambda: nn.LSTM(40, 64, num_layers=2),
           "gru": lambda: nn.GRU(40, 64, num_layers=2),
           "rnn_tanh": lambda: nn.RNN(40, 64, num_layers=2),
           "lstm_proj": lambda: nn.LSTM(40, 64, num_layers=2, proj_size=32)}[kind]().eval()
    x = torch.randn(1000, 2, 40) * scale
    _, got, want = run_both(tmp_path, Wrap(mod), [x], example=[x[:5]])
    d = np.abs(got[0].astype(np.float64) - want[0])
    assert d[:10].max() <= 10 * SHORT
    assert d.max() <= LONG


def test_state_carried_across_calls_equals_one_long_call(tmp_path):
    torch.manual_seed(8)
    mod = nn.GRU(6, 10, batch_first=True).eval()
    path = tmp_path / "g.bin"
    x, h = torch.randn(2, 4, 6), torch.zeros(1, 2, 10)
    qrt_export.export(WrapState(mod), (x, h), path, verbose=False, keep_float=True)
    m = qrt.load(path)
    long_x = np.random.default_rng(0).standard_normal((2, 40, 6)).astype(np.float32)
    y_all, h_all = m(long_x, h.numpy())
    hs, ys = h.numpy(), []
    for k in range(0, 40, 4):
        y, hs = m(long_x[:, k:k + 4], hs)
        ys.append(y)
    assert np.array_equal(np.concatenate(ys, 1), y_all) and np.array_equal(hs, h_all)


def test_nan_and_infinity_propagate_as_torch(tmp_path):
    torch.manual_seed(9)
    mod = nn.LSTM(5, 8).eval()
    x = torch.randn(6, 2, 5)
    m, _, _ = run_both(tmp_path, Wrap(mod), [x])
    bad = x.clone()
    bad[2, 0, 1] = float("nan")
    bad[1, 1, 3] = float("inf")
    with torch.no_grad():
        want = flat(mod(bad))
    got = flat(m(bad.numpy()))
    for g, t in zip(got, want):
        assert np.array_equal(np.isnan(g), np.isnan(t))
        ok = ~np.isnan(t)
        assert np.abs(g[ok] - t[ok]).max() <= SHORT


def test_simd_dot_is_the_reference_bit_for_bit():
    rng = np.random.default_rng(0)
    for k in (1, 3, 7, 8, 9, 16, 40, 63, 64, 65, 130):
        for n in (1, 3, 4, 5, 8, 13, 256):
            x = rng.standard_normal((3, k)).astype(np.float32) * 10 ** rng.uniform(-3, 3)
            w = rng.standard_normal((n, k)).astype(np.float32)
            x[0, ::3] = -0.0
            b = rng.standard_normal(n).astype(np.float32)
            for bias in (b, None):
                y0, y1 = np.empty((3, n), np.float32), np.empty((3, n), np.float32)
                wp = RF.pack(w)
                _ops.linear_f32(x, wp, n, bias, y0, 0)
                _ops.linear_f32(x, wp, n, bias, y1, -1)
                assert np.array_equal(y0.view(np.int32), y1.view(np.int32)), (k, n)
                want = x.astype(np.float64) @ w.T.astype(np.float64) + \
                    (0 if bias is None else b)
                tol = k * EPS * (np.abs(x) @ np.abs(w).T + np.abs(b))
                assert (np.abs(y0 - want) <= tol).all()


WHOLE = MODULES[1:3] + MODULES[4:5] + MODULES[6:8] + [
    ("gru_h13", lambda: nn.GRU(12, 13, batch_first=True))]


@pytest.mark.parametrize("name,make", WHOLE, ids=[n for n, _ in WHOLE])
def test_whole_op_simd_equals_reference(tmp_path, monkeypatch, name, make):
    """The SIMD GEMV and gates (AVX2 intrinsics) == the reference build, bit for bit, on
    random, 1000x-saturated and NaN / inf inputs."""
    torch.manual_seed(5)
    mod = make().eval()
    x = torch.randn(4, 9, 12)
    path = tmp_path / "m.bin"
    qrt_export.export(Wrap(mod), (x,), path, verbose=False, keep_float=True, check=False)
    xs = [x.numpy(), x.numpy() * 1000]
    bad = x.numpy().copy()
    bad[1, 2, 3], bad[2, 5, 0], bad[3, 1, 1] = np.nan, np.inf, -np.inf
    xs.append(bad)
    outs = []
    for v in (0, -1):
        monkeypatch.setattr(RF, "_VARIANT", v)
        m = qrt.load(path)
        outs.append([o for xi in xs for o in flat(m(xi))])
    for a, b in zip(*outs):
        assert np.array_equal(a.view(np.int32), b.view(np.int32))


# ---- models ------------------------------------------------------------------------------------
KWS, VAD = sequence_models().KWS, sequence_models().VAD


def test_float_lstm_in_a_dynamic_linear_model(tmp_path):
    """quantize_dynamic({nn.Linear}) leaves the LSTM float: rnn_float + linear_dynamic."""
    torch.manual_seed(5)
    fm = KWS().eval()
    dm = torch.ao.quantization.quantize_dynamic(fm, {nn.Linear}, dtype=torch.qint8)
    x = torch.randn(2, 30, 40)
    qrt_export.export(dm, (x,), tmp_path / "m.bin", verbose=False)
    m = qrt.load(tmp_path / "m.bin")
    assert [n.op.name for n in m.graph.nodes][0] == "rnn_float"
    with torch.no_grad():
        want = dm(x).numpy()
        y = fm.lstm(x)[0][:, -1]
    # the float LSTM's ulp may move the dynamic linear's min/max, so its qparams, and then
    # every code of its input by one: at most s_x * sum |w| per output
    s_x = float(y.max().clamp(min=0) - y.min().clamp(max=0)) / 255
    w_sum = float(fm.fc.weight.detach().abs().sum(1).max())
    assert np.abs(m(x.numpy()) - want).max() <= s_x * w_sum


def test_float_lstm_behind_static_quantized_convs(tmp_path):
    torch.manual_seed(6)
    fm = VAD().eval()
    x, h, c = torch.randn(1, 1, 480), torch.zeros(1, 1, 32), torch.zeros(1, 1, 32)
    calib = [(torch.randn(1, 1, 480), h, c) for _ in range(8)]
    qrt_export.export(fm, (x, h, c), tmp_path / "vad.bin", verbose=False,
                      calibration_data=calib)
    m = qrt.load(tmp_path / "vad.bin")
    assert "rnn_float" in [n.op.name for n in m.graph.nodes]
    qh, qc = h.numpy(), c.numpy()
    for _ in range(5):  # streaming: the state is carried by the caller
        xk = torch.randn(1, 1, 480)
        p, qh2, qc2 = m(xk.numpy(), qh, qc)
        assert p.shape == (1, 1) and qh2.shape == (1, 1, 32) and np.isfinite(qh2).all()
        qh, qc = qh2, qc2


# ---- hostile -----------------------------------------------------------------------------------
def test_wrong_state_shape_names_the_input(tmp_path):
    torch.manual_seed(0)
    mod = nn.LSTM(4, 5, num_layers=2, proj_size=3).eval()
    x, h, c = torch.randn(3, 2, 4), torch.zeros(2, 2, 3), torch.zeros(2, 2, 5)
    m, _, _ = run_both(tmp_path, WrapLSTMState(mod), [x, h, c])
    with pytest.raises(ValueError, match="h"):
        m(x.numpy(), np.zeros((2, 2, 5), np.float32), c.numpy())
    node = m.graph.nodes[0]
    with pytest.raises(ShapeError, match="c0"):
        node.op.infer(node, [x.shape, h.shape, (2, 2, 3)])


def test_param_count_is_checked():
    d = BY_NAME["rnn_float"]
    with pytest.raises(Exception, match="constant parameters"):
        d.name_params([], lambda msg: ValueError(msg))


def test_unbatched_input_is_refused_with_a_reason(tmp_path):
    mod = nn.GRU(4, 5).eval()
    with pytest.raises(Exception, match="unbatched"):
        qrt_export.export(Wrap(mod), (torch.randn(3, 4),), tmp_path / "u.bin", verbose=False,
                          keep_float=True)


def test_rnn_float_run_checks_its_buffers():
    w_hh, b_hh = RF.pack(np.zeros((8, 2), np.float32)), np.zeros(8, np.float32)
    h, c, gh = np.zeros(6, np.float32), np.zeros(6, np.float32), np.zeros(24, np.float32)
    gi = np.zeros(5 * 24, np.float32)
    # LSTM, B=3, H=2: 4 steps fit, 6 do not
    _ops.rnn_float_run(0, 3, 2, 0, w_hh, b_hh, None, gi, 0, 24, 8, None, 0, 0, 0, h, c, gh,
                       None, 5, False)
    with pytest.raises(ValueError, match="gi"):
        _ops.rnn_float_run(0, 3, 2, 0, w_hh, b_hh, None, gi, 0, 24, 8, None, 0, 0, 0, h, c,
                           gh, None, 6, False)
    with pytest.raises(ValueError, match="y"):
        _ops.rnn_float_run(0, 3, 2, 0, w_hh, b_hh, None, gi, 0, 24, 8,
                           np.zeros(10, np.float32), 0, 6, 2, h, c, gh, None, 5, False)
    with pytest.raises(ValueError):
        _ops.rnn_float_run(1, 3, 2, 0, w_hh, b_hh, None, gi, 0, 24, 8, None, 0, 0, 0, h, c,
                           gh, None, 5, False)   # GRU: w_hh must be [6, 2]
    with pytest.raises(ValueError):
        _ops.rnn_float_run(0, 3, 2, 1, w_hh, b_hh, None, gi, 0, 24, 8, None, 0, 0, 0, h, c,
                           gh, None, 5, False)   # projection without w_hr
    with pytest.raises(ValueError, match="linear_f32"):
        _ops.linear_f32(np.zeros((2, 3), np.float32), RF.pack(np.zeros((4, 2), np.float32)),
                        4, None, np.zeros((2, 4), np.float32))


def _rnn_blob(path, w_hh_shape=(16, 4), n_params=4, attrs=None, dtype=np.float32):
    from qrt_export import BlobBuilder
    b = BlobBuilder()
    x = b.activation("x", "float32", (5, 2, 3))
    y = b.activation("y", "float32", (5, 2, 4))
    hn = b.activation("hn", "float32", (1, 2, 4))
    cn = b.activation("cn", "float32", (1, 2, 4))
    arrays = [np.zeros((16, 3), dtype), np.zeros(16, dtype), np.zeros(w_hh_shape, dtype),
              np.zeros(16, dtype), np.zeros((2, 4), dtype)][:n_params]
    ps = [b.constant(f"p{k}", a) for k, a in enumerate(arrays)]
    b.op("rnn_float", "lstm", [x], [y, hn, cn], ps,
         dict({"mode": "lstm", "hidden_size": 4}, **(attrs or {})))
    b.inputs, b.outputs = [x], [y, hn, cn]
    b.write(path)
    return path


@pytest.mark.parametrize("kw,match", [
    ({"w_hh_shape": (16, 5)}, "w_hh"),
    ({"n_params": 3}, "constant parameters"),
    ({"n_params": 5}, "constant parameters"),
    ({"attrs": {"proj_size": 4}}, "proj_size"),
    ({"attrs": {"mode": "gru"}}, "outputs"),
    ({"attrs": {"num_layers": 2}}, "constant parameters"),
    ({"attrs": {"cell": True}}, "cell|outputs"),
    ({"dtype": np.float64}, "float32"),
])
def test_hostile_files_are_format_errors(tmp_path, kw, match):
    m = qrt.load(_rnn_blob(tmp_path / "ok.bin"))   # the well-formed file loads and runs
    assert m(np.ones((5, 2, 3), np.float32))[0].shape == (5, 2, 4)
    with pytest.raises(qrt.FormatError, match=match):
        qrt.load(_rnn_blob(tmp_path / "bad.bin", **kw))


def test_neon_gemv_is_the_reference_under_qemu(tmp_path):
    """tests/c/rnn_float_harness.c cross-compiled for aarch64 (qemu-aarch64, a Pi 4's
    Cortex-A72): the NEON panels == qrt_linear_f32_ref bit for bit, canaries intact."""
    import os
    import shutil
    import subprocess
    if os.environ.get("QRT_UNDER_QEMU"):
        pytest.skip("a host-side cross check; it runs in the x86-64 suite")
    cc = "aarch64-linux-gnu-gcc"
    if not shutil.which(cc) or not shutil.which("qemu-aarch64"):
        pytest.skip(f"needs {cc} and qemu-aarch64")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    (tmp_path / "math.h").write_text("#define fmaf __builtin_fmaf\n")
    (tmp_path / "string.h").write_text(
        "#include <stddef.h>\nvoid *memcpy(void *, const void *, size_t);\n"
        "void *memset(void *, int, size_t);\nint memcmp(const void *, const void *, size_t);\n")
    exe = tmp_path / "rnn_float_harness"
    r = subprocess.run([cc, "-std=c11", "-O3", "-ffp-contract=off", "-ffreestanding",
                        "-nostdlib", "-static", "-fno-stack-protector", "-Wall", "-Wextra",
                        "-Werror", "-I", os.path.join(root, "include"), "-I", str(tmp_path),
                        os.path.join(root, "tests", "c", "rnn_float_harness.c"), "-o",
                        str(exe), "-lgcc"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = subprocess.run(["qemu-aarch64", "-cpu", "cortex-a72", str(exe)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("ok "), (out.stdout, out.stderr)

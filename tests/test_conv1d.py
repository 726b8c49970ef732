# SPDX-License-Identifier: Apache-2.0
"""conv1d: NumPy oracle == C reference == dispatched variant (== torch qnnpack when installed)."""

import json
import pathlib
import warnings

import numpy as np
import pytest

import oracle
import qrt
from qrt import _conv1d

DATA = pathlib.Path(__file__).parent / "data"


# ---- helpers ------------------------------------------------------------------------------------
def random_cfg(rng, ties=False, big=False):
    """A random conv1d configuration (dict of plain values and arrays)."""
    kind = rng.integers(0, 4)
    if kind == 0:  # depthwise, with channel multiplier
        g = int(rng.integers(1, 17))
        cg, og = 1, int(rng.integers(1, 4))
    elif kind == 1:  # grouped
        g = int(rng.integers(2, 5))
        cg, og = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    else:
        g = 1
        cg = int(rng.integers(1, 70 if big else 20))
        og = int(rng.integers(1, 40 if big else 20))
    k = int(rng.integers(1, 10))
    s = int(rng.integers(1, 4))
    d = int(rng.integers(1, 4))
    span = d * (k - 1) + 1
    pl = int(rng.integers(0, 5))
    pr = pl if rng.random() < 0.8 else int(rng.integers(0, 5))
    length = int(rng.integers(max(1, span - pl - pr), span + (200 if big else 60)))
    n = int(rng.integers(1, 3))
    c_in, c_out = cg * g, og * g
    x = rng.integers(0, 256, size=(n, c_in, length), dtype=np.uint8)
    w = rng.integers(-128, 128, size=(c_out, cg, k), dtype=np.int8)
    per_channel = bool(rng.random() < 0.5)
    sym = bool(rng.random() < 0.6)
    if ties:  # powers of two everywhere: requant scales are exact powers of two -> .5 ties
        x_scale = 2.0 ** -int(rng.integers(3, 8))
        ws = 2.0 ** -rng.integers(5, 10, size=c_out if per_channel else 1).astype(np.float64)
        out_scale = 2.0 ** -int(rng.integers(0, 5))
    else:
        x_scale = float(rng.uniform(0.005, 0.1))
        ws = rng.uniform(0.001, 0.03, size=c_out if per_channel else 1)
        out_scale = float(rng.uniform(0.02, 2.0))
    wz = (np.zeros_like(ws, dtype=np.int64) if sym else
          rng.integers(-30, 31, size=ws.shape).astype(np.int64))
    if rng.random() < 0.7:
        if ties:  # biases on half-multiples of the bias scale
            bias = ((rng.integers(-2000, 2000, size=c_out) + 0.5) *
                    (ws * x_scale)).astype(np.float32)
        else:
            bias = (rng.standard_normal(c_out) * 3).astype(np.float32)
    else:
        bias = None
    return dict(n=n, c_in=c_in, c_out=c_out, length=length, k=k, stride=s, dilation=d,
                pad_left=pl, pad_right=pr, groups=g, x=x, x_scale=x_scale,
                x_zp=int(rng.integers(0, 256)), w=w, w_scales=ws, w_zps=wz,
                per_channel=per_channel, bias=bias, out_scale=out_scale,
                out_zp=int(rng.integers(0, 256)), relu=bool(rng.random() < 0.3))


def qweight(c):
    if c["per_channel"]:
        return qrt.from_int_repr_per_channel(c["w"], c["w_scales"], c["w_zps"], 0)
    return qrt.from_int_repr(c["w"], float(c["w_scales"][0]), int(c["w_zps"][0]))


def layer(c, variant=-1):
    cls = qrt.nn.ConvReLU1d if c["relu"] else qrt.nn.Conv1d
    m = cls(c["c_in"], c["c_out"], c["k"], c["stride"], (c["pad_left"], c["pad_right"]),
            c["dilation"], c["groups"])
    m.scale, m.zero_point = c["out_scale"], c["out_zp"]
    m.set_weight_bias(qweight(c), c["bias"])
    m._variant = variant
    return m


def expected(c):
    return oracle.conv1d(c["x"], c["x_scale"], c["x_zp"], c["w"], c["w_scales"], c["w_zps"],
                         c["bias"], c["out_scale"], c["out_zp"], c["stride"], c["pad_left"],
                         c["pad_right"], c["dilation"], c["groups"], c["relu"])


def three_way(c):
    """Oracle == reference == dispatched; returns the result."""
    want = expected(c)
    x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
    for variant in (0, -1):
        got = layer(c, variant)(x).int_repr()
        np.testing.assert_array_equal(got, want, err_msg=f"variant {variant}: {cfg_str(c)}")
    return want


def cfg_str(c):
    return {k: v for k, v in c.items() if not isinstance(v, np.ndarray)}


def torch_conv(torch, c):
    """torch qnnpack result for c (symmetric padding only: torch pads both sides alike)."""
    torch.backends.quantized.engine = "qnnpack"
    x = torch._make_per_tensor_quantized_tensor(torch.from_numpy(c["x"]), c["x_scale"], c["x_zp"])
    if c["per_channel"]:
        w = torch._make_per_channel_quantized_tensor(
            torch.from_numpy(c["w"]), torch.from_numpy(np.asarray(c["w_scales"], np.float64)),
            torch.from_numpy(np.asarray(c["w_zps"], np.int64)), 0)
    else:
        w = torch._make_per_tensor_quantized_tensor(torch.from_numpy(c["w"]),
                                                    float(c["w_scales"][0]), int(c["w_zps"][0]))
    b = None if c["bias"] is None else torch.from_numpy(c["bias"])
    pk = torch.ops.quantized.conv1d_prepack(w, b, [c["stride"]], [c["pad_left"]],
                                            [c["dilation"]], c["groups"])
    op = torch.ops.quantized.conv1d_relu if c["relu"] else torch.ops.quantized.conv1d
    return op(x, pk, c["out_scale"], c["out_zp"]).int_repr().numpy()


@pytest.fixture(scope="module")
def torch_mod():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    return torch


# ---- random three-way ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_conv1d_random_three_way(seed):
    rng = np.random.default_rng(1000 + seed)
    for _ in range(60):
        three_way(random_cfg(rng, big=seed == 3))


@pytest.mark.parametrize("seed", range(2))
def test_conv1d_ties_three_way(seed):
    rng = np.random.default_rng(2000 + seed)
    for _ in range(60):
        three_way(random_cfg(rng, ties=True))


@pytest.mark.parametrize("ties", [False, True])
def test_conv1d_matches_torch_qnnpack(torch_mod, ties):
    rng = np.random.default_rng(3000 + ties)
    for _ in range(80):
        c = random_cfg(rng, ties=ties)
        c["pad_right"] = c["pad_left"]
        if (c["length"] + 2 * c["pad_left"] - c["dilation"] * (c["k"] - 1) - 1) < 0:
            continue
        got = three_way(c)
        np.testing.assert_array_equal(got, torch_conv(torch_mod, c), err_msg=str(cfg_str(c)))


@pytest.mark.slow
def test_conv1d_matches_torch_qnnpack_large_run(torch_mod):
    rng = np.random.default_rng(4000)
    for i in range(1500):
        c = random_cfg(rng, ties=i % 2 == 1, big=i % 5 == 0)
        c["pad_right"] = c["pad_left"]
        if (c["length"] + 2 * c["pad_left"] - c["dilation"] * (c["k"] - 1) - 1) < 0:
            continue
        np.testing.assert_array_equal(three_way(c), torch_conv(torch_mod, c),
                                      err_msg=str(cfg_str(c)))


@pytest.mark.parametrize("k", [9, 25])
def test_conv1d_depthwise_dwconv_path_matches_torch(torch_mod, k):
    """qnnpack runs depthwise 9/25-tap kernels through its separate dwconv micro-kernels."""
    rng = np.random.default_rng(k)
    for mult in (1, 2):
        for dil in (1, 2):
            c = random_cfg(rng)
            g = 8
            c.update(n=2, c_in=g, c_out=g * mult, groups=g, k=k, stride=1, dilation=dil,
                     pad_left=k // 2, pad_right=k // 2, length=70,
                     x=rng.integers(0, 256, (2, g, 70), dtype=np.uint8),
                     w=rng.integers(-128, 128, (g * mult, 1, k), dtype=np.int8))
            nw = g * mult if c["per_channel"] else 1
            c["w_scales"] = rng.uniform(0.001, 0.03, nw)
            c["w_zps"] = rng.integers(-5, 6, nw)
            c["bias"] = rng.standard_normal(g * mult).astype(np.float32)
            np.testing.assert_array_equal(three_way(c), torch_conv(torch_mod, c))


# ---- edge cases ---------------------------------------------------------------------------------
def make(n, c_in, c_out, length, k, stride=1, pad=0, dilation=1, groups=1, seed=0, **kw):
    rng = np.random.default_rng(seed)
    c = random_cfg(rng)
    c.update(n=n, c_in=c_in, c_out=c_out, length=length, k=k, stride=stride, dilation=dilation,
             pad_left=pad, pad_right=kw.pop("pad_right", pad), groups=groups,
             x=rng.integers(0, 256, (n, c_in, length), dtype=np.uint8),
             w=rng.integers(-128, 128, (c_out, c_in // groups, k), dtype=np.int8))
    nw = c_out if c["per_channel"] else 1
    c["w_scales"] = rng.uniform(0.001, 0.03, nw)
    c["w_zps"] = rng.integers(-20, 21, nw) if kw.pop("asym", False) else np.zeros(nw, np.int64)
    c["bias"] = rng.standard_normal(c_out).astype(np.float32)
    c.update(kw)
    return c


EDGES = [
    dict(n=1, c_in=3, c_out=5, length=7, k=1),                      # K = 1
    dict(n=2, c_in=2, c_out=3, length=3, k=7, pad=3),                # K > L with padding
    dict(n=1, c_in=4, c_out=4, length=1, k=2, pad=3, dilation=2),    # window sees only padding
    dict(n=1, c_in=5, c_out=6, length=40, k=2, stride=5),            # stride > K
    dict(n=1, c_in=1, c_out=16, length=100, k=9, pad=4),             # C_in = 1
    dict(n=2, c_in=6, c_out=18, length=33, k=3, pad=1, groups=6),    # depthwise x3 multiplier
    dict(n=1, c_in=6, c_out=6, length=33, k=3, pad=1, groups=6, asym=True),
    dict(n=1, c_in=64, c_out=64, length=50, k=3, pad=1, asym=True),
    dict(n=1, c_in=17, c_out=9, length=61, k=4, stride=3, pad=2, dilation=2, asym=True),
    dict(n=1, c_in=8, c_out=8, length=20, k=4, pad=1, pad_right=2),  # asymmetric padding
]


@pytest.mark.parametrize("spec", EDGES, ids=lambda s: "-".join(f"{k}{v}" for k, v in s.items()))
def test_conv1d_edges(spec):
    three_way(make(**spec))


@pytest.mark.parametrize("length", [1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 49, 95, 96, 97, 150])
def test_conv1d_tile_edges_length(length):
    three_way(make(1, 5, 3, length, 3, pad=1, seed=length))
    three_way(make(1, 8, 8, length, 1, seed=length + 1, asym=True))


@pytest.mark.parametrize("c_out", [1, 2, 7, 8, 9, 15, 16, 17, 24, 33])
@pytest.mark.parametrize("c_in", [1, 3, 4, 5, 8, 13])
def test_conv1d_tile_edges_channels(c_in, c_out):
    three_way(make(1, c_in, c_out, 50, 3, pad=1, seed=c_in * 100 + c_out))


@pytest.mark.parametrize("groups,length,stride", [(100, 900, 1), (9, 300, 2), (70, 700, 3)])
def test_conv1d_depthwise_group_chunks(groups, length, stride):
    """Depthwise layers pack groups in chunks (VNNI); cover chunk and 8-row tile remainders."""
    three_way(make(2, groups, groups, length, 3, stride=stride, pad=1, groups=groups, seed=groups))
    three_way(make(1, 2 * groups, groups, length, 5, stride=stride, pad=2, groups=groups,
                   seed=groups + 1))


def test_conv1d_batch_zero():
    c = make(0, 4, 6, 10, 3)
    m = layer(c)
    y = m(qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"]))
    assert y.shape == (0, 6, 8)


def test_conv1d_unbatched_and_noncontiguous():
    c = make(1, 6, 4, 40, 3, pad=1, dilation=2)
    want = expected(c)
    m = layer(c)
    x2 = qrt.from_int_repr(c["x"][0], c["x_scale"], c["x_zp"])
    np.testing.assert_array_equal(m(x2).int_repr(), want[0])
    # a strided view (every other time step of a twice-as-long buffer) is read in place
    big = np.zeros((1, 12, 80), np.uint8)
    big[:, ::2, ::2] = c["x"]
    view = qrt.from_int_repr(big, c["x_scale"], c["x_zp"])._with_layout(
        (1, 6, 40), (12 * 80, 2 * 80, 2), 0)
    assert not view.is_contiguous()
    for variant in (0, -1):
        m._variant = variant
        np.testing.assert_array_equal(m(view).int_repr(), want)


def test_conv1d_out_argument():
    c = make(2, 4, 4, 30, 3, pad=1)
    m = layer(c)
    x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
    out = qrt.from_int_repr(np.zeros((2, 4, 30), np.uint8), c["out_scale"], c["out_zp"])
    assert m(x, out=out) is out
    np.testing.assert_array_equal(out.int_repr(), expected(c))
    bad = qrt.from_int_repr(np.zeros((2, 4, 30), np.uint8), c["out_scale"] * 2, c["out_zp"])
    with pytest.raises(ValueError, match="qparams"):
        m(x, out=bad)
    with pytest.raises(ValueError, match="shape"):
        m(x, out=qrt.from_int_repr(np.zeros((2, 4, 29), np.uint8), c["out_scale"], c["out_zp"]))


def test_conv1d_padding_strings():
    for k, d in [(3, 1), (4, 1), (4, 2), (5, 3), (2, 1)]:
        total = d * (k - 1)
        c = make(1, 3, 2, 20, k, dilation=d, pad=total // 2, pad_right=total - total // 2,
                 relu=False)
        want = expected(c)
        assert want.shape[-1] == 20
        y = qrt.functional.conv1d(qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"]), qweight(c),
                                  c["bias"], padding="same", dilation=d, scale=c["out_scale"],
                                  zero_point=c["out_zp"])
        np.testing.assert_array_equal(y.int_repr(), want)
    c = make(1, 3, 2, 20, 3, relu=False)
    y = qrt.functional.conv1d(qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"]), qweight(c),
                              c["bias"], padding="valid", scale=c["out_scale"],
                              zero_point=c["out_zp"])
    np.testing.assert_array_equal(y.int_repr(), expected(c))
    with pytest.raises(ValueError, match="strided"):
        qrt.nn.Conv1d(3, 2, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding"):
        qrt.nn.Conv1d(3, 2, 3, padding="full")


def test_conv1d_functional_matches_torch_functional(torch_mod):
    import torch.ao.nn.quantized.functional as qF

    c = make(2, 6, 9, 37, 4, stride=2, pad=2, dilation=2, groups=3, relu=False)
    torch_mod.backends.quantized.engine = "qnnpack"
    tx = torch_mod._make_per_tensor_quantized_tensor(torch_mod.from_numpy(c["x"]), c["x_scale"],
                                                     c["x_zp"])
    tw = torch_mod._make_per_tensor_quantized_tensor(torch_mod.from_numpy(c["w"]),
                                                     float(c["w_scales"][0]), 0) \
        if not c["per_channel"] else torch_mod._make_per_channel_quantized_tensor(
            torch_mod.from_numpy(c["w"]), torch_mod.from_numpy(c["w_scales"]),
            torch_mod.zeros(9, dtype=torch_mod.long), 0)
    want = qF.conv1d(tx, tw, torch_mod.from_numpy(c["bias"]), stride=2, padding=2, dilation=2,
                     groups=3, scale=c["out_scale"], zero_point=c["out_zp"]).int_repr().numpy()
    got = qrt.functional.conv1d(qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"]), qweight(c),
                                c["bias"], 2, 2, 2, 3, scale=c["out_scale"],
                                zero_point=c["out_zp"])
    np.testing.assert_array_equal(got.int_repr(), want)


# ---- accumulation bound -------------------------------------------------------------------------
def test_conv1d_accumulation_bound():
    taps = _conv1d.MAX_TAPS
    assert taps * 255 * 255 < 2**31 <= (taps + 1) * 255 * 255 + 255 * 255
    # worst case at the bound: |x - xzp| = 255 and |w - wzp| = 255 on every tap
    for c_in, k in [(taps, 1), (taps // 5, 5)]:
        c = make(1, c_in, 2, 1 if k == 1 else 5, k, seed=1)
        c["x"][:] = 255
        c["x_zp"] = 0
        c["w"][:] = -128
        c["per_channel"] = True
        c["w_zps"] = np.array([127, -128])
        c["w"][1] = 127
        c["w_scales"] = np.array([1e-6, 1e-6])
        c["x_scale"], c["out_scale"], c["out_zp"], c["relu"] = 0.01, 100.0, 128, False
        acc = oracle.conv1d_acc(c["x"], c["w"], c["w_zps"], 0)
        assert acc.min() == -taps * 255 * 255 or k != 1
        three_way(c)
    with pytest.raises(ValueError, match="accumulation bound"):
        qrt.nn.Conv1d(taps + 1, 1, 1)
    with pytest.raises(ValueError, match="accumulation bound"):
        qrt.nn.Conv1d(2 * (taps // 2 + 1), 2, 2, groups=2)


# ---- hostile arguments --------------------------------------------------------------------------
def test_conv1d_hostile_arguments():
    c = make(1, 4, 6, 10, 3)
    x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
    w = qweight(c)
    F = qrt.functional
    with pytest.raises(ValueError, match="channels"):
        F.conv1d(qrt.from_int_repr(np.zeros((1, 5, 10), np.uint8), 0.1, 0), w)
    with pytest.raises(ValueError, match="groups"):
        qrt.nn.Conv1d(4, 6, 3, groups=4)
    with pytest.raises(ValueError, match="groups"):
        qrt.nn.Conv1d(6, 4, 3, groups=4)
    with pytest.raises(TypeError, match="quint8"):
        F.conv1d(qrt.from_int_repr(c["x"].astype(np.int8), 0.1, 0), w)
    with pytest.raises(TypeError, match="qint8"):
        F.conv1d(x, qrt.from_int_repr(c["w"].view(np.uint8), 0.1, 0))
    with pytest.raises(TypeError, match="QTensor"):
        F.conv1d(c["x"], w)
    with pytest.raises(ValueError, match="too short"):
        F.conv1d(qrt.from_int_repr(np.zeros((1, 4, 2), np.uint8), 0.1, 0), w)
    with pytest.raises(ValueError, match="length must be"):
        F.conv1d(qrt.from_int_repr(np.zeros((1, 4, 0), np.uint8), 0.1, 0), w, padding=2)
    with pytest.raises(NotImplementedError, match="zero-padding"):
        F.conv1d(x, w, padding_mode="reflect")
    with pytest.raises(ValueError):
        F.conv1d(x, w, padding_mode="circular")
    with pytest.raises(ValueError, match="bias"):
        F.conv1d(x, w, np.zeros(5, np.float32))
    with pytest.raises(TypeError, match="bias"):
        F.conv1d(x, w, np.zeros(6, np.int32))
    with pytest.raises(ValueError, match="stride"):
        F.conv1d(x, w, stride=0)
    with pytest.raises(ValueError, match="dilation"):
        F.conv1d(x, w, dilation=-1)
    with pytest.raises(ValueError, match="padding"):
        F.conv1d(x, w, padding=-1)
    with pytest.raises(ValueError, match="zero_point"):
        F.conv1d(x, w, zero_point=256)
    with pytest.raises(ValueError, match="scale"):
        F.conv1d(x, w, scale=0.0)
    with pytest.raises(ValueError, match="must be"):
        F.conv1d(qrt.from_int_repr(np.zeros((1, 1, 4, 10), np.uint8), 0.1, 0), w)
    wax = qrt.from_int_repr_per_channel(c["w"], np.full(4, 0.01), np.zeros(4, np.int64), 1)
    with pytest.raises(ValueError, match="axis 0"):
        F.conv1d(x, wax)
    m = qrt.nn.Conv1d(4, 6, 3)
    with pytest.raises(ValueError, match="set_weight_bias"):
        m(x)
    with pytest.raises(ValueError, match="shape"):
        m.set_weight_bias(qrt.from_int_repr(np.zeros((6, 4, 2), np.int8), 0.1, 0))


def test_conv1d_kernel_wrapper_checks():
    x = np.zeros((1, 4, 10), np.uint8)
    w = np.zeros((2, 4, 3), np.int8)
    z = np.zeros(2, np.int32)
    f = np.ones(2, np.float32)
    out = np.zeros((1, 2, 8), np.uint8)
    with pytest.raises(ValueError, match="out"):
        _conv1d.conv1d(x, w, np.zeros(0, np.int8), z, z, z, f, f, np.zeros((1, 3, 8), np.uint8),
                       np.zeros(0, np.uint8), variant=0)
    with pytest.raises(ValueError, match="rejected"):
        _conv1d.conv1d(x, w, np.zeros(0, np.int8), z, z, z, f, f, out, np.zeros(0, np.uint8),
                       input_zero=300, variant=0)
    if _conv1d.scratch_size(1, 4, 2, 10, 8, 3, 1, 1, 0, 1) > 0:  # VNNI; the Arm variants need none
        with pytest.raises(ValueError, match="scratch"):
            _conv1d.conv1d(x, w, np.zeros(0, np.int8), z, z, z, f, f, out,
                           np.zeros(0, np.uint8))


# ---- golden vectors (torch-free) ----------------------------------------------------------------
def load_golden(path):
    d = np.load(path, allow_pickle=False)
    cases = json.loads(str(d["cases"]))
    for i, c in enumerate(cases):
        c["x"], c["w"], c["y"] = d[f"x{i}"], d[f"w{i}"], d[f"y{i}"]
        c["w_scales"], c["w_zps"] = d[f"ws{i}"], d[f"wz{i}"]
        c["bias"] = d[f"b{i}"] if f"b{i}" in d else None
        yield c


@pytest.mark.parametrize("name", ["conv1d_random.npz", "conv1d_ties.npz"])
def test_conv1d_golden(name):
    path = DATA / name
    if not path.exists():
        pytest.fail(f"{name} is missing (generate it with tools/gen_golden_conv.py)")
    n = 0
    for c in load_golden(path):
        np.testing.assert_array_equal(three_way(c), c["y"], err_msg=str(cfg_str(c)))
        n += 1
    assert n > 10


def test_conv1d_variant_is_reported():
    assert _conv1d.variant(0) == 0
    assert _conv1d.variant() == _conv1d.isa()

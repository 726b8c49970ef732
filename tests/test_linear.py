# SPDX-License-Identifier: Apache-2.0
"""linear / linear_relu / linear_dynamic: oracle == reference == dispatched (== torch qnnpack)."""

import json
import pathlib
import warnings

import numpy as np
import pytest

import oracle
import qrt

DATA = pathlib.Path(__file__).parent / "data"


def random_linear(rng, ties=False, big=False):
    fi = int(rng.integers(1, 300 if big else 70))
    fo = int(rng.integers(1, 100 if big else 40))
    lead = tuple(int(v) for v in rng.integers(0 if rng.random() < 0.05 else 1, 6,
                                              size=int(rng.integers(1, 3))))
    per_channel = bool(rng.random() < 0.5)
    nw = fo if per_channel else 1
    if ties:
        x_scale = 2.0 ** -int(rng.integers(3, 8))
        ws = 2.0 ** -rng.integers(5, 10, size=nw).astype(np.float64)
        out_scale = 2.0 ** -int(rng.integers(0, 5))
    else:
        x_scale = float(rng.uniform(0.005, 0.1))
        ws = rng.uniform(0.001, 0.03, size=nw)
        out_scale = float(rng.uniform(0.02, 2.0))
    wz = np.zeros(nw, np.int64) if rng.random() < 0.6 else rng.integers(-30, 31, nw)
    bias = None
    if rng.random() < 0.7:
        bias = (((rng.integers(-2000, 2000, size=fo) + 0.5) * (ws * x_scale)) if ties else
                rng.standard_normal(fo) * 3).astype(np.float32)
    return dict(fi=fi, fo=fo, lead=list(lead),
                x=rng.integers(0, 256, size=lead + (fi,), dtype=np.uint8), x_scale=x_scale,
                x_zp=int(rng.integers(0, 256)), w=rng.integers(-128, 128, (fo, fi), dtype=np.int8),
                w_scales=ws, w_zps=wz, per_channel=per_channel, bias=bias, out_scale=out_scale,
                out_zp=int(rng.integers(0, 256)), relu=bool(rng.random() < 0.3),
                xf=(rng.standard_normal(lead + (fi,)) * float(rng.uniform(0.1, 5)) +
                    float(rng.uniform(-2, 2))).astype(np.float32))


def qweight(c):
    if c["per_channel"]:
        return qrt.from_int_repr_per_channel(c["w"], c["w_scales"], c["w_zps"], 0)
    return qrt.from_int_repr(c["w"], float(c["w_scales"][0]), int(c["w_zps"][0]))


def three_way(c):
    want = oracle.linear(c["x"], c["x_scale"], c["x_zp"], c["w"], c["w_scales"], c["w_zps"],
                         c["bias"], c["out_scale"], c["out_zp"], c["relu"])
    x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
    cls = qrt.nn.LinearReLU if c["relu"] else qrt.nn.Linear
    m = cls(c["fi"], c["fo"])
    m.scale, m.zero_point = c["out_scale"], c["out_zp"]
    m.set_weight_bias(qweight(c), c["bias"])
    for variant in (0, -1):
        m._variant = variant
        np.testing.assert_array_equal(m(x).int_repr(), want, err_msg=f"variant {variant}")
    fn = qrt.functional.linear_relu if c["relu"] else qrt.functional.linear
    np.testing.assert_array_equal(
        fn(x, qweight(c), c["bias"], c["out_scale"], c["out_zp"]).int_repr(), want)
    return want


def dynamic_three_way(c):
    """DynamicLinear (both variants) == oracle on the input quantized with qrt's choose_qparams."""
    xf = c["xf"]
    lo, hi = (float(xf.min()), float(xf.max())) if xf.size else (0.0, 0.0)
    s, z = qrt.nn.choose_qparams(lo, hi)
    xq = qrt.quantize_per_tensor(xf, s, z, qrt.quint8).int_repr()
    want = oracle.linear_dynamic_from_q(xq, s, z, c["w"], c["w_scales"], c["w_zps"], c["bias"])
    m = qrt.nn.DynamicLinear(c["fi"], c["fo"])
    m.set_weight_bias(qweight(c), c["bias"])
    for variant in (0, -1):
        m._variant = variant
        np.testing.assert_array_equal(m(xf).view(np.int32), want.view(np.int32))
    np.testing.assert_array_equal(
        qrt.functional.linear_dynamic(xf, qweight(c), c["bias"]).view(np.int32),
        want.view(np.int32))
    return want


@pytest.fixture(scope="module")
def torch_mod():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    torch.backends.quantized.engine = "qnnpack"
    return torch


def torch_packed(torch, c):
    if c["per_channel"]:
        w = torch._make_per_channel_quantized_tensor(
            torch.from_numpy(c["w"]), torch.from_numpy(np.asarray(c["w_scales"], np.float64)),
            torch.from_numpy(np.asarray(c["w_zps"], np.int64)), 0)
    else:
        w = torch._make_per_tensor_quantized_tensor(torch.from_numpy(c["w"]),
                                                    float(c["w_scales"][0]), int(c["w_zps"][0]))
    b = None if c["bias"] is None else torch.from_numpy(c["bias"])
    return torch.ops.quantized.linear_prepack(w, b)


def torch_linear(torch, c):
    torch.backends.quantized.engine = "qnnpack"
    x = torch._make_per_tensor_quantized_tensor(torch.from_numpy(c["x"]), c["x_scale"], c["x_zp"])
    op = torch.ops.quantized.linear_relu if c["relu"] else torch.ops.quantized.linear
    return op(x, torch_packed(torch, c), c["out_scale"], c["out_zp"]).int_repr().numpy()


def torch_dynamic(torch, c):
    torch.backends.quantized.engine = "qnnpack"
    return torch.ops.quantized.linear_dynamic(torch.from_numpy(c["xf"]), torch_packed(torch, c),
                                              False).numpy()


@pytest.mark.parametrize("ties", [False, True])
def test_linear_random_three_way(ties):
    rng = np.random.default_rng(10 + ties)
    for i in range(60):
        three_way(random_linear(rng, ties=ties, big=i % 4 == 0))


def test_linear_dynamic_random_three_way():
    rng = np.random.default_rng(20)
    for i in range(60):
        dynamic_three_way(random_linear(rng, big=i % 4 == 0))


@pytest.mark.parametrize("ties", [False, True])
def test_linear_matches_torch_qnnpack(torch_mod, ties):
    rng = np.random.default_rng(30 + ties)
    for i in range(60):
        c = random_linear(rng, ties=ties, big=i % 4 == 0)
        if len(c["lead"]) < 1 or c["x"].size == 0 and len(c["lead"]) > 1:
            continue
        np.testing.assert_array_equal(three_way(c), torch_linear(torch_mod, c))


def test_linear_dynamic_matches_torch_qnnpack(torch_mod):
    rng = np.random.default_rng(40)
    for i in range(80):
        c = random_linear(rng, big=i % 3 == 0)
        if c["xf"].size == 0:
            continue
        want = torch_dynamic(torch_mod, c)
        np.testing.assert_array_equal(dynamic_three_way(c).view(np.int32), want.view(np.int32))


def test_linear_dynamic_large_accumulators_match_torch(torch_mod):
    """|acc| >> 2^24: the float conversion of the accumulator must round as torch's does."""
    rng = np.random.default_rng(41)
    c = random_linear(rng)
    fi, fo = 4000, 16
    c.update(fi=fi, fo=fo, w=rng.integers(-128, 128, (fo, fi), dtype=np.int8),
             w_scales=rng.uniform(0.001, 0.03, fo), w_zps=np.zeros(fo, np.int64),
             per_channel=True, bias=rng.standard_normal(fo).astype(np.float32),
             xf=(rng.random((3, fi)) * 10).astype(np.float32))
    c["w"][:8] = 127
    want = torch_dynamic(torch_mod, c)
    np.testing.assert_array_equal(dynamic_three_way(c).view(np.int32), want.view(np.int32))


def test_choose_qparams_matches_torch(torch_mod):
    rng = np.random.default_rng(42)
    vals = [(0.0, 0.0), (-1e-9, 1e-9), (0.0, 1e-7), (-1e-7, 0.0), (-3.0, 5.0), (1.0, 2.0),
            (-2.0, -1.0), (-1e30, 1e30), (-5e-6, 3e-6)]
    vals += [tuple(sorted(rng.standard_normal(2) * 10.0 ** rng.integers(-8, 4)))
             for _ in range(300)]
    for lo, hi in vals:
        x = torch_mod.tensor([lo, hi], dtype=torch_mod.float32)
        ts, tz = torch_mod._choose_qparams_per_tensor(x, False)
        s, z = qrt.nn.choose_qparams(float(np.float32(lo)), float(np.float32(hi)))
        assert (s, z) == (ts, tz), (lo, hi)


def test_linear_edges():
    rng = np.random.default_rng(50)
    for fi, fo in [(1, 1), (3, 1), (1, 17), (4, 8), (5, 9), (64, 16), (65, 15), (256, 33)]:
        for rows in (1, 15, 16, 17, 48, 49):
            c = random_linear(rng)
            c.update(fi=fi, fo=fo, lead=[rows],
                     x=rng.integers(0, 256, (rows, fi), dtype=np.uint8),
                     w=rng.integers(-128, 128, (fo, fi), dtype=np.int8))
            nw = fo if c["per_channel"] else 1
            c["w_scales"], c["w_zps"] = rng.uniform(0.001, 0.03, nw), rng.integers(-3, 4, nw)
            c["bias"] = None if rows % 2 else rng.standard_normal(fo).astype(np.float32)
            three_way(c)


def test_linear_1d_3d_noncontiguous_and_empty():
    rng = np.random.default_rng(51)
    c = random_linear(rng)
    fi, fo = c["fi"], c["fo"]
    m = qrt.nn.Linear(fi, fo)
    m.scale, m.zero_point = c["out_scale"], c["out_zp"]
    m.set_weight_bias(qweight(c), c["bias"])
    x = rng.integers(0, 256, (2, 3, fi), dtype=np.uint8)
    want = oracle.linear(x, 0.05, 7, c["w"], c["w_scales"], c["w_zps"], c["bias"],
                         c["out_scale"], c["out_zp"])
    np.testing.assert_array_equal(m(qrt.from_int_repr(x, 0.05, 7)).int_repr(), want)
    np.testing.assert_array_equal(m(qrt.from_int_repr(x[0, 0], 0.05, 7)).int_repr(), want[0, 0])
    xt = np.ascontiguousarray(x.transpose(1, 0, 2))  # [3, 2, fi]
    view = qrt.from_int_repr(xt, 0.05, 7)._with_layout((2, 3, fi), (fi, 2 * fi, 1), 0)
    np.testing.assert_array_equal(m(view).int_repr(), want)
    assert m(qrt.from_int_repr(np.zeros((0, fi), np.uint8), 0.05, 7)).shape == (0, fo)
    out = qrt.from_int_repr(np.zeros((2, 3, fo), np.uint8), c["out_scale"], c["out_zp"])
    assert m(qrt.from_int_repr(x, 0.05, 7), out=out) is out
    np.testing.assert_array_equal(out.int_repr(), want)


def test_linear_hostile_arguments():
    w = qrt.from_int_repr(np.zeros((3, 4), np.int8), 0.1, 0)
    x = qrt.from_int_repr(np.zeros((2, 4), np.uint8), 0.1, 0)
    F = qrt.functional
    with pytest.raises(ValueError, match="input"):
        F.linear(qrt.from_int_repr(np.zeros((2, 5), np.uint8), 0.1, 0), w)
    with pytest.raises(TypeError, match="quint8"):
        F.linear(qrt.from_int_repr(np.zeros((2, 4), np.int8), 0.1, 0), w)
    with pytest.raises(TypeError, match="qint8"):
        F.linear(x, qrt.from_int_repr(np.zeros((3, 4), np.uint8), 0.1, 0))
    with pytest.raises(ValueError, match="weight"):
        F.linear(x, qrt.from_int_repr(np.zeros((3, 4, 1), np.int8), 0.1, 0))
    with pytest.raises(ValueError, match="bias"):
        F.linear(x, w, np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="float"):
        F.linear_dynamic(np.zeros((2, 4), np.int32), w)
    with pytest.raises(ValueError, match="NaN"):
        F.linear_dynamic(np.array([[0, 1, np.nan, 2]], np.float32), w)
    with pytest.raises(ValueError, match="accumulation bound"):
        qrt.nn.Linear(40000, 2)
    with pytest.raises(ValueError, match="in_features"):
        qrt.nn.Linear(0, 2)



def test_dynamic_bound_call_and_nonfinite_inputs(rng):
    """DynamicLinear.bound_call (a model plan's one C call) == __call__ bit for bit; a NaN or
    an infinity anywhere (the vector lanes of qrt_minmax_finite_f32 and its tail) raises."""
    m = qrt.nn.DynamicLinear(40, 6)
    w = rng.integers(-127, 128, (6, 40)).astype(np.int8)
    m.set_weight_bias(qrt.from_int_repr_per_channel(w, rng.uniform(0.002, 0.01, 6),
                                                    np.zeros(6, np.int64), 0, qrt.qint8),
                      rng.standard_normal(6).astype(np.float32))
    x = (rng.standard_normal((3, 40)) * 4).astype(np.float32)
    y = np.empty((3, 6), np.float32)
    call = m.bound_call(x, y)
    for k in (0, 17, 63, 64, 119):
        x[...] = (rng.standard_normal((3, 40)) * 4).astype(np.float32)
        x.reshape(-1)[k] = -0.0
        call()
        np.testing.assert_array_equal(y.view(np.int32), m(x).view(np.int32))
        for bad in (np.nan, np.inf, -np.inf):
            x.reshape(-1)[k] = bad
            with pytest.raises(ValueError, match="NaN"):
                call()
            with pytest.raises(ValueError, match="NaN"):
                m(x)
        x.reshape(-1)[k] = 1.0

def load_golden(path):
    d = np.load(path, allow_pickle=False)
    cases = json.loads(str(d["cases"]))
    for i, c in enumerate(cases):
        for k in ("x", "w", "y", "xf"):
            if f"{k}{i}" in d:
                c[k] = d[f"{k}{i}"]
        c["w_scales"], c["w_zps"] = d[f"ws{i}"], d[f"wz{i}"]
        c["bias"] = d[f"b{i}"] if f"b{i}" in d else None
        yield c


def test_linear_golden():
    path = DATA / "linear_random.npz"
    if not path.exists():
        pytest.fail("linear_random.npz is missing (generate it with tools/gen_golden_conv.py)")
    for c in load_golden(path):
        np.testing.assert_array_equal(three_way(c), c["y"])


def test_linear_dynamic_golden():
    path = DATA / "linear_dynamic.npz"
    if not path.exists():
        pytest.fail("linear_dynamic.npz is missing (generate it with tools/gen_golden_conv.py)")
    for c in load_golden(path):
        np.testing.assert_array_equal(dynamic_three_way(c).view(np.int32), c["y"].view(np.int32))

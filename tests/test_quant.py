# SPDX-License-Identifier: Apache-2.0
"""quantize / dequantize: bit-exact with torch 2.13 (x86-64), with goldens when torch is absent.

Integers are compared with exact equality, floats by bit pattern.  The default run checks
about a million hard values per dtype per-tensor (ties, +-1 ulp, extremes, -0.0, inf, NaN,
denormals over many scales and zero points); ``-m slow`` checks ten times more.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import qrt
from qrt import _quant, _tensor
from conftest import assert_bits_equal, load_golden
from quant_cases import (SPECIALS, hard_values, per_channel_case, per_tensor_cases,
                         random_shapes)

DTYPES = {"quint8": qrt.quint8, "qint8": qrt.qint8, "qint32": qrt.qint32}
VARIANTS = sorted({0, 1, 2, -1})  # ref, AVX2, AVX-512 (fall back when absent), best


def _tdt(torch, name):
    return getattr(torch, name)


def _torch_qpt(torch, x, scale, zp, name):
    return torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, _tdt(torch, name))


# ---- per-tensor quantize vs torch -----------------------------------------------------------
def _check_per_tensor(torch, rng, name, n_configs, per_config):
    dt = DTYPES[name]
    total = 0
    for x, s, z in per_tensor_cases(rng, name, n_configs, per_config):
        got = qrt.quantize_per_tensor(x, s, z, dt)
        want = _torch_qpt(torch, x, s, z, name)
        assert_bits_equal(got.int_repr(), want.int_repr().numpy(), f"{name} scale={s!r} zp={z}")
        total += x.size
    return total


@pytest.mark.parametrize("name", list(DTYPES))
def test_quantize_per_tensor_matches_torch(qnnpack, rng, name):
    """Under the qnnpack engine (quantize does not depend on the engine; other tests use the
    default one)."""
    assert _check_per_tensor(qnnpack, rng, name, 50, 20_000) >= 1_000_000


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DTYPES))
def test_quantize_per_tensor_matches_torch_10m(torch, rng, name):
    assert _check_per_tensor(torch, rng, name, 400, 25_000) >= 10_000_000


@pytest.mark.parametrize("name", list(DTYPES))
def test_quantize_per_tensor_every_length_matches_torch(torch, rng, name):
    """Lengths 0..130 and a few more: vector bodies, masked tails, scalar remainders."""
    dt = DTYPES[name]
    for n in list(range(0, 131)) + [255, 256, 257, 1023, 4097]:
        s = float(2.0 ** rng.integers(-8, 2))
        z = int(rng.integers(-5, 6)) if name != "quint8" else int(rng.integers(0, 10))
        x = hard_values(rng, s, z, n, name) if n else np.zeros(0, np.float32)
        got = qrt.quantize_per_tensor(x, s, z, dt).int_repr()
        assert_bits_equal(got, _torch_qpt(torch, x, s, z, name).int_repr().numpy(), f"n={n}")


@pytest.mark.parametrize("name", list(DTYPES))
def test_quantize_per_tensor_shapes_and_strides_match_torch(torch, rng, name):
    dt = DTYPES[name]
    base = hard_values(rng, 0.05, 3, 6 * 7 * 8, name).reshape(6, 7, 8)
    for x in (base, base[:, ::2, 1:], base.transpose(2, 0, 1), base[3, 4, 5], base[..., :0]):
        got = qrt.quantize_per_tensor(x, 0.05, 3, dt)
        want = torch.quantize_per_tensor(torch.from_numpy(np.array(x, order="C")), 0.05, 3,
                                         _tdt(torch, name))
        assert got.shape == tuple(want.shape)
        assert_bits_equal(got.int_repr(), want.int_repr().numpy(), str(x.shape))


def test_float64_and_float16_input_is_converted_to_float32_first(torch, rng):
    """qrt takes float64 input as torch users do with ``.float()`` (torch itself refuses)."""
    x64 = rng.standard_normal(5000) * 3
    x64[:3] = [0.5 * 0.1, 2.5 * 0.1 + 1e-17, 1e300]
    for dt, name in ((qrt.quint8, "quint8"), (qrt.qint8, "qint8"), (qrt.qint32, "qint32")):
        got = qrt.quantize_per_tensor(x64, 0.1, 0, dt).int_repr()
        want = torch.quantize_per_tensor(torch.from_numpy(x64).float(), 0.1, 0,
                                         _tdt(torch, name)).int_repr().numpy()
        assert_bits_equal(got, want, name)
        with np.errstate(over="ignore"):
            x32 = x64.astype(np.float32)
        assert_bits_equal(got, qrt.quantize_per_tensor(x32, 0.1, 0, dt).int_repr())
    x16 = rng.standard_normal(100).astype(np.float16)
    assert_bits_equal(qrt.quantize_per_tensor(x16, 0.1, 5, qrt.quint8).int_repr(),
                      qrt.quantize_per_tensor(x16.astype(np.float32), 0.1, 5,
                                              qrt.quint8).int_repr())


# ---- per-channel quantize vs torch ----------------------------------------------------------
def _check_per_channel(torch, rng, name, n_shapes):
    dt = DTYPES[name]
    total = 0
    shapes = random_shapes(rng, n_shapes) + [((64, 3, 5), 0), ((2, 2000), 1), ((2000, 3), 1),
                                             ((3, 70, 11), 1), ((1, 1, 1, 1), 3), ((9,), 0)]
    for i, (shape, axis) in enumerate(shapes):
        x, sc, zp = per_channel_case(rng, name, shape, axis, i)
        ax = axis - len(shape) if i % 2 else axis  # negative axes too
        got = qrt.quantize_per_channel(x, sc, zp, ax, dt)
        want = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(sc),
                                          torch.from_numpy(zp), axis, _tdt(torch, name))
        assert_bits_equal(got.int_repr(), want.int_repr().numpy(), f"{name} {shape} axis={ax}")
        assert_bits_equal(got.dequantize(), want.dequantize().numpy(), f"dequant {shape}")
        assert got.q_per_channel_axis() == axis
        total += x.size
    return total


@pytest.mark.parametrize("name", list(DTYPES))
def test_quantize_per_channel_every_axis_matches_torch(qnnpack, rng, name):
    assert _check_per_channel(qnnpack, rng, name, 300) > 20_000


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DTYPES))
def test_quantize_per_channel_matches_torch_many(torch, rng, name):
    _check_per_channel(torch, rng, name, 5000)


# ---- dequantize vs torch --------------------------------------------------------------------
@pytest.mark.parametrize("name", ["quint8", "qint8"])
def test_dequantize_per_tensor_all_integers_match_torch(torch, rng, name):
    dt = DTYPES[name]
    ints = np.tile(np.arange(dt.qmin, dt.qmax + 1), 3).astype(dt.numpy_dtype)
    for i in range(150):
        s = float(np.exp(rng.uniform(-40, 40))) if i % 2 else float(np.exp(rng.uniform(-9, 3)))
        z = int(rng.integers(dt.qmin, dt.qmax + 1))
        want = torch._make_per_tensor_quantized_tensor(torch.from_numpy(ints), s, z).dequantize()
        assert_bits_equal(qrt.from_int_repr(ints, s, z).dequantize(), want.numpy(), f"{s} {z}")


def test_dequantize_per_tensor_qint32_matches_torch_including_wraparound(torch, rng):
    """torch forms q - zp in int32 and wraps on overflow; qrt reproduces it."""
    ext = np.array([-(2**31), 2**31 - 1, 0, 1, -1, 2**24 + 1, -(2**24) - 1, 2**30 + 1],
                   np.int32)
    for i in range(120):
        ints = np.concatenate([ext, rng.integers(-(2**31), 2**31, 200).astype(np.int32),
                               rng.integers(-(2**20), 2**20, 200).astype(np.int32)])
        z = int(rng.integers(-(2**31), 2**31)) if i % 2 else int(rng.integers(-1000, 1000))
        if i < 4:
            z = [2**31 - 1, -(2**31), 5, -5][i]
        s = float(np.exp(rng.uniform(-20, 5)))
        want = torch._make_per_tensor_quantized_tensor(torch.from_numpy(ints), s, z).dequantize()
        assert_bits_equal(qrt.from_int_repr(ints, s, z).dequantize(), want.numpy(), f"{s} {z}")


@pytest.mark.parametrize("name", list(DTYPES))
def test_dequantize_per_channel_matches_torch(torch, rng, name):
    dt = DTYPES[name]
    for shape, axis in random_shapes(rng, 150) + [((5, 3000), 0), ((3000, 5), 1)]:
        c = shape[axis]
        if name == "qint32":
            ints = rng.integers(-(2**31), 2**31, shape).astype(np.int32)
            zps = rng.integers(-(2**31), 2**31, c)
        else:
            ints = rng.integers(dt.qmin, dt.qmax + 1, shape).astype(dt.numpy_dtype)
            zps = rng.integers(dt.qmin, dt.qmax + 1, c)
        scales = np.exp(rng.uniform(-30, 30, c))
        want = torch._make_per_channel_quantized_tensor(
            torch.from_numpy(ints), torch.from_numpy(scales), torch.from_numpy(zps), axis)
        got = qrt.from_int_repr_per_channel(ints, scales, zps, axis)
        assert_bits_equal(got.dequantize(), want.dequantize().numpy(), f"{shape} {axis}")


# ---- accessors agree with torch ---------------------------------------------------------------
def test_accessors_match_torch(torch, rng):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    q = qrt.quantize_per_tensor(x, 0.1 + 1e-12, 7, qrt.quint8)
    t = torch.quantize_per_tensor(torch.from_numpy(x), 0.1 + 1e-12, 7, torch.quint8)
    assert q.q_scale() == t.q_scale() and type(q.q_scale()) is float
    assert q.q_zero_point() == t.q_zero_point() and type(q.q_zero_point()) is int
    assert q.shape == tuple(t.shape) and q.ndim == t.ndim and q.numel() == t.numel()
    assert q.qscheme() is qrt.per_tensor_affine and q.dtype is qrt.quint8
    sc = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    zp = np.array([0, 1, -2, 3], np.int32)
    qc = qrt.quantize_per_channel(x, sc, zp, 1, qrt.qint8)
    tc = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(sc),
                                    torch.from_numpy(zp).long(), 1, torch.qint8)
    assert qc.q_per_channel_scales().dtype == np.float64
    assert qc.q_per_channel_zero_points().dtype == np.int64
    assert_bits_equal(qc.q_per_channel_scales(), tc.q_per_channel_scales().numpy())
    assert_bits_equal(qc.q_per_channel_zero_points(), tc.q_per_channel_zero_points().numpy())
    assert qc.q_per_channel_axis() == tc.q_per_channel_axis() == 1
    assert qc.qscheme() is qrt.per_channel_affine
    assert_bits_equal(qc.int_repr(), tc.int_repr().numpy())


# ---- variants: reference == AVX2 == AVX-512 == dispatched (no torch needed) -------------------
def _variant_inputs(rng):
    xs = []
    for n in (1, 7, 15, 16, 17, 31, 63, 64, 65, 127, 129, 1000, 4099):
        xs.append(hard_values(rng, 2.0 ** -4, 3, n))
    xs.append(hard_values(rng, 0.0137, -5, 50_000))
    return xs


@pytest.mark.parametrize("name", list(DTYPES))
def test_variants_are_bit_exact_with_reference(rng, name):
    dt = DTYPES[name]
    for x in _variant_inputs(rng):
        for s, z in ((2.0 ** -4, 3 if name == "quint8" else -3), (0.0137, 100 if name != "qint8"
                                                                    else -100), (1e-30, 0)):
            ref = _tensor._quantize_per_tensor_impl(x, s, z, dt, 0)
            for v in VARIANTS:
                got = _tensor._quantize_per_tensor_impl(x, s, z, dt, v)
                assert_bits_equal(got.int_repr(), ref.int_repr(), f"variant {v} n={x.size}")
                assert_bits_equal(_tensor._dequantize_impl(got, v),
                                  _tensor._dequantize_impl(ref, 0), f"dequant variant {v}")
    # per-channel, long rows and short rows (the per-element-parameter kernel)
    for shape, axis in (((4, 3001), 0), ((3001, 4), 1), ((5, 6, 7), 2), ((2, 9, 40), 1)):
        x, sc, zp = per_channel_case(rng, name, shape, axis)
        sc, zp, inv = _tensor._per_channel_params(sc, zp, shape[axis], dt)
        ref = _tensor._quantize_per_channel_impl(x, sc, zp, inv, axis, dt, 0)
        for v in VARIANTS:
            got = _tensor._quantize_per_channel_impl(x, sc, zp, inv, axis, dt, v)
            assert_bits_equal(got.int_repr(), ref.int_repr(), f"pc variant {v} {shape}")
            assert_bits_equal(_tensor._dequantize_impl(got, v), _tensor._dequantize_impl(ref, 0))


def test_variant_selection_reports_what_runs():
    best = _quant.isa()
    assert best in (0, 1, 2, 3)  # 3: aarch64's NEON fused quantize
    assert _quant.pick(0) == 0 and _quant.pick(-1) == best
    assert all(_quant.pick(v) <= best for v in range(-1, 5))


def test_fused_and_scalar_paths_differ_where_torch_does():
    """Guards against a build that contracts x*inv + zp (or fails to fuse): the two formulas
    torch uses differ on some of these values; both are checked against torch elsewhere."""
    xs = np.float32(np.linspace(-20, 20, 200001))
    qa = qrt.quantize_per_tensor(xs, 0.1, 1, qrt.qint8).int_repr().astype(np.int64)
    qb = qrt.quantize_per_channel(xs[None], [0.1], [1], 0, qrt.qint8).int_repr()[0]
    # a per-channel tensor uses rne(f32(x*inv) + zp); per-tensor qint8 uses rne(fmaf(x,inv,zp))
    inv = np.float32(1) / np.float32(0.1)
    t = (xs * inv).astype(np.float32) + np.float32(1)
    assert_bits_equal(qb, np.clip(np.rint(t), -128, 127).astype(np.int8))
    assert (qa != qb).any()  # a build that contracted x*inv + zp into an FMA would fail above


# ---- goldens (always run; the only oracle without torch) -------------------------------------
@pytest.mark.parametrize("name", list(DTYPES))
def test_golden_per_tensor(name):
    g = load_golden(f"quant_per_tensor_{name}.npz")
    dt = DTYPES[name]
    x, scales, zps, q, dq = g["x"], g["scale"], g["zero_point"], g["q"], g["dq"]
    for i in range(scales.size):
        got = qrt.quantize_per_tensor(x[i], float(scales[i]), int(zps[i]), dt)
        assert_bits_equal(got.int_repr(), q[i], f"config {i}")
        assert_bits_equal(got.dequantize(), dq[i], f"dequant config {i}")


@pytest.mark.parametrize("name", list(DTYPES))
def test_golden_per_channel(name):
    g = load_golden(f"quant_per_channel_{name}.npz")
    dt = DTYPES[name]
    k = 0
    while f"x{k}" in g:
        x, sc, zp, axis = g[f"x{k}"], g[f"scales{k}"], g[f"zero_points{k}"], int(g[f"axis{k}"])
        got = qrt.quantize_per_channel(x, sc, zp, axis, dt)
        assert_bits_equal(got.int_repr(), g[f"q{k}"], f"case {k}")
        assert_bits_equal(got.dequantize(), g[f"dq{k}"], f"dequant case {k}")
        k += 1
    assert k > 0


def test_golden_dequantize():
    g = load_golden("quant_dequantize.npz")
    for name, dt in DTYPES.items():
        ints, scales, zps, want = (g[f"{name}_q"], g[f"{name}_scale"], g[f"{name}_zero_point"],
                                   g[f"{name}_dq"])
        for i in range(scales.size):
            got = qrt.from_int_repr(ints, float(scales[i]), int(zps[i]), dt).dequantize()
            assert_bits_equal(got, want[i], f"{name} config {i}")


def test_goldens_record_versions():
    for f in ("quant_per_tensor_quint8.npz", "quant_per_channel_qint8.npz",
              "quant_dequantize.npz"):
        g = load_golden(f)
        assert str(g["torch_version"]).startswith("2.13.0")
        assert str(g["qrt_version"])


# ---- semantics that need no oracle -----------------------------------------------------------
def test_specials_per_tensor():
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 3.4e38, -3.4e38], np.float32)
    assert qrt.quantize_per_tensor(x, 0.1, 10, qrt.quint8).int_repr().tolist() == \
        [255, 255, 0, 10, 10, 255, 0]
    assert qrt.quantize_per_tensor(x, 0.1, 0, qrt.qint8).int_repr().tolist() == \
        [127, 127, -128, 0, 0, 127, -128]
    assert qrt.quantize_per_tensor(x, 0.1, 0, qrt.qint32).int_repr().tolist() == \
        [-(2**31), 2**31 - 1, -(2**31), 0, 0, 2**31 - 1, -(2**31)]
    # per-channel: NaN -> INT32_MIN truncated: 0 for 8-bit types
    x1 = x.reshape(1, -1)
    assert qrt.quantize_per_channel(x1, [0.1], [10], 0, qrt.quint8).int_repr()[0].tolist() == \
        [0, 255, 0, 10, 10, 255, 0]
    assert qrt.quantize_per_channel(x1, [0.1], [3], 0, qrt.qint8).int_repr()[0].tolist() == \
        [0, 127, -128, 3, 3, 127, -128]
    assert qrt.quantize_per_channel(x1, [0.1], [3], 0, qrt.qint32).int_repr()[0].tolist() == \
        [-(2**31), 2**31 - 1, -(2**31), 3, 3, 2**31 - 1, -(2**31)]


def test_ties_round_to_even():
    x = (np.arange(-10, 10, dtype=np.float32) + np.float32(0.5))
    q = qrt.quantize_per_tensor(x, 1.0, 0, qrt.qint8).int_repr()
    assert np.array_equal(q, np.rint(x).astype(np.int8))
    q = qrt.quantize_per_tensor(x, 1.0, 1, qrt.qint8).int_repr()  # rne(x + zp), fused
    assert np.array_equal(q, np.rint(x + 1).astype(np.int8))


@pytest.mark.parametrize("name", list(DTYPES))
def test_quantize_dequantize_error_is_at_most_half_a_step(rng, name):
    dt = DTYPES[name]
    for _ in range(20):
        s = float(np.exp(rng.uniform(-8, 2)))
        z = int(rng.integers(max(dt.qmin, -100), min(dt.qmax, 100) + 1))
        lo = (max(dt.qmin, -1000) - z) * s
        hi = (min(dt.qmax, 1000) - z) * s
        x = rng.uniform(lo, hi, 2000).astype(np.float32)
        y = qrt.quantize_per_tensor(x, s, z, dt).dequantize()
        err = np.abs(y.astype(np.float64) - x)
        bound = s * 0.5 * (1 + 1e-5) + np.abs(x) * 2.0**-23  # half a step + float rounding
        assert np.all(err <= bound), (s, z, x[np.argmax(err - bound)])


# ---- zero-copy and construction ---------------------------------------------------------------
def test_int_repr_is_zero_copy_and_from_int_repr_wraps_without_copy():
    q = qrt.quantize_per_tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4), 0.01,
                                3, qrt.qint8)
    a = q.int_repr()
    assert a.dtype == np.int8 and a.shape == (2, 3, 4)
    assert a.ctypes.data == q.storage().data_ptr()
    assert np.shares_memory(a, q.storage().numpy())
    ints = np.arange(12, dtype=np.uint8).reshape(3, 4)
    w = qrt.from_int_repr(ints, 0.5, 2)
    assert w.dtype is qrt.quint8 and np.shares_memory(w.int_repr(), ints)
    ints[0, 0] = 200
    assert w.int_repr()[0, 0] == 200
    i32 = np.arange(12, dtype=np.int32).reshape(3, 4)
    wc = qrt.from_int_repr_per_channel(i32, [1.0, 2.0, 3.0, 4.0], [0, 1, 2, 3], 1)
    assert wc.dtype is qrt.qint32 and np.shares_memory(wc.int_repr(), i32)
    assert_bits_equal(wc.dequantize(), ((i32 - np.array([0, 1, 2, 3])) *
                                        np.array([1.0, 2.0, 3.0, 4.0])).astype(np.float32))


def test_dtype_and_qscheme_objects():
    assert (qrt.quint8.itemsize, qrt.quint8.qmin, qrt.quint8.qmax) == (1, 0, 255)
    assert (qrt.qint8.itemsize, qrt.qint8.qmin, qrt.qint8.qmax) == (1, -128, 127)
    assert (qrt.qint32.itemsize, qrt.qint32.qmin, qrt.qint32.qmax) == (4, -(2**31), 2**31 - 1)
    assert qrt.quint8.numpy_dtype == np.uint8 and qrt.qint32.numpy_dtype == np.int32
    import pickle

    assert pickle.loads(pickle.dumps(qrt.qint8)) is qrt.qint8
    assert pickle.loads(pickle.dumps(qrt.per_channel_affine)) is qrt.per_channel_affine
    assert _tensor.as_dtype("torch.quint8") is qrt.quint8


# ---- bad arguments -------------------------------------------------------------------------------
X = np.zeros(4, np.float32)


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan"), float("inf"), -float("inf"), 1e-46,
                                   1e39, 1e-39])
def test_bad_scale_is_refused(scale):
    """torch accepts scale <= 0 (and garbage like 1e-39, whose reciprocal is inf); qrt refuses."""
    with pytest.raises(ValueError, match="scale"):
        qrt.quantize_per_tensor(X, scale, 0, qrt.quint8)
    with pytest.raises(ValueError, match="scales"):
        qrt.quantize_per_channel(X, [scale], [0], 0, qrt.quint8)
    with pytest.raises(ValueError, match="scale"):
        qrt.from_int_repr(np.zeros(3, np.uint8), scale, 0)


def test_bad_arguments_name_the_argument():
    with pytest.raises(TypeError, match="scale"):
        qrt.quantize_per_tensor(X, "0.1", 0, qrt.quint8)
    with pytest.raises(ValueError, match="zero_point"):
        qrt.quantize_per_tensor(X, 0.1, 256, qrt.quint8)
    with pytest.raises(ValueError, match="zero_point"):
        qrt.quantize_per_tensor(X, 0.1, -129, qrt.qint8)
    with pytest.raises(ValueError, match="zero_point"):
        qrt.quantize_per_tensor(X, 0.1, 2**31, qrt.qint32)
    with pytest.raises(TypeError, match="zero_point"):
        qrt.quantize_per_tensor(X, 0.1, 1.5, qrt.quint8)
    with pytest.raises(TypeError, match="dtype"):
        qrt.quantize_per_tensor(X, 0.1, 0, np.uint8)
    with pytest.raises(ValueError, match="dtype"):
        qrt.quantize_per_tensor(X, 0.1, 0, "quint4x2")
    with pytest.raises(TypeError, match="input"):
        qrt.quantize_per_tensor(np.zeros(3, np.int32), 0.1, 0, qrt.quint8)
    with pytest.raises(TypeError, match="input"):
        qrt.quantize_per_tensor(["a"], 0.1, 0, qrt.quint8)
    x2 = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="axis"):
        qrt.quantize_per_channel(x2, [1.0] * 3, [0] * 3, 2, qrt.quint8)
    with pytest.raises(ValueError, match="axis"):
        qrt.quantize_per_channel(x2, [1.0] * 2, [0] * 2, -3, qrt.quint8)
    with pytest.raises(TypeError, match="axis"):
        qrt.quantize_per_channel(x2, [1.0] * 2, [0] * 2, 0.0, qrt.quint8)
    with pytest.raises(ValueError, match="one entry per channel"):
        qrt.quantize_per_channel(x2, [1.0] * 3, [0] * 2, 1, qrt.quint8)
    with pytest.raises(ValueError, match="one entry per channel"):
        qrt.quantize_per_channel(x2, [1.0] * 2, [0] * 2, 1, qrt.quint8)
    with pytest.raises(ValueError, match="zero_points"):
        qrt.quantize_per_channel(x2, [1.0] * 3, [0, 300, 0], 1, qrt.quint8)
    with pytest.raises(TypeError, match="zero_points"):
        qrt.quantize_per_channel(x2, [1.0] * 3, [0, 0.5, 0], 1, qrt.quint8)
    with pytest.raises(ValueError, match="1-d"):
        qrt.quantize_per_channel(x2, [[1.0] * 3], [0] * 3, 1, qrt.quint8)
    with pytest.raises(ValueError, match="1-d"):
        qrt.quantize_per_channel(np.float32(1), [1.0], [0], 0, qrt.quint8)
    with pytest.raises(TypeError, match="from_int_repr"):
        qrt.from_int_repr(np.zeros(3, np.int64), 0.1, 0)
    with pytest.raises(TypeError, match="from_int_repr"):
        qrt.from_int_repr(np.zeros(3, np.uint8), 0.1, 0, qrt.qint8)
    with pytest.raises(TypeError, match="QTensor"):
        qrt.dequantize(np.zeros(3))
    q = qrt.quantize_per_tensor(X, 0.1, 0, qrt.quint8)
    with pytest.raises(ValueError, match="per-channel"):
        q.q_per_channel_scales()
    qc = qrt.quantize_per_channel(x2, [1.0] * 3, [0] * 3, 1, qrt.quint8)
    with pytest.raises(ValueError, match="per-tensor"):
        qc.q_scale()


def test_specials_constant_matches_cases():
    assert np.isnan(SPECIALS).sum() >= 4 and np.signbit(SPECIALS[1])


# ---- the same integers on aarch64 and armv7 (cross-compiled, run under qemu-user) ----------------
_CROSS = {
    "aarch64": ("aarch64-linux-gnu-gcc", "qemu-aarch64", []),
    "armv7": ("arm-linux-gnueabihf-gcc", "qemu-arm",
              ["-march=armv7-a", "-mfpu=neon-vfpv4", "-mfloat-abi=hard"]),
}


def _expected_harness_output(x, inv, zpf, scale, scale_d, zp, q8, q32):
    """What tests/c/quant_harness.c must print: this machine's kernels (== torch)."""
    n = x.size
    zu, zs = float(min(max(zpf, 0), 255)), float(min(max(zpf, -128), 127))
    fu8, fs8 = np.empty(n, np.uint8), np.empty(n, np.int8)
    _quant.quantize_fma_u8(x, fu8, inv, zu, 0, 255)
    _quant.quantize_fma_s8(x, fs8, inv, zs, -128, 127)
    xr = x.reshape(1, 1, n)
    outs = [fu8, fs8]
    for t, z, lo, hi in ((np.uint8, zu, 0, 255), (np.int8, zs, -128, 127),
                         (np.int32, zpf, -(2**31), 2**31 - 1)):
        o = np.empty((1, 1, n), t)
        _quant.quantize_rows(xr, o, np.array([inv], np.float32), np.array([z], np.float32),
                             lo, hi)
        outs.append(o)
    for q, z in ((q8, zu), (q8.view(np.int8), zs), (q32, zp)):
        o = np.empty(q.size, np.float32)
        _quant.dequantize_tensor(q, o, scale, int(z))
        outs.append(o)
    for q, z in ((q8, zu), (q8.view(np.int8), zs), (q32, zpf)):
        o = np.empty((1, 1, q.size), np.float32)
        _quant.dequantize_rows(q.reshape(1, 1, -1), o, np.array([scale_d]),
                               np.array([z], np.float32))
        outs.append(o)
    return b"".join(a.tobytes() for a in outs)


@pytest.mark.parametrize("arch", list(_CROSS))
def test_cross_platform_kernels_match(tmp_path, rng, arch):
    """quant.h compiled for aarch64 (src/quant.c's NEON fused quantize: fmla, fminnm, fcvtns;
    the rest auto-vectorised: fmla, frintx) and armv7 (VFPv4: vfma),
    with qrt's flags, gives byte-identical results to this machine's build.  Skipped unless
    the cross compiler and qemu-user are installed.  With -ffp-contract=fast it fails."""
    import shutil
    import struct
    import subprocess

    cc, qemu, flags = _CROSS[arch]
    if os.environ.get("QRT_UNDER_QEMU"):
        pytest.skip("a host-side cross check; it runs in the x86-64 suite")
    if not (shutil.which(cc) and shutil.which(qemu)):
        pytest.skip(f"needs {cc} and {qemu}")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # no target libc headers are needed: math.h maps to the compiler builtins, as a hosted
    # build's fmaf/rintf are
    (tmp_path / "math.h").write_text("#define fmaf __builtin_fmaf\n"
                                     "#define rintf __builtin_rintf\n")
    exe = tmp_path / f"harness-{arch}"
    r = subprocess.run([cc, "-std=c11", "-O3", "-ffp-contract=off", "-ffreestanding",
                        "-nostdlib", "-static", "-fno-stack-protector", *flags,
                        "-I", os.path.join(root, "include"), "-I", str(tmp_path),
                        os.path.join(root, "tests", "c", "quant_harness.c"), "-o", str(exe),
                        "-lgcc"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for i in range(4):
        scale = 2.0**-5 if i % 2 else float(np.exp(rng.uniform(-8, 2)))
        zp = int(rng.integers(-200, 300))
        x = hard_values(rng, scale, zp, 20_000)
        s = np.float32(scale)
        inv = np.float32(1) / s
        q8 = np.arange(256, dtype=np.uint8)
        q32 = np.concatenate([np.array([-(2**31), 2**31 - 1], np.int32),
                              rng.integers(-(2**31), 2**31, 998).astype(np.int32)])
        inp = (struct.pack("<IIfffdi", x.size, q32.size, inv, float(zp), s, scale, zp)
               + x.tobytes() + q8.tobytes() + q32.tobytes())
        out = subprocess.run([qemu, str(exe)], input=inp, capture_output=True, timeout=120)
        assert out.returncode == 0, out.stderr
        want = _expected_harness_output(x, inv, np.float32(zp), s, scale, zp, q8, q32)
        assert len(out.stdout) == len(want)
        ndiff = sum(a != b for a, b in zip(out.stdout, want))
        assert out.stdout == want, f"{arch}: differs in {ndiff} bytes"

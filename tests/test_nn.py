# SPDX-License-Identifier: Apache-2.0
"""qrt.nn layers: the model-loader contract (packed_arrays / config / from_packed), out=, caches."""

import json
import threading

import numpy as np
import pytest

import oracle
import qrt
from qrt import nn


def _qw(rng, shape, per_channel=True, asym=False):
    w = rng.integers(-128, 128, shape, dtype=np.int8)
    if per_channel:
        zp = rng.integers(-5, 6, shape[0]) if asym else np.zeros(shape[0], np.int64)
        return qrt.from_int_repr_per_channel(w, rng.uniform(0.001, 0.03, shape[0]), zp, 0)
    return qrt.from_int_repr(w, 0.0123, 3 if asym else 0)


def _layers(rng):
    conv = nn.Conv1d(6, 8, 3, stride=2, padding=1, dilation=2, groups=2)
    conv.scale, conv.zero_point = 0.11, 90
    conv.set_weight_bias(_qw(rng, (8, 3, 3)), rng.standard_normal(8).astype(np.float32))
    crelu = nn.ConvReLU1d(4, 4, 5, padding="same")
    crelu.scale, crelu.zero_point = 0.07, 130
    crelu.set_weight_bias(_qw(rng, (4, 4, 5), per_channel=False, asym=True), None)
    dw = nn.Conv1d(5, 10, 3, padding=1, groups=5)
    dw.scale, dw.zero_point = 0.2, 10
    dw.set_weight_bias(_qw(rng, (10, 1, 3), asym=True), rng.standard_normal(10).astype(np.float32))
    lin = nn.Linear(20, 7)
    lin.scale, lin.zero_point = 0.3, 128
    lin.set_weight_bias(_qw(rng, (7, 20)), rng.standard_normal(7).astype(np.float32))
    lrelu = nn.LinearReLU(20, 7, bias=False)
    lrelu.scale, lrelu.zero_point = 0.3, 128
    lrelu.set_weight_bias(_qw(rng, (7, 20), per_channel=False), None)
    dyn = nn.DynamicLinear(20, 7)
    dyn.set_weight_bias(_qw(rng, (7, 20), asym=True), rng.standard_normal(7).astype(np.float32))
    return [(conv, (2, 6, 30)), (crelu, (1, 4, 17)), (dw, (2, 5, 40)), (lin, (3, 20)),
            (lrelu, (2, 2, 20)), (dyn, (4, 20))]


def _input(rng, layer, shape):
    if isinstance(layer, nn.DynamicLinear):
        return rng.standard_normal(shape).astype(np.float32)
    return qrt.from_int_repr(rng.integers(0, 256, shape, dtype=np.uint8), 0.04, 120)


def _result(y):
    return y if isinstance(y, np.ndarray) else y.int_repr()


def test_nn_from_packed_roundtrip_readonly_no_copy():
    rng = np.random.default_rng(0)
    for layer, shape in _layers(rng):
        x = _input(rng, layer, shape)
        want = _result(layer(x)).copy()
        cfg = json.loads(json.dumps(layer.config()))  # plain scalars / lists / strings only
        arrays = {}
        for k, a in layer.packed_arrays().items():
            assert a.flags.c_contiguous, k
            ro = a.copy()
            ro.flags.writeable = False
            arrays[k] = ro
        m2 = type(layer).from_packed(cfg, arrays)
        for k, a in m2.packed_arrays().items():
            assert np.shares_memory(a, arrays[k]), f"{type(layer).__name__}: {k} was copied"
        for variant in (0, -1):
            m2._variant = variant
            np.testing.assert_array_equal(_result(m2(x)), want)
        assert m2.output_shape(shape) == want.shape
        assert m2.macs(shape) == layer.macs(shape) > 0


def test_nn_from_packed_validates():
    rng = np.random.default_rng(1)
    layer, _ = _layers(rng)[0]
    cfg, arrays = layer.config(), dict(layer.packed_arrays())
    with pytest.raises(ValueError, match="kind"):
        nn.Linear.from_packed(cfg, arrays)
    bad = dict(arrays)
    del bad["weight_sum"]
    with pytest.raises(ValueError, match="weight_sum"):
        nn.Conv1d.from_packed(cfg, bad)
    bad = dict(arrays, weight_packed=arrays["weight_packed"][:-4])
    with pytest.raises(ValueError, match="weight_packed"):
        nn.Conv1d.from_packed(cfg, bad)
    bad = dict(arrays, weight_scale=arrays["weight_scale"].astype(np.float32))
    with pytest.raises(TypeError, match="weight_scale"):
        nn.Conv1d.from_packed(cfg, bad)
    with pytest.raises(ValueError, match="packing"):
        nn.Conv1d.from_packed(dict(cfg, packing="other"), arrays)
    with pytest.raises(ValueError, match="packed_layout"):
        nn.Conv1d.from_packed(dict(cfg, packed_layout=[1, 1, 1]), arrays)


def test_nn_weight_and_bias_accessors():
    rng = np.random.default_rng(2)
    w = _qw(rng, (4, 2, 3), asym=True)
    b = rng.standard_normal(4).astype(np.float32)
    m = nn.Conv1d(2, 4, 3)
    m.set_weight_bias(w, b)
    w2 = m.weight()
    np.testing.assert_array_equal(w2.int_repr(), w.int_repr())
    np.testing.assert_array_equal(w2.q_per_channel_scales(), w.q_per_channel_scales())
    np.testing.assert_array_equal(w2.q_per_channel_zero_points(), w.q_per_channel_zero_points())
    np.testing.assert_array_equal(m.bias(), b)
    lin = nn.Linear(3, 2, bias=False)
    wt = qrt.from_int_repr(np.arange(6, dtype=np.int8).reshape(2, 3), 0.5, -1)
    lin.set_weight_bias(wt, None)
    assert lin.weight().shape == (2, 3) and lin.weight().q_scale() == 0.5
    assert lin.weight().q_zero_point() == -1 and lin.bias() is None
    assert lin.config()["weight_qscheme"] == "per_tensor_affine"


def test_nn_out_argument_and_cache():
    rng = np.random.default_rng(3)
    for layer, shape in _layers(rng):
        x = _input(rng, layer, shape)
        want = _result(layer(x)).copy()
        oshape = layer.output_shape(shape)
        if isinstance(layer, nn.DynamicLinear):
            out = np.zeros(oshape, np.float32)
        else:
            out = qrt.from_int_repr(np.zeros(oshape, np.uint8), layer.scale, layer.zero_point)
        assert layer(x, out=out) is out
        np.testing.assert_array_equal(_result(out), want)
        if not isinstance(layer, nn.DynamicLinear):
            assert len(layer._cache) == 1  # requant constants cached per input scale
            bq, rs = layer._cache[0.04]
            layer(x)
            assert layer._cache[0.04][0] is bq


def test_nn_requant_depends_on_input_scale():
    rng = np.random.default_rng(4)
    m = nn.Conv1d(3, 2, 1)
    m.scale, m.zero_point = 0.1, 128
    w = _qw(rng, (2, 3, 1))
    b = rng.standard_normal(2).astype(np.float32)
    m.set_weight_bias(w, b)
    xi = rng.integers(0, 256, (1, 3, 9), dtype=np.uint8)
    for s in (0.01, 0.02, 0.013):
        want = oracle.conv1d(xi, s, 100, w.int_repr(), w.q_per_channel_scales(),
                             w.q_per_channel_zero_points(), b, 0.1, 128)
        np.testing.assert_array_equal(m(qrt.from_int_repr(xi, s, 100)).int_repr(), want)
    assert len(m._cache) == 3


def test_nn_threads_share_a_layer():
    rng = np.random.default_rng(5)
    m = nn.Conv1d(16, 16, 3, padding=1)
    m.scale, m.zero_point = 0.3, 128
    m.set_weight_bias(_qw(rng, (16, 16, 3)), None)
    x = qrt.from_int_repr(rng.integers(0, 256, (2, 16, 500), dtype=np.uint8), 0.05, 128)
    want = m(x).int_repr().copy()
    errors = []

    def work():
        for _ in range(20):
            if not np.array_equal(m(x).int_repr(), want):
                errors.append(1)

    ts = [threading.Thread(target=work) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_nn_shapes_and_macs():
    m = nn.Conv1d(64, 128, 3, stride=2, padding=1, dilation=2, groups=4)
    assert m.output_shape((8, 64, 100)) == (8, 128, 49)
    assert m.output_shape((64, 100)) == (128, 49)
    assert m.macs((8, 64, 100)) == 8 * 128 * 49 * 16 * 3
    lin = nn.Linear(10, 4)
    assert lin.output_shape((2, 3, 10)) == (2, 3, 4)
    assert lin.macs((2, 3, 10)) == 6 * 40
    with pytest.raises(ValueError, match="channels"):
        m.output_shape((8, 63, 100))
    with pytest.raises(ValueError, match="too short"):
        m.output_shape((8, 64, 2))
    with pytest.raises(ValueError):
        lin.output_shape((2, 11))


def test_nn_constructor_errors():
    with pytest.raises(ValueError, match="in_channels"):
        nn.Conv1d(0, 4, 3)
    with pytest.raises(TypeError, match="kernel_size"):
        nn.Conv1d(4, 4, 2.5)
    with pytest.raises(NotImplementedError):
        nn.Conv1d(4, 4, 3, padding_mode="replicate")
    with pytest.raises(ValueError, match="kernel_size"):
        nn.Conv1d(4, 4, (3, 3))


def test_nn_output_qparams_validated_at_call():
    m = nn.Conv1d(2, 2, 1)
    m.set_weight_bias(qrt.from_int_repr(np.ones((2, 2, 1), np.int8), 0.1, 0), None)
    x = qrt.from_int_repr(np.ones((1, 2, 4), np.uint8), 0.1, 0)
    m.scale, m.zero_point = 0.0, 0
    with pytest.raises(ValueError, match="scale"):
        m(x)
    m.scale, m.zero_point = 0.1, 300
    with pytest.raises(ValueError, match="zero_point"):
        m(x)
    m.zero_point = 3
    assert m(x).q_zero_point() == 3


def test_nn_dynamic_linear_reuses_plan_across_inputs():
    rng = np.random.default_rng(6)
    w = _qw(rng, (9, 33), asym=True)
    b = rng.standard_normal(9).astype(np.float32)
    m = nn.DynamicLinear(33, 9)
    m.set_weight_bias(w, b)
    for i in range(4):
        xf = (rng.standard_normal((5, 33)) * (i + 1) + i).astype(np.float32)
        s, z = nn.choose_qparams(float(xf.min()), float(xf.max()))
        xq = qrt.quantize_per_tensor(xf, s, z, qrt.quint8).int_repr()
        want = oracle.linear_dynamic_from_q(xq, s, z, w.int_repr(), w.q_per_channel_scales(),
                                            w.q_per_channel_zero_points(), b)
        np.testing.assert_array_equal(m(xf).view(np.int32), want.view(np.int32))
    assert len(m._plans) == 1


def test_nn_packed_weight_only_where_read():
    """Only the AVX-512 VNNI conv1d kernels read the quad-packed weight, so a layer keeps one
    only where that variant runs (on an Arm or AVX2-only CPU the plan gets an empty one and no
    copy of the weight is made); packed_arrays() still gives it, packed on demand, equal to
    pack_weights' bytes, and the sums equal pack_weights' sums.  Run here and again with
    QRT_DISABLE_ISA=avx512vnni in a child process (the kernels without it)."""
    import os
    import subprocess
    import sys
    code = """if 1:
    import numpy as np, qrt
    from qrt import _conv1d, nn
    import test_nn
    rng = np.random.default_rng(5)
    vnni = any(_conv1d.ISA_NAMES[v] == "avx512vnni" for v in _conv1d.variants())
    for layer, shape in test_nn._layers(rng):
        assert (layer._wpack is not None) == vnni, type(layer)
        x = test_nn._input(rng, layer, shape)
        got = test_nn._result(layer(x)).copy()
        w3 = layer._w
        wp = np.empty(_conv1d.packed_weight_size(w3.shape[0], w3.shape[1], w3.shape[2]),
                      np.int8)
        ws = np.empty(w3.shape[0], np.int32)
        _conv1d.pack_weights(w3, wp, ws)
        np.testing.assert_array_equal(layer._wsum, ws)
        arrays = layer.packed_arrays()
        np.testing.assert_array_equal(arrays["weight_packed"], wp)
        layer._variant = 0  # the reference kernel
        np.testing.assert_array_equal(test_nn._result(layer(x)), got)
    print("ok", vnni)
"""
    here = os.path.dirname(os.path.abspath(__file__))
    for env in ({}, {"QRT_DISABLE_ISA": "avx512vnni"}):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={**os.environ, **env, "PYTHONPATH": here + os.pathsep +
                                os.environ.get("PYTHONPATH", "")}, timeout=300)
        assert r.returncode == 0 and r.stdout.startswith("ok"), r.stdout + r.stderr[-2000:]

# SPDX-License-Identifier: Apache-2.0
"""qrt.load / qrt.Model without torch: arena, batch sizes, I/O checks, no allocation, no torch."""

import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import qrt
from qrt_export import BlobBuilder

DATA = os.path.join(os.path.dirname(__file__), "data")
DEMO = os.path.join(os.path.dirname(qrt.__file__), "data", "demo.bin")


def _conv_layer(rng, c_in, c_out, k, relu=False, **kw):
    cls = qrt.nn.ConvReLU1d if relu else qrt.nn.Conv1d
    m = cls(c_in, c_out, k, **kw)
    g = kw.get("groups", 1)
    w = rng.integers(-127, 128, (c_out, c_in // g, k)).astype(np.int8)
    m.set_weight_bias(qrt.from_int_repr_per_channel(w, rng.uniform(0.002, 0.01, c_out),
                                                    np.zeros(c_out, np.int64), 0, qrt.qint8),
                      rng.standard_normal(c_out).astype(np.float32))
    m.scale, m.zero_point = 0.05, 3
    return m


def conv_blob(path, batch=2, relu=True):
    """quantize -> conv(+relu) -> conv (depthwise, dilated) -> flatten -> linear -> dequantize."""
    rng = np.random.default_rng(0)
    b = BlobBuilder()
    x = b.activation("x", "float32", (batch, 4, 20), batched=True)
    q = b.activation("xq", "quint8", (batch, 4, 20), batched=True, scale=0.03, zero_point=128)
    c1 = _conv_layer(rng, 4, 8, 3, relu=relu, padding=1)
    c2 = _conv_layer(rng, 8, 8, 3, groups=8, dilation=2, padding=2)
    h1 = b.activation("h1", "quint8", (batch, 8, 20), batched=True, scale=c1.scale,
                      zero_point=c1.zero_point)
    h2 = b.activation("h2", "quint8", (batch, 8, 20), batched=True, scale=c2.scale,
                      zero_point=c2.zero_point)
    f = b.activation("f", "quint8", (batch, 160), batched=True, scale=c2.scale,
                     zero_point=c2.zero_point)
    lin = qrt.nn.Linear(160, 5)
    lin.set_weight_bias(qrt.from_int_repr(rng.integers(-127, 128, (5, 160)).astype(np.int8),
                                          0.004, 0, qrt.qint8), np.zeros(5, np.float32))
    lin.scale, lin.zero_point = 0.1, 128
    o = b.activation("o", "quint8", (batch, 5), batched=True, scale=0.1, zero_point=128)
    y = b.activation("y", "float32", (batch, 5), batched=True)
    b.op("quantize", "q", [x], [q])
    for mod, src, dst in ((c1, q, h1), (c2, h1, h2)):
        attrs, arrs = qrt.ops.get("conv1d").encode(mod)
        params = [b.constant(f"conv{dst}.{k}", a) for k, a in arrs.items()]
        b.op("conv1d", f"conv{dst}", [src], [dst], params, attrs)
    b.op("flatten", "flat", [h2], [f], attrs={"start_dim": 1})
    attrs, arrs = qrt.ops.get("linear").encode(lin)
    params = [b.constant(f"fc.{k}", a) for k, a in arrs.items()]
    b.op("linear", "fc", [f], [o], params, attrs)
    b.op("dequantize", "dq", [o], [y])
    b.inputs, b.outputs = [x], [y]
    b.write(path)
    return (c1, c2, lin)


def reference(mods, x):
    c1, c2, lin = mods
    q = qrt.quantize_per_tensor(x, 0.03, 128, qrt.quint8)
    h = c2(c1(q))
    return lin(h.reshape(h.shape[0], -1)).dequantize()


@pytest.fixture(scope="module")
def conv_model(tmp_path_factory):
    p = tmp_path_factory.mktemp("m") / "conv.bin"
    mods = conv_blob(p)
    return qrt.load(p), mods


@pytest.mark.parametrize("batch", [1, 2, 3, 8])
def test_loader_runs_any_batch_equal_to_layers(conv_model, batch):
    m, mods = conv_model
    x = np.random.default_rng(batch).standard_normal((batch, 4, 20)).astype(np.float32)
    np.testing.assert_array_equal(m(x), reference(mods, x))
    assert m.arena_nbytes_for(batch) > 0


def test_loader_arena_smaller_than_sum_of_activations(conv_model):
    m, _ = conv_model
    total = sum(int(np.prod(t.shape)) * t.np_dtype.itemsize for t in m.tensors
                if t.kind == "activation")
    assert 0 < m.arena_nbytes < total
    assert m.weights_nbytes == sum(t.nbytes for t in m.tensors if t.kind == "constant")


def test_loader_weights_are_views_of_the_mapping(conv_model):
    m, _ = conv_model
    for t in m.tensors:
        if t.kind == "constant" and t.nbytes:
            assert not t.array.flags.writeable and not t.array.flags.owndata


def test_loader_no_allocation_per_call(conv_model):
    m, _ = conv_model
    x = np.random.default_rng(0).standard_normal((2, 4, 20)).astype(np.float32)
    tracemalloc.start()
    try:
        # Python/numpy/Cython keep small internal caches that fill during the first calls
        # (a few thousand on some builds); after that, a window of calls must not grow.
        for _ in range(1500):
            m(x)
        growth = []
        for _ in range(12):
            cur0, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            for _ in range(500):
                m(x)
            cur1, peak = tracemalloc.get_traced_memory()
            growth.append(cur1 - cur0)
            if cur1 - cur0 < 4096:
                break
    finally:
        tracemalloc.stop()
    assert growth[-1] < 4096, f"memory grows with calls: {growth} B per 500 calls"
    # A call allocates its output array and a few small argument objects: no activation
    # buffers (those live in the arena, planned once).
    assert peak - cur0 < 16384, f"peak {peak - cur0} B above steady state"


def test_loader_input_checks(conv_model):
    m, _ = conv_model
    # another length reaches the linear layer with 168 features: the first op that refuses
    # the shape is named
    with pytest.raises(ValueError, match=r"op 4 linear 'fc' cannot take input shape.*160"):
        m(np.zeros((2, 4, 21), np.float32))
    with pytest.raises(ValueError, match=r"input 'x': expected shape \(N, 4, 20\)"):
        m(np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="float32"):
        m(np.zeros((2, 4, 20), np.float64))
    with pytest.raises(TypeError, match="1 input"):
        m()


def test_loader_specs_and_summary(conv_model):
    m, _ = conv_model
    (i,), (o,) = m.inputs, m.outputs
    assert (i.name, i.shape, i.dtype, i.qparams) == ("x", (None, 4, 20), "float32", None)
    assert (o.name, o.shape, o.dtype) == ("y", (None, 5), "float32")
    s = m.summary()
    for word in ("conv1d+relu", "linear", "MACs", "(2, 8, 20)"):
        assert word in s
    assert m.macs(1) == 8 * 20 * 4 * 3 + 8 * 20 * 3 + 160 * 5


def test_loader_quantized_io(tmp_path):
    b = BlobBuilder()
    x = b.activation("x", "quint8", (1, 6), scale=0.5, zero_point=7)
    y = b.activation("y", "quint8", (6,), scale=0.5, zero_point=7)
    b.op("reshape", "r", [x], [y])
    b.inputs, b.outputs = [x], [y]
    b.write(tmp_path / "q.bin")
    m = qrt.load(tmp_path / "q.bin")
    xin = qrt.from_int_repr(np.arange(6, dtype=np.uint8).reshape(1, 6), 0.5, 7)
    out = m(xin)
    assert isinstance(out, qrt.QTensor) and out.shape == (6,)
    np.testing.assert_array_equal(out.int_repr(), np.arange(6))
    with pytest.raises(ValueError, match="scale"):
        m(qrt.from_int_repr(np.zeros((1, 6), np.uint8), 0.25, 7))


def test_loader_never_imports_torch(tmp_path):
    p = tmp_path / "conv.bin"
    conv_blob(p)
    code = ("import sys, numpy as np, qrt, qrt_export; m = qrt.load(sys.argv[1]); "
            "y = m(np.zeros((3, 4, 20), np.float32)); "
            "assert 'torch' not in sys.modules, 'torch imported'; print(y.shape)")
    r = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "(3, 5)" in r.stdout


@pytest.mark.skipif(not os.path.exists(DEMO), reason="demo.bin not built")
def test_loader_demo_golden():
    """Torch-free end to end: the shipped demo.bin equals torch (qnnpack) on a stored golden."""
    g = np.load(os.path.join(DATA, "demo_golden.npz"))
    m = qrt.load(DEMO)
    y = m(g["x"])
    scale = m.ops[-1] and m.tensors[m.ops[-1].inputs[0]].scale
    lsb = np.abs(y.astype(np.float64) - g["y"]) / scale
    assert (lsb == 0).mean() >= 0.999 and lsb.max() <= 1.0 + 1e-6
    np.testing.assert_array_equal(y, g["y"])


def test_R22_module_output_shape_mismatch(tmp_path):
    """A conv whose stored output length disagrees with its geometry is refused at load."""
    import qrt_export._writer as W
    orig = W.BlobBuilder.activation

    def lying(self, name, dtype, shape, **kw):
        if name == "h1":
            shape = (shape[0], shape[1], shape[2] + 1)
        return orig(self, name, dtype, shape, **kw)
    W.BlobBuilder.activation = lying
    try:
        conv_blob(tmp_path / "bad.bin")
    finally:
        W.BlobBuilder.activation = orig
    with pytest.raises(qrt.FormatError) as ei:
        qrt.load(tmp_path / "bad.bin")
    assert ei.value.rule == "R22" and ei.value.op == 1, str(ei.value)


def test_R21_op_refuses_attributes(tmp_path):
    b = BlobBuilder()
    x = b.activation("x", "quint8", (1, 2, 8), batched=True, scale=0.1, zero_point=3)
    y = b.activation("y", "quint8", (1, 2, 4), batched=True, scale=0.1, zero_point=3)
    b.op("max_pool1d", "mp", [x], [y], attrs={"kernel_size": 2, "stride": 2, "padding": 0,
                                              "bogus": 1})
    b.inputs, b.outputs = [x], [y]
    b.write(tmp_path / "p.bin")
    with pytest.raises(qrt.FormatError) as ei:
        qrt.load(tmp_path / "p.bin")
    # R25: attributes are checked against the op's schema (qrt/ops) before any kernel runs
    assert ei.value.rule == "R25" and ei.value.op == 0 and "bogus" in str(ei.value)

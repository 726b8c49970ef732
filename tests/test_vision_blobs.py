# SPDX-License-Identifier: Apache-2.0
"""conv2d / 2-d pool ops in blobs (torch-free): a good file runs as qrt.nn does; hostile
attributes, weights and shapes are FormatErrors naming the op."""

import numpy as np
import pytest

import qrt
from qrt_export import BlobBuilder

from _blobs import load


def _conv(rng, ci=4, co=6, k=(3, 3), **kw):
    m = qrt.nn.Conv2d(ci, co, k, **kw)
    g = kw.get("groups", 1)
    w = rng.integers(-127, 128, (co, ci // g) + k).astype(np.int8)
    m.set_weight_bias(qrt.from_int_repr_per_channel(w, rng.uniform(0.002, 0.01, co),
                                                    np.zeros(co, np.int64), 0, qrt.qint8),
                      rng.standard_normal(co).astype(np.float32))
    m._set_output_qparams(0.05, 7)
    return m


def _blob(kind, attrs, in_shape, out_shape, arrays=None, out_q=(0.05, 7), in_q=(0.03, 128)):
    b = BlobBuilder()
    x = b.activation("x", "float32", in_shape, batched=True)
    q = b.activation("xq", "quint8", in_shape, batched=True, scale=in_q[0],
                     zero_point=in_q[1])
    h = b.activation("h", "quint8", out_shape, batched=True, scale=out_q[0],
                     zero_point=out_q[1])
    y = b.activation("y", "float32", out_shape, batched=True)
    b.op("quantize", "quant", [x], [q])
    params = [b.constant(f"op.{k}", v) for k, v in (arrays or {}).items()]
    b.op(kind, "op", [q], [h], params, attrs)
    b.op("dequantize", "dequant", [h], [y])
    b.inputs, b.outputs = [x], [y]
    return b


def _conv_blob(m, in_shape, attrs=None, arrays=None, out_shape=None):
    a, arrs = qrt.ops.get("conv2d").encode(m)
    a.update(attrs or {})
    arrs.update(arrays or {})
    out = out_shape or m.output_shape(in_shape)
    return _blob("conv2d", a, in_shape, out, arrs)


def test_conv2d_blob_runs_as_qrt_nn(tmp_path):
    rng = np.random.default_rng(0)
    for i, kw in enumerate([dict(stride=2, padding=1), dict(padding=(0, 2), dilation=(2, 1)),
                            dict(groups=4, padding=1, co=8), dict(k=(1, 1))]):
        k, co = kw.pop("k", (3, 3)), kw.pop("co", 6)
        m = _conv(rng, co=co, k=k, **kw)
        mdl = load(tmp_path, _conv_blob(m, (2, 4, 9, 8)), f"m{i}.bin")
        for shape in ((2, 4, 9, 8), (1, 4, 13, 6)):
            x = rng.standard_normal(shape).astype(np.float32)
            xq = qrt.quantize_per_tensor(x, 0.03, 128, qrt.quint8)
            np.testing.assert_array_equal(mdl(x), m(xq).dequantize())
    assert "conv2d" in mdl.summary()


@pytest.mark.parametrize("attrs,arrays,rule,word", [
    ({"padding": [4, 0, 1, 1]}, None, "R26", "padding"),     # beyond the kernel's reach
    ({"stride": [0, 1]}, None, "R25", "stride"),
    ({"dilation": [1]}, None, "R25", "dilation"),
    ({"groups": 3}, None, "R22", "channels"),
    (None, {"weight": np.zeros((6, 4, 9), np.int8)}, "R21", "weight"),
    (None, {"weight_scale": np.full(6, -1.0)}, "R14", "weight_scale"),
])
def test_conv2d_blob_hostile(tmp_path, attrs, arrays, rule, word):
    m = _conv(np.random.default_rng(1), padding=1)
    with pytest.raises(qrt.FormatError) as ei:
        load(tmp_path, _conv_blob(m, (2, 4, 9, 8), attrs, arrays))
    assert ei.value.rule == rule and "conv2d" in str(ei.value) and word in str(ei.value)


def test_conv2d_blob_bad_shapes(tmp_path):
    m = _conv(np.random.default_rng(2))
    # exported shapes that disagree with the op (too small an image, wrong channel count)
    for shape, out in (((2, 4, 2, 8), (2, 6, 1, 6)), ((2, 5, 9, 8), (2, 6, 7, 6))):
        with pytest.raises(qrt.FormatError, match="conv2d"):
            load(tmp_path, _conv_blob(m, shape, out_shape=out))
    mdl = load(tmp_path, _conv_blob(m, (2, 4, 9, 8)))
    with pytest.raises(ValueError, match="conv2d"):
        mdl(np.zeros((2, 4, 2, 2), np.float32))


@pytest.mark.parametrize("kind,attrs,out", [
    ("max_pool2d", {"kernel_size": [3, 3], "stride": [2, 2], "padding": [1, 1]}, (5, 4)),
    ("avg_pool2d", {"kernel_size": [2, 3], "ceil_mode": True, "count_include_pad": False},
     (5, 3)),
    ("adaptive_avg_pool2d", {"output_size": [3, 2]}, (3, 2)),
    ("adaptive_max_pool2d", {"output_size": [2, 5]}, (2, 5)),
])
def test_pool2d_blobs_and_hostile(tmp_path, kind, attrs, out):
    shape = (2, 4, 9, 8)
    q = (0.03, 128)
    mdl = load(tmp_path, _blob(kind, attrs, shape, (2, 4) + out, out_q=q), "ok.bin")
    y = mdl(np.random.default_rng(3).standard_normal(shape).astype(np.float32))
    assert y.shape == (2, 4) + out
    y2 = mdl(np.zeros((1, 4, 20, 17), np.float32))   # any size the op allows
    assert y2.shape[:2] == (1, 4)
    with pytest.raises(qrt.FormatError, match="qparams"):   # output qparams != input's
        load(tmp_path, _blob(kind, attrs, shape, (2, 4) + out, out_q=(0.05, 7)))
    if "kernel_size" in attrs:
        bad = dict(attrs, padding=[2, 0])                     # more than half the kernel
        with pytest.raises(qrt.FormatError, match="padding"):
            load(tmp_path, _blob(kind, bad, shape, (2, 4) + out, out_q=q))
        bad = dict(attrs, kernel_size=[3])                    # one integer
        with pytest.raises(qrt.FormatError, match="kernel_size"):
            load(tmp_path, _blob(kind, bad, shape, (2, 4) + out, out_q=q))

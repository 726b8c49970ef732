# SPDX-License-Identifier: Apache-2.0
"""conv_transpose2d and upsample2d in blobs, torch-free (runs on ARM too): good files run,
hostile attributes / weights are FormatErrors naming what is wrong, shapes an op refuses are
ValueErrors."""

import numpy as np
import pytest

import qrt
from qrt_export import BlobBuilder


def _blob(kind, attrs, in_shape, out_shape, params=None, zp=128):
    b = BlobBuilder()
    x = b.activation("x", "float32", in_shape, batched=True)
    q = b.activation("xq", "quint8", in_shape, batched=True, scale=0.0625, zero_point=zp)
    p = b.activation("p", "quint8", out_shape, batched=True, scale=0.0625, zero_point=zp)
    y = b.activation("y", "float32", out_shape, batched=True)
    ps = [b.constant(f"op.{k}", v) for k, v in (params or {}).items()]
    b.op("quantize", "quant", [x], [q])
    b.op(kind, "op", [q], [p], ps, attrs=attrs)
    b.op("dequantize", "dequant", [p], [y])
    b.inputs, b.outputs = [x], [y]
    return b


def _load(tmp_path, b):
    path = tmp_path / "m.bin"
    path.write_bytes(b.to_bytes())
    return qrt.load(path)


def _ct_params(c_in=4, cout_g=3, k=(3, 3), g=1, seed=0):
    rng = np.random.default_rng(seed)
    c_out = cout_g * g
    return {"weight": rng.integers(-128, 128, (c_in, cout_g) + k).astype(np.int8),
            "weight_scale": np.full(c_out, 0.01), "weight_zero_point": np.zeros(c_out, np.int32),
            "bias": rng.standard_normal(c_out).astype(np.float32)}


CT = {"stride": [2, 2], "padding": [1, 1], "output_padding": [1, 1], "dilation": [1, 1],
      "groups": 1, "weight_qscheme": "per_tensor_affine"}


def _numpy_deconv(xq, w, zp_in, bias, sa, sw, so, zp_out, s, p, op):
    """Oracle: qnnpack's deconvolution sums (scatter form) and its requantization."""
    n, ci, h, wd = xq.shape
    _, co, kh, kw = w.shape
    ho = (h - 1) * s - 2 * p + kh + op
    wo = (wd - 1) * s - 2 * p + kw + op
    full = np.zeros((n, co, (h - 1) * s + kh, (wd - 1) * s + kw), np.int64)
    xc = xq.astype(np.int64) - zp_in
    for i in range(h):
        for j in range(wd):
            full[:, :, i * s:i * s + kh, j * s:j * s + kw] += np.einsum(
                "nc,cokl->nokl", xc[:, :, i, j], w.astype(np.int64))
    acc = full[:, :, p:p + ho, p:p + wo]
    s32 = np.float32(np.float64(sw) * np.float64(sa))
    bq = np.rint((bias.astype(np.float32) * (np.float32(1) / s32)).astype(np.float32))
    rs = np.float32(np.float32(np.float32(sw) * np.float32(sa)) * (np.float32(1) / np.float32(so)))
    v = ((acc + bq[None, :, None, None].astype(np.int64)).astype(np.float32) * rs)
    return np.clip(np.rint(v) + zp_out, 0, 255).astype(np.int64)


def test_conv_transpose2d_blob_equals_numpy_oracle(tmp_path):
    prm = _ct_params()
    b = _blob("conv_transpose2d", CT, (2, 4, 5, 6), (2, 3, 10, 12), prm)
    m = _load(tmp_path, b)
    rng = np.random.default_rng(1)
    xq = rng.integers(0, 256, (2, 4, 5, 6))
    xf = ((xq - 128) * 0.0625).astype(np.float32)
    got = np.rint(m(xf) / np.float32(0.0625) + 128).astype(np.int64)
    want = _numpy_deconv(xq, prm["weight"], 128, prm["bias"], 0.0625, 0.01, 0.0625, 128,
                         2, 1, 1)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("attrs,prm,word", [
    (dict(CT, output_padding=[2, 1]), None, "output_padding"),
    (dict(CT, padding=[9, 1]), None, "crops more"),
    (dict(CT, groups=3), None, "divisible"),
    (dict(CT, stride=[0, 1]), None, "stride"),
    (CT, {"weight": np.zeros((4, 3, 3), np.int8)}, "weight must be"),
    (CT, {"weight_scale": np.full(3, np.inf)}, "weight_scale"),
])
def test_conv_transpose2d_blob_hostile(tmp_path, attrs, prm, word):
    p = _ct_params()
    p.update(prm or {})
    b = _blob("conv_transpose2d", attrs, (2, 4, 5, 6), (2, 3, 10, 12), p)
    with pytest.raises(qrt.FormatError, match=word):
        _load(tmp_path, b)


def test_conv_transpose2d_refuses_bad_shapes(tmp_path):
    m = _load(tmp_path, _blob("conv_transpose2d", CT, (2, 4, 5, 6), (2, 3, 10, 12),
                              _ct_params()))
    with pytest.raises(ValueError, match="channels|input must be"):
        m(np.zeros((1, 5, 5, 6), np.float32))


UP = {"mode": "nearest", "scale_h": 2.0, "scale_w": 2.0}


def test_upsample2d_nearest_is_repeat_and_1x1_scramble(tmp_path):
    m = _load(tmp_path, _blob("upsample2d", UP, (2, 3, 4, 5), (2, 3, 8, 10)))
    x = (np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5) - 60) * np.float32(0.0625)
    np.testing.assert_array_equal(m(x), x.repeat(2, 2).repeat(2, 3))
    # torch's NHWC kernel on a contiguous NCHW 1x1 input: NHWC-ordered codes under NCHW strides
    m1 = _load(tmp_path, _blob("upsample2d", UP, (1, 2, 1, 1), (1, 2, 2, 2)))
    x1 = np.array([1.0, 2.0], np.float32).reshape(1, 2, 1, 1)
    np.testing.assert_array_equal(m1(x1).reshape(-1), [1, 2, 1, 2, 1, 2, 1, 2])
    m2 = _load(tmp_path, _blob("upsample2d", dict(UP, layout="nhwc"), (1, 2, 1, 1),
                               (1, 2, 2, 2)))
    np.testing.assert_array_equal(m2(x1).reshape(-1), [1, 1, 1, 1, 2, 2, 2, 2])


@pytest.mark.parametrize("attrs,word", [
    ({"mode": "nearest"}, "size or both scale"),
    ({"mode": "nearest", "size": [4, 4], "scale_h": 2.0, "scale_w": 2.0}, "size or both"),
    ({"mode": "nearest", "size": [4, 4], "align_corners": True}, "align_corners"),
    ({"mode": "bicubic", "size": [4, 4]}, "mode"),
    ({"mode": "bilinear", "scale_h": -1.0, "scale_w": 2.0}, "scale_h"),
    ({"mode": "bilinear", "size": [0, 4]}, "size"),
])
def test_upsample2d_blob_hostile(tmp_path, attrs, word):
    with pytest.raises(qrt.FormatError, match=word):
        _load(tmp_path, _blob("upsample2d", attrs, (2, 3, 4, 5), (2, 3, 4, 4)))


def test_fmaf_emulation_is_correctly_rounded():
    """qrt.ops.upsample.fmaf == a float32 fused multiply-add (checked against exact rationals
    on cases where the float64 sum is inexact and lands on a float32 tie)."""
    from fractions import Fraction
    from qrt.ops.upsample import fmaf
    rng = np.random.default_rng(0)
    a = rng.standard_normal(3000).astype(np.float32)
    b = rng.standard_normal(3000).astype(np.float32)
    c = rng.standard_normal(3000).astype(np.float32) * np.float32(2.0) ** rng.integers(
        -30, 30, 3000).astype(np.float32)
    # constructed: a*b = 1 + 2^-24 (a tie in float32) plus a tiny c that decides it
    a = np.concatenate([a, np.float32([1 + 2 ** -12] * 2)])
    b = np.concatenate([b, np.float32([1 + 2 ** -12] * 2)])
    c = np.concatenate([c, np.float32([2.0 ** -60, -(2.0 ** -60)])])
    got = fmaf(a, b, c)
    for i in range(len(a)):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        lo = np.float32(float(exact))
        cands = [np.nextafter(lo, np.float32(-np.inf)), lo, np.nextafter(lo, np.float32(np.inf))]
        best = min(cands, key=lambda v: (abs(Fraction(float(v)) - exact),
                                         int(np.array(v).view(np.int32)) & 1))
        assert got[i] == best, i

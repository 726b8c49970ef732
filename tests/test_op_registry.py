# SPDX-License-Identifier: Apache-2.0
"""The op definitions (qrt/ops): pinned blob codes, schemas, hostile attributes (R25), layer
parameter checks (R14), fused activations, and legacy (format 1.0/1.1) layouts.

Blobs are built here with qrt_export.BlobBuilder (torch-free). Equality is exact.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import qrt
import qrt.ops
from qrt.ops import REQUIRED
from qrt_export import BlobBuilder

from _blobs import (RAW, add_layer, conv_blob, conv_layer, linear_layer, load,
                    one_op_blob, raw_attrs)



DEMO = os.path.join(os.path.dirname(qrt.__file__), "data", "demo.bin")

# Blob op codes are append-only: a file written by any qrt keeps its meaning.
PINNED_CODES = {
    "quantize": 1, "dequantize": 2, "conv1d": 3, "conv_relu1d": 4, "linear": 5,
    "linear_relu": 6, "linear_dynamic": 7, "relu": 8, "add": 9, "add_relu": 10,
    "max_pool1d": 11, "avg_pool1d": 12, "adaptive_avg_pool1d": 13, "hardswish": 14,
    "sigmoid": 15, "cat": 16, "flatten": 17, "reshape": 18, "identity": 19, "custom": 20,
    "pad": 21, "permute": 22, "slice": 23, "split": 24, "unsqueeze": 25, "squeeze": 26,
    "view": 27, "mul": 28, "batch_norm": 29, "mean": 31, "lut": 33, "float_gelu": 40,
    "float_silu": 41,
    "float_tanh": 42, "float_sigmoid": 43, "float_elu": 44, "float_leaky_relu": 45,
    "float_hardswish": 46, "float_hardsigmoid": 47, "float_clamp": 48, "float_exp": 49,
    "float_log": 50, "float_sqrt": 51, "float_pow": 52, "float_prelu": 53, "float_add": 60,
    "float_sub": 61, "float_mul": 62, "float_div": 63, "float_matmul": 64,
    "float_softmax": 70, "float_log_softmax": 71, "float_mean": 72, "float_sum": 73,
    "float_layer_norm": 80, "float_group_norm": 81, "float_instance_norm": 82,
    "float_batch_norm": 83, "float_linear": 84, "float_conv1d": 85,
    "float_conv_transpose1d": 86, "float_conv2d": 87,
    "conv_transpose1d": 100, "adaptive_max_pool1d": 101, "embedding": 102,
    "embedding_bag": 103, "qembedding": 104, "qembedding_bag": 105, "padding_mask": 106,
    "layer_norm": 107,
    "conv2d": 110, "max_pool2d": 111, "avg_pool2d": 112, "adaptive_avg_pool2d": 113,
    "adaptive_max_pool2d": 114, "conv_transpose2d": 115, "upsample2d": 116,
    "rnn_dynamic": 130, "rnn_float": 131,
}


def expect_format(tmp_path, b, rule, *words):
    with pytest.raises(qrt.FormatError) as ei:
        load(tmp_path, b)
    e = ei.value
    assert e.rule == rule, str(e)
    for w in words:
        assert w in str(e), (w, str(e))
    return e


# ---- 1. registry -------------------------------------------------------------------------------
def test_op_codes_pinned():
    assert dict(qrt.ops.CODE_OF) == PINNED_CODES
    assert len(set(PINNED_CODES.values())) == len(PINNED_CODES)
    for name, code in PINNED_CODES.items():
        d, implied, raw = qrt.ops.BY_CODE[code]
        assert raw == name and qrt.ops.BY_NAME[name] is d
        assert (d.code == code) == (d.name == name)
    assert set(qrt.ops.kinds()) == {n for n in PINNED_CODES if qrt.ops.BY_NAME[n].name == n}
    for legacy, canon in (("conv_relu1d", "conv1d"), ("linear_relu", "linear"),
                          ("add_relu", "add")):
        d, implied, _ = qrt.ops.BY_CODE[PINNED_CODES[legacy]]
        assert d.name == canon and implied == {"activation": "relu"}


def test_op_definitions_documented_and_defaults_valid():
    seen = set()
    for d in qrt.ops.BY_NAME.values():
        if id(d) in seen:
            continue
        seen.add(id(d))
        assert d.doc.strip(), d.name
        assert d.since >= (1, 0) and d.code > 0
        for k, spec in d.attrs.items():
            if spec.default is REQUIRED:
                continue
            assert spec.check(spec.default) == spec.default, (d.name, k)
        names = [p.name for p in d.params]
        assert len(set(names)) == len(names), d.name
    with pytest.raises(KeyError, match="unknown op kind"):
        qrt.ops.get("conv3d")


def test_op_define_refuses_duplicate_code():
    from qrt.ops import OpDef, define

    class Dup(OpDef):
        name, code, doc = "dup_test_op", 3, "x"
    with pytest.raises(RuntimeError, match="defined twice"):
        define(Dup)
    assert "dup_test_op" not in qrt.ops.BY_NAME and qrt.ops.CODE_OF["conv1d"] == 3


# ---- 2. hostile attributes: FormatError R25 naming op and attribute ----------------------------
HOSTILE_POOL = [
    ("kernel_size", RAW, "1e999"),
    ("kernel_size", 10**30, None),
    ("kernel_size", "3", None),
    ("kernel_size", 2.0, None),
    ("kernel_size", True, None),
    ("kernel_size", RAW, "-0"),
    ("ceil_mode", "yes", None),
    ("ceil_mode", 1, None),
    ("stride", True, None),
    ("stride", RAW, "1e999"),
    ("stride", 0, None),
    ("padding", -1, None),
    ("padding", [1], None),
    ("dilation", RAW, "NaN"),
]


@pytest.mark.parametrize("attr,value,raw", HOSTILE_POOL, ids=lambda v: repr(v)[:20])
def test_R25_hostile_pool_attribute(tmp_path, monkeypatch, attr, value, raw):
    attrs = {"kernel_size": 2, attr: value}
    if raw is not None:
        raw_attrs(monkeypatch, raw)
    b = one_op_blob("max_pool1d", attrs, out_len=8)
    if raw == "NaN":  # NaN is not JSON: the reader refuses the text itself
        expect_format(tmp_path, b, "R17", "NaN")
        return
    expect_format(tmp_path, b, "R25", "max_pool1d", repr(attr))


@pytest.mark.parametrize("attrs,word", [
    ({"kernel_size": 2, "bogus": 1}, "'bogus'"),
    ({}, "'kernel_size'"),
    ({"kernel_size": None}, "'kernel_size'"),
])
def test_R25_unknown_and_missing_attribute(tmp_path, attrs, word):
    expect_format(tmp_path, one_op_blob("max_pool1d", attrs, out_len=8), "R25", "max_pool1d",
                  word)


@pytest.mark.parametrize("attr,value", [
    ("groups", True), ("stride", True), ("dilation", 0), ("padding", [-1, 0]),
    ("padding", 1), ("padding", [1, 1, 1]), ("groups", 10**30), ("activation", "gelu"),
    ("activation", None), ("weight_qscheme", "per_channel_symmetric"),
    ("clamp_min", "0"), ("clamp_max", 10**400), ("clamp_min", RAW), ("bogus", 1),
], ids=lambda v: repr(v)[:20])
def test_R25_hostile_conv_attribute(tmp_path, monkeypatch, attr, value):
    if value == RAW:
        raw_attrs(monkeypatch, "-1e999")
    b, _ = conv_blob(attrs={attr: value, "activation": "clamp"} if attr.startswith("clamp")
                     else {attr: value})
    expect_format(tmp_path, b, "R25", "conv1d", repr(attr))


def test_R25_missing_required_in_legacy_kwargs(tmp_path, monkeypatch):
    """A format-1.1 functional op's kwargs go through the same schema."""
    raw_attrs(monkeypatch, "1e999")
    b = one_op_blob("avg_pool1d", {"kwargs": {"kernel_size": RAW}}, out_len=8)
    b.version = (1, 1)
    expect_format(tmp_path, b, "R25", "avg_pool1d", "'kernel_size'")
    monkeypatch.undo()
    b = one_op_blob("avg_pool1d", {"kwargs": {"stride": 2}}, out_len=8)
    b.version = (1, 1)
    expect_format(tmp_path, b, "R25", "avg_pool1d", "'kernel_size'")


def test_R25_legacy_kind_contradicts_attribute(tmp_path):
    rng = np.random.default_rng(1)
    b, mod = conv_blob(rng=rng)
    b.ops[1].kind = "conv_relu1d"
    b.ops[1].attrs["activation"] = "relu6"
    expect_format(tmp_path, b, "R25", "conv_relu1d", "activation")


@pytest.mark.parametrize("kind,attrs", [
    ("max_pool1d", {"kernel_size": 3, "padding": 2}),
    ("avg_pool1d", {"kernel_size": 4, "padding": 3}),
    ("max_pool1d", {"kernel_size": 1, "padding": 1}),
])
def test_pool_padding_beyond_half_kernel(tmp_path, kind, attrs):
    e = expect_format(tmp_path, one_op_blob(kind, attrs, out_len=16), "R21", kind, "padding")
    assert isinstance(e, qrt.FormatError)


@pytest.mark.parametrize("kind,attrs,lo", [
    ("max_pool1d", {"kernel_size": 2}, 8), ("avg_pool1d", {"kernel_size": 2}, 8),
    ("adaptive_avg_pool1d", {"output_size": 4}, 4)])
@pytest.mark.parametrize("qp", [(0.07, 120), (0.05, 119)])
def test_pool_output_qparams_must_match_input(tmp_path, kind, attrs, lo, qp):
    """defect 5: a pool whose output qparams differ from its input's is a bad file
    (FormatError at load), not a ValueError from the kernel at the first call."""
    from qrt._format.reader import read_blob
    from qrt.executor import Graph
    b = one_op_blob(kind, attrs, out_len=lo, out_scale=qp[0], out_zp=qp[1])
    e = expect_format(tmp_path, b, "R21", kind)
    assert "the output must have the input's dtype and qparams" in str(e)
    # refused by the op's validation (no kernel involved), not by the load-time dry run
    with pytest.raises(qrt.FormatError, match="input's dtype and qparams"):
        Graph(read_blob(tmp_path / "m.bin"))
    # the same pool with matching qparams loads and runs
    m = load(tmp_path, one_op_blob(kind, attrs, out_len=lo), "ok.bin")
    assert m(np.zeros((2, 4, 16), np.float32)).shape == (2, 4, lo)


@pytest.mark.parametrize("k,d,pad,ok", [(3, 1, [3, 3], True), (3, 1, [4, 0], False),
                                        (3, 2, [5, 5], True), (3, 2, [0, 6], False),
                                        (1, 1, [1, 1], True), (1, 1, [2, 0], False)])
def test_R26_conv_padding_bound(tmp_path, k, d, pad, ok):
    rng = np.random.default_rng(2)
    mod = conv_layer(rng, 4, 6, k, dilation=d)
    L = 16
    lo = L + sum(pad) - d * (k - 1)
    b, _ = conv_blob(mod, L=L, attrs={"padding": pad}, out_len=lo)
    if ok:
        m = load(tmp_path, b)
        assert m(np.ones((2, 4, L), np.float32)).shape == (2, 6, lo)
    else:
        expect_format(tmp_path, b, "R26", "conv1d", "padding")


# ---- 3. R14 on layer parameters and activations ------------------------------------------------
@pytest.mark.parametrize("scale", [3.41e38, 3.5e38, 1e300, 1e-46, 5e-324])
def test_R14_activation_scale_unusable_as_float32(tmp_path, scale):
    b, _ = conv_blob()
    b.tensors[2].scale = scale   # the conv output
    expect_format(tmp_path, b, "R14", "scale")


def test_R14_activation_scale_at_float32_max_accepted(tmp_path):
    """3.3e38 is finite in float32 (max 3.4028e38) and so is its reciprocal (a denormal):
    torch.quantize_per_tensor takes it, and so does the reader (3.5e38 is inf: refused)."""
    assert np.isfinite(np.float32(3.3e38)) and np.float32(1) / np.float32(3.3e38) > 0
    b, _ = conv_blob()
    b.tensors[2].scale = 3.3e38
    m = load(tmp_path, b)
    assert m._t[2].scale == 3.3e38


@pytest.mark.parametrize("name,value", [
    ("weight_scale", 1e300), ("weight_scale", 1e-45), ("weight_scale", float("nan")),
    ("weight_scale", 0.0), ("weight_scale", -0.01), ("weight_scale", float("inf")),
    ("bias", float("nan")), ("bias", float("inf")), ("bias", -float("inf")),
    ("weight_zero_point", 200), ("weight_zero_point", -129)])
def test_R14_layer_parameters(tmp_path, name, value):
    rng = np.random.default_rng(3)
    mod = conv_layer(rng, 4, 6, 3, padding=1)
    _, arrs = qrt.ops.get("conv1d").encode(mod)
    a = arrs[name].copy()
    a[2] = value
    b, _ = conv_blob(mod, arrays={name: a})
    expect_format(tmp_path, b, "R14", "conv1d", name)


def test_R14_linear_parameters(tmp_path):
    rng = np.random.default_rng(3)
    lin = linear_layer(rng, 8, 3)
    _, arrs = qrt.ops.get("linear").encode(lin)
    b = BlobBuilder()
    x = b.activation("x", "float32", (1, 8), batched=True)
    q = b.activation("xq", "quint8", (1, 8), batched=True, scale=0.03, zero_point=128)
    o = b.activation("o", "quint8", (1, 3), batched=True, scale=0.1, zero_point=128)
    b.op("quantize", "q", [x], [q])
    add_layer(b, "linear", lin, q, o, "fc",
              arrays={"weight_scale": np.full(3, 1e-45), "weight_zero_point": np.zeros(3,
                                                                                    np.int32)})
    b.inputs, b.outputs = [x], [o]
    expect_format(tmp_path, b, "R14", "linear", "weight_scale")


# ---- 9. fused activations ----------------------------------------------------------------------
def _code(v, scale, zp):
    f32 = np.float32
    return int(min(max(zp + int(np.rint(f32(f32(v) * (f32(1) / f32(scale))))), 0), 255))


@pytest.mark.parametrize("act,lo_hi", [("relu6", (0.0, 6.0)), ("clamp", (-0.4, 0.55)),
                                       ("clamp", (0.1, 0.1)), ("clamp", (-50.0, 50.0)),
                                       ("relu", None)])
def test_fused_activation_equals_clamped_codes(tmp_path, act, lo_hi):
    """What is compared: the output codes of conv1d with a fused ``act`` against the codes of
    the same conv without activation, clipped (numpy) to [code(lo), code(hi)] where
    code(v) = clamp(zp + rint(f32(v * f32(1/scale))), 0, 255) is torch's quantize_val for the
    bound (qnnpack's output_min/output_max); relu clips at the zero point. torch has no fused
    quantized conv-relu6/-clamp to compare with: this pins the definition, plain-conv codes
    themselves being torch-exact (test_conv1d.py)."""
    rng = np.random.default_rng(4)
    scale, zp = 0.01 if act == "clamp" else 0.05, 60
    mod = conv_layer(rng, 4, 8, 3, padding=1, scale=scale, zero_point=zp)
    extra = {"activation": act}
    if act == "clamp":
        extra.update(clamp_min=lo_hi[0], clamp_max=lo_hi[1])
    plain = load(tmp_path, conv_blob(mod, L=24, quant_out=True)[0], "plain.bin")
    fused = load(tmp_path, conv_blob(mod, L=24, attrs=extra, quant_out=True)[0], "fused.bin")
    x = rng.normal(0, 2, (2, 4, 24)).astype(np.float32)
    p = plain(x).int_repr()
    f = fused(x).int_repr()
    lo, hi = (zp, 255) if lo_hi is None else (_code(lo_hi[0], scale, zp),
                                              _code(lo_hi[1], scale, zp))
    want = np.clip(p, lo, hi)
    assert want.dtype == np.uint8
    np.testing.assert_array_equal(f, want)
    assert (p < lo).any() or (p > hi).any() or lo_hi == (-50.0, 50.0)  # the clamp mattered
    assert [n.label for n in fused.graph.nodes][1] == ("conv1d+" + act)


def test_fused_clamp_bounds_order(tmp_path):
    b, _ = conv_blob(attrs={"activation": "clamp", "clamp_min": 1.0, "clamp_max": 0.5})
    expect_format(tmp_path, b, "R21", "clamp_min")


# ---- 5. legacy layouts -------------------------------------------------------------------------
def legacy_graph(legacy, garbage=None, L=20, batch=2):
    """quantize -> conv_relu1d -> conv1d -> max_pool1d -> add_relu(with itself) -> flatten ->
    linear_relu -> dequantize, in the 1.1 layout (``legacy``) or the 1.2 one."""
    rng = np.random.default_rng(11)
    c1 = conv_layer(rng, 4, 8, 3, relu=True, padding=1)
    c2 = conv_layer(rng, 8, 8, 3, groups=8, dilation=2, padding=2, scale=0.07, zero_point=9)
    lin = linear_layer(rng, 8 * (L // 2), 5, relu=True)
    b = BlobBuilder()
    if legacy:
        b.version = (1, 1)
    x = b.activation("x", "float32", (batch, 4, L), batched=True)
    q = b.activation("xq", "quint8", (batch, 4, L), batched=True, scale=0.03, zero_point=128)
    h1 = b.activation("h1", "quint8", (batch, 8, L), batched=True, scale=c1.scale,
                      zero_point=c1.zero_point)
    h2 = b.activation("h2", "quint8", (batch, 8, L), batched=True, scale=c2.scale,
                      zero_point=c2.zero_point)
    p = b.activation("p", "quint8", (batch, 8, L // 2), batched=True, scale=c2.scale,
                     zero_point=c2.zero_point)
    s = b.activation("s", "quint8", (batch, 8, L // 2), batched=True, scale=0.11,
                     zero_point=5)
    f = b.activation("f", "quint8", (batch, 8 * (L // 2)), batched=True, scale=0.11,
                     zero_point=5)
    o = b.activation("o", "quint8", (batch, 5), batched=True, scale=0.1, zero_point=128)
    y = b.activation("y", "float32", (batch, 5), batched=True)
    b.op("quantize", "q", [x], [q])
    g = garbage
    if legacy:
        add_layer(b, "conv_relu1d", c1, q, h1, "c1", legacy=True, garbage=g)
        add_layer(b, "conv1d", c2, h1, h2, "c2", legacy=True, garbage=g)
        b.op("max_pool1d", "mp", [h2], [p], attrs={"kwargs": {"kernel_size": 2,
                                                              "stride": None}})
        b.op("add_relu", "add", [p, p], [s], attrs={"kwargs": {"scale": 0.11,
                                                               "zero_point": 5}})
    else:
        add_layer(b, "conv1d", c1, q, h1, "c1")
        add_layer(b, "conv1d", c2, h1, h2, "c2")
        b.op("max_pool1d", "mp", [h2], [p], attrs={"kernel_size": 2})
        b.op("add", "add", [p, p], [s], attrs={"activation": "relu"})
    b.op("flatten", "flat", [s], [f], attrs={"start_dim": 1})
    if legacy:
        add_layer(b, "linear_relu", lin, f, o, "fc", legacy=True, garbage=g)
    else:
        add_layer(b, "linear", lin, f, o, "fc")
    b.op("dequantize", "dq", [o], [y])
    b.inputs, b.outputs = [x], [y]
    return b, (c1, c2, lin)


def legacy_reference(mods, x):
    import qrt.functional as F
    c1, c2, lin = mods
    q = qrt.quantize_per_tensor(x, 0.03, 128, qrt.quint8)
    p = F.max_pool1d(c2(c1(q)), 2)
    s = F.add_relu(p, p, 0.11, 5)
    return lin(s.reshape(s.shape[0], -1)).dequantize()


def test_legacy_layout_equals_current(tmp_path):
    old_b, mods = legacy_graph(True)
    new_b, _ = legacy_graph(False)
    bad_b, _ = legacy_graph(True, garbage=np.random.default_rng(99))
    old, new, bad = (load(tmp_path, b_, n) for b_, n in ((old_b, "old.bin"), (new_b, "new.bin"),
                                                         (bad_b, "bad.bin")))
    assert old._blob.version == (1, 1) and new._blob.version == (1, 2)
    assert [n.label for n in old.graph.nodes] == [n.label for n in new.graph.nodes]
    assert [n.label for n in new.graph.nodes] == [
        "quantize", "conv1d+relu", "conv1d", "max_pool1d", "add+relu", "flatten",
        "linear+relu", "dequantize"]
    x = np.random.default_rng(5).normal(0, 1.5, (3, 4, 20)).astype(np.float32)
    want = legacy_reference(mods, x)
    for m in (old, new, bad):
        np.testing.assert_array_equal(m(x).view(np.uint32), want.view(np.uint32))


def test_legacy_garbage_packed_arrays_every_variant(tmp_path):
    """defect 8: packed weights are made at load from the raw ones; a legacy file's stored
    weight_packed / weight_sum are ignored, with the reference kernels and the default ones."""
    bad_b, mods = legacy_graph(True, garbage=np.random.default_rng(98))
    bad_b.write(tmp_path / "bad.bin")
    x = np.random.default_rng(6).normal(0, 1.5, (3, 4, 20)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "want.npy", legacy_reference(mods, x))
    code = ("import sys, numpy as np, qrt, qrt._cpu as c; d = sys.argv[1]; "
            "m = qrt.load(d + '/bad.bin'); y = m(np.load(d + '/x.npy')); "
            "w = np.load(d + '/want.npy'); "
            "assert (y.view(np.uint32) == w.view(np.uint32)).all(), 'differs'; "
            "print(c.selected()['conv1d'])")
    for disable in ("all", ""):
        env = dict(os.environ, QRT_DISABLE_ISA=disable)
        if not disable:
            env.pop("QRT_DISABLE_ISA")
        r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        if disable == "all":
            assert r.stdout.strip() == "ref"


def test_legacy_config_disagreeing_with_weights(tmp_path):
    old_b, _ = legacy_graph(True)
    old_b.ops[1].attrs["config"] = dict(old_b.ops[1].attrs["config"], kernel_size=5)
    expect_format(tmp_path, old_b, "R21", "conv1d", "geometry")
    old_b, _ = legacy_graph(True)
    old_b.ops[1].attrs["config"] = dict(old_b.ops[1].attrs["config"], scale=0.5)
    expect_format(tmp_path, old_b, "R21", "qparams")
    old_b, _ = legacy_graph(True)
    old_b.ops[4].attrs["kwargs"]["zero_point"] = 6
    expect_format(tmp_path, old_b, "R21", "add")


def test_legacy_config_hostile_geometry(tmp_path):
    for k, v in (("stride", True), ("padding", -1), ("dilation", 1e300), ("groups", "8")):
        old_b, _ = legacy_graph(True)
        cfg = old_b.ops[2].attrs["config"]
        old_b.ops[2].attrs["config"] = dict(cfg, **{k: v})
        with pytest.raises(qrt.FormatError) as ei:
            load(tmp_path, old_b)
        assert ei.value.rule in ("R21", "R25"), str(ei.value)
        assert "conv1d" in str(ei.value)


def test_demo_blob_format_1_0_loads():
    legacy = os.path.join(os.path.dirname(__file__), "data", "legacy_demo_1_0.bin")
    m = qrt.load(legacy)
    assert m._blob.version == (1, 0)
    spec = m.inputs[0]
    shape = tuple(2 if d is None else d for d in spec.shape)
    x = np.random.default_rng(0).normal(0, 1, shape).astype(np.float32)
    y1, y2 = m(x), qrt.load(DEMO)(x)   # the shipped demo is its 1.2 rewrite
    np.testing.assert_array_equal(np.asarray(y1), np.asarray(y2))


HOSTILE_VALUES = [True, False, None, "1", "", 10**30, -10**30, 10**400, -1, 1.5, 1e308,
                  float("inf"), float("nan"), [], [1] * 100, [True, 1], [10**400], {}, {"a": 1}]


def _valid(spec):
    from qrt.ops import Bool, Choice, Float, Int, Ints, Obj, Str
    if isinstance(spec, Int):
        return max(spec.lo, min(1, spec.hi))
    if isinstance(spec, Ints):
        return [max(spec.lo, 1)] * (spec.n if spec.n is not None else max(spec.min_len, 1))
    if isinstance(spec, Choice):
        return spec.values[0]
    return {Bool: False, Float: 1.0, Obj: {}, Str: "a"}[type(spec)]


def test_R25_every_attribute_of_every_op_refuses_hostile_values():
    """Each schema type turns any JSON value into its value or an AttrError (R25 at load):
    never TypeError, OverflowError, MemoryError..."""
    from qrt.ops import Obj

    class Fail(Exception):
        pass

    def fail(msg, rule="R25"):
        return Fail(msg)
    seen = set()
    for d in qrt.ops.BY_NAME.values():
        if id(d) in seen:
            continue
        seen.add(id(d))
        base = {k: _valid(s) for k, s in d.attrs.items() if s.default is REQUIRED}
        assert d.check_attrs(dict(base), fail) is not None, d.name
        for k, spec in d.attrs.items():
            for v in HOSTILE_VALUES:
                try:
                    got = d.check_attrs(dict(base, **{k: v}), fail)
                except Fail as e:
                    # custom ops name the attribute in their R24 message
                    assert repr(k) in str(e) or f'"{k}"' in str(e), (d.name, k, v, str(e))
                    continue
                # accepted: it must be a value of the schema's type
                assert spec.check(got[k]) == got[k], (d.name, k, v)
                if v is not None and not isinstance(spec, (Obj,)):
                    assert type(got[k]) is type(v) or isinstance(v, (int, tuple)), \
                        (d.name, k, v, got[k])


def test_legacy_config_int_padding_and_other_length(tmp_path):
    """A 1.1 conv config may give padding as one int (both sides); a graph with a linear
    refuses another length with a ValueError naming the linear."""
    old_b, mods = legacy_graph(True)
    cfg = old_b.ops[1].attrs["config"]
    assert cfg["padding"] == [1, 1]
    old_b.ops[1].attrs["config"] = dict(cfg, padding=1)
    m = load(tmp_path, old_b)
    assert m.graph.nodes[1].attrs["padding"] == [1, 1]
    x = np.random.default_rng(8).normal(0, 1, (2, 4, 20)).astype(np.float32)
    np.testing.assert_array_equal(m(x), legacy_reference(mods, x))
    with pytest.raises(ValueError, match=r"op 6 linear 'fc' cannot take input shape"):
        m(np.zeros((2, 4, 22), np.float32))


def test_docs_supported_ops_is_current():
    """docs/supported-ops.md (where qrt-export's errors point) lists every op definition and
    lowering rule: regenerate it with `python tools/gen_supported_ops.py`."""
    import importlib.util
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location(
        "gen_supported_ops", os.path.join(root, "tools", "gen_supported_ops.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with open(os.path.join(root, "docs", "supported-ops.md"), encoding="utf-8") as f:
        assert f.read() == gen.render(), "docs/supported-ops.md is stale"

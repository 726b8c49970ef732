# SPDX-License-Identifier: Apache-2.0
"""Custom quantized ops: ``qrt.register_op`` at run time, ``qrt_export.register`` at export.

End to end: a torch model with a user module (a quantized clamp) exports to a blob with a
``custom`` op (format 1.1); qrt runs it with the registered Python function and matches
torch exactly. A blob whose custom op is not registered fails at ``qrt.load`` with a
FormatError naming the op (R24), never at run time. Torch-free twins build the blob with the
writer directly.
"""

from __future__ import annotations

import numpy as np
import pytest

import qrt
from qrt import FormatError


def qclamp(x, *, min, max):
    """Quantized clamp as torch computes it: the bounds quantized with x's qparams
    (``zp + rne(bound * f32(1/scale))``, clamped to the dtype), then an integer clamp."""
    s, z = np.float32(x.q_scale()), x.q_zero_point()
    inv = np.float32(1.0) / s
    dt = x.dtype

    def qb(v):
        return int(np.clip(z + np.rint(np.float32(v) * inv), dt.qmin, dt.qmax))
    ints = np.clip(x.int_repr(), qb(min), qb(max)).astype(dt.numpy_dtype)
    return qrt.from_int_repr(ints, x.q_scale(), z, dt)


def qclamp_out(x, *, out, min, max):
    """The in-place form (``register_op(..., out=True)``): writes into the arena."""
    np.copyto(out.int_repr(), qclamp(x, min=min, max=max).int_repr())


@pytest.fixture
def registered():
    names = ["test.qclamp", "test.qclamp_out"]
    qrt.register_op("test.qclamp", qclamp)
    qrt.register_op("test.qclamp_out", qclamp_out, out=True)
    yield names
    for n in names:
        if n in qrt.registered_ops():
            qrt.unregister_op(n)


def _blob(path, op_name="test.qclamp", attrs=None, *, raw_attrs=None, n=3, out_scale=0.05):
    """quantize -> custom op -> dequantize, written with the one blob writer (torch-free)."""
    from qrt_export import BlobBuilder
    b = BlobBuilder()
    x = b.activation("x", "float32", (n, 8), batched=True)
    xq = b.activation("xq", "quint8", (n, 8), batched=True, scale=0.05, zero_point=100)
    yq = b.activation("yq", "quint8", (n, 8), batched=True, scale=out_scale, zero_point=100)
    y = b.activation("y", "float32", (n, 8), batched=True)
    b.op("quantize", "quant", [x], [xq])
    b.op("custom", "clamp", [xq], [yq], attrs=raw_attrs if raw_attrs is not None else
         {"op": op_name, "attrs": attrs if attrs is not None else {"min": -1.0, "max": 2.0}})
    b.op("dequantize", "dq", [yq], [y])
    b.inputs, b.outputs = [x], [y]
    b.write(path)
    return path


def _expected(x):
    q = qrt.quantize_per_tensor(x, 0.05, 100, qrt.quint8)
    return qclamp(q, min=-1.0, max=2.0).dequantize()


@pytest.mark.parametrize("name", ["test.qclamp", "test.qclamp_out"])
def test_custom_op_runs_from_blob(tmp_path, rng, registered, name):
    p = _blob(tmp_path / "m.bin", name)
    m = qrt.load(p)
    assert [o.kind for o in m._blob.ops] == ["quantize", "custom", "dequantize"]
    for batch in (3, 1, 7):
        x = (rng.standard_normal((batch, 8)) * 3).astype(np.float32)
        y = m(x)
        np.testing.assert_array_equal(y, _expected(x))
        assert y.min() >= -1.0 - 1e-6 and y.max() <= 2.0 + 1e-6
    from qrt.loader import read_blob
    assert read_blob(p).header["version_minor"] == 1  # a 1.1 feature marks the file 1.1


def test_unregistered_op_fails_at_load(tmp_path, registered):
    p = _blob(tmp_path / "m.bin", "someone.else.op")
    with pytest.raises(FormatError, match="custom op 'someone.else.op'.*not registered") as e:
        qrt.load(p)
    assert e.value.rule == "R24" and e.value.op == 1
    # registering it afterwards makes the same file load
    qrt.register_op("someone.else.op", qclamp)
    try:
        assert qrt.load(p)(np.zeros((3, 8), np.float32)).shape == (3, 8)
    finally:
        qrt.unregister_op("someone.else.op")
    with pytest.raises(FormatError, match="R24"):
        qrt.load(p)


@pytest.mark.parametrize("raw, msg", [
    ({"op": "test.qclamp"}, None),                     # no attrs: fn gets none -> TypeError
    ({"op": 3, "attrs": {}}, "R24"),
    ({"op": "test.qclamp", "attrs": []}, "R24"),
    ({"op": "test.qclamp", "attrs": {}, "extra": 1}, "R24"),
    ({"op": "bad name!", "attrs": {}}, "R24"),
    ({"op": "test.qclamp", "attrs": {"not-an-id": 1}}, "R24"),
    ({"op": "test.qclamp", "attrs": {"min": 0, "max": 1, "bogus": 2}}, "R21"),
])
def test_hostile_custom_attributes_fail_at_load(tmp_path, registered, raw, msg):
    p = _blob(tmp_path / "m.bin", raw_attrs=raw)
    with pytest.raises(FormatError) as e:
        qrt.load(p)
    if msg:
        assert e.value.rule == msg, str(e.value)
    else:
        assert e.value.rule == "R21" and "TypeError" in str(e.value)


def test_op_returning_wrong_qparams_fails_at_load(tmp_path, registered):
    p = _blob(tmp_path / "m.bin", out_scale=0.1)  # blob output scale differs from clamp's
    with pytest.raises(FormatError, match="scale=0.1") as e:
        qrt.load(p)
    assert e.value.rule == "R21" and "clamp" in str(e.value)

    def wrong_type(x, **kw):
        return x.dequantize()
    qrt.register_op("test.wrong", wrong_type)
    try:
        with pytest.raises(FormatError, match="must return a qrt.QTensor"):
            qrt.load(_blob(tmp_path / "m2.bin", "test.wrong"))
    finally:
        qrt.unregister_op("test.wrong")


def test_unknown_op_kind_is_refused(tmp_path, registered):
    """An op kind past custom (a newer format) still fails R17 naming the code."""
    from qrt import _blob as B
    p = _blob(tmp_path / "m.bin")
    buf = bytearray(p.read_bytes())
    from qrt.loader import read_blob
    blob = read_blob(p)
    at = blob.sections["OPS"]["offset"] + 1 * B.OP_SIZE
    del blob
    buf[at:at + 4] = (999).to_bytes(4, "little")
    import zlib
    c0, c1 = B.CRC_FIELDS
    h = np.frombuffer(bytes(buf[:B.HEADER_SIZE]), B.HEADER_DTYPE)[0]
    tab = np.frombuffer(bytes(buf[B.HEADER_SIZE:B.HEADER_SIZE + int(h["section_count"]) *
                                  B.SECTION_SIZE]), B.SECTION_DTYPE)
    d0 = [int(s["offset"]) for s in tab if s["kind"] == B.SECTION["DATA"]][0]
    buf[c0:c0 + 4] = b"\0" * 4
    buf[c1:c1 + 4] = b"\0" * 4
    buf[c0:c0 + 4] = zlib.crc32(bytes(buf[:d0])).to_bytes(4, "little")
    buf[c1:c1 + 4] = zlib.crc32(bytes(buf[d0:])).to_bytes(4, "little")
    p.write_bytes(bytes(buf))
    with pytest.raises(FormatError, match="unknown op kind 999") as e:
        qrt.load(p)
    assert e.value.rule == "R17"


def test_register_op_arguments():
    with pytest.raises(TypeError, match="callable"):
        qrt.register_op("x.y", 3)
    with pytest.raises(ValueError, match="op name"):
        qrt.register_op("has space", qclamp)
    with pytest.raises(ValueError, match="op name"):
        qrt.register_op("", qclamp)
    with pytest.raises(TypeError, match="str"):
        qrt.register_op(5, qclamp)
    qrt.register_op("x.dup", qclamp)
    try:
        with pytest.raises(ValueError, match="already registered"):
            qrt.register_op("x.dup", qclamp)
        qrt.register_op("x.dup", qclamp_out, out=True, overwrite=True)
        from qrt.custom_ops import get_op
        assert get_op("x.dup") is qclamp_out
    finally:
        qrt.unregister_op("x.dup")
    with pytest.raises(KeyError):
        qrt.unregister_op("x.dup")


# ---- end to end from torch ---------------------------------------------------------------------
def _torch_model(torch):
    import torch.nn as nn
    from torch.ao.quantization import DeQuantStub, QuantStub, convert, get_default_qconfig, \
        prepare

    class QClamp(nn.Module):
        def __init__(self, lo, hi):
            super().__init__()
            self.lo, self.hi = lo, hi

        def forward(self, x):
            return torch.clamp(x, self.lo, self.hi)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.dq = QuantStub(), DeQuantStub()
            self.conv = nn.Conv1d(3, 6, 3)
            self.clamp = QClamp(-0.3, 0.45)
            self.fc = nn.Linear(36, 4)

        def forward(self, x):
            x = self.clamp(self.conv(self.q(x)))
            return self.dq(self.fc(x.flatten(1)))
    torch.manual_seed(0)
    m = Net().eval()
    m.qconfig = get_default_qconfig("qnnpack")
    p = prepare(m)
    for _ in range(4):
        p(torch.randn(8, 3, 8) * 2)
    return convert(p), QClamp


def test_custom_op_end_to_end_vs_torch(qnnpack, tmp_path, rng, registered):
    torch = qnnpack
    import qrt_export
    model, QClamp = _torch_model(torch)
    qrt_export.register(QClamp, "test.qclamp", lambda m: {"min": m.lo, "max": m.hi})
    try:
        x = torch.from_numpy((rng.standard_normal((5, 3, 8)) * 2).astype(np.float32))
        rep = qrt_export.export(model, x, tmp_path / "m.bin", verbose=False)
    finally:
        qrt_export.unregister(QClamp)
    assert rep.agreement["qnnpack"]["exact"] == rep.agreement["qnnpack"]["total"] > 0
    m = qrt.load(tmp_path / "m.bin")
    kinds = [o.kind for o in m._blob.ops]
    assert "custom" in kinds and kinds.count("custom") == 1
    op = m._blob.ops[kinds.index("custom")]
    assert op.attrs == {"op": "test.qclamp", "attrs": {"min": -0.3, "max": 0.45}}
    total = 0
    with torch.no_grad():
        for batch in (1, 5, 9):
            xb = torch.from_numpy((rng.standard_normal((batch, 3, 8)) * 2).astype(np.float32))
            want = model(xb).numpy()
            got = m(xb.numpy())
            np.testing.assert_array_equal(got, want)
            total += want.size
    assert total == 60
    # the clamp really clamps: the conv output range exceeds [-0.3, 0.45]
    with torch.no_grad():
        pre = model.conv(model.q(x)).dequantize()
    assert pre.min() < -0.3 and pre.max() > 0.45
    # without the runtime registration the exported file fails at load
    qrt.unregister_op("test.qclamp")
    with pytest.raises(FormatError, match="test.qclamp"):
        qrt.load(tmp_path / "m.bin")


def test_export_register_arguments(torch):
    import qrt_export
    with pytest.raises(TypeError, match="Module subclass"):
        qrt_export.register(int, "a.b")
    with pytest.raises(ValueError, match="op name"):
        qrt_export.register(torch.nn.ReLU, "bad name")
    with pytest.raises(TypeError, match="callable"):
        qrt_export.register(torch.nn.ReLU, "a.b", attrs_fn=5)
    from qrt_export.custom import attrs_for
    with pytest.raises(ValueError, match="identifiers"):
        attrs_for(None, ("a.b", lambda m: {"1x": 2}))
    with pytest.raises(ValueError, match="JSON"):
        attrs_for(None, ("a.b", lambda m: {"x": float("nan")}))
    with pytest.raises(ValueError, match="JSON"):
        attrs_for(None, ("a.b", lambda m: {"x": object()}))


def test_export_mismatch_names_the_first_diverging_op(qnnpack, tmp_path, rng):
    """A qrt op that answers differently from torch fails the export op by op (MismatchError
    naming it; no blob left behind) unless allow_mismatch; the CLI exits 4 without a traceback."""
    torch = qnnpack
    import qrt_export
    model, QClamp = _torch_model(torch)

    def off_by_one(x, *, min, max):   # noqa: A002 - the exporter's attribute names
        y = qclamp(x, min=min, max=max)
        codes = np.minimum(y.int_repr().astype(np.int16) + 1, 255).astype(np.uint8)
        return qrt.from_int_repr(codes, y.q_scale(), y.q_zero_point())
    qrt.register_op("test.qclamp", off_by_one, overwrite=True)
    qrt_export.register(QClamp, "test.qclamp", lambda m: {"min": m.lo, "max": m.hi})
    try:
        x = torch.from_numpy((rng.standard_normal((5, 3, 8)) * 2).astype(np.float32))
        with pytest.raises(qrt_export.MismatchError) as ei:
            qrt_export.export(model, x, tmp_path / "m.bin", verbose=False)
        msg = str(ei.value)
        assert "first at op" in msg and "custom 'clamp'" in msg and "LSB" in msg, msg
        assert not (tmp_path / "m.bin").exists()
        rep = qrt_export.export(model, x, tmp_path / "m.bin", verbose=False,
                                allow_mismatch=True)
        assert (tmp_path / "m.bin").exists()
        bad = [r for r in rep.ops if not r["ok"]]
        assert bad and bad[0]["name"] == "clamp"
        assert all(r["ok"] for r in rep.ops if r["index"] < bad[0]["index"])
    finally:
        qrt_export.unregister(QClamp)
        qrt.unregister_op("test.qclamp")

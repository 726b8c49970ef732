# SPDX-License-Identifier: Apache-2.0
"""One test per validation rule of docs/blob-format.md (R1..R22), on blobs corrupted here.

Blobs are built with qrt_export.BlobBuilder (no torch needed). Each corruption keeps the
metadata CRC consistent (unless the test is about the CRC), so the rule under test is the one
that fires.
"""

import json
import os
import zlib

import numpy as np
import pytest

import qrt
from qrt import _blob as B
from qrt.loader import FormatError, read_blob
from qrt_export import BlobBuilder

H = B.HEADER_DTYPE


def make_builder(n_consts=3):
    b = BlobBuilder()
    x = b.activation("x", "float32", (2, 4, 6), batched=True)
    q = b.activation("xq", "quint8", (2, 4, 6), batched=True, scale=0.05, zero_point=120)
    f = b.activation("flat", "quint8", (2, 24), batched=True, scale=0.05, zero_point=120)
    y = b.activation("y", "float32", (2, 24), batched=True)
    for k in range(n_consts):
        b.constant(f"c{k}", np.arange(5 + 7 * k, dtype=np.int32) - 3)
    b.op("quantize", "quant", [x], [q])
    b.op("flatten", "flatten", [q], [f], attrs={"start_dim": 1})
    b.op("dequantize", "dequant", [f], [y])
    b.inputs, b.outputs = [x], [y]
    b.meta = {"exporter": "test"}
    return b


@pytest.fixture
def blob():
    return bytearray(make_builder().to_bytes())


def fix_crc(buf: bytearray) -> bytearray:
    """Recompute both CRCs after a deliberate corruption (so structural rules fire)."""
    h = np.frombuffer(bytes(buf[:B.HEADER_SIZE]), H)[0]
    t0 = int(h["section_table_offset"])
    n = min(int(h["section_count"]), 64)
    raw = bytes(buf[t0:t0 + n * B.SECTION_SIZE]) if t0 < len(buf) else b""
    tab = np.frombuffer(raw[:len(raw) // B.SECTION_SIZE * B.SECTION_SIZE], B.SECTION_DTYPE)
    data = [int(s["offset"]) for s in tab if s["kind"] == B.SECTION["DATA"]]
    d0 = data[0] if data else len(buf)
    d0 = min(d0, len(buf))
    c0, c1 = B.CRC_FIELDS
    buf[c0:c0 + 4] = b"\0" * 4
    buf[c1:c1 + 4] = b"\0" * 4
    meta = zlib.crc32(bytes(buf[:d0]))
    dcrc = zlib.crc32(bytes(buf[d0:]))
    buf[c0:c0 + 4] = meta.to_bytes(4, "little")
    buf[c1:c1 + 4] = dcrc.to_bytes(4, "little")
    return buf


def put(buf, offset, value, fmt):
    buf[offset:offset + np.dtype(fmt).itemsize] = np.array(value, fmt).tobytes()


def hfield(name):
    return H.fields[name][1]


def section(buf, kind):
    h = np.frombuffer(bytes(buf[:B.HEADER_SIZE]), H)[0]
    # int(): numpy 1.x promotes uint64 + int to float64
    start, count = int(h["section_table_offset"]), int(h["section_count"])
    tab = np.frombuffer(bytes(buf[start:start + count * B.SECTION_SIZE]), B.SECTION_DTYPE)
    for i, s in enumerate(tab):
        if s["kind"] == B.SECTION[kind]:
            return i, int(s["offset"]), int(s["size"])
    raise KeyError(kind)


def sec_entry(buf, kind):
    i, _, _ = section(buf, kind)
    return B.HEADER_SIZE + i * B.SECTION_SIZE


def tensor_at(buf, i):
    return section(buf, "TENSORS")[1] + i * B.TENSOR_SIZE


def op_at(buf, i):
    return section(buf, "OPS")[1] + i * B.OP_SIZE


def tfield(name):
    return B.TENSOR_DTYPE.fields[name][1]


def ofield(name):
    return B.OP_DTYPE.fields[name][1]


def load_bytes(tmp_path, buf, verify=True):
    p = tmp_path / "m.bin"
    p.write_bytes(bytes(buf))
    return qrt.load(p, verify=verify)


def expect(tmp_path, buf, rule, match=None, verify=True):
    with pytest.raises(FormatError, match=match) as ei:
        load_bytes(tmp_path, buf, verify)
    assert ei.value.rule == rule, str(ei.value)
    return ei.value


def test_blob_format_valid_roundtrip(tmp_path, blob):
    m = load_bytes(tmp_path, blob)
    x = np.random.default_rng(0).standard_normal((3, 4, 6)).astype(np.float32)
    y = m(x)
    ref = qrt.quantize_per_tensor(x, 0.05, 120, qrt.quint8).dequantize().reshape(3, 24)
    np.testing.assert_array_equal(y, ref)
    assert m.weights_nbytes == sum((5 + 7 * k) * 4 for k in range(3))


def test_blob_format_struct_sizes():
    assert (B.HEADER_SIZE, B.SECTION_SIZE, B.TENSOR_SIZE, B.OP_SIZE, B.IO_SIZE) == \
        (64, 32, 128, 64, 16)
    assert B.MAGIC == b"QRTB" and B.HEADER_DTYPE.itemsize == 64


def test_blob_format_payloads_aligned(blob):
    _, d0, dsize = section(blob, "DATA")
    assert d0 % B.ALIGN == 0 and dsize % B.ALIGN == 0
    assert len(blob) == d0 + dsize


def test_R1_truncated_header(tmp_path, blob):
    expect(tmp_path, blob[:40], "R1")
    expect(tmp_path, b"", "R1")


def test_R2_magic(tmp_path, blob):
    blob[0:4] = b"GGUF"
    e = expect(tmp_path, fix_crc(blob), "R2", "magic")
    assert e.offset == 0


def test_R3_newer_major_says_which_qrt(tmp_path, blob):
    put(blob, hfield("version_major"), 2, "<u2")
    put(blob, hfield("min_reader"), 30201, "<u4")
    e = expect(tmp_path, blob, "R3")  # checked before the CRC: any major-2 file reports this
    assert "qrt >= 3.2.1" in str(e) and "format 2.0" in str(e)


def test_R4_header_size(tmp_path, blob):
    put(blob, hfield("header_size"), 32, "<u4")
    expect(tmp_path, fix_crc(blob), "R4")
    put(blob, hfield("header_size"), 1 << 31, "<u4")
    expect(tmp_path, fix_crc(blob), "R4")


def test_R5_reserved_zero(tmp_path, blob):
    blob[hfield("reserved") + 3] = 1
    expect(tmp_path, fix_crc(blob), "R5")


def test_R5_tensor_reserved_zero(tmp_path, blob):
    put(blob, tensor_at(blob, 1) + tfield("reserved"), 7, "<u4")
    expect(tmp_path, fix_crc(blob), "R5")


def test_R6_alignment_power_of_two(tmp_path, blob):
    put(blob, hfield("alignment"), 48, "<u4")
    expect(tmp_path, fix_crc(blob), "R6")
    put(blob, hfield("alignment"), 8, "<u4")
    expect(tmp_path, fix_crc(blob), "R6")


def test_R7_file_size(tmp_path, blob):
    expect(tmp_path, blob + b"\0" * 64, "R7")
    expect(tmp_path, blob[:-1], "R7")


def test_R8_metadata_checksum(tmp_path, blob):
    _, off, _ = section(blob, "STRINGS")
    blob[off] ^= 0x20
    e = expect(tmp_path, blob, "R8", "checksum")
    assert e.offset == B.CRC_FIELDS[0]


def test_R9_section_count(tmp_path, blob):
    put(blob, hfield("section_count"), B.MAX_SECTIONS + 1, "<u4")
    expect(tmp_path, fix_crc(blob), "R9")
    put(blob, hfield("section_count"), 0, "<u4")
    expect(tmp_path, fix_crc(blob), "R9")


def test_R10_section_out_of_file(tmp_path, blob):
    at = sec_entry(blob, "TENSORS")
    put(blob, at + B.SECTION_DTYPE.fields["offset"][1], 2**64 - 8, "<u8")
    e = expect(tmp_path, fix_crc(blob), "R10")
    assert e.section == "TENSORS"


def test_R10_section_overlap_and_duplicates(tmp_path, blob):
    at = sec_entry(blob, "META")
    put(blob, at + B.SECTION_DTYPE.fields["offset"][1], section(blob, "IO")[1], "<u8")
    expect(tmp_path, fix_crc(blob), "R10", "overlap")


def test_R10_unknown_kind_and_count(tmp_path, blob):
    b2 = bytearray(blob)
    put(b2, sec_entry(b2, "IO"), 99, "<u4")
    expect(tmp_path, fix_crc(b2), "R10", "unknown kind")
    b3 = bytearray(blob)
    put(b3, sec_entry(b3, "TENSORS") + B.SECTION_DTYPE.fields["count"][1], 2**40, "<u8")
    expect(tmp_path, fix_crc(b3), "R10")


def test_R10_gap_bytes_between_sections_are_zero(tmp_path, blob):
    """Issue #13: non-zero padding between sections was accepted (room to hide data)."""
    secs = sorted(section(blob, k)[1:] + (k,) for k in B.SECTION)
    gaps = [(a + n, b) for (a, n, _), (b, _, _) in zip(secs, secs[1:]) if b > a + n]
    assert gaps, "the writer leaves alignment padding somewhere"
    g0, _ = gaps[0]
    blob[g0] = 0x5A
    expect(tmp_path, fix_crc(blob), "R10", "not zero")


def test_R10_no_gap_wider_than_the_alignment(tmp_path, blob):
    """DATA moved one alignment unit further (the inserted bytes zero): a gap, not padding."""
    _, d0, _ = section(blob, "DATA")
    align = int(np.frombuffer(bytes(blob[:B.HEADER_SIZE]), H)[0]["alignment"])
    buf = bytearray(blob[:d0]) + bytearray(align) + blob[d0:]
    put(buf, sec_entry(buf, "DATA") + B.SECTION_DTYPE.fields["offset"][1], d0 + align,
        B.SECTION_DTYPE.fields["offset"][0].str)
    put(buf, hfield("file_size"), len(buf), H.fields["file_size"][0].str)
    expect(tmp_path, fix_crc(buf), "R10", "only alignment padding")


def test_R11_data_last(tmp_path, blob):
    at = sec_entry(blob, "DATA")
    _, off, size = section(blob, "DATA")
    put(blob, at + B.SECTION_DTYPE.fields["size"][1], size - 64, "<u8")
    expect(tmp_path, fix_crc(blob), "R11")


def test_R12_payload_checksum_and_verify_false(tmp_path, blob):
    _, d0, _ = section(blob, "DATA")
    blob[d0 + 1] ^= 1
    expect(tmp_path, blob, "R12")
    m = load_bytes(tmp_path, blob, verify=False)  # skips only the payload CRC
    assert m.weights_nbytes > 0


def test_R13_string_reference(tmp_path, blob):
    put(blob, tensor_at(blob, 0) + tfield("name_offset"), 2**32 - 2, "<u4")
    expect(tmp_path, fix_crc(blob), "R13")


def test_R13_utf8(tmp_path, blob):
    _, off, _ = section(blob, "STRINGS")
    blob[off] = 0xFF
    expect(tmp_path, fix_crc(blob), "R13", "UTF-8")


@pytest.mark.parametrize("field,value,fmt", [
    ("dtype", 200, "u1"), ("ndim", 9, "u1"), ("kind", 5, "u1"), ("qscheme", 9, "u1")])
def test_R14_tensor_codes(tmp_path, blob, field, value, fmt):
    put(blob, tensor_at(blob, 1) + tfield(field), value, fmt)
    expect(tmp_path, fix_crc(blob), "R14")


def test_R14_negative_or_huge_dims(tmp_path, blob):
    b2 = bytearray(blob)
    put(b2, tensor_at(b2, 1) + tfield("dims") + 8, -1, "<i8")
    expect(tmp_path, fix_crc(b2), "R14")
    put(blob, tensor_at(blob, 4) + tfield("dims"), 2**62, "<i8")
    expect(tmp_path, fix_crc(blob), "R14")


def test_R14_nbytes_matches_shape(tmp_path, blob):
    put(blob, tensor_at(blob, 4) + tfield("nbytes"), 24, "<u8")
    expect(tmp_path, fix_crc(blob), "R14", "nbytes")


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan"), float("inf"), 1e-300])
def test_R14_bad_scale(tmp_path, blob, scale):
    put(blob, tensor_at(blob, 1) + tfield("scale"), scale, "<f8")
    expect(tmp_path, fix_crc(blob), "R14", "scale")


def test_R14_zero_point_range(tmp_path, blob):
    put(blob, tensor_at(blob, 1) + tfield("zero_point"), 256, "<i8")
    expect(tmp_path, fix_crc(blob), "R14", "zero_point")


def test_R15_unique_names(tmp_path):
    b = make_builder()
    b.tensors[5].name = "c0"
    expect(tmp_path, bytearray(b.to_bytes()), "R15", "name")


def test_R16_payload_holes(tmp_path, blob):
    at = tensor_at(blob, 5)  # second constant: move it one alignment further
    off = int(np.frombuffer(bytes(blob[at + tfield("data_offset"):at + tfield("data_offset")
                                       + 8]), "<u8")[0])
    put(blob, at + tfield("data_offset"), off + 64, "<u8")
    expect(tmp_path, fix_crc(blob), "R16")


def test_R16_misaligned_payload(tmp_path, blob):
    at = tensor_at(blob, 5)
    put(blob, at + tfield("data_offset"), 4, "<u8")
    expect(tmp_path, fix_crc(blob), "R16")


def test_R16_nonzero_padding(tmp_path, blob):
    _, d0, _ = section(blob, "DATA")
    blob[d0 + 5 * 4 + 1] = 9  # inside the padding after c0 (20 bytes)
    expect(tmp_path, fix_crc(blob), "R16", "padding")


def test_R17_unknown_op_kind(tmp_path, blob):
    put(blob, op_at(blob, 1) + ofield("kind"), 999, "<u4")
    e = expect(tmp_path, fix_crc(blob), "R17")
    assert e.op == 1 and "op 1" in str(e)


def test_R17_operand_range_overflow(tmp_path, blob):
    put(blob, op_at(blob, 0) + ofield("first_input"), 2**32 - 1, "<u4")
    expect(tmp_path, fix_crc(blob), "R17")


def test_R17_operand_index(tmp_path, blob):
    _, off, _ = section(blob, "OPERANDS")
    put(blob, off, 1000, "<u4")
    expect(tmp_path, fix_crc(blob), "R17", "tensor index")


def test_R17_constant_as_input(tmp_path, blob):
    _, off, _ = section(blob, "OPERANDS")
    put(blob, off, 4, "<u4")
    expect(tmp_path, fix_crc(blob), "R17", "constant")


def test_R17_attrs_json(tmp_path):
    b = make_builder()
    raw = bytearray(b.to_bytes())
    _, soff, ssize = section(raw, "STRINGS")
    i = bytes(raw[soff:soff + ssize]).find(b'{"start_dim":1}')
    raw[soff + i + 1] = ord("[")
    expect(tmp_path, fix_crc(raw), "R17", "JSON")


def test_R18_io(tmp_path, blob):
    _, off, _ = section(blob, "IO")
    put(blob, off + B.IO_DTYPE.fields["direction"][1], 7, "<u4")
    expect(tmp_path, fix_crc(blob), "R18")


def test_R19_execution_order(tmp_path):
    b = make_builder()
    b.ops[0], b.ops[1] = b.ops[1], b.ops[0]
    expect(tmp_path, bytearray(b.to_bytes()), "R19", "before")


def test_R19_single_assignment(tmp_path):
    b = make_builder()
    b.ops[1].outputs = [1]
    expect(tmp_path, bytearray(b.to_bytes()), "R19")


def test_R20_meta_json(tmp_path, blob):
    _, off, _ = section(blob, "META")
    blob[off] = ord("[")
    expect(tmp_path, fix_crc(blob), "R20")


def test_R21_op_semantics(tmp_path):
    b = make_builder()
    b.ops[0].inputs = [1]  # quantize of a quantized tensor: no op reads x; x is an input
    b.ops[0].outputs = [0]
    b.ops[0].inputs, b.ops[0].outputs = [0], [1]
    b.ops.append(b.ops.pop(2))
    b.ops[2].kind = "quantize"  # quantize applied to a quint8 tensor
    expect(tmp_path, bytearray(b.to_bytes()), "R21")


def test_R21_view_changes_size(tmp_path):
    b = make_builder()
    b.tensors[2].shape = (2, 25)
    b.tensors[3].shape = (2, 25)
    e = expect(tmp_path, bytearray(b.to_bytes()), "R21")
    assert e.op == 1


def test_formaterror_is_valueerror_and_exported():
    assert issubclass(qrt.FormatError, ValueError)
    assert qrt.FormatError is FormatError


def test_read_blob_reports_meta(tmp_path, blob):
    p = tmp_path / "m.bin"
    p.write_bytes(bytes(blob))
    bl = read_blob(p)
    assert bl.meta == {"exporter": "test"}
    assert [t.name for t in bl.tensors][:4] == ["x", "xq", "flat", "y"]
    assert json.loads(json.dumps(bl.sections))
    assert os.path.getsize(p) == bl.header["file_size"]


# ---- rules added with qrt/ops and qrt/executor (R3 min_reader, R10 optional sections, R14 layer
# parameters, R25 attribute schema, R26 conv padding, R27 memory bound) ---------------------------
def _relu_builder():
    b = BlobBuilder()
    x = b.activation("x", "float32", (2, 4, 6), batched=True)
    q = b.activation("xq", "quint8", (2, 4, 6), batched=True, scale=0.05, zero_point=120)
    r = b.activation("r", "quint8", (2, 4, 6), batched=True, scale=0.05, zero_point=120)
    y = b.activation("y", "float32", (2, 4, 6), batched=True)
    b.op("quantize", "quant", [x], [q])
    b.op("relu", "relu", [q], [r])
    b.op("dequantize", "dequant", [r], [y])
    b.inputs, b.outputs = [x], [y]
    return b


def _version(buf):
    h = np.frombuffer(bytes(buf[:B.HEADER_SIZE]), H)[0]
    return (int(h["version_major"]), int(h["version_minor"])), int(h["min_reader"])


def test_R3_format_version_follows_the_ops(tmp_path):
    from _blobs import conv_blob
    b = _relu_builder()
    assert b.format_version() == (1, 0)
    buf = b.to_bytes()
    assert _version(buf) == ((1, 0), 100)
    assert load_bytes(tmp_path, buf)._blob.version == (1, 0)
    cb, _ = conv_blob()
    buf = cb.to_bytes()
    assert _version(buf) == ((1, 2), 200)
    assert load_bytes(tmp_path, buf)._blob.version == (1, 2)
    b.optional_sections.append((7, b"x"))
    assert b.format_version() == (1, 2)


@pytest.mark.parametrize("need,shown", [(990000, "99.0.0"), (201, "0.2.1"), (10000, "1.0.0")])
def test_R3_min_reader_newer_than_this_qrt(tmp_path, need, shown):
    buf = bytearray(_relu_builder().to_bytes())
    put(buf, hfield("min_reader"), need, "<u4")
    e = expect(tmp_path, fix_crc(buf), "R3", "needs qrt >=")
    assert shown in str(e) and qrt.__version__ in str(e)
    put(buf, hfield("min_reader"), 200, "<u4")   # exactly this qrt: fine
    load_bytes(tmp_path, fix_crc(buf))


def test_R10_optional_section_round_trips(tmp_path):
    b = _relu_builder()
    b.optional_sections.append((0x55, b"future data the reader need not know"))
    buf = bytearray(b.to_bytes())
    assert _version(buf)[0] == (1, 2)
    m = load_bytes(tmp_path, buf)
    x = np.random.default_rng(0).standard_normal((2, 4, 6)).astype(np.float32)
    np.testing.assert_array_equal(m(x), load_bytes(tmp_path, _relu_builder().to_bytes())(x))
    # the same kind without the optional bit is an unknown required section
    put(buf, sec_entry(buf, "DATA") - B.SECTION_SIZE + B.SECTION_DTYPE.fields["kind"][1],
        0x55, "<u4")
    expect(tmp_path, fix_crc(buf), "R10", "unknown kind 85")


def test_R10_optional_section_in_a_1_1_file(tmp_path):
    b = _relu_builder()
    b.version = (1, 1)
    b.optional_sections.append((0x55, b"x"))
    buf = b.to_bytes()
    assert _version(buf)[0] == (1, 1)
    expect(tmp_path, bytearray(buf), "R10", "unknown kind")


def test_R14_layer_weight_parameters(tmp_path):
    from _blobs import conv_blob, conv_layer
    mod = conv_layer(np.random.default_rng(0), 4, 6, 3, padding=1)
    _, arrs = qrt.ops.get("conv1d").encode(mod)
    for name, v in (("weight_scale", 1e300), ("weight_scale", 1e-45),
                    ("weight_scale", float("nan")), ("bias", float("nan")),
                    ("bias", float("inf")), ("weight_zero_point", 200)):
        a = arrs[name].copy()
        a[0] = v
        b, _ = conv_blob(mod, arrays={name: a})
        e = expect(tmp_path, bytearray(b.to_bytes()), "R14", name)
        assert "conv1d" in str(e)


def test_R14_activation_scale_inf_as_float32(tmp_path):
    b = _relu_builder()
    b.tensors[2].scale = 3.5e38   # finite as float64, inf as float32
    expect(tmp_path, bytearray(b.to_bytes()), "R14", "scale")


def test_R25_attribute_schema(tmp_path):
    for attrs, word in (({"start_dim": "1"}, "'start_dim'"), ({"start_dim": True}, "'start_dim'"),
                        ({"start_dim": 10**30}, "'start_dim'"), ({"dim": 1}, "'dim'")):
        b = make_builder()
        b.ops[1].attrs = attrs
        e = expect(tmp_path, bytearray(b.to_bytes()), "R25", word)
        assert "flatten" in str(e) and e.op == 1


def test_R26_conv_padding_beyond_reach(tmp_path):
    from _blobs import conv_blob, conv_layer
    mod = conv_layer(np.random.default_rng(0), 4, 6, 3, dilation=2)
    b, _ = conv_blob(mod, attrs={"padding": [6, 0]}, out_len=18)
    expect(tmp_path, bytearray(b.to_bytes()), "R26", "padding")
    b, _ = conv_blob(mod, attrs={"padding": [5, 0]}, out_len=17)
    load_bytes(tmp_path, b.to_bytes())


def test_R27_activation_bytes_bound(tmp_path):
    from _blobs import add_layer, conv_layer, conv_len
    d = 1 << 20
    c = conv_layer(np.random.default_rng(0), 1, 8, 2, dilation=d, padding=d)
    b = BlobBuilder()
    x = b.activation("x", "float32", (1024, 1, 1), batched=True)
    q = b.activation("xq", "quint8", (1024, 1, 1), batched=True, scale=0.03, zero_point=128)
    h = b.activation("h", "quint8", (1024, 8, conv_len(c, 1)), batched=True, scale=c.scale,
                     zero_point=c.zero_point)
    b.op("quantize", "q", [x], [q])
    add_layer(b, "conv1d", c, q, h, "c")
    b.inputs, b.outputs = [x], [h]
    expect(tmp_path, bytearray(b.to_bytes()), "R27", "exported")

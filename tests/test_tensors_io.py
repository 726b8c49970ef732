# SPDX-License-Identifier: Apache-2.0
"""qrt.save / qrt.load_tensors: tensor files in the blob container (format 1.1, rule R23).

Round trips of every dtype and qscheme (qparams bit-exact), zero-copy mapping, the
validation shared with model blobs (hostile files: wrong dtype code, bad qparams, corrupted
payload, model/tensor-file mix-ups), ``qrt inspect``/``verify``, and the exporter's
``--tensors`` path against torch's own state_dict.
"""

from __future__ import annotations

import json
import sys
import zlib

import numpy as np
import pytest

import qrt
from qrt import _blob as B
from qrt.loader import FormatError, read_blob

H = B.HEADER_DTYPE


def _fix_crc(buf: bytearray, d0=None) -> bytearray:
    """Recompute both CRCs (``d0``: where DATA starts; read from the table by default)."""
    if d0 is None:
        h = np.frombuffer(bytes(buf[:B.HEADER_SIZE]), H)[0]
        t0 = int(h["section_table_offset"])
        tab = np.frombuffer(bytes(buf[t0:t0 + int(h["section_count"]) * B.SECTION_SIZE]),
                            B.SECTION_DTYPE)
        d0 = [int(s["offset"]) for s in tab if s["kind"] == B.SECTION["DATA"]][0]
    c0, c1 = B.CRC_FIELDS
    buf[c0:c0 + 8] = b"\0" * 8
    buf[c0:c0 + 4] = zlib.crc32(bytes(buf[:d0])).to_bytes(4, "little")
    buf[c1:c1 + 4] = zlib.crc32(bytes(buf[d0:])).to_bytes(4, "little")
    return buf


def _tensor_entry(path, name):
    blob = read_blob(path)
    t = [t for t in blob.tensors if t.name == name][0]
    return blob.sections["TENSORS"]["offset"] + t.index * B.TENSOR_SIZE, t


def _sample(rng):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    return {
        "pt_u8": qrt.quantize_per_tensor(x, 0.0373, 131, qrt.quint8),
        "pt_s8": qrt.quantize_per_tensor(x, 1e-3, -7, qrt.qint8),
        "pt_s32": qrt.quantize_per_tensor(x, 2.5e-5, 12345, qrt.qint32),
        "pc_s8": qrt.quantize_per_channel(x, rng.uniform(0.01, 0.2, 4), rng.integers(-9, 9, 4),
                                          1, qrt.qint8),
        "pc_u8_ax2": qrt.quantize_per_channel(x, rng.uniform(0.01, 0.2, 5),
                                              rng.integers(0, 255, 5), 2, qrt.quint8),
        "pc_s32": qrt.quantize_per_channel(x, rng.uniform(1e-4, 1e-3, 3), np.zeros(3, int), 0,
                                           qrt.qint32),
        "view": qrt.quantize_per_tensor(x, 0.1, 3, qrt.quint8).permute(2, 0, 1)[1:, :, ::2],
        "scalar": qrt.quantize_per_tensor(np.float32(0.5), 0.25, 1, qrt.quint8),
        "empty": qrt.quantize_per_tensor(np.zeros((0, 3), np.float32), 0.25, 1, qrt.qint8),
        "f32": x, "f64": x.astype(np.float64), "i64": np.arange(7, dtype=np.int64),
        "u16": np.arange(5, dtype=np.uint16), "i8": np.array([-128, 127], np.int8),
        "be_i32": np.arange(4, dtype=">i4"), "u8_2d": np.arange(6, dtype=np.uint8).reshape(2, 3),
        "utf8 name é": np.zeros(2, np.float32),
    }


def _same(a, b):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and b.shape == a.shape
        assert b.dtype == a.dtype.newbyteorder("=")
        np.testing.assert_array_equal(a, b)
        return
    assert isinstance(b, qrt.QTensor)
    assert (b.shape, b.dtype, b.qscheme()) == (a.shape, a.dtype, a.qscheme())
    np.testing.assert_array_equal(a.int_repr(), b.int_repr())
    assert b.is_contiguous()
    if a.qscheme() is qrt.per_tensor_affine:
        assert b.q_scale() == a.q_scale() and b.q_zero_point() == a.q_zero_point()
        assert type(b.q_scale()) is float
    else:
        assert b.q_per_channel_axis() == a.q_per_channel_axis()
        assert b.q_per_channel_scales().dtype == np.float64
        assert b.q_per_channel_scales().tobytes() == a.q_per_channel_scales().tobytes()
        assert b.q_per_channel_zero_points().dtype == np.int64
        np.testing.assert_array_equal(b.q_per_channel_zero_points(),
                                      a.q_per_channel_zero_points())
    np.testing.assert_array_equal(a.dequantize(), b.dequantize())


@pytest.mark.parametrize("mmap", [True, False])
def test_roundtrip_every_kind(tmp_path, rng, mmap):
    ts = _sample(rng)
    p = tmp_path / "w.bin"
    n = qrt.save(ts, p)
    assert n == p.stat().st_size
    got = qrt.load_tensors(p, mmap=mmap)
    assert list(got) == list(ts)  # names and order kept
    for k in ts:
        _same(ts[k], got[k])


def test_mmap_is_zero_copy_and_readonly(tmp_path, rng):
    ts = _sample(rng)
    p = tmp_path / "w.bin"
    qrt.save(ts, p)
    got = qrt.load_tensors(p)
    st = got["pt_u8"].storage()
    assert st.readonly and st.nbytes == p.stat().st_size
    blob = read_blob(p)
    for k, v in got.items():
        if isinstance(v, qrt.QTensor):
            assert v.storage() is st  # one mapping shared by all
            _, t = _tensor_entry(p, k)
            assert v.data_ptr() == st.data_ptr() + t.data_offset
            if v.numel():
                assert not v.int_repr().flags.writeable
                with pytest.raises(ValueError):
                    v.int_repr()[...] = 0
        elif v.size:
            assert not v.flags.writeable and v.base is not None
    del blob
    # views of loaded tensors still share the mapping
    assert got["pc_s8"][:, 1:3].storage() is st
    owned = qrt.load_tensors(p, mmap=False)
    assert owned["pt_u8"].storage() is not st and not owned["pt_u8"].storage().readonly
    owned["pt_u8"].int_repr()[...] = 0
    assert owned["f32"].flags.writeable


def test_overwrite_while_mapped(tmp_path, rng):
    """Saving over a file whose tensors are still mapped leaves those tensors intact."""
    p = tmp_path / "w.bin"
    a = qrt.quantize_per_tensor(rng.standard_normal(1000).astype(np.float32), 0.1, 3,
                                qrt.quint8)
    qrt.save({"a": a, "f": np.arange(10, dtype=np.float32)}, p)
    old = qrt.load_tensors(p)
    qrt.save({"b": np.zeros(1, np.int8)}, p)  # much smaller file, same path
    np.testing.assert_array_equal(old["a"].int_repr(), a.int_repr())
    np.testing.assert_array_equal(old["f"], np.arange(10, dtype=np.float32))
    assert list(qrt.load_tensors(p)) == ["b"]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["w.bin"]  # no temp file left


def test_cli_inspect_and_verify(tmp_path, rng, capsys):
    from qrt.__main__ import main
    p = tmp_path / "w.bin"
    qrt.save(_sample(rng), p)
    assert main(["inspect", str(p)]) == 0
    out = capsys.readouterr().out
    assert "tensor file: 17 tensors" in out and "per-channel axis=1" in out
    assert "pc_s8/q_per_channel_scales" in out
    assert main(["inspect", "--json", str(p)]) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["tensor_file"] is True and j["ops"] == []
    assert main(["verify", str(p)]) == 0
    assert "OK (tensor file, 17 tensors" in capsys.readouterr().out


# ---- hostile inputs ------------------------------------------------------------------------------
def test_wrong_dtype_code(tmp_path, rng):
    p = tmp_path / "w.bin"
    qrt.save(_sample(rng), p)
    at, t = _tensor_entry(p, "pt_u8")
    off = at + B.TENSOR_DTYPE.fields["dtype"][1]
    for code, msg in [(99, "unknown dtype code 99"), (0, "unknown dtype code 0"),
                      (B.DTYPE_CODE["qint32"], "nbytes"),          # 4-byte items: size wrong
                      (B.DTYPE_CODE["float32"], "no quantization parameters")]:
        buf = bytearray(p.read_bytes())
        buf[off] = code
        q = tmp_path / "bad.bin"
        q.write_bytes(bytes(_fix_crc(buf)))
        with pytest.raises(FormatError, match=msg) as ei:
            qrt.load_tensors(q)
        assert ei.value.rule == "R14" and "tensor " in str(ei.value)
        # the same byte changed without fixing the checksum: the metadata CRC catches it
        buf2 = bytearray(p.read_bytes())
        buf2[off] = code
        q.write_bytes(bytes(buf2))
        with pytest.raises(FormatError, match="R8"):
            qrt.load_tensors(q)


def test_bad_per_channel_qparams(tmp_path, rng):
    p = tmp_path / "w.bin"
    qrt.save({"w": qrt.quantize_per_channel(np.ones((2, 3), np.float32), [0.1, 0.2, 0.3],
                                            [0, 1, 2], 1, qrt.qint8)}, p)
    blob = read_blob(p)
    sc = [t for t in blob.tensors if t.name == "w/q_per_channel_scales"][0]
    zp = [t for t in blob.tensors if t.name == "w/q_per_channel_zero_points"][0]
    del blob
    for t, value, fmt, msg in [(sc, -0.5, "<f8", "scales\\[1\\]"), (sc, np.inf, "<f8", "finite"),
                               (sc, 1e-300, "<f8", "float32"), (zp, 300, "<i8", "outside")]:
        buf = bytearray(p.read_bytes())
        at = t.data_offset + np.dtype(fmt).itemsize
        buf[at:at + 8] = np.array(value, fmt).tobytes()
        q = tmp_path / "bad.bin"
        q.write_bytes(bytes(_fix_crc(buf)))
        with pytest.raises(FormatError, match=msg) as ei:
            qrt.load_tensors(q)
        assert ei.value.rule == "R14" and "(w)" in str(ei.value)


def test_corrupted_truncated_and_mixed_up_files(tmp_path, rng):
    p = tmp_path / "w.bin"
    qrt.save(_sample(rng), p)
    raw = p.read_bytes()
    q = tmp_path / "bad.bin"
    q.write_bytes(raw[:-1])
    with pytest.raises(FormatError, match="R7"):
        qrt.load_tensors(q)
    buf = bytearray(raw)
    buf[_tensor_entry(p, "f32")[1].data_offset + 5] ^= 0x10  # payload bit flip
    q.write_bytes(bytes(buf))
    with pytest.raises(FormatError, match="R12"):
        qrt.load_tensors(q)
    assert qrt.load_tensors(q, verify=False)  # structure still valid
    # a tensor file is not a model, and a model is not a tensor file
    with pytest.raises(FormatError, match="R23.*load_tensors"):
        qrt.load(p)
    demo = pytest.importorskip("qrt.data").__file__
    import os
    model_path = os.path.join(os.path.dirname(demo), "demo.bin")
    with pytest.raises(FormatError, match="R23.*qrt.load"):
        qrt.load_tensors(model_path)
    # a model blob that claims to be a tensor file
    buf = bytearray(open(model_path, "rb").read())
    f = B.HEADER_DTYPE.fields["flags"][1]
    buf[f] |= B.FLAG_TENSORS
    q.write_bytes(bytes(_fix_crc(buf)))
    with pytest.raises(FormatError, match="R23.*no ops"):
        qrt.load_tensors(q)
    # unknown flag bits stay rejected
    buf = bytearray(raw)
    buf[f] |= 0x80
    q.write_bytes(bytes(_fix_crc(buf)))
    with pytest.raises(FormatError, match="R5"):
        qrt.load_tensors(q)
    with pytest.raises(FileNotFoundError):
        qrt.load_tensors(tmp_path / "missing.bin")


def test_save_rejects_bad_arguments(tmp_path):
    p = tmp_path / "w.bin"
    q = qrt.quantize_per_channel(np.ones((2, 3), np.float32), [0.1] * 3, [0] * 3, 1, qrt.qint8)
    cases = [
        ([("a", np.zeros(2))], TypeError, "dict"),
        ({1: np.zeros(2)}, TypeError, "names must be str"),
        ({"": np.zeros(2)}, ValueError, "1..180 bytes"),
        ({"x" * 181: np.zeros(2)}, ValueError, "1..180 bytes"),
        ({"a": [1, 2]}, TypeError, "QTensor or a numpy array"),
        ({"a": np.zeros(2, bool)}, TypeError, "cannot be stored"),
        ({"a": np.zeros(2, np.float16)}, TypeError, "cannot be stored"),
        ({"a": np.zeros(2, complex)}, TypeError, "cannot be stored"),
        ({"a": np.zeros((1,) * 7, np.float32)}, ValueError, "at most 6"),
        ({"w": q, "w/q_per_channel_scales": np.zeros(3)}, ValueError, "collides"),
    ]
    for arg, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            qrt.save(arg, p)
    assert not p.exists()  # nothing is written when an argument is bad


# ---- the exporter: torch state_dict -> tensor file -----------------------------------------------
def _quantized_model(torch):
    import torch.nn as nn
    from torch.ao.quantization import DeQuantStub, QuantStub, convert, get_default_qconfig, \
        prepare

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.dq = QuantStub(), DeQuantStub()
            self.conv = nn.Conv1d(3, 4, 3)
            self.fc = nn.Linear(24, 5)
            self.fc2 = nn.Linear(5, 2, bias=False)

        def forward(self, x):
            x = self.conv(self.q(x))
            return self.dq(self.fc2(self.fc(x.flatten(1))))
    m = Net().eval()
    m.qconfig = get_default_qconfig("fbgemm")   # per-channel weights
    m.fc2.qconfig = get_default_qconfig("qnnpack")  # per-tensor weights
    p = prepare(m)
    p(torch.randn(4, 3, 8))
    return convert(p)


def test_export_state_dict_exact(qnnpack, tmp_path):
    torch = qnnpack
    from qrt_export.__main__ import main
    qm = _quantized_model(torch)
    sd = qm.state_dict()
    ck = tmp_path / "ckpt.pt"
    torch.save(sd, ck)
    out = tmp_path / "weights.bin"
    assert main(["--tensors", str(ck), "-o", str(out)]) == 0
    got = qrt.load_tensors(out)
    w = sd["conv.weight"]
    assert w.qscheme() == torch.per_channel_affine
    fcw, fcb = sd["fc._packed_params._packed_params"]
    fc2w, fc2b = sd["fc2._packed_params._packed_params"]
    assert fc2w.qscheme() == torch.per_tensor_affine
    for name, t in [("conv.weight", w), ("fc.weight", fcw), ("fc2.weight", fc2w)]:
        g = got[name]
        np.testing.assert_array_equal(g.int_repr(), t.int_repr().numpy())
        if t.qscheme() == torch.per_channel_affine:
            ts = t.q_per_channel_scales()
            assert ts.dtype == torch.float64
            assert g.q_per_channel_scales().tobytes() == ts.numpy().tobytes()
            np.testing.assert_array_equal(g.q_per_channel_zero_points(),
                                          t.q_per_channel_zero_points().numpy())
            assert g.q_per_channel_axis() == t.q_per_channel_axis()
        else:
            assert g.q_scale() == t.q_scale() and g.q_zero_point() == t.q_zero_point()
        np.testing.assert_array_equal(g.dequantize(), t.dequantize().numpy())
    np.testing.assert_array_equal(got["fc.bias"], fcb.detach().numpy())
    np.testing.assert_array_equal(got["conv.bias"], sd["conv.bias"].detach().numpy())
    if fc2b is None:  # a Linear without bias: no entry (some engines unpack zeros instead)
        assert "fc2.bias" not in got
    else:
        np.testing.assert_array_equal(got["fc2.bias"], fc2b.detach().numpy())
    assert got["q.scale"].dtype == np.float32 and got["q.zero_point"].dtype == np.int64
    meta = read_blob(out).meta
    assert "fc._packed_params.dtype" in meta["skipped"]
    # the exporter also takes an in-memory state_dict
    from qrt_export.tensors import export_tensors
    export_tensors(sd, tmp_path / "w2.bin")
    assert (tmp_path / "w2.bin").read_bytes() != b""
    # a missing checkpoint is an unreadable input file: exit code 2, as --help says (issue #48)
    assert main(["--tensors", str(tmp_path / "missing.pt"), "-o", str(out)]) == 2


def test_mutated_tensor_files_fail_cleanly(tmp_path, rng):
    """Random byte changes in the tables (checksums fixed up so the structural rules are
    what decides): every outcome is a FormatError or a file whose tensors all read."""
    p = tmp_path / "w.bin"
    qrt.save(_sample(rng), p)
    raw = p.read_bytes()
    d0 = read_blob(p).sections["DATA"]["offset"]
    q = tmp_path / "m.bin"
    outcomes = {"error": 0, "ok": 0}
    for _ in range(300):
        buf = bytearray(raw)
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(0, d0))
            buf[at] = int(rng.integers(0, 256)) if rng.random() < 0.5 else buf[at] ^ (
                1 << int(rng.integers(8)))
        q.write_bytes(bytes(_fix_crc(buf, d0)))
        try:
            got = qrt.load_tensors(q)
        except FormatError:
            outcomes["error"] += 1
            continue
        for v in got.values():  # whatever loaded is usable
            if isinstance(v, qrt.QTensor):
                try:
                    v.dequantize()
                except ValueError as e:  # 32-bit numpy can't shape (0, 2^30+) float arrays
                    assert sys.maxsize < 2**32 and "too big" in str(e), e
                np.asarray(v.int_repr()).sum()
            else:
                np.asarray(v).sum()
        outcomes["ok"] += 1
    assert outcomes["error"] > 100, outcomes

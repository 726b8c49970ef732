# SPDX-License-Identifier: Apache-2.0
"""Fuzz the loader: mutated real blobs must raise qrt.FormatError or load correctly.

Never a crash, a hang, another exception type, or a model that then misbehaves.
"""

import os

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import qrt  # noqa: E402
from qrt import _blob as B  # noqa: E402
from qrt.loader import FormatError  # noqa: E402

from test_blob_format import fix_crc, make_builder, section  # noqa: E402

BASE = bytes(make_builder().to_bytes())
X = np.random.default_rng(0).standard_normal((2, 4, 6)).astype(np.float32)
DEMO = os.path.join(os.path.dirname(qrt.__file__), "data", "demo.bin")
DEMO_BYTES = open(DEMO, "rb").read() if os.path.exists(DEMO) else None
XD = np.random.default_rng(1).standard_normal((2, 1, 128)).astype(np.float32)


def _fields_spans():
    """(offset, size) of every integer/float field in the header, section, tensor, op tables."""
    buf = bytearray(BASE)
    spans = []
    for name, (dt, off) in B.HEADER_DTYPE.fields.items():
        spans.append((off, dt.itemsize))
    for kind, dtype in (("TENSORS", B.TENSOR_DTYPE), ("OPS", B.OP_DTYPE), ("IO", B.IO_DTYPE)):
        _, soff, ssize = section(buf, kind)
        for e in range(ssize // dtype.itemsize):
            for name, (dt, off) in dtype.fields.items():
                base = dt.base if dt.subdtype else dt
                n = dt.itemsize // base.itemsize
                for j in range(n):
                    spans.append((soff + e * dtype.itemsize + off + j * base.itemsize,
                                  base.itemsize))
    ntab = B.HEADER_SIZE
    for e in range(7):
        for name, (dt, off) in B.SECTION_DTYPE.fields.items():
            spans.append((ntab + e * B.SECTION_SIZE + off, dt.itemsize))
    return spans


SPANS = _fields_spans()
EXTREMES = [0, 1, 2, 3, 7, 8, 63, 64, 65, 127, 128, 255, 256, 2**15, 2**16 - 1, 2**31 - 1,
            2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1]


def _check(tmp_path, buf, verify=True, x=X):
    p = tmp_path / "fuzz.bin"
    p.write_bytes(bytes(buf))
    try:
        m = qrt.load(p, verify=verify)
    except FormatError:
        return "rejected"
    # A blob that loads must also run (or refuse the input with a clean error).
    try:
        y = m(x)
    except (ValueError, TypeError):
        return "loaded"
    assert isinstance(y, (np.ndarray, qrt.QTensor, tuple))
    return "ran"


SET = settings(max_examples=150, deadline=None,
               suppress_health_check=list(HealthCheck))


@SET
@given(st.lists(st.integers(0, len(BASE) * 8 - 1), min_size=1, max_size=4, unique=True),
       st.booleans())
def test_blob_fuzz_bit_flips(tmp_path_factory, bits, recrc):
    buf = bytearray(BASE)
    for b in bits:
        buf[b // 8] ^= 1 << (b % 8)
    if recrc:
        buf = fix_crc(buf)
        _check(tmp_path_factory.mktemp("f"), buf)
    else:
        # Without fixing the CRC, a flip anywhere must be detected.
        with pytest.raises(FormatError):
            p = tmp_path_factory.mktemp("f") / "x.bin"
            p.write_bytes(bytes(buf))
            qrt.load(p)


@SET
@given(st.integers(0, len(BASE) - 1))
def test_blob_fuzz_truncation(tmp_path_factory, n):
    p = tmp_path_factory.mktemp("t") / "x.bin"
    p.write_bytes(BASE[:n])
    with pytest.raises(FormatError):
        qrt.load(p)


@SET
@given(st.sampled_from(SPANS), st.sampled_from(EXTREMES), st.booleans())
def test_blob_fuzz_extreme_fields(tmp_path_factory, span, value, negative):
    off, size = span
    buf = bytearray(BASE)
    v = value % (1 << (8 * size))
    if negative:
        v = (-value) % (1 << (8 * size))
    buf[off:off + size] = v.to_bytes(size, "little")
    buf = fix_crc(buf)
    _check(tmp_path_factory.mktemp("e"), buf)


def test_blob_fuzz_every_header_byte(tmp_path):
    """Exhaustive: each header/section-table byte set to 0xFF, CRC fixed: reject or load."""
    end = B.HEADER_SIZE + 7 * B.SECTION_SIZE
    outcomes = set()
    for i in range(end):
        buf = bytearray(BASE)
        buf[i] = 0xFF if buf[i] != 0xFF else 0
        outcomes.add(_check(tmp_path, fix_crc(buf)))
    assert "rejected" in outcomes


def _spans_of(blob: bytes):
    spans = []
    for kind, dtype in (("TENSORS", B.TENSOR_DTYPE), ("OPS", B.OP_DTYPE)):
        _, soff, ssize = section(bytearray(blob), kind)
        for e in range(ssize // dtype.itemsize):
            for name, (dt, off) in dtype.fields.items():
                base = dt.base if dt.subdtype else dt
                for j in range(dt.itemsize // base.itemsize):
                    spans.append((soff + e * dtype.itemsize + off + j * base.itemsize,
                                  base.itemsize))
    return spans


DEMO_SPANS = _spans_of(DEMO_BYTES) if DEMO_BYTES else [(0, 1)]


@pytest.mark.skipif(DEMO_BYTES is None, reason="demo.bin not built")
@SET
@given(st.sampled_from(DEMO_SPANS), st.sampled_from(EXTREMES), st.booleans())
def test_blob_fuzz_demo_tables(tmp_path_factory, span, value, negative):
    """Extreme values in the real demo model's tensor and op tables (CRC fixed)."""
    off, size = span
    buf = bytearray(DEMO_BYTES)
    v = ((-value) if negative else value) % (1 << (8 * size))
    buf[off:off + size] = v.to_bytes(size, "little")
    _check(tmp_path_factory.mktemp("d"), fix_crc(buf), x=XD)


@pytest.mark.skipif(DEMO_BYTES is None, reason="demo.bin not built")
@SET
@given(st.lists(st.integers(0, 8 * 2304 - 1), min_size=1, max_size=3, unique=True))
def test_blob_fuzz_demo_bit_flips(tmp_path_factory, bits):
    """Bit flips in the demo's metadata region (attrs JSON, strings, tables), CRC fixed."""
    buf = bytearray(DEMO_BYTES)
    for b in bits:
        buf[b // 8] ^= 1 << (b % 8)
    _check(tmp_path_factory.mktemp("d"), fix_crc(buf), x=XD)

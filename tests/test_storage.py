# SPDX-License-Identifier: Apache-2.0
"""qrt.Storage: constructors, views, buffer protocol, mmap, resize, hostile arguments."""

from __future__ import annotations

import gc
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import qrt
from qrt import Storage

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None)


# ---- constructors --------------------------------------------------------------------------------
def test_empty_full_sizes_and_alignment():
    for n in list(range(0, 130)) + [4095, 4096, 4097, 1 << 20]:
        s = Storage.empty(n)
        assert len(s) == s.nbytes == s.size() == n
        assert s.data_ptr() % 64 == 0 and s.data_ptr() != 0
        assert s.owned and not s.readonly and not s.is_shared() and s.base is None
    f = Storage.full(100, 7)
    assert f.tobytes() == b"\x07" * 100
    assert Storage.full(0, 255).tobytes() == b""
    assert len(Storage()) == 0 and Storage().owned and Storage().data_ptr() % 64 == 0


@pytest.mark.parametrize("bad", [-1, -(2**70)])
def test_negative_sizes_are_value_errors(bad):
    for f in (lambda: Storage.empty(bad), lambda: Storage.full(bad, 0),
              lambda: Storage.full(4, 0).resize_(bad)):
        with pytest.raises(ValueError, match="nbytes"):
            f()


def test_huge_sizes_raise_instead_of_crashing():
    with pytest.raises(ValueError, match="too large"):
        Storage.empty(2**80)
    # 64-bit: no memory for it; 32-bit: larger than the address space, refused up front
    with pytest.raises(MemoryError if sys.maxsize > 2**32 else ValueError):
        Storage.empty(2**62)
    with pytest.raises(MemoryError if sys.maxsize > 2**32 else ValueError):
        Storage.full(2**62, 1)
    s = Storage.full(8, 1)
    with pytest.raises(MemoryError if sys.maxsize > 2**32 else ValueError):
        s.resize_(2**62)
    assert s.tobytes() == b"\x01" * 8  # unchanged after the failed resize


@pytest.mark.parametrize("bad", [1.5, "3", None, b"1", [1]])
def test_wrong_size_types_are_type_errors(bad):
    with pytest.raises(TypeError, match="nbytes"):
        Storage.empty(bad)
    with pytest.raises(TypeError):
        Storage.full(bad, 0)


def test_fill_values_outside_a_byte_are_value_errors():
    for v in (-1, 256, 2**70):
        with pytest.raises(ValueError, match="0..255"):
            Storage.full(4, v)
        with pytest.raises(ValueError, match="0..255"):
            Storage.full(4, 0).fill_(v)
        s = Storage.full(4, 0)
        with pytest.raises(ValueError, match="0..255"):
            s[0] = v
        with pytest.raises(ValueError, match="0..255"):
            s[0:2] = v
        assert s.tobytes() == b"\0" * 4
    for v in (1.0, "a", None):
        with pytest.raises(TypeError):
            Storage.full(4, v)
        with pytest.raises(TypeError):
            Storage.full(4, 0).fill_(v)
    assert Storage.full(3, np.uint8(9)).tobytes() == b"\t" * 3


def test_constructor_takes_no_arguments():
    with pytest.raises(TypeError, match="Storage.empty"):
        Storage(10)


# ---- indexing ----------------------------------------------------------------------------------
def test_item_get_set_and_negative_indices():
    s = Storage.from_buffer(bytearray(range(10)))
    assert s[0] == 0 and s[9] == 9 and s[-1] == 9 and s[-10] == 0
    s[-1] = 200
    s[np.int64(2)] = 100
    assert s[9] == 200 and s[2] == 100
    for bad in (10, -11, 2**70, -(2**70)):
        with pytest.raises(IndexError):
            s[bad]
        with pytest.raises(IndexError):
            s[bad] = 1
    for bad in (1.0, "1", None, (1,)):
        with pytest.raises(TypeError):
            s[bad]
        with pytest.raises(TypeError):
            s[bad] = 1
    with pytest.raises(IndexError):
        Storage.empty(0)[0]


def test_slices_are_views_sharing_memory():
    s = Storage.from_buffer(bytearray(range(20)))
    v = s[5:10]
    assert len(v) == 5 and v.tobytes() == bytes(range(5, 10))
    assert v.data_ptr() == s.data_ptr() + 5 and v.base is s and not v.owned
    v[0] = 99
    assert s[5] == 99
    s[6] = 98
    assert v[1] == 98
    assert len(s[15:5]) == 0 and len(s[100:200]) == 0 and s[-3:].tobytes() == bytes([17, 18, 19])
    vv = v[1:3]  # view of a view
    vv[0] = 1
    assert s[6] == 1
    with pytest.raises(ValueError, match="step"):
        s[::2]


def test_slice_assignment_int_bytes_storage_and_overlap():
    s = Storage.full(10, 0)
    s[0:3] = 7
    s[3:6] = b"abc"
    s[6:8] = bytearray(b"xy")
    s[8:10] = Storage.full(2, 5)
    s[0:0] = b""
    assert s.tobytes() == b"\x07\x07\x07abcxy\x05\x05"
    s[2:8] = s[0:6]  # overlapping: memmove semantics
    assert s.tobytes() == b"\x07\x07\x07\x07\x07abc\x05\x05"
    s[0:4] = np.array([1, 2, 3, 4], np.uint8)
    s[4:5] = memoryview(b"z")
    s[8:10] = np.uint8(3)
    assert s[8] == s[9] == 3
    assert s.tobytes()[:5] == b"\x01\x02\x03\x04z"
    with pytest.raises(ValueError, match="3 bytes given for 2"):
        s[0:2] = b"abc"
    with pytest.raises(TypeError, match="bytes-like"):
        s[0:2] = 1.5
    with pytest.raises(TypeError, match="bytes-like"):
        s[0:2] = "ab"
    with pytest.raises(ValueError, match="contiguous"):
        s[0:2] = np.arange(4, dtype=np.uint8)[::2]


# ---- bulk ops ----------------------------------------------------------------------------------
def test_fill_copy_tobytes_numpy_clone_pickle():
    s = Storage.empty(16)
    assert s.fill_(3) is s and s.tobytes() == b"\3" * 16
    assert s.copy_(bytes(range(16))) is s and s.tolist() == list(range(16))
    s.copy_(Storage.full(16, 1))
    assert s.tobytes() == b"\1" * 16
    with pytest.raises(ValueError, match="copy_"):
        s.copy_(b"123")
    with pytest.raises(TypeError, match="copy_"):
        s.copy_(3.0)
    a = s.numpy()
    assert a.dtype == np.uint8 and a.shape == (16,) and a.ctypes.data == s.data_ptr()
    a[0] = 42
    assert s[0] == 42
    c = s.clone()
    assert c.tobytes() == s.tobytes() and c.data_ptr() != s.data_ptr() and c.owned
    p = pickle.loads(pickle.dumps(s))
    assert p.tobytes() == s.tobytes() and p.owned
    assert "nbytes=16" in repr(s)


def test_buffer_protocol_shares_memory():
    s = Storage.full(32, 1)
    m = memoryview(s)
    assert m.format == "B" and m.shape == (32,) and m.strides == (1,) and not m.readonly
    m[3] = 9
    assert s[3] == 9
    a = np.frombuffer(s, np.uint8)
    assert a.ctypes.data == s.data_ptr() and a.flags.writeable
    a[4] = 8
    assert s[4] == 8
    assert bytes(s)[3:5] == b"\x09\x08"
    assert np.frombuffer(s, np.float32).size == 8
    m.release()


# ---- from_buffer -------------------------------------------------------------------------------
def test_from_buffer_is_zero_copy_and_keeps_the_object_alive():
    a = np.arange(64, dtype=np.uint8)
    s = Storage.from_buffer(a)
    assert s.data_ptr() == a.ctypes.data and not s.owned and s.base is a
    del a
    gc.collect()
    assert s.tolist() == list(range(64))
    b = bytearray(b"hello")
    s = Storage.from_buffer(b)
    s[0] = ord("j")
    assert b == b"jello"
    with pytest.raises(BufferError):
        b.extend(b"!")  # bytearray cannot resize while exported: no dangling pointer
    f = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert Storage.from_buffer(f).nbytes == 24


def test_from_buffer_respects_read_only():
    for ro in (b"abc", np.frombuffer(b"abc", np.uint8), memoryview(b"abc"),
               Storage.from_buffer(b"abc")):
        s = Storage.from_buffer(ro)
        assert s.readonly and s.tobytes() == b"abc"
        for write in (lambda: s.__setitem__(0, 1), lambda: s.fill_(1),
                      lambda: s.copy_(b"xyz"), lambda: s.__setitem__(slice(0, 2), b"xy")):
            with pytest.raises(TypeError, match="read-only"):
                write()
        with pytest.raises((TypeError, ValueError), match="read-only"):
            s.numpy()[0] = 1
        with pytest.raises(TypeError):
            memoryview(s)[0] = 1
        assert s[0:2].readonly
        assert s.tobytes() == b"abc"


@pytest.mark.parametrize("bad", [3, "abc", None, [1, 2], object()])
def test_from_buffer_wrong_types(bad):
    with pytest.raises(TypeError, match="buffer protocol"):
        Storage.from_buffer(bad)


def test_from_buffer_non_contiguous_is_refused():
    with pytest.raises(ValueError, match="contiguous"):
        Storage.from_buffer(np.arange(10, dtype=np.uint8)[::2])


# ---- resize --------------------------------------------------------------------------------------
def test_resize_keeps_prefix_and_zero_fills():
    s = Storage.full(10, 5)
    r = s.resize_(20)  # not inside the assert: pytest's rewrite keeps the bound method alive
    assert r is s
    del r
    assert s.tobytes() == b"\5" * 10 + b"\0" * 10 and s.data_ptr() % 64 == 0
    s.resize_(3)
    assert s.tobytes() == b"\5" * 3
    s.resize_(0)
    assert len(s) == 0
    s.resize_(4)
    assert s.tobytes() == b"\0" * 4


def test_resize_refuses_views_mappings_and_live_exports(tmp_path):
    parent = Storage.full(10, 1)
    v = parent[2:5]
    with pytest.raises(ValueError, match="view"):
        v.resize_(2)
    with pytest.raises(BufferError, match="live view"):
        parent.resize_(100)  # the slice points into parent
    del v
    gc.collect()
    a = parent.numpy()
    with pytest.raises(BufferError, match="live view"):
        parent.resize_(100)
    assert a.tolist() == [1] * 10  # still valid memory
    del a
    gc.collect()
    parent.resize_(100)
    with pytest.raises(ValueError, match="view"):
        Storage.from_buffer(bytearray(4)).resize_(8)
    p = tmp_path / "f.bin"
    p.write_bytes(b"abcd")
    with pytest.raises(ValueError, match="memory-mapped"):
        Storage.from_file(p).resize_(8)
    e = tmp_path / "empty.bin"
    e.write_bytes(b"")
    with pytest.raises(ValueError, match="memory-mapped"):
        Storage.from_file(e).resize_(8)


def test_views_outlive_their_parent():
    s = Storage.full(1000, 3)
    v = s[10:20]
    a = v.numpy()
    del s
    gc.collect()
    assert v.tobytes() == b"\3" * 10 and a.tolist() == [3] * 10
    m = memoryview(Storage.full(5, 4)[1:3])
    gc.collect()
    assert m.tobytes() == b"\4\4"


# ---- from_file (mmap) ---------------------------------------------------------------------------
def test_from_file_private_is_copy_on_write(tmp_path):
    p = tmp_path / "w.bin"
    p.write_bytes(bytes(range(16)))
    s = Storage.from_file(p)
    assert len(s) == 16 and s.tolist() == list(range(16)) and not s.is_shared()
    s[0] = 200
    s[1:3] = b"zz"
    assert s[0] == 200
    del s
    gc.collect()
    assert p.read_bytes() == bytes(range(16))  # the file never changes
    s = Storage.from_file(str(p), False, 4)
    assert s.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="larger than the file"):
        Storage.from_file(p, False, 17)


def test_from_file_shared_writes_through(tmp_path):
    p = tmp_path / "s.bin"
    p.write_bytes(b"\0" * 8)
    s = Storage.from_file(p, shared=True)
    assert s.is_shared() and s[2:4].is_shared()
    s[0] = 65
    s[4:8] = b"WXYZ"
    other = Storage.from_file(p, shared=True)  # a second mapping sees the write at once
    assert other[0] == 65
    del s, other
    gc.collect()
    assert p.read_bytes() == b"A\0\0\0WXYZ"
    q = tmp_path / "grow.bin"
    g = Storage.from_file(q, shared=True, nbytes=32)  # created and grown, as torch does
    g.fill_(1)
    del g
    gc.collect()
    assert q.read_bytes() == b"\1" * 32


def test_from_file_read_only_and_empty(tmp_path):
    p = tmp_path / "r.bin"
    p.write_bytes(b"data")
    r = Storage.from_file(p, readonly=True)
    assert r.readonly
    with pytest.raises(TypeError, match="read-only"):
        r[0] = 1
    e = tmp_path / "e.bin"
    e.write_bytes(b"")
    for shared in (False, True):
        m = Storage.from_file(e, shared=shared)
        assert len(m) == 0 and m.tobytes() == b"" and m.numpy().size == 0
        assert m.is_shared() == shared


def test_from_file_hostile_arguments(tmp_path):
    with pytest.raises(FileNotFoundError):
        Storage.from_file(tmp_path / "missing")
    with pytest.raises(IsADirectoryError):
        Storage.from_file(tmp_path)
    p = tmp_path / "x.bin"
    p.write_bytes(b"1234")
    with pytest.raises(ValueError, match="nbytes"):
        Storage.from_file(p, False, -1)
    with pytest.raises(TypeError, match="nbytes"):
        Storage.from_file(p, False, 1.5)
    with pytest.raises(TypeError):
        Storage.from_file(3.5)
    with pytest.raises((OSError, ValueError, MemoryError)):
        Storage.from_file(tmp_path / "huge.bin", True, 2**62)


def test_mapping_survives_file_deletion(tmp_path):
    p = tmp_path / "d.bin"
    p.write_bytes(b"keep")
    s = Storage.from_file(p)
    os.remove(p)
    assert s.tobytes() == b"keep"


# ---- a crash would kill the interpreter: run the nastiest sequences in a subprocess -----------
def test_nasty_sequences_do_not_crash(tmp_path):
    code = r"""
import gc, numpy as np, qrt
S = qrt.Storage
s = S.full(64, 1); v = s[8:16]; a = v.numpy(); del s, v; gc.collect(); assert a.sum() == 8
s = S.full(64, 1); a = s.numpy()
try: s.resize_(1 << 20)
except BufferError: pass
a[:] = 2; del a; gc.collect(); s.resize_(1 << 20); assert s[0] == 2 and s[100] == 0
for n in range(0, 300, 7):
    t = S.empty(n); t.fill_(n % 256); u = t[n // 3: n // 2]; u.copy_(bytes(len(u)))
m = S.__new__(S); assert len(m) == 0; m.tobytes(); m.fill_(0); m.numpy()
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_resize_refuses_while_any_array_memoryview_or_qtensor_reaches_the_memory():
    """Issue #13 defect 1: every way to view a storage keeps resize_ from freeing it.

    Each case runs in a subprocess: before the fix, ``int_repr()`` and
    ``np.ndarray(buffer=storage)`` let resize_ free the memory, and the write through the
    array then corrupted the heap or crashed the interpreter.
    """
    code = r"""
import gc, numpy as np, qrt
S = qrt.Storage
def qt():
    s = S.full(4096, 3)
    return s, qrt.QTensor(s, (4096,), qrt.quint8, 0.5, 0)
cases = {
    "int_repr": lambda: (lambda s, t: (s, t.int_repr()))(*qt()),
    "int_repr_slice": lambda: (lambda s, t: (s, t.int_repr()[10:20]))(*qt()),
    "qtensor": qt,
    "qtensor_view": lambda: (lambda s, t: (s, t[5:9]))(*qt()),
    "frombuffer": lambda: (lambda s: (s, np.frombuffer(s, np.uint8)))(S.full(4096, 3)),
    "ndarray_buffer": lambda: (lambda s: (s, np.ndarray((4096,), np.uint8, buffer=s)))(
        S.full(4096, 3)),
    "memoryview": lambda: (lambda s: (s, memoryview(s)))(S.full(4096, 3)),
    "memoryview_slice": lambda: (lambda s: (s, memoryview(s)[1:]))(S.full(4096, 3)),
    "numpy": lambda: (lambda s: (s, s.numpy()))(S.full(4096, 3)),
    "slice": lambda: (lambda s: (s, s[100:200]))(S.full(4096, 3)),
}
for name, make in cases.items():
    s, view = make()
    gc.collect()
    try:
        s.resize_(1)
    except BufferError:
        pass
    else:
        raise SystemExit(f"{name}: resize_ accepted while a view exists")
    assert s.nbytes == 4096, name
    if isinstance(view, qrt.QTensor):
        view.int_repr()[...] = 7
        assert int(view.int_repr().reshape(-1)[0]) == 7
    elif isinstance(view, S):
        view.fill_(7)
    else:
        m = np.asarray(view) if not isinstance(view, memoryview) else np.frombuffer(view, np.uint8)
        m[...] = 7
        assert m.reshape(-1)[0] == 7
        del m
    del view
    gc.collect()
    try:
        s.resize_(1)  # once nothing else refers to the storage, resize_ works again
    except BufferError as e:
        raise SystemExit(f"{name}: {e}")
    assert s.nbytes == 1, name
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr)


def test_qtensor_pickles_and_copies_with_its_storage_pinned():
    """The pin (a memoryview export) that keeps resize_ away is not part of the state."""
    import copy
    t = qrt.quantize_per_channel(np.arange(6, dtype=np.float32).reshape(2, 3),
                                 np.array([0.5, 0.25]), np.array([0, 3]), 0, qrt.quint8)
    for u in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t), copy.copy(t)):
        np.testing.assert_array_equal(u.int_repr(), t.int_repr())
        assert u.q_per_channel_axis() == 0
        with pytest.raises(BufferError):
            u.storage().resize_(1)


# ---- property tests --------------------------------------------------------------------------
@SETTINGS
@given(data=st.binary(max_size=300), a=st.integers(-400, 400), b=st.integers(-400, 400))
def test_property_slices_match_bytes(data, a, b):
    s = Storage.from_buffer(bytearray(data))
    assert s[a:b].tobytes() == data[a:b]
    assert bytes(s) == data and s.tobytes() == data


@SETTINGS
@given(data=st.binary(min_size=1, max_size=300), a=st.integers(0, 300), b=st.integers(0, 300),
       fill=st.integers(0, 255))
def test_property_slice_assignment_matches_bytearray(data, a, b, fill):
    ref = bytearray(data)
    s = Storage.empty(len(data))
    s.copy_(data)
    n = len(ref[a:b])
    ref[a:b] = bytes([fill]) * n
    s[a:b] = fill
    assert s.tobytes() == bytes(ref)
    chunk = bytes((i * 7) % 256 for i in range(n))
    ref[a:b] = chunk
    s[a:b] = chunk
    assert s.tobytes() == bytes(ref)


@SETTINGS
@given(n=st.integers(0, 500), m=st.integers(0, 500), v=st.integers(0, 255))
def test_property_resize_keeps_prefix(n, m, v):
    s = Storage.full(n, v)
    s.resize_(m)
    k = min(n, m)
    assert s.tobytes() == bytes([v]) * k + b"\0" * (m - k)
    assert s.data_ptr() % 64 == 0


_floats = st.floats(width=32, allow_nan=True, allow_infinity=True)


@SETTINGS
@given(xs=st.lists(_floats, min_size=1, max_size=64),
       scale=st.floats(1e-6, 1e3), zp=st.integers(0, 255))
def test_property_quantize_dequantize_bounds_quint8(xs, scale, zp):
    x = np.array(xs, np.float32)
    q = qrt.quantize_per_tensor(x, scale, zp, qrt.quint8)
    y = q.dequantize()
    s = float(np.float32(scale))
    lo, hi = (0 - zp) * s, (255 - zp) * s
    fin = np.isfinite(x)
    inside = fin & (x >= lo) & (x <= hi)
    err = np.abs(y[inside].astype(np.float64) - x[inside])
    assert np.all(err <= s / 2 * (1 + 1e-5) + np.abs(x[inside]) * 2.0**-23)
    # outside the range: saturates to the nearest end
    assert np.all(q.int_repr()[fin & (x < lo - s)] == 0)
    assert np.all(q.int_repr()[fin & (x > hi + s)] == 255)


@SETTINGS
@given(ints=st.lists(st.integers(-128, 127), min_size=1, max_size=64),
       scale=st.floats(1e-6, 1e3), zp=st.integers(-128, 127))
def test_property_from_int_repr_round_trips(ints, scale, zp):
    i8 = np.array(ints, np.int8)
    q = qrt.from_int_repr(i8, scale, zp)
    assert np.shares_memory(q.int_repr(), i8)
    back = qrt.quantize_per_tensor(q.dequantize(), scale, zp, qrt.qint8)
    assert np.array_equal(back.int_repr(), i8)  # dequantize then quantize is the identity
    qc = qrt.from_int_repr_per_channel(i8.reshape(1, -1), [scale], [zp], 0)
    assert np.array_equal(qrt.quantize_per_channel(qc.dequantize(), [scale], [zp], 0,
                                                   qrt.qint8).int_repr(), i8.reshape(1, -1))

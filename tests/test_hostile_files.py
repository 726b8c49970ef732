# SPDX-License-Identifier: Apache-2.0
"""Issue #13: FIFOs and other non-files, files shrinking or changing under a mapping,
atomic replacement by every qrt writer, and Model.verify().

Everything that could hang or crash runs in a subprocess with a timeout, so that a
regression fails the test instead of killing or blocking the test run.
"""

import os
import signal
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import qrt
from qrt import FormatError, Storage
from qrt._fileio import NotARegularFileError, replace_file
from qrt.loader import read_blob

from test_loader import conv_blob
from _qemu import skip_under_qemu

# file-type, mapping and atomic-replace checks are Python and OS-level: run on x86 (they
# start many guest interpreters under emulation)
pytestmark = skip_under_qemu("OS-level file checks run on x86")


@pytest.fixture()
def odd_paths(tmp_path):
    """A FIFO, a Unix socket, a directory and a character device."""
    fifo = tmp_path / "pipe.bin"
    os.mkfifo(fifo)
    sock_path = tmp_path / "s.bin"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(sock_path))
    yield {"fifo": str(fifo), "socket": str(sock_path), "directory": str(tmp_path),
           "character device": "/dev/zero"}
    sock.close()


# ---- defect 4: never block on, never map a non-file -----------------------------------------
def test_readers_refuse_fifos_sockets_directories_devices_without_blocking(odd_paths):
    """Before the fix qrt.load / load_tensors / Storage.from_file on a FIFO blocked forever
    (the subprocess times out); on /dev/zero they failed with a misleading R1."""
    code = """
    import json, sys, qrt
    from qrt.loader import read_blob
    paths = json.loads(sys.argv[1])
    calls = {
        "qrt.load": lambda p: qrt.load(p),
        "qrt.load(mmap=False)": lambda p: qrt.load(p, mmap=False),
        "load_tensors": lambda p: qrt.load_tensors(p),
        "load_tensors(mmap=False)": lambda p: qrt.load_tensors(p, mmap=False),
        "read_blob": lambda p: read_blob(p),
        "Storage.from_file": lambda p: qrt.Storage.from_file(p),
        "Storage.from_file(shared)": lambda p: qrt.Storage.from_file(p, shared=True),
        "Storage.from_file(mmap=False)": lambda p: qrt.Storage.from_file(p, mmap=False),
    }
    for kind, p in paths.items():
        for name, f in calls.items():
            try:
                f(p)
            except OSError as e:
                want = IsADirectoryError if kind == "directory" else \\
                    qrt._fileio.NotARegularFileError
                assert isinstance(e, want), (name, kind, type(e), e)
                assert kind in str(e) and p in str(e), (name, kind, str(e))
            else:
                raise SystemExit(f"{name} accepted a {kind}")
    print("ok")
    """
    import json
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code), json.dumps(odd_paths)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.stdout, r.stderr)


def test_directory_and_device_errors_in_process(odd_paths):
    """(FIFOs only in the subprocess above: a regression would block this process.)"""
    with pytest.raises(IsADirectoryError, match="directory"):
        read_blob(odd_paths["directory"])
    with pytest.raises(NotARegularFileError, match="character device"):
        qrt.load("/dev/zero")
    with pytest.raises(NotARegularFileError, match="socket"):
        Storage.from_file(odd_paths["socket"])


# ---- defect 2: a file shrinking under a mapping ---------------------------------------------
_TRUNCATE = """
import os, sys, numpy as np, qrt
path, mmap = sys.argv[1], sys.argv[2] == "1"
t = qrt.load_tensors(path, mmap=mmap)["w"]
s = qrt.Storage.from_file(path, mmap=mmap, readonly=True)
m = qrt.load(sys.argv[3], mmap=mmap)
x = np.random.default_rng(0).standard_normal((2, 4, 20)).astype(np.float32)
y0 = m(x)
before = int(t.sum()), s.tobytes()[-4096:]
with open(path, "r+b") as f:  # what `cp other.bin model.bin` does: truncate, then write
    f.truncate(0)
with open(sys.argv[3], "r+b") as f:
    f.truncate(0)
print("truncated", flush=True)
assert (int(t.sum()), s.tobytes()[-4096:]) == before, "the in-memory copy changed"
np.testing.assert_array_equal(m(x), y0)
print("same answers", flush=True)
"""


def test_truncating_a_mapped_file_kills_mmap_users_and_not_mmap_false(tmp_path):
    """What ``cp new.bin model.bin`` does to a process that has model.bin loaded.

    mmap=True: the next touch of the lost pages raises SIGBUS (the documented hazard, and
    why qrt's own writers rename instead). mmap=False: the process does not notice.
    """
    tensors = tmp_path / "t.bin"
    qrt.save({"w": np.arange(1 << 16, dtype=np.int32)}, tensors)  # 256 KiB: many pages
    model = tmp_path / "m.bin"
    for mmap, expect in (("1", -signal.SIGBUS), ("0", 0)):
        conv_blob(model)
        qrt.save({"w": np.arange(1 << 16, dtype=np.int32)}, tensors)
        r = subprocess.run([sys.executable, "-c", _TRUNCATE, str(tensors), mmap, str(model)],
                           capture_output=True, text=True, timeout=120)
        assert "truncated" in r.stdout, r.stderr
        assert r.returncode == expect, (mmap, r.returncode, r.stdout, r.stderr)
        if mmap == "0":
            assert "same answers" in r.stdout


def test_storage_from_file_mmap_false_reads_a_private_copy(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(bytes(range(200)))
    s = Storage.from_file(p, mmap=False)
    assert s.tobytes() == bytes(range(200)) and not s.mapped and not s.readonly
    assert s.data_ptr() % 64 == 0
    p.write_bytes(b"")  # truncate in place: nothing reaches the copy
    assert s.tobytes() == bytes(range(200))
    r = Storage.from_file(tmp_path / "f.bin", mmap=False, readonly=True)
    assert r.readonly and len(r) == 0
    with pytest.raises(ValueError, match="shared"):
        Storage.from_file(p, shared=True, mmap=False)


# ---- defect 2: qrt's writers replace files, never write into them -----------------------------
_WRITERS = """
import os, sys, numpy as np, qrt
from qrt_export._writer import BlobBuilder

path = sys.argv[1]
old = qrt.load_tensors(path)["w"]            # mapped
st = qrt.Storage.from_file(path, readonly=True)
ino = os.stat(path).st_ino
expect = old.copy()
qrt.save({"w": np.zeros(3, np.int32)}, path)  # qrt.save over a mapped file
assert os.stat(path).st_ino != ino
b = BlobBuilder(); b.constant("w", np.ones(5, np.int32)); b.flags |= qrt._blob.FLAG_TENSORS
ino = os.stat(path).st_ino
b.write(path)                                  # the exporter's writer over it again
assert os.stat(path).st_ino != ino
np.testing.assert_array_equal(old, expect)     # the old mapping is intact (old inode)
assert st.tobytes()[:4] == b"QRTB"
assert qrt.load_tensors(path)["w"].tolist() == [1] * 5
print("ok")
"""


def test_every_qrt_writer_replaces_the_file_atomically(tmp_path):
    """Before the fix BlobBuilder.write truncated the file in place: the old mapping then
    died of SIGBUS when touched (or read zeros)."""
    p = tmp_path / "t.bin"
    qrt.save({"w": np.arange(1 << 16, dtype=np.int32)}, p)
    r = subprocess.run([sys.executable, "-c", _WRITERS, str(p)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr)
    assert sorted(os.listdir(tmp_path)) == ["t.bin"]  # no temporary files left behind


def test_cli_run_output_replaces_the_file(tmp_path):
    model = tmp_path / "m.bin"
    conv_blob(model)
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((2, 4, 20), np.float32))
    out = tmp_path / "y.npy"
    out.write_bytes(b"old")
    ino = os.stat(out).st_ino
    r = subprocess.run([sys.executable, "-m", "qrt", "run", str(model), "-i", str(x), "-o",
                        str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert os.stat(out).st_ino != ino and np.load(out).shape == (2, 5)


def test_replace_file_keeps_mode_follows_links_and_cleans_up(tmp_path):
    p = tmp_path / "a.bin"
    p.write_bytes(b"x")
    os.chmod(p, 0o640)
    assert replace_file(p, b"hello") == 5
    assert p.read_bytes() == b"hello" and (os.stat(p).st_mode & 0o777) == 0o640
    link = tmp_path / "link.bin"
    link.symlink_to(p)
    replace_file(link, b"via link")
    assert link.is_symlink() and p.read_bytes() == b"via link"

    def boom(f):
        f.write(b"partial")
        raise RuntimeError("writer failed")
    with pytest.raises(RuntimeError):
        replace_file(p, boom)
    assert p.read_bytes() == b"via link"  # the old content survives a failed write
    assert sorted(os.listdir(tmp_path)) == ["a.bin", "link.bin"]
    replace_file("/dev/null", b"not a regular file: written directly")
    with pytest.raises(FileNotFoundError):
        replace_file(tmp_path / "no" / "such.bin", b"")
    with pytest.raises(IsADirectoryError):
        replace_file(tmp_path, b"")


# ---- defect 3: Model.verify() ------------------------------------------------------------------
def _flip(path, offset):
    with open(path, "r+b") as f:  # an in-place write, as a careless deploy script does it
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x40]))


def test_model_verify_detects_bytes_changed_under_the_mapping(tmp_path):
    p = tmp_path / "m.bin"
    conv_blob(p)
    m = qrt.load(p)
    m.verify()  # unchanged: passes
    blob = m._blob
    data = blob.sections["DATA"]["offset"]
    _flip(p, data + 3)  # a weight byte
    with pytest.raises(FormatError, match="R12"):
        m.verify()
    _flip(p, data + 3)
    m.verify()
    _flip(p, blob.sections["STRINGS"]["offset"])  # a name in the tables
    with pytest.raises(FormatError, match="R8"):
        m.verify()
    _flip(p, blob.sections["STRINGS"]["offset"])
    # mmap=False: the model holds its own copy; the file changing does not matter
    m2 = qrt.load(p, mmap=False)
    _flip(p, data + 3)
    m2.verify()
    with pytest.raises(FormatError, match="R12"):
        m.verify()


def test_model_verify_reports_truncation_instead_of_crashing(tmp_path):
    code = """
    import sys, qrt
    m = qrt.load(sys.argv[1])
    open(sys.argv[1], "r+b").truncate(100)
    try:
        m.verify()
    except qrt.FormatError as e:
        assert "R7" in str(e) and "truncated" in str(e), e
        print("ok")
    """
    p = tmp_path / "m.bin"
    conv_blob(p)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(p)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr)


# ---- defect 11: a sparse file's load time follows what it stores --------------------------------
def _sparse_tensor_file(path, n):
    """A tensor file with one uint8 tensor of n bytes, all of them a hole (never written)."""
    import zlib

    from qrt import _blob as B
    from qrt._fileio import crc32_zeros
    from qrt_export._writer import BlobBuilder
    b = BlobBuilder()
    b.constant("w", np.zeros(64, np.uint8))
    b.flags |= B.FLAG_TENSORS
    buf = bytearray(b.to_bytes())
    h = np.frombuffer(bytes(buf[:B.HEADER_SIZE]), B.HEADER_DTYPE).copy()
    t0, ns = int(h[0]["section_table_offset"]), int(h[0]["section_count"])
    tab = np.frombuffer(bytes(buf[t0:t0 + ns * B.SECTION_SIZE]), B.SECTION_DTYPE).copy()
    kinds = {int(tab[i]["kind"]): i for i in range(ns)}
    d = kinds[B.SECTION["DATA"]]
    d0, toff = int(tab[d]["offset"]), int(tab[kinds[B.SECTION["TENSORS"]]]["offset"])
    te = np.frombuffer(bytes(buf[toff:toff + B.TENSOR_SIZE]), B.TENSOR_DTYPE).copy()
    te[0]["dims"][0], te[0]["nbytes"] = n, n
    buf[toff:toff + B.TENSOR_SIZE] = te.tobytes()
    tab[d]["size"] = n
    buf[t0:t0 + ns * B.SECTION_SIZE] = tab.tobytes()
    h[0]["file_size"], h[0]["meta_crc32"], h[0]["data_crc32"] = d0 + n, 0, 0
    buf[:B.HEADER_SIZE] = h.tobytes()
    h[0]["meta_crc32"] = zlib.crc32(bytes(buf[:d0]))
    h[0]["data_crc32"] = crc32_zeros(0, n)
    buf[:B.HEADER_SIZE] = h.tobytes()
    with open(path, "wb") as f:
        f.write(bytes(buf[:d0]))
        f.truncate(d0 + n)
    return d0


def test_crc_of_a_file_with_holes_equals_zlib(tmp_path):
    import zlib

    from qrt._fileio import crc32_of_mapping, crc32_zeros
    rng = np.random.default_rng(3)
    for n in (0, 1, 7, 4096, 123457):
        c = int(rng.integers(0, 2**32))
        assert crc32_zeros(c, n) == zlib.crc32(bytes(n), c)
    p = tmp_path / "holes.bin"
    with open(p, "wb") as f:  # data, hole, data, hole at the end
        f.write(rng.integers(0, 256, 5000, dtype=np.uint8).tobytes())
        f.seek(3 << 20)
        f.write(rng.integers(0, 256, 7000, dtype=np.uint8).tobytes())
        f.truncate(8 << 20)
    s = Storage.from_file(p, readonly=True)
    buf = np.frombuffer(s, np.uint8)
    for a, b in ((0, 8 << 20), (100, (3 << 20) + 10), (4000, (8 << 20) - 1)):
        assert crc32_of_mapping(buf, a, b, p, s.file_id) == zlib.crc32(buf[a:b]), (a, b)


def test_a_4gib_sparse_tensor_file_loads_in_time_of_what_it_stores(tmp_path):
    """Before: qrt.load_tensors(verify=True) ran the payload CRC over all 4 GiB through the
    mapping, faulting in a zero page per 4 KiB of hole: 20 s here (2.3 s warm) and 4 GiB
    of RSS. Now the holes' CRC is computed, not read: 0.03 s."""
    import time
    n = 4 << 30
    p = tmp_path / "sparse.bin"
    d0 = _sparse_tensor_file(p, n)
    t = time.perf_counter()
    w = qrt.load_tensors(p)["w"]
    dt = time.perf_counter() - t
    assert w.shape == (n,) and dt < 1.0, dt
    del w
    with open(p, "r+b") as f:  # one stored byte that disagrees with the CRC
        f.seek(d0 + (1 << 31))
        f.write(b"\x01")
    with pytest.raises(FormatError, match="R12"):
        qrt.load_tensors(p)

# SPDX-License-Identifier: Apache-2.0
"""Opening files for reading and replacing files: the only two ways qrt touches a path.

* :func:`open_for_reading` refuses anything but a regular file or a block device *before*
  a read can block (a FIFO would hang ``qrt.load`` forever) and names what it found.
* :func:`replace_file` writes a new version of a file the way LMDB and SQLite users are told
  to: a temporary file in the same folder, ``fsync``, ``rename`` over the old name, ``fsync``
  of the folder. A process that has the old file memory-mapped keeps the old inode and
  never sees it truncated (which would kill it with SIGBUS). Every qrt writer uses it:
  ``qrt.save``, the exporter's ``BlobBuilder.write`` and every ``-o`` of the CLIs.

Docs: docs/blob-format.md, "Threat model" and "Updating a model file safely".
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Callable, Tuple, Union

__all__ = ["NotARegularFileError", "open_for_reading", "file_size", "replace_file"]


class NotARegularFileError(OSError):
    """The path names a FIFO, socket, character device or directory, not a file to read."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    return "not a regular file"


def _refuse(path: str, mode: int, what: str):
    msg = f"cannot read {path}: it is {_kind(mode)}, not a regular file"
    raise (IsADirectoryError if stat.S_ISDIR(mode) else NotARegularFileError)(msg)


def open_for_reading(path, what: str = "qrt", *, write: bool = False,
                     create: bool = False) -> Tuple[int, os.stat_result]:
    """Open ``path`` (a regular file or a block device); return ``(fd, fstat result)``.

    The type is checked twice: with ``stat`` before opening (a FIFO is never opened), and
    with ``fstat`` on the descriptor, opened with ``O_NONBLOCK`` so that a FIFO swapped in
    between the two cannot block the open either. ``write``/``create`` open read-write
    (``Storage.from_file(shared=True)``).
    """
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        if not create:
            raise
    else:
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISBLK(st.st_mode)):
            _refuse(p, st.st_mode, what)
    flags = (os.O_RDWR if write else os.O_RDONLY) | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if create:
        flags |= os.O_CREAT
    fd = os.open(p, flags, 0o644)
    try:
        st = os.fstat(fd)
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISBLK(st.st_mode)):
            _refuse(p, st.st_mode, what)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def file_size(fd: int, st: os.stat_result) -> int:
    """Bytes in the open file (a block device's ``st_size`` is 0: ask ``lseek`` instead)."""
    if stat.S_ISBLK(st.st_mode):
        n = os.lseek(fd, 0, os.SEEK_END)
        os.lseek(fd, 0, os.SEEK_SET)
        return n
    return st.st_size


def read_into(fd: int, buf, n: int, path: str) -> None:
    """Read exactly ``n`` bytes from the start of ``fd`` into the writable buffer ``buf``."""
    mv = memoryview(buf).cast("B")
    got = 0
    while got < n:
        k = os.preadv(fd, [mv[got:n]], got) if hasattr(os, "preadv") else \
            _pread_into(fd, mv[got:n], got)
        if k == 0:
            raise OSError(errno.EIO, f"{path}: the file shrank to {got} bytes while being "
                          f"read ({n} expected); is another process writing it?", path)
        got += k


def _pread_into(fd: int, mv, off: int) -> int:
    data = os.pread(fd, len(mv), off)
    mv[:len(data)] = data
    return len(data)


def replace_file(path, data: Union[bytes, bytearray, memoryview, Callable]) -> int:
    """Atomically make ``path`` hold ``data``; return the number of bytes written.

    ``data`` is a bytes-like object or a callable that writes to the binary file object it
    is given. The new content goes to a temporary file in the same folder (same file
    system, so the rename is atomic), is flushed and fsynced, then renamed over ``path``;
    readers and mappings of the old file keep the old inode. A symlink is followed (the
    file it points at is replaced). A path that exists and is not a regular file (a FIFO,
    ``/dev/stdout``, ``/dev/null``) is written directly: there is no file to replace.
    """
    dst = os.fspath(path)
    real = os.path.realpath(dst)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, f"{dst} is a directory", dst)
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(real, "wb") as f:
            return _write(f, data)
    folder = os.path.dirname(real) or "."
    try:
        import tempfile   # only writers need it: not imported by a model load
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(real)}.", suffix=".tmp",
                                   dir=folder)
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, f"no folder {folder} to write {dst} in",
                                dst) from None
    try:
        if st is not None:
            mode = stat.S_IMODE(st.st_mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            fd = -1
            n = _write(f, data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, real)
        tmp = None
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp is not None:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
    try:  # make the rename itself durable; some file systems refuse to open a folder
        dfd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return n
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
    return n


def _write(f, data) -> int:
    if callable(data):
        data(f)
        f.flush()
        return f.tell() if f.seekable() else 0
    f.write(data)
    return len(memoryview(data).cast("B"))


# ---- CRC-32 of a file with holes -----------------------------------------------------------------
# Appending zero bytes to a CRC-32 is a linear map of its 32-bit register (the register is the
# complement of the CRC): zlib's crc32_combine uses the same GF(2) matrices. With them, the CRC
# of a hole of n zero bytes costs O(log n), so checking a sparse file reads only its data.
_POLY = 0xEDB88320
_ZERO_OPS: list = []  # _ZERO_OPS[k]: the 32x32 matrix (32 column ints) appending 2**k zero bytes


def _gf2_times(mat, vec: int) -> int:
    s, i = 0, 0
    while vec:
        if vec & 1:
            s ^= mat[i]
        vec >>= 1
        i += 1
    return s


def _zero_ops():
    if not _ZERO_OPS:
        m = [_POLY] + [1 << (n - 1) for n in range(1, 32)]  # one zero bit
        for _ in range(3):  # -> one zero byte
            m = [_gf2_times(m, m[n]) for n in range(32)]
        for _ in range(64):
            _ZERO_OPS.append(m)
            m = [_gf2_times(m, m[n]) for n in range(32)]
    return _ZERO_OPS


def crc32_zeros(crc: int, n: int) -> int:
    """``zlib.crc32(bytes(n), crc)`` without touching n bytes."""
    ops = _zero_ops()
    reg = crc ^ 0xFFFFFFFF
    k = 0
    while n:
        if n & 1:
            reg = _gf2_times(ops[k], reg)
        n >>= 1
        k += 1
    return reg ^ 0xFFFFFFFF


def crc32_of_mapping(buf, start: int, end: int, path, file_id) -> int:
    """``zlib.crc32(buf[start:end])`` for ``buf``, a mapping of ``path``; holes are skipped.

    The file's holes (``SEEK_DATA``/``SEEK_HOLE``) read as zeros, so their CRC is computed,
    not read: the cost follows the bytes the file really stores, and the mapping's pages for
    the holes are never touched. Falls back to reading everything when the path no longer
    names the mapped file (``file_id``) or the file system cannot report holes.
    """
    import zlib
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    if file_id is None or seek_data is None or end - start < (1 << 20):
        return zlib.crc32(buf[start:end])
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return zlib.crc32(buf[start:end])
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != tuple(file_id) or not stat.S_ISREG(st.st_mode):
            return zlib.crc32(buf[start:end])
        crc, pos = 0, start
        while pos < end:
            try:
                data = min(os.lseek(fd, pos, seek_data), end)
            except OSError as e:
                if e.errno != errno.ENXIO:  # ENXIO: only a hole is left
                    raise
                data = end
            if data > pos:
                crc = crc32_zeros(crc, data - pos)
                pos = data
            if pos >= end:
                break
            hole = min(os.lseek(fd, pos, seek_hole), end)
            crc = zlib.crc32(buf[pos:hole], crc)
            pos = hole
        return crc
    except OSError:
        return zlib.crc32(buf[start:end])
    finally:
        os.close(fd)

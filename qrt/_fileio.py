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
import tempfile
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

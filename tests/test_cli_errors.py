# SPDX-License-Identifier: Apache-2.0
"""Issue #13 defect 10: every user error of ``qrt`` and ``qrt-export`` is one line on stderr
and a non-zero exit code (the codes ``--help`` lists), never a traceback. Each case runs the
real command in a subprocess."""

import os
import subprocess
import sys

import numpy as np
import pytest

from qrt_export._writer import BlobBuilder

from test_loader import conv_blob

from _qemu import skip_under_qemu  # noqa: E402

pytestmark = skip_under_qemu("CLI error handling is Python, run on x86")

NON_UTF8 = os.fsdecode(b"model-\xff\xfe.bin")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_errors")
    model = d / "m.bin"
    conv_blob(model)
    os.link(model, d / NON_UTF8)
    b = BlobBuilder()  # a model whose input is quantized (quint8 codes)
    x = b.activation("x", "quint8", (1, 6), scale=0.5, zero_point=7)
    y = b.activation("y", "quint8", (6,), scale=0.5, zero_point=7)
    b.op("reshape", "r", [x], [y])
    b.inputs, b.outputs = [x], [y]
    b.write(d / "q.bin")
    (d / "empty.npy").write_bytes(b"")
    (d / "corrupt.npz").write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    np.save(d / "x.npy", np.zeros((2, 4, 20), np.float32))
    np.save(d / "xf.npy", np.zeros((1, 6), np.float32))
    np.savez(d / "none.npz")
    os.mkfifo(d / "fifo")
    return d


def _run(args, cwd):
    env = dict(os.environ, PYTHONIOENCODING="utf-8")  # strict UTF-8 stdout: a UTF-8 locale
    return subprocess.run([sys.executable, "-m"] + args, cwd=cwd, env=env,
                          capture_output=True, timeout=120)


CASES = [  # (argv, exit code, a word the one-line message must contain)
    (["qrt", "inspect", NON_UTF8], 0, None),
    (["qrt", "verify", NON_UTF8], 0, None),
    (["qrt", "verify", "missing-\udcff.bin"], 2, "no such file"),
    (["qrt", "inspect", "fifo"], 2, "FIFO"),
    (["qrt", "verify", "fifo"], 2, "FIFO"),
    (["qrt", "inspect", "."], 2, "directory"),
    (["qrt", "inspect", "/dev/zero"], 2, "character device"),
    (["qrt", "run", "m.bin", "-i", "empty.npy"], 2, "empty"),
    (["qrt", "run", "m.bin", "-i", "corrupt.npz"], 2, "corrupt.npz"),
    (["qrt", "run", "m.bin", "-i", "none.npz"], 2, "no arrays"),
    (["qrt", "run", "m.bin", "-i", "fifo"], 2, "FIFO"),
    (["qrt", "run", "q.bin", "-i", "xf.npy"], 2, "integer codes"),
    (["qrt", "run", "m.bin", "-i", "x.npy", "-o", "no/such/dir/y.npy"], 2, "no such file"),
    (["qrt", "demo", "--n", "0"], 2, "--n"),
    (["qrt", "demo", "--n", "-5"], 2, "--n"),
    (["qrt", "demo", "--batch", "0"], 2, "--batch"),
    (["qrt", "bench", "m.bin", "--batch", "100000000"], 2, "--batch"),
    (["qrt_export", "m.pt", "--input", "empty.npy", "-o", "o.bin"], 2, "empty"),
    (["qrt_export", "m.pt", "--input", "fifo", "-o", "o.bin"], 2, "FIFO"),
]


@pytest.mark.parametrize("argv,code,word", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_cli_user_errors_are_one_line(files, argv, code, word):
    r = _run([os.fsencode(a) for a in argv], files)
    err = r.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in r.stderr, err
    assert r.returncode == code, (r.returncode, err)
    if code:
        assert len(err.strip().splitlines()) == 1, err
        assert word in err, err
    else:
        assert NON_UTF8.encode("utf-8", "surrogateescape") in r.stdout


@pytest.mark.parametrize("cmd", ["inspect m.bin", "run m.bin -i x.npy"])
def test_cli_broken_pipe_is_quiet(files, cmd):
    """``qrt inspect m.bin | head -1``: the reader leaves early (BrokenPipeError). ``true``
    exits before qrt writes anything, so every write (or the final flush) hits the closed
    pipe; with ``head`` a short output can fit the pipe buffer and never hit it. Issue #48:
    one behaviour either way: quiet, exit code 0."""
    for reader in ("true", "head -1"):
        r = subprocess.run(["bash", "-c", f"set -o pipefail; '{sys.executable}' -m qrt {cmd} "
                            f"| {reader}"], cwd=files, capture_output=True, timeout=120)
        assert r.returncode == 0 and r.stderr == b"", (reader, r.returncode, r.stderr)


@pytest.mark.parametrize("prog", ["qrt", "qrt_export"])
def test_cli_help_lists_exit_codes(prog):
    r = subprocess.run([sys.executable, "-m", prog, "--help"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0
    out = " ".join(r.stdout.split())
    assert "exit codes: 0 success, 1 " in out and "2 bad arguments" in out, out

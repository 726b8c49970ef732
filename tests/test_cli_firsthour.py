# SPDX-License-Identifier: Apache-2.0
"""Issue #48, the commands of a newcomer's first hour: the installed ``qrt`` and ``qrt-export``
scripts in a fresh process, from a folder outside the checkout, without PYTHONPATH. Mistakes
are one line on stderr with the exit code ``--help`` lists; ``--version``; ``qrt run -o``,
``qrt upgrade m.bin -o m.bin``; Ctrl-C at any point is one line and exit code 130."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import qrt

from _qemu import skip_under_qemu

pytestmark = skip_under_qemu("CLI behaviour is Python, run on x86")

BIN = Path(sys.executable).parent
DATA = Path(__file__).resolve().parent / "data"
DEMO = Path(qrt.__file__).parent / "data" / "demo.bin"


def run(prog, args, cwd, timeout=300):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([str(BIN / prog)] + [str(a) for a in args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def one_line(r, code, *words):
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == code, (r.returncode, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("firsthour")
    (d / "empty.pt").write_bytes(b"")
    (d / "text.pt").write_text("not a pickle\n")
    (d / "m.bin").write_bytes(DEMO.read_bytes())
    np.save(d / "x.npy", np.zeros((1, 1, 1000), np.float32))
    (d / "adir").mkdir()
    return d


@pytest.mark.parametrize("prog", ["qrt", "qrt-export"])
def test_version(prog, tmp_path):
    r = run(prog, ["--version"], tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == f"{prog} {qrt.__version__}", r


@pytest.mark.parametrize("model,words", [
    ("empty.pt", ["empty file"]),
    ("text.pt", ["cannot read text.pt", "torch.save"]),
    ("m.bin", ["qrt blob", "qrt inspect"]),
    ("x.npy", [".npy array", "--input"]),
    ("missing.pt", ["no such file: missing.pt"]),
    (".", ["directory"]),
])
def test_export_model_file_mistakes_are_one_line_exit_2(work, model, words):
    """Exit code 2, as --help says for unreadable input files (was 1 or a traceback)."""
    if model == "text.pt":
        pytest.importorskip("torch")   # read by torch.load: its pickle error, in one line
    one_line(run("qrt-export", [model, "--input", "x.npy", "-o", "o.bin"], work), 2, *words)
    assert not (work / "o.bin").exists()


def test_export_weights_and_tensors_mistakes(work):
    one_line(run("qrt-export", ["--model", "nets:Net", "--weights", "m.bin", "--input",
                                "x.npy", "-o", "o.bin"], work), 2, "--weights", "qrt blob")
    one_line(run("qrt-export", ["--tensors", "empty.pt", "-o", "o.bin"], work), 2, "empty")


def test_export_without_torch_is_one_line(work):
    """``--tensors`` (and a model) where torch is not installed: what to install, exit 1."""
    code = ("import sys; sys.modules['torch'] = None; from qrt_export.__main__ import main; "
            "sys.exit(main())")
    for args in (["--tensors", "m.bin"], ["x.pt", "--input", "x.npy"]):
        (work / "x.pt").write_bytes(b"PK\x03\x04")
        r = subprocess.run([sys.executable, "-c", code] + args + ["-o", "o.bin"], cwd=work,
                           capture_output=True, text=True, timeout=120)
        if args[0] == "--tensors":   # a qrt blob is refused before torch is needed
            one_line(r, 2, "qrt blob")
            continue
        one_line(r, 1, "torch is not installed", "torch==2.13.0")


def test_export_pickle_of_a_script_class(tmp_path):
    """``torch.save(model)`` in a script whose class lives in that script: pickle records
    ``__main__.Net``; the message names the file defining it and the fix."""
    torch = pytest.importorskip("torch")  # noqa: F841
    (tmp_path / "train.py").write_text(
        "import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = torch.nn.Linear(4, 2)\n\n"
        "    def forward(self, x):\n        return self.fc(x)\n\n\n"
        "torch.save(Net(), 'net.pt')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "train.py"], cwd=tmp_path, env=env, check=True,
                   capture_output=True, timeout=300)
    np.save(tmp_path / "x.npy", np.zeros((1, 4), np.float32))
    r = run("qrt-export", ["net.pt", "--input", "x.npy", "-o", "o.bin"], tmp_path)
    one_line(r, 2, "__main__.Net", "defined in train.py", "Move class Net into a module")


def test_run_output_names_the_file_written(work):
    r = run("qrt", ["run", "m.bin", "-i", "x.npy", "-o", "y"], work)
    assert r.returncode == 0, r.stderr
    assert "-> y.npy" in r.stdout and (work / "y.npy").is_file() and not (work / "y").exists()
    one_line(run("qrt", ["run", "m.bin", "-i", "x.npy", "-o", "adir"], work), 2,
             "adir is a folder")
    assert os.listdir(work / "adir") == []


def test_upgrade_in_place_reports_the_old_size(tmp_path):
    legacy = DATA / "legacy_demo_1_0.bin"
    (tmp_path / "m.bin").write_bytes(legacy.read_bytes())
    r = run("qrt", ["upgrade", "m.bin", "-o", "m.bin"], tmp_path)
    assert r.returncode == 0, r.stderr
    new = (tmp_path / "m.bin").stat().st_size
    assert f"{new} bytes (was {legacy.stat().st_size})" in r.stdout, r.stdout
    assert new != legacy.stat().st_size


def _maps(pid):
    try:
        return Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return ""


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")
@pytest.mark.parametrize("argv", [["qrt", "demo"],
                                  ["qrt-export", "m.pt", "--input", "x.npy", "-o", "o.bin"]])
def test_ctrl_c_during_numpy_import_is_one_line(tmp_path, argv):
    """SIGINT while the command imports numpy (the first tenths of a second): one line,
    exit 130. The signal is sent as soon as numpy's extension is mapped into the process."""
    np.save(tmp_path / "x.npy", np.zeros((1, 4), np.float32))
    p = subprocess.Popen([str(BIN / argv[0])] + argv[1:], cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    while "_multiarray_umath" not in _maps(p.pid) and p.poll() is None \
            and time.monotonic() - t0 < 60:
        time.sleep(0.0005)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert "Traceback" not in err, err
    assert p.returncode == 130 and err.strip() == f"{argv[0]}: interrupted", (p.returncode, err)


def test_ctrl_c_after_a_progress_bar_starts_a_line(work):
    p = subprocess.Popen([str(BIN / "qrt"), "bench", "m.bin", "--iters", "100000000",
                          "--progress"], cwd=work, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    buf = b""
    while b"eta" not in buf:
        c = p.stderr.read1(4096)
        assert c, buf
        buf += c
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    err = (buf + err).decode()
    assert p.returncode == 130 and "Traceback" not in err, err
    assert "\nqrt bench: interrupted\n" in err and err.endswith("interrupted\n"), repr(err)

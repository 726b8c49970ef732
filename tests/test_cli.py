# SPDX-License-Identifier: Apache-2.0
"""The ``qrt`` command line: inspect, verify, run, bench, demo; messages and exit codes."""

import os
import subprocess
import sys

import numpy as np
import pytest

import qrt
from qrt.__main__ import main

from test_loader import DEMO, conv_blob


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    p = tmp_path_factory.mktemp("cli") / "conv.bin"
    conv_blob(p)
    return str(p)


def test_cli_inspect(model_path, capsys):
    assert main(["inspect", model_path]) == 0
    out = capsys.readouterr().out
    for word in ("qrt blob format 1.2", "sections:", "TENSORS", "tensors (", "ops (",
                 "conv1d+relu", "scale=", "MACs", "arena"):
        assert word in out, word


def test_cli_inspect_json(model_path, capsys):
    import json
    assert main(["inspect", "--json", model_path]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["header"]["magic"] == "QRTB" and len(d["ops"]) == 6


def test_cli_verify_ok_and_corrupt(model_path, tmp_path, capsys):
    assert main(["verify", model_path]) == 0
    assert "OK" in capsys.readouterr().out
    raw = bytearray(open(model_path, "rb").read())
    raw[-70] ^= 0x40  # a weight byte
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(raw))
    assert main(["verify", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "R12" in err and "payload checksum" in err


def test_cli_missing_file_and_bad_args(tmp_path, capsys):
    assert main(["verify", str(tmp_path / "nope.bin")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["frobnicate"])
    assert e.value.code == 2
    not_blob = tmp_path / "x.bin"
    not_blob.write_bytes(b"hello world" * 10)
    assert main(["inspect", str(not_blob)]) == 1
    assert "R2" in capsys.readouterr().err


def test_cli_run(model_path, tmp_path, capsys):
    x = np.random.default_rng(0).standard_normal((3, 4, 20)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", model_path, "--input", str(tmp_path / "x.npy"), "--output",
                 str(tmp_path / "y.npy")]) == 0
    y = np.load(tmp_path / "y.npy")
    np.testing.assert_array_equal(y, qrt.load(model_path)(x))
    np.save(tmp_path / "bad.npy", x[:, :2])
    assert main(["run", model_path, "--input", str(tmp_path / "bad.npy")]) == 2
    err = capsys.readouterr().err
    assert "conv1d 'conv" in err and "2 channels" in err, err


def test_cli_bench(model_path, capsys):
    assert main(["bench", model_path, "--iters", "20", "--batch", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    for word in ("p50", "p90", "p99", "throughput", "peak RSS"):
        assert word in out
    assert main(["bench", model_path, "--iters", "0"]) == 2


@pytest.mark.skipif(not os.path.exists(DEMO), reason="demo.bin not built")
def test_cli_demo_without_torch():
    r = subprocess.run([sys.executable, "-m", "qrt", "demo", "--n", "200"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "accuracy" in r.stdout and "torch imported: False" in r.stdout
    acc = float(r.stdout.split("accuracy on")[1].split(":")[1].split("%")[0])
    assert acc > 60.0

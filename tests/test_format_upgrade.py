# SPDX-License-Identifier: Apache-2.0
"""Files of older formats still load, answer as the current ones, and `qrt upgrade` rewrites
them in the current format (weights once: the packed arrays of format 1.0/1.1 are dropped)."""

import os

import numpy as np
import pytest

import qrt
from qrt.__main__ import main
from qrt._format.reader import read_blob

DATA = os.path.join(os.path.dirname(__file__), "data")
LEGACY = os.path.join(DATA, "legacy_demo_1_0.bin")   # the demo as qrt 0.1.0 shipped it
DEMO = os.path.join(os.path.dirname(qrt.__file__), "data", "demo.bin")


def test_legacy_demo_is_format_1_0_with_packed_weights():
    b = read_blob(LEGACY)
    assert b.version == (1, 0)
    names = {t.name.rsplit(".", 1)[-1] for t in b.tensors if t.kind == "constant"}
    assert {"weight_packed", "weight_sum"} <= names
    assert {op.kind for op in b.ops} >= {"conv_relu1d", "linear"}


def test_shipped_demo_is_current_format_and_smaller():
    b = read_blob(DEMO)
    assert b.version == (1, 2) and int(b.header["min_reader"]) == 200
    assert not any(t.name.endswith(("weight_packed", "weight_sum")) for t in b.tensors)
    assert os.path.getsize(DEMO) < 0.75 * os.path.getsize(LEGACY)


@pytest.mark.parametrize("shape", [(1, 1, 128), (9, 1, 128), (2, 1, 57), (3, 1, 1000)])
def test_legacy_and_current_demo_agree_exactly(shape):
    old, new = qrt.load(LEGACY), qrt.load(DEMO)
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    a, b = old(x), new(x)
    assert a.shape == (shape[0], 8)
    np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


def test_cli_upgrade_round_trip(tmp_path, capsys):
    out = tmp_path / "up.bin"
    assert main(["upgrade", LEGACY, "-o", str(out)]) == 0
    assert "format 1.2" in capsys.readouterr().out
    assert out.read_bytes() == open(DEMO, "rb").read()  # the shipped demo is this upgrade
    # an upgraded current file is unchanged
    again = tmp_path / "again.bin"
    assert main(["upgrade", str(out), "-o", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()

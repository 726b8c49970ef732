# SPDX-License-Identifier: Apache-2.0
"""Model.profile and ``qrt bench --profile``: a row per op, shares summing to 100 %, and the
profiled pass computing exactly what a normal call computes."""

import numpy as np
import pytest

import qrt
from qrt.__main__ import _bench_inputs, main

from test_loader import DEMO, conv_blob


@pytest.fixture(scope="module")
def conv_path(tmp_path_factory):
    p = tmp_path_factory.mktemp("profile") / "conv.bin"
    conv_blob(p)
    return str(p)


@pytest.mark.parametrize("which,batch", [("conv", 2), ("demo", 1), ("demo", 5)])
def test_profile_rows_shares_outputs(conv_path, which, batch):
    m = qrt.load(conv_path if which == "conv" else DEMO)
    xs = _bench_inputs(m, batch, seed=3)
    prof = m.profile(*xs, iters=7, warmup=1)
    assert prof.batch == batch and prof.iters == 7
    assert [r["index"] for r in prof.rows] == [op.index for op in m.ops]
    assert [r["op"] for r in prof.rows] == [n.label for n in m.graph.nodes]
    assert [r["name"] for r in prof.rows] == [op.name for op in m.ops]
    assert all(r["us"] >= 0 for r in prof.rows)
    assert sum(r["us"] for r in prof.rows) == pytest.approx(prof.ops_us)
    assert sum(r["share"] for r in prof.rows) == pytest.approx(1.0, abs=1e-9)
    assert prof.ops_us > 0 and prof.call_us > 0
    assert prof.overhead_us == pytest.approx(prof.call_us - prof.ops_us)
    assert sum(r["macs"] for r in prof.rows) == m.macs(batch)
    # Every shape is the planned output shape at this batch.
    for r in prof.rows:
        assert r["shape"][0] == batch or len(r["shape"]) < 2
    want = m(*xs)
    got = prof.outputs
    if isinstance(want, tuple):
        for a, b in zip(want, got):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    else:
        np.testing.assert_array_equal(np.asarray(want), np.asarray(got))
    # The profile leaves the model callable as before (same outputs on the next call).
    np.testing.assert_array_equal(np.asarray(m(*xs)), np.asarray(want))
    text = prof.table()
    assert len(text.splitlines()) == len(m.ops) + 2
    assert "Python overhead" in text


def test_profile_bad_args(conv_path):
    m = qrt.load(conv_path)
    xs = _bench_inputs(m, 2)
    with pytest.raises(ValueError, match="iters"):
        m.profile(*xs, iters=0)
    with pytest.raises(ValueError, match="warmup"):
        m.profile(*xs, warmup=-1)
    with pytest.raises(TypeError, match="input"):
        m.profile()


def test_cli_bench_profile(capsys):
    assert main(["bench", DEMO, "--iters", "5", "--warmup", "1", "--batch", "3", "--quiet",
                 "--profile"]) == 0
    out = capsys.readouterr().out
    m = qrt.load(DEMO)
    assert "latency ms" in out and "per-op profile" in out and "Python overhead" in out
    for op in m.ops:
        assert op.name[:24] in out
    assert "max_pool1d" in out and "adaptive_avg_pool1d" in out


def test_cli_bench_without_profile_has_no_table(capsys):
    assert main(["bench", DEMO, "--iters", "3", "--quiet"]) == 0
    assert "per-op profile" not in capsys.readouterr().out

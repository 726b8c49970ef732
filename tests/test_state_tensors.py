# SPDX-License-Identifier: Apache-2.0
"""State tensors (format 1.2): a tensor that persists between calls, in its own buffer."""

import numpy as np
import pytest

import qrt
from qrt._format.reader import FormatError, read_blob
from qrt_export import BlobBuilder


@pytest.fixture
def accumulate():
    def acc(x, s, *, out):
        np.add(s, x, out=out)   # out is s's own buffer: an in-place update
    qrt.register_op("test_acc", acc, out=True, overwrite=True)
    yield
    qrt.unregister_op("test_acc")


def _blob(path, two_writers=False):
    b = BlobBuilder()
    x = b.activation("x", "float32", (2, 3), batched=True)
    s = b.state("s", "float32", (2, 3), batched=True)
    y = b.activation("y", "float32", (2, 3), batched=True)
    b.op("custom", "acc", [x, s], [s], attrs={"op": "test_acc", "attrs": {}})
    if two_writers:
        b.op("custom", "acc2", [x, s], [s], attrs={"op": "test_acc", "attrs": {}})
    b.op("identity", "out", [s], [y])
    b.inputs, b.outputs = [x], [y]
    b.write(path)
    return b


def test_state_persists_between_calls_and_resets(tmp_path, accumulate):
    b = _blob(tmp_path / "s.bin")
    assert b.format_version() == (1, 2)
    m = qrt.load(tmp_path / "s.bin")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(m(x), x)        # the dry run at load left no trace
    np.testing.assert_array_equal(m(x), 2 * x)
    np.testing.assert_array_equal(m(x), 3 * x)
    m.reset_state()
    np.testing.assert_array_equal(m(x), x)
    # another batch size is another plan with its own (zero) state; the first is kept
    x5 = np.ones((5, 3), np.float32)
    np.testing.assert_array_equal(m(x5), x5)
    np.testing.assert_array_equal(m(x), 2 * x)
    plan = m._plans[((2, 3),)]
    # the state buffer is not in the arena: no activation can overwrite it
    assert plan.state_buffers and all(st is not plan.arena for st in plan.state_buffers.values())


def test_state_written_by_two_ops_is_R19(tmp_path, accumulate):
    _blob(tmp_path / "s2.bin", two_writers=True)
    with pytest.raises(FormatError) as e:
        read_blob(tmp_path / "s2.bin")
    assert e.value.rule == "R19" and "two ops" in str(e.value)


def test_state_in_a_1_1_file_is_R14(tmp_path, accumulate):
    b = _blob(tmp_path / "s3.bin")
    b.version = (1, 1)
    b.write(tmp_path / "s3.bin")
    with pytest.raises(FormatError) as e:
        read_blob(tmp_path / "s3.bin")
    assert e.value.rule == "R14" and "1.2" in str(e.value)

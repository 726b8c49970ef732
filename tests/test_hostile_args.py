# SPDX-License-Identifier: Apache-2.0
"""Issue #13 defects 9 and 11: overlapping and read-only ``out=``, bools as ints, huge
geometry, run-time batch problems blamed on the file."""

import sys

import numpy as np
import pytest

import qrt
import qrt.functional as F
from qrt import Storage

from test_loader import DEMO


def _q(st, shape, offset, scale=0.1, zp=100):
    return qrt.QTensor(st, shape, qrt.quint8, scale, zp, offset=offset)


@pytest.fixture()
def shared():
    rng = np.random.default_rng(1)
    st = Storage.empty(600)
    np.frombuffer(st, np.uint8)[:] = rng.integers(0, 256, 600, dtype=np.uint8)
    return st


@pytest.mark.parametrize("shift", [1, 7, -1, -100])
def test_add_refuses_a_partly_overlapping_out(shared, shift):
    """Before the fix an out shifted one element from its input was accepted and 254 of 256
    results were wrong."""
    a = _q(shared, (1, 1, 256), 200)
    out = _q(shared, (1, 1, 256), 200 + shift)
    with pytest.raises(ValueError, match="overlaps"):
        F.add(a, a, 0.1, 100, out=out)
    with pytest.raises(ValueError, match="overlaps"):
        F.add_relu(a, a.clone(), 0.1, 100, out=out)


def test_add_exact_alias_is_in_place_and_right(shared):
    a = _q(shared, (1, 1, 256), 200)
    b = _q(Storage.full(256, 3), (1, 1, 256), 0)
    expect = F.add(a, b, 0.1, 100).int_repr().copy()
    F.add(a, b, 0.1, 100, out=a)  # exactly the input: the kernel is elementwise
    np.testing.assert_array_equal(a.int_repr(), expect)


def test_elementwise_ops_refuse_partial_overlap(shared):
    x = _q(shared, (256,), 100)
    y = _q(shared, (256,), 101)
    with pytest.raises(ValueError, match="overlaps"):
        F.relu(x, out=y)
    with pytest.raises(ValueError, match="overlaps"):
        F.hardswish(x, 0.1, 100, out=y)
    with pytest.raises(ValueError, match="overlaps"):
        F.sigmoid(x, out=qrt.QTensor(shared, (256,), qrt.quint8, 1 / 256, 0, offset=101))


def test_conv1d_and_linear_refuse_any_overlap(shared):
    rng = np.random.default_rng(0)
    x = _q(shared, (1, 1, 256), 0)
    w = qrt.quantize_per_tensor(rng.standard_normal((1, 1, 3)).astype(np.float32), 0.05, 0,
                                qrt.qint8)
    for off in (1, 0):  # shifted by one, and exactly the input (not in-place capable)
        out = qrt.QTensor(shared, (1, 1, 254), qrt.quint8, 1.0, 0, offset=off)
        with pytest.raises(ValueError, match="shares memory"):
            F.conv1d(x, w, None, scale=1.0, zero_point=0, out=out)
    wl = qrt.quantize_per_tensor(rng.standard_normal((4, 256)).astype(np.float32), 0.05, 0,
                                 qrt.qint8)
    xl = _q(shared, (1, 256), 0)
    with pytest.raises(ValueError, match="shares memory"):
        F.linear(xl, wl, None, scale=1.0, zero_point=0,
                 out=qrt.QTensor(shared, (1, 4), qrt.quint8, 1.0, 0, offset=2))
    # a separate out still works
    F.conv1d(x, w, None, scale=1.0, zero_point=0,
             out=qrt.QTensor(Storage.empty(254), (1, 1, 254), qrt.quint8, 1.0, 0))


def test_read_only_out_is_a_value_error_not_buffer_error():
    ro = Storage.from_buffer(bytes(300))
    x = _q(Storage.full(256, 120), (1, 1, 256), 0)
    with pytest.raises(ValueError, match="read-only"):
        F.add(x, x, 0.1, 100, out=_q(ro, (1, 1, 256), 0))
    w = qrt.quantize_per_tensor(np.ones((1, 1, 3), np.float32), 0.05, 0, qrt.qint8)
    with pytest.raises(ValueError, match="read-only"):
        F.conv1d(x, w, None, scale=1.0, zero_point=0,
                 out=qrt.QTensor(ro, (1, 1, 254), qrt.quint8, 1.0, 0))


def test_bools_are_not_ints():
    x = qrt.quantize_per_tensor(np.zeros((1, 1, 8), np.float32), 0.1, 0, qrt.quint8)
    w = qrt.quantize_per_tensor(np.ones((1, 1, 3), np.float32), 0.05, 0, qrt.qint8)
    for kw in ({"stride": True}, {"groups": True}, {"dilation": True}, {"padding": True}):
        with pytest.raises(TypeError, match="bool"):
            F.conv1d(x, w, None, **kw)
    with pytest.raises(TypeError, match="bool"):
        qrt.quantize_per_tensor(np.zeros(3, np.float32), 0.1, True, qrt.quint8)
    with pytest.raises(TypeError, match="bool"):
        qrt.QTensor(Storage.empty(3), (3,), qrt.quint8, 0.1, np.bool_(False))


def test_huge_geometry_is_a_value_error():
    x = qrt.quantize_per_tensor(np.zeros((1, 1, 8), np.float32), 0.1, 0, qrt.quint8)
    w = qrt.quantize_per_tensor(np.ones((1, 1, 3), np.float32), 0.05, 0, qrt.qint8)
    for kw in ({"stride": 2**63}, {"dilation": 2**64}, {"padding": 2**40}):
        with pytest.raises(ValueError, match="too large"):
            F.conv1d(x, w, None, **kw)


def test_conv1d_huge_padding_does_not_blame_the_accumulation_bound():
    rng = np.random.default_rng(0)
    x = qrt.quantize_per_tensor(rng.standard_normal((1, 64, 300)).astype(np.float32), 0.05,
                                128, qrt.quint8)
    w = qrt.quantize_per_tensor(rng.standard_normal((8, 64, 5)).astype(np.float32), 0.05, 0,
                                qrt.qint8)
    # a left padding longer than the VNNI kernel's position chunk once wrapped a chunk's input
    # span negative and was refused as "too large": it runs, and its far outputs see padding only
    y = F.conv1d(x, w, None, padding=10**4)
    assert y.shape == (1, 8, 300 + 2 * 10**4 - 4)
    edge = y.int_repr()[0, :, 0]
    assert (y.int_repr()[0, :, :10**4 - 4] == edge[:, None]).all()
    try:
        F.conv1d(x, w, None, padding=10**6)
    except ValueError as e:
        assert "accumulation" not in str(e), e
        assert "padding 1000000" in str(e), e


def test_model_batch_problems_are_value_errors_not_format_errors():
    m = qrt.load(DEMO)
    for bad in (-1, 0):
        with pytest.raises(ValueError, match=">= 1") as e:
            m.arena_nbytes_for(bad)
        assert not isinstance(e.value, qrt.FormatError)
    with pytest.raises(ValueError, match=">= 1"):
        m.macs(-3)
    with pytest.raises(TypeError):
        m.macs(True)
    x = np.zeros((1,) + tuple(m.inputs[0].shape[1:]), np.float32)
    # (on a 32-bit host numpy cannot even build a 10^9-row broadcast view: 10^6 rows there,
    # still past that host's plan bound)
    big = 10**9 if sys.maxsize > 2**32 else 10**6
    with pytest.raises(ValueError) as e:
        m(np.broadcast_to(x, (big,) + x.shape[1:]))
    assert not isinstance(e.value, qrt.FormatError) and "batch" in str(e.value)
    assert m(x).shape[0] == 1  # the model still works


def test_conv_huge_stride_with_one_output_is_fast():
    """A crafted stride (2^20) with one output position cost seconds per call (the VNNI
    scratch grows with the stride; found by tests/test_blob_fuzz_struct.py, seed 2 case
    10187): one output needs no stride, and the answer is the stride-1 one."""
    import time
    rng = np.random.default_rng(0)
    w = qrt.from_int_repr_per_channel(rng.integers(-127, 128, (32, 32, 1)).astype(np.int8),
                                      np.full(32, 0.01), np.zeros(32, np.int64), 0, qrt.qint8)
    x = qrt.from_int_repr(rng.integers(0, 256, (16, 32, 32)).astype(np.uint8), 0.05, 128)
    ref = qrt.nn.Conv1d(32, 32, 1, stride=32)   # also one output of length 32 -> 1
    big = qrt.nn.Conv1d(32, 32, 1, stride=1 << 20)
    for m in (ref, big):
        m.set_weight_bias(w, None)
        m.scale, m.zero_point = 0.1, 3
    t0 = time.perf_counter()
    y = big(x)
    assert time.perf_counter() - t0 < 1.0
    assert y.shape == (16, 32, 1)
    np.testing.assert_array_equal(y.int_repr(), ref(x).int_repr())

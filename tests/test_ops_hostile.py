# SPDX-License-Identifier: Apache-2.0
"""Bad arguments to qrt.functional ops raise ValueError/TypeError naming the argument."""

import numpy as np
import pytest

import qrt
import qrt.functional as F


def q(shape, dtype=qrt.quint8, scale=0.1, zp=3):
    ints = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % 100
    return qrt.from_int_repr(ints.astype(dtype.numpy_dtype), scale, zp, dtype)


X = q((2, 3, 10))


def test_ops_hostile_non_qtensor():
    for fn in (F.relu, F.sigmoid, lambda t: F.max_pool1d(t, 2), lambda t: F.avg_pool1d(t, 2),
               lambda t: F.adaptive_avg_pool1d(t, 2), lambda t: F.hardswish(t, 0.1, 0),
               lambda t: F.flatten(t), lambda t: F.reshape(t, (-1,))):
        with pytest.raises(TypeError, match="input"):
            fn(np.zeros((2, 3, 10), np.uint8))
    with pytest.raises(TypeError, match="a must"):
        F.add(np.zeros(3), X, 0.1, 0)
    with pytest.raises(TypeError, match="b must"):
        F.add(X, [1, 2], 0.1, 0)
    with pytest.raises(TypeError, match="tensors"):
        F.cat(X)
    with pytest.raises(TypeError, match=r"tensors\[1\]"):
        F.cat([X, np.zeros((2, 3, 10))])


def test_ops_hostile_dtypes():
    x32 = q((2, 3), qrt.qint32)
    with pytest.raises(TypeError, match="dtype"):   # qint32: relu/add/max_pool1d/cat only
        F.avg_pool1d(x32, 2)
    with pytest.raises(TypeError, match="dtype"):
        F.add(X, q((2, 3, 10), qrt.qint8, zp=0), 0.1, 0)
    with pytest.raises(TypeError, match="dtype"):
        F.sigmoid(q((4,), qrt.qint32, zp=0))
    with pytest.raises(TypeError, match="dtype"):
        F.hardswish(q((4,), qrt.qint32, zp=0), 0.1, 0)
    with pytest.raises(TypeError, match="dtype"):
        F.adaptive_avg_pool1d(q((2, 3), qrt.qint32), 1)
    with pytest.raises(TypeError, match=r"tensors\[1\]"):
        F.cat([X, q((2, 3, 10), qrt.qint8, zp=0)])
    pc = qrt.from_int_repr_per_channel(np.zeros((2, 3, 4), np.int8), [0.1, 0.2], [0, 0], 0)
    with pytest.raises(ValueError, match="per-tensor"):
        F.relu(pc)


def test_ops_hostile_qparams():
    with pytest.raises(ValueError, match="scale"):
        F.add(X, X, 0.0, 0)
    with pytest.raises(ValueError, match="scale"):
        F.add(X, X, float("nan"), 0)
    with pytest.raises(TypeError, match="scale"):
        F.add(X, X, "0.1", 0)
    with pytest.raises(ValueError, match="zero_point"):
        F.add_relu(X, X, 0.1, 256)
    with pytest.raises(ValueError, match="zero_point"):
        F.hardswish(X, 0.1, -1)
    with pytest.raises(ValueError, match="scale"):
        F.cat([X, X], 0, scale=-1.0)
    with pytest.raises(ValueError, match="zero_point"):
        F.cat([X, X], 0, 0.1, 300)


def test_ops_hostile_shapes():
    with pytest.raises(ValueError, match="broadcast"):
        F.add(X, q((2, 3, 9)), 0.1, 0)
    for bad in ((10,), (1, 1, 2, 10)):
        with pytest.raises(ValueError, match="input"):
            F.max_pool1d(q(bad), 2)
        with pytest.raises(ValueError, match="input"):
            F.avg_pool1d(q(bad), 2)
        with pytest.raises(ValueError, match="input"):
            F.adaptive_avg_pool1d(q(bad), 2)
    with pytest.raises(ValueError, match="input"):
        F.max_pool1d(q((2, 0)), 1)
    with pytest.raises(ValueError, match=r"tensors\[1\]"):
        F.cat([X, q((2, 4, 10))], 0)
    with pytest.raises(ValueError, match="dim"):
        F.cat([X, X], 3)
    with pytest.raises(ValueError, match="at least one"):
        F.cat([])
    with pytest.raises(ValueError):
        F.reshape(X, (7, -1))
    with pytest.raises(ValueError, match="start_dim"):
        F.flatten(X, 5)


@pytest.mark.parametrize("pool", ["max", "avg"])
def test_pool1d_hostile_geometry(pool):
    def fn(*a, **k):
        return (F.max_pool1d if pool == "max" else F.avg_pool1d)(X, *a, **k)

    with pytest.raises(ValueError, match="kernel_size"):
        fn(0)
    with pytest.raises(ValueError, match="kernel_size"):
        fn(-3)
    with pytest.raises(TypeError, match="kernel_size"):
        fn(2.5)
    with pytest.raises(ValueError, match="kernel_size"):
        fn((2, 2))
    with pytest.raises(ValueError, match="stride"):
        fn(2, 0)
    with pytest.raises(ValueError, match="padding"):
        fn(3, 1, 2)  # padding > kernel_size / 2, refused by torch too
    with pytest.raises(ValueError, match="padding"):
        fn(3, 1, -1)
    with pytest.raises(ValueError, match="output length"):
        fn(11)
    with pytest.raises(TypeError, match="ceil_mode"):
        fn(2, ceil_mode="yes")
    if pool == "max":
        with pytest.raises(ValueError, match="dilation"):
            fn(2, 1, 0, 0)
        with pytest.raises(ValueError, match="output length"):
            fn(3, 1, 0, 5)


def test_pool1d_hostile_adaptive_and_aliasing():
    with pytest.raises(ValueError, match="output_size"):
        F.adaptive_avg_pool1d(X, 0)
    with pytest.raises(TypeError, match="output_size"):
        F.adaptive_avg_pool1d(X, None)
    y = q((2, 3, 10))
    with pytest.raises(ValueError, match="share memory"):
        F.max_pool1d(y, 1, out=y)
    with pytest.raises(ValueError, match="share memory"):
        F.cat([y], 0, out=y)


def test_relu_hostile_inplace_and_out():
    with pytest.raises(ValueError, match="inplace"):
        F.relu(X.clone(), inplace=True, out=X.clone())


def test_ops_empty_and_zero_dim():
    e = q((0, 3, 10))
    assert F.relu(e).shape == (0, 3, 10)
    assert F.add(e, e, 0.1, 0).shape == (0, 3, 10)
    assert F.max_pool1d(e, 2).shape == (0, 3, 5)
    s = qrt.from_int_repr(np.array(7, np.uint8), 0.1, 3)
    assert int(F.add(s, s, 0.1, 3).int_repr()) == 11  # ATen's generic kernel (0-d)
    assert F.cat([q((0, 3)), q((2, 3))], 0).shape == (2, 3)


def test_ops_c_gates_reject_inconsistent_geometry():
    """The C precondition gates refuse what the Python layer would never pass."""
    from qrt import _ops

    x = np.zeros((2, 10), np.uint8)
    with pytest.raises(ValueError, match="rejected"):
        _ops.max_pool1d(x, np.zeros((2, 20), np.uint8), 2, 2, 0, 1)  # window past the end
    with pytest.raises(ValueError, match="rejected"):
        _ops.max_pool1d(x, np.zeros((2, 5), np.uint8), 0, 2, 0, 1)  # kernel 0
    with pytest.raises(ValueError, match="rejected"):
        _ops.avg_pool1d(x, np.zeros((2, 5), np.uint8), 2, 2, 0, 0, True, True, 0.0)  # scale 0
    with pytest.raises(ValueError, match="rejected"):
        _ops.avg_pool1d(x.view(np.int8), np.zeros((2, 5), np.int8), 2, 2, 0, 0, True, True, 0.5)
    with pytest.raises(ValueError, match="rejected"):
        _ops.add_qnnp(x[0], x[0], np.zeros(10, np.uint8), 1.0, 0, 1.0, 0, 1e-3, 0, False)
    with pytest.raises(ValueError, match="rejected"):
        _ops.add_float(x, x, np.zeros_like(x), 1.0, 300, 1.0, 0, 1.0, 0, False, 0)
    with pytest.raises(ValueError, match="nvec"):
        _ops.add_float(x, x, np.zeros_like(x), 1.0, 0, 1.0, 0, 1.0, 0, False, 11)
    with pytest.raises(ValueError, match="rejected"):
        _ops.adaptive_avg_pool1d(x, np.zeros((2, 0), np.uint8))
    assert not _ops.add_qnnp_supported(1.0, 0, 1.0, 0, 1.0 / 256, 0, False)
    assert not _ops.add_qnnp_supported(1.0, 0, 1.0, 0, 1.0, 255, True)
    assert _ops.add_qnnp_supported(1.0, 0, 1.0, 0, 1.0, 255, False)

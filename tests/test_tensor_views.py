# SPDX-License-Identifier: Apache-2.0
"""QTensor over a Storage and its views, checked against torch's quantized tensors.

Random chains of view operations (permute, transpose, T, mT, [] indexing, select, narrow,
unsqueeze, squeeze, view, reshape, flatten, contiguous, clone) are applied to a qrt tensor
and to the torch tensor with the same integers; after every step shape, strides,
storage_offset, memory sharing (same storage or a copy) and int_repr must be identical.
Torch-free twins check the same views against numpy's.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import qrt
from qrt._tensor import _compute_stride


# ---- random view chains ------------------------------------------------------------------------
def _rand_key(rng, shape):
    key = []
    d = 0
    nd = len(shape)
    ell = False
    while d < nd and rng.random() < 0.85:
        r = rng.random()
        if r < 0.1:
            key.append(None)
            continue
        if r < 0.18 and not ell:
            key.append(Ellipsis)
            ell = True
            # the ellipsis stands for a random number of the remaining dims
            d = nd - int(rng.integers(0, nd - d + 1))
            continue
        n = shape[d]
        if r < 0.4 and n > 0:
            key.append(int(rng.integers(-n, n)))
        else:
            a = None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))
            b = None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 3))
            c = None if rng.random() < 0.3 else int(rng.integers(1, 4))
            key.append(slice(a, b, c))
        d += 1
    return tuple(key) if len(key) != 1 or rng.random() < 0.5 else key[0]


def _rand_shape_like(rng, shape):
    """A shape with the same element count (sometimes with a -1)."""
    n = int(np.prod(shape))
    dims = []
    rest = n
    for _ in range(int(rng.integers(0, 4))):
        divs = [k for k in range(1, rest + 1) if rest % k == 0] if rest else [0, 1, 2]
        k = int(rng.choice(divs))
        dims.append(k)
        rest = rest // k if k else rest
    if rest != 1 or not dims or n == 0:
        dims.append(rest if n else 0)
    if n and rng.random() < 0.3:
        dims[int(rng.integers(len(dims)))] = -1
    if n == 0 and 0 not in dims:
        dims.append(0)
    return tuple(int(d) for d in dims)


def _rand_op(rng, shape):
    nd = len(shape)
    kind = rng.choice(["permute", "transpose", "getitem", "getitem", "reshape", "view",
                       "contiguous", "clone", "T", "mT", "select", "narrow", "unsqueeze",
                       "squeeze", "flatten"])
    if kind == "permute":
        return ("permute", tuple(int(x) - (nd if rng.random() < 0.3 else 0)
                                 for x in rng.permutation(nd)))
    if kind == "transpose" and nd:
        return ("transpose", int(rng.integers(-nd, nd)), int(rng.integers(-nd, nd)))
    if kind == "getitem":
        return ("getitem", _rand_key(rng, shape))
    if kind in ("reshape", "view"):
        return (kind, _rand_shape_like(rng, shape))
    if kind in ("contiguous", "clone"):
        return (kind,)
    if kind == "T" and nd != 2 and nd > 0:
        return ("T",)
    if kind == "mT" and nd >= 2:
        return ("mT",)
    if kind == "select" and nd and shape[0] >= 0:
        d = int(rng.integers(nd))
        if shape[d]:
            return ("select", d - nd * int(rng.random() < 0.3),
                    int(rng.integers(-shape[d], shape[d])))
    if kind == "narrow" and nd:
        d = int(rng.integers(nd))
        s = int(rng.integers(0, shape[d] + 1))
        return ("narrow", d, s, int(rng.integers(0, shape[d] - s + 1)))
    if kind == "unsqueeze":
        return ("unsqueeze", int(rng.integers(-nd - 1, nd + 1)))
    if kind == "squeeze":
        return ("squeeze",) if rng.random() < 0.5 or not nd else \
            ("squeeze", int(rng.integers(nd)))
    if kind == "flatten" and nd:
        a, b = sorted(int(x) for x in rng.integers(0, nd, 2))
        return ("flatten", a, b)
    return ("getitem", _rand_key(rng, shape))


def _apply(t, op):
    name, *args = op
    if name == "getitem":
        return t[args[0]]
    if name in ("T", "mT"):
        return getattr(t, name)
    return getattr(t, name)(*args)


def _start(rng, torch, dtype):
    nd = int(rng.integers(0, 5))
    shape = tuple(int(x) for x in rng.integers(1, 5, nd))
    if nd and rng.random() < 0.05:
        shape = shape[:-1] + (0,)
    npdt = {"quint8": np.uint8, "qint8": np.int8, "qint32": np.int32}[dtype]
    ints = rng.integers(np.iinfo(npdt).min, np.iinfo(npdt).max, shape, endpoint=True).astype(npdt)
    t = torch._make_per_tensor_quantized_tensor(torch.from_numpy(ints.copy()), 0.5, 1)
    q = qrt.from_int_repr(ints, 0.5, 1)
    return t, q


def _same(torch, t, q, t0, q0, where):
    assert tuple(t.shape) == q.shape, where
    assert t.stride() == q.stride(), where
    assert t.storage_offset() == q.storage_offset(), where
    shares_t = t.untyped_storage().data_ptr() == t0.untyped_storage().data_ptr()
    shares_q = q.storage() is q0.storage()
    if t0.numel():  # torch's empty storages all sit at address 0
        assert shares_t == shares_q, where
    if shares_q and q.numel():  # torch's data_ptr() is 0 for empty tensors
        assert q.data_ptr() - q0.data_ptr() == t.data_ptr() - t0.data_ptr(), where
    assert t.is_contiguous() == q.is_contiguous(), where
    np.testing.assert_array_equal(t.int_repr().numpy(), q.int_repr(), err_msg=where)


@pytest.mark.parametrize("dtype", ["quint8", "qint8", "qint32"])
def test_view_chains_match_torch(torch, rng, dtype):
    steps = errors = 0
    for case in range(150):
        t0, q0 = _start(rng, torch, dtype)
        t, q = t0, q0
        for _ in range(int(rng.integers(1, 6))):
            op = _rand_op(rng, q.shape)
            where = f"case {case}: {op} on shape {q.shape} strides {q.stride()}"
            try:
                tn = _apply(t, op)
            except (RuntimeError, IndexError, ValueError) as e:
                torch_err = e
            else:
                torch_err = None
            if torch_err is not None:
                with pytest.raises((ValueError, IndexError)):
                    _apply(q, op)
                errors += 1
                break
            qn = _apply(q, op)
            _same(torch, tn, qn, t0, q0, where)
            t, q = tn, qn
            steps += 1
    assert steps > 300 and errors >= 1


def test_compute_stride_matches_torch_view(torch, rng):
    """view() succeeds exactly when torch's does, with torch's strides."""
    agree = 0
    for _ in range(400):
        t0, q0 = _start(rng, torch, "quint8")
        for _ in range(int(rng.integers(0, 3))):
            op = ("permute", tuple(int(x) for x in rng.permutation(q0.ndim)))
            if rng.random() < 0.5:
                op = ("getitem", _rand_key(rng, q0.shape))
            try:
                t0, q0 = _apply(t0, op), _apply(q0, op)
            except (ValueError, IndexError, RuntimeError):
                pass
        new = _rand_shape_like(rng, q0.shape)
        new = tuple(q0.numel() // max(1, -int(np.prod(new))) if d == -1 else d for d in new)
        try:
            want = t0.view(new).stride()
        except RuntimeError:
            want = None
        assert _compute_stride(q0.shape, q0.stride(), new) == want
        agree += 1
    assert agree == 400


def test_clone_keeps_channels_last_as_torch(torch, rng):
    for _ in range(100):
        nd = int(rng.choice([3, 4, 5]))
        shape = tuple(int(x) for x in rng.integers(1, 4, nd))
        ints = rng.integers(0, 256, shape).astype(np.uint8)
        perm = tuple(int(x) for x in rng.permutation(nd))
        t = torch._make_per_tensor_quantized_tensor(torch.from_numpy(ints), 0.1, 0).permute(perm)
        q = qrt.from_int_repr(ints, 0.1, 0).permute(perm)
        for name in ("clone", "contiguous"):
            a, b = getattr(t, name)(), getattr(q, name)()
            assert a.stride() == b.stride(), (name, shape, perm)
            np.testing.assert_array_equal(a.int_repr().numpy(), b.int_repr())


def test_per_channel_views_keep_channels(torch, rng):
    """Per-channel views: the integers and the dequantized values of every view equal those
    of the same view of torch's tensor (computed on plain tensors, since torch's quantized
    per-channel views refuse permutes and mislabel the axis after some selects)."""
    steps = refused = 0
    for case in range(150):
        nd = int(rng.integers(1, 5))
        shape = tuple(int(x) for x in rng.integers(1, 5, nd))
        axis = int(rng.integers(nd))
        sc = rng.uniform(0.01, 1.0, shape[axis])
        zp = rng.integers(-20, 20, shape[axis])
        x = rng.standard_normal(shape).astype(np.float32)
        tq = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(sc),
                                        torch.from_numpy(zp), axis, torch.qint8)
        q = qrt.quantize_per_channel(x, sc, zp, axis, qrt.qint8)
        ti, tf = tq.int_repr(), tq.dequantize()
        ref = qrt.from_int_repr(q.int_repr().copy(), 1.0, 0)  # per-tensor twin: same layout
        for _ in range(int(rng.integers(1, 5))):
            op = _rand_op(rng, q.shape)
            where = f"case {case}: {op} on {q.shape} axis {q.q_per_channel_axis()}"
            try:
                qn = _apply(q, op)
            except ValueError as e:
                assert "channel" in str(e) or "view" in str(e) or "shape" in str(e), where
                refused += 1
                break
            except IndexError:
                with pytest.raises((IndexError, RuntimeError)):
                    _apply(ti, op)
                break
            ti, tf, ref = _apply(ti, op), _apply(tf, op), _apply(ref, op)
            q = qn
            assert q.shape == tuple(ti.shape) == ref.shape, where
            assert q.stride() == ref.stride() and q.storage_offset() == ref.storage_offset()
            np.testing.assert_array_equal(q.int_repr(), ti.numpy(), err_msg=where)
            np.testing.assert_array_equal(q.dequantize(), tf.numpy(), err_msg=where)
            ax = q.q_per_channel_axis()
            assert len(q.q_per_channel_scales()) == q.shape[ax], where
            steps += 1
    assert steps > 200 and refused > 3


def test_per_channel_channel_slice_scales(torch):
    x = torch.randn(2, 6, 3)
    sc = torch.rand(6, dtype=torch.float64) + 0.05
    zp = torch.arange(6)
    tq = torch.quantize_per_channel(x, sc, zp, 1, torch.quint8)
    q = qrt.quantize_per_channel(x.numpy(), sc.numpy(), zp.numpy(), 1, qrt.quint8)
    for key in [(slice(None), slice(1, 5, 2)), (slice(None), slice(2, None)), (0,),
                (Ellipsis, slice(0, 2))]:
        a, b = tq[key], q[key]
        assert a.q_per_channel_axis() == b.q_per_channel_axis()
        np.testing.assert_array_equal(a.q_per_channel_scales().numpy(), b.q_per_channel_scales())
        np.testing.assert_array_equal(a.q_per_channel_zero_points().numpy(),
                                      b.q_per_channel_zero_points())
        assert b.q_per_channel_scales().dtype == np.float64
        np.testing.assert_array_equal(a.int_repr().numpy(), b.int_repr())
        assert (a.stride(), a.storage_offset()) == (b.stride(), b.storage_offset())


# ---- torch-free checks ---------------------------------------------------------------------------
def _np_apply(a, op):
    """The same view in numpy terms (values only)."""
    name, *args = op
    if name == "getitem":
        return a[args[0]]
    if name == "permute":
        return a.transpose(args[0])
    if name == "transpose":
        return np.swapaxes(a, *args) if a.ndim else a
    if name == "T":
        return a.T
    if name == "mT":
        return np.swapaxes(a, -2, -1)
    if name in ("reshape", "view"):
        shape = args[0]
        if -1 in shape and a.size == 0:  # numpy cannot infer -1 for empty arrays
            known = int(np.prod([d for d in shape if d != -1]))
            shape = tuple(0 if d == -1 else d for d in shape) if known else shape
        return a.reshape(shape)
    if name in ("contiguous", "clone"):
        return a.copy()
    if name == "select":
        return np.take(a, args[1], axis=args[0])
    if name == "narrow":
        d, s, n = args
        return a[(slice(None),) * d + (slice(s, s + n),)]
    if name == "unsqueeze":
        return np.expand_dims(a, args[0])
    if name == "squeeze":
        if not args:
            return a.squeeze()
        return a.squeeze(args[0]) if a.ndim and a.shape[args[0]] == 1 else a
    if name == "flatten":
        s, e = args
        if not a.ndim:
            return a.reshape(1)
        return a.reshape(a.shape[:s] + (int(np.prod(a.shape[s:e + 1])),) + a.shape[e + 1:])
    raise AssertionError(name)


def test_views_match_numpy(rng):
    steps = 0
    for case in range(200):
        nd = int(rng.integers(0, 5))
        shape = tuple(int(x) for x in rng.integers(1, 5, nd))
        ints = rng.integers(0, 256, shape).astype(np.uint8)
        q0 = qrt.from_int_repr(ints, 0.25, 3)
        q, a = q0, ints
        for _ in range(int(rng.integers(1, 5))):
            op = _rand_op(rng, q.shape)
            try:
                qn = _apply(q, op)
            except (ValueError, IndexError):
                break
            a = _np_apply(a, op)
            q = qn
            np.testing.assert_array_equal(q.int_repr(), a, err_msg=f"{case}: {op}")
            if q.storage() is q0.storage() and q.numel():
                assert np.shares_memory(q.int_repr(), q0.int_repr())
            assert q.q_scale() == 0.25 and q.q_zero_point() == 3
            steps += 1
    assert steps > 300


def test_views_share_memory_with_storage():
    st = qrt.Storage.full(64, 7)
    q = qrt.QTensor(st, (4, 4), qrt.quint8, 0.5, 3, offset=8, strides=(1, 4))
    assert q.storage() is st
    v = q[1:3].permute(1, 0)
    assert v.storage() is st
    st[8 + 1] = 200          # element (1, 0) of q: offset 8 + 1*1 + 0*4
    assert q.int_repr()[1, 0] == 200 and v.int_repr()[0, 0] == 200
    c = v.contiguous()
    assert c.storage() is not st and c.is_contiguous()
    assert v.shape == (4, 2) and v.stride() == (4, 1) and v.storage_offset() == 9
    assert v.is_contiguous() is False  # a row stride of 4 for rows of 2
    assert v.T.stride() == (1, 4) and v.T.storage() is st


def test_qtensor_over_mapped_file(tmp_path):
    """A mapped file of raw uint8 frames wrapped without copying."""
    path = tmp_path / "frames.raw"
    frames = np.arange(3 * 4 * 5, dtype=np.uint8).reshape(3, 4, 5)
    path.write_bytes(b"HEAD" + frames.tobytes())
    st = qrt.Storage.from_file(path, shared=False)
    q = qrt.QTensor(st, (3, 4, 5), qrt.quint8, 1 / 255, 0, offset=4)
    np.testing.assert_array_equal(q.int_repr(), frames)
    assert q.data_ptr() == st.data_ptr() + 4
    assert q[1].data_ptr() == st.data_ptr() + 4 + 20
    # per-channel form over the same memory: channel axis 1 (4 channels)
    pc = qrt.QTensor(st, (3, 4, 5), qrt.quint8, offset=4, scales=[0.1, 0.2, 0.3, 0.4],
                     zero_points=[0, 1, 2, 3], axis=1)
    assert pc.storage() is st
    pc2 = qrt.QTensor.per_channel(st, (3, 4, 5), qrt.quint8, [0.1, 0.2, 0.3, 0.4],
                                  [0, 1, 2, 3], 1, offset=4)
    assert pc2.storage() is st and pc2.data_ptr() == pc.data_ptr()
    np.testing.assert_array_equal(pc2.dequantize(), pc.dequantize())
    # strided: every second frame, read in place
    ev = qrt.QTensor(st, (2, 4, 5), qrt.quint8, 0.5, 0, offset=4, strides=(40, 5, 1))
    np.testing.assert_array_equal(ev.int_repr(), frames[::2])
    with pytest.raises(ValueError, match="needs"):
        qrt.QTensor(st, (3, 4, 5), qrt.quint8, 0.5, 0, offset=4, strides=(40, 5, 1))
    np.testing.assert_array_equal(pc[:, 2:3].int_repr()[:, 0], frames[:, 2])
    np.testing.assert_array_equal(pc[:, 2:3].q_per_channel_scales(), [0.3])


@pytest.mark.parametrize("kw, msg", [
    (dict(shape=(3, 4, 6)), "needs"),
    (dict(shape=(3, 4, 5), offset=1), "needs"),
    (dict(shape=(4, 4), strides=(20, 1)), "needs"),
    (dict(shape=(2,), offset=10 ** 6), "needs|outside"),
    (dict(shape=(2, 2), strides=(1,)), "lengths"),
    (dict(shape=(2, -1)), "negative"),
    (dict(shape=(2,), offset=-1), ">= 0"),
    (dict(shape=(2, 2), strides=(-1, 1)), "strides .* >= 0"),
    (dict(shape=(2 ** 40, 2 ** 40)), "needs"),
])
def test_view_that_does_not_fit_its_storage(kw, msg):
    st = qrt.Storage.empty(60)
    with pytest.raises(ValueError, match=msg):
        qrt.QTensor(st, kw.pop("shape"), qrt.quint8, 0.1, 0, **kw)


def test_misaligned_and_bad_per_channel():
    st = qrt.Storage.empty(64)
    assert qrt.QTensor(st, (2,), qrt.qint32, 0.1, 0).data_ptr() == st.data_ptr()
    with pytest.raises(ValueError, match="aligned"):
        qrt.QTensor(st[1:], (2,), qrt.qint32, 0.1, 0)
    with pytest.raises(ValueError, match="one entry per channel"):
        qrt.QTensor(st, (2, 3), qrt.qint8, scales=[0.1, 0.2], zero_points=[0, 0], axis=1)
    with pytest.raises(ValueError, match="either"):
        qrt.QTensor(st, (2, 3), qrt.qint8, 0.1, 0, scales=[0.1] * 3, zero_points=[0] * 3,
                    axis=1)
    with pytest.raises(TypeError, match="storage"):
        qrt.QTensor(np.zeros(4, np.uint8), (4,), qrt.quint8, 0.1, 0)


def test_hostile_view_arguments():
    q = qrt.from_int_repr(np.zeros((2, 3, 4), np.uint8), 0.1, 0)
    with pytest.raises(ValueError, match="step"):
        q[::-1]
    with pytest.raises(ValueError, match="zero"):
        q[::0]
    with pytest.raises(IndexError, match="too many"):
        q[0, 0, 0, 0]
    with pytest.raises(IndexError, match="out of bounds"):
        q[2]
    with pytest.raises(IndexError, match="basic indexing"):
        q[[0, 1]]
    with pytest.raises(IndexError, match="basic indexing"):
        q[True]
    with pytest.raises(IndexError, match="basic indexing"):
        q[np.array([0, 1])]
    with pytest.raises(IndexError):
        q[1.0]
    with pytest.raises(IndexError, match="ellipsis"):
        q[..., ...]
    with pytest.raises(ValueError, match="duplicate"):
        q.permute(0, 0, 1)
    with pytest.raises(ValueError, match="dims given"):
        q.permute(0, 1)
    with pytest.raises(IndexError, match="out of range"):
        q.transpose(0, 3)
    with pytest.raises(ValueError, match="invalid for input"):
        q.reshape(5, -1)
    with pytest.raises(ValueError, match="one dimension"):
        q.reshape(-1, -1)
    with pytest.raises(ValueError, match="use reshape"):
        q.permute(2, 1, 0).view(-1)
    with pytest.raises(ValueError, match="exceeds"):
        q.narrow(1, 2, 2)
    pc = qrt.quantize_per_channel(np.ones((2, 3, 4), np.float32), [0.1] * 3, [0] * 3, 1,
                                  qrt.qint8)
    with pytest.raises(ValueError, match="channel"):
        pc[:, 1]
    with pytest.raises(ValueError, match="channel axis"):
        pc.reshape(6, 4)
    with pytest.raises(ValueError, match="channel axis"):
        pc.flatten()
    one = qrt.quantize_per_channel(np.ones((2, 1), np.float32), [0.1], [0], 1, qrt.qint8)
    with pytest.raises(ValueError, match="squeezed"):
        one.squeeze()
    pc4 = qrt.quantize_per_channel(np.ones((2, 3, 4, 5), np.float32), [0.1] * 3, [0] * 3, 1,
                                   qrt.qint8)
    assert pc4.flatten(2).q_per_channel_axis() == 1 and pc4.flatten(2).shape == (2, 3, 20)
    assert pc4.flatten(0, 0) is pc4
    assert pc.permute(2, 0, 1).q_per_channel_axis() == 2
    assert pc[None].q_per_channel_axis() == 2 and pc[0].q_per_channel_axis() == 0


def _decode_op(op):
    name, *args = op
    if name == "getitem":
        items = []
        for k in args[0]["items"]:
            if k == "...":
                items.append(Ellipsis)
            elif isinstance(k, dict):
                items.append(slice(*k["slice"]))
            else:
                items.append(k)
        return ("getitem", tuple(items) if args[0]["tuple"] else items[0])
    return (name,) + tuple(tuple(a) if isinstance(a, list) else a for a in args)


def test_views_golden():
    """Torch-free: replay torch's recorded layouts (tools/gen_golden_views.py)."""
    import json
    path = os.path.join(os.path.dirname(__file__), "data", "views.json")
    with open(path) as f:
        doc = json.load(f)
    rng = np.random.default_rng(0)
    n_steps = n_err = 0
    for case in doc["cases"]:
        npdt = {"quint8": np.uint8, "qint8": np.int8, "qint32": np.int32}[case["dtype"]]
        ints = rng.integers(-100, 100, case["shape"]).astype(npdt)
        q0 = qrt.from_int_repr(ints, 0.5, 1)
        q, a = q0, ints
        for st in case["steps"]:
            op = _decode_op(st["op"])
            if "error" in st:
                with pytest.raises((ValueError, IndexError)):
                    _apply(q, op)
                n_err += 1
                break
            q = _apply(q, op)
            a = _np_apply(a, op)
            where = f"{case['shape']} {st['op']}"
            assert list(q.shape) == st["shape"], where
            assert list(q.stride()) == st["stride"], where
            assert q.storage_offset() == st["offset"], where
            assert q.is_contiguous() == st["contiguous"], where
            if st["shares"] is not None:
                assert (q.storage() is q0.storage()) == st["shares"], where
            np.testing.assert_array_equal(q.int_repr(), a, err_msg=where)
            n_steps += 1
    assert n_steps > 250 and n_err >= 1


def test_layers_take_any_view(rng):
    """Views reach the layers: a Linear over a channels-last-strided 4-d view (whose clone
    stays channels-last) and functional ops over permuted slices give the results of the
    same values made contiguous."""
    import qrt.functional as F
    import qrt.nn as nn
    lin = nn.Linear(5, 4)
    lin.set_weight_bias(qrt.quantize_per_tensor(rng.standard_normal((4, 5)).astype(np.float32),
                                                0.02, 0, qrt.qint8),
                        rng.standard_normal(4).astype(np.float32))
    lin.scale, lin.zero_point = 0.1, 128
    x = qrt.quantize_per_tensor(rng.standard_normal((2, 3, 4, 5)).astype(np.float32), 0.05,
                                128, qrt.quint8)
    xcl = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    assert xcl.clone().stride() == (60, 1, 15, 3)  # channels-last kept by clone, as torch
    np.testing.assert_array_equal(lin(xcl).int_repr(), lin(x).int_repr())
    v = x[:, 1:, ::2].permute(0, 1, 3, 2).flatten(0, 1)
    c = v.contiguous()
    for f in (F.relu, lambda t: F.add(t, t, 0.1, 90), lambda t: F.max_pool1d(t, 2),
              lambda t: F.cat([t, t], 1, 0.1, 3), lambda t: F.hardswish(t, 0.05, 100)):
        np.testing.assert_array_equal(f(v).int_repr(), f(c).int_repr())

# SPDX-License-Identifier: Apache-2.0
"""Issue 16: the fixed costs of one call. ``Model.__call__`` takes a planned plan without
``_in_shapes`` only for plain native float32 arrays of shapes already planned; everything else
(another dtype or byte order, QTensors, lists, subclasses, new shapes, evicted plans) takes the
checked path and fails or succeeds exactly as before. rnn_dynamic's per-layer C call is bound
once (``_conv1d.RnnLayer``): the same bits as ``rnn_run``, the same argument checks, and a
change of ``rnn_gemv_variant`` between runs still applies. No torch."""

import numpy as np
import pytest

import qrt
import qrt.nn as nn
from qrt import _conv1d
from qrt._format.writer import BlobBuilder
from qrt.executor import PLAN_CACHE_SIZE
from qrt.ops import rnn as R


def _model(tmp_path, batched=True):
    """x [N, 3, 5] -> sigmoid -> y; second output relu(y) (two float ops, two outputs)."""
    b = BlobBuilder()
    x = b.activation("x", "float32", (2, 3, 5), batched=batched)
    y = b.activation("y", "float32", (2, 3, 5), batched=batched)
    z = b.activation("z", "float32", (2, 3, 5), batched=batched)
    b.op("float_sigmoid", "sig", [x], [y], [], {})
    b.op("relu", "relu", [y], [z], [], {})
    b.inputs, b.outputs = [x], [y, z]
    path = str(tmp_path / "m.bin")
    b.write(path)
    return qrt.load(path)


def _want(x):
    """float_sigmoid's own ufunc sequence (in place, reciprocal): the same bits on every
    platform (armv7's numpy gives 1 / v and reciprocal(v) different last bits)."""
    y = np.negative(x)
    np.exp(y, out=y)
    np.add(y, np.float32(1), out=y)
    np.reciprocal(y, out=y)
    return y, np.maximum(y, np.float32(0))


def test_fast_path_results_and_refusals(tmp_path, rng, monkeypatch):
    m = _model(tmp_path)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    for _ in range(2):      # the first call plans nothing new (the exported shape), both fast
        y, z = m(x)
        np.testing.assert_array_equal(y, _want(x)[0])
        np.testing.assert_array_equal(z, _want(x)[1])
    # outputs are copies, not views of the arena
    y2, _ = m(x + np.float32(1))
    assert not np.array_equal(y, y2)
    # a strided float32 view of a planned shape: fast, copied in correctly
    big = rng.standard_normal((4, 3, 10)).astype(np.float32)
    v = big[::2, :, ::2]
    np.testing.assert_array_equal(m(v)[0], _want(np.ascontiguousarray(v))[0])
    # refusals: exactly the checked path's errors, on a warm plan
    with pytest.raises(ValueError, match="float32"):
        m(x.astype(np.float64))
    with pytest.raises(ValueError, match="float32"):
        m(x.astype(">f4"))
    with pytest.raises(ValueError, match="float32"):
        m(qrt.quantize_per_tensor(x, 0.1, 0, "quint8"))
    with pytest.raises(TypeError, match="numpy array"):
        m(x.tolist())
    with pytest.raises(TypeError, match="input"):
        m(x, x)
    with pytest.raises(TypeError, match="input"):
        m()
    with pytest.raises(ValueError, match="shape"):
        m(x[0])
    with pytest.raises(ValueError, match="shape"):
        m(np.zeros((0, 3, 5), np.float32))

    class Sub(np.ndarray):
        pass
    s = x.view(Sub)   # a subclass takes the checked path, and works
    np.testing.assert_array_equal(m(s)[0], _want(x)[0])
    # the fast path really skips _in_shapes for planned shapes, and only for them
    calls = []
    orig = m._in_shapes
    monkeypatch.setattr(m, "_in_shapes", lambda a: (calls.append(1), orig(a))[1])
    m(x)
    assert not calls
    m(rng.standard_normal((3, 3, 5)).astype(np.float32))   # a new batch size: checked
    assert calls == [1]
    m(rng.standard_normal((3, 3, 5)).astype(np.float32))   # now planned: fast
    assert calls == [1]


def test_fast_path_after_eviction(tmp_path, rng):
    m = _model(tmp_path)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    m(x)
    for n in range(3, PLAN_CACHE_SIZE + 4):   # evicts the batch-2 plan
        m(np.zeros((n, 3, 5), np.float32))
    assert len(m._plans) == PLAN_CACHE_SIZE
    assert ((2, 3, 5),) not in m._plans
    np.testing.assert_array_equal(m(x)[0], _want(x)[0])    # planned again, checked
    assert ((2, 3, 5),) in m._plans
    # the most recently used plan survives new shapes (LRU order kept by the fast path)
    for n in range(100, 100 + PLAN_CACHE_SIZE - 1):
        m(np.zeros((n, 3, 5), np.float32))
        m(x)
    assert ((2, 3, 5),) in m._plans


def test_fast_path_unbatched(tmp_path, rng):
    m = _model(tmp_path, batched=False)
    for shape in ((2, 3, 5), (3, 3, 5), (2, 3, 5)):   # any shape of the rank, as before
        x = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_array_equal(m(x)[0], _want(x)[0])
    with pytest.raises(ValueError, match="shape"):
        m(np.zeros((3, 5), np.float32))


def _layer_args(rng, mode=0, gates=4, hidden=5, batch=2, steps=6):
    gh_n = gates * hidden
    m = nn.DynamicLinear(hidden, gh_n, bias=True)
    m._install_raw(rng.integers(-128, 128, (gh_n, hidden, 1), dtype=np.int8),
                   rng.uniform(1e-3, 2e-2, gh_n), rng.integers(-9, 9, gh_n).astype(np.int32),
                   rng.standard_normal(gh_n).astype(np.float32), "per_channel_affine")
    g = R._Gemm(m, batch, "t")
    gi = rng.standard_normal(steps * batch * gh_n).astype(np.float32)
    h = rng.uniform(-1, 1, batch * hidden).astype(np.float32)
    c = rng.uniform(-1, 1, batch * hidden).astype(np.float32)
    y = np.zeros(steps * batch * hidden, np.float32)
    return [g.plan, mode, gates, g.ws, g.rs, gi, 0, batch * gh_n, gh_n, y, 0, batch * hidden,
            hidden, h, c, np.empty(batch * gh_n, np.float32), g.xq1, steps, False]


@pytest.mark.parametrize("mode,gates", [(0, 4), (1, 3), (2, 1), (3, 1)])
def test_rnn_layer_equals_rnn_run(rng, mode, gates):
    a = _layer_args(rng, mode, gates)
    h0, c0 = a[13].copy(), a[14].copy()
    _conv1d.rnn_run(*a)
    want = [a[9].copy(), a[13].copy(), a[14].copy()]
    a[13][:], a[14][:], a[9][:] = h0, c0, 0
    layer = _conv1d.RnnLayer(*a)
    for variant in (-1, 0, -1):     # the best GEMV, the reference, the best again
        _conv1d.rnn_gemv_variant(variant)
        try:
            a[13][:], a[14][:], a[9][:] = h0, c0, 0
            layer.run()
        finally:
            _conv1d.rnn_gemv_variant(-1)
        for w, got in zip(want, (a[9], a[13], a[14])):
            np.testing.assert_array_equal(got, w)
    layer_k = _conv1d.RnnLayer(*a, False)   # gemv=False: the plan's own kernel
    a[13][:], a[14][:], a[9][:] = h0, c0, 0
    layer_k.run()
    np.testing.assert_array_equal(a[9], want[0])


def test_rnn_layer_checks_once_and_refuses_nan(rng):
    a = _layer_args(rng)
    bad = list(a)
    bad[17] = 7                                   # more steps than gi holds
    with pytest.raises(ValueError, match="gi"):
        _conv1d.RnnLayer(*bad)
    bad = list(a)
    bad[9] = np.zeros(10, np.float32)             # y too small
    with pytest.raises(ValueError, match="y"):
        _conv1d.RnnLayer(*bad)
    bad = list(a)
    bad[4] = np.zeros(20, np.float32)             # not the plan's scale buffer
    with pytest.raises(ValueError, match="scale buffer"):
        _conv1d.RnnLayer(*bad)
    bad = list(a)
    bad[14] = np.zeros(3, np.float32)             # c too small
    with pytest.raises(ValueError, match="c needs"):
        _conv1d.RnnLayer(*bad)
    bad = list(a)
    bad[13] = np.zeros(10, np.float64)            # h not float32
    with pytest.raises((ValueError, TypeError)):
        _conv1d.RnnLayer(*bad)
    layer = _conv1d.RnnLayer(*a)
    a[13][0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        layer.run()
    a[13][0] = 0.0
    layer.run()


def _ih_args(rng, a, in_size=7, nonzero_wz=True):
    """A dynamic linear [G*H, in_size] (per-channel, nonzero weight zero points) over the
    layer's steps*batch rows, and its float input."""
    gh_n, rows = a[4].shape[0], a[17] * (a[13].shape[0] // a[12])
    m = nn.DynamicLinear(in_size, gh_n, bias=True)
    m._install_raw(rng.integers(-128, 128, (gh_n, in_size, 1), dtype=np.int8),
                   rng.uniform(1e-3, 2e-2, gh_n),
                   (rng.integers(-128, 128, gh_n) if nonzero_wz else np.zeros(gh_n)).astype(
                       np.int32),
                   rng.standard_normal(gh_n).astype(np.float32), "per_channel_affine")
    gi = R._Gemm(m, rows, "layer 0 input")
    x = (rng.standard_normal(rows * in_size) * 3).astype(np.float32)
    return gi, x


@pytest.mark.parametrize("mode,gates", [(0, 4), (1, 3), (2, 1)])
@pytest.mark.parametrize("in_size", [1, 7, 64, 130])
def test_rnn_layer_input_projection_is_the_plans(rng, mode, gates, in_size):
    """set_input: the input projection inside the layer's C call (packed GEMV per row) gives
    gi and every output bit of the plan's own kernel (ih.run_dynamic_f32), for every GEMV
    variant this CPU runs, and with two threads (which take the plan's kernel)."""
    a = _layer_args(rng, mode, gates)
    gi_plan, x = _ih_args(rng, a, in_size)
    h0, c0 = a[13].copy(), a[14].copy()
    assert gi_plan.plan.run_dynamic_f32(x, gi_plan.xq1, a[5], gi_plan.ws, gi_plan.rs)
    want_gi = a[5].copy()
    _conv1d.RnnLayer(*a).run()
    want = [a[9].copy(), a[13].copy(), a[14].copy()]
    layer = _conv1d.RnnLayer(*a)
    layer.set_input(gi_plan.plan, x, gi_plan.xq1, gi_plan.ws, gi_plan.rs, a[5], "t")
    threads = qrt.get_num_threads()
    try:
        for variant, nthreads in ((-1, 1), (1, 1), (2, 1), (3, 1), (0, 1), (-1, 2)):
            _conv1d.rnn_gemv_variant(variant)
            qrt.set_num_threads(nthreads)
            a[13][:], a[14][:], a[9][:], a[5][:] = h0, c0, 0, np.nan
            layer.run()
            np.testing.assert_array_equal(a[5], want_gi, err_msg=str(variant))
            for w, got in zip(want, (a[9], a[13], a[14])):
                np.testing.assert_array_equal(got, w, err_msg=str(variant))
    finally:
        _conv1d.rnn_gemv_variant(-1)
        qrt.set_num_threads(threads)


def test_rnn_layer_input_projection_checks(rng):
    a = _layer_args(rng)
    gi_plan, x = _ih_args(rng, a)
    layer = _conv1d.RnnLayer(*a)
    ok = [gi_plan.plan, x, gi_plan.xq1, gi_plan.ws, gi_plan.rs, a[5], "layer 0 input"]
    for k, bad, what in ((1, x[:-1], "buffers"), (2, gi_plan.xq1[:-1], "buffers"),
                         (3, gi_plan.ws[:-1], "buffers"), (5, a[5][:-1].copy(), "buffers"),
                         (5, a[5].copy(), "buffers"),     # not the buffer the layer reads
                         (0, _layer_args(rng)[0], "does not match")):   # hh's plan, 5 rows
        args = list(ok)
        args[k] = bad
        with pytest.raises(ValueError, match=what):
            layer.set_input(*args)
    with pytest.raises((ValueError, TypeError)):
        layer.set_input(gi_plan.plan, x.astype(np.float64), *ok[2:])
    layer.set_input(*ok)
    for at in (0, 3, 13, x.shape[0] - 1):      # first, vector lanes, the scalar tail
        for v in (np.nan, np.inf, -np.inf):
            keep = x[at]
            x[at] = v
            with pytest.raises(ValueError, match="layer 0 input: NaN or infinity"):
                layer.run()
            x[at] = keep
    layer.run()


def test_bound_calls_equal_the_checked_calls(rng):
    """A model plan binds its 1x1 / depthwise convs and adds as calls of no arguments on the
    arena (Plan.bind_u8, DwPlan.bind_u8, AddQnnp.bind): the same bytes as the checked calls,
    the buffers checked once at bind (too small: ValueError then, not at the call)."""
    from qrt import _ops
    ci, co, L = 24, 40, 49
    w = rng.integers(-128, 128, (co, ci, 1), dtype=np.int8)
    wpack = np.empty(_conv1d.packed_weight_size(co, ci, 1), np.int8)
    wsum = np.empty(co, np.int32)
    _conv1d.pack_weights(w, wpack, wsum)
    plan = _conv1d.Plan(w, wpack, wsum, np.zeros(co, np.int32),
                        rng.integers(-99, 99, co).astype(np.int32), np.full(co, 1e-3, np.float32),
                        np.zeros(co, np.float32), (1, ci, L), (ci * L, L, 1), (1, co, L),
                        (co * L, L, 1), input_zero=3, output_zero=9)
    buf = rng.integers(0, 256, 8192).astype(np.uint8)
    want = buf.copy()
    plan.run_u8(want, 100, want, 3000)
    got = buf.copy()
    call = plan.bind_u8(got, 100, got, 3000)
    call()
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="too small"):
        plan.bind_u8(got, 8192 - 10, got, 0)
    with pytest.raises(ValueError, match="too small"):
        plan.bind_u8(got, 0, got, 8192 - 10)
    # depthwise 3x3 on 8 channels of 9x9
    wd = rng.integers(-128, 128, (8, 9), dtype=np.int8)
    dw = _conv1d.DwPlan(wd, np.zeros(8, np.int32), np.zeros(8, np.int32),
                        np.full(8, 2e-3, np.float32), (1, 8, 9, 9), (648, 81, 9, 1), (3, 3),
                        (1, 1), (1, 1), (1, 1), (9, 9), input_zero=5, output_zero=7)
    want = buf.copy()
    dw.run_u8(want, 0, want, 4000)
    got = buf.copy()
    dw.bind_u8(got, 0, got, 4000)()
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="too small"):
        dw.bind_u8(got, 0, got, 8192 - 100)
    # add, in place on a (out aliasing a)
    k = _ops.AddQnnp(0.05, 120, 0.07, 130, 0.09, 125, False)
    a, b = buf[:1000].copy(), buf[1000:2000].copy()
    want = np.empty_like(a)
    k(a, b, want)
    k.bind(a, b, a)()
    np.testing.assert_array_equal(a, want)
    with pytest.raises(ValueError, match="same number"):
        k.bind(a, b[:-1], a)


def _quant_model(tmp_path, two_readers=False):
    """x float32 -> quantize -> dequantize (and, with two_readers, a float op on x too)."""
    b = BlobBuilder()
    x = b.activation("x", "float32", (2, 3, 5), batched=True)
    q = b.activation("xq", "quint8", (2, 3, 5), batched=True, scale=0.05, zero_point=100)
    y = b.activation("y", "float32", (2, 3, 5), batched=True)
    b.op("quantize", "quant", [x], [q])
    b.op("dequantize", "dequant", [q], [y])
    b.inputs, b.outputs = [x], [y]
    if two_readers:
        z = b.activation("z", "float32", (2, 3, 5), batched=True)
        b.op("float_sigmoid", "sig", [x], [z], [], {})
        b.outputs = [y, z]
    path = str(tmp_path / ("m2.bin" if two_readers else "m.bin"))
    b.write(path)
    return qrt.load(path)


def test_input_read_in_place_by_its_quantize(tmp_path, rng):
    """A float32 input that only the model's quantize reads is quantized straight from the
    caller's contiguous array (no copy into the arena): the same result as the copying path
    (strided and Fortran-ordered inputs), the caller's array unchanged and not kept after the call;
    an input that another op reads too is copied as before."""
    import gc
    import weakref
    m = _quant_model(tmp_path)
    x = (rng.standard_normal((2, 3, 5)) * 3).astype(np.float32)
    keep = x.copy()
    want = m(np.ascontiguousarray(x[:, :, ::-1])[:, :, ::-1])  # copying path (strided input)
    plan = m._exec.cached(((2, 3, 5),))
    assert plan is not None and plan.direct[0] is not None
    got = m(x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(x, keep)
    np.testing.assert_array_equal(m(np.asfortranarray(x)), want)  # not C-contiguous: copied
    assert plan.direct[0][0] is plan.direct[0][1]  # the arena view again after the call
    r = weakref.ref(x)
    del x
    gc.collect()
    assert r() is None
    m2 = _quant_model(tmp_path, two_readers=True)
    x2 = keep.copy()
    y2, z2 = m2(x2)
    np.testing.assert_array_equal(y2, want)
    assert m2._exec.cached(((2, 3, 5),)).direct[0] is None

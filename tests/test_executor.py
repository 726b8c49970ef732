# SPDX-License-Identifier: Apache-2.0
"""qrt.executor: shape inference at other lengths, the plan cache bound, the arena planner,
the R27 memory bound, and CPU vs (shim) CuPy DeviceModel on the same executor.

Blobs are built with qrt_export.BlobBuilder (torch-free); equality is exact.
"""

import os
import subprocess
import sys
import types

import numpy as np
import pytest

import qrt
import qrt.functional as F
from qrt import backends
from qrt.executor import PLAN_CACHE_SIZE, plan_arena
from qrt_export import BlobBuilder

from _blobs import add_layer, conv_layer, conv_len, load



sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))


def conv_pool_blob(L=32, batch=2):
    """quantize -> conv1d(+relu, pad 2) -> max_pool1d(3, 2, pad 1) -> conv1d(stride 2) ->
    avg_pool1d(2) -> dequantize; no linear, so any length the convs accept runs."""
    rng = np.random.default_rng(21)
    c1 = conv_layer(rng, 3, 6, 5, relu=True, padding=2)
    c2 = conv_layer(rng, 6, 4, 3, stride=2, scale=0.08, zero_point=100)
    b = BlobBuilder()
    l1 = conv_len(c1, L)
    lp = (l1 + 2 - 3) // 2 + 1
    l2 = conv_len(c2, lp)
    la = l2 // 2
    x = b.activation("x", "float32", (batch, 3, L), batched=True)
    q = b.activation("xq", "quint8", (batch, 3, L), batched=True, scale=0.03, zero_point=128)
    h1 = b.activation("h1", "quint8", (batch, 6, l1), batched=True, scale=c1.scale,
                      zero_point=c1.zero_point)
    p = b.activation("p", "quint8", (batch, 6, lp), batched=True, scale=c1.scale,
                     zero_point=c1.zero_point)
    h2 = b.activation("h2", "quint8", (batch, 4, l2), batched=True, scale=c2.scale,
                      zero_point=c2.zero_point)
    a = b.activation("a", "quint8", (batch, 4, la), batched=True, scale=c2.scale,
                     zero_point=c2.zero_point)
    y = b.activation("y", "float32", (batch, 4, la), batched=True)
    b.op("quantize", "q", [x], [q])
    add_layer(b, "conv1d", c1, q, h1, "c1")
    b.op("max_pool1d", "mp", [h1], [p], attrs={"kernel_size": 3, "stride": 2, "padding": 1})
    add_layer(b, "conv1d", c2, p, h2, "c2")
    b.op("avg_pool1d", "ap", [h2], [a], attrs={"kernel_size": 2})
    b.op("dequantize", "dq", [a], [y])
    b.inputs, b.outputs = [x], [y]
    return b, (c1, c2)


def chain(mods, x):
    c1, c2 = mods
    q = qrt.quantize_per_tensor(x, 0.03, 128, qrt.quint8)
    h = F.max_pool1d(c1(q), 3, 2, 1)
    return F.avg_pool1d(c2(h), 2).dequantize()


@pytest.fixture(scope="module")
def conv_pool(tmp_path_factory):
    b, mods = conv_pool_blob()
    p = tmp_path_factory.mktemp("cp") / "cp.bin"
    b.write(p)
    return p, mods


# ---- 7. shapes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("L", [32, 9, 10, 17, 33, 64, 257])
@pytest.mark.parametrize("batch", [1, 2, 5])
def test_executor_other_lengths_equal_module_chain(conv_pool, L, batch):
    p, mods = conv_pool
    m = qrt.load(p)
    x = np.random.default_rng(L * 10 + batch).normal(0, 1, (batch, 3, L)).astype(np.float32)
    want = chain(mods, x)
    got = m(x)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_executor_unbatched_input_refused_or_consistent(conv_pool):
    p, mods = conv_pool
    m = qrt.load(p)
    with pytest.raises(ValueError):
        m(np.zeros((3, 32), np.float32))


@pytest.mark.parametrize("L,op", [(1, "conv1d 'c2'"), (4, "conv1d 'c2'"), (5, "avg_pool1d 'ap'"),
                                  (8, "avg_pool1d 'ap'")])
def test_executor_length_too_short_names_the_op(conv_pool, L, op):
    p, _ = conv_pool
    m = qrt.load(p)
    with pytest.raises(ValueError, match=rf"^op \d+ {op} cannot take input shape") as ei:
        m(np.zeros((2, 3, L), np.float32))
    assert not isinstance(ei.value, qrt.FormatError)
    # the model still runs afterwards
    assert m(np.zeros((2, 3, 32), np.float32)).shape == (2, 4, 3)


def test_executor_conv_output_empty_names_the_conv(tmp_path):
    """A conv with kernel 5 and no padding refuses L < 5: ValueError naming that conv."""
    rng = np.random.default_rng(22)
    c = conv_layer(rng, 2, 3, 5, dilation=2)
    b = BlobBuilder()
    x = b.activation("x", "float32", (1, 2, 20), batched=True)
    q = b.activation("xq", "quint8", (1, 2, 20), batched=True, scale=0.03, zero_point=128)
    h = b.activation("h", "quint8", (1, 3, conv_len(c, 20)), batched=True, scale=c.scale,
                     zero_point=c.zero_point)
    b.op("quantize", "q", [x], [q])
    add_layer(b, "conv1d", c, q, h, "the_conv")
    b.inputs, b.outputs = [x], [h]
    m = load(tmp_path, b)
    assert m(np.zeros((1, 2, 9), np.float32)).shape == (1, 3, 1)
    for L in (8, 1):
        with pytest.raises(ValueError, match=r"op 1 conv1d 'the_conv'.*too short"):
            m(np.zeros((1, 2, L), np.float32))
    with pytest.raises(ValueError, match="conv1d 'the_conv'.*channels"):
        m(np.zeros((1, 3, 20), np.float32))


def test_executor_plan_cache_bounded(conv_pool):
    p, mods = conv_pool
    m = qrt.load(p)
    rng = np.random.default_rng(23)
    biggest = 0
    for L in range(9, 109):
        x = rng.normal(0, 1, (1, 3, L)).astype(np.float32)
        y = m(x)
        assert len(m._plans) <= PLAN_CACHE_SIZE
        biggest = max(biggest, sum(pl.nbytes for pl in m._plans.values()))
        if L % 17 == 0:
            np.testing.assert_array_equal(y, chain(mods, x))
    assert len(m._plans) == PLAN_CACHE_SIZE
    # the most recent shapes are the ones kept (LRU), and kept memory is bounded by them
    assert [k[0][2] for k in m._plans] == list(range(109 - PLAN_CACHE_SIZE, 109))
    one = max(pl.nbytes for pl in m._plans.values())
    assert biggest <= PLAN_CACHE_SIZE * one
    # a cached shape is reused (same plan object), and moves to the end
    first = next(iter(m._plans))
    plan = m._plans[first]
    m(np.zeros(first[0], np.float32))
    assert next(reversed(m._plans)) == first and m._plans[first] is plan


def _check_no_overlap(sizes, life, offsets, total):
    assert set(offsets) == set(sizes)
    for r, o in offsets.items():
        assert o >= 0 and o + sizes[r] <= total
    rs = sorted(sizes)
    for i, a in enumerate(rs):
        for b in rs[i + 1:]:
            if life[a][1] < life[b][0] or life[b][1] < life[a][0]:
                continue  # not live at the same time
            if sizes[a] == 0 or sizes[b] == 0:
                continue
            assert offsets[a] + sizes[a] <= offsets[b] or offsets[b] + sizes[b] <= offsets[a], \
                (a, b, sizes[a], sizes[b], life[a], life[b], offsets[a], offsets[b])


@pytest.mark.parametrize("seed", range(300))
def test_plan_arena_never_overlaps_live_buffers(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    n_ops = int(rng.integers(1, 30))
    sizes, life = {}, {}
    for r in range(n):
        f = int(rng.integers(-1, n_ops + 1))
        last = int(rng.integers(f, n_ops + 2))
        life[r] = (f, last)
        sizes[r] = int(rng.choice([0, 64, 128, 192, 640, 4096])) * int(rng.integers(1, 4))
    offsets, total = plan_arena(sizes, life)
    _check_no_overlap(sizes, life, offsets, total)
    # never worse than giving every buffer its own space
    assert total <= sum(sizes.values())
    # at least the biggest set of buffers live at one op
    for k in range(-1, n_ops + 2):
        live = sum(s for r, s in sizes.items() if life[r][0] <= k <= life[r][1])
        assert total >= live


def test_plan_arena_reuses_dead_space():
    sizes = {0: 1024, 1: 1024, 2: 1024}
    life = {0: (0, 1), 1: (1, 2), 2: (2, 3)}
    offsets, total = plan_arena(sizes, life)
    assert total == 2048 and offsets[0] == offsets[2]
    assert plan_arena({}, {}) == ({}, 0)


def test_executor_plan_views_of_live_tensors_disjoint(conv_pool):
    """In a real plan, two tensors whose lifetimes overlap never share arena bytes."""
    p, _ = conv_pool
    m = qrt.load(p)
    ex = m._exec
    for L in (32, 77):
        plan = ex.plan([(3, 3, L)])
        life = ex.graph.lifetimes()
        spans = {}
        for i, v in plan.views.items():
            a = v.int_repr() if hasattr(v, "int_repr") else v
            base = np.asarray(plan.arena).__array_interface__["data"][0]
            o = a.__array_interface__["data"][0] - base
            spans[i] = (o, a.nbytes)
        sizes = {r: spans[r][1] for r in life}
        _check_no_overlap(sizes, {r: tuple(v) for r, v in life.items()},
                          {r: spans[r][0] for r in life}, plan.nbytes)


# ---- 4. R27 memory bomb ------------------------------------------------------------------------
def bomb_blob(path, batch=4096, c_out=64):
    """A ~2 kB blob: batch x 1 x 1 input, conv k=2 dilation 2^20 padding 2^20 each side (within
    R26): the conv output is batch x c_out x (2^20 + 1) quint8 = 256 GiB."""
    rng = np.random.default_rng(24)
    d = 1 << 20
    c = conv_layer(rng, 1, c_out, 2, dilation=d, padding=d)
    L = 1
    lo = conv_len(c, L)
    b = BlobBuilder()
    x = b.activation("x", "float32", (batch, 1, L), batched=True)
    q = b.activation("xq", "quint8", (batch, 1, L), batched=True, scale=0.03, zero_point=128)
    h = b.activation("h", "quint8", (batch, c_out, lo), batched=True, scale=c.scale,
                     zero_point=c.zero_point)
    b.op("quantize", "q", [x], [q])
    add_layer(b, "conv1d", c, q, h, "bomb")
    b.inputs, b.outputs = [x], [h]
    n = b.write(path)
    return n, batch * c_out * lo


def test_R27_memory_bomb_refused_before_allocating(tmp_path):
    n, need = bomb_blob(tmp_path / "bomb.bin")
    assert n < 4096 and need > 200 * (1 << 30)
    code = (
        "import resource, sys, qrt\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "try:\n"
        "    qrt.load(sys.argv[1])\n"
        "except qrt.FormatError as e:\n"
        "    print('FormatError', e.rule, e)\n"
        "    sys.exit(0)\n"
        "print('loaded')\n"
        "sys.exit(3)\n")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "bomb.bin")],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert r.stdout.startswith("FormatError R27"), r.stdout
    assert "MemoryError" not in r.stderr


def test_R27_in_process_and_just_under_the_bound(tmp_path):
    bomb_blob(tmp_path / "bomb.bin")
    with pytest.raises(qrt.FormatError) as ei:
        qrt.load(tmp_path / "bomb.bin")
    assert ei.value.rule == "R27" and "bytes" in str(ei.value)
    # a small batch of the same graph (~64 MiB of activations) is below 1 GiB: it loads
    bomb_blob(tmp_path / "ok.bin", batch=1)
    m = qrt.load(tmp_path / "ok.bin")
    assert m(np.zeros((1, 1, 1), np.float32)).shape == (1, 64, (1 << 20) + 1)


# ---- 8. CPU and the (shim) CuPy DeviceModel -----------------------------------------------------
@pytest.fixture(scope="module", params=["shim", pytest.param("cuda", marks=pytest.mark.gpu)])
def be(request):
    saved = {k: sys.modules.get(k) for k in ("cupy", "qrt.backends.cupy_backend")}
    saved_loaded = dict(backends._loaded)
    if request.param == "cuda":
        cp = pytest.importorskip("cupy")
        try:
            if cp.cuda.runtime.getDeviceCount() < 1:
                pytest.skip("no CUDA GPU visible")
        except Exception as e:  # noqa: BLE001
            pytest.skip(f"no usable CUDA GPU ({e})")
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import cuda_host_harness as H
        import _cupy_shim
        if H.compilers() is None:
            pytest.skip("no C/C++ compiler for the CUDA host harness")
        cp = _cupy_shim.make(H.load())
        sys.modules["cupy"] = cp
    sys.modules.pop("qrt.backends.cupy_backend", None)
    backends._loaded.pop("cupy", None)
    cb = backends.get("cupy")
    yield types.SimpleNamespace(cb=cb, cp=cp, kind=request.param)
    for k, v in saved.items():
        if v is None:
            sys.modules.pop(k, None)
        else:
            sys.modules[k] = v
    backends._loaded.clear()
    backends._loaded.update(saved_loaded)


def test_executor_cpu_and_device_agree_at_two_lengths(be, conv_pool):
    from qrt._format.reader import read_blob
    p, mods = conv_pool
    cpu = qrt.load(p)
    dev = be.cb.DeviceModel(read_blob(p))
    rng = np.random.default_rng(25)
    for batch, L in ((2, 32), (3, 57), (2, 32)):
        x = rng.normal(0, 1, (batch, 3, L)).astype(np.float32)
        want = cpu(x)
        np.testing.assert_array_equal(want, chain(mods, x))
        got = np.asarray(dev(x))
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert len(dev._exec._plans) == 2
    with pytest.raises(ValueError, match="op 3 conv1d 'c2'"):
        dev(np.zeros((1, 3, 2), np.float32))
    with pytest.raises(ValueError, match="avg_pool1d 'ap'"):
        dev(np.zeros((1, 3, 6), np.float32))


def test_device_model_refuses_what_the_cpu_refuses(be, tmp_path):
    """R22 (stored shapes disagree with inference) and R27 (memory bomb) are file rules: the
    device loader applies them at load too, before any device memory is allocated."""
    from qrt._format.reader import read_blob
    bomb_blob(tmp_path / "bomb.bin")
    with pytest.raises(qrt.FormatError) as ei:
        be.cb.DeviceModel(read_blob(tmp_path / "bomb.bin"))
    assert ei.value.rule == "R27"
    b, _ = conv_pool_blob()
    for t in b.tensors:
        if t.name in ("a", "y"):
            assert t.shape == (2, 4, 3)
            t.shape = (2, 4, 4)   # inference says (2, 4, 3)
    b.write(tmp_path / "r22.bin")
    for load_ in (qrt.load, lambda p: be.cb.DeviceModel(read_blob(p))):
        with pytest.raises(qrt.FormatError) as ei:
            load_(tmp_path / "r22.bin")
        assert ei.value.rule == "R22", str(ei.value)


def test_executor_threads_share_a_model(conv_pool):
    """Calls from several threads at different lengths (more shapes than the plan cache holds)
    give the single-threaded answers."""
    from concurrent.futures import ThreadPoolExecutor
    p, mods = conv_pool
    m = qrt.load(p)
    rng = np.random.default_rng(26)
    xs = [rng.normal(0, 1, (1 + i % 3, 3, 9 + (7 * i) % 60)).astype(np.float32)
          for i in range(80)]
    want = [chain(mods, x) for x in xs]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(m, xs))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert len(m._plans) <= PLAN_CACHE_SIZE

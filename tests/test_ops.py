# SPDX-License-Identifier: Apache-2.0
"""qrt.functional element-wise / pooling / shape ops against torch 2.13 (qnnpack engine).

Exact integer equality only.  Cases torch's qnnpack engine refuses (or mishandles, see
docs/ops.md) are compared with the fbgemm engine instead, which is what qrt runs there.
"""

import contextlib
import warnings

import numpy as np
import pytest

import qrt
import qrt.functional as F

torch = pytest.importorskip("torch")
tF = torch.nn.functional
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=".*quantiz.*")
warnings.filterwarnings("ignore", message=".*resized.*")
# torch's deprecation notice for quantized dtypes and its cat-with-mixed-qparams notice.
pytestmark = [pytest.mark.filterwarnings("ignore:.*quantiz"),
              pytest.mark.filterwarnings("ignore:.*resized")]

N_CASES = 250  # per op in the default run; the slow variants run 10x more


@contextlib.contextmanager
def engine(name):
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = name
    try:
        yield
    finally:
        torch.backends.quantized.engine = old


@contextlib.contextmanager
def single_thread():
    """ATen splits element-wise loops over > 32768 elements between threads, and each
    thread's chunk has its own vector/scalar boundary; qrt models one thread (docs/ops.md)."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def to_torch(q: qrt.QTensor):
    ints = torch.from_numpy(np.ascontiguousarray(q.int_repr()).copy())
    return torch._make_per_tensor_quantized_tensor(ints, q.q_scale(), q.q_zero_point())


def codes(t):
    return t.int_repr().numpy()


def rand_q(rng, shape, dtype=qrt.quint8, scale=None, zp=None, tie_heavy=False):
    lo, hi = dtype.qmin, dtype.qmax
    if scale is None:
        scale = float(2.0 ** rng.integers(-8, 1)) if tie_heavy else float(rng.uniform(1e-3, 0.5))
    if zp is None:
        zp = int(rng.integers(lo, hi + 1))
    ints = rng.integers(lo, hi + 1, shape).astype(dtype.numpy_dtype)
    return qrt.from_int_repr(ints, scale, zp, dtype)


def rand_shape(rng, max_ndim=3, max_len=40):
    nd = int(rng.integers(1, max_ndim + 1))
    return tuple(int(rng.integers(1, max_len)) for _ in range(nd))


def torch_or_none(fn):
    try:
        return fn()
    except RuntimeError:
        return None


# ---- relu --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [qrt.quint8, qrt.qint8])
def test_relu_matches_torch(dtype):
    rng = np.random.default_rng(11)
    with engine("qnnpack"):
        for _ in range(N_CASES // 2):
            x = rand_q(rng, rand_shape(rng), dtype)
            want = codes(torch.relu(to_torch(x)))
            np.testing.assert_array_equal(F.relu(x).int_repr(), want)
            y = x.clone()
            assert F.relu(y, inplace=True) is y
            np.testing.assert_array_equal(y.int_repr(), want)


def test_relu_noncontiguous_inplace():
    rng = np.random.default_rng(12)
    base = rand_q(rng, (4, 6))
    t = base._with_layout((6, 4), (1, 6), 0)  # a transposed view
    want = np.maximum(t.int_repr(), t.q_zero_point())
    F.relu(t, inplace=True)
    np.testing.assert_array_equal(t.int_repr(), want)


# ---- add -----------------------------------------------------------------------------------------
def _add_case(rng, dtype, tie_heavy):
    shape = rand_shape(rng, 3, 70 if rng.random() < 0.8 else 300)
    a = rand_q(rng, shape, dtype, tie_heavy=tie_heavy)
    b = rand_q(rng, shape, dtype, tie_heavy=tie_heavy)
    so = float(2.0 ** rng.integers(-7, 1)) if tie_heavy else float(rng.uniform(1e-3, 0.6))
    zo = int(rng.integers(dtype.qmin, dtype.qmax + 1))
    return a, b, so, zo


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("tie_heavy", [False, True])
def test_add_qnnpack_matches_torch(relu, tie_heavy):
    rng = np.random.default_rng(21 + relu + 2 * tie_heavy)
    op = torch.ops.quantized.add_relu if relu else torch.ops.quantized.add
    fn = F.add_relu if relu else F.add
    checked = 0
    for _ in range(N_CASES // 2):
        a, b, so, zo = _add_case(rng, qrt.quint8, tie_heavy)
        with engine("qnnpack"):
            want = torch_or_none(lambda: op(to_torch(a), to_torch(b), so, zo))
        if want is None:  # refused by QNNPACK: qrt runs fbgemm's kernel
            with engine("fbgemm"):
                want = op(to_torch(a), to_torch(b), so, zo)
        else:
            checked += 1
        np.testing.assert_array_equal(fn(a, b, so, zo).int_repr(), codes(want))
    assert checked > N_CASES // 4


@pytest.mark.parametrize("relu", [False, True])
def test_add_small_ratio_shift_quirk(relu):
    """Ratios in [2^-14, 2^-10) make QNNPACK shift by >= 32 bits; qrt reproduces x86 torch."""
    rng = np.random.default_rng(23)
    op = torch.ops.quantized.add_relu if relu else torch.ops.quantized.add
    fn = F.add_relu if relu else F.add
    for e in np.linspace(-13.9, -9.5, 40):
        sa = float(2.0 ** e)
        a = rand_q(rng, (3, 50), scale=sa)
        b = rand_q(rng, (3, 50), scale=sa * float(rng.uniform(1.0, 1.5)))
        zo = int(rng.integers(0, 255))
        with engine("qnnpack"):
            want = codes(op(to_torch(a), to_torch(b), 1.0, zo))
        np.testing.assert_array_equal(fn(a, b, 1.0, zo).int_repr(), want)


@pytest.mark.parametrize("relu", [False, True])
def test_add_refused_matches_fbgemm(relu):
    """Scale ratios outside [2^-14, 2^8) and add_relu with zero_point 255: fbgemm's kernel."""
    rng = np.random.default_rng(31 + relu)
    op = torch.ops.quantized.add_relu if relu else torch.ops.quantized.add
    fn = F.add_relu if relu else F.add
    for i in range(N_CASES // 3):
        shape = rand_shape(rng, 2, 300)
        a = rand_q(rng, shape, tie_heavy=True)
        b = rand_q(rng, shape, tie_heavy=True)
        kind = i % 3
        if kind == 0:
            so = a.q_scale() / float(2.0 ** rng.integers(8, 12))
            zo = int(rng.integers(0, 256))
        elif kind == 1:
            so = a.q_scale() * float(2.0 ** rng.integers(15, 20))
            zo = int(rng.integers(0, 256))
        else:
            so, zo = float(2.0 ** rng.integers(-6, 0)), 255
        refused = kind < 2 or relu  # plain add accepts zero_point 255
        with engine("qnnpack"):
            if refused:
                assert torch_or_none(lambda: op(to_torch(a), to_torch(b), so, zo)) is None
        with engine("fbgemm" if refused else "qnnpack"):
            want = codes(op(to_torch(a), to_torch(b), so, zo))
        np.testing.assert_array_equal(fn(a, b, so, zo).int_repr(), want)


@pytest.mark.parametrize("relu", [False, True])
def test_add_qint8_and_broadcast_match_torch(relu):
    """qint8 and broadcasting take ATen's generic kernel under qnnpack too (no XNNPACK)."""
    rng = np.random.default_rng(41 + relu)
    op = torch.ops.quantized.add_relu if relu else torch.ops.quantized.add
    fn = F.add_relu if relu else F.add
    for i in range(N_CASES // 2):
        dtype = qrt.qint8 if i % 2 else qrt.quint8
        shape = rand_shape(rng, 3, 150 if i % 10 == 0 else 40)
        if i % 4 >= 2:  # broadcast: drop leading dims and squeeze random dims of b
            bshape = tuple(1 if rng.random() < 0.4 else d for d in shape)
            bshape = bshape[int(rng.integers(0, len(bshape))):]
        else:
            bshape = shape
        if rng.random() < 0.5:
            shape, bshape = bshape, shape
        a = rand_q(rng, shape, dtype, tie_heavy=True)
        b = rand_q(rng, bshape, dtype, tie_heavy=True)
        so = float(2.0 ** rng.integers(-7, 1))
        zo = int(rng.integers(dtype.qmin, dtype.qmax + 1))
        with single_thread():
            with engine("qnnpack"):
                want = torch_or_none(lambda: op(to_torch(a), to_torch(b), so, zo))
            if want is None:  # refused by QNNPACK (same-shape quint8): fbgemm's kernel
                with engine("fbgemm"):
                    want = op(to_torch(a), to_torch(b), so, zo)
            want = codes(want)
        got = fn(a, b, so, zo)
        assert got.shape == tuple(want.shape)
        np.testing.assert_array_equal(got.int_repr(), want)


def test_add_qnnp_params_match_formula():
    # m = lrintf(f32(sa/so) * 2^shift), shift = 21 - exponent(max ratio)
    ma, mb, sh = qrt._ops.add_qnnp_params(0.5, 0, 0.25, 0, 1.0, 0, False)
    assert sh == 22 and ma == 2**21 and mb == 2**20


# ---- pooling -------------------------------------------------------------------------------------
def _pool_case(rng, dtype, dilation=True):
    shape = (int(rng.integers(1, 3)), int(rng.choice([1, 1, 2, 3, 8, 17])),
             int(rng.integers(1, 40)) if rng.random() < 0.9 else int(rng.integers(1, 3)))
    if rng.random() < 0.15:
        shape = shape[1:]
    k = int(rng.integers(1, 8))
    s = int(rng.integers(1, 4)) if rng.random() < 0.8 else None
    p = int(rng.integers(0, k // 2 + 1))
    d = int(rng.integers(1, 4)) if dilation else 1
    ceil = bool(rng.random() < 0.3)
    x = rand_q(rng, shape, dtype)
    return x, k, s, p, d, ceil


def _out_len(L, k, s, p, d, ceil):
    s = k if s is None else s
    num = L + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= L + p:
        o -= 1
    return o


def _batched(fn, x):
    """torch's QNNPACK pooling kernels want 4-d input: where they refuse an unbatched [C, L]
    tensor, run it as [1, C, L] (which is what qrt computes for [C, L])."""
    try:
        return fn(x)
    except RuntimeError:
        if x.dim() != 2:
            raise
        return fn(x.unsqueeze(0))[0]


@pytest.mark.parametrize("dtype", [qrt.quint8, qrt.qint8])
def test_max_pool1d_matches_torch(dtype):
    rng = np.random.default_rng(51)
    n_qnnp = 0
    for _ in range(N_CASES):
        x, k, s, p, d, ceil = _pool_case(rng, dtype)
        if _out_len(x.shape[-1], k, s, p, d, ceil) < 1:
            continue
        tx = to_torch(x)

        def fn(t):
            return tF.max_pool1d(t, k, s, p, d, ceil)

        refused = k == 1 or (d > 1 and p > 0)  # refused / edge-replicating in QNNPACK
        with engine("fbgemm" if refused else "qnnpack"):
            want = codes(_batched(fn, tx))
        n_qnnp += not refused
        got = F.max_pool1d(x, k, s, p, d, ceil)
        np.testing.assert_array_equal(got.int_repr(), want)
    assert n_qnnp > N_CASES // 4


def test_max_pool1d_dilation_padding_differs_from_qnnpack():
    """Documented deviation: QNNPACK replicates the edge when dilation and padding meet."""
    x = qrt.from_int_repr(np.array([[[0, 0, 0, 9, 1, 1]]], np.uint8), 0.1, 0)
    with engine("qnnpack"):
        q = codes(tF.max_pool1d(to_torch(x), 2, 1, 1, 4))
    with engine("fbgemm"):
        f = codes(tF.max_pool1d(to_torch(x), 2, 1, 1, 4))
    got = F.max_pool1d(x, 2, 1, 1, 4).int_repr()
    np.testing.assert_array_equal(got, f)
    assert not np.array_equal(q, f)



def _avx512_torch():
    import torch
    return torch.backends.cpu.get_cpu_capability() == "AVX512"


def _skip_unless_avx512_torch():
    """torch's quantized pooling rounds part of a row (the channels of an NHWC kernel, the
    codes of its vector loop) by its ATen vector width: qrt follows the AVX512 build (64 codes,
    docs/ops.md); on an AVX2 or DEFAULT torch the oracle itself differs."""
    import torch
    cap = torch.backends.cpu.get_cpu_capability()
    if not _avx512_torch():
        pytest.skip(f"torch's result depends on its ATen vector width here ({cap}); qrt follows "
                    f"the AVX512 build (docs/ops.md)")

@pytest.mark.parametrize("dtype", [qrt.quint8, qrt.qint8])
def test_avg_pool1d_matches_torch(dtype):
    if dtype is qrt.qint8:
        _skip_unless_avx512_torch()
    rng = np.random.default_rng(61)
    n_qnnp = 0
    for _ in range(N_CASES):
        x, k, s, p, _, ceil = _pool_case(rng, dtype, dilation=False)
        cip = bool(rng.random() < 0.5)
        if _out_len(x.shape[-1], k, s, p, 1, ceil) < 1:
            continue

        def fn(t):
            return tF.avg_pool1d(t, k, s, p, ceil, cip)

        qnnp = dtype is qrt.quint8 and not ceil and k > 1
        ignored_flag = qnnp and not cip and p > 0
        with engine("fbgemm" if (k == 1 or ignored_flag) else "qnnpack"):
            want = codes(_batched(fn, to_torch(x)))
        n_qnnp += qnnp and not ignored_flag
        got = F.avg_pool1d(x, k, s, p, ceil, cip)
        np.testing.assert_array_equal(got.int_repr(), want)
    if dtype is qrt.quint8:
        assert n_qnnp > N_CASES // 5


def test_avg_pool1d_ties_and_single_channel():
    """Even kernels on odd sums (exact .5 ties), C == 1 (torch's NHWC kernel) and C > 1."""
    rng = np.random.default_rng(62)
    for i in range(N_CASES // 2):
        c = 1 if i % 2 else int(rng.integers(2, 9))
        k = int(rng.choice([2, 4, 6]))
        x = rand_q(rng, (int(rng.integers(1, 3)), c, int(rng.integers(k, 30))),
                   scale=float(rng.choice([0.5, 1.0, 0.1, 0.037])))
        p = int(rng.integers(0, k // 2 + 1))
        ceil = bool(i % 3 == 0)
        with engine("qnnpack"):
            want = codes(tF.avg_pool1d(to_torch(x), k, None, p, ceil, True))
        np.testing.assert_array_equal(F.avg_pool1d(x, k, None, p, ceil).int_repr(), want)


@pytest.mark.parametrize("dtype", [qrt.quint8, qrt.qint8])
def test_adaptive_avg_pool1d_matches_torch(dtype):
    rng = np.random.default_rng(71)
    for i in range(N_CASES):
        c = int(rng.choice([1, 2, 3, 8, 17]))
        L = int(rng.integers(1, 50))
        if i % 2:
            o = int(rng.choice([v for v in range(1, L + 1) if L % v == 0]))
        else:
            o = int(rng.integers(1, L + 8))
        shape = (int(rng.integers(1, 3)), c, L) if i % 5 else (c, L)
        x = rand_q(rng, shape, dtype, scale=float(rng.choice([0.5, 0.1, 0.013])))
        with engine("qnnpack"):
            want = codes(_batched(lambda t: tF.adaptive_avg_pool1d(t, o), to_torch(x)))
        np.testing.assert_array_equal(F.adaptive_avg_pool1d(x, o).int_repr(), want)


def test_pool1d_large_kernels_match_torch():
    """Kernels above 9 taps take QNNPACK's multipass average-pooling kernels."""
    rng = np.random.default_rng(73)
    with engine("qnnpack"):
        for _ in range(N_CASES // 4):
            k = int(rng.integers(8, 40))
            c = int(rng.choice([1, 3, 7, 8, 9, 16, 24, 33]))
            x = rand_q(rng, (int(rng.integers(1, 3)), c, int(rng.integers(k, 120))),
                       scale=float(rng.choice([0.5, 0.1, 0.0371])))
            p, s = int(rng.integers(0, k // 2 + 1)), int(rng.integers(1, k + 1))
            want = codes(tF.avg_pool1d(to_torch(x), k, s, p))
            np.testing.assert_array_equal(F.avg_pool1d(x, k, s, p).int_repr(), want)
            want = codes(tF.max_pool1d(to_torch(x), k, s, p))
            np.testing.assert_array_equal(F.max_pool1d(x, k, s, p).int_repr(), want)
            o = int(rng.integers(1, 6))
            x2 = rand_q(rng, (1, c, o * int(rng.integers(9, 30))))
            want = codes(tF.adaptive_avg_pool1d(to_torch(x2), o))
            np.testing.assert_array_equal(F.adaptive_avg_pool1d(x2, o).int_repr(), want)


@pytest.mark.parametrize("dtype", [qrt.quint8, qrt.qint8])
def test_pool1d_length_one_layout_quirk(dtype):
    """[N, C>1, 1] inputs: ATen's generic pooling writes its NHWC result in NCHW order.  The
    avg_pool cases run on an AVX512 torch only (its NHWC channel split rounds by the ATen
    vector width, _skip_unless_avx512_torch); adaptive and max pooling everywhere."""
    avg = _avx512_torch()
    rng = np.random.default_rng(72)
    for shape in [(1, 3, 1), (2, 2, 1), (2, 5, 1), (1, 1, 1), (3, 4, 1), (1, 16, 1), (2, 17, 1),
                  (1, 40, 1), (1, 130, 1), (2, 200, 1), (17, 1), (40, 1)]:
        # Channels beyond 16 exercise the NHWC kernel's vector/scalar channel split (ties
        # come often: odd sums over even divisors); [C, 1] is the unbatched form.
        x = rand_q(rng, shape, dtype)
        t = to_torch(x)
        for o in (1, 2, 3):
            with engine("qnnpack"):
                want = codes(_batched(lambda u: tF.adaptive_avg_pool1d(u, o), t))
            np.testing.assert_array_equal(F.adaptive_avg_pool1d(x, o).int_repr(), want)
        for k, s, p, ceil, cip in [(2, 1, 1, False, True), (2, 1, 1, True, True),
                                   (2, 1, 1, False, False), (3, 1, 1, True, True),
                                   (2, 2, 1, True, False)] if avg else []:
            with engine("fbgemm" if (not cip and not ceil) else "qnnpack"):
                want = codes(_batched(lambda u: tF.avg_pool1d(u, k, s, p, ceil, cip), t))
            np.testing.assert_array_equal(F.avg_pool1d(x, k, s, p, ceil, cip).int_repr(), want)
        for k, s, p, d, ceil in [(2, 1, 1, 1, False), (2, 1, 1, 1, True), (4, 2, 2, 1, True)]:
            with engine("qnnpack"):
                want = codes(_batched(lambda u: tF.max_pool1d(u, k, s, p, d, ceil), t))
            np.testing.assert_array_equal(F.max_pool1d(x, k, s, p, d, ceil).int_repr(), want)


# ---- hardswish / sigmoid (exhaustive over the 256 codes) --------------------------------------
def _scale(rng):
    return float(2.0 ** rng.integers(-8, 0)) if rng.random() < 0.4 else float(
        rng.uniform(1e-3, 0.3))


def test_hardswish_matches_torch():
    rng = np.random.default_rng(81)
    allq = np.arange(256, dtype=np.uint8).reshape(4, 64)
    with engine("qnnpack"):
        for _ in range(N_CASES):
            x = qrt.from_int_repr(allq, _scale(rng), int(rng.integers(0, 256)))
            so, zo = _scale(rng), int(rng.integers(0, 256))
            want = codes(torch.ops.quantized.hardswish(to_torch(x), so, zo))
            np.testing.assert_array_equal(F.hardswish(x, so, zo).int_repr(), want)


def test_sigmoid_matches_torch():
    rng = np.random.default_rng(82)
    allq = np.arange(256, dtype=np.uint8)
    with engine("qnnpack"):
        for _ in range(N_CASES):
            x = qrt.from_int_repr(allq, _scale(rng) * 8, int(rng.integers(0, 256)))
            t = torch.sigmoid(to_torch(x))
            got = F.sigmoid(x)
            assert (got.q_scale(), got.q_zero_point()) == (t.q_scale(), t.q_zero_point())
            np.testing.assert_array_equal(got.int_repr(), codes(t))


def test_hardswish_sigmoid_qint8_match_torch():
    """qint8 runs ATen's generic kernel: 64-code chunks and the tail use different tables."""
    rng = np.random.default_rng(83)
    with engine("qnnpack"), single_thread():
        for i in range(N_CASES // 2):
            n = int(rng.integers(1, 700))
            ints = rng.integers(-128, 128, n).astype(np.int8)
            ints[: min(n, 256)] = np.arange(-128, 128)[: min(n, 256)]
            x = qrt.from_int_repr(ints.reshape(1, -1) if i % 2 else ints, _scale(rng) * 4,
                                  int(rng.integers(-128, 128)), qrt.qint8)
            so, zo = _scale(rng), int(rng.integers(-128, 128))
            want = codes(torch.ops.quantized.hardswish(to_torch(x), so, zo))
            np.testing.assert_array_equal(F.hardswish(x, so, zo).int_repr(), want)
            t = torch.sigmoid(to_torch(x))
            got = F.sigmoid(x)
            assert (got.q_scale(), got.q_zero_point()) == (t.q_scale(), t.q_zero_point())
            np.testing.assert_array_equal(got.int_repr(), codes(t))


# ---- cat ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [qrt.quint8, qrt.qint8])
def test_cat_matches_torch(dtype):
    rng = np.random.default_rng(91)
    with engine("qnnpack"):
        for i in range(N_CASES // 2):
            base = rand_shape(rng, 3, 12)
            dim = int(rng.integers(-len(base), len(base)))
            xs = []
            for _ in range(int(rng.integers(1, 4))):
                shp = list(base)
                shp[dim] = int(rng.integers(0 if len(xs) else 1, 6))
                same = rng.random() < 0.3 and xs
                xs.append(rand_q(rng, tuple(shp), dtype, tie_heavy=True,
                                 scale=xs[0].q_scale() if same else None,
                                 zp=xs[0].q_zero_point() if same else None))
            if i % 2:
                so = float(2.0 ** rng.integers(-8, 0))
                zo = int(rng.integers(dtype.qmin, dtype.qmax + 1))
                want = codes(torch.ops.quantized.cat([to_torch(t) for t in xs], dim, so, zo))
                got = F.cat(xs, dim, so, zo)
            else:
                want = codes(torch.cat([to_torch(t) for t in xs], dim))
                got = F.cat(xs, dim)
            np.testing.assert_array_equal(got.int_repr(), want)


# ---- flatten / reshape ------------------------------------------------------------------------
def test_flatten_reshape_are_views():
    rng = np.random.default_rng(95)
    x = rand_q(rng, (2, 3, 4))
    y = F.flatten(x, 1)
    assert y.shape == (2, 12) and y.storage() is x.storage()
    np.testing.assert_array_equal(y.int_repr(), codes(torch.flatten(to_torch(x), 1)))
    z = F.reshape(x, (4, -1))
    assert z.shape == (4, 6) and z.storage() is x.storage()
    assert F.flatten(x).shape == (24,)


# ---- out= ----------------------------------------------------------------------------------------
def test_out_is_written_and_returned():
    rng = np.random.default_rng(100)
    x = rand_q(rng, (2, 3, 16))
    out = qrt.from_int_repr(np.zeros((2, 3, 16), np.uint8), x.q_scale(), x.q_zero_point())
    assert F.relu(x, out=out) is out
    np.testing.assert_array_equal(out.int_repr(), F.relu(x).int_repr())
    o2 = qrt.from_int_repr(np.zeros((2, 3, 16), np.uint8), 0.3, 4)
    assert F.add(x, x, 0.3, 4, out=o2) is o2
    np.testing.assert_array_equal(o2.int_repr(), F.add(x, x, 0.3, 4).int_repr())
    o3 = qrt.from_int_repr(np.zeros((2, 3, 8), np.uint8), x.q_scale(), x.q_zero_point())
    assert F.max_pool1d(x, 2, out=o3) is o3
    np.testing.assert_array_equal(o3.int_repr(), F.max_pool1d(x, 2).int_repr())
    with pytest.raises(ValueError, match="out"):
        F.max_pool1d(x, 3, out=o3)  # wrong length
    with pytest.raises(ValueError, match="out"):
        F.add(x, x, 0.5, 4, out=o2)  # wrong qparams
    with pytest.raises(TypeError, match="out"):
        F.relu(x, out=np.zeros((2, 3, 16), np.uint8))


# ---- slow: the same conformance loops with 10x the cases --------------------------------------
SLOW = [
    (test_relu_matches_torch, dict(dtype=qrt.quint8)),
    (test_relu_matches_torch, dict(dtype=qrt.qint8)),
    (test_add_qnnpack_matches_torch, dict(relu=False, tie_heavy=False)),
    (test_add_qnnpack_matches_torch, dict(relu=True, tie_heavy=True)),
    (test_add_refused_matches_fbgemm, dict(relu=False)),
    (test_add_refused_matches_fbgemm, dict(relu=True)),
    (test_add_qint8_and_broadcast_match_torch, dict(relu=False)),
    (test_add_qint8_and_broadcast_match_torch, dict(relu=True)),
    (test_max_pool1d_matches_torch, dict(dtype=qrt.quint8)),
    (test_max_pool1d_matches_torch, dict(dtype=qrt.qint8)),
    (test_avg_pool1d_matches_torch, dict(dtype=qrt.quint8)),
    (test_avg_pool1d_matches_torch, dict(dtype=qrt.qint8)),
    (test_avg_pool1d_ties_and_single_channel, {}),
    (test_adaptive_avg_pool1d_matches_torch, dict(dtype=qrt.quint8)),
    (test_adaptive_avg_pool1d_matches_torch, dict(dtype=qrt.qint8)),
    (test_hardswish_matches_torch, {}),
    (test_sigmoid_matches_torch, {}),
    (test_hardswish_sigmoid_qint8_match_torch, {}),
    (test_cat_matches_torch, dict(dtype=qrt.quint8)),
    (test_cat_matches_torch, dict(dtype=qrt.qint8)),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", range(len(SLOW)), ids=[f"{f.__name__}-{k}" for f, k in SLOW])
def test_ops_slow_conformance(case, monkeypatch):
    import sys

    monkeypatch.setattr(sys.modules[__name__], "N_CASES", N_CASES * 10)
    fn, kwargs = SLOW[case]
    fn(**kwargs)

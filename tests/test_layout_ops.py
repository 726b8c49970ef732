# SPDX-License-Identifier: Apache-2.0
"""Layout ops (qrt/ops/layout.py: pad, permute, slice, split, unsqueeze, squeeze, view) and the
quantized mul (qrt/ops/qarith.py), each as a one-op blob against torch 2.13 (qnnpack engine):
exact codes (and exact float32 values), random shapes and edge configurations, and shape
inference at other input shapes than the exported ones."""

import warnings
import zlib

import numpy as np
import pytest

import qrt
from qrt_export import BlobBuilder

torch = pytest.importorskip("torch")
tF = torch.nn.functional
warnings.filterwarnings("ignore", message=".*quantiz.*")
pytestmark = [pytest.mark.filterwarnings("ignore:.*quantiz"),
              pytest.mark.usefixtures("qnnpack_engine")]

_TORCH_Q = {"quint8": torch.quint8, "qint8": torch.qint8, "qint32": torch.qint32}
_NP = {"quint8": np.uint8, "qint8": np.int8, "qint32": np.int32}
_RANGE = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-(2**31), 2**31 - 1)}


def rand_input(rng, shape, dtype):
    """(qrt input, torch tensor) with random codes (or float32 values) and qparams."""
    if dtype == "float32":
        x = rng.standard_normal(shape).astype(np.float32)
        return x, torch.from_numpy(x.copy())
    lo, hi = _RANGE[dtype]
    if dtype == "qint32":
        lo, hi = -(1 << 20), 1 << 20
    codes = rng.integers(lo, hi + 1, shape).astype(_NP[dtype])
    scale, zp = float(rng.uniform(1e-3, 0.5)), int(rng.integers(max(lo, -200), min(hi, 255) + 1))
    t = torch._make_per_tensor_quantized_tensor(torch.from_numpy(codes.copy()), scale, zp)
    return qrt.from_int_repr(codes, scale, zp, getattr(qrt, dtype)), t


def one_op(path, kind, x, outs, attrs=None, extra_inputs=(), out_qparams=None):
    """Write a blob with op ``kind`` from input(s) like ``x`` to outputs of shapes ``outs``."""
    b = BlobBuilder()

    def act(name, v, shape, qp=None):
        if isinstance(v, np.ndarray):
            return b.activation(name, "float32", shape)
        s, z = qp if qp is not None else (v.q_scale(), v.q_zero_point())
        return b.activation(name, v.dtype.name if hasattr(v.dtype, "name") else str(v.dtype),
                            shape, scale=s, zero_point=z)
    ins = [act("x", x, x.shape)] + [act(f"x{i}", v, v.shape) for i, v in
                                    enumerate(extra_inputs)]
    ys = [act(f"y{i}", x, s, out_qparams) for i, s in enumerate(outs)]
    b.op(kind, "op", ins, ys, (), attrs or {})
    b.inputs, b.outputs = ins, ys
    b.write(path)
    return qrt.load(path)


def as_np(y):
    return y if isinstance(y, np.ndarray) else y.int_repr()


def want_np(t):
    return t.int_repr().numpy() if t.is_quantized else t.numpy()


def check(y, t):
    got, want = as_np(y), want_np(t)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def qdtypes():
    return ["quint8", "qint8", "float32"]


# ---- pad -------------------------------------------------------------------------------------
PADS = [(0, 0), (1, 1), (2, 3), (3, 0), (0, 4), (-1, 2), (2, -2), (-2, -1), (5, 5)]


@pytest.mark.parametrize("dtype", ["quint8", "qint8", "qint32", "float32"])
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_matches_torch(tmp_path, dtype, mode):
    rng = np.random.default_rng(zlib.crc32(repr((dtype, mode)).encode()))
    tested = 0
    for k, pads in enumerate(PADS):
        for value in ([0.0, 0.7, -3.0] if mode == "constant" else [None]):
            L = int(rng.integers(6, 14))
            x, tx = rand_input(rng, (2, 3, L), dtype)
            kw = {} if value is None else {"value": value}
            ref = tx if dtype == "float32" else tx.dequantize()
            try:   # torch's quantized pad runs constant and reflect only
                want = tF.pad(tx if dtype != "qint32" or mode == "constant" else tx,
                              pads, mode=mode, **kw)
            except (RuntimeError, NotImplementedError):
                if dtype == "float32":
                    continue  # a pad torch refuses (e.g. reflect wider than the input)
                # quantized replicate/circular: torch has no kernel; qrt copies codes exactly
                # as torch's float pad moves values
                wf = tF.pad(ref, pads, mode=mode)
                want = torch.quantize_per_tensor(wf, tx.q_scale(), tx.q_zero_point(), tx.dtype)
            attrs = {"pads": list(pads), "mode": mode}
            if value is not None:
                attrs["value"] = value
                if dtype != "float32":
                    attrs["code"] = int(tF.pad(tx[..., :1], (1, 0), value=value)
                                        .int_repr()[0, 0, 0])
            m = one_op(tmp_path / f"p{k}.bin", "pad", x, [tuple(want.shape)], attrs)
            check(m(x), want)
            # another length: the pad follows it
            x2, tx2 = rand_input(rng, (1, 3, L + 5), dtype)
            x2 = x2 if dtype == "float32" else qrt.from_int_repr(
                x2.int_repr(), x.q_scale(), x.q_zero_point(), x.dtype)
            tx2 = tx2 if dtype == "float32" else torch._make_per_tensor_quantized_tensor(
                torch.from_numpy(x2.int_repr().copy()), x.q_scale(), x.q_zero_point())
            ref2 = tx2 if dtype == "float32" else tx2.dequantize()
            w2 = tF.pad(ref2, pads, mode=mode, **kw)
            got2 = as_np(m(x2))
            if dtype == "float32":
                np.testing.assert_array_equal(got2, w2.numpy())
            else:
                np.testing.assert_array_equal(got2, torch.quantize_per_tensor(
                    w2, x.q_scale(), x.q_zero_point(), tx.dtype).int_repr().numpy())
            tested += 1
    assert tested >= 6


def test_pad_refuses_too_wide_reflect(tmp_path):
    rng = np.random.default_rng(1)
    x, _ = rand_input(rng, (1, 2, 8), "quint8")
    m = one_op(tmp_path / "p.bin", "pad", x, [(1, 2, 14)], {"pads": [3, 3], "mode": "reflect"})
    small, _ = rand_input(rng, (1, 2, 3), "quint8")
    with pytest.raises(ValueError, match="reflect padding"):
        m(qrt.from_int_repr(small.int_repr(), x.q_scale(), x.q_zero_point(), qrt.quint8))


# ---- permute ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["quint8", "qint8", "qint32", "float32"])
def test_permute_matches_torch(tmp_path, dtype):
    rng = np.random.default_rng(2)
    for k, dims in enumerate([(0, 2, 1), (2, 0, 1), (1, 0), (0, 1, 2), (3, 1, 0, 2)]):
        shape = tuple(int(rng.integers(1, 7)) for _ in dims)
        x, tx = rand_input(rng, shape, dtype)
        want = tx.permute(dims)
        m = one_op(tmp_path / f"p{k}.bin", "permute", x, [tuple(want.shape)],
                   {"dims": list(dims)})
        check(m(x), want)
        shape2 = tuple(s + 2 for s in shape)   # another shape: permuted as it comes
        x2, tx2 = rand_input(rng, shape2, dtype)
        if dtype != "float32":
            x2 = qrt.from_int_repr(x2.int_repr(), x.q_scale(), x.q_zero_point(), x.dtype)
            tx2 = torch._make_per_tensor_quantized_tensor(
                torch.from_numpy(x2.int_repr().copy()), x.q_scale(), x.q_zero_point())
        check(m(x2), tx2.permute(dims))


# ---- slice -----------------------------------------------------------------------------------
def _slice_attrs(index, nd):
    from qrt.ops.layout import SLICE_END
    a = {"dims": [], "starts": [], "stops": [], "steps": [], "index_dims": [], "indices": []}
    for d, i in enumerate(index):
        if isinstance(i, slice):
            a["dims"].append(d)
            a["starts"].append(0 if i.start is None else i.start)
            a["stops"].append(SLICE_END if i.stop is None else i.stop)
            a["steps"].append(1 if i.step is None else i.step)
        else:
            a["index_dims"].append(d)
            a["indices"].append(i)
    return a


@pytest.mark.parametrize("dtype", qdtypes())
def test_slice_matches_torch_and_follows_length(tmp_path, dtype):
    rng = np.random.default_rng(3)
    cases = [(slice(None), slice(None), slice(None, -2)),          # Chomp1d
             (slice(None), slice(None), slice(3, 9)),
             (slice(None), slice(1, None, 2), slice(-7, -1, 3)),
             (slice(None), 1),                                      # x[:, i]
             (slice(None), -1, slice(2, None)),
             (0, slice(None), slice(None, None, 4)),
             (slice(None), slice(None), slice(100, 200))]           # empty: length 0 kept
    for k, index in enumerate(cases):
        x, tx = rand_input(rng, (2, 4, 16), dtype)
        want = tx[index]
        if 0 in want.shape:
            continue
        m = one_op(tmp_path / f"s{k}.bin", "slice", x, [tuple(want.shape)],
                   _slice_attrs(index, 3))
        check(m(x), want)
        for L in (11, 29):   # x[..., :-k] stays relative to the end
            x2, _ = rand_input(rng, (3, 4, L), dtype)
            if dtype != "float32":
                x2 = qrt.from_int_repr(x2.int_repr(), x.q_scale(), x.q_zero_point(), x.dtype)
                t2 = torch._make_per_tensor_quantized_tensor(
                    torch.from_numpy(x2.int_repr().copy()), x.q_scale(), x.q_zero_point())
            else:
                t2 = torch.from_numpy(x2.copy())
            if 0 in t2[index].shape:
                with pytest.raises(ValueError):
                    m(x2)
                continue
            check(m(x2), t2[index])


# ---- split -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", qdtypes())
def test_split_chunk_match_torch(tmp_path, dtype):
    rng = np.random.default_rng(4)
    cases = [({"chunks": 2}, 1, lambda t: t.chunk(2, 1)),
             ({"chunks": 3}, 2, lambda t: t.chunk(3, 2)),
             ({"split_size": 4}, 2, lambda t: t.split(4, 2)),
             ({"sizes": [1, 5, 4]}, 2, lambda t: t.split([1, 5, 4], 2)),
             ({"chunks": 4}, -1, lambda t: t.chunk(4, -1))]
    for k, (attrs, dim, fn) in enumerate(cases):
        x, tx = rand_input(rng, (2, 6, 10), dtype)
        want = fn(tx)
        m = one_op(tmp_path / f"c{k}.bin", "split", x, [tuple(w.shape) for w in want],
                   dict(attrs, dim=dim))
        got = m(x)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w)


# ---- unsqueeze / squeeze / view -------------------------------------------------------------
@pytest.mark.parametrize("dtype", qdtypes())
def test_unsqueeze_squeeze_view(tmp_path, dtype):
    rng = np.random.default_rng(5)
    x, tx = rand_input(rng, (2, 1, 12), dtype)
    for k, (kind, attrs, fn) in enumerate([
            ("unsqueeze", {"dim": 1}, lambda t: t.unsqueeze(1)),
            ("unsqueeze", {"dim": 3}, lambda t: t.unsqueeze(-1)),
            ("squeeze", {}, lambda t: t.squeeze()),
            ("squeeze", {"dims": [1]}, lambda t: t.squeeze(1)),
            ("squeeze", {"dims": [2]}, lambda t: t.squeeze(2)),     # size 12: unchanged
            ("view", {"shape": [-1, 3]}, lambda t: t.reshape(-1, 3)),
            ("view", {"shape": [-1, 4, 3], "copy_dims": [0, -1, -1]},
             lambda t: t.reshape(t.shape[0], 4, -1))]):
        want = fn(tx)
        m = one_op(tmp_path / f"v{k}.bin", kind, x, [tuple(want.shape)], attrs)
        check(m(x), want)
    # view(x.size(0), -1) follows batch and length
    m = one_op(tmp_path / "vv.bin", "view", x, [(2, 12)],
               {"shape": [-1, -1], "copy_dims": [0, -1]})
    x2, t2 = rand_input(rng, (5, 1, 20), dtype)
    if dtype != "float32":
        x2 = qrt.from_int_repr(x2.int_repr(), x.q_scale(), x.q_zero_point(), x.dtype)
        t2 = torch._make_per_tensor_quantized_tensor(torch.from_numpy(x2.int_repr().copy()),
                                                     x.q_scale(), x.q_zero_point())
    check(m(x2), t2.reshape(5, -1))


# ---- quantized mul ---------------------------------------------------------------------------
@pytest.mark.parametrize("relu", [False, True])
def test_mul_matches_torch(tmp_path, relu):
    rng = np.random.default_rng(6 + relu)
    op = torch.ops.quantized.mul_relu if relu else torch.ops.quantized.mul
    shapes = [((2, 3, 17), (2, 3, 17)), ((2, 3, 130), (2, 3, 130)), ((2, 3, 9), (1, 3, 1)),
              ((4, 1, 7), (1, 5, 7)), ((3, 200), (200,)), ((1, 1, 1), (2, 4, 3))]
    for k in range(40):
        sa, sb = shapes[k % len(shapes)]
        a, ta = rand_input(rng, sa, "quint8")
        b, tb = rand_input(rng, sb, "quint8")
        so = float(rng.uniform(1e-3, 2.0)) if k % 3 else float(2.0 ** -rng.integers(0, 9))
        zo = int(rng.integers(0, 256))
        want = op(ta, tb, so, zo)
        m = one_op(tmp_path / f"m{k}.bin", "mul", a, [tuple(want.shape)],
                   {"activation": "relu" if relu else "none"}, extra_inputs=[b],
                   out_qparams=(so, zo))
        check(m(a, b), want)


def test_op_codes_pinned():
    import qrt.ops as ops
    want = {"pad": 21, "permute": 22, "slice": 23, "split": 24, "unsqueeze": 25, "squeeze": 26,
            "view": 27, "mul": 28, "mean": 31, "lut": 33}
    assert {k: ops.CODE_OF[k] for k in want} == want


# ---- quantized mean over the last dim -------------------------------------------------------
@pytest.mark.parametrize("dtype", ["quint8", "qint8", "qint32"])
def test_mean_last_dim_matches_torch(tmp_path, dtype):
    rng = np.random.default_rng(8)
    lengths = [1, 2, 3, 7, 8, 9, 15, 16, 31, 32, 33, 63, 64, 65, 100, 255, 257, 513, 1000,
               1031, 4100, 16000, 140007]   # 140007: a 4-level cascade
    for k, L in enumerate(lengths):
        n, c = int(rng.integers(1, 3)), int(rng.integers(1, 6))
        x, tx = rand_input(rng, (n, c, L), dtype)
        for keep in (False, True):
            want = torch.mean(tx, -1, keepdim=keep)
            m = one_op(tmp_path / f"m{k}{keep}.bin", "mean", x, [tuple(want.shape)],
                       {"keepdim": "true" if keep else "false"})
            check(m(x), want)
    # the exported model follows another length
    x2, tx2 = rand_input(rng, (2, 3, 77), dtype)
    x2 = qrt.from_int_repr(x2.int_repr(), x.q_scale(), x.q_zero_point(), x.dtype)
    tx2 = torch._make_per_tensor_quantized_tensor(torch.from_numpy(x2.int_repr().copy()),
                                                  x.q_scale(), x.q_zero_point())
    check(m(x2), torch.mean(tx2, -1, keepdim=True))


@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
def test_mean_ties_match_torch(tmp_path, dtype):
    """Rows whose code sum is an odd multiple of L/2: torch's integer-sum kernel rounds them
    half to even (a dequantize -> float mean -> quantize reading of it misses ~10 % of these)."""
    rng = np.random.default_rng(9)
    lo, hi = _RANGE[dtype]
    for k, L in enumerate([2, 4, 6, 10, 18, 34, 66, 130, 1000]):
        x, tx = rand_input(rng, (2, 16, L), dtype)
        codes = x.int_repr().astype(np.int64)
        sm = codes[..., :-1].sum(-1)
        last = (((sm - lo * (L - 1)) // L + lo) * L + L // 2) - sm
        last = np.where((last >= lo) & (last <= hi), last, codes[..., -1])
        codes[..., -1] = last
        c = codes.astype(_NP[dtype])
        x = qrt.from_int_repr(c, tx.q_scale(), tx.q_zero_point(), getattr(qrt, dtype))
        tx = torch._make_per_tensor_quantized_tensor(torch.from_numpy(c.copy()), tx.q_scale(),
                                                     tx.q_zero_point())
        want = torch.mean(tx, -1)
        m = one_op(tmp_path / f"t{k}.bin", "mean", x, [tuple(want.shape)])
        check(m(x), want)


def test_mean_of_a_non_contiguous_tensor_is_refused(tmp_path):
    """torch's mean of a permuted quantized tensor rounds through a float mean, not its
    integer kernel: the exporter refuses it, naming the fix."""
    import qrt_export

    class Net(torch.nn.Module):
        def __init__(self, contiguous):
            super().__init__()
            self.q = torch.ao.nn.quantized.Quantize(0.05, 120, torch.quint8)
            self.contiguous = contiguous

        def forward(self, x):
            y = self.q(x).permute(0, 2, 1)
            if self.contiguous:
                y = y.contiguous()
            return y.mean(-1).dequantize()

    x = torch.randn(2, 6, 8)
    with pytest.raises(qrt_export.UnsupportedError, match="non-contiguous"):
        qrt_export.export(Net(False), x, tmp_path / "nc.bin")
    qrt_export.export(Net(True), x, tmp_path / "c.bin")
    m = qrt.load(tmp_path / "c.bin")
    np.testing.assert_array_equal(m(x.numpy()), Net(True)(x).numpy())

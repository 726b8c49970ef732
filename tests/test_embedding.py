# SPDX-License-Identifier: Apache-2.0
"""Embedding / EmbeddingBag on int64/int32 index inputs (qrt/ops/embedding.py, issue #14/#16).

Every result is compared with torch 2.13 with ``==``: the float tables' bags (sum, mean, max,
per-sample weights, padding_idx) and torch's weight-only quantized row-wise tables (quint8,
quint4x2) are bit-identical (docs/float-ops.md "Embedding"). The models go through the
exporter (eager and FX), are loaded with qrt.load and run on fresh inputs of other lengths.
Hostile inputs (wrong dtype, rank, out-of-range indices, bad offsets) are a ValueError naming
the input, through qrt.Model and `qrt run`; hostile blobs a FormatError (R28).
"""

import os
import subprocess
import sys
import warnings
import zlib

import numpy as np
import pytest

import qrt
from qrt_export._writer import BlobBuilder

from _qemu import skip_under_qemu

F32 = np.float32


# ---- blobs without torch (hostile inputs, R28) -------------------------------------------------
def _bag_blob(path, n_rows=20, dim=5, mode="sum", idx_dtype="int64", include_last=False):
    W = np.random.default_rng(0).standard_normal((n_rows, dim)).astype(F32)
    b = BlobBuilder()
    x = b.activation("text", idx_dtype, (7,))
    o = b.activation("offsets", idx_dtype, (3,))
    y = b.activation("y", "float32", (3 - include_last, dim))
    b.op("embedding_bag", "eb", [x, o], [y], [b.constant("w", W)],
         attrs={"mode": mode, "include_last_offset": include_last})
    b.inputs, b.outputs = [x, o], [y]
    b.write(path)
    return W


def _ref_bags(W, idx, off, mode="sum", last=False):
    """numpy float64-free reference for the small hostile-input blob (sequential sums)."""
    starts = list(off) + ([] if last else [len(idx)])
    out = np.zeros((len(starts) - 1, W.shape[1]), F32)
    for b in range(len(starts) - 1):
        rows = [W[i] for i in idx[starts[b]:starts[b + 1]]]
        acc = np.zeros(W.shape[1], F32)
        for r in rows:
            acc = (acc + r).astype(F32)
        if mode == "mean":
            acc = (acc / F32(max(len(rows), 1))).astype(F32)
        out[b] = acc
    return out


def test_embedding_bag_blob_runs_and_refuses_bad_indices(tmp_path):
    W = _bag_blob(tmp_path / "eb.bin", mode="mean")
    m = qrt.load(tmp_path / "eb.bin")
    idx, off = np.array([1, 2, 3, 4, 5, 6, 7], np.int64), np.array([0, 2, 2], np.int64)
    assert np.array_equal(m(idx, off), _ref_bags(W, idx, off, "mean"))
    # int32 arrays (numpy's default integer on 32-bit hosts) are widened, losslessly
    assert np.array_equal(m(idx.astype(np.int32), off.astype(np.int32)),
                          _ref_bags(W, idx, off, "mean"))
    # other lengths and bag counts than exported (shapes inferred op by op)
    idx2, off2 = np.array([19, 0, 3]), np.array([0, 1, 1, 3])
    assert np.array_equal(m(idx2, off2), _ref_bags(W, idx2, off2, "mean"))
    assert m(np.zeros(0, np.int64), np.array([0, 0])).shape == (2, 5)   # empty bags: zeros
    assert m(idx, np.zeros(0, np.int64)).shape == (0, 5)                # no bag (torch too)
    bad = [
        ((np.array([1, 2, 20, 4]), off), r"input 'text': index 20 \(at flat position 2\)"),
        ((np.array([1, -1, 2]), off), r"input 'text': index -1 .*\[0, 20\)"),
        ((idx, np.array([0, 3, 2])), r"input 'offsets': offsets must be non-decreasing"),
        ((idx, np.array([1, 3])), r"input 'offsets': offsets\[0\] must be 0"),
        ((idx, np.array([0, 9])), r"input 'offsets': offsets\[-1\] = 9 is beyond the 7"),
        ((idx.astype(np.int16), off), r"input 'text': expected an int64 \(or int32\) index"),
        ((idx.astype(F32), off), r"input 'text': expected an int64 \(or int32\) index"),
        ((idx.reshape(7, 1), off), r"input 'text': expected 1-d indices \(any length\)"),
        ((idx, off.reshape(3, 1)), r"input 'offsets': expected 1-d indices"),
    ]
    for args, msg in bad:
        with pytest.raises(ValueError, match=msg):
            m(*args)
    # the model still runs after refusing
    assert np.array_equal(m(idx, off), _ref_bags(W, idx, off, "mean"))


def test_embedding_bag_include_last_offset_blob(tmp_path):
    W = _bag_blob(tmp_path / "l.bin", include_last=True, idx_dtype="int32")
    m = qrt.load(tmp_path / "l.bin")   # the dry run's neutral offsets end at len(indices)
    idx, off = np.array([3, 1, 4, 1, 5], np.int32), np.array([0, 2, 5], np.int32)
    assert np.array_equal(m(idx, off), _ref_bags(W, idx, off, last=True))
    with pytest.raises(ValueError, match="the last offset must equal the number of indices"):
        m(idx, np.array([0, 2, 4], np.int32))
    with pytest.raises(ValueError, match="include_last_offset needs at least one offset"):
        m(idx, np.zeros(0, np.int32))


def _read(path):
    from qrt._format.reader import read_blob
    return qrt.Model(read_blob(path))


def test_embedding_index_tensors_r28(tmp_path):
    """R28: int activations are model inputs read by index operands only."""
    W = np.ones((4, 2), F32)

    def blob(idx_dtype="int64", out_int=False, read_by="embedding"):
        b = BlobBuilder()
        x = b.activation("x", idx_dtype, (3,))
        if read_by == "float_exp":
            y = b.activation("y", "float32", (3,))
            b.op("float_exp", "e", [x], [y])
        else:
            y = b.activation("y", "int64" if out_int else "float32", (3, 2))
            b.op("embedding", "e", [x], [y], [b.constant("w", W)])
        b.inputs, b.outputs = [x], [y]
        b.write(tmp_path / "r.bin")
        return tmp_path / "r.bin"
    assert _read(blob("int32"))(np.array([0, 3, 1], np.int32)).shape == (3, 2)
    for kw, msg in [({"idx_dtype": "uint8"}, "R28"), ({"idx_dtype": "float64"}, "R28"),
                    ({"out_int": True}, "R28"), ({"read_by": "float_exp"}, "R28")]:
        with pytest.raises(qrt.FormatError, match=msg):
            _read(blob(**kw))


def test_embedding_attribute_and_table_checks(tmp_path):
    def blob(kind="embedding_bag", attrs=None, w=np.ones((4, 2), F32), n_in=2, extra=()):
        b = BlobBuilder()
        ins = [b.activation("x", "int64", (3,))]
        if n_in > 1:
            ins.append(b.activation("o", "int64", (1,)))
        y = b.activation("y", "float32", (1, 2))
        ps = [b.constant("w", w)] + [b.constant(f"p{k}", a) for k, a in enumerate(extra)]
        b.op(kind, "e", ins, [y], ps, attrs=attrs or {})
        b.inputs, b.outputs = ins, [y]
        b.write(tmp_path / "a.bin")
        return tmp_path / "a.bin"
    cases = [({"attrs": {"padding_idx": 4}}, "padding_idx 4"),
             ({"attrs": {"mode": "max", "per_sample_weights": True}}, "takes 3 input"),
             ({"w": np.ones((0, 2), F32)}, "no rows"),
             ({"w": np.ones((4,), F32)}, "2-d"),
             ({"n_in": 1}, "takes 2 input"),
             ({"attrs": {"offsets": False, "include_last_offset": True}, "n_in": 1},
              "include_last_offset needs an offsets input"),
             ({"kind": "qembedding_bag", "w": np.ones((4, 3), np.uint8),
               "attrs": {"bits": 8, "embedding_dim": 2},
               "extra": (np.ones(4, F32), np.zeros(4, F32))}, r"\[num_embeddings, 2\]"),
             ({"kind": "qembedding_bag", "w": np.ones((4, 1), np.uint8),
               "attrs": {"bits": 6, "embedding_dim": 2},
               "extra": (np.ones(4, F32), np.zeros(4, F32))}, "'bits' must be 8 or 4"),
             ({"kind": "qembedding_bag", "w": np.ones((4, 2), np.uint8),
               "attrs": {"bits": 8, "embedding_dim": 2},
               "extra": (np.ones(3, F32), np.zeros(4, F32))}, r"scales must have shape \(4,\)")]
    for kw, msg in cases:
        with pytest.raises(qrt.FormatError, match=msg):
            _read(blob(**kw))


@skip_under_qemu("CLI error handling is Python, run on x86")
def test_embedding_qrt_run_errors_are_one_line(tmp_path):
    _bag_blob(tmp_path / "eb.bin", include_last=True)
    np.savez(tmp_path / "ok.npz", text=np.array([1, 2, 3]), offsets=np.array([0, 1, 3]))
    cases = [({"text": np.array([1, 2, 30]), "offsets": np.array([0, 3])}, "index 30"),
             ({"text": np.array([1, 2, 3]), "offsets": np.array([0, 5])}, "offsets[-1] = 5"),
             ({"text": np.array([1, 2, 3]), "offsets": np.array([1, 3])}, "offsets[0] must be 0"),
             ({"text": np.array([1, 2, 3]), "offsets": np.array([0, 2])}, "the last offset"),
             ({"text": np.array([1, 2, 3], np.int16), "offsets": np.array([0, 3])},
              "takes int64 indices, got dtype int16"),
             ({"text": np.array([1.0, 2.0]), "offsets": np.array([0, 2])},
              "takes int64 indices, got dtype float64")]
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    r = subprocess.run([sys.executable, "-m", "qrt", "run", "eb.bin", "-i", "ok.npz"],
                       cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    np.savez(tmp_path / "ok32.npz", text=np.array([1, 2, 3], np.int32),
             offsets=np.array([0, 1, 3], np.int32))     # int32 widened to the int64 inputs
    r32 = subprocess.run([sys.executable, "-m", "qrt", "run", "eb.bin", "-i", "ok32.npz"],
                         cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert r32.returncode == 0 and r32.stdout == r.stdout, r32.stderr
    for k, (arrays, word) in enumerate(cases):
        np.savez(tmp_path / f"bad{k}.npz", **arrays)
        r = subprocess.run([sys.executable, "-m", "qrt", "run", "eb.bin", "-i", f"bad{k}.npz"],
                           cwd=tmp_path, env=env, capture_output=True, timeout=120)
        err = r.stderr.decode()
        assert r.returncode != 0 and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1 and word in err, err
    # qrt bench / --profile feed index inputs the ops accept (zeros, the last offset = length)
    r = subprocess.run([sys.executable, "-m", "qrt", "bench", "eb.bin", "--iters", "3",
                        "--profile"], cwd=tmp_path, env=env, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_embedding_kernel_variants_bit_exact():
    """The dispatched kernels (AVX2+FMA on x86) equal the reference (variant 0), NaN and inf
    included; empty bags and one-row tables too."""
    from qrt import _ops
    rng = np.random.default_rng(7)
    for trial in range(120):
        n, d = int(rng.integers(1, 200)), int(rng.integers(1, 80))
        k, nb = int(rng.integers(0, 150)), int(rng.integers(1, 12))
        idx = rng.integers(0, n, k)
        starts = np.concatenate([[0], np.sort(rng.integers(0, k + 1, nb - 1)), [k]])
        w = (rng.standard_normal(k) * 3).astype(F32) if trial % 2 else None
        table = (rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-3, 3)).astype(F32)
        table.flat[rng.integers(0, table.size, 3)] = [np.nan, np.inf, -0.0]
        mode = 0 if w is not None else trial % 3
        pad = int(rng.integers(-1, n))
        ys = []
        for variant in (0, -1):
            y = np.full((nb, d), 7, F32)
            _ops.embedding_bag_f32(table, idx, starts, w, y, mode, pad, trial % 4 < 2, variant)
            ys.append(y.view(np.uint32))
        assert np.array_equal(ys[0], ys[1]), trial
        bits = 8 if trial % 2 else 4
        codes = rng.integers(0, 256, (n, d if bits == 8 else (d + 1) // 2), dtype=np.uint8)
        s = (rng.random(n) * 0.1).astype(F32)
        b = (-rng.random(n) * 10).astype(F32)
        ys = []
        for variant in (0, -1):
            y = np.full((nb, d), 7, F32)
            _ops.embedding_bag_rowwise(codes, bits, d, s, b, idx, starts, w, y, variant)
            ys.append(y.view(np.uint32))
        assert np.array_equal(ys[0], ys[1]), trial


# ---- against torch ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def torch():
    t = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", module="torch")
    return t


def _export(torch, model, inputs, path, **kw):
    import qrt_export
    rep = qrt_export.export(model, inputs, path, verbose=False, **kw)
    assert all(r["ok"] for r in rep.ops), rep.ops
    return qrt.load(path), rep


def _rand_bags(rng, torch, n_rows, n_idx, n_bags, dtype):
    idx = torch.from_numpy(rng.integers(0, n_rows, n_idx)).to(dtype)
    cuts = np.sort(rng.integers(0, n_idx + 1, max(n_bags - 1, 0)))
    off = torch.from_numpy(np.concatenate([[0], cuts]) if n_bags else np.zeros(0, np.int64))
    return idx, off.to(dtype)


def _bag_module(torch, **kw):
    class BagNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.eb = torch.nn.EmbeddingBag(**kw)

        def forward(self, x, offsets):
            return self.eb(x, offsets)

    class BagNetW(BagNet):
        def forward(self, x, offsets, w):
            return self.eb(x, offsets, per_sample_weights=w)
    return BagNet, BagNetW


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding", [False, True])
def test_embedding_bag_float_equals_torch(torch, tmp_path, mode, padding):
    rng = np.random.default_rng(zlib.crc32(repr((mode, padding)).encode()))
    for case, (n_rows, dim) in enumerate([(1, 1), (37, 13), (3000, 64)]):
        pad = int(rng.integers(0, n_rows)) if padding else None
        Net, NetW = _bag_module(torch, num_embeddings=n_rows, embedding_dim=dim, mode=mode,
                                padding_idx=pad)
        weighted = mode == "sum"
        net = (NetW if weighted else Net)().eval()
        with torch.no_grad():   # a padding row is zero at init; give it values (must be skipped)
            net.eb.weight.mul_(torch.rand(n_rows, 1) * 8).add_(0.25)
        idx, off = _rand_bags(rng, torch, n_rows, 40, 6, torch.int64)
        args = (idx, off, torch.rand(40) * 3) if weighted else (idx, off)
        m, _ = _export(torch, net, args, tmp_path / f"b{case}.bin")
        for n_idx, n_bags, dt in [(40, 6, torch.int64), (1, 1, torch.int64), (0, 3, torch.int64),
                                  (200, 1, torch.int64), (97, 30, torch.int64)]:
            idx, off = _rand_bags(rng, torch, n_rows, n_idx, n_bags, dt)
            if pad is not None and n_idx:
                idx[::3] = pad
            a = (idx, off, torch.rand(n_idx) * 3 - 1) if weighted else (idx, off)
            with torch.no_grad():
                t = net(*a).numpy()
            q = m(*[v.numpy() for v in a])
            assert q.dtype == F32 and np.array_equal(q, t), (case, n_idx, n_bags)


def test_embedding_bag_float_2d_int32_include_last(torch, tmp_path):
    rng = np.random.default_rng(5)

    class Net2d(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.eb = torch.nn.EmbeddingBag(50, 7, mode="max")

        def forward(self, x):
            return self.eb(x)
    net = Net2d().eval()
    m, _ = _export(torch, net, torch.randint(0, 50, (3, 4)), tmp_path / "2d.bin")
    for shape in [(3, 4), (1, 1), (8, 9)]:
        x = torch.from_numpy(rng.integers(0, 50, shape))
        with torch.no_grad():
            assert np.array_equal(m(x.numpy()), net(x).numpy())
    Net, _ = _bag_module(torch, num_embeddings=30, embedding_dim=4, mode="mean",
                         include_last_offset=True)
    net = Net().eval()
    idx = torch.randint(0, 30, (12,), dtype=torch.int32)
    off = torch.tensor([0, 3, 3, 12], dtype=torch.int32)
    m, _ = _export(torch, net, (idx, off), tmp_path / "last.bin")
    assert m.inputs[0].dtype == "int32"
    for n_bags in (1, 2, 9):
        idx, off = _rand_bags(rng, torch, 30, 25, n_bags, torch.int32)
        off = torch.cat([off, torch.tensor([25], dtype=torch.int32)])
        with torch.no_grad():
            assert np.array_equal(m(idx.numpy(), off.numpy()), net(idx, off).numpy())


def test_embedding_float_equals_torch_any_index_shape(torch, tmp_path):
    class Net(torch.nn.Module):
        def __init__(self, n, d):
            super().__init__()
            self.emb = torch.nn.Embedding(n, d, padding_idx=0)

        def forward(self, x):
            return self.emb(x).flatten(1) * 2.0   # then ops qrt already runs (exact ones)
    rng = np.random.default_rng(1)
    for n, d in [(1, 1), (100_000, 8)]:
        net = Net(n, d).eval()
        m, _ = _export(torch, net, torch.randint(0, n, (2, 5)), tmp_path / "e.bin")
        for shape in [(2, 5), (1, 1), (4, 33)]:
            x = torch.from_numpy(rng.integers(0, n, shape))
            x.view(-1)[0] = n - 1
            with torch.no_grad():
                np.testing.assert_array_equal(m(x.numpy()), net(x).numpy())
    with pytest.raises(ValueError, match="index 100000"):
        m(np.array([[1, 100_000]]))
    # the table lookup alone is bit-identical, 0-d to 3-d indices, int32 too
    emb = torch.nn.Embedding(40, 3).eval()
    for x in (torch.tensor(7), torch.randint(0, 40, (2, 3, 4)).int()):
        mm, _ = _export(torch, torch.nn.Sequential(emb), x, tmp_path / "t.bin")
        with torch.no_grad():
            assert np.array_equal(mm(x.numpy()), emb(x).numpy())


def test_embedding_functional_forms(torch, tmp_path):
    """F.embedding / F.embedding_bag on a module parameter (a get_attr operand)."""
    tF = torch.nn.functional

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(30, 5))

        def forward(self, x, offsets, psw):
            a = tF.embedding_bag(x, self.w, offsets, mode="sum", per_sample_weights=psw,
                                 padding_idx=-1)
            return a + tF.embedding(offsets, self.w)
    net = Net().eval()
    rng = np.random.default_rng(4)
    x, off = torch.from_numpy(rng.integers(0, 30, 20)), torch.tensor([0, 4, 4, 19])
    x[::4] = 29
    m, _ = _export(torch, net, (x, off, torch.rand(20)), tmp_path / "f.bin")
    assert [o.kind for o in m.ops] == ["embedding_bag", "embedding", "float_add"]
    assert m.ops[0].attrs["padding_idx"] == 29
    psw = torch.rand(20) * 3
    with torch.no_grad():
        assert np.array_equal(m(x.numpy(), off.numpy(), psw.numpy()), net(x, off, psw).numpy())


def test_embedding_max_norm_refused_at_export(torch, tmp_path):
    import qrt_export
    for mod in (torch.nn.Embedding(10, 3, max_norm=1.0),
                torch.nn.EmbeddingBag(10, 3, max_norm=1.0)):
        x = torch.randint(0, 10, (2, 3))
        with pytest.raises(qrt_export.UnsupportedError, match=r"max_norm=1.0\): torch "
                           "renormalises"):
            qrt_export.export(torch.nn.Sequential(mod), x, tmp_path / "n.bin", verbose=False)


# ---- weight-only quantized tables ---------------------------------------------------------------
def _qconfig(torch, bits):
    from torch.ao.quantization import float_qparams_weight_only_qconfig
    from torch.ao.quantization.qconfig import float_qparams_weight_only_qconfig_4bit
    return float_qparams_weight_only_qconfig if bits == 8 else \
        float_qparams_weight_only_qconfig_4bit


def _eager(torch, net, qmods, bits=8):
    for mod in qmods:
        mod.qconfig = _qconfig(torch, bits)
    return torch.ao.quantization.convert(torch.ao.quantization.prepare(net.eval()))


@pytest.mark.parametrize("bits", [8, 4])
def test_qembedding_bag_equals_torch(torch, tmp_path, bits):
    rng = np.random.default_rng(bits)
    for case, (n_rows, dim) in enumerate([(1, 2), (61, 18), (5000, 64)]):
        Net, NetW = _bag_module(torch, num_embeddings=n_rows, embedding_dim=dim, mode="sum")
        for weighted in (False, True):
            net = (NetW if weighted else Net)()
            with torch.no_grad():
                net.eb.weight.mul_(torch.rand(n_rows, 1) * 10)
            qnet = _eager(torch, net, [net.eb], bits)
            assert type(qnet.eb).__name__ == "EmbeddingBag" and qnet.eb.dtype == \
                (torch.quint8 if bits == 8 else torch.quint4x2)
            dt = torch.int32 if case == 1 else torch.int64
            idx, off = _rand_bags(rng, torch, n_rows, 30, 4, dt)
            args = (idx, off, torch.rand(30) * 2) if weighted else (idx, off)
            m, rep = _export(torch, qnet, args, tmp_path / f"q{case}{weighted}.bin")
            assert m.inputs[0].dtype == str(dt)[6:]
            for n_idx, n_bags in [(30, 4), (0, 2), (150, 7), (1, 1)]:
                idx, off = _rand_bags(rng, torch, n_rows, n_idx, n_bags, dt)
                a = (idx, off, torch.rand(n_idx) * 4 - 2) if weighted else (idx, off)
                with torch.no_grad():
                    t = qnet(*a).numpy()
                assert np.array_equal(m(*[v.numpy() for v in a]), t), (case, weighted, n_idx)


def test_qembedding_equals_torch_and_mode_is_a_sum(torch, tmp_path):
    rng = np.random.default_rng(3)
    net = torch.nn.Sequential(torch.nn.Embedding(300, 24))
    qnet = _eager(torch, net, [net[0]])
    m, _ = _export(torch, qnet, torch.randint(0, 300, (4, 6)), tmp_path / "qe.bin")
    for shape in [(4, 6), (1, 1), (7, 3)]:
        x = torch.from_numpy(rng.integers(0, 300, shape))
        assert np.array_equal(m(x.numpy()), qnet(x).numpy())
    # torch's quantized EmbeddingBag sums whatever its mode: qrt computes what torch computes
    Net, _ = _bag_module(torch, num_embeddings=40, embedding_dim=6, mode="mean")
    net = Net()
    qnet = _eager(torch, net, [net.eb])
    x, off = torch.randint(0, 40, (9,)), torch.tensor([0, 4])
    m, _ = _export(torch, qnet, (x, off), tmp_path / "qm.bin")
    assert np.array_equal(m(x.numpy(), off.numpy()), qnet(x, off).numpy())
    # 2-d indices (one bag per row), int32
    class Net2d(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.eb = torch.nn.EmbeddingBag(40, 6, mode="sum")

        def forward(self, x):
            return self.eb(x)
    n2 = Net2d()
    q2 = _eager(torch, n2, [n2.eb])
    x = torch.randint(0, 40, (3, 5), dtype=torch.int32)
    m, _ = _export(torch, q2, x, tmp_path / "q2.bin")
    x = torch.randint(0, 40, (6, 2), dtype=torch.int32)
    assert np.array_equal(m(x.numpy()), q2(x).numpy())


def test_qembedding_fx_and_conv_after_embedding(torch, tmp_path):
    """FX with a qconfig mapping using float_qparams_weight_only_qconfig, and an eager model:
    Embedding -> permute -> QuantStub -> quantized Conv1d -> DeQuantStub."""
    from torch.ao.quantization import QConfigMapping, get_default_qconfig
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "qnnpack"
    Net, _ = _bag_module(torch, num_embeddings=500, embedding_dim=16, mode="sum")
    net = Net().eval()
    x, off = torch.randint(0, 500, (20,)), torch.tensor([0, 7, 7, 15])
    qmap = QConfigMapping().set_object_type(torch.nn.EmbeddingBag, _qconfig(torch, 8))
    g = convert_fx(prepare_fx(net, qmap, (x, off)))
    m, _ = _export(torch, g, (x, off), tmp_path / "fx.bin")
    x2, off2 = torch.randint(0, 500, (33,)), torch.tensor([0, 1, 30])
    assert np.array_equal(m(x2.numpy(), off2.numpy()), g(x2, off2).numpy())
    emb = torch.nn.Sequential(torch.nn.Embedding(100, 8)).eval()
    x = torch.randint(0, 100, (2, 3))
    g = convert_fx(prepare_fx(emb, QConfigMapping().set_object_type(
        torch.nn.Embedding, _qconfig(torch, 8)), (x,)))
    m, _ = _export(torch, g, x, tmp_path / "fxe.bin")
    assert [o.kind for o in m.ops] == ["qembedding"]
    x = torch.randint(0, 100, (5, 7))
    assert np.array_equal(m(x.numpy()), g(x).numpy())

    class EmbConv(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(200, 8)
            self.quant = torch.ao.quantization.QuantStub()
            self.conv = torch.nn.Conv1d(8, 6, 3, padding=1)
            self.dequant = torch.ao.quantization.DeQuantStub()

        def forward(self, tokens):
            e = self.emb(tokens).permute(0, 2, 1)
            return self.dequant(self.conv(self.quant(e)))
    net = EmbConv().eval()
    net.qconfig = get_default_qconfig("qnnpack")
    net.emb.qconfig = _qconfig(torch, 8)
    p = torch.ao.quantization.prepare(net)
    for _ in range(4):
        p(torch.randint(0, 200, (2, 12)))
    qnet = torch.ao.quantization.convert(p)
    tok = torch.randint(0, 200, (2, 12))
    m, rep = _export(torch, qnet, tok, tmp_path / "ec.bin")
    assert [o.kind for o in m.ops][:2] == ["qembedding", "permute"]
    assert rep.agreement["qnnpack"]["exact"] == rep.agreement["qnnpack"]["total"]
    tok = torch.randint(0, 200, (3, 20))
    with torch.no_grad():
        assert np.array_equal(m(tok.numpy()), qnet(tok).numpy())


# ---- a published model: torch's text classification tutorial ----------------------------------
def _text_classification_model(torch):
    nn = torch.nn

    # torch's tutorial "Text classification with the torchtext library" (AG_NEWS), as written
    class TextClassificationModel(nn.Module):
        def __init__(self, vocab_size, embed_dim, num_class):
            super(TextClassificationModel, self).__init__()
            self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
            self.fc = nn.Linear(embed_dim, num_class)
            self.init_weights()

        def init_weights(self):
            initrange = 0.5
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.fc.weight.data.uniform_(-initrange, initrange)
            self.fc.bias.data.zero_()

        def forward(self, text, offsets):
            embedded = self.embedding(text, offsets)
            return self.fc(embedded)
    return TextClassificationModel


VOCAB, EMSIZE, NUM_CLASS = 95811, 64, 4   # the tutorial's AG_NEWS sizes


def _batch(torch, rng, n_texts):
    lens = rng.integers(1, 60, n_texts)
    text = torch.from_numpy(rng.integers(0, VOCAB, int(lens.sum())))
    return text, torch.from_numpy(np.concatenate([[0], np.cumsum(lens)[:-1]]))


def test_text_classification_tutorial_float_and_quantized(torch, tmp_path):
    TCM = _text_classification_model(torch)
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    model = TCM(VOCAB, EMSIZE, NUM_CLASS).eval()
    text, off = _batch(torch, rng, 3)
    m, rep = _export(torch, model, (text, off), tmp_path / "tc.bin")
    assert [o.kind for o in m.ops] == ["embedding_bag", "float_linear"]
    for n in (1, 8):
        text, off = _batch(torch, rng, n)
        with torch.no_grad():
            emb = model.embedding(text, off)
            t = model(text, off).numpy()
        q = m(text.numpy(), off.numpy())
        # the bag is bit-identical; the float Linear within docs/float-ops.md's bound
        bound = (EMSIZE + 1) * 2.0 ** -23 * (np.abs(emb.numpy()) @ np.abs(
            model.fc.weight.detach().numpy().T))
        assert np.all(np.abs(q - t) <= bound)
    # weight-only quantized EmbeddingBag + quantize_dynamic Linear, as users quantize it
    torch.backends.quantized.engine = "qnnpack"
    model.embedding.qconfig = _qconfig(torch, 8)
    qm = torch.ao.quantization.convert(torch.ao.quantization.prepare(model))
    qm = torch.ao.quantization.quantize_dynamic(qm, {torch.nn.Linear}, dtype=torch.qint8)
    text, off = _batch(torch, rng, 3)
    m, rep = _export(torch, qm, (text, off), tmp_path / "tcq.bin")
    assert [o.kind for o in m.ops] == ["qembedding_bag", "linear_dynamic"]
    assert rep.agreement["qnnpack"]["exact"] == rep.agreement["qnnpack"]["total"]
    for n in (1, 5):
        text, off = _batch(torch, rng, n)
        with torch.no_grad():
            assert np.array_equal(m(text.numpy(), off.numpy()), qm(text, off).numpy())
    assert os.path.getsize(tmp_path / "tcq.bin") < os.path.getsize(tmp_path / "tc.bin") / 3


# ---- golden twin (no torch needed: the ARM runs under qemu) -----------------------------------
GOLDEN = "embedding_golden.npz"


def _golden_cases(torch):
    """(kind, attrs, arrays) with torch's outputs: float bags in every mode (weighted, padding),
    quint8 / quint4x2 bags (weighted), a quantized Embedding."""
    rng = np.random.default_rng(99)
    tF = torch.nn.functional
    cases = []
    for mode, pad, weighted in [("sum", None, False), ("sum", None, True), ("sum", 2, True),
                                ("mean", None, False), ("mean", 2, False), ("max", 1, False)]:
        W = (rng.standard_normal((11, 6)) * 10.0 ** rng.uniform(-2, 2, (11, 1))).astype(F32)
        idx = rng.integers(0, 11, 40)
        off = np.array([0, 3, 3, 17, 39])
        w = (rng.standard_normal(40) * 2).astype(F32) if weighted else None
        t = tF.embedding_bag(torch.from_numpy(idx), torch.from_numpy(W), torch.from_numpy(off),
                             mode=mode, padding_idx=pad,
                             per_sample_weights=None if w is None else torch.from_numpy(w))
        a = {"weight": W, "idx": idx, "off": off, "want": t.numpy()}
        if w is not None:
            a["psw"] = w
        cases.append(("embedding_bag", {"mode": mode, "padding_idx": pad,
                                        "per_sample_weights": weighted}, a))
    for bits, weighted in [(8, False), (8, True), (4, False), (4, True)]:
        net = torch.nn.Sequential(torch.nn.EmbeddingBag(13, 10, mode="sum"))
        with torch.no_grad():
            net[0].weight.mul_(torch.from_numpy(10.0 ** rng.uniform(-2, 2, (13, 1))).float())
        q = _eager(torch, net, [net[0]], bits)[0]
        wq = q.weight()
        idx, off = rng.integers(0, 13, 30), np.array([0, 0, 12, 29])
        w = (rng.standard_normal(30) * 2).astype(F32) if weighted else None
        with torch.no_grad():
            t = q(torch.from_numpy(idx), torch.from_numpy(off),
                  per_sample_weights=None if w is None else torch.from_numpy(w))
        n, dim = wq.shape
        a = {"weight": wq.int_repr().numpy().reshape(n, dim if bits == 8 else dim // 2),
             "scales": wq.q_per_channel_scales().numpy().astype(F32),
             "zero_points": wq.q_per_channel_zero_points().numpy().astype(F32),
             "idx": idx, "off": off, "want": t.numpy()}
        if w is not None:
            a["psw"] = w
        cases.append(("qembedding_bag", {"bits": bits, "embedding_dim": int(dim),
                                         "per_sample_weights": weighted}, a))
    net = torch.nn.Sequential(torch.nn.Embedding(9, 5))
    q = _eager(torch, net, [net[0]])[0]
    wq = q.weight()
    idx = rng.integers(0, 9, (3, 4))
    with torch.no_grad():
        t = q(torch.from_numpy(idx))
    cases.append(("qembedding", {"bits": 8, "embedding_dim": 5},
                  {"weight": wq.int_repr().numpy(),
                   "scales": wq.q_per_channel_scales().numpy().astype(F32),
                   "zero_points": wq.q_per_channel_zero_points().numpy().astype(F32),
                   "idx": idx, "want": t.numpy()}))
    return cases


def write_golden(path):
    import json
    import torch
    warnings.filterwarnings("ignore")
    arrays, meta = {}, []
    for i, (kind, attrs, a) in enumerate(_golden_cases(torch)):
        meta.append({"kind": kind, "attrs": attrs, "names": sorted(a)})
        arrays.update({f"c{i}_{k}": v for k, v in a.items()})
    arrays["meta"] = np.array(json.dumps(meta))
    arrays["torch_version"] = np.array(torch.__version__)
    np.savez_compressed(path, **arrays)
    return len(meta)


def test_embedding_golden(tmp_path):
    """torch's results stored in tests/data/embedding_golden.npz (``python
    tests/test_embedding.py --golden`` rewrites it), through qrt.load: bit for bit."""
    import json
    sys.path.insert(0, os.path.dirname(__file__))
    from conftest import assert_bits_equal, load_golden
    g = load_golden(GOLDEN)
    meta = json.loads(str(g["meta"]))
    assert len(meta) == 11
    for i, c in enumerate(meta):
        a = {k: g[f"c{i}_{k}"] for k in c["names"]}
        b = BlobBuilder()
        ins = [b.activation("idx", "int64", a["idx"].shape)]
        feed = [a["idx"].astype(np.int64)]
        if "off" in a:
            ins.append(b.activation("off", "int64", a["off"].shape))
            feed.append(a["off"].astype(np.int64))
        if "psw" in a:
            ins.append(b.activation("psw", "float32", a["psw"].shape))
            feed.append(a["psw"])
        y = b.activation("y", "float32", a["want"].shape)
        ps = [b.constant(k, a[k]) for k in ("weight", "scales", "zero_points") if k in a]
        b.op(c["kind"], "e", ins, [y], ps, attrs=c["attrs"])
        b.inputs, b.outputs = ins, [y]
        b.write(tmp_path / "g.bin")
        assert_bits_equal(qrt.load(tmp_path / "g.bin")(*feed), a["want"], f"golden {i}")


if __name__ == "__main__":
    if "--golden" in sys.argv:
        out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", GOLDEN)
        print(f"wrote {write_golden(out)} cases to {out}")

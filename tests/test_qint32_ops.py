# SPDX-License-Identifier: Apache-2.0
"""qint32 tensors through relu, add / add_relu, max_pool1d and cat (torch 2.13 runs ATen's
generic kernels on them under every engine; test/quantization/core/test_quantized_op.py feeds
them qint32): one-op blobs against torch, codes compared exactly, including codes and zero
points near the int32 limits; and the refusals of ops torch runs only on 8-bit tensors."""

import warnings

import numpy as np
import pytest

import qrt
import qrt.functional as F
from qrt_export import BlobBuilder

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message=".*quantiz.*")
pytestmark = [pytest.mark.filterwarnings("ignore:.*quantiz"),
              pytest.mark.usefixtures("qnnpack_engine")]
I32 = np.iinfo(np.int32)


def rand_q32(rng, shape, k):
    """(qrt QTensor, torch tensor): codes of three magnitudes, extremes planted, zero points
    small or anywhere in int32."""
    hi = [1 << 20, 1 << 28, I32.max][k % 3]
    codes = rng.integers(-hi, hi, shape, endpoint=True).astype(np.int32)
    flat = codes.reshape(-1)
    if k % 4 == 0 and flat.size >= 4:
        flat[:4] = [I32.max, I32.min, I32.max - 1, I32.min + 1]
    scale = float(rng.uniform(1e-3, 2.0))
    zp = int(rng.integers(-1000, 1000)) if k % 5 else int(rng.integers(I32.min, I32.max))
    t = torch._make_per_tensor_quantized_tensor(torch.from_numpy(codes.copy()), scale, zp)
    return qrt.from_int_repr(codes, scale, zp, qrt.qint32), t


def one_op(path, kind, xs, want, attrs=None):
    b = BlobBuilder()
    ins = [b.activation(f"x{i}", "qint32", x.shape, scale=x.q_scale(),
                        zero_point=x.q_zero_point()) for i, x in enumerate(xs)]
    y = b.activation("y", "qint32", tuple(want.shape), scale=want.q_scale(),
                     zero_point=want.q_zero_point())
    b.op(kind, "op", ins, [y], (), attrs or {})
    b.inputs, b.outputs = ins, [y]
    b.write(path)
    return qrt.load(path)


def check(got, want):
    np.testing.assert_array_equal(got.int_repr(), want.int_repr().numpy())


def test_relu_qint32(tmp_path):
    rng = np.random.default_rng(1)
    for k, shape in enumerate([(1, 3, 17), (2, 5, 64), (4, 33), (3,)]):
        x, tx = rand_q32(rng, shape, k)
        want = torch.relu(tx)
        check(one_op(tmp_path / f"r{k}.bin", "relu", [x], want)(x), want)
        check(F.relu(x), want)
        y = qrt.from_int_repr(x.int_repr().copy(), x.q_scale(), x.q_zero_point(), qrt.qint32)
        F.relu(y, inplace=True)
        check(y, want)


@pytest.mark.parametrize("relu", [False, True])
def test_add_qint32(tmp_path, relu):
    rng = np.random.default_rng(2 + relu)
    op = torch.ops.quantized.add_relu if relu else torch.ops.quantized.add
    for k in range(24):
        n = int(rng.choice([1, 5, 15, 16, 17, 31, 32, 33, 64, 100, 129]))
        shape = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), n)
        a, ta = rand_q32(rng, shape, k)
        b, tb = rand_q32(rng, shape, k + 1)
        so = float(rng.uniform(1e-3, 3.0))
        zo = int(rng.integers(-1000, 1000)) if k % 3 else int(rng.integers(I32.min, I32.max))
        want = op(ta, tb, so, zo)
        m = one_op(tmp_path / f"a{k}.bin", "add", [a, b], want,
                   {"activation": "relu" if relu else "none"})
        check(m(a, b), want)
    # broadcasting (functional only: the op takes equal shapes), incl. a row shorter than 16
    for k, (sa, sb) in enumerate([((2, 3, 40), (1, 3, 1)), ((3, 7), (7,)), ((2, 1, 5), (1, 4, 5))]):
        a, ta = rand_q32(rng, sa, k)
        b, tb = rand_q32(rng, sb, k + 2)
        check((F.add_relu if relu else F.add)(a, b, 0.7, -3), op(ta, tb, 0.7, -3))


def test_max_pool1d_qint32(tmp_path):
    rng = np.random.default_rng(4)
    geoms = [(2, None, 0, 1, False), (3, 1, 1, 1, False), (3, 2, 1, 2, False),
             (1, 1, 0, 1, False), (4, 3, 2, 1, True), (5, 2, 2, 3, False), (2, 2, 0, 1, True)]
    for k, (ks, st, pd, dl, cm) in enumerate(geoms):
        for shape in [(2, 3, 23), (4, 17), (2, 5, 1)]:
            if shape[-1] < dl * (ks - 1) + 1 - 2 * pd:
                continue
            x, tx = rand_q32(rng, shape, k)
            want = torch.nn.functional.max_pool1d(tx, ks, st, pd, dl, cm)
            attrs = {"kernel_size": ks, "stride": st, "padding": pd, "dilation": dl,
                     "ceil_mode": cm}
            m = one_op(tmp_path / f"p{k}.bin", "max_pool1d", [x], want, attrs)
            check(m(x), want)
            check(F.max_pool1d(x, ks, st, pd, dl, cm), want)


def test_cat_qint32(tmp_path):
    rng = np.random.default_rng(5)
    for k in range(12):
        d = int(rng.integers(0, 3))
        shapes = [[2, 3, 9] for _ in range(int(rng.integers(1, 4)))]
        for s in shapes:
            s[d] = int(rng.integers(1, 6))
        xs = [rand_q32(rng, tuple(s), k + i) for i, s in enumerate(shapes)]
        if k % 2:   # torch.cat: the first tensor's qparams on every input
            x0 = xs[0][1]
            xs = [(qrt.from_int_repr(q.int_repr(), x0.q_scale(), x0.q_zero_point(), qrt.qint32),
                   torch._make_per_tensor_quantized_tensor(t.int_repr(), x0.q_scale(),
                                                          x0.q_zero_point())) for q, t in xs]
            want = torch.cat([t for _, t in xs], d)
        else:       # quantized.cat: requantized to its own output qparams
            so, zo = float(rng.uniform(1e-3, 2.0)), int(rng.integers(-1000, 1000))
            want = torch.ops.quantized.cat([t for _, t in xs], d, so, zo)
        m = one_op(tmp_path / f"c{k}.bin", "cat", [q for q, _ in xs], want, {"dim": d})
        check(m(*[q for q, _ in xs]), want)


def test_qint32_refused_where_qrt_has_no_kernel(tmp_path):
    """torch 2.13 runs nearly every quantized op on qint32 too (avg pooling, hardswish, mul,
    the table ops...); qrt reproduces relu, add, max_pool1d, cat, mean and the layout ops, and
    refuses the others at load, naming the op and the dtype."""
    rng = np.random.default_rng(6)
    x, tx = rand_q32(rng, (1, 2, 8), 1)
    for kind, attrs in (("avg_pool1d", {"kernel_size": 2}), ("hardswish", {}),
                        ("adaptive_avg_pool1d", {"output_size": 1})):
        b = BlobBuilder()
        xi = b.activation("x", "qint32", x.shape, scale=x.q_scale(), zero_point=x.q_zero_point())
        shape = (1, 2, 4) if kind == "avg_pool1d" else ((1, 2, 1) if "adaptive" in kind else
                                                        x.shape)
        yi = b.activation("y", "qint32", shape, scale=x.q_scale(), zero_point=x.q_zero_point())
        b.op(kind, "op", [xi], [yi], (), attrs)
        b.inputs, b.outputs = [xi], [yi]
        b.write(tmp_path / f"{kind}.bin")
        with pytest.raises(qrt.FormatError, match=kind):
            qrt.load(tmp_path / f"{kind}.bin")
    with pytest.raises(TypeError, match="qint32"):
        F.avg_pool1d(x, 2)


def test_model_with_a_qint32_input(tmp_path):
    """A model that takes a qint32 QTensor (as torch's own tests feed qint32 tensors): relu,
    max_pool1d, add, cat and mean exported and run on a qint32 qrt.QTensor."""
    import qrt_export

    class Net(torch.nn.Module):
        def forward(self, x):
            y = torch.relu(x)
            y = torch.nn.functional.max_pool1d(y, 3, 2, 1)
            z = torch.ops.quantized.add(y, y, 0.9, 7)
            c = torch.ops.quantized.cat([z, y], 1, 0.8, -2)
            return c.mean(-1)

    rng = np.random.default_rng(7)
    for k in range(3):
        x, tx = rand_q32(rng, (2, 3, 40), k + 1)
        net = Net().eval()
        qrt_export.export(net, tx, tmp_path / f"m{k}.bin")
        m = qrt.load(tmp_path / f"m{k}.bin")
        check(m(x), net(tx))

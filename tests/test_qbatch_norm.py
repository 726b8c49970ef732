# SPDX-License-Identifier: Apache-2.0
"""Quantized batch norm (qrt/ops/batch_norm.py) against torch 2.13's quantized::batch_norm1d
(qnnpack engine): exact codes over random channel counts (both of ATen's loops), lengths,
2-d and 3-d inputs, quint8 and qint8, fused relu, extreme statistics (tiny variances, huge
means, zero eps), constructed float32 ties (the kernel's fused multiply-add), and the exporter
rule on a model that calls the quantized op."""

import warnings

import numpy as np
import pytest

import qrt
from qrt.ops.batch_norm import fma_f32
from qrt_export import BlobBuilder

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message=".*quantiz.*")
pytestmark = [pytest.mark.filterwarnings("ignore:.*quantiz"),
              pytest.mark.usefixtures("qnnpack_engine")]
F32 = np.float32


def _blob(path, qx, y, w, b, mean, var, eps, relu):
    bb = BlobBuilder()
    dt = str(qx.dtype).split(".")[-1]
    x_t = bb.activation("x", dt, tuple(qx.shape), scale=qx.q_scale(),
                        zero_point=qx.q_zero_point())
    y_t = bb.activation("y", dt, tuple(y.shape), scale=y.q_scale(), zero_point=y.q_zero_point())
    ps = [bb.constant(n, np.ascontiguousarray(a, F32)) for n, a in
          (("w", w), ("b", b), ("m", mean), ("v", var))]
    bb.op("batch_norm", "bn", [x_t], [y_t], ps,
          {"eps": float(eps), "activation": "relu" if relu else "none"})
    bb.inputs, bb.outputs = [x_t], [y_t]
    bb.write(path)
    return qrt.load(path)


def _run(path, qx, w, b, mean, var, eps, so, zo, relu):
    op = torch.ops.quantized.batch_norm1d_relu if relu else torch.ops.quantized.batch_norm1d
    t = [torch.from_numpy(np.ascontiguousarray(a, F32)) for a in (w, b, mean, var)]
    want = op(qx, *t, eps, so, zo)
    m = _blob(path, qx, want, w, b, mean, var, eps, relu)
    x = qrt.from_int_repr(qx.int_repr().numpy(), qx.q_scale(), qx.q_zero_point(),
                          getattr(qrt, str(qx.dtype).split(".")[-1]))
    got = m(x).int_repr()
    np.testing.assert_array_equal(got, want.int_repr().numpy())
    return m


def test_batch_norm_matches_torch(tmp_path):
    rng = np.random.default_rng(29)
    for k in range(60):
        C = int(rng.choice([1, 3, 7, 8, 9, 16, 17, 31, 32, 33, 63, 64, 65, 100]))
        shape = (int(rng.integers(1, 3)), C) + (() if k % 4 == 0 else (int(rng.integers(1, 50)),))
        dt = torch.quint8 if k % 3 else torch.qint8
        lo, hi = (0, 255) if dt == torch.quint8 else (-128, 127)
        si, zi = float(rng.uniform(1e-3, 0.2)), int(rng.integers(lo, hi + 1))
        so, zo = float(rng.uniform(1e-3, 0.2)), int(rng.integers(lo, hi + 1))
        w = rng.normal(1, 0.5, C).astype(F32)
        b = rng.normal(0, 1, C).astype(F32)
        mean = rng.normal(0, 1, C).astype(F32)
        var = rng.uniform(0.01, 3, C).astype(F32)
        eps = float(rng.choice([1e-5, 1e-3, 0.0]))
        mode = k % 5
        if mode == 3:       # tiny variances: huge alpha
            var = (10.0 ** rng.uniform(-30, -5, C)).astype(F32)
            eps = 1e-12
        elif mode == 4:     # huge means: beyond the int32 and int64 range of the quantizers
            mean = (rng.normal(0, 1, C) * 10.0 ** rng.uniform(0, 22, C)).astype(F32)
        qx = torch.quantize_per_tensor(torch.randn(shape) * 3, si, zi, dt)
        _run(tmp_path / f"bn{k}.bin", qx, w, b, mean, var, eps, so, zo, bool(k % 2))


def test_batch_norm_out_of_range_and_nan(tmp_path):
    """w = 0 makes alpha 0 and beta = b / out_scale: every value the quantizers see, chosen;
    one channel each, in the vector loop (16 channels) and in the scalar one (7 channels)."""
    vals = np.array([100.0, 300.0, -4e4, 2.0**31 - 200, 2.0**31, 3e9, -3e9, 2.0**40, 2.0**63,
                     1e20, -1e20, np.inf, -np.inf, np.nan], F32)
    for dt, zps in ((torch.quint8, (0, 95, 241)), (torch.qint8, (-100, 0, 100))):
        for zo in zps:
            for relu in (False, True):
                for b in (np.resize(vals, 16), vals[:7], vals[7:]):
                    C = b.shape[0]
                    qx = torch.quantize_per_tensor(torch.zeros(1, C, 2), 1.0, 0, dt)
                    _run(tmp_path / "x.bin", qx, np.zeros(C, F32), b, np.zeros(C, F32),
                         np.ones(C, F32), 0.0, 1.0, zo, relu)


def test_batch_norm_fused_multiply_add_ties(tmp_path):
    """alpha * x + beta at an exact .5 in float32 arithmetic, not in exact arithmetic: torch's
    loops contract to fmaf (both of them), as qrt."""
    rng = np.random.default_rng(3)
    al, be, xs = [], [], []
    while len(al) < 130:
        a, x = F32(rng.uniform(0.5, 2)), int(rng.integers(-120, 120))
        pf = F32(float(a) * x)
        if x == 0 or float(pf) == float(a) * x:
            continue
        m = int(rng.integers(-20, 20))
        bt = F32(m + 0.5 - float(pf))
        if float(F32(pf + bt)) == m + 0.5 and \
                np.rint(float(fma_f32(a, F32(x), bt))) != np.rint(m + 0.5):
            al.append(a), be.append(bt), xs.append(x)
    al, be, xs = np.array(al, F32), np.array(be, F32), np.array(xs)
    for C in (5, 16, 21, 130):   # scalar loop only, vector only, both
        q = torch.from_numpy((np.resize(xs, C) + 128).astype(np.uint8).reshape(1, C, 1))
        qx = torch._make_per_tensor_quantized_tensor(q, 1.0, 128)
        # var = 1, mean = 0, eps = 0 and in_scale = out_scale = 1: alpha = w, beta = b
        _run(tmp_path / f"t{C}.bin", qx, np.resize(al, C), np.resize(be, C), np.zeros(C, F32),
             np.ones(C, F32), 0.0, 1.0, 128, False)


def test_fma_f32_matches_a_true_fma():
    """The float64 emulation against torch's addcmul on float32 (an fmaf on this CPU) is not a
    given, so compare with exact rational arithmetic on random and tie-prone triples."""
    from fractions import Fraction
    rng = np.random.default_rng(5)
    a = rng.standard_normal(3000).astype(F32)
    b = rng.integers(-255, 256, 3000).astype(F32)
    c = (rng.standard_normal(3000) * 10.0 ** rng.integers(-8, 9, 3000)).astype(F32)
    c[:1000] = -(a[:1000] * b[:1000])  # cancellation
    got = fma_f32(a, b, c)
    for i in range(0, 3000, 7):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        lo = np.float32(float(exact))  # float() rounds a Fraction correctly, then to float32:
        # the double rounding can be off only at float32 ties, which the next lines settle
        cands = [lo, np.nextafter(lo, F32(np.inf)), np.nextafter(lo, F32(-np.inf))]
        best = min(cands, key=lambda v: (abs(Fraction(float(v)) - exact),
                                         int(np.array(v).view(np.int32)) & 1))
        assert got[i] == best, (a[i], b[i], c[i])


def test_batch_norm_shapes_and_refusals(tmp_path):
    qx = torch.quantize_per_tensor(torch.randn(2, 4, 9), 0.1, 128, torch.quint8)
    C = 4
    m = _run(tmp_path / "s.bin", qx, np.ones(C, F32), np.zeros(C, F32), np.zeros(C, F32),
             np.ones(C, F32), 1e-5, 0.05, 120, False)
    x = qrt.from_int_repr(np.zeros((3, 4, 20), np.uint8), qx.q_scale(), 128, qrt.quint8)
    assert m(x).shape == (3, 4, 20)
    with pytest.raises(ValueError, match="batch_norm"):
        m(qrt.from_int_repr(np.zeros((3, 5, 20), np.uint8), qx.q_scale(), 128, qrt.quint8))


def test_batch_norm_exported_from_a_model(tmp_path):
    import qrt_export
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self, relu):
            super().__init__()
            self.relu = relu
            self.q = torch.ao.nn.quantized.Quantize(0.03, 120, torch.quint8)
            for n in ("w", "b", "m", "v"):
                self.register_buffer(n, torch.rand(6) + (0.5 if n in "wv" else -0.5))

        def forward(self, x):
            q = self.q(x)
            op = torch.ops.quantized.batch_norm1d_relu if self.relu else \
                torch.ops.quantized.batch_norm1d
            y = op(q, self.w, self.b, self.m, self.v, 1e-5, 0.02, 100)
            if not self.relu:
                y = torch.ops.quantized.batch_norm(y.reshape(-1, 6), self.w, self.b, self.m,
                                                   self.v, 1e-3, 0.04, 90)
            return y.dequantize()

    for relu in (False, True):
        x = torch.randn(3, 6, 40)
        net = Net(relu).eval()
        qrt_export.export(net, x, tmp_path / f"n{relu}.bin")
        m = qrt.load(tmp_path / f"n{relu}.bin")
        assert "batch_norm" in m.summary()
        np.testing.assert_array_equal(m(x.numpy()), net(x).numpy())


def test_batch_norm_qint32(tmp_path):
    """qint32 codes (no table: computed per element), full-range codes, huge means, and every
    out-of-range value in both loops (16 channels: vector; 7: scalar)."""
    rng = np.random.default_rng(32)
    for k in range(16):
        C = int(rng.choice([1, 3, 7, 8, 9, 16, 17, 33]))
        hi = [1 << 10, 1 << 20, 2**31 - 1][k % 3]
        codes = rng.integers(-hi, hi, (2, C, int(rng.integers(1, 20))), endpoint=True)
        t = torch._make_per_tensor_quantized_tensor(torch.from_numpy(codes.astype(np.int32)),
                                                    float(rng.uniform(1e-3, 1)),
                                                    int(rng.integers(-1000, 1000)))
        mean = rng.normal(0, 1, C) * (1e12 if k % 4 == 3 else 1)
        _run(tmp_path / f"q{k}.bin", t, rng.normal(1, 0.5, C), rng.normal(0, 1, C), mean,
             rng.uniform(0.1, 2, C), 1e-5, float(rng.uniform(1e-3, 1)),
             int(rng.integers(-1000, 1000)), bool(k % 2))
    vals = np.array([100.0, -4e4, 2.0**31 - 200, 2.0**31, 3e9, -3e9, 2.0**40, 2.0**63, 1e20,
                     -1e20, np.inf, -np.inf, np.nan, 1.5e9], F32)
    for zo in (-2**31, 0, 1000, 2**31 - 1):
        for relu in (False, True):
            for b in (np.resize(vals, 16), vals[:7], vals[7:]):
                C = b.shape[0]
                qx = torch._make_per_tensor_quantized_tensor(
                    torch.zeros(1, C, 2, dtype=torch.int32), 1.0, 0)
                _run(tmp_path / "x.bin", qx, np.zeros(C, F32), b, np.zeros(C, F32),
                     np.ones(C, F32), 0.0, 1.0, zo, relu)

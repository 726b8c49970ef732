# SPDX-License-Identifier: Apache-2.0
"""2-d pools (qrt/ops/pool2d.py) == torch's quantized ops (qnnpack engine), random and edge
geometry, and through the exporter (modules and F.* functions)."""

import numpy as np
import pytest

import qrt
from qrt.ops.pool2d import pool2d_binding

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _ours(kind, t, attrs, oshape):
    qd = qrt.quint8 if t.dtype == torch.quint8 else qrt.qint8
    npdt = np.uint8 if qd is qrt.quint8 else np.int8
    x = qrt.from_int_repr(t.int_repr().numpy(), t.q_scale(), t.q_zero_point(), qd)
    y = qrt.from_int_repr(np.zeros(oshape, npdt), t.q_scale(), t.q_zero_point(), qd)
    fn, a, kw = pool2d_binding(kind, x, y, attrs)
    fn(*a, **kw)
    return np.asarray(y.int_repr())


def _qx(rng, shape, dt):
    zp = int(rng.integers(0, 256)) if dt == torch.quint8 else int(rng.integers(-128, 128))
    return torch.quantize_per_tensor(
        torch.from_numpy(rng.standard_normal(shape).astype(np.float32)), 0.05, zp, dt)


@pytest.mark.parametrize("kind", ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"])
def test_pool2d_random_vs_torch(kind):
    torch.backends.quantized.engine = "qnnpack"
    rng = np.random.default_rng({"max_pool2d": 1, "avg_pool2d": 2}.get(kind, 3))
    n_cases = 0
    while n_cases < 120:
        dt = torch.quint8 if rng.random() < 0.7 else torch.qint8
        shape = (int(rng.integers(1, 3)), int(rng.integers(2, 20)), int(rng.integers(1, 12)),
                 int(rng.integers(1, 12)))
        h, w = shape[2:]
        if (h, w) == (1, 1):  # [N, C>1, 1, 1] takes ATen's NHWC kernel (not reproduced)
            continue
        t = _qx(rng, shape, dt)
        if kind == "adaptive_avg_pool2d":
            o = (int(rng.integers(1, h + 1)), int(rng.integers(1, w + 1)))
            if rng.random() < 0.5 and h % 2 == 0 and w % 2 == 0:
                o = (h // 2, w // 2)   # QNNPACK's path
            attrs = {"output_size": list(o)}
            want = F.adaptive_avg_pool2d(t, o)
        else:
            k = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
            s = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
            p = (int(rng.integers(0, k[0] // 2 + 1)), int(rng.integers(0, k[1] // 2 + 1)))
            cm = bool(rng.random() < 0.3)
            try:
                if kind == "max_pool2d":
                    d = (int(rng.integers(1, 3)), 1) if rng.random() < 0.3 else (1, 1)
                    if d != (1, 1) and p != (0, 0) and dt == torch.quint8 and not cm:
                        continue  # QNNPACK's edge replication (not reproduced, docs/ops.md)
                    attrs = dict(kernel_size=list(k), stride=list(s), padding=list(p),
                                 dilation=list(d), ceil_mode=cm)
                    want = F.max_pool2d(t, k, s, p, d, cm)
                else:
                    cip = bool(rng.random() < 0.5)
                    dov = int(rng.integers(1, 10)) if rng.random() < 0.2 else None
                    attrs = dict(kernel_size=list(k), stride=list(s), padding=list(p),
                                 ceil_mode=cm, count_include_pad=cip, divisor_override=dov)
                    # QNNPACK ignores these two (qrt honours them: fbgemm's result)
                    eng = "fbgemm" if dt == torch.quint8 and not cm and (
                        dov is not None or (not cip and p != (0, 0))) else "qnnpack"
                    torch.backends.quantized.engine = eng
                    want = F.avg_pool2d(t, k, s, p, cm, cip, dov)
                    torch.backends.quantized.engine = "qnnpack"
            except RuntimeError:  # QNNPACK refuses 1x1 pooling; impossible ceil shapes
                continue
        if want.numel() == 0:
            continue
        got = _ours(kind, t, attrs, tuple(want.shape))
        np.testing.assert_array_equal(got, want.int_repr().numpy(),
                                      err_msg=f"{shape} {t.dtype} {attrs}")
        n_cases += 1


def test_pool2d_edges_vs_torch():
    torch.backends.quantized.engine = "qnnpack"
    rng = np.random.default_rng(9)
    t = _qx(rng, (1, 1280, 7, 7), torch.quint8)   # MobileNetV2 head
    for o in ((1, 1), (7, 7), (3, 2), (2, 3)):
        np.testing.assert_array_equal(
            _ours("adaptive_avg_pool2d", t, {"output_size": list(o)}, (1, 1280) + o),
            F.adaptive_avg_pool2d(t, o).int_repr().numpy())
    t = _qx(rng, (1, 64, 31, 33), torch.quint8)   # ResNet stem pool, odd sizes
    want = F.max_pool2d(t, 3, 2, 1)
    np.testing.assert_array_equal(
        _ours("max_pool2d", t, dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1]),
              tuple(want.shape)), want.int_repr().numpy())
    want = F.max_pool2d(t, 3, 2, ceil_mode=True)   # GoogLeNet's
    np.testing.assert_array_equal(
        _ours("max_pool2d", t, dict(kernel_size=[3, 3], stride=[2, 2], ceil_mode=True),
              tuple(want.shape)), want.int_repr().numpy())
    want = F.avg_pool2d(t, 3, 1, 1)                # Inception's
    np.testing.assert_array_equal(
        _ours("avg_pool2d", t, dict(kernel_size=[3, 3], stride=[1, 1], padding=[1, 1]),
              tuple(want.shape)), want.int_repr().numpy())


class _Pools(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q = torch.ao.quantization.QuantStub()
        self.mp = torch.nn.MaxPool2d(3, 2, 1)
        self.ap = torch.nn.AvgPool2d((2, 3), (1, 2), (1, 1), ceil_mode=True)
        self.aa = torch.nn.AdaptiveAvgPool2d((2, 2))
        self.am = torch.nn.AdaptiveMaxPool2d(3)
        self.dq = torch.ao.quantization.DeQuantStub()

    def forward(self, x):
        x = self.q(x)
        a = self.aa(self.ap(self.mp(x)))
        b = F.avg_pool2d(F.max_pool2d(x, 2), 3, 2, 1, ceil_mode=True, count_include_pad=False)
        c = F.adaptive_avg_pool2d(x, 1)
        return self.dq(a), self.dq(b), self.dq(c), self.am(self.dq(x))  # float: no quantized op


def test_pool2d_export_eager(tmp_path):
    import qrt_export
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(0)
    m = _Pools().eval()
    m.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
    torch.ao.quantization.prepare(m, inplace=True)
    m(torch.randn(2, 8, 16, 14))
    torch.ao.quantization.convert(m, inplace=True)
    x = torch.randn(1, 8, 16, 14)
    rep = qrt_export.export(m, x, tmp_path / "p.bin", verbose=False)
    assert all(r["ok"] for r in rep.ops)
    q = qrt.load(tmp_path / "p.bin")
    for xi in (x, torch.randn(2, 8, 13, 21)):
        with torch.no_grad():
            want = [t.numpy() for t in m(xi)]
        got = q(xi.numpy())
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("shape", [(1, 1280, 7, 7), (2, 3, 5, 9), (1, 16, 2, 2), (1, 4, 3, 6)])
def test_global_pool_reads_contiguous_planes_in_place(shape):
    """One window over each whole plane (MobileNet's adaptive_avg_pool2d to 1x1, or an
    avg_pool2d whose kernel is the image) skips im2col for a contiguous input: equal to torch
    (qnnpack), and to the im2col path on the same values through a non-contiguous view."""
    torch.backends.quantized.engine = "qnnpack"
    rng = np.random.default_rng(11)
    t = _qx(rng, shape, torch.quint8)
    h, w = shape[2:]
    for kind, attrs, want in (
            ("adaptive_avg_pool2d", {"output_size": [1, 1]}, F.adaptive_avg_pool2d(t, 1)),
            ("avg_pool2d", dict(kernel_size=[h, w], stride=[h, w], padding=[0, 0],
                                ceil_mode=False, count_include_pad=True, divisor_override=None),
             F.avg_pool2d(t, (h, w)))):
        if (h, w) == (1, 1):
            continue
        got = _ours(kind, t, attrs, tuple(want.shape))
        np.testing.assert_array_equal(got, want.int_repr().numpy(), err_msg=f"{kind} {shape}")
        # the same codes in a transposed buffer: not contiguous, so the im2col path
        codes = np.ascontiguousarray(t.int_repr().numpy().transpose(0, 1, 3, 2))
        x = qrt.from_int_repr(codes, t.q_scale(), t.q_zero_point(), qrt.quint8).transpose(2, 3)
        assert not np.asarray(x.int_repr()).flags.c_contiguous
        y = qrt.from_int_repr(np.zeros(want.shape, np.uint8), t.q_scale(), t.q_zero_point(),
                              qrt.quint8)
        fn, a, kw = pool2d_binding(kind, x, y, attrs)
        fn(*a, **kw)
        np.testing.assert_array_equal(np.asarray(y.int_repr()), got)


def test_pool2d_wide_planes_vs_torch():
    """Planes wider than the vector lengths the direct kernel's row loops use (widths to 150,
    GoogLeNet / Inception / ResNet pool geometry and random ones), max and average, quint8 and
    qint8, ceil mode: == torch."""
    torch.backends.quantized.engine = "qnnpack"
    rng = np.random.default_rng(150)
    cases = [((1, 3, 112, 112), "max_pool2d", dict(kernel_size=[3, 3], stride=[2, 2],
                                                     padding=[1, 1])),
             ((1, 4, 111, 111), "max_pool2d", dict(kernel_size=[3, 3], stride=[2, 2],
                                                     ceil_mode=True)),
             ((1, 5, 35, 35), "avg_pool2d", dict(kernel_size=[3, 3], stride=[1, 1],
                                                   padding=[1, 1])),
             ((1, 5, 28, 28), "max_pool2d", dict(kernel_size=[3, 3], stride=[1, 1],
                                                   padding=[1, 1], ceil_mode=True))]
    for _ in range(40):
        k = [int(rng.integers(1, 6)), int(rng.integers(1, 6))]
        cases.append(((int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(5, 40)),
                       int(rng.integers(17, 150))),
                      "max_pool2d" if rng.random() < 0.5 else "avg_pool2d",
                      dict(kernel_size=k, stride=[int(rng.integers(1, 4)), int(rng.integers(1, 4))],
                           padding=[int(rng.integers(0, k[0] // 2 + 1)),
                                    int(rng.integers(0, k[1] // 2 + 1))],
                           ceil_mode=bool(rng.random() < 0.4))))
    for shape, kind, a in cases:
        for dt in (torch.quint8, torch.qint8):
            t = _qx(rng, shape, dt)
            f = F.max_pool2d if kind == "max_pool2d" else F.avg_pool2d
            want = f(t, a["kernel_size"], a["stride"], a.get("padding", [0, 0]),
                     ceil_mode=a.get("ceil_mode", False))
            got = _ours(kind, t, a, tuple(want.shape))
            np.testing.assert_array_equal(got, want.int_repr().numpy(),
                                          err_msg=f"{shape} {dt} {kind} {a}")





def test_pool2d_threads_same_codes():
    """Calls big enough to split over the thread pool (whole planes per task, a scratch slot
    each) give torch's codes at 1, 2 and 3 threads; the plan re-sizes its scratch when the
    thread count changes between calls."""
    from qrt import _ops
    torch.backends.quantized.engine = "qnnpack"
    rng = np.random.default_rng(3)
    t = _qx(rng, (1, 96, 28, 28), torch.quint8)
    want_max = F.max_pool2d(t, 3, 1, 1, ceil_mode=True).int_repr().numpy()
    want_avg = F.avg_pool2d(t, 3, 2, 1).int_repr().numpy()
    before = qrt.get_num_threads()
    try:
        for n in (1, 2, 3, 1):
            qrt.set_num_threads(n)
            np.testing.assert_array_equal(
                _ours("max_pool2d", t, dict(kernel_size=[3, 3], stride=[1, 1], padding=[1, 1],
                                            ceil_mode=True), want_max.shape), want_max)
            np.testing.assert_array_equal(
                _ours("avg_pool2d", t, dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1]),
                      want_avg.shape), want_avg)
        x = t.int_repr().numpy().reshape(-1)
        p = _ops.Pool2dPlan("max", False, (1, 96, 28, 28), (96 * 784, 784, 28, 1), (28, 28),
                            (3, 3), (1, 1), (1, 1), (1, 1))
        for n in (2, 1, 3):                # one plan across thread counts
            qrt.set_num_threads(n)
            y = np.zeros(want_max.size, np.uint8)
            p.run(x, 0, y, 0)
            np.testing.assert_array_equal(y, want_max.reshape(-1))
    finally:
        qrt.set_num_threads(before)

# SPDX-License-Identifier: Apache-2.0
"""The CuPy backend gives the CPU backend's integers, op by op and for a whole model.

Every test runs twice:
  * ``[cuda]`` (marker ``gpu``): real CuPy on an NVIDIA GPU; skipped without CuPy or a GPU.
  * ``[shim]``: the same backend code with tests/_cupy_shim.py standing in for CuPy, so the
    unchanged CUDA kernels run on the CPU (tools/cuda_host_harness) and the backend's Python side
    (argument order and C types, parameter vectors, the model arena) is checked here too.
References: qrt's CPU backend (quantize/dequantize, and qrt.functional ops when present) and torch
2.13 with the qnnpack engine (qrt's oracle) when torch is installed.  Equality is exact.
"""

import importlib
import os
import sys
import types
import warnings

import numpy as np
import pytest

import qrt
from qrt import backends

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

F32 = np.float32


def _real_cupy():
    try:
        import cupy
    except Exception as e:  # noqa: BLE001 - any import failure means "no CuPy here"
        pytest.skip(f"CuPy is not importable ({e})")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA GPU visible")
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"no usable CUDA GPU ({e})")
    return cupy


@pytest.fixture(scope="module", params=["shim", pytest.param("cuda", marks=pytest.mark.gpu)])
def be(request):
    saved = {k: sys.modules.get(k) for k in ("cupy", "qrt.backends.cupy_backend")}
    saved_loaded = dict(backends._loaded)
    if request.param == "cuda":
        cp = _real_cupy()
    else:
        import cuda_host_harness as H
        import _cupy_shim
        if H.compilers() is None:
            pytest.skip("no C/C++ compiler for the CUDA host harness")
        cp = _cupy_shim.make(H.load())
        sys.modules["cupy"] = cp
    sys.modules.pop("qrt.backends.cupy_backend", None)
    backends._loaded.pop("cupy", None)
    cb = backends.get("cupy")
    assert cb.cp is cp
    yield types.SimpleNamespace(cb=cb, cp=cp, kind=request.param)
    for k, v in saved.items():
        if v is None:
            sys.modules.pop(k, None)
        else:
            sys.modules[k] = v
    backends._loaded.clear()
    backends._loaded.update(saved_loaded)


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.fixture
def torch():
    t = pytest.importorskip("torch")
    old = t.backends.quantized.engine
    t.backends.quantized.engine = "qnnpack"
    warnings.filterwarnings("ignore", message=".*quantized tensor creation.*")
    yield t
    t.backends.quantized.engine = old


def host(be, a):
    return be.cp.asnumpy(a)


def dev_from_torch(be, tq):
    return be.cb.to_device(qrt.from_int_repr(tq.int_repr().numpy(), tq.q_scale(),
                                             tq.q_zero_point(), qrt.quint8))


def qrt_weight(tw):
    ints = tw.int_repr().numpy()
    if "per_channel" in str(tw.qscheme()):
        return qrt.from_int_repr_per_channel(ints, tw.q_per_channel_scales().numpy(),
                                             tw.q_per_channel_zero_points().numpy(), 0, qrt.qint8)
    return qrt.from_int_repr(ints, tw.q_scale(), tw.q_zero_point(), qrt.qint8)


# ---- quantize / dequantize vs qrt's CPU backend ------------------------------------------------
@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
def test_backend_cupy_quantize_dequantize_equal_cpu(be, rng, dtype):
    dt = getattr(qrt, dtype)
    for _ in range(5):
        scale = float(rng.uniform(1e-3, 0.3))
        zp = int(rng.integers(dt.qmin, dt.qmax + 1))
        k = rng.integers(-300, 300, 500).astype(np.float64)
        x = np.concatenate([((k + 0.5 - zp) * float(F32(scale))).astype(F32),
                            rng.normal(0, 20, 500).astype(F32),
                            np.array([np.inf, -np.inf, 0.0, -0.0, 1e30], F32)]).reshape(3, -1)
        cpu = qrt.quantize_per_tensor(x, scale, zp, dt)
        d = be.cb.functional.quantize_per_tensor(be.cp.asarray(x), scale, zp, dt)
        assert d.shape == cpu.shape and d.q_scale() == cpu.q_scale()
        np.testing.assert_array_equal(host(be, d.int_repr()), cpu.int_repr())
        f = host(be, be.cb.functional.dequantize(d))
        np.testing.assert_array_equal(f.view(np.uint32), qrt.dequantize(cpu).view(np.uint32))
        back = d.cpu()
        np.testing.assert_array_equal(back.int_repr(), cpu.int_repr())
        np.testing.assert_array_equal(host(be, be.cb.to_device(cpu).int_repr()), cpu.int_repr())


# ---- ops vs torch qnnpack, and vs qrt's CPU backend ------------------------------------------
def test_backend_cupy_conv1d_equals_torch_qnnpack(be, rng, torch):
    qF = torch.ao.nn.quantized.functional
    for case in range(24):
        g = [1, 2, 4, 6][case % 4]
        depthwise = case % 3 == 0
        cg = 1 if depthwise else int(rng.integers(1, 6))
        c_in, c_out = cg * g, g * int(rng.integers(1, 3))
        K, s, d, p = (int(rng.integers(1, 5)), int(rng.integers(1, 3)), int(rng.integers(1, 3)),
                      int(rng.integers(0, 3)))
        L = int(rng.integers(d * (K - 1) + 1, 30))
        xq = torch.quantize_per_tensor(torch.randn(2, c_in, L) * 3, 0.05, int(rng.integers(0, 256)),
                                       torch.quint8)
        wf = torch.randn(c_out, cg, K)
        if case % 2:
            wq = torch.quantize_per_channel(wf, torch.rand(c_out, dtype=torch.float64) * 0.02
                                            + 0.002, torch.zeros(c_out, dtype=torch.long), 0,
                                            torch.qint8)
        else:
            wq = torch.quantize_per_tensor(wf, 0.01, 0, torch.qint8)
        bias = torch.randn(c_out) if case % 4 else None
        so, zo = float(rng.uniform(0.05, 0.3)), int(rng.integers(0, 256))
        want = qF.conv1d(xq, wq, bias, stride=s, padding=p, dilation=d, groups=g, scale=so,
                         zero_point=zo).int_repr().numpy()
        got = be.cb.functional.conv1d(dev_from_torch(be, xq), qrt_weight(wq),
                                      None if bias is None else bias.numpy(), stride=s,
                                      padding=p, dilation=d, groups=g, scale=so, zero_point=zo)
        np.testing.assert_array_equal(host(be, got.int_repr()), want, err_msg=f"case {case}")


def test_backend_cupy_linear_equals_torch_qnnpack(be, rng, torch):
    for case in range(12):
        rows, c_in, c_out = int(rng.integers(1, 9)), int(rng.integers(1, 70)), \
            int(rng.integers(1, 33))
        xq = torch.quantize_per_tensor(torch.randn(rows, c_in) * 2, 0.03,
                                       int(rng.integers(0, 256)), torch.quint8)
        wq = torch.quantize_per_tensor(torch.randn(c_out, c_in), 0.02, 0, torch.qint8)
        bias = torch.randn(c_out)
        so, zo = float(rng.uniform(0.05, 0.5)), int(rng.integers(0, 255))
        relu = bool(case % 2)
        op = torch.ops.quantized.linear_relu if relu else torch.ops.quantized.linear
        want = op(xq, torch.ops.quantized.linear_prepack(wq, bias), so, zo).int_repr().numpy()
        layer = be.cb.DeviceConv1d.from_qtensor(qrt_weight(wq), bias.numpy(), linear=True)
        got = layer(dev_from_torch(be, xq), so, zo, relu=relu)
        np.testing.assert_array_equal(host(be, got.int_repr()), want)
        if not relu:
            got = be.cb.functional.linear(dev_from_torch(be, xq), qrt_weight(wq), bias.numpy(),
                                          so, zo)
            np.testing.assert_array_equal(host(be, got.int_repr()), want)


def test_backend_cupy_ops_equal_cpu_backend(be, rng):
    """relu, add, add_relu, max/avg pooling (all modes), conv1d, linear(_relu), linear_dynamic:
    device result == qrt.functional's CPU result, bit for bit."""
    f, F = be.cb.functional, qrt.functional
    for case in range(16):
        n, c, L = 2, int(rng.integers(2, 5)), int(rng.integers(8, 40))
        qa = qrt.quantize_per_tensor(rng.normal(0, 4, (n, c, L)).astype(F32), 0.05,
                                     int(rng.integers(0, 256)), qrt.quint8)
        qb = qrt.quantize_per_tensor(rng.normal(0, 4, (n, c, L)).astype(F32), 0.07,
                                     int(rng.integers(0, 256)), qrt.quint8)
        da, db = be.cb.to_device(qa), be.cb.to_device(qb)
        np.testing.assert_array_equal(host(be, f.relu(da).int_repr()), F.relu(qa).int_repr())
        so, zo = float(rng.uniform(0.05, 0.2)), int(rng.integers(0, 255))
        np.testing.assert_array_equal(host(be, f.add(da, db, so, zo).int_repr()),
                                      F.add(qa, qb, so, zo).int_repr())
        np.testing.assert_array_equal(host(be, f.add_relu(da, db, so, zo).int_repr()),
                                      F.add_relu(qa, qb, so, zo).int_repr())
        k, s = int(rng.integers(1, 6)), int(rng.integers(1, 3))
        p, dil, ceil = int(rng.integers(0, k // 2 + 1)), int(rng.integers(1, 3)), bool(case % 2)
        np.testing.assert_array_equal(host(be, f.max_pool1d(da, k, s, p, dil, ceil).int_repr()),
                                      F.max_pool1d(qa, k, s, p, dil, ceil).int_repr())
        cip = bool(case % 3)
        np.testing.assert_array_equal(
            host(be, f.avg_pool1d(da, k, s, p, ceil, cip).int_repr()),
            F.avg_pool1d(qa, k, s, p, ceil, cip).int_repr(), err_msg=f"k{k} s{s} p{p} c{ceil}")
        o = int(rng.integers(1, L + 2))
        np.testing.assert_array_equal(host(be, f.adaptive_avg_pool1d(da, o).int_repr()),
                                      F.adaptive_avg_pool1d(qa, o).int_repr(), err_msg=f"o{o}")
        np.testing.assert_array_equal(host(be, f.hardswish(da, 0.03, 10).int_repr()),
                                      F.hardswish(qa, 0.03, 10).int_repr())
        np.testing.assert_array_equal(host(be, f.sigmoid(da).int_repr()),
                                      F.sigmoid(qa).int_repr())
        q8 = qrt.quantize_per_tensor(rng.normal(0, 3, (n, c, L + 50)).astype(F32), 0.04,
                                     int(rng.integers(-128, 128)), qrt.qint8)
        d8 = be.cb.to_device(q8)
        for got, want in ((f.relu(d8), F.relu(q8)), (f.sigmoid(d8), F.sigmoid(q8)),
                          (f.hardswish(d8, 0.02, -5), F.hardswish(q8, 0.02, -5))):
            assert (got.q_scale(), got.q_zero_point(), got.dtype) == \
                (want.q_scale(), want.q_zero_point(), want.dtype)
            np.testing.assert_array_equal(host(be, got.int_repr()), want.int_repr())
        for dim in (0, 1, -1):
            q8a = qrt.from_int_repr(np.ascontiguousarray(q8.int_repr()[:, :, :L]), 0.05, 3,
                                    qrt.qint8)
            parts = [qa, qb, qa] if case % 2 else [q8a, q8]
            dparts = [be.cb.to_device(t) for t in parts]
            kw = {} if case % 3 == 0 else {"scale": 0.06, "zero_point": parts[0].q_zero_point()}
            try:
                want = F.cat(parts, dim, **kw)
            except ValueError:
                continue  # shapes that do not concatenate along this dim
            got = f.cat(dparts, dim, **kw)
            assert got.shape == want.shape
            np.testing.assert_array_equal(host(be, got.int_repr()), want.int_repr())
        # conv1d (grouped / depthwise / per-channel / asymmetric zero points)
        g = [1, c, 1, c][case % 4]
        cg = c // g
        oc = g * int(rng.integers(1, 3))
        K, st, dl = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
        pd = int(rng.integers(0, 3))
        if L + 2 * pd < dl * (K - 1) + 1:
            pd = K * dl
        w = qrt.quantize_per_channel(rng.normal(0, 1, (oc, cg, K)).astype(F32),
                                     rng.uniform(0.005, 0.02, oc), rng.integers(-3, 4, oc), 0,
                                     qrt.qint8)
        bias = rng.normal(0, 1, oc).astype(F32) if case % 3 else None
        kw = dict(stride=st, padding=pd, dilation=dl, groups=g, scale=0.11, zero_point=77)
        np.testing.assert_array_equal(host(be, f.conv1d(da, w, bias, **kw).int_repr()),
                                      F.conv1d(qa, w, bias, **kw).int_repr(), err_msg=f"{case}")
        # linear family over [rows, features]
        x2 = qrt.quantize_per_tensor(rng.normal(0, 2, (5, c * L)).astype(F32), 0.04, 100,
                                     qrt.quint8)
        w2 = qrt.quantize_per_tensor(rng.normal(0, 1, (9, c * L)).astype(F32), 0.01, 0,
                                     qrt.qint8)
        b2 = rng.normal(0, 1, 9).astype(F32)
        d2 = be.cb.to_device(x2)
        np.testing.assert_array_equal(host(be, f.linear(d2, w2, b2, 0.2, 60).int_repr()),
                                      F.linear(x2, w2, b2, 0.2, 60).int_repr())
        np.testing.assert_array_equal(host(be, f.linear_relu(d2, w2, b2, 0.2, 60).int_repr()),
                                      F.linear_relu(x2, w2, b2, 0.2, 60).int_repr())
        xf = rng.normal(0, 2, (5, c * L)).astype(F32)
        got = host(be, f.linear_dynamic(be.cp.asarray(xf), w2, b2))
        np.testing.assert_array_equal(got.view(np.uint32),
                                      F.linear_dynamic(xf, w2, b2).view(np.uint32))


def test_backend_cupy_functional_dispatch(be):
    """qrt.backends.device_dispatch routes a device tensor to the backend's op."""
    @backends.device_dispatch("relu")
    def relu(x):
        return "cpu"
    x = be.cb.to_device(qrt.quantize_per_tensor(np.linspace(-1, 1, 9, dtype=F32), 0.1, 5,
                                                qrt.quint8))
    r = relu(x)
    assert backends.is_device_tensor(r)
    np.testing.assert_array_equal(host(be, r.int_repr()), np.maximum(host(be, x.int_repr()), 5))
    r = qrt.functional.max_pool1d(x.reshape(1, 1, 9), 3)  # the public op, routed
    assert backends.is_device_tensor(r)
    np.testing.assert_array_equal(host(be, r.int_repr()).ravel(),
                                  host(be, x.int_repr()).reshape(3, 3).max(1))


def test_backend_cupy_refuses_what_it_cannot_do(be):
    f = be.cb.functional
    x = be.cb.to_device(qrt.quantize_per_tensor(np.ones((1, 2, 8), F32), 0.1, 3, qrt.quint8))
    y = be.cb.to_device(qrt.quantize_per_tensor(np.ones((1, 2, 4), F32), 0.1, 3, qrt.quint8))
    with pytest.raises(be.cb.UnsupportedOnDevice, match="broadcasting"):
        f.add(x, y, 0.1, 0)
    with pytest.raises(be.cb.UnsupportedOnDevice, match="QNNPACK refuses"):
        f.add(x, x, 1e-4, 0)
    with pytest.raises(TypeError, match="DeviceQTensor"):
        f.relu(np.zeros(3, np.uint8))


# ---- a whole model -------------------------------------------------------------------------
def _entry(i, name, dtype, shape, kind="activation", scale=0.0, zp=0, qscheme=None,
           array=None, batched=False):
    qs = qscheme or ("per_tensor_affine" if dtype in ("quint8", "qint8") else "none")
    return types.SimpleNamespace(index=i, name=name, dtype=dtype, np_dtype=np.dtype(
        {"quint8": np.uint8, "qint8": np.int8, "float32": np.float32}[dtype]), shape=shape,
        kind=kind, batched=batched, qscheme=qs, scale=scale, zero_point=zp, axis=0,
        scales_index=-1, zero_points_index=-1, array=array)


def test_backend_cupy_exported_model_equals_cpu(be, tmp_path, torch):
    """A torch model exported by qrt_export runs on the device with the CPU model's outputs:
    conv+relu, depthwise conv, residual add, max/avg/adaptive pooling, hardswish, cat, flatten,
    linear, sigmoid, dequantize."""
    qrt_export = pytest.importorskip("qrt_export")
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv1d(3, 8, 5, padding=2)
            self.r1 = nn.ReLU()
            self.dw = nn.Conv1d(8, 8, 3, padding=2, dilation=2, groups=8)
            self.mp = nn.MaxPool1d(2)
            self.ap = nn.AvgPool1d(3, 1, 1)
            self.hs = nn.Hardswish()
            self.gp = nn.AdaptiveAvgPool1d(4)
            self.c2 = nn.Conv1d(8, 8, 1)
            self.fc = nn.Linear(2 * 8 * 4, 6)
            self.sg = nn.Sigmoid()

        def forward(self, x):
            y = self.r1(self.c1(x))
            y = torch.relu(self.dw(y) + y)
            y = self.gp(self.hs(self.ap(self.mp(y))))
            y = torch.cat([y, self.c2(y)], 1)
            return self.sg(self.fc(torch.flatten(y, 1)))

    torch.manual_seed(0)
    ex = torch.randn(2, 3, 32)
    path = str(tmp_path / "net.bin")
    qrt_export.export(Net().eval(), ex, path, calibration_data=[torch.randn(4, 3, 32)],
                      check=False, verbose=False)
    cpu = qrt.load(path)
    dev = qrt.load(path, device="cuda")
    assert isinstance(dev, be.cb.DeviceModel)
    kinds = {n.label for n in dev.graph.nodes}
    assert {"conv1d+relu", "conv1d", "linear", "max_pool1d", "avg_pool1d", "hardswish",
            "adaptive_avg_pool1d", "sigmoid", "cat"} <= kinds, kinds
    rng = np.random.default_rng(5)
    for batch in (2, 5, 2):
        x = rng.normal(0, 1, (batch, 3, 32)).astype(F32)
        want = cpu(x)
        got = dev(x)
        np.testing.assert_array_equal(np.asarray(got).view(np.uint32),
                                      np.asarray(want).view(np.uint32))
        got_dev = dev(be.cp.asarray(x), as_cupy=True)
        np.testing.assert_array_equal(host(be, got_dev), want)


def test_backend_cupy_model_refuses_ops_without_kernels(be, tmp_path):
    from qrt._format.reader import read_blob
    from qrt_export import BlobBuilder
    qrt.register_op("gpu_less", lambda x: x, overwrite=True)
    try:
        b = BlobBuilder()
        x = b.activation("in", "quint8", (1, 4), scale=0.1, zero_point=0)
        y = b.activation("out", "quint8", (1, 4), scale=0.1, zero_point=0)
        b.op("custom", "c0", [x], [y], attrs={"op": "gpu_less", "attrs": {}})
        b.inputs, b.outputs = [x], [y]
        b.write(tmp_path / "c.bin")
        with pytest.raises(be.cb.UnsupportedOnDevice, match="no GPU kernel for op 0 'custom'"):
            be.cb.DeviceModel(read_blob(tmp_path / "c.bin"))
    finally:
        qrt.unregister_op("gpu_less")
    # an add QNNPACK refuses (the CPU then runs ATen's float add): refused at load, not at run
    b = BlobBuilder()
    x0 = b.activation("a", "quint8", (1, 4), scale=0.1, zero_point=0)
    x1 = b.activation("b", "quint8", (1, 4), scale=0.1, zero_point=0)
    y = b.activation("y", "quint8", (1, 4), scale=1e-4, zero_point=0)
    b.op("add", "add0", [x0, x1], [y])
    b.inputs, b.outputs = [x0, x1], [y]
    b.write(tmp_path / "a.bin")
    with pytest.raises(be.cb.UnsupportedOnDevice, match="QNNPACK refuses"):
        be.cb.DeviceModel(read_blob(tmp_path / "a.bin"))


def test_backend_cupy_refuses_embedding_models_at_load(be, tmp_path):
    """Index inputs (int64/int32) feed only embedding ops, which have no GPU kernel: such a
    model is refused when it is loaded, naming the op, before any index is read."""
    from qrt._format.reader import read_blob
    from qrt_export import BlobBuilder
    b = BlobBuilder()
    x = b.activation("text", "int64", (5,))
    o = b.activation("offsets", "int64", (2,))
    y = b.activation("y", "float32", (2, 3))
    b.op("embedding_bag", "eb", [x, o], [y], [b.constant("w", np.ones((9, 3), F32))])
    b.inputs, b.outputs = [x, o], [y]
    b.write(tmp_path / "e.bin")
    with pytest.raises(be.cb.UnsupportedOnDevice,
                       match="no GPU kernel for op 0 'embedding_bag'"):
        be.cb.DeviceModel(read_blob(tmp_path / "e.bin"))
    assert qrt.load(tmp_path / "e.bin")(np.arange(5), np.array([0, 2])).shape == (2, 3)


def test_backend_cupy_demo_model_equals_cpu(be):
    """qrt.load(demo) on the CPU and on the device give the same outputs (where both exist).
    ``QRT_DEMO_BIN`` points the test at another blob."""
    demo = os.environ.get("QRT_DEMO_BIN",
                          os.path.join(os.path.dirname(qrt.__file__), "data", "demo.bin"))
    if not os.path.exists(demo):
        pytest.skip(f"{demo} does not exist in this checkout yet")
    cpu = qrt.load(demo)
    dev = qrt.load(demo, device="cuda")
    e = dev.blob.tensors[dev.blob.inputs[0]]
    rng = np.random.default_rng(3)

    def ints(r):
        return [np.asarray(v.int_repr() if hasattr(v, "int_repr") else v).view(np.uint8)
                for v in (r if isinstance(r, tuple) else (r,))]
    for batch in (1, 4):
        shape = ((batch,) + tuple(e.shape[1:])) if e.batched else tuple(e.shape)
        x = rng.normal(0, 1, shape).astype(F32)
        for g, w in zip(ints(dev(x)), ints(cpu(x))):
            np.testing.assert_array_equal(g, w)


def test_backend_cupy_module_kernels_compile_once(be):
    """Kernel modules are compiled once per (device, file) and cached."""
    x = be.cb.to_device(qrt.quantize_per_tensor(np.ones(10, F32), 0.1, 3, qrt.quint8))
    be.cb.functional.relu(x)
    n = len(be.cb._modules)
    be.cb.functional.relu(x)
    assert len(be.cb._modules) == n
    importlib.import_module("qrt.backends")  # still importable alongside

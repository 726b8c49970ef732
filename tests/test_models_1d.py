# SPDX-License-Identifier: Apache-2.0
"""Published 1-D architectures, quantized as their users do, exported and compared with torch.

Quantized outputs are compared exactly with torch's qnnpack engine; float outputs (a float
tail such as log_softmax) within the float-op contract (docs/float-ops.md)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch.ao.quantization import get_default_qconfig_mapping  # noqa: E402
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx  # noqa: E402

import qrt  # noqa: E402
import qrt_export  # noqa: E402
import models_1d as M  # noqa: E402


def fx_quantize(net, shape, n_calib=3, seed=0):
    torch.backends.quantized.engine = "qnnpack"
    g = torch.Generator().manual_seed(seed)
    ex = torch.randn(*shape, generator=g)
    p = prepare_fx(net.eval(), get_default_qconfig_mapping("qnnpack"), (ex,))
    with torch.no_grad():
        for _ in range(n_calib):
            p(torch.randn(*shape, generator=g))
    return convert_fx(p), ex


def test_autoencoder_conv_transpose_fx(tmp_path):
    torch.manual_seed(0)
    tm, ex = fx_quantize(M.AutoEncoder1d(), (2, 1, 64))
    rep = qrt_export.export(tm, ex, tmp_path / "ae.bin", verbose=False)
    assert rep.agreement["qnnpack"]["exact"] == rep.agreement["qnnpack"]["total"]
    m = qrt.load(tmp_path / "ae.bin")
    for L in (64, 128, 200):  # the autoencoder runs at any length its strides allow
        x = torch.randn(3, 1, L)
        with torch.no_grad():
            want = tm(x).numpy()
        np.testing.assert_array_equal(m(x.numpy()), want)


def _float_close(got, want, rtol=1e-5):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= rtol * (np.abs(want).max() + 1)


def test_ecg_resnet_hannun_fx_exact(tmp_path):
    torch.manual_seed(0)
    tm, ex = fx_quantize(M.ECGResNet(), (2, 1, 256))
    rep = qrt_export.export(tm, ex, tmp_path / "ecg.bin", verbose=False)
    assert all(r["ok"] for r in rep.ops)
    m = qrt.load(tmp_path / "ecg.bin")
    for L in (256, 500):
        x = torch.randn(3, 1, L)
        with torch.no_grad():
            want = tm(x).numpy()
        np.testing.assert_array_equal(m(x.numpy()), want)


def test_m5_tutorial_16000_with_log_softmax(tmp_path):
    """torchaudio's M5 (forward verbatim: F.avg_pool1d(x, x.shape[-1]), permute, log_softmax)
    at 16000 samples: quantized part exact, the log_softmax tail within the float contract."""
    torch.manual_seed(0)
    tm, ex = fx_quantize(M.M5(), (2, 1, 16000))
    rep = qrt_export.export(tm, ex, tmp_path / "m5.bin", verbose=False)
    assert all(r["ok"] for r in rep.ops)
    m = qrt.load(tmp_path / "m5.bin")
    x = torch.randn(2, 1, 16000)
    with torch.no_grad():
        want = tm(x).numpy()
    _float_close(m(x.numpy()), want)


def test_m5_tutorial_8000_kernel1_pool_torch_qnnpack_refuses(tmp_path):
    """At the tutorial's 8000 samples the global average pool has kernel 1, which torch's
    qnnpack refuses: the export goes on (that node is checked against torch's x86 engine)
    and qrt runs it; the model equals torch run with the x86 engine for that op."""
    torch.manual_seed(0)
    tm, ex = fx_quantize(M.M5(), (2, 1, 8000))
    rep = qrt_export.export(tm, ex, tmp_path / "m5.bin", verbose=False)
    assert rep.refused and any("avg_pool1d" in k for k in rep.refused), rep.refused
    assert all(r["ok"] or r["note"] for r in rep.ops)
    m = qrt.load(tmp_path / "m5.bin")
    from qrt_export._export import _run_nodes
    import torch.fx as tfx
    x = torch.randn(3, 1, 8000)
    vals = _run_nodes(tm if isinstance(tm, tfx.GraphModule) else tfx.symbolic_trace(tm), (x,),
                      refused={})
    out_node = [n for n in tm.graph.nodes if n.op == "output"][0].args[0]
    _float_close(m(x.numpy()), vals[out_node.name].numpy())

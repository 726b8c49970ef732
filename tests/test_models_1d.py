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

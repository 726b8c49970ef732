# SPDX-License-Identifier: Apache-2.0
"""Quantized LayerNorm (op layer_norm, include/qrt/qlayer_norm.h) against torch 2.13's
torch.ops.quantized.layer_norm, codes equal: row lengths around torch's 32-code vector loop,
quint8 and qint8, with and without weight / bias, tie-heavy output scales, strided input."""

import warnings

import numpy as np
import pytest

from qrt import _ops

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message=".*quantize.*deprecated")
F32 = np.float32


def _torch(x, ns, w, b, eps, sy, zy):
    return torch.ops.quantized.layer_norm(x, ns, w, b, eps, sy, zy)


@pytest.mark.parametrize("n", [1, 3, 31, 32, 33, 64, 100, 192, 200, 768])
@pytest.mark.parametrize("dtype", ["quint8", "qint8"])
@pytest.mark.parametrize("affine", ["none", "both", "weight", "bias"])
def test_codes_equal_torch(n, dtype, affine):
    g = torch.Generator().manual_seed(n * 7 + len(affine))
    rows = 400
    tdt = getattr(torch, dtype)
    zx, zy = (121, 128) if dtype == "quint8" else (-7, 3)
    x = torch.quantize_per_tensor(torch.randn(rows, n, generator=g) * 1.5 + 0.3, 0.037, zx, tdt)
    w = torch.randn(n, generator=g) * 0.25 if affine in ("both", "weight") else None
    b = torch.randn(n, generator=g) * 0.05 if affine in ("both", "bias") else None
    sy = 0.0041 if affine != "none" else 0.0123
    want = _torch(x, [n], w, b, 1e-5, sy, zy).int_repr().numpy()
    xc = x.int_repr().numpy()
    got = np.empty_like(xc)
    lo, hi = (0, 255) if dtype == "quint8" else (-128, 127)
    _ops.qlayer_norm_rows(xc, got, float(F32(0.037)), zx, float(F32(sy)), zy, 1e-5,
                          None if w is None else w.numpy(), None if b is None else b.numpy(),
                          lo, hi)
    assert np.array_equal(got, want), f"{(got != want).sum()} of {got.size} codes differ"


def test_model_through_export(tmp_path):
    """nnq.LayerNorm in an eager-quantized model and F.layer_norm in an FX-quantized one
    export to op layer_norm and agree with torch (qnnpack) exactly."""
    import qrt
    import qrt_export
    torch.backends.quantized.engine = "qnnpack"

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(40, 48)
            self.norm = torch.nn.LayerNorm(48)
            self.fc2 = torch.nn.Linear(48, 8)

        def forward(self, x):
            return self.fc2(self.norm(self.fc(x)))

    torch.manual_seed(0)
    m = M().eval()
    with torch.no_grad():
        m.norm.weight.uniform_(0.5, 1.5)
        m.norm.bias.uniform_(-0.2, 0.2)
    x = torch.randn(3, 10, 40)
    rep = qrt_export.export(m, (x,), str(tmp_path / "ln.bin"),
                            calibration_data=[torch.randn(3, 10, 40) for _ in range(3)])
    assert rep.agreement["qnnpack"]["exact"] == rep.agreement["qnnpack"]["total"], str(rep)
    q = qrt.load(str(tmp_path / "ln.bin"))
    assert "layer_norm" in [n.kind for n in q.graph.nodes]


def test_bad_arguments():
    x = np.zeros((2, 4), np.uint8)
    with pytest.raises(ValueError):
        _ops.qlayer_norm_rows(x, np.zeros((2, 5), np.uint8), 1.0, 0, 1.0, 0, 1e-5, None, None,
                              0, 255)
    with pytest.raises(ValueError):
        _ops.qlayer_norm_rows(x, x, 1.0, 0, 1.0, 0, 1e-5, np.zeros(3, F32), None, 0, 255)
    with pytest.raises(ValueError):
        _ops.qlayer_norm_rows(x.T, x.T.copy(), 1.0, 0, 1.0, 0, 1e-5, None, None, 0, 255)

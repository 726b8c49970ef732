# SPDX-License-Identifier: Apache-2.0
"""Self-attention and transformer encoders (tools/qrt_export/rules/attention.py): float and
quantize_dynamic nn.MultiheadAttention / nn.TransformerEncoderLayer / nn.TransformerEncoder
exported and compared with torch within the float contract (docs/float-ops.md)."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

import qrt  # noqa: E402
import qrt_export  # noqa: E402

# |qrt - torch| <= BOUND * max|torch|: the end-to-end float bound of the model tests
BOUND = 1e-5   # (measured: 4.5e-7)


@pytest.fixture(autouse=True)
def _engine():
    before = (torch.backends.quantized.engine, torch.backends.mha.get_fastpath_enabled())
    torch.backends.quantized.engine = "qnnpack"
    # torch's fused encoder fast path cannot run quantize_dynamic layers (it reads
    # linear1.weight.device, a method there): their users turn it off, as here
    torch.backends.mha.set_fastpath_enabled(False)
    yield
    torch.backends.quantized.engine = before[0]
    torch.backends.mha.set_fastpath_enabled(before[1])


def _dyn(m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(m, {nn.Linear}, dtype=torch.qint8)


def _export_run(m, x, tmp_path, dynamic=False):
    p = str(tmp_path / "m.bin")
    qrt_export.export(m, x, p, keep_float=not dynamic, verbose=False)
    q = qrt.load(p)
    with torch.no_grad():
        want = m(x)
    want = want[0] if isinstance(want, tuple) else want
    got = q(x.numpy())
    err = float(np.abs(np.asarray(got, np.float64) - want.numpy()).max())
    assert got.shape == tuple(want.shape)
    assert err <= BOUND * float(want.abs().max()), err
    return q, err


class MHA(nn.Module):
    def __init__(self, batch_first, need_weights):
        super().__init__()
        self.a = nn.MultiheadAttention(64, 2, batch_first=batch_first)
        self.proj = nn.Linear(64, 64)
        self.nw = need_weights

    def forward(self, x):
        y, _ = self.a(x, x, x, need_weights=self.nw)
        return self.proj(y)


@pytest.mark.parametrize("batch_first,need_weights,dynamic",
                         [(True, False, False), (False, True, False), (True, True, True)])
def test_mha(tmp_path, batch_first, need_weights, dynamic):
    torch.manual_seed(0)
    m = MHA(batch_first, need_weights).eval()
    if dynamic:
        m = _dyn(m)
    x = torch.randn(2, 16, 64)
    _export_run(m, x, tmp_path, dynamic)


@pytest.mark.parametrize("ff,norm_first,act", [(128, False, "relu"), (256, True, "gelu"),
                                               (128, True, "relu"), (256, False, "gelu")])
def test_encoder_layer(tmp_path, ff, norm_first, act):
    torch.manual_seed(1)
    m = nn.Sequential(nn.TransformerEncoderLayer(64, 2, ff, batch_first=True,
                                                 norm_first=norm_first, activation=act)).eval()
    _export_run(_dyn(m), torch.randn(2, 12, 64), tmp_path, True)


def test_attention_refusals(tmp_path):
    class Masked(nn.Module):   # masks: tests/test_transformer_masks.py; a bool input here
        def __init__(self):
            super().__init__()
            self.a = nn.MultiheadAttention(64, 2, batch_first=True)

        def forward(self, x, mask):
            return self.a(x, x, x, key_padding_mask=mask, need_weights=False)[0]

    class Cross(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.MultiheadAttention(64, 2, batch_first=True)

        def forward(self, x, y):
            return self.a(x, y, y, need_weights=False)[0]
    class Weights(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.MultiheadAttention(64, 2, batch_first=True)

        def forward(self, x):
            y, w = self.a(x, x, x)
            return y, w
    x = torch.randn(1, 8, 64)
    with pytest.raises(qrt_export.UnsupportedError, match="attention weights used"):
        qrt_export.export(Weights().eval(), x, str(tmp_path / "c.bin"), keep_float=True,
                          verbose=False)
    with pytest.raises(qrt_export.UnsupportedError, match="bool"):
        qrt_export.export(Masked().eval(), (x, torch.zeros(1, 8, dtype=torch.bool)),
                          str(tmp_path / "a.bin"), keep_float=True, verbose=False)
    with pytest.raises(qrt_export.UnsupportedError, match="self-attention"):
        qrt_export.export(Cross().eval(), (x, x), str(tmp_path / "b.bin"), keep_float=True,
                          verbose=False)


class KWT(nn.Module):
    """Keyword Transformer (Berg et al. 2021) style: patch Linear over mel frames, a class
    token and positional embedding, a TransformerEncoder, the class token's head."""

    def __init__(self, n_mels=40, frames=63, dim=64, depth=4, heads=2, ff=128, classes=12,
                 norm_first=False, act="gelu"):
        super().__init__()
        self.patch = nn.Linear(n_mels, dim)
        self.cls = nn.Parameter(torch.randn(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, frames + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, ff, batch_first=True,
                                           norm_first=norm_first, activation=act)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # enable_nested_tensor with norm_first
            self.encoder = nn.TransformerEncoder(layer, depth)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):                     # [B, frames, n_mels]
        x = self.patch(x)
        cls = self.cls.expand(x.shape[0], -1, -1)
        x = torch.cat((cls, x), dim=1) + self.pos
        x = self.encoder(x)
        return self.head(self.norm(x[:, 0]))


@pytest.mark.parametrize("norm_first,act,ff,dynamic", [(False, "gelu", 128, True),
                                                       (True, "relu", 256, True),
                                                       (False, "relu", 128, False)])
def test_kwt_end_to_end(tmp_path, norm_first, act, ff, dynamic):
    torch.manual_seed(2)
    m = KWT(norm_first=norm_first, act=act, ff=ff).eval()
    if dynamic:
        m = _dyn(m)
    x = torch.randn(2, 63, 40)
    q, _ = _export_run(m, x, tmp_path, dynamic)
    # another batch size runs (the batch dim follows the input)
    x3 = torch.randn(3, 63, 40)
    with torch.no_grad():
        want = m(x3).numpy()
    got = q(x3.numpy())
    assert np.abs(got - want).max() <= BOUND * np.abs(want).max()
    for bad in (np.zeros((1, 62, 40), np.float32), np.zeros((1, 63, 41), np.float32),
                np.zeros((63, 40), np.float32)):
        with pytest.raises(ValueError):
            q(bad)

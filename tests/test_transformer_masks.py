"""Attention masks in the MultiheadAttention / TransformerEncoder(Layer) lowering
(tools/qrt_export/rules/attention.py): bool and float attn_mask (2-d, 3-d), key_padding_mask,
causal masks made in forward(), as constants and as model inputs, compared with torch within
the float contract (docs/float-ops.md), fully masked rows NaN as torch."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

import qrt  # noqa: E402
import qrt_export  # noqa: E402

BOUND = 1e-5   # |qrt - torch| <= BOUND * max|torch| (test_transformer.py's bound)
B, L, E, HEADS = 2, 6, 16, 2
INF = float("-inf")


@pytest.fixture(autouse=True)
def _slow_path():
    before = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    yield
    torch.backends.mha.set_fastpath_enabled(before)


def _kpm_bool():
    return torch.tensor([[False] * 4 + [True] * 2, [False] * 5 + [True]])


def _check(m, ins, tmp_path):
    p = str(tmp_path / "m.bin")
    qrt_export.export(m, tuple(ins), p, keep_float=True, verbose=False)
    q = qrt.load(p)
    with torch.no_grad():
        want = m(*ins)
    got = q(*[a.numpy() for a in ins])
    assert got.shape == tuple(want.shape)
    ok = ~np.isnan(want.numpy())
    assert np.array_equal(np.isnan(got), ~ok)
    err = float(np.abs(got[ok].astype(np.float64) - want.numpy()[ok]).max())
    assert err <= BOUND * float(want[torch.from_numpy(ok)].abs().max()), err
    return q


class ConstMask(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.a = nn.MultiheadAttention(E, HEADS, batch_first=True)
        self.kind = kind
        self.register_buffer("kpm", _kpm_bool())
        self.register_buffer("fkpm", torch.zeros(B, L).masked_fill(_kpm_bool(), INF))
        self.register_buffer("am3", torch.randn(B * HEADS, L, L))
        self.register_buffer("bool3", torch.rand(B * HEADS, L, L) > 0.7)

    def forward(self, x):
        k = self.kind
        if k == "causal":
            mk = nn.Transformer.generate_square_subsequent_mask(x.size(1))
            return self.a(x, x, x, attn_mask=mk, is_causal=True, need_weights=False)[0]
        if k == "bool_kpm":
            return self.a(x, x, x, key_padding_mask=self.kpm)[0]
        if k == "float_kpm_and_bool_causal":
            causal = torch.ones(L, L, dtype=torch.bool).triu(1)
            return self.a(x, x, x, key_padding_mask=self.fkpm, attn_mask=causal)[0]
        if k == "float3":
            return self.a(x, x, x, attn_mask=self.am3, need_weights=False)[0]
        return self.a(x, x, x, attn_mask=self.bool3)[0]   # bool 3-d


@pytest.mark.parametrize("kind", ["causal", "bool_kpm", "float_kpm_and_bool_causal", "float3",
                                  "bool3"])
def test_constant_masks(tmp_path, kind):
    torch.manual_seed(0)
    q = _check(ConstMask(kind).eval(), [torch.randn(B, L, E)], tmp_path)
    # a mask made in forward() from x.size() folds into the file: no op for it
    assert all(n.op.name not in ("custom",) for n in q.graph.nodes)


class InputMasks(nn.Module):
    def __init__(self, batch_first):
        super().__init__()
        self.a = nn.MultiheadAttention(E, HEADS, batch_first=batch_first)

    def forward(self, x, am, kpm):
        return self.a(x, x, x, attn_mask=am, key_padding_mask=kpm)[0]


@pytest.mark.parametrize("batch_first", [True, False])
def test_float_masks_as_inputs_and_fully_masked_rows(tmp_path, batch_first):
    torch.manual_seed(1)
    m = InputMasks(batch_first).eval()
    x = torch.randn(B, L, E) if batch_first else torch.randn(L, B, E)
    am = torch.randn(L, L)
    kpm = torch.zeros(B, L).masked_fill(_kpm_bool(), INF)
    q = _check(m, [x, am, kpm], tmp_path)
    kpm2 = kpm.clone()
    kpm2[1] = INF               # a fully masked batch row: NaN, as torch
    am2 = nn.Transformer.generate_square_subsequent_mask(L)
    with torch.no_grad():
        want = m(x, am2, kpm2).numpy()
    got = q(x.numpy(), am2.numpy(), kpm2.numpy())
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.isnan(want).any()
    ok = ~np.isnan(want)
    assert np.abs(got[ok] - want[ok]).max() <= BOUND * np.abs(want[ok]).max()


def test_bool_mask_input_is_refused(tmp_path):
    """qrt has no bool tensors: a bool mask input is refused (the float form is taken)."""
    m = InputMasks(True).eval()
    x, am, kpm = torch.randn(B, L, E), torch.zeros(L, L), _kpm_bool()
    with pytest.raises(Exception, match="bool"):
        qrt_export.export(m, (x, am, kpm), str(tmp_path / "m.bin"), keep_float=True,
                          verbose=False)


def _encoder():
    layer = nn.TransformerEncoderLayer(E, HEADS, 32, batch_first=True, dropout=0.0)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=True)


class Enc(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.e, self.kind = _encoder(), kind
        self.register_buffer("kpm", _kpm_bool())

    def forward(self, x):
        if self.kind == "causal":
            mk = nn.Transformer.generate_square_subsequent_mask(x.size(1))
            return self.e(x, mask=mk, is_causal=True)
        return self.e(x, src_key_padding_mask=self.kpm)


class EncInput(Enc):
    def forward(self, x, kpm):
        return self.e(x, src_key_padding_mask=kpm)


@pytest.mark.parametrize("fast", [False, True], ids=["slow_path", "nested_tensor_path"])
@pytest.mark.parametrize("kind", ["causal", "const_kpm", "input_kpm"])
def test_encoder_masks(tmp_path, fast, kind):
    """torch's nested-tensor path (fast path on, eval, no grad) zeroes padded positions: the
    lowering follows what torch returned at export."""
    torch.manual_seed(2)
    torch.backends.mha.set_fastpath_enabled(fast)
    m = (EncInput if kind == "input_kpm" else Enc)(kind).eval()
    x = torch.randn(B, L, E)
    ins = [x] + ([torch.zeros(B, L).masked_fill(_kpm_bool(), INF)] if kind == "input_kpm"
                 else [])
    _check(m, ins, tmp_path)


def test_encoder_layer_src_mask(tmp_path):
    torch.manual_seed(3)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.TransformerEncoderLayer(E, HEADS, 32, dropout=0.0, norm_first=True)
            self.register_buffer("kpm", _kpm_bool())

        def forward(self, x):
            mk = nn.Transformer.generate_square_subsequent_mask(x.size(0))
            return self.l(x, src_mask=mk, src_key_padding_mask=self.kpm)
    _check(M().eval(), [torch.randn(L, B, E)], tmp_path)

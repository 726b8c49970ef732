# SPDX-License-Identifier: Apache-2.0
"""conv_transpose1d == torch's quantized ConvTranspose1d (qnnpack), bit for bit, for every
stride, padding, output_padding, dilation and groups; and at other input lengths."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
from torch.ao.quantization import (DeQuantStub, QuantStub, convert, get_default_qconfig,  # noqa
                                   prepare)

import qrt  # noqa: E402
import qrt_export  # noqa: E402


class Net(nn.Module):
    def __init__(self, c_in, c_out, k, **kw):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.c = nn.ConvTranspose1d(c_in, c_out, k, **kw)

    def forward(self, x):
        return self.dq(self.c(self.q(x)))


def _quantized(net, shape, seed):
    torch.backends.quantized.engine = "qnnpack"
    net.eval().qconfig = get_default_qconfig("qnnpack")
    p = prepare(net)
    g = torch.Generator().manual_seed(seed)
    for _ in range(3):
        p(torch.randn(*shape, generator=g) * 2)
    return convert(p)


CASES = [  # c_in, c_out, k, stride, padding, output_padding, dilation, groups, L
    (4, 6, 5, 3, 2, 1, 2, 2, 10), (3, 5, 3, 1, 0, 0, 1, 1, 7), (2, 2, 4, 2, 1, 1, 1, 1, 9),
    (8, 8, 3, 2, 1, 1, 1, 8, 16), (6, 4, 1, 4, 0, 3, 1, 2, 5), (5, 7, 7, 1, 3, 0, 3, 1, 20),
    (4, 4, 2, 2, 0, 0, 1, 4, 1), (3, 6, 5, 5, 4, 2, 1, 3, 6), (2, 3, 3, 3, 2, 0, 1, 1, 11),
    (16, 8, 8, 4, 2, 0, 1, 1, 25),
]


@pytest.mark.parametrize("case", CASES)
def test_conv_transpose1d_equals_torch_qnnpack(tmp_path, case):
    ci, co, k, s, p, op, d, g, L = case
    torch.manual_seed(sum(case))
    tm = _quantized(Net(ci, co, k, stride=s, padding=p, output_padding=op, dilation=d,
                        groups=g), (4, ci, L), seed=1)
    x = torch.randn(3, ci, L) * 2
    path = tmp_path / "ct.bin"
    rep = qrt_export.export(tm, x, path, verbose=False)
    assert rep.agreement["qnnpack"]["exact"] == rep.agreement["qnnpack"]["total"] > 0
    m = qrt.load(path)
    assert [n.kind for n in m.graph.nodes] == ["quantize", "conv_transpose1d", "dequantize"]
    for L2 in (L, L + 3, 2 * L + 1):   # other lengths: the shape follows the input
        x2 = torch.randn(2, ci, L2) * 2
        with torch.no_grad():
            want = tm(x2).numpy()
        np.testing.assert_array_equal(m(x2.numpy()), want)


class AmpNet(nn.Module):
    def __init__(self, o):
        super().__init__()
        self.c = nn.Conv1d(3, 5, 3)
        self.p = nn.AdaptiveMaxPool1d(o)
        self.fc = nn.Linear(5 * o, 4)

    def forward(self, x):
        return self.fc(torch.flatten(self.p(torch.relu(self.c(x))), 1))


@pytest.mark.parametrize("o", [1, 3, 7, 13])
def test_adaptive_max_pool1d_fx_equals_torch(tmp_path, o):
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(o)
    net = AmpNet(o).eval()
    x = torch.randn(2, 3, 20)
    p = prepare_fx(net, get_default_qconfig_mapping("qnnpack"), (x,))
    for _ in range(3):
        p(torch.randn(4, 3, 20))
    tm = convert_fx(p)
    path = tmp_path / "amp.bin"
    qrt_export.export(tm, x, path, verbose=False)
    m = qrt.load(path)
    assert "adaptive_max_pool1d" in [n.kind for n in m.graph.nodes]
    with torch.no_grad():
        np.testing.assert_array_equal(m(x.numpy()), tm(x).numpy())


def test_adaptive_max_pool1d_bins_match_torch_float():
    from qrt.ops.adaptive_max_pool import _bins
    rng = np.random.default_rng(0)
    for L in (1, 2, 5, 17, 64):
        for o in (1, 2, 3, 7, 16, 70):
            x = rng.standard_normal((2, 3, L)).astype(np.float32)
            want = torch.nn.functional.adaptive_max_pool1d(torch.from_numpy(x), o).numpy()
            got = x[..., _bins(L, o)].max(-1)
            np.testing.assert_array_equal(got, want)

# SPDX-License-Identifier: Apache-2.0
"""qrt_export.export on models still in their QAT state (FakeQuantize modules).

Eager ``prepare_qat`` (with fused Conv+BN+ReLU) and FX ``prepare_qat_fx`` models are trained
for a few steps, then exported directly; qrt's outputs must equal, bit for bit, those of the
model torch.ao converts (``convert`` / ``convert_fx``) under qnnpack. The user's model is not
changed by the export.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import qrt

pytestmark = pytest.mark.filterwarnings("ignore")


def _train(torch, model, steps=6, shape=(8, 3, 16)):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1)
    model.train()
    for _ in range(steps):
        x = torch.randn(shape, generator=g) * 2
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


def _eager_qat(torch):
    import torch.nn as nn
    from torch.ao.quantization import (DeQuantStub, QuantStub, fuse_modules_qat,
                                       get_default_qat_qconfig, prepare_qat)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.dq = QuantStub(), DeQuantStub()
            self.conv = nn.Conv1d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm1d(8)
            self.relu = nn.ReLU()
            self.pool = nn.AdaptiveAvgPool1d(4)
            self.fc = nn.Linear(32, 5)

        def forward(self, x):
            x = self.pool(self.relu(self.bn(self.conv(self.q(x)))))
            return self.dq(self.fc(x.flatten(1)))
    torch.manual_seed(0)
    m = Net().train()
    m = fuse_modules_qat(m, [["conv", "bn", "relu"]])
    m.qconfig = get_default_qat_qconfig("qnnpack")
    return prepare_qat(m)


def _fx_qat(torch):
    import torch.nn as nn
    from torch.ao.quantization import get_default_qat_qconfig_mapping
    from torch.ao.quantization.quantize_fx import prepare_qat_fx

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(3, 6, 5, padding=2)
            self.bn = nn.BatchNorm1d(6)
            self.conv2 = nn.Conv1d(6, 6, 3, padding=1)
            self.fc = nn.Linear(6 * 16, 4)

        def forward(self, x):
            y = torch.relu(self.bn(self.conv(x)))
            y = y + self.conv2(y)
            return self.fc(torch.flatten(y, 1))
    torch.manual_seed(0)
    m = Net().train()
    return prepare_qat_fx(m, get_default_qat_qconfig_mapping("qnnpack"),
                          (torch.randn(2, 3, 16),))


def _reference(torch, qat_model, fx):
    from torch.ao.quantization import convert
    from torch.ao.quantization.quantize_fx import convert_fx
    m = copy.deepcopy(qat_model).eval()
    return convert_fx(m) if fx else convert(m)


@pytest.mark.parametrize("fx", [False, True], ids=["eager", "fx"])
def test_qat_model_exports_and_matches_converted(qnnpack, tmp_path, rng, fx):
    torch = qnnpack
    from torch.ao.quantization.fake_quantize import FakeQuantizeBase

    import qrt_export
    qat = _train(torch, _fx_qat(torch) if fx else _eager_qat(torch))
    state = {k: v.clone() for k, v in qat.state_dict().items() if isinstance(v, torch.Tensor)}
    n_fq = sum(isinstance(m, FakeQuantizeBase) for m in qat.modules())
    assert n_fq > 3 and qat.training
    ref = _reference(torch, qat, fx)
    x = torch.from_numpy((rng.standard_normal((4, 3, 16)) * 2).astype(np.float32))
    rep = qrt_export.export(qat, x, tmp_path / "m.bin", verbose=False)
    agree = rep.agreement["qnnpack"]
    assert agree["exact"] == agree["total"] > 0, agree
    # the user's model is untouched: still QAT, same parameters and state
    assert sum(isinstance(m, FakeQuantizeBase) for m in qat.modules()) == n_fq
    for k, v in qat.state_dict().items():
        if k in state:
            assert torch.equal(v, state[k]), k
    m = qrt.load(tmp_path / "m.bin")
    assert "QAT-prepared" in m.meta["model_kind"]
    kinds = {n.label for n in m.graph.nodes}
    assert ("conv1d+relu" in kinds) if not fx else ("conv1d" in kinds or "conv1d+relu" in kinds)
    total = 0
    with torch.no_grad():
        for batch in (1, 4, 7):
            xb = torch.from_numpy((rng.standard_normal((batch, 3, 16)) * 2).astype(np.float32))
            want = ref(xb).numpy()
            got = m(xb.numpy())
            np.testing.assert_array_equal(got, want)
            total += want.size
    assert total > 0


def test_qat_without_quant_stubs_is_refused(qnnpack, tmp_path):
    """FakeQuantize modules but nothing torch.ao converts to a quantized module."""
    torch = qnnpack
    import torch.nn as nn
    from torch.ao.quantization import FakeQuantize

    import qrt_export
    m = nn.Sequential(nn.Linear(4, 4), FakeQuantize())
    with pytest.raises(qrt_export.UnsupportedError, match="QAT"):
        qrt_export.export(m, torch.randn(2, 4), tmp_path / "m.bin", verbose=False)


def test_qat_with_unsupported_layer_names_it(qnnpack, tmp_path):
    torch = qnnpack
    import torch.nn as nn
    from torch.ao.quantization import (DeQuantStub, QuantStub, get_default_qat_qconfig,
                                       prepare_qat)

    import qrt_export

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.dq = QuantStub(), DeQuantStub()
            self.bn = nn.BatchNorm3d(2)   # a quantized BatchNorm3d: no qrt op

        def forward(self, x):
            return self.dq(self.bn(self.q(x)))
    m = Net().train()
    m.qconfig = get_default_qat_qconfig("qnnpack")
    m = prepare_qat(m)
    m(torch.randn(2, 2, 3, 4, 4))
    with pytest.raises(qrt_export.UnsupportedError, match="BatchNorm3d"):
        qrt_export.export(m, torch.randn(2, 2, 3, 4, 4), tmp_path / "m.bin", verbose=False)

# SPDX-License-Identifier: Apache-2.0
"""Observers: scales bit-identical and zero points equal to torch.ao.quantization's.

Every configuration (observer kind x dtype x qscheme x reduce_range x custom range, several
batches) is compared with torch when it is installed and with tests/data/observers.npz always.
"""

from __future__ import annotations

import numpy as np
import pytest

import qrt
from qrt import quantization as Q
from conftest import assert_bits_equal, load_golden
from quant_cases import (decode_configs, make_qrt_observer, make_torch_observer,
                         observer_batches, observer_configs)

CONFIGS = observer_configs()


def _ids(cfg):
    cr = f"{cfg['quant_min']}..{cfg['quant_max']}" if "quant_min" in cfg else "default"
    return f"{cfg['kind']}-{cfg['dtype']}-{cfg['qscheme']}-rr{int(cfg['reduce_range'])}-{cr}"


def _compare(torch, cfg, batches):
    to, mo = make_torch_observer(torch, cfg), make_qrt_observer(cfg)
    for b, x in enumerate(batches):
        to(torch.from_numpy(x))
        assert mo(x) is x
        ts, tz = to.calculate_qparams()
        ms, mz = mo.calculate_qparams()
        assert ms.dtype == np.float32 and mz.dtype == np.int64
        assert_bits_equal(ms, ts.numpy().astype(np.float32), f"scale after batch {b}")
        assert_bits_equal(mz, tz.numpy(), f"zero point after batch {b}")


@pytest.mark.parametrize("cfg", [c for c in CONFIGS if not c["refused"]], ids=_ids)
def test_observer_matches_torch(torch, rng, cfg):
    _compare(torch, cfg, observer_batches(rng, 4))


@pytest.mark.parametrize("cfg", [c for c in CONFIGS if c["refused"]], ids=_ids)
def test_observer_refuses_what_torch_refuses(torch, cfg):
    with pytest.raises(NotImplementedError):
        make_torch_observer(torch, cfg)
    with pytest.raises(ValueError, match="reduce_range"):
        make_qrt_observer(cfg)


@pytest.mark.slow
@pytest.mark.parametrize("cfg", [c for c in CONFIGS if not c["refused"]], ids=_ids)
def test_observer_matches_torch_many_batches(torch, rng, cfg):
    for _ in range(10):
        shape = tuple(int(d) for d in rng.integers(1, 9, int(rng.integers(3, 5))))
        _compare(torch, cfg, observer_batches(rng, 6, shape))


EDGE_INPUTS = {
    "zeros": [np.zeros((2, 3, 4), np.float32)],
    "negative_only": [np.full((2, 3, 4), -1000.0, np.float32), np.full((2, 3, 4), -1.0,
                                                                         np.float32)],
    "positive_only": [np.full((2, 3, 4), 3.0, np.float32)],
    "tiny": [np.full((2, 3, 4), 1e-30, np.float32), np.full((2, 3, 4), -1e-38, np.float32)],
    "huge": [np.array([3e38, -3e38] * 12, np.float32).reshape(2, 3, 4)],
    "inf": [np.array([np.inf, 1.0] * 12, np.float32).reshape(2, 3, 4)],
    "neg_inf": [np.array([-np.inf, 1.0] * 12, np.float32).reshape(2, 3, 4)],
    "nan": [np.array([np.nan, 1.0] * 12, np.float32).reshape(2, 3, 4)],
    "float64": [np.linspace(-2, 3, 24).reshape(2, 3, 4)],
}


@pytest.mark.parametrize("what", list(EDGE_INPUTS))
@pytest.mark.parametrize("cfg", [c for c in CONFIGS if not c["refused"]][::11], ids=_ids)
def test_observer_edge_inputs_match_torch(torch, cfg, what):
    """Degenerate ranges, inf/NaN, int32 zero-point overflow (qint32 with negative data)."""
    batches = EDGE_INPUTS[what]
    if cfg.get("ch_axis", 0) not in (0, 1, 2, -1):
        pytest.skip("axis")
    to, mo = make_torch_observer(torch, cfg), make_qrt_observer(cfg)
    for x in batches:
        to(torch.from_numpy(x).float() if x.dtype == np.float64 else torch.from_numpy(x))
        mo(x)
    ts, tz = to.calculate_qparams()
    ms, mz = mo.calculate_qparams()
    assert_bits_equal(ms, ts.numpy().astype(np.float32), "scale")
    assert_bits_equal(mz, tz.numpy(), "zero point")


def test_observer_qint32_zero_point_overflow_matches_torch(torch):
    """round(min/scale) beyond int32 becomes INT32_MIN in torch's .to(torch.int); zp wraps."""
    for data in ([-1000.0, -1.0], [-1000.0, 0.5], [-3e38, -1.0], [-5.0, 7.0]):
        x = np.array(data, np.float32)
        to = torch.ao.quantization.MinMaxObserver(dtype=torch.qint32)
        mo = Q.MinMaxObserver(dtype=qrt.qint32)
        to(torch.from_numpy(x))
        mo(x)
        assert_bits_equal(mo.calculate_qparams()[1], to.calculate_qparams()[1].numpy(), data)


def test_observer_before_any_input_matches_torch(torch):
    for T, M in ((torch.ao.quantization.MinMaxObserver, Q.MinMaxObserver),
                 (torch.ao.quantization.PerChannelMinMaxObserver, Q.PerChannelMinMaxObserver)):
        ts, tz = T().calculate_qparams()
        ms, mz = M().calculate_qparams()
        assert_bits_equal(ms, ts.numpy())
        assert_bits_equal(mz, tz.numpy())


def test_observer_empty_input_is_ignored(torch):
    for M in (Q.MinMaxObserver, Q.MovingAverageMinMaxObserver, Q.PerChannelMinMaxObserver,
              Q.MovingAveragePerChannelMinMaxObserver):
        o = M()
        o(np.zeros((3, 0), np.float32))
        o(np.array([[1.0, -2.0]] * 3, np.float32))
        o(np.zeros((3, 0), np.float32))
        assert np.isfinite(o.calculate_qparams()[0]).all()


def test_observer_golden():
    """Every configuration against the recorded torch results (runs without torch)."""
    g = load_golden("observers.npz")
    cfgs = decode_configs({k[4:]: g[k] for k in g.files if k.startswith("cfg_")})
    assert len(cfgs) == len(CONFIGS)
    batches = list(g["batches"])
    checked = 0
    for i, cfg in enumerate(cfgs):
        if cfg["refused"]:
            with pytest.raises(ValueError):
                make_qrt_observer(cfg)
            continue
        mo = make_qrt_observer(cfg)
        c = int(g["channels"][i])
        for b, x in enumerate(batches):
            mo(x)
            ms, mz = mo.calculate_qparams()
            assert_bits_equal(ms, g["scales"][i, b, :c], f"{_ids(cfg)} batch {b}")
            assert_bits_equal(mz, g["zero_points"][i, b, :c], f"{_ids(cfg)} batch {b}")
            checked += 1
    assert checked >= 700
    assert str(g["torch_version"]).startswith("2.13.0")


def test_constructor_signatures_follow_torch():
    import inspect

    want = {
        "MinMaxObserver": ["dtype", "qscheme", "reduce_range", "quant_min", "quant_max",
                           "factory_kwargs", "eps", "is_dynamic"],
        "MovingAverageMinMaxObserver": ["averaging_constant", "dtype", "qscheme",
                                        "reduce_range", "quant_min", "quant_max", "eps",
                                        "is_dynamic"],
        "PerChannelMinMaxObserver": ["ch_axis", "dtype", "qscheme", "reduce_range", "quant_min",
                                     "quant_max", "factory_kwargs", "eps", "is_dynamic"],
        "MovingAveragePerChannelMinMaxObserver": ["averaging_constant", "ch_axis", "dtype",
                                                  "qscheme", "reduce_range", "quant_min",
                                                  "quant_max", "eps", "is_dynamic"],
    }
    for name, params in want.items():
        sig = inspect.signature(getattr(Q, name).__init__)
        positional = [p.name for p in sig.parameters.values()
                      if p.kind == p.POSITIONAL_OR_KEYWORD][1:]
        assert positional == params, name


def test_qmin_qmax_as_torch():
    assert Q.calculate_qmin_qmax(None, None, qrt.quint8, False) == (0, 255)
    assert Q.calculate_qmin_qmax(None, None, qrt.quint8, True) == (0, 127)
    assert Q.calculate_qmin_qmax(None, None, qrt.qint8, True) == (-64, 63)
    assert Q.calculate_qmin_qmax(None, None, qrt.qint32, True) == (-(2**31), 2**31 - 1)
    assert Q.calculate_qmin_qmax(-100, 100, qrt.qint8, True) == (-50, 50)
    assert Q.calculate_qmin_qmax(0, 15, qrt.quint8, True) == (0, 7)


def test_bad_observer_arguments():
    with pytest.raises(ValueError, match="qscheme"):
        Q.MinMaxObserver(qscheme=qrt.per_channel_affine)
    with pytest.raises(ValueError, match="qscheme"):
        Q.PerChannelMinMaxObserver(qscheme=qrt.per_tensor_affine)
    with pytest.raises(ValueError, match="qscheme"):
        Q.MinMaxObserver(qscheme="per_channel_affine_float_qparams")
    with pytest.raises(TypeError, match="dtype"):
        Q.MinMaxObserver(dtype=np.uint8)
    with pytest.raises(ValueError, match="include 0"):
        Q.MinMaxObserver(quant_min=1, quant_max=10)
    with pytest.raises(ValueError, match="quant_min"):
        Q.MinMaxObserver(dtype=qrt.qint8, quant_min=-200, quant_max=100)
    with pytest.raises(ValueError, match="both"):
        Q.MinMaxObserver(quant_min=0)
    with pytest.raises(ValueError, match="eps"):
        Q.MinMaxObserver(eps=-1.0)
    with pytest.raises(ValueError, match="averaging_constant"):
        Q.MovingAverageMinMaxObserver(averaging_constant=1.5)
    with pytest.raises(TypeError, match="averaging_constant"):
        Q.MovingAverageMinMaxObserver(averaging_constant="0.1")
    with pytest.raises(TypeError, match="ch_axis"):
        Q.PerChannelMinMaxObserver(ch_axis=1.5)
    with pytest.raises(TypeError, match="factory_kwargs"):
        Q.MinMaxObserver(factory_kwargs=3)
    o = Q.PerChannelMinMaxObserver(ch_axis=3)
    with pytest.raises(ValueError, match="ch_axis"):
        o(np.zeros((2, 3), np.float32))
    o = Q.PerChannelMinMaxObserver(ch_axis=0)
    o(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="channels"):
        o(np.zeros((3, 3), np.float32))
    with pytest.raises(TypeError, match="floating"):
        Q.MinMaxObserver()(np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="1-d"):
        Q.PerChannelMinMaxObserver()(np.float32(1.0))


def test_observer_to_quantize_round_trip(rng):
    x = rng.standard_normal((8, 16)).astype(np.float32)
    o = Q.PerChannelMinMaxObserver(ch_axis=0, dtype=qrt.qint8, qscheme=qrt.per_channel_symmetric)
    o(x)
    s, z = o.calculate_qparams()
    q = qrt.quantize_per_channel(x, s, z, 0, qrt.qint8)
    err = np.abs(q.dequantize() - x)
    assert np.all(err <= s[:, None] * 0.5 * (1 + 1e-5) + np.abs(x) * 2.0**-23)

# SPDX-License-Identifier: Apache-2.0
"""The 1-d models of issue 14 and the four ways users quantize them with torch.ao (engine
qnnpack throughout), shared by tests/test_models_flavours.py and benchmarks/models_1d.py.

Flavours:
  eager    QuantWrapper(model), fuse_modules where users would, prepare / calibrate / convert
  fx       prepare_fx / convert_fx with get_default_qconfig_mapping("qnnpack")
  qat      prepare_qat_fx (get_default_qat_qconfig_mapping("qnnpack")), two SGD steps, convert_fx
  qat_eager  QuantWrapper + fuse_modules_qat + prepare_qat, two SGD steps, convert
  dynamic  torch.ao.quantization.quantize_dynamic (nn.Linear dynamic; the rest stays float)

A model that torch itself cannot quantize in a flavour (eager mode and a functional ``+`` or a
float-only op on a quantized tensor) raises :class:`NotApplicable` with torch's own error.
torch is needed; nothing here is imported by qrt.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from dataclasses import dataclass, field
from typing import Callable, List, Tuple

import torch
import torch.nn as nn

import models_1d as M

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=UserWarning)

FLAVOURS = ("eager", "fx", "qat", "qat_eager", "dynamic")


class NotApplicable(Exception):
    """torch cannot quantize this model, as written, in this flavour (the message is torch's)."""


def wav2letter_class():
    """torchaudio's Wav2Letter from its source file (the compiled extension does not load with
    this torch; the model file is pure Python)."""
    spec = importlib.util.find_spec("torchaudio")
    if spec is None:
        return None
    path = os.path.join(os.path.dirname(spec.origin), "models", "wav2letter.py")
    ns: dict = {}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), ns)
    return ns["Wav2Letter"]


@dataclass
class Spec:
    name: str
    build: Callable[[], nn.Module]
    shape: Tuple[int, ...]                 # CI-sized example input (batch first)
    fuse: List[List[str]] = field(default_factory=list)   # fuse_modules groups (eager)
    other_shapes: List[Tuple[int, ...]] = field(default_factory=list)  # fresh-input shapes
    slow: bool = False


def _w2l_fuse(input_type):
    pre = "acoustic_model.1." if input_type == "waveform" else "acoustic_model."
    groups = [[f"{pre}{2 * k}", f"{pre}{2 * k + 1}"] for k in range(11)]
    if input_type == "waveform":
        groups.insert(0, ["acoustic_model.0.0", "acoustic_model.0.1"])
    return groups


def _ecg_fuse():
    g = [["stem.0", "stem.1", "stem.2"]]
    for k in range(4):
        g.append([f"blocks.{k}.conv1", f"blocks.{k}.bn2", f"blocks.{k}.relu2"])
    return g


def _tcn(parametrized):
    def build():
        m = M.TemporalConvNet(3, [8, 8, 16], kernel_size=3, dropout=0.2)
        return M.parametrize_weight_norm(m) if parametrized else m
    return build


def _w2l(input_type, n_features):
    def build():
        return wav2letter_class()(num_classes=29, input_type=input_type,
                                  num_features=n_features)
    return build


SPECS = {s.name: s for s in [
    Spec("wav2letter_waveform", _w2l("waveform", 1), (1, 1, 1600), _w2l_fuse("waveform"),
         [(1, 1, 2400)], slow=True),
    Spec("wav2letter_mfcc", _w2l("mfcc", 13), (1, 13, 24), _w2l_fuse("mfcc"), [(2, 13, 40)],
         slow=True),
    Spec("m5_8000", lambda: M.M5(), (2, 1, 8000),
         [[f"conv{k}", f"bn{k}"] for k in range(1, 5)], [(3, 1, 8000)]),
    Spec("m5_16000", lambda: M.M5(), (2, 1, 16000),
         [[f"conv{k}", f"bn{k}"] for k in range(1, 5)], [(1, 1, 16000)]),
    Spec("ecg_resnet", lambda: M.ECGResNet(), (2, 1, 128), _ecg_fuse(), [(1, 1, 300)]),
    Spec("tcn", _tcn(False), (2, 3, 40), [], [(3, 3, 57)]),
    Spec("tcn_parametrized", _tcn(True), (2, 3, 40), [], [(3, 3, 57)]),
    Spec("imu", lambda: M.IMUNet(), (2, 64, 6),
         [["dw1", "bn1", "relu1"], ["pw1", "bn2", "relu2"], ["dw2", "bn3", "relu3"],
          ["pw2", "bn4", "relu4"]], [(3, 128, 6)]),
    Spec("autoencoder", lambda: M.AutoEncoder1d(), (2, 1, 64),
         [["encoder.0", "encoder.1"], ["encoder.2", "encoder.3"], ["encoder.4", "encoder.5"]],
         [(3, 1, 128)]),
]}


def inputs(shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _set_engine():
    torch.backends.quantized.engine = "qnnpack"


def _train_steps(model, shape, steps=2, seed=1):
    """A couple of SGD steps (the QAT fine-tuning users run), on random data."""
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    for k in range(steps):
        opt.zero_grad()
        out = model(inputs(shape, seed + k))
        loss = out.float().pow(2).mean()
        loss.backward()
        opt.step()
    model.eval()


def _calibrate(model, shape, n=3, seed=10):
    with torch.no_grad():
        for k in range(n):
            model(inputs(shape, seed + k))


def _eager_guard(fn, what):
    try:
        return fn()
    except (RuntimeError, NotImplementedError, AssertionError, TypeError, AttributeError) as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise NotApplicable(f"torch {what}: {type(e).__name__}: {msg[:300]}") from e


def quantize(spec: Spec, flavour: str, seed: int = 0):
    """(quantized torch model, example input) for ``spec`` in ``flavour``."""
    from torch.ao.quantization import (QuantWrapper, convert, fuse_modules, fuse_modules_qat,
                                       get_default_qat_qconfig, get_default_qat_qconfig_mapping,
                                       get_default_qconfig, get_default_qconfig_mapping,
                                       prepare, prepare_qat, quantize_dynamic)
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx, prepare_qat_fx
    _set_engine()
    torch.manual_seed(seed)
    model = spec.build().eval()
    ex = inputs(spec.shape, seed + 100)
    if flavour == "fx":
        p = prepare_fx(model, get_default_qconfig_mapping("qnnpack"), (ex,))
        _calibrate(p, spec.shape)
        return convert_fx(p), ex
    if flavour == "qat":
        p = _eager_guard(lambda: prepare_qat_fx(model.train(),
                                                get_default_qat_qconfig_mapping("qnnpack"),
                                                (ex,)), "prepare_qat_fx")
        _train_steps(p, spec.shape)
        return convert_fx(p.eval()), ex
    if flavour == "dynamic":
        # inplace: torch's own deepcopy refuses a model with the hook-based weight_norm
        return quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8, inplace=True), ex
    if flavour == "eager":
        if spec.fuse:
            model = fuse_modules(model, spec.fuse)
        w = QuantWrapper(model).eval()
        w.qconfig = get_default_qconfig("qnnpack")
        p = _eager_guard(lambda: prepare(w, inplace=True), "eager prepare")
        _eager_guard(lambda: _calibrate(p, spec.shape), "eager prepare (calibration run)")
        q = _eager_guard(lambda: convert(p, inplace=True), "eager convert")
        _eager_guard(lambda: q(ex), "eager convert (quantized run)")
        return q, ex
    if flavour == "qat_eager":
        model.train()
        if spec.fuse:
            model = fuse_modules_qat(model, spec.fuse)
        w = QuantWrapper(model).train()
        w.qconfig = get_default_qat_qconfig("qnnpack")
        p = _eager_guard(lambda: prepare_qat(w, inplace=True), "eager prepare_qat")
        _eager_guard(lambda: _train_steps(p, spec.shape), "eager prepare_qat (training run)")
        q = _eager_guard(lambda: convert(p.eval(), inplace=True), "eager convert")
        _eager_guard(lambda: q(ex), "eager convert (quantized run)")
        return q, ex
    raise ValueError(flavour)


def torch_run(tm, x):
    """torch's output under qnnpack; where qnnpack refuses a weightless node (M5's kernel-1
    average pool at 8000 samples) that node runs under x86, as qrt-export's check does."""
    import torch.fx as fx
    from qrt_export._export import _run_nodes
    _set_engine()
    with torch.no_grad():
        try:
            return tm(x)
        except RuntimeError:
            if not isinstance(tm, fx.GraphModule):
                raise
    vals = _run_nodes(tm, (x,), refused={})
    out = [n for n in tm.graph.nodes if n.op == "output"][0].args[0]
    return vals[out.name]


def export_kwargs(flavour):
    """What users pass to qrt_export.export: quantize_dynamic leaves a model without nn.Linear
    entirely float, exported as float32 ops (keep_float)."""
    return {"keep_float": flavour == "dynamic", "verbose": False}


def float_err(got, want) -> Tuple[float, float]:
    """(max |qrt - torch|, that / (max |torch| + 1))."""
    import numpy as np
    want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    d = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max(initial=0.0))
    return d, d / (float(np.abs(want).max(initial=0.0)) + 1.0)


__all__ = ["FLAVOURS", "SPECS", "Spec", "NotApplicable", "quantize", "inputs", "torch_run",
           "float_err", "wav2letter_class", "export_kwargs"]

# SPDX-License-Identifier: Apache-2.0
"""The vision path against torch's results stored in tests/data/vision_*.npz (no torch
needed: this is what checks the ARM runs under qemu against torch).

``python tools/gen_golden_vision.py`` writes the files from torch 2.13 (layout in its
docstring): quantized conv2d (dense, grouped, depthwise with multiplier, dilated, strided,
asymmetric kernels, per-tensor / per-channel, relu, 1x1 images, depthwise tile edges) and
conv_transpose2d (vision_qconv.npz); the quantized 2-d pools (ceil_mode, count_include_pad,
divisor_override, adaptive, the qnnpack global mean), mul (squeeze-excitation broadcast), add /
add_relu, cat, upsample2d (nearest / nearest-exact / bilinear, NCHW and channels-last) and the
lut tables of hardsigmoid / relu6 / hardtanh (vision_qops.npz); and the float ops a
``quantize_dynamic`` vision model keeps: float_conv2d, float_batch_norm, the float 2-d pools
and upsample2d (vision_float.npz).  Each case runs as a one-op blob through ``qrt.load``:
quantized codes must equal torch's, float32 results lie within the per-element bound stored
with them (docs/float-ops.md's contract)."""

import json
import platform

import numpy as np
import pytest

import qrt
from conftest import load_golden
from qrt_export import BlobBuilder

ARM32 = platform.machine().startswith("arm")  # armv7l: numpy flushes float32 subnormals
FILES = ["vision_qconv.npz", "vision_qops.npz", "vision_float.npz"]


def _model(path, g, i, c):
    b = BlobBuilder()

    def act(name, q, shape):
        dt, s, z = q
        if dt == "float32":
            return b.activation(name, "float32", shape)
        return b.activation(name, dt, shape, scale=s, zero_point=z)
    ins = [act(f"x{k}", q, g[f"c{i}_in{k}"].shape) for k, q in enumerate(c["ins"])]
    y = act("y", c["out"], g[f"c{i}_want"].shape)
    ps = [b.constant(f"op.{n}", g[f"c{i}_p_{n}"]) for n in c["params"]]
    b.op(c["kind"], "op", ins, [y], ps, c["attrs"])
    b.inputs, b.outputs = ins, [y]
    b.write(str(path))
    return qrt.load(path)


def _feed(g, i, c):
    out = []
    for k, (dt, s, z) in enumerate(c["ins"]):
        a = g[f"c{i}_in{k}"]
        out.append(a if dt == "float32" else qrt.from_int_repr(a, s, z, getattr(qrt, dt)))
    return out


def _float_problem(got, want, tol):
    """None, or what is wrong with float32 ``got`` against torch's ``want`` and the bound."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != np.float32:
        return f"shape/dtype {got.shape} {got.dtype} != {want.shape} float32"
    if not np.array_equal(np.isnan(got), np.isnan(want)):
        return "NaN positions differ"
    inf = np.isinf(want)
    if not np.array_equal(got[inf], want[inf]):
        return "infinities differ"
    fin = np.isfinite(want)
    if not np.isfinite(got[fin]).all():
        return "a finite torch value is not finite"
    tol = np.broadcast_to(np.asarray(tol, np.float64), want.shape)
    if ARM32:   # armv7 numpy's NEON float32 loops: bounds x4 there (docs/float-ops.md)
        tol = tol * 4
    d = np.where(fin, np.abs(np.where(fin, got, 0).astype(np.float64) -
                             np.where(fin, want, 0).astype(np.float64)), 0.0)
    bad = fin & ~(d <= tol)
    if ARM32:   # and it flushes subnormal results and intermediates to zero
        bad &= ~((np.abs(want) < 1e-30) & (np.abs(got) < 1e-30))
    if bad.any():
        idx = np.argwhere(bad)[0]
        return (f"{int(bad.sum())} of {want.size} outside the bound; first at {idx.tolist()}: "
                f"{got[tuple(idx)]!r} vs torch {want[tuple(idx)]!r}, bound {tol[tuple(idx)]:.3g}")
    return None


@pytest.mark.parametrize("name", FILES)
def test_vision_golden(tmp_path, name):
    g = load_golden(name)
    meta = json.loads(str(g["meta"]))
    assert len(meta) >= 40
    failures = []
    for i, c in enumerate(meta):
        shapes = [g[f"c{i}_in{k}"].shape for k in range(len(c["ins"]))]
        what = f"case {i} {c['kind']} {c['attrs']} on {shapes} ({c['engine']})"
        try:
            got = _model(tmp_path / f"c{i}.bin", g, i, c)(*_feed(g, i, c))
        except Exception as e:   # every case runs: one report names all that fail
            failures.append(f"{what}: {type(e).__name__}: {e}")
            continue
        want = g[f"c{i}_want"]
        if c["out"][0] == "float32":
            why = _float_problem(got, want, g[f"c{i}_tol"])
        else:
            codes = np.asarray(got.int_repr())
            why = None
            if codes.shape != want.shape or codes.dtype != want.dtype:
                why = f"shape/dtype {codes.shape} {codes.dtype} != {want.shape} {want.dtype}"
            elif not np.array_equal(codes, want):
                bad = codes != want
                idx = np.argwhere(bad)[0]
                why = (f"{int(bad.sum())} of {want.size} codes differ; first at {idx.tolist()}:"
                       f" {codes[tuple(idx)]} vs torch {want[tuple(idx)]}")
        if why:
            failures.append(f"{what}: {why}")
    assert not failures, f"{len(failures)} of {len(meta)} cases:\n" + "\n".join(failures)


def test_vision_golden_files_cover_the_vision_ops():
    """The kinds each file must hold (a regenerated file that lost some fails here)."""
    want = {"vision_qconv.npz": {"conv2d", "conv_transpose2d"},
            "vision_qops.npz": {"max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
                                "adaptive_max_pool2d", "mul", "add", "cat", "upsample2d",
                                "lut", "pad", "permute"},
            "vision_float.npz": {"float_conv2d", "float_batch_norm", "max_pool2d",
                                 "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
                                 "upsample2d"}}
    for name, kinds in want.items():
        g = load_golden(name)
        meta = json.loads(str(g["meta"]))
        assert {c["kind"] for c in meta} == kinds, name
        assert str(g["torch_version"]).startswith("2.13.0"), name

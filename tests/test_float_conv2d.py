# SPDX-License-Identifier: Apache-2.0
"""Issue 15: the float 2-d ops a ``quantize_dynamic`` vision model keeps (torch 2.13 has no
dynamic Conv2d): float_conv2d (every stride, padding int/tuple/'same'/'valid', padding_mode,
dilation, groups, depthwise with multiplier), BatchNorm2d in eval (float_batch_norm), the
float 2-d pools, against torch float32 within docs/float-ops.md's bounds; the depthwise C
kernel bit for bit against its numpy specification; and the seed example, torchvision's
MobileNetV2 through ``quantize_dynamic`` saved whole with torch.save, through the
``qrt-export`` CLI in a subprocess (its note on stderr, ``--calibrate`` to a static model).
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import qrt
from test_float_ops import EPS, run_op, sum_ratio

HERE = os.path.dirname(os.path.abspath(__file__))

# n, ci, co, (kh, kw), (h, w), stride, [top, bottom, left, right], dilation, groups, mode
CONV_CFGS = [
    (1, 3, 8, (3, 3), (10, 12), (1, 1), [1, 1, 1, 1], (1, 1), 1, "zeros"),
    (2, 4, 6, (3, 2), (9, 7), (2, 1), [0, 0, 0, 0], (1, 2), 2, "zeros"),
    (1, 6, 6, (3, 3), (11, 11), (2, 2), [1, 1, 1, 1], (1, 1), 6, "zeros"),     # depthwise s2
    (2, 4, 12, (3, 3), (8, 9), (1, 1), [1, 1, 1, 1], (1, 1), 4, "zeros"),      # multiplier 3
    (1, 5, 5, (5, 5), (12, 10), (1, 3), [2, 2, 2, 2], (2, 1), 5, "zeros"),     # dw, dilation
    (1, 4, 8, (3, 3), (8, 8), (1, 1), [2, 2, 1, 1], (2, 2), 4, "reflect"),
    (2, 4, 4, (1, 1), (5, 6), (1, 1), [0, 0, 0, 0], (1, 1), 1, "zeros"),       # pointwise
    (1, 4, 4, (1, 1), (5, 6), (2, 2), [0, 0, 0, 0], (1, 1), 1, "zeros"),
    (1, 3, 5, (5, 3), (9, 8), (1, 2), [2, 2, 1, 1], (1, 1), 1, "replicate"),
    (1, 3, 6, (3, 3), (6, 5), (1, 1), [3, 3, 2, 2], (1, 1), 3, "circular"),
    (1, 2, 3, (4, 2), (7, 6), (1, 1), [1, 2, 0, 1], (1, 1), 1, "zeros"),       # 'same', even k
    (1, 3, 3, (4, 4), (9, 9), (1, 1), [1, 2, 1, 2], (1, 1), 3, "reflect"),     # dw 'same'
    (1, 1, 1, (7, 7), (7, 7), (1, 1), [0, 0, 0, 0], (1, 1), 1, "zeros"),       # one output
]


def _torch_conv(t, x, w, b, s, p, d, g, mode):
    """torch's float conv for a [top, bottom, left, right] padding in mode ``mode``."""
    F = t.nn.functional
    xt = t.from_numpy(x)
    if any(p):
        xt = F.pad(xt, [p[2], p[3], p[0], p[1]], mode="constant" if mode == "zeros" else mode)
    return F.conv2d(xt, t.from_numpy(w), None if b is None else t.from_numpy(b), s, 0, d, g)


def test_float_conv2d_matches_torch(torch, tmp_path, rng):
    """Random configs, bias or none: |q - t| <= n eps S, n = in/groups x kh x kw + 1."""
    worst = 0.0
    for n, ci, co, k, hw, s, p, d, g, mode in CONV_CFGS:
        x = rng.standard_normal((n, ci) + hw).astype(np.float32)
        w = rng.standard_normal((co, ci // g) + k).astype(np.float32)
        b = rng.standard_normal(co).astype(np.float32)
        for bias in (b, None):
            want = _torch_conv(torch, x, w, bias, s, p, d, g, mode).numpy()
            attrs = dict(stride=list(s), padding=p, dilation=list(d), groups=g,
                         padding_mode=mode)
            got = run_op(tmp_path, "float_conv2d", [x], want.shape, attrs,
                         (w,) if bias is None else (w, bias))
            sc = _torch_conv(torch, np.abs(x).astype(np.float64).astype(np.float32), np.abs(w),
                             None if bias is None else np.abs(bias), s, p, d, g,
                             mode).double().numpy()
            worst = max(worst, sum_ratio(got, want, sc, ci // g * k[0] * k[1] + 1,
                                         f"conv2d {attrs}"))
    assert worst <= 1.0, worst
    # an unbatched (C, H, W) input, as torch's Conv2d takes it
    x = rng.standard_normal((3, 6, 7)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1)
    got = run_op(tmp_path, "float_conv2d", [x], tuple(want.shape),
                 {"padding": [1, 1, 1, 1]}, (w,))
    assert np.abs(got - want.numpy()).max() <= 28 * EPS * np.abs(want.numpy()).max() * 10


def test_float_conv2d_edge_values(torch, tmp_path, rng):
    """NaN and infinities propagate where torch has them (pointwise, depthwise, im2col)."""
    for co, cig, k, g in ((4, 4, 1, 1), (4, 1, 3, 4), (4, 2, 3, 2)):
        x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
        x[0, 0, 1, 1], x[0, 1, 4, 2], x[0, 3, 0, 5] = np.nan, np.inf, -np.inf
        x[0, 2, 2, 2] = 1e30
        w = rng.standard_normal((co, cig, k, k)).astype(np.float32)
        pad = k // 2
        want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                                          padding=pad, groups=g).numpy()
        got = run_op(tmp_path, "float_conv2d", [x], want.shape,
                     {"padding": [pad] * 4, "groups": g}, (w,))
        assert np.array_equal(np.isnan(got), np.isnan(want)), (k, g)
        fin = np.isfinite(want)
        assert np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)])
        sc = torch.nn.functional.conv2d(torch.from_numpy(np.abs(np.nan_to_num(x))).double(),
                                        torch.from_numpy(np.abs(w)).double(), padding=pad,
                                        groups=g).numpy()
        assert sum_ratio(got[fin], want[fin], sc[fin], cig * k * k + 1) <= 1.0


def test_dwconv2d_kernel_is_its_numpy_specification(rng):
    """The depthwise C kernel computes the same bits as the numpy formula it implements."""
    from qrt import _ops
    from qrt.ops.float_nn import conv_steps
    for n, c, m, k, hw, s, d, pads in [(1, 8, 1, (3, 3), (13, 11), (1, 1), (1, 1), 1),
                                       (2, 3, 2, (3, 3), (9, 12), (2, 2), (1, 1), 1),
                                       (1, 4, 3, (5, 3), (15, 9), (3, 1), (2, 3), 2),
                                       (1, 2, 1, (2, 4), (5, 17), (1, 3), (1, 1), 0),
                                       (1, 3, 1, (3, 3), (7, 7), (2, 2), (2, 2), 2),
                                       (2, 5, 1, (3, 3), (4, 5), (3, 3), (1, 1), 1)]:
        x = rng.standard_normal((n, c) + hw).astype(np.float32)
        w = rng.standard_normal((c * m, 1) + k).astype(np.float32)
        b = rng.standard_normal(c * m).astype(np.float32)
        pp = ((pads, pads), (pads, pads))
        ho = (hw[0] + 2 * pads - d[0] * (k[0] - 1) - 1) // s[0] + 1
        wo = (hw[1] + 2 * pads - d[1] * (k[1] - 1) - 1) // s[1] + 1
        spec = np.full((n, c * m, ho, wo), np.nan, np.float32)
        conv_steps(x, spec, w, c, s, pp, d, b, "zeros", use_kernel=False)()
        y = np.full_like(spec, np.nan)
        conv_steps(x, y, w, c, s, pp, d, b, "zeros")()
        assert np.array_equal(y, spec), (c, m, k, s, d)
        # the row-by-row path (no scratch) and the whole-plane path (square strides)
        xp = np.pad(x, ((0, 0), (0, 0), (pads, pads), (pads, pads)))
        w3 = np.ascontiguousarray(w.reshape(c * m, *k))
        geo = (s[0], s[1], d[0], d[1])
        need = _ops.dwconv2d_f32_scratch(xp.shape, w3.shape, spec.shape, *geo)
        assert (need > 0) == (s[0] == s[1])
        for scratch in (None, np.empty(need, np.float32)):
            y = np.full_like(spec, np.nan)
            _ops.dwconv2d_f32(xp, w3, b, y, *geo, scratch)
            assert np.array_equal(y, spec), (c, m, k, s, d, scratch is None)
    with pytest.raises(ValueError, match="kernel rejected"):   # last window outside
        _ops.dwconv2d_f32(np.zeros((1, 2, 4, 4), np.float32), np.zeros((2, 5, 5), np.float32),
                          None, np.zeros((1, 2, 1, 1), np.float32), 1, 1, 1, 1)
    with pytest.raises(ValueError, match="do not match"):
        _ops.dwconv2d_f32(np.zeros((1, 2, 4, 4), np.float32), np.zeros((3, 3, 3), np.float32),
                          None, np.zeros((1, 3, 2, 2), np.float32), 1, 1, 1, 1)


def test_float_pools2d_match_torch(torch, tmp_path, rng):
    """max / avg pooling bit-identical (NaN propagates); adaptive average: bit-identical
    windows, the one-output case within the mean bound (torch computes x.mean((-1, -2)))."""
    F = torch.nn.functional
    x = rng.standard_normal((2, 3, 11, 9)).astype(np.float32)
    x[0, 0, 0, 0], x[1, 1, 3, 3] = np.nan, np.inf
    for kw in [dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], ceil_mode=False),
               dict(kernel_size=[2, 3], stride=[2, 2], padding=[1, 1], ceil_mode=True),
               dict(kernel_size=[3, 2], stride=[1, 2], padding=[0, 1], ceil_mode=True)]:
        want = F.max_pool2d(torch.from_numpy(x), **kw).numpy()
        got = run_op(tmp_path, "max_pool2d", [x], want.shape, dict(kw, dilation=[1, 1]))
        np.testing.assert_array_equal(got, want)
        for cip in (True, False):
            want = F.avg_pool2d(torch.from_numpy(x), count_include_pad=cip, **kw).numpy()
            got = run_op(tmp_path, "avg_pool2d", [x], want.shape,
                         dict(kw, count_include_pad=cip))
            np.testing.assert_array_equal(got, want)
    want = F.max_pool2d(torch.from_numpy(x), 3, 1, 1, dilation=2).numpy()
    got = run_op(tmp_path, "max_pool2d", [x], want.shape,
                 dict(kernel_size=[3, 3], stride=[1, 1], padding=[1, 1], dilation=[2, 2]))
    np.testing.assert_array_equal(got, want)
    x = rng.standard_normal((2, 3, 11, 9)).astype(np.float32)
    for o in [(4, 3), (5, 5), (11, 9)]:
        want = F.adaptive_avg_pool2d(torch.from_numpy(x), o).numpy()
        got = run_op(tmp_path, "adaptive_avg_pool2d", [x], want.shape, {"output_size": list(o)})
        np.testing.assert_array_equal(got, want)
    want = F.adaptive_avg_pool2d(torch.from_numpy(x), 1).numpy()
    got = run_op(tmp_path, "adaptive_avg_pool2d", [x], want.shape, {"output_size": [1, 1]})
    sc = np.abs(x.astype(np.float64)).mean((-1, -2), keepdims=True) + np.abs(want)
    assert sum_ratio(got, want, sc, 99 + 2) <= 1.0


def _close(got, want, rtol=1e-5):
    return np.abs(got - want).max() <= rtol * (np.abs(want).max() + 1)


def test_float_vision_layers_export(torch, tmp_path):
    """A float net of every layer a float vision model keeps (Conv2d in every padding_mode and
    'same'/'valid', BatchNorm2d eval, ReLU6, Hardtanh, pools, dropout, flatten, Linear)
    exports with keep_float and runs within the end-to-end bound at two input sizes."""
    import qrt_export
    nn = torch.nn
    torch.manual_seed(3)
    net = nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU6(),
        nn.Conv2d(8, 8, 3, padding="same", groups=8, padding_mode="reflect"), nn.BatchNorm2d(8),
        nn.Hardtanh(-1.0, 2.0),
        nn.Conv2d(8, 8, (4, 2), padding="same", padding_mode="replicate", dilation=(1, 2)),
        nn.Conv2d(8, 16, 3, padding=(2, 1), padding_mode="circular", groups=2),
        nn.MaxPool2d(3, 2, 1), nn.Conv2d(16, 16, 1, padding="valid"),
        nn.AvgPool2d(2, ceil_mode=True),
        nn.Conv2d(16, 32, 3, padding=1, groups=16), nn.AdaptiveAvgPool2d((1, 1)),
        nn.Dropout(0.2), nn.Flatten(), nn.Linear(32, 10)).eval()
    for mod in net.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.2, 0.2)
    ex = torch.randn(1, 3, 32, 32)
    path = tmp_path / "vision_float.bin"
    qrt_export.export(net, ex, path, verbose=False, keep_float=True)
    m = qrt.load(path)
    kinds = {n.op.name for n in m.graph.nodes}
    assert {"float_conv2d", "float_batch_norm", "float_clamp", "max_pool2d", "avg_pool2d",
            "adaptive_avg_pool2d", "float_linear"} <= kinds, kinds
    for size in (32, 24):
        x = torch.randn(2, 3, size, size)
        with torch.no_grad():
            want = net(x).numpy()
        assert _close(m(x.numpy()), want), size


# ---- the seed example (issue 15) -------------------------------------------------------------
_CLI = ("import sys; sys.path.insert(0, {here!r}); from _torch_models import torchvision; "
        "torchvision(); from qrt_export.__main__ import main; sys.exit(main(sys.argv[1:]))")


def _cli(*args):
    """qrt-export in a subprocess (torchvision's compiled-op registrations stubbed first, as
    every torchvision use in these tests: they do not load with this torch)."""
    return subprocess.run([sys.executable, "-c", _CLI.format(here=HERE)] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=900)


def _seed(torch, tmp_path, size):
    """The issue's script: mobilenet_v2 -> quantize_dynamic({Conv2d, Linear}) -> torch.save of
    the whole module (BatchNorm statistics re-estimated on random inputs so the random-weight
    model's late activations are not all zero)."""
    from _torch_models import bn_recalibrate, torchvision
    tv = torchvision()
    torch.backends.quantized.engine = "qnnpack"   # torch's reference for qrt (ARM's engine)
    torch.manual_seed(0)
    m = tv.models.mobilenet_v2(weights=None).eval()
    m = bn_recalibrate(m, (4, 3, size, size)).eval()
    qm = torch.quantization.quantize_dynamic(m, {torch.nn.Conv2d, torch.nn.Linear},
                                             dtype=torch.qint8)
    torch.save(qm, tmp_path / "quantized_mobilenet_v2.pt")
    g = torch.Generator().manual_seed(1)
    np.save(tmp_path / "x.npy", torch.randn(1, 3, size, size, generator=g).numpy())
    return qm


def _dynamic_bound(torch, qm, x):
    """The end-to-end bound of a float body feeding a dynamic Linear: 1e-5 (max|t| + 1), the
    float bound, plus one input step s_x |w[:, i]| for each classifier input i whose torch value
    lies within the float bound of a rounding boundary of the dynamic quantization (qrt's value
    may round the other way there: the LSB1 case of tests/test_models_flavours.py)."""
    with torch.no_grad():
        f = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(qm.features(x), 1), 1)
    lin = qm.classifier[1]
    w = lin.weight().dequantize().numpy().astype(np.float64)
    fv = f.numpy().astype(np.float64)
    lo, hi = min(fv.min(), 0.0), max(fv.max(), 0.0)
    s = (hi - lo) / 255.0
    tol = 1e-5 * (np.abs(fv).max() + 1) / s + 1e-3      # in steps, scale drift included
    frac = np.abs(((fv - lo) / s) % 1.0 - 0.5)
    near = frac <= tol
    return [1e-5 + s * (np.abs(w) * near[b][None, :]).sum(1) for b in range(len(fv))]


def _check_seed(torch, tmp_path, size):
    qm = _seed(torch, tmp_path, size)
    r = _cli(tmp_path / "quantized_mobilenet_v2.pt", "--input", tmp_path / "x.npy",
             "-o", tmp_path / "m.bin")
    assert r.returncode == 0, r.stderr[-3000:]
    m = qrt.load(tmp_path / "m.bin")
    kinds = [n.op.name for n in m.graph.nodes]
    assert kinds.count("float_conv2d") == 52 and "linear_dynamic" in kinds
    torch.backends.quantized.engine = "qnnpack"
    g = torch.Generator().manual_seed(2)
    for shape in ((1, 3, size, size), (2, 3, size, size)):
        x = torch.randn(*shape, generator=g)
        with torch.no_grad():
            want = qm(x).numpy()
        got = m(x.numpy())
        assert np.abs(want).max() > 0.01
        err = np.abs(got - want)
        bound = _dynamic_bound(torch, qm, x)
        for b in range(len(want)):
            assert (err[b] <= bound[b] + 1e-5 * (np.abs(want).max() + 1)).all(), b
    return r


def test_seed_mobilenet_v2_dynamic_cli(torch, tmp_path):
    """The seed example end to end through the CLI at 64x64; its note names the one command
    that quantizes the model statically, with this call's own files."""
    r = _check_seed(torch, tmp_path, 64)
    notes = [ln.strip() for ln in r.stderr.splitlines() if ln.strip().startswith("note: ")]
    assert len(notes) == 1, r.stderr[-3000:]
    assert "% of the MACs run in float32 ops" in notes[0]
    cmd = (f"qrt-export {tmp_path / 'quantized_mobilenet_v2.pt'} --input {tmp_path / 'x.npy'} "
           f"--calibrate calib.npy -o {tmp_path / 'm.bin'}")
    assert cmd in notes[0], notes[0]
    assert "error" not in r.stderr.lower()


def test_static_hint_only_when_most_macs_are_float(torch, tmp_path):
    """A static int8 model, or a float net whose MACs are mostly quantized, gets no note; the
    report of a mostly-float one holds it (export() API)."""
    import qrt_export
    nn = torch.nn
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(),
                        nn.Linear(8 * 8 * 8, 4)).eval()
    ex = torch.randn(1, 3, 8, 8)
    dyn = torch.quantization.quantize_dynamic(net, {nn.Linear}, dtype=torch.qint8)
    rep = qrt_export.export(dyn, ex, tmp_path / "d.bin", verbose=False)
    # conv 3*9*64*8 = 13824 MACs < linear 2048: float share 87 %
    assert rep.hint.startswith("note: 87 % of the MACs run in float32 ops")
    assert "--calibrate calib.npy" in rep.hint and rep.hint in str(rep)
    net2 = nn.Sequential(nn.Conv2d(3, 2, 1), nn.Flatten(), nn.Linear(2 * 64, 512)).eval()
    dyn2 = torch.quantization.quantize_dynamic(net2, {nn.Linear}, dtype=torch.qint8)
    rep2 = qrt_export.export(dyn2, ex, tmp_path / "d2.bin", verbose=False)
    assert rep2.hint == "" and "note: " not in str(rep2)
    # --calibrate on the dynamic model: a static int8 model, exact vs torch (export checks)
    calib = [torch.randn(4, 3, 8, 8) for _ in range(2)]
    rep3 = qrt_export.export(dyn, ex, tmp_path / "s.bin", calibration_data=calib,
                             verbose=False)
    assert rep3.model_kind.startswith("quantized (quantize_dynamic model quantized statically")
    assert rep3.hint == "" and rep3.float_macs == 0
    kinds = {n.op.name for n in qrt.load(tmp_path / "s.bin").graph.nodes}
    assert "float_conv2d" not in kinds and "linear_dynamic" not in kinds, kinds


@pytest.mark.slow
def test_seed_mobilenet_v2_dynamic_cli_224(torch, tmp_path):
    """The seed example at its published 224x224, and --calibrate on the same file: a static
    int8 model (torch.ao FX, qnnpack), exact vs torch (the CLI's check, exit 0)."""
    _check_seed(torch, tmp_path, 224)
    from _torch_models import torchvision
    torchvision()
    g = torch.Generator().manual_seed(3)
    np.save(tmp_path / "calib.npy", torch.randn(8, 3, 224, 224, generator=g).numpy())
    r = _cli(tmp_path / "quantized_mobilenet_v2.pt", "--input", tmp_path / "x.npy",
             "--calibrate", tmp_path / "calib.npy", "-o", tmp_path / "s.bin")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "quantized statically" in r.stderr and "100.0000 %" in r.stderr
    kinds = {n.op.name for n in qrt.load(tmp_path / "s.bin").graph.nodes}
    assert "float_conv2d" not in kinds and "conv2d" in kinds or "conv_relu2d" in kinds


def test_float_conv2d_refuses_bad_files(tmp_path):
    from qrt_export import BlobBuilder
    for attrs, wshape, why in [({}, (4, 3, 3), "weight must be"),
                               ({"groups": 3}, (4, 1, 3, 3), "weight must be"),
                               ({"padding_mode": "mirror"}, (4, 3, 3, 3), "padding_mode"),
                               ({"stride": [0, 1]}, (4, 3, 3, 3), "stride"),
                               ({"padding": [1, 1]}, (4, 3, 3, 3), "padding")]:
        b = BlobBuilder()
        x = b.activation("x", "float32", (1, 3, 8, 8))
        w = b.constant("w", np.zeros(wshape, np.float32))
        y = b.activation("y", "float32", (1, 4, 6, 6))
        b.op("float_conv2d", "op", [x], [y], [w], attrs)
        b.inputs, b.outputs = [x], [y]
        p = tmp_path / "bad.bin"
        b.write(str(p))
        with pytest.raises(qrt.FormatError, match=why):
            qrt.load(p)

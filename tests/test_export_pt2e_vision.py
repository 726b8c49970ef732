# SPDX-License-Identifier: Apache-2.0
"""torchvision's float MobileNetV2 and ResNet18 through torchao's pt2e flow (qrt issue #15).

``torch.export.export(m, (x,)).module()``, ``prepare_pt2e`` (BatchNorm folded into the convs
there), calibration, ``convert_pt2e``; the converted program exported by ``qrt_export.export``
and, saved with ``torch.export.save``, by the ``qrt-export`` CLI. The contract
(docs/export.md, "pt2e programs" and "2-d models"):

- qrt is bit-exact with torch's integer kernels (qnnpack) on the rewritten graph: op by op
  (``rep.ops``) and end to end on fresh inputs;
- against the program itself (float between dequantize and quantize) every quantized op, from
  the same input codes, gives >= 99.9 % of its codes exactly and never differs by more than
  1 LSB; end to end, those 1-LSB differences travel through the network (reported here, and
  bounded by the program's own quantization error, max |float model - program|).
"""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchao")

sys.path.insert(0, str(Path(__file__).parent))
warnings.filterwarnings("ignore", message=".*torch.ao.quantization.*")

import _pt2e  # noqa: E402
import qrt  # noqa: E402
import qrt_export  # noqa: E402
from _torch_models import bn_recalibrate, torchvision  # noqa: E402
from qrt_export import pt2e  # noqa: E402

EXACT_MIN = 0.999   # op by op, from the same inputs
MAX_LSB = 1
# End to end on fresh inputs the 1-LSB differences of early ops travel through 20-50 layers of
# these random-weight (BatchNorm-recalibrated) models, which amplify any perturbation: the
# program's own output moves as much for 1e-3 noise on the input. Bound: qrt's deviation from
# the program stays below the program's deviation from the float model (its quantization
# error) times QERR_FACTOR (docs/export.md, "2-d models": measured 0.6x / 0.9x at 64x64).
QERR_FACTOR = 1.25


@pytest.fixture(autouse=True, scope="module")
def _torch_one_thread_qnnpack():
    """One torch thread: the export tabulates every lut on single codes (thousands of tiny
    torch calls), which torch's intra-op pool makes ~10^4 x slower on a loaded host. Engine
    qnnpack throughout: the rewritten graph's quantized convs pack their weights under the
    engine current when the exporter builds them, and a conv packed for x86 (fbgemm) runs
    fbgemm's kernel whatever the engine is when it is called later."""
    n, eng = torch.get_num_threads(), torch.backends.quantized.engine
    torch.set_num_threads(1)
    torch.backends.quantized.engine = "qnnpack"
    yield
    torch.set_num_threads(n)
    torch.backends.quantized.engine = eng


def _model(name, size, seed=0):
    tv = torchvision()
    torch.manual_seed(seed)
    m = getattr(tv.models, name)(weights=None)
    return bn_recalibrate(m, (4, 3, size, size)).eval()


def _calib(size, n=3, seed=1):
    """Calibration batches (batch 1: torch.export specialises the example's batch size)."""
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(1, 3, size, size, generator=g) for _ in range(n)]


def _quantize(name, size, quantizer, strict=False):
    m = _model(name, size)
    ex = (torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(2)),)
    c = _pt2e.pt2e_quantize(m, ex, _pt2e.QUANTIZERS[quantizer](), _calib(size), strict=strict)
    return m, c, ex


def _has_float_conv2d():
    from qrt_export.rules import find_function_rule
    return find_function_rule(torch.nn.functional.conv2d) is not None


def _check(rep, min_ops):
    """Op by op: bit-exact with torch qnnpack (rewritten graph); against the program from the
    same input codes >= 99.9 % exact, <= 1 LSB. avg_pool2d is left out of the 99.9 %: the
    average of 2x2 codes is often exactly a half, which the program's float quantize rounds
    with its float noise and the integer average rounds up (docs/export.md)."""
    a = rep.pt2e
    assert a and len(a["ops"]) >= min_ops
    assert all(r["ok"] for r in rep.ops)
    assert a["max_lsb"] <= MAX_LSB, pt2e.format_agreement(a)
    rest = [r for r in a["ops"] if "avg_pool2d" not in r["op"]]
    assert sum(r["exact"] for r in rest) >= EXACT_MIN * sum(r["total"] for r in rest), \
        pt2e.format_agreement(a)


def _kinds(path):
    return {op.kind for op in qrt.load(path)._blob.ops}


def _end_to_end(qm, rep, prog, size, n=2, seed=5, float_model=None, float_out=False,
                float_convs=False):
    """qrt on fresh inputs: == torch's integer kernels (the rewritten graph under qnnpack), and
    against the pt2e program: (% output codes equal, max LSB, max |diff| / max |program|,
    max |float model - program| in LSB: the quantization error, for scale). ``float_out``: the
    last layer is float (within the float bound of torch's); ``float_convs``: float convs feed
    quantizes (x86's conv + add), whose float rounding moves codes at half-LSB boundaries, so
    the end-to-end comparison with torch's graph is only the op-by-op one of the export."""
    g = torch.Generator().manual_seed(seed)
    lsb = qrt_export._export._output_lsb(qm, 0)
    eq = tot = 0
    mx = rel = qerr = 0.0
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = "qnnpack"
    try:
        for _ in range(n):
            x = torch.randn(1, 3, size, size, generator=g)
            y = qm(x.numpy())
            with torch.no_grad():
                ints = rep.torch_model(x)
                ints = ints[0] if isinstance(ints, (tuple, list)) else ints
                t = prog(x).numpy()
                f = None if float_model is None else float_model(x).numpy()
            if float_convs:
                pass
            elif not float_out:   # quantized output: the integers of torch's qnnpack kernels
                np.testing.assert_array_equal(y, ints.numpy())
            else:   # a float output layer (x86 leaves the last linear float): float bound
                assert np.abs(y - ints.numpy()).max() <= 1e-5 * np.abs(ints.numpy()).max()
            d = np.abs(y - t)
            lsb = lsb or 1.0   # a float output: absolute differences
            eq += int((d <= 1e-3 * lsb).sum())
            tot += d.size
            mx = max(mx, float(d.max()) / lsb)
            rel = max(rel, float(d.max()) / float(np.abs(t).max()))
            if f is not None:
                qerr = max(qerr, float(np.abs(f - t).max()) / lsb)
    finally:
        torch.backends.quantized.engine = old
    return 100.0 * eq / tot, mx, rel, qerr


@pytest.mark.parametrize("name,min_ops", [("resnet18", 35), ("mobilenet_v2", 90)])
def test_vision_pt2e_xnnpack_style(tmp_path, name, min_ops, capsys):
    """int8 activations, int8 per-channel symmetric weights (XNNPACK's config): every conv
    (+bn folded, +relu / relu6), depthwise, add (+relu), max / adaptive average pool, flatten
    and linear is a quantized qrt op."""
    size = 64
    m, c, ex = _quantize(name, size, "xnnpack")
    rep = qrt_export.export(c, ex, tmp_path / "m.bin", verbose=False)
    assert rep.model_kind.startswith("pt2e")
    _check(rep, min_ops)
    kinds = _kinds(tmp_path / "m.bin")
    assert {"conv2d", "add", "adaptive_avg_pool2d", "linear"} <= kinds, kinds
    assert not any(k.startswith("float_") for k in kinds), kinds
    qm = qrt.load(tmp_path / "m.bin")
    eq, mx, rel, qerr = _end_to_end(qm, rep, c, size, float_model=m)
    print(f"{name} {size}x{size} XNNPACK-style: " + "; ".join(pt2e.format_agreement(rep.pt2e))
          + f"; fresh inputs end to end: {eq:.1f} % output codes equal, max {mx:.0f} LSB, "
          f"max |diff| / max |program| {rel:.3f}; float model vs program max {qerr:.0f} LSB")
    assert mx <= QERR_FACTOR * qerr
    if name != "resnet18":
        return
    # the same program saved as .pt2 and exported with the CLI: the same blob's results
    from qrt_export.__main__ import main
    path = tmp_path / "m.pt2"
    torch.export.save(torch.export.export(c, ex), path)
    np.save(tmp_path / "x.npy", ex[0].numpy())
    capsys.readouterr()
    assert main([str(path), "--input", str(tmp_path / "x.npy"), "-o",
                 str(tmp_path / "cli.bin")]) == 0
    err = capsys.readouterr().err
    assert "pt2e program" in err and "op by op from the same inputs" in err
    x = torch.randn(1, 3, size, size).numpy()
    np.testing.assert_array_equal(qrt.load(tmp_path / "cli.bin")(x), qm(x))


@pytest.mark.parametrize("name,strict", [("resnet18", True), ("mobilenet_v2", False)])
def test_vision_pt2e_x86_inductor(tmp_path, name, strict):
    """X86InductorQuantizer (uint8 activations, int8 per-channel weights) fuses conv + add
    [+ relu]: the conv's output is not quantized and torch adds it in float. qrt runs such a
    conv as a float op (float_conv2d); until that op is registered the export is refused,
    naming every such conv. ResNet18 is exported with strict=True (tests/_pt2e.py:
    torch 2.13's non-strict export makes the quantizer fail on BasicBlock's reused ReLU)."""
    size = 64
    m, c, ex = _quantize(name, size, "x86", strict=strict)
    if not _has_float_conv2d():
        with pytest.raises(qrt_export.UnsupportedError,
                           match=r"aten\.conv2d\.default '.*' in float \(the quantizer fused it "
                                 r"with the add that follows .*no float conv2d op yet"):
            qrt_export.export(c, ex, tmp_path / "m.bin", verbose=False)
        return
    rep = qrt_export.export(c, ex, tmp_path / "m.bin", verbose=False)
    # x86 leaves the last linear float (float_linear): the output is compared in float
    eq, mx, rel, qerr = _end_to_end(qrt.load(tmp_path / "m.bin"), rep, c, size, float_model=m,
                                    float_out=True, float_convs=True)
    print(f"{name} X86Inductor: " + "; ".join(pt2e.format_agreement(rep.pt2e))
          + f"; end to end max |diff| {mx:.3g} (rel {rel:.3f}), float model vs program {qerr:.3g}")
    _check(rep, 10)
    assert mx <= QERR_FACTOR * qerr


class _Blocks2d(torch.nn.Module):
    """The 2-d patterns of the vision models in one small net: conv + bn + relu, conv + bn +
    relu6, depthwise conv + bn + hardtanh, a residual add (+ relu), max / average / adaptive
    average pools, flatten, linear."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.c1 = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False),
                                nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.c2 = nn.Sequential(nn.Conv2d(8, 16, 1), nn.BatchNorm2d(16), nn.ReLU6(inplace=True))
        self.dw = nn.Sequential(nn.Conv2d(16, 16, 3, padding=(1, 2), dilation=(1, 2),
                                          groups=16), nn.BatchNorm2d(16), nn.Hardtanh(-1.0, 2.0))
        self.c3 = nn.Conv2d(16, 8, 1)
        self.c4 = nn.Conv2d(8, 8, (3, 1), padding=(1, 0))
        self.relu = nn.ReLU()
        self.avg = nn.AvgPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = self.pool(self.c1(x))
        z = self.c3(self.dw(self.c2(y)))
        y = self.relu(self.c4(y) + z)
        y = self.gap(self.avg(y))
        return self.fc(torch.flatten(y, 1))


@pytest.mark.parametrize("quantizer,min_ops", [("xnnpack", 10), ("xnnpack_per_tensor", 10),
                                               ("xnnpack_symmetric", 10), ("x86", 5)])
def test_blocks2d_each_quantizer(tmp_path, quantizer, min_ops):
    torch.manual_seed(0)
    m = bn_recalibrate(_Blocks2d(), (4, 3, 32, 32))
    ex = (torch.randn(1, 3, 32, 32),)
    calib = [torch.randn(1, 3, 32, 32) for _ in range(3)]
    c = _pt2e.pt2e_quantize(m, ex, _pt2e.QUANTIZERS[quantizer](), calib)
    if quantizer == "x86" and not _has_float_conv2d():   # c4 + add + relu: a float conv
        with pytest.raises(qrt_export.UnsupportedError, match=r"'conv2d_\d+' in float"):
            qrt_export.export(c, ex, tmp_path / "m.bin", verbose=False)
        return
    rep = qrt_export.export(c, ex, tmp_path / "m.bin", verbose=False)
    _check(rep, min_ops)
    kinds = _kinds(tmp_path / "m.bin")
    if quantizer == "x86":   # c4 + add + relu in float, float last linear
        assert {"conv2d", "float_conv2d", "float_linear"} <= kinds, kinds
        eq, mx, rel, _ = _end_to_end(qrt.load(tmp_path / "m.bin"), rep, c, 32, float_out=True,
                                     float_convs=True)
        assert rel <= 0.05, (eq, mx, rel)
        return
    for k in ("conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "add", "lut",
              "linear"):
        assert k in kinds, (k, kinds)
    assert not any(k.startswith("float_") for k in kinds), kinds
    eq, mx, rel, _ = _end_to_end(qrt.load(tmp_path / "m.bin"), rep, c, 32)
    assert mx <= 3, (eq, mx, rel)


def test_x86_quantized_2d_patterns(tmp_path):
    """X86InductorQuantizer on convs without a following add: conv (+bn, +relu), max pool,
    adaptive average pool, flatten, linear all lower to quantized ops (no float op)."""
    nn = torch.nn
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                      nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.ReLU(),
                      nn.Conv2d(8, 16, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(16, 4))
    m = bn_recalibrate(m, (4, 3, 16, 16))
    ex = (torch.randn(1, 3, 16, 16),)
    c = _pt2e.pt2e_quantize(m, ex, _pt2e.x86_quantizer(),
                            [torch.randn(1, 3, 16, 16) for _ in range(3)])
    rep = qrt_export.export(c, ex, tmp_path / "m.bin", verbose=False)
    _check(rep, 3)
    kinds = _kinds(tmp_path / "m.bin")
    assert {"conv2d", "max_pool2d"} <= kinds, kinds
    assert "float_conv2d" not in kinds, kinds
    eq, mx, rel, _ = _end_to_end(qrt.load(tmp_path / "m.bin"), rep, c, 16, float_out=True)
    print(f"x86 2-d patterns: {sorted(kinds)}; " + "; ".join(pt2e.format_agreement(rep.pt2e))
          + f"; end to end max {mx:.3g}")
    assert rel <= 0.05, (eq, mx, rel)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
@pytest.mark.parametrize("quantizer", ["xnnpack", "xnnpack_per_tensor", "x86"])
def test_vision_pt2e_224(tmp_path, name, quantizer):
    size = 224
    m, c, ex = _quantize(name, size, quantizer, strict=quantizer == "x86")
    if quantizer == "x86" and not _has_float_conv2d():
        with pytest.raises(qrt_export.UnsupportedError, match="no float conv2d op yet"):
            qrt_export.export(c, ex, tmp_path / "m.bin", verbose=False)
        return
    rep = qrt_export.export(c, ex, tmp_path / "m.bin", verbose=False)
    _check(rep, 10)
    eq, mx, rel, qerr = _end_to_end(qrt.load(tmp_path / "m.bin"), rep, c, size, n=1,
                                    float_model=m, float_out=quantizer == "x86",
                                    float_convs=quantizer == "x86")
    print(f"{name} 224 {quantizer}: " + "; ".join(pt2e.format_agreement(rep.pt2e))
          + f"; end to end {eq:.1f} % equal, max {mx:.0f} LSB, rel {rel:.3f}, float model vs "
          f"program {qerr:.0f} LSB")
    assert mx <= QERR_FACTOR * qerr


# ---- issue #44: MobileNetV3-Large, and the model x quantizer x API / CLI matrix ---------------
def _via(c, ex, tmp_path, via, name="m"):
    """Export the program through the API (the GraphModule), or saved as .pt2 and given to the
    qrt-export command line (``main``); returns (report or None, blob path)."""
    out = tmp_path / f"{name}_{via}.bin"
    if via == "api":
        # X86 / Arm leave the convs before residual adds in float: the check judges the
        # quantize after them on torch's own float input (issue #44), so it exports
        return qrt_export.export(c, ex, out, verbose=False), out
    import subprocess
    import sys
    from pathlib import Path
    path = tmp_path / f"{name}.pt2"
    torch.export.save(torch.export.export(c, ex), path)
    np.save(tmp_path / "x.npy", ex[0].numpy())
    exe = Path(sys.executable).parent / "qrt-export"   # the installed command, fresh process
    r = subprocess.run([str(exe), path.name, "--input", "x.npy", "-o", out.name], cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    return None, out


def test_mobilenet_v3_large_pt2e_xnnpack_style(tmp_path):
    """torchvision's float MobileNetV3-Large (hardswish, squeeze-excitation mul, hardsigmoid,
    in-place residual add_, classifier dropout_) through the XNNPACK-style quantizer, 32x32:
    the GraphModule, the ExportedProgram and the .pt2 file (CLI) give the same blob."""
    size = 32
    m, c, ex = _quantize("mobilenet_v3_large", size, "xnnpack")
    rep, path = _via(c, ex, tmp_path, "api")
    _check(rep, 100)
    qn = rep.agreement["qnnpack"]
    assert qn["exact"] == qn["total"], qn
    kinds = _kinds(path)
    assert {"conv2d", "mul", "lut", "adaptive_avg_pool2d", "linear"} <= kinds, kinds
    rep2 = qrt_export.export(torch.export.export(c, ex), ex, tmp_path / "ep.bin", verbose=False)
    _check(rep2, 100)
    _, cli = _via(c, ex, tmp_path, "cli")   # saved as .pt2, through qrt-export
    x = torch.randn(1, 3, size, size).numpy()
    np.testing.assert_array_equal(qrt.load(path)(x), qrt.load(tmp_path / "ep.bin")(x))
    np.testing.assert_array_equal(qrt.load(path)(x), qrt.load(cli)(x))
    # end to end on fresh inputs: the hardswishes and the residual adds the quantizer leaves
    # float feed quantizes, so only the program bound (not qnnpack's ints) holds there
    eq, mx, rel, qerr = _end_to_end(qrt.load(path), rep, c, size, float_model=m,
                                    float_convs=True)
    assert mx <= QERR_FACTOR * qerr, (eq, mx, rel, qerr)


@pytest.mark.slow
@pytest.mark.parametrize("via", ["api", "cli"])
@pytest.mark.parametrize("quantizer", ["x86", "arm", "xnnpack", "xnnpack_per_tensor",
                                       "xnnpack_symmetric"])
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "mobilenet_v3_large"])
def test_vision_pt2e_matrix(tmp_path, name, quantizer, via):
    """benchmarks/pt2e_table.py's rows as tests (64x64): exported, every op bit-exact with
    qnnpack, the program op by op within the contract; the CLI's blob == the API's."""
    size = 64
    m, c, ex = _quantize(name, size, quantizer, strict=quantizer == "x86" and name == "resnet18")
    rep, path = _via(c, ex, tmp_path, "api")
    _check(rep, 10)
    qn = rep.agreement["qnnpack"]
    if qrt_export._export._output_lsb(qrt.load(path), 0):
        assert qn["exact"] == qn["total"], qn
    if via == "cli":
        _, cli = _via(c, ex, tmp_path, "cli")
        x = torch.randn(1, 3, size, size).numpy()
        np.testing.assert_array_equal(qrt.load(cli)(x), qrt.load(path)(x))


@pytest.mark.parametrize("name,quantizer,size", [("mobilenet_v3_large", "x86", 32),
                                                 ("mobilenet_v3_large", "arm", 32),
                                                 ("mobilenet_v2", "arm", 64)])
def test_mobilenet_pt2e_inductor_quantizers(tmp_path, name, quantizer, size):
    """X86InductorQuantizer / ArmInductorQuantizer on MobileNetV3-Large (32x32) and
    MobileNetV2 (64x64): the convs they quantize are qrt conv2d ops, the rest (the convs
    before a residual add or left float, hardswish, hardsigmoid, the classifier) float ops.
    MobileNetV2 x Arm at 32x32 gives 99.88 % of the program's codes (< 99.9 %, 1 LSB where
    they differ, up to 2.4 % of a layer's codes): its last depthwise layers there output 1x1
    per channel, with large weight scales (s_w ~0.13 against s_y ~0.024), where qnnpack's
    int32 bias, rounded at s_x * s_w, can be off the program's float bias by up to half of
    s_x * s_w / s_y LSB (the likely cause, not isolated); at 64x64 those layers weigh less
    (99.94 %)."""
    m, c, ex = _quantize(name, size, quantizer)
    rep, path = _via(c, ex, tmp_path, "api")
    _check(rep, 20)
    kinds = _kinds(path)
    assert {"conv2d", "float_conv2d", "float_linear"} <= kinds, kinds
    if name == "mobilenet_v3_large":
        assert "float_hardswish" in kinds, kinds

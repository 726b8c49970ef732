# SPDX-License-Identifier: Apache-2.0
"""Issue #44: every ``qrt-export`` form of README.md, docs/export.md and ``qrt-export --help``,
run as a user runs it: the installed ``qrt-export`` script in a fresh process, from a folder
outside the checkout (the model code and files live there), without PYTHONPATH, nothing
imported first. This process builds the models and files with torch; the command must exit 0
with its report on stderr and nothing else there (no traceback, no torch warning or log line),
and the blob it writes must give torch's integers (eager / FX models: torch under qnnpack,
exactly; pt2e programs: the exporter's own op-by-op check, and the program's output loosely)."""

import os
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import qrt  # noqa: E402
from qrt_export._export import _engine, _output_lsb, quantize_float_model  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=UserWarning)
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]

QRT_EXPORT = Path(sys.executable).parent / "qrt-export"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "export.md"
PKG = "qrt_cli_nets"   # the user's model package, written into the work folder

# the user's model code: a package next to the model files (the command's cwd)
NETS = '''
import torch
from torch import nn
from torch.ao.nn.quantized import FloatFunctional
from torch.ao.quantization import DeQuantStub, QuantStub


class EagerNet(nn.Module):
    """1-d conv + relu (fused), pooling, linear head, between QuantStub and DeQuantStub."""

    def __init__(self):
        super().__init__()
        self.q, self.dq = QuantStub(), DeQuantStub()
        self.conv = nn.Conv1d(2, 8, 5, padding=2)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool1d(2)
        self.fc = nn.Linear(8 * 16, 4)

    def forward(self, x):
        x = self.pool(self.relu(self.conv(self.q(x))))
        return self.dq(self.fc(torch.flatten(x, 1)))


class FloatNet(nn.Module):
    """A float 1-d model (--model / --weights, --calibrate, --keep-float)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 8, 5, padding=2)
        self.bn = nn.BatchNorm1d(8)
        self.conv2 = nn.Conv1d(8, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool1d(4)
        self.fc = nn.Linear(32, 4)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        x = self.pool(torch.relu(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


class TwoInputs(nn.Module):
    """Two inputs, quantized eagerly: a conv branch each, added."""

    def __init__(self):
        super().__init__()
        self.qa, self.qb, self.dq = QuantStub(), QuantStub(), DeQuantStub()
        self.ca = nn.Conv1d(2, 4, 3, padding=1)
        self.ra = nn.ReLU()
        self.cb = nn.Conv1d(3, 4, 3, padding=1)
        self.add = FloatFunctional()

    def forward(self, a, b):
        return self.dq(self.add.add(self.ra(self.ca(self.qa(a))), self.cb(self.qb(b))))


class VisionNet(nn.Module):
    """conv + relu, pooling, linear + relu + linear head (the pt2e quantizers)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(8 * 8 * 8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        x = self.pool(torch.relu(self.conv(x)))
        return self.fc2(torch.relu(self.fc1(torch.flatten(x, 1))))
'''

NOISE = re.compile(r"Traceback|Warning|warning|^[WEI]\d{4} |Failed to load", re.M)


def run(args, cwd, timeout=600):
    """The installed command in a fresh process: cwd outside the checkout, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([str(QRT_EXPORT)] + [str(a) for a in args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def run_ok(args, cwd):
    r = run(args, cwd)
    assert r.returncode == 0, r.stderr[-3000:]
    assert not NOISE.search(r.stderr), r.stderr[-3000:]
    assert r.stdout == "", r.stdout[-2000:]
    assert "wrote " in r.stderr
    return r.stderr


def within_contract(report):
    """The report's op-by-op line: every op within the contract."""
    m = re.search(r"op by op vs torch \(qnnpack\)[^\n]*?: (\d+)/(\d+) ops within the "
                  r"contract", report)
    assert m and m.group(1) == m.group(2) and int(m.group(2)) > 0, report


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def assert_same_codes(path, xs, t):
    """qrt's output on ``xs`` (a float dequantized output) has torch's codes, exactly."""
    qm = qrt.load(path)
    y = qm(*xs)
    t = t.numpy()
    lsb = _output_lsb(qm, 0)
    assert lsb is not None and y.shape == t.shape
    np.testing.assert_array_equal(np.rint(y.astype(np.float64) / lsb).astype(np.int64),
                                  np.rint(t.astype(np.float64) / lsb).astype(np.int64))
    np.testing.assert_array_equal(y, t)


def torch_qnnpack(model, *xs):
    with _engine("qnnpack"), torch.no_grad():
        return model(*[torch.from_numpy(x) for x in xs])


def eager_quantize(model, fuse, calib):
    from torch.ao.quantization import convert, fuse_modules, get_default_qconfig, prepare
    with _engine("qnnpack"), torch.no_grad():
        model.eval()
        if fuse:
            fuse_modules(model, fuse, inplace=True)
        model.qconfig = get_default_qconfig("qnnpack")
        prepare(model, inplace=True)
        for batch in calib:
            model(*[torch.from_numpy(b) for b in batch])
        convert(model, inplace=True)
    return model


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """The user's folder: the model package, the model files and the .npy inputs."""
    d = tmp_path_factory.mktemp("cli_export")
    (d / PKG).mkdir()
    (d / PKG / "__init__.py").write_text("")
    (d / PKG / "nets.py").write_text(NETS)
    sys.path.insert(0, str(d))
    try:
        import importlib
        nets = importlib.import_module(f"{PKG}.nets")
    finally:
        sys.path.remove(str(d))
    torch.manual_seed(0)
    x = rand(2, 2, 32)
    np.save(d / "x.npy", x)
    calib = rand(64, 2, 32, seed=1)
    np.save(d / "calib.npy", calib)
    # (a) a whole eager-quantized model
    eager = eager_quantize(nets.EagerNet(), [["conv", "relu"]],
                           [(calib[i:i + 16],) for i in range(0, 64, 16)])
    with _engine("qnnpack"):
        torch.save(eager, d / "eager.pt")
    # (b), (e), (f): a float model, whole and as a state dict
    fnet = nets.FloatNet().eval()
    torch.save(fnet, d / "float.pt")
    torch.save(fnet.state_dict(), d / "ckpt.pt")
    # (d) two inputs
    a, b = rand(2, 2, 20, seed=2), rand(2, 3, 20, seed=3)
    np.save(d / "a.npy", a)
    np.save(d / "b.npy", b)
    np.save(d / "ca.npy", rand(32, 2, 20, seed=4))
    np.save(d / "cb.npy", rand(32, 3, 20, seed=5))
    two = eager_quantize(nets.TwoInputs(), [["ca", "ra"]],
                         [(rand(8, 2, 20, seed=6 + i), rand(8, 3, 20, seed=9 + i))
                          for i in range(3)])
    with _engine("qnnpack"):
        torch.save(two, d / "two.pt")
    return {"dir": d, "nets": nets, "x": x, "calib": calib, "eager": eager, "fnet": fnet,
            "a": a, "b": b, "two": two}


# ---- (a) a whole eager-quantized model (README, docs/export.md, --help) ---------------------
def test_whole_quantized_model(work):
    d = work["dir"]
    rep = run_ok(["eager.pt", "--input", "x.npy", "-o", "model.bin"], d)
    within_contract(rep)
    assert "codes exact (100.0000 %), max 0 LSB" in rep
    assert_same_codes(d / "model.bin", [work["x"]], torch_qnnpack(work["eager"], work["x"]))


# ---- (b) --model package.module:Class --weights ckpt.pt --calibrate (--help) ----------------
def _fx_reference(model, x, calib):
    """The model quantized as qrt-export does it (FX, batches of 32 calibration samples)."""
    batches = [calib[i:i + 32] for i in range(0, len(calib), 32)]
    return quantize_float_model(model, batches, (torch.from_numpy(x),))


def test_model_class_and_weights_from_the_cwd(work):
    d = work["dir"]
    rep = run_ok(["--model", f"{PKG}.nets:FloatNet", "--weights", "ckpt.pt", "--input", "x.npy",
                  "--calibrate", "calib.npy", "-o", "sd.bin"], d)
    within_contract(rep)
    ref = _fx_reference(work["fnet"], work["x"], work["calib"])
    assert_same_codes(d / "sd.bin", [work["x"]], torch_qnnpack(ref, work["x"]))


# ---- (e) --calibrate on a whole float model (docs/export.md "Unsupported ops") ---------------
def test_float_model_calibrate(work):
    d = work["dir"]
    rep = run_ok(["float.pt", "--input", "x.npy", "--calibrate", "calib.npy", "-o", "cal.bin"],
                 d)
    within_contract(rep)
    assert "float model quantized by qrt-export" in rep
    ref = _fx_reference(work["fnet"], work["x"], work["calib"])
    assert_same_codes(d / "cal.bin", [work["x"]], torch_qnnpack(ref, work["x"]))


# ---- (f) --keep-float ------------------------------------------------------------------------
def test_float_model_keep_float(work):
    d = work["dir"]
    rep = run_ok(["float.pt", "--input", "x.npy", "--keep-float", "-o", "f.bin"], d)
    assert "keep_float" in rep
    y = qrt.load(d / "f.bin")(work["x"])
    with torch.no_grad():
        t = work["fnet"](torch.from_numpy(work["x"])).numpy()
    assert np.abs(y - t).max() <= 1e-5 * (np.abs(t).max() + 1)


# ---- (d) several inputs: --input a.npy b.npy, --input a.npy --input b.npy (--help) ----------
@pytest.mark.parametrize("form", ["one flag", "two flags"])
def test_two_inputs(work, form):
    d = work["dir"]
    ins = ["--input", "a.npy", "b.npy"] if form == "one flag" else \
        ["--input", "a.npy", "--input", "b.npy"]
    out = f"two_{form[:3]}.bin"
    rep = run_ok(["two.pt"] + ins + ["-o", out], d)
    within_contract(rep)
    assert_same_codes(d / out, [work["a"], work["b"]],
                      torch_qnnpack(work["two"], work["a"], work["b"]))


def test_two_input_float_model_two_calibration_files(work):
    """--calibrate takes one file per input, as --input does (both spellings)."""
    d = work["dir"]
    two_float = work["nets"].TwoInputs()
    torch.save(two_float, d / "two_float.pt")   # QuantStubs but no qconfig: a float model
    for cal in (["--calibrate", "ca.npy", "cb.npy"], ["--calibrate", "ca.npy", "--calib",
                                                       "cb.npy"]):
        rep = run_ok(["two_float.pt", "--input", "a.npy", "b.npy"] + cal + ["-o", "tf.bin"], d)
        within_contract(rep)


def test_wrong_number_of_calibration_files_is_one_line(work):
    r = run(["two.pt", "--input", "a.npy", "b.npy", "--calibrate", "ca.npy", "-o", "no.bin"],
            work["dir"])
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "2 --input file(s) but 1 --calibrate file(s)" in r.stderr
    assert not (work["dir"] / "no.bin").exists()


@pytest.mark.parametrize("spec,why", [(f"{PKG}.nets:Nope", "Nope"),
                                      ("no_such_pkg.nets:Net", "no_such_pkg")])
def test_model_class_not_found_is_one_line(work, spec, why):
    r = run(["--model", spec, "--weights", "ckpt.pt", "--input", "x.npy", "--calibrate",
             "calib.npy", "-o", "no.bin"], work["dir"])
    assert r.returncode == 1, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr and why in r.stderr


# ---- --tensors, --list-ops, --help (--help, docs/tensors.md) --------------------------------
def test_tensors_list_ops_help(work):
    d = work["dir"]
    r = run(["--tensors", "ckpt.pt", "-o", "weights.bin"], d)
    assert r.returncode == 0 and not NOISE.search(r.stderr), r.stderr
    t = qrt.load_tensors(d / "weights.bin")
    np.testing.assert_array_equal(np.asarray(t["conv.weight"]),
                                  work["fnet"].conv.weight.detach().numpy())
    r = run(["--list-ops"], d)
    assert r.returncode == 0 and "conv1d" in r.stdout and r.stderr == ""
    r = run(["--help"], d)
    assert r.returncode == 0 and "--input a.npy b.npy" in r.stdout and r.stderr == ""


# ---- (c) .pt2: torchao pt2e programs (README, docs/export.md) -------------------------------
@pytest.mark.parametrize("quantizer", ["x86", "arm", "xnnpack"])
def test_pt2e_program(work, quantizer):
    pytest.importorskip("torchao")
    import _pt2e
    d = work["dir"]
    torch.manual_seed(0)
    ex = (torch.randn(2, 3, 16, 16),)
    g = torch.Generator().manual_seed(1)
    cal = [(torch.randn(2, 3, 16, 16, generator=g),) for _ in range(4)]
    c = _pt2e.pt2e_quantize(work["nets"].VisionNet(), ex, _pt2e.QUANTIZERS[quantizer](),
                            [b[0] for b in cal])
    torch.export.save(torch.export.export(c, ex), d / f"{quantizer}.pt2")
    x = ex[0].numpy()
    np.save(d / "img.npy", x)
    rep = run_ok([f"{quantizer}.pt2", "--input", "img.npy", "-o", f"{quantizer}.bin"], d)
    within_contract(rep)
    assert "pt2e" in rep and "codes exact" in rep
    y = qrt.load(d / f"{quantizer}.bin")(x)
    t = c(ex[0]).detach().numpy()
    assert y.shape == t.shape and np.isfinite(y).all()
    assert np.abs(y - t).max() <= 0.1 * max(np.abs(t).max(), 1e-3)
    if quantizer == "x86":   # issue #48: --calibrate cannot change a converted program
        np.save(d / "img_calib.npy", np.concatenate([b[0].numpy() for b in cal]))
        r = run([f"{quantizer}.pt2", "--input", "img.npy", "--calibrate", "img_calib.npy",
                 "-o", "again.bin"], d)
        assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "XNNPACKQuantizer" in r.stderr and "converted pt2e program" in r.stderr
        assert not (d / "again.bin").exists()


# ---- the pt2e example of docs/export.md, as written -----------------------------------------
def _docs_example():
    text = DOCS.read_text()
    marker = "<!-- tested by tests/test_cli_export.py: pt2e example -->"
    assert marker in text, "docs/export.md lost the marker of its pt2e example"
    rest = text.split(marker, 1)[1]
    py = re.search(r"```python\n(.*?)```", rest, re.S).group(1)
    sh = re.search(r"```sh\n(.*?)```", rest, re.S).group(1)
    return py, [ln for ln in sh.splitlines() if ln.strip()]


def test_docs_pt2e_example_runs(tmp_path):
    pytest.importorskip("torchao")
    py, cmds = _docs_example()
    (tmp_path / "example.py").write_text(py)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert cmds and all(c.startswith("qrt-export ") for c in cmds), cmds
    for c in cmds:
        rep = run_ok(c.split()[1:], tmp_path)
        within_contract(rep)
    assert qrt.load(tmp_path / "model.bin")(np.load(tmp_path / "x.npy")).shape[0] == 1


# ---- (g) a whole torchvision model, where torchvision's own import fails ---------------------
def _torchvision_import_fails(cwd):
    r = subprocess.run([sys.executable, "-c", "import torchvision"], cwd=cwd,
                       capture_output=True, text=True, timeout=300)
    return r.returncode != 0, (r.stderr.strip().splitlines() or [""])[-1]


def test_torchvision_quantized_mobilenet_v2(work):
    """torchvision.models.quantization.mobilenet_v2 quantized eagerly, saved whole: exported
    in a fresh process whose ``import torchvision`` fails (its compiled ops do not match this
    torch): the exporter needs only the model code, and says how it read it."""
    import importlib.util
    if importlib.util.find_spec("torchvision") is None:
        pytest.skip("torchvision is not installed")
    if importlib.util.find_spec("PIL") is None:
        pytest.skip("Pillow (a torchvision dependency) is not installed")
    from _torch_models import bn_recalibrate, torchvision
    tv = torchvision()
    d = work["dir"]
    fails, why = _torchvision_import_fails(d)
    m = tv.models.quantization.mobilenet_v2(weights=None, quantize=False)
    bn_recalibrate(m, (4, 3, 64, 64))
    g = torch.Generator().manual_seed(3)
    calib = [(torch.randn(4, 3, 64, 64, generator=g).numpy(),) for _ in range(2)]
    with _engine("qnnpack"):
        m.eval()
        m.fuse_model()
    m = eager_quantize(m, None, calib)
    with _engine("qnnpack"):
        torch.save(m, d / "quantized_mobilenet_v2.pt")
    x = torch.randn(1, 3, 64, 64, generator=g).numpy()
    np.save(d / "img64.npy", x)
    rep = run_ok(["quantized_mobilenet_v2.pt", "--input", "img64.npy", "-o", "mnv2.bin"], d)
    within_contract(rep)
    if fails:   # the case of issue #44: the note says torchvision's __init__ was not run
        assert "torchvision::nms" in why
        notes = [ln for ln in rep.splitlines() if "bare namespace package" in ln]
        assert len(notes) == 1 and "importing torchvision failed" in notes[0], rep
    assert_same_codes(d / "mnv2.bin", [x], torch_qnnpack(m, x))


def test_timm_vit_float_model_calibrate(work):
    """timm's ViT saved whole as a float model, quantized by ``qrt-export --calibrate`` (torch.ao
    FX static: quantized LayerNorm, float attention, a quantized pos_embed) in a fresh process
    where timm's own ``import torchvision`` may fail: codes equal torch's (qnnpack)."""
    import importlib.util
    if importlib.util.find_spec("timm") is None or importlib.util.find_spec("torchvision") is None:
        pytest.skip("timm / torchvision is not installed")
    import _zoo
    d = work["dir"]
    fails, why = _torchvision_import_fails(d)
    m, ex, kw = _zoo.CASES["vit_tiny_fx"].build()
    torch.save(m, d / "vit.pt")
    x = ex[0].numpy()
    np.save(d / "vit_x.npy", x)
    np.save(d / "vit_calib.npy", torch.cat(kw["calibration_data"]).numpy())
    rep = run_ok(["vit.pt", "--calibrate", "vit_calib.npy", "--input", "vit_x.npy", "-o",
                  "vit.bin"], d)
    within_contract(rep)   # the report's end to end line: torch's model of the same calibration
    assert "end to end: quantized outputs 1000/1000 codes exact" in rep, rep
    if fails:
        notes = [ln for ln in rep.splitlines() if "bare namespace package" in ln]
        assert len(notes) == 1 and "importing torchvision failed" in notes[0], rep


def test_failing_parent_package_in_a_fresh_process(tmp_path):
    """The fallback in general: a package whose __init__ raises; its model module is read
    without it (one note); a module that itself fails is still an error (one line)."""
    pkg = tmp_path / "brokenpkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise RuntimeError('compiled ops do not load')\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "nets.py").write_text(textwrap.dedent(NETS))
    x = rand(2, 2, 32)
    np.save(tmp_path / "x.npy", x)
    # build the model with the package importable: a stand-in parent for this process only
    import importlib.util
    import types
    saved = {k: v for k, v in sys.modules.items() if k.startswith("brokenpkg")}
    bare = types.ModuleType("brokenpkg")
    bare.__path__ = [str(pkg)]
    sys.modules["brokenpkg"] = bare
    try:
        spec = importlib.util.spec_from_file_location("brokenpkg.sub.nets",
                                                      pkg / "sub" / "nets.py")
        sys.modules["brokenpkg.sub"] = types.ModuleType("brokenpkg.sub")
        nets = importlib.util.module_from_spec(spec)
        sys.modules["brokenpkg.sub.nets"] = nets
        spec.loader.exec_module(nets)
        model = eager_quantize(nets.EagerNet(), [["conv", "relu"]], [(rand(16, 2, 32),)])
        with _engine("qnnpack"):
            torch.save(model, tmp_path / "m.pt")
            t = torch_qnnpack(model, x)
    finally:
        for k in [k for k in sys.modules if k.startswith("brokenpkg")]:
            del sys.modules[k]
        sys.modules.update(saved)
    rep = run_ok(["m.pt", "--input", "x.npy", "-o", "m.bin"], tmp_path)
    within_contract(rep)
    notes = [ln for ln in rep.splitlines() if "bare namespace package" in ln]
    assert len(notes) == 1 and "importing brokenpkg failed (RuntimeError: compiled ops do not " \
        "load)" in notes[0], rep
    assert_same_codes(tmp_path / "m.bin", [x], t)
    # the model's own module failing is an error, in one line
    (pkg / "sub" / "nets.py").write_text("raise RuntimeError('the module itself')\n")
    r = run(["m.pt", "--input", "x.npy", "-o", "m2.bin"], tmp_path)
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert "RuntimeError: the module itself" in r.stderr and "Traceback" not in r.stderr


def test_torchvision_quantize_dynamic_mobilenet_v2_and_its_static_hint(work):
    """docs/export.md's issue-15 model: torchvision's float mobilenet_v2 through
    quantize_dynamic, saved whole (float32 ops + a dynamic Linear, and the note naming the
    --calibrate command), then that command (quantized statically from calibration data)."""
    import importlib.util
    if importlib.util.find_spec("torchvision") is None:
        pytest.skip("torchvision is not installed")
    if importlib.util.find_spec("PIL") is None:
        pytest.skip("Pillow (a torchvision dependency) is not installed")
    from _torch_models import bn_recalibrate, torchvision
    from qrt_export._export import dynamic_to_float
    tv = torchvision()
    d = work["dir"]
    m = bn_recalibrate(tv.models.mobilenet_v2(weights=None), (4, 3, 64, 64)).eval()
    qm = torch.ao.quantization.quantize_dynamic(m, {torch.nn.Conv2d, torch.nn.Linear},
                                                dtype=torch.qint8)
    torch.save(qm, d / "dyn_mobilenet_v2.pt")
    g = torch.Generator().manual_seed(5)
    x = torch.randn(1, 3, 64, 64, generator=g).numpy()
    cal = torch.randn(8, 3, 64, 64, generator=g).numpy()
    np.save(d / "img64.npy", x)
    np.save(d / "calib64.npy", cal)
    rep = run_ok(["dyn_mobilenet_v2.pt", "--input", "img64.npy", "-o", "dyn.bin"], d)
    within_contract(rep)
    hint = "qrt-export dyn_mobilenet_v2.pt --input img64.npy --calibrate calib.npy -o dyn.bin"
    assert hint in rep, rep
    # the command the note names, with a real calibration file
    rep = run_ok(["dyn_mobilenet_v2.pt", "--input", "img64.npy", "--calibrate", "calib64.npy",
                  "-o", "static.bin"], d)
    within_contract(rep)
    ref = quantize_float_model(dynamic_to_float(qm), [cal], (torch.from_numpy(x),))
    assert_same_codes(d / "static.bin", [x], torch_qnnpack(ref, x))

# SPDX-License-Identifier: Apache-2.0
"""The model zoo of issue #45 (tests/_zoo.py), CI-sized: published model classes as their
libraries ship them, quantized the ways users do, exported with qrt_export.export.

Only the models that export today are here: export succeeds, every op-by-op row is within the
contract (each op on torch's own inputs, qnnpack), and end to end quantized outputs equal
torch's (qnnpack) codes exactly, float outputs within 1e-4 of torch's largest magnitude. The
models that do not export yet are listed, with their first error, in benchmarks/zoo_results.md
(``python benchmarks/zoo.py``); none is marked xfail here. Latency is benchmarks/zoo.py's.
"""

import importlib.util
import sys
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchao")
if importlib.util.find_spec("torchvision") is None:
    pytest.skip("torchvision is not installed", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).parent))
warnings.filterwarnings("ignore", message=".*torch.ao.quantization.*")

import qrt_export  # noqa: E402

FLOAT_REL = 1e-4
# quantize_dynamic models, end to end: a dynamic linear quantizes its float input per call, and
# an element that torch's float32 result (its thread count, its kernels) puts on the other side
# of a rounding boundary moves the outputs by one input step times a weight column (docs/
# float-ops.md, "dynamic"); each op is still judged on torch's own inputs and must agree there.
# torchaudio's wav2vec2 at one torch thread: 8.1e-3 of max |torch| (one flip in a q_proj),
# 1.3e-7 at two.
FLOAT_REL_DYNAMIC = 2e-2

# case name -> (what it needs besides torch / torchvision / torchao, how the graph is taken:
# rep.model_kind says "captured with torch.export" where torch.fx could not take the model)
EXPORTING = {
    "mobilenetv3_fx": ("timm", "fx"),
    "mobilenetv3_pt2e": ("timm", "pt2e program"),
    "efficientnet_lite0_fx": ("timm", "fx"),
    "efficientnet_lite0_pt2e": ("timm", "pt2e program"),
    "vit_tiny_fx": ("timm", "fx"),
    "vit_tiny_pt2e": ("timm", "pt2e program"),
    "deepspeech_dynamic": ("torchaudio", "fx"),
    "wav2letter_dynamic": ("torchaudio", "fx"),
    "wav2letter_fx": ("torchaudio", "fx"),
    # forward(input, hidden) with hidden = (h, c): nested inputs, torch.fx cannot take them
    "word_lm_dynamic": ("", "torch.export"),
    "ecg_zeropad_fx": ("", "fx"),
    "ecg_zeropad_dynamic": ("", "fx"),
    # torch.fx cannot trace these (co_varnames, shape checks, control flow): torch.export
    "bert_dynamic": ("transformers", "torch.export"),
    "distilbert_dynamic": ("transformers", "torch.export"),
    "hf_wav2vec2_dynamic": ("transformers", "torch.export"),
    "wav2vec2_dynamic": ("torchaudio", "torch.export"),
    "conv_tasnet_fx": ("torchaudio", "torch.export"),   # FX static on the captured graph
    "conv_tasnet_pt2e": ("torchaudio", "pt2e program"),
    "lraspp_fx": ("", "fx"),
    "lraspp_pt2e": ("", "pt2e program"),
    "deeplabv3_fx": ("", "fx"),
    "deeplabv3_pt2e": ("", "pt2e program"),
}
SLOW = set()


@pytest.fixture(autouse=True, scope="module")
def _torch_one_thread_qnnpack():
    """One torch thread (the export tabulates luts with thousands of tiny torch calls) and
    engine qnnpack (qrt's reference)."""
    n, eng = torch.get_num_threads(), torch.backends.quantized.engine
    torch.set_num_threads(1)
    torch.backends.quantized.engine = "qnnpack"
    yield
    torch.set_num_threads(n)
    torch.backends.quantized.engine = eng


def _params():
    out = []
    for name, (needs, capture) in EXPORTING.items():
        marks = [pytest.mark.slow] if name in SLOW else []
        out.append(pytest.param(name, needs, capture, id=name, marks=marks))
    return out


@pytest.mark.parametrize("name,needs,capture", _params())
def test_zoo_exports_exact(name, needs, capture, tmp_path):
    if needs and importlib.util.find_spec(needs) is None:
        pytest.skip(f"{needs} is not installed")
    import _zoo
    case = _zoo.CASES[name]
    model, example, kw = case.build()
    rep = qrt_export.export(model, example, str(tmp_path / f"{name}.bin"), verbose=False, **kw)
    ok, n, agr, exact, rel, cap = _zoo.summary(rep)
    assert n and ok == n, str(rep)
    a = rep.agreement["qnnpack"]
    assert "error" not in a, a
    assert a["total"] or a.get("float"), a
    if a["total"]:
        assert exact, f"{name}: quantized outputs {agr}"
    if a.get("float"):
        bound = FLOAT_REL_DYNAMIC if name.endswith("_dynamic") else FLOAT_REL
        assert rel <= bound, f"{name}: float outputs {agr}"
    assert cap == capture, rep.model_kind

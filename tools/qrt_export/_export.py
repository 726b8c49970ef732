# SPDX-License-Identifier: Apache-2.0
"""torch model -> qrt blob. torch is imported only inside the functions here."""

from __future__ import annotations

import contextlib
import copy
import operator
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np

import qrt
from qrt_export._writer import BlobBuilder
from qrt_export import custom

EXPORTER_VERSION = qrt.__version__   # recorded in every blob as "qrt-export <version>"
# the static-int8 over float32 speed-up quoted by the note of a mostly-float export (measured
# by benchmarks/vision_dynamic.py, docs/export.md)
STATIC_SPEEDUP = "1.2x"
STATIC_SPEEDUP_WHERE = ("MobileNetV2 224x224, batch 1, one thread: benchmarks/vision_dynamic.py; "
                        "its blob 2.7x smaller")

def _supported():
    from qrt_export import rules
    return tuple(rules.SUPPORTED) + ("user modules registered with qrt_export.register "
                                     "(custom ops, format 1.1)",)


SUPPORTED = _supported()


class UnsupportedError(ValueError):
    """The model uses an op or dtype that qrt does not run."""


class ExportError(ValueError):
    """torch failed while running the model for the export (wrapped with the op and source)."""


class ModelFileError(ValueError):
    """The model file is not a torch model qrt-export can read (empty, a qrt blob, a .npy, a
    pickle of a class no module defines...); the message says why and what to do."""


class MismatchError(ExportError):
    """qrt's result differs from torch's beyond the contract (docs/export.md); names the first
    op whose output diverges. ``qrt_export.export(..., allow_mismatch=True)`` /
    ``qrt-export --allow-mismatch`` writes the blob anyway."""


class _Skip(Exception):
    """An unsupported node was recorded; the converter goes on to find the others."""


@dataclass
class ExportReport:
    """What export() wrote and how well qrt agrees with torch on the example inputs."""

    path: str
    nbytes: int
    arena_nbytes: int
    weights_nbytes: int
    macs: int
    n_ops: int
    agreement: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    torch_model: Any = field(default=None, repr=False)  # the quantized torch model exported
    model_kind: str = ""
    ops: List[Dict[str, Any]] = field(default_factory=list)   # check_ops rows
    refused: Dict[str, str] = field(default_factory=dict)     # nodes qnnpack refused
    pt2e: Dict[str, Any] = field(default_factory=dict)        # vs torch's pt2e program
    float_macs: int = 0    # MACs of the float32 ops (float_conv2d, float_linear...)
    hint: str = ""         # a one-line note: how to quantize a mostly-float model statically
    notes: List[str] = field(default_factory=list)  # one line each: how the model was read

    def static_hint(self, model_file="model.pt", input_file="x.npy",
                    output_file="model.bin") -> str:
        """The note printed when most MACs run in float32 ops (empty otherwise): the one
        command that quantizes the model statically (qrt-export --calibrate, torch.ao FX)."""
        if not self.macs or 2 * self.float_macs <= self.macs:
            return ""
        if self.model_kind.startswith("pt2e"):
            # --calibrate does not apply to a converted program: the quantizer chose the floats
            return (f"note: {100.0 * self.float_macs / self.macs:.0f} % of the MACs run in "
                    "float32 ops, the ops your pt2e quantizer left unannotated (torchao's "
                    "X86InductorQuantizer and ArmInductorQuantizer annotate conv2d and "
                    "linear, not conv1d or conv_transpose1d, and X86's conv + add pattern "
                    "leaves the conv in float): annotate them in your quantizer "
                    "(executorch's XNNPACKQuantizer with get_symmetric_quantization_config() "
                    "annotates conv1d, conv2d and linear), or save the float nn.Module "
                    "(torch.save(model, 'float.pt'), not the converted program) and quantize "
                    f"it with torch.ao: qrt-export float.pt --input {input_file} --calibrate "
                    f"calib.npy -o {output_file}")
        return (f"note: {100.0 * self.float_macs / self.macs:.0f} % of the MACs run in float32 "
                f"ops; a static int8 model runs about {STATIC_SPEEDUP} faster on qrt "
                f"({STATIC_SPEEDUP_WHERE}): qrt-export {model_file} --input {input_file} "
                f"--calibrate calib.npy -o {output_file}   (calib.npy: a few hundred real "
                "inputs, batch first)")

    def __str__(self):
        lines = [f"wrote {self.path}: {self.nbytes} bytes ({self.n_ops} ops, weights "
                 f"{self.weights_nbytes} B, arena {self.arena_nbytes} B, {self.macs} MACs)"]
        if self.model_kind.startswith("pt2e"):
            lines.append(f"  model: {self.model_kind}")
        elif self.model_kind:
            lines.append(f"  model: {self.model_kind}, read with torch.ao (deprecated by torch "
                         "2.13 in favour of torchao; still what qrt-export reads)")
        for name, why in self.refused.items():
            lines.append(f"  note: torch's qnnpack refuses node {name} ({why}); qrt runs it and "
                         "was compared with torch's x86 engine there")
        bad = [r for r in self.ops if not r["ok"]]
        if self.ops:
            fed = sum(r.get("inputs") == "torch" for r in self.ops)
            own = "" if fed == len(self.ops) else \
                f" ({len(self.ops) - fed} on qrt's own inputs: torch has no value for them)"
            lines.append(f"  op by op vs torch (qnnpack), each op on torch's own inputs{own}: "
                         f"{len(self.ops) - len(bad)}/{len(self.ops)} ops within the contract "
                         "(quantized: equal codes; float: docs/export.md)")
            for r in bad[:3]:
                lines.append("    " + describe_row(r))
        for eng, a in self.agreement.items():
            if "error" in a:
                lines.append(f"  vs torch ({eng}): not compared ({a['error']})")
                continue
            parts = []
            if a["total"]:
                parts.append(f"quantized outputs {a['exact']}/{a['total']} codes exact "
                             f"({100.0 * a['exact'] / a['total']:.4f} %), max "
                             f"{a['max_lsb']} LSB")
            if a.get("float"):
                parts.append(f"float outputs {format_float(a['float'])}")
            lines.append(f"  vs torch ({eng}), end to end: " + "; ".join(parts))
        if self.pt2e:
            from qrt_export import pt2e
            lines += pt2e.format_agreement(self.pt2e)
        if self.hint:
            lines.append(f"  {self.hint}")
        lines += [f"  {note}" for note in self.notes]   # how the model file was read
        return "\n".join(lines)


# ---- helpers -------------------------------------------------------------------------------
@contextlib.contextmanager
def _engine(name):
    import torch
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = name
    try:
        yield
    finally:
        torch.backends.quantized.engine = old


def _as_tuple(example_inputs):
    """The example inputs as a tuple of forward()'s arguments, ndarrays (also inside nested
    tuples, lists and dicts: ``hidden=(h, c)``) as tensors."""
    import torch
    if isinstance(example_inputs, (torch.Tensor, np.ndarray)):
        example_inputs = (example_inputs,)
    return tuple(torch.utils._pytree.tree_map(
        lambda x: torch.from_numpy(np.ascontiguousarray(x)) if isinstance(x, np.ndarray)
        else x, list(example_inputs)))


def _qrt_inputs(inputs):
    """The example inputs as qrt takes them: float32 as ndarrays, a quantized tensor (quint8,
    qint8, qint32) as a qrt.QTensor with its codes and qparams, int64/int32 index tensors as
    ndarrays, others as they are."""
    import torch

    import qrt
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_quantized and \
                x.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            dt = getattr(qrt, str(x.dtype).split(".")[-1])
            out.append(qrt.from_int_repr(x.int_repr().numpy(), x.q_scale(), x.q_zero_point(),
                                         dt))
        elif isinstance(x, torch.Tensor) and x.dtype in (torch.float32, torch.int64,
                                                         torch.int32):
            out.append(x.numpy())   # float32 inputs and index tensors as numpy arrays
        else:
            out.append(x)
    return out


def _source(node, gm) -> str:
    st = node.meta.get("stack_trace") or getattr(node, "stack_trace", None)
    if st:
        lines = [ln.strip() for ln in st.strip().splitlines()]
        frames = []
        for k, ln in enumerate(lines):
            if ln.startswith("File") and "/torch/" not in ln and "/qrt_export/" not in ln:
                code = lines[k + 1] if k + 1 < len(lines) and not \
                    lines[k + 1].startswith("File") else ""
                frames.append(f"{ln}: {code}" if code else ln)
        if frames:
            return frames[-1][:400]
    if node.op == "call_module":
        try:
            m = gm.get_submodule(node.target)
            return f"module {node.target} ({type(m).__module__}.{type(m).__name__})"
        except AttributeError:
            pass
    return f"graph node {node.name}: {node.format_node()}"[:400]


def _is_quantized_model(model) -> str:
    """'quantized', 'dynamic', 'weight-only quantized embeddings' or 'float'."""
    import torch.ao.nn.quantized as nnq
    import torch.ao.nn.quantized.dynamic as nnqd
    kinds = set()
    for m in model.modules():
        if isinstance(m, (nnqd.Linear, nnqd.modules.rnn.RNNBase,
                          nnqd.modules.rnn.RNNCellBase)):
            kinds.add("dynamic")
        elif isinstance(m, (nnq.Conv1d, nnq.Linear, nnq.Quantize)):
            kinds.add("quantized")
        elif isinstance(m, (nnq.Embedding, nnq.EmbeddingBag)):
            kinds.add("weight-only")
    if "quantized" in kinds:
        return "quantized"
    if "dynamic" in kinds:
        return "dynamic"
    if "weight-only" in kinds:
        return "weight-only quantized embeddings"
    for n in getattr(model, "graph", None).nodes if hasattr(model, "graph") else ():
        if n.op == "call_function" and n.target in _quantize_fns():
            return "quantized"
    return "float"


def _quantize_fns():
    import torch
    return (torch.quantize_per_tensor,)


def _repack(model, engine: str):
    """A copy of model with its quantized weights packed for ``engine`` (packing is per engine)."""
    import torch.ao.nn.quantized as nnq
    import torch.ao.nn.quantized.dynamic as nnqd
    # deepcopy re-packs every quantized module under the current engine: do it under qnnpack,
    # which accepts every weight torch can produce (x86/onednn refuse some depthwise ones).
    with _engine("qnnpack"), _qconv_state_fix():
        m = deepcopy_model(model)
    with _engine(engine):
        for mod in m.modules():
            if isinstance(mod, (nnq.Conv1d,)):
                mod.set_weight_bias(mod.weight(), mod.bias())
            elif isinstance(mod, (nnq.Linear, nnqd.Linear)):
                w, b = mod._weight_bias()
                mod.set_weight_bias(w, b)
            elif isinstance(mod, nnqd.modules.rnn.RNNBase) and \
                    getattr(mod, "dtype", None) == _torch().qint8:
                # a deepcopy keeps an LSTM's packed cell params as they were packed (fbgemm's
                # under the x86 engine, whose dynamic linear quantizes the activations at
                # reduce_range): packed again, torch computes what it computes on a Pi
                wb = mod._weight_bias()
                mod.set_weight_bias({**wb["weight"], **wb["bias"]})
            elif isinstance(mod, nnqd.modules.rnn.RNNCellBase) and \
                    getattr(mod, "weight_dtype", None) == _torch().qint8:
                mod.set_weight_bias(mod._weight_bias())
    return m


def deepcopy_model(model):
    """``copy.deepcopy`` that also copies a model using the hook-based
    ``torch.nn.utils.weight_norm`` after a forward: its ``weight`` is then a non-leaf tensor,
    which torch refuses to deepcopy (pytorch/pytorch#103001). The copy gets a detached clone
    (its hook recomputes the weight from ``weight_g`` / ``weight_v`` at the next call)."""
    import torch
    memo: Dict[int, Any] = {}
    for m in model.modules():
        for v in m.__dict__.values():
            if isinstance(v, torch.Tensor) and not v.is_leaf:
                memo[id(v)] = v.detach().clone()
    return copy.deepcopy(model, memo)


@contextlib.contextmanager
def _qconv_state_fix():
    """Work around torch 2.13 bugs in quantized conv ``__setstate__`` (pickle and deepcopy).

    1. It restores conv attributes but never initialises the ``nn.Module`` internals
       (``_modules``, hooks...): a loaded eager model cannot run, a loaded FX GraphModule fails
       inside ``torch.load`` (it re-traces while unpickling).
    2. qnnpack's conv1d unpack drops the kernel dim of kernel-1 weights, so re-packing the
       state fails ("Weights are expected to have 4 dimensions").
    """
    import torch
    import torch.ao.nn.quantized.modules.conv as qconv
    orig = qconv._ConvNd.__dict__["__setstate__"]

    def setstate(self, state):
        if "_modules" not in self.__dict__:
            torch.nn.Module.__init__(self)
        w = state[10]
        if isinstance(self, qconv.Conv1d) and w.dim() == 2:
            state = tuple(state[:10]) + (w.unsqueeze(-1),) + tuple(state[11:])
        return orig(self, state)
    qconv._ConvNd.__setstate__ = setstate
    try:
        yield
    finally:
        qconv._ConvNd.__setstate__ = orig


def _cwd_on_path():
    """Put the current directory on ``sys.path`` (last) if it is not there, as ``python
    script.py`` users expect: ``qrt-export --model mypkg.nets:Net`` and a whole model saved with
    ``torch.save`` find the user's model code next to their files without PYTHONPATH (the
    ``qrt-export`` script's own folder is ``sys.path[0]``). Last, so that a folder named like an
    installed package (a source checkout's ``qrt/``) does not shadow it."""
    cwd = os.getcwd()
    if not any(os.path.abspath(p or os.curdir) == cwd for p in sys.path):  # '' is the cwd
        sys.path.append(cwd)


def _bare_parent(module: str, err: BaseException, notes: List[str],
                 reading: Optional[str] = None) -> bool:
    """After importing ``module`` failed with ``err``: when a parent package's ``__init__``
    failed (it is then missing from ``sys.modules``; e.g. torchvision's compiled ops that do not
    match this torch: ``operator torchvision::nms does not exist``), put that package in
    ``sys.modules`` as a bare namespace package over its real ``__path__``, without running its
    ``__init__``, note it, and return True (the caller imports ``module`` again). False when the
    module itself failed, or the parent is not found or not a package."""
    import importlib.machinery
    import importlib.util
    import types
    parts = module.split(".")
    for i in range(1, len(parts)):
        name = ".".join(parts[:i])
        if name in sys.modules:
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return False
        if spec is None or not spec.submodule_search_locations:
            return False
        bare = types.ModuleType(name)
        bare.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        bare.__spec__.submodule_search_locations = list(spec.submodule_search_locations)
        bare.__path__ = list(spec.submodule_search_locations)
        bare.__package__ = name
        sys.modules[name] = bare
        if i > 1:
            setattr(sys.modules[".".join(parts[:i - 1])], parts[i - 1], bare)
        why = str(err).splitlines()[0] if str(err) else ""
        notes.append(f"note: importing {name} failed ({type(err).__name__}: {why}); "
                     f"{reading or module} was read with {name} as a bare namespace package "
                     "(its __init__ not run): the model code needs only its modules")
        return True
    return False


def _bare_failed_init(err: BaseException, notes: List[str]) -> bool:
    """When ``err`` was raised while a package's ``__init__`` ran during an import (timm's
    ``import torchvision`` whose compiled ops do not match this torch), make the innermost such
    package (the one whose own ``__init__`` failed) a bare namespace package as
    :func:`_bare_parent` does, note it and return True (the caller imports again)."""
    import traceback
    tb = err.__traceback__
    name = None
    while tb is not None:   # innermost __init__ frame of a package not imported
        f = tb.tb_frame
        mod = f.f_globals.get("__name__", "")
        if f.f_code.co_filename.endswith("__init__.py") and f.f_code.co_name == "<module>" \
                and mod and mod not in sys.modules:
            name = mod
        tb = tb.tb_next
    del tb
    if name is None:
        traceback.clear_frames(err.__traceback__)
        return False
    return _bare_parent(name + ".__init__", err, notes, reading="the model")


def _pickle_module(notes: List[str]):
    """A ``pickle_module`` for ``torch.load`` whose Unpickler imports a pickled class's module
    normally and, only when that failed in a parent package's ``__init__``, again under
    :func:`_bare_parent` (as many times as there are such parents)."""
    import pickle
    import types

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            try:
                return super().find_class(module, name)
            except Exception as e:  # noqa: BLE001 - an __init__ may raise anything
                err = e
            for _ in range(module.count(".") + 8):
                if not (_bare_failed_init(err, notes) or _bare_parent(module, err, notes)):
                    break
                try:
                    return super().find_class(module, name)
                except Exception as e:  # noqa: BLE001
                    err = e
            raise err

    pm = types.ModuleType("qrt_export._pickle")
    pm.__dict__.update(pickle.__dict__)
    pm.__name__ = "qrt_export._pickle"
    pm.Unpickler = Unpickler
    pm.load = lambda f, **kw: Unpickler(f, **kw).load()
    return pm


def torch_load(path, notes: Optional[List[str]] = None):
    """``torch.load`` of a whole quantized model (weights re-packed under qnnpack). The model's
    classes are imported from the current directory too (:func:`_cwd_on_path`); a package whose
    ``__init__`` fails to import (a compiled extension built for another torch) is read without
    it (:func:`_bare_parent`), with a note appended to ``notes``."""
    import pickle

    import torch
    _cwd_on_path()
    notes = [] if notes is None else notes
    try:
        with _qconv_state_fix(), _engine("qnnpack"):
            model = torch.load(path, weights_only=False, map_location="cpu",
                               pickle_module=_pickle_module(notes))
    except (EOFError, pickle.UnpicklingError) as e:
        why = "the file ends early" if isinstance(e, EOFError) else \
            str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ModelFileError(f"cannot read {path} as a torch.save'd model ({why}); qrt-export "
                             "takes a whole model saved with torch.save(model, path) or a "
                             ".pt2 program saved with torch.export.save") from None
    except AttributeError as e:
        m = re.match(r"Can't get attribute '([^']+)' on <module '__main__'", str(e))
        if m is None:
            raise
        raise ModelFileError(_main_class_message(path, m.group(1))) from None
    _repair_unpickled(model)
    return model


def _main_class_message(path, name: str) -> str:
    """Why a model pickled from a class of the saving script cannot load, and the fix."""
    where = ""
    try:
        for f in sorted(os.listdir(os.curdir)):
            if f.endswith(".py") and os.path.isfile(f):
                with open(f, encoding="utf-8", errors="replace") as fh:
                    if re.search(rf"^class {re.escape(name)}\b", fh.read(), re.M):
                        where = f" (it is defined in {f})"
                        break
    except OSError:
        pass
    mod = "nets"
    return (f"{path} was saved from a class defined in the script that ran torch.save: pickle "
            f"recorded it as __main__.{name}, which no other program can import{where}. Move "
            f"class {name} into a module (for instance {mod}.py in this folder), import it in "
            f"the saving script (from {mod} import {name}) and save the model again; qrt-export "
            "finds modules in the current folder")


def _repair_unpickled(model):
    """Restore nn.Module internals that torch 2.13 drops when unpickling quantized convs.

    ``torch.load`` of a whole model calls the quantized conv's ``__setstate__``, which restores
    the conv attributes but not ``_modules``/``_parameters``/hooks, so the loaded model cannot
    even be put in eval mode. Fill in the missing (empty) internals.
    """
    import torch
    fresh = torch.nn.Module().__dict__

    def walk(m, seen):
        if id(m) in seen or not isinstance(m, torch.nn.Module):
            return
        seen.add(id(m))
        for k, v in fresh.items():
            if k not in m.__dict__:
                m.__dict__[k] = copy.copy(v) if k != "training" else False
        for c in m.__dict__["_modules"].values():
            walk(c, seen)
    walk(model, set())


def _has_dynamic_rnn(model) -> bool:
    import torch
    import torch.ao.nn.quantized.dynamic as nnqd
    return isinstance(model, torch.nn.Module) and any(
        isinstance(m, (nnqd.modules.rnn.RNNBase, nnqd.modules.rnn.RNNCellBase))
        for m in model.modules())


def dynamic_to_float(model):
    """A float copy of a ``quantize_dynamic`` model (its dynamic Linear back to nn.Linear with
    the dequantized int8 weight), for static quantization from calibration data; None when it
    holds other dynamic modules (RNNs), which stay dynamic."""
    import torch
    import torch.ao.nn.quantized.dynamic as nnqd
    if _has_dynamic_rnn(model):
        return None
    m = deepcopy_model(model)

    def swap(parent):
        for name, c in list(parent.named_children()):
            if isinstance(c, nnqd.Linear):
                w, b = c._weight_bias()
                f = torch.nn.Linear(c.in_features, c.out_features, bias=b is not None)
                with torch.no_grad():
                    f.weight.copy_(w.dequantize())
                    if b is not None:
                        f.bias.copy_(b)
                setattr(parent, name, f)
            else:
                swap(c)
    swap(m)
    return m.eval()


def quantize_float_model(model, calibration_data, example_inputs, qconfig_mapping=None):
    """torch.ao FX post-training quantization under qnnpack (BN folded, ReLU fused).

    Default qconfig is torch's ``onednn`` default: per-channel symmetric qint8 weights and
    full-range quint8 activations observed by HistogramObserver.
    """
    import torch
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    model = deepcopy_model(model).eval()
    qmap = qconfig_mapping
    if qmap is None:
        # torch.ao has no per-channel weight observer for transposed convs (ConvTasNet's
        # decoder, autoencoders): those take qnnpack's per-tensor default
        from torch.ao.quantization import get_default_qconfig
        qmap = get_default_qconfig_mapping("onednn")
        for t in (torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d):
            qmap.set_object_type(t, get_default_qconfig("qnnpack"))
    with _engine("qnnpack"), torch.no_grad():
        prepared = prepare_fx(model, qmap, example_inputs)
        for batch in calibration_data:
            prepared(*_as_tuple(batch))
        return convert_fx(prepared)


# ---- tracing -------------------------------------------------------------------------------
def _trace(model):
    import torch
    import torch.fx as fx
    if isinstance(model, fx.GraphModule):
        return model

    class _Tracer(fx.Tracer):
        def __init__(self):
            super().__init__()
            self.record_stack_traces = True

        def is_leaf_module(self, m, qualname):  # custom ops (qrt_export.register) are leaves
            return custom.lookup(m) is not None or super().is_leaf_module(m, qualname)
    tracer = _Tracer()
    try:
        graph = tracer.trace(model)
    except Exception as e:  # noqa: BLE001 - torch raises many types here
        raise UnsupportedError(f"cannot trace {type(model).__name__} with torch.fx "
                               f"({str(e).splitlines()[0] if str(e) else type(e).__name__})"
                               ) from e
    return fx.GraphModule(tracer.root if isinstance(tracer.root, torch.nn.Module) else model,
                          graph)


def _snapshot(v):
    """A copy of a node's value as torch computed it (a later in-place op cannot change it),
    keeping the memory layout of quantized tensors, which rules read."""
    import torch
    # a copy: a later in-place op (nn.ReLU(inplace=True) after a float conv, as in
    # torchaudio's Wav2Letter) would otherwise overwrite the value recorded here. A
    # quantized tensor's clone() is always contiguous, and rules read the layout (torch's
    # quantized mean of a permuted tensor takes another path): such views stay as they are.
    if not isinstance(v, torch.Tensor):
        return v
    if v.is_quantized and v.dim() == 4 and v.is_contiguous() and \
            v.is_contiguous(memory_format=torch.channels_last):
        # both at once (H == W == 1 or C == 1): keep what torch's suggest_memory_format
        # sees (a 1x1 conv output is channels-last; rules/vision.py upsampling reads it)
        from torch._prims_common import suggest_memory_format
        if suggest_memory_format(v) == torch.channels_last:
            return v.clone(memory_format=torch.channels_last)
        return v.clone()
    if v.is_quantized and not v.is_contiguous():
        # a channels-last one (every qnnpack conv2d output) is copied as channels-last:
        # an in-place ReLU6 follows it in torchvision, and rules/lut.py reads its layout
        if v.dim() == 4 and v.is_contiguous(memory_format=torch.channels_last):
            return v.clone(memory_format=torch.channels_last)
        return v
    return v.clone()


def _run_nodes(gm, inputs, refused: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Every node's value on ``inputs`` (under the current engine). A node the engine refuses
    is an ExportError naming it and its source line; with ``refused`` (a dict), a node that
    qnnpack refuses but takes no packed weights is run once more under the x86 engine and
    recorded there (torch's qnnpack refuses e.g. a kernel-1 average pool that qrt runs)."""
    import torch
    import torch.fx as fx
    values: Dict[str, Any] = {}

    class _Rec(fx.Interpreter):
        def run_node(self, n):
            try:
                v = super().run_node(n)
            except Exception as e:  # noqa: BLE001 - torch raises many types
                if refused is not None and torch.backends.quantized.engine == "qnnpack":
                    try:
                        with _engine("x86"):
                            v = super().run_node(n)
                    except Exception:  # noqa: BLE001
                        v = None
                    if v is not None:
                        refused[n.name] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
                        values[n.name] = _snapshot(v)
                        return v
                what = getattr(n.target, "__name__", n.target)
                raise ExportError(f"torch failed at {n.op} {what} ({_source(n, gm)}): "
                                  f"{type(e).__name__}: "
                                  f"{str(e).splitlines()[0] if str(e) else ''}") from e
            values[n.name] = _snapshot(v)
            return v
    with torch.no_grad():
        _Rec(gm).run(*inputs)
    return values


def _batched(inputs, extra=1):
    import torch
    return tuple(torch.cat([x] + [x[:1]] * extra, 0) if x.dim() else x for x in inputs)


# ---- node -> qrt op mapping ------------------------------------------------------------------
class _Converter:
    def __init__(self, gm, values, values2, fixed_batch, batch):
        self.gm = gm
        self.v = values
        self.v2 = values2
        self.fixed_batch = fixed_batch
        self.batch = batch
        self.b = BlobBuilder()
        self.tensor_of: Dict[str, int] = {}   # node name -> tensor index
        self.missing: List[str] = []          # unsupported nodes (all reported at the end)
        self.done: set = set()                # nodes a rule already lowered (fused patterns)
        self.qconst: Dict[str, Any] = {}      # quantize of a parameter -> its get_attr node

    # tensors
    def _tensor(self, node) -> int:
        if node.name in self.tensor_of:
            return self.tensor_of[node.name]
        if node.name in self.qconst:
            from qrt_export.rules.attention import batch_constant
            return batch_constant(self, node, self.qconst.pop(node.name))
        idx = self.new_tensor(node.name, self.v[node.name],
                              None if self.v2 is None else self.v2.get(node.name),
                              index_ok=node.op == "placeholder")
        self.tensor_of[node.name] = idx
        return idx

    def new_tensor(self, name, val, v2=None, index_ok=False) -> int:
        """A blob activation for torch value ``val`` (``v2``: the same value at batch + 1,
        which tells whether dim 0 is the batch). ``index_ok``: a model input, which may be an
        int64/int32 index tensor (embeddings, R28)."""
        import torch
        if not isinstance(val, torch.Tensor):
            raise UnsupportedError(f"node {name} yields {type(val).__name__}, not a tensor")
        node_name = name
        shape = tuple(val.shape)
        batched = False
        if not self.fixed_batch and self.v2 is not None and shape:
            batched = (isinstance(v2, torch.Tensor) and v2.shape[0] == shape[0] + 1
                       and shape[0] == self.batch)
        if val.is_quantized:
            if val.qscheme() not in (torch.per_tensor_affine, torch.per_tensor_symmetric):
                raise UnsupportedError(f"{node_name}: per-channel quantized activations are not "
                                       "supported")
            dt = {torch.quint8: "quint8", torch.qint8: "qint8", torch.qint32: "qint32"}.get(
                val.dtype)
            if dt is None:
                raise UnsupportedError(f"{node_name}: dtype {val.dtype} is not supported")
            return self.b.activation(node_name, dt, shape, batched=batched,
                                     scale=float(val.q_scale()),
                                     zero_point=int(val.q_zero_point()))
        if index_ok and val.dtype in (torch.int64, torch.int32):
            return self.b.activation(node_name, str(val.dtype).replace("torch.", ""), shape,
                                     batched=batched)
        if val.dtype != torch.float32:
            raise UnsupportedError(f"{node_name}: dtype {val.dtype} is not supported "
                                   "(float32 and quantized tensors; int64/int32 model inputs "
                                   "that feed embeddings)")
        return self.b.activation(node_name, "float32", shape, batched=batched)

    def _unsupported(self, node, what):
        self.missing.append(f"{what} at {_source(node, self.gm)}")
        raise _Skip()

    def _emit(self, kind, node, inputs, params=(), attrs=None, outputs=None):
        ins = [a if isinstance(a, int) else self._tensor(a) for a in inputs]
        outs = [self._tensor(node)] if outputs is None else \
            [o if isinstance(o, int) else self._tensor(o) for o in outputs]
        self.b.op(kind, node.name, ins, outs, params, attrs or {}, _source(node, self.gm))

    def emit_multi(self, kind, node, inputs, params=(), attrs=None):
        """An op with one output per element of the tuple ``node`` yields (chunk, split): the
        ``operator.getitem`` nodes that pick them read these tensors."""
        vals = self.v[node.name]
        v2s = self.v2.get(node.name) if self.v2 is not None else None
        outs = []
        for k, val in enumerate(vals):
            v2 = v2s[k] if isinstance(v2s, (tuple, list)) and len(v2s) == len(vals) else None
            outs.append(self.new_tensor(f"{node.name}.{k}", val, v2))
        self.tensor_of.update({f"{node.name}.{k}": i for k, i in enumerate(outs)})
        self._emit(kind, node, inputs, params, attrs, outputs=outs)

    def users(self, node):
        return list(node.users)

    # helpers the lowering rules (qrt_export/rules) call
    emit = _emit

    def unsupported(self, node, what):
        self._unsupported(node, what)

    def tensor(self, node) -> int:
        return self._tensor(node)

    # float sections (rules/float_*.py)
    def value(self, arg):
        """The value torch computed for graph node ``arg`` at the example inputs (``arg``
        itself when it is not a node: a Python number, None...)."""
        return self.v.get(arg.name) if hasattr(arg, "name") and hasattr(arg, "op") else arg

    def is_quantized(self, arg) -> bool:
        """Whether graph node ``arg`` yields a quantized tensor (False: float or not a tensor)."""
        import torch
        v = self.value(arg)
        return isinstance(v, torch.Tensor) and v.is_quantized

    def constant(self, name, array) -> int:
        """A float parameter (weights of a float op, a get_attr operand) as a blob constant."""
        return self.b.constant(name, np.ascontiguousarray(array))

    @staticmethod
    def int1(v):
        return _int1(v)

    def layer(self, kind, node, module_kind, m, x=None):
        """A conv/linear op from torch module ``m``: raw weights, fused activation attribute
        (the op definition's ``encode``). ``x``: the input (a node or a tensor index; default
        the node's first argument)."""
        import qrt.ops
        from qrt_export._modules import qrt_module
        qmod = qrt_module(module_kind, m)
        attrs, arrays = qrt.ops.get(kind).encode(qmod)
        params = [self.b.constant(f"{node.name}.{k}", np.asarray(a)) for k, a in arrays.items()]
        self._emit(kind, node, [node.args[0] if x is None else x], params, attrs)

    def quantize(self, node):
        self._quantize(node, node.args[0], self.v.get(node.name))

    def pool(self, kind, node, k, s, p, **kw):
        self._pool(kind, node, node.args[0], k, s, p, **kw)

    def fpool(self, kind, node, names):
        self._fpool(kind, node, names)

    def convert(self):
        from qrt_export import rules

        gm = self.gm
        b = self.b
        for fn in rules.PREPASSES:  # e.g. constant attention masks: their nodes fold away
            fn(self)
        for node in gm.graph.nodes:
            try:
                self._node(node)
            except _Skip:
                pass
        if self.missing:
            raise UnsupportedError(
                f"{len(self.missing)} unsupported op(s): " + "; ".join(self.missing)
                + ". The ops qrt runs are listed in docs/supported-ops.md, or run "
                "`qrt-export --list-ops`.")
        if not b.inputs or not b.outputs:
            raise UnsupportedError("the traced graph has no tensor inputs or outputs")
        return b

    def _output_names(self, o):
        """Tensor names of model output ``o``: itself, or ``o.0``, ``o.1.0``... when ``o``
        yields a (nested) tuple that a multi-output op registered."""
        if o.name in self.tensor_of or not isinstance(self.v.get(o.name), (tuple, list)):
            return [o.name]

        def walk(prefix, v):
            if isinstance(v, (tuple, list)):
                return [n for k, item in enumerate(v) for n in walk(f"{prefix}.{k}", item)]
            return [prefix]
        return walk(o.name, self.v[o.name])

    def _node(self, node):
        import torch
        from qrt_export import rules

        gm, b = self.gm, self.b
        val = self.v.get(node.name)
        if node.name in self.done:  # lowered by a rule with an earlier node (a fused pattern)
            return
        if node.op == "placeholder":
            if val is None or isinstance(val, (bool, int, float, str)):
                # an optional argument left at its default (timm's attn_mask=None,
                # is_causal=False): a constant of the graph, not an input
                return
            b.inputs.append(self._tensor(node))
            return
        if node.op == "get_attr":
            return
        if node.op == "output":
            # (out, (h_n, c_n)): three outputs; a None (wav2vec2's lengths without an input
            # lengths) is no output, as torch's pytree leaves of the result skip it here too
            outs = [o for o in _flatten(node.args[0]) if o is not None]
            names = []
            for o in outs:  # a node yielding a tuple (an LSTM's): its tensors, in order
                names += self._output_names(o) if hasattr(o, "name") else [None]
            for o, name in zip(outs if len(names) == len(outs) else names, names):
                if name is None or name not in self.tensor_of:
                    if self.missing:  # computed by an op already reported
                        raise _Skip()
                    raise UnsupportedError(f"model output {o} is not a tensor computed "
                                           "by a supported op")
                b.outputs.append(self.tensor_of[name])
            return
        if node.op == "call_function" and node.target is operator.getitem and \
                isinstance(self.v.get(getattr(node.args[0], "name", None)), (tuple, list)) \
                and isinstance(val, torch.Tensor):
            # one output of a multi-output op (chunk/split): emitted with that op
            k = node.args[1]
            n_out = len(self.v[node.args[0].name])
            k = k % n_out if isinstance(k, int) and -n_out <= k < n_out else k
            src = f"{node.args[0].name}.{k}"
            if src not in self.tensor_of:
                self._unsupported(node, f"getitem of {node.args[0].name} (its op is not "
                                  "supported)")
            self.tensor_of[node.name] = self.tensor_of[src]
            return
        multi = isinstance(val, (tuple, list)) and len(val) > 0 and (
            _tensor_leaves(val) or (node.op == "call_module" and isinstance(val[0], torch.Tensor)
                                    and all(t is None for t in val[1:])))
        # (output, None): nn.MultiheadAttention(..., need_weights=False), rules/attention.py
        if not isinstance(val, torch.Tensor) and not multi:
            # size()/getattr/int arithmetic feeding a view: folded into recorded shapes
            if node.op == "call_method" and node.target in ("size", "dim"):
                return
            if node.op == "call_function" and node.target in (getattr, operator.getitem,
                                                               operator.mul,
                                                               operator.floordiv):
                return
            if _from_shapes(node, self.v):
                # shape checks (``torch._assert(x.ndim == 4, ...)`` with no users, timm's
                # BatchNormAct2d) and shape arithmetic: verified when torch ran the graph at
                # the example inputs, constants of the exported shapes
                return
            self._unsupported(node, f"{node.op} {node.target} (non-tensor result)")
        if node.op == "call_module":
            m = gm.get_submodule(node.target)
            spec = custom.lookup(m)
            if spec is not None:  # format 1.1: a user op (qrt_export.register)
                if node.kwargs or not all(hasattr(a, "name") for a in node.args):
                    self._unsupported(node, "custom module called with non-tensor or "
                                      "keyword arguments")
                self._emit("custom", node, list(node.args),
                           attrs=custom.attrs_for(m, spec))
                return
            what = f"module {type(m).__module__}.{type(m).__name__}"
            self._apply(rules.find_module_rule(m), node, m, what)
        elif node.op == "call_function":
            what = f"function {getattr(node.target, '__name__', node.target)}"
            self._apply(rules.find_function_rule(node.target), node, node.target, what)
        elif node.op == "call_method":
            self._apply(rules.find_method_rule(node.target), node, node.target,
                        f"method Tensor.{node.target}")
        else:
            self._unsupported(node, f"{node.op} {node.target}")

    def _apply(self, rule, node, target, what):
        from qrt_export import rules
        if rule is None:
            self._unsupported(node, what)
        try:
            rule(self, node, target)
        except rules.Decline as e:
            self._unsupported(node, f"{what} ({e.why})" if e.why else what)

    def _quantize(self, node, a0, val):
        import torch
        if val.dtype not in (torch.quint8, torch.qint8, torch.qint32):
            self._unsupported(node, f"quantize to {val.dtype}")
        if getattr(a0, "op", None) == "get_attr":
            # a parameter quantized in the graph (timm ViT's pos_embed under FX static): made
            # where an op first reads it (_tensor), batch-following (rules/attention.py)
            self.qconst[node.name] = a0
            return
        self._emit("quantize", node, [a0])

    def _pool(self, kind, node, a0, k, s, p, **kw):
        k = _int1(k)
        kwargs = {"kernel_size": k, "stride": _int1(s) if s not in (None, (), []) else k,
                  "padding": _int1(p) if p is not None else 0}
        for key, v in kw.items():
            if key == "dilation":
                kwargs[key] = _int1(v) if v is not None else 1
            else:
                kwargs[key] = bool(v)
        self._emit(kind, node, [a0], attrs=kwargs)

    def _fpool(self, kind, node, names):
        # F.max_pool1d is a boolean_dispatch wrapper with a (*args, **kwargs) signature:
        # map positional arguments by torch's documented order.
        args = dict(zip(("input",) + names, node.args))
        args.update(node.kwargs)
        if args.get("return_indices"):
            self._unsupported(node, f"{kind}(return_indices=True)")
        extra = {n: args[n] for n in names[3:] if n in args}
        k, s = args.get("kernel_size"), args.get("stride")
        whole = _is_length_of(k, node.args[0])
        if whole:  # F.avg_pool1d(x, x.shape[-1]): a pool over the whole length, any length
            if s is not None and not _is_length_of(s, node.args[0]):
                self._unsupported(node, f"{kind} with kernel x.shape[-1] and another stride")
            if args.get("padding", 0) not in (0, (0,), [0]):
                self._unsupported(node, f"{kind} with kernel x.shape[-1] and padding")
            k = s = self.v[k.name]
            extra["whole_length"] = True
        elif hasattr(k, "op") or hasattr(s, "op"):
            self._unsupported(node, f"{kind} with a kernel or stride computed in forward() "
                              "(only x.shape[-1] / x.size(-1) of its own input is followed)")
        self._pool(kind, node, node.args[0], k, s, args.get("padding", 0), **extra)


def _from_shapes(n, values, _depth=0) -> bool:
    """Whether fx node ``n`` yields a non-tensor computed from shapes and constants only (no
    tensor's values): ``x.shape``, ``x.size(d)``, ``x.dim()``, and Python arithmetic,
    comparisons and asserts on them. Such a node is a constant at the exported shapes."""
    import torch
    if isinstance(values.get(n.name), torch.Tensor) or _depth > 50:
        return False
    if n.op == "call_method" and n.target in ("size", "dim", "numel"):
        return True
    if n.op == "call_function" and n.target is getattr and len(n.args) >= 2 and \
            n.args[1] in ("shape", "ndim", "dtype", "device", "is_quantized"):
        return True
    if n.op in ("call_function", "call_method"):
        return all(_from_shapes(a, values, _depth + 1) for a in n.all_input_nodes)
    return False


def _flatten(v) -> list:
    """Nested tuples / lists / dicts of outputs (``{"out": ...}``, HF ``ModelOutput``),
    flattened in order (dicts in their keys' order, as torch's pytree does)."""
    if isinstance(v, (tuple, list)):
        return [x for item in v for x in _flatten(item)]
    if isinstance(v, dict):
        return [x for item in v.values() for x in _flatten(item)]
    return [v]


def _tensor_leaves(val) -> bool:
    """Whether a (nested) tuple holds only tensors: (y, (h_n, c_n)) of an LSTM."""
    import torch
    return all(_tensor_leaves(t) if isinstance(t, (tuple, list)) and t else
               isinstance(t, torch.Tensor) for t in val)


def _is_length_of(v, x) -> bool:
    """``v`` is the fx node of ``x.shape[-1]`` / ``x.shape[2]`` / ``x.size(-1)`` / ``x.size(2)``
    (the length of a 3-d input ``x``)."""
    if not hasattr(v, "op"):
        return False
    if v.op == "call_method" and v.target == "size" and v.args and v.args[0] is x:
        dim = v.args[1] if len(v.args) > 1 else v.kwargs.get("dim")
        return dim in (-1, 2)
    if v.op == "call_function" and v.target is operator.getitem and len(v.args) == 2 and \
            v.args[1] in (-1, 2):
        base = v.args[0]
        if hasattr(base, "op") and ((base.op == "call_function" and base.target is getattr
                                     and base.args == (x, "shape")) or
                                    (base.op == "call_method" and base.target == "size" and
                                     len(base.args) == 1 and base.args[0] is x)):
            return True
    return False


def _int1(v):
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise UnsupportedError(f"expected a single (1-d) size, got {v!r}")
        v = v[0]
    return int(v)


def _plain(obj):
    """config() values as JSON-able plain Python (numpy scalars/arrays become numbers/lists)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


# ---- agreement -------------------------------------------------------------------------------
def flat_outputs(out) -> list:
    """A qrt model's result (an array, a tuple, or forward()'s own structure of tuples, lists
    and dicts) as the flat list of its outputs, in the blob's order (None dropped)."""
    if isinstance(out, dict):
        return [x for v in out.values() for x in flat_outputs(v)]
    if isinstance(out, (tuple, list)):
        return [x for v in out for x in flat_outputs(v)]
    return [] if out is None else [out]


def _float_stats(q, t) -> Dict[str, Any]:
    """|qrt - torch| of a float output: the largest difference, torch's largest magnitude."""
    a = np.asarray(q, np.float64)
    tt = t.detach().numpy().astype(np.float64)
    d = np.abs(a - tt)
    d = np.where(np.isnan(a) & np.isnan(tt), 0.0, d)
    return {"total": int(d.size), "max_abs": float(np.nanmax(d, initial=0.0)),
            "max_ref": float(np.nanmax(np.abs(tt), initial=0.0))}


def agreement(model_torch, qmodel, inputs, engine, q_inputs=None) -> Dict[str, Any]:
    """Compare qrt's outputs with torch's (model repacked for ``engine``) on ``inputs``, end
    to end. Quantized outputs, and float outputs dequantized from a quantized tensor, are
    compared as codes (``exact`` / ``total``, ``max_lsb`` in steps of their scale); float
    outputs computed by float ops as values (``float``: ``max_abs``, torch's ``max_ref``, and
    ``torch_var``: torch's own difference between oneDNN on and off on the same model and
    inputs, the scale of float32 variation a float output carries)."""
    import torch
    tm = _repack(model_torch, engine)
    with _engine(engine), torch.no_grad():
        t_out = tm(*inputs)
    t_outs = [t for t in torch.utils._pytree.tree_leaves(t_out)   # tuples, dicts, HF
              if isinstance(t, torch.Tensor)]                      # ModelOutput; no None
    q_in = _qrt_inputs(inputs if q_inputs is None else q_inputs)
    q_outs = flat_outputs(qmodel(*q_in))
    res: Dict[str, Any] = {"exact": 0, "total": 0, "max_lsb": 0}
    flt: Dict[str, Any] = {"total": 0, "max_abs": 0.0, "max_ref": 0.0}
    float_k = []
    for k, (q, t) in enumerate(zip(q_outs, t_outs)):
        lsb = _output_lsb(qmodel, k)
        if (isinstance(t, torch.Tensor) and t.is_quantized) or lsb:
            r = _compare(q, t, lsb)
            res["exact"] += r["exact"]
            res["total"] += r["total"]
            res["max_lsb"] = max(res["max_lsb"], r["max_lsb"])
            continue
        f = _float_stats(q, t)
        float_k.append(k)
        flt["total"] += f["total"]
        flt["max_abs"] = max(flt["max_abs"], f["max_abs"])
        flt["max_ref"] = max(flt["max_ref"], f["max_ref"])
    if float_k:
        try:   # torch against itself: oneDNN off
            with _engine(engine), torch.no_grad(), torch.backends.mkldnn.flags(enabled=False):
                t_alt = [t for t in torch.utils._pytree.tree_leaves(tm(*inputs))
                         if isinstance(t, torch.Tensor)]
            flt["torch_var"] = max(_float_stats(t_alt[k], t_outs[k])["max_abs"]
                                   for k in float_k)
        except Exception:  # noqa: BLE001 - reported without it
            pass
        res["float"] = flt
    return res


def _compare(qrt_out, torch_out, lsb) -> Dict[str, Any]:
    """Codes of a quantized output (or of a float one dequantized at scale ``lsb``)."""
    import torch
    if isinstance(torch_out, torch.Tensor) and torch_out.is_quantized:
        a = qrt_out.int_repr().astype(np.int64)
        t = torch_out.int_repr().numpy().astype(np.int64)
        d = np.abs(a - t)
        return {"exact": int((d == 0).sum()), "total": int(d.size), "max_lsb": int(d.max(
            initial=0))}
    a = np.asarray(qrt_out, dtype=np.float32)
    t = torch_out.detach().numpy().astype(np.float32)
    d = np.abs(a.astype(np.float64) - t.astype(np.float64))
    return {"exact": int((d == 0).sum()), "total": int(d.size),
            "max_lsb": int(round(float(d.max(initial=0.0)) / lsb))}


def format_float(f) -> str:
    """One float comparison for the report: the largest |difference|, relative to torch's
    largest magnitude, with torch's own oneDNN on/off variation when measured."""
    rel = f["max_abs"] / f["max_ref"] if f.get("max_ref") else 0.0
    out = f"max |difference| {f['max_abs']:.3g} ({rel:.2g} of max |torch| {f['max_ref']:.3g})"
    if "torch_var" in f:
        out += f"; torch itself, oneDNN on vs off: {f['torch_var']:.3g}"
    return out


def _output_lsb(qmodel, k) -> Optional[float]:
    """Scale of the quantized tensor a float output was dequantized from (its LSB)."""
    out_t = qmodel._blob.outputs[k]
    for op in qmodel._blob.ops:
        if op.outputs == [out_t] and op.kind == "dequantize":
            return qmodel._t[op.inputs[0]].scale
    return None


# ---- op-by-op check ------------------------------------------------------------------------------
FLOAT_RTOL = 1e-4   # export check for float outputs: |qrt - torch| <= FLOAT_RTOL * max|torch|,
#                     or twice torch's own float32 variation on that op (TORCH_VAR_FACTOR)
TORCH_VAR_FACTOR = 2.0


def torch_value(values, name):
    """torch's value for the blob tensor ``name``: the graph node of that name, or element
    ``k`` of a node yielding a tuple for ``node.k`` (``node.1.0`` for nested ones); None
    when no node computed it (a tensor only qrt has: a table's codes before a layout op)."""
    import torch
    v = values.get(name)
    if v is None and "." in name:
        base, _, rest = name.partition(".")
        v = values.get(base)
        for part in rest.split("."):
            if not (isinstance(v, (tuple, list)) and part.isdigit() and int(part) < len(v)):
                return None
            v = v[int(part)]
    return v if isinstance(v, torch.Tensor) else None


def _feed(view, t) -> bool:
    """Write torch's value ``t`` into qrt's buffer ``view`` (same shape; a quantized tensor at
    the same scale and zero point, as codes). False (nothing written) when they do not
    correspond."""
    from qrt._tensor import QTensor
    if tuple(t.shape) != tuple(view.shape):
        return False
    if t.is_quantized:
        if not isinstance(view, QTensor) or \
                t.qscheme() not in (_torch().per_tensor_affine, _torch().per_tensor_symmetric) \
                or float(t.q_scale()) != float(view.q_scale()) or \
                int(t.q_zero_point()) != int(view.q_zero_point()):
            return False
        np.copyto(view.int_repr(), t.int_repr().numpy(), casting="unsafe")
        return True
    if isinstance(view, QTensor) or not isinstance(view, np.ndarray):
        return False
    tv = t.detach().numpy()
    if tv.dtype != view.dtype:
        return False
    np.copyto(view, tv)
    return True


def _torch():
    import torch
    return torch


def torch_variation(gm, values) -> Dict[str, float]:
    """torch's own float32 variation, op by op: every node of ``gm`` run again with oneDNN
    (mkldnn) off, on the inputs torch computed with it on (``values``), and the largest
    |difference| of each float output. It is what torch itself gives for the same op and the
    same inputs on two of its CPU paths (oneDNN's and ATen's native convolutions differ in
    summation order); the export check allows qrt twice that (TORCH_VAR_FACTOR)."""
    import torch
    import torch.fx as fx
    var: Dict[str, float] = {}

    class _Var(fx.Interpreter):
        def run_node(self, n):
            ref = values.get(n.name)
            try:
                with torch.backends.mkldnn.flags(enabled=False):
                    v = super().run_node(n)
            except Exception:  # noqa: BLE001 - a node only the other engine runs
                return _snapshot(ref)
            for k, (a, r) in enumerate(zip(_flatten(v), _flatten(ref))):
                if isinstance(a, torch.Tensor) and isinstance(r, torch.Tensor) and \
                        not a.is_quantized and not r.is_quantized and a.is_floating_point() \
                        and a.shape == r.shape and a.numel():
                    d = (a.double() - r.double()).abs()
                    d = torch.where(torch.isnan(d), torch.zeros_like(d), d)
                    name = n.name if not isinstance(v, (tuple, list)) else f"{n.name}.{k}"
                    var[name] = float(d.max())
            return _snapshot(ref) if ref is not None else v
    with _engine("qnnpack"), torch.no_grad():
        _Var(gm).run(*[values[n.name] for n in gm.graph.nodes if n.op == "placeholder"])
    return var


def check_ops(qmodel, values, inputs, refused=None, gm=None) -> List[Dict[str, Any]]:
    """Run qrt op by op **on torch's own inputs** and compare every op's outputs with torch's
    value of the same graph node (``values``, from the qnnpack run): before each op, the
    tensors it reads are overwritten with torch's values (codes of a quantized tensor, float32
    values of a float one), so each op is judged alone and a difference accepted upstream
    (float noise) never fails a later op. Quantized outputs must be equal (0 LSB); float
    outputs within FLOAT_RTOL of the tensor's largest magnitude, or within TORCH_VAR_FACTOR
    times torch's own float32 variation on that op (oneDNN on / off, :func:`torch_variation`,
    computed from ``gm`` only when an op needs it). Returns one row per op (index, op, name,
    source, exact, total, max_lsb or max_abs with bound, ok, note, inputs: "torch" when every
    input it reads came from torch, "qrt" otherwise)."""
    import torch
    from qrt._tensor import QTensor
    q_in = _qrt_inputs(inputs)
    ex = qmodel._exec
    plan = ex.plan(qmodel._in_shapes(q_in))
    g = ex.graph
    model_inputs = set(g.inputs)
    var = None
    rows = []
    with ex._lock:
        for x, dst in zip(q_in, plan.in_views):
            np.copyto(dst, x.int_repr() if isinstance(x, QTensor) else x, casting="no")
        for n, call in plan.bound:
            fed = "torch"
            for i in n.input_ids:
                t_in = g.tensors[i]
                if i in model_inputs or t_in.kind in ("constant", "state"):
                    continue
                tv = torch_value(values, t_in.name)
                if tv is None or i not in plan.views or not _feed(plan.views[i], tv):
                    fed = "qrt"
            call[0](*call[1], **call[2])
            if len(n.output_ids) != 1:
                # ops with several outputs (an RNN's sequence and states, chunk / split) are
                # judged by the ops that read them, each fed torch's value of every output:
                # a dynamic RNN requantizes its state at every step, so one code flip inside
                # a sequence is float noise, not a wrong op (docs/float-ops.md, RNNs)
                continue
            pairs = [(plan.views.get(n.output_ids[0]), values.get(n.name))]
            pairs = [(v, t) for v, t in pairs if isinstance(t, torch.Tensor) and v is not None
                     and tuple(t.shape) == tuple(v.shape) and t.is_quantized ==
                     isinstance(v, QTensor)]
            if not pairs:
                continue
            row = {"index": n.index, "op": n.label, "name": n.name, "source": n.source,
                   "note": (refused or {}).get(n.name, ""), "inputs": fed,
                   "exact": 0, "total": 0, "ok": True}
            for k, (v, t) in enumerate(pairs):
                if t.is_quantized:
                    d = np.abs(v.int_repr().astype(np.int64) -
                               t.int_repr().numpy().astype(np.int64))
                    row["exact"] += int((d == 0).sum())
                    row["total"] += int(d.size)
                    row["max_lsb"] = max(row.get("max_lsb", 0), int(d.max(initial=0)))
                    row["ok"] = row["ok"] and row["max_lsb"] == 0
                    continue
                tt = t.detach().numpy().astype(np.float64)
                qv = np.asarray(v, np.float64)
                same_nan = np.isnan(tt) == np.isnan(qv)
                d = np.abs(qv - tt)
                d = np.where(np.isnan(d) & same_nan, 0.0, d)
                ref = float(np.nanmax(np.abs(tt), initial=0.0)) if tt.size else 0.0
                m = float(d.max(initial=0.0))
                bound = FLOAT_RTOL * max(ref, 1e-30)
                ok = bool(same_nan.all()) and m <= bound
                if not ok and same_nan.all() and gm is not None:
                    if var is None:
                        var = torch_variation(gm, values)
                    tname = g.tensors[n.output_ids[k]].name
                    tv_ = var.get(tname, var.get(n.name, 0.0) if len(pairs) == 1 else 0.0)
                    row["torch_var"] = max(row.get("torch_var", 0.0), tv_)
                    bound = max(bound, TORCH_VAR_FACTOR * tv_)
                    ok = m <= bound
                row["exact"] += int((d == 0).sum())
                row["total"] += int(d.size)
                if m >= row.get("max_abs", -1.0):
                    row.update(max_abs=m, bound=bound, max_ref=ref)
                row["ok"] = row["ok"] and ok
            rows.append(row)
    return rows


def describe_row(r) -> str:
    """'op 7 conv1d 'conv2' (source): what differs' for a check_ops row."""
    if r.get("max_lsb", 0) or ("max_abs" not in r):
        what = (f"{r['total'] - r['exact']}/{r['total']} codes differ, max {r['max_lsb']} "
                "LSB")
    else:
        what = (f"float output max |difference| {r['max_abs']:.3g} beyond its bound "
                f"{r['bound']:.3g} (max |torch| {r['max_ref']:.3g}"
                + (f"; torch itself, oneDNN on vs off: {r['torch_var']:.3g}"
                   if "torch_var" in r else "") + ")")
    fed = "" if r.get("inputs", "torch") == "torch" else " (on qrt's own inputs: torch has no " \
        "value for one of them)"
    return (f"op {r['index']} {r['op']} '{r['name']}' ({r['source'] or 'no source'}): "
            f"{what}{fed}")


def _first_mismatch(rows):
    for r in rows:
        if not r["ok"] and not r["note"]:
            return r
    return None


# ---- public entry ------------------------------------------------------------------------------
def export(model, example_inputs, path, *, calibration_data=None, qconfig_mapping=None,
           check: bool = True, verbose: bool = True, source: Optional[str] = None,
           allow_mismatch: bool = False, keep_float: bool = False,
           capture: str = "auto") -> ExportReport:
    """Export a quantized torch model (or a float one, quantized here) to a qrt ``.bin``.

    Parameters
    ----------
    model : torch.nn.Module or str
        A model still in its QAT state (FakeQuantize modules from ``prepare_qat`` /
        ``prepare_qat_fx``: a copy is converted with torch.ao first, see qrt_export/qat.py),
        an eager-mode quantized model (converted, incl. QAT), an FX ``GraphModule`` from
        ``convert_fx``, a ``quantize_dynamic`` model, a float model (quantized here with
        ``calibration_data``), or the path of a whole model saved with ``torch.save``.
    example_inputs : tensor, ndarray or tuple of them
        Inputs used to trace the model, record shapes/qparams and check the result.
    path : str
        Where to write the blob.
    calibration_data : iterable of inputs
        Required for float models (several batches: one batch gives poor qparams), which
        are quantized here with torch.ao FX; ignored for quantized ones.
    qconfig_mapping : torch.ao.quantization.QConfigMapping, optional
        For float models; default: torch's ``onednn`` default (see docs).
    keep_float : bool
        A float model (no quantized module: e.g. what ``quantize_dynamic`` returns for a
        model without ``nn.Linear``) is exported as it is, run by qrt's float32 ops
        (docs/float-ops.md), instead of being refused or quantized from
        ``calibration_data``.
    capture : "auto", "fx" or "export"
        How an ``nn.Module`` becomes a graph: "auto" (default) traces it with torch.fx and,
        where torch.fx cannot take it (shape checks and control flow in forward(), nested
        tuple / dict inputs, ops it cannot follow), captures it with ``torch.export`` instead
        (qrt_export/capture.py, docs/architecture.md); "fx" or "export" forces one.
    check : bool
        Compare qrt with torch op by op on ``example_inputs`` (docs/export.md). A quantized
        output that differs from torch's qnnpack result, or a float output beyond the float
        contract, raises :class:`MismatchError` naming the first op that diverges (the blob is
        removed) unless ``allow_mismatch``.
    """
    import warnings
    with warnings.catch_warnings():
        # torch 2.13 warns on every torch.ao.quantization use; the report says it once
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*torch.ao.quantization.*")
        warnings.filterwarnings("ignore", category=UserWarning, module="torch.ao")
        if capture not in ("auto", "fx", "export"):
            raise ValueError(f"capture must be 'auto', 'fx' or 'export', got {capture!r}")
        return _export(model, example_inputs, path, calibration_data, qconfig_mapping, check,
                       verbose, source, allow_mismatch, keep_float, capture)


def _export(model, example_inputs, path, calibration_data, qconfig_mapping, check, verbose,
            source, allow_mismatch, keep_float=False, capture="auto") -> ExportReport:
    import torch
    from qrt_export import pt2e
    engine_before = torch.backends.quantized.engine
    src = source
    notes: List[str] = []
    if isinstance(model, (str, os.PathLike)):
        src = src or os.fspath(model)
        if os.fspath(model).endswith(".pt2"):
            model = pt2e.load_pt2(os.fspath(model))
        else:
            model = torch_load(os.fspath(model), notes)
    inputs = _as_tuple(example_inputs)
    pt2e_src = None
    if pt2e.is_pt2e(model):  # torchao's convert_pt2e program: rewritten to quantized ops
        what = type(model).__name__
        if calibration_data is not None:  # the quantizer chose the float ops, not qrt-export
            raise ValueError(
                f"--calibrate (calibration_data) quantizes a float model; {src or what} is a "
                "converted pt2e program, already quantized by its quantizer, and calibrating "
                "it again changes nothing. Its float ops are those the quantizer left "
                "unannotated: annotate them in the quantizer (executorch's XNNPACKQuantizer "
                "with get_symmetric_quantization_config() annotates conv1d, conv2d and linear; "
                "torchao's X86InductorQuantizer and ArmInductorQuantizer leave conv1d float), "
                "or export the float nn.Module (torch.save(model, 'float.pt')) with "
                "--calibrate to quantize it with torch.ao")
        model, pt2e_src, pt2e_ref = pt2e.to_ao_graph(model, inputs)
        kind = (f"pt2e ({what} of torchao's convert_pt2e, its dequantize -> op -> quantize "
                "groups lowered to qrt's integer ops)")
        rep = _export_graph(model, inputs, path, check, verbose, src or what, allow_mismatch,
                            kind, "qnnpack", (pt2e_src, pt2e_ref))
        rep.notes = notes
        return rep
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, a torch.export program (or a "
                        f"path), got {type(model)}")
    pt2e.refuse_quantize_configs(model)
    from qrt_export import qat
    qat_prepared = qat.is_qat_prepared(model)
    if qat_prepared:  # FakeQuantize modules: convert a copy with torch.ao first
        model = qat.convert_qat(model)
    model = model.eval()
    kind = _is_quantized_model(model)
    if kind == "float" and any(isinstance(x, torch.Tensor) and x.is_quantized for x in inputs):
        kind = "quantized (quantized example inputs)"
    if qat_prepared:
        if kind == "float":
            raise UnsupportedError("the QAT-prepared model has no quantized module after "
                                   "torch.ao convert (no QuantStub / qconfig?)")
        kind = f"{kind} (QAT-prepared model converted by qrt-export with torch.ao)"
    converted_under = engine_before
    if kind == "dynamic" and calibration_data is not None:
        # --calibrate on a quantize_dynamic model: quantize it statically (its float convs
        # too), from the float model its dynamic Linear came from
        fm = dynamic_to_float(model)
        if fm is not None:
            model = quantize_float_model(fm, calibration_data, inputs, qconfig_mapping)
            kind = ("quantized (quantize_dynamic model quantized statically by qrt-export "
                    "with torch.ao FX from calibration data)")
            converted_under = "qnnpack"
    index_inputs = any(isinstance(x, torch.Tensor) and x.dtype in (torch.int64, torch.int32)
                       for x in torch.utils._pytree.tree_leaves(inputs))
    if kind == "float" and keep_float:
        kind = "float (exported as float32 ops, keep_float)"
    elif kind == "float" and calibration_data is None and index_inputs:
        # an embedding model (index inputs): exported in float, tables and float ops as they
        # are (weight-only quantization is the user's choice: float_qparams_weight_only_qconfig)
        kind = "float (index inputs: exported without quantization)"
    elif kind == "float":
        if calibration_data is None:
            raise UnsupportedError(
                f"{type(model).__name__} is a float model (no quantized module): qrt runs "
                "quantized models. Quantize it with torch.ao yourself, or let qrt-export do it "
                "(FX, qnnpack, BatchNorm folded, ReLU fused) from calibration data: "
                "`qrt-export model.pt --input x.npy --calibrate calib.npy -o model.bin` "
                "(calib.npy: several batches of real inputs, batch first), or "
                "export(model, x, path, calibration_data=[batch, ...]); or export it as "
                "float32 ops with keep_float=True (--keep-float)")
        calib = calibration_data
        model, inputs, how = _quantize_float(model, calib, inputs, qconfig_mapping, capture)
        kind = "quantized (float model quantized by qrt-export with torch.ao FX" + how + ")"
        converted_under = "qnnpack"
    rep = _export_graph(model, inputs, path, check, verbose, src, allow_mismatch, kind,
                        converted_under, None, capture)
    rep.notes = notes
    return rep


def _quantize_float(model, calibration_data, inputs, qconfig_mapping, capture):
    """(quantized GraphModule, its example inputs, how it was captured) of a float model:
    torch.ao FX on the model itself, or, where torch.fx cannot trace it (shape checks and
    control flow in forward(), nested inputs), on the graph torch.export captures
    (qrt_export/capture.py), whose shapes are the example's: calibration runs in batches of
    the example's batch size."""
    import torch
    err = None
    if capture != "export" and all(isinstance(x, torch.Tensor) for x in inputs):
        try:
            return quantize_float_model(model, calibration_data, inputs, qconfig_mapping), \
                inputs, ""
        except Exception as e:  # noqa: BLE001 - torch.fx raises many types
            err = e
            if capture == "fx":
                raise
    from qrt_export.capture import CaptureError
    from qrt_export.capture import capture as _capture
    try:
        gm, flat = _capture(model, inputs)
    except (CaptureError, UnsupportedError) as ce:
        if err is None:
            raise
        raise UnsupportedError(f"torch.fx cannot quantize {type(model).__name__} "
                               f"({type(err).__name__}: {str(err).splitlines()[0][:200]}); and "
                               f"through torch.export: {ce}") from ce
    b = int(flat[0].shape[0]) if flat and flat[0].dim() else 1
    chunks = []
    for batch in calibration_data:
        leaves = torch.utils._pytree.tree_leaves(_as_tuple(batch))
        n = min(int(t.shape[0]) for t in leaves) if leaves else 0
        chunks += [tuple(t[i:i + b] for t in leaves) for i in range(0, n - b + 1, b)]
    if not chunks:
        raise UnsupportedError(f"the calibration batches hold fewer samples than the example's "
                               f"batch size {b} (the graph torch.export captured runs at the "
                               "example's shapes)")
    q = quantize_float_model(gm, chunks, flat, qconfig_mapping)
    why = f"torch.fx could not trace it: {str(err).splitlines()[0][:160]}" if err else "asked"
    return q, flat, f", on the graph torch.export captured ({why})"


def _io_spec(v):
    """The nesting of a forward() argument or result as JSON (docs/blob-format.md, meta "io"):
    null for a tensor, "none" for None, {"tuple": [...]}, {"list": [...]}, {"dict": [[key,
    ...], ...]} (HF ModelOutput is a dict of its set fields)."""
    import torch
    if isinstance(v, torch.Tensor):
        return None
    if v is None:
        return "none"
    if isinstance(v, dict):
        return {"dict": [[str(k), _io_spec(x)] for k, x in v.items()]}
    if isinstance(v, (tuple, list)):
        return {"tuple" if isinstance(v, tuple) else "list": [_io_spec(x) for x in v]}
    raise UnsupportedError(f"a model argument or result of type {type(v).__name__} (tensors, "
                           "None, tuples, lists and dicts of them)")


def _io_names(spec, prefix=""):
    """The dotted path of every tensor leaf of ``spec``, in order."""
    if spec is None:
        return [prefix or "output"]
    if spec == "none":
        return []
    if "dict" in spec:
        return [n for k, c in spec["dict"] for n in _io_names(c, f"{prefix}.{k}" if prefix
                                                              else k)]
    kids = spec.get("tuple", spec.get("list", []))
    return [n for i, c in enumerate(kids) for n in _io_names(c, f"{prefix or 'output'}.{i}")]


def _trivial(spec, top_level_tuple=False) -> bool:
    """A spec a flat argument list / a flat tuple of results already says."""
    if spec is None:
        return True
    kids = spec.get("tuple") if isinstance(spec, dict) else None
    return top_level_tuple and kids is not None and all(c is None for c in kids)


def _io_structure(model, structured, n_in, n_out):
    """{"inputs": spec, "outputs": spec, "output_names": [...]} of the model's forward()
    arguments and result (one run under qnnpack), or None when it cannot be computed or
    does not match the blob's flat inputs and outputs; a trivial spec is left out (the flat
    tuple says it)."""
    import torch
    try:
        with _engine("qnnpack"), torch.no_grad():
            out = model(*structured)
        ins = {"tuple": [_io_spec(x) for x in structured]}
        outs = _io_spec(out)
    except Exception:  # noqa: BLE001 - names are a nicety: the blob is right without them
        return None
    n_leaves = len([x for x in torch.utils._pytree.tree_leaves(tuple(structured))
                    if isinstance(x, torch.Tensor)])
    names = _io_names(outs)
    if n_leaves != n_in or len(names) != n_out:
        return None
    io: Dict[str, Any] = {"output_names": names if outs is not None else [None]}
    if not _trivial(ins, True):
        io["inputs"] = ins
    if not _trivial(outs, True):
        io["outputs"] = outs
    return io


class _UseExport(Exception):
    """Capture with torch.export (``err``: why torch.fx could not, or None when asked to)."""

    def __init__(self, err):
        super().__init__(str(err))
        self.err = err


def _lower(gm, inputs):
    """(blob builder, values, values at batch + 1 or None, fixed batch, refused nodes) of the
    fx graph ``gm`` (torch.fx's trace or torch.export's capture) on ``inputs``."""
    import torch
    from qrt_export import pt2e
    refused: Dict[str, str] = {}
    values = _run_nodes(gm, inputs, refused)
    if any(pt2e._is_unbind(n) or (n.op == "call_function" and n.target in pt2e._sdpa_fns())
           for n in gm.graph.nodes) and pt2e.fx_attention(gm, values):
        values = _run_nodes(gm, inputs, refused)   # unbind / attention: the shared table's ops
    batch = int(inputs[0].shape[0]) if inputs and inputs[0].dim() else 1
    try:
        if any(x.dim() == 1 and x.dtype in (torch.int64, torch.int32) for x in inputs):
            # 1-d indices (EmbeddingBag text + offsets) have no batch dim: no probe, no
            # tensor is batched, and every length the ops accept runs
            raise _Skip()
        values2 = _run_nodes(gm, _batched(inputs))
        fixed = False
        const = set()     # parameters and what only they feed: no batch to follow
        for n in gm.graph.nodes:
            if n.op == "get_attr" or (n.op == "call_function" and n.all_input_nodes and
                                      all(a.name in const for a in n.all_input_nodes)):
                const.add(n.name)
        for name, v in values.items():
            if name in const:
                continue
            v2 = values2.get(name)
            if isinstance(v, torch.Tensor) and v.dim() and isinstance(v2, torch.Tensor):
                if tuple(v2.shape[1:]) != tuple(v.shape[1:]) or v2.shape[0] != v.shape[0] + 1:
                    fixed = True
    except _Skip:
        values2, fixed = None, False
    except Exception:  # noqa: BLE001 - a graph that only runs at one batch size
        values2, fixed = None, True
    conv = _Converter(gm, values, values2, fixed, batch)
    return conv.convert(), values, values2, fixed, refused


def _export_graph(model, inputs, path, check, verbose, src, allow_mismatch, kind,
                  converted_under, pt2e_info, capture="auto") -> ExportReport:
    import torch
    from qrt_export.rules.layout import refuse_conv_padding_modes
    refuse_conv_padding_modes(model)   # before torch runs them (it cannot)
    structured = inputs
    with _engine("qnnpack"):
        qm = _repack(model, "qnnpack")
        try:
            if capture == "export" and not isinstance(qm, torch.fx.GraphModule):
                raise _UseExport(None)
            if capture != "export" and not all(isinstance(x, torch.Tensor) for x in inputs):
                raise _UseExport(UnsupportedError(
                    "torch.fx takes tensor arguments only (the example inputs nest tuples, "
                    "lists or dicts)"))
            gm = _trace(qm)
            b, values, values2, fixed, refused = _lower(gm, inputs)
            how = "torch.fx"
        except (UnsupportedError, _UseExport) as e:
            fx_err = e.err if isinstance(e, _UseExport) else e
            if capture == "fx" or isinstance(qm, torch.fx.GraphModule) or \
                    not isinstance(qm, torch.nn.Module):
                raise fx_err if fx_err is not None else e
            from qrt_export.capture import CaptureError
            from qrt_export.capture import capture as _capture
            try:
                gm, inputs = _capture(qm, structured)
                b, values, values2, fixed, refused = _lower(gm, inputs)
            except (CaptureError, UnsupportedError) as ce:
                if fx_err is None:
                    raise
                raise UnsupportedError(f"{fx_err}; and through torch.export: {ce}") from ce
            how = ("torch.export (torch.fx could not take it: "
                   f"{str(fx_err).splitlines()[0][:200]})" if fx_err is not None else
                   "torch.export")
            kind = f"{kind}; captured with {how}"
    if fixed:
        from qrt import _blob
        b.flags |= _blob.FLAG_FIXED_BATCH
    b.meta = {
        "exporter": f"qrt-export {EXPORTER_VERSION}",
        "qrt_version": qrt.__version__,
        "torch_version": torch.__version__,
        "source": src or f"{type(model).__module__}.{type(model).__qualname__}",
        "model_kind": kind,
        "engine": "qnnpack",
        "converted_under": converted_under,
        "example_input_shapes": [list(x.shape) for x in inputs],
    }
    io = _io_structure(qm, structured, len(b.inputs), len(b.outputs))
    if io is not None:
        for k, name in zip(b.outputs, io.pop("output_names")):
            old_name = b.tensors[k].name
            if name and name != old_name and name not in b._names and k not in b.inputs:
                b.tensors[k].name = name    # where it came from: "logits", "out", "hidden.0"
                b._names[name] = k
                if old_name in values:      # the check finds torch's value by either name
                    values[name] = values[old_name]
        if io:
            b.meta["io"] = io
    nbytes = b.write(os.fspath(path))
    qmodel = qrt.load(path)
    rep = ExportReport(os.fspath(path), nbytes, qmodel.arena_nbytes, qmodel.weights_nbytes,
                       qmodel.macs(), len(b.ops), torch_model=model, model_kind=kind)
    rep.refused = refused
    rep.float_macs = sum(r["macs"] for r in qmodel._rows(qmodel._batch_plan(None))
                         if r["op"].startswith("float_"))
    if not _has_dynamic_rnn(model):   # --calibrate keeps those dynamic: no static command
        rep.hint = rep.static_hint(src if src and os.fspath(src).endswith(".pt") else
                                   "model.pt", "x.npy", os.path.basename(os.fspath(path)))
    if check:
        rep.ops = check_ops(qmodel, values, inputs, refused, gm)
        for eng in dict.fromkeys(["qnnpack", converted_under]):
            try:
                rep.agreement[eng] = agreement(model, qmodel, structured, eng, inputs)
            except Exception as e:  # noqa: BLE001 - report, do not fail the export
                rep.agreement[eng] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0]}"}
        if pt2e_info is not None:
            from qrt_export import pt2e
            rep.pt2e = pt2e.agreement(pt2e_info[0], pt2e_info[1], values, qmodel, inputs)
        bad = _first_mismatch(rep.ops)
        if bad is not None and not allow_mismatch:
            del qmodel
            try:
                os.remove(os.fspath(path))
            except OSError:
                pass
            raise MismatchError(f"qrt differs from torch (qnnpack) first at "
                                f"{describe_row(bad)}. The blob was not written; pass "
                                "allow_mismatch=True (qrt-export --allow-mismatch) to write it "
                                "anyway.")
    if verbose:
        print(rep, file=sys.stderr)
    return rep


def load_class(spec: str):
    """'package.module:ClassName' -> the class (found in the current directory too)."""
    import importlib
    if ":" not in spec:
        raise ValueError(f"--model must look like package.module:ClassName, got {spec!r}")
    mod, _, name = spec.partition(":")
    _cwd_on_path()
    obj = importlib.import_module(mod)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj

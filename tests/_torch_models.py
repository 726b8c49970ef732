# SPDX-License-Identifier: Apache-2.0
"""Shared test helpers for published torch model classes (tests only, never qrt/)."""

import functools
import importlib.util
import sys
import types


def _stub(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules.setdefault(name, mod)
    return mod


def torchvision():
    """Import torchvision without its compiled-op registrations (they do not load with this
    torch): empty modules stand in for torchvision._meta_registrations and
    torchvision._autograd_registrations. Without Pillow (the model classes never use it, the
    datasets and transforms import it), a stub PIL stands in."""
    for name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
        _stub(name)
    if "PIL" not in sys.modules and importlib.util.find_spec("PIL") is None:
        class _Any:
            def __getattr__(self, name):
                return _Any()

            def __call__(self, *a, **k):
                return _Any()

            def __mro_entries__(self, bases):
                return (object,)

        def _getattr(name):
            if name.startswith("__"):
                raise AttributeError(name)
            return _Any()
        pil = _stub("PIL", __version__="0.0", __getattr__=_getattr)
        pil.__path__ = []
        for sub in ("Image", "ImageOps", "ImageEnhance", "ImageFilter", "ImageDraw",
                    "ImageColor", "ImageFont"):
            m = _stub("PIL." + sub, __getattr__=_getattr)
            setattr(pil, sub, m)
    import torchvision as tv
    return tv


def bn_recalibrate(m, shape, batches=3, seed=7):
    """Re-estimate BatchNorm running statistics on random inputs (weights stay random): with
    a random init the activations shrink layer by layer and every late int8 tensor would be 0,
    which compares equal to anything. Each BatchNorm's own momentum is restored afterwards
    (a cumulative average here: momentum None; left None, a QAT export of the model in train
    mode would trace ``num_batches_tracked.item()``, data-dependent)."""
    import torch
    bns = [x for x in m.modules() if isinstance(x, torch.nn.BatchNorm2d)]
    momenta = [b.momentum for b in bns]
    for b in bns:
        b.reset_running_stats()
        b.momentum = None
    g = torch.Generator().manual_seed(seed)
    m.train()
    with torch.no_grad():
        for _ in range(batches):
            m(torch.randn(*shape, generator=g))
    for b, mo in zip(bns, momenta):
        b.momentum = mo
    return m.eval()


@functools.lru_cache(maxsize=None)
def sequence_models():
    """The issue-16 sequence models the tests share (benchmarks/rnn.py builds the same
    architectures at benchmark sizes): KWS (2 x 64 LSTM, batch_first, 40 MFCC bands + Linear)
    and a Silero-VAD-style streaming model (Conv1d front end over a 30 ms chunk, LSTM with
    (h, c) passed in and out, Linear + sigmoid)."""
    import torch
    nn = torch.nn

    class KWS(nn.Module):
        """Keyword spotting: 2 x 64 LSTM, batch_first, over 40-band MFCC frames, + Linear."""

        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(40, 64, num_layers=2, batch_first=True)
            self.fc = nn.Linear(64, 12)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.fc(y[:, -1])

    class VAD(nn.Module):
        """Silero-VAD-style: Conv1d front end over a 30 ms chunk (480 samples at 16 kHz),
        LSTM with (h, c) passed in and out, Linear + sigmoid."""

        def __init__(self, width=32):
            super().__init__()
            self.conv = nn.Conv1d(1, width, 32, stride=16)
            self.lstm = nn.LSTM(width, width, batch_first=True)
            self.fc = nn.Linear(width, 1)

        def forward(self, x, h, c):
            f = torch.relu(self.conv(x)).transpose(1, 2)
            y, (h, c) = self.lstm(f, (h, c))
            return torch.sigmoid(self.fc(y[:, -1])), h, c

    return types.SimpleNamespace(KWS=KWS, VAD=VAD)


def _bare_spec(name, origin, folder):
    """A package spec (no loader) for a bare stand-in module: importlib.util.find_spec(name)
    then answers as for the real package instead of raising on a missing __spec__."""
    import importlib.machinery
    spec = importlib.machinery.ModuleSpec(name, None, origin=origin, is_package=True)
    spec.submodule_search_locations = [folder]
    return spec


def torchaudio_models(subpackage):
    """``torchaudio.models.<subpackage>`` (e.g. "wav2vec2", a package that imports relatively)
    without running ``torchaudio/__init__.py``, whose compiled extension does not load with this
    torch: bare ``torchaudio`` and ``torchaudio.models`` packages (``__path__`` set to the real
    folders, nothing executed) stand in as parents, so the subpackage's own relative imports
    resolve to the installed files. Returns the module, or None without torchaudio."""
    import importlib
    import os
    spec = importlib.util.find_spec("torchaudio") if "torchaudio" not in sys.modules else None
    if "torchaudio" not in sys.modules:
        if spec is None:
            return None
        root = os.path.dirname(spec.origin)
        pkg = types.ModuleType("torchaudio")
        pkg.__path__ = [root]
        pkg.__file__ = spec.origin
        pkg.__spec__ = _bare_spec("torchaudio", spec.origin, root)
        sys.modules["torchaudio"] = pkg
    if "torchaudio.models" not in sys.modules:
        root = list(sys.modules["torchaudio"].__path__)[0]
        models = types.ModuleType("torchaudio.models")
        models.__path__ = [os.path.join(root, "models")]
        models.__file__ = os.path.join(root, "models", "__init__.py")
        models.__spec__ = _bare_spec("torchaudio.models", models.__file__, models.__path__[0])
        sys.modules["torchaudio.models"] = models
        sys.modules["torchaudio"].models = models
    return importlib.import_module("torchaudio.models." + subpackage)

# SPDX-License-Identifier: Apache-2.0
"""Shared test helpers for published torch model classes (tests only, never qrt/)."""

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
    which compares equal to anything."""
    import torch
    bns = [x for x in m.modules() if isinstance(x, torch.nn.BatchNorm2d)]
    for b in bns:
        b.reset_running_stats()
        b.momentum = None
    g = torch.Generator().manual_seed(seed)
    m.train()
    with torch.no_grad():
        for _ in range(batches):
            m(torch.randn(*shape, generator=g))
    return m.eval()

# SPDX-License-Identifier: Apache-2.0
"""Compute backends: ``"cpu"`` (always available) and ``"cupy"`` (NVIDIA GPUs, imported lazily).

``import qrt`` never imports cupy: the CuPy backend module is imported the first time a device
is asked for, and a missing CuPy or a missing GPU becomes one clear :class:`BackendUnavailable`
error naming what is missing.
"""

from __future__ import annotations

import importlib
from typing import Dict

__all__ = ["BackendUnavailable", "available", "get", "canonical_device", "is_device_tensor",
           "device_dispatch", "load", "cuda_source_dir"]

#: device spelling -> backend name
_DEVICES = {"cpu": "cpu", "cuda": "cupy", "gpu": "cupy", "cupy": "cupy"}
#: backend name -> module implementing it (None: the CPU code in qrt itself)
_MODULES = {"cpu": None, "cupy": "qrt.backends.cupy_backend"}
_loaded: Dict[str, object] = {}


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here (e.g. no CuPy, or no CUDA GPU)."""


def cuda_source_dir() -> str:
    """Directory of the CUDA C sources (``*.cu``, ``qrt_cuda_math.cuh``) shipped with qrt."""
    import os
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda")


def canonical_device(device) -> str:
    """Backend name for a device spelling ('cpu', 'cuda', 'cuda:0' -> 'cpu' / 'cupy')."""
    if not isinstance(device, str):
        raise TypeError(f"device must be a string such as 'cpu' or 'cuda', got {device!r}")
    base = device.split(":", 1)[0].lower()
    if base not in _DEVICES:
        raise ValueError(f"device={device!r} is not known; expected 'cpu' or 'cuda'")
    if ":" in device and base == "cuda":
        idx = device.split(":", 1)[1]
        if not idx.isdigit():
            raise ValueError(f"device={device!r}: the index after 'cuda:' must be an integer")
    return _DEVICES[base]


def _device_index(device: str) -> int:
    return int(device.split(":", 1)[1]) if ":" in device else 0


def get(name: str):
    """The backend module for ``name`` ('cupy'); raises BackendUnavailable when it cannot run."""
    if name not in _MODULES:
        raise ValueError(f"unknown backend {name!r}; known: {sorted(_MODULES)}")
    if name == "cpu":
        raise ValueError("the cpu backend is qrt itself (qrt.functional, qrt.load)")
    if name not in _loaded:
        try:
            mod = importlib.import_module(_MODULES[name])
        except ImportError as e:  # cupy missing or broken
            raise BackendUnavailable(
                f"device 'cuda' needs CuPy, which could not be imported ({e}). Install it with "
                "`pip install qrt[gpu]` (cupy-cuda12x) or `pip install cupy-cuda13x` for a "
                "CUDA 13 driver.") from None
        _loaded[name] = mod
    mod = _loaded[name]
    mod.check_available()
    return mod


def available(name: str = "cupy") -> bool:
    """True when ``name`` can run here (CPU: always; CuPy: importable and a GPU is visible)."""
    if name == "cpu":
        return True
    try:
        get(name)
    except BackendUnavailable:
        return False
    return True


def is_device_tensor(x) -> bool:
    """True for a device-resident tensor (qrt.backends.cupy_backend.DeviceQTensor).

    Decided by a class attribute, so the check never imports cupy.
    """
    return getattr(type(x), "_qrt_device", None) == "cuda"


def _is_cupy_array(x) -> bool:
    return type(x).__module__.split(".", 1)[0] == "cupy"


def device_dispatch(name: str):
    """Decorator for ``qrt.functional`` ops: route calls whose first argument is a device tensor
    to the CuPy backend's op of the same name (same signature); CPU calls are untouched.

    Usage in qrt/functional: ``@device_dispatch("conv1d")`` above ``def conv1d(input, ...)``.
    """
    def wrap(fn):
        import functools

        @functools.wraps(fn)
        def op(*args, **kwargs):
            first = args[0] if args else next(iter(kwargs.values()), None)
            if isinstance(first, (list, tuple)) and first:  # cat's list of tensors
                first = first[0]
            if is_device_tensor(first) or _is_cupy_array(first):
                impl = getattr(get("cupy").functional, name, None)
                if impl is None:
                    raise NotImplementedError(f"qrt.functional.{name} has no GPU kernel yet; "
                                              "move the tensor to the CPU with .cpu()")
                return impl(*args, **kwargs)
            return fn(*args, **kwargs)
        return op
    return wrap


def load(path, device: str = "cuda", **kwargs):
    """Load a ``.bin`` model onto ``device``; what ``qrt.load(path, device=...)`` calls."""
    name = canonical_device(device)
    if name == "cpu":
        raise ValueError("qrt.backends.load is for non-CPU devices; use qrt.load(path)")
    return get(name).load(path, device_index=_device_index(device), **kwargs)

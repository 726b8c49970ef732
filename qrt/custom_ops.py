# SPDX-License-Identifier: Apache-2.0
"""User-defined ops: ``qrt.register_op(name, fn)`` (format 1.1, op kind ``custom``).

A blob op of kind ``custom`` carries ``{"op": "<name>", "attrs": {...}}``. At load,
:class:`qrt.Model` looks the name up here; a name that is not registered is a
:class:`qrt.FormatError` (rule R24) naming the op, raised by ``qrt.load`` before anything
runs. The function is also run once at load on neutral inputs (the loader's dry run), so an
op that rejects its attributes or returns the wrong shape/dtype/qparams fails at load too.

``fn(*inputs, **attrs)`` receives the op's inputs (:class:`qrt.QTensor` for quantized
activations, float32 numpy arrays otherwise) and returns the output, which must have the
shape, dtype and (per-tensor) qparams the blob records for it; it is copied into the
model's arena. ``register_op(name, fn, out=True)`` instead calls
``fn(*inputs, out=<arena view>, **attrs)``: the op writes its result in place (no allocation;
the form for ops implemented in C or Cython by a user's extension).
"""

from __future__ import annotations

import re
import threading
from typing import Callable, Dict, NamedTuple, Optional, Tuple

import numpy as np

from qrt._tensor import QTensor

__all__ = ["register_op", "unregister_op", "get_op", "registered_ops"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:\-]{0,127}$")


class _Op(NamedTuple):
    name: str
    fn: Callable
    out: bool


_REGISTRY: Dict[str, _Op] = {}
_LOCK = threading.Lock()


def _check_name(name) -> str:
    if not isinstance(name, str):
        raise TypeError(f"op name must be a str, got {type(name).__name__}")
    if not _NAME.match(name):
        raise ValueError(f"op name {name!r} must start with a letter or '_' and contain only "
                         "letters, digits, '_', '.', ':' or '-' (at most 128 characters)")
    return name


def register_op(name: str, fn: Callable, *, out: bool = False, overwrite: bool = False):
    """Register ``fn`` as the custom op ``name`` for models loaded afterwards.

    Parameters
    ----------
    name : str
        The name the exporter writes (``qrt_export.register(module_type, name, attrs_fn)``),
        e.g. ``"mylib.qclamp"``.
    fn : callable
        ``fn(*inputs, **attrs) -> QTensor | ndarray``; with ``out=True``,
        ``fn(*inputs, out=out, **attrs)`` writing into ``out``.
    out : bool
        Whether ``fn`` writes into a given output instead of returning one.
    overwrite : bool
        Replace an existing registration (otherwise ValueError).

    Returns ``fn``, so ``register_op`` also works as ``functools.partial`` decorator.
    """
    _check_name(name)
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    with _LOCK:
        if name in _REGISTRY and not overwrite:
            raise ValueError(f"op {name!r} is already registered (pass overwrite=True to "
                             "replace it)")
        _REGISTRY[name] = _Op(name, fn, bool(out))
    return fn


def unregister_op(name: str) -> None:
    """Remove a registration (KeyError if ``name`` is not registered)."""
    with _LOCK:
        if name not in _REGISTRY:
            raise KeyError(f"op {name!r} is not registered")
        del _REGISTRY[name]


def get_op(name: str) -> Optional[Callable]:
    """The function registered as ``name``, or None."""
    op = _REGISTRY.get(name)
    return None if op is None else op.fn


def registered_ops() -> Tuple[str, ...]:
    return tuple(sorted(_REGISTRY))


# ---- used by qrt.Model -------------------------------------------------------------------------
def prepare(node):
    """Resolve a blob op of kind ``custom`` at load: (registration, attrs) (R24)."""
    name = node.attrs["op"]
    attrs = node.attrs["attrs"]
    if not _NAME.match(name):
        raise node.fail(f"custom op name {name!r} is not a valid op name", "R24")
    if any(not isinstance(k, str) or not k.isidentifier() for k in attrs):
        raise node.fail(f"custom op {name!r}: attribute names must be identifiers", "R24")
    reg = _REGISTRY.get(name)
    if reg is None:
        raise node.fail(f"the model needs custom op {name!r}, which is not registered; call "
                        f"qrt.register_op({name!r}, fn) before qrt.load", "R24")
    if len(node.outputs) != 1:
        raise node.fail("custom ops have exactly one output", "R24")
    return reg, attrs


def binder(reg: _Op, attrs: dict, out_entry, name: str):
    """The callable a model plan runs for this op: ``call(*ins, out)``."""
    fn = reg.fn
    if reg.out:
        def call_out(*args):
            fn(*args[:-1], out=args[-1], **attrs)
        return call_out

    quantized = out_entry.qscheme == "per_tensor_affine"

    def call(*args):
        ins, out = args[:-1], args[-1]
        res = fn(*ins, **attrs)
        if quantized:
            if not isinstance(res, QTensor):
                raise TypeError(f"custom op {name!r} must return a qrt.QTensor, got "
                                f"{type(res).__name__}")
            if res.shape != out.shape or res.dtype is not out.dtype or \
                    res._qscheme is not out._qscheme or \
                    (res._scale, res._zero_point) != (out._scale, out._zero_point):
                raise ValueError(
                    f"custom op {name!r} returned {res!r}; the model expects shape "
                    f"{out.shape}, {out.dtype!r}, scale={out._scale!r}, "
                    f"zero_point={out._zero_point}")
            np.copyto(out.int_repr(), res.int_repr())
        else:
            arr = np.asarray(res)
            if arr.shape != out.shape or arr.dtype != out.dtype:
                raise ValueError(f"custom op {name!r} returned {arr.dtype} {arr.shape}; the "
                                 f"model expects {out.dtype} {out.shape}")
            np.copyto(out, arr)
    return call

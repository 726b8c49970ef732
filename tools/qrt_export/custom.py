# SPDX-License-Identifier: Apache-2.0
"""Map a user's torch module to a qrt custom op: ``qrt_export.register(module_type, name,
attrs_fn)``.

The exporter traces registered module types as leaves (their forward is not traced into) and
writes one op of kind ``custom`` (format 1.1) with attributes
``{"op": name, "attrs": attrs_fn(module)}``; its inputs are the module's tensor arguments and
its output is the module's output as recorded while tracing (shape, dtype, qparams). At run
time qrt calls the function registered with ``qrt.register_op(name, fn)`` as
``fn(*inputs, **attrs)``; a blob whose custom op is not registered fails at ``qrt.load``.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Dict, Optional, Tuple

from qrt.custom_ops import _check_name

__all__ = ["register", "unregister", "lookup", "attrs_for"]

_REGISTRY: Dict[type, Tuple[str, Optional[Callable]]] = {}
_LOCK = threading.Lock()


def register(module_type: type, name: str, attrs_fn: Optional[Callable] = None) -> None:
    """Export instances of ``module_type`` (and its subclasses) as the custom op ``name``.

    Parameters
    ----------
    module_type : type
        A ``torch.nn.Module`` subclass.
    name : str
        The op name ``qrt.register_op`` uses at run time (e.g. ``"mylib.qclamp"``).
    attrs_fn : callable, optional
        ``attrs_fn(module) -> dict`` of JSON-serialisable attributes (keys are Python
        identifiers); passed to the op as keyword arguments. Default: no attributes.
    """
    import torch
    if not isinstance(module_type, type) or not issubclass(module_type, torch.nn.Module):
        raise TypeError(f"module_type must be a torch.nn.Module subclass, got {module_type!r}")
    _check_name(name)
    if attrs_fn is not None and not callable(attrs_fn):
        raise TypeError(f"attrs_fn must be callable, got {type(attrs_fn).__name__}")
    with _LOCK:
        _REGISTRY[module_type] = (name, attrs_fn)


def unregister(module_type: type) -> None:
    with _LOCK:
        if module_type not in _REGISTRY:
            raise KeyError(f"{module_type!r} is not registered")
        del _REGISTRY[module_type]


def lookup(module) -> Optional[Tuple[str, Optional[Callable]]]:
    """(name, attrs_fn) for a module whose type (or a base class) is registered."""
    for cls in type(module).__mro__:
        spec = _REGISTRY.get(cls)
        if spec is not None:
            return spec
    return None


def attrs_for(module, spec) -> Dict[str, Any]:
    """The blob attributes of one custom op: ``{"op": name, "attrs": {...}}``."""
    name, fn = spec
    attrs = {} if fn is None else fn(module)
    if not isinstance(attrs, dict) or any(not isinstance(k, str) or not k.isidentifier()
                                          for k in attrs):
        raise ValueError(f"attrs_fn for custom op {name!r} must return a dict whose keys are "
                         f"identifiers, got {attrs!r}")
    try:
        attrs = json.loads(json.dumps(attrs, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise ValueError(f"attributes of custom op {name!r} are not JSON-serialisable: "
                         f"{e}") from None
    return {"op": name, "attrs": attrs}

# SPDX-License-Identifier: Apache-2.0
"""Lowering rules: torch graph node -> qrt ops, one table for modules, functions and methods.

A rule is a function ``rule(cx, node, target)`` registered for torch module classes, callables
or Tensor method names; ``cx`` is the converter (its ``emit``, ``tensor``, ``layer``, ``pool``
helpers write into the blob builder). Rules live in the modules of this package, found at
import: adding an op's lowering touches one module here. ``SUPPORTED`` (what error messages
and docs list) is built from the rules' ``doc`` strings.

Several rules may match one node (a quantized rule and a float rule for ``nn.Tanh``, say): they
are tried in registration order, and a rule that does not handle the node raises
:class:`Decline` to pass it to the next one.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Callable, Dict, List, Tuple

MODULES: List[Tuple[Callable[[], tuple], Callable, str]] = []   # (types thunk, rule, doc)
FUNCTIONS: List[Tuple[Callable[[], tuple], Callable, str]] = []  # (callables thunk, rule, doc)
METHODS: Dict[str, List[Tuple[Callable, str]]] = {}
PREPASSES: List[Callable] = []   # fn(cx), run before the nodes are lowered (may fill cx.done)
SUPPORTED: List[str] = []


class Decline(Exception):
    """Raised by a rule that does not handle this node: the next matching rule is tried."""

    def __init__(self, why: str = ""):
        super().__init__(why)
        self.why = why


def _chain(fns):
    """One rule trying ``fns`` in order (the first that does not Decline wins)."""
    if not fns:
        return None
    if len(fns) == 1:
        return fns[0]

    def rule(cx, node, target):
        why = ""
        for fn in fns:
            try:
                return fn(cx, node, target)
            except Decline as e:
                why = e.why or why
        raise Decline(why)
    return rule


def module(types: Callable[[], tuple], doc: str):
    """Register a rule for torch modules of the classes ``types()`` returns (lazy: torch is
    imported only when the exporter runs). Earlier registrations win (put subclasses first)."""
    def wrap(fn):
        MODULES.append((types, fn, doc))
        SUPPORTED.append(doc)
        return fn
    return wrap


def function(targets: Callable[[], tuple], doc: str):
    def wrap(fn):
        FUNCTIONS.append((targets, fn, doc))
        SUPPORTED.append(doc)
        return fn
    return wrap


def method(names: tuple, doc: str):
    def wrap(fn):
        for n in names:
            METHODS.setdefault(n, []).append((fn, doc))
        SUPPORTED.append(doc)
        return fn
    return wrap


def prepass(fn):
    """Register ``fn(cx)``, called once before the graph's nodes are lowered."""
    PREPASSES.append(fn)
    return fn


_resolved: Dict[str, list] = {}


def find_module_rule(m):
    if "modules" not in _resolved:
        _resolved["modules"] = [(tuple(t()), fn) for t, fn, _ in MODULES]
    return _chain([fn for types, fn in _resolved["modules"] if isinstance(m, types)])


def find_function_rule(target):
    if "functions" not in _resolved:
        table: Dict[Any, list] = {}
        for t, fn, _ in FUNCTIONS:
            for x in t():
                if fn not in table.setdefault(x, []):
                    table[x].append(fn)
        _resolved["functions"] = table
    try:
        return _chain(_resolved["functions"].get(target, []))
    except TypeError:  # unhashable target
        return None


def find_method_rule(name):
    return _chain([fn for fn, _ in METHODS.get(name, [])])


for _m in sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")):
    importlib.import_module(f"{__name__}.{_m}")
del _m

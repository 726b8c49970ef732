# SPDX-License-Identifier: Apache-2.0
"""Op definitions: one class per op kind, in the modules of this package (found at import).

To add an op: write its kernel, define it here (a module of this package, or a family module
that exists), and give the exporter a lowering rule (tools/qrt_export/rules/). Nothing else
lists op kinds: the reader takes codes from ``BY_CODE``, the writer from ``CODE_OF``, the
executor calls the definition's hooks (docs/architecture.md).
"""

from __future__ import annotations

import importlib
import pkgutil

from qrt.ops._core import (BY_CODE, BY_NAME, CODE_OF, REQUIRED, Attr, AttrError, Bool,  # noqa
                           Choice, Float, Int, Ints, Node, Obj, OpDef, Param, ShapeError, Str,
                           define)

for _m in sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")):
    importlib.import_module(f"{__name__}.{_m}")
del _m


def get(name: str) -> OpDef:
    """The definition of op kind ``name`` (KeyError naming the known kinds otherwise)."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown op kind {name!r}; known: {', '.join(sorted(BY_NAME))}") from None


def kinds():
    """Current op kind names (legacy names excluded), sorted by code."""
    return [d.name for d, _, n in sorted(BY_CODE.values(), key=lambda v: v[0].code)
            if n == d.name]

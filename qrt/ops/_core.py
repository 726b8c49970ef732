# SPDX-License-Identifier: Apache-2.0
"""What an op definition is: attribute schema, parameter slots, arity, shape inference, and the
CPU preparation and binding, in one class per op kind (see qrt/ops/__init__.py for the list).

An op kind is defined once, by a subclass of :class:`OpDef` registered with :func:`define`.
The reader (blob op codes), the executor (shape inference, preparation, binding), the exporter
(attribute names, the format version a file needs), ``qrt inspect``/``Model.summary`` and the
CuPy backend read that definition; nothing else lists op kinds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from qrt._format.reader import FormatError, TensorEntry

__all__ = ["Attr", "Int", "Bool", "Float", "Ints", "Choice", "Obj", "Str", "Param", "OpDef",
           "Node", "ShapeError", "define", "REQUIRED"]

INT_MAX = (1 << 31) - 1
REQUIRED = object()


class ShapeError(ValueError):
    """An op cannot take the input shapes it was given (the message says why)."""


class AttrError(ValueError):
    """An attribute value does not match its schema (becomes a FormatError R25 at load)."""


# ---- attribute schema --------------------------------------------------------------------------
class Attr:
    """One attribute: type check, range, default. ``check(v)`` returns the value to use."""

    kind = "any"

    def __init__(self, default=REQUIRED, doc: str = ""):
        self.default, self.doc = default, doc

    def check(self, v):  # pragma: no cover - overridden
        return v

    def describe(self) -> str:
        return self.kind


class Int(Attr):
    """A JSON integer (never a bool or a float) in [lo, hi]; None allowed when ``nullable``."""

    kind = "int"

    def __init__(self, lo: int = 0, hi: int = INT_MAX, default=REQUIRED, nullable=False,
                 doc=""):
        super().__init__(default, doc)
        self.lo, self.hi, self.nullable = lo, hi, nullable

    def check(self, v):
        if v is None and self.nullable:
            return None
        if type(v) is not int:
            raise AttrError(f"must be an integer in [{self.lo}, {self.hi}], got "
                            f"{_show(v)}")
        if not self.lo <= v <= self.hi:
            raise AttrError(f"must be in [{self.lo}, {self.hi}], got {v}")
        return v

    def describe(self):
        return f"int [{self.lo}, {self.hi}]" + (" or null" if self.nullable else "")


class Bool(Attr):
    kind = "bool"

    def check(self, v):
        if type(v) is not bool:
            raise AttrError(f"must be true or false, got {_show(v)}")
        return v


class Float(Attr):
    """A finite JSON number (ints accepted) in [lo, hi]."""

    kind = "float"

    def __init__(self, lo=-math.inf, hi=math.inf, default=REQUIRED, positive=False, doc=""):
        super().__init__(default, doc)
        self.lo, self.hi, self.positive = lo, hi, positive

    def check(self, v):
        try:  # an int beyond float range (10**400) is not a finite number either
            f = float(v) if type(v) in (int, float) else math.nan
        except OverflowError:
            f = math.inf
        if not math.isfinite(f):
            raise AttrError(f"must be a finite number, got {_show(v)}")
        v = f
        if not self.lo <= v <= self.hi or (self.positive and not v > 0):
            raise AttrError(f"must be {'> 0 and ' if self.positive else ''}in "
                            f"[{self.lo}, {self.hi}], got {v!r}")
        return v


class Ints(Attr):
    """A list of ``n`` integers (n=None: any length in [min_len, max_len]) in [lo, hi]."""

    kind = "ints"

    def __init__(self, n: Optional[int] = None, lo: int = 0, hi: int = INT_MAX, default=REQUIRED,
                 min_len: int = 0, max_len: int = 6, doc=""):
        super().__init__(default, doc)
        self.n, self.lo, self.hi, self.min_len, self.max_len = n, lo, hi, min_len, max_len

    def check(self, v):
        if v is None and self.default is None:  # an optional list (the op says what None means)
            return None
        if isinstance(v, tuple):
            v = list(v)
        if not isinstance(v, list):
            raise AttrError(f"must be a list of integers, got {_show(v)}")
        if self.n is not None and len(v) != self.n:
            raise AttrError(f"must hold {self.n} integers, got {len(v)}")
        if self.n is None and not self.min_len <= len(v) <= self.max_len:
            raise AttrError(f"must hold {self.min_len}..{self.max_len} integers, got {len(v)}")
        inner = Int(self.lo, self.hi)
        return [inner.check(x) for x in v]


class Choice(Attr):
    kind = "choice"

    def __init__(self, *values, default=REQUIRED, doc=""):
        super().__init__(default, doc)
        self.values = values

    def check(self, v):
        if not isinstance(v, str) or v not in self.values:
            raise AttrError(f"must be one of {', '.join(map(repr, self.values))}, got {_show(v)}")
        return v

    def describe(self):
        return "one of " + "|".join(self.values)


class Str(Attr):
    kind = "str"

    def __init__(self, max_len=255, default=REQUIRED, doc=""):
        super().__init__(default, doc)
        self.max_len = max_len

    def check(self, v):
        if not isinstance(v, str) or len(v) > self.max_len:
            raise AttrError(f"must be a string of at most {self.max_len} characters, got "
                            f"{_show(v)}")
        return v


class Obj(Attr):
    """A JSON object (checked further by the op itself)."""

    kind = "object"

    def check(self, v):
        if not isinstance(v, dict):
            raise AttrError(f"must be a JSON object, got {_show(v)}")
        return v


def _show(v) -> str:
    s = repr(v)
    return (s[:40] + "...") if len(s) > 43 else s


# ---- parameters ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """A constant operand slot: its name, numpy dtype and whether it may be absent."""

    name: str
    dtype: str
    optional: bool = False


# ---- the resolved op -----------------------------------------------------------------------------
@dataclass
class Node:
    """One op of a loaded model: its definition, validated attributes and operand entries."""

    index: int
    name: str
    op: "OpDef"
    attrs: Dict[str, Any]
    inputs: List[TensorEntry]
    outputs: List[TensorEntry]
    params: Dict[str, TensorEntry]
    source: str = ""
    path: Optional[str] = None
    raw_kind: str = ""
    state: Any = field(default=None, repr=False)   # what the backend prepared

    @property
    def kind(self) -> str:
        return self.op.name

    @property
    def label(self) -> str:
        """The kind with its fused activation, as summaries show it: ``conv1d+relu``."""
        act = self.attrs.get("activation", "none")
        return self.op.name if act == "none" else f"{self.op.name}+{act}"

    def fail(self, msg: str, rule: str = "R21") -> FormatError:
        return FormatError(rule, f"{self.op.name} '{self.name}': {msg}", section="OPS",
                           op=self.index, path=self.path)

    def array(self, name):
        """The constant ``name`` as a read-only numpy view of the mapping (None if absent)."""
        t = self.params.get(name)
        return None if t is None else t.array


# ---- the definition ------------------------------------------------------------------------------
class OpDef:
    """Base of every op definition. Subclasses set the class attributes and override hooks.

    Class attributes
    ----------------
    name, code : the op kind's name and its blob code (append-only; tests pin them).
    since : (major, minor) of the format whose readers know this op in its current layout.
    inputs, outputs : (min, max) counts of activation operands (max None: unbounded).
    attrs : attribute schema, name -> :class:`Attr`.
    params : constant operand slots, in blob order.
    alias : the output is a view of input 0 (no kernel, no arena space of its own).
    legacy : older op kinds that load as this one: name -> (code, attributes they imply).
    index_inputs : positions of the activation operands that may be int64/int32 index tensors
        (model inputs, R28); any other operand of such a dtype is refused at load.
    """

    name: str = ""
    code: int = 0
    since: Tuple[int, int] = (1, 2)
    inputs: Tuple[int, Optional[int]] = (1, 1)
    outputs: Tuple[int, Optional[int]] = (1, 1)
    attrs: Dict[str, Attr] = {}
    params: Tuple[Param, ...] = ()
    alias: bool = False
    legacy: Dict[str, Tuple[int, Dict[str, Any]]] = {}
    index_inputs: Tuple[int, ...] = ()
    doc: str = ""

    # ---- load-time validation -----------------------------------------------------------------
    def upgrade(self, node: "Node", attrs: Dict[str, Any], params: List[TensorEntry],
                version: Tuple[int, int]) -> Tuple[Dict[str, Any], Dict[str, TensorEntry]]:
        """Attributes and named params of a file written in an older layout (format < since);
        ``node`` has its inputs and outputs (raise ``node.fail(...)``).

        The default: attributes unchanged, params matched to the slots in order."""
        return attrs, self.name_params(params, node.fail)

    def name_params(self, entries: Sequence[TensorEntry], node_fail) -> Dict[str, TensorEntry]:
        slots = list(self.params)
        need = sum(not p.optional for p in slots)
        if not need <= len(entries) <= len(slots):
            raise node_fail(f"takes {need}..{len(slots)} constant parameters "
                            f"({', '.join(p.name for p in slots)}), has {len(entries)}")
        out = {}
        for p, t in zip(slots, entries):
            out[p.name] = t
        return out

    def check_attrs(self, attrs: Dict[str, Any], node_fail) -> Dict[str, Any]:
        if not isinstance(attrs, dict):
            raise node_fail("attributes must be a JSON object")
        unknown = sorted(set(attrs) - set(self.attrs))
        if unknown:
            raise node_fail(f"unknown attribute {unknown[0]!r} (this op takes "
                            f"{', '.join(sorted(self.attrs)) or 'none'})")
        out = {}
        for k, spec in self.attrs.items():
            if k in attrs:
                try:
                    out[k] = spec.check(attrs[k])
                except AttrError as e:
                    raise node_fail(f"attribute {k!r} {e}") from None
            elif spec.default is REQUIRED:
                raise node_fail(f"attribute {k!r} is missing ({spec.describe()})")
            else:
                out[k] = spec.default
        return out

    def check_params(self, node: Node) -> None:
        for p in self.params:
            t = node.params.get(p.name)
            if t is None:
                if not p.optional:
                    raise node.fail(f"parameter {p.name!r} is missing")
                continue
            if t.np_dtype.name != p.dtype and t.dtype != p.dtype:
                raise node.fail(f"parameter {p.name!r} must be {p.dtype}, is {t.dtype}")

    def validate(self, node: Node) -> None:
        """Load-time checks of dtypes, qparams and parameter values (raise node.fail(...))."""

    # ---- shapes ------------------------------------------------------------------------------
    def infer(self, node: Node, shapes: List[tuple]) -> List[tuple]:
        """Output shapes from input shapes; raise ShapeError when the op refuses them."""
        return [tuple(shapes[0])]

    def macs(self, node: Node, shapes: List[tuple]) -> int:
        return 0

    def neutral_inputs(self, node: Node, ins: list) -> None:
        """Ops with ``index_inputs``: make the dry run's neutral (zero) inputs ones the op
        accepts (e.g. the last offset of include_last_offset bags); default: nothing."""

    # ---- CPU -----------------------------------------------------------------------------------
    def prepare(self, node: Node) -> Any:
        """Load-time work for the CPU (pack weights, build modules); the result is node.state."""
        return None

    def bind(self, node: Node, ins: list, outs: list) -> Optional[Tuple[Callable, tuple, dict]]:
        """The kernel call on a plan's fixed buffers: (fn, args, kwargs), or None (alias)."""
        raise NotImplementedError

    # ---- GPU (CuPy backend) ------------------------------------------------------------------
    def prepare_cuda(self, node: Node, dev) -> Any:
        """Load-time work for the CuPy backend (``dev`` is qrt.backends.cupy_backend); None:
        the op has no GPU kernel."""
        return None

    def bind_cuda(self, node: Node, ins: list, outs: list, dev) -> Callable[[], None]:
        raise NotImplementedError

    # ---- description -----------------------------------------------------------------------
    def describe(self, attrs: Dict[str, Any]) -> str:
        """Short attribute text for ``qrt inspect`` / summaries."""
        parts = []
        for k in self.attrs:
            if k in attrs and attrs[k] != self.attrs[k].default:
                parts.append(f"{k}={attrs[k]}")
        return ", ".join(parts)


# ---- registry --------------------------------------------------------------------------------
BY_NAME: Dict[str, OpDef] = {}
BY_CODE: Dict[int, Tuple[OpDef, Dict[str, Any], str]] = {}
CODE_OF: Dict[str, int] = {}   # op kind name (legacy names too) -> blob code


def define(cls):
    """Class decorator: register one op definition (and the legacy kinds that load as it)."""
    d = cls()
    if not d.name or d.code <= 0:
        raise RuntimeError(f"{cls.__name__}: an op needs a name and a code > 0")
    for name, code in [(d.name, d.code)] + [(k, v[0]) for k, v in d.legacy.items()]:
        if name in BY_NAME or code in BY_CODE:
            raise RuntimeError(f"op {name!r} / code {code} is defined twice")
    BY_NAME[d.name] = d
    BY_CODE[d.code] = (d, {}, d.name)
    CODE_OF[d.name] = d.code
    for legacy_name, (code, implied) in d.legacy.items():
        BY_NAME[legacy_name] = d
        BY_CODE[code] = (d, dict(implied), legacy_name)
        CODE_OF[legacy_name] = code
    return cls


def legacy_kwargs(node: Node, attrs: Dict[str, Any], out_qparams: bool = False
                  ) -> Dict[str, Any]:
    """Format 1.0/1.1 functional ops: ``{"kwargs": {...}}``. With ``out_qparams``, kwargs
    ``scale``/``zero_point`` name the output qparams: they must equal the output tensor's
    and are dropped (the tensor entry is where a 1.2 file keeps them)."""
    if set(attrs) - {"kwargs"}:
        raise node.fail(f"unknown attribute {sorted(set(attrs) - {'kwargs'})[0]!r}")
    kw = attrs.get("kwargs", {})
    if not isinstance(kw, dict):
        raise node.fail("attribute 'kwargs' must be an object")
    kw = dict(kw)
    if out_qparams and ("scale" in kw or "zero_point" in kw):
        y = node.outputs[0]
        if (kw.pop("scale", y.scale), kw.pop("zero_point", y.zero_point)) != \
                (y.scale, y.zero_point):
            raise node.fail("kwargs scale/zero_point disagree with the output tensor's qparams")
    return kw


def same_qparams(node: Node, a: TensorEntry, b: TensorEntry, what: str) -> None:
    if (a.dtype, a.qscheme, a.scale, a.zero_point) != (b.dtype, b.qscheme, b.scale,
                                                       b.zero_point):
        raise node.fail(f"{what}: the output must have the input's dtype and qparams "
                        f"({a.dtype} {a.scale}, {a.zero_point}); it has {b.dtype} "
                        f"({b.scale}, {b.zero_point})")


def numel(shape) -> int:
    """The number of elements of a shape (any iterable of dims; 1 for ``()``), as a Python int."""
    n = 1
    for d in shape:
        n *= int(d)
    return n

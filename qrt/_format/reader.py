# SPDX-License-Identifier: Apache-2.0
"""Read a qrt ``.bin`` blob: memory-map it, apply the rules R1..R28 of docs/blob-format.md.

The reader and the one writer (:mod:`qrt._format.writer`) of the format sit together here.
Every number used here (magic, versions, struct layouts, caps) comes from :mod:`qrt._blob`,
which reads them from ``include/qrt/blob.h``; op kinds come from :mod:`qrt.ops`. Nothing is
trusted before it is checked: every offset, size, count and index goes through
overflow-safe (Python int) arithmetic first.
"""

from __future__ import annotations

import json
import math
import os
import zlib
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import numpy as np

from qrt import _blob as B
from qrt._fileio import crc32_of_mapping
from qrt._storage import Storage
from qrt._tensor import qint8, qint32, quint8

__all__ = ["FormatError", "read_blob", "verify_blob", "Blob", "TensorEntry", "OpEntry"]

_QRANGE = {d.name: (d.qmin, d.qmax) for d in (quint8, qint8, qint32)}
_MAX_ELEMS = B.MAX_ELEMS
_MAX_ALIGN = B.MAX_ALIGN


class FormatError(ValueError):
    """A ``.bin`` file is not a valid qrt blob. The message says what is wrong and where.

    Attributes ``rule`` (e.g. ``"R7"``), ``offset`` (byte offset or None), ``section``
    (section name or None) and ``op`` (op index or None) locate the problem.
    """

    def __init__(self, rule: str, msg: str, *, offset: Optional[int] = None,
                 section: Optional[str] = None, op: Optional[int] = None,
                 path: Optional[str] = None):
        where = []
        if section is not None:
            where.append(f"section {section}")
        if op is not None:
            where.append(f"op {op}")
        if offset is not None:
            where.append(f"offset {offset}")
        loc = f" ({', '.join(where)})" if where else ""
        head = f"{path}: " if path else ""
        super().__init__(f"{head}{rule}: {msg}{loc}")
        self.rule, self.offset, self.section, self.op = rule, offset, section, op


def _version_str(code: int) -> str:
    return f"{code // 10000}.{code // 100 % 100}.{code % 100}"


def _qrt_version() -> str:
    from qrt import __version__
    return __version__


def _own_version_code() -> int:
    parts = [int("".join(c for c in p if c.isdigit()) or 0) for p in _qrt_version().split(".")]
    parts = (parts + [0, 0, 0])[:3]
    return parts[0] * 10000 + parts[1] * 100 + parts[2]


@dataclass
class TensorEntry:
    """One validated tensor table entry."""

    index: int
    name: str
    dtype: str            # "quint8", "float32", ...
    np_dtype: np.dtype
    shape: tuple
    kind: str             # "constant" | "activation" | "state" (1.2)
    batched: bool
    qscheme: str          # "none" | "per_tensor_affine" | "per_channel_affine"
    scale: float
    zero_point: int
    axis: int
    scales_index: int
    zero_points_index: int
    data_offset: int      # absolute offset in the file (constants)
    nbytes: int
    array: Optional[np.ndarray] = None  # constants: a read-only view of the mapping


@dataclass
class OpEntry:
    """One validated op table entry."""

    index: int
    kind: str
    name: str
    inputs: List[int]
    outputs: List[int]
    params: List[int]
    attrs: Dict[str, Any]
    source: str


@dataclass
class Blob:
    """A validated blob: the mapping plus its parsed tables."""

    path: str
    storage: Storage
    header: Dict[str, Any]
    sections: Dict[str, Dict[str, int]]
    tensors: List[TensorEntry]
    ops: List[OpEntry]
    inputs: List[int]
    outputs: List[int]
    meta: Dict[str, Any]
    fixed_batch: bool

    @property
    def version(self) -> tuple:
        """(major, minor) of the file's format."""
        return int(self.header["version_major"]), int(self.header["version_minor"])

    @property
    def tensor_file(self) -> bool:
        """True for a tensor file written by ``qrt.save`` (format 1.1, R23)."""
        return bool(self.header["flags"] & B.FLAG_TENSORS)


def _fields(rec) -> Dict[str, Any]:
    """A record as a dict of Python ints/floats/bytes (lists for array fields)."""
    out = {}
    for n in rec.dtype.names:
        v = rec[n]
        if isinstance(v, np.ndarray):
            out[n] = v.tolist()
        elif isinstance(v, bytes):
            out[n] = v
        else:
            out[n] = v.item()
    return out


class _Reader:
    def __init__(self, path: str, buf: np.ndarray, verify: bool):
        self.path = path
        self.buf = buf  # uint8 view of the whole file
        self.size = int(buf.shape[0])
        self.verify = verify
        self.file_id = None  # (st_dev, st_ino) when buf maps a file: lets the CRC skip holes

    def err(self, rule, msg, **kw):
        return FormatError(rule, msg, path=self.path, **kw)

    def record(self, dtype: np.dtype, offset: int, count: int, section: str) -> np.ndarray:
        end = offset + count * dtype.itemsize
        if offset < 0 or end > self.size:
            raise self.err("R9", f"{count} entries of {dtype.itemsize} bytes at {offset} run "
                           f"past the end of the file ({self.size} bytes)", section=section,
                           offset=offset)
        return self.buf[offset:end].view(dtype)

    # ---- header (R1..R8) -----------------------------------------------------------------
    def header(self) -> Dict[str, Any]:
        if self.size < B.HEADER_SIZE:
            raise self.err("R1", f"file is {self.size} bytes; a qrt blob is at least "
                           f"{B.HEADER_SIZE}", offset=0)
        rec = _fields(self.buf[:B.HEADER_SIZE].view(B.HEADER_DTYPE)[0])
        h = rec
        if bytes(h["magic"]) != B.MAGIC:
            raise self.err("R2", f"bad magic {bytes(h['magic'])!r}, expected {B.MAGIC!r} "
                           "(not a qrt blob)", offset=0)
        major, minor = int(h["version_major"]), int(h["version_minor"])
        if major != B.VERSION_MAJOR:
            need = int(h["min_reader"])
            hint = (f"; it needs qrt >= {_version_str(need)}" if major > B.VERSION_MAJOR and need
                    else "")
            from qrt import __version__
            raise self.err("R3", f"blob format {major}.{minor} is not readable by qrt "
                           f"{__version__}, which reads format {B.VERSION_MAJOR}.x{hint}",
                           offset=4)
        need = int(h["min_reader"])
        if need > _own_version_code():
            raise self.err("R3", f"this file needs qrt >= {_version_str(need)} (format "
                           f"{major}.{minor}); this is qrt {_qrt_version()}", offset=48)
        hs = int(h["header_size"])
        if hs < B.HEADER_SIZE or hs % 8 or hs > self.size:
            raise self.err("R4", f"header_size {hs} must be a multiple of 8, at least "
                           f"{B.HEADER_SIZE} and inside the file ({self.size} bytes)", offset=8)
        if any(int(b) for b in h["reserved"]) or \
                (h["flags"] & ~(B.FLAG_FIXED_BATCH | B.FLAG_TENSORS)):
            raise self.err("R5", "reserved header bytes or unknown flag bits are not zero",
                           offset=12)
        if hs > B.HEADER_SIZE and minor <= B.VERSION_MINOR and \
                self.buf[B.HEADER_SIZE:hs].any():
            raise self.err("R5", "header bytes past the v1 header are not zero",
                           offset=B.HEADER_SIZE)
        a = int(h["alignment"])
        if a < B.MIN_ALIGN or a > _MAX_ALIGN or a & (a - 1):
            raise self.err("R6", f"alignment {a} is not a power of two in "
                           f"[{B.MIN_ALIGN}, {_MAX_ALIGN}]", offset=16)
        if int(h["file_size"]) != self.size:
            raise self.err("R7", f"header says the file is {int(h['file_size'])} bytes, it is "
                           f"{self.size} (truncated or padded)", offset=32)
        return h

    # ---- section table (R8..R11) ---------------------------------------------------------
    def sections(self, h) -> Dict[str, Dict[str, int]]:
        n = h["section_count"]
        if not 1 <= n <= B.MAX_SECTIONS:
            raise self.err("R9", f"section_count {n} is not in [1, {B.MAX_SECTIONS}]", offset=20)
        if h["section_table_offset"] != h["header_size"]:
            raise self.err("R9", f"section table at {h['section_table_offset']} must follow the "
                           f"header at {h['header_size']}", offset=24)
        tab = self.record(B.SECTION_DTYPE, h["section_table_offset"], n, "section table")
        table_end = h["section_table_offset"] + n * B.SECTION_SIZE
        out: Dict[str, Dict[str, int]] = {}
        entry_size = {"TENSORS": B.TENSOR_SIZE, "OPERANDS": 4, "OPS": B.OP_SIZE,
                      "IO": B.IO_SIZE}
        for i in range(n):
            e = _fields(tab[i])
            at = h["section_table_offset"] + i * B.SECTION_SIZE
            code = int(e["kind"])
            kind = B.SECTION_NAMES.get(code)
            if kind is None and code & B.SECTION_OPTIONAL and int(h["version_minor"]) >= 2:
                kind = f"optional:{code:#x}"  # 1.2: a reader skips optional kinds it lacks
            if kind is None:
                raise self.err("R10", f"section entry {i} has unknown kind {code}",
                               offset=at)
            if kind in out:
                raise self.err("R10", f"section {kind} appears twice", offset=at)
            if int(e["reserved"]):
                raise self.err("R5", f"section entry {i} reserved field is not zero", offset=at)
            off, size, count = int(e["offset"]), int(e["size"]), int(e["count"])
            if off < table_end or off + size > self.size:
                raise self.err("R10", f"section [{off}, {off + size}) is not between the end "
                               f"of the section table ({table_end}) and the end of the file "
                               f"({self.size})", section=kind, offset=at)
            if off % (h["alignment"] if kind == "DATA" else 8):
                raise self.err("R10", f"section offset {off} is misaligned", section=kind,
                               offset=at)
            es = entry_size.get(kind)
            if es is not None and size != count * es:
                raise self.err("R10", f"size {size} != count {count} x entry size {es}",
                               section=kind, offset=at)
            if es is None and count != 1:
                raise self.err("R10", f"count must be 1, is {count}", section=kind, offset=at)
            out[kind] = {"offset": off, "size": size, "count": count, "entry": i}
        for kind in B.SECTION:
            if kind not in out:
                raise self.err("R10", f"required section {kind} is missing",
                               offset=h["section_table_offset"])
        spans = sorted((s["offset"], s["offset"] + s["size"], k) for k, s in out.items())
        for (a0, a1, ka), (b0, _, kb) in zip(spans, spans[1:]):
            if b0 < a1:
                raise self.err("R10", f"sections {ka} and {kb} overlap", section=kb, offset=b0)
        self.section_gaps(table_end, spans, h["alignment"])
        d = out["DATA"]
        if d["offset"] + d["size"] != self.size or spans[-1][2] != "DATA":
            raise self.err("R11", "DATA must be the last section and end at the end of the file",
                           section="DATA", offset=d["offset"])
        if d["size"] % h["alignment"]:
            raise self.err("R11", f"DATA size {d['size']} is not a multiple of the alignment",
                           section="DATA", offset=d["offset"])
        return out

    def section_gaps(self, table_end: int, spans, alignment: int) -> None:
        """R10: the only bytes outside the sections are their alignment padding, all zero
        (no room to hide data, as safetensors' "no holes")."""
        prev = table_end
        for off, end, kind in spans:
            step = alignment if kind == "DATA" else 8
            if off - prev >= step:
                raise self.err("R10", f"{off - prev} bytes between offset {prev} and section "
                               f"{kind}: only alignment padding (< {step} bytes) may "
                               "separate sections", section=kind, offset=prev)
            if self.buf[prev:off].any():
                raise self.err("R10", f"padding bytes [{prev}, {off}) before section {kind} "
                               "are not zero", section=kind, offset=prev)
            prev = end

    # ---- checksums (R8, R12) -------------------------------------------------------------
    def checksums(self, h, secs):
        d0 = secs["DATA"]["offset"]
        c0, c1 = B.CRC_FIELDS
        crc = zlib.crc32(self.buf[:c0])
        crc = zlib.crc32(b"\0" * 8, crc)
        crc = zlib.crc32(self.buf[c1 + 4:d0], crc)
        if crc != h["meta_crc32"]:
            raise self.err("R8", f"metadata checksum mismatch (stored {h['meta_crc32']:#010x}, "
                           f"computed {crc:#010x}): bytes [0, {d0}) are corrupted", offset=c0)
        if self.verify:  # the holes of a sparse file are not read (qrt._fileio)
            crc = crc32_of_mapping(self.buf, d0, self.size, self.path, self.file_id)
            if crc != h["data_crc32"]:
                raise self.err("R12", f"payload checksum mismatch (stored "
                               f"{h['data_crc32']:#010x}, computed {crc:#010x}); the weights "
                               "are corrupted (qrt.load(..., verify=False) skips this check)",
                               section="DATA", offset=d0)

    # ---- strings (R13) -------------------------------------------------------------------
    def string(self, secs, off: int, size: int, what: str, at: int, section: str,
               op: Optional[int] = None, max_size: int = 1 << 30) -> str:
        s = secs["STRINGS"]
        if size > max_size or off + size > s["size"]:
            raise self.err("R13", f"{what} [{off}, {off}+{size}) lies outside the string pool "
                           f"({s['size']} bytes) or exceeds {max_size} bytes", section=section,
                           offset=at, op=op)
        raw = self.buf[s["offset"] + off:s["offset"] + off + size].tobytes()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.err("R13", f"{what} is not valid UTF-8", section=section, offset=at,
                           op=op) from None

    def json_obj(self, text: str, what: str, rule: str, **kw) -> Dict[str, Any]:
        def bad_const(c):
            raise ValueError(f"{c} is not allowed")
        try:
            v = json.loads(text, parse_constant=bad_const)
        except (ValueError, RecursionError) as e:
            raise self.err(rule, f"{what} is not valid JSON ({e})", **kw) from None
        if not isinstance(v, dict):
            raise self.err(rule, f"{what} must be a JSON object", **kw)
        return v

    # ---- tensor table (R14..R16) ---------------------------------------------------------
    def tensors(self, h, secs, storage) -> List[TensorEntry]:
        ts = secs["TENSORS"]
        n = ts["count"]
        if n > B.MAX_TENSORS:
            raise self.err("R14", f"tensor_count {n} exceeds the cap {B.MAX_TENSORS}",
                           section="TENSORS")
        tab = self.record(B.TENSOR_DTYPE, ts["offset"], n, "TENSORS")
        data = secs["DATA"]
        align = h["alignment"]
        out: List[TensorEntry] = []
        names: Dict[str, int] = {}
        for i in range(n):
            e = _fields(tab[i])
            at = ts["offset"] + i * B.TENSOR_SIZE

            def fail(rule, msg):
                return self.err(rule, f"tensor {i}: {msg}", section="TENSORS", offset=at)
            name = self.string(secs, int(e["name_offset"]), int(e["name_size"]),
                               f"tensor {i} name", at, "TENSORS", max_size=255)
            if not name:
                raise fail("R15", "empty name")
            if name in names:
                raise fail("R15", f"name {name!r} is also tensor {names[name]}")
            names[name] = i
            code = int(e["dtype"])
            if code not in B.DTYPES:
                raise fail("R14", f"unknown dtype code {code}")
            dname, npdt = B.DTYPES[code]
            kind = B.TENSOR_KIND_NAMES.get(int(e["kind"]))
            if kind is None:
                raise fail("R14", f"unknown tensor kind {int(e['kind'])}")
            ndim = int(e["ndim"])
            if ndim > B.MAX_NDIM:
                raise fail("R14", f"ndim {ndim} > {B.MAX_NDIM}")
            dims = [int(d) for d in e["dims"]]
            if any(d < 0 or d > _MAX_ELEMS for d in dims[:ndim]) or any(dims[ndim:]):
                raise fail("R14", f"dims {dims[:ndim]} must be in [0, {_MAX_ELEMS}] (and unused "
                           "dims zero)")
            numel = 1
            for d in dims[:ndim]:
                numel *= d
            if numel > _MAX_ELEMS:
                raise fail("R14", f"{numel} elements is more than {_MAX_ELEMS}")
            if any(int(r) for r in e["reserved"]):
                raise fail("R5", "reserved fields are not zero")
            flags = int(e["flags"])
            if kind == "state" and int(h["version_minor"]) < 2:
                raise fail("R14", "state tensors need format 1.2")
            if flags & ~B.TENSOR_BATCHED or (flags and (kind == "constant" or ndim == 0)):
                raise fail("R14", f"invalid flags {flags:#x}")
            qs = B.QSCHEME_NAMES.get(int(e["qscheme"]))
            scale, zp, axis = float(e["scale"]), int(e["zero_point"]), int(e["axis"])
            si, zi = int(e["scales_index"]), int(e["zero_points_index"])
            quantized = code in B.QUANTIZED_DTYPES
            if qs is None:
                raise fail("R14", f"unknown qscheme {int(e['qscheme'])}")
            if not quantized:
                if qs != "none" or scale or zp or axis or si != B.NONE or zi != B.NONE:
                    raise fail("R14", f"{dname} tensors carry no quantization parameters")
            elif qs == "per_tensor_affine":
                lo, hi = _QRANGE[dname]
                s32 = np.float32(scale) if math.isfinite(scale) and scale < 3.4e38 else np.inf
                if not (math.isfinite(scale) and scale > 0 and np.isfinite(s32) and s32 > 0
                        and np.isfinite(np.float32(1) / s32)):
                    raise fail("R14", f"scale {scale!r} must be positive, finite and usable "
                               "as float32")
                if not lo <= zp <= hi:
                    raise fail("R14", f"zero_point {zp} outside [{lo}, {hi}] for {dname}")
                if axis or si != B.NONE or zi != B.NONE:
                    raise fail("R14", "per-tensor entries have no axis or per-channel indices")
            elif qs == "per_channel_affine":
                if not 0 <= axis < ndim or si >= n or zi >= n or scale or zp:
                    raise fail("R14", "per-channel entry needs 0 <= axis < ndim and valid "
                               "scales/zero_points tensor indices")
            else:
                raise fail("R14", f"quantized dtype {dname} needs a qscheme")
            off, nb = int(e["data_offset"]), int(e["nbytes"])
            if kind == "constant":
                if nb != numel * npdt.itemsize:
                    raise fail("R14", f"nbytes {nb} != {numel} elements x {npdt.itemsize}")
                if off % align:
                    raise fail("R16", f"data_offset {off} is not a multiple of {align}")
                if off + nb > data["size"]:
                    raise fail("R16", f"payload [{off}, {off + nb}) lies outside DATA "
                               f"({data['size']} bytes)")
            elif off or nb:
                raise fail("R14", "activations have no payload (data_offset and nbytes are 0)")
            te = TensorEntry(i, name, dname, npdt, tuple(dims[:ndim]), kind,
                             bool(flags & B.TENSOR_BATCHED), qs, scale, zp, axis, si, zi,
                             data["offset"] + off, nb)
            if kind == "constant":
                arr = np.frombuffer(storage, dtype=npdt, count=numel, offset=te.data_offset) \
                    if numel else np.zeros(0, npdt)
                te.array = arr.reshape(te.shape)
            out.append(te)
        # R16: payloads in table order, packed with only alignment padding, covering DATA.
        pos = 0
        base = data["offset"]
        for te in out:
            if te.kind != "constant":
                continue
            rel = te.data_offset - base
            expect = -(-pos // align) * align
            if rel != expect:
                raise self.err("R16", f"tensor {te.index} ({te.name}) payload at DATA+{rel}, "
                               f"expected DATA+{expect}: payloads must be sorted, "
                               "non-overlapping and without holes", section="DATA",
                               offset=te.data_offset)
            if self.buf[base + pos:base + rel].any():
                raise self.err("R16", "alignment padding before tensor "
                               f"{te.index} is not zero", section="DATA", offset=base + pos)
            pos = rel + te.nbytes
        end = -(-pos // align) * align
        if end != data["size"]:
            raise self.err("R16", f"payloads end at DATA+{end} but DATA is {data['size']} "
                           "bytes (a hole or trailing bytes)", section="DATA",
                           offset=base + end)
        if self.buf[base + pos:base + end].any():
            raise self.err("R16", "trailing padding in DATA is not zero", section="DATA",
                           offset=base + pos)
        for te in out:  # per-channel indices point at F64 / S64 constants of the right size
            if te.qscheme == "per_channel_affine":
                c = te.shape[te.axis]
                s, z = out[te.scales_index], out[te.zero_points_index]
                if (s.kind, s.dtype, s.shape, z.kind, z.dtype, z.shape) != \
                        ("constant", "float64", (c,), "constant", "int64", (c,)):
                    raise self.err("R14", f"tensor {te.index}: per-channel qparams must be "
                                   f"float64/int64 constants of shape ({c},)",
                                   section="TENSORS")
        return out

    # ---- ops, io, meta (R17..R22) --------------------------------------------------------
    def ops(self, h, secs, tensors) -> List[OpEntry]:
        from qrt.ops import BY_CODE  # op kinds are defined in qrt/ops (which imports this)
        os_ = secs["OPS"]
        n = os_["count"]
        if n > B.MAX_OPS:
            raise self.err("R17", f"op count {n} exceeds the cap {B.MAX_OPS}", section="OPS")
        tab = self.record(B.OP_DTYPE, os_["offset"], n, "OPS")
        oper = self.record(np.dtype("<u4"), secs["OPERANDS"]["offset"],
                           secs["OPERANDS"]["count"], "OPERANDS")
        n_oper = int(oper.shape[0])
        out = []
        for i in range(n):
            e = _fields(tab[i])
            at = os_["offset"] + i * B.OP_SIZE

            def fail(rule, msg):
                return self.err(rule, msg, section="OPS", op=i, offset=at)
            known = BY_CODE.get(e["kind"])
            if known is None:
                raise fail("R17", f"unknown op kind {e['kind']} (this qrt {_qrt_version()} "
                           "knows the kinds listed in docs/ops.md)")
            kind = known[2]
            if e["flags"] or any(int(r) for r in e["reserved"]):
                raise fail("R5", "op flags/reserved fields are not zero")
            lists = {}
            for what in ("input", "output", "param"):
                f0, c = e[f"first_{what}"], e[f"{what}_count"]
                if f0 + c > n_oper:
                    raise fail("R17", f"{what}s [{f0}, {f0}+{c}) run past the {n_oper} "
                               "operands")
                idx = [int(v) for v in oper[f0:f0 + c]]
                for v in idx:
                    if v >= len(tensors):
                        raise fail("R17", f"{what} tensor index {v} >= tensor count "
                                   f"{len(tensors)}")
                    want = ("constant",) if what == "param" else ("activation", "state")
                    if tensors[v].kind not in want:
                        raise fail("R17", f"{what} tensor {v} ({tensors[v].name}) is a "
                                   f"{tensors[v].kind}, expected {' or '.join(want)}")
                lists[what] = idx
            name = self.string(secs, e["name_offset"], e["name_size"], "op name", at, "OPS",
                               op=i, max_size=1024)
            attrs = self.json_obj(self.string(secs, e["attrs_offset"], e["attrs_size"],
                                              "op attributes", at, "OPS", op=i,
                                              max_size=B.MAX_ATTR_BYTES) or "{}",
                                  f"op {i} attributes", "R17", section="OPS", op=i, offset=at)
            src = self.string(secs, e["source_offset"], e["source_size"], "op source", at,
                              "OPS", op=i, max_size=4096)
            out.append(OpEntry(i, kind, name, lists["input"], lists["output"], lists["param"],
                               attrs, src))
        return out

    def io(self, secs, tensors, ops, tensor_file: bool = False):
        s = secs["IO"]
        if tensor_file:  # R23 (format 1.1): a tensor file holds constants only
            if ops or s["count"] or any(t.kind != "constant" for t in tensors):
                raise self.err("R23", "a tensor file (header flag TENSORS) has no ops, no IO "
                               "entries and only constant tensors", section="IO",
                               offset=s["offset"])
            return [], []
        tab = self.record(B.IO_DTYPE, s["offset"], s["count"], "IO")
        ins, outs = [], []
        for i in range(s["count"]):
            at = s["offset"] + i * B.IO_SIZE
            t, d = int(tab[i]["tensor"]), int(tab[i]["direction"])
            if any(int(r) for r in tab[i]["reserved"]):
                raise self.err("R5", f"io entry {i} reserved fields are not zero", section="IO",
                               offset=at)
            if t >= len(tensors) or tensors[t].kind != "activation" or d not in (0, 1):
                raise self.err("R18", f"io entry {i}: tensor {t} / direction {d} must name an "
                               "activation tensor and 0 (input) or 1 (output)", section="IO",
                               offset=at)
            if d == 1:
                outs.append(t)
            else:
                if outs:
                    raise self.err("R18", "inputs must come before outputs", section="IO",
                                   offset=at)
                ins.append(t)
        if not ins or not outs or len(set(ins)) != len(ins) or len(set(outs)) != len(outs):
            raise self.err("R18", "a model needs >= 1 input and >= 1 output, each listed once",
                           section="IO", offset=s["offset"])
        # R28: activations are float32 or quantized, except int64/int32 index tensors, which
        # are model inputs only (never written by an op, never an output or state).
        for t in tensors:
            if t.kind == "constant" or t.qscheme != "none" or t.dtype == "float32":
                continue
            if t.dtype not in ("int64", "int32") or t.kind != "activation" or \
                    t.index not in ins or t.index in outs:
                raise self.err("R28", f"tensor {t.index} ({t.name}): {t.dtype} {t.kind} "
                               "tensor; activations that are neither float32 nor quantized "
                               "must be int64/int32 index tensors that are model inputs",
                               section="TENSORS")
        # R19: single assignment, topological order: read only after written. A state tensor
        # (1.2) holds the previous call's value: readable from the start, written by <= 1 op.
        written = set(ins)
        state = {t.index for t in tensors if t.kind == "state"}
        state_written = set()
        for op in ops:
            for t in op.inputs:
                if t not in written and t not in state:
                    raise self.err("R19", f"reads tensor {t} ({tensors[t].name}) before any "
                                   "op writes it (ops must be in execution order)", section="OPS",
                                   op=op.index)
            for t in op.outputs:
                if t in state:
                    if t in state_written:
                        raise self.err("R19", f"state tensor {t} ({tensors[t].name}) is written "
                                       "by two ops", section="OPS", op=op.index)
                    state_written.add(t)
                    continue
                if t in written:
                    raise self.err("R19", f"tensor {t} ({tensors[t].name}) is written twice "
                                   "(or is a model input)", section="OPS", op=op.index)
                written.add(t)
        for t in outs:
            if t not in written:
                raise self.err("R18", f"output tensor {t} ({tensors[t].name}) is never written",
                               section="IO")
        return ins, outs

    def meta(self, secs) -> Dict[str, Any]:
        s = secs["META"]
        if s["size"] > B.MAX_META_BYTES:
            raise self.err("R20", f"metadata is {s['size']} bytes, more than "
                           f"{B.MAX_META_BYTES}", section="META", offset=s["offset"])
        raw = self.buf[s["offset"]:s["offset"] + s["size"]].tobytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.err("R20", "metadata is not UTF-8", section="META",
                           offset=s["offset"]) from None
        return self.json_obj(text or "{}", "metadata", "R20", section="META",
                             offset=s["offset"])


def read_blob(path, *, verify: bool = True, mmap: bool = True) -> Blob:
    """Map (``mmap=False``: read) and validate ``path``; raise :class:`FormatError` for
    anything invalid, ``NotARegularFileError``/``IsADirectoryError`` for a FIFO, socket,
    device or directory (never opened for a blocking read)."""
    from qrt._fileio import NotARegularFileError
    fspath = os.fspath(path)
    try:
        storage = Storage.from_file(fspath, readonly=True, mmap=mmap)
    except (OSError, ValueError) as e:
        if isinstance(e, (FileNotFoundError, IsADirectoryError, PermissionError,
                          NotARegularFileError)):
            raise
        raise FormatError("R1", f"cannot map the file ({e})", path=fspath) from e
    buf = np.frombuffer(storage, dtype=np.uint8) if storage.nbytes else np.zeros(0, np.uint8)
    r = _Reader(fspath, buf, verify)
    r.file_id = storage.file_id if storage.mapped else None
    h = r.header()
    secs = r.sections(h)
    r.checksums(h, secs)
    tensors = r.tensors(h, secs, storage)
    ops = r.ops(h, secs, tensors)
    ins, outs = r.io(secs, tensors, ops, bool(h["flags"] & B.FLAG_TENSORS))
    meta = r.meta(secs)
    return Blob(fspath, storage, h, secs, tensors, ops, ins, outs, meta,
                bool(h["flags"] & B.FLAG_FIXED_BATCH))


def verify_blob(blob: Blob) -> None:
    """Re-check a loaded blob's bytes against the checksums validated at load (R8, R12).

    Detects bytes changed under the mapping since it was loaded (a file written in place),
    and a file truncated in place (R7; touching the lost pages would raise SIGBUS). Costs
    one CRC-32 pass over the file, about as much as ``qrt.load(verify=True)``.
    """
    st = blob.storage
    if st.mapped and st.file_id is not None:
        try:
            now = os.stat(blob.path)
        except OSError:
            now = None  # removed or renamed away: the mapping keeps the old inode
        if now is not None and (now.st_dev, now.st_ino) == st.file_id and \
                now.st_size < st.nbytes:
            raise FormatError("R7", f"the file was truncated to {now.st_size} bytes under its "
                              f"mapping ({st.nbytes} bytes mapped); reading the lost pages "
                              "would kill the process (SIGBUS): replace files by rename "
                              "(docs/blob-format.md, \"Updating a model file safely\") and "
                              "reload", path=blob.path)
    buf = np.frombuffer(st, dtype=np.uint8) if st.nbytes else np.zeros(0, np.uint8)
    r = _Reader(blob.path, buf, True)
    r.file_id = st.file_id if st.mapped else None
    r.checksums(blob.header, blob.sections)

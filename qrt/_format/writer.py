# SPDX-License-Identifier: Apache-2.0
"""The only writer of qrt ``.bin`` blobs (qrt-export, qrt.save and the tests use it).

Every constant and struct layout comes from qrt._blob; op codes and the format version each
op needs come from the op definitions (qrt.ops). The version a file is written as follows from
what it uses, by one rule (:meth:`BlobBuilder.format_version`).
"""

from __future__ import annotations

import json
import math
import zlib
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from qrt import _blob as B


# format version -> the first qrt that reads it (header.min_reader: major*10000+minor*100+patch)
READERS = {(1, 0): 100, (1, 1): 100, (1, 2): 200}


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@dataclass
class TensorDef:
    """One entry of the tensor table."""

    name: str
    kind: str                      # "constant" | "activation"
    dtype: str                     # a name in qrt._blob.DTYPE_CODE
    shape: tuple
    batched: bool = False
    scale: float = 0.0             # per-tensor quantized only
    zero_point: int = 0
    data: Optional[np.ndarray] = None  # constants: the exact bytes the kernel reads
    # format 1.1 (qrt.save): per-channel quantized constants point at their qparam tensors
    axis: int = -1                 # >= 0: per-channel along this axis
    scales_index: int = -1         # f64 constant [shape[axis]]
    zero_points_index: int = -1    # s64 constant [shape[axis]]


@dataclass
class OpDef:
    """One operator: indices into the tensor list."""

    kind: str
    name: str
    inputs: List[int]
    outputs: List[int]
    params: List[int] = field(default_factory=list)
    attrs: Dict[str, Any] = field(default_factory=dict)
    source: str = ""


class BlobBuilder:
    """Collects tensors, ops, inputs/outputs and metadata, then writes one ``.bin``."""

    def __init__(self):
        self.tensors: List[TensorDef] = []
        self.ops: List[OpDef] = []
        self.inputs: List[int] = []
        self.outputs: List[int] = []
        self.meta: Dict[str, Any] = {}
        self.flags = 0
        self.version: Optional[Tuple[int, int]] = None  # None: format_version() decides
        self.optional_sections: List[Tuple[int, bytes]] = []  # (kind | OPTIONAL, body)
        self._names: Dict[str, int] = {}

    # ---- building -----------------------------------------------------------------------
    def _unique(self, name: str) -> str:
        base, i = name[:200] or "t", 1
        out = base
        while out in self._names:
            i += 1
            out = f"{base}_{i}"
        return out

    def activation(self, name, dtype, shape, *, batched=False, scale=0.0, zero_point=0) -> int:
        if dtype not in B.DTYPE_CODE:
            raise ValueError(f"unknown blob dtype {dtype!r}")
        t = TensorDef(self._unique(name), "activation", dtype, tuple(int(d) for d in shape),
                      bool(batched), float(scale), int(zero_point))
        return self._add(t)

    def state(self, name, dtype, shape, *, batched=False, scale=0.0, zero_point=0) -> int:
        """A tensor that persists between calls (format 1.2): zero at the first call."""
        i = self.activation(name, dtype, shape, batched=batched, scale=scale,
                            zero_point=zero_point)
        self.tensors[i].kind = "state"
        return i

    def constant(self, name, array: np.ndarray) -> int:
        arr = np.asarray(array, order="C")  # keeps 0-d arrays 0-d
        code = {v[1]: k for k, v in B.DTYPES.items() if v[0] not in ("quint8", "qint8", "qint32")}
        c = code.get(arr.dtype.newbyteorder("<"))
        if c is None:
            raise ValueError(f"constant {name!r}: numpy dtype {arr.dtype} has no blob dtype")
        arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        t = TensorDef(self._unique(name), "constant", B.DTYPES[c][0], arr.shape, data=arr)
        return self._add(t)

    def quantized_constant(self, name, ints: np.ndarray, dtype: str, *, scale=None,
                           zero_point=None, scales=None, zero_points=None, axis=None) -> int:
        """A quantized constant (format 1.1, tensor files): per-tensor (``scale``,
        ``zero_point``) or per-channel (``scales`` f64, ``zero_points`` s64, ``axis``)."""
        if dtype not in ("quint8", "qint8", "qint32"):
            raise ValueError(f"constant {name!r}: {dtype!r} is not a quantized dtype")
        arr = np.asarray(ints, order="C").astype(B.DTYPES[B.DTYPE_CODE[dtype]][1], copy=False)
        if axis is None:
            return self._add(TensorDef(self._unique(name), "constant", dtype, arr.shape,
                                       scale=float(scale), zero_point=int(zero_point),
                                       data=arr))
        si = self.constant(f"{name}/q_per_channel_scales", np.asarray(scales, "<f8"))
        zi = self.constant(f"{name}/q_per_channel_zero_points", np.asarray(zero_points, "<i8"))
        return self._add(TensorDef(self._unique(name), "constant", dtype, arr.shape, data=arr,
                                   axis=int(axis), scales_index=si, zero_points_index=zi))

    def _add(self, t: TensorDef) -> int:
        if len(t.shape) > B.MAX_NDIM:
            raise ValueError(f"tensor {t.name!r} has {len(t.shape)} dims; blobs hold at most "
                             f"{B.MAX_NDIM}")
        self._names[t.name] = len(self.tensors)
        self.tensors.append(t)
        return len(self.tensors) - 1

    def op(self, kind, name, inputs, outputs, params=(), attrs=None, source="") -> int:
        from qrt.ops import CODE_OF
        if kind not in CODE_OF:
            raise ValueError(f"unknown op kind {kind!r}")
        self.ops.append(OpDef(kind, name, list(inputs), list(outputs), list(params),
                              dict(attrs or {}), source))
        return len(self.ops) - 1

    # ---- the version rule ---------------------------------------------------------------
    def format_version(self) -> Tuple[int, int]:
        """The oldest format that holds what this file uses: the newest ``since`` of its ops'
        definitions, 1.1 for a tensor file, 1.2 for optional sections. An explicit
        ``self.version`` (tests writing older layouts) wins."""
        if self.version is not None:
            return tuple(self.version)
        from qrt.ops import BY_NAME
        need = [(1, 0)]
        need += [BY_NAME[op.kind].since for op in self.ops]
        if self.flags & B.FLAG_TENSORS:
            need.append((1, 1))
        if self.optional_sections or any(t.kind == "state" for t in self.tensors):
            need.append((1, 2))
        return max(need)

    # ---- writing ------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """Serialise to the format in docs/blob-format.md."""
        align = B.ALIGN
        strings = bytearray()
        str_cache: Dict[bytes, int] = {}

        def put(s) -> tuple:
            b = s if isinstance(s, bytes) else s.encode("utf-8")
            if not b:
                return 0, 0
            off = str_cache.get(b)
            if off is None:
                off = len(strings)
                strings.extend(b)
                str_cache[b] = off
            return off, len(b)

        # Tensor table and payload placement (table order = payload order).
        tt = np.zeros(len(self.tensors), dtype=B.TENSOR_DTYPE)
        data_off = 0
        payloads = []
        for i, t in enumerate(self.tensors):
            e = tt[i]
            e["name_offset"], e["name_size"] = put(t.name)
            code = B.DTYPE_CODE[t.dtype]
            e["dtype"] = code
            e["ndim"] = len(t.shape)
            dims = np.zeros(B.MAX_NDIM, np.int64)
            dims[:len(t.shape)] = t.shape
            e["dims"] = dims
            e["scales_index"] = B.NONE
            e["zero_points_index"] = B.NONE
            if code in B.QUANTIZED_DTYPES and t.axis >= 0:  # per-channel (format 1.1)
                e["qscheme"] = B.QSCHEME["per_channel_affine"]
                e["axis"] = t.axis
                e["scales_index"], e["zero_points_index"] = t.scales_index, t.zero_points_index
            elif code in B.QUANTIZED_DTYPES:
                if not (math.isfinite(t.scale) and t.scale > 0):
                    raise ValueError(f"tensor {t.name!r}: scale {t.scale!r} is not positive")
                e["qscheme"] = B.QSCHEME["per_tensor_affine"]
                e["scale"], e["zero_point"] = t.scale, t.zero_point
            if t.kind == "constant":
                e["kind"] = B.TENSOR_KIND["constant"]
                data_off = _align(data_off, align)
                e["data_offset"] = data_off
                e["nbytes"] = t.data.nbytes
                payloads.append((data_off, t.data))
                data_off += t.data.nbytes
            else:
                e["kind"] = B.TENSOR_KIND[t.kind]
                e["flags"] = B.TENSOR_BATCHED if t.batched else 0
        data_size = _align(data_off, align)

        from qrt.ops import CODE_OF
        operands: List[int] = []
        ot = np.zeros(len(self.ops), dtype=B.OP_DTYPE)
        for i, op in enumerate(self.ops):
            e = ot[i]
            e["kind"] = CODE_OF[op.kind]
            e["name_offset"], e["name_size"] = put(op.name)
            for what, lst in (("input", op.inputs), ("output", op.outputs),
                              ("param", op.params)):
                e[f"first_{what}"] = len(operands)
                e[f"{what}_count"] = len(lst)
                operands.extend(lst)
            e["attrs_offset"], e["attrs_size"] = put(
                json.dumps(op.attrs, sort_keys=True, separators=(",", ":"), allow_nan=False))
            e["source_offset"], e["source_size"] = put(op.source)

        io = np.zeros(len(self.inputs) + len(self.outputs), dtype=B.IO_DTYPE)
        for j, ti in enumerate(self.inputs):
            io[j]["tensor"], io[j]["direction"] = ti, 0
        for j, ti in enumerate(self.outputs):
            io[len(self.inputs) + j]["tensor"], io[len(self.inputs) + j]["direction"] = ti, 1
        meta = json.dumps(self.meta, sort_keys=True, separators=(",", ":"),
                          allow_nan=False).encode()

        sections = [(B.SECTION[k], body, n) for k, body, n in [
            ("STRINGS", bytes(strings), 1),
            ("TENSORS", tt.tobytes(), len(tt)),
            ("OPERANDS", np.asarray(operands, dtype="<u4").tobytes(), len(operands)),
            ("OPS", ot.tobytes(), len(ot)),
            ("IO", io.tobytes(), len(io)),
            ("META", meta, 1),
        ]] + [(int(k) | B.SECTION_OPTIONAL, bytes(body), 1) for k, body in
              self.optional_sections]
        n_sec = len(sections) + 1
        table_off = B.HEADER_SIZE
        pos = _align(table_off + n_sec * B.SECTION_SIZE, 8)
        st = np.zeros(n_sec, dtype=B.SECTION_DTYPE)
        out = bytearray(pos)
        for k, (kind, body, count) in enumerate(sections):
            st[k]["kind"], st[k]["offset"] = kind, pos
            st[k]["size"], st[k]["count"] = len(body), count
            out.extend(body)
            pos += len(body)
            pad = _align(pos, 8) - pos
            out.extend(b"\0" * pad)
            pos += pad
        data_start = _align(pos, align)
        out.extend(b"\0" * (data_start - pos))
        st[-1]["kind"], st[-1]["offset"] = B.SECTION["DATA"], data_start
        st[-1]["size"], st[-1]["count"] = data_size, 1
        data = bytearray(data_size)
        for off, arr in payloads:
            data[off:off + arr.nbytes] = arr.tobytes()
        file_size = data_start + data_size

        h = np.zeros((), dtype=B.HEADER_DTYPE)
        h["magic"] = B.MAGIC
        major, minor = self.format_version()
        h["version_major"], h["version_minor"] = major, minor
        h["min_reader"] = READERS[(major, minor)]
        h["header_size"], h["flags"] = B.HEADER_SIZE, self.flags
        h["alignment"], h["section_count"] = align, n_sec
        h["section_table_offset"], h["file_size"] = table_off, file_size
        out[:B.HEADER_SIZE] = h.tobytes()
        out[table_off:table_off + st.nbytes] = st.tobytes()
        meta_crc = zlib.crc32(bytes(out[:data_start]))  # CRC fields are still zero here
        data_crc = zlib.crc32(data)
        h["meta_crc32"], h["data_crc32"] = meta_crc, data_crc
        out[:B.HEADER_SIZE] = h.tobytes()
        out.extend(data)
        return bytes(out)

    def write(self, path) -> int:
        """Write the blob to ``path`` atomically (temporary file, fsync, rename): a process
        that has the old file mapped keeps it intact instead of dying of SIGBUS."""
        from qrt._fileio import replace_file
        blob = self.to_bytes()
        replace_file(path, blob)
        return len(blob)


def rewrite(graph, meta=None) -> BlobBuilder:
    """A builder holding a loaded model (a ``qrt.executor.Graph``) in the current format:
    attributes as the op definitions validated them, parameters as named by their slots
    (arrays of older layouts that no slot names, such as format 1.1's packed weights, are
    dropped). What ``qrt upgrade old.bin -o new.bin`` writes."""
    blob = graph.blob
    T = blob.tensors
    b = BlobBuilder()
    b.flags = int(blob.header["flags"])
    b.meta = dict(blob.meta if meta is None else meta)
    index: Dict[int, int] = {}

    def tensor(i):
        if i in index:
            return index[i]
        t = T[i]
        if t.kind == "constant":
            if t.qscheme != "none":
                raise ValueError(f"tensor {t.name!r}: quantized constants are not op params")
            j = b.constant(t.name, np.array(t.array))
        else:
            j = b.activation(t.name, t.dtype, t.shape, batched=t.batched,
                             scale=t.scale if t.qscheme != "none" else 0.0,
                             zero_point=t.zero_point if t.qscheme != "none" else 0)
        index[i] = j
        return j
    for i in blob.inputs:
        tensor(i)
    for n, op in zip(graph.nodes, blob.ops):
        ins = [tensor(i) for i in op.inputs]
        params = [tensor(t.index) for t in (n.params.get(p.name) for p in n.op.params)
                  if t is not None]
        outs = [tensor(i) for i in op.outputs]
        # attributes at their schema default are left out (a later schema may add defaults)
        attrs = {k: v for k, v in n.attrs.items()
                 if v is not None and v != n.op.attrs[k].default}
        b.op(n.op.name, n.name, ins, outs, params, attrs, n.source)
    b.inputs = [index[i] for i in blob.inputs]
    b.outputs = [index[i] for i in blob.outputs]
    return b

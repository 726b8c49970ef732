# SPDX-License-Identifier: Apache-2.0
"""The only writer of qrt ``.bin`` blobs. Every constant and struct layout comes from qrt._blob."""

from __future__ import annotations

import json
import math
import zlib
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from qrt import _blob as B


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
        if kind not in B.OPS:
            raise ValueError(f"unknown op kind {kind!r}")
        self.ops.append(OpDef(kind, name, list(inputs), list(outputs), list(params),
                              dict(attrs or {}), source))
        return len(self.ops) - 1

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
                e["kind"] = B.TENSOR_KIND["activation"]
                e["flags"] = B.TENSOR_BATCHED if t.batched else 0
        data_size = _align(data_off, align)

        operands: List[int] = []
        ot = np.zeros(len(self.ops), dtype=B.OP_DTYPE)
        for i, op in enumerate(self.ops):
            e = ot[i]
            e["kind"] = B.OPS[op.kind]
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

        sections = [
            ("STRINGS", bytes(strings), 1),
            ("TENSORS", tt.tobytes(), len(tt)),
            ("OPERANDS", np.asarray(operands, dtype="<u4").tobytes(), len(operands)),
            ("OPS", ot.tobytes(), len(ot)),
            ("IO", io.tobytes(), len(io)),
            ("META", meta, 1),
        ]
        n_sec = len(sections) + 1
        table_off = B.HEADER_SIZE
        pos = _align(table_off + n_sec * B.SECTION_SIZE, 8)
        st = np.zeros(n_sec, dtype=B.SECTION_DTYPE)
        out = bytearray(pos)
        for k, (kind, body, count) in enumerate(sections):
            st[k]["kind"], st[k]["offset"] = B.SECTION[kind], pos
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
        # Format 1.1 features (tensor files, custom ops) mark the file 1.1; a file using none
        # of them stays a 1.0 file, byte-identical to what 1.0 writers produce.
        uses_11 = bool(self.flags & B.FLAG_TENSORS) or any(op.kind == "custom"
                                                           for op in self.ops)
        h["version_major"] = B.VERSION_MAJOR
        h["version_minor"] = B.VERSION_MINOR if uses_11 else 0
        h["header_size"], h["flags"] = B.HEADER_SIZE, self.flags
        h["alignment"], h["section_count"] = align, n_sec
        h["section_table_offset"], h["file_size"] = table_off, file_size
        h["min_reader"] = B.MIN_READER
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


def crc_of(buf: Sequence[int]) -> int:
    return zlib.crc32(buf)

# SPDX-License-Identifier: Apache-2.0
"""Print a qrt blob's structures with an annotated hex dump (used for docs/blob-format.md).

    python tools/dump_blob.py model.bin             # annotated header + section table + tables
    python tools/dump_blob.py model.bin --raw       # also hex of every section (truncated)
    python tools/dump_blob.py --example out.bin     # write and dump the tiny example blob

Reads the layouts from qrt._blob (never repeats them); does not validate beyond what it needs
to print (use ``qrt verify`` for that).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from qrt import _blob as B


def hexline(buf: bytes, off: int, n: int) -> str:
    chunk = buf[off:off + n]
    return " ".join(f"{b:02x}" for b in chunk)


def annotate(buf: bytes, base: int, dtype: np.dtype, title: str, out):
    """One line per field: offset, hex bytes, name, decoded value."""
    rec = np.frombuffer(buf[base:base + dtype.itemsize], dtype)[0]
    print(f"-- {title} @ {base} ({dtype.itemsize} bytes)", file=out)
    fields = sorted(dtype.fields.items(), key=lambda kv: kv[1][1])
    for name, (dt, off) in fields:
        v = rec[name]
        if isinstance(v, np.ndarray):
            v = v.tolist()
        elif isinstance(v, bytes):
            v = repr(bytes(v))
        else:
            v = v.item()
        h = hexline(buf, base + off, dt.itemsize)
        if len(h) > 47:
            h = h[:44] + "..."
        print(f"  [{base + off:5d}..{base + off + dt.itemsize - 1:5d}] {h:<47} {name} = {v}",
              file=out)


def dump(path: str, raw: bool = False, out=sys.stdout, max_entries: int = 8):
    buf = open(path, "rb").read()
    print(f"{path}: {len(buf)} bytes", file=out)
    annotate(buf, 0, B.HEADER_DTYPE, "header (qrt_blob_header)", out)
    h = np.frombuffer(buf[:B.HEADER_SIZE], B.HEADER_DTYPE)[0]
    n = int(h["section_count"])
    t0 = int(h["section_table_offset"])
    secs = {}
    for i in range(min(n, B.MAX_SECTIONS)):
        at = t0 + i * B.SECTION_SIZE
        s = np.frombuffer(buf[at:at + B.SECTION_SIZE], B.SECTION_DTYPE)[0]
        name = B.SECTION_NAMES.get(int(s["kind"]), "?")
        secs[name] = (int(s["offset"]), int(s["size"]), int(s["count"]))
        annotate(buf, at, B.SECTION_DTYPE, f"section entry {i}: {name}", out)
    if "STRINGS" in secs:
        o, sz, _ = secs["STRINGS"]
        print(f"-- STRINGS @ {o}: {buf[o:o + min(sz, 160)]!r}{'...' if sz > 160 else ''}",
              file=out)
    for kind, dt in (("TENSORS", B.TENSOR_DTYPE), ("OPS", B.OP_DTYPE), ("IO", B.IO_DTYPE)):
        if kind not in secs:
            continue
        o, sz, cnt = secs[kind]
        for i in range(min(cnt, max_entries)):
            annotate(buf, o + i * dt.itemsize, dt, f"{kind} entry {i}", out)
        if cnt > max_entries:
            print(f"  ... {cnt - max_entries} more {kind} entries", file=out)
    if "OPERANDS" in secs:
        o, sz, cnt = secs["OPERANDS"]
        print(f"-- OPERANDS @ {o}: {np.frombuffer(buf[o:o + 4 * cnt], '<u4').tolist()}",
              file=out)
    if "META" in secs:
        o, sz, _ = secs["META"]
        print(f"-- META @ {o}: {buf[o:o + sz].decode('utf-8', 'replace')}", file=out)
    if "DATA" in secs:
        o, sz, _ = secs["DATA"]
        print(f"-- DATA @ {o}: {sz} bytes", file=out)
        for k in range(0, min(sz, 128 if not raw else 1024), 16):
            print(f"  {o + k:08x}  {hexline(buf, o + k, 16)}", file=out)
    if raw:
        print("-- raw hex of bytes [0, DATA)", file=out)
        end = secs.get("DATA", (len(buf),))[0]
        for k in range(0, end, 16):
            print(f"  {k:08x}  {hexline(buf, k, 16)}", file=out)


def example(path: str):
    """The tiny blob shown in docs/blob-format.md: quantize -> linear -> dequantize."""
    import qrt
    from qrt_export import BlobBuilder
    b = BlobBuilder()
    x = b.activation("x", "float32", (1, 4), batched=True)
    q = b.activation("xq", "quint8", (1, 4), batched=True, scale=0.5, zero_point=128)
    o = b.activation("o", "quint8", (1, 2), batched=True, scale=0.25, zero_point=100)
    y = b.activation("y", "float32", (1, 2), batched=True)
    lin = qrt.nn.Linear(4, 2)
    lin.set_weight_bias(qrt.from_int_repr(np.array([[1, -2, 3, -4], [5, 6, -7, 8]], np.int8),
                                          0.125, 0, qrt.qint8), np.array([0.5, -1], np.float32))
    lin.scale, lin.zero_point = 0.25, 100
    arrs = lin.packed_arrays()
    params = [b.constant(f"fc.{k}", a) for k, a in arrs.items()]
    b.op("quantize", "quant", [x], [q])
    b.op("linear", "fc", [q], [o], params, {"config": lin.config(), "params": list(arrs)})
    b.op("dequantize", "dequant", [o], [y])
    b.inputs, b.outputs = [x], [y]
    b.meta = {"exporter": "tools/dump_blob.py --example"}
    return b.write(path)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path")
    p.add_argument("--raw", action="store_true")
    p.add_argument("--example", action="store_true", help="first write the example blob")
    p.add_argument("--max-entries", type=int, default=8)
    a = p.parse_args(argv)
    if a.example:
        example(a.path)
    dump(a.path, a.raw, max_entries=a.max_entries)


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: Apache-2.0
"""Blob-building helpers shared by test_op_registry.py, test_executor.py and test_blob_format.py
(torch-free: qrt_export.BlobBuilder and qrt.nn layers with random integer weights)."""

from __future__ import annotations

import json
import types
import zlib

import numpy as np

import qrt
from qrt import _blob as B
from qrt_export import BlobBuilder

RAW = "@RAW@"   # an attribute value replaced by hand-written JSON (see raw_attrs)


def conv_layer(rng, c_in, c_out, k, relu=False, scale=0.05, zero_point=3, bias=True, **kw):
    cls = qrt.nn.ConvReLU1d if relu else qrt.nn.Conv1d
    m = cls(c_in, c_out, k, bias=bias, **kw)
    g = kw.get("groups", 1)
    w = rng.integers(-127, 128, (c_out, c_in // g, k)).astype(np.int8)
    m.set_weight_bias(qrt.from_int_repr_per_channel(w, rng.uniform(0.002, 0.01, c_out),
                                                    np.zeros(c_out, np.int64), 0, qrt.qint8),
                      rng.standard_normal(c_out).astype(np.float32) if bias else None)
    m.scale, m.zero_point = scale, zero_point
    return m


def linear_layer(rng, c_in, c_out, relu=False, scale=0.1, zero_point=128):
    m = (qrt.nn.LinearReLU if relu else qrt.nn.Linear)(c_in, c_out)
    m.set_weight_bias(qrt.from_int_repr(rng.integers(-127, 128, (c_out, c_in)).astype(np.int8),
                                        0.004, 0, qrt.qint8),
                      rng.standard_normal(c_out).astype(np.float32))
    m.scale, m.zero_point = scale, zero_point
    return m


def add_layer(b, kind, mod, src, dst, name, legacy=False, garbage=None, attrs=None,
              arrays=None):
    """Write qrt.nn layer ``mod`` as op ``kind`` (conv1d/linear, or with ``legacy`` the format
    1.1 layout: {"config", "params"} with every packed array; ``garbage``: an rng that fills
    weight_packed / weight_sum with noise)."""
    if legacy:
        arrs = dict(mod.packed_arrays())
        if garbage is not None:
            for k in ("weight_packed", "weight_sum"):
                a = arrs[k]
                arrs[k] = garbage.integers(-128, 128, a.nbytes).astype(np.int8).view(a.dtype) \
                    .reshape(a.shape)
        params = [b.constant(f"{name}.{k}", a) for k, a in arrs.items()]
        a = {"config": mod.config(), "params": list(arrs)}
    else:
        a, arrs = qrt.ops.get(kind if kind in ("conv1d", "linear") else
                              {"conv_relu1d": "conv1d", "linear_relu": "linear"}[kind]
                              ).encode(mod)
        if arrays:
            arrs.update(arrays)
        params = [b.constant(f"{name}.{k}", v) for k, v in arrs.items()]
    a.update(attrs or {})
    return b.op(kind, name, [src], [dst], params, a)


def raw_attrs(monkeypatch, raw: str):
    """Make the writer emit ``raw`` (any text) where an attribute value is ``RAW``: the writer
    itself refuses NaN/inf and only writes valid JSON."""
    from qrt._format import writer
    real = json.dumps

    def dumps(obj, **kw):
        return real(obj, **kw).replace(json.dumps(RAW), raw)
    monkeypatch.setattr(writer, "json", types.SimpleNamespace(dumps=dumps))


def one_op_blob(kind, attrs, L=16, c=4, out_scale=0.05, out_zp=120, out_len=None,
                in_scale=0.05, in_zp=120, batch=2):
    """quantize -> ``kind`` (a pool or any single-input op without params) -> dequantize."""
    b = BlobBuilder()
    x = b.activation("x", "float32", (batch, c, L), batched=True)
    q = b.activation("xq", "quint8", (batch, c, L), batched=True, scale=in_scale,
                     zero_point=in_zp)
    lo = L if out_len is None else out_len
    p = b.activation("p", "quint8", (batch, c, lo), batched=True, scale=out_scale,
                     zero_point=out_zp)
    y = b.activation("y", "float32", (batch, c, lo), batched=True)
    b.op("quantize", "quant", [x], [q])
    b.op(kind, "op", [q], [p], attrs=attrs)
    b.op("dequantize", "dequant", [p], [y])
    b.inputs, b.outputs = [x], [y]
    return b


def conv_blob(mod=None, L=16, batch=2, attrs=None, arrays=None, out_len=None, c_in=4,
              quant_out=False, rng=None):
    """quantize -> conv1d(mod) -> dequantize (or the quint8 output with ``quant_out``)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    mod = mod if mod is not None else conv_layer(rng, c_in, 6, 3, padding=1)
    b = BlobBuilder()
    x = b.activation("x", "float32", (batch, mod._c_in, L), batched=True)
    q = b.activation("xq", "quint8", (batch, mod._c_in, L), batched=True, scale=0.03,
                     zero_point=128)
    lo = out_len if out_len is not None else conv_len(mod, L)
    h = b.activation("h", "quint8", (batch, mod._c_out, lo), batched=True,
                     scale=mod.scale, zero_point=mod.zero_point)
    b.op("quantize", "quant", [x], [q])
    add_layer(b, "conv1d", mod, q, h, "conv", attrs=attrs, arrays=arrays)
    if quant_out:
        b.inputs, b.outputs = [x], [h]
    else:
        y = b.activation("y", "float32", (batch, mod._c_out, lo), batched=True)
        b.op("dequantize", "dequant", [h], [y])
        b.inputs, b.outputs = [x], [y]
    return b, mod


def conv_len(mod, L):
    from qrt._geometry import conv_out_len
    return conv_out_len(L, mod._k, mod._s, mod._pl, mod._pr, mod._d)


def load(tmp_path, b_or_bytes, name="m.bin", **kw):
    p = tmp_path / name
    data = b_or_bytes if isinstance(b_or_bytes, (bytes, bytearray)) else b_or_bytes.to_bytes()
    p.write_bytes(bytes(data))
    return qrt.load(p, **kw)


def header(buf):
    return np.frombuffer(bytes(buf[:B.HEADER_SIZE]), B.HEADER_DTYPE)[0]


def fix_crc(buf: bytearray) -> bytearray:
    """Recompute both CRCs of a well-formed blob after patching it."""
    h = header(buf)
    t0, n = int(h["section_table_offset"]), int(h["section_count"])
    tab = np.frombuffer(bytes(buf[t0:t0 + n * B.SECTION_SIZE]), B.SECTION_DTYPE)
    d0 = [int(s["offset"]) for s in tab if s["kind"] == B.SECTION["DATA"]][0]
    c0, c1 = B.CRC_FIELDS
    buf[c0:c0 + 4] = b"\0" * 4
    buf[c1:c1 + 4] = b"\0" * 4
    meta = zlib.crc32(bytes(buf[:d0]))
    buf[c0:c0 + 4] = meta.to_bytes(4, "little")
    buf[c1:c1 + 4] = zlib.crc32(bytes(buf[d0:])).to_bytes(4, "little")
    return buf

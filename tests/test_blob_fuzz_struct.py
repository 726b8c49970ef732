# SPDX-License-Identifier: Apache-2.0
"""Structure-aware blob fuzzer (issue #13): structured edits of real blobs, CRCs recomputed.

Base blobs: the shipped demo (format 1.2), the 0.1.0 demo (format 1.0 layout), and blobs built
here with the one writer that together use every op kind of ``qrt.ops.kinds()`` (custom ops and
state tensors included). Each case applies 1..3 edits chosen by a seeded ``random.Random``:

* a field of the header, the section table, the tensor table (dims, dtype, kind incl. state,
  qscheme, scale incl. 3.3e38/1e-45/nan/inf/-0.0, zero_point, data_offset, nbytes, axis,
  indices, flags), the op table (kind codes incl. unknown ones, operand ranges and counts),
  the operands, the IO entries -- set to a hostile value, or to another entry's value;
* an op's attribute JSON: a value (at any depth) replaced by a hostile one (10**30, 1e999 as
  text, negative numbers, bools, strings, lists, objects), a key deleted or added, the whole
  text replaced (the file is laid out again, as the writer does);
* payload values: weights, weight scales (NaN, 0, 1e300, ...), zero points, biases (NaN, inf).

Then both CRCs are recomputed, so what is exercised is the structural rules. Contract per case:
``qrt.load`` raises ``qrt.FormatError``, or the model loads and a call on a valid input runs or
raises ValueError/TypeError; two calls give equal results; and for a sample of the loaded
mutants the reference kernels (``QRT_DISABLE_ISA=all``, in a child process) give the same
results as the default ones. Cases run in child processes (``faulthandler`` with a timeout per
case), so a crash or a hang is reported with its case number, not the death of pytest.

Reproduce one case: ``python tests/test_blob_fuzz_struct.py --seed S --case N`` (prints the
edits and the outcome; ``--out f.bin`` writes the mutant).
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import qrt  # noqa: E402
from qrt import _blob as B  # noqa: E402
from qrt.loader import FormatError  # noqa: E402

SEED = int(os.environ.get("QRT_FUZZ_SEED", "20261201"))
from _qemu import UNDER_QEMU  # noqa: E402

from _qemu import skip_under_qemu  # noqa: E402

pytestmark = skip_under_qemu("the x86 run carries this fuzzer; test_blob_fuzz.py runs here")

# Under qemu-user (the ARM CI runs) every case costs ~20x: the x86 run carries the budget.
CI_CASES = int(os.environ.get("QRT_FUZZ_CASES", "120" if UNDER_QEMU else "3000"))
SLOW_CASES = int(os.environ.get("QRT_FUZZ_SLOW_CASES", "100000"))
CASE_TIMEOUT = float(os.environ.get("QRT_FUZZ_CASE_TIMEOUT", "20"))  # s per case, then killed
BATCH = 500                  # cases per child process
XCHECK_MAX = 10 if UNDER_QEMU else 300  # loaded mutants re-run with the reference kernels
DEMO = os.path.join(os.path.dirname(qrt.__file__), "data", "demo.bin")
LEGACY = os.path.join(HERE, "data", "legacy_demo_1_0.bin")


# ---- base blobs --------------------------------------------------------------------------------
def _register_custom_ops():
    def qclamp(x, *, min, max):
        s, z = np.float32(x.q_scale()), x.q_zero_point()
        inv = np.float32(1.0) / s
        dt = x.dtype

        def qb(v):
            return int(np.clip(z + np.rint(np.float32(v) * inv), dt.qmin, dt.qmax))
        ints = np.clip(x.int_repr(), qb(min), qb(max)).astype(dt.numpy_dtype)
        return qrt.from_int_repr(ints, x.q_scale(), z, dt)

    def acc(x, s, *, out):
        np.add(s, x, out=out)
    qrt.register_op("fuzz.qclamp", qclamp, overwrite=True)
    qrt.register_op("fuzz.acc", acc, out=True, overwrite=True)


def _layer(rng, kind, c_in, c_out, k=None, relu=False, bias=True, **kw):
    nn = qrt.nn
    if kind == "conv1d":
        m = (nn.ConvReLU1d if relu else nn.Conv1d)(c_in, c_out, k, bias=bias, **kw)
        g = kw.get("groups", 1)
        w = rng.integers(-127, 128, (c_out, c_in // g, k)).astype(np.int8)
    elif kind == "linear":
        m = (nn.LinearReLU if relu else nn.Linear)(c_in, c_out, bias)
        w = rng.integers(-127, 128, (c_out, c_in)).astype(np.int8)
    else:
        m = nn.DynamicLinear(c_in, c_out, bias)
        w = rng.integers(-127, 128, (c_out, c_in)).astype(np.int8)
    m.set_weight_bias(qrt.from_int_repr_per_channel(w, rng.uniform(0.002, 0.01, c_out),
                                                    np.zeros(c_out, np.int64), 0, qrt.qint8),
                      rng.standard_normal(c_out).astype(np.float32) if bias else None)
    if kind != "linear_dynamic":
        m.scale, m.zero_point = 0.05, 3
    return m


def all_ops_builder(batch=2):
    """One model using every op kind (custom included)."""
    from qrt_export import BlobBuilder
    rng = np.random.default_rng(7)
    b = BlobBuilder()
    N = batch

    def act(name, shape, scale=0.05, zp=3, dtype="quint8"):
        return b.activation(name, dtype, (N,) + shape, batched=True, scale=scale,
                            zero_point=zp)

    def layer(kind, mod, src, dst, name, extra=None):
        attrs, arrs = qrt.ops.get(kind).encode(mod)
        attrs.update(extra or {})
        params = [b.constant(f"{name}.{k}", a) for k, a in arrs.items()]
        b.op(kind, name, [src], [dst], params, attrs)

    x = b.activation("x", "float32", (N, 4, 16), batched=True)
    q = act("xq", (4, 16), 0.03, 128)
    b.op("quantize", "q", [x], [q])
    c1 = act("c1", (8, 16))
    layer("conv1d", _layer(rng, "conv1d", 4, 8, 3, relu=True, padding=1), q, c1, "conv1")
    c2 = act("c2", (8, 16))
    layer("conv1d", _layer(rng, "conv1d", 8, 8, 3, groups=4, dilation=2, padding=2,
                           bias=False), c1, c2, "conv2")
    mp = act("mp", (8, 8))
    b.op("max_pool1d", "mp", [c2], [mp], attrs={"kernel_size": 2})
    ap = act("ap", (8, 8))
    b.op("avg_pool1d", "ap", [mp], [ap], attrs={"kernel_size": 3, "stride": 1, "padding": 1})
    r = act("r", (8, 8))
    b.op("relu", "relu", [ap], [r])
    hs = act("hs", (8, 8), 0.04, 10)
    b.op("hardswish", "hs", [r], [hs])
    sg = act("sg", (8, 8), 1.0 / 256, 0)
    b.op("sigmoid", "sg", [hs], [sg])
    ad = act("ad", (8, 8), 0.06, 5)
    b.op("add", "add", [r, hs], [ad], attrs={"activation": "relu"})
    ct = act("ct", (16, 8), 0.06, 5)
    b.op("cat", "cat", [ad, sg], [ct], attrs={"dim": 1})
    aa = act("aa", (16, 4), 0.06, 5)
    b.op("adaptive_avg_pool1d", "aap", [ct], [aa], attrs={"output_size": 4})
    cc = act("cc", (16, 4), 0.06, 5)
    b.op("custom", "clamp", [aa], [cc], attrs={"op": "fuzz.qclamp",
                                              "attrs": {"min": -1.0, "max": 2.0}})
    fl = act("fl", (64,), 0.06, 5)
    b.op("flatten", "flat", [cc], [fl], attrs={"start_dim": 1})
    rs = act("rs", (8, 8), 0.06, 5)
    b.op("reshape", "rs", [fl], [rs])
    idt = act("id", (8, 8), 0.06, 5)
    b.op("identity", "id", [rs], [idt])
    li = act("li", (8, 6))
    layer("linear", _layer(rng, "linear", 8, 6), idt, li, "fc")
    lf = b.activation("lf", "float32", (N, 8, 6), batched=True)
    b.op("dequantize", "dq", [li], [lf])
    fr = b.activation("fr", "float32", (N, 8, 6), batched=True)
    b.op("relu", "frelu", [lf], [fr])
    y = b.activation("y", "float32", (N, 8, 3), batched=True)
    layer("linear_dynamic", _layer(rng, "linear_dynamic", 6, 3), fr, y, "dyn")
    b.inputs, b.outputs = [x], [y]
    b.meta = {"exporter": "fuzz"}
    return b


def qint8_builder():
    """qint8 activations, per-tensor weights, a clamp activation, two outputs, a state."""
    from qrt_export import BlobBuilder
    rng = np.random.default_rng(3)
    b = BlobBuilder()
    x = b.activation("x", "float32", (3, 2, 12), batched=True)
    q = b.activation("xq", "qint8", (3, 2, 12), batched=True, scale=0.02, zero_point=-3)
    b.op("quantize", "q", [x], [q])
    mp = b.activation("mp", "qint8", (3, 2, 6), batched=True, scale=0.02, zero_point=-3)
    b.op("max_pool1d", "mp", [q], [mp], attrs={"kernel_size": 3, "stride": 2, "dilation": 2,
                                                "ceil_mode": True, "padding": 1})
    hs = b.activation("hs", "qint8", (3, 2, 6), batched=True, scale=0.03, zero_point=0)
    b.op("hardswish", "hs", [mp], [hs])
    qq = b.activation("qq", "quint8", (3, 2, 12), batched=True, scale=0.02, zero_point=120)
    b.op("quantize", "q2", [x], [qq])
    m = _layer(rng, "conv1d", 2, 4, 2, stride=2, padding=(1, 0))
    m._qscheme = "per_tensor_affine"
    attrs, arrs = qrt.ops.get("conv1d").encode(m)
    arrs["weight_scale"] = np.full(4, 0.004)
    attrs.update(activation="clamp", clamp_min=-0.5, clamp_max=1.5)
    params = [b.constant(f"cv.{k}", a) for k, a in arrs.items()]
    cv = b.activation("cv", "quint8", (3, 4, 6), batched=True, scale=0.05, zero_point=3)
    b.op("conv1d", "cv", [qq], [cv], params, attrs)
    y1 = b.activation("y1", "float32", (3, 2, 6), batched=True)
    b.op("dequantize", "dq1", [hs], [y1])
    y2 = b.activation("y2", "float32", (3, 4, 6), batched=True)
    b.op("dequantize", "dq2", [cv], [y2])
    s = b.state("s", "float32", (3, 4, 6), batched=True)
    y3 = b.activation("y3", "float32", (3, 4, 6), batched=True)
    b.op("custom", "acc", [y2, s], [s], attrs={"op": "fuzz.acc", "attrs": {}})
    b.op("identity", "out3", [s], [y3])
    b.inputs, b.outputs = [x], [y1, y2, y3]
    return b


def base_blobs():
    """name -> bytes of every valid base blob (each loads and runs)."""
    from test_blob_format import make_builder
    from test_loader import conv_blob
    out = {}
    with open(DEMO, "rb") as f:
        out["demo"] = f.read()
    with open(LEGACY, "rb") as f:
        out["legacy_1_0"] = f.read()
    out["small"] = bytes(make_builder().to_bytes())
    with tempfile.TemporaryDirectory() as d:
        conv_blob(os.path.join(d, "c.bin"))
        with open(os.path.join(d, "c.bin"), "rb") as f:
            out["conv"] = f.read()
    out["all_ops"] = all_ops_builder().to_bytes()
    out["qint8_state"] = qint8_builder().to_bytes()
    return out


# ---- the blob's layout (read from a valid base) ----------------------------------------------
def fix_crc(buf: bytearray) -> bytearray:
    from test_blob_format import fix_crc as f
    return f(buf)


class Layout:
    """Where every field of a valid blob is: (offset, numpy dtype, label) per scalar."""

    def __init__(self, blob: bytes):
        self.blob = blob
        h = np.frombuffer(blob[:B.HEADER_SIZE], B.HEADER_DTYPE)[0]
        self.h = h
        self.alignment = int(h["alignment"])
        t0, n = int(h["section_table_offset"]), int(h["section_count"])
        self.table = (t0, n)
        st = np.frombuffer(blob[t0:t0 + n * B.SECTION_SIZE], B.SECTION_DTYPE)
        self.secs = []   # [kind code, offset, size, count, entry]
        for i, s in enumerate(st):
            self.secs.append([int(s["kind"]), int(s["offset"]), int(s["size"]), int(s["count"]),
                              i])
        self.by_name = {}
        for s in self.secs:
            name = B.SECTION_NAMES.get(s[0])
            if name:
                self.by_name[name] = s
        self.fields = {}   # group -> list of (offset, dtype, label, fieldname)
        self._scalars("header", 0, B.HEADER_DTYPE, 1)
        self._scalars("section", t0, B.SECTION_DTYPE, n)
        for grp, name, dt in (("tensor", "TENSORS", B.TENSOR_DTYPE), ("op", "OPS", B.OP_DTYPE),
                              ("io", "IO", B.IO_DTYPE)):
            s = self.by_name[name]
            self._scalars(grp, s[1], dt, s[2] // dt.itemsize)
        s = self.by_name["OPERANDS"]
        self.fields["operand"] = [(s[1] + 4 * j, np.dtype("<u4"), f"operand[{j}]", "operand")
                                  for j in range(min(s[3], s[2] // 4))]
        ts = self.by_name["TENSORS"]
        self.tensors = np.frombuffer(blob[ts[1]:ts[1] + ts[2]], B.TENSOR_DTYPE)
        os_ = self.by_name["OPS"]
        self.ops = np.frombuffer(blob[os_[1]:os_[1] + os_[2]], B.OP_DTYPE)
        ss = self.by_name["STRINGS"]
        self.strings = blob[ss[1]:ss[1] + ss[2]]
        self.data_off = self.by_name["DATA"][1]

    def _scalars(self, grp, base, dtype, count):
        lst = self.fields.setdefault(grp, [])
        for e in range(count):
            for name, (dt, off) in dtype.fields.items():
                sub = dt.base if dt.subdtype else dt
                if sub.kind == "S" or sub.kind == "V":
                    n = dt.itemsize
                    sub = np.dtype("u1")
                else:
                    n = dt.itemsize // sub.itemsize
                for j in range(n):
                    lab = f"{grp}[{e}].{name}" + (f"[{j}]" if n > 1 else "")
                    lst.append((base + e * dtype.itemsize + off + j * sub.itemsize,
                                sub.newbyteorder("<"), lab, name))

    def attrs_of(self, i):
        e = self.ops[i]
        o, n = int(e["attrs_offset"]), int(e["attrs_size"])
        return self.strings[o:o + n].decode("utf-8", "replace")

    def constants(self):
        """(index, absolute data offset, numpy dtype, count) of every constant payload."""
        out = []
        for i, e in enumerate(self.tensors):
            if int(e["kind"]) == B.TENSOR_KIND["constant"] and int(e["nbytes"]):
                dt = B.DTYPES[int(e["dtype"])][1]
                out.append((i, self.data_off + int(e["data_offset"]), np.dtype(dt),
                            int(e["nbytes"]) // np.dtype(dt).itemsize))
        return out


def relayout(lay: Layout, strings: bytes, ops: np.ndarray) -> bytearray:
    """The blob with a new STRINGS body and OPS table, sections re-placed as the writer does
    (8-byte aligned in their original order, DATA last at the alignment), header sizes fixed,
    CRCs recomputed."""
    blob = lay.blob
    t0, n = lay.table
    order = sorted(lay.secs, key=lambda s: s[1])
    first = order[0][1]
    out = bytearray(blob[:first])
    st = np.frombuffer(bytes(blob[t0:t0 + n * B.SECTION_SIZE]), B.SECTION_DTYPE).copy()
    pos = first
    for s in order:
        code, off, size, count, entry = s
        name = B.SECTION_NAMES.get(code)
        body = blob[off:off + size]
        if name == "STRINGS":
            body = strings
        elif name == "OPS":
            body = ops.tobytes()
        if name == "DATA":
            a = lay.alignment
            pad = -pos % a
        else:
            pad = -pos % 8
        out.extend(b"\0" * pad)
        pos += pad
        st[entry]["offset"], st[entry]["size"] = pos, len(body)
        out.extend(body)
        pos += len(body)
    out[t0:t0 + st.nbytes] = st.tobytes()
    h = np.frombuffer(bytes(out[:B.HEADER_SIZE]), B.HEADER_DTYPE).copy()
    h["file_size"] = len(out)
    out[:B.HEADER_SIZE] = h.tobytes()
    return fix_crc(out)


# ---- hostile values --------------------------------------------------------------------------
INT_EXTREMES = [0, 1, 2, 3, 4, 7, 8, 15, 16, 63, 64, 127, 128, 255, 256, 1023, 4096, 2**15,
                2**16 - 1, 2**20, 2**24, 2**30, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**40,
                2**62, 2**63 - 1, 2**63, 2**64 - 1, -1, -2, -128, -129, -(2**31), -(2**63)]
FLOATS = [3.3e38, 3.4e38, 3.5e38, 1e38, 1e-45, 1e-38, 1.4e-45, 5e-324, 1e-300, 1e300,
          float("nan"), float("inf"), float("-inf"), -0.0, 0.0, -1.0, 1.0, 0.5, 1e-8, 2.0**-126,
          0.1, 255.0, -1e-3]
SMALL_CODES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
               22, 23, 31, 32, 63, 64, 100, 127, 128, 255, 256, 65535, 2**31, 2**32 - 1]


class Raw:
    """A JSON token written as is (``1e999``, ``NaN``...)."""

    def __init__(self, text):
        self.text = text


ATTR_VALUES = [10**30, -10**30, 2**31, 2**31 - 1, 2**32, 2**63, 2**64, -1, -2, 0, 1, 2, 3,
               4, 5, 7, 8, 16, 64, 2**20, 2**20 + 1, 2**24, 2**30, True, False, None, "yes", "",
               "no", "relu", "relu6", "clamp", "none", "per_tensor_affine",
               "per_channel_affine", "x" * 300, [], [1], [0, 0], [1, 1], [2, 2], [3, 0],
               [1, 2, 3], [2**30, 2**30], [2**30 - 8, 2**30 - 8], [-1, 1], [True, 1],
               [1.5, 1], [None], ["a"], {}, {"a": 1}, {"kind": "Conv1d"}, 0.5, 1.0, -0.0,
               1e-300, 1e300, 2.5, -7.5, [[[[1]]]], {"a": {"b": {"c": [1]}}},
               Raw("1e999"), Raw("-1e999"), Raw("1E400"), Raw("NaN"), Raw("Infinity"),
               Raw("-Infinity"), Raw("1" * 5000), Raw("0.0000001e-400"),
               Raw("[" * 3000 + "]" * 3000)]
ATTR_KEYS = ["stride", "padding", "kernel_size", "dilation", "groups", "ceil_mode",
             "activation", "clamp_min", "clamp_max", "weight_qscheme", "start_dim", "end_dim",
             "dim", "output_size", "count_include_pad", "op", "attrs", "kwargs", "config",
             "params", "scale", "zero_point", "has_bias", "kind", "in_channels",
             "out_channels", "in_features", "out_features", "bias", "__proto__", "", "x" * 200]
WHOLE_ATTRS = ["", "[]", "null", "1", "\"s\"", "{", "{\"a\":", "[" * 5000, "{\"a\":" * 2000,
               "{\"k\":NaN}", "{\"k\":Infinity}", "{\"kernel_size\":1e999}",
               "{\"a\":1,\"a\":2}", "{}", "{} {}", "\ufeff{}", " {} ", "{\"\\ud800\":1}",
               b"\xff\xfe{}", b"{\"a\":\"\xc3\x28\"}"]


def _dump(v, raws):
    def enc(o):
        if isinstance(o, Raw):
            raws.append(o.text)
            return f"@@RAW{len(raws) - 1}@@"
        if isinstance(o, dict):
            return {k: enc(x) for k, x in o.items()}
        if isinstance(o, list):
            return [enc(x) for x in o]
        return o
    text = json.dumps(enc(v), separators=(",", ":"))
    for k, r in enumerate(raws):
        text = text.replace(f"\"@@RAW{k}@@\"", r)
    return text


def _paths(v, prefix=()):
    """Every key/index path inside a JSON value (the value itself excluded)."""
    out = []
    if isinstance(v, dict):
        for k, x in v.items():
            out.append(prefix + (k,))
            out += _paths(x, prefix + (k,))
    elif isinstance(v, list):
        for j, x in enumerate(v):
            out.append(prefix + (j,))
            out += _paths(x, prefix + (j,))
    return out


def _parent(v, path):
    for k in path[:-1]:
        v = v[k]
    return v


def _pick_value(rng, cur):
    if rng.random() < 0.25 and type(cur) is int and not isinstance(cur, bool):
        return rng.choice([cur + 1, cur - 1, cur * 2, -cur, cur * 1000, 0])
    if rng.random() < 0.1 and isinstance(cur, list) and cur:
        return cur + [cur[-1]] if rng.random() < 0.5 else cur[:-1]
    return copy.deepcopy(rng.choice(ATTR_VALUES))


def mutate_attrs(rng, lay: Layout, log):
    ops = lay.ops.copy()
    if not len(ops):
        return None
    i = rng.randrange(len(ops))
    text = lay.attrs_of(i)
    how = rng.random()
    if how < 0.12:
        new = rng.choice(WHOLE_ATTRS)
        log.append(f"op {i} attrs := {new[:60]!r}")
    else:
        try:
            v = json.loads(text or "{}")
        except ValueError:
            v = {}
        if not isinstance(v, dict):
            v = {}
        paths = _paths(v)
        r = rng.random()
        if paths and r < 0.6:
            p = rng.choice(paths)
            par = _parent(v, p)
            par[p[-1]] = _pick_value(rng, par[p[-1]])
            log.append(f"op {i} attrs{list(p)} := {_dump(par[p[-1]], [])[:60]}")
        elif paths and r < 0.75:
            p = rng.choice(paths)
            par = _parent(v, p)
            del par[p[-1]]
            log.append(f"op {i} attrs del {list(p)}")
        else:
            dicts = [()] + [p for p in paths if isinstance(_get(v, p), dict)]
            p = rng.choice(dicts)
            tgt = _get(v, p)
            op_def = qrt.ops.BY_CODE.get(int(ops[i]["kind"]), (None,))[0]
            keys = ATTR_KEYS + (list(op_def.attrs) * 3 if op_def else [])
            k = rng.choice(keys)
            val = _pick_value(rng, tgt.get(k)) if rng.random() < 0.6 else \
                rng.choice([0, 1, 2, 3, [1, 1], [2, 2], True, "relu", 1.5, None])
            tgt[k] = val
            log.append(f"op {i} attrs{list(p) + [k]} += {_dump(val, [])[:60]}")
        new = _dump(v, [])
    raw = new if isinstance(new, bytes) else new.encode("utf-8", "surrogatepass")
    strings = lay.strings + raw
    ops[i]["attrs_offset"], ops[i]["attrs_size"] = len(lay.strings), len(raw)
    return relayout(lay, strings, ops)


def _get(v, path):
    for k in path:
        v = v[k]
    return v


def _field_value(rng, lay, grp, off, dt, fname):
    cur = np.frombuffer(lay.blob[off:off + dt.itemsize], dt)[0].item()
    r = rng.random()
    if dt.kind == "f":
        if r < 0.15:
            return cur * rng.choice([0.5, 1.5, 2.0, 1.0000001, -1.0])
        if r < 0.3:   # another entry's value (e.g. a pool output scale != its input's)
            same = [f for f in lay.fields[grp] if f[3] == fname]
            o2 = rng.choice(same)[0]
            return np.frombuffer(lay.blob[o2:o2 + dt.itemsize], dt)[0].item()
        return rng.choice(FLOATS)
    if r < 0.25:
        return cur + rng.choice([1, -1, 2, -2, 8, -8, 64, -64, dt.itemsize])
    if r < 0.4:
        same = [f for f in lay.fields[grp] if f[3] == fname]
        o2 = rng.choice(same)[0]
        return np.frombuffer(lay.blob[o2:o2 + dt.itemsize], dt)[0].item()
    if fname in ("kind", "dtype", "qscheme", "ndim", "direction", "flags", "section_count",
                 "version_major", "version_minor") and r < 0.8:
        return rng.choice(SMALL_CODES)
    if fname in ("tensor", "operand", "scales_index", "zero_points_index") and r < 0.8:
        n = len(lay.tensors)
        return rng.choice([0, 1, n - 1, n, n + 1, 2**32 - 1, 2**32 - 2, rng.randrange(n + 1)])
    return rng.choice(INT_EXTREMES)


def _put(buf, off, dt, v):
    if dt.kind == "f":
        buf[off:off + dt.itemsize] = np.array(v, dt).tobytes()
    else:
        bits = 8 * dt.itemsize
        buf[off:off + dt.itemsize] = (int(v) % (1 << bits)).to_bytes(dt.itemsize, "little")


GROUP_WEIGHTS = [("header", 2), ("section", 2), ("tensor", 6), ("op", 4), ("operand", 2),
                 ("io", 1)]


def mutate_field(rng, lay: Layout, buf: bytearray, log):
    groups = [g for g, w in GROUP_WEIGHTS for _ in range(w) if lay.fields.get(g)]
    grp = rng.choice(groups)
    lst = lay.fields[grp]
    if grp == "tensor" and rng.random() < 0.6:   # the fields rules look at most
        pick = [f for f in lst if f[3] in ("scale", "zero_point", "dims", "dtype", "kind",
                                          "qscheme", "flags", "ndim", "nbytes", "data_offset",
                                          "axis", "scales_index", "zero_points_index")]
        lst = pick or lst
    off, dt, label, fname = rng.choice(lst)
    v = _field_value(rng, lay, grp, off, dt, fname)
    _put(buf, off, dt, v)
    log.append(f"{label} := {v!r}")


def _payload_values(dt):
    if dt.kind == "f":
        return [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e300, 1e-300, 5e-324,
                3.5e38, 1e-45, -1.0, 1e30, 65504.0] if dt.itemsize == 8 else \
            [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 3.4e38, 1e-45, -1e30, 1e30]
    info = np.iinfo(dt)
    return [v for v in (info.min, info.max, 0, 1, -1, 127, 128, -128, -129, 255, 256,
                        2**31 - 1, -(2**31)) if info.min <= v <= info.max]


def mutate_payload(rng, lay: Layout, buf: bytearray, log):
    consts = lay.constants()
    if not consts:
        return False
    i, off, dt, n = rng.choice(consts)
    vals = _payload_values(dt)
    arr = np.frombuffer(bytes(buf[off:off + n * dt.itemsize]), dt).copy()
    how = rng.random()
    if how < 0.5:
        j = rng.randrange(n)
        arr[j] = rng.choice(vals)
        log.append(f"tensor {i} payload[{j}] := {arr[j]!r}")
    elif how < 0.8:
        arr[:] = rng.choice(vals)
        log.append(f"tensor {i} payload[:] := {arr[0]!r}")
    else:
        for j in rng.sample(range(n), min(n, rng.randint(1, 8))):
            arr[j] = rng.choice(vals)
        log.append(f"tensor {i} payload[several] hostile")
    buf[off:off + arr.nbytes] = arr.tobytes()
    return True


def make_case(bases, layouts, seed, case):
    """(base name, mutant bytes, edit log) of case ``case`` of run ``seed`` (deterministic)."""
    rng = random.Random(f"{seed}:{case}")
    name = rng.choice(sorted(bases))
    lay = layouts[name]
    log = []
    n_edits = rng.choice([1, 1, 1, 2, 2, 3])
    kinds = sorted(rng.choices(["attrs", "field", "payload"], [35, 40, 25], k=n_edits),
                   key=lambda k: k != "attrs")[:n_edits]
    buf = bytearray(bases[name])
    if kinds[0] == "attrs":   # one attribute edit, first: the file is laid out again
        buf = mutate_attrs(rng, lay, log) or buf
        lay = Layout(bytes(buf))   # same tables, new string pool: offsets of the new file
        kinds = [k for k in kinds[1:] if k != "attrs"]
    for k in kinds:           # the offsets stay those of the (valid) file before the edits
        if k == "field":
            mutate_field(rng, lay, buf, log)
        else:
            mutate_payload(rng, lay, buf, log)
    return name, bytes(fix_crc(buf)), log


# ---- running one case --------------------------------------------------------------------------
def _valid_input(m, rng):
    xs = []
    for i in m._blob.inputs:
        t = m._blob.tensors[i]
        shape = tuple(t.shape)
        if t.qscheme == "per_tensor_affine":
            dt = getattr(qrt, t.dtype)
            ints = rng.integers(dt.qmin, dt.qmax, shape, endpoint=True).astype(t.np_dtype)
            xs.append(qrt.from_int_repr(ints, t.scale, t.zero_point, dt))
        elif t.np_dtype.kind == "f":
            xs.append((rng.standard_normal(shape) * 3).astype(t.np_dtype))
        else:
            xs.append(rng.integers(0, 5, shape).astype(t.np_dtype))
    return xs


def _digest(y):
    h = hashlib.sha1()
    for v in (y if isinstance(y, tuple) else (y,)):
        if isinstance(v, qrt.QTensor):
            h.update(np.ascontiguousarray(v.int_repr()).tobytes())
            h.update(repr((v.shape, v.dtype.name, v.q_scale(), v.q_zero_point())).encode())
        else:
            a = np.ascontiguousarray(v)
            if a.dtype.kind == "f":
                a = np.where(np.isnan(a), np.nan, a).astype(a.dtype)
            h.update(a.tobytes())
            h.update(repr((a.shape, a.dtype.str)).encode())
    return h.hexdigest()


def _equal(a, b):
    return _digest(a) == _digest(b)


_R22 = re.compile(r"computes shape (\([0-9, ]*\)) from")


def repair_shapes(data, err):
    """The mutant with the output shape that R22 computed stored (so an attribute edit that
    changes the output length reaches the kernels), or None."""
    m = _R22.search(str(err))
    if err.rule != "R22" or m is None or err.op is None:
        return None
    shape = ast.literal_eval(m.group(1))
    try:
        lay = Layout(data)
        e = lay.ops[err.op]
        o = lay.by_name["OPERANDS"][1] + 4 * int(e["first_output"])
        t = int(np.frombuffer(data[o:o + 4], "<u4")[0])
        at = lay.by_name["TENSORS"][1] + t * B.TENSOR_SIZE
    except Exception:  # noqa: BLE001 - an edit broke the tables: no repair
        return None
    if len(shape) > B.MAX_NDIM or at + B.TENSOR_SIZE > len(data):
        return None
    ent = np.frombuffer(data[at:at + B.TENSOR_SIZE], B.TENSOR_DTYPE).copy()
    ent["ndim"] = len(shape)
    dims = np.zeros(B.MAX_NDIM, np.int64)
    dims[:len(shape)] = shape
    ent["dims"] = dims
    buf = bytearray(data)
    buf[at:at + B.TENSOR_SIZE] = ent.tobytes()
    return bytes(fix_crc(buf))


def run_case(path, data, repair=0):
    """Outcome of one mutant: ("rejected", rule) | ("loaded", how, digest|None) |
    ("bad", description). ``repair``: up to this many R22 shape repairs first."""
    for _ in range(repair):
        with open(path, "wb") as f:
            f.write(data)
        try:
            qrt.load(path)
            break
        except FormatError as e:
            new = repair_shapes(data, e)
            if new is None:
                break
            data = new
        except Exception:  # noqa: BLE001 - reported below
            break
    with open(path, "wb") as f:
        f.write(data)
    try:
        m = qrt.load(path)
    except FormatError as e:
        return ("rejected", e.rule)
    except MemoryError:
        return ("rejected", "MemoryError")
    except Exception as e:  # noqa: BLE001 - the point of the test
        return ("bad", f"load raised {type(e).__name__}: {e}"[:400])
    xs = _valid_input(m, np.random.default_rng(0))
    try:
        y1 = m(*xs)
    except (ValueError, TypeError):
        return ("loaded", "refused", None)
    except Exception as e:  # noqa: BLE001
        return ("bad", f"call raised {type(e).__name__}: {e}"[:400])
    try:
        m.reset_state()
        y2 = m(*xs)
    except Exception as e:  # noqa: BLE001
        return ("bad", f"second call raised {type(e).__name__}: {e}"[:400])
    if not _equal(y1, y2):
        return ("bad", "two calls on the same input differ")
    return ("loaded", "ran", _digest(y1))


def worker(seed, cases, progress_path):
    """Run ``cases`` (an iterable of ints) and print one JSON line per case."""
    import faulthandler
    faulthandler.enable()
    selftest = {}   # QRT_FUZZ_SELFTEST="crash:3,hang:5": make those cases fail on purpose
    for item in filter(None, os.environ.get("QRT_FUZZ_SELFTEST", "").split(",")):
        what, _, n = item.partition(":")
        selftest[int(n)] = what
    _register_custom_ops()
    bases = base_blobs()
    layouts = {k: Layout(v) for k, v in bases.items()}
    prog = open(progress_path, "a", buffering=1) if progress_path else None
    tmp = tempfile.mkdtemp(prefix="qrt-fuzz-")
    path = os.path.join(tmp, "m.bin")
    try:
        for c in cases:
            if prog:
                prog.write(f"{c}\n")
            faulthandler.dump_traceback_later(CASE_TIMEOUT, exit=True)
            name, data, log = make_case(bases, layouts, seed, c)
            res = run_case(path, data, repair=3 if c % 2 else 0)
            if selftest.get(c) == "crash":    # the harness's own test: a real crash
                os.abort()   # (SIGABRT: a planted SIGSEGV would be an ASan report)
            elif selftest.get(c) == "hang":
                time.sleep(3600)
            elif selftest.get(c) == "raise":
                res = ("bad", "selftest: wrong exception")
            elif selftest.get(c) == "differ" and os.environ.get("QRT_DISABLE_ISA") and \
                    res[0] == "loaded":
                res = ("loaded", res[1], "selftest: another result")
            faulthandler.cancel_dump_traceback_later()
            sys.stdout.write(json.dumps({"case": c, "base": name, "res": res,
                                         "log": log if res[0] == "bad" else None}) + "\n")
            sys.stdout.flush()
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
        os.rmdir(tmp)


# ---- the harness (parent side) -----------------------------------------------------------------
def _child(seed, cases, env_extra=None, timeout=None):
    """Run cases in child processes (restarting after a crash). Returns (results, crashes)."""
    cases = list(cases)
    results, crashes = {}, []
    env = dict(os.environ, **(env_extra or {}))
    env.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory() as d:
        while cases:
            batch, cases = cases[:BATCH], cases[BATCH:]
            prog = os.path.join(d, "progress")
            ids = os.path.join(d, "ids")
            with open(ids, "w") as f:
                f.write(" ".join(map(str, batch)))
            open(prog, "w").close()
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--seed", str(seed),
                                "--ids", ids, "--progress", prog], capture_output=True,
                               text=True, env=env, timeout=timeout)
            for line in p.stdout.splitlines():
                if line.startswith("{"):
                    r = json.loads(line)
                    results[r["case"]] = r
            if p.returncode != 0:
                started = [int(x) for x in open(prog).read().split()]
                last = started[-1] if started else None
                crashes.append({"case": last, "rc": p.returncode,
                                "stderr": p.stderr[-3000:]})
                done = set(results) | ({last} if last is not None else set())
                cases = [c for c in batch if c not in done] + cases
    return results, crashes


def run_fuzz(seed, n_cases, xcheck_max, env_extra=None):
    t0 = time.time()
    results, crashes = _child(seed, range(n_cases), env_extra)
    counts = Counter()
    rules = Counter()
    bad = []
    for c, r in sorted(results.items()):
        res = r["res"]
        if res[0] == "rejected":
            counts["FormatError"] += 1
            rules[res[1]] += 1
        elif res[0] == "loaded":
            counts["loaded"] += 1
            counts[f"loaded_{res[1]}"] += 1
        else:
            counts["wrong-exception"] += 1
            bad.append(r)
    loaded = [c for c, r in sorted(results.items()) if r["res"][0] == "loaded"
              and r["res"][1] == "ran"]
    # A deterministic sample of the loaded mutants, re-run with the reference kernels.
    rng = random.Random(seed)
    sample = sorted(rng.sample(loaded, min(len(loaded), xcheck_max)))
    ref, ref_crashes = _child(seed, sample, dict(env_extra or {}, QRT_DISABLE_ISA="all"))
    crashes += ref_crashes
    mismatch = []
    for c in sample:
        a, b = results[c]["res"], ref.get(c, {}).get("res")
        if b is None:
            continue
        if tuple(b) != tuple(a):
            mismatch.append((c, results[c]["base"], a, b))
    counts["xchecked"] = len(sample)
    counts["variant-mismatch"] = len(mismatch)
    counts["crash/hang"] = len(crashes)
    print(f"\nstructure-aware blob fuzz: seed {seed}, {len(results)} of {n_cases} cases in "
          f"{time.time() - t0:.1f} s: {counts['FormatError']} FormatError, "
          f"{counts['loaded']} loaded ({counts['loaded_ran']} ran, {counts['loaded_refused']} "
          f"refused the input), {counts['wrong-exception']} wrong-exception, "
          f"{len(crashes)} crash/hang, {len(sample)} cross-checked against the reference "
          f"kernels, {len(mismatch)} mismatches")
    print("  rules: " + ", ".join(f"{k} {v}" for k, v in sorted(rules.items(),
                                                               key=lambda kv: -kv[1])))
    for r in bad[:20]:
        print(f"  WRONG EXCEPTION case {r['case']} ({r['base']}): {r['res'][1]}\n"
              f"    edits: {r['log']}")
    for c in crashes[:10]:
        print(f"  CRASH/HANG case {c['case']} rc {c['rc']}:\n{c['stderr'][-1500:]}")
    for c, base, a, b in mismatch[:10]:
        print(f"  VARIANT MISMATCH case {c} ({base}): default {a} reference {b}")
    return counts, rules, bad, crashes, mismatch


def _check(n_cases, xcheck_max):
    counts, rules, bad, crashes, mismatch = run_fuzz(SEED, n_cases, xcheck_max)
    total = counts["FormatError"] + counts["loaded"] + counts["wrong-exception"]
    assert total + len(crashes) >= n_cases, "cases went missing"
    assert counts["FormatError"] > n_cases // 10 and counts["loaded_ran"] > n_cases // 20, \
        f"the fuzzer exercises too little: {dict(counts)}"
    assert not bad and not crashes and not mismatch, \
        (f"{len(bad)} wrong exceptions, {len(crashes)} crashes/hangs, {len(mismatch)} variant "
         f"mismatches (seed {SEED}; see the output above)")


def test_blob_fuzz_struct_bases_load_and_run():
    """Every base blob is valid, runs, and together they use every op kind."""
    _register_custom_ops()
    bases = base_blobs()
    seen = set()
    with tempfile.TemporaryDirectory() as d:
        for name, data in bases.items():
            res = run_case(os.path.join(d, "b.bin"), data)
            assert res[0] == "loaded" and res[1] == "ran", (name, res)
            m = qrt.load(os.path.join(d, "b.bin"))
            seen |= {n.kind for n in m.graph.nodes}
            Layout(data)
    # The bases cover the op kinds of the 1-D core (codes 1..20). The layout, table and float
    # ops (codes 21..101) are fuzzed through their schemas by test_op_registry's hostile-value
    # sweep, not yet by bases here (a known gap).
    core = {k for k in qrt.ops.kinds() if qrt.ops.get(k).code <= 20}
    assert core <= seen, core - seen


def _tensor_field(lay, i, name):
    return next(f for f in lay.fields["tensor"] if f[2] == f"tensor[{i}].{name}")


@pytest.mark.parametrize("base", ["all_ops", "qint8_state"])
def test_blob_fuzz_struct_pool_output_qparams(tmp_path, base):
    """The edit the old fuzzer found (pool output qparams differing from the input's raised
    ValueError): for every op whose output must keep its input's qparams, each such edit of the
    output tensor entry, CRCs fixed, is a FormatError R21."""
    _register_custom_ops()
    data = base_blobs()[base]
    lay = Layout(data)
    m = qrt.load(_write(tmp_path, data))
    edits = 0
    for n in m.graph.nodes:
        if n.kind not in ("max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "relu") or \
                n.inputs[0].qscheme == "none":
            continue
        y = n.output_ids[0]
        for fname, fn in (("scale", lambda v: v * 1.5), ("zero_point", lambda v: v + 1)):
            off, dt, _, _ = _tensor_field(lay, y, fname)
            buf = bytearray(data)
            cur = np.frombuffer(data[off:off + dt.itemsize], dt)[0].item()
            _put(buf, off, dt, fn(cur))
            res = run_case(str(tmp_path / "e.bin"), bytes(fix_crc(buf)))
            assert res == ("rejected", "R21"), (n.kind, fname, res)
            edits += 1
    assert edits >= 2


def _write(tmp_path, data):
    p = tmp_path / "b.bin"
    p.write_bytes(data)
    return p


def test_blob_fuzz_struct_harness_reports_failures(monkeypatch):
    """The harness can fail: a crash, a hang and a wrong exception planted in three cases are
    each reported with their case number, and the other cases still run."""
    monkeypatch.setattr(sys.modules[__name__], "BATCH", 10)
    differ = ",".join(f"differ:{c}" for c in range(40) if c not in (3, 12, 20))
    counts, _, bad, crashes, mismatch = run_fuzz(SEED, 40, 40, {
        "QRT_FUZZ_SELFTEST": "crash:3,hang:12,raise:20," + differ,
        "QRT_FUZZ_CASE_TIMEOUT": "3"})
    assert sorted(c["case"] for c in crashes) == [3, 12]
    assert counts["loaded_ran"] > 0 and len(mismatch) == counts["loaded_ran"]
    assert "Aborted" in crashes[0]["stderr"] and "Timeout" in crashes[1]["stderr"]
    assert [r["case"] for r in bad] == [20]
    assert counts["FormatError"] + counts["loaded"] + counts["wrong-exception"] == 38


def test_blob_fuzz_struct_ci():
    """The fixed per-CI-run budget (QRT_FUZZ_CASES, default 3,000)."""
    _check(CI_CASES, XCHECK_MAX)


@pytest.mark.slow
def test_blob_fuzz_struct_long():
    """The long run (QRT_FUZZ_SLOW_CASES, default 100,000; -m slow)."""
    _check(SLOW_CASES, 5000)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--ids")
    ap.add_argument("--progress")
    ap.add_argument("--case", type=int)
    ap.add_argument("--out")
    ap.add_argument("--run", type=int, help="run N cases in this process and report")
    a = ap.parse_args()
    if a.ids:
        worker(a.seed, [int(x) for x in open(a.ids).read().split()], a.progress)
    elif a.case is not None:
        _register_custom_ops()
        bases = base_blobs()
        layouts = {k: Layout(v) for k, v in bases.items()}
        name, data, log = make_case(bases, layouts, a.seed, a.case)
        print(name, log)
        if a.out:
            open(a.out, "wb").write(data)
        with tempfile.TemporaryDirectory() as d:
            print(run_case(os.path.join(d, "m.bin"), data, repair=3 if a.case % 2 else 0))
    elif a.run:
        run_fuzz(a.seed, a.run, XCHECK_MAX)

# SPDX-License-Identifier: Apache-2.0
"""Embedding lookups on int64/int32 index inputs (codes 102..105, docs/float-ops.md
"Embedding"): float32 tables (nn.Embedding, nn.EmbeddingBag) and torch's weight-only
quantized row-wise tables (torch.ao.nn.quantized.Embedding / EmbeddingBag: quint8 and, for
bags, quint4x2, per_channel_affine_float_qparams). Every output is float32.

Index operands are model inputs (rule R28, docs/blob-format.md). Every call checks them before
the table is read (numpy for ``embedding``; the C kernel's gate for the others, which writes
nothing when one fails, and then numpy says which input is wrong): an index outside
[0, num_embeddings), offsets that do not start at 0, decrease or pass the end are a ValueError
naming the input. Bags are computed by the reference kernel of
include/qrt/ref/embedding_ref.h in torch's order (sequential sums, its FMAs), so the results are
bit-identical with torch 2.13 on x86-64 (tests/test_embedding.py compares with ``==``).
"""

from __future__ import annotations

import numpy as np

from qrt import _ops
from qrt.ops._core import (INT_MAX, Bool, Choice, Int, OpDef, Param, ShapeError, define,
                           numel)

INDEX_DTYPES = ("int64", "int32")
_MODES = {"sum": 0, "mean": 1, "max": 2}
_F32 = np.float32


def check_index_operand(node, t, what):
    if t.dtype not in INDEX_DTYPES or t.qscheme != "none":
        raise node.fail(f"{what} {t.name!r} must be an int64 or int32 tensor, is {t.dtype}")


def check_indices(node, idx, num_rows, k=0):
    """ValueError naming the input when an index of ``idx`` is outside [0, num_rows)."""
    if idx.size == 0:
        return
    lo, hi = int(idx.min()), int(idx.max())
    if lo < 0 or hi >= num_rows:
        bad = lo if lo < 0 else hi
        pos = int(np.flatnonzero(idx.reshape(-1) == bad)[0])
        raise ValueError(f"input {node.inputs[k].name!r}: index {bad} (at flat position {pos}) "
                         f"is out of range for an embedding of {num_rows} rows (indices must "
                         f"lie in [0, {num_rows}))")


def check_offsets(node, off, n_idx, include_last):
    """ValueError naming the offsets input unless they start at 0, never decrease and stay
    within the indices (with include_last_offset: the last one equals len(indices))."""
    name = node.inputs[1].name
    if off.size == 0:
        return
    if int(off[0]) != 0:
        raise ValueError(f"input {name!r}: offsets[0] must be 0 (the first bag starts at the "
                         f"first index), got {int(off[0])}")
    if off.size > 1:
        d = np.diff(off.astype(np.int64))
        if (d < 0).any():
            k = int(np.flatnonzero(d < 0)[0]) + 1
            raise ValueError(f"input {name!r}: offsets must be non-decreasing, offsets[{k}] = "
                             f"{int(off[k])} < offsets[{k - 1}] = {int(off[k - 1])}")
    last = int(off[-1])
    if last > n_idx:
        raise ValueError(f"input {name!r}: offsets[-1] = {last} is beyond the {n_idx} indices")
    if include_last and last != n_idx:
        raise ValueError(f"input {name!r}: with include_last_offset the last offset must equal "
                         f"the number of indices ({n_idx}), got {last} (torch ignores the "
                         "indices after it, and its mean mode still counts them)")


class _Lookup(OpDef):
    """Shared pieces: index operands (slots in ``index_inputs``), float32 output, table rows."""

    index_inputs = (0,)

    def rows(self, node) -> int:
        return int(node.params["weight"].shape[0])

    def check_table(self, node):
        """Subclasses: the table's shape (raise node.fail)."""

    def validate(self, node):
        check_index_operand(node, node.inputs[0], "indices")
        y = node.outputs[0]
        if y.dtype != "float32" or y.qscheme != "none":
            raise node.fail(f"returns a float32 tensor, {y.name} is {y.dtype}")
        self.check_table(node)
        if self.rows(node) < 1:
            raise node.fail("the table has no rows (num_embeddings must be >= 1)")


class _QTable:
    """Row-wise quantized table: codes uint8 [N, row_bytes], scales/zero_points float32 [N]
    (torch's per_channel_affine_float_qparams); prepare computes torch's per-row scale and
    bias = f32(-zero_point * scale) (fp16-rounded for 4-bit, as torch's packed rows hold)."""

    params = (Param("weight", "uint8"), Param("scales", "float32"),
              Param("zero_points", "float32"))

    def dim(self, node) -> int:
        return int(node.attrs["embedding_dim"])

    def check_table(self, node):
        w = node.params["weight"]
        bits, d = node.attrs["bits"], node.attrs["embedding_dim"]
        if bits not in (4, 8):
            raise node.fail(f"attribute 'bits' must be 8 or 4, got {bits}", "R25")
        rb = d if bits == 8 else (d + 1) // 2
        if len(w.shape) != 2 or int(w.shape[1]) != rb:
            raise node.fail(f"weight must be [num_embeddings, {rb}] bytes for {d} {bits}-bit "
                            f"codes per row, has shape {tuple(w.shape)}")
        for k in ("scales", "zero_points"):
            if tuple(node.params[k].shape) != (int(w.shape[0]),):
                raise node.fail(f"{k} must have shape ({int(w.shape[0])},), has "
                                f"{tuple(node.params[k].shape)}")

    def prepare(self, node):
        s = np.asarray(node.array("scales"), _F32)
        zp = np.asarray(node.array("zero_points"), _F32)
        with np.errstate(all="ignore"):
            bias = np.multiply(-zp, s, dtype=_F32)
            if node.attrs["bits"] == 4:  # torch packs fp16 scale and bias in each row
                s = s.astype(np.float16).astype(_F32)
                bias = bias.astype(np.float16).astype(_F32)
        return (np.ascontiguousarray(node.array("weight")), np.ascontiguousarray(s, _F32),
                np.ascontiguousarray(bias, _F32))


# ---- Embedding ---------------------------------------------------------------------------------
@define
class Embedding(_Lookup):
    name, code = "embedding", 102
    doc = "float32 table lookup (nn.Embedding, F.embedding; int64/int32 indices of any shape)"
    params = (Param("weight", "float32"),)

    def check_table(self, node):
        w = node.params["weight"]
        if len(w.shape) != 2 or int(w.shape[1]) < 1:
            raise node.fail(f"weight must be 2-d [num_embeddings, embedding_dim >= 1], has "
                            f"shape {tuple(w.shape)}")

    def infer(self, node, shapes):
        return [tuple(shapes[0]) + (int(node.params["weight"].shape[1]),)]

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        w = node.array("weight")
        n = self.rows(node)

        def run():
            check_indices(node, x, n)
            np.take(w, x, axis=0, out=y, mode="clip")   # checked: clip never applies
        return run, (), {}


@define
class QEmbedding(_QTable, _Lookup):
    name, code = "qembedding", 104
    doc = ("weight-only quantized table lookup (torch.ao.nn.quantized.Embedding: quint8 rows, "
           "per_channel_affine_float_qparams; float32 output)")
    attrs = {"bits": Int(4, 8, default=8), "embedding_dim": Int(1, INT_MAX)}

    def check_table(self, node):
        if node.attrs["bits"] != 8:
            raise node.fail("torch's quantized Embedding runs quint8 tables only (bits 8)",
                            "R25")
        _QTable.check_table(self, node)

    def infer(self, node, shapes):
        return [tuple(shapes[0]) + (self.dim(node),)]

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        codes, s, b = node.state
        n, d = numel(x.shape), self.dim(node)
        starts = np.arange(n + 1, dtype=np.int64)
        flat = x.reshape(n)
        idx = flat if flat.dtype == np.int64 else np.empty(n, np.int64)
        y2 = y.reshape(n, d)
        rows, bits = self.rows(node), node.attrs["bits"]

        def run():
            if idx is not flat:
                np.copyto(idx, flat)
            try:   # the kernel checks every index before it reads a row
                _ops.embedding_bag_rowwise(codes, bits, d, s, b, idx, starts, None, y2)
            except ValueError:
                check_indices(node, x, rows)
                raise
        return run, (), {}


# ---- EmbeddingBag ------------------------------------------------------------------------------
class _Bag(_Lookup):
    """Bags from (indices 1-d, offsets 1-d) or from a 2-d indices input (one bag per row);
    optional per-sample weights (float32, the indices' shape), SUM only."""

    inputs = (1, 3)
    index_inputs = (0, 1)
    _common = {"offsets": Bool(default=True), "include_last_offset": Bool(default=False),
               "per_sample_weights": Bool(default=False)}

    def validate(self, node):
        a = node.attrs
        want = 1 + a["offsets"] + a["per_sample_weights"]
        if len(node.inputs) != want:
            raise node.fail(f"takes {want} input(s) (indices{', offsets' * a['offsets']}"
                            f"{', per_sample_weights' * a['per_sample_weights']}), has "
                            f"{len(node.inputs)}")
        if a["include_last_offset"] and not a["offsets"]:
            raise node.fail("include_last_offset needs an offsets input", "R25")
        if a["offsets"]:
            check_index_operand(node, node.inputs[1], "offsets")
        if a["per_sample_weights"]:
            t = node.inputs[-1]
            if t.dtype != "float32" or t.qscheme != "none":
                raise node.fail(f"per_sample_weights {t.name!r} must be float32, is {t.dtype}")
        super().validate(node)

    def neutral_inputs(self, node, ins):
        if node.attrs["include_last_offset"] and ins[1].shape[0]:
            ins[1][-1] = ins[0].size   # zeros elsewhere: empty bags, the last one takes all

    def infer(self, node, shapes):
        a, iname = node.attrs, node.inputs[0].name
        s = tuple(shapes[0])
        if a["offsets"]:
            o = tuple(shapes[1])
            if len(s) != 1 or len(o) != 1:
                raise ShapeError(f"input {iname!r} (indices) and {node.inputs[1].name!r} "
                                 f"(offsets) must be 1-d, got shapes {s} and {o}")
            bags = o[0] - (1 if a["include_last_offset"] else 0)
            if bags < 0:
                raise ShapeError(f"input {node.inputs[1].name!r}: include_last_offset needs at "
                                 "least one offset")
        else:
            if len(s) != 2 or s[1] < 1:
                raise ShapeError(f"input {iname!r} (indices) must be 2-d [bags, >= 1 indices] "
                                 f"without offsets, got shape {s}")
            bags = s[0]
        if a["per_sample_weights"] and tuple(shapes[-1]) != s:
            raise ShapeError(f"input {node.inputs[-1].name!r} (per_sample_weights) must have "
                             f"the indices' shape {s}, got {tuple(shapes[-1])}")
        return [(bags, self.dim(node))]

    def bind(self, node, ins, outs):
        a = node.attrs
        x, y = ins[0], outs[0]
        n = numel(x.shape)
        flat = x.reshape(n)
        idx = flat if flat.dtype == np.int64 else np.empty(n, np.int64)
        w = ins[-1].reshape(n) if a["per_sample_weights"] else None
        rows, last = self.rows(node), a["include_last_offset"]
        kernel = self.kernel(node, w, y)
        if not a["offsets"]:
            bags, length = x.shape
            starts = np.arange(0, n + 1, length, dtype=np.int64)

            def run():
                if idx is not flat:
                    np.copyto(idx, flat)
                try:   # the kernel checks every operand before it reads a row
                    kernel(idx, starts)
                except ValueError:
                    check_indices(node, x, rows)
                    raise
            return run, (), {}
        off = ins[1]
        m = off.shape[0]
        starts = np.empty(m if last else m + 1, np.int64)
        head = starts[:m]
        if not last:
            starts[m] = n

        def run_offsets():
            if idx is not flat:
                np.copyto(idx, flat)
            np.copyto(head, off)
            try:   # the kernel checks indices and offsets before it reads a row
                kernel(idx, starts)
            except ValueError:   # say which input is wrong, and how
                check_indices(node, x, rows)
                check_offsets(node, off, n, last)
                raise
        return run_offsets, (), {}


@define
class EmbeddingBag(_Bag):
    name, code = "embedding_bag", 103
    doc = ("float32 bags of table rows (nn.EmbeddingBag, F.embedding_bag: sum/mean/max, "
           "offsets or 2-d indices, include_last_offset, per_sample_weights, padding_idx)")
    params = (Param("weight", "float32"),)
    attrs = dict(_Bag._common, mode=Choice("sum", "mean", "max", default="sum"),
                 padding_idx=Int(0, INT_MAX, default=None, nullable=True))

    def dim(self, node):
        return int(node.params["weight"].shape[1])

    def check_table(self, node):
        Embedding.check_table(self, node)
        p = node.attrs["padding_idx"]
        if p is not None and p >= self.rows(node):
            raise node.fail(f"padding_idx {p} is not a row of the {self.rows(node)}-row table",
                            "R25")
        if node.attrs["per_sample_weights"] and node.attrs["mode"] != "sum":
            raise node.fail("per_sample_weights need mode 'sum' (as torch)", "R25")

    def kernel(self, node, w, y):
        table = node.array("weight")
        mode = _MODES[node.attrs["mode"]]
        p = node.attrs["padding_idx"]
        pad = -1 if p is None else p
        fma = p is None   # torch 2.13 x86: fbgemm's FMA kernel unless padding_idx is set

        def k(idx, starts):
            _ops.embedding_bag_f32(table, idx, starts, w, y, mode, pad, fma)
        return k


@define
class QEmbeddingBag(_QTable, _Bag):
    name, code = "qembedding_bag", 105
    doc = ("weight-only quantized bags (torch.ao.nn.quantized.EmbeddingBag: quint8 / quint4x2 "
           "rows, per_channel_affine_float_qparams; a sum whatever the mode, as torch; float32 "
           "output)")
    attrs = dict(_Bag._common, bits=Int(4, 8, default=8), embedding_dim=Int(1, INT_MAX))

    def kernel(self, node, w, y):
        codes, s, b = node.state
        bits, d = node.attrs["bits"], self.dim(node)

        def k(idx, starts):
            _ops.embedding_bag_rowwise(codes, bits, d, s, b, idx, starts, w, y)
        return k


# ---- padding masks ------------------------------------------------------------------------------
@define
class PaddingMask(OpDef):
    name, code = "padding_mask", 106
    doc = ("an int64/int32 attention mask (1 = attend, 0 = padding; HF transformers' "
           "attention_mask) as the additive float32 mask attention adds to its scores: 0.0 "
           "where the input is nonzero, -inf where it is 0")
    index_inputs = (0,)

    def validate(self, node):
        check_index_operand(node, node.inputs[0], "attention mask")
        y = node.outputs[0]
        if y.dtype != "float32" or y.qscheme != "none":
            raise node.fail(f"returns a float32 tensor, {y.name} is {y.dtype}")

    def neutral_inputs(self, node, ins):
        ins[0][...] = 1    # the load-time dry run: every position attended (no -inf row)

    def infer(self, node, shapes):
        return [tuple(shapes[0])]

    def bind(self, node, ins, outs):
        x, y = ins[0], outs[0]
        ninf = np.float32(-np.inf)

        def run():
            np.copyto(y, np.float32(0.0))
            np.copyto(y, ninf, where=(x == 0))
        return run, (), {}


# SPDX-License-Identifier: Apache-2.0
"""The one lowering table keyed by ATen (qrt_export/aten_table.py, issue #45 goal 2): torch
2.13's core ATen opset listed against it, the counts docs/supported-ops.md states, and a
sample of the overloads it marks float-lowered exported through torch.export and run by qrt."""

from __future__ import annotations

import os
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402

import qrt  # noqa: E402
import qrt_export  # noqa: E402
from qrt_export import aten_table  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", category=UserWarning)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "supported-ops.md")
a = torch.ops.aten
torch213 = pytest.mark.skipif(not torch.__version__.startswith("2.13."),
                              reason="the core ATen opset listed is torch 2.13's")


@pytest.fixture(scope="module")
def rows():
    return aten_table.table()


@torch213
def test_core_opset_size():
    """193 overloads: the dispatcher's every aten op, whatever was loaded before (the 189 of
    issue #45 is what ``dir(torch.ops.aten)`` lists in a fresh process: it misses packets
    not loaded yet)."""
    ops = aten_table.core_overloads()
    assert len(ops) == 193
    assert len(set(map(str, ops))) == 193
    for extra in ("adaptive_avg_pool1d", "avg_pool1d", "resize_", "sym_is_contiguous"):
        assert getattr(a, extra).default in ops
    aten_table.table()
    assert aten_table.core_overloads() == ops   # loading more packets changes nothing
    assert all(torch.Tag.core in op.tags for op in ops)
    assert a.convolution.default in ops and a.linear.default not in ops


@torch213
def test_every_overload_has_a_row(rows):
    names = [aten_table.name(op) for op in aten_table.core_overloads()]
    assert [r["overload"] for r in rows] == names
    for r in rows:
        assert set(r) == {"overload", "float", "quantized", "how"}
        assert isinstance(r["float"], bool) and isinstance(r["quantized"], bool)
        assert isinstance(r["how"], str)
        assert r["how"], r     # every row says how, or why not


@torch213
def test_counts_match_docs(rows):
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## Core ATen opset (torch 2.13, `torch.Tag.core`)"):]
    c = aten_table.counts(rows)
    m = re.search(r"(\d+) core overloads: (\d+) lowered in float, (\d+) quantized, "
                  r"(\d+) neither\.", section)
    assert m, "no counts line in docs/supported-ops.md"
    assert tuple(map(int, m.groups())) == (c["total"], c["float"], c["quantized"],
                                           c["neither"])
    table_rows = [ln for ln in section.splitlines() if ln.startswith("| `")]
    assert len(table_rows) == c["total"]
    assert sum(ln.split(" | ")[1] == "yes" for ln in table_rows) == c["float"]
    assert sum(ln.split(" | ")[2] == "yes" for ln in table_rows) == c["quantized"]


@torch213
def test_table_follows_the_lowering_code(rows):
    """Rows the issue names: what the pt2e / capture code lowers, what it does not."""
    by = {r["overload"]: r for r in rows}
    for yes in ("relu.default", "add.Tensor", "mul.Tensor", "convolution.default",
                "addmm.default", "cat.default", "view.default", "permute.default",
                "mean.dim", "_softmax.default", "select.int", "slice.Tensor", "bmm.default",
                "mul.Scalar", "pow.Tensor_Scalar"):
        assert by[yes]["float"], by[yes]
    for q in ("convolution.default", "addmm.default", "add.Tensor", "mul.Tensor",
              "cat.default", "view.default", "mean.dim", "relu.default", "sigmoid.default"):
        assert by[q]["quantized"], by[q]
    for no in ("rand.default", "convolution_backward.default",
               "_local_scalar_dense.default"):
        assert not by[no]["float"], by[no]
    assert not any(by[x]["quantized"] for x in ("_softmax.default", "embedding.default"))


# ---- behaviour: modules calling the overload, exported through torch.export ---------------
class Call(nn.Module):
    """forward(x) = fn(self, x): one ATen overload called directly (torch.export records it
    as itself), its constants as parameters."""

    def __init__(self, fn, **params):
        super().__init__()
        for k, v in params.items():
            self.register_parameter(k, nn.Parameter(v, requires_grad=False))
        self.fn = fn

    def forward(self, x):
        return self.fn(self, x)


def _w(*shape):
    return torch.randn(*shape) * 0.3


CASES = {
    "relu.default": (lambda s, x: a.relu.default(x), {}, (2, 3, 8)),
    "bmm.default": (lambda s, x: a.bmm.default(x, a.transpose.int(x, 1, 2)), {}, (2, 3, 8)),
    "mul.Scalar": (lambda s, x: a.mul.Scalar(x, 0.5), {}, (2, 3, 8)),
    "add.Tensor": (lambda s, x: a.add.Tensor(x, s.b), {"b": _w(3, 8)}, (2, 3, 8)),
    "mul.Tensor": (lambda s, x: a.mul.Tensor(x, a.sigmoid.default(x)), {}, (2, 3, 8)),
    "sub.Tensor": (lambda s, x: a.sub.Tensor(x, s.b), {"b": _w(8)}, (2, 3, 8)),
    "div.Tensor": (lambda s, x: a.div.Tensor(x, s.b), {"b": torch.rand(8) + 1}, (2, 3, 8)),
    "convolution.default": (lambda s, x: a.convolution.default(
        x, s.w, s.b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
        {"w": _w(6, 3, 3, 3), "b": _w(6)}, (1, 3, 8, 8)),
    "addmm.default": (lambda s, x: a.addmm.default(s.b, x, a.t.default(s.w)),
                      {"w": _w(5, 8), "b": _w(5)}, (4, 8)),
    "mm.default": (lambda s, x: a.mm.default(x, a.t.default(s.w)), {"w": _w(5, 8)}, (4, 8)),
    "mean.dim": (lambda s, x: a.mean.dim(x, [-1], True), {}, (2, 3, 8)),
    "sum.dim_IntList": (lambda s, x: a.sum.dim_IntList(x, [1]), {}, (2, 3, 8)),
    "_softmax.default": (lambda s, x: a._softmax.default(x, -1, False), {}, (2, 3, 8)),
    "_log_softmax.default": (lambda s, x: a._log_softmax.default(x, 1, False), {},
                             (2, 3, 8)),
    "permute.default": (lambda s, x: a.permute.default(x, [0, 2, 1]), {}, (2, 3, 8)),
    "view.default": (lambda s, x: a.view.default(x, [2, 24]), {}, (2, 3, 8)),
    "cat.default": (lambda s, x: a.cat.default([x, a.relu.default(x)], 1), {}, (2, 3, 8)),
    "unsqueeze.default": (lambda s, x: a.unsqueeze.default(x, 1), {}, (2, 3, 8)),
    "slice.Tensor": (lambda s, x: a.slice.Tensor(x, 2, 1, 6), {}, (2, 3, 8)),
    "select.int": (lambda s, x: a.select.int(x, 1, 0), {}, (2, 3, 8)),
    "tanh.default": (lambda s, x: a.tanh.default(x), {}, (2, 3, 8)),
    "gelu.default": (lambda s, x: a.gelu.default(x), {}, (2, 3, 8)),
    "hardtanh.default": (lambda s, x: a.hardtanh.default(x, -0.5, 0.5), {}, (2, 3, 8)),
    "clamp.default": (lambda s, x: a.clamp.default(x, -0.3, 0.7), {}, (2, 3, 8)),
    "constant_pad_nd.default": (lambda s, x: a.constant_pad_nd.default(x, [1, 2], 0.0), {},
                                (2, 3, 8)),
    "avg_pool2d.default": (lambda s, x: a.avg_pool2d.default(x, [2, 2], [2, 2]), {},
                           (1, 3, 8, 8)),
}


@torch213
@pytest.mark.parametrize("overload", sorted(CASES))
def test_float_lowered_overloads_run(overload, tmp_path):
    """Each overload the table marks float-lowered: a module calling it, captured with
    torch.export (the overload is in the captured graph), exported in float and run by qrt,
    agrees with torch within 1e-5 relative."""
    base, ov = overload.split(".")
    assert aten_table.lowering(getattr(getattr(a, base), ov))["float"]
    torch.manual_seed(0)
    fn, params, shape = CASES[overload]
    m = Call(fn, **params).eval()
    x = torch.randn(*shape)
    ep = torch.export.export(m, (x,), strict=False)
    got = {aten_table.name(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert overload in got, got
    path = tmp_path / "m.bin"
    qrt_export.export(m, x, path, keep_float=True, capture="export", verbose=False)
    y = qrt.load(path)(x.numpy())
    y = y[0] if isinstance(y, (list, tuple)) else y
    with torch.no_grad():
        ref = m(x).numpy()
    assert y.shape == ref.shape
    assert np.abs(y - ref).max() <= 1e-5 * (np.abs(ref).max() + 1e-30), \
        (overload, np.abs(y - ref).max())

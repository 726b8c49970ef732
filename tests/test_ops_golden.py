# SPDX-License-Identifier: Apache-2.0
"""qrt.functional ops against torch results stored in tests/data (no torch needed).

The files come from tools/gen_golden_ops.py; see its docstring for the layout.
"""

import os

import numpy as np
import pytest

import qrt
import qrt.functional as F

DATA = os.path.join(os.path.dirname(__file__), "data")
DT = {"quint8": qrt.quint8, "qint8": qrt.qint8}


def load(name):
    with np.load(os.path.join(DATA, name + ".npz")) as z:
        n = int(z["meta_ncases"])
        cases = []
        for i in range(n):
            pre = f"c{i}_"
            cases.append({k[len(pre):]: z[k] for k in z.files if k.startswith(pre)})
    assert cases
    return cases


def qt(c, key="x", scale="scale", zp="zp"):
    return qrt.from_int_repr(np.ascontiguousarray(c[key]), float(c[scale]), int(c[zp]),
                             DT[str(c["dtype"])])


def check(got, c):
    np.testing.assert_array_equal(got.int_repr(), c["y"])


def test_relu_golden():
    for c in load("relu_mixed"):
        check(F.relu(qt(c)), c)


@pytest.mark.parametrize("name", ["add_qnnpack", "add_fallback"])
def test_add_golden(name):
    for c in load(name):
        a = qt(c, "a", "sa", "za")
        b = qt(c, "b", "sb", "zb")
        fn = F.add_relu if int(c["relu"]) else F.add
        check(fn(a, b, float(c["so"]), int(c["zo"])), c)


def test_max_pool1d_golden():
    for c in load("max_pool1d_mixed"):
        check(F.max_pool1d(qt(c), int(c["k"]), int(c["s"]), int(c["p"]), int(c["d"]),
                           bool(c["ceil"])), c)


def test_avg_pool1d_golden():
    for c in load("avg_pool1d_mixed"):
        check(F.avg_pool1d(qt(c), int(c["k"]), int(c["s"]), int(c["p"]), bool(c["ceil"]),
                           bool(c["cip"])), c)


def test_adaptive_avg_pool1d_golden():
    for c in load("adaptive_avg_pool1d_mixed"):
        check(F.adaptive_avg_pool1d(qt(c), int(c["o"])), c)


def test_hardswish_golden():
    for c in load("hardswish_exhaustive"):
        check(F.hardswish(qt(c), float(c["so"]), int(c["zo"])), c)


def test_sigmoid_golden():
    for c in load("sigmoid_exhaustive"):
        got = F.sigmoid(qt(c))
        assert (got.q_scale(), got.q_zero_point()) == (1.0 / 256.0, 0)
        check(got, c)


def test_cat_golden():
    for c in load("cat_mixed"):
        xs = [qt(c, f"x{j}", f"s{j}", f"z{j}") for j in range(int(c["n"]))]
        check(F.cat(xs, int(c["dim"]), float(c["so"]), int(c["zo"])), c)

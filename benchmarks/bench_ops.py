# SPDX-License-Identifier: Apache-2.0
"""Time qrt.functional's ops against torch 2.13 (qnnpack engine, one thread).

Usage: python benchmarks/bench_ops.py   (needs torch).  Prints median microseconds per call,
with qrt writing into a preallocated ``out`` where the op takes one.
"""

import timeit
import warnings

import numpy as np
import torch

import qrt
import qrt.functional as F

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
torch.backends.quantized.engine = "qnnpack"
tF = torch.nn.functional


def tq(x):
    ints = torch.from_numpy(np.ascontiguousarray(x.int_repr()).copy())
    return torch._make_per_tensor_quantized_tensor(ints, x.q_scale(), x.q_zero_point())


def med_us(fn, number=50, repeat=7):
    return 1e6 * min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main():
    rng = np.random.default_rng(0)
    print("| op | shape | qrt us | torch us | torch/qrt |")
    print("|---|---|---|---|---|")
    for shape in [(1, 16, 4000), (1, 64, 1000), (1, 128, 250)]:
        a = qrt.from_int_repr(rng.integers(0, 256, shape).astype(np.uint8), 0.05, 120)
        b = qrt.from_int_repr(rng.integers(0, 256, shape).astype(np.uint8), 0.04, 130)
        ta, tb = tq(a), tq(b)
        o_same = F.relu(a)
        o_add = F.add(a, b, 0.07, 100)
        o_mp = F.max_pool1d(a, 2)
        o_ap = F.avg_pool1d(a, 2)
        o_hs = F.hardswish(a, 0.03, 50)
        cases = [
            ("relu", lambda: F.relu(a, out=o_same), lambda: torch.relu(ta)),
            ("add", lambda: F.add(a, b, 0.07, 100, out=o_add),
             lambda: torch.ops.quantized.add(ta, tb, 0.07, 100)),
            ("max_pool1d k2", lambda: F.max_pool1d(a, 2, out=o_mp),
             lambda: tF.max_pool1d(ta, 2)),
            ("avg_pool1d k2", lambda: F.avg_pool1d(a, 2, out=o_ap),
             lambda: tF.avg_pool1d(ta, 2)),
            ("adaptive_avg_pool1d 1", lambda: F.adaptive_avg_pool1d(a, 1),
             lambda: tF.adaptive_avg_pool1d(ta, 1)),
            ("hardswish", lambda: F.hardswish(a, 0.03, 50, out=o_hs),
             lambda: torch.ops.quantized.hardswish(ta, 0.03, 50)),
            ("sigmoid", lambda: F.sigmoid(a), lambda: torch.sigmoid(ta)),
            ("cat dim1", lambda: F.cat([a, b], 1), lambda: torch.cat([ta, tb], 1)),
        ]
        for name, ours, theirs in cases:
            q_us, t_us = med_us(ours), med_us(theirs)
            print(f"| {name} | {shape} | {q_us:.1f} | {t_us:.1f} | {t_us / q_us:.2f} |")


if __name__ == "__main__":
    main()

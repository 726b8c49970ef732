# SPDX-License-Identifier: Apache-2.0
"""Per-shape speed of MobileNetV2's 1x1 convolutions (and its 3x3 stem) on qrt's conv kernels,
one thread, batch 1: min / median microseconds per call over interleaved rounds, GMAC/s and % of
an int8 peak given with --peak (GMAC/s, e.g. benchmarks/vnni_peak.c's figure).

Usage: python benchmarks/pointwise.py [--rounds 7] [--calls 30] [--peak 235] [--variant -1]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

# (C_in, C_out, H*W, relu) for MobileNetV2 224 (expand: relu6, project: linear), with counts
SHAPES = [
    (32, 16, 112 * 112, 0, 1), (16, 96, 112 * 112, 1, 1),
    (96, 24, 56 * 56, 0, 1), (24, 144, 56 * 56, 1, 2), (144, 24, 56 * 56, 0, 1),
    (144, 32, 28 * 28, 0, 1), (32, 192, 28 * 28, 1, 3), (192, 32, 28 * 28, 0, 2),
    (192, 64, 14 * 14, 0, 1), (64, 384, 14 * 14, 1, 4), (384, 64, 14 * 14, 0, 3),
    (384, 96, 14 * 14, 0, 1), (96, 576, 14 * 14, 1, 3), (576, 96, 14 * 14, 0, 2),
    (576, 160, 7 * 7, 0, 1), (160, 960, 7 * 7, 1, 3), (960, 160, 7 * 7, 0, 2),
    (960, 320, 7 * 7, 0, 1), (320, 1280, 7 * 7, 1, 1),
]


def build(ci, co, hw, relu, variant, per_channel=True):
    import qrt
    from test_conv1d import layer, make
    c = make(1, ci, co, hw, 1, seed=ci * 7 + co)
    c["relu"] = bool(relu)
    c["per_channel"] = per_channel
    c["w_scales"] = np.random.default_rng(0).uniform(0.001, 0.03, co if per_channel else 1)
    c["w_zps"] = np.zeros(co if per_channel else 1, np.int64)
    m = layer(c, variant)
    x = qrt.from_int_repr(c["x"], c["x_scale"], c["x_zp"])
    return m, x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--peak", type=float, default=235.0)
    ap.add_argument("--variant", type=int, default=-1)
    a = ap.parse_args()
    import qrt
    qrt.set_num_threads(1)
    cases = [build(ci, co, hw, r, a.variant) + ((ci, co, hw, r, n),)
             for ci, co, hw, r, n in SHAPES]
    times = [[] for _ in cases]
    for _ in range(a.rounds):
        for i, (m, x, _) in enumerate(cases):
            m(x)
            ts = []
            for _ in range(a.calls):
                t0 = time.perf_counter_ns()
                m(x)
                ts.append(time.perf_counter_ns() - t0)
            times[i].append(min(ts))
    tot = 0.0
    print("| C_in -> C_out | HxW | count | min us | med us | GMAC/s | % of peak |")
    print("|---|---|---|---|---|---|---|")
    for (m, x, (ci, co, hw, r, n)), ts in zip(cases, times):
        mn, md = min(ts) / 1e3, statistics.median(ts) / 1e3
        g = ci * co * hw / (mn * 1e3)
        tot += n * mn
        h = int(round(hw ** 0.5))
        print(f"| {ci} -> {co}{' relu' if r else ''} | {h}x{h} | {n} | {mn:.1f} | {md:.1f} | "
              f"{g:.1f} | {100 * g / a.peak:.0f} % |")
    macs = sum(ci * co * hw * n for ci, co, hw, _, n in SHAPES)
    print(f"sum of mins x counts: {tot:.0f} us for {macs / 1e6:.1f} M MACs = "
          f"{macs / tot / 1e3:.1f} GMAC/s")


if __name__ == "__main__":
    main()

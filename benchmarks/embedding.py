# SPDX-License-Identifier: Apache-2.0
"""torch's text-classification tutorial model (EmbeddingBag(95811, 64) + Linear(64, 4)) in qrt
against torch 2.13, one thread each: float, and weight-only quantized EmbeddingBag +
quantize_dynamic Linear (qnnpack engine).

Usage: python benchmarks/embedding.py [--repeat R] [--texts N]   (needs torch). Prints the
median microseconds per call of R interleaved rounds (each the median of 200 calls) and the
ratio torch / qrt; the inputs are N texts of 1..59 tokens (N=1: batch 1).
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np
import torch

import qrt
import qrt_export

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from test_embedding import VOCAB, EMSIZE, NUM_CLASS, _text_classification_model  # noqa: E402

warnings.filterwarnings("ignore")
torch.set_num_threads(1)
qrt.set_num_threads(1)
torch.backends.quantized.engine = "qnnpack"


def _median_us(fn, n=200):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t0)
    return statistics.median(ts) / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--texts", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    TCM = _text_classification_model(torch)
    fm = TCM(VOCAB, EMSIZE, NUM_CLASS).eval()
    qm = TCM(VOCAB, EMSIZE, NUM_CLASS).eval()
    from torch.ao.quantization import float_qparams_weight_only_qconfig
    qm.embedding.qconfig = float_qparams_weight_only_qconfig
    qm = torch.ao.quantization.convert(torch.ao.quantization.prepare(qm))
    qm = torch.ao.quantization.quantize_dynamic(qm, {torch.nn.Linear}, dtype=torch.qint8)
    lens = rng.integers(1, 60, a.texts)
    text = torch.from_numpy(rng.integers(0, VOCAB, int(lens.sum())))
    off = torch.from_numpy(np.concatenate([[0], np.cumsum(lens)[:-1]]))
    tn, on = text.numpy(), off.numpy()
    with tempfile.TemporaryDirectory() as d:
        for name, tm in (("float", fm), ("weight-only + dynamic", qm)):
            path = os.path.join(d, "m.bin")
            qrt_export.export(tm, (text, off), path, verbose=False)
            m = qrt.load(path)
            rows = []
            with torch.no_grad():
                for _ in range(a.repeat):
                    rows.append((_median_us(lambda: tm(text, off)), _median_us(lambda: m(tn, on))))
            t = statistics.median(r[0] for r in rows)
            q = statistics.median(r[1] for r in rows)
            print(f"{name:<24} {a.texts} text(s), {len(tn)} tokens: torch {t:7.1f} us  qrt "
                  f"{q:7.1f} us  torch/qrt {t / q:.2f}x")


if __name__ == "__main__":
    main()

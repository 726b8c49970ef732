# SPDX-License-Identifier: Apache-2.0
"""Blob size against torch.save, load time and first-call latency (issue: weights stored once).

    python benchmarks/format_size_load.py [--rounds 7]

Models: torchaudio's Wav2Letter acoustic model (the published class, loaded from torchaudio's
source file: its compiled extension is built for a CUDA torch), quantized with torch.ao FX
(qnnpack) as qrt-export does for float models; and a 50 MB stack of four Conv1d(1024, 1024, 12)
layers. Prints: torch.save bytes, blob bytes, ratio; qrt.load with verify=False / True
(median ms, page cache warm: the file was just written); first call and steady call (ms).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time



def wav2letter():
    import torch  # noqa: F401  (the module file imports torch)
    spec = importlib.util.find_spec("torchaudio")
    path = os.path.join(os.path.dirname(spec.origin), "models", "wav2letter.py")
    ns = {}
    exec(compile(open(path).read(), path, "exec"), ns)
    return ns["Wav2Letter"](num_classes=40, input_type="waveform").acoustic_model, (1, 1, 8000)


def stack50():
    import torch.nn as nn
    layers = []
    for _ in range(4):
        layers += [nn.Conv1d(1024, 1024, 12, padding=6), nn.ReLU()]
    return nn.Sequential(*layers), (1, 1024, 64)


def measure(name, build, rounds, tmp):
    import torch
    import qrt
    import qrt_export
    torch.manual_seed(0)
    model, shape = build()
    model.eval()
    ex = torch.randn(*shape)
    qm = qrt_export.quantize_float_model(model, [(torch.randn(*shape),)], (ex,))
    pt = os.path.join(tmp, f"{name}.pt")
    torch.save(qm, pt)
    blob = os.path.join(tmp, f"{name}.bin")
    qrt_export.export(qm, ex, blob, check=False, verbose=False)
    sz_pt, sz_bin = os.path.getsize(pt), os.path.getsize(blob)
    loads = {}
    for verify in (False, True):
        ts = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            m = qrt.load(blob, verify=verify)
            ts.append((time.perf_counter() - t0) * 1e3)
            del m
        loads[verify] = statistics.median(ts)
    x = ex.numpy()
    firsts, steady = [], []
    for _ in range(rounds):
        m = qrt.load(blob, verify=False)
        t0 = time.perf_counter()
        m(x)
        firsts.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        m(x)
        steady.append((time.perf_counter() - t0) * 1e3)
    print(f"| {name} | {sz_pt:,} | {sz_bin:,} | {sz_bin / sz_pt:.3f} | "
          f"{loads[False]:.1f} | {loads[True]:.1f} | {statistics.median(firsts):.1f} | "
          f"{statistics.median(steady):.1f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    print("| model | torch.save B | blob B | blob/torch | load ms verify=False | "
          "load ms verify=True | first call ms | steady call ms |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, build in (("wav2letter", wav2letter), ("conv-stack-50MB", stack50)):
            measure(name, build, args.rounds, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())

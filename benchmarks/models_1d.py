# SPDX-License-Identifier: Apache-2.0
"""The published 1-d models x the four torch.ao quantization flavours (issue 14): agreement
with torch (qnnpack) and batch-1 latency of qrt and torch, one thread each.

    python benchmarks/models_1d.py [--rounds 15] [--quick] [--models m5_16000,imu]

Models and flavours: tests/_flavours.py (the test suite's, same widths; Wav2Letter at its
published widths). For every pair that torch can quantize and qrt can export: the model is
exported with qrt_export.export, loaded with qrt.load, and run on fresh inputs (seeds other
than the calibration's). Columns:

  exact %    elements of every quantized tensor qrt computes (op by op, check_ops) equal to
             torch's qnnpack value of the same graph node, over three fresh inputs
  float err  max |qrt - torch| of the model's float output, absolute and relative to
             max|torch| + 1; where the output is a dequantized quantized tensor, how many of
             its elements differ from torch's
  qrt, torch batch-1 latency (median of interleaved rounds; torch.set_num_threads(1),
             qrt.set_num_threads(1) and numpy's BLAS at one thread; same process);
             ratio = torch / qrt (> 1: qrt faster)

torch's qnnpack refuses M5's kernel-1 global pool at 8000 samples: torch is timed under its
x86 engine there (marked x86), and compared op by op as qrt-export does (that node under x86).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

# one thread each: numpy's BLAS (qrt's float matmuls) too, set before numpy is imported
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))


def _stub_torchvision():
    import types
    for name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
        sys.modules.setdefault(name, types.ModuleType(name))


def agreement(F, tm, qm, spec):
    from qrt_export._export import _engine, _output_lsb, _repack, _run_nodes, _trace, check_ops
    exact = total = out_bad = 0
    fmax = frel = None
    with _engine("qnnpack"):
        gm = _trace(_repack(tm, "qnnpack"))
    shapes = [spec.shape] + spec.other_shapes
    for k in range(3):
        x = F.inputs(shapes[k % len(shapes)], 700 + k)
        with _engine("qnnpack"):
            refused = {}
            vals = _run_nodes(gm, (x,), refused)
        for r in check_ops(qm, vals, (x,), refused):
            if "max_lsb" in r:
                exact += r["exact"]
                total += r["total"]
        out = qm(x.numpy())
        want = F.torch_run(tm, x)
        if _output_lsb(qm, 0) is None:   # a float op computed the output
            d, rel = F.float_err(out, want)
            fmax, frel = max(fmax or 0.0, d), max(frel or 0.0, rel)
        else:   # a dequantized quantized tensor: must be equal
            out_bad += int((out != want.numpy()).sum())
    return exact, total, fmax, frel, out_bad


def latency(F, tm, qm, spec, rounds):
    import torch
    x = F.inputs((1,) + tuple(spec.shape[1:]), 42)
    xn = x.numpy()
    engine = "qnnpack"
    torch.backends.quantized.engine = engine
    with torch.no_grad():
        try:
            tm(x)
        except RuntimeError:
            engine = "x86"
    torch.backends.quantized.engine = engine

    def run_torch():
        with torch.no_grad():
            tm(x)

    def run_qrt():
        qm(xn)
    for f in (run_torch, run_qrt):   # warm up, and size a block to ~20 ms
        f()
    t0 = time.perf_counter()
    run_qrt()
    run_torch()
    n = max(1, int(0.02 / max(time.perf_counter() - t0, 1e-6)))
    tq, tt = [], []
    for _ in range(rounds):   # interleaved
        t0 = time.perf_counter()
        for _ in range(n):
            run_qrt()
        tq.append((time.perf_counter() - t0) / n)
        t0 = time.perf_counter()
        for _ in range(n):
            run_torch()
        tt.append((time.perf_counter() - t0) / n)
    torch.backends.quantized.engine = "qnnpack"
    return statistics.median(tq), statistics.median(tt), engine


def _ms(t):
    return f"{t * 1e3:.2f} ms" if t >= 1e-3 else f"{t * 1e6:.0f} us"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="leave out Wav2Letter (slow)")
    ap.add_argument("--models", help="comma-separated model names (tests/_flavours.py)")
    args = ap.parse_args(argv)
    _stub_torchvision()
    import torch
    import qrt
    import qrt_export
    import _flavours as F
    torch.set_num_threads(1)
    qrt.set_num_threads(1)
    names = args.models.split(",") if args.models else list(F.SPECS)
    if args.quick:
        names = [n for n in names if not F.SPECS[n].slow]
    print("| model | flavour | exact % (quantized) | float err abs / rel | qrt | torch | "
          "torch/qrt |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            spec = F.SPECS[name]
            for fl in F.FLAVOURS:
                row = f"| {name} | {fl} |"
                try:
                    tm, ex = F.quantize(spec, fl)
                except F.NotApplicable as e:
                    print(f"{row} n/a: {str(e)[:110]} | | | | |", flush=True)
                    continue
                path = os.path.join(tmp, f"{name}-{fl}.bin")
                try:
                    qrt_export.export(tm, ex, path, **F.export_kwargs(fl))
                except qrt_export.UnsupportedError as e:
                    print(f"{row} not exported: {str(e)[:110]} | | | | |", flush=True)
                    continue
                qm = qrt.load(path)
                exact, total, fmax, frel, out_bad = agreement(F, tm, qm, spec)
                tq, tt, eng = latency(F, tm, qm, spec, args.rounds)
                ex_s = f"{100.0 * exact / total:.3f} % of {total}" if total else \
                    "- (no quantized tensor)"
                fe = (f"output == torch ({out_bad} differ)" if fmax is None else
                      f"{fmax:.2g} / {frel:.2g}")
                mark = "" if eng == "qnnpack" else f" ({eng})"
                print(f"{row} {ex_s} | {fe} | {_ms(tq)} | {_ms(tt)}{mark} | {tt / tq:.2f}x |",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

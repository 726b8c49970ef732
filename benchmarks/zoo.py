# SPDX-License-Identifier: Apache-2.0
"""The model zoo of issue #45: published model classes (transformers, timm, torchaudio,
torchvision, the word-language-model tutorial, an ECG ResNet) x the flavours users quantize
them in, exported with qrt_export.export; one markdown table.

    python benchmarks/zoo.py [--only NAME[,NAME]] [--rounds 15] [--json out.json]

Models, configs and flavours: tests/_zoo.py (the tests' own, small). Columns:

  exported   yes, or the first line of the exception export raised
  ops ok     op-by-op rows of the export's check (each op on torch's own inputs) within the
             contract (quantized: equal codes with torch qnnpack; float: docs/export.md)
  agreement  end to end vs torch (qnnpack), rep.agreement["qnnpack"]: quantized output codes
             exact/total; float outputs max |qrt - torch| / max |torch|
  capture    how the graph was taken: torch.fx, torch.export (capture.py), or a pt2e program
  qrt, torch one-thread latency (torch.set_num_threads(1), qrt.set_num_threads(1), engine
             qnnpack; interleaved rounds, medians, ms); ratio = torch / qrt (> 1: qrt faster)
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))


def host():
    name, flags = "?", set()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            if k.strip() == "Model name":
                name = v.strip()
            elif k.strip() == "Flags":
                flags = set(v.split())
    except OSError:
        pass
    isa = ", ".join(f"{f} {'yes' if f in flags else 'no'}" for f in ("avx512_vnni", "avx2"))
    return f"{name} ({isa})"


def _timed(fn, rounds):
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def latency(rep, qm, example, rounds):
    """(qrt ms, torch ms): medians of interleaved rounds, one thread each, engine qnnpack."""
    import torch

    import qrt
    from qrt_export._export import _qrt_inputs, _repack
    torch.set_num_threads(1)
    qrt.set_num_threads(1)
    torch.backends.quantized.engine = "qnnpack"
    tm = _repack(rep.torch_model, "qnnpack") if rep.torch_model is not None else None
    q_in = _qrt_inputs(torch.utils._pytree.tree_leaves(example))   # qrt: flat inputs
    tq, tt = [], []
    with torch.no_grad():
        for _ in range(2):   # warm-up
            qm(*q_in)
            if tm is not None:
                tm(*example)
        for _ in range(rounds):
            tq.append(_timed(lambda: qm(*q_in), rounds))
            if tm is not None:
                tt.append(_timed(lambda: tm(*example), rounds))
    return statistics.median(tq), statistics.median(tt) if tt else None


def run_case(case, rounds):
    import torch

    import qrt
    import qrt_export
    import _zoo
    row = {"name": case.name, "model": case.model, "library": case.library,
           "flavour": case.flavour}
    torch.set_num_threads(1)
    torch.backends.quantized.engine = "qnnpack"
    try:
        model, example, kw = case.build()
    except Exception as e:  # noqa: BLE001 - reported
        row["exported"] = "torch: " + _zoo.first_error(e)
        return row
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, case.name + ".bin")
        t0 = time.perf_counter()
        try:
            rep = qrt_export.export(model, example, path, verbose=False, **kw)
        except Exception as e:  # noqa: BLE001 - reported
            row["exported"] = _zoo.first_error(e)
            row["error"] = f"{type(e).__name__}: {e}"
            row["traceback"] = traceback.format_exc()
            row["export_s"] = time.perf_counter() - t0
            return row
        row["export_s"] = time.perf_counter() - t0
        row["exported"] = "yes"
        ok, n, agr, exact, rel, cap = _zoo.summary(rep)
        row.update(ops_ok=ok, ops=n, agreement=agr, exact=exact, rel=rel, capture=cap)
        try:
            qm = qrt.load(path)
            row["qrt_ms"], row["torch_ms"] = latency(rep, qm, example, rounds)
        except Exception as e:  # noqa: BLE001 - reported
            row["timing"] = _zoo.first_error(e)
    return row


def _ms(v):
    return "-" if v is None else f"{v:.2f}"


def table(rows):
    out = ["| model | library | flavour | exported / first error | ops ok | agreement (qnnpack) "
           "| capture | qrt ms | torch ms | ratio |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ex = r["exported"].replace("|", "\\|")
        ops = f"{r['ops_ok']}/{r['ops']}" if "ops" in r else "-"
        q, t = r.get("qrt_ms"), r.get("torch_ms")
        ratio = f"{t / q:.2f}" if q and t else "-"
        out.append(f"| {r['model']} | {r['library']} | {r['flavour']} | {ex} | {ops} | "
                   f"{r.get('agreement', '-')} | {r.get('capture', '-')} | {_ms(q)} | "
                   f"{_ms(t)} | {ratio} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated case names (tests/_zoo.py CASES)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--json", help="also write the rows as JSON here")
    args = ap.parse_args(argv)
    import _zoo
    names = args.only.split(",") if args.only else list(_zoo.CASES)
    unknown = [n for n in names if n not in _zoo.CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; known: {', '.join(_zoo.CASES)}")
    rows = []
    for n in names:
        t0 = time.perf_counter()
        rows.append(run_case(_zoo.CASES[n], args.rounds))
        print(f"# {n}: {rows[-1]['exported'][:120]} ({time.perf_counter() - t0:.0f} s)",
              file=sys.stderr, flush=True)
    import torch
    print(f"host: {host()}; {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
          f"torch {torch.__version__}, one thread, engine qnnpack\n")
    print(table(rows))
    if args.json:
        import json
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: Apache-2.0
"""The pt2e table of issue #44: model x quantizer x {API, .pt2 CLI} through torchao's pt2e flow
(torch.export, prepare_pt2e or prepare_qat_pt2e, calibration, convert_pt2e), then
``qrt_export.export(converted, x, path)`` (API) and ``qrt-export model.pt2 --input x.npy``
in a fresh subprocess (CLI, the program saved with ``torch.export.save``). Per row: exported?,
op by op against torch's qnnpack kernels on the rewritten graph (ops bit-exact / ops checked),
agreement with torch's converted program (op by op from the same inputs: codes exact %, max
LSB; outputs end to end), and whether the CLI's blob gives the API blob's outputs bit for bit.

A second table runs the small pattern models of tests/_pt2e.py (PATTERNS) through every
quantizer (API only).

Usage: python benchmarks/pt2e_table.py [--size 64] [--models resnet18 ...]
       [--quantizers x86 arm xnnpack ...] [--no-patterns]
(needs torch 2.13, torchao and torchvision; random weights, BatchNorm statistics re-estimated
on random inputs, seed 0, three calibration images, batch 1).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
warnings.filterwarnings("ignore")

VISION = ("resnet18", "mobilenet_v2", "mobilenet_v3_large")
QUANTIZERS = ("x86", "arm", "xnnpack", "xnnpack_per_tensor", "xnnpack_symmetric")


def _vision(name, size, quantizer, qat=False):
    import _pt2e
    import torch
    from _torch_models import bn_recalibrate, torchvision
    tv = torchvision()
    torch.manual_seed(0)
    m = bn_recalibrate(getattr(tv.models, name)(weights=None), (4, 3, size, size)).eval()
    g = torch.Generator().manual_seed(1)
    ex = (torch.randn(1, 3, size, size, generator=g),)
    calib = [torch.randn(1, 3, size, size, generator=g) for _ in range(3)]
    # torchvision's ResNet under X86InductorQuantizer needs strict export (tests/_pt2e.py)
    strict = quantizer == "x86" and name.startswith("resnet")
    c = _pt2e.pt2e_quantize(m, ex, _pt2e.QUANTIZERS[quantizer](qat=qat), calib, qat=qat,
                            strict=strict)
    return c, ex, None


def _tcresnet(quantizer, qat=False):
    """TC-ResNet8 (40 MFCC x 101 frames) with torch.export.Dim on the time axis."""
    import _pt2e
    import torch
    torch.manual_seed(0)
    shape = (2, 40, 101)
    g = torch.Generator().manual_seed(1)
    ex = (torch.randn(*shape, generator=g),)
    calib = [torch.randn(*shape, generator=g) for _ in range(2)]
    dyn = ({2: torch.export.Dim("T", min=16, max=1000)},)
    c = _pt2e.pt2e_quantize(_pt2e.TCResNet8(), ex, _pt2e.QUANTIZERS[quantizer](qat=qat), calib,
                            qat=qat, dynamic_shapes=dyn)
    return c, ex, dyn


def _summary(rep, path):
    import qrt
    import qrt_export
    float_out = not qrt_export._export._output_lsb(qrt.load(path), 0)
    a = rep.pt2e or {}
    ok = sum(1 for r in rep.ops if r["ok"])
    bad = [r for r in rep.ops if not r["ok"]]
    qn = rep.agreement.get("qnnpack", {})
    o = a.get("outputs", {})
    return {
        "nq": len(a.get("ops", [])),
        "ops": f"{ok}/{len(rep.ops)}" + (
            f" ({bad[0]['op']}: {bad[0]['total'] - bad[0]['exact']}/{bad[0]['total']} codes, "
            f"{bad[0].get('max_lsb', '-')} LSB)" if bad else ""),
        "prog": (f"{100.0 * a['exact'] / a['total']:.3f} %, {a['max_lsb']} LSB"
                 if a.get("total") else "- (nothing quantized)"),
        "out": (f"{100.0 * o['exact'] / o['total']:.1f} %, {o['max_lsb']:.0f} LSB"
                if o.get("total") else
                f"float output, max {o.get('float', {}).get('max_abs', 0):.2g}"),
        "qnnpack": (qn.get("error", "-") if "exact" not in qn else
                    f"float output, max {qn.get('float', {}).get('max_abs', 0):.2g}"
                    if float_out or not qn["total"] else
                    "exact" if qn["exact"] == qn["total"] else
                    f"{qn['exact']}/{qn['total']}, max {qn.get('max_lsb', 0)} LSB"),
    }


def _row(label, quantizer, build, tmp, size_note):
    import torch
    import qrt
    import qrt_export
    t0 = time.perf_counter()
    try:
        c, ex, dyn = build()
    except Exception as e:  # noqa: BLE001 - a row of the table
        return {"model": label, "quantizer": quantizer, "api": f"quantize failed: "
                f"{type(e).__name__}: {str(e).splitlines()[0][:80]}"}
    api = os.path.join(tmp, "api.bin")
    row = {"model": label, "quantizer": quantizer, "input": size_note}
    try:
        rep = qrt_export.export(c, ex, api, verbose=False)
        row["api"] = "yes"
    except qrt_export.MismatchError:   # refused by the check; measured with allow_mismatch
        rep = qrt_export.export(c, ex, api, verbose=False, allow_mismatch=True)
        row["api"] = "no (MismatchError; measured with allow_mismatch)"
    except Exception as e:  # noqa: BLE001
        row["api"] = f"no: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
        rep = None
    if rep is not None:
        row.update(_summary(rep, api))
    # the .pt2 file through a fresh qrt-export process
    pt2, xin, cli = (os.path.join(tmp, n) for n in ("m.pt2", "x.npy", "cli.bin"))
    for f in (pt2, cli):
        if os.path.exists(f):
            os.remove(f)
    torch.export.save(torch.export.export(c, ex, dynamic_shapes=dyn), pt2)
    np.save(xin, ex[0].numpy())
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-m", "qrt_export", pt2, "--input", xin, "-o", cli],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        last = [ln for ln in r.stderr.splitlines() if ln.strip()][-1:] or ["?"]
        row["cli"] = f"no (rc {r.returncode}: {last[0].split(' (')[0][:100]})"
    elif rep is not None and os.path.exists(api):
        g = torch.Generator().manual_seed(9)
        x = torch.randn(*ex[0].shape, generator=g).numpy()
        same = np.array_equal(qrt.load(api)(x), qrt.load(cli)(x))
        row["cli"] = "yes, same blob outputs" if same else "yes, OUTPUTS DIFFER from the API's"
    else:
        row["cli"] = "yes"
    row["s"] = time.perf_counter() - t0
    return row


def _pattern_row(name, quantizer, tmp):
    import _pt2e
    import qrt_export
    qat = quantizer.endswith(" QAT")
    qz = quantizer[:-4] if qat else quantizer
    row = {"model": name, "quantizer": quantizer}
    try:
        c, ex = _pt2e.pattern_program(name, qz, qat=qat)
        path = os.path.join(tmp, "p.bin")
        try:
            rep = qrt_export.export(c, ex, path, verbose=False)
            row["api"] = "yes"
        except qrt_export.MismatchError:
            rep = qrt_export.export(c, ex, path, verbose=False, allow_mismatch=True)
            row["api"] = "no (MismatchError; measured with allow_mismatch)"
        row.update(_summary(rep, path))
    except Exception as e:  # noqa: BLE001
        row["api"] = f"no: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
    return row


def _table(rows, cols):
    heads = {"model": "model", "quantizer": "quantizer", "input": "input",
             "nq": "quantized ops", "api": "API exported", "cli": ".pt2 CLI exported",
             "ops": "op by op vs qnnpack (ops exact)", "prog": "vs program, op by op",
             "out": "vs program, outputs", "qnnpack": "vs qnnpack, outputs"}
    out = ["| " + " | ".join(heads[c] for c in cols) + " |",
           "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join(str(r.get(c, "-")) for c in cols) + " |")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--models", nargs="+", default=list(VISION) + ["tcresnet8"])
    p.add_argument("--quantizers", nargs="+", default=list(QUANTIZERS))
    p.add_argument("--no-patterns", action="store_true")
    a = p.parse_args(argv)
    import torch
    torch.set_num_threads(1)   # the export tabulates luts on single codes (docs/export.md)
    torch.backends.quantized.engine = "qnnpack"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in a.models:
            for q in a.quantizers:
                if model == "tcresnet8":
                    rows.append(_row("TC-ResNet8, Dim T", q, lambda: _tcresnet(q), tmp,
                                     "40x101, T in [16, 1000]"))
                else:
                    rows.append(_row(model, q, lambda: _vision(model, a.size, q), tmp,
                                     f"{a.size}x{a.size}"))
                print(rows[-1], file=sys.stderr, flush=True)
        for q in ("x86", "xnnpack"):   # QAT (prepare_qat_pt2e)
            rows.append(_row("TC-ResNet8, QAT, Dim T", q, lambda: _tcresnet(q, qat=True), tmp,
                             "40x101, T in [16, 1000]"))
            rows.append(_row("mobilenet_v3_large, QAT", q,
                             lambda: _vision("mobilenet_v3_large", a.size, q, qat=True), tmp,
                             f"{a.size}x{a.size}"))
            print(rows[-2], rows[-1], file=sys.stderr, flush=True)
        print(_table(rows, ("model", "quantizer", "input", "nq", "api", "cli", "ops", "prog",
                            "out", "qnnpack")))
        if not a.no_patterns:
            import _pt2e
            qs = list(a.quantizers) + ["x86 QAT", "xnnpack QAT"]
            print()
            print("| pattern | " + " | ".join(qs) + " |")
            print("|" + "---|" * (len(qs) + 1))
            for name in _pt2e.PATTERNS:
                cells = []
                for q in qs:
                    r = _pattern_row(name, q, tmp)
                    print(r, file=sys.stderr, flush=True)
                    if r["api"] != "yes":
                        cells.append(r["api"])
                        continue
                    n_ok, n = (int(v) for v in r["ops"].split()[0].split("/"))
                    qn = "" if r["qnnpack"] in ("exact",) or r["qnnpack"].startswith(
                        "float") else f", qnnpack outputs {r['qnnpack']}"
                    cells.append(f"{r['nq']} q; {r['prog'] if r['nq'] else 'float'}"
                                 + ("" if n_ok == n else f"; {r['ops']}") + qn)
                print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

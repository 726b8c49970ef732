#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Regenerate tests/data/views.json: torch's layout for random chains of quantized views.

Each case is a starting shape and dtype plus a chain of view operations (the generator of
tests/test_tensor_views.py); torch 2.13 records after every step the shape, stride(),
storage_offset(), is_contiguous() and whether the result still shares the base's memory, or
that the step raises. qrt is checked against torch before anything is written. The
torch-free test ``test_views_golden`` replays the chains on qrt.

    python tools/gen_golden_views.py            # writes tests/data/views.json
    python tools/gen_golden_views.py --check    # compares only
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(os.path.dirname(HERE), "tests")
OUT = os.path.join(TESTS, "data", "views.json")
sys.path.insert(0, TESTS)
SEED = 20261129
N_CASES = 120


def encode_key(key):
    items = key if isinstance(key, tuple) else (key,)
    enc = []
    for k in items:
        if k is None:
            enc.append(None)
        elif k is Ellipsis:
            enc.append("...")
        elif isinstance(k, slice):
            enc.append({"slice": [k.start, k.stop, k.step]})
        else:
            enc.append(int(k))
    return {"tuple": isinstance(key, tuple), "items": enc}


def encode_op(op):
    name, *args = op
    if name == "getitem":
        return [str(name), encode_key(args[0])]
    return [str(name)] + [list(a) if isinstance(a, tuple) else a for a in args]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch
    warnings.filterwarnings("ignore")
    import test_tensor_views as tv  # the chain generator and the torch/qrt comparison

    rng = np.random.default_rng(SEED)
    cases = []
    for case in range(N_CASES):
        dtype = ["quint8", "qint8", "qint32"][case % 3]
        t0, q0 = tv._start(rng, torch, dtype)
        t, q = t0, q0
        steps = []
        for _ in range(int(rng.integers(1, 6))):
            op = tv._rand_op(rng, q.shape)
            try:
                tn = tv._apply(t, op)
            except (RuntimeError, IndexError, ValueError) as e:
                try:
                    tv._apply(q, op)
                except (ValueError, IndexError):
                    pass
                else:
                    raise AssertionError(f"qrt accepts {op} that torch refuses ({e})")
                steps.append({"op": encode_op(op), "error": type(e).__name__})
                break
            qn = tv._apply(q, op)
            tv._same(torch, tn, qn, t0, q0, f"case {case}: {op}")
            shares = (tn.untyped_storage().data_ptr() == t0.untyped_storage().data_ptr()
                      if t0.numel() else None)
            steps.append({"op": encode_op(op), "shape": list(tn.shape),
                          "stride": list(tn.stride()), "offset": tn.storage_offset(),
                          "contiguous": tn.is_contiguous(), "shares": shares})
            t, q = tn, qn
        cases.append({"dtype": dtype, "shape": list(q0.shape), "steps": steps})
    doc = {"generated_by": "tools/gen_golden_views.py", "torch_version": torch.__version__,
           "seed": SEED, "cases": cases}
    if args.check:
        print(f"qrt agrees with torch on {N_CASES} view chains")
        return 0
    with open(OUT, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

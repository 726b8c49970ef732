# SPDX-License-Identifier: Apache-2.0
"""``qrt-export``: write a qrt blob from a torch model file or a state_dict checkpoint."""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="qrt-export",
        description="Export a quantized PyTorch model to a qrt .bin blob.",
        epilog="examples:\n  qrt-export model.pt --input x.npy -o model.bin\n"
               "  qrt-export --model mypkg.nets:KwsNet --weights ckpt.pt --input x.npy "
               "--calib calib.npy -o model.bin\n  qrt-export --tensors ckpt.pt -o weights.bin",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model_file", nargs="?", help="a whole model saved with torch.save")
    p.add_argument("--model", help="package.module:ClassName of the float model (with --weights)")
    p.add_argument("--weights", help="state_dict checkpoint for --model")
    p.add_argument("--tensors", metavar="CKPT",
                   help="write the tensors of a state_dict checkpoint (quantized or not) as "
                        "a qrt tensor file (qrt.load_tensors) instead of a model")
    p.add_argument("--input", help=".npy example input (float32), batch first")
    p.add_argument("--calibrate", "--calib", dest="calib", metavar="CALIB.npy",
                   help=".npy calibration inputs (several batches, batch first): required "
                        "for a float model, which qrt-export then quantizes with torch.ao FX")
    p.add_argument("--allow-mismatch", action="store_true",
                   help="write the blob even when qrt differs from torch beyond the contract")
    p.add_argument("--list-ops", action="store_true", help="list the torch ops qrt-export "
                   "lowers and exit")
    p.add_argument("-o", "--output", help="the .bin to write")
    p.add_argument("--no-check", action="store_true", help="skip the torch-vs-qrt comparison")
    args = p.parse_args(argv)
    if args.list_ops:
        from qrt_export._export import SUPPORTED
        print("\n".join(SUPPORTED))
        return 0
    if not args.output:
        p.error("the following arguments are required: -o/--output")
    if args.tensors:
        if args.model_file or args.model:
            p.error("--tensors takes no model")
        from qrt_export.tensors import export_tensors
        try:
            n = export_tensors(args.tensors, args.output)
        except (OSError, ValueError, TypeError, RuntimeError) as e:
            print(f"qrt-export: error: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
        print(f"qrt-export: wrote {args.output} ({n} bytes)", file=sys.stderr)
        return 0
    if not args.input:
        p.error("--input is required for a model")
    if bool(args.model_file) == bool(args.model):
        p.error("give either a saved model file or --model package.module:ClassName")
    if args.model and not args.weights:
        p.error("--model needs --weights ckpt.pt")

    import numpy as np

    from qrt_export._export import MismatchError, UnsupportedError, export, load_class
    try:
        x = np.load(args.input)
    except (OSError, ValueError) as e:
        print(f"qrt-export: cannot read --input {args.input}: {e}", file=sys.stderr)
        return 2
    if x.dtype != np.float32:
        x = x.astype(np.float32)
    calib = None
    if args.calib:
        c = np.load(args.calib).astype(np.float32)
        calib = [c[i:i + 32] for i in range(0, len(c), 32)]
    try:
        if args.model:
            import torch
            model = load_class(args.model)()
            sd = torch.load(args.weights, map_location="cpu", weights_only=True)
            if isinstance(sd, dict) and "state_dict" in sd:
                sd = sd["state_dict"]
            model.load_state_dict(sd)
            src = f"{args.model} + {args.weights}"
        else:
            model, src = args.model_file, None
        export(model, x, args.output, calibration_data=calib, check=not args.no_check,
               source=src, allow_mismatch=args.allow_mismatch)
    except UnsupportedError as e:
        print(f"qrt-export: {e}", file=sys.stderr)
        return 3
    except MismatchError as e:
        print(f"qrt-export: {e}", file=sys.stderr)
        return 4
    except (OSError, ValueError, TypeError, ImportError, AttributeError) as e:
        print(f"qrt-export: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: Apache-2.0
"""``qrt-export``: write a qrt blob from a torch model file or a state_dict checkpoint.

Exit codes: 0 success, 1 export failed (the message says why), 2 bad arguments or unreadable
input files, 3 the model uses something qrt cannot run (or a float model without
--calibrate), 4 qrt differs from torch beyond the contract (--allow-mismatch), 130
interrupted. Every failure is one line on stderr: a model file that is missing, empty, not a
torch model (a qrt ``.bin``, a ``.npy``) or a pickle of a class defined in the saving script
exits 2 with what to do; a missing torch exits 1 with the command that installs it. ``-o`` is
written atomically (a temporary file in the same folder, fsync, rename): a process that has
the old file mapped keeps running on the old bytes.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="qrt-export",
        description="Export a quantized PyTorch model to a qrt .bin blob.",
        epilog="examples:\n  qrt-export model.pt --input x.npy -o model.bin\n"
               "  qrt-export model.pt2 --input x.npy -o model.bin   (torchao pt2e)\n"
               "  qrt-export model.pt --input a.npy b.npy -o model.bin   (two inputs)\n"
               "  qrt-export --model mypkg.nets:KwsNet --weights ckpt.pt --input x.npy "
               "--calibrate calib.npy -o model.bin\n  qrt-export --tensors ckpt.pt -o "
               "weights.bin\n\nexit codes: 0 success, 1 export failed, 2 bad arguments or "
               "unreadable input files, 3 unsupported model (or a float model without "
               "--calibrate), 4 qrt differs from torch (see --allow-mismatch), 130 interrupted",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model_file", nargs="?", help="a whole model saved with torch.save, or a "
                   "torchao pt2e program saved with torch.export.save (.pt2)")
    p.add_argument("--model", help="package.module:ClassName of the float model (with --weights)")
    p.add_argument("--weights", help="state_dict checkpoint for --model")
    p.add_argument("--tensors", metavar="CKPT",
                   help="write the tensors of a state_dict checkpoint (quantized or not) as "
                        "a qrt tensor file (qrt.load_tensors) instead of a model")
    p.add_argument("--input", action="append", nargs="+", metavar="X.npy",
                   help=".npy example input (float32, or int64 indices), batch first; a "
                        "model with several inputs takes one file each, in forward()'s order "
                        "(--input a.npy b.npy, or --input a.npy --input b.npy)")
    p.add_argument("--calibrate", "--calib", dest="calib", metavar="CALIB.npy",
                   action="append", nargs="+",
                   help=".npy calibration inputs (several batches, batch first): required "
                        "for a float model, which qrt-export then quantizes with torch.ao FX; "
                        "one file per model input, as for --input")
    p.add_argument("--keep-float", action="store_true",
                   help="export a float model (no quantized module) as float32 ops instead "
                        "of refusing it")
    p.add_argument("--allow-mismatch", action="store_true",
                   help="write the blob even when qrt differs from torch beyond the contract")
    p.add_argument("--list-ops", action="store_true", help="list the torch ops qrt-export "
                   "lowers and exit")
    p.add_argument("-o", "--output", help="the .bin to write")
    p.add_argument("--no-check", action="store_true", help="skip the torch-vs-qrt comparison")
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    args = p.parse_args(argv)
    # torch's C++ warnings (TORCH_WARN outside a Python call, e.g. "[W... qlinear_dynamic.cpp]
    # Warning: qnnpack incorrectly ignores reduce_range") go straight to stderr unless c10's log
    # level, read when torch loads (not imported yet here), is above WARNING; the user's own
    # setting wins.
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    from qrt.__main__ import catch_sigint, interrupted   # argparse and os only: cheap
    catch_sigint()
    try:
        return _main(p, args)
    except BaseException as e:
        # a Ctrl-C, also one that a C extension's import turned into another exception
        if not (isinstance(e, KeyboardInterrupt) or (isinstance(e, Exception)
                                                     and interrupted())):
            raise
        print("qrt-export: interrupted", file=sys.stderr)
        return 130


def _version() -> str:
    from qrt import __version__   # the exporter ships with qrt and has its version
    return __version__


TORCH_MISSING = ("torch is not installed here; qrt-export needs it (on the workstation: pip "
                 "install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu)")

# The first bytes of files people pass by mistake, and what they are.
_NOT_A_MODEL = ((b"QRTB", "a qrt blob (qrt-export writes these; read it with qrt inspect)"),
                (b"\x93NUMPY", "a numpy .npy array (an --input, not a model)"))


def _check_model_file(path, what=None):
    """One line (exit code 2) for a model file (``what`` None) or a --weights / --tensors
    checkpoint that cannot be a torch one; None if it may be."""
    from qrt._fileio import NotARegularFileError, open_for_reading
    name = f"{what} {path}" if what else path
    expect = ("a state_dict saved with torch.save(model.state_dict(), path)" if what else
              "a torch model saved with torch.save(model, path) or a .pt2 program saved with "
              "torch.export.save")
    try:
        fd, st = open_for_reading(path, what or "model file")
        with os.fdopen(fd, "rb") as f:
            head = f.read(8)
    except FileNotFoundError:
        return f"no such file: {name}"
    except (NotARegularFileError, IsADirectoryError, PermissionError) as e:
        return str(e)
    except OSError as e:
        return f"cannot read {name}: {e.strerror or e}"
    if not head:
        return f"{name} is an empty file; qrt-export takes {expect}"
    for magic, what_it_is in _NOT_A_MODEL:
        if head.startswith(magic):
            return f"{name} is {what_it_is}; qrt-export takes {expect}"
    return None


def _precheck(path, what=None) -> int:
    """Before torch loads anything: 2 after one line for a file that cannot be a torch one
    (:func:`_check_model_file`), 1 after one line when torch is missing, else 0."""
    bad = _check_model_file(path, what)
    if bad:
        print(f"qrt-export: {bad}", file=sys.stderr)
        return 2
    if not _have_torch():
        print(f"qrt-export: {TORCH_MISSING}", file=sys.stderr)
        return 1
    return 0


def _have_torch() -> bool:
    try:
        import torch  # noqa: F401 - the export needs it next anyway
    except ImportError:
        return False
    return True


def _read_npy(path, what):
    """An array from a .npy file, or None after printing one line (exit code 2)."""
    import zipfile

    import numpy as np

    from qrt._fileio import open_for_reading
    try:
        fd, _ = open_for_reading(path, what)  # a FIFO would block np.load
        with os.fdopen(fd, "rb") as f:
            x = np.load(f, allow_pickle=False)
        if not isinstance(x, np.ndarray):
            raise ValueError("expected one array (.npy), got an .npz archive")
        return x
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        why = "an empty file" if isinstance(e, EOFError) else str(e)
        print(f"qrt-export: cannot read {what} {path}: {why}", file=sys.stderr)
        return None


def _main(p, args) -> int:
    if args.list_ops:
        from qrt_export._export import SUPPORTED
        print("\n".join(SUPPORTED))
        return 0
    if not args.output:
        p.error("the following arguments are required: -o/--output")
    if args.tensors:
        if args.model_file or args.model:
            p.error("--tensors takes no model")
        rc = _precheck(args.tensors, "--tensors")
        if rc:
            return rc
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

    import warnings

    # A command prints its report or one line: torch's deprecation and user warnings (torch.ao,
    # TypedStorage, quantized dtypes) and its logging chatter stay off the terminal.
    warnings.simplefilter("ignore")
    from qrt_export.pt2e import quiet_torch_logs
    with quiet_torch_logs():
        return _export_main(args)


def _export_main(args) -> int:
    import numpy as np

    from qrt_export._export import (MismatchError, ModelFileError, UnsupportedError, export,
                                    load_class)
    xs = []
    for path in [f for group in args.input for f in group]:
        x = _read_npy(path, "--input")
        if x is None:
            return 2
        if x.dtype.kind not in "fiub":
            print(f"qrt-export: --input {path} holds {x.dtype} values, not numbers",
                  file=sys.stderr)
            return 2
        xs.append(x if x.dtype.kind in "iu" and x.dtype.itemsize >= 4 else
                  x.astype(np.float32))   # index inputs (embeddings) stay integers
    calib = None
    if args.calib:
        cs = []
        for path in [f for group in args.calib for f in group]:
            c = _read_npy(path, "--calib")
            if c is None:
                return 2
            if c.dtype.kind not in "fiub" or c.ndim < 1 or len(c) == 0:
                print(f"qrt-export: --calib {path} must hold a non-empty batch of numbers",
                      file=sys.stderr)
                return 2
            cs.append(c if c.dtype.kind in "iu" and c.dtype.itemsize >= 4 else
                      c.astype(np.float32))
        if len(cs) != len(xs):
            print(f"qrt-export: {len(xs)} --input file(s) but {len(cs)} --calibrate file(s): "
                  "give one calibration file per model input", file=sys.stderr)
            return 2
        if len({len(c) for c in cs}) != 1:
            print("qrt-export: the --calibrate files hold different numbers of samples "
                  f"({', '.join(str(len(c)) for c in cs)})", file=sys.stderr)
            return 2
        n = len(cs[0])
        calib = [tuple(c[i:i + 32] for c in cs) if len(cs) > 1 else cs[0][i:i + 32]
                 for i in range(0, n, 32)]
    x = tuple(xs) if len(xs) > 1 else xs[0]
    rc = _precheck(args.model_file) if args.model_file else _precheck(args.weights, "--weights")
    if rc:
        return rc
    try:
        if args.model:
            import pickle

            import torch
            model = load_class(args.model)()
            try:
                sd = torch.load(args.weights, map_location="cpu", weights_only=True)
            except (EOFError, pickle.UnpicklingError) as e:
                why = "the file ends early" if isinstance(e, EOFError) else \
                    (str(e).splitlines() or [type(e).__name__])[0]
                raise ModelFileError(f"cannot read --weights {args.weights} as a torch.save'd "
                                     f"state_dict ({why})") from None
            if isinstance(sd, dict) and "state_dict" in sd:
                sd = sd["state_dict"]
            model.load_state_dict(sd)
            src = f"{args.model} + {args.weights}"
        else:
            model, src = args.model_file, None
        rep = export(model, x, args.output, calibration_data=calib, check=not args.no_check,
                     source=src, allow_mismatch=args.allow_mismatch,
                     keep_float=args.keep_float, verbose=False)
        if rep.hint:  # the static-quantization command, with this call's own files
            rep.hint = rep.static_hint(args.model_file or f"--model {args.model} --weights "
                                       f"{args.weights}",
                                       " ".join(f for g in args.input for f in g), args.output)
        print(rep, file=sys.stderr)
    except ModelFileError as e:
        print(f"qrt-export: {e}", file=sys.stderr)
        return 2
    except UnsupportedError as e:
        print(f"qrt-export: {e}", file=sys.stderr)
        return 3
    except MismatchError as e:
        print(f"qrt-export: {e}", file=sys.stderr)
        return 4
    except (OSError, ValueError, TypeError, ImportError, AttributeError, RuntimeError,
            MemoryError) as e:
        from qrt.__main__ import interrupted
        if interrupted():   # a Ctrl-C that torch's or numpy's C code turned into this
            raise KeyboardInterrupt from None
        print(f"qrt-export: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

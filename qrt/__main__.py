# SPDX-License-Identifier: Apache-2.0
"""The ``qrt`` command line: inspect, verify, run and bench ``.bin`` models; the demo.

Exit codes: 0 success, 1 invalid blob (FormatError), 2 bad arguments or unreadable files
(missing, a directory, a FIFO, a device, a bad .npy/.npz), 3 not enough memory, 4 internal
error (a bug: please report it), 130 interrupted (Ctrl-C at any point, numpy's import
included). Every failure is one line on stderr, never a traceback. A reader that leaves early
(``qrt inspect m.bin | head -1``) ends the command quietly with exit code 0, whether or not a
write hit the closed pipe (a short output fits the pipe buffer and never does).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

EXIT_OK, EXIT_BAD_BLOB, EXIT_USAGE, EXIT_NO_MEMORY, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130
EXIT_CODES_HELP = ("exit codes: 0 success, 1 invalid blob (qrt.FormatError), 2 bad arguments "
                   "or unreadable files, 3 not enough memory, 4 internal error, 130 "
                   "interrupted; a reader that leaves early (qrt inspect m.bin | head -1) is "
                   "not an error: exit code 0, nothing on stderr")


class _UsageError(Exception):
    pass


def _peak_rss_mb() -> float:
    try:
        import resource
        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return r / (1024.0 * 1024.0) if sys.platform == "darwin" else r / 1024.0
    except (ImportError, OSError):
        return float("nan")


def _load(path, verify=True):
    import qrt
    return qrt.load(path, verify=verify)  # FileNotFoundError, FIFOs etc.: see main()


# ---- inspect ----------------------------------------------------------------------------------
def _inspect(args) -> int:
    from qrt.loader import read_blob
    blob = read_blob(args.model, verify=not args.no_verify)
    h = blob.header
    if args.json:
        print(json.dumps({
            "header": {k: (v.decode() if isinstance(v, bytes) else v) for k, v in h.items()},
            "sections": blob.sections, "meta": blob.meta,
            "tensors": [{"index": t.index, "name": t.name, "kind": t.kind, "dtype": t.dtype,
                         "shape": list(t.shape), "batched": t.batched, "qscheme": t.qscheme,
                         "scale": t.scale, "zero_point": t.zero_point, "nbytes": t.nbytes,
                         "offset": t.data_offset} for t in blob.tensors],
            "ops": [{"index": o.index, "kind": o.kind, "name": o.name, "inputs": o.inputs,
                     "outputs": o.outputs, "params": o.params, "attrs": o.attrs,
                     "source": o.source} for o in blob.ops],
            "inputs": blob.inputs, "outputs": blob.outputs,
            "tensor_file": blob.tensor_file}, indent=1))
        return EXIT_OK
    size = blob.storage.nbytes
    print(f"{args.model}: qrt blob format {h['version_major']}.{h['version_minor']}, "
          f"{size} bytes")
    print(f"  header_size={h['header_size']} alignment={h['alignment']} flags={h['flags']:#x}"
          f"{' (fixed batch)' if blob.fixed_batch else ''} sections={h['section_count']} "
          f"meta_crc32={h['meta_crc32']:#010x} data_crc32={h['data_crc32']:#010x}")
    print("sections:")
    for name, s in sorted(blob.sections.items(), key=lambda kv: kv[1]["offset"]):
        print(f"  {name:<9} offset={s['offset']:>9} size={s['size']:>10} count={s['count']}")
    print("metadata:")
    for k, v in blob.meta.items():
        print(f"  {k}: {v}")
    print(f"tensors ({len(blob.tensors)}):")
    for t in blob.tensors:
        q = (f" scale={t.scale:.6g} zp={t.zero_point}" if t.qscheme == "per_tensor_affine"
             else f" per-channel axis={t.axis}" if t.qscheme == "per_channel_affine" else "")
        shape = ("N," if t.batched and not blob.fixed_batch else "") + \
            ",".join(str(d) for d in (t.shape[1:] if t.batched and not blob.fixed_batch
                                      else t.shape))
        where = f" @{t.data_offset} {t.nbytes} B" if t.kind == "constant" else ""
        print(f"  {t.index:>4} {t.kind[:5]:<5} {t.dtype:<8} [{shape}]{q} {t.name}{where}")
    print(f"ops ({len(blob.ops)}):")
    for o in blob.ops:
        a = json.dumps(o.attrs, separators=(",", ":"))
        if len(a) > 80:
            a = a[:77] + "..."
        print(f"  {o.index:>4} {o.kind:<20} {o.name:<20} in={o.inputs} out={o.outputs}"
              f"{' params=' + str(o.params) if o.params else ''} {a}")
    if blob.tensor_file:  # format 1.1: written by qrt.save (docs/tensors.md)
        from qrt.tensors_io import load_tensors
        print(f"tensor file: {len(load_tensors(args.model, verify=False))} tensors "
              "(read with qrt.load_tensors)")
        return EXIT_OK
    print(f"inputs: {[blob.tensors[i].name for i in blob.inputs]}  "
          f"outputs: {[blob.tensors[i].name for i in blob.outputs]}")
    if not args.no_model:
        from qrt.model import Model
        m = Model(blob)
        print(m.summary())
        try:
            print(m.stream()._sched_table())
        except (ValueError, TypeError, KeyError, IndexError, ZeroDivisionError,
                OverflowError) as e:     # a graph the schedule cannot follow
            print(f"streaming: refused: {e}")
    return EXIT_OK


# ---- verify -----------------------------------------------------------------------------------
def _verify(args) -> int:
    from qrt.loader import read_blob
    from qrt.model import Model
    t0 = time.perf_counter()
    blob = read_blob(args.model)
    if blob.tensor_file:  # a tensor file (qrt.save) verifies without a model
        from qrt.tensors_io import load_tensors
        n = len(load_tensors(args.model))
        print(f"{args.model}: OK (tensor file, {n} tensors, checksums verified, loaded in "
              f"{(time.perf_counter() - t0) * 1e3:.1f} ms)")
        return EXIT_OK
    m = Model(blob)
    dt = time.perf_counter() - t0
    print(f"{args.model}: OK ({len(m.ops)} ops, weights {m.weights_nbytes} B, arena "
          f"{m.arena_nbytes} B, checksums verified, loaded in {dt * 1e3:.1f} ms)")
    return EXIT_OK


# ---- run --------------------------------------------------------------------------------------
def _read_inputs(path, model):
    import zipfile
    import zlib

    import numpy as np

    from qrt._fileio import NotARegularFileError, open_for_reading
    try:
        fd, _ = open_for_reading(path, "--input")  # a FIFO would block np.load
        with os.fdopen(fd, "rb") as f:
            data = np.load(f, allow_pickle=False)
            if isinstance(data, np.ndarray):
                return [data]
            with data:
                if not data.files:
                    raise ValueError("the .npz holds no arrays")
                names = [s.name for s in model.inputs]
                keys = names if all(n in data.files for n in names) else data.files
                return [data[k] for k in keys]
    except FileNotFoundError:
        raise _UsageError(f"no such file: --input {path}") from None
    except (IsADirectoryError, NotARegularFileError) as e:
        raise _UsageError(f"--input: {e}") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, KeyError) as e:
        what = "an empty file" if isinstance(e, EOFError) else f"{type(e).__name__}: {e}"
        raise _UsageError(f"cannot read --input {path} as .npy/.npz ({what})") from None


def _to_qrt_input(x, spec):
    import numpy as np

    import qrt
    if spec.dtype == "float32":   # as Model() does: float32 only, never a silent conversion
        if x.dtype != np.float32:
            how = (" (save it as float32: np.save(path, x.astype(np.float32)))"
                   if x.dtype.kind in "fiub" else "")
            raise _UsageError(f"input {spec.name!r} takes float32 values, got dtype "
                              f"{x.dtype}{how}")
        return np.ascontiguousarray(x)
    if spec.dtype in ("int64", "int32"):  # index input: the dtypes Model() takes
        if x.dtype != np.dtype(spec.dtype) and (spec.dtype, x.dtype) != ("int64", np.int32):
            raise _UsageError(f"input {spec.name!r} takes {spec.dtype} indices, got dtype "
                              f"{x.dtype} (save it with .astype(np.{spec.dtype}))")
        return np.ascontiguousarray(x)
    dt = getattr(qrt, spec.dtype)
    if x.dtype.kind not in "iu":
        raise _UsageError(f"input {spec.name!r} is quantized ({spec.dtype}, scale "
                          f"{spec.scale}, zero_point {spec.zero_point}): give its integer codes "
                          f"(dtype {dt.numpy_dtype.name}), not {x.dtype} values")
    if x.size and (x.min() < dt.qmin or x.max() > dt.qmax):
        raise _UsageError(f"input {spec.name!r}: codes must lie in [{dt.qmin}, {dt.qmax}] for "
                          f"{spec.dtype}, got [{x.min()}, {x.max()}]")
    return qrt.from_int_repr(np.ascontiguousarray(x, dtype=dt.numpy_dtype), spec.scale,
                             spec.zero_point, dt)


def _run(args) -> int:

    import qrt
    m = _load(args.model, verify=not args.no_verify)
    xs = _read_inputs(args.input, m)
    if len(xs) != len(m.inputs):
        raise _UsageError(f"the model takes {len(m.inputs)} input(s) "
                          f"({', '.join(s.name for s in m.inputs)}); --input {args.input} "
                          f"holds {len(xs)}")
    xs = [_to_qrt_input(x, s) for x, s in zip(xs, m.inputs)]
    try:
        ys = m.flat(*xs)
    except (ValueError, TypeError) as e:
        raise _UsageError(str(e)) from None
    arrs = [v.int_repr().copy() if isinstance(v, qrt.QTensor) else v for v in ys]
    return _write_outputs(args.output, m.outputs, arrs)


def _write_outputs(out, specs, arrs) -> int:
    """Print each output's shape and dtype, and its values or (``out``) save them under the
    names numpy would use: one .npy, or an .npz of several, replaced atomically (tmp, fsync,
    rename). Shared by ``qrt run`` and ``qrt stream``."""
    import numpy as np

    from qrt._fileio import replace_file
    if out:
        if os.path.isdir(out):
            raise _UsageError(f"--output {out} is a folder; give a file name (y.npy for one "
                              "output, y.npz for several)")
        if len(arrs) == 1 and not out.endswith(".npz"):
            out += "" if out.endswith(".npy") else ".npy"
            replace_file(out, lambda f: np.save(f, arrs[0]))
        else:
            out += "" if out.endswith(".npz") else ".npz"
            replace_file(out, lambda f: np.savez(f, **{s.name: a for s, a in zip(specs, arrs)}))
    for s, a in zip(specs, arrs):
        print(f"{s.name}: shape {a.shape} dtype {a.dtype}" + (f" -> {out}" if out else ""))
        if not out:
            print(a)
    return EXIT_OK


# ---- stream -----------------------------------------------------------------------------------
def _stream(args) -> int:
    """Feed a long signal to ``model.stream()`` in chunks of ``--chunk`` frames along time
    (then flush) and print or save the concatenated outputs (docs/streaming.md)."""
    import numpy as np

    import qrt
    m = _load(args.model, verify=not args.no_verify)
    if args.chunk < 1:
        raise _UsageError(f"--chunk must be >= 1, got {args.chunk}")
    xs = _read_inputs(args.input, m)
    if len(xs) != 1:
        raise _UsageError("qrt stream takes one array: the signal (a recurrent op's initial "
                          "state, if the model takes one, starts at zeros)")
    x = _to_qrt_input(xs[0], m.inputs[0])
    try:
        s = m.stream(time_axis=args.time_axis)
        ax = s.time_axis
        parts = []
        for a in range(0, max(1, x.shape[ax]), args.chunk):
            parts.append(s(np.ascontiguousarray(np.take(x, range(a, min(a + args.chunk,
                                                                     x.shape[ax])), axis=ax))))
        parts.append(s.flush())
    except (ValueError, TypeError) as e:
        raise _UsageError(str(e)) from None
    multi = isinstance(parts[0], tuple)
    per_out = list(zip(*parts)) if multi else [parts]
    arrs = []
    for k, ps in enumerate(per_out):
        oax = s.sched.axes[m.graph.outputs[k]]
        ps = [p.int_repr().copy() if isinstance(p, qrt.QTensor) else p for p in ps]
        arrs.append(ps[-1] if oax is None else np.concatenate(ps, axis=oax))
    print(f"streamed {x.shape[ax]} frames in chunks of {args.chunk}: latency {s.latency} "
          f"frames, state {s.state_nbytes} B", file=sys.stderr)
    return _write_outputs(args.output, m.outputs, arrs)


# ---- bench ------------------------------------------------------------------------------------
_progress_line_open = False   # a progress bar is on stderr's current line (no newline yet)


def _progress(i, n, t0, stream=sys.stderr):
    global _progress_line_open
    _progress_line_open = True
    width = 30
    done = int(width * i / n)
    el = time.perf_counter() - t0
    eta = el / max(i, 1) * (n - i)
    stream.write(f"\r  [{'#' * done}{'.' * (width - done)}] {i}/{n} {el:5.1f}s eta {eta:5.1f}s")
    stream.flush()


def _bench_inputs(m, batch, seed=0):
    """Random inputs of ``batch`` for every model input (float32, or codes of its dtype;
    index inputs: zeros, with the offsets the ops accept)."""
    import numpy as np

    import qrt
    rng = np.random.default_rng(seed)
    xs = []
    for s in m.inputs:
        shape = tuple(batch if d is None else d for d in s.shape)
        if s.dtype == "float32":
            xs.append(rng.standard_normal(shape).astype(np.float32))
        elif s.dtype in ("int64", "int32"):  # indices: row 0, offsets the ops accept
            xs.append(np.zeros(shape, s.dtype))
        else:
            dt = getattr(qrt, s.dtype)
            xs.append(qrt.from_int_repr(rng.integers(dt.qmin, dt.qmax + 1, shape).astype(
                dt.numpy_dtype), s.scale, s.zero_point, dt))
    by_id = dict(zip(m.graph.inputs, xs))
    for n in m.graph.nodes:
        if n.op.index_inputs:
            n.op.neutral_inputs(n, [by_id.get(i) for i in n.input_ids])
    return xs


def bench_model(m, batch=1, iters=200, warmup=10, seed=0, progress=None):
    """Latency stats (seconds) of ``m`` on random inputs of ``batch``."""
    import numpy as np

    xs = _bench_inputs(m, batch, seed)
    for _ in range(warmup):
        m(*xs)
    times = np.empty(iters)
    t0 = time.perf_counter()
    show = progress if progress is not None else sys.stderr.isatty()
    last = t0
    for i in range(iters):
        a = time.perf_counter()
        m(*xs)
        b = time.perf_counter()
        times[i] = b - a
        if show and (b - last > 0.2 or i == iters - 1) and b - t0 > 1.0:
            _progress(i + 1, iters, t0)
            last = b
    _end_progress_line()
    return times


def _end_progress_line():
    """End the progress bar's line, so that what follows (a report, "interrupted") starts on
    its own line."""
    global _progress_line_open
    if _progress_line_open:
        _progress_line_open = False
        try:
            sys.stderr.write("\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


def _check_batch_fits(m, batch):
    """Refuse a batch whose inputs and activations would not fit in this machine's memory."""
    from qrt.model import _checked_batch
    try:
        _checked_batch(m, batch, "--batch")
    except ValueError as e:
        raise _UsageError(str(e)) from None
    arena = m.arena_nbytes * batch // (m._batch0 or 1)  # planning it would allocate it
    per = 0
    for s in m.inputs:
        n = 1
        for d in s.shape:
            n *= batch if d is None else d
        per += n * 8  # the random inputs are drawn as float64 first
    need = arena + per
    try:
        phys = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        phys = 0
    if phys and need > phys // 2:
        raise _UsageError(f"--batch {batch} needs about {need / 2**30:.1f} GiB (activations "
                          f"and inputs), more than half of this machine's "
                          f"{phys / 2**30:.1f} GiB")


def _bench(args) -> int:
    import numpy as np
    if args.iters < 1 or args.batch < 1 or args.warmup < 0:
        raise _UsageError("--iters and --batch must be >= 1, --warmup >= 0")
    m = _load(args.model)
    _check_batch_fits(m, args.batch)
    try:
        times = bench_model(m, args.batch, args.iters, args.warmup, progress=not args.quiet
                            and (sys.stderr.isatty() or args.progress))
    except (ValueError, TypeError) as e:
        raise _UsageError(str(e)) from None
    p50, p90, p99 = np.percentile(times, [50, 90, 99]) * 1e3
    print(f"{args.model}: batch {args.batch}, {args.iters} runs after {args.warmup} warm-up")
    print(f"  latency ms: p50 {p50:.3f}  p90 {p90:.3f}  p99 {p99:.3f}  "
          f"mean {times.mean() * 1e3:.3f}")
    print(f"  throughput: {args.batch / np.median(times):.1f} samples/s")
    bb = args.batch if m._batch0 is not None else None   # None: no batch dim (embeddings)
    print(f"  MACs/run: {m.macs(bb)}  arena: {m.arena_nbytes_for(bb)} B  "
          f"weights: {m.weights_nbytes} B  peak RSS: {_peak_rss_mb():.1f} MB")
    if args.profile:
        prof = m.profile(*_bench_inputs(m, args.batch), iters=args.iters, warmup=args.warmup)
        print(f"  per-op profile (median of {args.iters} runs each):")
        print("\n".join("  " + line for line in prof.table().splitlines()))
    return EXIT_OK


# ---- demo -------------------------------------------------------------------------------------
def _demo(args) -> int:
    import numpy as np

    from qrt.data import path as data_path
    from qrt.data.synthetic import CLASSES, make_dataset
    if args.n < 1 or args.batch < 1:
        raise _UsageError(f"--n and --batch must be >= 1 (got --n {args.n}, --batch "
                          f"{args.batch})")
    model_path = args.model or data_path("demo.bin")
    t0 = time.perf_counter()
    m = _load(model_path)
    t_load = time.perf_counter() - t0
    x, y = make_dataset(args.n, seed=args.seed)
    t0 = time.perf_counter()
    logits = np.concatenate([m(x[i:i + args.batch]) for i in range(0, len(x), args.batch)])
    t_all = time.perf_counter() - t0
    acc = float((logits.argmax(1) == y).mean())
    lat = bench_model(m, 1, 200, 10, progress=False)
    print(f"qrt demo: 1-D CNN keyword-spotting-style classifier, {len(CLASSES)} classes "
          f"({', '.join(CLASSES)})")
    print(f"  model {os.path.basename(model_path)}: {m._blob.storage.nbytes} B, "
          f"{len(m.ops)} ops, {m.macs(1)} MACs/sample, weights {m.weights_nbytes} B, "
          f"arena {m.arena_nbytes_for(1)} B (batch 1), loaded in {t_load * 1e3:.1f} ms")
    print(f"  accuracy on {args.n} fresh synthetic signals (seed {args.seed}): "
          f"{100 * acc:.2f} % (chance: {100 / len(CLASSES):.1f} %; torch's quantized model "
          "gives the same integers, so the same accuracy)")
    print(f"  latency batch 1: p50 {np.median(lat) * 1e3:.3f} ms, p99 "
          f"{np.percentile(lat, 99) * 1e3:.3f} ms; batch {args.batch} throughput "
          f"{len(x) / t_all:.0f} samples/s")
    print(f"  peak RSS {_peak_rss_mb():.1f} MB; torch imported: {'torch' in sys.modules}")
    print(f"next: qrt bench {model_path} --profile   (time per op)\n"
          f"      qrt inspect {model_path}   (what the blob holds)\n"
          "      docs/tutorial.md   (your own torch model, exported and run on a Pi)")
    return EXIT_OK


# ---- upgrade ----------------------------------------------------------------------------------
def _upgrade(args) -> int:
    from qrt._format.writer import rewrite
    m = _load(args.model, verify=True)
    old = m._blob.storage.nbytes   # before -o replaces it (qrt upgrade m.bin -o m.bin)
    b = rewrite(m.graph)
    n = b.write(args.output)
    v = b.format_version()
    print(f"{args.output}: format {v[0]}.{v[1]}, {n} bytes (was {old})")
    return EXIT_OK


_sigint_seen = False


def _on_sigint(signum, frame):
    global _sigint_seen
    _sigint_seen = True
    raise KeyboardInterrupt


def catch_sigint():
    """Note every Ctrl-C (then raise KeyboardInterrupt, as Python's own handler does): an
    interrupt inside a C extension's import can come out as another exception (numpy's
    ImportError "PyCapsule_Import could not import module"), which is then still an
    interrupt, not an error. Left alone when the program has its own handler."""
    import signal
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)


def interrupted() -> bool:
    """Whether a Ctrl-C arrived since :func:`catch_sigint`."""
    return _sigint_seen


def main(argv=None) -> int:
    catch_sigint()
    try:
        return _main(argv)
    except BaseException as e:  # before a command's own handler: argparse, numpy's import
        if not (isinstance(e, KeyboardInterrupt) or (isinstance(e, Exception)
                                                     and interrupted())):
            raise
        _end_progress_line()
        try:
            print("qrt: interrupted", file=sys.stderr)
        except (OSError, ValueError):
            pass
        return EXIT_INTERRUPTED


def _version() -> str:
    from qrt import __version__   # qrt/__init__.py imports nothing heavy
    return __version__


def _main(argv=None) -> int:
    _safe_streams()
    p = argparse.ArgumentParser(prog="qrt", description="qrt: run PyTorch-quantized models "
                                "without torch.", epilog=EXIT_CODES_HELP)
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("inspect", help="print a blob's header, tensors, ops, sizes, qparams")
    s.add_argument("model")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--no-verify", action="store_true", help="skip the payload checksum")
    s.add_argument("--no-model", action="store_true", help="do not build the model summary")
    s.set_defaults(func=_inspect)
    s = sub.add_parser("verify", help="check a blob: every format rule and both checksums")
    s.add_argument("model")
    s.set_defaults(func=_verify)
    s = sub.add_parser("run", help="run a blob on inputs from a .npy/.npz file")
    s.add_argument("model")
    s.add_argument("--input", "-i", required=True, help=".npy (one input) or .npz (by name)")
    s.add_argument("--output", "-o", help=".npy (one output) or .npz")
    s.add_argument("--no-verify", action="store_true", help="skip the payload checksum")
    s.set_defaults(func=_run)
    s = sub.add_parser("stream", help="run a blob over a long signal in chunks (streaming)")
    s.add_argument("model")
    s.add_argument("--input", "-i", required=True, help=".npy: the whole signal")
    s.add_argument("--chunk", type=int, default=160, help="frames per call (default 160)")
    s.add_argument("--time-axis", type=int, default=None,
                   help="the input's time axis (default: found from the graph)")
    s.add_argument("--output", "-o", help=".npy (one output) or .npz")
    s.add_argument("--no-verify", action="store_true", help="skip the payload checksum")
    s.set_defaults(func=_stream)
    s = sub.add_parser("bench", help="latency percentiles, throughput and peak RSS")
    s.add_argument("model")
    s.add_argument("--batch", type=int, default=1)
    s.add_argument("--iters", type=int, default=200)
    s.add_argument("--warmup", type=int, default=10)
    s.add_argument("--progress", action="store_true", help="progress bar even when not a tty")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.add_argument("--profile", action="store_true",
                   help="also print a per-op profile (median us per op, share, MACs)")
    s.set_defaults(func=_bench)
    s = sub.add_parser("demo", help="run the bundled keyword-spotting demo (no torch)")
    s.add_argument("--seed", type=int, default=1234)
    s.add_argument("--n", type=int, default=1000, help="number of synthetic signals")
    s.add_argument("--batch", type=int, default=64)
    s.add_argument("--model", help=argparse.SUPPRESS)
    s.set_defaults(func=_demo)
    s = sub.add_parser("upgrade", help="rewrite a blob of an older format in the current one")
    s.add_argument("model")
    s.add_argument("--output", "-o", required=True)
    s.set_defaults(func=_upgrade)
    args = p.parse_args(argv)
    return _run_command(f"qrt {args.cmd}", args.func, args)


def _safe_streams():
    """Paths that are not UTF-8 (surrogate escapes) must print, not raise UnicodeEncodeError."""
    for stream, errors in ((sys.stdout, "surrogateescape"), (sys.stderr, "backslashreplace")):
        try:
            stream.reconfigure(errors=errors)
        except (AttributeError, ValueError, OSError):
            pass


def _run_command(prog, func, *args) -> int:
    """Run a command; every failure becomes one line on stderr and an exit code."""
    from qrt._fileio import NotARegularFileError
    from qrt.loader import FormatError

    def say(msg):
        _end_progress_line()
        try:
            print(f"{prog}: {msg}", file=sys.stderr)
        except (OSError, ValueError):
            pass
    try:
        rc = func(*args)
        sys.stdout.flush()  # a closed pipe must fail here, not in the interpreter's exit flush
        return rc
    except FormatError as e:
        say(f"invalid blob: {e}")
        return EXIT_BAD_BLOB
    except _UsageError as e:
        say(f"error: {e}")
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader (head, less) went away: it took what it wanted. Stop quietly, as when a
        # short output fitted the pipe buffer, and keep the interpreter's final flush of stdout
        # from raising again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_OK
    except FileNotFoundError as e:
        say(f"error: no such file: {e.filename if e.filename is not None else e}")
        return EXIT_USAGE
    except (IsADirectoryError, NotARegularFileError, PermissionError) as e:
        say(f"error: {e}")
        return EXIT_USAGE
    except OSError as e:
        say(f"error: {e}")
        return EXIT_USAGE
    except MemoryError as e:
        say(f"error: not enough memory ({e or 'allocation failed'})")
        return EXIT_NO_MEMORY
    except KeyboardInterrupt:
        say("interrupted")
        return EXIT_INTERRUPTED
    except Exception as e:  # a bug in qrt: still one line, with what to report
        if interrupted():   # a Ctrl-C that a C extension turned into another exception
            say("interrupted")
            return EXIT_INTERRUPTED
        if os.environ.get("QRT_DEBUG"):
            raise
        say(f"internal error: {type(e).__name__}: {e} (set QRT_DEBUG=1 for a traceback; "
            "please report it)")
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: Apache-2.0
"""Batch-1 latency of torchvision's quantizable MobileNetV2 / MobileNetV3-Large (224x224): qrt
vs torch (qnnpack engine, the exactness reference, and the x86/fbgemm engines) vs onnxruntime
(QDQ U8S8) vs LiteRT + XNNPACK (int8 .tflite), side by side in one process, interleaved rounds,
medians, minimums and ratios to qrt, at one thread and at all threads.

Usage: python benchmarks/vision.py [--arch mobilenet_v2|mobilenet_v3_large] [--threads 1 2]
       [--rounds 7] [--calls 20] [--tflite-dir benchmarks/vision_peers/models] [--before]
       [--profile-rounds 5] [--ort-no-spin] [--settle-ms 20] [--only qrt onnx ...]
--settle-ms pauses before every timed block, so a peer's spinning pool threads (onnxruntime's
spin after a run, torch's OpenMP workers; run with OMP_WAIT_POLICY=PASSIVE to stop those) do
not hold the second core while the next runtime is timed; --ort-no-spin turns onnxruntime's
spinning off; --only times a subset (qrt alone: --only qrt).
--before also times qrt with its depthwise layers run the old way (im2col + one GEMM per
channel, ``qrt.nn.Conv2d._dw_direct = False``) in the same rounds, and profiles both per layer
(depthwise layers before / after and the biggest 1x1 convs, GMAC/s).
(needs torch and torchvision). Random weights, BatchNorm statistics re-estimated on random
inputs (tests/_torch_models.py). Every timed call takes the float input and returns the float
output (quantize and dequantize included). The qrt blob is checked exact vs torch qnnpack first.
Peers, each skipped with one line when its package or model file is missing:
- onnxruntime: the float torchvision model (same weights as the float model before torch
  quantization), torch.onnx.export, quant_pre_process, quantize_static QDQ, uint8 activations,
  int8 per-channel weights, MinMax calibration on 8 random inputs (as the torch side uses 4).
- LiteRT (ai-edge-litert, default op resolver = XNNPACK delegate): {tflite-dir}/{arch}_int8.tflite
  from benchmarks/vision_peers/make_tflite.py (keras.applications, its own random weights, same
  architecture; run in a separate tensorflow-cpu venv). NHWC input, so no layout transposes.
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import warnings

# one thread means one thread: numpy's OpenBLAS (qrt's float matmuls) would otherwise start
# its own pool on bigger products (set before numpy loads it)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
warnings.filterwarnings("ignore")


def quant_model(tvq, arch, engine, size, seed=0):
    import torch
    from _torch_models import bn_recalibrate
    torch.backends.quantized.engine = engine
    torch.manual_seed(seed)
    m = bn_recalibrate(getattr(tvq, arch)(weights=None, quantize=False), (4, 3, size, size))
    m.eval().fuse_model()
    m.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    torch.ao.quantization.prepare(m, inplace=True)
    g = torch.Generator().manual_seed(123)
    with torch.inference_mode():
        for _ in range(4):
            m(torch.randn(1, 3, size, size, generator=g))
    torch.ao.quantization.convert(m, inplace=True)
    return m


def onnx_model(tvq, arch, size, tmpdir):
    """QDQ U8S8 onnx file of the float model (None, reason) when onnxruntime is missing."""
    try:
        import onnxruntime  # noqa: F401
        from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod,
                                              QuantFormat, QuantType, quantize_static)
        from onnxruntime.quantization.shape_inference import quant_pre_process
    except ImportError as e:
        return None, f"onnxruntime missing ({e})"
    import torch
    from _torch_models import bn_recalibrate
    torch.manual_seed(0)
    m = bn_recalibrate(getattr(tvq, arch)(weights=None, quantize=False), (4, 3, size, size))
    m.eval()
    fp = os.path.join(tmpdir, f"{arch}_fp32.onnx")
    pre = os.path.join(tmpdir, f"{arch}_pre.onnx")
    qp = os.path.join(tmpdir, f"{arch}_qdq_u8s8.onnx")
    torch.onnx.export(m, (torch.randn(1, 3, size, size),), fp, opset_version=17, dynamo=False,
                      input_names=["input"], output_names=["logits"])
    quant_pre_process(fp, pre, skip_symbolic_shape=False)
    g = torch.Generator().manual_seed(123)
    batches = [{"input": torch.randn(1, 3, size, size, generator=g).numpy()} for _ in range(8)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(batches)

        def get_next(self):
            return next(self.it, None)
    quantize_static(pre, qp, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    calibrate_method=CalibrationMethod.MinMax)
    return qp, None


def ort_fn(path, threads, xn, spin=True):
    import onnxruntime as ort
    so = ort.SessionOptions()
    if not spin:  # its workers block at once after a run instead of spinning on a core
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return lambda: sess.run(None, {"input": xn})


def litert_fn(path, threads, xn):
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_path=path, num_threads=threads)
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    out = it.get_output_details()[0]["index"]
    xh = np.ascontiguousarray(xn.transpose(0, 2, 3, 1)).astype(inp["dtype"])
    if tuple(inp["shape"]) != xh.shape:
        raise ValueError(f"tflite input shape {tuple(inp['shape'])} != {xh.shape}")

    def f():
        it.set_tensor(inp["index"], xh)
        it.invoke()
        return it.get_tensor(out)
    return f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="mobilenet_v2")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count() or 1])
    ap.add_argument("--tflite-dir", default=os.path.join(HERE, "vision_peers", "models"))
    ap.add_argument("--no-fbgemm", action="store_true", help="leave out torch fbgemm (= x86)")
    ap.add_argument("--before", action="store_true",
                    help="also time qrt with depthwise as im2col + GEMM (the old path)")
    ap.add_argument("--profile-rounds", type=int, default=5,
                    help="interleaved profile passes (medians per layer)")
    ap.add_argument("--ort-no-spin", action="store_true",
                    help="onnxruntime with session.intra_op.allow_spinning=0")
    ap.add_argument("--settle-ms", type=float, default=20.0,
                    help="pause before each timed block, so the thread pools of the runtime "
                         "timed before (onnxruntime, torch's OpenMP, qrt) stop spinning on the "
                         "cores the next one needs")
    ap.add_argument("--only", nargs="+", default=None,
                    help="time only these (qrt, torch, onnxruntime, LiteRT: name prefixes)")
    a = ap.parse_args()
    import torch
    from _torch_models import torchvision
    torchvision()
    from torchvision.models import quantization as tvq
    import qrt
    import qrt_export
    x = torch.randn(1, 3, a.size, a.size, generator=torch.Generator().manual_seed(7))
    xn = x.numpy()
    tq = quant_model(tvq, a.arch, "qnnpack", a.size)
    tmp = tempfile.TemporaryDirectory()
    path = os.path.join(tmp.name, f"{a.arch}.bin")
    torch.backends.quantized.engine = "qnnpack"
    rep = qrt_export.export(tq, x, path, verbose=False)
    q = qrt.load(path)
    with torch.inference_mode():
        want = tq(x).numpy()
    exact = float((q(xn) == want).mean())
    q_before = None
    if a.before:
        import qrt.nn as qnn
        qnn.Conv2d._dw_direct = False  # plans are made at the first call and kept
        q_before = qrt.load(path)
        assert (q_before(xn) == want).all()
        qnn.Conv2d._dw_direct = True
    print(f"{a.arch} {a.size}x{a.size}: qrt vs torch qnnpack {100 * exact:.4f} % exact, "
          f"{rep.macs / 1e6:.2f} M MACs")
    engines = {"torch qnnpack": ("qnnpack", tq)}
    for eng in ("x86",) + (() if a.no_fbgemm else ("fbgemm",)):
        engines[f"torch {eng}"] = (eng, quant_model(tvq, a.arch, eng, a.size))
    onnx_path, why = onnx_model(tvq, a.arch, a.size, tmp.name)
    if onnx_path is None:
        print(f"skip onnxruntime: {why}")
    tfl = os.path.join(a.tflite_dir, f"{a.arch}_int8.tflite")
    try:
        import ai_edge_litert.interpreter  # noqa: F401
        if not os.path.exists(tfl):
            print(f"skip LiteRT: no {tfl} (build it with benchmarks/vision_peers/make_tflite.py)")
            tfl = None
    except ImportError as e:
        print(f"skip LiteRT: ai-edge-litert missing ({e})")
        tfl = None

    def run_torch(eng, m):
        def f():
            torch.backends.quantized.engine = eng
            with torch.inference_mode():
                m(x)
        return f
    for threads in a.threads:
        torch.set_num_threads(threads)
        qrt.set_num_threads(threads)
        fns = {"qrt": lambda: q(xn)}
        if q_before is not None:
            fns["qrt before (dw GEMM)"] = lambda: q_before(xn)
        fns.update({k: run_torch(*v) for k, v in engines.items()})
        if onnx_path is not None:
            fns["onnxruntime QDQ U8S8"] = ort_fn(onnx_path, threads, xn, not a.ort_no_spin)
        if tfl is not None:
            fns["LiteRT XNNPACK int8"] = litert_fn(tfl, threads, xn)
        if a.only:
            fns = {k: f for k, f in fns.items() if k == "qrt" or
                   any(k.startswith(o) for o in a.only)}
        for f in fns.values():
            f()
            f()
        times = {k: [] for k in fns}
        for _ in range(a.rounds):
            order = list(fns)
            random.shuffle(order)
            for k in order:
                time.sleep(a.settle_ms / 1e3)
                t0 = time.perf_counter()
                for _ in range(a.calls):
                    fns[k]()
                times[k].append(1e3 * (time.perf_counter() - t0) / a.calls)
        base = statistics.median(times["qrt"])
        print(f"{threads} thread(s), batch 1, {a.rounds} rounds x {a.calls} calls "
              f"(order shuffled per round); ratio = median / qrt's median")
        for k, ts in times.items():
            med = statistics.median(ts)
            print(f"  {k:20s} {med:8.2f} ms median ({min(ts):.2f} min)   {med / base:5.2f}x qrt's"
                  f"   {rep.macs / med / 1e6:6.1f} GMAC/s")
    qrt.set_num_threads(1)
    _profile(q, q_before, xn, a.profile_rounds)


def _profile(q, q_before, xn, rounds):
    """Per-op medians over `rounds` interleaved profile passes (1 thread): totals by op kind,
    the depthwise layers (before / after with --before) and the biggest 1x1 convs."""
    models = {"after": q} if q_before is None else {"before": q_before, "after": q}
    runs = {k: [] for k in models}
    for _ in range(rounds):
        for k, m in models.items():
            runs[k].append([r["us"] for r in m.profile(xn, iters=20, warmup=3).rows])
    prof = q.profile(xn, iters=5, warmup=1)
    med = {k: np.median(np.array(v), axis=0) for k, v in runs.items()}
    for k in models:
        by = {}
        for r, us in zip(prof.rows, med[k]):
            kind = r["op"] + (" dw" if r["op"].startswith("conv2d") and _dw(q, r["index"])
                              else "")
            t, n = by.get(kind, (0.0, 0))
            by[kind] = (t + us, n + 1)
        total = sum(t for t, _ in by.values())
        print(f"qrt{'' if q_before is None else ' ' + k} profile (1 thread, medians of "
              f"{rounds} passes): {total / 1e3:.2f} ms in ops")
        for kind, (t, n) in sorted(by.items(), key=lambda kv: -kv[1][0]):
            if t > 0:
                print(f"  {kind:22s} x{n:3d} {t / 1e3:7.2f} ms  {100 * t / total:5.1f} %")
    print("depthwise layers (1 thread): output shape, stride, us, GMAC/s"
          + ("" if q_before is None else " (before -> after)"))
    dws = [(i, r) for i, r in enumerate(prof.rows)
           if r["op"].startswith("conv2d") and _dw(q, r["index"])]
    sums = {k: 0.0 for k in models}
    macs = 0
    for i, r in dws:
        node = q.graph.nodes[r["index"]]
        macs += r["macs"]
        cells = []
        for k in models:
            us = med[k][i]
            sums[k] += us
            cells.append(f"{us:8.1f} us {r['macs'] / us / 1e3:5.1f}")
        print(f"  #{r['index']:3d} {str(tuple(r['shape'])):22s} s{node.attrs['stride'][0]}  "
              + "  ->  ".join(cells))
    print("  all depthwise: " + "  ->  ".join(
        f"{sums[k] / 1e3:.2f} ms {macs / sums[k] / 1e3:.1f} GMAC/s" for k in models))
    pw = [(i, r) for i, r in enumerate(prof.rows) if r["op"].startswith("conv2d")
          and not _dw(q, r["index"]) and
          tuple(q.graph.nodes[r["index"]].params["weight"].shape[2:]) == (1, 1)]
    pw.sort(key=lambda ir: -ir[1]["macs"])
    print("biggest 1x1 convs (1 thread):")
    for i, r in pw[:5]:
        w = q.graph.nodes[r["index"]].params["weight"]
        us = med["after"][i]
        print(f"  #{r['index']:3d} w{tuple(w.shape)} out {tuple(r['shape'])} {us:8.1f} us "
              f"{r['macs'] / us / 1e3:5.1f} GMAC/s")
    top = sorted(range(len(prof.rows)), key=lambda i: -med["after"][i])[:8]
    print("qrt slowest layers:")
    for i in top:
        r = prof.rows[i]
        node = q.graph.nodes[r["index"]]
        w = node.params.get("weight")
        print(f"  #{r['index']:3d} {r['op']:14s} {med['after'][i] / 1e3:6.3f} ms  "
              f"w{tuple(w.shape) if w is not None else ''} groups={node.attrs.get('groups', 1)}")


def _dw(q, index):
    node = q.graph.nodes[index]
    w = node.params.get("weight")
    return w is not None and w.shape[1] == 1 and node.attrs.get("groups", 1) > 1


if __name__ == "__main__":
    main()

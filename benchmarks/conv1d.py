# SPDX-License-Identifier: Apache-2.0
"""Benchmark qrt.nn.Conv1d against torch's quantized Conv1d (x86), onnxruntime QLinearConv and
LiteRT + XNNPACK (int8), at 1 and 2 threads.

Every shape of /work/shared/bench/conv1d_shapes.json (or --shapes FILE): quint8 input (zero point
128), per-channel symmetric qint8 weights, float bias, all runtimes in one process, interleaved
round-robin, the same thread count everywhere (ORT without spinning).  Prints per shape and
thread count the time per call, qrt's GMAC/s and share of the int8 peak (235 GMAC/s per core,
peer-performance.md), the ratios peer/qrt, and the quiet-machine best peer of
peer-performance.md for reference; then qrt's per-call overhead on a tiny conv.

LiteRT: ai-edge-litert (if importable) runs a one-op CONV_2D / DEPTHWISE_CONV_2D int8 flatbuffer
written here (input shifted to int8: x - 128); its 'same' padding is TFLite's (for 'strided' the
extra pad goes right, torch pads 2/2), its requantization is TFLite's fixed point, so its output is
compared with qrt's only as an agreement share.  Without it, the reference figure is printed,
labelled as not measured.

    python benchmarks/conv1d.py [--shapes FILE] [--rounds 7] [--only NAME ...] [--stat min]
                                [--threads 1 2] [--qnnpack]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import warnings

import numpy as np

import qrt

DEFAULT_SHAPES = "/work/shared/bench/conv1d_shapes.json"


def _block(fn, min_s=0.01):
    """Per-call seconds over a block of calls lasting about min_s."""
    fn()
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        dt = time.perf_counter() - t0
        if dt >= min_s:
            return dt / n


PEAK_GMACS = 235.0  # int8 VNNI per core, peer-performance.md section 1
# Best int8 peer per shape, quiet machine (peer-performance.md section 0): (1T us, 2T us, name)
REFERENCE = {
    "audio-frontend": (124, 70.0, "torch-onednn / litert-xnnpack"),
    "kws-conv": (103, 58.4, "litert-xnnpack"),
    "mid-3tap": (65.3, 38.4, "litert-xnnpack"),
    "deep-3tap": (61.0, 34.2, "litert-xnnpack"),
    "depthwise": (18.9, 18.8, "litert-xnnpack"),
    "pointwise": (58.0, 35.4, "litert-xnnpack"),
    "strided": (34.8, 21.2, "litert-xnnpack"),
    "dilated": (65.5, 38.4, "litert-xnnpack"),
    "batched": (516, 311, "litert-xnnpack"),
    "large": (3810, 1972, "litert-xnnpack"),
}


def make_case(sh, rng):
    n, c, L, o, k = sh["n"], sh["cin"], sh["length"], sh["cout"], sh["kernel"]
    s, p, d, g = sh["stride"], sh["padding"], sh["dilation"], sh["groups"]
    xs, xz = 0.05, 128
    x_int = rng.integers(0, 256, size=(n, c, L), dtype=np.uint8)
    w_int = rng.integers(-127, 128, size=(o, c // g, k), dtype=np.int8)
    w_scales = rng.uniform(0.002, 0.02, size=o)
    bias = rng.standard_normal(o).astype(np.float32)
    os_, oz = 0.2, 120
    return dict(n=n, c=c, L=L, o=o, k=k, s=s, p=p, d=d, g=g, xs=xs, xz=xz, x=x_int, w=w_int,
                ws=w_scales, b=bias, os=os_, oz=oz)


def qrt_runner(cs):
    m = qrt.nn.Conv1d(cs["c"], cs["o"], cs["k"], cs["s"], cs["p"], cs["d"], cs["g"])
    m.scale, m.zero_point = cs["os"], cs["oz"]
    m.set_weight_bias(qrt.from_int_repr_per_channel(cs["w"], cs["ws"], np.zeros(cs["o"], np.int64),
                                                    0), cs["b"])
    x = qrt.from_int_repr(cs["x"], cs["xs"], cs["xz"])
    out = m(x)  # preallocated output, as a model would run
    return (lambda: m(x, out=out)), (lambda: m(x).int_repr())


def torch_runner(cs, engine):
    import torch
    import torch.ao.nn.quantized as nnq

    torch.backends.quantized.engine = engine
    m = nnq.Conv1d(cs["c"], cs["o"], cs["k"], cs["s"], cs["p"], cs["d"], cs["g"])
    w = torch._make_per_channel_quantized_tensor(torch.from_numpy(cs["w"]),
                                                 torch.from_numpy(cs["ws"]),
                                                 torch.zeros(cs["o"], dtype=torch.long), 0)
    m.set_weight_bias(w, torch.from_numpy(cs["b"]))
    m.scale, m.zero_point = cs["os"], cs["oz"]
    x = torch._make_per_tensor_quantized_tensor(torch.from_numpy(cs["x"]), cs["xs"], cs["xz"])

    def call():
        torch.backends.quantized.engine = engine
        with torch.inference_mode():
            return m(x)

    return call, (lambda: call().int_repr().numpy())


def litert_runner(cs, threads):
    """LiteRT + XNNPACK on a one-op int8 TFLite flatbuffer built with its own schema module."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as S
    from ai_edge_litert.interpreter import Interpreter

    n, c, L, o, k = cs["n"], cs["c"], cs["L"], cs["o"], cs["k"]
    s, p, d, g = cs["s"], cs["p"], cs["d"], cs["g"]
    lout = (L + 2 * p - d * (k - 1) - 1) // s + 1
    dw = g > 1
    if dw and not (g == c == o):
        raise ValueError("only groups == 1 or depthwise")
    m = S.ModelT()
    m.version = 3
    code = S.BuiltinOperator.DEPTHWISE_CONV_2D if dw else S.BuiltinOperator.CONV_2D
    opc = S.OperatorCodeT()
    opc.builtinCode = opc.deprecatedBuiltinCode = code
    opc.version = 3
    m.operatorCodes = [opc]
    bufs = [S.BufferT()]

    def buf(arr):
        b = S.BufferT()
        b.data = np.frombuffer(arr.tobytes(), np.uint8)
        bufs.append(b)
        return len(bufs) - 1

    def quant(scale, zp, dim=0):
        q = S.QuantizationParametersT()
        q.scale = [float(v) for v in np.atleast_1d(scale).astype(np.float32)]
        q.zeroPoint = [int(v) for v in np.atleast_1d(zp)]
        q.quantizedDimension = dim
        return q

    def tensor(name, shape, typ, bufi, q):
        t = S.TensorT()
        t.name, t.shape, t.type, t.buffer, t.quantization = name, list(shape), typ, bufi, q
        return t

    w = cs["w"]
    if dw:
        wt = np.ascontiguousarray(w[:, 0, :].T.reshape(1, 1, k, o))
        wq = quant(cs["ws"], np.zeros(o, np.int64), 3)
    else:
        wt = np.ascontiguousarray(w.transpose(0, 2, 1).reshape(o, 1, k, c))
        wq = quant(cs["ws"], np.zeros(o, np.int64), 0)
    bias = np.round(cs["b"] / (cs["xs"] * cs["ws"])).astype(np.int32)
    I8, I32 = S.TensorType.INT8, S.TensorType.INT32
    tensors = [tensor("x", [n, 1, L, c], I8, 0, quant(cs["xs"], cs["xz"] - 128)),
               tensor("w", wt.shape, I8, buf(wt), wq),
               tensor("b", [o], I32, buf(bias), quant(cs["xs"] * cs["ws"], np.zeros(o, np.int64))),
               tensor("y", [n, 1, lout, o], I8, 0, quant(cs["os"], cs["oz"] - 128))]
    op = S.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = 0, [0, 1, 2], [3]
    if dw:
        opt = S.DepthwiseConv2DOptionsT()
        opt.depthMultiplier = 1
        op.builtinOptionsType = S.BuiltinOptions.DepthwiseConv2DOptions
    else:
        opt = S.Conv2DOptionsT()
        op.builtinOptionsType = S.BuiltinOptions.Conv2DOptions
    opt.padding = S.Padding.SAME if p > 0 else S.Padding.VALID
    opt.strideW, opt.strideH, opt.dilationWFactor, opt.dilationHFactor = s, 1, d, 1
    op.builtinOptions = opt
    sg = S.SubGraphT()
    sg.tensors, sg.inputs, sg.outputs, sg.operators = tensors, [0], [3], [op]
    m.subgraphs, m.buffers = [sg], bufs
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    it = Interpreter(model_content=bytes(b.Output()), num_threads=threads)
    it.allocate_tensors()
    xi = it.get_input_details()[0]["index"]
    yi = it.get_output_details()[0]["index"]
    x = np.ascontiguousarray((cs["x"].astype(np.int16) - 128).astype(np.int8)
                             .transpose(0, 2, 1)[:, None])

    def call():
        it.set_tensor(xi, x)
        it.invoke()
        return it.get_tensor(yi)

    def result():  # back to quint8 NCL
        return (call()[:, 0].astype(np.int16) + 128).astype(np.uint8).transpose(0, 2, 1)

    return call, result


def ort_runner(cs, threads=1):
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    o = cs["o"]
    inits = [
        numpy_helper.from_array(np.array(cs["xs"], np.float32), "xs"),
        numpy_helper.from_array(np.array(cs["xz"], np.uint8), "xz"),
        numpy_helper.from_array(cs["w"], "w"),
        numpy_helper.from_array(cs["ws"].astype(np.float32), "ws"),
        numpy_helper.from_array(np.zeros(o, np.int8), "wz"),
        numpy_helper.from_array(np.array(cs["os"], np.float32), "ys"),
        numpy_helper.from_array(np.array(cs["oz"], np.uint8), "yz"),
        # int32 bias with scale xs*ws (ORT's contract); rounding differs from torch's by design
        numpy_helper.from_array(np.round(cs["b"] / (cs["xs"] * cs["ws"])).astype(np.int32), "b"),
    ]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], strides=[cs["s"]], pads=[cs["p"], cs["p"]],
                            dilations=[cs["d"]], group=cs["g"], kernel_shape=[cs["k"]])
    graph = helper.make_graph([node], "qconv",
                              [helper.make_tensor_value_info("x", TensorProto.UINT8,
                                                             list(cs["x"].shape))],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feed = {"x": cs["x"]}
    return (lambda: sess.run(None, feed)), (lambda: sess.run(None, feed)[0])


def overhead(rounds=7):
    """Per-call time of qrt on a 1x1x1 conv with kernel 1 (Python -> Cython -> C and back)."""
    m = qrt.nn.Conv1d(1, 1, 1)
    m.scale, m.zero_point = 0.1, 128
    m.set_weight_bias(qrt.from_int_repr_per_channel(np.ones((1, 1, 1), np.int8), np.ones(1) * 0.01,
                                                    np.zeros(1, np.int64), 0), None)
    x = qrt.from_int_repr(np.full((1, 1, 1), 130, np.uint8), 0.05, 128)
    out = m(x)
    blocks = [_block(lambda: m(x, out=out), 0.02) for _ in range(rounds)]
    blocks_new = [_block(lambda: m(x), 0.02) for _ in range(rounds)]
    return min(blocks) * 1e6, statistics.median(blocks) * 1e6, statistics.median(blocks_new) * 1e6


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--qnnpack", action="store_true", help="also time torch's qnnpack module")
    ap.add_argument("--stat", choices=["median", "min"], default="median",
                    help="per-call time over the blocks: median (default) or min (robust on a "
                         "busy machine)")
    ap.add_argument("--peak", type=float, default=PEAK_GMACS,
                    help="int8 GMAC/s per core for the %% pk column (default: the Zen 4 figure of "
                         "peer-performance.md; an Ice Lake-SP core with two 512-bit VNNI ports "
                         "measures about 340)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    shapes = json.load(open(args.shapes))["shapes"]
    if args.only:
        shapes = [s for s in shapes if s["name"] in args.only]
    try:
        import ai_edge_litert.interpreter  # noqa: F401
        have_litert = True
    except Exception:  # noqa: BLE001
        have_litert = False
    names = ["qrt", "torch-x86"] + (["torch-qnnpack"] if args.qnnpack else []) + ["ort"]
    names += ["litert"] if have_litert else []
    print(f"qrt conv1d variant: {qrt._conv1d.ISA_NAMES[qrt._conv1d.variant()]}; {args.stat} of "
          f"{args.rounds} blocks; load average {os.getloadavg()[0]:.1f}; cores available "
          f"{len(os.sched_getaffinity(0))}")
    print(f"host CPU: {_cpu_model()}; % pk = share of {args.peak:.0f} GMAC/s per thread")
    if not have_litert:
        print("LiteRT not importable: the 'ref best peer' columns are peer-performance.md's "
              "figures (reference, not measured in this run)")
    print("| shape | MMAC | T | " + " | ".join(f"{n} us" for n in names) +
          " | qrt GMAC/s | % pk | " + " | ".join(f"{n}/qrt" for n in names[1:]) +
          " | ref best peer us (not measured here) | ref/qrt | qrt == qnnpack |" +
          (" litert == qrt |" if have_litert else ""))
    print("|---" * (2 * len(names) + 7 + have_litert) + "|")
    for sh in shapes:
        rng = np.random.default_rng(0)
        cs = make_case(sh, rng)
        macs = sh["n"] * sh["cout"] * ((sh["length"] + 2 * sh["padding"] - sh["dilation"] *
                                        (sh["kernel"] - 1) - 1) // sh["stride"] + 1) * \
            (sh["cin"] // sh["groups"]) * sh["kernel"]
        for T in args.threads:
            qrt.set_num_threads(T)
            torch.set_num_threads(T)
            runners = {"qrt": qrt_runner(cs), "torch-x86": torch_runner(cs, "x86")}
            qn = torch_runner(cs, "qnnpack")
            if args.qnnpack:
                runners["torch-qnnpack"] = qn
            try:
                runners["ort"] = ort_runner(cs, T)
            except Exception as e:  # noqa: BLE001 - ORT missing or refusing the graph
                print(f"  (ort unavailable: {e})")
            if have_litert:
                try:
                    runners["litert"] = litert_runner(cs, T)
                except Exception as e:  # noqa: BLE001
                    print(f"  (litert unavailable: {e})")
            mine = runners["qrt"][1]()
            same = np.array_equal(mine, qn[1]())
            lagree = ""
            if "litert" in runners:
                lr = runners["litert"][1]()
                lagree = (f" {100.0 * np.mean(lr == mine):.2f} % |" if lr.shape == mine.shape
                          else " shape differs |")
            times = {k: [] for k in runners}
            for r in range(args.rounds):
                order = list(runners)[r % len(runners):] + list(runners)[:r % len(runners)]
                for k in order:
                    times[k].append(_block(runners[k][0]))
            agg = statistics.median if args.stat == "median" else min
            med = {k: agg(v) * 1e6 for k, v in times.items()}
            cells = [f"{med[n]:,.1f}" if n in med else "-" for n in names]
            ratio = [f"{med[n] / med['qrt']:.2f}" if n in med else "-" for n in names[1:]]
            gm = macs / med["qrt"] / 1e3
            ref = REFERENCE.get(sh["name"])
            refc = "-" if ref is None or T > 2 else f"{ref[T - 1]:,} ({ref[2]})"
            refr = "-" if ref is None or T > 2 else f"{ref[T - 1] / med['qrt']:.2f}"
            print(f"| {sh['name']} | {macs / 1e6:.2f} | {T} | " + " | ".join(cells) +
                  f" | {gm:.1f} | {100 * gm / (args.peak * T):.0f} | " + " | ".join(ratio) +
                  f" | {refc} | {refr} | {same} |" + lagree, flush=True)
    qrt.set_num_threads(1)
    mn, md, mdn = overhead(args.rounds)
    print(f"qrt per-call overhead (1x1x1 conv, K=1): min {mn:.2f} us, median {md:.2f} us with "
          f"out=; median {mdn:.2f} us allocating the output")


if __name__ == "__main__":
    main()

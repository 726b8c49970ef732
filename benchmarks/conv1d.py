# SPDX-License-Identifier: Apache-2.0
"""Benchmark qrt.nn.Conv1d against torch's quantized Conv1d (x86, qnnpack) and onnxruntime.

Every shape of /work/shared/bench/conv1d_shapes.json (or --shapes FILE): quint8 input (zero point
128), per-channel symmetric qint8 weights, float bias, one thread everywhere, all runtimes in one
process, interleaved round-robin.  Prints the median time per call, GMAC/s and ratios to qrt.

    python benchmarks/conv1d.py [--shapes FILE] [--rounds 7] [--only NAME ...] [--stat min]
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


def ort_runner(cs):
    import onnx
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
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feed = {"x": cs["x"]}
    return (lambda: sess.run(None, feed)), (lambda: sess.run(None, feed)[0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--stat", choices=["median", "min"], default="median",
                    help="per-call time over the blocks: median (default) or min (robust on a "
                         "busy machine)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    shapes = json.load(open(args.shapes))["shapes"]
    if args.only:
        shapes = [s for s in shapes if s["name"] in args.only]
    rng = np.random.default_rng(0)
    names = ["qrt", "torch-x86", "torch-qnnpack", "ort"]
    print(f"qrt conv1d variant: {qrt._conv1d.variant()} (2 = AVX-512 VNNI, 0 = reference); "
          f"{args.stat} of {args.rounds} blocks; load average {os.getloadavg()[0]:.1f}")
    print("| shape | MMAC | " + " | ".join(f"{n} us" for n in names) +
          " | qrt GMAC/s | x86/qrt | qnnpack/qrt | ort/qrt | qrt == qnnpack |")
    print("|---" * (len(names) + 7) + "|")
    for sh in shapes:
        cs = make_case(sh, rng)
        runners = {"qrt": qrt_runner(cs), "torch-x86": torch_runner(cs, "x86"),
                   "torch-qnnpack": torch_runner(cs, "qnnpack")}
        try:
            runners["ort"] = ort_runner(cs)
        except Exception as e:  # noqa: BLE001 - ORT missing or refusing the graph
            print(f"  (ort unavailable: {e})")
        same = np.array_equal(runners["qrt"][1](), runners["torch-qnnpack"][1]())
        times = {k: [] for k in runners}
        for r in range(args.rounds):
            order = list(runners)[r % len(runners):] + list(runners)[:r % len(runners)]
            for k in order:
                times[k].append(_block(runners[k][0]))
        agg = statistics.median if args.stat == "median" else min
        med = {k: agg(v) * 1e6 for k, v in times.items()}
        macs = sh["n"] * sh["cout"] * ((sh["length"] + 2 * sh["padding"] - sh["dilation"] *
                                        (sh["kernel"] - 1) - 1) // sh["stride"] + 1) * \
            (sh["cin"] // sh["groups"]) * sh["kernel"]
        cells = [f"{med[n]:,.1f}" if n in med else "-" for n in names]
        ratio = [f"{med[n] / med['qrt']:.2f}" if n in med else "-" for n in names[1:]]
        print(f"| {sh['name']} | {macs / 1e6:.2f} | " + " | ".join(cells) +
              f" | {macs / med['qrt'] / 1e3:.1f} | " + " | ".join(ratio) + f" | {same} |",
              flush=True)


if __name__ == "__main__":
    main()

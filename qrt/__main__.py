# SPDX-License-Identifier: Apache-2.0
"""The ``qrt`` command line."""

import argparse
import sys
import time


def _demo(args) -> int:
    import numpy as np

    import qrt
    from qrt.quantization import MinMaxObserver

    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal(1_000_000).astype(np.float32)
    obs = MinMaxObserver(dtype=qrt.quint8)
    obs(x)
    scale, zp = obs.calculate_qparams()
    t0 = time.perf_counter()
    q = qrt.quantize_per_tensor(x, float(scale[0]), int(zp[0]), qrt.quint8)
    t1 = time.perf_counter()
    y = q.dequantize()
    t2 = time.perf_counter()
    err = np.abs(y - x).max()
    print(f"qrt {qrt.__version__}: quantize/dequantize demo on {x.size} float32 values")
    print(f"  observer qparams: scale={float(scale[0]):.6g} zero_point={int(zp[0])}")
    print(f"  quantize   {1e3 * (t1 - t0):7.2f} ms   dequantize {1e3 * (t2 - t1):7.2f} ms")
    print(f"  max |x - dequant(quant(x))| = {err:.6g} (half a step is {float(scale[0]) / 2:.6g})")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="qrt", description="qrt runtime command line")
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="run the built-in demo")
    d.add_argument("--seed", type=int, default=0)
    d.set_defaults(func=_demo)
    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

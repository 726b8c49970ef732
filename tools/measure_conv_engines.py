# SPDX-License-Identifier: Apache-2.0
"""Agreement of qrt (qnnpack arithmetic) with torch's x86 and fbgemm engines on random conv1d /
linear configurations (the test generators).  Prints exact-element %, exact cases and max LSB.

    python tools/measure_conv_engines.py [--cases 600]
"""

import argparse
import pathlib
import sys
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import test_conv1d as tc  # noqa: E402
import test_linear as tl  # noqa: E402


def _all_pad_window(c):
    """x86/oneDNN segfaults when an output window sees only padding (torch 2.13 bug)."""
    lo = (c["length"] + 2 * c["pad_left"] - c["dilation"] * (c["k"] - 1) - 1) // c["stride"] + 1
    for t in range(lo):
        taps = [t * c["stride"] + k * c["dilation"] - c["pad_left"] for k in range(c["k"])]
        if all(p < 0 or p >= c["length"] for p in taps):
            return True
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=600)
    args = ap.parse_args()
    import torch

    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    rng = np.random.default_rng(123)
    stats = {}

    def add(key, got, ref):
        s = stats.setdefault(key, [0, 0, 0, 0, 0])
        d = np.abs(got.astype(np.int64) - ref.astype(np.int64))
        s[0] += int((d == 0).sum())
        s[1] += d.size
        s[2] += int(d.max(initial=0) == 0)
        s[3] += 1
        s[4] = max(s[4], int(d.max(initial=0)))

    for i in range(args.cases):
        ties = i % 2 == 1
        c = tc.random_cfg(rng, ties=ties, big=i % 5 == 0)
        c["pad_right"] = c["pad_left"]
        if (c["length"] + 2 * c["pad_left"] - c["dilation"] * (c["k"] - 1) - 1) < 0:
            continue
        if _all_pad_window(c):
            continue
        qrt_y = tc.three_way(c)
        add(("conv1d", "qnnpack", ties), qrt_y, tc.torch_conv(torch, c))
        for eng in ("x86", "fbgemm"):
            orig = torch.backends.quantized.engine
            tc_engine = eng

            def run(c=c, e=tc_engine):
                torch.backends.quantized.engine = e
                x = torch._make_per_tensor_quantized_tensor(torch.from_numpy(c["x"]),
                                                            c["x_scale"], c["x_zp"])
                if c["per_channel"]:
                    w = torch._make_per_channel_quantized_tensor(
                        torch.from_numpy(c["w"]), torch.from_numpy(np.asarray(c["w_scales"])),
                        torch.from_numpy(np.asarray(c["w_zps"], np.int64)), 0)
                else:
                    w = torch._make_per_tensor_quantized_tensor(
                        torch.from_numpy(c["w"]), float(c["w_scales"][0]), int(c["w_zps"][0]))
                b = None if c["bias"] is None else torch.from_numpy(c["bias"])
                pk = torch.ops.quantized.conv1d_prepack(w, b, [c["stride"]], [c["pad_left"]],
                                                        [c["dilation"]], c["groups"])
                op = torch.ops.quantized.conv1d_relu if c["relu"] else torch.ops.quantized.conv1d
                return op(x, pk, c["out_scale"], c["out_zp"]).int_repr().numpy()

            add(("conv1d", eng, ties), qrt_y, run())
            torch.backends.quantized.engine = orig
    for i in range(args.cases // 2):
        ties = i % 2 == 1
        c = tl.random_linear(rng, ties=ties, big=i % 4 == 0)
        if c["x"].size == 0:
            continue
        qrt_y = tl.three_way(c)
        for eng in ("qnnpack", "x86", "fbgemm"):
            torch.backends.quantized.engine = eng
            x = torch._make_per_tensor_quantized_tensor(torch.from_numpy(c["x"]), c["x_scale"],
                                                        c["x_zp"])
            op = torch.ops.quantized.linear_relu if c["relu"] else torch.ops.quantized.linear
            ref = op(x, tl.torch_packed(torch, c), c["out_scale"], c["out_zp"])
            add(("linear", eng, ties), qrt_y, ref.int_repr().numpy())
        if not ties:
            yd = tl.dynamic_three_way(c)
            for eng in ("qnnpack", "x86", "fbgemm"):
                torch.backends.quantized.engine = eng
                ref = torch.ops.quantized.linear_dynamic(torch.from_numpy(c["xf"]),
                                                         tl.torch_packed(torch, c), False).numpy()
                s = stats.setdefault(("linear_dynamic", eng, False), [0, 0, 0, 0, 0.0])
                eq = yd.view(np.int32) == ref.view(np.int32)
                s[0] += int(eq.sum())
                s[1] += eq.size
                s[2] += int(eq.all())
                s[3] += 1
                s[4] = max(s[4], float(np.abs(yd - ref).max(initial=0)))
    print("| op | engine | set | exact elements | exact cases | max abs diff |")
    print("|---|---|---|---|---|---|")
    for (op, eng, ties), (eq, n, ce, cn, mx) in sorted(stats.items()):
        unit = "" if op == "linear_dynamic" else " LSB"
        print(f"| {op} | {eng} | {'ties' if ties else 'random'} | {eq}/{n} "
              f"({100.0 * eq / max(n, 1):.3f} %) | {ce}/{cn} | {mx:g}{unit} |")


if __name__ == "__main__":
    main()

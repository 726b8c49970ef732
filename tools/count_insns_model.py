# SPDX-License-Identifier: Apache-2.0
"""The two halves of tools/count-insns-model.sh (the ARM speed proxy for a whole model).

    python tools/count_insns_model.py export DIR
        (x86-64 host, the venv with torch + torchvision + qrt + qrt_export) writes
        DIR/mobilenet_v2.bin (torchvision's quantizable MobileNetV2, 224x224, eager, qnnpack,
        exactly as benchmarks/vision.py builds it), DIR/input.npy (1x3x224x224 float32) and
        DIR/qrt_x86.npy (the x86-64 qrt output for that input, which the guest must equal).

    python3 tools/count_insns_model.py run qrt|litert MODEL DIR N
        (the target's CPython under qemu-user with tools/qemu_insn_count.c, mark=NR) imports
        numpy and the runtime, loads MODEL, runs N single-thread inferences on DIR/input.npy
        (float in, float out: quantize / dequantize included, as benchmarks/vision.py times
        them) and calls os.write(-1, b"x" * K) between phases, so the plugin prints the
        executed-instruction count after each phase:
            mark 1  numpy imported      mark 2  runtime imported    mark 3  model loaded
            mark 3+i  inference i done
        No torch here: only numpy and qrt, or numpy and ai_edge_litert. For qrt, one more
        instrumented pass marks 99, then 100 + k after op k (per-op-kind counts).

    python3 tools/count_insns_model.py report RAW...
        (host) the markdown tables of docs/raspberry-pi.md from the runs' saved outputs.
"""

import os
import sys


def mark(k):
    try:
        os.write(-1, b"x" * k)
    except OSError:
        pass


def export(out):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "benchmarks"))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    import numpy as np
    import torch
    from _torch_models import torchvision
    torchvision()
    from torchvision.models import quantization as tvq
    from vision import quant_model

    import qrt
    import qrt_export
    os.makedirs(out, exist_ok=True)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(7))
    tq = quant_model(tvq, "mobilenet_v2", "qnnpack", 224)
    path = os.path.join(out, "mobilenet_v2.bin")
    torch.backends.quantized.engine = "qnnpack"
    rep = qrt_export.export(tq, x, path, verbose=False)
    xn = x.numpy()
    y = qrt.load(path)(xn)
    with torch.inference_mode():
        exact = float((y == tq(x).numpy()).mean())
    np.save(os.path.join(out, "input.npy"), xn)
    np.save(os.path.join(out, "qrt_x86.npy"), y)
    print(f"export: {path} {os.path.getsize(path)} bytes, {rep.macs / 1e6:.1f} M MACs, "
          f"x86-64 qrt vs torch qnnpack {100 * exact:.4f} % exact")


def run(runtime, model, d, n):
    import numpy as np
    x = np.load(os.path.join(d, "input.npy"))
    mark(1)
    if runtime == "qrt":
        import qrt
        import qrt._cpu as cpu
        mark(2)
        qrt.set_num_threads(1)
        m = qrt.load(model)
        fn = lambda: m(x)  # noqa: E731

        def info():
            return f"qrt {qrt.__version__} selected={cpu.selected()} features={cpu.features()}"
    else:
        from ai_edge_litert.interpreter import Interpreter
        mark(2)
        it = Interpreter(model_path=model, num_threads=1)
        it.allocate_tensors()
        inp = it.get_input_details()[0]
        out = it.get_output_details()[0]["index"]
        xh = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).astype(inp["dtype"])

        def fn():
            it.set_tensor(inp["index"], xh)
            it.invoke()
            return it.get_tensor(out)

        def info():
            import importlib.metadata as md  # ~75 M instructions: never inside a phase
            return f"ai-edge-litert {md.version('ai-edge-litert')}"
    mark(3)
    y = None
    for i in range(n):
        y = fn()
        mark(4 + i)
    if runtime == "qrt" and n:
        by_op(m, x)
    maps = os.environ.get("QRT_INSN_MAPS")
    if maps:  # the guest's mappings, for tools/insn_hist.py (hist= of the plugin)
        with open("/proc/self/maps") as f, open(maps, "w") as g:
            g.write(f.read())
    msg = f"{info()}; numpy {np.__version__}"
    if y is not None:
        msg += f"; out {y.shape} argmax {int(y.argmax())}"
        ref = os.path.join(d, "qrt_x86.npy")
        if runtime == "qrt" and os.path.exists(ref):
            msg += f"; == x86-64 qrt: {100 * float((y == np.load(ref)).mean()):.4f} %"
    print(msg, flush=True)


def by_op(m, x):
    """One more, instrumented qrt pass (as Model.profile does it): mark 99, then mark 100 + k
    after op k; prints "ops: KIND MACS ..." so the host can sum instructions per op kind.
    Uses qrt internals; says so and skips if they changed."""
    try:
        from qrt.model import _copy_in
        plan = m._exec.plan(m._in_shapes((x,)))
        kinds = []
        for r in m._rows(plan):
            node = m.graph.nodes[r["index"]]
            w = node.params.get("weight")
            kind = r["op"]
            if kind.startswith("conv2d") and w is not None:
                if w.shape[1] == 1 and node.attrs.get("groups", 1) > 1:
                    kind += "-dw"
                elif w.shape[2:] == (1, 1):
                    kind += "-1x1"
                else:
                    kind += f"-{w.shape[2]}x{w.shape[3]}"
            kinds.append(f"{kind}:{r['macs']}")
        where = {id(nd): k for k, nd in enumerate(m.graph.nodes)}
        with m._lock:
            for v, dst in zip((x,), plan.in_views):
                _copy_in(dst, v)
            mark(99)
            for nd, call in plan.bound:
                call[0](*call[1], **call[2])
                mark(100 + where[id(nd)])
    except Exception as e:  # noqa: BLE001 (a diagnostic only)
        print(f"by-op: unavailable ({type(e).__name__}: {e})", flush=True)
        return
    print("ops: " + " ".join(kinds), flush=True)


def report(raws):
    """Markdown tables from the raw guest outputs that tools/count-insns-model.sh saved."""
    rows, byop = {}, {}
    for path in raws:
        marks, ops = {}, []
        for line in open(path):
            f = line.split()
            if f[:1] == ["mark"]:
                marks[int(f[1])] = (int(f[3]), int(f[5]))
            elif f[:1] == ["ops:"]:
                ops = [tuple(o.rsplit(":", 1)) for o in f[1:]]
            elif f[:1] == ["run"]:
                key, wall = tuple(f[1:4]), int(f[4])
        ins = [marks[k][0] for k in range(1, 7)]
        dot = [marks[k][1] for k in range(1, 7)]
        inf = [ins[i + 1] - ins[i] for i in range(2, 5)]
        rows[key] = dict(imp=ins[1] - ins[0], load=ins[2] - ins[1], inf=inf, n1=inf[0],
                         n3=sum(inf) / 3, dot=(dot[5] - dot[2]) / 3, wall=wall)
        if ops and 99 in marks:
            prev, acc = marks[99][0], {}
            for k in sorted(k for k in marks if k >= 100):
                kind, macs = ops[k - 100]
                t, mc, c = acc.get(kind, (0, 0, 0))
                acc[kind] = (t + marks[k][0] - prev, mc + int(macs), c + 1)
                prev = marks[k][0]
            byop[key] = acc
    M = lambda v: f"{v / 1e6:,.1f} M"  # noqa: E731
    print("| qemu -cpu | runtime | import | load | inference 1 | inference 2, 3 "
          "| **per inference, N=1** | **per inference, N=3** | SDOT/UDOT per inference |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (arch, cpu, rt), r in rows.items():
        name = {"qrt": "qrt", "litert": "LiteRT + XNNPACK"}[rt]
        print(f"| {arch} {cpu} | {name} | {M(r['imp'])} | {M(r['load'])} | {M(r['inf'][0])} "
              f"| {M(r['inf'][1])}, {M(r['inf'][2])} | **{M(r['n1'])}** | **{M(r['n3'])}** "
              f"| {M(r['dot']) if arch == 'aarch64' else 'n/a'} |")
    print()
    for cpu in ("cortex-a72", "cortex-a76"):
        q, li = rows.get(("aarch64", cpu, "qrt")), rows.get(("aarch64", cpu, "litert"))
        if q and li:
            print(f"- {cpu}: qrt / LiteRT = **{q['n1'] / li['n1']:.2f}x** (N=1), "
                  f"**{q['n3'] / li['n3']:.2f}x** (N=3), {q['inf'][2] / li['inf'][2]:.2f}x "
                  f"(third inference alone) executed instructions per inference")
    print("- wall seconds per run (whole process, emulated): "
          + ", ".join(f"{' '.join(k[1:])} {r['wall']}" for k, r in rows.items()))
    for (arch, cpu, rt), acc in byop.items():
        tot = sum(t for t, _, _ in acc.values())
        print(f"\nqrt by op kind, {arch} {cpu} (one instrumented pass, {M(tot)} in ops):\n")
        print("| op kind | ops | MACs | instructions | share | instructions / MAC |")
        print("|---|---|---|---|---|---|")
        for kind, (t, mc, c) in sorted(acc.items(), key=lambda kv: -kv[1][0]):
            print(f"| {kind} | {c} | {M(mc)} | {M(t)} | {100 * t / tot:.1f} % | "
                  f"{t / mc:.2f} |" if mc else f"| {kind} | {c} | - | {M(t)} | "
                  f"{100 * t / tot:.1f} % | - |")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "export":
        export(sys.argv[2])
    elif len(sys.argv) == 6 and sys.argv[1] == "run" and sys.argv[2] in ("qrt", "litert"):
        run(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "report":
        report(sys.argv[2:])
    else:
        raise SystemExit(__doc__)

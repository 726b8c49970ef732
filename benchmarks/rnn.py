# SPDX-License-Identifier: Apache-2.0
"""Recurrent models: qrt vs torch (dynamic-quantized and float) vs onnxruntime, one thread.

Models (issue #16): a keyword-spotting LSTM (2 x 64, batch_first, 40 MFCC bands, + Linear), a
GRU 1 x 128 classifier, a bidirectional LSTM tagger, a Silero-VAD-style streaming model
(float Conv1d front end, LSTM with (h, c) in and out per 30 ms chunk, Linear + sigmoid), and a
Keyword-Transformer-style encoder (patch Linear 40 -> 64 over 63 frames, class token: 64
tokens, 4 layers, d 64, 2 heads, ff 128, gelu).
Each is quantized with torch.ao.quantization.quantize_dynamic ({LSTM, GRU, Linear}, qint8,
qnnpack), exported with qrt_export, and timed in one process, interleaved round-robin, all at
one thread: qrt, torch dynamic, torch float, and onnxruntime (the float model through
torch.onnx.export + onnxruntime.quantization.quantize_dynamic, QInt8 weights); and the float
model exported as float ops (``keep_float``: rnn_float, the float attention lowering) as
qrt_f32, against torch float.  Also reports
agreement (max |qrt - torch dynamic|) and the per-step cost of a tiny recurrent layer
(input 1, hidden 1: everything that is not the GEMMs' arithmetic).

    python benchmarks/rnn.py [--rounds 7] [--frames 100] [--batches 1 8] [--clock wall|thread]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings

# one thread means one thread: numpy's OpenBLAS (qrt's float matmuls) would otherwise start
# its own pool on bigger products (set before numpy loads it)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

warnings.filterwarnings("ignore")


# --clock thread: this thread's CPU time (time.thread_time) instead of wall time: every
# contender runs in the calling thread at one thread (qrt, torch, onnxruntime with one
# intra-op thread and no spinning), so on a shared, loaded host it leaves out the time the
# thread waits for a core
CLOCK = time.perf_counter


def _block(fn, min_s=0.02):
    fn()
    n, t0 = 0, CLOCK()
    while True:
        fn()
        n += 1
        dt = CLOCK() - t0
        if dt >= min_s:
            return dt / n


def models(torch, frames):
    nn = torch.nn

    class KWS(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(40, 64, num_layers=2, batch_first=True)
            self.fc = nn.Linear(64, 12)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.fc(y[:, -1])

    class GRUClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(40, 128, batch_first=True)
            self.fc = nn.Linear(128, 10)

        def forward(self, x):
            _, h = self.gru(x)
            return self.fc(h[0])

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(64, 64, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(128, 17)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.fc(y)

    class VAD(nn.Module):
        """Silero-VAD-like: 30 ms chunk (480 samples at 16 kHz) -> conv features -> LSTM."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(1, 64, 32, stride=16)
            self.lstm = nn.LSTM(64, 64, batch_first=True)
            self.fc = nn.Linear(64, 1)

        def forward(self, x, h, c):
            f = torch.relu(self.conv(x)).transpose(1, 2)
            y, (h, c) = self.lstm(f, (h, c))
            return torch.sigmoid(self.fc(y[:, -1])), h, c

    class KWT(nn.Module):
        """Keyword Transformer style (tests/test_transformer.py): 63 frames + class token."""

        def __init__(self, n_mels=40, frames=63, dim=64, depth=4, heads=2, ff=128, classes=12):
            super().__init__()
            self.patch = nn.Linear(n_mels, dim)
            self.cls = nn.Parameter(torch.randn(1, 1, dim))
            self.pos = nn.Parameter(torch.randn(1, frames + 1, dim) * 0.02)
            layer = nn.TransformerEncoderLayer(dim, heads, ff, batch_first=True,
                                               activation="gelu")
            self.encoder = nn.TransformerEncoder(layer, depth)
            self.norm = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, classes)

        def forward(self, x):
            x = self.patch(x)
            cls = self.cls.expand(x.shape[0], -1, -1)
            x = torch.cat((cls, x), dim=1) + self.pos
            x = self.encoder(x)
            return self.head(self.norm(x[:, 0]))

    return [("kws_lstm", KWS, lambda b: (torch.randn(b, frames, 40),)),
            ("gru_classifier", GRUClassifier, lambda b: (torch.randn(b, frames, 40),)),
            ("bilstm_tagger", Tagger, lambda b: (torch.randn(b, frames, 64),)),
            ("silero_vad_like", VAD, lambda b: (torch.randn(b, 1, 480), torch.zeros(1, b, 64),
                                                torch.zeros(1, b, 64))),
            ("kwt_transformer", KWT, lambda b: (torch.randn(b, 63, 40),))]


def ort_session(torch, fm, inputs, tmp):
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic
    f32 = os.path.join(tmp, "m.onnx")
    q8 = os.path.join(tmp, "m.int8.onnx")
    names = [f"in{k}" for k in range(len(inputs))]
    kw = {"dynamo": False} if "dynamo" in torch.onnx.export.__code__.co_varnames else {}
    torch.onnx.export(fm, inputs, f32, input_names=names, opset_version=17, **kw)
    quantize_dynamic(f32, q8, weight_type=QuantType.QInt8)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    s = ort.InferenceSession(q8, so, providers=["CPUExecutionProvider"])
    feed = {n: x.numpy() for n, x in zip(names, inputs)}
    return lambda: s.run(None, feed)


def per_step_cost(torch, qrt, qrt_export, tmp, steps=1000, rounds=5):
    """us per step of a 1 -> 1 LSTM (hidden 1): the loop's own cost around tiny GEMMs."""
    m = torch.ao.quantization.quantize_dynamic(
        torch.nn.Sequential(torch.nn.LSTM(1, 1)).eval(), {torch.nn.LSTM}, dtype=torch.qint8)

    class W(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.r = m[0]

        def forward(self, x):
            return self.r(x)[0]
    path = os.path.join(tmp, "tiny.bin")
    qrt_export.export(W(), (torch.randn(4, 1, 1),), path, verbose=False, check=False)
    qm = qrt.load(path)
    xs = torch.randn(steps, 1, 1)
    x1, xn = xs[:1].numpy(), xs.numpy()
    res = []
    with torch.no_grad():
        for _ in range(rounds):
            a = _block(lambda: qm(xn)) - _block(lambda: qm(x1))
            b = _block(lambda: m(xs)) - _block(lambda: m(xs[:1]))
            res.append((a / (steps - 1) * 1e6, b / (steps - 1) * 1e6))
    return statistics.median(r[0] for r in res), statistics.median(r[1] for r in res)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--frames", type=int, default=100)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--clock", choices=("wall", "thread"), default="wall",
                    help="wall: time.perf_counter; thread: this thread's CPU time (a loaded "
                         "host's waits for a core left out)")
    args = ap.parse_args(argv)
    global CLOCK
    CLOCK = time.thread_time if args.clock == "thread" else time.perf_counter
    import torch
    torch.set_num_threads(1)
    torch.backends.quantized.engine = "qnnpack"
    import qrt
    import qrt_export
    qrt.set_num_threads(1) if hasattr(qrt, "set_num_threads") else None
    try:
        import onnxruntime  # noqa: F401
        have_ort = True
    except ImportError:
        have_ort = False
    torch.manual_seed(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, cls, make in models(torch, args.frames):
            fm = cls().eval()
            dm = torch.ao.quantization.quantize_dynamic(
                fm, {torch.nn.LSTM, torch.nn.GRU, torch.nn.Linear}, dtype=torch.qint8)
            for b in args.batches:
                if name == "silero_vad_like" and b != 1:
                    continue
                inputs = make(b)
                path = os.path.join(tmp, f"{name}_{b}.bin")
                torch.backends.mha.set_fastpath_enabled(name != "kwt_transformer")
                qrt_export.export(dm, inputs, path, verbose=False, check=False)
                torch.backends.mha.set_fastpath_enabled(True)
                qm = qrt.load(path)
                qin = [x.numpy() for x in inputs]
                with torch.no_grad():
                    torch.backends.mha.set_fastpath_enabled(name != "kwt_transformer")
                    t = dm(*inputs)
                    torch.backends.mha.set_fastpath_enabled(True)
                t = t if isinstance(t, tuple) else (t,)
                q = qm.flat(*qin)
                dev = max(float(np.abs(a - bb.numpy()).max()) for a, bb in zip(q, t))
                fpath = os.path.join(tmp, f"{name}_{b}_f32.bin")
                qrt_export.export(fm, inputs, fpath, verbose=False, check=False,
                                  keep_float=True)
                qf = qrt.load(fpath)
                fns = {"qrt": lambda: qm(*qin)}
                if name == "kwt_transformer":   # torch's fused encoder path cannot run
                    def tdyn(dm=dm, inputs=inputs):   # quantize_dynamic layers: off for it
                        torch.backends.mha.set_fastpath_enabled(False)
                        try:
                            return dm(*inputs)
                        finally:
                            torch.backends.mha.set_fastpath_enabled(True)
                    fns["torch_dyn"] = tdyn
                else:
                    fns["torch_dyn"] = lambda: dm(*inputs)
                fns["torch_f32"] = lambda: fm(*inputs)
                fns["qrt_f32"] = lambda: qf(*qin)
                if have_ort:
                    try:
                        fns["ort_int8"] = ort_session(torch, fm, inputs, tmp)
                    except Exception as e:  # noqa: BLE001 - report, keep benchmarking
                        print(f"# {name}: onnxruntime failed: {type(e).__name__}: {e}",
                              file=sys.stderr)
                times = {k: [] for k in fns}
                with torch.no_grad():
                    for _ in range(args.rounds):
                        for k, f in fns.items():
                            times[k].append(_block(f))
                med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
                rows.append((name, b, dev, med))
                ratios = "  ".join(f"{k}/qrt {med[k] / med['qrt']:.2f}" for k in med
                                   if k not in ("qrt", "qrt_f32"))
                ratios += f"  torch_f32/qrt_f32 {med['torch_f32'] / med['qrt_f32']:.2f}"
                print(f"{name:16s} batch {b}: qrt {med['qrt']:.3f} ms  " +
                      "  ".join(f"{k} {v:.3f} ms" for k, v in med.items() if k != "qrt") +
                      f"  | {ratios}  | max|qrt - torch_dyn| {dev:.2g}", flush=True)
        a, b = per_step_cost(torch, qrt, qrt_export, tmp)
        print(f"per-step cost, LSTM 1 -> 1 (hidden 1), 1000 steps: qrt {a:.2f} us/step, "
              f"torch dynamic {b:.2f} us/step")
    return rows


if __name__ == "__main__":
    main()

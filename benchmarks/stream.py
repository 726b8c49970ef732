# SPDX-License-Identifier: Apache-2.0
"""Streaming vs re-running the whole window (issue 46), one thread.

Models (built and FX-quantized here with torch, exported with qrt_export, then run by qrt
alone):
  * ``tcn_audio``: raw 16 kHz audio, a 10 ms framing conv (k=160, stride 160, 1 -> width), then
    six causal dilated k=3 convs (dilations 1, 2, 4, 8, 16, 16; TCN chomp) with residual adds:
    a receptive field of 1 + 2 * 47 = 95 frames + 159 samples = about 1 s (15 359 samples);
  * ``tiny``: one 1x1 conv on 8 channels (the per-call floor).

For hops of 10 ms (160 samples) and 20 ms (320): the time per hop of ``s(hop)`` against
``model(last 1 s window)`` (what a non-streaming runtime does on every hop), their ratio, the
stream's state bytes against the arena (activations) of one offline window, and the per-call
overhead of a stream over the op time (``tiny``: s(one frame) against the same op alone).
Streamed outputs are checked equal to the offline run first.

    python benchmarks/stream.py [--rounds 5] [--hops 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")
SR = 16000


def _build(tmp, width=32):
    import torch
    from torch import nn
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    import qrt_export

    class TCNAudio(nn.Module):
        def __init__(self, c=32, dil=(1, 2, 4, 8, 16, 16)):
            super().__init__()
            self.front = nn.Conv1d(1, c, 160, stride=160)
            self.convs = nn.ModuleList([nn.Conv1d(c, c, 3, padding=2 * d, dilation=d)
                                        for d in dil])
            self.dil = dil
            self.head = nn.Conv1d(c, 12, 1)

        def forward(self, x):
            x = torch.relu(self.front(x))
            for conv, d in zip(self.convs, self.dil):
                x = x + torch.relu(conv(x)[:, :, :-2 * d])
            return self.head(x)

    class Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv1d(8, 8, 1)

        def forward(self, x):
            return self.c(x)

    torch.backends.quantized.engine = "qnnpack"
    out = {}
    for name, net, shape in (("tcn_audio", TCNAudio(width), (1, 1, SR)),
                             ("tiny", Tiny(), (1, 8, 16))):
        torch.manual_seed(0)
        ex = torch.randn(*shape)
        p = prepare_fx(net.eval(), get_default_qconfig_mapping("qnnpack"), (ex,))
        with torch.no_grad():
            for _ in range(3):
                p(torch.randn(*shape))
        path = os.path.join(tmp, name + ".bin")
        qrt_export.export(convert_fx(p), ex, path, verbose=False)
        out[name] = path
    return out


def _best(fn, n, rounds):
    ts = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        ts.append((time.perf_counter() - t0) / n)
    return statistics.median(ts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--hops", type=int, default=200)
    ap.add_argument("--width", type=int, default=32, help="tcn_audio's channels")
    args = ap.parse_args(argv)
    os.environ.setdefault("QRT_NUM_THREADS", "1")
    import qrt
    with tempfile.TemporaryDirectory() as tmp:
        paths = _build(tmp, args.width)
        m = qrt.load(paths["tcn_audio"])
        rng = np.random.default_rng(0)
        x = rng.standard_normal((1, 1, 3 * SR)).astype(np.float32)
        s = m.stream()
        ys = [s(x[:, :, a:a + 320]) for a in range(0, x.shape[2], 320)] + [s.flush()]
        assert np.array_equal(np.concatenate(ys, axis=2), m(x)), "stream != offline"
        win = x[:, :, :SR].copy()
        arena = m.arena_nbytes_for(1)
        print(f"tcn_audio (width {args.width}): receptive field about 1 s; latency "
              f"{s.latency} frames; offline window arena {arena} B")
        for hop in (160, 320):
            s = m.stream()
            s(x[:, :, :SR])                     # warm: a full receptive field seen
            chunk = x[:, :, SR:SR + hop].copy()

            def step():
                s(chunk)
            t_stream = _best(step, args.hops, args.rounds)
            t_off = _best(lambda: m(win), max(5, args.hops // 20), args.rounds)
            print(f"  hop {hop:>3} samples ({hop * 1000 // SR} ms): stream "
                  f"{t_stream * 1e6:8.1f} us/hop, re-run 1 s window {t_off * 1e6:8.1f} us/hop, "
                  f"ratio {t_off / t_stream:6.1f}x; state {s.state_nbytes} B "
                  f"({s.state_nbytes / arena:.2f} of the window's arena), bound buffers "
                  f"{s.scratch_nbytes} B")
        t = qrt.load(paths["tiny"])
        st = t.stream()
        one = rng.standard_normal((1, 8, 1)).astype(np.float32)
        t_s = _best(lambda: st(one), 2000, args.rounds)
        t_m = _best(lambda: t(one), 2000, args.rounds)
        # the op alone: quantize + conv + dequantize kernels on bound buffers
        plan = t._exec.plan([(1, 8, 1)])
        t_ops = _best(lambda: [f() for f in plan.thunks], 2000, args.rounds)
        print(f"tiny (quantize, 1x1 conv 8->8, dequantize; one frame per call): stream "
              f"{t_s * 1e6:.1f} us/call, model() {t_m * 1e6:.1f} us/call, bound kernels "
              f"{t_ops * 1e6:.1f} us: stream overhead {(t_s - t_ops) * 1e6:.1f} us/call "
              f"({(t_s - t_ops) / 3 * 1e6:.1f} us per op)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

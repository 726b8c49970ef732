# SPDX-License-Identifier: Apache-2.0
"""Synthetic 1-D "keyword" signals: waveform classes with noise (numpy only).

Shared by tools/train_demo.py (training) and ``qrt demo`` (evaluation), so the demo model
sees the same distribution at run time as in training.
"""

from __future__ import annotations

import numpy as np

CLASSES = ("sine", "square", "sawtooth", "triangle", "chirp", "pulses", "am", "noise")
LENGTH = 128


def _wave(kind, t, f, ph, rng):
    x = 2 * np.pi * f * t + ph
    if kind == "sine":
        return np.sin(x)
    if kind == "square":
        return np.sign(np.sin(x))
    if kind == "sawtooth":
        return 2 * ((x / (2 * np.pi)) % 1.0) - 1
    if kind == "triangle":
        return 2 * np.abs(2 * ((x / (2 * np.pi)) % 1.0) - 1) - 1
    if kind == "chirp":
        return np.sin(2 * np.pi * (f * t + 3 * f * t * t) + ph)
    if kind == "pulses":
        return (((x / (2 * np.pi)) % 1.0) < 0.15).astype(np.float64) * 2 - 0.3
    if kind == "am":
        return np.sin(4 * x) * (0.5 + 0.5 * np.sin(x / 2))
    return rng.standard_normal(t.shape) * 0.8  # "noise"


def make_dataset(n: int, *, seed: int = 0, length: int = LENGTH, noise: float = 0.35):
    """``n`` labelled signals.

    Returns
    -------
    x : float32 array [n, 1, length]
        Random frequency (2..8 cycles), phase, amplitude (0.5..1.5), offset, plus Gaussian noise.
    y : int64 array [n]
        Class index into :data:`CLASSES`.
    """
    rng = np.random.default_rng(seed)
    t = np.arange(length) / length
    y = rng.integers(0, len(CLASSES), n)
    x = np.empty((n, 1, length), np.float32)
    for i in range(n):
        f = rng.uniform(2.0, 8.0)
        ph = rng.uniform(0, 2 * np.pi)
        amp = rng.uniform(0.5, 1.5)
        sig = amp * _wave(CLASSES[y[i]], t, f, ph, rng) + rng.uniform(-0.2, 0.2)
        x[i, 0] = sig + noise * rng.standard_normal(length)
    return x, y.astype(np.int64)

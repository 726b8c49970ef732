# SPDX-License-Identifier: Apache-2.0
"""Argument validators shared by tensors, functions and layers (scales, zero points, axes)."""

from __future__ import annotations

import math
import operator

import numpy as np

from qrt._dtypes import QDType


# ---- argument checks ---------------------------------------------------------------------------
def _check_scale(scale, what="scale") -> float:
    """A positive finite scale whose float32 value and reciprocal are finite and non-zero."""
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, (int, float, np.integer,
                                                                      np.floating)):
        if isinstance(scale, np.ndarray) and scale.size == 1:
            scale = scale.item()
        else:
            raise TypeError(f"{what} must be a real number, got {type(scale).__name__}")
    s = float(scale)
    if not math.isfinite(s) or s <= 0.0:
        raise ValueError(f"{what} must be positive and finite, got {s!r}")
    if 1.1754943508222875e-38 <= s <= 3.0e38:  # float32 normal range: always usable
        return s
    with np.errstate(over="ignore", divide="ignore"):
        s32 = np.float32(s)
        ok = s32 != 0 and np.isfinite(s32) and np.isfinite(np.float32(1.0) / s32)
    if not ok:
        raise ValueError(f"{what}={s!r} is outside float32's usable range "
                         "(its float32 value or reciprocal is 0 or inf)")
    return s


def _check_zero_point(zp, dtype: QDType, what="zero_point") -> int:
    if isinstance(zp, (bool, np.bool_)):  # torch's argument parser refuses bools as ints
        raise TypeError(f"{what} must be an integer, got bool ({zp!r})")
    try:
        z = operator.index(zp)
    except TypeError:
        if isinstance(zp, np.ndarray) and zp.size == 1 and zp.dtype.kind in "iu":
            z = int(zp.item())
        else:
            raise TypeError(f"{what} must be an integer, got {type(zp).__name__}") from None
    if not dtype.qmin <= z <= dtype.qmax:
        raise ValueError(f"{what}={z} is outside the range of {dtype!r} "
                         f"[{dtype.qmin}, {dtype.qmax}]")
    return int(z)


def _check_axis(axis, ndim: int, what="axis") -> int:
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, got bool ({axis!r})")
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise ValueError(f"{what}={a} is out of range for a {ndim}-d tensor")
    return a % ndim


def _float_input(x, what="input") -> np.ndarray:
    """float32 C-contiguous array; float16/float64 are converted (as torch's .float() would)."""
    arr = np.asarray(x)
    if arr.dtype.kind != "f":
        raise TypeError(f"{what} must be a floating-point array, got dtype {arr.dtype}")
    with np.errstate(over="ignore"):  # float64 beyond float32 becomes +-inf, as .float()
        return np.asarray(arr, dtype=np.float32, order="C")  # keeps 0-d arrays 0-d


def _per_channel_params(scales, zero_points, n_ch: int, dtype: QDType):
    sc = np.asarray(scales)
    zp = np.asarray(zero_points)
    if sc.ndim != 1 or zp.ndim != 1:
        raise ValueError("scales and zero_points must be 1-d")
    if sc.shape[0] != n_ch or zp.shape[0] != n_ch:
        raise ValueError(f"scales ({sc.shape[0]}) and zero_points ({zp.shape[0]}) must have one "
                         f"entry per channel ({n_ch})")
    if sc.dtype.kind not in "fiu":
        raise TypeError(f"scales must be real numbers, got dtype {sc.dtype}")
    if zp.dtype.kind not in "iu":
        if zp.dtype.kind == "f" and np.all(zp == np.round(zp)):
            zp = zp.astype(np.int64)
        else:
            raise TypeError(f"zero_points must be integers, got dtype {zp.dtype}")
    sc = sc.astype(np.float64)
    zp = zp.astype(np.int64)
    bad = ~np.isfinite(sc) | (sc <= 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"scales[{i}]={sc[i]!r} must be positive and finite")
    with np.errstate(divide="ignore", over="ignore"):
        s32 = sc.astype(np.float32)
        inv = np.float32(1.0) / s32
    bad = (s32 == 0) | ~np.isfinite(s32) | ~np.isfinite(inv)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"scales[{i}]={sc[i]!r} is outside float32's usable range")
    bad = (zp < dtype.qmin) | (zp > dtype.qmax)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"zero_points[{i}]={zp[i]} is outside the range of {dtype!r} "
                         f"[{dtype.qmin}, {dtype.qmax}]")
    return sc, zp, inv

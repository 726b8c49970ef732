# SPDX-License-Identifier: Apache-2.0
"""Observers that choose quantization parameters exactly as ``torch.ao.quantization`` does.

All arithmetic is float32, step by step as torch's tensor ops run it, so scales agree with
torch to the bit and zero points exactly.  Only numpy is used.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from qrt._tensor import (QDType, QScheme, as_dtype, per_channel_affine, per_channel_symmetric,
                         per_tensor_affine, per_tensor_symmetric, qint8, qint32, quint8)

__all__ = ["MinMaxObserver", "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver",
           "MovingAveragePerChannelMinMaxObserver", "calculate_qmin_qmax", "choose_qparams"]

_F32 = np.float32
_EPS = float(np.finfo(np.float32).eps)


def calculate_qmin_qmax(quant_min, quant_max, dtype: QDType, reduce_range: bool):
    """(qmin, qmax) as torch.ao.quantization.utils.calculate_qmin_qmax computes them."""
    if quant_min is not None and quant_max is not None:
        if not quant_min <= 0 <= quant_max:
            raise ValueError("quant_min..quant_max must include 0")
        if quant_min >= quant_max:
            raise ValueError("quant_min must be less than quant_max")
        span = quant_max - quant_min + 1
        limit = 2**32 if dtype is qint32 else 256
        if not 0 < span <= limit:
            raise ValueError(f"quant_min..quant_max spans {span} values; {dtype!r} holds at "
                             f"most {limit}")
        if reduce_range:
            quant_min, quant_max = quant_min // 2, quant_max // 2
        return int(quant_min), int(quant_max)
    if (quant_min is None) != (quant_max is None):
        raise ValueError("give both quant_min and quant_max, or neither")
    if dtype is qint8:
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype is quint8:
        return (0, 127) if reduce_range else (0, 255)
    return (-(2**31), 2**31 - 1)


def _wrap_int32(v: np.ndarray) -> np.ndarray:
    """int64 values reduced modulo 2**32 into int32 range (torch's int32 arithmetic)."""
    return ((v.astype(np.int64) + 2**31) & 0xFFFFFFFF) - 2**31


def _check_averaging_constant(c) -> float:
    if isinstance(c, bool) or not isinstance(c, (int, float, np.integer, np.floating)):
        raise TypeError(f"averaging_constant must be a real number, got {type(c).__name__}")
    v = float(c)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"averaging_constant must be in [0, 1], got {c!r}")
    return v


def _as_qscheme(q, what="qscheme") -> QScheme:
    if isinstance(q, QScheme):
        return q
    if isinstance(q, str):
        from qrt._tensor import _QSCHEMES
        key = q.split(".")[-1]
        if key in _QSCHEMES:
            return _QSCHEMES[key]
    from qrt._dtypes import _is_torch_object
    if _is_torch_object(q):
        from qrt._tensor import _QSCHEMES
        name = str(q).split(".")[-1]
        if name in _QSCHEMES:
            raise TypeError(f"{what}={q}: qrt does not use torch's objects (it never imports "
                            f"torch); use qrt.{name}")
    raise ValueError(f"{what}: unknown qscheme {q!r}")


class _ObserverBase:
    _per_channel = False

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, eps=_EPS, factory_kwargs=None,
                 is_dynamic=False):
        if factory_kwargs is not None and not isinstance(factory_kwargs, dict):
            raise TypeError("factory_kwargs must be None or a dict (it is ignored: qrt "
                            "observers keep float32 numpy state)")
        self.is_dynamic = bool(is_dynamic)
        self.dtype = as_dtype(dtype)
        self.qscheme = _as_qscheme(qscheme)
        allowed = ((per_channel_affine, per_channel_symmetric) if self._per_channel
                   else (per_tensor_affine, per_tensor_symmetric))
        if self.qscheme not in allowed:
            raise ValueError(f"{type(self).__name__}: qscheme must be one of "
                             f"{[q.name for q in allowed]}, got {self.qscheme.name}")
        if reduce_range and self.dtype is quint8 and self.qscheme in (per_tensor_symmetric,
                                                                      per_channel_symmetric):
            raise ValueError("reduce_range is not supported for symmetric quint8 "
                             "(torch raises NotImplementedError)")
        self.reduce_range = bool(reduce_range)
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        self.quant_min, self.quant_max = calculate_qmin_qmax(quant_min, quant_max, self.dtype,
                                                             self.reduce_range)
        e = float(eps)
        if not np.isfinite(e) or e < 0:
            raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
        self.eps = _F32(e)

    def __call__(self, x):
        return self.forward(x)

    @staticmethod
    def _values(x) -> np.ndarray:
        a = np.asarray(x)
        if a.dtype.kind != "f":
            raise TypeError(f"observers take floating-point input, got dtype {a.dtype}")
        return a.astype(np.float32, copy=False)

    def _qparams(self, min_val: np.ndarray, max_val: np.ndarray):
        """torch's UniformQuantizationObserverBase._calculate_qparams, in float32."""
        qmin, qmax = self.quant_min, self.quant_max
        if min_val.size == 0 or (min_val.ndim == 0 and min_val == np.inf and max_val == -np.inf):
            return np.array([1.0], np.float32), np.array([0], np.int64)
        if np.any(min_val > max_val):
            raise ValueError(f"min {min_val} should be less than max {max_val}")
        zero = np.zeros_like(min_val)
        min_neg = np.minimum(min_val, zero)
        max_pos = np.maximum(max_val, zero)
        if self.qscheme in (per_tensor_symmetric, per_channel_symmetric):
            max_pos = np.maximum(-min_neg, max_pos)
            scale = (max_pos / _F32(float(qmax - qmin) / 2)).astype(np.float32)
            scale = np.maximum(scale, self.eps)
            if self.dtype is quint8:
                z = (qmin + qmax) // 2 if self.has_customized_qrange else 128
            else:
                z = 0
            zp = np.full(scale.shape, z, dtype=np.int64)
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                scale = ((max_pos - min_neg) / _F32(float(qmax - qmin))).astype(np.float32)
            scale = np.maximum(scale, self.eps)
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                r = np.round((min_neg / scale).astype(np.float32))
            # torch: quant_min - round(...).to(torch.int), all in int32, then clamp.  The
            # float -> int32 conversion of NaN or out-of-range values gives INT32_MIN on x86
            # (cvttps2dq); numpy's own conversion is platform-dependent, so spell it out.
            ok = (r >= _F32(-2.0**31)) & (r < _F32(2.0**31))
            ri = np.where(ok, np.where(ok, r, 0).astype(np.int64), -(2**31))
            zp = _wrap_int32(qmin - ri)
            zp = np.clip(zp, qmin, qmax).astype(np.int64)
        scale = np.atleast_1d(np.asarray(scale, np.float32))
        zp = np.atleast_1d(np.asarray(zp, np.int64))
        return scale, zp

    def calculate_qparams(self):
        """(scale, zero_point) as numpy arrays (float32, int64), like torch's observers."""
        return self._qparams(self.min_val, self.max_val)


class MinMaxObserver(_ObserverBase):
    """Running minimum and maximum over every element; torch's ``MinMaxObserver``.

    The arguments are torch's, in torch's order; ``factory_kwargs`` is accepted and ignored.
    """

    def __init__(self, dtype=quint8, qscheme=per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_EPS,
                 is_dynamic=False):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps,
                         factory_kwargs, is_dynamic)
        self.reset_min_max_vals()

    def reset_min_max_vals(self):
        self.min_val = np.array(np.inf, np.float32)
        self.max_val = np.array(-np.inf, np.float32)

    def _batch_minmax(self, x):
        a = self._values(x)
        if a.size == 0:
            return None
        return np.array(a.min(), np.float32), np.array(a.max(), np.float32)

    def forward(self, x):
        mm = self._batch_minmax(x)
        if mm is not None:
            self.min_val = np.minimum(self.min_val, mm[0])
            self.max_val = np.maximum(self.max_val, mm[1])
        return x


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Exponential moving average of min and max; torch's ``MovingAverageMinMaxObserver``."""

    def __init__(self, averaging_constant=0.01, dtype=quint8, qscheme=per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=_EPS,
                 is_dynamic=False, *, factory_kwargs=None):
        self.averaging_constant = _check_averaging_constant(averaging_constant)
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs,
                         eps, is_dynamic)

    def forward(self, x):
        mm = self._batch_minmax(x)
        if mm is None:
            return x
        cur_min, cur_max = mm
        if self.min_val == np.inf and self.max_val == -np.inf:
            self.min_val, self.max_val = cur_min, cur_max
        else:
            c = _F32(self.averaging_constant)
            self.min_val = (self.min_val + (c * (cur_min - self.min_val)).astype(np.float32)
                            ).astype(np.float32)
            self.max_val = (self.max_val + (c * (cur_max - self.max_val)).astype(np.float32)
                            ).astype(np.float32)
        return x


class PerChannelMinMaxObserver(_ObserverBase):
    """Running min and max per slice along ``ch_axis``; torch's ``PerChannelMinMaxObserver``."""

    _per_channel = True

    def __init__(self, ch_axis=0, dtype=quint8, qscheme=per_channel_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_EPS,
                 is_dynamic=False):
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, eps,
                         factory_kwargs, is_dynamic)
        try:
            self.ch_axis = operator.index(ch_axis)
        except TypeError:
            raise TypeError(f"ch_axis must be an integer, got {type(ch_axis).__name__}") from None
        self.reset_min_max_vals()

    def reset_min_max_vals(self):
        self.min_val = np.zeros(0, np.float32)
        self.max_val = np.zeros(0, np.float32)

    def _batch_minmax(self, x):
        a = self._values(x)
        if a.ndim == 0:
            raise ValueError("per-channel observers need at least a 1-d input")
        if not -a.ndim <= self.ch_axis < a.ndim:
            raise ValueError(f"ch_axis={self.ch_axis} is out of range for a {a.ndim}-d input")
        y = np.moveaxis(a, self.ch_axis, 0).reshape(a.shape[self.ch_axis], -1)
        if y.shape[1] == 0:
            return None
        return y.min(axis=1).astype(np.float32), y.max(axis=1).astype(np.float32)

    def _check_channels(self, cur_min):
        if self.min_val.size and self.min_val.shape != cur_min.shape:
            raise ValueError(f"observer saw {self.min_val.shape[0]} channels before, now "
                             f"{cur_min.shape[0]}")

    def forward(self, x):
        mm = self._batch_minmax(x)
        if mm is None:
            return x
        self._check_channels(mm[0])
        if self.min_val.size == 0:
            self.min_val, self.max_val = mm
        else:
            self.min_val = np.minimum(self.min_val, mm[0])
            self.max_val = np.maximum(self.max_val, mm[1])
        return x


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel exponential moving average; torch's ``MovingAveragePerChannelMinMaxObserver``."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=quint8,
                 qscheme=per_channel_affine, reduce_range=False, quant_min=None, quant_max=None,
                 eps=_EPS, is_dynamic=False, *, factory_kwargs=None):
        self.averaging_constant = _check_averaging_constant(averaging_constant)
        super().__init__(ch_axis, dtype, qscheme, reduce_range, quant_min, quant_max,
                         factory_kwargs, eps, is_dynamic)

    def forward(self, x):
        mm = self._batch_minmax(x)
        if mm is None:
            return x
        self._check_channels(mm[0])
        if self.min_val.size == 0:
            self.min_val, self.max_val = mm
        else:
            c = _F32(self.averaging_constant)
            self.min_val = (self.min_val + (c * (mm[0] - self.min_val)).astype(np.float32)
                            ).astype(np.float32)
            self.max_val = (self.max_val + (c * (mm[1] - self.max_val)).astype(np.float32)
                            ).astype(np.float32)
        return x


# ---- ChooseQuantizationParams (dynamic quantization) ----------------------------------------
def choose_qparams(x_min: float, x_max: float, qmin: int = 0, qmax: int = 255,
                   reduce_range: bool = False):
    """torch's ``ChooseQuantizationParams`` (aten/.../cpu/QuantUtils.h), exactly.

    Returns ``(scale, zero_point)``; scale is the double torch returns (kernels use f32(scale)).
    """
    f32 = np.float32
    mn, mx = f32(x_min), f32(x_max)
    if not (math.isfinite(mn) and math.isfinite(mx)):
        raise ValueError(f"choose_qparams: min/max must be finite, got {x_min!r}, {x_max!r}")
    if not mn <= mx:
        raise ValueError(f"choose_qparams: min ({x_min}) must be <= max ({x_max})")
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    mn = min(mn, f32(0.0))
    mx = max(mx, f32(0.0))
    scale = (float(mx) - float(mn)) / float(qmax - qmin)
    s32 = f32(scale)
    with np.errstate(divide="ignore", over="ignore"):
        bad = s32 == 0 or math.isinf(f32(1.0) / s32)
    if bad:
        scale = 0.1
    small = f32(6.1e-5)
    if scale < float(small):
        org = f32(scale)
        scale = float(small)
        if mn == 0:
            mx = f32(small * f32(qmax - qmin))
        elif mx == 0:
            mn = f32(-small * f32(qmax - qmin))
        else:
            amp = f32(small / org)
            mn = f32(mn * amp)
            mx = f32(mx * amp)
    zmin = qmin - float(mn) / scale
    zmax = qmax - float(mx) / scale
    emin = abs(qmin) - abs(float(mn) / scale)
    emax = abs(qmax) - abs(float(mx) / scale)
    z0 = zmin if emin < emax else zmax
    if z0 < qmin:
        zp = qmin
    elif z0 > qmax:
        zp = qmax
    else:
        zp = int(np.rint(z0))
    return scale, zp

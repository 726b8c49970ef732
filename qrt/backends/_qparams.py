# SPDX-License-Identifier: Apache-2.0
"""Host-side constants of the device kernels (numpy float32 arithmetic, no cupy).

Every value here is computed once per layer on the host, with the exact float32 formulas of
torch 2.13's qnnpack engine (docs/quantization.md, /work/shared/docs/torch-quant-semantics.md
section 4.2 and 5): numpy float32 operations are single IEEE operations, never contracted.
The kernels then consume these constants (tests/test_cuda_math.py checks them against torch).
"""

from __future__ import annotations

import numpy as np

from qrt._geometry import conv_out_len, pool_out_len

__all__ = ["conv_requant_scales", "quantize_bias_qint32", "add_scale_ratios", "ADD_RATIO_MIN",
           "ADD_RATIO_MAX", "avg_pool_scale", "conv1d_len_out", "pool1d_len_out",
           "MAX_TAPS"]

_F32 = np.float32
#: Largest (c_in/groups)*kernel whose exact accumulator fits int32 (qrt_conv1d_check's bound).
MAX_TAPS = 33025
#: QNNPACK add accepts f32(a_scale / out_scale) in [2^-14, 2^8).
ADD_RATIO_MIN = 2.0 ** -14
ADD_RATIO_MAX = 2.0 ** 8


def conv_requant_scales(act_scale: float, w_scales, out_scale: float) -> np.ndarray:
    """rs[oc] = f32(f32(f32(w_scale[oc]) * f32(act_scale)) * f32(1 / f32(out_scale)))."""
    sw = np.asarray(w_scales, dtype=np.float64).astype(_F32)
    sa = _F32(act_scale)
    inv_so = _F32(1.0) / _F32(out_scale)
    return ((sw * sa).astype(_F32) * inv_so).astype(_F32)


def quantize_bias_qint32(bias, act_scale: float, w_scales) -> np.ndarray:
    """QNNPACK's int32 bias: quantize_qint32(bias, scale = (double)w_scale * (double)act_scale).

    q = rne(f32(f32(b * f32(1 / f32(s))) + 0)), clamped to int32 in double; NaN -> INT32_MIN.
    """
    b = np.asarray(bias, dtype=_F32)
    s = (np.asarray(w_scales, dtype=np.float64) * float(act_scale)).astype(_F32)
    s = np.broadcast_to(s, b.shape)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        inv = (_F32(1.0) / s).astype(_F32)
        t = ((b * inv).astype(_F32) + _F32(0.0)).astype(_F32)
        r = np.rint(t).astype(np.float64)
    out = np.clip(np.nan_to_num(r, nan=-(2.0 ** 31)), -(2.0 ** 31), 2.0 ** 31 - 1)
    return out.astype(np.int32)


def add_scale_ratios(a_scale: float, b_scale: float, out_scale: float):
    """(a_os, b_os) = f32(f32(a)/f32(o)), f32(f32(b)/f32(o)); ValueError outside QNNPACK's range."""
    so = _F32(out_scale)
    a_os = _F32(_F32(a_scale) / so)
    b_os = _F32(_F32(b_scale) / so)
    for name, r in (("a", a_os), ("b", b_os)):
        if not ADD_RATIO_MIN <= float(r) < ADD_RATIO_MAX:
            raise ValueError(f"add: {name}_scale / out_scale = {float(r)!r} is outside QNNPACK's "
                             f"supported range [2^-14, 2^8)")
    return a_os, b_os


def avg_pool_scale(scale: float, kernel: int) -> np.float32:
    """QNNPACK average pooling multiplier (input and output share qparams):
    f32(s / f32(s * f32(kernel))) with s = f32(scale), as qrt.functional.avg_pool1d."""
    sf = _F32(scale)
    return _F32(sf / _F32(sf * _F32(kernel)))


def conv1d_len_out(len_in: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """(L + 2p - d(K-1) - 1) // s + 1 (may be <= 0: the caller rejects that)."""
    return conv_out_len(len_in, kernel, stride, padding, padding, dilation)


pool1d_len_out = pool_out_len  # torch's pooling output length (qrt/_geometry.py)

# SPDX-License-Identifier: Apache-2.0
"""Thin wrappers over include/qrt/quant.h. Shapes are checked here; math in C.

``variant`` selects the C variant: -1 the best for this CPU, 0 the reference (the
specification), 1 AVX2+FMA, 2 AVX-512 (a variant the CPU lacks falls back to the best it has).
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t

import numpy as np

from qrt._kernels cimport *

ctypedef fused qint_t:
    uint8_t
    int8_t
    int32_t

# Below this many elements per (outer, channel) row, quantize_rows works on whole outer rows
# with per-element parameters instead of calling the kernel once per short row.
cdef Py_ssize_t _SHORT_ROW = 16


def isa():
    """The QRT_ISA_* code of the best variant this CPU runs (0 ref, 1 AVX2, 2 AVX-512, 3 NEON:
    aarch64, the fused per-tensor quantize only)."""
    return qrt_quant_isa()


def pick(int variant=-1):
    """The QRT_ISA_* code that a call with this ``variant`` runs."""
    return qrt_quant_pick(variant)


def quantize_fma_u8(const float[::1] x, uint8_t[::1] out, float inv, float zpf,
                    float qmin, float qmax, int variant=-1):
    """Per-tensor quint8 (fused path); variant 0 forces the reference."""
    if out.shape[0] != x.shape[0]:
        raise ValueError("quantize: output length differs from input length")
    if not (0.0 <= qmin <= qmax <= 255.0):
        raise ValueError("quantize: qmin..qmax must lie in 0..255")
    if x.shape[0] == 0:
        return
    with nogil:
        qrt_quantize_f32_u8(&x[0], x.shape[0], inv, zpf, qmin, qmax, &out[0], variant)


def quantize_fma_s8(const float[::1] x, int8_t[::1] out, float inv, float zpf,
                    float qmin, float qmax, int variant=-1):
    """Per-tensor qint8 (fused path); variant 0 forces the reference."""
    if out.shape[0] != x.shape[0]:
        raise ValueError("quantize: output length differs from input length")
    if not (-128.0 <= qmin <= qmax <= 127.0):
        raise ValueError("quantize: qmin..qmax must lie in -128..127")
    if x.shape[0] == 0:
        return
    with nogil:
        qrt_quantize_f32_s8(&x[0], x.shape[0], inv, zpf, qmin, qmax, &out[0], variant)


def quantize_rows(const float[:, :, ::1] x, qint_t[:, :, ::1] out, const float[::1] inv,
                  const float[::1] zpf, double qmin, double qmax, int nan_code=0,
                  int variant=-1):
    """Non-fused quantize of x viewed as [outer][C][inner] with per-channel inv and zp.

    NaN becomes 0 for 8-bit types and INT32_MIN for int32 (torch's INT32_MIN truncated);
    ``nan_code`` is accepted for compatibility and ignored.  int32 always clamps to the full
    int32 range; 8-bit types clamp to qmin..qmax (inside the type's range).
    """
    cdef Py_ssize_t o, c, n_outer = x.shape[0], n_c = x.shape[1], inner = x.shape[2]
    cdef const float[::1] inv_e
    cdef const float[::1] zp_e
    cdef Py_ssize_t row
    if out.shape[0] != n_outer or out.shape[1] != n_c or out.shape[2] != inner:
        raise ValueError("quantize: output shape differs from input shape")
    if inv.shape[0] != n_c or zpf.shape[0] != n_c:
        raise ValueError("quantize: one scale and zero point per channel expected")
    if qint_t is uint8_t:
        if not (0.0 <= qmin <= qmax <= 255.0):
            raise ValueError("quantize: qmin..qmax must lie in 0..255")
    elif qint_t is int8_t:
        if not (-128.0 <= qmin <= qmax <= 127.0):
            raise ValueError("quantize: qmin..qmax must lie in -128..127")
    if inner == 0 or n_outer == 0 or n_c == 0:
        return
    cdef bint full_range = True
    if qint_t is uint8_t:
        full_range = qmin == 0.0 and qmax == 255.0
    elif qint_t is int8_t:
        full_range = qmin == -128.0 and qmax == 127.0
    if inner < _SHORT_ROW and full_range:
        inv_e = np.repeat(np.asarray(inv), inner)
        zp_e = np.repeat(np.asarray(zpf), inner)
        row = n_c * inner
        with nogil:
            for o in range(n_outer):
                if qint_t is uint8_t:
                    qrt_quantize_vparams_f32_u8(&x[o, 0, 0], row, &inv_e[0], &zp_e[0],
                                                &out[o, 0, 0], variant)
                elif qint_t is int8_t:
                    qrt_quantize_vparams_f32_s8(&x[o, 0, 0], row, &inv_e[0], &zp_e[0],
                                                &out[o, 0, 0], variant)
                else:
                    qrt_quantize_vparams_f32_s32(&x[o, 0, 0], row, &inv_e[0], &zp_e[0],
                                                 &out[o, 0, 0], variant)
        return
    with nogil:
        for o in range(n_outer):
            for c in range(n_c):
                if qint_t is uint8_t:
                    qrt_quantize_scalar_f32_u8(&x[o, c, 0], inner, inv[c], zpf[c], qmin,
                                               qmax, &out[o, c, 0], variant)
                elif qint_t is int8_t:
                    qrt_quantize_scalar_f32_s8(&x[o, c, 0], inner, inv[c], zpf[c], qmin,
                                               qmax, &out[o, c, 0], variant)
                else:
                    qrt_quantize_scalar_f32_s32(&x[o, c, 0], inner, inv[c], zpf[c],
                                                &out[o, c, 0], variant)


def dequantize_tensor(const qint_t[::1] q, float[::1] out, float scale, int64_t zp,
                      int variant=-1):
    """Per-tensor dequantize: f32(scale * f32(q - zp)) (int32: q - zp wraps as torch's)."""
    if out.shape[0] != q.shape[0]:
        raise ValueError("dequantize: output length differs from input length")
    if qint_t is int32_t:
        if not (-2147483648 <= zp <= 2147483647):
            raise ValueError("dequantize: zero point outside int32")
    elif not (-255 <= zp <= 255):
        raise ValueError("dequantize: zero point outside -255..255")
    if q.shape[0] == 0:
        return
    with nogil:
        if qint_t is uint8_t:
            qrt_dequantize_u8_f32(&q[0], q.shape[0], scale, <int32_t>zp, &out[0], variant)
        elif qint_t is int8_t:
            qrt_dequantize_s8_f32(&q[0], q.shape[0], scale, <int32_t>zp, &out[0], variant)
        else:
            qrt_dequantize_s32_f32(&q[0], q.shape[0], scale, zp, &out[0], variant)


def dequantize_rows(const qint_t[:, :, ::1] q, float[:, :, ::1] out, const double[::1] scales,
                    const float[::1] zpf, int variant=-1):
    """Per-channel dequantize of q viewed as [outer][C][inner]."""
    cdef Py_ssize_t o, c, n_outer = q.shape[0], n_c = q.shape[1], inner = q.shape[2]
    if out.shape[0] != n_outer or out.shape[1] != n_c or out.shape[2] != inner:
        raise ValueError("dequantize: output shape differs from input shape")
    if scales.shape[0] != n_c or zpf.shape[0] != n_c:
        raise ValueError("dequantize: one scale and zero point per channel expected")
    if inner == 0 or n_outer == 0 or n_c == 0:
        return
    cdef const double[::1] sc_e
    cdef const float[::1] zp_e
    cdef Py_ssize_t row
    if inner < _SHORT_ROW:
        sc_e = np.repeat(np.asarray(scales), inner)
        zp_e = np.repeat(np.asarray(zpf), inner)
        row = n_c * inner
        with nogil:
            for o in range(n_outer):
                if qint_t is uint8_t:
                    qrt_dequantize_pcv_u8_f32(&q[o, 0, 0], row, &sc_e[0], &zp_e[0],
                                              &out[o, 0, 0], variant)
                elif qint_t is int8_t:
                    qrt_dequantize_pcv_s8_f32(&q[o, 0, 0], row, &sc_e[0], &zp_e[0],
                                              &out[o, 0, 0], variant)
                else:
                    qrt_dequantize_pcv_s32_f32(&q[o, 0, 0], row, &sc_e[0], &zp_e[0],
                                               &out[o, 0, 0], variant)
        return
    with nogil:
        for o in range(n_outer):
            for c in range(n_c):
                if qint_t is uint8_t:
                    qrt_dequantize_pc_u8_f32(&q[o, c, 0], inner, scales[c], zpf[c],
                                             &out[o, c, 0], variant)
                elif qint_t is int8_t:
                    qrt_dequantize_pc_s8_f32(&q[o, c, 0], inner, scales[c], zpf[c],
                                             &out[o, c, 0], variant)
                else:
                    qrt_dequantize_pc_s32_f32(&q[o, c, 0], inner, scales[c], zpf[c],
                                              &out[o, c, 0], variant)

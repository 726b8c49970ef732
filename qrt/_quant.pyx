# SPDX-License-Identifier: Apache-2.0
"""Thin wrappers over include/qrt/quant.h. Shapes are checked in Python; math in C."""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t

from qrt._kernels cimport *

ctypedef fused qint_t:
    uint8_t
    int8_t
    int32_t


def isa():
    """The QRT_ISA_* code of the quantize variant this CPU runs."""
    return qrt_quant_isa()


def quantize_fma_u8(const float[::1] x, uint8_t[::1] out, float inv, float zpf,
                    float qmin, float qmax, int variant=-1):
    """Per-tensor quint8 (fused path); variant 0 forces the reference."""
    if out.shape[0] != x.shape[0]:
        raise ValueError("quantize: output length differs from input length")
    with nogil:
        qrt_quantize_f32_u8(&x[0] if x.shape[0] else NULL, x.shape[0], inv, zpf, qmin, qmax,
                            &out[0] if out.shape[0] else NULL, variant)


def quantize_fma_s8(const float[::1] x, int8_t[::1] out, float inv, float zpf,
                    float qmin, float qmax, int variant=-1):
    """Per-tensor qint8 (fused path); variant 0 forces the reference."""
    if out.shape[0] != x.shape[0]:
        raise ValueError("quantize: output length differs from input length")
    with nogil:
        qrt_quantize_f32_s8(&x[0] if x.shape[0] else NULL, x.shape[0], inv, zpf, qmin, qmax,
                            &out[0] if out.shape[0] else NULL, variant)


def quantize_rows(const float[:, :, ::1] x, qint_t[:, :, ::1] out, const float[::1] inv,
                  const float[::1] zpf, double qmin, double qmax, int nan_code):
    """Non-fused quantize of x viewed as [outer][C][inner] with per-channel inv and zp."""
    cdef Py_ssize_t o, c, n_outer = x.shape[0], n_c = x.shape[1], inner = x.shape[2]
    if out.shape[0] != n_outer or out.shape[1] != n_c or out.shape[2] != inner:
        raise ValueError("quantize: output shape differs from input shape")
    if inv.shape[0] != n_c or zpf.shape[0] != n_c:
        raise ValueError("quantize: one scale and zero point per channel expected")
    if inner == 0:
        return
    with nogil:
        for o in range(n_outer):
            for c in range(n_c):
                if qint_t is uint8_t:
                    qrt_quantize_scalar_f32_u8_ref(&x[o, c, 0], inner, inv[c], zpf[c], qmin,
                                                   qmax, nan_code, &out[o, c, 0])
                elif qint_t is int8_t:
                    qrt_quantize_scalar_f32_s8_ref(&x[o, c, 0], inner, inv[c], zpf[c], qmin,
                                                   qmax, nan_code, &out[o, c, 0])
                else:
                    qrt_quantize_scalar_f32_s32_ref(&x[o, c, 0], inner, inv[c], zpf[c], qmin,
                                                    qmax, nan_code, &out[o, c, 0])


def dequantize_tensor(const qint_t[::1] q, float[::1] out, float scale, int64_t zp,
                      int variant=-1):
    """Per-tensor dequantize: f32(scale * f32(q - zp))."""
    if out.shape[0] != q.shape[0]:
        raise ValueError("dequantize: output length differs from input length")
    if q.shape[0] == 0:
        return
    with nogil:
        if qint_t is uint8_t:
            qrt_dequantize_u8_f32(&q[0], q.shape[0], scale, <int32_t>zp, &out[0], variant)
        elif qint_t is int8_t:
            qrt_dequantize_s8_f32(&q[0], q.shape[0], scale, <int32_t>zp, &out[0], variant)
        else:
            qrt_dequantize_s32_f32_ref(&q[0], q.shape[0], scale, zp, &out[0])


def dequantize_rows(const qint_t[:, :, ::1] q, float[:, :, ::1] out, const double[::1] scales,
                    const float[::1] zpf):
    """Per-channel dequantize of q viewed as [outer][C][inner]."""
    cdef Py_ssize_t o, c, n_outer = q.shape[0], n_c = q.shape[1], inner = q.shape[2]
    if out.shape[0] != n_outer or out.shape[1] != n_c or out.shape[2] != inner:
        raise ValueError("dequantize: output shape differs from input shape")
    if scales.shape[0] != n_c or zpf.shape[0] != n_c:
        raise ValueError("dequantize: one scale and zero point per channel expected")
    if inner == 0:
        return
    with nogil:
        for o in range(n_outer):
            for c in range(n_c):
                if qint_t is uint8_t:
                    qrt_dequantize_pc_u8_f32_ref(&q[o, c, 0], inner, scales[c], zpf[c],
                                                 &out[o, c, 0])
                elif qint_t is int8_t:
                    qrt_dequantize_pc_s8_f32_ref(&q[o, c, 0], inner, scales[c], zpf[c],
                                                 &out[o, c, 0])
                else:
                    qrt_dequantize_pc_s32_f32_ref(&q[o, c, 0], inner, scales[c], zpf[c],
                                                  &out[o, c, 0])

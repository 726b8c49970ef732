/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file aten_quant_ref.h
 * @brief The two quantize formulas of ATen's generic (TensorIterator) quantized kernels, which
 *        torch runs for qint8, broadcasting, and cases QNNPACK refuses. Shared by add and the
 *        qint8 activation tables so that every kernel rounds the same way.
 *
 * cpu_kernel_vec runs each contiguous row as whole chunks of Vectorized<qint> (64 codes on an
 * AVX512 build) through the vector lambda and the remaining tail through the scalar lambda:
 *  - vector quantize (QuantizeAvx512): t = min(f32(y * inv), 2147483520); r = cvtps2dq(t)
 *    (INT32_MIN when t < -2^31); v = r + zp with int32 wrap-around; clamp to [qmin, qmax].
 *  - scalar quantize_val (fbgemm::Quantize, "legacy"): v = rne(f32(f32(y * inv) + zp)),
 *    clamped in double.
 */
#ifndef QRT_REF_ATEN_QUANT_REF_H
#define QRT_REF_ATEN_QUANT_REF_H

#include <math.h>
#include "qrt/types.h"

/** Vector-path quantize of y with inv = f32(1 / f32(scale)). */
static inline int32_t qrt_aten_quantize_vec(float y, float inv, int32_t zp, int32_t qmin,
                                            int32_t qmax) {
    float t = y * inv;
    t = t < 2147483520.0f ? t : 2147483520.0f;
    const int32_t r = t >= -2147483648.0f ? (int32_t)rintf(t) : INT32_MIN;
    const int32_t v = (int32_t)((uint32_t)r + (uint32_t)zp);
    return v < qmin ? qmin : (v > qmax ? qmax : v);
}

/** Scalar-path quantize of y. */
static inline int32_t qrt_aten_quantize_scalar(float y, float inv, int32_t zp, int32_t qmin,
                                               int32_t qmax) {
    float t = y * inv;
    t = t + (float)zp;
    const double r = (double)rintf(t);
    if (r != r) return qmin;
    return r < qmin ? qmin : (r > qmax ? qmax : (int32_t)r);
}

#endif /* QRT_REF_ATEN_QUANT_REF_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cat.h
 * @brief Public requantizing copy for quantized cat; the AVX2 variant is the reference loop
 *        compiled with AVX2+FMA (fmaf is correctly rounded in both: bit-exact with `_ref`).
 */
#ifndef QRT_CAT_H
#define QRT_CAT_H

#include "qrt/cpu.h"
#include "qrt/ref/cat_ref.h"

#ifdef QRT_HAVE_X86
__attribute__((target("avx2,fma"))) static void
qrt_requant_copy_u8__avx2(const qrt_requant_copy_params *p, const uint8_t *in, size_t rows,
                          size_t len, size_t in_stride, uint8_t *out, size_t out_stride)
{
    QRT_REQUANT_COPY_BODY(uint8_t)
}
__attribute__((target("avx2,fma"))) static void
qrt_requant_copy_s8__avx2(const qrt_requant_copy_params *p, const int8_t *in, size_t rows,
                          size_t len, size_t in_stride, int8_t *out, size_t out_stride)
{
    QRT_REQUANT_COPY_BODY(int8_t)
}
#endif

/** Gate: finite positive scales, qmin < qmax. */
static inline qrt_status qrt_requant_copy_check(const qrt_requant_copy_params *p)
{
    if (!(p->in_scale > 0.0f) || !(p->inv_out > 0.0f) || !(p->qmin < p->qmax) ||
        !(p->in_scale < INFINITY) || !(p->inv_out < INFINITY))
        return QRT_ERR_ARG;
    return QRT_OK;
}

/** Same contract as qrt_requant_copy_u8_ref(); `variant` == QRT_ISA_REF forces the reference. */
static inline qrt_status qrt_requant_copy_u8(const qrt_requant_copy_params *p, const uint8_t *in,
                                             size_t rows, size_t len, size_t in_stride,
                                             uint8_t *out, size_t out_stride, int variant)
{
    const qrt_status st = qrt_requant_copy_check(p);
    if (st != QRT_OK)
        return st;
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && (qrt_cpu_features() & QRT_CPU_AVX2)) {
        qrt_requant_copy_u8__avx2(p, in, rows, len, in_stride, out, out_stride);
        return QRT_OK;
    }
#endif
    (void)variant;
    qrt_requant_copy_u8_ref(p, in, rows, len, in_stride, out, out_stride);
    return QRT_OK;
}

/** As qrt_requant_copy_u8(), for qint8 codes. */
static inline qrt_status qrt_requant_copy_s8(const qrt_requant_copy_params *p, const int8_t *in,
                                             size_t rows, size_t len, size_t in_stride,
                                             int8_t *out, size_t out_stride, int variant)
{
    const qrt_status st = qrt_requant_copy_check(p);
    if (st != QRT_OK)
        return st;
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && (qrt_cpu_features() & QRT_CPU_AVX2)) {
        qrt_requant_copy_s8__avx2(p, in, rows, len, in_stride, out, out_stride);
        return QRT_OK;
    }
#endif
    (void)variant;
    qrt_requant_copy_s8_ref(p, in, rows, len, in_stride, out, out_stride);
    return QRT_OK;
}

#endif /* QRT_CAT_H */

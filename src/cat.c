/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cat.c
 * @brief qrt/cat.h: run-time choice between the reference and the AVX2 variant.
 */
#include "qrt/cat.h"

qrt_status qrt_requant_copy_check(const qrt_requant_copy_params *p) {
    if (!(p->in_scale > 0.0f) || !(p->inv_out > 0.0f) || !(p->qmin < p->qmax) ||
        !(p->in_scale < INFINITY) || !(p->inv_out < INFINITY))
        return QRT_ERR_ARG;
    return QRT_OK;
}

qrt_status qrt_requant_copy_u8(const qrt_requant_copy_params *p, const uint8_t *in, size_t rows,
                               size_t len, size_t in_stride, uint8_t *out, size_t out_stride,
                               int variant) {
    const qrt_status st = qrt_requant_copy_check(p);
    if (st != QRT_OK) return st;
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

qrt_status qrt_requant_copy_s8(const qrt_requant_copy_params *p, const int8_t *in, size_t rows,
                               size_t len, size_t in_stride, int8_t *out, size_t out_stride,
                               int variant) {
    const qrt_status st = qrt_requant_copy_check(p);
    if (st != QRT_OK) return st;
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

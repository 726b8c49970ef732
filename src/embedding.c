/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file embedding.c
 * @brief qrt/embedding.h: the gate, then the AVX2+FMA variant or the reference.
 */
#include "qrt/embedding.h"

qrt_status qrt_embedding_bag_f32(const qrt_embedding_params *p, const float *table,
                                 const int64_t *idx, const int64_t *starts, const float *w,
                                 float *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && (qrt_cpu_features() & QRT_CPU_AVX2)) {
        const qrt_status st = qrt_embedding_f32_check(p, idx, starts, w);
        if (st != QRT_OK)
            return st;
        qrt_embedding_bag_f32__avx2(p, table, idx, starts, w, out);
        return QRT_OK;
    }
#endif
    (void)variant;
    return qrt_embedding_bag_f32_ref(p, table, idx, starts, w, out);
}

qrt_status qrt_embedding_bag_rowwise(const qrt_embedding_params *p, const uint8_t *codes,
                                     const float *scale, const float *bias, const int64_t *idx,
                                     const int64_t *starts, const float *w, float *out,
                                     int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && (qrt_cpu_features() & QRT_CPU_AVX2)) {
        const qrt_status st = qrt_embedding_rowwise_check(p, idx, starts);
        if (st != QRT_OK)
            return st;
        qrt_embedding_bag_rowwise__avx2(p, codes, scale, bias, idx, starts, w, out);
        return QRT_OK;
    }
#endif
    (void)variant;
    return qrt_embedding_bag_rowwise_ref(p, codes, scale, bias, idx, starts, w, out);
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file embedding.h
 * @brief Public embedding-bag kernels: the gate of qrt/ref/embedding_ref.h, then the AVX2+FMA
 *        variant when the CPU has it (the reference loop bodies compiled with -mavx2 -mfma:
 *        fmaf is correctly rounded in both, so the results are bit-identical) or the reference.
 */
#ifndef QRT_EMBEDDING_H
#define QRT_EMBEDDING_H

#include "qrt/cpu.h"
#include "qrt/ref/embedding_ref.h"

#ifdef QRT_HAVE_X86
/* src/x86/embedding_avx2.c; called only after the gate passed. */
void qrt_embedding_bag_f32__avx2(const qrt_embedding_params *p, const float *table,
                                 const int64_t *idx, const int64_t *starts, const float *w,
                                 float *out);
void qrt_embedding_bag_rowwise__avx2(const qrt_embedding_params *p, const uint8_t *codes,
                                     const float *scale, const float *bias, const int64_t *idx,
                                     const int64_t *starts, const float *w, float *out);
#endif

/** As qrt_embedding_bag_f32_ref(); `variant` == QRT_ISA_REF forces the reference. */
qrt_status qrt_embedding_bag_f32(const qrt_embedding_params *p, const float *table,
                                 const int64_t *idx, const int64_t *starts, const float *w,
                                 float *out, int variant);

/** As qrt_embedding_bag_rowwise_ref(); `variant` == QRT_ISA_REF forces the reference. */
qrt_status qrt_embedding_bag_rowwise(const qrt_embedding_params *p, const uint8_t *codes,
                                     const float *scale, const float *bias, const int64_t *idx,
                                     const int64_t *starts, const float *w, float *out,
                                     int variant);

#endif /* QRT_EMBEDDING_H */

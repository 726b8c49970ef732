/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file embedding_avx2.c
 * @brief The AVX2 variants declared in qrt/embedding.h: the reference loop bodies of
 *        qrt/ref/embedding_ref.h compiled in this translation unit with -mavx2 -mfma
 *        (meson.build; -ffp-contract=off still holds: only fmaf() fuses), called only after
 *        the gate passed and qrt/cpu.h reported AVX2 + FMA.
 */
#include "qrt/embedding.h"

__attribute__((target("avx2,fma"))) void
qrt_embedding_bag_f32__avx2(const qrt_embedding_params *p, const float *table,
                            const int64_t *idx, const int64_t *starts, const float *w,
                            float *out) {
    QRT_EMBEDDING_BAG_F32_BODY
}

__attribute__((target("avx2,fma"))) void
qrt_embedding_bag_rowwise__avx2(const qrt_embedding_params *p, const uint8_t *codes,
                                const float *scale, const float *bias, const int64_t *idx,
                                const int64_t *starts, const float *w, float *out) {
    QRT_EMBEDDING_BAG_ROWWISE_BODY
}

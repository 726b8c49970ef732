/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool1d_ref.c
 * @brief The reference (specification) kernels declared in qrt/ref/pool1d_ref.h: plain loops,
 *        compiled with the baseline flags only.
 */
#include "qrt/ref/pool1d_ref.h"

void qrt_max_pool1d_u8_ref(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out) {
    QRT_POOL1D_REF_BODY(qrt_max_pool1d_out_u8)
}

void qrt_max_pool1d_s8_ref(const qrt_pool1d_params *p, const int8_t *in, int8_t *out) {
    QRT_POOL1D_REF_BODY(qrt_max_pool1d_out_s8)
}

void qrt_avg_pool1d_u8_ref(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out) {
    QRT_POOL1D_REF_BODY(qrt_avg_pool1d_out_u8)
}

void qrt_avg_pool1d_s8_ref(const qrt_pool1d_params *p, const int8_t *in, int8_t *out) {
    QRT_POOL1D_REF_BODY(qrt_avg_pool1d_out_s8)
}

void qrt_adaptive_avg_pool1d_u8_ref(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out) {
    QRT_ADAPTIVE_AVG_POOL1D_BODY(uint8_t)
}

void qrt_adaptive_avg_pool1d_s8_ref(const qrt_pool1d_params *p, const int8_t *in, int8_t *out) {
    QRT_ADAPTIVE_AVG_POOL1D_BODY(int8_t)
}

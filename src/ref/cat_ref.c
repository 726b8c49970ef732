/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cat_ref.c
 * @brief The reference (specification) kernels declared in qrt/ref/cat_ref.h: plain loops,
 *        compiled with the baseline flags only.
 */
#include "qrt/ref/cat_ref.h"

void qrt_requant_copy_u8_ref(const qrt_requant_copy_params *p, const uint8_t *in, size_t rows,
                             size_t len, size_t in_stride, uint8_t *out, size_t out_stride) {
    QRT_REQUANT_COPY_BODY(uint8_t)
}

void qrt_requant_copy_s8_ref(const qrt_requant_copy_params *p, const int8_t *in, size_t rows,
                             size_t len, size_t in_stride, int8_t *out, size_t out_stride) {
    QRT_REQUANT_COPY_BODY(int8_t)
}

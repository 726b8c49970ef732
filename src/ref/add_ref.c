/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file add_ref.c
 * @brief The reference (specification) kernels declared in qrt/ref/add_ref.h: plain loops,
 *        compiled with the baseline flags only.
 */
#include "qrt/ref/add_ref.h"

void qrt_add_u8_ref(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b, size_t n,
                    uint8_t *out) {
    QRT_ADD_QNNP_BODY
}

void qrt_add_float_u8_ref(const qrt_add_float_params *p, const uint8_t *a, const uint8_t *b,
                          size_t rows, size_t inner, size_t nvec, uint8_t *out) {
    QRT_ADD_FLOAT_BODY(uint8_t)
}

void qrt_add_float_s8_ref(const qrt_add_float_params *p, const int8_t *a, const int8_t *b,
                          size_t rows, size_t inner, size_t nvec, int8_t *out) {
    QRT_ADD_FLOAT_BODY(int8_t)
}

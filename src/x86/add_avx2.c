/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file add_avx2.c
 * @brief The AVX2 variants declared in qrt/add.h: the reference loop bodies of
 *        qrt/ref/add_ref.h compiled in this translation unit with -mavx2 -mfma (meson.build),
 *        called only after qrt/cpu.h reports AVX2 + FMA.  The target attributes stay, so
 *        drivers that compile this file without the flags still get the same code.
 */
#include "qrt/add.h"

__attribute__((target("avx2,fma"))) void qrt_add_u8__avx2(const qrt_add_qnnp_params *p,
                                                          const uint8_t *a, const uint8_t *b,
                                                          size_t n, uint8_t *out) {
    QRT_ADD_QNNP_BODY
}

__attribute__((target("avx2,fma"))) void qrt_add_float_u8__avx2(const qrt_add_float_params *p,
                                                                const uint8_t *a, const uint8_t *b,
                                                                size_t rows, size_t inner,
                                                                size_t nvec, uint8_t *out) {
    QRT_ADD_FLOAT_BODY(uint8_t)
}

__attribute__((target("avx2,fma"))) void qrt_add_float_s8__avx2(const qrt_add_float_params *p,
                                                                const int8_t *a, const int8_t *b,
                                                                size_t rows, size_t inner,
                                                                size_t nvec, int8_t *out) {
    QRT_ADD_FLOAT_BODY(int8_t)
}

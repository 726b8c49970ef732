/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file activation_avx2.c
 * @brief The AVX2 variants declared in qrt/activation.h: the reference loop bodies of
 *        qrt/ref/activation_ref.h compiled in this translation unit with -mavx2 -mfma (meson.build),
 *        called only after qrt/cpu.h reports AVX2 + FMA.  The target attributes stay, so
 *        drivers that compile this file without the flags still get the same code.
 */
#include "qrt/activation.h"

__attribute__((target("avx2"))) void qrt_relu_u8__avx2(const uint8_t *x, size_t n, uint8_t zp,
                                                       uint8_t *out) {
    QRT_RELU_BODY
}

__attribute__((target("avx2"))) void qrt_relu_s8__avx2(const int8_t *x, size_t n, int8_t zp,
                                                       int8_t *out) {
    QRT_RELU_BODY
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cat_avx2.c
 * @brief The AVX2 variants declared in qrt/cat.h: the reference loop bodies of
 *        qrt/ref/cat_ref.h compiled in this translation unit with -mavx2 -mfma (meson.build),
 *        called only after qrt/cpu.h reports AVX2 + FMA.  The target attributes stay, so
 *        drivers that compile this file without the flags still get the same code.
 */
#include "qrt/cat.h"

__attribute__((target("avx2,fma"))) void
qrt_requant_copy_u8__avx2(const qrt_requant_copy_params *p, const uint8_t *in, size_t rows,
                          size_t len, size_t in_stride, uint8_t *out, size_t out_stride) {
    QRT_REQUANT_COPY_BODY(uint8_t)
}

__attribute__((target("avx2,fma"))) void qrt_requant_copy_s8__avx2(const qrt_requant_copy_params *p,
                                                                   const int8_t *in, size_t rows,
                                                                   size_t len, size_t in_stride,
                                                                   int8_t *out, size_t out_stride) {
    QRT_REQUANT_COPY_BODY(int8_t)
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool1d_avx2.h
 * @brief The AVX2 pooling variants (x86-64 with AVX2; src/x86/pool1d_avx2.c, compiled with
 *        -mavx2 -mfma).
 *        Same contracts as the qrt_*_pool1d_*_ref() functions of ref/pool1d_ref.h and bit-exact
 *        with them; the design is described in the source file.
 */
#ifndef QRT_X86_POOL1D_AVX2_H
#define QRT_X86_POOL1D_AVX2_H

#include "qrt/pool1d_params.h"
#include "qrt/ref/pool1d_ref.h"

void qrt_max_pool1d_u8__avx2(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out);
void qrt_avg_pool1d_u8__avx2(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out);
void qrt_adaptive_avg_pool1d_u8__avx2(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out);
void qrt_max_pool1d_s8__avx2(const qrt_pool1d_params *p, const int8_t *in, int8_t *out);
void qrt_avg_pool1d_s8__avx2(const qrt_pool1d_params *p, const int8_t *in, int8_t *out);
void qrt_adaptive_avg_pool1d_s8__avx2(const qrt_pool1d_params *p, const int8_t *in, int8_t *out);

#endif /* QRT_X86_POOL1D_AVX2_H */

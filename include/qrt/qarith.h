/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qarith.h
 * @brief Public quantized mean over the last dim: the dispatchers run the fastest compiled-in
 *        variant; each is bit-exact with its `_ref` in ref/qarith_ref.h (the AVX2 variant
 *        sums with vpsadbw: integer sums are exact in any order).
 */
#ifndef QRT_QARITH_H
#define QRT_QARITH_H

#include "qrt/cpu.h"
#include "qrt/ref/qarith_ref.h"

#ifdef QRT_HAVE_X86
/* The AVX2 variants (src/x86/qarith_avx2.c, compiled with -mavx2 -mfma). */
void qrt_mean_rows_u8__avx2(const uint8_t *x, size_t rows, size_t len, uint8_t *out);
void qrt_mean_rows_s8__avx2(const int8_t *x, size_t rows, size_t len, int8_t *out);
#endif

/** Which mean variant runs on this CPU (QRT_ISA_*). */
int qrt_mean_isa(void);

/** Same contract as qrt_mean_rows_u8_ref(); `variant` == QRT_ISA_REF forces the reference. */
void qrt_mean_rows_u8(const uint8_t *x, size_t rows, size_t len, uint8_t *out, int variant);

/** Same contract as qrt_mean_rows_s8_ref(). */
void qrt_mean_rows_s8(const int8_t *x, size_t rows, size_t len, int8_t *out, int variant);

/**
 * @brief torch's quantized mul on rows (qrt/ops/qarith.py: the op's formula, whose numpy steps
 *        are its specification): y[r][i] = zo + clamp(rne(f32((a[r][i] - za) * (bv - zb)) * m),
 *        lo, hi), bv = b[r] (b_per_row: a [N, C, 1, 1] squeeze-excitation scale over the rows
 *        of [N, C, H, W]) or b[r][i].  m finite (the caller checks); |y| >= 2^22 rounds to the
 *        clamp either way, so the rounding is the 1.5 * 2^23 addition below that.  One
 *        portable loop (no variant: the compiler vectorises it).
 */
void qrt_mul_rows_u8(const uint8_t *a, const uint8_t *b, size_t rows, size_t len, int b_per_row,
                     int32_t za, int32_t zb, float m, float lo, float hi, float zo, uint8_t *y);

#endif /* QRT_QARITH_H */

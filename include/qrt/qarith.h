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

#endif /* QRT_QARITH_H */

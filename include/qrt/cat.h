/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cat.h
 * @brief Public requantizing copy for quantized cat; the AVX2 variant is the reference loop
 *        compiled with AVX2+FMA (fmaf is correctly rounded in both: bit-exact with `_ref`).
 */
#ifndef QRT_CAT_H
#define QRT_CAT_H

#include "qrt/cpu.h"
#include "qrt/ref/cat_ref.h"

#ifdef QRT_HAVE_X86
/* The AVX2 variants (src/x86/cat_avx2.c, compiled with -mavx2 -mfma). */
void qrt_requant_copy_u8__avx2(const qrt_requant_copy_params *p, const uint8_t *in, size_t rows,
                               size_t len, size_t in_stride, uint8_t *out, size_t out_stride);
void qrt_requant_copy_s8__avx2(const qrt_requant_copy_params *p, const int8_t *in, size_t rows,
                               size_t len, size_t in_stride, int8_t *out, size_t out_stride);
#endif

/** Gate: finite positive scales, qmin < qmax. */
qrt_status qrt_requant_copy_check(const qrt_requant_copy_params *p);

/** Same contract as qrt_requant_copy_u8_ref(); `variant` == QRT_ISA_REF forces the reference. */
qrt_status qrt_requant_copy_u8(const qrt_requant_copy_params *p, const uint8_t *in, size_t rows,
                               size_t len, size_t in_stride, uint8_t *out, size_t out_stride,
                               int variant);

/** As qrt_requant_copy_u8(), for qint8 codes. */
qrt_status qrt_requant_copy_s8(const qrt_requant_copy_params *p, const int8_t *in, size_t rows,
                               size_t len, size_t in_stride, int8_t *out, size_t out_stride,
                               int variant);

#endif /* QRT_CAT_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file activation.h
 * @brief Public element-wise activations (relu, table lookups for hardswish/sigmoid).
 *
 * The dispatchers run the fastest compiled-in variant; each variant is bit-exact with its
 * `_ref` in ref/activation_ref.h (integer code: the AVX2 variant is the same loop compiled
 * with AVX2 enabled).
 */
#ifndef QRT_ACTIVATION_H
#define QRT_ACTIVATION_H

#include "qrt/cpu.h"
#include "qrt/ref/activation_ref.h"

#ifdef QRT_HAVE_X86
/* The AVX2 variants (src/x86/activation_avx2.c, compiled with -mavx2 -mfma). */
void qrt_relu_u8__avx2(const uint8_t *x, size_t n, uint8_t zp, uint8_t *out);
void qrt_relu_s8__avx2(const int8_t *x, size_t n, int8_t zp, int8_t *out);
#endif

/** Which relu variant runs on this CPU (QRT_ISA_*). */
int qrt_activation_isa(void);

/** Same contract as qrt_relu_u8_ref(); `variant` == QRT_ISA_REF forces the reference. */
void qrt_relu_u8(const uint8_t *x, size_t n, uint8_t zp, uint8_t *out, int variant);

/** Same contract as qrt_relu_s8_ref(). */
void qrt_relu_s8(const int8_t *x, size_t n, int8_t zp, int8_t *out, int variant);

/** Table lookup; a gather does not beat the scalar loop, so only the reference exists. */
void qrt_lut_u8(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out);

#endif /* QRT_ACTIVATION_H */

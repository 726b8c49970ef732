/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file add.h
 * @brief Public quantized add / add_relu dispatchers.
 *
 * The AVX2 variants are the reference loops compiled with AVX2+FMA enabled: the integer path
 * is exact by construction and the float path uses fmaf() only where the reference does, with
 * -ffp-contract=off elsewhere, so both are bit-exact with their `_ref`.
 */
#ifndef QRT_ADD_H
#define QRT_ADD_H

#include "qrt/cpu.h"
#include "qrt/ref/add_ref.h"

#ifdef QRT_HAVE_X86
/* The AVX2 variants (src/x86/add_avx2.c, compiled with -mavx2 -mfma). */
void qrt_add_u8__avx2(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b, size_t n,
                      uint8_t *out);
void qrt_add_float_u8__avx2(const qrt_add_float_params *p, const uint8_t *a, const uint8_t *b,
                            size_t rows, size_t inner, size_t nvec, uint8_t *out);
void qrt_add_float_s8__avx2(const qrt_add_float_params *p, const int8_t *a, const int8_t *b,
                            size_t rows, size_t inner, size_t nvec, int8_t *out);
/* The AVX-512 QNNPACK add (src/x86/add_avx512.c, the qrt_avx512 unit: F/BW/VL/DQ). */
void qrt_add_u8__avx512(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b,
                        size_t n, uint8_t *out);
#endif

#ifdef QRT_HAVE_ARM
/* The NEON QNNPACK add (src/neon/qarith_neon.c; aarch64, and armv7 with -mfpu=neon). */
void qrt_add_u8__neon(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b, size_t n,
                      uint8_t *out);
#endif
/** Which add variant runs on this CPU (QRT_ISA_*). */
int qrt_add_isa(void);

/** Same contract as qrt_add_u8_ref(); `variant` == QRT_ISA_REF forces the reference. */
void qrt_add_u8(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b, size_t n,
                uint8_t *out, int variant);

#ifndef QRT_ADD_MT_MIN
/** Elements below which qrt_add_u8_mt() runs on the calling thread only. */
#define QRT_ADD_MT_MIN 32768
#endif

/**
 * qrt_add_u8() over up to `threads` threads (the qrt pool): the elements are cut into runs
 * on 64-element boundaries, each computed by the same kernel, so the result is bit-identical
 * for every thread count.  `out` may alias a or b (element for element).
 */
void qrt_add_u8_mt(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b, size_t n,
                   uint8_t *out, int variant, int threads);

/** Same contract as qrt_add_float_u8_ref(). */
void qrt_add_float_u8(const qrt_add_float_params *p, const uint8_t *a, const uint8_t *b,
                      size_t rows, size_t inner, size_t nvec, uint8_t *out, int variant);

/** Same contract as qrt_add_float_s8_ref(). */
void qrt_add_float_s8(const qrt_add_float_params *p, const int8_t *a, const int8_t *b, size_t rows,
                      size_t inner, size_t nvec, int8_t *out, int variant);

#endif /* QRT_ADD_H */

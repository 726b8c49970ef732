/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file activation.h
 * @brief Public element-wise activations (relu, table lookups for hardswish/sigmoid).
 *
 * The dispatchers run the fastest compiled-in variant; each variant is bit-exact with its
 * `_ref` in ref/activation_ref.h (integer code: relu's AVX2 variant is the same loop compiled
 * with AVX2 enabled; the table lookups are byte permutations).
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

/* ---- 256-entry table lookup (hardswish, the lut op, sigmoid, ...) --------------------------
 * A byte permutation over the table: no arithmetic, so every variant equals qrt_lut_u8_ref().
 * - AVX-512 VBMI (src/x86/activation_avx512vbmi.c): two vpermt2b over the table's 64-byte
 *   quarters, selected by the index's top bit: 64 codes per 3 instructions.
 * - aarch64 NEON (src/neon/activation_neon.c): vqtbl4q_u8 + 3 vqtbx4q_u8: 16 codes per 4.
 * - AVX2 without VBMI (src/x86/activation_avx2.c): a vpshufb over each of sixteen 16-byte
 *   pieces, selected by a compare of the high nibble: 32 codes per 64 instructions, 1.55x the
 *   scalar loop on a Zen 3 core (2026-12-04; an earlier measurement on an AVX-512 host had it
 *   no faster, where VBMI runs anyway).
 * - armv7 runs the reference: eight vtbl4/vtbx4 over 32-byte pieces per 8 codes do not beat the
 *   scalar loop's load-load-store (docs/kernels.md).
 */
#ifdef QRT_HAVE_X86
void qrt_lut_u8__avx512vbmi(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out);
void qrt_lut_u8__avx2(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out);
#endif
#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
void qrt_lut_u8__neon(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out);
#endif

/** Which table-lookup variant runs on this CPU (QRT_ISA_*; VBMI is coded QRT_ISA_AVX512VNNI,
 *  the AVX-512 level's name, and QRT_DISABLE_ISA=avx512vnni masks it). */
int qrt_lut_isa(void);

/** Same contract as qrt_lut_u8_ref(); `variant` as in qrt_mul_rows_u8() (qarith.h): < 0 the
 *  best, QRT_ISA_REF the reference, one this CPU lacks the best below it. */
void qrt_lut_u8(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out, int variant);

/** Same contract as qrt_lut2_u8_ref(): qrt_lut_u8() over [0, nvec) and [nvec, n). */
void qrt_lut2_u8(const uint8_t *lut_vec, const uint8_t *lut_scalar, const uint8_t *x, size_t n,
                 size_t nvec, uint8_t *out, int variant);

#ifndef QRT_LUT_MT_MIN
#define QRT_LUT_MT_MIN 1048576
#endif
/** Codes below which qrt_lut2_u8_mt() runs on the calling thread alone; QRT_LUT_MT_MIN unless
 *  set at run time (tests set 0 to cut every call). */
extern size_t qrt_lut_mt_min;

/**
 * @brief qrt_lut2_u8() (nvec = n: qrt_lut_u8()) over up to `threads` threads (the qrt pool):
 *        the codes are cut into runs on 64-code boundaries, each looked up by the same kernel
 *        in its own table, so the result is bit-identical for every thread count.  `out` may
 *        alias x.
 */
void qrt_lut2_u8_mt(const uint8_t *lut_vec, const uint8_t *lut_scalar, const uint8_t *x, size_t n,
                    size_t nvec, uint8_t *out, int variant, int threads);

#endif /* QRT_ACTIVATION_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qarith.h
 * @brief Public quantized mean over the last dim and quantized mul on rows: the dispatchers
 *        run the fastest compiled-in variant; each is bit-exact with its `_ref` in
 *        ref/qarith_ref.h (the mean's AVX2 variant sums with vpsadbw: integer sums are exact
 *        in any order; the mul's variants repeat the reference's float32 steps).
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

/* ---- quantized mul on rows ------------------------------------------------------------------
 * qrt_mul_rows_u8_ref (ref/qarith_ref.h) is the specification; the variants compute its
 * float32 steps lane by lane (AVX2: 8 lanes, AVX-512: 16, NEON: 4; 32 / 64 / 16 codes a step),
 * bit-exact for every input the dispatcher gives them (below).  The portable loop is not
 * vectorised by GCC 12 -O3 (its select chains and the int-to-byte store), ~1 ns a code. */
#ifdef QRT_HAVE_X86
/* src/x86/qarith_avx2.c (-mavx2 -mfma) and src/x86/qarith_avx512.c (the qrt_avx512 unit). */
void qrt_mul_rows_u8__avx2(const uint8_t *a, const uint8_t *b, size_t rows, size_t len,
                           int b_per_row, int32_t za, int32_t zb, float m, float lo, float hi,
                           float zo, uint8_t *y);
void qrt_mul_rows_u8__avx512(const uint8_t *a, const uint8_t *b, size_t rows, size_t len,
                             int b_per_row, int32_t za, int32_t zb, float m, float lo, float hi,
                             float zo, uint8_t *y);
#endif
#ifdef QRT_HAVE_ARM
/* src/neon/qarith_neon.c (aarch64, and armv7 with -mfpu=neon). */
void qrt_mul_rows_u8__neon(const uint8_t *a, const uint8_t *b, size_t rows, size_t len,
                           int b_per_row, int32_t za, int32_t zb, float m, float lo, float hi,
                           float zo, uint8_t *y);
#endif

/** Whether a variant must clamp f to [-2^22, 2^22] before rounding: not when no product can
 *  reach it (fl(max|c| * |m|) <= 2^22 bounds every |f| by monotone rounding), the clamp
 *  then being the identity.  za, zb in [0, 255] (the variants' domain): max|c| <= 65025. */
static inline int qrt_mul_needs_big_clamp(int32_t za, int32_t zb, float m) {
    const int32_t am = za > 255 - za ? za : 255 - za, bm = zb > 255 - zb ? zb : 255 - zb;
    const float am_ = (float)(am * bm), m_ = m < 0.0f ? -m : m;
    return !(am_ * m_ <= 4194304.0f);
}

/** Whether the [lo, hi] clamp is the full code range, done by saturating narrows: zo an
 *  integer in [0, 255], lo == -zo, hi == 255 - zo.  After the rounding f is an integer with
 *  |f| <= 2^22, so clamp(f, lo, hi) + zo == clamp(f + zo, 0, 255) exactly (every value an
 *  integer below 2^24), the truncation is exact, and a signed-saturating narrow to 16 bits
 *  followed by an unsigned-saturating one to 8 bits computes that clamp. */
static inline int qrt_mul_full_range(float lo, float hi, float zo) {
    return zo >= 0.0f && zo <= 255.0f && (float)(int32_t)zo == zo && lo == -zo &&
           hi == 255.0f - zo;
}

/** Which mul variant runs on this CPU (QRT_ISA_*; the AVX-512 F/BW/VL/DQ level is coded
 *  QRT_ISA_AVX512VNNI, as for the quantize kernels). */
int qrt_mul_isa(void);

/**
 * @brief Same contract as qrt_mul_rows_u8_ref(); runs the variant `variant` names (QRT_ISA_*;
 *        < 0: the best; one this CPU lacks: the best below it; QRT_ISA_REF: the reference).
 *        Arguments outside the variants' domain run the reference: za or zb outside [0, 255],
 *        m not finite, lo > hi or NaN.
 */
void qrt_mul_rows_u8(const uint8_t *a, const uint8_t *b, size_t rows, size_t len, int b_per_row,
                     int32_t za, int32_t zb, float m, float lo, float hi, float zo, uint8_t *y,
                     int variant);

#ifndef QRT_MUL_MT_MIN
#define QRT_MUL_MT_MIN 32768
#endif
/** Codes below which qrt_mul_rows_u8_mt() runs on the calling thread alone; QRT_MUL_MT_MIN
 *  unless set at run time (tests set 0 to cut every call). */
extern size_t qrt_mul_mt_min;

/**
 * @brief qrt_mul_rows_u8() over up to `threads` threads (the qrt pool): the rows * len codes
 *        are cut into runs on 64-code boundaries of the flat index (a run may start or end
 *        inside a row), each computed by the same kernel, so the result is bit-identical for
 *        every thread count.
 */
void qrt_mul_rows_u8_mt(const uint8_t *a, const uint8_t *b, size_t rows, size_t len,
                        int b_per_row, int32_t za, int32_t zb, float m, float lo, float hi,
                        float zo, uint8_t *y, int variant, int threads);

#endif /* QRT_QARITH_H */

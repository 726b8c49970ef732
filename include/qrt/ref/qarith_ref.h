/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qarith_ref.h
 * @brief Reference kernels of the quantized mean over the last dim (torch 2.13's
 *        qmean_inner_dim kernel), of torch's quantized mul on rows (qrt/ops/qarith.py) and of
 *        a per-channel 256-entry table lookup (the quantized batch norm's tables,
 *        qrt/ops/batch_norm.py). Plain loops; the specification.
 */
#ifndef QRT_REF_QARITH_REF_H
#define QRT_REF_QARITH_REF_H

#include <math.h>
#include <stddef.h>
#include "qrt/types.h"

/* Row sums in blocks of 2^16 codes: a 32-bit partial sum of one block cannot overflow, and
 * the block loop is a plain widening sum the compiler vectorises.  Integer sums and one IEEE
 * float32 division: every compilation, and the AVX2 variant, give the same codes. */
#define QRT_MEAN_BLOCK 65536u

#define QRT_MEAN_ROWS_8_BODY(T, ACC, TOTAL)                                                       \
    for (size_t r = 0; r < rows; ++r) {                                                            \
        const T *row = x + r * len;                                                                \
        TOTAL s = 0;                                                                               \
        for (size_t b = 0; b < len; b += QRT_MEAN_BLOCK) {                                         \
            const size_t e = len - b < QRT_MEAN_BLOCK ? len - b : QRT_MEAN_BLOCK;                  \
            ACC acc = 0;                                                                           \
            for (size_t i = 0; i < e; ++i) acc += row[b + i];                                      \
            s += acc;                                                                              \
        }                                                                                          \
        out[r] = (T)lrintf((float)s / (float)len); /* a mean of codes: within T's range */       \
    }

#define QRT_MEAN_ROWS_S32_BODY                                                                    \
    for (size_t r = 0; r < rows; ++r) {                                                            \
        const int32_t *row = x + r * len;                                                          \
        int64_t s = 0; /* |s| <= 2^31 * len: exact for any len below 2^32 */                      \
        for (size_t i = 0; i < len; ++i) s += row[i];                                              \
        const float y = rintf((float)s / (float)len);                                              \
        out[r] = y >= 2147483648.0f ? INT32_MIN : (int32_t)y;                                      \
    }

/**
 * @brief Mean of each row of quint8 codes, as torch's qmean_inner_dim kernel.
 *
 * out[r] = rne((float)s / (float)len) with s = the exact (int64) sum of x[r][0..len); the
 * input's zero point cancels (the output keeps the input's qparams).
 * @param[in]  x    [rows][len] codes
 * @param[in]  len  >= 1
 * @param[out] out  [rows]
 */
void qrt_mean_rows_u8_ref(const uint8_t *x, size_t rows, size_t len, uint8_t *out);

/** As qrt_mean_rows_u8_ref(), for qint8 codes. */
void qrt_mean_rows_s8_ref(const int8_t *x, size_t rows, size_t len, int8_t *out);

/** As qrt_mean_rows_u8_ref(), for qint32 codes; a mean that rounds to 2^31 in float32 gives
 *  INT32_MIN, as torch's float-to-int32 conversion on x86. */
void qrt_mean_rows_s32_ref(const int32_t *x, size_t rows, size_t len, int32_t *out);

/**
 * @brief Per-channel table lookup: out[o][c][i] = lut[c][x[o][c][i]].
 * @param[in]  lut   [channels][256] output codes, indexed by the input code's byte
 * @param[in]  x     [outer][channels][inner] 8-bit codes (quint8 or qint8, as bytes)
 * @param[out] out   [outer][channels][inner]; may alias x
 */
void qrt_lut_channels_8_ref(const uint8_t *lut, const uint8_t *x, size_t outer, size_t channels,
                            size_t inner, uint8_t *out);

/**
 * @brief torch's quantized mul on rows (qrt/ops/qarith.py: the op's formula, whose numpy steps
 *        are its specification): y[r][i] = (uint8_t)(int32_t)(f32(clamp(rne(f), lo, hi)) + zo)
 *        with f = f32(f32((a[r][i] - za) * (bv - zb)) * m), bv = b[r] (b_per_row: a [N, C, 1, 1]
 *        squeeze-excitation scale over the rows of [N, C, H, W]) or b[r][i].
 *
 * Every step is one IEEE float32 operation, in this order, without contraction: f is first
 * clamped to [-2^22, 2^22] (|f| >= 2^22 rounds to the clamp either way), then rounded half to
 * even by adding and subtracting 1.5 * 2^23, then clamped to [lo, hi] (f < lo gives lo, else
 * f > hi gives hi), then zo is added and the sum truncated to int32 and to its low byte.  The
 * vector variants (qrt/qarith.h) compute exactly these operations lane by lane.
 * @param[in]  a    [rows][len] quint8 codes
 * @param[in]  b    [rows] (b_per_row) or [rows][len] quint8 codes
 * @param[in]  za, zb  zero points; (a - za) * (b - zb) must not overflow int32
 * @param[in]  m    f32(f32(s_a * s_b) / s_y); finite (the caller checks)
 * @param[in]  lo, hi  output clamp minus zo (f32), lo <= hi, neither NaN; lo + zo >= -2^31 and
 *                  hi + zo < 2^31 (the op: its dtype's range, relu folded into lo)
 * @param[in]  zo   output zero point (f32)
 * @param[out] y    [rows][len]; may alias a or b (element for element)
 */
void qrt_mul_rows_u8_ref(const uint8_t *a, const uint8_t *b, size_t rows, size_t len,
                         int b_per_row, int32_t za, int32_t zb, float m, float lo, float hi,
                         float zo, uint8_t *y);

#endif /* QRT_REF_QARITH_REF_H */

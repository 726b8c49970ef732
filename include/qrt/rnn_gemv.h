/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_gemv.h
 * @brief The hidden projection of the recurrent step loop (src/rnn.c) as a GEMV over weights
 *        packed once per layer: for one row x (uint8, zero point zx) and int8 weights w
 *        [rows, cols] with per-row zero points wz,
 *
 *            acc[o] = sum_i (x[i] - zx) * (w[o][i] - wz[o])          (int32, exact)
 *            y[o]   = f32(f32(acc[o]) * f32(ws[o] * s)) + bias[o]
 *
 *        the integers and float epilogue of the linear_dynamic kernel (hidden_gemv in
 *        src/rnn.c is the reference; tests compare every variant with it bit for bit).
 *
 * The variants compute dot = sum x[i] * w[o][i] on the raw codes and then
 * acc = dot - zx * wsum[o] - wz[o] * sum_i (x[i] - zx), in int32 wrapping arithmetic: the
 * exact acc fits in int32 because cols <= QRT_CONV1D_MAX_TAPS (255 * 255 * cols < 2^31), so
 * the wrapped result is the exact one.  No saturating instruction is used: AVX2 widens the
 * weights to int16 (vpmaddwd: |pair| <= 2 * 255 * 128), AVX-512 VNNI uses vpdpbusd (u8 x s8,
 * 4-term int32 sums, no saturation), NEON widens to int16 (smlal).
 *
 * Pack (qrt_rnn_gemv_pack): int32 wsum[rows_pad], then the weights in the variant's layout:
 *   avx2:       blocks of 8 rows, per pair of columns 8 x 2 int16 (32 bytes);
 *   avx512vnni: blocks of 16 rows, per group of 4 columns 16 x 4 int8 (64 bytes);
 *   neon:       blocks of 8 rows, per column 8 int16 (16 bytes).
 * Padding rows and columns hold zero weights.
 */
#ifndef QRT_RNN_GEMV_H
#define QRT_RNN_GEMV_H

#include <stddef.h>
#include <stdint.h>

#include "qrt/types.h"

/** @brief The variant the packed GEMV uses for the request `variant`: -1, the best the CPU
 *         has (minus QRT_DISABLE_ISA) of QRT_ISA_AVX512VNNI, QRT_ISA_AVX2, QRT_ISA_NEON; a
 *         QRT_ISA_* code, that variant if the CPU has it; else QRT_ISA_REF (no packed variant:
 *         the loop's reference hidden_gemv). */
int qrt_rnn_gemv_pick(int variant);

/** @brief Bytes of the pack of a [rows, cols] weight for `isa` (0 for QRT_ISA_REF or an
 *         unknown code, or when a size overflows). */
size_t qrt_rnn_gemv_pack_size(uint32_t rows, uint32_t cols, int isa);

/** @brief Fill `pack` (qrt_rnn_gemv_pack_size bytes) from w [rows, cols] row-major. */
void qrt_rnn_gemv_pack(const int8_t *w, uint32_t rows, uint32_t cols, int isa, void *pack);

/** @brief One variant's GEMV (the formula above) for one row x [cols]; y [rows]. */
typedef void (*qrt_rnn_gemv_fn)(const void *pack, uint32_t rows, uint32_t cols,
                                const uint8_t *x, int32_t zx, const int32_t *wz,
                                const float *ws, float s, const float *bias, float *y);

#define QRT_RNN_GEMV_DECL(ISA)                                                                     \
    void qrt_rnn_gemv_u8__##ISA(const void *pack, uint32_t rows, uint32_t cols,                    \
                                const uint8_t *x, int32_t zx, const int32_t *wz, const float *ws,  \
                                float s, const float *bias, float *y);
QRT_RNN_GEMV_DECL(avx2)
QRT_RNN_GEMV_DECL(avx512vnni)
QRT_RNN_GEMV_DECL(neon)

#endif /* QRT_RNN_GEMV_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_float_avx2.c
 * @brief qrt_linear_f32__avx2 (compiled with -mavx2 -mfma): qrt_linear_f32_ref()'s fmaf
 *        chains with one output per vector lane (a weight panel of 8 outputs is one vector per
 *        input i), x[r][i] broadcast.  Register tiles: 1 row x 8 panels (8 independent chains
 *        hide the FMA latency) or 2 rows x 4 panels.  The order of every chain is the
 *        reference's: bit-exact with it (tests/test_rnn_float.py).
 */
#include <immintrin.h>
#include <string.h>

#include "qrt/rnn_float.h"

#define QRT_TGT __attribute__((target("avx2,fma")))
#define NR QRT_LF32_NR

#define UNROLL _Pragma("GCC unroll 16")

/* rows r0..r0+RB-1, panels p0..p0+PG-1 (outputs p*8.., the last one possibly partial); the
 * accumulators stay in registers: every loop over them is unrolled (constant RB, PG), and
 * the epilogue reads them through a stored copy */
QRT_TGT static inline __attribute__((always_inline)) void tile(
    const float *x, size_t ldx, const float *wp, size_t k, size_t n, const float *b, float *y,
    size_t ldy, size_t p0, const int RB, const int PG)
{
    __m256 acc[2][8];
    UNROLL for (int r = 0; r < RB; r++) UNROLL for (int p = 0; p < PG; p++)
        acc[r][p] = _mm256_setzero_ps();
    const float *w0 = wp + p0 * k * NR;
    for (size_t i = 0; i < k; i++) {
        __m256 wv[8];
        UNROLL for (int p = 0; p < PG; p++) wv[p] = _mm256_loadu_ps(w0 + (p * k + i) * NR);
        UNROLL for (int r = 0; r < RB; r++) {
            const __m256 xb = _mm256_broadcast_ss(x + r * ldx + i);
            UNROLL for (int p = 0; p < PG; p++) acc[r][p] = _mm256_fmadd_ps(wv[p], xb, acc[r][p]);
        }
    }
    float res[2][8][NR];
    UNROLL for (int r = 0; r < RB; r++) UNROLL for (int p = 0; p < PG; p++)
        _mm256_storeu_ps(res[r][p], acc[r][p]);
    for (int p = 0; p < PG; p++) {
        const size_t o = (p0 + p) * NR, m = n - o < NR ? n - o : NR;
        for (int r = 0; r < RB; r++) {
            float *yr = y + r * ldy + o;
            if (b)
                for (size_t j = 0; j < m; j++) yr[j] = res[r][p][j] + b[o + j];
            else
                for (size_t j = 0; j < m; j++) yr[j] = res[r][p][j];
        }
    }
}

#define TILE(RB, PG)                                                                           \
    QRT_TGT static void tile_##RB##_##PG(const float *x, size_t ldx, const float *wp, size_t k,  \
                                         size_t n, const float *b, float *y, size_t ldy,       \
                                         size_t p0)                                            \
    {                                                                                          \
        tile(x, ldx, wp, k, n, b, y, ldy, p0, RB, PG);                                         \
    }

TILE(1, 1)
TILE(1, 2)
TILE(1, 3)
TILE(1, 4)
TILE(1, 5)
TILE(1, 6)
TILE(1, 7)
TILE(1, 8)
TILE(2, 1)
TILE(2, 2)
TILE(2, 3)
TILE(2, 4)

typedef void (*tile_fn)(const float *, size_t, const float *, size_t, size_t, const float *,
                        float *, size_t, size_t);
static const tile_fn tiles1[9] = {0, tile_1_1, tile_1_2, tile_1_3, tile_1_4,
                                  tile_1_5, tile_1_6, tile_1_7, tile_1_8};
static const tile_fn tiles2[5] = {0, tile_2_1, tile_2_2, tile_2_3, tile_2_4};

QRT_TGT void qrt_linear_f32__avx2(const float *x, size_t ldx, size_t rows, const float *wp,
                                  size_t k, size_t n, const float *b, float *y, size_t ldy)
{
    const size_t panels = (n + NR - 1) / NR;
    size_t r = 0;
    for (; r + 2 <= rows; r += 2)
        for (size_t p = 0; p < panels; p += 4) {
            const size_t pg = panels - p < 4 ? panels - p : 4;
            tiles2[pg](x + r * ldx, ldx, wp, k, n, b, y + r * ldy, ldy, p);
        }
    for (; r < rows; r++)
        for (size_t p = 0; p < panels; p += 8) {
            const size_t pg = panels - p < 8 ? panels - p : 8;
            tiles1[pg](x + r * ldx, ldx, wp, k, n, b, y + r * ldy, ldy, p);
        }
}


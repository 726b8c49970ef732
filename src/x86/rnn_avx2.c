/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_avx2.c
 * @brief The recurrent step loop (src/rnn_loop.h) for AVX2 CPUs without AVX-512 VNNI, around
 *        the packed hidden-projection GEMV of include/qrt/rnn_gemv.h: weights widened to int16,
 *        vpmaddwd over blocks of 8 rows (exact: |x w + x' w'| <= 2 * 255 * 128), four blocks
 *        at a time.
 */
#include <immintrin.h>
#include <string.h>

#include "qrt/rnn.h"
#include "qrt/rnn_gemv.h"

#define TGT __attribute__((target("avx2,fma")))

/* x[2g], x[2g+1] as two int16 lanes of one int32 (the last pair zero-padded) */
static inline TGT int32_t x2(const uint8_t *x, uint32_t cols, uint32_t g)
{
    const uint32_t lo = x[2 * g], hi = 2 * g + 1 < cols ? x[2 * g + 1] : 0u;
    return (int32_t)(lo | hi << 16);
}

static inline TGT void epilogue(__m256i dot, const int32_t *wsum, uint32_t o, uint32_t rows,
                                int32_t zx, int32_t sxs, const int32_t *wz, const float *ws,
                                float s, const float *bias, float *y)
{
    const uint32_t n = rows - o >= 8 ? 8 : rows - o;
    int32_t wzb[8] = {0};
    float wsb[8] = {0}, bb[8] = {0}, yb[8];
    memcpy(wzb, wz + o, 4 * n);
    memcpy(wsb, ws + o, 4 * n);
    memcpy(bb, bias + o, 4 * n);
    const __m256i wsv = _mm256_loadu_si256((const __m256i *)(wsum + o)); /* padded to 8 */
    /* acc = dot - zx*wsum - wz*sum(x - zx): int32 wrapping, exact (rnn_gemv.h) */
    __m256i acc = _mm256_sub_epi32(dot, _mm256_mullo_epi32(_mm256_set1_epi32(zx), wsv));
    acc = _mm256_sub_epi32(acc, _mm256_mullo_epi32(_mm256_loadu_si256((const __m256i *)wzb),
                                                   _mm256_set1_epi32(sxs)));
    const __m256 rs = _mm256_mul_ps(_mm256_loadu_ps(wsb), _mm256_set1_ps(s));
    const __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc), rs),
                                   _mm256_loadu_ps(bb));
    if (n == 8) {
        _mm256_storeu_ps(y + o, v);
    } else {
        _mm256_storeu_ps(yb, v);
        memcpy(y + o, yb, 4 * n);
    }
}

TGT void qrt_rnn_gemv_u8__avx2(const void *pack, uint32_t rows, uint32_t cols,
                               const uint8_t *x, int32_t zx, const int32_t *wz, const float *ws,
                               float s, const float *bias, float *y)
{
    const uint32_t rp = (rows + 7) / 8 * 8, k2 = (cols + 1) / 2, nb = rp / 8;
    const int32_t *wsum = (const int32_t *)pack;
    const uint8_t *pw = (const uint8_t *)pack + 4 * (size_t)rp;
    int32_t sx = 0;
    for (uint32_t i = 0; i < cols; i++) sx += x[i];
    const int32_t sxs = (int32_t)((uint32_t)sx - (uint32_t)cols * (uint32_t)zx);
    const size_t bstride = (size_t)k2 * 32; /* bytes of one block */
    uint32_t b = 0;
    for (; b + 4 <= nb; b += 4) {
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
        const uint8_t *p0 = pw + b * bstride;
        for (uint32_t g = 0; g < k2; g++) {
            const __m256i xb = _mm256_set1_epi32(x2(x, cols, g));
            const uint8_t *p = p0 + (size_t)g * 32;
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(xb, _mm256_loadu_si256((const __m256i *)p)));
            a1 = _mm256_add_epi32(
                a1, _mm256_madd_epi16(xb, _mm256_loadu_si256((const __m256i *)(p + bstride))));
            a2 = _mm256_add_epi32(
                a2, _mm256_madd_epi16(xb, _mm256_loadu_si256((const __m256i *)(p + 2 * bstride))));
            a3 = _mm256_add_epi32(
                a3, _mm256_madd_epi16(xb, _mm256_loadu_si256((const __m256i *)(p + 3 * bstride))));
        }
        epilogue(a0, wsum, 8 * b, rows, zx, sxs, wz, ws, s, bias, y);
        epilogue(a1, wsum, 8 * (b + 1), rows, zx, sxs, wz, ws, s, bias, y);
        epilogue(a2, wsum, 8 * (b + 2), rows, zx, sxs, wz, ws, s, bias, y);
        epilogue(a3, wsum, 8 * (b + 3), rows, zx, sxs, wz, ws, s, bias, y);
    }
    for (; b < nb; b++) {
        __m256i a0 = _mm256_setzero_si256();
        const uint8_t *p0 = pw + b * bstride;
        for (uint32_t g = 0; g < k2; g++)
            a0 = _mm256_add_epi32(
                a0, _mm256_madd_epi16(_mm256_set1_epi32(x2(x, cols, g)),
                                      _mm256_loadu_si256((const __m256i *)(p0 + (size_t)g * 32))));
        epilogue(a0, wsum, 8 * b, rows, zx, sxs, wz, ws, s, bias, y);
    }
}

/* the loop, compiled for this unit: gates at 256-bit width */
static inline qrt_status hidden(qrt_rnn_args *a, int32_t z, float s32)
{
    const size_t H = a->hidden, GH = (size_t)a->gates * a->hidden;
    for (uint32_t b = 0; b < a->batch; b++)
        qrt_rnn_gemv_u8__avx2(a->gpack, (uint32_t)GH, (uint32_t)H, a->hq + b * H, z,
                              a->q->weight_zero, a->wscale, s32, a->q->bias_f, a->gh + b * GH);
    return QRT_OK;
}
/* rnn_minmax (src/rnn_loop.h) at 8 lanes; v * 0 is NaN exactly for NaN and infinity */
static inline int minmax(const float *h, size_t n, float *lo_out, float *hi_out)
{
    __m256 lo = _mm256_set1_ps(h[0]), hi = lo, z = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(h + i);
        lo = _mm256_min_ps(lo, v);
        hi = _mm256_max_ps(hi, v);
        z = _mm256_add_ps(z, _mm256_mul_ps(v, _mm256_setzero_ps()));
    }
    float l[8], u[8], zz[8];
    _mm256_storeu_ps(l, lo);
    _mm256_storeu_ps(u, hi);
    _mm256_storeu_ps(zz, z);
    float a = l[0], b = u[0], c = zz[0];
    for (int k = 1; k < 8; k++) {
        a = l[k] < a ? l[k] : a;
        b = u[k] > b ? u[k] : b;
        c = c + zz[k];
    }
    for (; i < n; i++) {
        const float v = h[i];
        a = v < a ? v : a;
        b = v > b ? v : b;
        c = c + v * 0.0f;
    }
    if (c != c) return 1;
    *lo_out = a, *hi_out = b;
    return 0;
}
#define RNN_MINMAX minmax

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* as src/rnn.c: lets the gate loops vectorise
                                            (here: after immintrin.h, whose option pragmas
                                            would drop it) */
#endif
#define RNN_FLOORF 1
#define RNN_LOOP_NAME rnn_loop_avx2
#define RNN_HIDDEN(a, z, s32) hidden((a), (z), (s32))
#include "../rnn_loop.h"

qrt_status qrt_rnn_f32__avx2(qrt_rnn_args *a) { return rnn_loop_avx2(a); }

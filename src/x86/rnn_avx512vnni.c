/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_avx512vnni.c
 * @brief The recurrent step loop (src/rnn_loop.h) for AVX-512 VNNI CPUs, around the packed
 *        hidden-projection GEMV of include/qrt/rnn_gemv.h: vpdpbusd over blocks of 16 rows,
 *        eight (then four, then one) blocks at a time (independent accumulator chains).
 */
#include <immintrin.h>
#include <string.h>

#include "qrt/rnn.h"
#include "qrt/rnn_gemv.h"

#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

/* x[4g .. 4g+3] as one int32 (the last group zero-padded) */
static inline TGT int32_t x4(const uint8_t *x, uint32_t cols, uint32_t g)
{
    int32_t v = 0;
    if (4 * g + 4 <= cols) {
        memcpy(&v, x + 4 * g, 4);
    } else {
        uint32_t u = 0;
        for (uint32_t q = 0; 4 * g + q < cols; q++) u |= (uint32_t)x[4 * g + q] << (8 * q);
        v = (int32_t)u;
    }
    return v;
}

static inline TGT void epilogue(__m512i dot, const int32_t *wsum, uint32_t o, uint32_t rows,
                                int32_t zx, int32_t sxs, const int32_t *wz, const float *ws,
                                float s, const float *bias, float *y)
{
    const __mmask16 m = rows - o >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (rows - o)) - 1);
    const __m512i wzv = _mm512_maskz_loadu_epi32(m, wz + o);
    const __m512i wsv = _mm512_loadu_si512((const void *)(wsum + o)); /* padded to 16 */
    /* acc = dot - zx*wsum - wz*sum(x - zx): int32 wrapping, exact (rnn_gemv.h) */
    __m512i acc = _mm512_sub_epi32(dot, _mm512_mullo_epi32(_mm512_set1_epi32(zx), wsv));
    acc = _mm512_sub_epi32(acc, _mm512_mullo_epi32(wzv, _mm512_set1_epi32(sxs)));
    const __m512 rs = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, ws + o), _mm512_set1_ps(s));
    const __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc), rs),
                                   _mm512_maskz_loadu_ps(m, bias + o));
    _mm512_mask_storeu_ps(y + o, m, v);
}

TGT void qrt_rnn_gemv_u8__avx512vnni(const void *pack, uint32_t rows, uint32_t cols,
                                     const uint8_t *x, int32_t zx, const int32_t *wz,
                                     const float *ws, float s, const float *bias, float *y)
{
    const uint32_t rp = (rows + 15) / 16 * 16, k4 = (cols + 3) / 4, nb = rp / 16;
    const int32_t *wsum = (const int32_t *)pack;
    const uint8_t *pw = (const uint8_t *)pack + 4 * (size_t)rp;
    int32_t sx = 0;
    for (uint32_t i = 0; i < cols; i++) sx += x[i];
    const int32_t sxs = (int32_t)((uint32_t)sx - (uint32_t)cols * (uint32_t)zx);
    const size_t bstride = (size_t)k4 * 64; /* bytes of one block */
    uint32_t b = 0;
    /* eight blocks a pass where there are: eight independent vpdpbusd chains hide its
     * latency (four leave the loop latency-bound); int32 sums, the same values */
    for (; b + 8 <= nb; b += 8) {
        __m512i a[8];
        for (int q = 0; q < 8; q++) a[q] = _mm512_setzero_si512();
        const uint8_t *p0 = pw + b * bstride;
        for (uint32_t g = 0; g < k4; g++) {
            const __m512i xb = _mm512_set1_epi32(x4(x, cols, g));
            const uint8_t *p = p0 + (size_t)g * 64;
            for (int q = 0; q < 8; q++)
                a[q] = _mm512_dpbusd_epi32(a[q], xb,
                                           _mm512_loadu_si512((const void *)(p + q * bstride)));
        }
        for (int q = 0; q < 8; q++)
            epilogue(a[q], wsum, 16 * (b + q), rows, zx, sxs, wz, ws, s, bias, y);
    }
    for (; b + 4 <= nb; b += 4) {
        __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
        const uint8_t *p0 = pw + b * bstride;
        for (uint32_t g = 0; g < k4; g++) {
            const __m512i xb = _mm512_set1_epi32(x4(x, cols, g));
            const uint8_t *p = p0 + (size_t)g * 64;
            a0 = _mm512_dpbusd_epi32(a0, xb, _mm512_loadu_si512((const void *)p));
            a1 = _mm512_dpbusd_epi32(a1, xb, _mm512_loadu_si512((const void *)(p + bstride)));
            a2 = _mm512_dpbusd_epi32(a2, xb, _mm512_loadu_si512((const void *)(p + 2 * bstride)));
            a3 = _mm512_dpbusd_epi32(a3, xb, _mm512_loadu_si512((const void *)(p + 3 * bstride)));
        }
        epilogue(a0, wsum, 16 * b, rows, zx, sxs, wz, ws, s, bias, y);
        epilogue(a1, wsum, 16 * (b + 1), rows, zx, sxs, wz, ws, s, bias, y);
        epilogue(a2, wsum, 16 * (b + 2), rows, zx, sxs, wz, ws, s, bias, y);
        epilogue(a3, wsum, 16 * (b + 3), rows, zx, sxs, wz, ws, s, bias, y);
    }
    for (; b < nb; b++) {
        __m512i a0 = _mm512_setzero_si512();
        const uint8_t *p0 = pw + b * bstride;
        for (uint32_t g = 0; g < k4; g++)
            a0 = _mm512_dpbusd_epi32(a0, _mm512_set1_epi32(x4(x, cols, g)),
                                     _mm512_loadu_si512((const void *)(p0 + (size_t)g * 64)));
        epilogue(a0, wsum, 16 * b, rows, zx, sxs, wz, ws, s, bias, y);
    }
}

/* the loop, compiled for this unit: gates at 512-bit width */
static inline qrt_status hidden(qrt_rnn_args *a, int32_t z, float s32)
{
    const size_t H = a->hidden, GH = (size_t)a->gates * a->hidden;
    for (uint32_t b = 0; b < a->batch; b++)
        qrt_rnn_gemv_u8__avx512vnni(a->gpack, (uint32_t)GH, (uint32_t)H, a->hq + b * H, z,
                                    a->q->weight_zero, a->wscale, s32, a->q->bias_f,
                                    a->gh + b * GH);
    return QRT_OK;
}
/* rnn_minmax (src/rnn_loop.h) at 16 lanes; v * 0 is NaN exactly for NaN and infinity */
static inline int minmax(const float *h, size_t n, float *lo_out, float *hi_out)
{
    __m512 lo = _mm512_set1_ps(h[0]), hi = lo, z = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(h + i);
        lo = _mm512_min_ps(lo, v);
        hi = _mm512_max_ps(hi, v);
        z = _mm512_add_ps(z, _mm512_mul_ps(v, _mm512_setzero_ps()));
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        const __m512 v = _mm512_maskz_loadu_ps(m, h + i);
        lo = _mm512_mask_min_ps(lo, m, lo, v);
        hi = _mm512_mask_max_ps(hi, m, hi, v);
        z = _mm512_add_ps(z, _mm512_mul_ps(v, _mm512_setzero_ps()));
    }
    if (_mm512_cmp_ps_mask(z, z, _CMP_UNORD_Q)) return 1;
    *lo_out = _mm512_reduce_min_ps(lo), *hi_out = _mm512_reduce_max_ps(hi);
    return 0;
}
#define RNN_MINMAX minmax

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* as src/rnn.c: lets the gate loops vectorise
                                            (here: after immintrin.h, whose option pragmas
                                            would drop it) */
#endif
#define RNN_FLOORF 1
#define RNN_LOOP_NAME rnn_loop_avx512vnni
#define RNN_HIDDEN(a, z, s32) hidden((a), (z), (s32))
#include "../rnn_loop.h"

qrt_status qrt_rnn_f32__avx512vnni(qrt_rnn_args *a) { return rnn_loop_avx512vnni(a); }

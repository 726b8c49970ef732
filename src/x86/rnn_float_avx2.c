/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_float_avx2.c
 * @brief qrt_linear_f32__avx2 (compiled with -mavx2 -mfma): the float32 dot products of
 *        qrt_linear_f32_ref() with one 8-lane FMA accumulator per output (lane l takes
 *        i = l mod 8, as the reference), four outputs at a time to hide the FMA latency, the
 *        tail by a masked load (zeros: fmaf(0, 0, acc) as the reference pads), the same
 *        reduction tree.  Bit-exact with the reference (tests/test_rnn_float.py).
 */
#include <immintrin.h>

#include "qrt/rnn_float.h"

#define QRT_TGT __attribute__((target("avx2,fma")))

static const int32_t tail_mask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

QRT_TGT static inline float hsum(__m256 v)
{
    __m128 t = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)); /* l, l+4 */
    t = _mm_add_ps(t, _mm_movehl_ps(t, t)); /* (t0 + t2), (t1 + t3) */
    t = _mm_add_ss(t, _mm_shuffle_ps(t, t, 1));
    return _mm_cvtss_f32(t);
}

QRT_TGT void qrt_linear_f32__avx2(const float *x, size_t ldx, size_t rows, const float *w,
                                  size_t k, size_t n, const float *b, float *y, size_t ldy)
{
    const size_t kb = k & ~(size_t)7, rem = k - kb;
    const __m256i m = _mm256_loadu_si256((const __m256i *)(tail_mask + 8 - rem));
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * ldx;
        float *yr = y + r * ldy;
        size_t o = 0;
        for (; o + 4 <= n; o += 4) {
            const float *w0 = w + o * k, *w1 = w0 + k, *w2 = w1 + k, *w3 = w2 + k;
            __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            for (size_t i = 0; i < kb; i += 8) {
                const __m256 xv = _mm256_loadu_ps(xr + i);
                a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w0 + i), xv, a0);
                a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w1 + i), xv, a1);
                a2 = _mm256_fmadd_ps(_mm256_loadu_ps(w2 + i), xv, a2);
                a3 = _mm256_fmadd_ps(_mm256_loadu_ps(w3 + i), xv, a3);
            }
            if (rem) {
                const __m256 xv = _mm256_maskload_ps(xr + kb, m);
                a0 = _mm256_fmadd_ps(_mm256_maskload_ps(w0 + kb, m), xv, a0);
                a1 = _mm256_fmadd_ps(_mm256_maskload_ps(w1 + kb, m), xv, a1);
                a2 = _mm256_fmadd_ps(_mm256_maskload_ps(w2 + kb, m), xv, a2);
                a3 = _mm256_fmadd_ps(_mm256_maskload_ps(w3 + kb, m), xv, a3);
            }
            const float s0 = hsum(a0), s1 = hsum(a1), s2 = hsum(a2), s3 = hsum(a3);
            yr[o] = b ? s0 + b[o] : s0;
            yr[o + 1] = b ? s1 + b[o + 1] : s1;
            yr[o + 2] = b ? s2 + b[o + 2] : s2;
            yr[o + 3] = b ? s3 + b[o + 3] : s3;
        }
        for (; o < n; o++) {
            const float *w0 = w + o * k;
            __m256 a0 = _mm256_setzero_ps();
            for (size_t i = 0; i < kb; i += 8)
                a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w0 + i), _mm256_loadu_ps(xr + i), a0);
            if (rem)
                a0 = _mm256_fmadd_ps(_mm256_maskload_ps(w0 + kb, m),
                                     _mm256_maskload_ps(xr + kb, m), a0);
            const float s0 = hsum(a0);
            yr[o] = b ? s0 + b[o] : s0;
        }
    }
}

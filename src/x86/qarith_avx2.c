/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qarith_avx2.c
 * @brief The AVX2 variants declared in qrt/qarith.h (compiled with -mavx2 -mfma, meson.build;
 *        called only after qrt/cpu.h reports AVX2).  Row sums with vpsadbw: 32 codes summed
 *        exactly into four 64-bit lanes per instruction (qint8 codes biased by +128 first, the
 *        bias taken off after); the sum is exact, so the result is bit-exact with the reference
 *        whatever the order.  The division and rounding are the reference's.
 */
#include <immintrin.h>
#include <math.h>
#include "qrt/qarith.h"

__attribute__((target("avx2"))) static inline uint64_t qrt_sad_sum_u8__avx2(const uint8_t *row,
                                                                              size_t n,
                                                                              __m256i bias) {
    const __m256i z = _mm256_setzero_si256();
    __m256i acc0 = z, acc1 = z;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m256i a = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(row + i)), bias);
        const __m256i b =
            _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(row + i + 32)), bias);
        acc0 = _mm256_add_epi64(acc0, _mm256_sad_epu8(a, z));
        acc1 = _mm256_add_epi64(acc1, _mm256_sad_epu8(b, z));
    }
    for (; i + 32 <= n; i += 32) {
        const __m256i a = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(row + i)), bias);
        acc0 = _mm256_add_epi64(acc0, _mm256_sad_epu8(a, z));
    }
    acc0 = _mm256_add_epi64(acc0, acc1);
    uint64_t lanes[4];
    _mm256_storeu_si256((__m256i *)lanes, acc0);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

__attribute__((target("avx2"))) void qrt_mean_rows_u8__avx2(const uint8_t *x, size_t rows,
                                                            size_t len, uint8_t *out) {
    const __m256i bias = _mm256_setzero_si256();
    const size_t nv = len - len % 32;
    for (size_t r = 0; r < rows; ++r) {
        const uint8_t *row = x + r * len;
        uint64_t s = qrt_sad_sum_u8__avx2(row, nv, bias);
        for (size_t i = nv; i < len; ++i) s += row[i];
        out[r] = (uint8_t)lrintf((float)s / (float)len);
    }
}

__attribute__((target("avx2"))) void qrt_mean_rows_s8__avx2(const int8_t *x, size_t rows,
                                                            size_t len, int8_t *out) {
    const __m256i bias = _mm256_set1_epi8((char)0x80);   /* q ^ 0x80 == q + 128 as a byte */
    const size_t nv = len - len % 32;
    for (size_t r = 0; r < rows; ++r) {
        const int8_t *row = x + r * len;
        int64_t s = (int64_t)qrt_sad_sum_u8__avx2((const uint8_t *)row, nv, bias) -
                    128 * (int64_t)nv;
        for (size_t i = nv; i < len; ++i) s += row[i];
        out[r] = (int8_t)lrintf((float)s / (float)len);
    }
}

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
#include <string.h>
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

/* ---- quantized mul (qrt_mul_rows_u8_ref's steps, eight lanes at a time) ---------------------
 * One float32 operation per reference step, in the reference's order (intrinsics, and the
 * project's -ffp-contract=off: no FMA forms).  Clamps as max-then-min: equal to the
 * reference's selects for non-NaN values with lo <= hi (f is never NaN: m is finite).  The
 * low byte of the truncated int32 is kept by masking before the saturating packs. */
typedef struct {
    __m256i za, zb, bv, byte;
    __m256 m, nbig, big, magic, lo, hi, zo;
    int clamp_big, full;
} qrt__mul_consts_avx2;

/* `full` is a constant at every call (the loops are compiled once per value). */
__attribute__((target("avx2"), always_inline)) static inline __m256i
qrt__mul8_avx2(const qrt__mul_consts_avx2 *k, __m256i ia, __m256i ib, int full) {
    const __m256i c = _mm256_mullo_epi32(_mm256_sub_epi32(ia, k->za), ib);
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(c), k->m);
    if (k->clamp_big) f = _mm256_min_ps(_mm256_max_ps(f, k->nbig), k->big);
    f = _mm256_sub_ps(_mm256_add_ps(f, k->magic), k->magic);
    if (full) return _mm256_cvttps_epi32(_mm256_add_ps(f, k->zo)); /* packs clamp */
    f = _mm256_min_ps(_mm256_max_ps(f, k->lo), k->hi);
    return _mm256_and_si256(_mm256_cvttps_epi32(_mm256_add_ps(f, k->zo)), k->byte);
}

/* 32 codes of y from 32 of a (and of b unless per_row). */
__attribute__((target("avx2"), always_inline)) static inline void
qrt__mul32_avx2(const qrt__mul_consts_avx2 *k, const uint8_t *a, const uint8_t *b, int per_row,
                int full, uint8_t *y) {
    __m256i r[4];
    for (int j = 0; j < 4; ++j) {
        const __m256i ia = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(a + 8 * j)));
        const __m256i ib =
            per_row ? k->bv
                    : _mm256_sub_epi32(
                          _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(b + 8 * j))),
                          k->zb);
        r[j] = qrt__mul8_avx2(k, ia, ib, full);
    }
    /* full: signed 16-bit then unsigned 8-bit saturation is the [0, 255] clamp; else the
     * lanes hold bytes already */
    const __m256i p = full ? _mm256_packus_epi16(_mm256_packs_epi32(r[0], r[1]),
                                                    _mm256_packs_epi32(r[2], r[3]))
                              : _mm256_packus_epi16(_mm256_packus_epi32(r[0], r[1]),
                                                    _mm256_packus_epi32(r[2], r[3]));
    _mm256_storeu_si256((__m256i *)y,
                        _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

__attribute__((target("avx2"), always_inline)) static inline void
qrt__mul_row_avx2_(const qrt__mul_consts_avx2 *k, const uint8_t *a, const uint8_t *b, size_t n,
                   int per_row, int full, uint8_t *y) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        qrt__mul32_avx2(k, a + i, per_row ? b : b + i, per_row, full, y + i);
    if (i < n && n >= 32 && y != a && y != b) { /* the last 32 again (not in place) */
        i = n - 32;
        qrt__mul32_avx2(k, a + i, per_row ? b : b + i, per_row, full, y + i);
    } else if (i < n) { /* the tail through a 32-byte copy: no access past the buffers */
        uint8_t ta[32] = {0}, tb[32] = {0}, ty[32];
        memcpy(ta, a + i, n - i);
        if (!per_row) memcpy(tb, b + i, n - i);
        qrt__mul32_avx2(k, ta, tb, per_row, full, ty);
        memcpy(y + i, ty, n - i);
    }
}

__attribute__((target("avx2"))) static void qrt__mul_row_avx2(const qrt__mul_consts_avx2 *k,
                                                              const uint8_t *a, const uint8_t *b,
                                                              size_t n, int per_row, uint8_t *y) {
    if (k->full)
        qrt__mul_row_avx2_(k, a, b, n, per_row, 1, y);
    else
        qrt__mul_row_avx2_(k, a, b, n, per_row, 0, y);
}

__attribute__((target("avx2"))) void qrt_mul_rows_u8__avx2(const uint8_t *a, const uint8_t *b,
                                                           size_t rows, size_t len, int b_per_row,
                                                           int32_t za, int32_t zb, float m,
                                                           float lo, float hi, float zo,
                                                           uint8_t *y) {
    qrt__mul_consts_avx2 k;
    k.za = _mm256_set1_epi32(za);
    k.zb = _mm256_set1_epi32(zb);
    k.bv = _mm256_setzero_si256();
    k.byte = _mm256_set1_epi32(0xff);
    k.m = _mm256_set1_ps(m);
    k.nbig = _mm256_set1_ps(-4194304.0f);
    k.big = _mm256_set1_ps(4194304.0f);
    k.magic = _mm256_set1_ps(12582912.0f);
    k.lo = _mm256_set1_ps(lo);
    k.hi = _mm256_set1_ps(hi);
    k.zo = _mm256_set1_ps(zo);
    k.clamp_big = qrt_mul_needs_big_clamp(za, zb, m);
    k.full = qrt_mul_full_range(lo, hi, zo);
    for (size_t r = 0; r < rows; ++r) {
        if (b_per_row) k.bv = _mm256_set1_epi32((int32_t)b[r] - zb);
        qrt__mul_row_avx2(&k, a + r * len, b_per_row ? b + r : b + r * len, len, b_per_row,
                          y + r * len);
    }
}

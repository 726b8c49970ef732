/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qarith_avx512.c
 * @brief The AVX-512 quantized mul declared in qrt/qarith.h (compiled with the qrt_avx512 unit's
 *        flags, -mavx512f/bw/vl/dq, meson.build; called only after qrt/cpu.h reports that
 *        level).  qrt_mul_rows_u8_ref's steps sixteen lanes at a time, one float32 operation
 *        per reference step in the reference's order (intrinsics; -ffp-contract=off); vpmovdb
 *        keeps each int32's low byte, as the reference's (uint8_t) cast; the row tails go
 *        through masked loads and stores.
 */
#include <immintrin.h>
#include "qrt/qarith.h"

#define QRT_TGT_MUL512 __attribute__((target("avx512f,avx512bw,avx512vl")))

typedef struct {
    __m512i za, zb, bv;
    __m512 m, nbig, big, magic, lo, hi, zo;
    int clamp_big;
} qrt__mul_consts_avx512;

QRT_TGT_MUL512 static inline __m128i qrt__mul16_avx512(const qrt__mul_consts_avx512 *k,
                                                       __m128i a8, __m128i b8, int per_row) {
    const __m512i ib = per_row ? k->bv : _mm512_sub_epi32(_mm512_cvtepu8_epi32(b8), k->zb);
    const __m512i c = _mm512_mullo_epi32(_mm512_sub_epi32(_mm512_cvtepu8_epi32(a8), k->za), ib);
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(c), k->m);
    if (k->clamp_big) f = _mm512_min_ps(_mm512_max_ps(f, k->nbig), k->big);
    f = _mm512_sub_ps(_mm512_add_ps(f, k->magic), k->magic);
    f = _mm512_min_ps(_mm512_max_ps(f, k->lo), k->hi);
    return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(_mm512_add_ps(f, k->zo)));
}

QRT_TGT_MUL512 static inline void qrt__mul64_avx512(const qrt__mul_consts_avx512 *k,
                                                    const uint8_t *a, const uint8_t *b,
                                                    int per_row, size_t n, uint8_t *y) {
    const __mmask64 mk = n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
    const __m512i va = _mm512_maskz_loadu_epi8(mk, a);
    const __m512i vb = per_row ? _mm512_setzero_si512() : _mm512_maskz_loadu_epi8(mk, b);
    const __m128i r0 = qrt__mul16_avx512(k, _mm512_extracti32x4_epi32(va, 0),
                                         _mm512_extracti32x4_epi32(vb, 0), per_row);
    const __m128i r1 = qrt__mul16_avx512(k, _mm512_extracti32x4_epi32(va, 1),
                                         _mm512_extracti32x4_epi32(vb, 1), per_row);
    const __m128i r2 = qrt__mul16_avx512(k, _mm512_extracti32x4_epi32(va, 2),
                                         _mm512_extracti32x4_epi32(vb, 2), per_row);
    const __m128i r3 = qrt__mul16_avx512(k, _mm512_extracti32x4_epi32(va, 3),
                                         _mm512_extracti32x4_epi32(vb, 3), per_row);
    __m512i r = _mm512_castsi128_si512(r0);
    r = _mm512_inserti32x4(r, r1, 1);
    r = _mm512_inserti32x4(r, r2, 2);
    r = _mm512_inserti32x4(r, r3, 3);
    _mm512_mask_storeu_epi8(y, mk, r);
}

QRT_TGT_MUL512 static void qrt__mul_row_avx512(const qrt__mul_consts_avx512 *k, const uint8_t *a,
                                               const uint8_t *b, size_t n, int per_row,
                                               uint8_t *y) {
    for (size_t i = 0; i < n; i += 64)
        qrt__mul64_avx512(k, a + i, per_row ? b : b + i, per_row, n - i, y + i);
}

QRT_TGT_MUL512 void qrt_mul_rows_u8__avx512(const uint8_t *a, const uint8_t *b, size_t rows,
                                            size_t len, int b_per_row, int32_t za, int32_t zb,
                                            float m, float lo, float hi, float zo, uint8_t *y) {
    qrt__mul_consts_avx512 k;
    k.za = _mm512_set1_epi32(za);
    k.zb = _mm512_set1_epi32(zb);
    k.bv = _mm512_setzero_si512();
    k.m = _mm512_set1_ps(m);
    k.nbig = _mm512_set1_ps(-4194304.0f);
    k.big = _mm512_set1_ps(4194304.0f);
    k.magic = _mm512_set1_ps(12582912.0f);
    k.lo = _mm512_set1_ps(lo);
    k.hi = _mm512_set1_ps(hi);
    k.zo = _mm512_set1_ps(zo);
    k.clamp_big = qrt_mul_needs_big_clamp(za, zb, m);
    for (size_t r = 0; r < rows; ++r) {
        if (b_per_row) k.bv = _mm512_set1_epi32((int32_t)b[r] - zb);
        qrt__mul_row_avx512(&k, a + r * len, b_per_row ? b + r : b + r * len, len, b_per_row,
                            y + r * len);
    }
}

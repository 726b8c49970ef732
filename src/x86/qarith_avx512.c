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
    int clamp_big, full;
} qrt__mul_consts_avx512;

/* Sixteen int32 results: qrt__mul16_avx512 keeps their low bytes; in the full-range case
 * (qrt_mul_full_range) they are the unclamped codes, clamped by qrt__pack64_avx512. */
#define QRT_INL512 __attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) static inline

/* per_row and full are constants at every call (the loops are compiled once per value). */
QRT_INL512 __m512i qrt__mul16i_avx512(const qrt__mul_consts_avx512 *k, __m128i a8, __m128i b8,
                                      int per_row, int full) {
    const __m512i ib = per_row ? k->bv : _mm512_sub_epi32(_mm512_cvtepu8_epi32(b8), k->zb);
    const __m512i c = _mm512_mullo_epi32(_mm512_sub_epi32(_mm512_cvtepu8_epi32(a8), k->za), ib);
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(c), k->m);
    if (k->clamp_big) f = _mm512_min_ps(_mm512_max_ps(f, k->nbig), k->big);
    f = _mm512_sub_ps(_mm512_add_ps(f, k->magic), k->magic);
    if (!full) f = _mm512_min_ps(_mm512_max_ps(f, k->lo), k->hi);
    return _mm512_cvttps_epi32(_mm512_add_ps(f, k->zo));
}

/* Four results of qrt__mul16i_avx512 as 64 bytes in order: signed 16-bit then unsigned
 * 8-bit saturation (the [0, 255] clamp of the full-range case), then the dwords out of the
 * packs' 128-bit-lane order. */
QRT_INL512 __m512i qrt__pack64_avx512(__m512i r0, __m512i r1, __m512i r2,
                                                        __m512i r3) {
    const __m512i p = _mm512_packus_epi16(_mm512_packs_epi32(r0, r1), _mm512_packs_epi32(r2, r3));
    return _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), p);
}

QRT_INL512 void qrt__mul64_avx512(const qrt__mul_consts_avx512 *k, const uint8_t *a,
                                  const uint8_t *b, int per_row, int full, size_t n, uint8_t *y) {
    const __mmask64 mk = n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
    const __m512i va = _mm512_maskz_loadu_epi8(mk, a);
    const __m512i vb = per_row ? _mm512_setzero_si512() : _mm512_maskz_loadu_epi8(mk, b);
    const __m512i r0 = qrt__mul16i_avx512(k, _mm512_extracti32x4_epi32(va, 0),
                                          _mm512_extracti32x4_epi32(vb, 0), per_row, full);
    const __m512i r1 = qrt__mul16i_avx512(k, _mm512_extracti32x4_epi32(va, 1),
                                          _mm512_extracti32x4_epi32(vb, 1), per_row, full);
    const __m512i r2 = qrt__mul16i_avx512(k, _mm512_extracti32x4_epi32(va, 2),
                                          _mm512_extracti32x4_epi32(vb, 2), per_row, full);
    const __m512i r3 = qrt__mul16i_avx512(k, _mm512_extracti32x4_epi32(va, 3),
                                          _mm512_extracti32x4_epi32(vb, 3), per_row, full);
    __m512i r;
    if (full) {
        r = qrt__pack64_avx512(r0, r1, r2, r3);
    } else { /* vpmovdb: each int32's low byte, as the reference's (uint8_t) cast */
        r = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(r0));
        r = _mm512_inserti32x4(r, _mm512_cvtepi32_epi8(r1), 1);
        r = _mm512_inserti32x4(r, _mm512_cvtepi32_epi8(r2), 2);
        r = _mm512_inserti32x4(r, _mm512_cvtepi32_epi8(r3), 3);
    }
    _mm512_mask_storeu_epi8(y, mk, r);
}

QRT_INL512 void qrt__mul_row_avx512_(const qrt__mul_consts_avx512 *k, const uint8_t *a,
                                     const uint8_t *b, size_t n, int per_row, int full,
                                     uint8_t *y) {
    for (size_t i = 0; i < n; i += 64)
        qrt__mul64_avx512(k, a + i, per_row ? b : b + i, per_row, full, n - i, y + i);
}

QRT_TGT_MUL512 static void qrt__mul_row_avx512(const qrt__mul_consts_avx512 *k, const uint8_t *a,
                                               const uint8_t *b, size_t n, int per_row,
                                               uint8_t *y) {
    if (per_row && k->full)
        qrt__mul_row_avx512_(k, a, b, n, 1, 1, y);
    else if (per_row)
        qrt__mul_row_avx512_(k, a, b, n, 1, 0, y);
    else if (k->full)
        qrt__mul_row_avx512_(k, a, b, n, 0, 1, y);
    else
        qrt__mul_row_avx512_(k, a, b, n, 0, 0, y);
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
    k.full = qrt_mul_full_range(lo, hi, zo);
    for (size_t r = 0; r < rows; ++r) {
        if (b_per_row) k.bv = _mm512_set1_epi32((int32_t)b[r] - zb);
        qrt__mul_row_avx512(&k, a + r * len, b_per_row ? b + r : b + r * len, len, b_per_row,
                            y + r * len);
    }
}

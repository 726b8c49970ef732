/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file add_avx512.c
 * @brief The AVX-512 QNNPACK add declared in qrt/add.h (the qrt_avx512 unit's flags,
 *        -mavx512f/bw/vl/dq, meson.build; called only after qrt/cpu.h reports that level):
 *        QRT_ADD_QNNP_BODY's int32 steps sixteen lanes at a time, the same operations in the
 *        same order (widen, subtract the zero point, vpmulld by the multiplier, add; the
 *        remainder test of the rounding shift; + zero point; clamp), so every byte equals the
 *        reference's.  vpmovdb keeps the low byte of each clamped int32 (0..255).  The tail
 *        goes through masked loads and stores (no byte outside the arrays is touched).
 */
#include <immintrin.h>
#include "qrt/add.h"

#define QRT_TGT_ADD512 __attribute__((target("avx512f,avx512bw,avx512vl")))

typedef struct {
    __m512i za, zb, am, bm, mask, thr, oz, lo, hi, one;
    __m128i sh;
} qrt__add_consts512;

static inline __attribute__((always_inline)) QRT_TGT_ADD512 __m128i
qrt__add16_avx512(const qrt__add_consts512 *k, __m128i a8, __m128i b8) {
    const __m512i a = _mm512_sub_epi32(_mm512_cvtepu8_epi32(a8), k->za);
    const __m512i b = _mm512_sub_epi32(_mm512_cvtepu8_epi32(b8), k->zb);
    const __m512i acc = _mm512_add_epi32(_mm512_mullo_epi32(a, k->am), _mm512_mullo_epi32(b, k->bm));
    /* rem = (acc & mask) - (acc < 0); q = (acc >> shift) + (rem > threshold) */
    const __m512i rem = _mm512_sub_epi32(_mm512_and_si512(acc, k->mask), _mm512_srli_epi32(acc, 31));
    __m512i q = _mm512_sra_epi32(acc, k->sh);
    q = _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(rem, k->thr), q, k->one);
    q = _mm512_add_epi32(q, k->oz);
    q = _mm512_min_epi32(_mm512_max_epi32(q, k->lo), k->hi);
    return _mm512_cvtepi32_epi8(q);
}

QRT_TGT_ADD512 void qrt_add_u8__avx512(const qrt_add_qnnp_params *p, const uint8_t *a,
                                       const uint8_t *b, size_t n, uint8_t *out) {
    const uint32_t umask = ((uint32_t)1 << (p->shift & 31u)) - 1u;
    qrt__add_consts512 k;
    k.za = _mm512_set1_epi32(p->a_zero);
    k.zb = _mm512_set1_epi32(p->b_zero);
    k.am = _mm512_set1_epi32(p->a_mult);
    k.bm = _mm512_set1_epi32(p->b_mult);
    k.mask = _mm512_set1_epi32((int32_t)umask);
    k.thr = _mm512_set1_epi32((int32_t)(umask >> 1));
    k.oz = _mm512_set1_epi32(p->out_zero);
    k.lo = _mm512_set1_epi32(p->out_min);
    k.hi = _mm512_set1_epi32(p->out_max);
    k.one = _mm512_set1_epi32(1);
    k.sh = _mm_cvtsi32_si128(p->shift > 31u ? 31 : (int)p->shift);
    size_t i = 0;
    for (; i + 64 <= n; i += 64) { /* four independent 16-lane chains */
        const __m512i va = _mm512_loadu_si512((const void *)(a + i));
        const __m512i vb = _mm512_loadu_si512((const void *)(b + i));
        const __m128i r0 = qrt__add16_avx512(&k, _mm512_extracti32x4_epi32(va, 0),
                                             _mm512_extracti32x4_epi32(vb, 0));
        const __m128i r1 = qrt__add16_avx512(&k, _mm512_extracti32x4_epi32(va, 1),
                                             _mm512_extracti32x4_epi32(vb, 1));
        const __m128i r2 = qrt__add16_avx512(&k, _mm512_extracti32x4_epi32(va, 2),
                                             _mm512_extracti32x4_epi32(vb, 2));
        const __m128i r3 = qrt__add16_avx512(&k, _mm512_extracti32x4_epi32(va, 3),
                                             _mm512_extracti32x4_epi32(vb, 3));
        __m512i r = _mm512_castsi128_si512(r0);
        r = _mm512_inserti32x4(r, r1, 1);
        r = _mm512_inserti32x4(r, r2, 2);
        r = _mm512_inserti32x4(r, r3, 3);
        _mm512_storeu_si512((void *)(out + i), r); /* out may alias a or b: read before */
    }
    for (; i < n; i += 16) {
        const size_t m = n - i < 16 ? n - i : 16;
        const __mmask16 mk = m == 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << m) - 1u);
        const __m128i r = qrt__add16_avx512(&k, _mm_maskz_loadu_epi8(mk, a + i),
                                            _mm_maskz_loadu_epi8(mk, b + i));
        _mm_mask_storeu_epi8(out + i, mk, r);
    }
}

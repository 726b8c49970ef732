/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file activation_avx512vbmi.c
 * @brief The AVX-512 VBMI table lookup declared in qrt/activation.h (the qrt_avx512vbmi unit,
 *        -mavx512f/bw/vl/vbmi, meson.build; called only after qrt/cpu.h reports VBMI).
 *
 * The 256-byte table sits in four zmm quarters; vpermt2b indexes two of them (128 bytes) by an
 * index's low 7 bits, so one over quarters 0-1 and one over 2-3, selected by the index's top
 * bit (vpmovb2m), give 64 lookups in 3 instructions.  Tails: masked loads and stores.  A byte
 * permutation selects table bytes; there is no arithmetic to differ from the reference.
 */
#include <immintrin.h>
#include "qrt/activation.h"

#define QRT_TGT_VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))

QRT_TGT_VBMI static inline __m512i qrt__lut64_vbmi(__m512i t0, __m512i t1, __m512i t2, __m512i t3,
                                                   __m512i x) {
    const __m512i lo = _mm512_permutex2var_epi8(t0, x, t1);
    const __m512i hi = _mm512_permutex2var_epi8(t2, x, t3);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi);
}

QRT_TGT_VBMI void qrt_lut_u8__avx512vbmi(const uint8_t *lut, const uint8_t *x, size_t n,
                                         uint8_t *out) {
    const __m512i t0 = _mm512_loadu_si512(lut), t1 = _mm512_loadu_si512(lut + 64);
    const __m512i t2 = _mm512_loadu_si512(lut + 128), t3 = _mm512_loadu_si512(lut + 192);
    size_t i = 0;
    for (; i + 256 <= n; i += 256) { /* four independent lookups a step */
        const __m512i x0 = _mm512_loadu_si512(x + i), x1 = _mm512_loadu_si512(x + i + 64);
        const __m512i x2 = _mm512_loadu_si512(x + i + 128), x3 = _mm512_loadu_si512(x + i + 192);
        _mm512_storeu_si512(out + i, qrt__lut64_vbmi(t0, t1, t2, t3, x0));
        _mm512_storeu_si512(out + i + 64, qrt__lut64_vbmi(t0, t1, t2, t3, x1));
        _mm512_storeu_si512(out + i + 128, qrt__lut64_vbmi(t0, t1, t2, t3, x2));
        _mm512_storeu_si512(out + i + 192, qrt__lut64_vbmi(t0, t1, t2, t3, x3));
    }
    for (; i + 64 <= n; i += 64)
        _mm512_storeu_si512(out + i,
                            qrt__lut64_vbmi(t0, t1, t2, t3, _mm512_loadu_si512(x + i)));
    if (i < n) {
        const __mmask64 mk = ((__mmask64)1 << (n - i)) - 1;
        const __m512i v = _mm512_maskz_loadu_epi8(mk, x + i);
        _mm512_mask_storeu_epi8(out + i, mk, qrt__lut64_vbmi(t0, t1, t2, t3, v));
    }
}

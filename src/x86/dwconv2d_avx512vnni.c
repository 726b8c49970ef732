/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_avx512vnni.c
 * @brief AVX-512 VNNI depthwise conv2d (qrt/dwconv2d.h) over the phase planes of
 *        src/dwconv2d_impl.h: 64 flat outputs per step, taps in pairs with vpdpwssd (the
 *        int16 pair dot product: exact, |sum| <= 2 * 255 * 255, no saturation).
 *        Requantization is requant.h's sequence (cvtdq2ps, mulps, cvtps2dq, clamp), so every
 *        output equals the reference's; the per-128-bit-lane order of unpack / pack cancels.
 */
#include <immintrin.h>
#include <string.h>

#include "../dwconv2d_impl.h"
#include "qrt/requant.h"
#include "qrt/x86/dwconv2d_x86.h"

#define QRT_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

static inline QRT_AVX512VNNI __m256i qrt__dwv_rq(__m512i lo, __m512i hi, __m512i vb, __m512 vs,
                                                 __m512i vlo, __m512i vhi, __m512i vz) {
    lo = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(lo, vb)), vs));
    hi = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(hi, vb)), vs));
    lo = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(lo, vlo), vhi), vz);
    hi = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(hi, vlo), vhi), vz);
    return _mm512_cvtepi16_epi8(_mm512_packs_epi32(lo, hi)); /* values 0..255: exact */
}

static QRT_AVX512VNNI void qrt__dwv_kernel(const int16_t *const *src, const int16_t *wt,
                                           const int32_t *wp, int64_t taps, int64_t count,
                                           int32_t bias, float scale, int32_t zp, int32_t lo,
                                           int32_t hi, uint8_t *stage) {
    (void)wt;
    const __m512i vb = _mm512_set1_epi32(bias), vlo = _mm512_set1_epi32(lo - zp),
                  vhi = _mm512_set1_epi32(hi - zp), vz = _mm512_set1_epi32(zp);
    const __m512 vs = _mm512_set1_ps(scale);
    const int64_t pairs = taps / 2;
    int64_t f = 0;
    for (; f + 32 < count; f += 64) {
        __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t i = 0; i < pairs; ++i) {
            const int16_t *s0 = src[2 * i] + f, *s1 = src[2 * i + 1] + f;
            const __m512i w2 = _mm512_set1_epi32(wp[i]);
            const __m512i x0 = _mm512_loadu_si512(s0), y0 = _mm512_loadu_si512(s1);
            const __m512i x1 = _mm512_loadu_si512(s0 + 32), y1 = _mm512_loadu_si512(s1 + 32);
            a0 = _mm512_dpwssd_epi32(a0, _mm512_unpacklo_epi16(x0, y0), w2);
            a1 = _mm512_dpwssd_epi32(a1, _mm512_unpackhi_epi16(x0, y0), w2);
            a2 = _mm512_dpwssd_epi32(a2, _mm512_unpacklo_epi16(x1, y1), w2);
            a3 = _mm512_dpwssd_epi32(a3, _mm512_unpackhi_epi16(x1, y1), w2);
        }
        if (taps & 1) {
            const int16_t *s0 = src[taps - 1] + f;
            const __m512i w2 = _mm512_set1_epi32(wp[pairs]), z = _mm512_setzero_si512();
            const __m512i x0 = _mm512_loadu_si512(s0), x1 = _mm512_loadu_si512(s0 + 32);
            a0 = _mm512_dpwssd_epi32(a0, _mm512_unpacklo_epi16(x0, z), w2);
            a1 = _mm512_dpwssd_epi32(a1, _mm512_unpackhi_epi16(x0, z), w2);
            a2 = _mm512_dpwssd_epi32(a2, _mm512_unpacklo_epi16(x1, z), w2);
            a3 = _mm512_dpwssd_epi32(a3, _mm512_unpackhi_epi16(x1, z), w2);
        }
        _mm256_storeu_si256((__m256i *)(stage + f), qrt__dwv_rq(a0, a1, vb, vs, vlo, vhi, vz));
        _mm256_storeu_si256((__m256i *)(stage + f + 32),
                            qrt__dwv_rq(a2, a3, vb, vs, vlo, vhi, vz));
    }
    if (f < count) { /* the last <= 32 outputs */
        __m512i a0 = _mm512_setzero_si512(), a1 = a0;
        for (int64_t i = 0; i < pairs; ++i) {
            const __m512i w2 = _mm512_set1_epi32(wp[i]);
            const __m512i x0 = _mm512_loadu_si512(src[2 * i] + f);
            const __m512i y0 = _mm512_loadu_si512(src[2 * i + 1] + f);
            a0 = _mm512_dpwssd_epi32(a0, _mm512_unpacklo_epi16(x0, y0), w2);
            a1 = _mm512_dpwssd_epi32(a1, _mm512_unpackhi_epi16(x0, y0), w2);
        }
        if (taps & 1) {
            const __m512i w2 = _mm512_set1_epi32(wp[pairs]), z = _mm512_setzero_si512();
            const __m512i x0 = _mm512_loadu_si512(src[taps - 1] + f);
            a0 = _mm512_dpwssd_epi32(a0, _mm512_unpacklo_epi16(x0, z), w2);
            a1 = _mm512_dpwssd_epi32(a1, _mm512_unpackhi_epi16(x0, z), w2);
        }
        _mm256_storeu_si256((__m256i *)(stage + f), qrt__dwv_rq(a0, a1, vb, vs, vlo, vhi, vz));
    }
}

static QRT_AVX512VNNI void qrt__dwv_widen(const uint8_t *s, int16_t *d, int64_t len,
                                          int32_t xz, int64_t step) {
    const __m512i vz = _mm512_set1_epi16((int16_t)xz);
    if (step == 1 && len >= 32) { /* full vectors, the last one overlapping the one before
                                    * (masked stores are slow on Zen 4) */
        int64_t j = 0;
        for (; j + 32 <= len; j += 32)
            _mm512_storeu_si512(d + j, _mm512_sub_epi16(_mm512_cvtepu8_epi16(_mm256_loadu_si256(
                                                            (const __m256i *)(s + j))),
                                                        vz));
        if (j < len)
            _mm512_storeu_si512(d + len - 32,
                                _mm512_sub_epi16(_mm512_cvtepu8_epi16(_mm256_loadu_si256(
                                                     (const __m256i *)(s + len - 32))),
                                                 vz));
        return;
    }
    if (step == 1) {
        for (int64_t j = 0; j < len; j += 32) {
            const int64_t m = len - j < 32 ? len - j : 32; /* masked tail: no byte past len */
            const __mmask32 k = m == 32 ? ~(__mmask32)0 : (((__mmask32)1 << m) - 1);
            const __m512i v =
                _mm512_sub_epi16(_mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(k, s + j)), vz);
            _mm512_mask_storeu_epi16(d + j, k, v);
        }
        return;
    }
    const __m512i lowb = _mm512_set1_epi16(0xFF);
    for (int64_t j = 0; j < len; j += 32) { /* step 2: bytes s[2j .. 2 (j + m - 1)] */
        const int64_t m = len - j < 32 ? len - j : 32;
        const __mmask32 k = m == 32 ? ~(__mmask32)0 : (((__mmask32)1 << m) - 1);
        const int64_t nb = 2 * m - 1;
        const __mmask64 kb = nb == 64 ? ~(__mmask64)0 : (((__mmask64)1 << nb) - 1);
        const __m512i v = _mm512_sub_epi16(
            _mm512_and_si512(_mm512_maskz_loadu_epi8(kb, s + 2 * j), lowb), vz);
        _mm512_mask_storeu_epi16(d + j, k, v);
    }
}

/* tap run t at f, 32 elements, ANDed with its mask (flat path) */
static inline QRT_AVX512VNNI __m512i qrt__dwv_ld(const int16_t *s, const int16_t *m, int64_t f) {
    const __m512i v = _mm512_loadu_si512(s + f);
    return m ? _mm512_and_si512(v, _mm512_loadu_si512(m + f)) : v;
}

static inline QRT_AVX512VNNI __m256i qrt__dwv_ld16(const int16_t *s, const int16_t *m,
                                                   int64_t f) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)(s + f));
    return m ? _mm256_and_si256(v, _mm256_loadu_si256((const __m256i *)(m + f))) : v;
}

/* requant.h's sequence on one vector of sums, the bias already in them (also the byte-plane
 * path's) */
static inline __attribute__((always_inline)) QRT_AVX512VNNI __m512i
qrt__dwv_rq1(__m512i a, __m512 vs, __m512i vlo, __m512i vhi, __m512i vz) {
    a = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(a), vs));
    return _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(a, vlo), vhi), vz);
}

/* as qrt__dwv_rq, the bias already in the sums */
static inline QRT_AVX512VNNI __m256i qrt__dwv_rq0(__m512i lo, __m512i hi, __m512 vs,
                                                  __m512i vlo, __m512i vhi, __m512i vz) {
    return _mm512_cvtepi16_epi8(_mm512_packs_epi32(qrt__dwv_rq1(lo, vs, vlo, vhi, vz),
                                                   qrt__dwv_rq1(hi, vs, vlo, vhi, vz)));
}

/* the flat path's kernel: the sums start at the bias (wrap32(acc + bias): vpdpwssd wraps, the
 * order of modular adds does not matter); 64, 32 or 16 outputs per step */
static QRT_AVX512VNNI void qrt__dwv_kernel_m(const int16_t *const *src,
                                             const int16_t *const *mk, const int16_t *wt,
                                             const int32_t *wp, int64_t taps, int64_t count,
                                             int32_t bias, float scale, int32_t zp, int32_t lo,
                                             int32_t hi, uint8_t *stage) {
    (void)wt;
    const __m512i vb = _mm512_set1_epi32(bias), vlo = _mm512_set1_epi32(lo - zp),
                  vhi = _mm512_set1_epi32(hi - zp), vz = _mm512_set1_epi32(zp);
    const __m512 vs = _mm512_set1_ps(scale);
    const int64_t pairs = taps / 2;
    int64_t f = 0;
    if (taps == 9) { /* 3x3: tables in locals (the stage stores could alias them) */
        const int16_t *s0 = src[0], *s1 = src[1], *s2 = src[2], *s3 = src[3], *s4 = src[4],
                      *s5 = src[5], *s6 = src[6], *s7 = src[7], *s8 = src[8];
        const int16_t *m0 = mk[0], *m1 = mk[1], *m2 = mk[2], *m3 = mk[3], *m4 = mk[4],
                      *m5 = mk[5], *m6 = mk[6], *m7 = mk[7], *m8 = mk[8];
        const __m512i w01 = _mm512_set1_epi32(wp[0]), w23 = _mm512_set1_epi32(wp[1]),
                      w45 = _mm512_set1_epi32(wp[2]), w67 = _mm512_set1_epi32(wp[3]),
                      w8 = _mm512_set1_epi32(wp[4]), z = _mm512_setzero_si512();
#define QRT__DWV_PAIR(sa, ma, sb, mb, w)                                                          \
    do {                                                                                          \
        const __m512i x0 = qrt__dwv_ld(sa, ma, f), y0 = qrt__dwv_ld(sb, mb, f);                   \
        const __m512i x1 = qrt__dwv_ld(sa, ma, f + 32), y1 = qrt__dwv_ld(sb, mb, f + 32);         \
        a0 = _mm512_dpwssd_epi32(a0, _mm512_unpacklo_epi16(x0, y0), w);                           \
        a1 = _mm512_dpwssd_epi32(a1, _mm512_unpackhi_epi16(x0, y0), w);                           \
        a2 = _mm512_dpwssd_epi32(a2, _mm512_unpacklo_epi16(x1, y1), w);                           \
        a3 = _mm512_dpwssd_epi32(a3, _mm512_unpackhi_epi16(x1, y1), w);                           \
    } while (0)
        for (; f + 32 < count; f += 64) {
            __m512i a0 = vb, a1 = vb, a2 = vb, a3 = vb;
            QRT__DWV_PAIR(s0, m0, s1, m1, w01);
            QRT__DWV_PAIR(s2, m2, s3, m3, w23);
            QRT__DWV_PAIR(s4, m4, s5, m5, w45);
            QRT__DWV_PAIR(s6, m6, s7, m7, w67);
            const __m512i x0 = qrt__dwv_ld(s8, m8, f), x1 = qrt__dwv_ld(s8, m8, f + 32);
            a0 = _mm512_dpwssd_epi32(a0, _mm512_unpacklo_epi16(x0, z), w8);
            a1 = _mm512_dpwssd_epi32(a1, _mm512_unpackhi_epi16(x0, z), w8);
            a2 = _mm512_dpwssd_epi32(a2, _mm512_unpacklo_epi16(x1, z), w8);
            a3 = _mm512_dpwssd_epi32(a3, _mm512_unpackhi_epi16(x1, z), w8);
            _mm256_storeu_si256((__m256i *)(stage + f), qrt__dwv_rq0(a0, a1, vs, vlo, vhi, vz));
            _mm256_storeu_si256((__m256i *)(stage + f + 32),
                                qrt__dwv_rq0(a2, a3, vs, vlo, vhi, vz));
        }
#undef QRT__DWV_PAIR
    }
    for (; f + 32 < count; f += 64) {
        __m512i a0 = vb, a1 = vb, a2 = vb, a3 = vb;
        for (int64_t i = 0; i < pairs; ++i) {
            const int16_t *s0 = src[2 * i], *s1 = src[2 * i + 1];
            const int16_t *m0 = mk[2 * i], *m1 = mk[2 * i + 1];
            const __m512i w2 = _mm512_set1_epi32(wp[i]);
            const __m512i x0 = qrt__dwv_ld(s0, m0, f), y0 = qrt__dwv_ld(s1, m1, f);
            const __m512i x1 = qrt__dwv_ld(s0, m0, f + 32), y1 = qrt__dwv_ld(s1, m1, f + 32);
            a0 = _mm512_dpwssd_epi32(a0, _mm512_unpacklo_epi16(x0, y0), w2);
            a1 = _mm512_dpwssd_epi32(a1, _mm512_unpackhi_epi16(x0, y0), w2);
            a2 = _mm512_dpwssd_epi32(a2, _mm512_unpacklo_epi16(x1, y1), w2);
            a3 = _mm512_dpwssd_epi32(a3, _mm512_unpackhi_epi16(x1, y1), w2);
        }
        if (taps & 1) {
            const int16_t *s0 = src[taps - 1], *m0 = mk[taps - 1];
            const __m512i w2 = _mm512_set1_epi32(wp[pairs]), z = _mm512_setzero_si512();
            const __m512i x0 = qrt__dwv_ld(s0, m0, f), x1 = qrt__dwv_ld(s0, m0, f + 32);
            a0 = _mm512_dpwssd_epi32(a0, _mm512_unpacklo_epi16(x0, z), w2);
            a1 = _mm512_dpwssd_epi32(a1, _mm512_unpackhi_epi16(x0, z), w2);
            a2 = _mm512_dpwssd_epi32(a2, _mm512_unpacklo_epi16(x1, z), w2);
            a3 = _mm512_dpwssd_epi32(a3, _mm512_unpackhi_epi16(x1, z), w2);
        }
        _mm256_storeu_si256((__m256i *)(stage + f), qrt__dwv_rq0(a0, a1, vs, vlo, vhi, vz));
        _mm256_storeu_si256((__m256i *)(stage + f + 32), qrt__dwv_rq0(a2, a3, vs, vlo, vhi, vz));
    }
    if (f + 16 < count) { /* 17..32 outputs left */
        __m512i a0 = vb, a1 = vb;
        for (int64_t i = 0; i < pairs; ++i) {
            const __m512i w2 = _mm512_set1_epi32(wp[i]);
            const __m512i x0 = qrt__dwv_ld(src[2 * i], mk[2 * i], f);
            const __m512i y0 = qrt__dwv_ld(src[2 * i + 1], mk[2 * i + 1], f);
            a0 = _mm512_dpwssd_epi32(a0, _mm512_unpacklo_epi16(x0, y0), w2);
            a1 = _mm512_dpwssd_epi32(a1, _mm512_unpackhi_epi16(x0, y0), w2);
        }
        if (taps & 1) {
            const __m512i w2 = _mm512_set1_epi32(wp[pairs]), z = _mm512_setzero_si512();
            const __m512i x0 = qrt__dwv_ld(src[taps - 1], mk[taps - 1], f);
            a0 = _mm512_dpwssd_epi32(a0, _mm512_unpacklo_epi16(x0, z), w2);
            a1 = _mm512_dpwssd_epi32(a1, _mm512_unpackhi_epi16(x0, z), w2);
        }
        _mm256_storeu_si256((__m256i *)(stage + f), qrt__dwv_rq0(a0, a1, vs, vlo, vhi, vz));
    } else if (f < count) { /* 1..16 outputs left: 256-bit halves, lane order as above */
        __m256i a0 = _mm512_castsi512_si256(vb), a1 = a0;
        for (int64_t i = 0; i < pairs; ++i) {
            const __m256i w2 = _mm256_set1_epi32(wp[i]);
            const __m256i x0 = qrt__dwv_ld16(src[2 * i], mk[2 * i], f);
            const __m256i y0 = qrt__dwv_ld16(src[2 * i + 1], mk[2 * i + 1], f);
            a0 = _mm256_dpwssd_epi32(a0, _mm256_unpacklo_epi16(x0, y0), w2);
            a1 = _mm256_dpwssd_epi32(a1, _mm256_unpackhi_epi16(x0, y0), w2);
        }
        if (taps & 1) {
            const __m256i w2 = _mm256_set1_epi32(wp[pairs]), z = _mm256_setzero_si256();
            const __m256i x0 = qrt__dwv_ld16(src[taps - 1], mk[taps - 1], f);
            a0 = _mm256_dpwssd_epi32(a0, _mm256_unpacklo_epi16(x0, z), w2);
            a1 = _mm256_dpwssd_epi32(a1, _mm256_unpackhi_epi16(x0, z), w2);
        }
        const __m256 vs8 = _mm512_castps512_ps256(vs);
        const __m256i vlo8 = _mm512_castsi512_si256(vlo), vhi8 = _mm512_castsi512_si256(vhi),
                      vz8 = _mm512_castsi512_si256(vz);
        __m256i l = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(a0), vs8));
        __m256i h = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(a1), vs8));
        l = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(l, vlo8), vhi8), vz8);
        h = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(h, vlo8), vhi8), vz8);
        _mm_storeu_si128((__m128i *)(stage + f), _mm256_cvtepi16_epi8(_mm256_packs_epi32(l, h)));
    }
}

/* stride-2 split of one row: even bytes to d0, odd bytes to d1; full loads / stores where
 * sroom / room allow, masked ones (nothing past len) at the end of a plane */
static inline __attribute__((always_inline)) QRT_AVX512VNNI void qrt__dwv_widen2(const uint8_t *s, int16_t *d0, int16_t *d1,
                                           int64_t len, int32_t xz, int64_t sroom,
                                           int64_t room) {
    if (len <= 32 && sroom >= 32 && room >= 16) { /* a short row (14x14, 28x28 inputs):
                                                    * 256-bit halves, half the store bytes */
        const __m256i v = _mm256_loadu_si256((const __m256i *)s);
        const __m256i z8 = _mm256_set1_epi16((int16_t)xz);
        _mm256_storeu_si256((__m256i *)d0,
                            _mm256_sub_epi16(_mm256_and_si256(v, _mm256_set1_epi16(0xFF)), z8));
        _mm256_storeu_si256((__m256i *)d1, _mm256_sub_epi16(_mm256_srli_epi16(v, 8), z8));
        return;
    }
    const __m512i vz = _mm512_set1_epi16((int16_t)xz), lowb = _mm512_set1_epi16(0xFF);
    for (int64_t j = 0; 2 * j < len; j += 32) {
        const int64_t nb = len - 2 * j < 64 ? len - 2 * j : 64;
        __m512i v;
        if (2 * j + 64 <= sroom) {
            v = _mm512_loadu_si512(s + 2 * j);
        } else {
            const __mmask64 kb = nb == 64 ? ~(__mmask64)0 : (((__mmask64)1 << nb) - 1);
            v = _mm512_maskz_loadu_epi8(kb, s + 2 * j);
        }
        const __m512i e = _mm512_sub_epi16(_mm512_and_si512(v, lowb), vz);
        const __m512i o = _mm512_sub_epi16(_mm512_srli_epi16(v, 8), vz);
        if (j + 32 <= room) {
            _mm512_storeu_si512(d0 + j, e);
            _mm512_storeu_si512(d1 + j, o);
        } else {
            const int64_t m0 = (nb + 1) / 2, m1 = nb / 2;
            const __mmask32 k0 = m0 == 32 ? ~(__mmask32)0 : (((__mmask32)1 << m0) - 1);
            const __mmask32 k1 = m1 == 32 ? ~(__mmask32)0 : (((__mmask32)1 << m1) - 1);
            _mm512_mask_storeu_epi16(d0 + j, k0, e);
            _mm512_mask_storeu_epi16(d1 + j, k1, o);
        }
    }
}

/* ---- the byte-plane path (src/dwconv2d_impl.h, qrt__dwp_geom): stride 1 or 2 ---- */

/* cvtps2dq of acc * scale (requant.h), then QNNPACK's sequence on the packed words (packssdw,
 * paddsw of the zero point, packuswb, the byte clamp): clamp(r + zp, lo, hi) for zp, lo, hi in
 * 0..255, as requant.h's int32 clamp (a saturated r is beyond every bound either way) */
static inline __attribute__((always_inline)) QRT_AVX512VNNI __m512i qrt__dwp_cvt(__m512i a,
                                                                                 __m512 vs) {
    return _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(a), vs));
}

static inline __attribute__((always_inline)) QRT_AVX512VNNI __m512i
qrt__dwp_bytes(__m512i p0, __m512i p1, __m512i voz, __m512i vlo, __m512i vhi) {
    const __m512i v = _mm512_packus_epi16(_mm512_adds_epi16(p0, voz), _mm512_adds_epi16(p1, voz));
    return _mm512_min_epu8(_mm512_max_epu8(v, vlo), vhi);
}

/* stride 2: e0 / o0 lane j = outputs 2j / 2j + 1, e1 / o1 the same + 32 -> 64 bytes in order
 * (vpunpck{l,h}dq: outputs 8L + 0..3 / 8L + 4..7 in 128-bit lane L, vpackssdw puts them in
 * order, the qword permute the two halves' lanes); voz: the zero point in 16-bit lanes, vlo /
 * vhi the clamp bytes */
static inline __attribute__((always_inline)) QRT_AVX512VNNI __m512i
qrt__dwp_out2(__m512i e0, __m512i o0, __m512i e1, __m512i o1, __m512 vs, __m512i voz,
              __m512i vlo, __m512i vhi) {
    const __m512i perm = _mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0);
    e0 = qrt__dwp_cvt(e0, vs), o0 = qrt__dwp_cvt(o0, vs);
    e1 = qrt__dwp_cvt(e1, vs), o1 = qrt__dwp_cvt(o1, vs);
    const __m512i p0 =
        _mm512_packs_epi32(_mm512_unpacklo_epi32(e0, o0), _mm512_unpackhi_epi32(e0, o0));
    const __m512i p1 =
        _mm512_packs_epi32(_mm512_unpacklo_epi32(e1, o1), _mm512_unpackhi_epi32(e1, o1));
    return _mm512_permutexvar_epi64(perm, qrt__dwp_bytes(p0, p1, voz, vlo, vhi));
}

/* stride 1: r_d lane j = output 4j + d -> 64 bytes in order (the dword / qword unpacks give
 * outputs 16L + 0..3, 4..7, 8..11, 12..15 of 128-bit lane L, the packs keep that order) */
static inline __attribute__((always_inline)) QRT_AVX512VNNI __m512i
qrt__dwp_out1(__m512i r0, __m512i r1, __m512i r2, __m512i r3, __m512 vs, __m512i voz,
              __m512i vlo, __m512i vhi) {
    r0 = qrt__dwp_cvt(r0, vs), r1 = qrt__dwp_cvt(r1, vs);
    r2 = qrt__dwp_cvt(r2, vs), r3 = qrt__dwp_cvt(r3, vs);
    const __m512i a = _mm512_unpacklo_epi32(r0, r1), b = _mm512_unpacklo_epi32(r2, r3);
    const __m512i c = _mm512_unpackhi_epi32(r0, r1), d = _mm512_unpackhi_epi32(r2, r3);
    const __m512i p0 = _mm512_packs_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
    const __m512i p1 = _mm512_packs_epi32(_mm512_unpacklo_epi64(c, d), _mm512_unpackhi_epi64(c, d));
    return qrt__dwp_bytes(p0, p1, voz, vlo, vhi);
}

/* stage[f] for f < count (128 per step, then <= 64): NR row runs, run k's at rp[k] + S*f with
 * the 4-tap weights wq[k * G + q] at + 4q; S, NR and G constant where the caller inlines it */
static inline __attribute__((always_inline)) QRT_AVX512VNNI void
qrt__dwp_kern(const uint8_t *const *rp, const int32_t *wq, int64_t S, int64_t NR, int64_t G,
              int64_t count, int32_t bias, float scale, int32_t zp, int32_t lo, int32_t hi,
              uint8_t *stage) {
    const __m512i vb = _mm512_set1_epi32(bias), vlo = _mm512_set1_epi8((char)lo),
                  vhi = _mm512_set1_epi8((char)hi), vz = _mm512_set1_epi16((short)zp);
    const __m512 vs = _mm512_set1_ps(scale);
    /* load d of a 64-output half: byte offset S == 2 ? (d & 1) * 2 + (d >> 1) * 64 : d + ... */
#define QRT__DWP_OFF(d) (S == 2 ? ((d) & 1) * 2 + ((d) >> 1) * 64 : ((d) & 3) + ((d) >> 2) * 64)
#define QRT__DWP_STEP(NV)                                                                         \
    do {                                                                                          \
        __m512i a_[NV];                                                                           \
        _Pragma("GCC unroll 8") for (int v_ = 0; v_ < NV; ++v_) a_[v_] = vb;                      \
        _Pragma("GCC unroll 48") for (int64_t k = 0; k < NR; ++k) {                               \
            const uint8_t *r = rp[k] + S * f;                                                     \
            _Pragma("GCC unroll 4") for (int64_t qi = 0; qi < G; ++qi) {                          \
                const __m512i w4 = _mm512_set1_epi32(wq[k * G + qi]);                             \
                _Pragma("GCC unroll 8") for (int v_ = 0; v_ < NV; ++v_) a_[v_] =                  \
                    _mm512_dpbusd_epi32(a_[v_],                                                   \
                                        _mm512_loadu_si512(r + 4 * qi + QRT__DWP_OFF(v_)), w4);   \
            }                                                                                     \
        }                                                                                         \
        _Pragma("GCC unroll 2") for (int h_ = 0; h_ < NV / 4; ++h_) _mm512_storeu_si512(          \
            stage + f + 64 * h_,                                                                  \
            S == 2 ? qrt__dwp_out2(a_[4 * h_], a_[4 * h_ + 1], a_[4 * h_ + 2], a_[4 * h_ + 3], vs, \
                                   vz, vlo, vhi)                                                  \
                   : qrt__dwp_out1(a_[4 * h_], a_[4 * h_ + 1], a_[4 * h_ + 2], a_[4 * h_ + 3], vs, \
                                   vz, vlo, vhi));                                                \
    } while (0)
    int64_t f = 0;
    for (; f + 64 < count; f += 128) QRT__DWP_STEP(8); /* eight independent sums */
    if (f < count) QRT__DWP_STEP(4);
#undef QRT__DWP_STEP
#undef QRT__DWP_OFF
}

#define QRT__DWP_K(name, S, NR, G)                                                                \
    static QRT_AVX512VNNI void name(const uint8_t *const *rp, const int32_t *wq, int64_t count,  \
                                    int32_t bias, float scale, int32_t zp, int32_t lo,            \
                                    int32_t hi, uint8_t *stage) {                                 \
        qrt__dwp_kern(rp, wq, S, NR, G, count, bias, scale, zp, lo, hi, stage);                   \
    }
QRT__DWP_K(qrt__dwp_k1_33, 1, 3, 1)
QRT__DWP_K(qrt__dwp_k1_55, 1, 5, 2)
QRT__DWP_K(qrt__dwp_k2_33, 2, 3, 1)
QRT__DWP_K(qrt__dwp_k2_55, 2, 5, 2)
#undef QRT__DWP_K

static QRT_AVX512VNNI void qrt__dwp_k_any(const uint8_t *const *rp, const int32_t *wq, int64_t s,
                                          int64_t nr, int64_t g4, int64_t count, int32_t bias,
                                          float scale, int32_t zp, int32_t lo, int32_t hi,
                                          uint8_t *stage) {
    if (s == 2)
        qrt__dwp_kern(rp, wq, 2, nr, g4, count, bias, scale, zp, lo, hi, stage);
    else
        qrt__dwp_kern(rp, wq, 1, nr, g4, count, bias, scale, zp, lo, hi, stage);
}

/* d[0 .. n) = s[0 .. n): reads and writes nothing outside them */
static inline __attribute__((always_inline)) QRT_AVX512VNNI void
qrt__dwp_copy(uint8_t *d, const uint8_t *s, int64_t n) {
    if (n >= 64) {
        int64_t j = 0;
        for (; j + 64 <= n; j += 64) _mm512_storeu_si512(d + j, _mm512_loadu_si512(s + j));
        if (j < n) _mm512_storeu_si512(d + n - 64, _mm512_loadu_si512(s + n - 64));
    } else if (n >= 32) {
        const __m256i a = _mm256_loadu_si256((const __m256i *)s);
        const __m256i b = _mm256_loadu_si256((const __m256i *)(s + n - 32));
        _mm256_storeu_si256((__m256i *)d, a);
        _mm256_storeu_si256((__m256i *)(d + n - 32), b);
    } else if (n >= 16) {
        const __m128i a = _mm_loadu_si128((const __m128i *)s);
        const __m128i b = _mm_loadu_si128((const __m128i *)(s + n - 16));
        _mm_storeu_si128((__m128i *)d, a);
        _mm_storeu_si128((__m128i *)(d + n - 16), b);
    } else {
        memcpy(d, s, (size_t)n);
    }
}

/* output channel oc's int8 weight terms wq[(ky * nt + t) * g4 + q] (4 taps a dword, 0 past
 * the row) and its bias with the input zero point folded in (*bq); returns nt, the terms per
 * weight (1 where every w - wz fits int8) */
static inline __attribute__((always_inline)) int64_t
qrt__dwp_wprep(const qrt_dwconv2d_params *p, const int8_t *w, const qrt_conv1d_quant *q,
               int64_t oc, int32_t *wq, int32_t *bq) {
    const int64_t kh = p->kh, kw = p->kw, taps = kh * kw, g4 = (kw + 3) / 4;
    const int8_t *wc = w + oc * taps;
    const int32_t wz = q->weight_zero[oc];
    uint32_t wsum = 0;
    int32_t vmin = 0, vmax = 0;
    for (int64_t t = 0; t < taps; ++t) {
        const int32_t v = wc[t] - wz;
        wsum += (uint32_t)v;
        vmin = v < vmin ? v : vmin, vmax = v > vmax ? v : vmax;
    }
    /* int8 terms of each w - wz in [-255, 255]: clamp, then the rest (255 needs 3) */
    const int64_t nt = vmin >= -128 && vmax <= 127 ? 1 : vmax <= 254 ? 2 : 3;
    if (nt == 1) /* every symmetric weight: the bytes as they are (no clamp loop; the
                  * per-channel prep is measurable on 28x28 layers) */
        for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t qi = 0; qi < g4; ++qi) {
                uint32_t v = 0;
                for (int64_t b = 0; b < 4 && 4 * qi + b < kw; ++b)
                    v |= (uint32_t)(uint8_t)(int8_t)(wc[ky * kw + 4 * qi + b] - wz) << (8 * b);
                wq[ky * g4 + qi] = (int32_t)v;
            }
    else
        for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t qi = 0; qi < g4; ++qi) {
                uint32_t tv[3] = {0, 0, 0};
                for (int64_t b = 0; b < 4; ++b) {
                    const int64_t kx = 4 * qi + b;
                    int32_t v = kx < kw ? wc[ky * kw + kx] - wz : 0;
                    for (int64_t t = 0; t < nt; ++t) {
                        const int32_t e = v < -128 ? -128 : v > 127 ? 127 : v;
                        tv[t] |= (uint32_t)(uint8_t)(int8_t)e << (8 * b);
                        v -= e;
                    }
                }
                for (int64_t t = 0; t < nt; ++t) wq[(ky * nt + t) * g4 + qi] = (int32_t)tv[t];
            }
    *bq = (int32_t)((uint32_t)q->bias_q[oc] - (uint32_t)p->input_zero * wsum);
    return nt;
}

/* units [u0, u1): per input channel its row-phase planes (the padding around the image is
 * written once per run), then per output channel its int8 weight terms and folded bias, the
 * kernel into the stage and the kept outputs into y: rows as 64-byte copies where a copy's
 * spill past the row lands on later rows of the same channel (rewritten next), exact copies
 * for the last rows */
static QRT_AVX512VNNI void qrt__dwp_run(const qrt_dwconv2d_params *p, const uint8_t *x,
                                        const int8_t *w, const qrt_conv1d_quant *q, uint8_t *y,
                                        void *scratch, int64_t u0, int64_t u1) {
    const qrt__dwp_geom g = qrt__dwp_geom_of(p);
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    uint8_t *pl[2] = {base, base + g.pst};
    int32_t *wq = (int32_t *)(void *)(base + g.off_wp);
    const uint8_t **rq = (const uint8_t **)(void *)(base + g.off_rp);
    uint8_t *stage = base + g.off_stage;
    const int64_t s = g.s, kh = p->kh, kw = p->kw, g4 = g.g4, rs = g.rs, rw = g.rw;
    const int64_t H = p->h, W = p->w, pt = p->pad_top, ho = p->ho, wo = p->wo;
    memset(base, p->input_zero, (size_t)(g.pst * s));
    const uint8_t *rp[16];
    for (int64_t ky = 0; ky < kh; ++ky) rp[ky] = pl[ky % s] + (ky / s) * rw;
    /* image rows: padded row r = iy + pt is row r / s of plane r % s (rows past nr unread) */
    int64_t iy1 = s * g.nr - pt;
    if (iy1 > H) iy1 = H;
    const int vec_rows = p->y_stride_h == wo;
    const int k33 = kh == 3 && kw == 3, k55 = kh == 5 && kw == 5; /* compiled apart */
    for (int64_t u = u0; u < u1; ++u) {
        const int64_t n = u / p->c_in, ci = u - n * p->c_in;
        const uint8_t *xc = x + n * p->x_stride_n + ci * p->x_stride_c;
        if (s == 2) /* (no division per row) */
            for (int64_t iy = 0; iy < iy1; ++iy) {
                const int64_t r = iy + pt;
                qrt__dwp_copy(pl[r & 1] + (r >> 1) * rw + p->pad_left, xc + iy * p->x_stride_h,
                              W);
            }
        else
            for (int64_t iy = 0; iy < iy1; ++iy)
                qrt__dwp_copy(pl[0] + (iy + pt) * rw + p->pad_left, xc + iy * p->x_stride_h, W);
        for (int64_t j = 0; j < p->mult; ++j) {
            const int64_t oc = ci * p->mult + j;
            int32_t bq;
            const int64_t nt = qrt__dwp_wprep(p, w, q, oc, wq, &bq);
            const float sc = q->scale[oc];
            const int32_t zo = p->output_zero, lo = p->output_min, hi = p->output_max;
            if (nt == 1 && k33)
                (s == 2 ? qrt__dwp_k2_33 : qrt__dwp_k1_33)(rp, wq, g.count, bq, sc, zo, lo, hi,
                                                           stage);
            else if (nt == 1 && k55)
                (s == 2 ? qrt__dwp_k2_55 : qrt__dwp_k1_55)(rp, wq, g.count, bq, sc, zo, lo, hi,
                                                           stage);
            else {
                for (int64_t k = 0; k < kh * nt; ++k) rq[k] = rp[k / nt];
                qrt__dwp_k_any(rq, wq, s, kh * nt, g4, g.count, bq, sc, zo, lo, hi, stage);
            }
            uint8_t *yc = y + n * p->y_stride_n + oc * p->y_stride_c;
            int64_t oy = 0;
            if (vec_rows)
                for (; oy < ho && (ho - 1 - oy) * wo >= 64; ++oy)
                    for (int64_t k = 0; k < wo; k += 64)
                        _mm512_storeu_si512(yc + oy * wo + k,
                                            _mm512_loadu_si512(stage + oy * rs + k));
            for (; oy < ho; ++oy) memcpy(yc + oy * p->y_stride_h, stage + oy * rs, (size_t)wo);
        }
    }
}

/* ---- stride-2 rows (src/dwconv2d_impl.h, qrt__dwr_geom): the image rows in place ---- */

/* the rows of an item: kernel row ky = k / nt reads image row iy0 + ky, at xb + ky * xsh
 * (xb = xc + iy0 * xsh) where every row lies in the image (EDGE 0), else a row outside it
 * reads zrow's input_zero bytes */
typedef struct {
    const uint8_t *xb, *zrow;
    int64_t xsh, iy0, H, nt;
} qrt__dwr_rows;

static inline __attribute__((always_inline)) const uint8_t *
qrt__dwr_row(const qrt__dwr_rows *r, int64_t k, const int EDGE) {
    const int64_t ky = k / r->nt;
    if (!EDGE) return r->xb + ky * r->xsh;
    return (uint64_t)(r->iy0 + ky) < (uint64_t)r->H ? r->xb + ky * r->xsh : r->zrow;
}

/* one item's sums at column c of its unit; BL: input_zero into the bytes of mk (per parity,
 * then quad) */
static inline __attribute__((always_inline)) QRT_AVX512VNNI void
qrt__dwr_sums(const qrt__dwr_rows *r, int64_t c, const __m512i *w4, const uint64_t *mk,
              __m512i vb, __m512i vxz, int64_t NR, int64_t G, const int BL, const int EDGE,
              __m512i *e, __m512i *o) {
    __m512i a = vb, b = vb;
#pragma GCC unroll 48
    for (int64_t k = 0; k < NR; ++k) {
        const uint8_t *rk = qrt__dwr_row(r, k, EDGE) + c;
#pragma GCC unroll 2
        for (int64_t qi = 0; qi < G; ++qi) {
            __m512i x0 = _mm512_loadu_si512(rk + 4 * qi);
            __m512i x1 = _mm512_loadu_si512(rk + 4 * qi + 2);
            if (BL) {
                x0 = _mm512_mask_blend_epi8((__mmask64)mk[qi], x0, vxz);
                x1 = _mm512_mask_blend_epi8((__mmask64)mk[G + qi], x1, vxz);
            }
            a = _mm512_dpbusd_epi32(a, x0, w4[k * G + qi]);
            b = _mm512_dpbusd_epi32(b, x1, w4[k * G + qi]);
        }
    }
    *e = a, *o = b;
}

/* 32 bytes at d: all of them where plain, else none at or past lim */
static inline __attribute__((always_inline)) QRT_AVX512VNNI void
qrt__dwr_put(uint8_t *d, int plain, const uint8_t *lim, __m256i v) {
    if (plain || d + 32 <= lim)
        _mm256_storeu_si256((__m256i *)d, v);
    else
        _mm256_mask_storeu_epi8(d, (__mmask32)((1ull << (lim - d)) - 1u), v);
}

/* the constants of one output channel */
typedef struct {
    __m512i vb, vxz, voz, vlo, vhi;
    __m512 vs;
    const uint8_t *xc, *zrow, *ylim;
    const uint64_t *mk;
    uint8_t *yc;
    int64_t nu, ho, wo, H, xsh, pt, pl, ysh, nt;
    int rr; /* contiguous output rows: bytes past a row land on later rows */
} qrt__dwr_ch;

static inline __attribute__((always_inline)) qrt__dwr_rows qrt__dwr_rows_of(const qrt__dwr_ch *h,
                                                                             int64_t oy) {
    qrt__dwr_rows r;
    r.iy0 = 2 * oy - h->pt;
    r.xb = h->xc + r.iy0 * h->xsh, r.zrow = h->zrow, r.xsh = h->xsh, r.H = h->H, r.nt = h->nt;
    return r;
}

/* rows oy .. oy + n - 1 (n <= 4) of a plane of one item a row */
static inline __attribute__((always_inline)) QRT_AVX512VNNI void
qrt__dwr_rows4(const qrt__dwr_ch *h, const __m512i *w4, int64_t oy, int64_t n, int64_t NR,
               int64_t G, const int FA, const int EDGE) {
    const qrt__dwr_rows ra = qrt__dwr_rows_of(h, oy), rb = qrt__dwr_rows_of(h, n > 1 ? oy + 1 : oy),
                        rc = qrt__dwr_rows_of(h, n > 2 ? oy + 2 : oy),
                        rd = qrt__dwr_rows_of(h, n > 3 ? oy + 3 : oy);
    __m512i a0, a1, b0, b1, c0, c1, d0, d1;
    const int64_t c = -h->pl;
    qrt__dwr_sums(&ra, c, w4, h->mk, h->vb, h->vxz, NR, G, FA, EDGE, &a0, &a1);
    qrt__dwr_sums(&rb, c, w4, h->mk, h->vb, h->vxz, NR, G, FA, EDGE, &b0, &b1);
    qrt__dwr_sums(&rc, c, w4, h->mk, h->vb, h->vxz, NR, G, FA, EDGE, &c0, &c1);
    qrt__dwr_sums(&rd, c, w4, h->mk, h->vb, h->vxz, NR, G, FA, EDGE, &d0, &d1);
    const __m512i v0 = qrt__dwp_out2(a0, a1, b0, b1, h->vs, h->voz, h->vlo, h->vhi);
    const __m512i v1 = qrt__dwp_out2(c0, c1, d0, d1, h->vs, h->voz, h->vlo, h->vhi);
    const __m256i q[4] = {_mm512_castsi512_si256(v0), _mm512_extracti64x4_epi64(v0, 1),
                          _mm512_castsi512_si256(v1), _mm512_extracti64x4_epi64(v1, 1)};
    for (int64_t i = 0; i < n; ++i) {
        uint8_t *d = h->yc + (oy + i) * h->ysh;
        qrt__dwr_put(d, h->rr && oy + i + 1 < h->ho, h->rr ? h->ylim : d + h->wo, q[i]);
    }
}

/* rows oy and oy + 1 (two: else oy alone), units in pairs (u, u + 1; the last alone) */
static inline __attribute__((always_inline)) QRT_AVX512VNNI void
qrt__dwr_rows2(const qrt__dwr_ch *h, const __m512i *w4, int64_t oy, int two, int64_t NR,
               int64_t G, const int FA, const int FB, const int EDGE) {
    const int64_t o2 = two ? oy + 1 : oy, nu = h->nu, wo = h->wo, G2 = 2 * G;
    const qrt__dwr_rows ra = qrt__dwr_rows_of(h, oy), rb = qrt__dwr_rows_of(h, o2);
    uint8_t *ya = h->yc + oy * h->ysh, *yb = h->yc + o2 * h->ysh;
    const int pa = h->rr && oy + 1 < h->ho, pb = h->rr && o2 + 1 < h->ho; /* spill rewritten */
    const uint8_t *la = h->rr ? h->ylim : ya + wo, *lb = h->rr ? h->ylim : yb + wo;
    __m512i a0, a1, b0, b1, c0, c1, d0, d1;
    for (int64_t u = 0; u < nu; u += 2) {
        const int64_t u1 = u + 1 < nu ? u + 1 : u, ca = 64 * u - h->pl, cb = 64 * u1 - h->pl;
        const uint64_t *ma = h->mk + u * G2, *mb = h->mk + u1 * G2;
        if (u == 0) {
            qrt__dwr_sums(&ra, ca, w4, ma, h->vb, h->vxz, NR, G, FA, EDGE, &a0, &a1);
            qrt__dwr_sums(&ra, cb, w4, mb, h->vb, h->vxz, NR, G, FB, EDGE, &b0, &b1);
            qrt__dwr_sums(&rb, ca, w4, ma, h->vb, h->vxz, NR, G, FA, EDGE, &c0, &c1);
            qrt__dwr_sums(&rb, cb, w4, mb, h->vb, h->vxz, NR, G, FB, EDGE, &d0, &d1);
        } else {
            qrt__dwr_sums(&ra, ca, w4, ma, h->vb, h->vxz, NR, G, 1, EDGE, &a0, &a1);
            qrt__dwr_sums(&ra, cb, w4, mb, h->vb, h->vxz, NR, G, 1, EDGE, &b0, &b1);
            qrt__dwr_sums(&rb, ca, w4, ma, h->vb, h->vxz, NR, G, 1, EDGE, &c0, &c1);
            qrt__dwr_sums(&rb, cb, w4, mb, h->vb, h->vxz, NR, G, 1, EDGE, &d0, &d1);
        }
        const __m512i v0 = qrt__dwp_out2(a0, a1, b0, b1, h->vs, h->voz, h->vlo, h->vhi);
        const __m512i v1 = qrt__dwp_out2(c0, c1, d0, d1, h->vs, h->voz, h->vlo, h->vhi);
        /* row oy's spill lands on row oy + 1's first bytes: rewritten only after unit 0 */
        const int pu = pa && u == 0;
        const uint8_t *lu = u == 0 || !two ? la : ya + wo;
        if (u1 > u && (pu || 32 * u + 64 <= wo)) {
            _mm512_storeu_si512(ya + 32 * u, v0);
        } else {
            qrt__dwr_put(ya + 32 * u, pu, lu, _mm512_castsi512_si256(v0));
            if (u1 > u) qrt__dwr_put(ya + 32 * u1, pu, lu, _mm512_extracti64x4_epi64(v0, 1));
        }
        if (!two) continue;
        if (u1 > u && (pb || 32 * u + 64 <= wo)) {
            _mm512_storeu_si512(yb + 32 * u, v1);
        } else {
            qrt__dwr_put(yb + 32 * u, pb, lb, _mm512_castsi512_si256(v1));
            if (u1 > u) qrt__dwr_put(yb + 32 * u1, pb, lb, _mm512_extracti64x4_epi64(v1, 1));
        }
    }
}

/* rows [oy, oe) of a plane of two units a row (33 .. 64 outputs), all their image rows inside,
 * contiguous output rows and row oe not the last: the loop with only its pointers live (the
 * channel's state in registers spilled in the general loop) */
static inline __attribute__((always_inline)) QRT_AVX512VNNI void
qrt__dwr_fast2(const qrt__dwr_ch *h, const __m512i *w4, int64_t oy, int64_t oe, int64_t NR,
               int64_t G, const int FA, const int FB) {
    const int64_t xsh = h->xsh, ysh = h->ysh, G2 = 2 * G;
    const __m512i vb = h->vb, vxz = h->vxz, voz = h->voz, vlo = h->vlo, vhi = h->vhi;
    const __m512 vs = h->vs;
    const uint64_t *m0 = h->mk, *m1 = h->mk + G2;
    qrt__dwr_rows ra, rb;
    ra.xb = h->xc + (2 * oy - h->pt) * xsh - h->pl, ra.zrow = h->zrow, ra.xsh = xsh;
    ra.iy0 = 0, ra.H = h->H, ra.nt = h->nt;
    rb = ra;
    uint8_t *ya = h->yc + oy * ysh;
    for (; oy + 2 <= oe; oy += 2, ra.xb += 4 * xsh, ya += 2 * ysh) {
        __m512i a0, a1, b0, b1, c0, c1, d0, d1;
        rb.xb = ra.xb + 2 * xsh;
        qrt__dwr_sums(&ra, 0, w4, m0, vb, vxz, NR, G, FA, 0, &a0, &a1);
        qrt__dwr_sums(&ra, 64, w4, m1, vb, vxz, NR, G, FB, 0, &b0, &b1);
        qrt__dwr_sums(&rb, 0, w4, m0, vb, vxz, NR, G, FA, 0, &c0, &c1);
        qrt__dwr_sums(&rb, 64, w4, m1, vb, vxz, NR, G, FB, 0, &d0, &d1);
        _mm512_storeu_si512(ya, qrt__dwp_out2(a0, a1, b0, b1, vs, voz, vlo, vhi));
        _mm512_storeu_si512(ya + ysh, qrt__dwp_out2(c0, c1, d0, d1, vs, voz, vlo, vhi));
    }
}

/* the same for a plane of one unit a row (17 .. 32 outputs): four rows a step */
static inline __attribute__((always_inline)) QRT_AVX512VNNI void
qrt__dwr_fast1(const qrt__dwr_ch *h, const __m512i *w4, int64_t oy, int64_t oe, int64_t NR,
               int64_t G, const int FA) {
    const int64_t xsh = h->xsh, ysh = h->ysh;
    const __m512i vb = h->vb, vxz = h->vxz, voz = h->voz, vlo = h->vlo, vhi = h->vhi;
    const __m512 vs = h->vs;
    const uint64_t *m0 = h->mk;
    qrt__dwr_rows ra, rb, rc, rd;
    ra.xb = h->xc + (2 * oy - h->pt) * xsh - h->pl, ra.zrow = h->zrow, ra.xsh = xsh;
    ra.iy0 = 0, ra.H = h->H, ra.nt = h->nt;
    rb = rc = rd = ra;
    uint8_t *ya = h->yc + oy * ysh;
    for (; oy + 4 <= oe; oy += 4, ra.xb += 8 * xsh, ya += 4 * ysh) {
        __m512i a0, a1, b0, b1, c0, c1, d0, d1;
        rb.xb = ra.xb + 2 * xsh, rc.xb = ra.xb + 4 * xsh, rd.xb = ra.xb + 6 * xsh;
        qrt__dwr_sums(&ra, 0, w4, m0, vb, vxz, NR, G, FA, 0, &a0, &a1);
        qrt__dwr_sums(&rb, 0, w4, m0, vb, vxz, NR, G, FA, 0, &b0, &b1);
        qrt__dwr_sums(&rc, 0, w4, m0, vb, vxz, NR, G, FA, 0, &c0, &c1);
        qrt__dwr_sums(&rd, 0, w4, m0, vb, vxz, NR, G, FA, 0, &d0, &d1);
        const __m512i v0 = qrt__dwp_out2(a0, a1, b0, b1, vs, voz, vlo, vhi);
        const __m512i v1 = qrt__dwp_out2(c0, c1, d0, d1, vs, voz, vlo, vhi);
        _mm256_storeu_si256((__m256i *)ya, _mm512_castsi512_si256(v0));
        _mm256_storeu_si256((__m256i *)(ya + ysh), _mm512_extracti64x4_epi64(v0, 1));
        _mm256_storeu_si256((__m256i *)(ya + 2 * ysh), _mm512_castsi512_si256(v1));
        _mm256_storeu_si256((__m256i *)(ya + 3 * ysh), _mm512_extracti64x4_epi64(v1, 1));
    }
}

/* One output channel.  Rows of one item (17 .. 32 outputs) go four rows at a time; wider rows
 * two rows at a time, a pair of units (eight independent sums) from each: units 0 and 1 with
 * the blends FA / FB (the channel's constants: one compiled loop per pair of flags, so that no
 * branch on them sits among the loads), later units blending through their masks (zero where
 * nothing leaves the row).  Row groups whose input rows all lie in the image address them from
 * one base (EDGE 0); the others select zrow per row.  An item's 32 bytes run on past its row
 * onto the next one (written after it) when the rows are contiguous; ylim: where the
 * channel's stores must end (past its own bytes where the spill lands on a later channel of
 * the run). */
static inline __attribute__((always_inline)) QRT_AVX512VNNI void
qrt__dwr_chan(const qrt_dwconv2d_params *p, const qrt__dwr_geom *g, const uint8_t *xc,
              const uint8_t *zrow, const uint64_t *mk, const int32_t *wq, int64_t NR, int64_t G,
              int64_t nt, int32_t bias, float scale, uint8_t *yc, const uint8_t *ylim,
              const int FA, const int FB) {
    qrt__dwr_ch h;
    h.vb = _mm512_set1_epi32(bias), h.vxz = _mm512_set1_epi8((char)p->input_zero);
    h.voz = _mm512_set1_epi16((short)p->output_zero);
    h.vlo = _mm512_set1_epi8((char)p->output_min), h.vhi = _mm512_set1_epi8((char)p->output_max);
    h.vs = _mm512_set1_ps(scale);
    h.xc = xc, h.zrow = zrow, h.ylim = ylim, h.mk = mk, h.yc = yc;
    h.nu = g->nu, h.ho = p->ho, h.wo = p->wo, h.H = p->h, h.xsh = p->x_stride_h;
    h.pt = p->pad_top, h.pl = p->pad_left, h.ysh = p->y_stride_h, h.nt = nt;
    h.rr = h.ysh == h.wo;
    __m512i w4[48 * 2];
#pragma GCC unroll 10
    for (int64_t k = 0; k < NR * G; ++k) w4[k] = _mm512_set1_epi32(wq[k]);
    const int64_t ho = h.ho, kh = p->kh, pt = h.pt, H = h.H;
    /* output rows [r0, r1) read image rows only: 2 oy - pt >= 0, 2 oy - pt + kh - 1 < H */
    int64_t r0 = (pt + 1) / 2, r1 = H - kh + pt >= 0 ? (H - kh + pt) / 2 + 1 : 0;
    if (r1 > ho) r1 = ho;
    if (r0 > r1) r0 = r1;
    int64_t oy = 0;
    if (h.nu == 1) {
        for (; oy < ho; oy += 4) {
            if (h.rr && oy >= r0) { /* the interior rows in one loop */
                const int64_t oe = r1 < ho - 1 ? r1 : ho - 1;
                if (oy + 4 <= oe) {
                    qrt__dwr_fast1(&h, w4, oy, oe, NR, G, FA);
                    oy += (oe - oy) / 4 * 4 - 4;
                    continue;
                }
            }
            const int64_t n = ho - oy < 4 ? ho - oy : 4;
            if (oy >= r0 && oy + n <= r1)
                qrt__dwr_rows4(&h, w4, oy, n, NR, G, FA, 0);
            else
                qrt__dwr_rows4(&h, w4, oy, n, NR, G, FA, 1);
        }
        return;
    }
    for (; oy < ho; oy += 2) {
        const int two = oy + 1 < ho;
        if (h.nu == 2 && h.rr && oy >= r0) { /* the interior rows in one loop */
            const int64_t oe = r1 < ho - 1 ? r1 : ho - 1;
            if (oy + 2 <= oe) {
                qrt__dwr_fast2(&h, w4, oy, oe, NR, G, FA, FB);
                oy += (oe - oy) / 2 * 2 - 2;
                continue;
            }
        }
        if (oy >= r0 && oy + 1 + two <= r1)
            qrt__dwr_rows2(&h, w4, oy, two, NR, G, FA, FB, 0);
        else
            qrt__dwr_rows2(&h, w4, oy, two, NR, G, FA, FB, 1);
    }
}

typedef void (*qrt__dwr_chan_fn)(const qrt_dwconv2d_params *p, const qrt__dwr_geom *g,
                                 const uint8_t *xc, const uint8_t *zrow, const uint64_t *mk,
                                 const int32_t *wq, int64_t nt, int32_t bias, float scale,
                                 uint8_t *yc, const uint8_t *ylim);

/* the kernel shapes compiled apart (3x3, 5x5 with nt = 1; the rest at run time) x the blend
 * flags of units 0 and 1 */
#define QRT__DWR_C(name, NR_, G_, FA_, FB_)                                                   \
    static QRT_AVX512VNNI void name(const qrt_dwconv2d_params *p, const qrt__dwr_geom *g,    \
                                    const uint8_t *xc, const uint8_t *zrow,                  \
                                    const uint64_t *mk, const int32_t *wq, int64_t nt,       \
                                    int32_t bias, float scale, uint8_t *yc,                  \
                                    const uint8_t *ylim) {                                   \
        qrt__dwr_chan(p, g, xc, zrow, mk, wq, (NR_) ? (NR_) : p->kh * nt, (G_) ? (G_) : g->G, \
                      (NR_) ? 1 : nt, bias, scale, yc, ylim, FA_, FB_);                      \
    }
#define QRT__DWR_C4(name, NR_, G_)                                                            \
    QRT__DWR_C(name##_00, NR_, G_, 0, 0)                                                      \
    QRT__DWR_C(name##_10, NR_, G_, 1, 0)                                                      \
    QRT__DWR_C(name##_01, NR_, G_, 0, 1)                                                      \
    QRT__DWR_C(name##_11, NR_, G_, 1, 1)                                                      \
    static const qrt__dwr_chan_fn name[4] = {name##_00, name##_10, name##_01, name##_11};
QRT__DWR_C4(qrt__dwr_c33, 3, 1)
QRT__DWR_C4(qrt__dwr_c55, 5, 2)
QRT__DWR_C4(qrt__dwr_cany, 0, 0)
#undef QRT__DWR_C4
#undef QRT__DWR_C

/* units [u0, u1): the blend masks once per run, then per output channel its weight terms and
 * its items; a channel whose loads could leave the input tensor runs the byte planes */
static QRT_AVX512VNNI void qrt__dwr_run(const qrt_dwconv2d_params *p, const uint8_t *x,
                                        const int8_t *w, const qrt_conv1d_quant *q, uint8_t *y,
                                        void *scratch, int64_t u0, int64_t u1) {
    const qrt__dwr_geom g = qrt__dwr_geom_of(p);
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    uint8_t *zrow = base + g.off_z + 64;
    uint64_t *mk = (uint64_t *)(void *)(base + g.off_mk);
    int32_t *wq = (int32_t *)(void *)(base + qrt__dwp_geom_of(p).off_wp);
    const int64_t nu = g.nu, G = g.G, kh = p->kh, kw = p->kw, W = p->w, wo = p->wo;
    const int64_t pl = p->pad_left, C = p->c_in, M = p->mult, npo = (int64_t)p->ho * wo;
    memset(zrow - 64, p->input_zero, (size_t)(64 * nu + 128));
    int fl[2] = {0, 0};
    for (int64_t u = 0; u < nu; ++u) /* byte b of load (e, q): lane b / 4, tap 4q + b % 4 */
        for (int64_t e = 0; e < 2; ++e)
            for (int64_t qi = 0; qi < G; ++qi) {
                uint64_t m = 0;
                for (int64_t b = 0; b < 64; ++b) {
                    const int64_t ox = 32 * u + 2 * (b / 4) + e, kx = 4 * qi + b % 4;
                    const int64_t col = 64 * u - pl + 2 * e + 4 * qi + b;
                    if (ox < wo && kx < kw && (col < 0 || col >= W)) m |= 1ull << b;
                }
                mk[u * 2 * G + e * G + qi] = m;
                if (u < 2 && m) fl[u] = 1;
            }
    if (nu == 1) fl[1] = fl[0];
    /* a channel's loads read [xo - pl, xo + (H - 1) xsh + 64 nu + 4 G + 2 - pl) */
    const int64_t xend = ((int64_t)p->n - 1) * p->x_stride_n + (C - 1) * p->x_stride_c +
                         ((int64_t)p->h - 1) * p->x_stride_h + W;
    const int64_t reach = ((int64_t)p->h - 1) * p->x_stride_h + 64 * nu + 4 * G + 2 - pl;
    const int direct = p->y_stride_h == wo && p->y_stride_c == npo &&
                       p->y_stride_n == C * M * npo;
    const int64_t yend = u1 * M * npo; /* this run's output ends at y + yend */
    const int fi = fl[0] + 2 * fl[1];
    for (int64_t u = u0; u < u1; ++u) {
        const int64_t n = u / C, ci = u - n * C;
        const int64_t xo = n * p->x_stride_n + ci * p->x_stride_c;
        if (xo - pl < 0 || xo + reach > xend) {
            qrt__dwp_run(p, x, w, q, y, scratch, u, u + 1);
            continue;
        }
        for (int64_t j = 0; j < M; ++j) {
            const int64_t oc = ci * M + j;
            int32_t bq;
            const int64_t nt = qrt__dwp_wprep(p, w, q, oc, wq, &bq);
            uint8_t *yc = y + n * p->y_stride_n + oc * p->y_stride_c;
            /* contiguous output: a spill past the channel lands on a later channel of the run */
            const uint8_t *ylim = yc + ((int64_t)p->ho - 1) * p->y_stride_h + wo +
                                  (direct && (u * M + j + 1) * npo + 32 <= yend ? 32 : 0);
            const qrt__dwr_chan_fn *f = nt == 1 && kh == 3 && kw == 3   ? qrt__dwr_c33
                                        : nt == 1 && kh == 5 && kw == 5 ? qrt__dwr_c55
                                                                        : qrt__dwr_cany;
            f[fi](p, &g, x + xo, zrow, mk, wq, nt, bq, q->scale[oc], yc, ylim);
        }
    }
}

QRT_AVX512VNNI void qrt_dwconv2d_u8__avx512vnni(const qrt_dwconv2d_params *p, const uint8_t *x,
                                                const int8_t *w, const qrt_conv1d_quant *q,
                                                uint8_t *y, void *scratch, int64_t u0,
                                                int64_t u1) {
    if (q->wpack_cl && qrt__dwcl_geom_ok(p))
        qrt__dwcl_run(p, x, q, y, scratch, u0, u1);
    else if (qrt_dwconv2d_rows && qrt__dwr_ok(p))
        qrt__dwr_run(p, x, w, q, y, scratch, u0, u1);
    else if (qrt__dwp_ok(p))
        qrt__dwp_run(p, x, w, q, y, scratch, u0, u1);
    else if (qrt__dwf_ok(p))
        qrt__dwf_run(p, x, w, q, y, scratch, u0, u1, qrt__dwv_kernel_m, qrt__dwv_widen,
                     qrt__dwv_widen2);
    else
        qrt__dw_run(p, x, w, q, y, scratch, u0, u1, qrt__dwv_kernel, qrt__dwv_widen);
}

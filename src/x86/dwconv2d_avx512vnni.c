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

/* as qrt__dwv_rq, the bias already in the sums */
static inline QRT_AVX512VNNI __m256i qrt__dwv_rq0(__m512i lo, __m512i hi, __m512 vs,
                                                  __m512i vlo, __m512i vhi, __m512i vz) {
    lo = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(lo), vs));
    hi = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(hi), vs));
    lo = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(lo, vlo), vhi), vz);
    hi = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(hi, vlo), vhi), vz);
    return _mm512_cvtepi16_epi8(_mm512_packs_epi32(lo, hi)); /* values 0..255: exact */
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

QRT_AVX512VNNI void qrt_dwconv2d_u8__avx512vnni(const qrt_dwconv2d_params *p, const uint8_t *x,
                                                const int8_t *w, const qrt_conv1d_quant *q,
                                                uint8_t *y, void *scratch, int64_t u0,
                                                int64_t u1) {
    if (q->wpack_cl && qrt__dwcl_geom_ok(p))
        qrt__dwcl_run(p, x, q, y, scratch, u0, u1);
    else if (qrt__dwf_ok(p))
        qrt__dwf_run(p, x, w, q, y, scratch, u0, u1, qrt__dwv_kernel_m, qrt__dwv_widen,
                     qrt__dwv_widen2);
    else
        qrt__dw_run(p, x, w, q, y, scratch, u0, u1, qrt__dwv_kernel, qrt__dwv_widen);
}

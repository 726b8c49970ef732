/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_avx2.c
 * @brief AVX2 depthwise conv2d (qrt/dwconv2d.h) over the phase planes of src/dwconv2d_impl.h:
 *        32 flat outputs per step, taps in pairs (unpack the two taps' int16 runs, vpmaddwd
 *        with the packed weight pair: exact, |sum| <= 2 * 255 * 255).  Requantization is
 *        cvtdq2ps, mulps, cvtps2dq, clamp -- requant.h's sequence -- so every output equals
 *        the reference's.  The per-128-bit-lane order of unpack / pack cancels out.
 */
#include <immintrin.h>

#include "../dwconv2d_impl.h"
#include "qrt/requant.h"
#include "qrt/x86/dwconv2d_x86.h"

#define QRT_AVX2 __attribute__((target("avx2,fma")))

/* 16 int32 (lo: lanes 0-3 | 8-11, hi: 4-7 | 12-15) -> 16 in-order int16 requantized */
static inline QRT_AVX2 __m256i qrt__dwa_rq(__m256i lo, __m256i hi, __m256i vb, __m256 vs,
                                           __m256i vlo, __m256i vhi, __m256i vz) {
    lo = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(lo, vb)), vs));
    hi = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(hi, vb)), vs));
    /* clamp(r + zp, lo, hi) == clamp(r, lo - zp, hi - zp) + zp; INT32_MIN lands on lo */
    lo = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(lo, vlo), vhi), vz);
    hi = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(hi, vlo), vhi), vz);
    return _mm256_packs_epi32(lo, hi);
}

static QRT_AVX2 void qrt__dwa_kernel(const int16_t *const *src, const int16_t *wt,
                                     const int32_t *wp, int64_t taps, int64_t count, int32_t bias,
                                     float scale, int32_t zp, int32_t lo, int32_t hi,
                                     uint8_t *stage) {
    (void)wt;
    const __m256i vb = _mm256_set1_epi32(bias), vlo = _mm256_set1_epi32(lo - zp),
                  vhi = _mm256_set1_epi32(hi - zp), vz = _mm256_set1_epi32(zp);
    const __m256 vs = _mm256_set1_ps(scale);
    const int64_t pairs = taps / 2;
    for (int64_t f = 0; f < count; f += 32) {
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t i = 0; i < pairs; ++i) {
            const int16_t *s0 = src[2 * i] + f, *s1 = src[2 * i + 1] + f;
            const __m256i w2 = _mm256_set1_epi32(wp[i]);
            const __m256i x0 = _mm256_loadu_si256((const __m256i *)s0);
            const __m256i y0 = _mm256_loadu_si256((const __m256i *)s1);
            const __m256i x1 = _mm256_loadu_si256((const __m256i *)(s0 + 16));
            const __m256i y1 = _mm256_loadu_si256((const __m256i *)(s1 + 16));
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, y0), w2));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, y0), w2));
            a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_unpacklo_epi16(x1, y1), w2));
            a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_unpackhi_epi16(x1, y1), w2));
        }
        if (taps & 1) {
            const int16_t *s0 = src[taps - 1] + f;
            const __m256i w2 = _mm256_set1_epi32(wp[pairs]), z = _mm256_setzero_si256();
            const __m256i x0 = _mm256_loadu_si256((const __m256i *)s0);
            const __m256i x1 = _mm256_loadu_si256((const __m256i *)(s0 + 16));
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, z), w2));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, z), w2));
            a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_unpacklo_epi16(x1, z), w2));
            a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_unpackhi_epi16(x1, z), w2));
        }
        const __m256i v0 = qrt__dwa_rq(a0, a1, vb, vs, vlo, vhi, vz);
        const __m256i v1 = qrt__dwa_rq(a2, a3, vb, vs, vlo, vhi, vz);
        const __m256i b = _mm256_permute4x64_epi64(_mm256_packus_epi16(v0, v1), 0xD8);
        _mm256_storeu_si256((__m256i *)(stage + f), b);
    }
}

/* dst[j] = src[j] - xz, 16 at a time; the last block overlaps the one before */
static inline QRT_AVX2 void qrt__dwa_w1(const uint8_t *s, int16_t *d, __m256i vz) {
    _mm256_storeu_si256(
        (__m256i *)d,
        _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)s)), vz));
}

/* dst[j] = src[2j] - xz for 16 j: the high bytes of the 16-bit lanes at s - 1 (reads
 * s[-1 .. 30]) */
static inline QRT_AVX2 void qrt__dwa_w2(const uint8_t *s, int16_t *d, __m256i vz) {
    _mm256_storeu_si256(
        (__m256i *)d,
        _mm256_sub_epi16(_mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)(s - 1)), 8), vz));
}

static QRT_AVX2 void qrt__dwa_widen(const uint8_t *s, int16_t *d, int64_t len, int32_t xz,
                                    int64_t step) {
    const __m256i vz = _mm256_set1_epi16((int16_t)xz);
    if (step == 1 && len >= 16) {
        int64_t j = 0;
        for (; j + 16 <= len; j += 16) qrt__dwa_w1(s + j, d + j, vz);
        if (j < len) qrt__dwa_w1(s + len - 16, d + len - 16, vz);
        return;
    }
    if (step == 2 && len >= 17) {
        /* first block: the low bytes of the lanes at s (reads s[0 .. 31] <= s[2 (len-1)]) */
        _mm256_storeu_si256(
            (__m256i *)d,
            _mm256_sub_epi16(_mm256_and_si256(_mm256_loadu_si256((const __m256i *)s),
                                              _mm256_set1_epi16(0xFF)),
                             vz));
        int64_t j = 16;
        for (; j + 16 <= len; j += 16) qrt__dwa_w2(s + 2 * j, d + j, vz);
        if (j < len) qrt__dwa_w2(s + 2 * (len - 16), d + len - 16, vz);
        return;
    }
    for (int64_t j = 0; j < len; ++j) d[j] = (int16_t)((int32_t)s[j * step] - xz);
}

/* 16 elements of tap run s at f, ANDed with its mask (flat path) */
static inline QRT_AVX2 __m256i qrt__dwa_ld(const int16_t *s, const int16_t *m, int64_t f) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)(s + f));
    return m ? _mm256_and_si256(v, _mm256_loadu_si256((const __m256i *)(m + f))) : v;
}

/* as qrt__dwa_rq, the bias already in the sums */
static inline QRT_AVX2 __m256i qrt__dwa_rq0(__m256i lo, __m256i hi, __m256 vs, __m256i vlo,
                                            __m256i vhi, __m256i vz) {
    lo = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(lo), vs));
    hi = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(hi), vs));
    lo = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(lo, vlo), vhi), vz);
    hi = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(hi, vlo), vhi), vz);
    return _mm256_packs_epi32(lo, hi);
}

/* the flat path's kernel: the sums start at the bias (wrap32(acc + bias): the adds wrap, their
 * order does not matter) */
static QRT_AVX2 void qrt__dwa_kernel_m(const int16_t *const *src, const int16_t *const *mk,
                                       const int16_t *wt, const int32_t *wp, int64_t taps,
                                       int64_t count, int32_t bias, float scale, int32_t zp,
                                       int32_t lo, int32_t hi, uint8_t *stage) {
    (void)wt;
    const __m256i vb = _mm256_set1_epi32(bias), vlo = _mm256_set1_epi32(lo - zp),
                  vhi = _mm256_set1_epi32(hi - zp), vz = _mm256_set1_epi32(zp);
    const __m256 vs = _mm256_set1_ps(scale);
    const int64_t pairs = taps / 2;
    int64_t f0 = 0;
    if (taps == 9) { /* 3x3: tables in locals (the stage stores could alias them) */
        const int16_t *s0 = src[0], *s1 = src[1], *s2 = src[2], *s3 = src[3], *s4 = src[4],
                      *s5 = src[5], *s6 = src[6], *s7 = src[7], *s8 = src[8];
        const int16_t *m0 = mk[0], *m1 = mk[1], *m2 = mk[2], *m3 = mk[3], *m4 = mk[4],
                      *m5 = mk[5], *m6 = mk[6], *m7 = mk[7], *m8 = mk[8];
        const __m256i w01 = _mm256_set1_epi32(wp[0]), w23 = _mm256_set1_epi32(wp[1]),
                      w45 = _mm256_set1_epi32(wp[2]), w67 = _mm256_set1_epi32(wp[3]),
                      w8 = _mm256_set1_epi32(wp[4]), z = _mm256_setzero_si256();
#define QRT__DWA_PAIR(sa, ma, sb, mb, w)                                                          \
    do {                                                                                          \
        const __m256i x0 = qrt__dwa_ld(sa, ma, f), y0 = qrt__dwa_ld(sb, mb, f);                   \
        const __m256i x1 = qrt__dwa_ld(sa, ma, f + 16), y1 = qrt__dwa_ld(sb, mb, f + 16);         \
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, y0), w));          \
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, y0), w));          \
        a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_unpacklo_epi16(x1, y1), w));          \
        a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_unpackhi_epi16(x1, y1), w));          \
    } while (0)
        for (int64_t f = 0; f < count; f += 32) {
            __m256i a0 = vb, a1 = vb, a2 = vb, a3 = vb;
            QRT__DWA_PAIR(s0, m0, s1, m1, w01);
            QRT__DWA_PAIR(s2, m2, s3, m3, w23);
            QRT__DWA_PAIR(s4, m4, s5, m5, w45);
            QRT__DWA_PAIR(s6, m6, s7, m7, w67);
            QRT__DWA_PAIR(s8, m8, s8, (const int16_t *)0, w8); /* w8's high half is 0 */
            const __m256i v0 = qrt__dwa_rq0(a0, a1, vs, vlo, vhi, vz);
            const __m256i v1 = qrt__dwa_rq0(a2, a3, vs, vlo, vhi, vz);
            _mm256_storeu_si256((__m256i *)(stage + f),
                                _mm256_permute4x64_epi64(_mm256_packus_epi16(v0, v1), 0xD8));
        }
#undef QRT__DWA_PAIR
        (void)z;
        f0 = count;
    }
    for (int64_t f = f0; f < count; f += 32) {
        __m256i a0 = vb, a1 = vb, a2 = vb, a3 = vb;
        for (int64_t i = 0; i < pairs; ++i) {
            const int16_t *s0 = src[2 * i], *s1 = src[2 * i + 1];
            const int16_t *m0 = mk[2 * i], *m1 = mk[2 * i + 1];
            const __m256i w2 = _mm256_set1_epi32(wp[i]);
            const __m256i x0 = qrt__dwa_ld(s0, m0, f), y0 = qrt__dwa_ld(s1, m1, f);
            const __m256i x1 = qrt__dwa_ld(s0, m0, f + 16), y1 = qrt__dwa_ld(s1, m1, f + 16);
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, y0), w2));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, y0), w2));
            a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_unpacklo_epi16(x1, y1), w2));
            a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_unpackhi_epi16(x1, y1), w2));
        }
        if (taps & 1) {
            const int16_t *s0 = src[taps - 1], *m0 = mk[taps - 1];
            const __m256i w2 = _mm256_set1_epi32(wp[pairs]), z = _mm256_setzero_si256();
            const __m256i x0 = qrt__dwa_ld(s0, m0, f), x1 = qrt__dwa_ld(s0, m0, f + 16);
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, z), w2));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, z), w2));
            a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_unpacklo_epi16(x1, z), w2));
            a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_unpackhi_epi16(x1, z), w2));
        }
        const __m256i v0 = qrt__dwa_rq0(a0, a1, vs, vlo, vhi, vz);
        const __m256i v1 = qrt__dwa_rq0(a2, a3, vs, vlo, vhi, vz);
        const __m256i b = _mm256_permute4x64_epi64(_mm256_packus_epi16(v0, v1), 0xD8);
        _mm256_storeu_si256((__m256i *)(stage + f), b);
    }
}

/* stride-2 split of one row: even bytes to d0, odd bytes to d1; full vectors where sroom /
 * room allow, else the tail (< 32 bytes) goes through a small buffer, so nothing past
 * src[len-1] is read nor past the phase rows written */
static inline __attribute__((always_inline)) QRT_AVX2 void qrt__dwa_widen2(const uint8_t *s, int16_t *d0, int16_t *d1, int64_t len,
                                     int32_t xz, int64_t sroom, int64_t room) {
    const __m256i vz = _mm256_set1_epi16((int16_t)xz), lowb = _mm256_set1_epi16(0xFF);
    int64_t j = 0;
    for (; 2 * j < len && 2 * j + 32 <= sroom && j + 16 <= room; j += 16) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(s + 2 * j));
        _mm256_storeu_si256((__m256i *)(d0 + j), _mm256_sub_epi16(_mm256_and_si256(v, lowb), vz));
        _mm256_storeu_si256((__m256i *)(d1 + j), _mm256_sub_epi16(_mm256_srli_epi16(v, 8), vz));
    }
    for (; 2 * j < len; j += 16) {
        const int64_t nb = len - 2 * j < 32 ? len - 2 * j : 32;
        uint8_t tb[32];
        int16_t t0[16], t1[16];
        memset(tb, 0, sizeof tb);
        memcpy(tb, s + 2 * j, (size_t)nb);
        const __m256i v = _mm256_loadu_si256((const __m256i *)tb);
        _mm256_storeu_si256((__m256i *)t0, _mm256_sub_epi16(_mm256_and_si256(v, lowb), vz));
        _mm256_storeu_si256((__m256i *)t1, _mm256_sub_epi16(_mm256_srli_epi16(v, 8), vz));
        memcpy(d0 + j, t0, (size_t)((nb + 1) / 2) * 2u);
        memcpy(d1 + j, t1, (size_t)(nb / 2) * 2u);
    }
}

QRT_AVX2 void qrt_dwconv2d_u8__avx2(const qrt_dwconv2d_params *p, const uint8_t *x,
                                    const int8_t *w, const qrt_conv1d_quant *q, uint8_t *y,
                                    void *scratch, int64_t u0, int64_t u1) {
    if (q->wpack_cl && qrt__dwcl_geom_ok(p) && (uint64_t)p->ho * p->wo <= QRT__DWCL_MAXOUT_AVX2)
        qrt__dwcl_run_avx2(p, x, q, y, scratch, u0, u1); /* small planes: dwconv2d_avx2_cl.c */
    else if (qrt__dwf_ok(p))
        qrt__dwf_run(p, x, w, q, y, scratch, u0, u1, qrt__dwa_kernel_m, qrt__dwa_widen,
                     qrt__dwa_widen2);
    else
        qrt__dw_run(p, x, w, q, y, scratch, u0, u1, qrt__dwa_kernel, qrt__dwa_widen);
}

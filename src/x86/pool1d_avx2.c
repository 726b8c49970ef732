/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool1d_avx2.c
 * @brief AVX2 variants of the 1-d pooling kernels (ref/pool1d_ref.h), bit-exact with them.
 *        Chosen at run time by src/pool1d.c (cpu.h features); this translation unit is
 *        compiled with -mavx2 -mfma (and keeps target("avx2") on its functions).
 *
 * Each row's outputs are split by qrt_pool1d_interior(): border outputs (a window touching
 * the padding or clamped at the end) run the reference's own one-output functions, interior
 * outputs run here.  When qrt_pool1d_flat() holds, all rows are one long row (so short rows,
 * like the demo's [64][32][64] -> [..][32], still fill vectors).
 *
 * max_pool1d (interior windows hold only real positions, so the max over them equals the
 *   reference's max started at qmin whenever qmin <= the type's minimum; otherwise the
 *   reference runs):
 *   - stride 1: 32 outputs per vector, one unaligned load per tap (lanes over time);
 *   - stride 2, kernel 2, dilation 1: 64 input bytes -> max of each even/odd byte pair
 *     (16-bit shift right by 8, byte max), even bytes packed (and 0xff + packus, then a
 *     64-bit lane permute);
 *   - stride 2, other kernels: per tap, the even bytes of 64 loaded bytes; the 64th byte is
 *     not needed, so a block runs only when it too lies inside the row;
 *   - 16-output SSE blocks, then scalar, for what is left.
 * avg_pool1d / adaptive_avg_pool1d: integer window sums are exact in any order (|sum| <=
 *   255 * 2^23 < 2^31), so they are vectorised (psadbw for wide windows; 16-bit lanes over
 *   time for kernel <= 16 at stride 1, and at stride 2 on the even bytes of each tap).
 *   The float stage is the reference's expression,
 *   either scalar (qrt_avg_pool1d_round_) or in 8 float lanes with the same IEEE operations in
 *   the same order (cvtdq2ps, mulps, addps, roundps in the current rounding mode = rintf,
 *   maxps/minps = the reference's clamps for non-NaN values); the lanes run only when the
 *   scale is finite (no NaN can arise) and [qmin, qmax] lies in the code type's range (so the
 *   saturating packs equal the reference's casts).
 */

#include <immintrin.h>
#include <math.h>
#include "qrt/x86/pool1d_avx2.h"

#define QRT__AVX2 __attribute__((target("avx2")))

/* ---- max pooling ------------------------------------------------------------------------ */

/** 32 (16) even bytes of 64 (32) bytes at x; 256-bit result in 64-bit-lane order 0,2,1,3. */
QRT__AVX2 static inline __m256i qrt__even64__avx2(const void *x) {
    const __m256i lo = _mm256_set1_epi16(0xff);
    const __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)x), lo);
    const __m256i b =
        _mm256_and_si256(_mm256_loadu_si256((const __m256i *)((const char *)x + 32)), lo);
    return _mm256_packus_epi16(a, b);
}
QRT__AVX2 static inline __m128i qrt__even32__avx2(const void *x) {
    const __m128i lo = _mm_set1_epi16(0xff);
    const __m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)x), lo);
    const __m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)((const char *)x + 16)), lo);
    return _mm_packus_epi16(a, b);
}

#define QRT__MAXPOOL_AVX2(T, sfx, SGN, MAX256, MAX128)                                             \
    /** Interior outputs [a, b) of one row x of length L into y (y[t] for t in [a, b)). */         \
    QRT__AVX2 static void qrt__max_pool1d_rows_##sfx##__avx2(const T *x, int64_t L, int64_t a,     \
                                                             int64_t b, int64_t k, int64_t s,      \
                                                             int64_t pad, int64_t d, T *y) {       \
        int64_t t = a;                                                                             \
        if (s == 1) {                                                                              \
            for (; t + 32 <= b; t += 32) {                                                         \
                const T *xp = x + t - pad;                                                         \
                __m256i m = _mm256_loadu_si256((const __m256i *)xp);                               \
                for (int64_t j = 1; j < k; ++j)                                                    \
                    m = MAX256(m, _mm256_loadu_si256((const __m256i *)(xp + j * d)));              \
                _mm256_storeu_si256((__m256i *)(y + t), m);                                        \
            }                                                                                      \
            for (; t + 16 <= b; t += 16) {                                                         \
                const T *xp = x + t - pad;                                                         \
                __m128i m = _mm_loadu_si128((const __m128i *)xp);                                  \
                for (int64_t j = 1; j < k; ++j)                                                    \
                    m = MAX128(m, _mm_loadu_si128((const __m128i *)(xp + j * d)));                 \
                _mm_storeu_si128((__m128i *)(y + t), m);                                           \
            }                                                                                      \
        } else if (s == 2 && k == 2 && d == 1) {                                                   \
            const __m256i lo = _mm256_set1_epi16(0xff);                                            \
            for (; t + 32 <= b; t += 32) {                                                         \
                const T *xp = x + 2 * t - pad;                                                     \
                __m256i v0 = _mm256_loadu_si256((const __m256i *)xp);                              \
                __m256i v1 = _mm256_loadu_si256((const __m256i *)(xp + 32));                       \
                v0 = _mm256_and_si256(MAX256(v0, _mm256_srli_epi16(v0, 8)), lo);                   \
                v1 = _mm256_and_si256(MAX256(v1, _mm256_srli_epi16(v1, 8)), lo);                   \
                _mm256_storeu_si256((__m256i *)(y + t),                                            \
                                    _mm256_permute4x64_epi64(_mm256_packus_epi16(v0, v1), 0xD8));  \
            }                                                                                      \
            const __m128i lo16 = _mm_set1_epi16(0xff);                                             \
            for (; t + 16 <= b; t += 16) {                                                         \
                const T *xp = x + 2 * t - pad;                                                     \
                __m128i v0 = _mm_loadu_si128((const __m128i *)xp);                                 \
                __m128i v1 = _mm_loadu_si128((const __m128i *)(xp + 16));                          \
                v0 = _mm_and_si128(MAX128(v0, _mm_srli_epi16(v0, 8)), lo16);                       \
                v1 = _mm_and_si128(MAX128(v1, _mm_srli_epi16(v1, 8)), lo16);                       \
                _mm_storeu_si128((__m128i *)(y + t), _mm_packus_epi16(v0, v1));                    \
            }                                                                                      \
        } else if (s == 2) {                                                                       \
            /* the last tap's block reads 2*t - pad + (k-1)*d + [0, 64): keep it in the row */     \
            const int64_t reach = (k - 1) * d - pad;                                               \
            for (; t + 32 <= b && 2 * t + reach + 64 <= L; t += 32) {                              \
                const T *xp = x + 2 * t - pad;                                                     \
                __m256i m = qrt__even64__avx2(xp);                                                 \
                for (int64_t j = 1; j < k; ++j) m = MAX256(m, qrt__even64__avx2(xp + j * d));      \
                _mm256_storeu_si256((__m256i *)(y + t), _mm256_permute4x64_epi64(m, 0xD8));        \
            }                                                                                      \
            for (; t + 16 <= b && 2 * t + reach + 32 <= L; t += 16) {                              \
                const T *xp = x + 2 * t - pad;                                                     \
                __m128i m = qrt__even32__avx2(xp);                                                 \
                for (int64_t j = 1; j < k; ++j) m = MAX128(m, qrt__even32__avx2(xp + j * d));      \
                _mm_storeu_si128((__m128i *)(y + t), m);                                           \
            }                                                                                      \
        }                                                                                          \
        for (; t < b; ++t) {                                                                       \
            const T *xp = x + t * s - pad;                                                         \
            T m = xp[0];                                                                           \
            for (int64_t j = 1; j < k; ++j) m = xp[j * d] > m ? xp[j * d] : m;                     \
            y[t] = m;                                                                              \
        }                                                                                          \
    }                                                                                              \
    /** @brief Same contract as qrt_max_pool1d_##sfx##_ref(); bit-exact with it. */                \
    QRT__AVX2 void qrt_max_pool1d_##sfx##__avx2(const qrt_pool1d_params *p, const T *in, T *out) { \
        const int64_t k = p->kernel, s = p->stride;                                                \
        const int64_t pad = p->pad, d = p->dilation;                                               \
        if (p->qmin > (SGN ? -128 : 0)) {                                                          \
            qrt_max_pool1d_##sfx##_ref(p, in, out);                                                \
            return;                                                                                \
        }                                                                                          \
        /* flat rows have pad == 0 */                                                              \
        QRT_POOL1D_DRIVE(p, T, in, out, d, qrt_max_pool1d_out_##sfx,                               \
                         qrt__max_pool1d_rows_##sfx##__avx2(qx, qn, qa, qb, k, s, pad, d, qy));    \
    }

QRT__MAXPOOL_AVX2(uint8_t, u8, 0, _mm256_max_epu8, _mm_max_epu8)
QRT__MAXPOOL_AVX2(int8_t, s8, 1, _mm256_max_epi8, _mm_max_epi8)

/* ---- average pooling -------------------------------------------------------------------- */

/** Horizontal sums of 4 64-bit lanes; the total fits 32 bits (window sums < 2^31). */
QRT__AVX2 static inline int32_t qrt__hsum_epi64__avx2(__m256i v) {
    __m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi64(s, _mm_unpackhi_epi64(s, s));
    return _mm_cvtsi128_si32(s);
}

/** Sum of n codes (exact int32); sgn: qint8 codes, biased by 0x80 for psadbw (unsigned). */
QRT__AVX2 static inline int32_t qrt__sum_codes__avx2(const uint8_t *x, int64_t n, int sgn) {
    if (n < 16) {
        int32_t tot = 0;
        if (sgn)
            for (int64_t i = 0; i < n; ++i) tot += (int8_t)x[i];
        else
            for (int64_t i = 0; i < n; ++i) tot += x[i];
        return tot;
    }
    const __m256i z = _mm256_setzero_si256();
    const __m256i flip = _mm256_set1_epi8(sgn ? (char)0x80 : 0);
    __m256i acc = z;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        acc = _mm256_add_epi64(
            acc, _mm256_sad_epu8(
                     _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(x + i)), flip), z));
    int32_t tot = qrt__hsum_epi64__avx2(acc);
    if (i + 16 <= n) {
        const __m128i v = _mm_sad_epu8(
            _mm_xor_si128(_mm_loadu_si128((const __m128i *)(x + i)), _mm256_castsi256_si128(flip)),
            _mm_setzero_si128());
        tot += _mm_cvtsi128_si32(v) + _mm_cvtsi128_si32(_mm_srli_si128(v, 8));
        i += 16;
    }
    tot -= sgn ? 128 * (int32_t)i : 0;
    if (sgn)
        for (; i < n; ++i) tot += (int8_t)x[i];
    else
        for (; i < n; ++i) tot += x[i];
    return tot;
}

/**
 * Round 8 window sums into 8 codes with the reference's float expression (see the file
 * comment).  acc: int32 lanes; mul: scale (QNNP) or f32(1/div); mode: QRT_AVG_POOL_*.
 */
QRT__AVX2 static inline __m128i qrt__avg_round8__avx2(__m256i acc, __m256 mul, __m256 zp, int mode,
                                                      __m256 lo, __m256 hi, int sgn) {
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), mul);
    if (mode == QRT_AVG_POOL_GENERIC)
        v = _mm256_round_ps(_mm256_add_ps(v, zp), _MM_FROUND_CUR_DIRECTION);
    else
        v = _mm256_add_ps(_mm256_round_ps(v, _MM_FROUND_CUR_DIRECTION), zp);
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    const __m256i q = _mm256_cvttps_epi32(v);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    return sgn ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
}

/**
 * Interior outputs [a, b) of one row x (length L) of average pooling (dilation 1): every
 * window holds `k` real positions, so acc = sum - k*zp and div = k in every mode.
 * `vec`: the 8-lane float stage may run (finite multiplier, range in the type).
 */
QRT__AVX2 static void qrt__avg_pool1d_rows__avx2(const qrt_pool1d_params *p, const uint8_t *x,
                                                 int64_t L, int64_t a, int64_t b, int64_t s,
                                                 int sgn, int vec, uint8_t *y) {
    const int64_t k = p->kernel, pad = p->pad;
    const int32_t kz = (int32_t)k * p->zero;
    const float mul = p->mode == QRT_AVG_POOL_QNNP ? p->scale : (float)(1.0 / (double)k);
    const __m256 vmul = _mm256_set1_ps(mul), vzp = _mm256_set1_ps((float)p->zero);
    const __m256 vlo = _mm256_set1_ps((float)p->qmin), vhi = _mm256_set1_ps((float)p->qmax);
    const __m256i vkz = _mm256_set1_epi32(kz);
    int64_t t = a;
    if (vec && s == 1 && k <= 16) {
        /* lanes over time: 16-bit sums (|sum| <= 255 * 16 fits), 16 outputs per block */
        for (; t + 16 <= b; t += 16) {
            const uint8_t *xp = x + t - pad;
            __m256i acc = _mm256_setzero_si256();
            for (int64_t j = 0; j < k; ++j) {
                const __m128i v = _mm_loadu_si128((const __m128i *)(xp + j));
                acc =
                    _mm256_add_epi16(acc, sgn ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v));
            }
            const __m256i a0 =
                _mm256_sub_epi32(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(acc)), vkz);
            const __m256i a1 =
                _mm256_sub_epi32(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(acc, 1)), vkz);
            _mm_storel_epi64((__m128i *)(y + t),
                             qrt__avg_round8__avx2(a0, vmul, vzp, p->mode, vlo, vhi, sgn));
            _mm_storel_epi64((__m128i *)(y + t + 8),
                             qrt__avg_round8__avx2(a1, vmul, vzp, p->mode, vlo, vhi, sgn));
        }
    }
    if (vec && s == 2 && k <= 16) {
        /* the even bytes of 32 loaded at 2*t - pad + j: x[2*(t+i) - pad + j], i < 16; the
         * 32nd byte is not needed, so a block runs only when it lies inside the row */
        const __m128i lo16 = _mm_set1_epi16(0xff);
        for (; t + 16 <= b && 2 * t - pad + (k - 1) + 32 <= L; t += 16) {
            const uint8_t *xp = x + 2 * t - pad;
            __m256i acc = _mm256_setzero_si256();
            for (int64_t j = 0; j < k; ++j) {
                const __m128i e = _mm_packus_epi16(
                    _mm_and_si128(_mm_loadu_si128((const __m128i *)(xp + j)), lo16),
                    _mm_and_si128(_mm_loadu_si128((const __m128i *)(xp + j + 16)), lo16));
                acc =
                    _mm256_add_epi16(acc, sgn ? _mm256_cvtepi8_epi16(e) : _mm256_cvtepu8_epi16(e));
            }
            const __m256i a0 =
                _mm256_sub_epi32(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(acc)), vkz);
            const __m256i a1 =
                _mm256_sub_epi32(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(acc, 1)), vkz);
            _mm_storel_epi64((__m128i *)(y + t),
                             qrt__avg_round8__avx2(a0, vmul, vzp, p->mode, vlo, vhi, sgn));
            _mm_storel_epi64((__m128i *)(y + t + 8),
                             qrt__avg_round8__avx2(a1, vmul, vzp, p->mode, vlo, vhi, sgn));
        }
    }
    if (vec) {
        for (; t + 8 <= b; t += 8) {
            int32_t acc[8];
            for (int i = 0; i < 8; ++i)
                acc[i] = qrt__sum_codes__avx2(x + (t + i) * s - pad, k, sgn) - kz;
            _mm_storel_epi64((__m128i *)(y + t),
                             qrt__avg_round8__avx2(_mm256_loadu_si256((const __m256i *)acc), vmul,
                                                   vzp, p->mode, vlo, vhi, sgn));
        }
    }
    for (; t < b; ++t) {
        const int32_t acc = qrt__sum_codes__avx2(x + t * s - pad, k, sgn) - kz;
        const int32_t v = (int32_t)qrt_avg_pool1d_round_(p, acc, k);
        y[t] = sgn ? (uint8_t)(int8_t)v : (uint8_t)v;
    }
}

#define QRT__AVGPOOL_AVX2(T, sfx, SGN)                                                             \
    /** @brief Same contract as qrt_avg_pool1d_##sfx##_ref(); bit-exact with it. */                \
    QRT__AVX2 void qrt_avg_pool1d_##sfx##__avx2(const qrt_pool1d_params *p, const T *in, T *out) { \
        const int64_t s = p->stride;                                                               \
        const int vec =                                                                            \
            qrt_pool1d_range_ok(p, SGN) && (p->mode != QRT_AVG_POOL_QNNP || isfinite(p->scale));   \
        QRT_POOL1D_DRIVE(p, T, in, out, 1, qrt_avg_pool1d_out_##sfx,                               \
                         qrt__avg_pool1d_rows__avx2(p, (const uint8_t *)qx, qn, qa, qb, s, SGN,    \
                                                    vec, (uint8_t *)qy));                          \
    }                                                                                              \
    /** @brief Same contract as qrt_adaptive_avg_pool1d_##sfx##_ref(); bit-exact with it. */       \
    QRT__AVX2 void qrt_adaptive_avg_pool1d_##sfx##__avx2(const qrt_pool1d_params *p, const T *in,  \
                                                         T *out) {                                 \
        const int64_t L = p->len_in, O = p->len_out;                                               \
        for (uint32_t r = 0; r < p->rows; ++r) {                                                   \
            const T *x = in + (size_t)r * p->len_in;                                               \
            T *y = out + (size_t)r * p->len_out;                                                   \
            for (int64_t t = 0; t < O; ++t) {                                                      \
                const int64_t lo = (t * L) / O, hi = ((t + 1) * L + O - 1) / O;                    \
                const int32_t acc = qrt__sum_codes__avx2((const uint8_t *)(x + lo), hi - lo, SGN); \
                const float rcp = 1.0f / (float)(hi - lo);                                         \
                float v = rintf((float)acc * rcp);                                                 \
                v = v < (float)p->qmin ? (float)p->qmin : v;                                       \
                v = v > (float)p->qmax ? (float)p->qmax : v;                                       \
                y[t] = (T)(int32_t)v;                                                              \
            }                                                                                      \
        }                                                                                          \
    }

QRT__AVGPOOL_AVX2(uint8_t, u8, 0)
QRT__AVGPOOL_AVX2(int8_t, s8, 1)

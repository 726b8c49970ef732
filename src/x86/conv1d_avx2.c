/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_avx2.c
 * @brief qrt_conv1d_u8__avx2(): conv1d / linear for x86-64 CPUs with AVX2 but no AVX-512 VNNI
 *        (Haswell .. Zen 3).  Bit-exact with qrt_conv1d_u8_ref().  This translation unit is
 *        compiled with -mavx2 -mfma (its functions keep target("avx2,fma")).
 *
 * Exact int32 accumulation without vpmaddubsw (whose int16 pair sums saturate): the input is
 * im2col'ed per chunk of output positions into int16 pairs (x - x_zp, in [-255, 255]; padding
 * 0) and the weight into int16 pairs (w - w_zp, in [-255, 255]), and vpmaddwd forms
 * x[r]*w[r] + x[r+1]*w[r+1] exactly in int32 (|.| <= 130050).  The reduction runs over
 * r = ic*K + k; lanes run over 8 consecutive output positions, a tile is 4 output channels x
 * 16 positions (8 accumulators).  Requantization is cvtdq2ps, mulps, cvtps2dq, clamp -- the
 * operations of requant.h -- so every output equals the reference's.
 */

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "qrt/x86/conv1d_avx2.h"
#include "qrt/conv1d_pack.h"
#include "qrt/requant.h"

#define QRT_AVX2 __attribute__((target("avx2,fma")))
#ifndef QRT__C1A_XBUDGET
#define QRT__C1A_XBUDGET (48 * 1024) /* bytes of im2col'ed input per position chunk */
#endif
#define QRT__C1A_NO ((int64_t)QRT_CONV1D_A2_NO) /* output channels per tile (a panel) */

/* positions per chunk: a multiple of 16 keeping the im2col chunk near the budget */
static inline int64_t qrt__c1a_tc(const qrt_conv1d_params *p) {
    const int64_t r2 = ((int64_t)(p->c_in / p->groups) * p->kernel + 1) / 2;
    int64_t tc = (QRT__C1A_XBUDGET / (r2 * 4)) / 16 * 16;
    tc = tc < 16 ? 16 : tc > 512 ? 512 : tc;
    const int64_t lo16 = ((int64_t)p->len_out + 15) / 16 * 16;
    return tc > lo16 ? lo16 : tc;
}

/** Whether the depthwise path (below) serves p: one input channel per output channel, stride 1,
 *  NCL input and output, quint8 output, at most 128 taps. */
static inline int qrt__c1a_dw_ok(const qrt_conv1d_params *p) {
    return p->c_in == p->groups && p->out_kind == QRT_CONV1D_OUT_U8 && p->stride == 1 &&
           p->x_stride_t == 1 && p->y_stride_t == 1 && p->kernel <= 128;
}

/** Whether the GEMV path (below) serves p: a dense kernel-1 layer over at most 4 positions (a
 *  linear of 1-4 rows, a 1x1 conv on a 1x1 image), any strides, either output kind. */
static inline int qrt__c1a_gemv_ok(const qrt_conv1d_params *p) {
    return p->groups == 1 && p->kernel == 1 && p->stride == 1 && p->pad_left == 0 &&
           p->len_out <= 4 && p->len_out <= p->len_in && p->c_in > 0;
}

/* The tile path's scratch: [xb | wb | rows], each 64-byte aligned after a 64-byte alignment
 * slack; wb (the weight panels) only when the caller has none prepacked. */
typedef struct {
    size_t wb, rows, total;
} qrt__c1a_layout;

static inline qrt__c1a_layout qrt__c1a_layout_of(const qrt_conv1d_params *p, int prepacked) {
    const size_t r2 = ((size_t)(p->c_in / p->groups) * p->kernel + 1) / 2;
    const size_t xb = r2 * (size_t)qrt__c1a_tc(p) * 4u;
    const size_t wb = prepacked ? 0u
                                : qrt_conv1d_a2_weight_size(p->c_out, p->c_in / p->groups,
                                                            p->kernel, p->groups) * 4u;
    const size_t rb = (size_t)qrt__c1a_tc(p) * 4u; /* two int16 rows */
    qrt__c1a_layout l;
    l.wb = (xb + 63u) & ~(size_t)63u;
    l.rows = l.wb + ((wb + 63u) & ~(size_t)63u);
    l.total = 64u + l.rows + ((rb + 63u) & ~(size_t)63u);
    return l;
}

int qrt_conv1d_u8__avx2_uses_panels(const qrt_conv1d_params *p) {
    return !qrt__c1a_dw_ok(p) && !qrt__c1a_gemv_ok(p);
}

size_t qrt_conv1d_u8__avx2_scratch_size(const qrt_conv1d_params *p, const qrt_conv1d_quant *q) {
    if (qrt__c1a_dw_ok(p)) return 64u; /* the depthwise path reads the input in place */
    if (qrt__c1a_gemv_ok(p)) /* the input columns as int16 rows, [len_out][ceil16(c_in)] */
        return 64u + (size_t)p->len_out * (((size_t)p->c_in + 15u) / 16u * 16u) * 2u;
    return qrt__c1a_layout_of(p, q && q->wpack_a2).total;
}

/* requantize 8 accumulators of channel oc and store the first `cnt` at y (element stride ys) */
static inline QRT_AVX2 void qrt__c1a_store(const qrt_conv1d_params *p, const qrt_conv1d_quant *q,
                                           int64_t oc, __m256i acc, void *y, int64_t ys, int cnt,
                                           int add_bias) {
    if (p->out_kind == QRT_CONV1D_OUT_F32) {
        __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_set1_ps(q->scale[oc]));
        v = _mm256_add_ps(v, _mm256_set1_ps(q->bias_f[oc]));
        float *yf = (float *)y;
        if (ys == 1 && cnt == 8) {
            _mm256_storeu_ps(yf, v);
        } else {
            float tmp[8];
            _mm256_storeu_ps(tmp, v);
            for (int i = 0; i < cnt; ++i) yf[i * ys] = tmp[i];
        }
        return;
    }
    const int32_t zp = p->output_zero;
    /* + bias_q (wraps, as paddd), unless the accumulators started at it */
    __m256i a = add_bias ? _mm256_add_epi32(acc, _mm256_set1_epi32(q->bias_q[oc])) : acc;
    __m256i r =
        _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_set1_ps(q->scale[oc])));
    /* clamp(r + zp, lo, hi) == clamp(r, lo - zp, hi - zp) + zp without int32 overflow;
     * cvtps2dq's INT32_MIN (overflow / NaN) lands on lo as in requant.h */
    r = _mm256_max_epi32(r, _mm256_set1_epi32(p->output_min - zp));
    r = _mm256_min_epi32(r, _mm256_set1_epi32(p->output_max - zp));
    r = _mm256_add_epi32(r, _mm256_set1_epi32(zp));
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    const __m128i b8 = _mm_packus_epi16(w16, w16);
    uint8_t *yb = (uint8_t *)y;
    if (ys == 1 && cnt == 8) {
        _mm_storel_epi64((__m128i *)yb, b8);
    } else {
        uint8_t tmp[16];
        _mm_storeu_si128((__m128i *)tmp, b8);
        for (int i = 0; i < cnt; ++i) yb[i * ys] = tmp[i];
    }
}

/* d[j] = x[ic][(t0+j)*s + k*d - pad] - x_zp for j < tc (0 outside the input and for j >= tc,
 * and for a reduction row r >= R), r = ic*K + k */
static inline QRT_AVX2 void qrt__c1a_row(const qrt_conv1d_params *p, const uint8_t *xg, int64_t r,
                                         int64_t R, int64_t t0, int64_t tc, int64_t tcp,
                                         int16_t *d) {
    if (r >= R) {
        memset(d, 0, (size_t)tcp * 2u);
        return;
    }
    const int64_t kk = p->kernel, ic = r / kk, k = r % kk;
    const int64_t base = t0 * p->stride + k * p->dilation - p->pad_left;
    int64_t ja = base >= 0 ? 0 : (-base + p->stride - 1) / p->stride;
    int64_t jb = base >= p->len_in ? 0 : (p->len_in - base + p->stride - 1) / p->stride;
    if (jb > tc) jb = tc;
    if (ja > jb) ja = jb;
    for (int64_t j = 0; j < ja; ++j) d[j] = 0;
    const int16_t xz = (int16_t)p->input_zero;
    const int64_t xs = p->x_stride_t * (int64_t)p->stride;
    const uint8_t *s0 = xg + ic * p->x_stride_c + (base + ja * (int64_t)p->stride) * p->x_stride_t;
    if (xs == 1) {
        int16_t *dd = d + ja;
        for (int64_t j = 0; j < jb - ja; ++j) /* vectorized: contiguous widening */
            dd[j] = (int16_t)((int16_t)s0[j] - xz);
    } else {
        for (int64_t j = ja; j < jb; ++j) d[j] = (int16_t)((int16_t)s0[(j - ja) * xs] - xz);
    }
    for (int64_t j = jb; j < tcp; ++j) d[j] = 0;
}

/* ---- depthwise (one input channel per output channel), stride 1, NCL: no im2col -----------
 * Lanes over time, straight from the input row: for 16 output positions and a pair of taps
 * (k, k+1), two 16-byte loads of the row are widened to int16 (x - x_zp; padding reads x_zp,
 * so it adds 0) and interleaved, and one vpmaddwd per 8 positions multiplies them by the
 * broadcast pair (w[k] - w_zp, w[k+1] - w_zp), exactly as the im2col path.  The unpacks leave
 * positions {0-3, 8-11} in one accumulator and {4-7, 12-15} in the other, which is the order
 * packssdw restores.  Requantization is QNNPACK's SSE2 sequence (cvtdq2ps, mulps, cvtps2dq,
 * packssdw, paddsw with the output zero point, packuswb, byte clamp), equal to requant.h's. */

/* 16 bytes of row xr from s, x_zp outside [0, len) (EDGE steps only) */
static inline __attribute__((always_inline)) QRT_AVX2 __m256i
qrt__c1a_dw_load(const uint8_t *xr, int64_t s, int64_t len, int EDGE, uint8_t xz) {
    if (!EDGE || (s >= 0 && s + 16 <= len))
        return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(xr + s)));
    uint8_t b[16];
    for (int i = 0; i < 16; ++i) b[i] = (s + i >= 0 && s + i < len) ? xr[s + i] : xz;
    return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)b));
}

static inline __attribute__((always_inline)) QRT_AVX2 void
qrt__c1a_dw_step(const uint8_t *xr, int64_t len_in, int64_t s0, int64_t d, const int32_t *wp,
                 int64_t npairs, int EDGE, uint8_t xz, __m256i vxz, __m256i vb, __m256 vs,
                 __m256i voz, __m128i vlo, __m128i vhi, uint8_t *y, int64_t cnt) {
    __m256i a0 = vb, a1 = vb;
    for (int64_t j = 0; j < npairs; ++j) {
        const int64_t s = s0 + 2 * j * d;
        const __m256i xa = _mm256_sub_epi16(qrt__c1a_dw_load(xr, s, len_in, EDGE, xz), vxz);
        const __m256i xb = _mm256_sub_epi16(qrt__c1a_dw_load(xr, s + d, len_in, EDGE, xz), vxz);
        const __m256i wv = _mm256_set1_epi32(wp[j]);
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_unpacklo_epi16(xa, xb), wv));
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_unpackhi_epi16(xa, xb), wv));
    }
    const __m256i f0 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(a0), vs));
    const __m256i f1 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(a1), vs));
    const __m256i h = _mm256_adds_epi16(_mm256_packs_epi32(f0, f1), voz);
    const __m256i b = _mm256_permute4x64_epi64(_mm256_packus_epi16(h, h), 0x08);
    const __m128i v = _mm_min_epu8(_mm_max_epu8(_mm256_castsi256_si128(b), vlo), vhi);
    if (cnt >= 16) {
        _mm_storeu_si128((__m128i *)y, v);
    } else {
        uint8_t t[16];
        _mm_storeu_si128((__m128i *)t, v);
        memcpy(y, t, (size_t)cnt);
    }
}

static QRT_AVX2 qrt_status qrt__c1a_dw_run(const qrt_conv1d_params *p, const uint8_t *x,
                                           const int8_t *w, const qrt_conv1d_quant *q, uint8_t *y) {
    const int64_t K = p->kernel, d = p->dilation, pad = p->pad_left, mult = p->c_out / p->groups;
    /* interior steps read taps 0 .. 2*npairs-1 (an odd kernel loads one zero-weight tap) */
    const int64_t npairs = (K + 1) / 2, reach = (2 * npairs - 1) * d + 16;
    const uint8_t xz = (uint8_t)p->input_zero;
    const __m256i vxz = _mm256_set1_epi16((short)p->input_zero);
    const __m256i voz = _mm256_set1_epi16((short)p->output_zero);
    const __m128i vlo = _mm_set1_epi8((char)p->output_min),
                  vhi = _mm_set1_epi8((char)p->output_max);
    int32_t wp[64]; /* kernel <= 128 (qrt__c1a_dw_ok) */
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t oc = 0; oc < p->c_out; ++oc) {
            const int8_t *wo = w + oc * K;
            const int32_t wz = q->weight_zero[oc];
            const uint8_t *xr = x + n * p->x_stride_n + (oc / mult) * p->x_stride_c;
            uint8_t *yr = y + n * p->y_stride_n + oc * p->y_stride_c;
            const __m256i vb = _mm256_set1_epi32(q->bias_q[oc]);
            const __m256 vs = _mm256_set1_ps(q->scale[oc]);
            for (int64_t j = 0; j < npairs; ++j) { /* int16 pairs (w[k] - w_zp, w[k+1] - w_zp) */
                const int16_t lo = (int16_t)(wo[2 * j] - wz);
                const int16_t hi = 2 * j + 1 < K ? (int16_t)(wo[2 * j + 1] - wz) : 0;
                wp[j] = (int32_t)((uint32_t)(uint16_t)lo | ((uint32_t)(uint16_t)hi << 16));
            }
            for (int64_t t0 = 0; t0 < p->len_out; t0 += 16) {
                const int64_t s0 = t0 - pad, cnt = p->len_out - t0;
                if (s0 >= 0 && s0 + reach <= p->len_in && cnt >= 16) {
                    /* interior: short kernels get a fixed pair count (unrolled) */
                    if (npairs == 1)
                        qrt__c1a_dw_step(xr, p->len_in, s0, d, wp, 1, 0, xz, vxz, vb, vs, voz, vlo,
                                         vhi, yr + t0, cnt);
                    else if (npairs == 2)
                        qrt__c1a_dw_step(xr, p->len_in, s0, d, wp, 2, 0, xz, vxz, vb, vs, voz, vlo,
                                         vhi, yr + t0, cnt);
                    else
                        qrt__c1a_dw_step(xr, p->len_in, s0, d, wp, npairs, 0, xz, vxz, vb, vs, voz,
                                         vlo, vhi, yr + t0, cnt);
                } else {
                    qrt__c1a_dw_step(xr, p->len_in, s0, d, wp, npairs, 1, xz, vxz, vb, vs, voz, vlo,
                                     vhi, yr + t0, cnt);
                }
            }
        }
    return QRT_OK;
}

/* ---- GEMV (qrt__c1a_gemv_ok): lanes over the reduction -------------------------------------
 * Each output position's input column is gathered once into an int16 row (x - x_zp, zero past
 * c_in); per output channel, 16 raw weight bytes are widened (vpmovsxbw, minus w_zp) and one
 * vpmaddwd with 16 input entries adds 8 exact pair sums.  Four channels run together and are
 * reduced by vphaddd (wrapping, so the order of the int32 additions does not matter); each
 * output is then requant.h's scalar sequence, so the bytes / floats equal the reference's.  The
 * tile path would use 1 of its 16 position lanes here (MobileNet's 1280 -> 1000 classifier). */
static QRT_AVX2 void qrt__c1a_gemv(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                                   const qrt_conv1d_quant *q, void *out, void *scratch) {
    const int64_t ci = p->c_in, cp = (ci + 15) / 16 * 16, L = p->len_out, full = ci / 16 * 16;
    int16_t *xs = (int16_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    const int16_t xz = (int16_t)p->input_zero;
    const size_t es = p->out_kind == QRT_CONV1D_OUT_F32 ? 4u : 1u;
    for (int64_t n = 0; n < p->n; ++n) {
        const uint8_t *xn = x + n * p->x_stride_n;
        for (int64_t t = 0; t < L; ++t) {
            int16_t *d = xs + t * cp;
            const uint8_t *src = xn + t * p->x_stride_t;
            if (p->x_stride_c == 1)
                for (int64_t i = 0; i < ci; ++i) d[i] = (int16_t)((int16_t)src[i] - xz);
            else
                for (int64_t i = 0; i < ci; ++i) d[i] = (int16_t)((int16_t)src[i * p->x_stride_c] - xz);
            for (int64_t i = ci; i < cp; ++i) d[i] = 0;
        }
        for (int64_t o0 = 0; o0 < p->c_out; o0 += 4) {
            const int64_t nb = p->c_out - o0 < 4 ? p->c_out - o0 : 4;
            const int8_t *wr[4];
            __m256i vz[4];
            for (int k = 0; k < 4; ++k) {
                const int64_t oc = o0 + (k < nb ? k : nb - 1);
                wr[k] = w + oc * ci;
                vz[k] = _mm256_set1_epi16((short)q->weight_zero[oc]);
            }
            for (int64_t t = 0; t < L; ++t) {
                const int16_t *xr = xs + t * cp;
                __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
                for (int64_t i = 0; i < full; i += 16) {
                    const __m256i xv = _mm256_load_si256((const __m256i *)(xr + i));
#define QRT__C1A_GW(k) _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wr[k] + i))), vz[k])
                    a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(xv, QRT__C1A_GW(0)));
                    a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(xv, QRT__C1A_GW(1)));
                    a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(xv, QRT__C1A_GW(2)));
                    a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(xv, QRT__C1A_GW(3)));
#undef QRT__C1A_GW
                }
                if (full < ci) { /* the last < 16 weights of each row, through a zeroed buffer */
                    const __m256i xv = _mm256_load_si256((const __m256i *)(xr + full));
                    __m256i *acc[4] = {&a0, &a1, &a2, &a3};
                    for (int k = 0; k < 4; ++k) {
                        int8_t b[16] = {0};
                        memcpy(b, wr[k] + full, (size_t)(ci - full));
                        const __m256i wv = _mm256_sub_epi16(
                            _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)b)), vz[k]);
                        *acc[k] = _mm256_add_epi32(*acc[k], _mm256_madd_epi16(xv, wv));
                    }
                }
                const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(a2, a3));
                const __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
                int32_t sums[4];
                _mm_storeu_si128((__m128i *)sums, s4);
                for (int64_t k = 0; k < nb; ++k) {
                    const int64_t oc = o0 + k;
                    uint8_t *y = (uint8_t *)out + (ptrdiff_t)(n * p->y_stride_n + oc * p->y_stride_c +
                                                              t * p->y_stride_t) * (ptrdiff_t)es;
                    if (p->out_kind == QRT_CONV1D_OUT_F32)
                        *(float *)y = qrt_dequant_acc_f32(sums[k], q->scale[oc], q->bias_f[oc]);
                    else
                        *y = qrt_requant_fp32_u8(qrt_add_s32_wrap(sums[k], q->bias_q[oc]),
                                                 q->scale[oc], p->output_zero, p->output_min,
                                                 p->output_max);
                }
            }
        }
    }
}

/**
 * @brief Same contract as qrt_conv1d_u8_ref() (reads the raw weight w).
 * @param[in] scratch qrt_conv1d_u8__avx2_scratch_size(p, q) bytes, any alignment
 */
QRT_AVX2 qrt_status qrt_conv1d_u8__avx2(const qrt_conv1d_params *p, const uint8_t *x,
                                        const int8_t *w, const qrt_conv1d_quant *q, void *out,
                                        void *scratch) {
    const qrt_status st = qrt_conv1d_check(p);
    if (st != QRT_OK) return st;
    if (qrt__c1a_dw_ok(p)) return qrt__c1a_dw_run(p, x, w, q, (uint8_t *)out);
    if (qrt__c1a_gemv_ok(p)) {
        qrt__c1a_gemv(p, x, w, q, out, scratch);
        return QRT_OK;
    }
    const int64_t cg = p->c_in / p->groups, og = p->c_out / p->groups, kk = p->kernel;
    const int64_t R = cg * kk, R2 = (R + 1) / 2, TC = qrt__c1a_tc(p);
    const size_t es = p->out_kind == QRT_CONV1D_OUT_F32 ? 4u : 1u;
    uint8_t *sp = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    const qrt__c1a_layout lay = qrt__c1a_layout_of(p, q->wpack_a2 != NULL);
    int16_t *xb = (int16_t *)sp;
    int32_t *wb = (int32_t *)(sp + lay.wb);
    int16_t *rows = (int16_t *)(sp + lay.rows);
    /* weights: per group, panels of 4 channels (qrt_conv1d_pack_a2): made once per layer
     * (q->wpack_a2) or here, in the scratch */
    const int64_t NO = QRT__C1A_NO, npan = (og + NO - 1) / NO;
    const int32_t *wpk = q->wpack_a2;
    if (!wpk) {
        qrt_conv1d_pack_a2(p->c_out, (uint32_t)cg, p->kernel, p->groups, w, q->weight_zero, wb);
        wpk = wb;
    }
    const int fused = p->out_kind == QRT_CONV1D_OUT_U8 && p->y_stride_t == 1;
    const __m256i voz = _mm256_set1_epi16((short)p->output_zero);
    const __m128i vlo = _mm_set1_epi8((char)p->output_min), vhi = _mm_set1_epi8((char)p->output_max);
    const __m256i vperm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const __m256i vlo2 = _mm256_set1_epi8((char)p->output_min),
                  vhi2 = _mm256_set1_epi8((char)p->output_max);
    const int clo = p->output_min > 0, chi = p->output_max < 255; /* packuswb gives 0..255 */
    const int binit = p->out_kind == QRT_CONV1D_OUT_U8;
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t g = 0; g < p->groups; ++g) {
            const uint8_t *xg = x + n * p->x_stride_n + g * cg * p->x_stride_c;
            for (int64_t t0 = 0; t0 < p->len_out; t0 += TC) {
                const int64_t tc = p->len_out - t0 < TC ? p->len_out - t0 : TC;
                const int64_t tcp = (tc + 15) / 16 * 16;
                /* im2col, blocked by 16 positions: xb[jb][r2][16][2] =
                 * x[ic][(t0+16jb+j)*s + k*d - pad] - x_zp (0 outside), so a tile streams its
                 * block front to back: two reduction rows are widened into contiguous int16
                 * rows, then interleaved */
                for (int64_t r2 = 0; r2 < R2; ++r2) {
                    qrt__c1a_row(p, xg, 2 * r2, R, t0, tc, tcp, rows);
                    qrt__c1a_row(p, xg, 2 * r2 + 1, R, t0, tc, tcp, rows + tcp);
                    int16_t *d = xb + r2 * 32;
                    for (int64_t j = 0; j < tcp; j += 16, d += R2 * 32) {
                        const __m256i a = _mm256_load_si256((const __m256i *)(rows + j));
                        const __m256i b = _mm256_load_si256((const __m256i *)(rows + tcp + j));
                        const __m256i lo = _mm256_unpacklo_epi16(a, b);
                        const __m256i hi = _mm256_unpackhi_epi16(a, b);
                        _mm256_store_si256((__m256i *)d, _mm256_permute2x128_si256(lo, hi, 0x20));
                        _mm256_store_si256((__m256i *)(d + 16),
                                           _mm256_permute2x128_si256(lo, hi, 0x31));
                    }
                }
                for (int64_t pi = 0; pi < npan; ++pi) {
                    const int64_t o0 = pi * NO, no = og - o0 < NO ? og - o0 : NO;
                    const int64_t ocb = g * og + o0;
                    const int32_t *wpan = wpk + (g * npan + pi) * R2 * NO;
                    for (int64_t j = 0; j < tcp; j += 16) {
                        /* quint8 output: the accumulators start at the int32 bias (the order
                         * of wrapping int32 additions does not matter), so the epilogue adds
                         * none; padded channels of a group's last panel repeat the last one's */
                        __m256i a00, a10, a20, a30;
                        if (binit) {
                            a00 = _mm256_set1_epi32(q->bias_q[ocb]);
                            a10 = _mm256_set1_epi32(q->bias_q[ocb + (no > 1 ? 1 : 0)]);
                            a20 = _mm256_set1_epi32(q->bias_q[ocb + (no > 2 ? 2 : no - 1)]);
                            a30 = _mm256_set1_epi32(q->bias_q[ocb + (no > 3 ? 3 : no - 1)]);
                        } else {
                            a00 = a10 = a20 = a30 = _mm256_setzero_si256();
                        }
                        __m256i a01 = a00, a11 = a10, a21 = a20, a31 = a30;
                        const int16_t *xp = xb + (j / 16) * R2 * 32;
                        const int32_t *wr = wpan;
                        if (tc - j <= 8) { /* a chunk's last block with <= 8 positions (a 7x7
                                            * image's 49th): one vector per channel */
                            for (int64_t r2 = 0; r2 < R2; ++r2, xp += 32, wr += NO) {
                                const __m256i x0 = _mm256_load_si256((const __m256i *)(xp));
                                a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(x0, _mm256_set1_epi32(wr[0])));
                                a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(x0, _mm256_set1_epi32(wr[1])));
                                a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(x0, _mm256_set1_epi32(wr[2])));
                                a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(x0, _mm256_set1_epi32(wr[3])));
                            }
                        } else
                        for (int64_t r2 = 0; r2 < R2; ++r2, xp += 32, wr += NO) {
                            const __m256i x0 = _mm256_load_si256((const __m256i *)(xp));
                            const __m256i x1 = _mm256_load_si256((const __m256i *)(xp + 16));
                            __m256i wv = _mm256_set1_epi32(wr[0]);
                            a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(x0, wv));
                            a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(x1, wv));
                            wv = _mm256_set1_epi32(wr[1]);
                            a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(x0, wv));
                            a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(x1, wv));
                            wv = _mm256_set1_epi32(wr[2]);
                            a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(x0, wv));
                            a21 = _mm256_add_epi32(a21, _mm256_madd_epi16(x1, wv));
                            wv = _mm256_set1_epi32(wr[3]);
                            a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(x0, wv));
                            a31 = _mm256_add_epi32(a31, _mm256_madd_epi16(x1, wv));
                        }
                        const __m256i acc[4][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}};
                        const int64_t t = t0 + j;
                        if (fused && t + 16 <= t0 + tc) {
                            /* 16 positions of a channel in one store: QNNPACK's SSE2 tail
                             * (packssdw, paddsw zp, packuswb, byte clamp), equal to requant.h's
                             * clamp(rne(y) + zp, lo, hi) for every int32 (docs/kernels.md 4b) */
#define QRT__C1A_H16(i)                                                                            \
    _mm256_adds_epi16(                                                                             \
        _mm256_packs_epi32(                                                                        \
            _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(acc[i][0]),                        \
                                             _mm256_set1_ps(q->scale[ocb + (i)]))),                \
            _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(acc[i][1]),                        \
                                             _mm256_set1_ps(q->scale[ocb + (i)])))),               \
        voz)
                            uint8_t *yrow = (uint8_t *)out + n * p->y_stride_n + ocb * p->y_stride_c + t;
                            int64_t i = 0;
                            for (; i + 1 < no; i += 2) { /* two channels per pack */
                                __m256i b8 = _mm256_permutevar8x32_epi32(
                                    _mm256_packus_epi16(QRT__C1A_H16(i), QRT__C1A_H16(i + 1)), vperm);
                                if (clo) b8 = _mm256_max_epu8(b8, vlo2);
                                if (chi) b8 = _mm256_min_epu8(b8, vhi2);
                                _mm_storeu_si128((__m128i *)(yrow + i * p->y_stride_c),
                                                 _mm256_castsi256_si128(b8));
                                _mm_storeu_si128((__m128i *)(yrow + (i + 1) * p->y_stride_c),
                                                 _mm256_extracti128_si256(b8, 1));
                            }
                            if (i < no) {
                                const __m256i h = QRT__C1A_H16(i);
                                const __m256i b8 =
                                    _mm256_permutevar8x32_epi32(_mm256_packus_epi16(h, h), vperm);
                                const __m128i v = _mm_min_epu8(
                                    _mm_max_epu8(_mm256_castsi256_si128(b8), vlo), vhi);
                                _mm_storeu_si128((__m128i *)(yrow + i * p->y_stride_c), v);
                            }
#undef QRT__C1A_H16
                            continue;
                        }
                        for (int64_t i = 0; i < no; ++i) {
                            const int64_t oc = ocb + i;
                            for (int h = 0; h < 2; ++h) {
                                const int64_t th = t + 8 * h;
                                if (th >= t0 + tc) break;
                                const int cnt = (int)(t0 + tc - th < 8 ? t0 + tc - th : 8);
                                uint8_t *y = (uint8_t *)out +
                                             (ptrdiff_t)(n * p->y_stride_n + oc * p->y_stride_c +
                                                         th * p->y_stride_t) *
                                                 (ptrdiff_t)es;
                                qrt__c1a_store(p, q, oc, acc[i][h], y, p->y_stride_t, cnt, !binit);
                            }
                        }
                    }
                }
            }
        }
    return QRT_OK;
}

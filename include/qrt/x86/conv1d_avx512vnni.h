/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_avx512vnni.h
 * @brief qrt_conv1d_u8__avx512vnni(): 512-bit VNNI variant of qrt_conv1d_u8_ref(), bit-exact
 *        with it.  Compiled with a target attribute and chosen at run time (conv1d.h).
 *
 * Design ("lanes over time"): each zmm accumulator holds 16 consecutive output positions of one
 * output channel, so NCL output rows are written with one masked byte store.  Per group, the
 * input is first packed into quads ([CQ][phase][U] uint32, 4 reduction bytes per output
 * position; stride phases de-interleaved so every tap is a unit-stride load), and vpdpbusd
 * multiplies them by a broadcast weight quad (conv1d_pack.h).  The raw int8 weight is used:
 *   acc = sum x*w - x_zero*sum(w) - w_zero*S(t) + taps*x_zero*w_zero      (mod 2^32)
 * where S(t) is the window sum of x (only computed when some w_zero != 0).  All terms wrap mod
 * 2^32 like torch's int32 arithmetic, and the true accumulator fits int32 (the gate's bound),
 * so the result equals the reference exactly.  Requantization is the same instruction sequence
 * as requant.h (cvtdq2ps, mulps, cvtps2dq, clamp).
 */
#ifndef QRT_CONV1D_AVX512VNNI_H
#define QRT_CONV1D_AVX512VNNI_H

#include <immintrin.h>
#include <string.h>
#include "qrt/conv1d_pack.h"
#include "qrt/conv1d_params.h"

#define QRT_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define QRT__C1_NR 8 /* output channels per tile */
#define QRT__C1_MT 3 /* 16-position vectors per tile */
#ifndef QRT__C1_CHUNK_BYTES
#define QRT__C1_CHUNK_BYTES (128 * 1024) /* packed input per position chunk (L2) */
#endif
#ifndef QRT__C1_GROUP_BUDGET
#define QRT__C1_GROUP_BUDGET (32 * 1024) /* bytes of packed input per group chunk (L1) */
#endif

static inline int64_t qrt__c1_ceil16(int64_t v) { return (v + 15) & ~(int64_t)15; }

/** Row length U (quads) of the packed input for this geometry. */
static inline int64_t qrt__c1_row(const qrt_conv1d_params *p, const qrt_conv1d_layout *l)
{
    int64_t u = qrt__c1_ceil16(p->len_out);
    if (!l->im2col)
        u += ((int64_t)(p->kernel - 1) * p->dilation) / p->stride;
    /* Rows are read together by a tile: make their stride an odd number of 64-byte lines so
     * they spread over all L1 sets instead of aliasing into a few. */
    u = qrt__c1_ceil16(u);
    if ((u / 16) % 2 == 0)
        u += 16;
    return u;
}

/** Groups packed together when each group has one output channel (depthwise-like), else 1. */
static inline int64_t qrt__c1_group_chunk(const qrt_conv1d_params *p, const qrt_conv1d_layout *l)
{
    if (p->c_out != p->groups || p->groups < 2)
        return 1;
    const int64_t per = (int64_t)l->cq * (l->im2col ? 1 : p->stride) * qrt__c1_row(p, l) * 4;
    int64_t gc = ((int64_t)QRT__C1_GROUP_BUDGET) / (per > 0 ? per : 1);
    gc = gc < 8 ? 8 : gc;
    return gc > (int64_t)p->groups ? (int64_t)p->groups : gc;
}

#define QRT__DW_MAXSPAN 63 /* (K-1)*dilation + 1 <= 64: at most 16 weight blocks */
#define QRT__DW_MAXBLK 16
#define QRT__DW_SHORT 192 /* rows of at most this many outputs run from a padded copy */

/** Whether the depthwise four-phase path serves p (described below; else the packed
 *  path runs). */
static inline int qrt__dw_ok(const qrt_conv1d_params *p)
{
    return p->c_in == p->groups && p->out_kind == QRT_CONV1D_OUT_U8 && p->stride == 1 &&
           p->x_stride_t == 1 && p->y_stride_t == 1 &&
           (uint64_t)(p->kernel - 1) * p->dilation <= QRT__DW_MAXSPAN;
}

/** Bytes of scratch qrt_conv1d_u8__avx512vnni() needs (64-byte aligned pieces). */
static inline size_t qrt_conv1d_u8__avx512vnni_scratch_size(const qrt_conv1d_params *p)
{
    if (qrt__dw_ok(p))
        return 64u; /* the depthwise path reads the input in place */
    const qrt_conv1d_layout l = qrt_conv1d_layout_of(p->c_in / p->groups, p->kernel);
    const size_t phases = l.im2col ? 1u : p->stride;
    const size_t xq = (size_t)l.cq * phases * (size_t)qrt__c1_row(p, &l) * 4u *
                      (size_t)qrt__c1_group_chunk(p, &l);
    const size_t koff = (size_t)l.kc * 8u;
    const size_t colsum = (size_t)p->len_in * 4u;
    const size_t wsum = (size_t)qrt__c1_ceil16(p->len_out) * 4u;
    const size_t tmp = p->stride > 1 ? (size_t)qrt__c1_row(p, &l) * p->stride * 4u + 64u : 0u;
    return 64u + ((xq + 63u) & ~(size_t)63u) + ((koff + 63u) & ~(size_t)63u) +
           ((colsum + 63u) & ~(size_t)63u) + ((wsum + 63u) & ~(size_t)63u) +
           ((tmp + 63u) & ~(size_t)63u) + 64u;
}

/** dst[i] = quad of the 4 rows at times time0[j] + i*step; padding x_zero, absent rows 0. */
static inline void qrt__c1_quads_scalar(const uint8_t *const base[4], const int64_t time0[4],
                                        int64_t step, int64_t i0, int64_t i1, int64_t len,
                                        int64_t xst, uint8_t xz, uint32_t *dst)
{
    for (int64_t i = i0; i < i1; ++i) {
        uint32_t q = 0;
        for (int j = 0; j < 4; ++j) {
            uint32_t b = 0;
            if (base[j]) {
                const int64_t tm = time0[j] + i * step;
                b = (tm >= 0 && tm < len) ? base[j][tm * xst] : xz;
            }
            q |= b << (8 * j);
        }
        dst[i] = q;
    }
}

static inline QRT_VNNI void qrt__c1_quads(const uint8_t *const base[4], const int64_t time0[4],
                                          int64_t step, int64_t count, int64_t len, int64_t xst,
                                          int64_t xsc, uint8_t xz, uint32_t *dst, uint32_t *tmp)
{
    if (step > 1 && xst == 1 && tmp && count > 0) {
        /* Strided taps: interleave every position with the unit-stride vector path, then keep
         * every step-th quad (one 4-byte copy each instead of four byte gathers). */
        const int64_t all = (count - 1) * step + 1;
        qrt__c1_quads(base, time0, 1, all, len, 1, xsc, xz, tmp, NULL);
        for (int64_t i = 0; i < count; ++i)
            dst[i] = tmp[i * step];
        return;
    }
    int64_t lo = 0, hi = count;
    for (int j = 0; j < 4; ++j)
        if (base[j]) {
            lo = lo > -time0[j] ? lo : -time0[j];
            const int64_t h = step == 1 ? len - time0[j] : (len - time0[j] + step - 1) / step;
            hi = hi < h ? hi : h;
        }
    if (hi < lo)
        hi = lo;
    if (lo > count)
        lo = hi = count;
    qrt__c1_quads_scalar(base, time0, step, 0, lo, len, xst, xz, dst);
    int64_t i = lo;
    if (step == 1 && xst == 1) {
        /* Unit-stride rows: interleave 64 positions of 4 rows at a time.  The byte/word unpacks
         * work within 128-bit lanes; two rounds of 128-bit shuffles put the quads in order. */
        const __m512i z512 = _mm512_setzero_si512();
        for (; i + 64 <= hi; i += 64) {
            __m512i r[4];
            for (int j = 0; j < 4; ++j)
                r[j] = base[j] ? _mm512_loadu_si512((const void *)(base[j] + time0[j] + i)) : z512;
            const __m512i ab_lo = _mm512_unpacklo_epi8(r[0], r[1]);
            const __m512i ab_hi = _mm512_unpackhi_epi8(r[0], r[1]);
            const __m512i cd_lo = _mm512_unpacklo_epi8(r[2], r[3]);
            const __m512i cd_hi = _mm512_unpackhi_epi8(r[2], r[3]);
            /* q0..q3: per 128-bit lane L, the quads of positions 16L + {0-3, 4-7, 8-11, 12-15} */
            const __m512i q0 = _mm512_unpacklo_epi16(ab_lo, cd_lo);
            const __m512i q1 = _mm512_unpackhi_epi16(ab_lo, cd_lo);
            const __m512i q2 = _mm512_unpacklo_epi16(ab_hi, cd_hi);
            const __m512i q3 = _mm512_unpackhi_epi16(ab_hi, cd_hi);
            const __m512i t0 = _mm512_shuffle_i64x2(q0, q1, 0x44); /* q0.l0 q0.l1 q1.l0 q1.l1 */
            const __m512i t1 = _mm512_shuffle_i64x2(q2, q3, 0x44); /* q2.l0 q2.l1 q3.l0 q3.l1 */
            const __m512i t2 = _mm512_shuffle_i64x2(q0, q1, 0xEE); /* q0.l2 q0.l3 q1.l2 q1.l3 */
            const __m512i t3 = _mm512_shuffle_i64x2(q2, q3, 0xEE); /* q2.l2 q2.l3 q3.l2 q3.l3 */
            _mm512_storeu_si512((void *)(dst + i), _mm512_shuffle_i64x2(t0, t1, 0x88));
            _mm512_storeu_si512((void *)(dst + i + 16), _mm512_shuffle_i64x2(t0, t1, 0xDD));
            _mm512_storeu_si512((void *)(dst + i + 32), _mm512_shuffle_i64x2(t2, t3, 0x88));
            _mm512_storeu_si512((void *)(dst + i + 48), _mm512_shuffle_i64x2(t2, t3, 0xDD));
        }
        const __m128i zero = _mm_setzero_si128();
        for (; i + 16 <= hi; i += 16) {
            __m128i r[4];
            for (int j = 0; j < 4; ++j)
                r[j] = base[j] ? _mm_loadu_si128((const __m128i *)(base[j] + time0[j] + i)) : zero;
            const __m128i ab_lo = _mm_unpacklo_epi8(r[0], r[1]), ab_hi = _mm_unpackhi_epi8(r[0], r[1]);
            const __m128i cd_lo = _mm_unpacklo_epi8(r[2], r[3]), cd_hi = _mm_unpackhi_epi8(r[2], r[3]);
            _mm_storeu_si128((__m128i *)(dst + i), _mm_unpacklo_epi16(ab_lo, cd_lo));
            _mm_storeu_si128((__m128i *)(dst + i + 4), _mm_unpackhi_epi16(ab_lo, cd_lo));
            _mm_storeu_si128((__m128i *)(dst + i + 8), _mm_unpacklo_epi16(ab_hi, cd_hi));
            _mm_storeu_si128((__m128i *)(dst + i + 12), _mm_unpackhi_epi16(ab_hi, cd_hi));
        }
    } else if (xsc == 1 && base[0] && base[1] == base[0] + 1 && base[2] == base[0] + 2 &&
               base[3] == base[0] + 3 && time0[1] == time0[0] && time0[2] == time0[0] &&
               time0[3] == time0[0]) {
        /* Channels adjacent in memory (linear's [rows][in] input): one 4-byte copy per quad. */
        for (; i < hi; ++i)
            memcpy(dst + i, base[0] + (time0[0] + i * step) * xst, 4);
    }
    qrt__c1_quads_scalar(base, time0, step, i, count, len, xst, xz, dst);
}

/** Everything a tile needs; built once per (n, group). */
typedef struct {
    const int32_t *x;    /* packed input quads */
    const int64_t *koff; /* [Kc] offset of tap k in x (quads) */
    int64_t cq_stride;   /* quads between channel-quad rows */
    int64_t x_oc;        /* depthwise tiles: quads between the packed inputs of channels */
    const int32_t *w;    /* packed weight quads, [c_out][Kc][CQ] */
    int64_t w_oc;        /* quads per output channel = Kc * CQ */
    uint32_t kc, cq;
    const int32_t *wsum, *wzero, *bias_q;
    const float *scale, *bias_f;
    const int32_t *win; /* [ceil16(len_out)] window sums or NULL */
    int32_t xz, taps, oz, lo, hi;
    uint32_t out_kind;
    int64_t len_out;
    uint8_t *y; /* output of this (n) at channel 0 */
    int64_t ysc, yst;
} qrt__c1_ctx;

static inline __attribute__((always_inline)) QRT_VNNI void
qrt__c1_tile(const qrt__c1_ctx *c, int64_t oc0, int64_t t0, const int NR, const int MT,
             const int DW)
{
    __m512i acc[QRT__C1_NR][QRT__C1_MT];
    for (int r = 0; r < NR; ++r)
        for (int m = 0; m < MT; ++m)
            acc[r][m] = _mm512_setzero_si512();
    const int32_t *w0 = c->w + oc0 * c->w_oc;
    for (uint32_t k = 0; k < c->kc; ++k) {
        const int32_t *xk = c->x + c->koff[k] + t0;
        const int32_t *wk = w0 + (int64_t)k * c->cq;
        for (uint32_t q = 0; q < c->cq; ++q) {
            const int32_t *xr = xk + q * c->cq_stride;
            if (DW) { /* one output channel per group: each row r has its own packed input */
                for (int r = 0; r < NR; ++r) {
                    const __m512i wb = _mm512_set1_epi32(wk[r * c->w_oc + q]);
                    for (int m = 0; m < MT; ++m)
                        acc[r][m] = _mm512_dpbusd_epi32(
                            acc[r][m], _mm512_loadu_si512((const void *)(xr + r * c->x_oc + 16 * m)),
                            wb);
                }
            } else {
                __m512i xv[QRT__C1_MT];
                for (int m = 0; m < MT; ++m)
                    xv[m] = _mm512_loadu_si512((const void *)(xr + 16 * m));
                for (int r = 0; r < NR; ++r) {
                    const __m512i wb = _mm512_set1_epi32(wk[r * c->w_oc + q]);
                    for (int m = 0; m < MT; ++m)
                        acc[r][m] = _mm512_dpbusd_epi32(acc[r][m], xv[m], wb);
                }
            }
        }
    }
    /* Epilogue. Everything is read into locals first: the byte stores below may alias any
     * memory, and would otherwise force the compiler to reload the context on every store. */
    const int32_t xz = c->xz, taps = c->taps, oz = c->oz;
    const int64_t len_out = c->len_out, ysc = c->ysc, yst = c->yst;
    const int32_t *const win = c->win;
    const int f32out = c->out_kind == QRT_CONV1D_OUT_F32;
    uint8_t *const ybase = c->y;
    const __m512i vlo = _mm512_set1_epi32(c->lo - oz), vhi = _mm512_set1_epi32(c->hi - oz);
    const __m512i voz = _mm512_set1_epi32(oz);
    __m512i vwin[QRT__C1_MT];
    __mmask16 mk[QRT__C1_MT];
    for (int m = 0; m < MT; ++m) {
        const int64_t left = len_out - (t0 + 16 * m);
        mk[m] = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
        vwin[m] = win ? _mm512_loadu_si512(win + t0 + 16 * m) : _mm512_setzero_si512();
    }
    uint32_t c0s[QRT__C1_NR];
    float scs[QRT__C1_NR], bfs[QRT__C1_NR];
    int32_t wzs[QRT__C1_NR];
    for (int r = 0; r < NR; ++r) {
        const int64_t oc = oc0 + r;
        const int32_t wz = c->wzero[oc];
        /* Corrections in wrapping uint32 arithmetic (see the file comment). */
        uint32_t c0 = (uint32_t)taps * (uint32_t)xz * (uint32_t)wz -
                      (uint32_t)xz * (uint32_t)c->wsum[oc];
        if (!f32out)
            c0 += (uint32_t)c->bias_q[oc];
        c0s[r] = c0;
        wzs[r] = wz;
        scs[r] = c->scale[oc];
        bfs[r] = f32out ? c->bias_f[oc] : 0.0f;
    }
    if (!f32out && yst == 1) {
        /* The common case (NCL quint8 output), fully unrolled so accumulators stay in zmm.
         * QNNPACK's SSE2 tail widened to zmm: packssdw, paddsw (zero point), packuswb, byte
         * clamp -- equal to clamp(rne(y) + zp, lo, hi) for every int32 (see the depthwise
         * path).  The packs leave, per 128-bit lane L, the dwords of positions 4L.. of
         * vectors 0..3; one vpermd restores time order and one masked store writes the row. */
        const __m512i voz16 = _mm512_set1_epi16((short)oz);
        const __m512i vlo8 = _mm512_set1_epi8((char)c->lo), vhi8 = _mm512_set1_epi8((char)c->hi);
        const __m512i perm = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
        const int64_t left = len_out - t0, nb = left < 16 * MT ? left : 16 * MT;
        const __mmask64 ms = nb >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << nb) - 1);
#pragma GCC unroll 8
        for (int r = 0; r < NR; ++r) {
            const __m512i vc0 = _mm512_set1_epi32((int32_t)c0s[r]);
            const __m512i vwz = _mm512_set1_epi32(wzs[r]);
            const __m512 vs = _mm512_set1_ps(scs[r]);
            __m512i f[4];
#pragma GCC unroll 4
            for (int m = 0; m < 4; ++m) {
                if (m >= MT) {
                    f[m] = _mm512_setzero_si512();
                    continue;
                }
                __m512i v = _mm512_add_epi32(acc[r][m], vc0);
                if (win)
                    v = _mm512_sub_epi32(v, _mm512_mullo_epi32(vwz, vwin[m]));
                f[m] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(v), vs));
            }
            const __m512i h01 = _mm512_adds_epi16(_mm512_packs_epi32(f[0], f[1]), voz16);
            const __m512i h23 = _mm512_adds_epi16(_mm512_packs_epi32(f[2], f[3]), voz16);
            __m512i b = _mm512_permutexvar_epi32(perm, _mm512_packus_epi16(h01, h23));
            b = _mm512_min_epu8(_mm512_max_epu8(b, vlo8), vhi8);
            _mm512_mask_storeu_epi8(ybase + (oc0 + r) * ysc + t0, ms, b);
        }
        return;
    }
    if (NR == QRT__C1_NR && f32out && yst != 1 && ysc == 1) {
        /* float output with adjacent channels (dynamic linear): two 8 x 8 register transposes
         * (pure data movement) and one 32-byte store per position. */
        for (int m = 0; m < MT; ++m) {
            __m256 lo[QRT__C1_NR], hi[QRT__C1_NR];
            for (int r = 0; r < QRT__C1_NR; ++r) {
                const __m512i v = _mm512_add_epi32(acc[r][m], _mm512_set1_epi32((int32_t)c0s[r]));
                const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(win ? _mm512_sub_epi32(
                    v, _mm512_mullo_epi32(_mm512_set1_epi32(wzs[r]), vwin[m])) : v),
                                               _mm512_set1_ps(scs[r]));
                const __m512 y = _mm512_add_ps(f, _mm512_set1_ps(bfs[r]));
                lo[r] = _mm512_castps512_ps256(y);
                hi[r] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(y), 1));
            }
            const int64_t t = t0 + 16 * m, nt = len_out - t < 16 ? len_out - t : 16;
            float *dst = (float *)ybase + oc0 + t * yst;
            for (int h = 0; h < 2; ++h) {
                const __m256 *rw = h ? hi : lo;
                const __m256 a0 = _mm256_unpacklo_ps(rw[0], rw[1]), a1 = _mm256_unpackhi_ps(rw[0], rw[1]);
                const __m256 a2 = _mm256_unpacklo_ps(rw[2], rw[3]), a3 = _mm256_unpackhi_ps(rw[2], rw[3]);
                const __m256 a4 = _mm256_unpacklo_ps(rw[4], rw[5]), a5 = _mm256_unpackhi_ps(rw[4], rw[5]);
                const __m256 a6 = _mm256_unpacklo_ps(rw[6], rw[7]), a7 = _mm256_unpackhi_ps(rw[6], rw[7]);
                const __m256 b0 = _mm256_shuffle_ps(a0, a2, _MM_SHUFFLE(1, 0, 1, 0));
                const __m256 b1 = _mm256_shuffle_ps(a0, a2, _MM_SHUFFLE(3, 2, 3, 2));
                const __m256 b2 = _mm256_shuffle_ps(a1, a3, _MM_SHUFFLE(1, 0, 1, 0));
                const __m256 b3 = _mm256_shuffle_ps(a1, a3, _MM_SHUFFLE(3, 2, 3, 2));
                const __m256 b4 = _mm256_shuffle_ps(a4, a6, _MM_SHUFFLE(1, 0, 1, 0));
                const __m256 b5 = _mm256_shuffle_ps(a4, a6, _MM_SHUFFLE(3, 2, 3, 2));
                const __m256 b6 = _mm256_shuffle_ps(a5, a7, _MM_SHUFFLE(1, 0, 1, 0));
                const __m256 b7 = _mm256_shuffle_ps(a5, a7, _MM_SHUFFLE(3, 2, 3, 2));
                const __m256 rows[8] = {
                    _mm256_permute2f128_ps(b0, b4, 0x20), _mm256_permute2f128_ps(b1, b5, 0x20),
                    _mm256_permute2f128_ps(b2, b6, 0x20), _mm256_permute2f128_ps(b3, b7, 0x20),
                    _mm256_permute2f128_ps(b0, b4, 0x31), _mm256_permute2f128_ps(b1, b5, 0x31),
                    _mm256_permute2f128_ps(b2, b6, 0x31), _mm256_permute2f128_ps(b3, b7, 0x31)};
                for (int i = 0; i < 8 && 8 * h + i < nt; ++i)
                    _mm256_storeu_ps(dst + (8 * h + i) * yst, rows[i]);
            }
        }
        return;
    }
    if (NR == QRT__C1_NR && !f32out && yst != 1 && ysc == 1) {
        /* Channels adjacent in memory (linear's [rows][out] output): transpose the 8 x 16 byte
         * block in registers and store 8 bytes per position instead of 128 single bytes. */
        for (int m = 0; m < MT; ++m) {
            __m128i b[QRT__C1_NR];
            for (int r = 0; r < QRT__C1_NR; ++r) {
                __m512i v = _mm512_add_epi32(acc[r][m], _mm512_set1_epi32((int32_t)c0s[r]));
                if (win)
                    v = _mm512_sub_epi32(v, _mm512_mullo_epi32(_mm512_set1_epi32(wzs[r]),
                                                               vwin[m]));
                const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_set1_ps(scs[r]));
                __m512i q = _mm512_cvtps_epi32(f);
                q = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(q, vlo), vhi), voz);
                b[r] = _mm512_cvtepi32_epi8(q);
            }
            const __m128i a0 = _mm_unpacklo_epi8(b[0], b[1]), a1 = _mm_unpackhi_epi8(b[0], b[1]);
            const __m128i a2 = _mm_unpacklo_epi8(b[2], b[3]), a3 = _mm_unpackhi_epi8(b[2], b[3]);
            const __m128i a4 = _mm_unpacklo_epi8(b[4], b[5]), a5 = _mm_unpackhi_epi8(b[4], b[5]);
            const __m128i a6 = _mm_unpacklo_epi8(b[6], b[7]), a7 = _mm_unpackhi_epi8(b[6], b[7]);
            const __m128i c0 = _mm_unpacklo_epi16(a0, a2), c1 = _mm_unpackhi_epi16(a0, a2);
            const __m128i c2 = _mm_unpacklo_epi16(a1, a3), c3 = _mm_unpackhi_epi16(a1, a3);
            const __m128i d0 = _mm_unpacklo_epi16(a4, a6), d1 = _mm_unpackhi_epi16(a4, a6);
            const __m128i d2 = _mm_unpacklo_epi16(a5, a7), d3 = _mm_unpackhi_epi16(a5, a7);
            const __m128i tr[8] = {_mm_unpacklo_epi32(c0, d0), _mm_unpackhi_epi32(c0, d0),
                                   _mm_unpacklo_epi32(c1, d1), _mm_unpackhi_epi32(c1, d1),
                                   _mm_unpacklo_epi32(c2, d2), _mm_unpackhi_epi32(c2, d2),
                                   _mm_unpacklo_epi32(c3, d3), _mm_unpackhi_epi32(c3, d3)};
            const int64_t t = t0 + 16 * m, nt = len_out - t < 16 ? len_out - t : 16;
            uint8_t *dst = ybase + oc0 + t * yst;
            for (int64_t i = 0; i < nt; ++i) {
                if (i & 1) /* the high 8 bytes; dst is not 8-aligned: no double* (UBSan) */
                    _mm_storel_epi64((__m128i *)(dst + i * yst),
                                     _mm_unpackhi_epi64(tr[i >> 1], tr[i >> 1]));
                else
                    _mm_storel_epi64((__m128i *)(dst + i * yst), tr[i >> 1]);
            }
        }
        return;
    }
    for (int r = 0; r < NR; ++r) {
        const int64_t oc = oc0 + r;
        const __m512i vc0 = _mm512_set1_epi32((int32_t)c0s[r]), vwz = _mm512_set1_epi32(wzs[r]);
        const __m512 vs = _mm512_set1_ps(scs[r]);
        for (int m = 0; m < MT; ++m) {
            const int64_t t = t0 + 16 * m;
            __m512i v = _mm512_add_epi32(acc[r][m], vc0);
            if (win)
                v = _mm512_sub_epi32(v, _mm512_mullo_epi32(vwz, vwin[m]));
            const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), vs);
            if (f32out) {
                const __m512 y = _mm512_add_ps(f, _mm512_set1_ps(bfs[r]));
                float *dst = (float *)ybase + oc * ysc + t * yst;
                if (yst == 1) {
                    _mm512_mask_storeu_ps(dst, mk[m], y);
                } else if (yst > 0 && yst < ((int64_t)1 << 26)) {
                    const __m512i idx = _mm512_mullo_epi32(
                        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                        _mm512_set1_epi32((int32_t)yst));
                    _mm512_mask_i32scatter_ps(dst, mk[m], idx, y, 4);
                } else {
                    float tmp[16];
                    _mm512_storeu_ps(tmp, y);
                    for (int64_t i = 0; i < 16 && i < len_out - t; ++i)
                        dst[i * yst] = tmp[i];
                }
            } else {
                __m512i q = _mm512_cvtps_epi32(f); /* out of range -> INT32_MIN, as cvtps2dq */
                q = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(q, vlo), vhi), voz);
                uint8_t *dst = ybase + oc * ysc + t * yst;
                if (yst == 1) {
                    _mm512_mask_cvtepi32_storeu_epi8(dst, mk[m], q);
                } else {
                    uint8_t tmp[16];
                    _mm_storeu_si128((__m128i *)tmp, _mm512_cvtepi32_epi8(q));
                    for (int64_t i = 0; i < 16 && i < len_out - t; ++i)
                        dst[i * yst] = tmp[i];
                }
            }
        }
    }
}

#define QRT__C1_TILE(NR, MT)                                                                   \
    static QRT_VNNI void qrt__c1_tile_##NR##_##MT(const qrt__c1_ctx *c, int64_t oc0, int64_t t0) \
    {                                                                                          \
        qrt__c1_tile(c, oc0, t0, NR, MT, 0);                                                   \
    }                                                                                          \
    static QRT_VNNI void qrt__c1_dwtile_##NR##_##MT(const qrt__c1_ctx *c, int64_t oc0,         \
                                                    int64_t t0)                                \
    {                                                                                          \
        qrt__c1_tile(c, oc0, t0, NR, MT, 1);                                                   \
    }
#define QRT__C1_TILES(NR) QRT__C1_TILE(NR, 1) QRT__C1_TILE(NR, 2) QRT__C1_TILE(NR, 3)
QRT__C1_TILES(1)
QRT__C1_TILES(2)
QRT__C1_TILES(3)
QRT__C1_TILES(4)
QRT__C1_TILES(5)
QRT__C1_TILES(6)
QRT__C1_TILES(7)
QRT__C1_TILES(8)
#undef QRT__C1_TILES
#undef QRT__C1_TILE

typedef void (*qrt__c1_tile_fn)(const qrt__c1_ctx *, int64_t, int64_t);
#define QRT__C1_ROW(P, NR) {P##NR##_1, P##NR##_2, P##NR##_3}
static const qrt__c1_tile_fn qrt__c1_tiles[QRT__C1_NR][QRT__C1_MT] = {
    QRT__C1_ROW(qrt__c1_tile_, 1), QRT__C1_ROW(qrt__c1_tile_, 2), QRT__C1_ROW(qrt__c1_tile_, 3),
    QRT__C1_ROW(qrt__c1_tile_, 4), QRT__C1_ROW(qrt__c1_tile_, 5), QRT__C1_ROW(qrt__c1_tile_, 6),
    QRT__C1_ROW(qrt__c1_tile_, 7), QRT__C1_ROW(qrt__c1_tile_, 8)};
static const qrt__c1_tile_fn qrt__c1_dwtiles[QRT__C1_NR][QRT__C1_MT] = {
    QRT__C1_ROW(qrt__c1_dwtile_, 1), QRT__C1_ROW(qrt__c1_dwtile_, 2),
    QRT__C1_ROW(qrt__c1_dwtile_, 3), QRT__C1_ROW(qrt__c1_dwtile_, 4),
    QRT__C1_ROW(qrt__c1_dwtile_, 5), QRT__C1_ROW(qrt__c1_dwtile_, 6),
    QRT__C1_ROW(qrt__c1_dwtile_, 7), QRT__C1_ROW(qrt__c1_dwtile_, 8)};
#undef QRT__C1_ROW

/** Pack group g of input xn into quads at dst ([CQ][phases][U]). */
static inline QRT_VNNI void qrt__c1_pack_group(const qrt_conv1d_params *p,
                                               const qrt_conv1d_layout *l, const uint8_t *xn,
                                               uint32_t g, int64_t U, int64_t phases,
                                               uint32_t *dst0, uint32_t *tmp)
{
    const uint32_t cg = p->c_in / p->groups;
    const uint8_t xz = (uint8_t)p->input_zero;
    for (uint32_t rq = 0; rq < l->cq; ++rq)
        for (int64_t ph = 0; ph < phases; ++ph) {
            const uint8_t *base[4];
            int64_t time0[4];
            for (int j = 0; j < 4; ++j) {
                const uint32_t r = 4u * rq + (uint32_t)j;
                uint32_t ic, k;
                if (l->im2col) {
                    ic = r / p->kernel;
                    k = r % p->kernel;
                } else {
                    ic = r;
                    k = 0;
                }
                const int ok = l->im2col ? r < cg * p->kernel : r < cg;
                base[j] = ok ? xn + (int64_t)(g * cg + ic) * p->x_stride_c : NULL;
                time0[j] = l->im2col ? (int64_t)k * p->dilation - p->pad_left
                                     : ph - (int64_t)p->pad_left;
            }
            uint32_t *dst = dst0 + (rq * phases + ph) * U;
            if (!l->im2col && phases == 2 && p->x_stride_t == 1) {
                /* Stride 2: interleave 64 positions at a time into an L1-resident buffer and
                 * split them into the even and odd phase rows with two permutes per 32 quads. */
                if (ph == 1)
                    continue;
                uint32_t buf[64] __attribute__((aligned(64)));
                const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22,
                                                     24, 26, 28, 30);
                const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
                for (int64_t u = 0; u < U; u += 32) {
                    const int64_t cnt = U - u >= 32 ? 64 : 2 * (U - u);
                    int64_t tu[4];
                    for (int j = 0; j < 4; ++j)
                        tu[j] = time0[j] + 2 * u;
                    qrt__c1_quads(base, tu, 1, cnt, p->len_in, 1, p->x_stride_c, xz, buf, NULL);
                    for (int64_t h = 0; h < cnt / 32; ++h) {
                        const __m512i a = _mm512_load_si512((const void *)(buf + 32 * h));
                        const __m512i b = _mm512_load_si512((const void *)(buf + 32 * h + 16));
                        _mm512_storeu_si512((void *)(dst + u + 16 * h),
                                            _mm512_permutex2var_epi32(a, ie, b));
                        _mm512_storeu_si512((void *)(dst + U + u + 16 * h),
                                            _mm512_permutex2var_epi32(a, io, b));
                    }
                }
            } else if (!l->im2col && phases > 1 && p->x_stride_t == 1) {
                /* All phases of a channel quad come from one unit-stride interleave. */
                if (ph == 0)
                    qrt__c1_quads(base, time0, 1, U * phases, p->len_in, 1, p->x_stride_c, xz,
                                  tmp, NULL);
                for (int64_t u = 0; u < U; ++u)
                    dst[u] = tmp[u * phases + ph];
            } else {
                qrt__c1_quads(base, time0, p->stride, U, p->len_in, p->x_stride_t,
                              p->x_stride_c, xz, dst, tmp);
            }
        }
}

/* ---- depthwise (one input channel per output channel), stride 1: no packing at all ----------
 *
 * "Four phases": the 64 output positions t0 .. t0+63 of one channel are computed as four int32
 * vectors, phase r holding positions t0 + 4i + r (i = 0..15).  Tap k of position t0 + 4i + r
 * reads input byte t0 + 4i + r - pad + k*d.  A plain 64-byte load of the NCL row starting at
 * t0 + r - pad + 4b puts the bytes of taps with k*d = 4b + j at byte j of int32 lane i, so one
 * vpdpbusd with the broadcast weight "block" b (byte j = w[k] where k*d = 4b + j, else 0) adds
 * those taps for 16 positions.  The blocks are the same for every phase and position, so they
 * live in registers; a 3-tap layer costs 4 loads and 4 vpdpbusd per 64 outputs.  Padding bytes
 * come from masked loads that fill x_zero (only near the row ends), which the constant term
 * cancels exactly as in the packed path:
 *   acc = sum x*w - x_zero*sum(w) - w_zero*S(t) + K*x_zero*w_zero      (mod 2^32)
 * S(t), the window sum of x, uses the same loads with blocks of ones (asymmetric weights).
 * Requantization is QNNPACK's SSE2 sequence: cvtdq2ps, mulps, cvtps2dq, then packssdw, paddsw
 * (the output zero point), packuswb and the byte clamp, which equals requant.h's clamp of the
 * int32 sum (cvtps2dq's INT32_MIN for out-of-range values saturates to 0, i.e. the floor).  The
 * packs leave, in every 128-bit lane, the 4 x 4 bytes of 16 consecutive positions in phase
 * order; one in-lane byte shuffle restores time order. */

/** Bytes [s, s+64) of row xr (length len), x_zero outside [0, len); never touches them. */
static inline QRT_VNNI __m512i qrt__dw_load(const uint8_t *xr, int64_t s, int64_t len,
                                            __m512i vxz)
{
    if (s >= 0 && s + 64 <= len)
        return _mm512_loadu_si512((const void *)(xr + s));
    const int64_t lo = s < 0 ? -s : 0, hi = len - s < 64 ? len - s : 64;
    if (lo >= hi)
        return vxz;
    const __mmask64 m = (hi == 64 ? ~(__mmask64)0 : (((__mmask64)1 << hi) - 1)) &
                        ~(((__mmask64)1 << lo) - 1);
    /* The masked-off bytes are neither read nor faulted on; only the address is formed. */
    return _mm512_mask_loadu_epi8(vxz, m, (const void *)((uintptr_t)xr + (uintptr_t)s));
}

typedef struct {
    int32_t w[QRT__DW_MAXBLK];    /* weight blocks */
    int32_t ones[QRT__DW_MAXBLK]; /* 1 where a tap exists (window sums) */
} qrt__dw_blocks;

/** 64 outputs from t0; EDGE: loads may leave the row, the store may be partial. */
static inline __attribute__((always_inline)) QRT_VNNI void
qrt__dw_step(const uint8_t *xr, int64_t len_in, int64_t pad, uint8_t *yr, int64_t len_out,
             int64_t t0, const __m512i *vw, const __m512i *vone, const int NB, const int ASYM,
             const int EDGE, __m512i vc0, __m512i vwz, __m512 vs, __m512i voz16, __m512i vlo8,
             __m512i vhi8, __m512i vperm, __m512i vxz)
{
    __m512i f[4];
    for (int r = 0; r < 4; ++r) {
        __m512i acc = vc0, sum = _mm512_setzero_si512();
        for (int b = 0; b < NB; ++b) {
            const int64_t st = t0 + r - pad + 4 * b;
            const __m512i L = EDGE ? qrt__dw_load(xr, st, len_in, vxz)
                                   : _mm512_loadu_si512((const void *)(xr + st));
            acc = _mm512_dpbusd_epi32(acc, L, vw[b]);
            if (ASYM)
                sum = _mm512_dpbusd_epi32(sum, L, vone[b]);
        }
        if (ASYM)
            acc = _mm512_sub_epi32(acc, _mm512_mullo_epi32(vwz, sum));
        f[r] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(acc), vs));
    }
    const __m512i h01 = _mm512_adds_epi16(_mm512_packs_epi32(f[0], f[1]), voz16);
    const __m512i h23 = _mm512_adds_epi16(_mm512_packs_epi32(f[2], f[3]), voz16);
    __m512i y = _mm512_shuffle_epi8(_mm512_packus_epi16(h01, h23), vperm);
    y = _mm512_min_epu8(_mm512_max_epu8(y, vlo8), vhi8);
    if (!EDGE || len_out - t0 >= 64)
        _mm512_storeu_si512((void *)(yr + t0), y);
    else
        _mm512_mask_storeu_epi8((void *)(yr + t0), ((__mmask64)1 << (len_out - t0)) - 1, y);
}

static inline __attribute__((always_inline)) QRT_VNNI void
qrt__dw_row(const uint8_t *xr, int64_t xsn, int64_t len_in, int64_t pad, uint8_t *yr,
            int64_t ysn, int64_t len_out, int64_t nrows, const qrt__dw_blocks *B, const int NB,
            const int ASYM, uint32_t c0, int32_t wz, float scale, int32_t oz, int32_t lo,
            int32_t hi, uint8_t xz)
{
    __m512i vw[QRT__DW_MAXBLK], vone[QRT__DW_MAXBLK];
    for (int b = 0; b < NB; ++b) {
        vw[b] = _mm512_set1_epi32(B->w[b]);
        vone[b] = _mm512_set1_epi32(B->ones[b]);
    }
    const __m512i vxz = _mm512_set1_epi8((char)xz), vc0 = _mm512_set1_epi32((int32_t)c0);
    const __m512i vwz = _mm512_set1_epi32(wz), voz16 = _mm512_set1_epi16((short)oz);
    const __m512i vlo8 = _mm512_set1_epi8((char)lo), vhi8 = _mm512_set1_epi8((char)hi);
    const __m512i vperm = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    const __m512 vs = _mm512_set1_ps(scale);
    const int64_t reach = 3 + 4 * (int64_t)(NB - 1) + 64; /* bytes a step reads past t0-pad */
    /* Short rows (every step an edge step): copy the bytes the steps read, zero-point padded,
     * into a stack buffer once, so no load needs a mask. */
    const int64_t span = (len_out - 1) / 64 * 64 + reach;
    uint8_t buf[QRT__DW_SHORT + 192] __attribute__((aligned(64)));
    for (int64_t n = 0; n < nrows; ++n, xr += xsn, yr += ysn) {
        if (len_out <= QRT__DW_SHORT) {
            memset(buf, xz, (size_t)span);
            const int64_t cnt = len_in < span - pad ? len_in : span - pad;
            if (cnt > 0)
                memcpy(buf + pad, xr, (size_t)cnt);
            for (int64_t t0 = 0; t0 < len_out; t0 += 64)
                qrt__dw_step(buf, span, 0, yr, len_out, t0, vw, vone, NB, ASYM, 1, vc0, vwz, vs,
                             voz16, vlo8, vhi8, vperm, vxz);
            continue;
        }
        /* Steps whose loads stay inside the row and whose store is whole run without masks. */
        for (int64_t t0 = 0; t0 < len_out; t0 += 64) {
            if (t0 >= pad && t0 - pad + reach <= len_in && t0 + 64 <= len_out)
                qrt__dw_step(xr, len_in, pad, yr, len_out, t0, vw, vone, NB, ASYM, 0, vc0, vwz,
                             vs, voz16, vlo8, vhi8, vperm, vxz);
            else
                qrt__dw_step(xr, len_in, pad, yr, len_out, t0, vw, vone, NB, ASYM, 1, vc0, vwz,
                             vs, voz16, vlo8, vhi8, vperm, vxz);
        }
    }
}

#define QRT__DW_ROW(NB, ASYM)                                                                  \
    static QRT_VNNI void qrt__dw_row_##NB##_##ASYM(                                            \
        const uint8_t *xr, int64_t xsn, int64_t len_in, int64_t pad, uint8_t *yr, int64_t ysn,  \
        int64_t len_out, int64_t nrows, const qrt__dw_blocks *B, int nb, uint32_t c0,           \
        int32_t wz, float scale, int32_t oz, int32_t lo, int32_t hi, uint8_t xz)                \
    {                                                                                          \
        qrt__dw_row(xr, xsn, len_in, pad, yr, ysn, len_out, nrows, B, NB ? NB : nb, ASYM, c0,  \
                    wz, scale, oz, lo, hi, xz);                                                \
    }
#define QRT__DW_ROWS(NB) QRT__DW_ROW(NB, 0) QRT__DW_ROW(NB, 1)
QRT__DW_ROWS(0) /* any block count (runtime loop) */
QRT__DW_ROWS(1)
QRT__DW_ROWS(2)
QRT__DW_ROWS(3)
#undef QRT__DW_ROWS
#undef QRT__DW_ROW

/** The depthwise four-phase path (qrt__dw_ok(p)); raw weights are the first K bytes of each
 *  output channel's packed block (tap quads in natural order; conv1d_pack.h). */
static QRT_VNNI qrt_status qrt__dw_run(const qrt_conv1d_params *p, const uint8_t *x,
                                       const int8_t *wpack, const int32_t *wsum,
                                       const qrt_conv1d_quant *q, uint8_t *y)
{
    const uint32_t K = p->kernel, mult = p->c_out / p->groups;
    const qrt_conv1d_layout l = qrt_conv1d_layout_of(1u, K);
    const int64_t per_oc = (int64_t)l.kc * l.cq * 4, d = p->dilation;
    const int nb = (int)(((int64_t)(K - 1) * d) / 4 + 1);
    typedef void (*row_fn)(const uint8_t *, int64_t, int64_t, int64_t, uint8_t *, int64_t,
                           int64_t, int64_t, const qrt__dw_blocks *, int, uint32_t, int32_t,
                           float, int32_t, int32_t, int32_t, uint8_t);
    static const row_fn rows[4][2] = {{qrt__dw_row_0_0, qrt__dw_row_0_1},
                                      {qrt__dw_row_1_0, qrt__dw_row_1_1},
                                      {qrt__dw_row_2_0, qrt__dw_row_2_1},
                                      {qrt__dw_row_3_0, qrt__dw_row_3_1}};
    qrt__dw_blocks B;
    for (int b = 0; b < QRT__DW_MAXBLK; ++b)
        B.ones[b] = 0;
    for (uint32_t k = 0; k < K; ++k)
        B.ones[k * d / 4] |= 1 << (8 * (k * d % 4));
    /* channels outer: a channel's weight blocks are built once for every batch row */
    for (int64_t oc = 0; oc < p->c_out; ++oc) {
        const int8_t *w = wpack + oc * per_oc;
        uint32_t wb[QRT__DW_MAXBLK] = {0};
        for (uint32_t k = 0; k < K; ++k)
            wb[k * d / 4] |= (uint32_t)(uint8_t)w[k] << (8 * (k * d % 4));
        for (int b = 0; b < nb; ++b)
            B.w[b] = (int32_t)wb[b];
        const int32_t wz = q->weight_zero[oc];
        const uint32_t c0 = (uint32_t)K * (uint32_t)p->input_zero * (uint32_t)wz -
                            (uint32_t)p->input_zero * (uint32_t)wsum[oc] +
                            (uint32_t)q->bias_q[oc];
        rows[nb <= 3 ? nb : 0][wz != 0](x + (oc / mult) * p->x_stride_c, p->x_stride_n,
                                        p->len_in, p->pad_left, y + oc * p->y_stride_c,
                                        p->y_stride_n, p->len_out, p->n, &B, nb, c0, wz,
                                        q->scale[oc], p->output_zero, p->output_min,
                                        p->output_max, (uint8_t)p->input_zero);
    }
    return QRT_OK;
}

/**
 * @brief Same contract as qrt_conv1d_u8_ref(), reading the packed weight instead of w.
 * @param[in]  wpack   [c_out][Kc][CQ][4] from qrt_conv1d_pack_weights()
 * @param[in]  wsum    [c_out] from qrt_conv1d_pack_weights()
 * @param[in]  scratch qrt_conv1d_u8__avx512vnni_scratch_size(p) bytes, any alignment
 * Bit-exact with qrt_conv1d_u8_ref().
 */
static QRT_VNNI qrt_status qrt_conv1d_u8__avx512vnni(const qrt_conv1d_params *p, const uint8_t *x,
                                                     const int8_t *wpack, const int32_t *wsum,
                                                     const qrt_conv1d_quant *q, void *out,
                                                     void *scratch)
{
    const qrt_status st = qrt_conv1d_check(p);
    if (st != QRT_OK)
        return st;
    if (qrt__dw_ok(p))
        return qrt__dw_run(p, x, wpack, wsum, q, (uint8_t *)out);
#ifndef QRT__C1_NOCHUNK
    {
        /* Long rows of a big layer: run the call over position chunks whose packed input stays
         * in L2 (each chunk packs only its own window), instead of packing the whole row. */
        const qrt_conv1d_layout l0 = qrt_conv1d_layout_of(p->c_in / p->groups, p->kernel);
        const int64_t per_pos = (int64_t)l0.cq * 4; /* packed bytes per position */
        int64_t chunk = ((int64_t)QRT__C1_CHUNK_BYTES / (per_pos > 0 ? per_pos : 1)) / 48 * 48;
        chunk = chunk < 96 ? 96 : chunk; /* tests build with QRT__C1_CHUNK_BYTES=1: 96 */
        /* at least two chunks (the first boundary is kept), so every sub-call is shorter
         * than this call and the recursion ends */
        if (p->groups == 1 && p->stride == 1 && p->len_in > 0 &&
            p->len_out > chunk + chunk / 2 && chunk - (int64_t)p->pad_left < p->len_in) {
            const size_t es = p->out_kind == QRT_CONV1D_OUT_F32 ? 4u : 1u;
            for (int64_t u0 = 0, u1; u0 < p->len_out; u0 = u1) {
                /* the last chunk takes a short tail, and every output whose window lies in
                 * the right padding alone: each chunk's first window overlaps the input */
                u1 = u0 + chunk;
                if (u1 + chunk / 2 >= p->len_out || u1 - (int64_t)p->pad_left >= p->len_in)
                    u1 = p->len_out;
                qrt_conv1d_params r = *p;
                const int64_t start = u0 - (int64_t)p->pad_left; /* first tap of u0 */
                const int64_t span = (u1 - u0 - 1) + (int64_t)(p->kernel - 1) * p->dilation + 1;
                const int64_t x0 = start > 0 ? start : 0;
                const int64_t avail = (int64_t)p->len_in - x0, need = start + span - x0;
                r.pad_left = (uint32_t)(start < 0 ? -start : 0);
                r.len_in = (uint32_t)(avail < 0 ? 0 : avail < need ? avail : need);
                r.len_out = (uint32_t)(u1 - u0);
                const qrt_status s2 = qrt_conv1d_u8__avx512vnni(
                    &r, x + x0 * p->x_stride_t, wpack, wsum, q,
                    (uint8_t *)out + (ptrdiff_t)(u0 * p->y_stride_t) * (ptrdiff_t)es, scratch);
                if (s2 != QRT_OK)
                    return s2;
            }
            return QRT_OK;
        }
    }
#endif
    const uint32_t cg = p->c_in / p->groups, og = p->c_out / p->groups;
    const qrt_conv1d_layout l = qrt_conv1d_layout_of(cg, p->kernel);
    const int64_t U = qrt__c1_row(p, &l), phases = l.im2col ? 1 : p->stride;
    const int64_t lo16 = qrt__c1_ceil16(p->len_out);
    const int64_t per_group = (int64_t)l.cq * phases * U; /* quads */
    const int64_t gchunk = qrt__c1_group_chunk(p, &l);
    const size_t xq_bytes = (size_t)per_group * 4u * (size_t)gchunk;
    uint8_t *sp = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    int32_t *xq = (int32_t *)sp;
    sp += (xq_bytes + 63u) & ~(size_t)63u;
    int64_t *koff = (int64_t *)sp;
    sp += ((size_t)l.kc * 8u + 63u) & ~(size_t)63u;
    int32_t *colsum = (int32_t *)sp;
    sp += ((size_t)p->len_in * 4u + 63u) & ~(size_t)63u;
    int32_t *win = (int32_t *)sp;
    sp += ((size_t)qrt__c1_ceil16(p->len_out) * 4u + 63u) & ~(size_t)63u;
    uint32_t *tmp = p->stride > 1 ? (uint32_t *)sp : NULL;

    int asym = 0;
    for (uint32_t oc = 0; oc < p->c_out; ++oc)
        asym |= q->weight_zero[oc] != 0;
    for (uint32_t k = 0; k < l.kc; ++k) {
        const int64_t sh = l.im2col ? 0 : (int64_t)k * p->dilation;
        koff[k] = (sh % p->stride) * U + sh / p->stride;
    }
    qrt__c1_ctx c;
    c.x = xq;
    c.koff = koff;
    c.cq_stride = phases * U;
    c.w = (const int32_t *)wpack;
    c.w_oc = (int64_t)l.kc * l.cq;
    c.kc = l.kc;
    c.cq = l.cq;
    c.wsum = wsum;
    c.wzero = q->weight_zero;
    c.bias_q = q->bias_q;
    c.scale = q->scale;
    c.bias_f = q->bias_f;
    c.win = asym ? win : NULL;
    c.xz = p->input_zero;
    c.taps = (int32_t)(cg * p->kernel);
    c.oz = p->output_zero;
    c.lo = p->output_min;
    c.hi = p->output_max;
    c.out_kind = p->out_kind;
    c.len_out = p->len_out;
    c.ysc = p->y_stride_c;
    c.yst = p->y_stride_t;
    const size_t esz = p->out_kind == QRT_CONV1D_OUT_F32 ? 4u : 1u;

    for (int64_t n = 0; n < p->n; ++n) {
        const uint8_t *xn = x + n * p->x_stride_n;
        c.y = (uint8_t *)out + (ptrdiff_t)(n * p->y_stride_n) * (ptrdiff_t)esz;
        if (gchunk > 1 && !asym) {
            /* One output channel per group (depthwise): pack a chunk of groups, then run tiles
             * whose 8 rows are 8 groups, each reading its own packed input. */
            c.x_oc = per_group;
            for (int64_t g0 = 0; g0 < p->groups; g0 += gchunk) {
                const int64_t gn = p->groups - g0 < gchunk ? p->groups - g0 : gchunk;
                for (int64_t g = 0; g < gn; ++g)
                    qrt__c1_pack_group(p, &l, xn, (uint32_t)(g0 + g), U, phases,
                                       (uint32_t *)xq + g * per_group, tmp);
                for (int64_t t0 = 0; t0 < p->len_out; t0 += 16 * QRT__C1_MT) {
                    int64_t mt = (p->len_out - t0 + 15) / 16;
                    mt = mt > QRT__C1_MT ? QRT__C1_MT : mt;
                    for (int64_t ob = 0; ob < gn; ob += QRT__C1_NR) {
                        const int64_t nr = gn - ob < QRT__C1_NR ? gn - ob : QRT__C1_NR;
                        c.x = xq + ob * per_group;
                        qrt__c1_dwtiles[nr - 1][mt - 1](&c, g0 + ob, t0);
                    }
                }
            }
            continue;
        }
        c.x = xq;
        for (uint32_t g = 0; g < p->groups; ++g) {
            /* 1. pack this group's input into quads */
            qrt__c1_pack_group(p, &l, xn, g, U, phases, (uint32_t *)xq, tmp);
            /* 2. window sums, only needed for asymmetric weights */
            if (asym) {
                for (int64_t tm = 0; tm < p->len_in; ++tm) {
                    int32_t s = 0;
                    for (uint32_t ic = 0; ic < cg; ++ic)
                        s += xn[(int64_t)(g * cg + ic) * p->x_stride_c + tm * p->x_stride_t];
                    colsum[tm] = s;
                }
                for (int64_t t = 0; t < lo16; ++t) {
                    int32_t s = 0;
                    if (t < p->len_out)
                        for (uint32_t k = 0; k < p->kernel; ++k) {
                            const int64_t tm = t * p->stride + (int64_t)k * p->dilation -
                                               p->pad_left;
                            s += (tm >= 0 && tm < p->len_in) ? colsum[tm]
                                                             : (int32_t)cg * p->input_zero;
                        }
                    win[t] = s;
                }
            }
            /* 3. tiles: positions outer (the packed input block stays in L1), channels inner */
            for (int64_t t0 = 0; t0 < p->len_out; t0 += 16 * QRT__C1_MT) {
                int64_t mt = (p->len_out - t0 + 15) / 16;
                mt = mt > QRT__C1_MT ? QRT__C1_MT : mt;
                for (uint32_t ob = 0; ob < og; ob += QRT__C1_NR) {
                    const uint32_t nr = og - ob < QRT__C1_NR ? og - ob : QRT__C1_NR;
                    qrt__c1_tiles[nr - 1][mt - 1](&c, (int64_t)g * og + ob, t0);
                }
            }
        }
    }
    return QRT_OK;
}

#endif /* QRT_CONV1D_AVX512VNNI_H */

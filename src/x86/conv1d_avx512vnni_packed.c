/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_avx512vnni_packed.c
 * @brief The packed-quad ("lanes over time") path of qrt_conv1d_u8__avx512vnni(): the input of
 *        each group is packed into quads ([CQ][stride phase][U] uint32; stride phases
 *        de-interleaved so every tap is a unit-stride load), and tiles of up to 8 output channels
 *        x 3 vectors of 16 positions accumulate vpdpbusd products with broadcast weight quads
 *        (conv1d_pack.h).  The math is derived in conv1d_avx512vnni.c's file comment.
 */
#include "conv1d_avx512vnni.h"

/** dst[i] = quad of the 4 rows at times time0[j] + i*step; padding x_zero, absent rows 0. */
static inline void qrt__c1_quads_scalar(const uint8_t *const base[4], const int64_t time0[4],
                                        int64_t step, int64_t i0, int64_t i1, int64_t len,
                                        int64_t xst, uint8_t xz, uint32_t *dst) {
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

/** The quads of 64 positions of 4 unit-stride rows r[0..3] (already loaded): the first nv
 *  vectors of 16 quads into dst[0 .. 16 nv).  The byte/word unpacks work within 128-bit
 *  lanes; two rounds of 128-bit shuffles put the quads in order. */
static inline __attribute__((always_inline)) QRT_VNNI void qrt__c1_quad64(const __m512i r[4],
                                                                          uint32_t *dst,
                                                                          int64_t nv) {
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
    _mm512_storeu_si512((void *)dst, _mm512_shuffle_i64x2(t0, t1, 0x88));
    if (nv > 1) _mm512_storeu_si512((void *)(dst + 16), _mm512_shuffle_i64x2(t0, t1, 0xDD));
    if (nv > 2) _mm512_storeu_si512((void *)(dst + 32), _mm512_shuffle_i64x2(t2, t3, 0x88));
    if (nv > 3) _mm512_storeu_si512((void *)(dst + 48), _mm512_shuffle_i64x2(t2, t3, 0xDD));
}

/** The quads of 16 positions of 4 rows r[0..3] (already loaded) as four vectors of 4. */
static inline __attribute__((always_inline)) QRT_VNNI void qrt__c1_quad16(const __m128i r[4],
                                                                          __m128i o[4]) {
    const __m128i ab_lo = _mm_unpacklo_epi8(r[0], r[1]), ab_hi = _mm_unpackhi_epi8(r[0], r[1]);
    const __m128i cd_lo = _mm_unpacklo_epi8(r[2], r[3]), cd_hi = _mm_unpackhi_epi8(r[2], r[3]);
    o[0] = _mm_unpacklo_epi16(ab_lo, cd_lo);
    o[1] = _mm_unpackhi_epi16(ab_lo, cd_lo);
    o[2] = _mm_unpacklo_epi16(ab_hi, cd_hi);
    o[3] = _mm_unpackhi_epi16(ab_hi, cd_hi);
}

static inline QRT_VNNI void qrt__c1_quads(const uint8_t *const base[4], const int64_t time0[4],
                                          int64_t step, int64_t count, int64_t len, int64_t xst,
                                          int64_t xsc, uint8_t xz, uint32_t *dst, uint32_t *tmp) {
    if (step > 1 && xst == 1 && tmp && count > 0) {
        /* Strided taps: interleave every position with the unit-stride vector path, then keep
         * every step-th quad (one 4-byte copy each instead of four byte gathers). */
        const int64_t all = (count - 1) * step + 1;
        qrt__c1_quads(base, time0, 1, all, len, 1, xsc, xz, tmp, NULL);
        for (int64_t i = 0; i < count; ++i) dst[i] = tmp[i * step];
        return;
    }
    int64_t lo = 0, hi = count;
    for (int j = 0; j < 4; ++j)
        if (base[j]) {
            lo = lo > -time0[j] ? lo : -time0[j];
            const int64_t h = step == 1 ? len - time0[j] : (len - time0[j] + step - 1) / step;
            hi = hi < h ? hi : h;
        }
    if (hi < lo) hi = lo;
    if (lo > count) lo = hi = count;
    qrt__c1_quads_scalar(base, time0, step, 0, lo, len, xst, xz, dst);
    int64_t i = lo;
    if (step == 1 && xst == 1) {
        /* Unit-stride rows: interleave 64 positions of 4 rows at a time. */
        const __m512i z512 = _mm512_setzero_si512();
        for (; i + 64 <= hi; i += 64) {
            __m512i r[4];
            for (int j = 0; j < 4; ++j)
                r[j] = base[j] ? _mm512_loadu_si512((const void *)(base[j] + time0[j] + i)) : z512;
            qrt__c1_quad64(r, dst + i, 4);
        }
        const __m128i zero = _mm_setzero_si128();
        for (; i + 16 <= hi; i += 16) {
            __m128i r[4];
            for (int j = 0; j < 4; ++j)
                r[j] = base[j] ? _mm_loadu_si128((const __m128i *)(base[j] + time0[j] + i)) : zero;
            __m128i o[4];
            qrt__c1_quad16(r, o);
            for (int b = 0; b < 4; ++b) _mm_storeu_si128((__m128i *)(dst + i + 4 * b), o[b]);
        }
        /* The rest (a row's last < 16 positions, then the right padding up to count), 16 at a
         * time with masked loads: a row's byte past its end is x_zero (the masked-off lanes
         * take the fill) and is never read; absent rows stay 0.  i >= lo here, so no row is
         * before its start.  This was the scalar loop's work: 19 % of a 7x7 1x1 call. */
        const __m128i vxz = _mm_set1_epi8((char)xz);
        for (; i < count; i += 16) {
            __m128i r[4];
            for (int j = 0; j < 4; ++j) {
                if (!base[j]) {
                    r[j] = zero;
                    continue;
                }
                const int64_t nv = len - time0[j] - i;
                const __mmask16 mk = nv >= 16 ? (__mmask16)0xFFFF
                                     : nv <= 0 ? (__mmask16)0
                                               : (__mmask16)((1u << nv) - 1u);
                r[j] = mk ? _mm_mask_loadu_epi8(vxz, mk, (const void *)(base[j] + time0[j] + i))
                          : vxz;
            }
            __m128i o[4];
            qrt__c1_quad16(r, o);
            const int64_t left = count - i;
            for (int b = 0; b < 4; ++b) {
                const int64_t nq = left - 4 * b;
                if (nq <= 0) break;
                _mm_mask_storeu_epi32((void *)(dst + i + 4 * b),
                                      nq >= 4 ? (__mmask8)0xF : (__mmask8)((1u << nq) - 1u), o[b]);
            }
        }
        return;
    } else if (xsc == 1 && base[0] && base[1] == base[0] + 1 && base[2] == base[0] + 2 &&
               base[3] == base[0] + 3 && time0[1] == time0[0] && time0[2] == time0[0] &&
               time0[3] == time0[0]) {
        /* Channels adjacent in memory (linear's [rows][in] input): one 4-byte copy per quad. */
        for (; i < hi; ++i) memcpy(dst + i, base[0] + (time0[0] + i * step) * xst, 4);
    }
    qrt__c1_quads_scalar(base, time0, step, i, count, len, xst, xz, dst);
}

QRT_VNNI void qrt__c1_pack_quads(const uint8_t *const base[4], const int64_t time0[4],
                                 int64_t count, int64_t len, int64_t xsc, uint8_t xz,
                                 uint32_t *dst) {
    qrt__c1_quads(base, time0, 1, count, len, 1, xsc, xz, dst, NULL);
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

static inline __attribute__((always_inline)) QRT_VNNI void qrt__c1_tile(const qrt__c1_ctx *c,
                                                                        int64_t oc0, int64_t t0,
                                                                        const int NR, const int MT,
                                                                        const int DW) {
    const int32_t xz = c->xz, taps = c->taps, oz = c->oz;
    const int f32out = c->out_kind == QRT_CONV1D_OUT_F32;
    uint32_t c0s[QRT__C1_NR];
    float scs[QRT__C1_NR], bfs[QRT__C1_NR];
    int32_t wzs[QRT__C1_NR];
    for (int r = 0; r < NR; ++r) {
        const int64_t oc = oc0 + r;
        const int32_t wz = c->wzero[oc];
        /* Corrections in wrapping uint32 arithmetic (see the file comment). */
        uint32_t c0 =
            (uint32_t)taps * (uint32_t)xz * (uint32_t)wz - (uint32_t)xz * (uint32_t)c->wsum[oc];
        if (!f32out) c0 += (uint32_t)c->bias_q[oc];
        c0s[r] = c0;
        wzs[r] = wz;
        scs[r] = c->scale[oc];
        bfs[r] = f32out ? c->bias_f[oc] : 0.0f;
    }
    /* The accumulators start at the per-channel constant c0 (bias and zero-point terms): the
     * sum is taken mod 2^32, so the order of the additions does not change it, and the epilogue
     * saves one add per vector. */
    __m512i acc[QRT__C1_NR * QRT__C1_MT]; /* NR * MT <= 24: one flat array, so gcc keeps it in zmm */
    for (int r = 0; r < NR; ++r)
        for (int m = 0; m < MT; ++m) acc[r * MT + m] = _mm512_set1_epi32((int32_t)c0s[r]);
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
                        acc[r * MT + m] = _mm512_dpbusd_epi32(
                            acc[r * MT + m],
                            _mm512_loadu_si512((const void *)(xr + r * c->x_oc + 16 * m)), wb);
                }
            } else {
                __m512i xv[QRT__C1_MTX];
                for (int m = 0; m < MT; ++m)
                    xv[m] = _mm512_loadu_si512((const void *)(xr + 16 * m));
                for (int r = 0; r < NR; ++r) {
                    const __m512i wb = _mm512_set1_epi32(wk[r * c->w_oc + q]);
                    for (int m = 0; m < MT; ++m)
                        acc[r * MT + m] = _mm512_dpbusd_epi32(acc[r * MT + m], xv[m], wb);
                }
            }
        }
    }
    /* Epilogue. Everything is read into locals first: the byte stores below may alias any
     * memory, and would otherwise force the compiler to reload the context on every store. */
    const int64_t len_out = c->len_out, ysc = c->ysc, yst = c->yst;
    const int32_t *const win = c->win;
    uint8_t *const ybase = c->y;
    const __m512i vlo = _mm512_set1_epi32(c->lo - oz), vhi = _mm512_set1_epi32(c->hi - oz);
    const __m512i voz = _mm512_set1_epi32(oz);
    __m512i vwin[QRT__C1_MTX];
    __mmask16 mk[QRT__C1_MTX];
    for (int m = 0; m < MT; ++m) {
        const int64_t left = len_out - (t0 + 16 * m);
        mk[m] = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
        vwin[m] = win ? _mm512_loadu_si512(win + t0 + 16 * m) : _mm512_setzero_si512();
    }
    if (!f32out && yst == 1) {
        /* The common case (NCL quint8 output), fully unrolled so accumulators stay in zmm.
         * QNNPACK's SSE2 tail widened to zmm: packssdw, paddsw (zero point), packuswb, byte
         * clamp -- equal to clamp(rne(y) + zp, lo, hi) for every int32 (see the depthwise
         * path).  The packs leave, per 128-bit lane L, the dwords of positions 4L.. of
         * vectors 0..3; one vpermd restores time order and one masked store writes the row. */
        const __m512i voz16 = _mm512_set1_epi16((short)oz);
        const __m512i vlo8 = _mm512_set1_epi8((char)c->lo), vhi8 = _mm512_set1_epi8((char)c->hi);
        const int clamp_lo = c->lo > 0, clamp_hi = c->hi < 255;
        const __m512i perm =
            _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
        const int64_t left = len_out - t0, nb = left < 16 * MT ? left : 16 * MT;
        const __mmask64 ms = nb >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << nb) - 1);
#pragma GCC unroll 8
        for (int r = 0; r < NR; ++r) {
            const __m512i vwz = _mm512_set1_epi32(wzs[r]);
            const __m512 vs = _mm512_set1_ps(scs[r]);
            __m512i f[4];
#pragma GCC unroll 4
            for (int m = 0; m < 4; ++m) {
                if (m >= MT) {
                    f[m] = _mm512_setzero_si512();
                    continue;
                }
                __m512i v = acc[r * MT + m];
                if (win) v = _mm512_sub_epi32(v, _mm512_mullo_epi32(vwz, vwin[m]));
                f[m] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(v), vs));
            }
            const __m512i h01 = _mm512_adds_epi16(_mm512_packs_epi32(f[0], f[1]), voz16);
            const __m512i h23 = _mm512_adds_epi16(_mm512_packs_epi32(f[2], f[3]), voz16);
            __m512i b = _mm512_permutexvar_epi32(perm, _mm512_packus_epi16(h01, h23));
            if (clamp_lo) b = _mm512_max_epu8(b, vlo8); /* packus already clamped to [0, 255] */
            if (clamp_hi) b = _mm512_min_epu8(b, vhi8);
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
                const __m512i v = acc[r * MT + m];
                const __m512 f = _mm512_mul_ps(
                    _mm512_cvtepi32_ps(
                        win ? _mm512_sub_epi32(
                                  v, _mm512_mullo_epi32(_mm512_set1_epi32(wzs[r]), vwin[m]))
                            : v),
                    _mm512_set1_ps(scs[r]));
                const __m512 y = _mm512_add_ps(f, _mm512_set1_ps(bfs[r]));
                lo[r] = _mm512_castps512_ps256(y);
                hi[r] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(y), 1));
            }
            const int64_t t = t0 + 16 * m, nt = len_out - t < 16 ? len_out - t : 16;
            float *dst = (float *)ybase + oc0 + t * yst;
            for (int h = 0; h < 2; ++h) {
                const __m256 *rw = h ? hi : lo;
                const __m256 a0 = _mm256_unpacklo_ps(rw[0], rw[1]),
                             a1 = _mm256_unpackhi_ps(rw[0], rw[1]);
                const __m256 a2 = _mm256_unpacklo_ps(rw[2], rw[3]),
                             a3 = _mm256_unpackhi_ps(rw[2], rw[3]);
                const __m256 a4 = _mm256_unpacklo_ps(rw[4], rw[5]),
                             a5 = _mm256_unpackhi_ps(rw[4], rw[5]);
                const __m256 a6 = _mm256_unpacklo_ps(rw[6], rw[7]),
                             a7 = _mm256_unpackhi_ps(rw[6], rw[7]);
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
                __m512i v = acc[r * MT + m];
                if (win)
                    v = _mm512_sub_epi32(v, _mm512_mullo_epi32(_mm512_set1_epi32(wzs[r]), vwin[m]));
                const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_set1_ps(scs[r]));
                __m512i q = _mm512_cvtps_epi32(f);
                q = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(q, vlo), vhi), voz);
                b[r] = _mm512_cvtepi32_epi8(q);
            }
            __m128i tr[8]; /* 8 channels x 16 positions -> 16 positions x 8 channels */
            qrt__c1_tr8x16(b, tr);
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
        const __m512i vwz = _mm512_set1_epi32(wzs[r]);
        const __m512 vs = _mm512_set1_ps(scs[r]);
        for (int m = 0; m < MT; ++m) {
            const int64_t t = t0 + 16 * m;
            __m512i v = acc[r * MT + m];
            if (win) v = _mm512_sub_epi32(v, _mm512_mullo_epi32(vwz, vwin[m]));
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
                    for (int64_t i = 0; i < 16 && i < len_out - t; ++i) dst[i * yst] = tmp[i];
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
                    for (int64_t i = 0; i < 16 && i < len_out - t; ++i) dst[i * yst] = tmp[i];
                }
            }
        }
    }
}

/**
 * The 1x1 tile: one reduction row (kc == 1: every 1x1 conv, and linear), quint8 output with
 * unit time stride (NCL rows).  The same sums and the same epilogue instructions as
 * qrt__c1_tile()'s common case, in a function whose accumulators are only ever indexed by
 * constants (gcc keeps them in zmm instead of a stack copy that every tile stores and reloads)
 * and whose vpdpbusd keep their accumulator register (qrt__c1_dp).
 */
static inline __attribute__((always_inline)) QRT_VNNI void qrt__c1_tile1(const qrt__c1_ctx *c,
                                                                         int64_t oc0, int64_t t0,
                                                                         const int NR,
                                                                         const int MT) {
    const int32_t xz = c->xz, taps = c->taps, oz = c->oz;
    __m512i acc[QRT__C1_NR * QRT__C1_MT];
#pragma GCC unroll 8
    for (int r = 0; r < NR; ++r) {
        const int64_t oc = oc0 + r;
        /* bias and zero-point terms, wrapping (the file comment of conv1d_avx512vnni.c) */
        const uint32_t c0 = (uint32_t)taps * (uint32_t)xz * (uint32_t)c->wzero[oc] -
                            (uint32_t)xz * (uint32_t)c->wsum[oc] + (uint32_t)c->bias_q[oc];
#pragma GCC unroll 4
        for (int m = 0; m < MT; ++m) acc[r * MT + m] = _mm512_set1_epi32((int32_t)c0);
    }
    {
        const int64_t cs = c->cq_stride, wo = c->w_oc;
        const int32_t *xr = c->x + c->koff[0] + t0, *w0 = c->w + oc0 * c->w_oc;
        const uint32_t cq = c->cq;
        for (uint32_t q = 0; q < cq; ++q, xr += cs, ++w0) {
            __m512i xv[QRT__C1_MTX];
#pragma GCC unroll 4
            for (int m = 0; m < MT; ++m) xv[m] = _mm512_loadu_si512((const void *)(xr + 16 * m));
#pragma GCC unroll 8
            for (int r = 0; r < NR; ++r) {
                const __m512i wb = _mm512_set1_epi32(w0[r * wo]);
#pragma GCC unroll 4
                for (int m = 0; m < MT; ++m)
                    acc[r * MT + m] = qrt__c1_dp(acc[r * MT + m], xv[m], wb);
            }
        }
    }
    const int64_t left = c->len_out - t0, nb = left < 16 * MT ? left : 16 * MT;
    const __mmask64 ms = nb >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << nb) - 1);
    const int32_t *const win = c->win;
    __m512i vwin[QRT__C1_MTX];
#pragma GCC unroll 4
    for (int m = 0; m < MT; ++m)
        vwin[m] = win ? _mm512_loadu_si512(win + t0 + 16 * m) : _mm512_setzero_si512();
    const __m512i voz16 = _mm512_set1_epi16((short)oz);
    const __m512i vlo8 = _mm512_set1_epi8((char)c->lo), vhi8 = _mm512_set1_epi8((char)c->hi);
    const int clamp_lo = c->lo > 0, clamp_hi = c->hi < 255;
    const __m512i perm = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    uint8_t *const ybase = c->y;
    const int64_t ysc = c->ysc;
#pragma GCC unroll 8
    for (int r = 0; r < NR; ++r) {
        const int64_t oc = oc0 + r;
        const __m512i vwz = _mm512_set1_epi32(c->wzero[oc]);
        const __m512 vs = _mm512_set1_ps(c->scale[oc]);
        __m512i f[4];
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) {
            if (m >= MT) {
                f[m] = _mm512_setzero_si512();
                continue;
            }
            __m512i v = acc[r * MT + m];
            if (win) v = _mm512_sub_epi32(v, _mm512_mullo_epi32(vwz, vwin[m]));
            f[m] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(v), vs));
        }
        const __m512i h01 = _mm512_adds_epi16(_mm512_packs_epi32(f[0], f[1]), voz16);
        const __m512i h23 = _mm512_adds_epi16(_mm512_packs_epi32(f[2], f[3]), voz16);
        __m512i b = _mm512_permutexvar_epi32(perm, _mm512_packus_epi16(h01, h23));
        if (clamp_lo) b = _mm512_max_epu8(b, vlo8); /* packus already clamped to [0, 255] */
        if (clamp_hi) b = _mm512_min_epu8(b, vhi8);
        _mm512_mask_storeu_epi8(ybase + oc * ysc + t0, ms, b);
    }
}

#define QRT__C1_TILE(NR, MT)                                                                       \
    static QRT_VNNI void qrt__c1_tile_##NR##_##MT(const qrt__c1_ctx *c, int64_t oc0, int64_t t0) { \
        qrt__c1_tile(c, oc0, t0, NR, MT, 0);                                                       \
    }                                                                                              \
    static QRT_VNNI void qrt__c1_tile1_##NR##_##MT(const qrt__c1_ctx *c, int64_t oc0, int64_t t0) {\
        qrt__c1_tile1(c, oc0, t0, NR, MT);                                                         \
    }                                                                                              \
    static QRT_VNNI void qrt__c1_dwtile_##NR##_##MT(const qrt__c1_ctx *c, int64_t oc0,             \
                                                    int64_t t0) {                                  \
        qrt__c1_tile(c, oc0, t0, NR, MT, 1);                                                       \
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
/* 4-vector tiles (64 positions: one aligned full-line store per row when rows are 64-byte
 * aligned, and a 7x7 image in one pass), at most 6 rows: 24 accumulators, as the 8 x 3 tile. */
#define QRT__C1_TILE4(NR)                                                                          \
    static QRT_VNNI void qrt__c1_tile_##NR##_4(const qrt__c1_ctx *c, int64_t oc0, int64_t t0) {    \
        qrt__c1_tile(c, oc0, t0, NR, 4, 0);                                                        \
    }                                                                                              \
    static QRT_VNNI void qrt__c1_tile1_##NR##_4(const qrt__c1_ctx *c, int64_t oc0, int64_t t0) {   \
        qrt__c1_tile1(c, oc0, t0, NR, 4);                                                          \
    }
QRT__C1_TILE4(1)
QRT__C1_TILE4(2)
QRT__C1_TILE4(3)
QRT__C1_TILE4(4)
QRT__C1_TILE4(5)
QRT__C1_TILE4(6)
#undef QRT__C1_TILE4

typedef void (*qrt__c1_tile_fn)(const qrt__c1_ctx *, int64_t, int64_t);
#define QRT__C1_ROW(P, NR) {P##NR##_1, P##NR##_2, P##NR##_3}
static const qrt__c1_tile_fn qrt__c1_tiles[QRT__C1_NR][QRT__C1_MT] = {
    QRT__C1_ROW(qrt__c1_tile_, 1), QRT__C1_ROW(qrt__c1_tile_, 2), QRT__C1_ROW(qrt__c1_tile_, 3),
    QRT__C1_ROW(qrt__c1_tile_, 4), QRT__C1_ROW(qrt__c1_tile_, 5), QRT__C1_ROW(qrt__c1_tile_, 6),
    QRT__C1_ROW(qrt__c1_tile_, 7), QRT__C1_ROW(qrt__c1_tile_, 8)};
static const qrt__c1_tile_fn qrt__c1_tiles1[QRT__C1_NR][QRT__C1_MT] = {
    QRT__C1_ROW(qrt__c1_tile1_, 1), QRT__C1_ROW(qrt__c1_tile1_, 2),
    QRT__C1_ROW(qrt__c1_tile1_, 3), QRT__C1_ROW(qrt__c1_tile1_, 4),
    QRT__C1_ROW(qrt__c1_tile1_, 5), QRT__C1_ROW(qrt__c1_tile1_, 6),
    QRT__C1_ROW(qrt__c1_tile1_, 7), QRT__C1_ROW(qrt__c1_tile1_, 8)};
static const qrt__c1_tile_fn qrt__c1_dwtiles[QRT__C1_NR][QRT__C1_MT] = {
    QRT__C1_ROW(qrt__c1_dwtile_, 1), QRT__C1_ROW(qrt__c1_dwtile_, 2),
    QRT__C1_ROW(qrt__c1_dwtile_, 3), QRT__C1_ROW(qrt__c1_dwtile_, 4),
    QRT__C1_ROW(qrt__c1_dwtile_, 5), QRT__C1_ROW(qrt__c1_dwtile_, 6),
    QRT__C1_ROW(qrt__c1_dwtile_, 7), QRT__C1_ROW(qrt__c1_dwtile_, 8)};
#undef QRT__C1_ROW
static const qrt__c1_tile_fn qrt__c1_tiles4[QRT__C1_NR4] = {
    qrt__c1_tile_1_4, qrt__c1_tile_2_4, qrt__c1_tile_3_4,
    qrt__c1_tile_4_4, qrt__c1_tile_5_4, qrt__c1_tile_6_4};
static const qrt__c1_tile_fn qrt__c1_tiles41[QRT__C1_NR4] = {
    qrt__c1_tile1_1_4, qrt__c1_tile1_2_4, qrt__c1_tile1_3_4,
    qrt__c1_tile1_4_4, qrt__c1_tile1_5_4, qrt__c1_tile1_6_4};

/** Vectors (of 16 positions) in the position block that starts at vector v of nv: blocks of 4,
 *  except that a tail of 1 or 2 vectors is folded into blocks of 3 (4 + 1 -> 3 + 2, 4 + 4 + 1
 *  -> 3 + 3 + 3, 4 + 2 -> 3 + 3): thin tiles reuse each broadcast weight for few vectors. */
static inline int64_t qrt__c1_block(int64_t v, int64_t nv) {
    const int64_t left = nv - v, rem = nv % 4;
    if (left <= 4) return left;
    if (rem == 1 && nv >= 9 && left <= 9) return 3;
    if (rem == 1 && left == 5) return 3;
    if (rem == 2 && left <= 6) return 3;
    return 4;
}

/** Pack group g of input xn into quads at dst ([CQ][phases][U]). */
static inline QRT_VNNI void qrt__c1_pack_group(const qrt_conv1d_params *p,
                                               const qrt_conv1d_layout *l, const uint8_t *xn,
                                               uint32_t g, int64_t U, int64_t phases,
                                               uint32_t *dst0, uint32_t *tmp) {
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
                time0[j] =
                    l->im2col ? (int64_t)k * p->dilation - p->pad_left : ph - (int64_t)p->pad_left;
            }
            uint32_t *dst = dst0 + (rq * phases + ph) * U;
            if (!l->im2col && phases == 2 && p->x_stride_t == 1) {
                /* Stride 2: interleave 64 positions at a time into an L1-resident buffer and
                 * split them into the even and odd phase rows with two permutes per 32 quads. */
                if (ph == 1) continue;
                uint32_t buf[64] __attribute__((aligned(64)));
                const __m512i ie =
                    _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
                const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
                for (int64_t u = 0; u < U; u += 32) {
                    const int64_t cnt = U - u >= 32 ? 64 : 2 * (U - u);
                    int64_t tu[4];
                    for (int j = 0; j < 4; ++j) tu[j] = time0[j] + 2 * u;
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
                    qrt__c1_quads(base, time0, 1, U * phases, p->len_in, 1, p->x_stride_c, xz, tmp,
                                  NULL);
                for (int64_t u = 0; u < U; ++u) dst[u] = tmp[u * phases + ph];
            } else {
                qrt__c1_quads(base, time0, p->stride, U, p->len_in, p->x_stride_t, p->x_stride_c,
                              xz, dst, tmp);
            }
        }
}

/** Pack positions [t0, t0 + cnt) (cnt a multiple of 16, at most 64) of group g of a 1x1
 *  unit-stride layer into dst ([CQ][cnt]): the block that one position block's tiles read,
 *  packed just before them, so it is written to and read from L1 instead of making a pass of
 *  its own over the whole row.  Quad rows whose four channels all exist take one masked
 *  64-byte load per row (positions past the input read as x_zero, bytes past the block are
 *  not read); the others (a group's last quad row, left padding) take qrt__c1_quads.  Both
 *  give the bytes qrt__c1_pack_group gives. */
static inline QRT_VNNI void qrt__c1_pack_block(const qrt_conv1d_params *p,
                                               const qrt_conv1d_layout *l, const uint8_t *xn,
                                               uint32_t g, int64_t t0, int64_t cnt,
                                               uint32_t *dst) {
    const uint32_t cg = p->c_in / p->groups;
    const int64_t xsc = p->x_stride_c, tm = t0 - (int64_t)p->pad_left;
    const uint8_t xz = (uint8_t)p->input_zero;
    const uint8_t *x0 = xn + (int64_t)g * cg * xsc;
    const int64_t real = (int64_t)p->len_in - tm, take = real < cnt ? real : cnt;
    const __mmask64 mk = take >= 64 ? ~(__mmask64)0
                         : take <= 0 ? (__mmask64)0
                                     : (((__mmask64)1 << take) - 1);
    const __m512i vxz = _mm512_set1_epi8((char)xz);
    for (uint32_t rq = 0; rq < l->cq; ++rq, dst += cnt) {
        if (tm >= 0 && 4u * rq + 3u < cg) {
            const uint8_t *row = x0 + (int64_t)(4u * rq) * xsc + tm;
            __m512i r[4];
            for (int j = 0; j < 4; ++j)
                r[j] = _mm512_mask_loadu_epi8(vxz, mk, (const void *)(row + j * xsc));
            qrt__c1_quad64(r, dst, cnt / 16);
            continue;
        }
        const uint8_t *base[4];
        int64_t time0[4];
        for (int j = 0; j < 4; ++j) {
            base[j] = 4u * rq + (uint32_t)j < cg ? x0 + (int64_t)(4u * rq + (uint32_t)j) * xsc
                                                 : NULL;
            time0[j] = tm;
        }
        qrt__c1_quads(base, time0, 1, cnt, p->len_in, 1, xsc, xz, dst, NULL);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* The last 1..4 positions of a 1x1 row, with the lanes over 4 positions x 4 channel quads     */
/* ---------------------------------------------------------------------------------------- */

/**
 * Pack the 4 positions t .. t + 3 of the cg channels from x0 (channel 0, position t; rows
 * xsc apart) as [cg / 16][4 positions][16 channels] bytes at xt: per 16 channels one
 * vpgatherdd of each row's 4 bytes ([channel][position]), an in-lane 4 x 4 byte transpose
 * and a dword permute ([position][channel]).  Channels past cg are 0.
 */
static inline QRT_VNNI void qrt__c1_tail_pack(const uint8_t *x0, int64_t xsc, uint32_t cg,
                                              uint8_t *xt) {
    const __m512i idx = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32((int32_t)xsc));
    const __m512i tr = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    const __m512i dp = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    for (uint32_t c = 0; c < cg; c += 16, xt += 64) {
        const __mmask16 m = cg - c >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (cg - c)) - 1u);
        const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, idx,
                                                      (const void *)(x0 + (int64_t)c * xsc), 1);
        _mm512_store_si512((void *)xt, _mm512_permutexvar_epi32(dp, _mm512_shuffle_epi8(v, tr)));
    }
}

/**
 * The row tail of output channels oc0 .. oc0 + nr - 1 (nr <= 8) at positions t .. t + 3, from
 * qrt__c1_tail_pack's xt: lane (position p, quad j) of channel r's accumulator sums the
 * products of quads 4i + j, so one vpdpbusd of the 64 packed bytes by channel r's 16 weight
 * bytes (broadcast to the four 128-bit lanes) does 4 positions x 16 channels, the work of four
 * vpdpbusd of a 16-position vector here.  Two rounds of unpacks and adds (wrapping, so the
 * sums equal the tiles' mod 2^32) leave per 4 channels one vector of [position][channel];
 * then qrt__c1_tile1's epilogue instructions per lane (the constant c0, cvtdq2ps, mulps,
 * cvtps2dq, packssdw, paddsw, packuswb, the byte clamp), and a byte transpose to 4 bytes per
 * channel row.  t + 3 < len_out; the positions before it may overlap the last full vector's
 * (the same bytes written again).
 */
static inline __attribute__((always_inline)) QRT_VNNI void
qrt__c1_tail_tile(const qrt__c1_ctx *c, const uint8_t *xt, int64_t oc0, int64_t t, const int nr) {
    const uint32_t cq = c->cq;
    const int64_t wo = c->w_oc * 4; /* bytes per output channel's packed row */
    const int8_t *w0 = (const int8_t *)(c->w + oc0 * c->w_oc);
    __m512i acc[8];
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) acc[r] = _mm512_setzero_si512();
    uint32_t q = 0;
    for (; q + 4 <= cq; q += 4) {
        const __m512i xv = _mm512_load_si512((const void *)(xt + 16 * q));
#pragma GCC unroll 8
        for (int r = 0; r < nr; ++r)
            acc[r] = qrt__c1_dp(acc[r], xv,
                                _mm512_broadcast_i32x4(_mm_loadu_si128(
                                    (const __m128i *)(const void *)(w0 + r * wo + 4 * q))));
    }
    if (q < cq) { /* the last 1..3 quads: the next row's bytes are not read */
        const __mmask8 m = (__mmask8)((1u << (cq - q)) - 1u);
        const __m512i xv = _mm512_load_si512((const void *)(xt + 16 * q));
#pragma GCC unroll 8
        for (int r = 0; r < nr; ++r)
            acc[r] = qrt__c1_dp(acc[r], xv,
                                _mm512_broadcast_i32x4(_mm_maskz_loadu_epi32(
                                    m, (const void *)(w0 + r * wo + 4 * q))));
    }
    uint32_t c0[8] = {0};
    float sc[8] = {0};
    for (int r = 0; r < nr; ++r) {
        const int64_t oc = oc0 + r; /* weight_zero is 0 (qrt__c1_tail_ok) */
        c0[r] = (uint32_t)c->bias_q[oc] - (uint32_t)c->xz * (uint32_t)c->wsum[oc];
        sc[r] = c->scale[oc];
    }
    __m512i f[2];
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
        const __m512i *a = acc + 4 * h;
        const __m512i s01 = _mm512_add_epi32(_mm512_unpacklo_epi32(a[0], a[1]),
                                             _mm512_unpackhi_epi32(a[0], a[1]));
        const __m512i s23 = _mm512_add_epi32(_mm512_unpacklo_epi32(a[2], a[3]),
                                             _mm512_unpackhi_epi32(a[2], a[3]));
        __m512i v = _mm512_add_epi32(_mm512_unpacklo_epi64(s01, s23),
                                     _mm512_unpackhi_epi64(s01, s23)); /* [p][channel 4h + k] */
        v = _mm512_add_epi32(v, _mm512_broadcast_i32x4(
                                    _mm_loadu_si128((const __m128i *)(const void *)(c0 + 4 * h))));
        f[h] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(v),
                                                _mm512_broadcast_f32x4(_mm_loadu_ps(sc + 4 * h))));
    }
    /* per 128-bit lane p: the 8 channels' words, then bytes (twice) */
    const __m512i h = _mm512_adds_epi16(_mm512_packs_epi32(f[0], f[1]),
                                        _mm512_set1_epi16((short)c->oz));
    __m512i b = _mm512_packus_epi16(h, h);
    if (c->lo > 0) b = _mm512_max_epu8(b, _mm512_set1_epi8((char)c->lo));
    if (c->hi < 255) b = _mm512_min_epu8(b, _mm512_set1_epi8((char)c->hi));
    /* [p][channels 0..3] then [p][channels 4..7] as dwords, then [channel][p] bytes */
    b = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b);
    b = _mm512_shuffle_epi8(b, _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2,
                                                                     6, 10, 14, 3, 7, 11, 15)));
    uint32_t o[8];
    _mm256_storeu_si256((__m256i *)(void *)o, _mm512_castsi512_si256(b));
    uint8_t *y = c->y + oc0 * c->ysc + t;
    for (int r = 0; r < nr; ++r) memcpy(y + r * c->ysc, o + r, 4);
}

static QRT_VNNI void qrt__c1_tail_tile8(const qrt__c1_ctx *c, const uint8_t *xt, int64_t oc0,
                                        int64_t t) {
    qrt__c1_tail_tile(c, xt, oc0, t, 8);
}

static QRT_VNNI void qrt__c1_tail_tilen(const qrt__c1_ctx *c, const uint8_t *xt, int64_t oc0,
                                        int64_t t, int nr) {
    qrt__c1_tail_tile(c, xt, oc0, t, nr);
}

/**
 * @brief The packed-quad path ("lanes over time", the file comment of conv1d_avx512vnni.c):
 *        every call the depthwise four-phase path does not serve.  p is checked.
 */
QRT_VNNI qrt_status qrt__conv1d_vnni_packed(const qrt_conv1d_params *p, const uint8_t *x,
                                            const int8_t *wpack, const int32_t *wsum,
                                            const qrt_conv1d_quant *q, void *out, void *scratch) {
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
    for (uint32_t oc = 0; oc < p->c_out; ++oc) asym |= q->weight_zero[oc] != 0;
    uint8_t xtail[QRT__C1_TAIL_MAXC * 4] __attribute__((aligned(64))); /* qrt__c1_tail_pack */
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
        /* 1x1 unit-stride layers pack each position block just before its tiles (below) */
        const int blocked = qrt__c1_blocked(p);
        uint8_t *const yn = c.y;
        for (uint32_t g = 0; g < p->groups; ++g) {
            /* 1. pack this group's input into quads */
            if (!blocked) qrt__c1_pack_group(p, &l, xn, g, U, phases, (uint32_t *)xq, tmp);
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
                            const int64_t tm =
                                t * p->stride + (int64_t)k * p->dilation - p->pad_left;
                            s += (tm >= 0 && tm < p->len_in) ? colsum[tm]
                                                             : (int32_t)cg * p->input_zero;
                        }
                    win[t] = s;
                }
            }
            /* 3. tiles: positions outer (the packed input block stays in L1), channels inner;
             * blocks of 4 vectors run 6-row tiles, narrower ones 8-row tiles, and the rows of
             * a group are shared evenly between its tiles (no thin last tile); a last 1..4
             * positions of a 1x1 row run the tail tiles (qrt__c1_tail_ok) */
            const int k1 = l.kc == 1 && p->out_kind == QRT_CONV1D_OUT_U8 && p->y_stride_t == 1;
            const int tail = qrt__c1_tail_ok(p, k1, asym);
            const int64_t nv = tail ? p->len_out / 16 : (p->len_out + 15) / 16;
            for (int64_t v = 0, mt; v < nv; v += mt) {
                mt = qrt__c1_block(v, nv);
                int64_t t0 = 16 * v;
                if (blocked) {
                    /* the block's quads at xq ([CQ][16 mt]); the tiles see a call that starts
                     * at position t0 */
                    qrt__c1_pack_block(p, &l, xn, g, t0, 16 * mt, (uint32_t *)xq);
                    c.cq_stride = 16 * mt;
                    c.y = yn + (ptrdiff_t)(t0 * p->y_stride_t) * (ptrdiff_t)esz;
                    c.len_out = p->len_out - t0;
                    c.win = asym ? win + t0 : NULL;
                    t0 = 0;
                }
                const uint32_t nrmax = mt == 4 ? QRT__C1_NR4 : QRT__C1_NR;
                const uint32_t nt = (og + nrmax - 1) / nrmax, base = og / nt, extra = og % nt;
                uint32_t ob = 0;
                for (uint32_t i = 0; i < nt; ++i) {
                    const uint32_t nr = base + (i < extra);
                    if (mt == 4)
                        (k1 ? qrt__c1_tiles41 : qrt__c1_tiles4)[nr - 1](&c, (int64_t)g * og + ob,
                                                                         t0);
                    else
                        (k1 ? qrt__c1_tiles1 : qrt__c1_tiles)[nr - 1][mt - 1](
                            &c, (int64_t)g * og + ob, t0);
                    ob += nr;
                }
            }
            if (tail) {
                c.y = yn;
                const int64_t t = p->len_out - 4;
                qrt__c1_tail_pack(xn + (int64_t)g * cg * p->x_stride_c + t, p->x_stride_c, cg,
                                  xtail);
                uint32_t ob = 0;
                for (; ob + 8 <= og; ob += 8)
                    qrt__c1_tail_tile8(&c, xtail, (int64_t)g * og + ob, t);
                if (ob < og)
                    qrt__c1_tail_tilen(&c, xtail, (int64_t)g * og + ob, t, (int)(og - ob));
            }
            if (blocked) { /* the next group's tiles see the whole call again */
                c.cq_stride = phases * U;
                c.y = yn;
                c.len_out = p->len_out;
                c.win = asym ? win : NULL;
            }
        }
    }
    return QRT_OK;
}

/**
 * @brief Few output positions of a 1x1 layer whose channels are adjacent in memory (a linear
 *        of 1-4 rows: MobileNet's classifier): a GEMV per position with the lanes over the
 *        reduction instead of over time (the tiles would use 1 to 4 of 16 lanes).  For each
 *        output channel vpdpbusd multiplies 64 input bytes (16 channel quads, the raw input:
 *        quad q holds channels 4q..4q+3, the packed weight's order) by 64 bytes of its packed
 *        weight row; 16 channels' sums are reduced into one vector by a tree of unpacks and
 *        adds (pure wrapping int32 additions, so the sum equals the tiles' sum mod 2^32), and
 *        the corrections and requantization are the tile epilogue's int32 sequence for
 *        channels-adjacent output.  The input tail is read with a masked load (0 fill: the
 *        padded weight bytes are 0 anyway); nothing outside the input is touched.
 *        qrt__c1_gemv_ok(p) must hold and p be checked.
 */
#ifndef QRT__C1_GEMV_PF_ROWS
#define QRT__C1_GEMV_PF_ROWS 16 /* the GEMV prefetches the rows this far ahead */
#endif
QRT_VNNI qrt_status qrt__conv1d_vnni_gemv(const qrt_conv1d_params *p, const uint8_t *x,
                                          const int8_t *wpack, const int32_t *wsum,
                                          const qrt_conv1d_quant *q, uint8_t *out) {
    const uint32_t C = p->c_in, CO = p->c_out;
    const qrt_conv1d_layout l = qrt_conv1d_layout_of(C, 1);
    const int64_t cq = l.cq;       /* quads per weight row */
    const int64_t nb = (cq + 15) / 16; /* 64-byte blocks per row */
    const int32_t xz = p->input_zero, oz = p->output_zero;
    const int64_t wbytes = (int64_t)CO * cq * 4; /* prefetches stay inside wpack */
    const __m512i vlo = _mm512_set1_epi32(p->output_min - oz),
                  vhi = _mm512_set1_epi32(p->output_max - oz), voz = _mm512_set1_epi32(oz);
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t t = 0; t < p->len_out; ++t) {
            const uint8_t *xt = x + n * p->x_stride_n + t * p->x_stride_t;
            uint8_t *yt = out + n * p->y_stride_n + t * p->y_stride_t;
            int32_t s = 0; /* sum of x over the channels, for asymmetric weights */
            for (uint32_t i = 0; i < C; ++i) s += xt[i];
            for (int64_t oc0 = 0; oc0 < CO; oc0 += 16) {
                const int64_t no = CO - oc0 < 16 ? CO - oc0 : 16;
                __m512i a[16];
                for (int j = 0; j < 16; ++j) a[j] = _mm512_setzero_si512();
                /* four weight rows at a time, each read front to back (four sequential
                 * streams the hardware prefetcher follows, where one block of all 16 rows
                 * at a time made 16), two accumulators per row (eight independent vpdpbusd
                 * chains), and a software prefetch of the same block of the rows
                 * QRT__C1_GEMV_PF_ROWS ahead: a model's classifier and squeeze-excitation
                 * weights come from L3 or memory (each runs once per call).  A row's sum
                 * is its blocks' sum mod 2^32 in any order, as in the tiles. */
                for (int j = 0; j < no; j += 4) {
                    const int32_t *wr[4];
                    int64_t pf[4]; /* byte offsets in wpack of the prefetched rows */
                    __m512i e[4], o[4];
                    for (int r = 0; r < 4; ++r) {
                        /* rows past the block's end repeat its last row; dropped below */
                        const int64_t row = j + r < no ? j + r : no - 1;
                        wr[r] = (const int32_t *)wpack + (oc0 + row) * cq;
                        pf[r] = (oc0 + j + QRT__C1_GEMV_PF_ROWS + r) * cq * 4;
                        e[r] = o[r] = _mm512_setzero_si512();
                    }
                    int64_t b = 0;
                    for (; 64 * (b + 2) <= (int64_t)C; b += 2) { /* two full blocks */
                        const __m512i x0 = _mm512_loadu_si512((const void *)(xt + 64 * b));
                        const __m512i x1 = _mm512_loadu_si512((const void *)(xt + 64 * b + 64));
                        for (int r = 0; r < 4; ++r) {
                            const int64_t f = pf[r] + 64 * b;
                            if (f < wbytes) _mm_prefetch((const char *)wpack + f, _MM_HINT_T0);
                            if (f + 64 < wbytes)
                                _mm_prefetch((const char *)wpack + f + 64, _MM_HINT_T0);
                            const int32_t *wb = wr[r] + 16 * b;
                            e[r] = qrt__c1_dp(e[r], x0, _mm512_loadu_si512((const void *)wb));
                            o[r] = qrt__c1_dp(o[r], x1,
                                              _mm512_loadu_si512((const void *)(wb + 16)));
                        }
                    }
                    for (; b < nb; ++b) { /* a last full block, then the short one */
                        const int64_t left = (int64_t)C - 64 * b;
                        const __mmask64 mk =
                            left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
                        /* the weight row holds cq quads: the last block may be short */
                        const int64_t qleft = cq - 16 * b;
                        const __mmask16 mq = qleft >= 16 ? (__mmask16)0xFFFF
                                                         : (__mmask16)((1u << qleft) - 1u);
                        const __m512i xv =
                            _mm512_maskz_loadu_epi8(mk, (const void *)(xt + 64 * b));
                        for (int r = 0; r < 4; ++r) {
                            const int64_t f = pf[r] + 64 * b;
                            if (f < wbytes) _mm_prefetch((const char *)wpack + f, _MM_HINT_T0);
                            e[r] = qrt__c1_dp(e[r], xv,
                                              _mm512_maskz_loadu_epi32(mq, wr[r] + 16 * b));
                        }
                    }
                    for (int r = 0; r < 4 && j + r < no; ++r)
                        a[j + r] = _mm512_add_epi32(e[r], o[r]);
                }
                /* 16 vectors -> one vector of 16 channel sums (lane j = channel oc0 + j) */
                __m512i h8[8], h4[4], h2[2];
                for (int j = 0; j < 8; ++j) /* pairs: dword sums of (a[2j], a[2j+1]) */
                    h8[j] = _mm512_add_epi32(_mm512_unpacklo_epi32(a[2 * j], a[2 * j + 1]),
                                             _mm512_unpackhi_epi32(a[2 * j], a[2 * j + 1]));
                for (int j = 0; j < 4; ++j)
                    h4[j] = _mm512_add_epi32(_mm512_unpacklo_epi64(h8[2 * j], h8[2 * j + 1]),
                                             _mm512_unpackhi_epi64(h8[2 * j], h8[2 * j + 1]));
                /* h4[j] lane L dword d: channel 4j + d, partial sum of 128-bit lane L */
                for (int j = 0; j < 2; ++j)
                    h2[j] = _mm512_add_epi32(_mm512_shuffle_i32x4(h4[2 * j], h4[2 * j + 1], 0x88),
                                             _mm512_shuffle_i32x4(h4[2 * j], h4[2 * j + 1], 0xDD));
                /* h2[j] 128-bit lanes: channels 8j+0..3 (lanes 0+1 of h4), 8j+0..3 (lanes 2+3),
                 * 8j+4..7 (0+1), 8j+4..7 (2+3); one more fold leaves channel k in dword k */
                const __m512i sum = _mm512_add_epi32(_mm512_shuffle_i32x4(h2[0], h2[1], 0x88),
                                                     _mm512_shuffle_i32x4(h2[0], h2[1], 0xDD));
                const __mmask16 mo = no >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << no) - 1u);
                const __m512i wz = _mm512_maskz_loadu_epi32(mo, q->weight_zero + oc0);
                const __m512i ws = _mm512_maskz_loadu_epi32(mo, wsum + oc0);
                const __m512i bq = _mm512_maskz_loadu_epi32(mo, q->bias_q + oc0);
                const __m512 sc = _mm512_maskz_loadu_ps(mo, q->scale + oc0);
                /* + taps*xz*wz - xz*wsum + bias - wz*S, all wrapping (the tile's c0 and win) */
                __m512i v = _mm512_add_epi32(sum, _mm512_mullo_epi32(
                                                      wz, _mm512_set1_epi32((int32_t)((uint32_t)C * (uint32_t)xz))));
                v = _mm512_sub_epi32(v, _mm512_mullo_epi32(ws, _mm512_set1_epi32(xz)));
                v = _mm512_add_epi32(v, bq);
                v = _mm512_sub_epi32(v, _mm512_mullo_epi32(wz, _mm512_set1_epi32(s)));
                __m512i r = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(v), sc));
                r = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(r, vlo), vhi), voz);
                if (p->y_stride_c == 1) {
                    _mm512_mask_cvtepi32_storeu_epi8(yt + oc0, mo, r);
                } else {
                    uint8_t tmp[16];
                    _mm_storeu_si128((__m128i *)tmp, _mm512_cvtepi32_epi8(r));
                    for (int64_t j = 0; j < no; ++j) yt[(oc0 + j) * p->y_stride_c] = tmp[j];
                }
            }
        }
    return QRT_OK;
}

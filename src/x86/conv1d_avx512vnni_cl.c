/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_avx512vnni_cl.c
 * @brief The channels-in-lanes path of qrt_conv1d_u8__avx512vnni(): 1x1 layers over short rows
 *        (a 1x1 conv2d on a 7x7 or 14x14 image: MobileNet's last blocks and head).
 *
 * The packed-quad tiles put 16 output positions in a vector; a 49-position row fills 49 of 64
 * lanes (77 %).  Here a vector holds 16 output channels of one position instead, so no lane is
 * wasted on any row length:
 *   acc[p][v] (16 channels 16v.. at position p) += vpdpbusd(broadcast quad x[cq][p], w[v][cq])
 * The input is packed into quads [CQ][L] as the packed path packs it (qrt__c1_pack_quads); the
 * weight comes from qrt_conv1d_pack_cl() ([ceil16(c_out)/16][CQ][16] quads, zero-padded
 * channels), so one aligned load gives a channel vector.  A tile is up to 8 positions x 3
 * channel vectors (24 accumulators, 3 weight registers); channel blocks run outer, so a
 * block's weight stays in L1 while every position tile reads it.  A model's weights are cold:
 * a block's first tile prefetches the next block's weight (docs/kernels.md, section 4).
 *
 * The sums are the same mod 2^32 as the reference's (the corrections of conv1d_avx512vnni.c's
 * file comment, per channel lane), and the epilogue is requant.h's sequence per lane
 * (cvtdq2ps, mulps with the lane's channel scale, cvtps2dq, then the packed path's saturating
 * QNNPACK tail), so every output byte equals qrt_conv1d_u8_ref()'s.  The 16-channel x
 * up-to-8-position byte block is transposed in registers and each channel row gets one masked
 * store of its positions.
 */
#include "conv1d_avx512vnni.h"

#define QRT__CL_MP 8 /* positions per tile */
#define QRT__CL_NV 3 /* 16-channel vectors per tile */
#ifndef QRT__CL_PF_L1
#define QRT__CL_PF_L1 (24 * 1024) /* blocks of at most this many weight bytes prefetch the next */
#endif

/** Vectors of the channel block that starts with `left` vectors to go: 3, with a tail of 1
 *  folded in (3 + 1 -> 2 + 2); 0 when none is left. */
static inline int64_t qrt__cl_block_nv(int64_t left) {
    return left == QRT__CL_NV + 1 ? 2 : left < QRT__CL_NV ? left : QRT__CL_NV;
}

typedef struct {
    const int32_t *xq;  /* [CQ][L] input quads */
    const int32_t *w;   /* [ceil16(c_out)/16][CQ][16] weight quads */
    const int32_t *sum; /* [L] input column sums (asymmetric weights) or NULL */
    const int32_t *wsum, *wzero, *bias_q;
    const float *scale;
    int64_t cq, len, c_out, ysc;
    int64_t pf_nv; /* vectors of the channel block after the current one (PF tiles) */
    int32_t xz, taps, oz, lo, hi;
    uint8_t *y;
} qrt__cl_ctx;

static inline __attribute__((always_inline)) QRT_VNNI void qrt__cl_tile(const qrt__cl_ctx *c,
                                                                        int64_t v0, int64_t p0,
                                                                        const int MP, const int NV,
                                                                        const int PF) {
    const int64_t cq = c->cq, len = c->len;
    __m512i c0[QRT__CL_NV], vwz[QRT__CL_NV];
    __m512 vs[QRT__CL_NV];
    __mmask16 mo[QRT__CL_NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
        const int64_t oc = 16 * (v0 + v), left = c->c_out - oc;
        mo[v] = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
        const __m512i wz = _mm512_maskz_loadu_epi32(mo[v], c->wzero + oc);
        const __m512i ws = _mm512_maskz_loadu_epi32(mo[v], c->wsum + oc);
        const __m512i bq = _mm512_maskz_loadu_epi32(mo[v], c->bias_q + oc);
        /* taps*xz*wz - xz*wsum + bias, wrapping (the tiles' c0) */
        __m512i k = _mm512_mullo_epi32(
            wz, _mm512_set1_epi32((int32_t)((uint32_t)c->taps * (uint32_t)c->xz)));
        k = _mm512_sub_epi32(k, _mm512_mullo_epi32(ws, _mm512_set1_epi32(c->xz)));
        c0[v] = _mm512_add_epi32(k, bq);
        vwz[v] = wz;
        vs[v] = _mm512_maskz_loadu_ps(mo[v], c->scale + oc);
    }
    __m512i acc[QRT__CL_MP * QRT__CL_NV];
#pragma GCC unroll 8
    for (int p = 0; p < MP; ++p)
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) acc[p * NV + v] = c0[v];
    {
        const int32_t *xr = c->xq + p0;
        const int32_t *wr = c->w + v0 * cq * 16;
        const int64_t wv_stride = cq * 16;
        /* PF: the next channel block's weight lines (its vectors' quad q) are prefetched while
         * this block's first position tile runs, so they come from L2 for its tiles instead of
         * from L3 or memory (in a model every layer's weight is cold) */
        const int32_t *pfr[QRT__CL_NV];
        if (PF) {
            const int64_t nv2 = c->pf_nv;
#pragma GCC unroll 3
            for (int v = 0; v < NV; ++v) pfr[v] = wr + (NV + (v < nv2 ? v : nv2 - 1)) * wv_stride;
        }
        for (int64_t q = 0; q < cq; ++q, xr += len, wr += 16) {
            __m512i wv[QRT__CL_NV];
#pragma GCC unroll 3
            for (int v = 0; v < NV; ++v)
                wv[v] = _mm512_loadu_si512((const void *)(wr + v * wv_stride));
            if (PF) {
#pragma GCC unroll 3
                for (int v = 0; v < NV; ++v) {
                    _mm_prefetch((const char *)pfr[v], _MM_HINT_T0);
                    pfr[v] += 16;
                }
            }
#pragma GCC unroll 8
            for (int p = 0; p < MP; ++p) {
                const __m512i xb = _mm512_set1_epi32(xr[p]);
#pragma GCC unroll 3
                for (int v = 0; v < NV; ++v)
                    acc[p * NV + v] = qrt__c1_dp(acc[p * NV + v], xb, wv[v]);
            }
        }
    }
    /* epilogue: everything read into locals (the stores may alias anything).  Per channel
     * vector: cvtdq2ps, mulps (the lane's channel scale), cvtps2dq, then the packed path's
     * QNNPACK tail on 8 positions at once: packssdw, paddsw (output zero point), packuswb, byte
     * max / min -- clamp(rne(y) + zp, lo, hi) for every int32 (conv1d_avx512vnni.c's file
     * comment).  Lane L of the two byte vectors then holds channels 4L..4L+3 x positions 0-3
     * (A) and 4-7 (B), position-major; an in-lane 4x4 byte transpose and a dword unpack leave
     * each channel's 8 positions in one 8-byte half of a lane. */
    const __m512i voz16 = _mm512_set1_epi16((int16_t)c->oz);
    const __m512i vlo8 = _mm512_set1_epi8((char)c->lo), vhi8 = _mm512_set1_epi8((char)c->hi);
    /* out byte 4c + p <- in byte 4p + c, in every 128-bit lane */
    const __m512i tr4 =
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    const int32_t *const sum = c->sum;
    uint8_t *const ybase = c->y;
    const int64_t ysc = c->ysc, c_out = c->c_out;
    const __mmask16 mp = (__mmask16)((1u << MP) - 1u);
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
        __m512i r[8];
#pragma GCC unroll 8
        for (int p = 0; p < 8; ++p) {
            if (p >= MP) {
                r[p] = _mm512_setzero_si512(); /* a position past the tile: not stored */
                continue;
            }
            __m512i a = acc[p * NV + v];
            if (sum)
                a = _mm512_sub_epi32(a, _mm512_mullo_epi32(vwz[v], _mm512_set1_epi32(sum[p0 + p])));
            r[p] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(a), vs[v]));
        }
        __m512i ba = qrt__c1_pack4(r[0], r[1], r[2], r[3], voz16, vlo8, vhi8);
        __m512i bb = qrt__c1_pack4(r[4], r[5], r[6], r[7], voz16, vlo8, vhi8);
        ba = _mm512_shuffle_epi8(ba, tr4); /* lane L: channel 4L + c's positions 0-3 at 4c */
        bb = _mm512_shuffle_epi8(bb, tr4); /* positions 4-7 */
        /* lane L of e: channels 4L (bytes 0-7) and 4L + 1 (8-15), positions 0-7; of f: 4L + 2
         * and 4L + 3 */
        const __m512i e = _mm512_unpacklo_epi32(ba, bb), f = _mm512_unpackhi_epi32(ba, bb);
        const int64_t oc = 16 * (v0 + v);
        const int64_t nch = c_out - oc < 16 ? c_out - oc : 16;
        uint8_t *dst = ybase + oc * ysc + p0;
#define QRT__CL_ST(L)                                                                              \
    do {                                                                                           \
        const __m128i xe = _mm512_extracti32x4_epi32(e, L), xf = _mm512_extracti32x4_epi32(f, L);  \
        if (4 * (L) + 0 < nch) _mm_mask_storeu_epi8(dst + (4 * (L) + 0) * ysc, mp, xe);            \
        if (4 * (L) + 1 < nch)                                                                     \
            _mm_mask_storeu_epi8(dst + (4 * (L) + 1) * ysc, mp, _mm_srli_si128(xe, 8));            \
        if (4 * (L) + 2 < nch) _mm_mask_storeu_epi8(dst + (4 * (L) + 2) * ysc, mp, xf);            \
        if (4 * (L) + 3 < nch)                                                                     \
            _mm_mask_storeu_epi8(dst + (4 * (L) + 3) * ysc, mp, _mm_srli_si128(xf, 8));            \
    } while (0)
        QRT__CL_ST(0);
        QRT__CL_ST(1);
        QRT__CL_ST(2);
        QRT__CL_ST(3);
#undef QRT__CL_ST
    }
}

#define QRT__CL_TILE(MP, NV)                                                                       \
    static QRT_VNNI void qrt__cl_tile_##MP##_##NV(const qrt__cl_ctx *c, int64_t v0, int64_t p0) {  \
        qrt__cl_tile(c, v0, p0, MP, NV, 0);                                                        \
    }                                                                                              \
    static QRT_VNNI void qrt__cl_tilepf_##MP##_##NV(const qrt__cl_ctx *c, int64_t v0,              \
                                                    int64_t p0) {                                  \
        qrt__cl_tile(c, v0, p0, MP, NV, 1);                                                        \
    }
#define QRT__CL_TILES(MP) QRT__CL_TILE(MP, 1) QRT__CL_TILE(MP, 2) QRT__CL_TILE(MP, 3)
QRT__CL_TILES(1)
QRT__CL_TILES(2)
QRT__CL_TILES(3)
QRT__CL_TILES(4)
QRT__CL_TILES(5)
QRT__CL_TILES(6)
QRT__CL_TILES(7)
QRT__CL_TILES(8)
#undef QRT__CL_TILES
#undef QRT__CL_TILE

typedef void (*qrt__cl_tile_fn)(const qrt__cl_ctx *, int64_t, int64_t);
#define QRT__CL_ROW(P, MP) {P##_##MP##_1, P##_##MP##_2, P##_##MP##_3}
#define QRT__CL_TAB(P)                                                                             \
    {QRT__CL_ROW(P, 1), QRT__CL_ROW(P, 2), QRT__CL_ROW(P, 3), QRT__CL_ROW(P, 4),                   \
     QRT__CL_ROW(P, 5), QRT__CL_ROW(P, 6), QRT__CL_ROW(P, 7), QRT__CL_ROW(P, 8)}
/* [prefetching the next channel block][positions - 1][vectors - 1] */
static const qrt__cl_tile_fn qrt__cl_tiles[2][QRT__CL_MP][QRT__CL_NV] = {
    QRT__CL_TAB(qrt__cl_tile), QRT__CL_TAB(qrt__cl_tilepf)};
#undef QRT__CL_TAB
#undef QRT__CL_ROW

QRT_VNNI qrt_status qrt__conv1d_vnni_cl(const qrt_conv1d_params *p, const uint8_t *x,
                                        const int8_t *wcl, const int32_t *wsum,
                                        const qrt_conv1d_quant *q, uint8_t *out, void *scratch) {
    const qrt_conv1d_layout l = qrt_conv1d_layout_of(p->c_in, 1);
    const int64_t cq = l.cq, len = p->len_out, c_out = p->c_out;
    /* scratch: the packed path's layout (conv1d_avx512vnni.c sizes it for this p): the quads
     * in its packed-input slot ([CQ][U] quads, U >= len), the column sums in its colsum slot */
    uint8_t *sp = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    const int64_t U = qrt__c1_row(p, &l);
    int32_t *xq = (int32_t *)sp;
    sp += ((size_t)cq * (size_t)U * 4u + 63u) & ~(size_t)63u;
    sp += ((size_t)l.kc * 8u + 63u) & ~(size_t)63u;
    int32_t *colsum = (int32_t *)sp;

    int asym = 0;
    for (int64_t oc = 0; oc < c_out; ++oc) asym |= q->weight_zero[oc] != 0;
    qrt__cl_ctx c;
    c.xq = xq;
    c.w = (const int32_t *)wcl;
    c.sum = asym ? colsum : NULL;
    c.wsum = wsum;
    c.wzero = q->weight_zero;
    c.bias_q = q->bias_q;
    c.scale = q->scale;
    c.cq = cq;
    c.len = len;
    c.c_out = c_out;
    c.ysc = p->y_stride_c;
    c.xz = p->input_zero;
    c.taps = (int32_t)p->c_in;
    c.oz = p->output_zero;
    c.lo = p->output_min;
    c.hi = p->output_max;
    const int64_t nvec = (c_out + 15) / 16;
    const int64_t nt = (len + QRT__CL_MP - 1) / QRT__CL_MP; /* position tiles, balanced */
    /* the next block's weight is prefetched (into L1) only when a block fits in L1 beside the
     * current one and the input: a 960-channel reduction's 46 KB blocks ran slower with it
     * (docs/kernels.md, section 4) */
    const int pf = (int64_t)QRT__CL_NV * cq * 64 <= (int64_t)QRT__CL_PF_L1;
    for (int64_t n = 0; n < p->n; ++n) {
        const uint8_t *xn = x + n * p->x_stride_n;
        for (int64_t r = 0; r < cq; ++r) {
            const uint8_t *base[4];
            const int64_t time0[4] = {0, 0, 0, 0};
            for (int j = 0; j < 4; ++j) {
                const int64_t ic = 4 * r + j;
                base[j] = ic < (int64_t)p->c_in ? xn + ic * p->x_stride_c : NULL;
            }
            qrt__c1_pack_quads(base, time0, len, len, p->x_stride_c, (uint8_t)p->input_zero,
                               (uint32_t *)xq + r * len);
        }
        if (asym)
            for (int64_t t = 0; t < len; ++t) {
                int32_t s = 0;
                for (uint32_t ic = 0; ic < p->c_in; ++ic) s += xn[(int64_t)ic * p->x_stride_c + t];
                colsum[t] = s;
            }
        c.y = out + n * p->y_stride_n;
        for (int64_t v0 = 0, nv; v0 < nvec; v0 += nv) {
            nv = qrt__cl_block_nv(nvec - v0);
            c.pf_nv = qrt__cl_block_nv(nvec - v0 - nv); /* the next block's, for the prefetch */
            for (int64_t i = 0, p0 = 0; i < nt; ++i) {
                const int64_t mp = (len * (i + 1)) / nt - (len * i) / nt;
                qrt__cl_tiles[pf && i == 0 && c.pf_nv > 0][mp - 1][nv - 1](&c, v0, p0);
                p0 += mp;
            }
        }
    }
    return QRT_OK;
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_avx512vnni_dw4.c
 * @brief The depthwise "four phases" path of qrt_conv1d_u8__avx512vnni() (one input channel
 *        per group, stride 1, taps spanning at most 64 bytes): the NCL rows are read in place.
 */
#include "conv1d_avx512vnni.h"

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
                                            __m512i vxz) {
    if (s >= 0 && s + 64 <= len) return _mm512_loadu_si512((const void *)(xr + s));
    const int64_t lo = s < 0 ? -s : 0, hi = len - s < 64 ? len - s : 64;
    if (lo >= hi) return vxz;
    const __mmask64 m =
        (hi == 64 ? ~(__mmask64)0 : (((__mmask64)1 << hi) - 1)) & ~(((__mmask64)1 << lo) - 1);
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
             __m512i vhi8, __m512i vperm, __m512i vxz) {
    __m512i f[4];
    for (int r = 0; r < 4; ++r) {
        __m512i acc = vc0, sum = _mm512_setzero_si512();
        for (int b = 0; b < NB; ++b) {
            const int64_t st = t0 + r - pad + 4 * b;
            const __m512i L = EDGE ? qrt__dw_load(xr, st, len_in, vxz)
                                   : _mm512_loadu_si512((const void *)(xr + st));
            acc = _mm512_dpbusd_epi32(acc, L, vw[b]);
            if (ASYM) sum = _mm512_dpbusd_epi32(sum, L, vone[b]);
        }
        if (ASYM) acc = _mm512_sub_epi32(acc, _mm512_mullo_epi32(vwz, sum));
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
qrt__dw_row(const uint8_t *xr, int64_t xsn, int64_t len_in, int64_t pad, uint8_t *yr, int64_t ysn,
            int64_t len_out, int64_t nrows, const qrt__dw_blocks *B, const int NB, const int ASYM,
            uint32_t c0, int32_t wz, float scale, int32_t oz, int32_t lo, int32_t hi, uint8_t xz) {
    __m512i vw[QRT__DW_MAXBLK], vone[QRT__DW_MAXBLK];
    for (int b = 0; b < NB; ++b) {
        vw[b] = _mm512_set1_epi32(B->w[b]);
        vone[b] = _mm512_set1_epi32(B->ones[b]);
    }
    const __m512i vxz = _mm512_set1_epi8((char)xz), vc0 = _mm512_set1_epi32((int32_t)c0);
    const __m512i vwz = _mm512_set1_epi32(wz), voz16 = _mm512_set1_epi16((short)oz);
    const __m512i vlo8 = _mm512_set1_epi8((char)lo), vhi8 = _mm512_set1_epi8((char)hi);
    const __m512i vperm =
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
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
            if (cnt > 0) memcpy(buf + pad, xr, (size_t)cnt);
            for (int64_t t0 = 0; t0 < len_out; t0 += 64)
                qrt__dw_step(buf, span, 0, yr, len_out, t0, vw, vone, NB, ASYM, 1, vc0, vwz, vs,
                             voz16, vlo8, vhi8, vperm, vxz);
            continue;
        }
        /* Steps whose loads stay inside the row and whose store is whole run without masks. */
        for (int64_t t0 = 0; t0 < len_out; t0 += 64) {
            if (t0 >= pad && t0 - pad + reach <= len_in && t0 + 64 <= len_out)
                qrt__dw_step(xr, len_in, pad, yr, len_out, t0, vw, vone, NB, ASYM, 0, vc0, vwz, vs,
                             voz16, vlo8, vhi8, vperm, vxz);
            else
                qrt__dw_step(xr, len_in, pad, yr, len_out, t0, vw, vone, NB, ASYM, 1, vc0, vwz, vs,
                             voz16, vlo8, vhi8, vperm, vxz);
        }
    }
}

#define QRT__DW_ROW(NB, ASYM)                                                                      \
    static QRT_VNNI void qrt__dw_row_##NB##_##ASYM(                                                \
        const uint8_t *xr, int64_t xsn, int64_t len_in, int64_t pad, uint8_t *yr, int64_t ysn,     \
        int64_t len_out, int64_t nrows, const qrt__dw_blocks *B, int nb, uint32_t c0, int32_t wz,  \
        float scale, int32_t oz, int32_t lo, int32_t hi, uint8_t xz) {                             \
        qrt__dw_row(xr, xsn, len_in, pad, yr, ysn, len_out, nrows, B, NB ? NB : nb, ASYM, c0, wz,  \
                    scale, oz, lo, hi, xz);                                                        \
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
QRT_VNNI qrt_status qrt__conv1d_vnni_dw4(const qrt_conv1d_params *p, const uint8_t *x,
                                         const int8_t *wpack, const int32_t *wsum,
                                         const qrt_conv1d_quant *q, uint8_t *y) {
    const uint32_t K = p->kernel, mult = p->c_out / p->groups;
    const qrt_conv1d_layout l = qrt_conv1d_layout_of(1u, K);
    const int64_t per_oc = (int64_t)l.kc * l.cq * 4, d = p->dilation;
    const int nb = (int)(((int64_t)(K - 1) * d) / 4 + 1);
    typedef void (*row_fn)(const uint8_t *, int64_t, int64_t, int64_t, uint8_t *, int64_t, int64_t,
                           int64_t, const qrt__dw_blocks *, int, uint32_t, int32_t, float, int32_t,
                           int32_t, int32_t, uint8_t);
    static const row_fn rows[4][2] = {{qrt__dw_row_0_0, qrt__dw_row_0_1},
                                      {qrt__dw_row_1_0, qrt__dw_row_1_1},
                                      {qrt__dw_row_2_0, qrt__dw_row_2_1},
                                      {qrt__dw_row_3_0, qrt__dw_row_3_1}};
    qrt__dw_blocks B;
    for (int b = 0; b < QRT__DW_MAXBLK; ++b) B.ones[b] = 0;
    for (uint32_t k = 0; k < K; ++k) B.ones[k * d / 4] |= 1 << (8 * (k * d % 4));
    /* channels outer: a channel's weight blocks are built once for every batch row */
    for (int64_t oc = 0; oc < p->c_out; ++oc) {
        const int8_t *w = wpack + oc * per_oc;
        uint32_t wb[QRT__DW_MAXBLK] = {0};
        for (uint32_t k = 0; k < K; ++k)
            wb[k * d / 4] |= (uint32_t)(uint8_t)w[k] << (8 * (k * d % 4));
        for (int b = 0; b < nb; ++b) B.w[b] = (int32_t)wb[b];
        const int32_t wz = q->weight_zero[oc];
        const uint32_t c0 = (uint32_t)K * (uint32_t)p->input_zero * (uint32_t)wz -
                            (uint32_t)p->input_zero * (uint32_t)wsum[oc] + (uint32_t)q->bias_q[oc];
        rows[nb <= 3 ? nb : 0][wz != 0](
            x + (oc / mult) * p->x_stride_c, p->x_stride_n, p->len_in, p->pad_left,
            y + oc * p->y_stride_c, p->y_stride_n, p->len_out, p->n, &B, nb, c0, wz, q->scale[oc],
            p->output_zero, p->output_min, p->output_max, (uint8_t)p->input_zero);
    }
    return QRT_OK;
}

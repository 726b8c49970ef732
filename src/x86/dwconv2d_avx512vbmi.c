/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_avx512vbmi.c
 * @brief The byte-permute depthwise path of AVX-512 VNNI + VBMI CPUs (Ice Lake, Zen 4 and 5):
 *        small NCHW planes (at most QRT__DWB_MAXOUT outputs: MobileNet's 28x28, 14x14 and 7x7
 *        layers and their stride-2 inputs) with int8 weights (w - wz in int8: every
 *        torchvision model), straight from the NCHW bytes, with no transposes and no planes.
 *
 * Per output channel, the flat outputs f = oy*wo + ox go in groups of 16, one per 32-bit lane
 * (src/dwconv2d_impl.h, qrt__dwb_span): the input positions a group reads lie in 127 bytes
 * from its window start, so two 64-byte loads hold them and byte 127 of the pair holds
 * input_zero.  For each quad of taps (4q .. 4q + 3 of the kh*kw, 0 past the last) one vpermt2b
 * with the group's index vector gathers, in lane L, the 4 input bytes of output 16g + L (byte
 * 127 where the tap leaves the image: the padding is input_zero), and one vpdpbusd multiplies
 * them with the quad's int8 weights w - wz, broadcast: u8 x int8, exact int32 sums.  The input
 * zero point is in the bias (sum (w - wz)(x - xz) = sum (w - wz) x - xz sum (w - wz), exact mod
 * 2^32; xz sum (w - wz) is nq vpdpbusd of the broadcast input_zero bytes with the quads).  The
 * index vectors and the windows depend on the geometry only: built once per run.  Four groups
 * (64 outputs) are requantized together with QNNPACK's sequence as the byte-quad form
 * (cvtps2dq of acc * scale, saturating packs to int16, saturating + zero point, packus, clamp)
 * and stored as one 64-byte row of the NCHW output, so every byte equals
 * qrt_dwconv2d_u8_ref()'s.  A 3x3 kernel costs 3 vpermt2b + 3 vpdpbusd per 16 outputs.
 */
#include <immintrin.h>
#include <string.h>

#include "../dwconv2d_impl.h"
#include "conv1d_avx512vnni.h" /* qrt__c1_dp: vpdpbusd, the accumulator tied */
#include "qrt/x86/dwconv2d_x86.h"

#define QRT_DWB __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi")))

typedef struct {
    int64_t win;     /* the window's first byte, from the plane's */
    uint64_t ka, kb; /* the two loads' masks: bytes inside the plane (kb: not byte 63) */
    int64_t pad;
} qrt__dwb_grp;

/* idx[g * nq + q] byte 4L + k: the window byte of tap 4q + k of output 16g + L (127 where it
 * leaves the image, past the last tap or past the last output); grp[g]: the window */
static QRT_DWB void qrt__dwb_tables(const qrt_dwconv2d_params *p, const qrt__dwb_geom *g,
                                    __m512i *idx, qrt__dwb_grp *grp) {
    const int64_t npo = (int64_t)p->ho * p->wo, H = p->h, W = p->w, hw = H * W,
                  taps = (int64_t)p->kh * p->kw, kw = p->kw, nq = g->nq;
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i v127 = _mm512_set1_epi32(127), vH = _mm512_set1_epi32((int)H),
                  vW = _mm512_set1_epi32((int)W);
    const __m512 vwo = _mm512_set1_ps((float)p->wo);
    for (int64_t gi = 0; gi < g->ng; ++gi) {
        int64_t lo, hi;
        qrt__dwb_span(p, gi, &lo, &hi);
        /* (a group that reads no image position, all padding, keeps its window in the plane) */
        const int64_t win = lo <= 0 ? 0 : lo < hw ? lo : hw - 1;
        grp[gi].win = win;
        grp[gi].ka = qrt__dw_m64(hw - win);
        grp[gi].kb = qrt__dw_m64(hw - win - 64) & ~((uint64_t)1 << 63);
        grp[gi].pad = 0;
        const __m512i f = _mm512_add_epi32(_mm512_set1_epi32((int)(16 * gi)), iota);
        const __mmask16 fv = _mm512_cmplt_epi32_mask(f, _mm512_set1_epi32((int)npo));
        /* oy = f / wo: (f + 0.5) / wo in float is at least 0.5 / wo from an integer (f < 2^11) */
        const __m512i oy = _mm512_cvttps_epi32(
            _mm512_div_ps(_mm512_add_ps(_mm512_cvtepi32_ps(f), _mm512_set1_ps(0.5f)), vwo));
        const __m512i ox =
            _mm512_sub_epi32(f, _mm512_mullo_epi32(oy, _mm512_set1_epi32((int)p->wo)));
        const __m512i by = _mm512_sub_epi32(_mm512_mullo_epi32(oy, _mm512_set1_epi32((int)p->sh)),
                                            _mm512_set1_epi32((int)p->pad_top));
        const __m512i bx = _mm512_sub_epi32(_mm512_mullo_epi32(ox, _mm512_set1_epi32((int)p->sw)),
                                            _mm512_set1_epi32((int)p->pad_left));
        /* the flat position of tap (0, 0), less the window start: a tap adds a constant */
        const __m512i bw = _mm512_sub_epi32(_mm512_add_epi32(_mm512_mullo_epi32(by, vW), bx),
                                            _mm512_set1_epi32((int)win));
        for (int64_t q = 0; q < nq; ++q) {
            __m512i acc = _mm512_setzero_si512();
            for (int64_t k = 0; k < 4; ++k) {
                const int64_t t = 4 * q + k;
                __m512i v = v127;
                if (t < taps) {
                    const int64_t dy = (t / kw) * p->dh, dx = (t % kw) * p->dw;
                    const __m512i iy = _mm512_add_epi32(by, _mm512_set1_epi32((int)dy));
                    const __m512i ix = _mm512_add_epi32(bx, _mm512_set1_epi32((int)dx));
                    /* unsigned compares: negative rows and columns are outside too */
                    const __mmask16 m =
                        fv & _mm512_cmplt_epu32_mask(iy, vH) & _mm512_cmplt_epu32_mask(ix, vW);
                    v = _mm512_mask_add_epi32(v127, m, bw, _mm512_set1_epi32((int)(dy * W + dx)));
                }
                acc = _mm512_or_si512(acc, _mm512_sll_epi32(v, _mm_cvtsi32_si128((int)(8 * k))));
            }
            _mm512_store_si512(idx + gi * nq + q, acc);
        }
    }
}

/* NG (1..4) groups from g0: the sums of NQ quads (0: the run-time nq), requantized and stored
 * as the 16 * NG outputs at yo (all 64 bytes when full, else the first n) */
static inline __attribute__((always_inline)) QRT_DWB void
qrt__dwb_chunk(const uint8_t *xc, const __m512i *idx, const qrt__dwb_grp *grp, int64_t g0,
               int64_t nq, const __m512i *wq, __m512i vb, __m512 vs, __m512i voz, __m512i vlo,
               __m512i vhi, __m512i vxz, __m512i tr, uint8_t *yo, int full, int64_t n, const int NG,
               const int NQ, const int MASKED) {
    __m512i acc[4];
    const int64_t nqq = NQ ? NQ : nq;
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        if (i >= NG) {
            acc[i] = vb;
            continue;
        }
        const qrt__dwb_grp *gr = grp + g0 + i;
        __m512i A, B;
        if (MASKED) { /* the tensor's last plane: no read past it */
            A = _mm512_maskz_loadu_epi8(gr->ka, xc + gr->win);
            B = _mm512_mask_loadu_epi8(vxz, gr->kb, xc + gr->win + 64);
        } else { /* bytes past the plane are never selected (masked loads cost 15 %) */
            A = _mm512_loadu_si512(xc + gr->win);
            B = _mm512_mask_blend_epi8((__mmask64)1 << 63, _mm512_loadu_si512(xc + gr->win + 64),
                                       vxz);
        }
        const __m512i *ix = idx + (g0 + i) * nq;
        acc[i] = vb;
#pragma GCC unroll 7
        for (int64_t q = 0; q < nqq; ++q)
            acc[i] = qrt__c1_dp(acc[i], _mm512_permutex2var_epi8(A, _mm512_load_si512(ix + q), B),
                                wq[q]);
    }
    __m512i r[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i)
        r[i] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[i]), vs));
    /* dword 4L + s of the packed bytes is r_s[4L ..]: tr puts outputs 16s + 4L .. there */
    const __m512i o =
        _mm512_permutexvar_epi32(tr, qrt__c1_pack4(r[0], r[1], r[2], r[3], voz, vlo, vhi));
    if (full)
        _mm512_storeu_si512(yo, o);
    else
        _mm512_mask_storeu_epi8(yo, (__mmask64)qrt__dw_m64(n), o);
}

static inline __attribute__((always_inline)) QRT_DWB void
qrt__dwb_channel(const uint8_t *xc, const __m512i *idx, const qrt__dwb_grp *grp, int64_t ng,
                 int64_t nq, int64_t npo, const __m512i *wq, __m512i vb, __m512 vs, __m512i voz,
                 __m512i vlo, __m512i vhi, __m512i vxz, __m512i tr, uint8_t *yo, int tail_full,
                 const int NQ, const int MASKED) {
    int64_t g0 = 0;
    for (; 16 * (g0 + 4) <= npo; g0 += 4)
        qrt__dwb_chunk(xc, idx, grp, g0, nq, wq, vb, vs, voz, vlo, vhi, vxz, tr, yo + 16 * g0, 1,
                       64, 4, NQ, MASKED);
    const int64_t n = npo - 16 * g0;
#define QRT__DWB_TAIL(NG)                                                                          \
    case NG:                                                                                       \
        qrt__dwb_chunk(xc, idx, grp, g0, nq, wq, vb, vs, voz, vlo, vhi, vxz, tr, yo + 16 * g0,     \
                       tail_full, n, NG, NQ, MASKED);                                              \
        break;
    switch (ng - g0) {
        QRT__DWB_TAIL(4)
        QRT__DWB_TAIL(3)
        QRT__DWB_TAIL(2)
        QRT__DWB_TAIL(1)
    default:
        break;
    }
#undef QRT__DWB_TAIL
}

/* 0 (nothing written) where a weight w - wz of the run's channels leaves int8 */
static QRT_DWB int qrt__dwb_run(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                                const qrt_conv1d_quant *q, uint8_t *y, void *scratch, int64_t u0,
                                int64_t u1) {
    const int64_t C = p->c_in, M = p->mult, taps = (int64_t)p->kh * p->kw;
    const int64_t nu = u1 - u0 < C ? u1 - u0 : C; /* the run's input channels */
    for (int64_t i = 0; i < nu; ++i)
        for (int64_t oc = (u0 + i) % C * M, e = oc + M; oc < e; ++oc) {
            const int32_t wz = q->weight_zero[oc];
            if (wz)
                for (int64_t t = 0; t < taps; ++t) {
                    const int32_t v = w[oc * taps + t] - wz;
                    if (v < -128 || v > 127) return 0;
                }
        }
    const qrt__dwb_geom g = qrt__dwb_geom_of(p);
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    __m512i *idx = (__m512i *)(void *)(base + g.off_idx);
    qrt__dwb_grp *grp = (qrt__dwb_grp *)(void *)(base + g.off_win);
    qrt__dwb_tables(p, &g, idx, grp);
    const int64_t npo = (int64_t)p->ho * p->wo, ng = g.ng, nq = g.nq;
    const __m512i voz = _mm512_set1_epi16((short)p->output_zero),
                  vlo = _mm512_set1_epi8((char)p->output_min),
                  vhi = _mm512_set1_epi8((char)p->output_max),
                  vxz = _mm512_set1_epi8((char)p->input_zero),
                  tr = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __mmask32 tm = (__mmask32)qrt__dw_m64(taps);
    /* a channel's last 64-byte store may run on into later channels of this run (contiguous
     * NCHW output), which write their own bytes afterwards */
    const int direct = p->y_stride_c == npo && p->y_stride_n == C * M * npo;
    const int64_t yend = u1 * M * npo, tail = (npo + 63) / 64 * 64;
    /* the last byte of the input tensor: a plane whose windows' 128 bytes stay before it reads
     * without masks */
    const int64_t xend = ((int64_t)p->n - 1) * p->x_stride_n + (C - 1) * p->x_stride_c +
                         ((int64_t)p->h - 1) * p->x_stride_h + p->w;
    for (int64_t u = u0; u < u1; ++u) {
        const int64_t n = u / C, c = u - n * C;
        const int64_t xo = n * p->x_stride_n + c * p->x_stride_c;
        const uint8_t *xc = x + xo;
        const int safe = xo + (int64_t)p->h * p->w + 128 <= xend;
        for (int64_t j = 0; j < M; ++j) {
            const int64_t oc = c * M + j;
            const __m256i wv = _mm256_maskz_sub_epi8(tm, _mm256_maskz_loadu_epi8(tm, w + oc * taps),
                                                     _mm256_set1_epi8((char)q->weight_zero[oc]));
            __m512i wq[QRT__DWB_MAXQ], xs = _mm512_setzero_si512();
            for (int64_t k = 0; k < nq; ++k) {
                wq[k] =
                    _mm512_permutexvar_epi32(_mm512_set1_epi32((int)k), _mm512_castsi256_si512(wv));
                xs = _mm512_dpbusd_epi32(xs, vxz, wq[k]);
            }
            const __m512i vb = _mm512_sub_epi32(_mm512_set1_epi32(q->bias_q[oc]), xs);
            const __m512 vs = _mm512_set1_ps(q->scale[oc]);
            uint8_t *yo = y + n * p->y_stride_n + oc * p->y_stride_c;
            const int tf = direct && (u * M + j) * npo + tail <= yend;
#define QRT__DWB_CH(NQ, MASKED)                                                                    \
    qrt__dwb_channel(xc, idx, grp, ng, nq, npo, wq, vb, vs, voz, vlo, vhi, vxz, tr, yo, tf, NQ,    \
                     MASKED)
            if (!safe)
                QRT__DWB_CH(0, 1);
            else if (nq == 3)
                QRT__DWB_CH(3, 0);
            else if (nq == 7)
                QRT__DWB_CH(7, 0);
            else
                QRT__DWB_CH(0, 0);
#undef QRT__DWB_CH
        }
    }
    return 1;
}

QRT_DWB void qrt_dwconv2d_u8__avx512vbmi(const qrt_dwconv2d_params *p, const uint8_t *x,
                                         const int8_t *w, const qrt_conv1d_quant *q, uint8_t *y,
                                         void *scratch, int64_t u0, int64_t u1) {
    if (qrt__dwb_take(p, q->wpack_cl != 0) && qrt__dwb_run(p, x, w, q, y, scratch, u0, u1)) return;
    qrt_dwconv2d_u8__avx512vnni(p, x, w, q, y, scratch, u0, u1);
}

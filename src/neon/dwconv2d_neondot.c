/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_neondot.c
 * @brief qrt__dwpd_run(): the depthwise byte planes with sdot (design:
 *        qrt/neon/dwconv2d_neondot.h).  Built with -march=armv8.2-a+dotprod (and the target
 *        attribute on its functions, for drivers that compile it directly).
 */
#include <arm_neon.h>

#include "dwconv2d_neon_planes.h"
#include "qrt/neon/dwconv2d_neondot.h"

#if defined(__aarch64__)
#define QRT_DWD_FN __attribute__((target("arch=armv8.2-a+dotprod")))

/* stage byte o <- requantized byte: stride 1 holds output 4j + d at byte 4d + j, stride 2
 * output 2j + k (k = 0, 1) at 4k + j and 8 + 2j + k at 8 + 4k + j */
static const uint8_t qrt__dwpd_order[2][16] = {
    {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15},
    {0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15}};

/* count flat outputs, 16 a step, of rows[ky] (kernel row ky's plane row) against the row
 * quads wq[ky * g4 + q] (KH, G4, S: constants, 0 = the runtime kh, g4) */
__attribute__((always_inline)) static inline QRT_DWD_FN void
qrt__dwpd_body(const int8_t *const *rows, const int32_t *wq, int64_t kh, int64_t g4,
               int64_t count, const qrt__neon_rq *c, const int small, uint8_t *stage,
               const int KH, const int G4, const int S) {
    const uint8x16_t order = vld1q_u8(qrt__dwpd_order[S - 1]);
    const int64_t nky = KH ? KH : kh, ng = G4 ? G4 : g4;
    int8x16_t wr[KH && G4 ? KH * G4 : 1];
    if (KH && G4)
        for (int i = 0; i < KH * G4; ++i) wr[i] = vreinterpretq_s8_s32(vdupq_n_s32(wq[i]));
    const int8_t *rp[KH ? KH : 16];
    for (int64_t ky = 0; ky < nky; ++ky) rp[ky] = rows[ky];
    const qrt__neon_rq cc = *c;
    for (int64_t f = 0; f < count; f += 16) {
        int32x4_t a0 = cc.bias, a1 = a0, a2 = a0, a3 = a0;
#pragma GCC unroll 5
        for (int64_t ky = 0; ky < nky; ++ky) {
            const int8_t *r = rp[ky] + S * f;
#pragma GCC unroll 2
            for (int64_t g = 0; g < ng; ++g) {
                const int32_t *wp = wq + ky * ng + g;
                const int8x16_t wv =
                    KH && G4 ? wr[ky * ng + g] : vreinterpretq_s8_s32(vld1q_dup_s32(wp));
                const int8_t *rq = r + 4 * g;
                if (S == 1) {
                    a0 = vdotq_s32(a0, vld1q_s8(rq), wv);
                    a1 = vdotq_s32(a1, vld1q_s8(rq + 1), wv);
                    a2 = vdotq_s32(a2, vld1q_s8(rq + 2), wv);
                    a3 = vdotq_s32(a3, vld1q_s8(rq + 3), wv);
                } else {
                    a0 = vdotq_s32(a0, vld1q_s8(rq), wv);
                    a1 = vdotq_s32(a1, vld1q_s8(rq + 2), wv);
                    a2 = vdotq_s32(a2, vld1q_s8(rq + 16), wv);
                    a3 = vdotq_s32(a3, vld1q_s8(rq + 18), wv);
                }
            }
        }
        vst1q_u8(stage + f, vqtbl1q_u8(qrt__neon_requant16(a0, a1, a2, a3, &cc, small), order));
    }
}

/* row ky's taps 4g .. 4g + 3 as one int32 (bytes in tap order, zero past kw; KW: a constant
 * kw, 0 = the runtime one) */
__attribute__((always_inline)) static inline void
qrt__dwpd_quads(const int8_t *wc, int64_t kh, int64_t kw, int32_t *wq, const int KH, const int KW) {
    const int64_t nky = KH ? KH : kh, nkx = KW ? KW : kw, g4 = (nkx + 3) / 4;
    for (int64_t ky = 0; ky < nky; ++ky)
        for (int64_t g = 0; g < g4; ++g) {
            uint32_t v = 0;
            for (int64_t i = 0; i < 4 && 4 * g + i < nkx; ++i)
                v |= (uint32_t)(uint8_t)wc[ky * nkx + 4 * g + i] << (8 * i);
            wq[ky * g4 + g] = (int32_t)v;
        }
}

/* the driver's k8: the channel's weights as quads per kernel row, then the body (3x3 and 5x5
 * at strides 1 and 2 with their weights in registers) */
static QRT_DWD_FN void qrt__dwpd_k8(const int8_t *const *tp, const int8_t *wc, int64_t kh,
                                    int64_t kw, int64_t s, int64_t count, const qrt__neon_rq *c,
                                    int small, uint8_t *stage) {
    const int64_t g4 = (kw + 3) / 4;
    int32_t wq[16 * 4]; /* kh, kw <= 16 (qrt__dwp_ok) */
    const int8_t *rows[16];
    for (int64_t ky = 0; ky < kh; ++ky) rows[ky] = tp[ky * kw];
#define QRT__DWPD(KH, KW, G4, S)                                                                   \
    do {                                                                                           \
        qrt__dwpd_quads(wc, kh, kw, wq, KH, KW);                                                   \
        if (small)                                                                                 \
            qrt__dwpd_body(rows, wq, kh, g4, count, c, 1, stage, KH, G4, S);                       \
        else                                                                                       \
            qrt__dwpd_body(rows, wq, kh, g4, count, c, 0, stage, KH, G4, S);                       \
    } while (0)
    if (kh == 3 && kw == 3 && s == 1)
        QRT__DWPD(3, 3, 1, 1);
    else if (kh == 3 && kw == 3)
        QRT__DWPD(3, 3, 1, 2);
    else if (kh == 5 && kw == 5 && s == 1)
        QRT__DWPD(5, 5, 2, 1);
    else if (kh == 5 && kw == 5)
        QRT__DWPD(5, 5, 2, 2);
    else if (s == 1)
        QRT__DWPD(0, 0, 0, 1);
    else
        QRT__DWPD(0, 0, 0, 2);
#undef QRT__DWPD
}

QRT_DWD_FN void qrt__dwpd_run(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                              const qrt_conv1d_quant *q, uint8_t *y, void *scratch, int64_t u0,
                              int64_t u1) {
    qrt__dwpn_drive(p, x, w, q, y, scratch, u0, u1, qrt__dwpd_k8, 1);
}
#endif

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_neondot.c
 * @brief qrt_conv1d_u8__neondot() (design: qrt/neon/conv1d_neondot.h).  The only translation
 *        unit built with -march=armv8.2-a+dotprod; nothing else may be added to it.
 */
#include <arm_neon.h>
#include "conv1d_neon_common.h"
#include "conv1d_neon_gemm.h"
#include "qrt/neon/conv1d_neondot.h"

#define QRT_NEONDOT_FN __attribute__((target("arch=armv8.2-a+dotprod")))

/** sum_j (xs[j] - xz) over the first m taps, as uint32 (mod 2^32). */
static inline uint32_t qrt__conv1d_rowsum(const uint8_t *xs, int64_t m, int32_t xz) {
    uint32_t s = 0;
    for (int64_t j = 0; j < m; ++j) s += xs[j];
    return s - (uint32_t)xz * (uint32_t)m;
}

/** As qrt__conv1d_dot__neon(); `m16` = m rounded down to 16, `xsum` = rowsum over m16 taps. */
QRT_NEONDOT_FN static inline int32_t qrt__conv1d_dot__neondot(const uint8_t *xs, const int8_t *w,
                                                              int64_t m, int64_t m16, uint32_t xsum,
                                                              int32_t xz, int32_t wz) {
    const uint8x16_t bias = vdupq_n_u8(0x80);
    const int8x16_t ones = vdupq_n_s8(1);
    int32x4_t d0 = vdupq_n_s32(0), d1 = vdupq_n_s32(0), s0 = vdupq_n_s32(0);
    int64_t j = 0;
    for (; j + 32 <= m16; j += 32) {
        const int8x16_t x0 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(xs + j), bias));
        const int8x16_t x1 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(xs + j + 16), bias));
        const int8x16_t w0 = vld1q_s8(w + j), w1 = vld1q_s8(w + j + 16);
        d0 = vdotq_s32(d0, x0, w0);
        d1 = vdotq_s32(d1, x1, w1);
        s0 = vdotq_s32(s0, ones, w0);
        s0 = vdotq_s32(s0, ones, w1);
    }
    for (; j < m16; j += 16) {
        const int8x16_t x0 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(xs + j), bias));
        const int8x16_t w0 = vld1q_s8(w + j);
        d0 = vdotq_s32(d0, x0, w0);
        s0 = vdotq_s32(s0, ones, w0);
    }
    const uint32_t xw = (uint32_t)vaddvq_s32(vaddq_s32(d0, d1));
    const uint32_t ws = (uint32_t)vaddvq_s32(s0);
    uint32_t acc = xw + (uint32_t)(128 - xz) * ws - (uint32_t)wz * xsum;
    for (; j < m; ++j) acc += (uint32_t)(((int32_t)xs[j] - xz) * ((int32_t)w[j] - wz));
    return (int32_t)acc;
}

/**
 * qrt__conv1d_rows__neon (conv1d_neon.c) with sdot: one output position's taps packed once as
 * x' = x ^ 0x80 (with sum x'), then per 16 taps and output channel one sdot of x' by w and one
 * of 1 by w (the row's weight sum), 8 channels a pass; the same identity mod 2^32 and a scalar
 * tail under 16 taps.
 */
QRT_NEONDOT_FN static void qrt__conv1d_rows__neondot(const qrt_conv1d_params *p,
                                                     const qrt_conv1d_quant *q,
                                                     const uint8_t *xs, const int8_t *w,
                                                     int64_t taps, int64_t oc0, int64_t oc1,
                                                     int64_t n, int64_t t, void *out) {
    int8_t xp[QRT__NEON_CHUNK] __attribute__((aligned(16)));
    const int64_t t16 = taps & ~(int64_t)15;
    const int32_t xz = p->input_zero;
    const uint8x16_t flip = vdupq_n_u8(0x80);
    const int8x16_t ones = vdupq_n_s8(1);
    int32x4_t sxa = vdupq_n_s32(0);
    for (int64_t i = 0; i < t16; i += 16) {
        const int8x16_t v = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(xs + i), flip));
        vst1q_s8(xp + i, v);
        sxa = vdotq_s32(sxa, v, ones);
    }
    uint32_t sx = (uint32_t)vaddvq_s32(sxa);
    for (int64_t i = t16; i < taps; ++i) {
        xp[i] = (int8_t)(xs[i] ^ 0x80u);
        sx += (uint32_t)(int32_t)xp[i];
    }
    sx += (uint32_t)(128 - xz) * (uint32_t)taps; /* sum (x - xz) */
    for (int64_t ob = oc0; ob < oc1; ob += 8) {
        const int64_t nb = oc1 - ob < 8 ? oc1 - ob : 8;
        const int8_t *wr[8];
        for (int k = 0; k < 8; ++k) wr[k] = w + (ob + (k < nb ? k : nb - 1)) * taps;
        int32x4_t acc[8], ws[8];
        for (int k = 0; k < 8; ++k) acc[k] = ws[k] = vdupq_n_s32(0);
        for (int64_t i = 0; i < t16; i += 16) {
            const int8x16_t xv = vld1q_s8(xp + i);
            for (int k = 0; k < 8; ++k) {
                const int8x16_t wv = vld1q_s8(wr[k] + i);
                acc[k] = vdotq_s32(acc[k], xv, wv);
                ws[k] = vdotq_s32(ws[k], ones, wv);
            }
        }
        for (int k = 0; k < nb; ++k) {
            uint32_t a = (uint32_t)vaddvq_s32(acc[k]), sw = (uint32_t)vaddvq_s32(ws[k]);
            for (int64_t i = t16; i < taps; ++i) {
                a += (uint32_t)((int32_t)xp[i] * (int32_t)wr[k][i]);
                sw += (uint32_t)(int32_t)wr[k][i];
            }
            const int64_t oc = ob + k;
            a += (uint32_t)(128 - xz) * sw - (uint32_t)q->weight_zero[oc] * sx;
            qrt__conv1d_store(p, q, out, n, oc, t, (int32_t)a);
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* GEMM path (conv1d_neon_gemm.h's case): sdot over 4-channel groups                          */
/* ---------------------------------------------------------------------------------------- */

/** Output channels whose sum_ci w is kept per pass (stack). */
#define QRT__GEMM_OC_CHUNK 1024

/**
 * The GEMM path of qrt_conv1d_u8__neondot() (p checked, qrt__conv1d_gemm_ok(p)).  Per block of
 * 8 positions the input is packed once as x' = x ^ 0x80 = x - 128 (int8) in [ci/4][8 pos][4]
 * order, zero past c_in up to a multiple of 16 (xp), with sum_ci (x - xz) per position.  Each
 * tile of 8 output channels then reads 16 weights of each channel in place (one int8x16 per
 * channel: four 4-channel groups) and runs 8 indexed sdots per group and position quad:
 *   sum (x - xz)(w - wz) = sum x' w + (128 - xz) sum w - wz sum (x - xz)   (mod 2^32).
 * Weight bytes read past a row's c_in belong to the next row and meet x' = 0; the last row,
 * whose rounded-up read would leave the array, is read from a zero-padded copy.
 */
QRT_NEONDOT_FN static void qrt__conv1d_gemm__neondot(const qrt_conv1d_params *p,
                                                     const uint8_t *x, const int8_t *w,
                                                     const qrt_conv1d_quant *q, void *out) {
    int8_t xp[QRT__GEMM_MAX_CIN * 8] __attribute__((aligned(16)));
    int8_t wlast[QRT__GEMM_MAX_CIN] __attribute__((aligned(16)));
    uint32_t kc[QRT__GEMM_OC_CHUNK + 8]; /* (128 - xz) sum w + bias, per output channel */
    uint8_t small[QRT__GEMM_OC_CHUNK / 8]; /* qrt__neon_small_y for all, per block of 8 */
    uint8_t wzany[QRT__GEMM_OC_CHUNK / 8]; /* some w_zero != 0, per block of 8 */
    const int64_t ci_n = p->c_in, c16 = (ci_n + 15) & ~(int64_t)15, len = p->len_out;
    const int64_t co_n = p->c_out;
    const int32_t xz = p->input_zero;
    const int8x16_t ones = vdupq_n_s8(1);
    const uint8x8_t flip = vdup_n_u8(0x80);
    qrt__gemm_rq rq;
    qrt__gemm_rq_init(p, &rq);
    for (int64_t i = 0; i < c16; ++i) wlast[i] = i < ci_n ? w[(co_n - 1) * ci_n + i] : 0;
    for (int64_t i = ci_n; i < c16; ++i) /* the padded channels of xp stay 0 */
        for (int j = 0; j < 8; ++j) xp[(i >> 2) * 32 + j * 4 + (i & 3)] = 0;
    for (int64_t ocb = 0; ocb < co_n; ocb += QRT__GEMM_OC_CHUNK) {
        const int64_t oce = ocb + QRT__GEMM_OC_CHUNK < co_n ? ocb + QRT__GEMM_OC_CHUNK : co_n;
        for (int64_t oc = ocb; oc < oce; ++oc) {
            const int8_t *wr = oc == co_n - 1 ? wlast : w + oc * ci_n;
            int32x4_t s = vdupq_n_s32(0);
            int64_t i = 0;
            for (; i + 16 <= ci_n; i += 16) s = vdotq_s32(s, vld1q_s8(wr + i), ones);
            int32_t ws = vaddvq_s32(s);
            for (; i < ci_n; ++i) ws += wr[i];
            kc[oc - ocb] = (uint32_t)(128 - xz) * (uint32_t)ws + (uint32_t)q->bias_q[oc];
            const int64_t b = (oc - ocb) / 8;
            if ((oc - ocb) % 8 == 0) small[b] = 1, wzany[b] = 0;
            if (!qrt__neon_small_y(ci_n, q->bias_q[oc], q->scale[oc])) small[b] = 0;
            if (q->weight_zero[oc] != 0) wzany[b] = 1;
        }
        for (int64_t oc = oce; oc < oce + 8; ++oc) kc[oc - ocb] = 0; /* rows not stored */
        for (int64_t n = 0; n < p->n; ++n) {
            const uint8_t *xn = x + n * p->x_stride_n;
            for (int64_t t0 = 0; t0 < len; t0 += 8) {
                const int64_t t = t0 + 8 <= len ? t0 : len - 8;
                /* pack: four rows of 8 bytes -> 32 bytes [pos][4 channels], x ^ 0x80 */
                int32x4_t sx0 = vdupq_n_s32(0), sx1 = vdupq_n_s32(0);
                for (int64_t g = 0; g * 4 < ci_n; ++g) {
                    uint8x8_t r[4];
                    for (int k = 0; k < 4; ++k)
                        r[k] = g * 4 + k < ci_n
                                   ? veor_u8(vld1_u8(xn + (g * 4 + k) * p->x_stride_c + t), flip)
                                   : vdup_n_u8(0);
                    const uint8x16_t ab = vcombine_u8(vzip1_u8(r[0], r[1]), vzip2_u8(r[0], r[1]));
                    const uint8x16_t cd = vcombine_u8(vzip1_u8(r[2], r[3]), vzip2_u8(r[2], r[3]));
                    const int8x16_t lo = vreinterpretq_s8_u16(
                        vzip1q_u16(vreinterpretq_u16_u8(ab), vreinterpretq_u16_u8(cd)));
                    const int8x16_t hi = vreinterpretq_s8_u16(
                        vzip2q_u16(vreinterpretq_u16_u8(ab), vreinterpretq_u16_u8(cd)));
                    vst1q_s8(xp + g * 32, lo);
                    vst1q_s8(xp + g * 32 + 16, hi);
                    sx0 = vdotq_s32(sx0, lo, ones);
                    sx1 = vdotq_s32(sx1, hi, ones);
                }
                /* sum (x - xz) = sum x' + (128 - xz) c_in, mod 2^32 */
                const int32x4_t off = vdupq_n_s32((int32_t)((uint32_t)(128 - xz) * (uint32_t)ci_n));
                sx0 = vaddq_s32(sx0, off);
                sx1 = vaddq_s32(sx1, off);
                for (int64_t oc0 = ocb; oc0 < oce; oc0 += 8) {
                    const int8_t *wr[8];
                    if (oc0 + 8 < co_n) /* the last row (wlast) is not in this tile */
                        for (int r = 0; r < 8; ++r) wr[r] = w + (oc0 + r) * ci_n;
                    else
                        for (int r = 0; r < 8; ++r) {
                            const int64_t oc = oc0 + r < co_n ? oc0 + r : co_n - 1;
                            wr[r] = oc == co_n - 1 ? wlast : w + oc * ci_n;
                        }
                    int32x4_t acc[16];
                    const uint32_t *kt = kc + (oc0 - ocb);
                    for (int r = 0; r < 8; ++r) /* start: (128 - xz) sum w + bias */
                        acc[2 * r] = acc[2 * r + 1] = vdupq_n_s32((int32_t)kt[r]);
                    const int8_t *xq = xp;
                    for (int64_t i = 0; i < c16; i += 16, xq += 128) {
                        int8x16_t wv[8];
                        for (int r = 0; r < 8; ++r) wv[r] = vld1q_s8(wr[r] + i);
#define QRT__DOT(g)                                                                                \
    do {                                                                                           \
        const int8x16_t x0_ = vld1q_s8(xq + 32 * (g)), x1_ = vld1q_s8(xq + 32 * (g) + 16);         \
        for (int r = 0; r < 8; ++r) {                                                              \
            acc[2 * r] = vdotq_laneq_s32(acc[2 * r], x0_, wv[r], g);                               \
            acc[2 * r + 1] = vdotq_laneq_s32(acc[2 * r + 1], x1_, wv[r], g);                       \
        }                                                                                          \
    } while (0)
                        QRT__DOT(0);
                        QRT__DOT(1);
                        QRT__DOT(2);
                        QRT__DOT(3);
#undef QRT__DOT
                    }
                    if (wzany[(oc0 - ocb) / 8])
                        for (int r = 0; r < 8; ++r) { /* - wz sum (x - xz) */
                            const int32_t wz = q->weight_zero[oc0 + r < oce ? oc0 + r : oce - 1];
                            acc[2 * r] = vmlsq_n_s32(acc[2 * r], sx0, wz);
                            acc[2 * r + 1] = vmlsq_n_s32(acc[2 * r + 1], sx1, wz);
                        }
                    qrt__gemm_store_tile(p, q, out, n, oc0, oce, t, acc, &rq, small[(oc0 - ocb) / 8]);
                }
            }
        }
    }
}

/**
 * @brief Same contract as qrt_conv1d_u8_ref(); sdot inner products.  Bit-exact with _ref.
 * @param[in]  p   geometry, strides, zero points (checked here by qrt_conv1d_check)
 * @param[in]  x   uint8 input at the p->x_stride_* element strides
 * @param[in]  w   [c_out][c_in/groups][kernel] int8, contiguous
 * @param[in]  q   per-output-channel constants
 * @param[out] out uint8 (OUT_U8) or float (OUT_F32) at the p->y_stride_* strides
 * @return QRT_OK, or the gate's error (nothing written)
 */
QRT_NEONDOT_FN qrt_status qrt_conv1d_u8__neondot(const qrt_conv1d_params *p, const uint8_t *x,
                                                 const int8_t *w, const qrt_conv1d_quant *q,
                                                 void *out) {
    const qrt_status st = qrt_conv1d_check(p);
    if (st != QRT_OK) return st;
    if (qrt__conv1d_dw_ok(p)) { /* depthwise / c_in = 1: conv1d_neon.h's lanes over time */
        qrt__conv1d_dw__neon(p, x, w, q, (uint8_t *)out);
        return QRT_OK;
    }
    if (qrt__conv1d_gemm_ok(p)) { /* kernel-1 GEMM (1x1 conv2d): conv1d_neon_gemm.h */
        qrt__conv1d_gemm__neondot(p, x, w, q, out);
        return QRT_OK;
    }
    const int64_t cg = p->c_in / p->groups, og = p->c_out / p->groups;
    const int64_t taps = cg * (int64_t)p->kernel;
    if (taps < 16) /* no full vector per output: the plain loop is faster */
        return qrt_conv1d_u8_ref(p, x, w, q, out);
    uint8_t buf[QRT__NEON_CHUNK];
    const int32_t xz = p->input_zero;
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t g = 0; g < p->groups; ++g)
            for (int64_t t = 0; t < p->len_out; ++t) {
                if (taps <= QRT__NEON_CHUNK) {
                    const uint8_t *xs = qrt__conv1d_gather(p, x, n, g, t, 0, taps, buf);
                    qrt__conv1d_rows__neondot(p, q, xs, w, taps, g * og, (g + 1) * og, n, t,
                                              out);
                    continue;
                }
                for (int64_t oc = g * og; oc < (g + 1) * og; ++oc) {
                    uint32_t acc = 0;
                    for (int64_t j0 = 0; j0 < taps; j0 += QRT__NEON_CHUNK) {
                        const int64_t j1 =
                            j0 + QRT__NEON_CHUNK < taps ? j0 + QRT__NEON_CHUNK : taps;
                        const uint8_t *xs = qrt__conv1d_gather(p, x, n, g, t, j0, j1, buf);
                        const int64_t m16 = (j1 - j0) & ~(int64_t)15;
                        acc += (uint32_t)qrt__conv1d_dot__neondot(
                            xs, w + oc * taps + j0, j1 - j0, m16, qrt__conv1d_rowsum(xs, m16, xz),
                            xz, q->weight_zero[oc]);
                    }
                    qrt__conv1d_store(p, q, out, n, oc, t, (int32_t)acc);
                }
            }
    return QRT_OK;
}

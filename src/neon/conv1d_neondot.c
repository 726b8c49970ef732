/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_neondot.c
 * @brief qrt_conv1d_u8__neondot() (design: qrt/neon/conv1d_neondot.h).  The only translation
 *        unit built with -march=armv8.2-a+dotprod; nothing else may be added to it.
 */
#include <arm_neon.h>
#include "conv1d_neon_common.h"
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
                    const int64_t m16 = taps & ~(int64_t)15;
                    const uint32_t xsum = qrt__conv1d_rowsum(xs, m16, xz);
                    for (int64_t oc = g * og; oc < (g + 1) * og; ++oc)
                        qrt__conv1d_store(p, q, out, n, oc, t,
                                          qrt__conv1d_dot__neondot(xs, w + oc * taps, taps, m16,
                                                                   xsum, xz, q->weight_zero[oc]));
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

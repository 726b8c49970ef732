/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_float_neon.c
 * @brief qrt_linear_f32__neon (aarch64): the float32 dot products of qrt_linear_f32_ref()
 *        with two float32x4 FMA accumulators per output (lanes 0-3 and 4-7 of the reference),
 *        four outputs at a time, the tail through zero-padded copies (fmaf(0, 0, acc) as the
 *        reference pads), the same reduction tree.  Bit-exact with the reference.  armv7 has
 *        no fused vector multiply-add in its baseline NEON: it runs the reference.
 */
#include "qrt/rnn_float.h"

#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>

static inline float hsum(float32x4_t lo, float32x4_t hi)
{
    const float32x4_t t = vaddq_f32(lo, hi);                         /* l, l+4 */
    const float32x2_t u = vadd_f32(vget_low_f32(t), vget_high_f32(t)); /* t0+t2, t1+t3 */
    return vget_lane_f32(u, 0) + vget_lane_f32(u, 1);
}

void qrt_linear_f32__neon(const float *x, size_t ldx, size_t rows, const float *w, size_t k,
                          size_t n, const float *b, float *y, size_t ldy)
{
    const size_t kb = k & ~(size_t)7, rem = k - kb;
    float xt[8], wt[4][8];
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * ldx;
        float *yr = y + r * ldy;
        memset(xt, 0, sizeof xt);
        memcpy(xt, xr + kb, rem * sizeof(float));
        const float32x4_t xt0 = vld1q_f32(xt), xt1 = vld1q_f32(xt + 4);
        size_t o = 0;
        for (; o < n; o += 4) {
            const size_t nr = n - o < 4 ? n - o : 4;
            float32x4_t lo[4], hi[4];
            for (size_t q = 0; q < 4; q++) lo[q] = hi[q] = vdupq_n_f32(0.0f);
            const float *w0 = w + o * k;
            if (nr == 4) {
                for (size_t i = 0; i < kb; i += 8) {
                    const float32x4_t x0 = vld1q_f32(xr + i), x1 = vld1q_f32(xr + i + 4);
                    for (size_t q = 0; q < 4; q++) {
                        lo[q] = vfmaq_f32(lo[q], vld1q_f32(w0 + q * k + i), x0);
                        hi[q] = vfmaq_f32(hi[q], vld1q_f32(w0 + q * k + i + 4), x1);
                    }
                }
            } else {
                for (size_t i = 0; i < kb; i += 8) {
                    const float32x4_t x0 = vld1q_f32(xr + i), x1 = vld1q_f32(xr + i + 4);
                    for (size_t q = 0; q < nr; q++) {
                        lo[q] = vfmaq_f32(lo[q], vld1q_f32(w0 + q * k + i), x0);
                        hi[q] = vfmaq_f32(hi[q], vld1q_f32(w0 + q * k + i + 4), x1);
                    }
                }
            }
            if (rem)
                for (size_t q = 0; q < nr; q++) {
                    memset(wt[q], 0, sizeof wt[q]);
                    memcpy(wt[q], w0 + q * k + kb, rem * sizeof(float));
                    lo[q] = vfmaq_f32(lo[q], vld1q_f32(wt[q]), xt0);
                    hi[q] = vfmaq_f32(hi[q], vld1q_f32(wt[q] + 4), xt1);
                }
            for (size_t q = 0; q < nr; q++) {
                const float s = hsum(lo[q], hi[q]);
                yr[o + q] = b ? s + b[o + q] : s;
            }
        }
    }
}
#endif

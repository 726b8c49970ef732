/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_float_neon.c
 * @brief qrt_linear_f32__neon (aarch64): qrt_linear_f32_ref()'s fmaf chains with one output
 *        per vector lane (a weight panel of 8 outputs is two float32x4 per input i), x[r][i]
 *        broadcast; tiles of 1 or 2 rows x 4 panels.  Bit-exact with the reference.  armv7
 *        has no fused vector multiply-add in its baseline NEON: it runs the reference.
 */
#include "qrt/rnn_float.h"

#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>

#define NR_ QRT_LF32_NR

static inline void tile(const float *x, size_t ldx, const float *wp, size_t k, size_t n,
                        const float *b, float *y, size_t ldy, size_t p0, const int RB,
                        const int PG)
{
    float32x4_t lo[2][4], hi[2][4];
    for (int r = 0; r < RB; r++)
        for (int p = 0; p < PG; p++) lo[r][p] = hi[r][p] = vdupq_n_f32(0.0f);
    const float *w0 = wp + p0 * k * NR_;
    for (size_t i = 0; i < k; i++) {
        float32x4_t wl[4], wh[4];
        for (int p = 0; p < PG; p++) {
            wl[p] = vld1q_f32(w0 + (p * k + i) * NR_);
            wh[p] = vld1q_f32(w0 + (p * k + i) * NR_ + 4);
        }
        for (int r = 0; r < RB; r++) {
            const float32x4_t xb = vdupq_n_f32(x[r * ldx + i]);
            for (int p = 0; p < PG; p++) {
                lo[r][p] = vfmaq_f32(lo[r][p], wl[p], xb);
                hi[r][p] = vfmaq_f32(hi[r][p], wh[p], xb);
            }
        }
    }
    for (int p = 0; p < PG; p++) {
        const size_t o = (p0 + p) * NR_, m = n - o < NR_ ? n - o : NR_;
        float bb[NR_] = {0};
        if (b) memcpy(bb, b + o, m * sizeof(float));
        const float32x4_t bl = vld1q_f32(bb), bh = vld1q_f32(bb + 4);
        for (int r = 0; r < RB; r++) {
            float t[NR_];
            vst1q_f32(t, b ? vaddq_f32(lo[r][p], bl) : lo[r][p]);
            vst1q_f32(t + 4, b ? vaddq_f32(hi[r][p], bh) : hi[r][p]);
            memcpy(y + r * ldy + o, t, m * sizeof(float));
        }
    }
}

void qrt_linear_f32__neon(const float *x, size_t ldx, size_t rows, const float *wp, size_t k,
                          size_t n, const float *b, float *y, size_t ldy)
{
    const size_t panels = (n + NR_ - 1) / NR_;
    size_t r = 0;
    for (; r + 2 <= rows; r += 2)
        for (size_t p = 0; p < panels; p += 4) {
            const size_t pg = panels - p < 4 ? panels - p : 4;
            switch (pg) {
            case 4: tile(x + r * ldx, ldx, wp, k, n, b, y + r * ldy, ldy, p, 2, 4); break;
            case 3: tile(x + r * ldx, ldx, wp, k, n, b, y + r * ldy, ldy, p, 2, 3); break;
            case 2: tile(x + r * ldx, ldx, wp, k, n, b, y + r * ldy, ldy, p, 2, 2); break;
            default: tile(x + r * ldx, ldx, wp, k, n, b, y + r * ldy, ldy, p, 2, 1); break;
            }
        }
    for (; r < rows; r++)
        for (size_t p = 0; p < panels; p += 4) {
            const size_t pg = panels - p < 4 ? panels - p : 4;
            switch (pg) {
            case 4: tile(x + r * ldx, ldx, wp, k, n, b, y + r * ldy, ldy, p, 1, 4); break;
            case 3: tile(x + r * ldx, ldx, wp, k, n, b, y + r * ldy, ldy, p, 1, 3); break;
            case 2: tile(x + r * ldx, ldx, wp, k, n, b, y + r * ldy, ldy, p, 1, 2); break;
            default: tile(x + r * ldx, ldx, wp, k, n, b, y + r * ldy, ldy, p, 1, 1); break;
            }
        }
}
#endif

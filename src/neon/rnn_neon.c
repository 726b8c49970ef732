/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_neon.c
 * @brief The recurrent step loop (src/rnn_loop.h) for NEON (aarch64; armv7 with NEON), around
 *        the packed hidden-projection GEMV of include/qrt/rnn_gemv.h: weights widened to int16,
 *        smlal by the scalar x[i] over blocks of 8 rows, two blocks at a time (exact: each
 *        product |x w| <= 255 * 128 goes straight into an int32 lane).  On armv7 the gate loops
 *        stay in VFP (gcc does not vectorise float with armv7 NEON, which flushes subnormals),
 *        so every build computes the reference's bits.
 */
#include <arm_neon.h>
#include <string.h>

#include "qrt/rnn.h"
#include "qrt/rnn_gemv.h"

#if defined(__aarch64__)
#define TGT
#else
#define TGT __attribute__((target("fpu=neon")))
#endif

static inline TGT void epilogue(int32x4_t d0, int32x4_t d1, const int32_t *wsum, uint32_t o,
                                uint32_t rows, int32_t zx, int32_t sxs, const int32_t *wz,
                                const float *ws, float s, const float *bias, float *y)
{
    const uint32_t n = rows - o >= 8 ? 8 : rows - o;
    int32_t wzb[8] = {0}, accb[8];
    float wsb[8] = {0}, bb[8] = {0}, yb[8];
    memcpy(wzb, wz + o, 4 * n);
    memcpy(wsb, ws + o, 4 * n);
    memcpy(bb, bias + o, 4 * n);
    /* acc = dot - zx*wsum - wz*sum(x - zx): int32 wrapping, exact (rnn_gemv.h) */
    const int32x4_t zxv = vdupq_n_s32(zx), sxv = vdupq_n_s32(sxs);
    int32x4_t a0 = vsubq_s32(d0, vmulq_s32(zxv, vld1q_s32(wsum + o)));
    int32x4_t a1 = vsubq_s32(d1, vmulq_s32(zxv, vld1q_s32(wsum + o + 4)));
    a0 = vsubq_s32(a0, vmulq_s32(vld1q_s32(wzb), sxv));
    a1 = vsubq_s32(a1, vmulq_s32(vld1q_s32(wzb + 4), sxv));
    vst1q_s32(accb, a0);
    vst1q_s32(accb + 4, a1);
    /* the float epilogue in scalar IEEE float (armv7 NEON float would flush subnormals) */
    for (uint32_t j = 0; j < 8; j++) yb[j] = (float)accb[j] * (wsb[j] * s) + bb[j];
    memcpy(y + o, yb, 4 * n);
}

TGT void qrt_rnn_gemv_u8__neon(const void *pack, uint32_t rows, uint32_t cols, const uint8_t *x,
                               int32_t zx, const int32_t *wz, const float *ws, float s,
                               const float *bias, float *y)
{
    const uint32_t rp = (rows + 7) / 8 * 8, nb = rp / 8;
    const int32_t *wsum = (const int32_t *)pack;
    const int16_t *pw = (const int16_t *)((const uint8_t *)pack + 4 * (size_t)rp);
    int32_t sx = 0;
    for (uint32_t i = 0; i < cols; i++) sx += x[i];
    const int32_t sxs = (int32_t)((uint32_t)sx - (uint32_t)cols * (uint32_t)zx);
    const size_t bstride = (size_t)cols * 8; /* int16 of one block */
    uint32_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
        const int16_t *p0 = pw + b * bstride, *p1 = p0 + bstride;
        for (uint32_t i = 0; i < cols; i++) {
            const int16_t xi = (int16_t)x[i];
            const int16x8_t w0 = vld1q_s16(p0 + 8 * (size_t)i), w1 = vld1q_s16(p1 + 8 * (size_t)i);
            a0 = vmlal_n_s16(a0, vget_low_s16(w0), xi);
            a1 = vmlal_n_s16(a1, vget_high_s16(w0), xi);
            a2 = vmlal_n_s16(a2, vget_low_s16(w1), xi);
            a3 = vmlal_n_s16(a3, vget_high_s16(w1), xi);
        }
        epilogue(a0, a1, wsum, 8 * b, rows, zx, sxs, wz, ws, s, bias, y);
        epilogue(a2, a3, wsum, 8 * (b + 1), rows, zx, sxs, wz, ws, s, bias, y);
    }
    for (; b < nb; b++) {
        int32x4_t a0 = vdupq_n_s32(0), a1 = a0;
        const int16_t *p0 = pw + b * bstride;
        for (uint32_t i = 0; i < cols; i++) {
            const int16_t xi = (int16_t)x[i];
            const int16x8_t w0 = vld1q_s16(p0 + 8 * (size_t)i);
            a0 = vmlal_n_s16(a0, vget_low_s16(w0), xi);
            a1 = vmlal_n_s16(a1, vget_high_s16(w0), xi);
        }
        epilogue(a0, a1, wsum, 8 * b, rows, zx, sxs, wz, ws, s, bias, y);
    }
}

static inline qrt_status hidden(qrt_rnn_args *a, int32_t z, float s32)
{
    const size_t H = a->hidden, GH = (size_t)a->gates * a->hidden;
    for (uint32_t b = 0; b < a->batch; b++)
        qrt_rnn_gemv_u8__neon(a->gpack, (uint32_t)GH, (uint32_t)H, a->hq + b * H, z,
                              a->q->weight_zero, a->wscale, s32, a->q->bias_f, a->gh + b * GH);
    return QRT_OK;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* as src/rnn.c: lets the gate loops vectorise */
#endif
#if defined(__aarch64__)
#define RNN_FLOORF 1
#endif
#define RNN_LOOP_NAME rnn_loop_neon
#define RNN_HIDDEN(a, z, s32) hidden((a), (z), (s32))
#include "../rnn_loop.h"

qrt_status qrt_rnn_f32__neon(qrt_rnn_args *a) { return rnn_loop_neon(a); }

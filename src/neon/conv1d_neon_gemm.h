/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_neon_gemm.h
 * @brief Private to src/neon: the GEMM-shaped conv1d case (kernel 1, stride 1,
 *        groups 1, no padding, unit time strides, uint8 output; a 1x1 stride-1 conv2d read as
 *        [C_in][H*W]) as a register-blocked microkernel, out[oc][t] = sum_ci w[oc][ci] x[ci][t].
 *
 * Tiles of 8 output channels x 8 positions are held in 16 int32x4 accumulators.  The last
 * position block of a row starts at len_out - 8 (it overlaps the previous one and rewrites the
 * same bytes), so no position tail exists; output channels past c_out reuse the last channel's
 * weights and are not stored.  Requantization is vectorized and bit-exact with
 * qrt_requant_fp32_u8 (qrt__gemm_rq8).  Accumulation is exact modulo 2^32 and the exact sum fits
 * int32 (qrt_conv1d_check), so the int32 lanes equal the reference's wrapped acc + bias.
 *
 * NEON (no dot product, qrt__conv1d_gemm__neon): for each block of 8 output channels,
 * w - w_zero is packed once as int16 [c_in][8] on the stack; per input channel the 8 input bytes
 * x[ci][t..t+8) are loaded in place and widened to x - x_zero (vsubl_u8), then 16
 * vmlal(_high)_laneq_s16 add them times the 8 channels' weights.  The dot-product variant is in
 * conv1d_neondot.c (qrt__conv1d_gemm__neondot).  armv7 (16 q registers, no laneq) runs a
 * 4-channel x 8-position tile of the same sums: see its qrt__conv1d_gemm__neon below.
 */
#ifndef QRT_SRC_CONV1D_NEON_GEMM_H
#define QRT_SRC_CONV1D_NEON_GEMM_H

#include "conv1d_neon_common.h"

/** Largest c_in of the GEMM path (its stack buffers are sized by it). */
#define QRT__GEMM_MAX_CIN 1024

/** Output channels per tile: 8 on aarch64 (32 vector registers), 4 on armv7 (16). */
#if defined(__aarch64__)
#define QRT__GEMM_OC 8
#else
#define QRT__GEMM_OC 4
#endif

/** Whether p is the GEMM-shaped case the microkernels take (p already checked). */
static inline int qrt__conv1d_gemm_ok(const qrt_conv1d_params *p) {
    return p->groups == 1 && p->kernel == 1 && p->stride == 1 && p->pad_left == 0 &&
           p->x_stride_t == 1 && p->y_stride_t == 1 && p->out_kind == QRT_CONV1D_OUT_U8 &&
           p->len_out >= 8 && p->len_out <= p->len_in && p->c_in >= 16 &&
           p->c_in <= QRT__GEMM_MAX_CIN;
}

/** Output constants of the GEMM path's requantization. */
typedef struct {
    int16x8_t zero;
    uint8x8_t lo, hi;
} qrt__gemm_rq;

QRT_NEON_FN static inline void qrt__gemm_rq_init(const qrt_conv1d_params *p, qrt__gemm_rq *c) {
    c->zero = vdupq_n_s16((int16_t)p->output_zero);
    c->lo = vdup_n_u8((uint8_t)p->output_min);
    c->hi = vdup_n_u8((uint8_t)p->output_max);
}


/**
 * 8 wrapped accumulators (bias included) of one output channel -> 8 uint8, bit-exact with
 * qrt_requant_fp32_u8: y = f32(f32(acc) * scale) (scvtf and fmul round to nearest even, no
 * flush to zero on aarch64 Linux), r = rne(y) (fcvtns) where |y| < 2^31, else INT32_MIN (the
 * range select, as qrt_cvt_f32_s32_rne; skipped when `small`: qrt__neon_small_y), then
 * clamp(r + zero, lo, hi) through saturating narrowings (int32 -> int16, + zero in int16,
 * int16 -> uint8, then the clamp): each saturation is monotone and the identity on 0..255,
 * which holds [lo, hi], so the result equals the reference's.
 */
QRT_NEON_FN static inline __attribute__((always_inline)) uint8x8_t
qrt__gemm_rq8(int32x4_t a, int32x4_t b, float32x4_t scale, const qrt__gemm_rq *c,
              const int small) {
    const float32x4_t ya = vmulq_f32(vcvtq_f32_s32(a), scale);
    const float32x4_t yb = vmulq_f32(vcvtq_f32_s32(b), scale);
#if defined(__aarch64__)
    int32x4_t ra = vcvtnq_s32_f32(ya), rb = vcvtnq_s32_f32(yb);
    if (!small) {
        const float32x4_t lim = vdupq_n_f32(2147483648.0f);
        const int32x4_t imin = vdupq_n_s32(INT32_MIN);
        ra = vbslq_s32(vcaltq_f32(ya, lim), ra, imin);
        rb = vbslq_s32(vcaltq_f32(yb, lim), rb, imin);
    }
    const int16x8_t h = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(ra), rb), c->zero);
#else /* armv7: no rounding convert (qrt__neon_cvt_rne: out-of-range lanes give -2^22, the
       * same clamp floor as INT32_MIN) */
    const int32x4_t ra = small ? qrt__neon_cvt_rne_small(ya) : qrt__neon_cvt_rne(ya);
    const int32x4_t rb = small ? qrt__neon_cvt_rne_small(yb) : qrt__neon_cvt_rne(yb);
    const int16x8_t h = vqaddq_s16(vcombine_s16(vqmovn_s32(ra), vqmovn_s32(rb)), c->zero);
#endif
    return vmin_u8(vmax_u8(vqmovun_s16(h), c->lo), c->hi);
}

#if defined(__aarch64__)
/**
 * The store of a full 8 x 8 tile whose channels all passed qrt__neon_small_y (aarch64): output
 * channel r's 8 positions (acc[2r], acc[2r + 1]) requantized at y + r * ys, two channels a step
 * (one sqadd / sqxtun(2) / umax / umin for 16 bytes), each row's 8 bytes by a lane store.
 * Inlined into the tiles, so the accumulators stay in registers.
 */
QRT_NEON_FN static inline __attribute__((always_inline)) void
qrt__gemm_store_fast(uint8_t *y, int64_t ys, const float *sc, const int32x4_t *acc,
                     const qrt__gemm_rq *rq) {
    const uint8x16_t lo = vcombine_u8(rq->lo, rq->lo), hi = vcombine_u8(rq->hi, rq->hi);
    for (int r = 0; r < 8; r += 2) {
        const float32x4_t s0 = vld1q_dup_f32(sc + r), s1 = vld1q_dup_f32(sc + r + 1);
        const int32x4_t r0 = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(acc[2 * r]), s0));
        const int32x4_t r1 = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(acc[2 * r + 1]), s0));
        const int32x4_t r2 = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(acc[2 * r + 2]), s1));
        const int32x4_t r3 = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(acc[2 * r + 3]), s1));
        const int16x8_t h0 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(r0), r1), rq->zero);
        const int16x8_t h1 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(r2), r3), rq->zero);
        const uint64x2_t u = vreinterpretq_u64_u8(
            vminq_u8(vmaxq_u8(vqmovun_high_s16(vqmovun_s16(h0), h1), lo), hi));
        vst1q_lane_u64((uint64_t *)(void *)y, u, 0);
        y += ys;
        vst1q_lane_u64((uint64_t *)(void *)y, u, 1);
        y += ys;
    }
}
#endif

/**
 * Requantize and store one QRT__GEMM_OC x 8 tile, output channel oc0 + r at acc[2r] (t..t+3),
 * acc[2r+1];
 * channels from oce on are not stored.  `small`: qrt__neon_small_y holds for all 8 channels.
 */
QRT_NEON_FN static inline __attribute__((always_inline)) void
qrt__gemm_store_tile(const qrt_conv1d_params *p, const qrt_conv1d_quant *q, void *out, int64_t n,
                     int64_t oc0, int64_t oce, int64_t t, const int32x4_t *acc,
                     const qrt__gemm_rq *rq, int small) {
    uint8_t *y = (uint8_t *)out + n * p->y_stride_n + oc0 * p->y_stride_c + t;
    const int64_t ys = p->y_stride_c;
    const float *sc = q->scale + oc0;
    if (oc0 + QRT__GEMM_OC <= oce && small) { /* constant trip counts: the tile stays in registers */
#if defined(__aarch64__)
        qrt__gemm_store_fast(y, ys, sc, acc, rq);
#else
        for (int r = 0; r < QRT__GEMM_OC; ++r)
            vst1_u8(y + r * ys,
                    qrt__gemm_rq8(acc[2 * r], acc[2 * r + 1], vdupq_n_f32(sc[r]), rq, 1));
#endif
    } else if (oc0 + QRT__GEMM_OC <= oce) {
        for (int r = 0; r < QRT__GEMM_OC; ++r)
            vst1_u8(y + r * ys,
                    qrt__gemm_rq8(acc[2 * r], acc[2 * r + 1], vdupq_n_f32(sc[r]), rq, 0));
    } else {
        for (int r = 0; r < QRT__GEMM_OC && oc0 + r < oce; ++r)
            vst1_u8(y + r * ys,
                    qrt__gemm_rq8(acc[2 * r], acc[2 * r + 1], vdupq_n_f32(sc[r]), rq, 0));
    }
}

#if defined(__aarch64__)
/** Output channels per chunk of the c16 tile's per-channel constants (its stack arrays). */
#define QRT__GEMM_C16_CHUNK 1024

/**
 * Whether the c16 tile may take these weights: no output channel holds -128 at both i and
 * i + 8 of one of its 16-weight blocks (blocks from ci 0, pairs with both ends < c_in).  Only
 * such a pair lets the tile's int16 sum of two products reach 2 * (-128) * (-128) = 32768; any
 * other pair of products of int8 values lies in [-32512, 32640].  A channel quantized by torch
 * holds at most its one extreme at -128 (symmetric observers map -max|w| to -127.5 -> -128),
 * so real layers take the tile; a layer that does not runs the lane tile below.
 */
QRT_NEON_FN static inline int qrt__gemm_c16_ok(const int8_t *w, int64_t co_n, int64_t ci_n) {
    const int8x16_t m128 = vdupq_n_s8(-128);
    uint8x16_t bad = vdupq_n_u8(0);
    for (int64_t oc = 0; oc < co_n; ++oc) {
        const int8_t *wr = w + oc * ci_n;
        int64_t i = 0;
        for (; i + 16 <= ci_n; i += 16) {
            const uint8x16_t e = vceqq_s8(vld1q_s8(wr + i), m128);
            bad = vorrq_u8(bad, vandq_u8(e, vextq_u8(e, e, 8)));
        }
        for (int64_t j = i; j < i + 8 && j + 8 < ci_n; ++j)
            if (wr[j] == -128 && wr[j + 8] == -128) return 0;
    }
    return vmaxvq_u8(bad) == 0;
}

/**
 * One 4 x 4 tile of qrt__conv1d_gemm_c16__neon: positions t .. t + 3 (packed at xq, c16 apart)
 * times the channels oc0 .. oc0 + 3 (weight rows w0..w3; channels from oce on are computed
 * and not stored), requantized into y (the first channel's row at yt).  sm: qrt__neon_small_y
 * holds for the 4 channels; wzv: their weight zero points (NULL: none).
 */
QRT_NEON_FN static inline __attribute__((always_inline)) void
qrt__gemm_c16_tile(const int8_t *xq, int64_t c16, const int8_t *w0, const int8_t *w1,
                   const int8_t *w2, const int8_t *w3, const int32_t *kt, const float *st,
                   const int32_t *sxt, const int32_t *wzv, int sm, uint8_t *yt, int64_t ys,
                   int64_t nst, int16x8_t zero16, uint8x16_t lo16, uint8x16_t hi16) {
    /* opaque to the optimizer: otherwise GCC hoists the first input block's loads out of the
     * channel loop and spills them around every tile's inner loop (18 instructions a tile) */
    __asm__("" : "+r"(xq));
    int32x4_t acc[16]; /* [position m][channel k] at 4 m + k */
    {
        const int8x16_t wv[4] = {vld1q_s8(w0), vld1q_s8(w1), vld1q_s8(w2), vld1q_s8(w3)};
        for (int m = 0; m < 4; ++m) {
            const int8x16_t xv = vld1q_s8(xq + m * c16);
            for (int k = 0; k < 4; ++k)
                acc[4 * m + k] = vpaddlq_s16(
                    vmlal_high_s8(vmull_s8(vget_low_s8(xv), vget_low_s8(wv[k])), xv, wv[k]));
        }
    }
    for (int64_t i = 16; i < c16; i += 16) {
        const int8x16_t wv[4] = {vld1q_s8(w0 + i), vld1q_s8(w1 + i), vld1q_s8(w2 + i),
                                 vld1q_s8(w3 + i)};
        for (int m = 0; m < 4; ++m) {
            const int8x16_t xv = vld1q_s8(xq + m * c16 + i);
            for (int k = 0; k < 4; ++k)
                acc[4 * m + k] = vpadalq_s16(
                    acc[4 * m + k],
                    vmlal_high_s8(vmull_s8(vget_low_s8(xv), vget_low_s8(wv[k])), xv, wv[k]));
        }
    }
    int32x4_t cv[4]; /* channel k: the 4 positions */
    for (int k = 0; k < 4; ++k)
        cv[k] = vpaddq_s32(vpaddq_s32(acc[k], acc[4 + k]), vpaddq_s32(acc[8 + k], acc[12 + k]));
    for (int k = 0; k < 4; ++k) cv[k] = vaddq_s32(cv[k], vld1q_dup_s32(kt + k));
    if (wzv) {
        const int32x4_t sxv = vld1q_s32(sxt);
        for (int k = 0; k < 4; ++k) cv[k] = vmlsq_n_s32(cv[k], sxv, wzv[k]);
    }
    float32x4_t y[4];
    int32x4_t rr[4];
    for (int k = 0; k < 4; ++k) {
        y[k] = vmulq_f32(vcvtq_f32_s32(cv[k]), vld1q_dup_f32(st + k));
        rr[k] = vcvtnq_s32_f32(y[k]);
    }
    if (!sm) /* the range select of qrt__gemm_rq8 */
        for (int k = 0; k < 4; ++k)
            rr[k] = vbslq_s32(vcaltq_f32(y[k], vdupq_n_f32(2147483648.0f)), rr[k],
                              vdupq_n_s32(INT32_MIN));
    const int16x8_t h01 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(rr[0]), rr[1]), zero16);
    const int16x8_t h23 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(rr[2]), rr[3]), zero16);
    const uint32x4_t u = vreinterpretq_u32_u8(
        vminq_u8(vmaxq_u8(vqmovun_high_s16(vqmovun_s16(h01), h23), lo16), hi16));
    if (nst == 4) {
        vst1q_lane_u32((uint32_t *)(void *)yt, u, 0);
        vst1q_lane_u32((uint32_t *)(void *)(yt + ys), u, 1);
        vst1q_lane_u32((uint32_t *)(void *)(yt + 2 * ys), u, 2);
        vst1q_lane_u32((uint32_t *)(void *)(yt + 3 * ys), u, 3);
    } else {
        uint8_t lanes[16];
        vst1q_u8(lanes, vreinterpretq_u8_u32(u));
        for (int64_t k = 0; k < nst; ++k)
            for (int j = 0; j < 4; ++j) yt[k * ys + j] = lanes[4 * k + j];
    }
}

/**
 * One block of 8 packed positions (xp, output position t) of qrt__conv1d_gemm_c16__neon
 * against the chunk's output channels [ocb, oce): per 4 positions, 4 x 4 tiles over the
 * channels (the tiles of 4 ordinary rows address them from one base; the last tile, with
 * the zero-padded last row or fewer than 4 channels, through clamped pointers).  sm_all:
 * qrt__neon_small_y holds for every channel of the chunk; nowz: no weight zero point
 * (constants where they are, so the common case compiles without the per-tile tests).
 */
QRT_NEON_FN static inline __attribute__((always_inline)) void
qrt__gemm_c16_block(const qrt_conv1d_params *p, const int8_t *w, const qrt_conv1d_quant *q,
                    const int8_t *wlast, const int8_t *xp, const int32_t *kc, const float *scl,
                    const uint8_t *small, const uint8_t *wzany, const int32_t *sx, int64_t ocb,
                    int64_t oce, uint8_t *yn, int64_t t, const int sm_all, const int nowz) {
    const int64_t ci_n = p->c_in, c16 = (ci_n + 15) & ~(int64_t)15;
    const int64_t co_n = p->c_out, ys = p->y_stride_c;
    const int16x8_t zero16 = vdupq_n_s16((int16_t)p->output_zero);
    const uint8x16_t lo16 = vdupq_n_u8((uint8_t)p->output_min);
    const uint8x16_t hi16 = vdupq_n_u8((uint8_t)p->output_max);
    /* tiles of rows < co_n - 1 only (the last row is read from wlast) */
    const int64_t oreg = oce < co_n - 1 ? oce : co_n - 1;
    for (int tt = 0; tt < 8; tt += 4) {
        const int8_t *xq = xp + tt * c16;
        int64_t oc0 = ocb;
        for (; oc0 + 4 <= oreg; oc0 += 4) {
            const int8_t *wb = w + oc0 * ci_n;
            const int64_t tb = (oc0 - ocb) / 4;
            qrt__gemm_c16_tile(xq, c16, wb, wb + ci_n, wb + 2 * ci_n, wb + 3 * ci_n,
                               kc + (oc0 - ocb), scl + (oc0 - ocb), sx + tt,
                               !nowz && wzany[tb] ? q->weight_zero + oc0 : NULL,
                               sm_all || small[tb], yn + oc0 * ys + t + tt, ys, 4, zero16, lo16,
                               hi16);
        }
        for (; oc0 < oce; oc0 += 4) {
            const int8_t *wr[4];
            int32_t wzt[4];
            for (int k = 0; k < 4; ++k) {
                const int64_t oc = oc0 + k < oce ? oc0 + k : oce - 1;
                wr[k] = oc == co_n - 1 ? wlast : w + oc * ci_n;
                wzt[k] = q->weight_zero[oc];
            }
            const int64_t tb = (oc0 - ocb) / 4;
            const int64_t nst = oce - oc0 < 4 ? oce - oc0 : 4;
            qrt__gemm_c16_tile(xq, c16, wr[0], wr[1], wr[2], wr[3], kc + (oc0 - ocb),
                               scl + (oc0 - ocb), sx + tt, !nowz && wzany[tb] ? wzt : NULL,
                               sm_all || small[tb], yn + oc0 * ys + t + tt, ys, nst, zero16,
                               lo16, hi16);
        }
    }
}

/**
 * The c16 GEMM tile of qrt_conv1d_u8__neon() on aarch64 (p checked, qrt__conv1d_gemm_ok(p),
 * qrt__gemm_c16_ok(w)): int8 x int8 products summed in pairs in int16, XNNPACK's "c16 mlal"
 * scheme.  Per block of 8 positions the input is packed once as x' = x ^ 0x80 = x - 128 (int8)
 * in [8 positions][c16] order (c16 = c_in rounded up to 16, x' = 0 in the padding) through an
 * 8 x 8 byte transpose of each half of 16 rows; weights are read in place, 16 per channel and
 * step (bytes past a row's c_in belong to the next row and meet x' = 0; the last row is read
 * from a zero-padded copy).  A tile of 4 positions x 4 channels holds 16 int32x4 accumulators;
 * per 16 input channels each (position, channel) pair takes smull (products 0..7), smlal2
 * (+ products 8..15, two per int16 lane: |sum| <= 32640 by qrt__gemm_c16_ok) and sadalp: 3
 * instructions per 16 MACs where the lane tile takes 4.  Then
 *   sum (x - xz)(w - wz) = sum x' w + (128 - xz) sum w - wz sum (x - xz)   (mod 2^32)
 * as in conv1d_neondot.c, three pairwise adds per channel leave the 4 positions of one channel
 * in a vector, and the requantization is qrt__gemm_rq8's, four channels per 16 bytes.
 */
QRT_NEON_FN static inline void qrt__conv1d_gemm_c16__neon(const qrt_conv1d_params *p,
                                                          const uint8_t *x, const int8_t *w,
                                                          const qrt_conv1d_quant *q, void *out) {
    int8_t xp[QRT__GEMM_MAX_CIN * 8] __attribute__((aligned(16))); /* [8 pos][c16] x' */
    int8_t wlast[QRT__GEMM_MAX_CIN] __attribute__((aligned(16)));
    int32_t kc[QRT__GEMM_C16_CHUNK + 4]; /* (128 - xz) sum w + bias, per output channel */
    float scl[QRT__GEMM_C16_CHUNK + 4];
    uint8_t small[QRT__GEMM_C16_CHUNK / 4], wzany[QRT__GEMM_C16_CHUNK / 4]; /* per 4 channels */
    const int64_t ci_n = p->c_in, c16 = (ci_n + 15) & ~(int64_t)15, len = p->len_out;
    const int64_t co_n = p->c_out, xs = p->x_stride_c;
    const int32_t xz = p->input_zero;
    const uint8x8_t flip = vdup_n_u8(0x80);
    for (int64_t i = 0; i < c16; ++i) wlast[i] = i < ci_n ? w[(co_n - 1) * ci_n + i] : 0;
    for (int64_t ocb = 0; ocb < co_n; ocb += QRT__GEMM_C16_CHUNK) {
        const int64_t oce = ocb + QRT__GEMM_C16_CHUNK < co_n ? ocb + QRT__GEMM_C16_CHUNK : co_n;
        int any_wz = 0, all_small = 1;
        for (int64_t oc = ocb; oc < oce; ++oc) {
            int32_t ws;
            if (q->wsum_c16) { /* the plan's sums */
                ws = q->wsum_c16[oc];
            } else {
                const int8_t *wr = w + oc * ci_n;
                int32x4_t s = vdupq_n_s32(0);
                int64_t i = 0;
                for (; i + 16 <= ci_n; i += 16) s = vpadalq_s16(s, vpaddlq_s8(vld1q_s8(wr + i)));
                ws = vaddvq_s32(s);
                for (; i < ci_n; ++i) ws += wr[i];
            }
            kc[oc - ocb] = (int32_t)((uint32_t)(128 - xz) * (uint32_t)ws + (uint32_t)q->bias_q[oc]);
            scl[oc - ocb] = q->scale[oc];
            const int64_t b = (oc - ocb) / 4;
            if ((oc - ocb) % 4 == 0) small[b] = 1, wzany[b] = 0;
            if (!qrt__neon_small_y(ci_n, q->bias_q[oc], q->scale[oc])) small[b] = 0, all_small = 0;
            if (q->weight_zero[oc] != 0) wzany[b] = 1, any_wz = 1;
        }
        for (int64_t oc = oce; oc < oce + 4; ++oc) kc[oc - ocb] = 0, scl[oc - ocb] = 0.0f;
        for (int64_t n = 0; n < p->n; ++n) {
            const uint8_t *xn = x + n * p->x_stride_n;
            uint8_t *yn = (uint8_t *)out + n * p->y_stride_n;
            for (int64_t t0 = 0; t0 < len; t0 += 8) {
                const int64_t t = t0 + 8 <= len ? t0 : len - 8;
                /* pack 16 rows at a time: [row j | row j + 8] -> 8 x 8 transposes per half */
                for (int64_t i0 = 0; i0 < c16; i0 += 16) {
                    uint8x16_t r[8];
                    for (int j = 0; j < 8; ++j) {
                        const uint8x8_t a = i0 + j < ci_n ? vld1_u8(xn + (i0 + j) * xs + t) : flip;
                        const uint8x8_t b =
                            i0 + j + 8 < ci_n ? vld1_u8(xn + (i0 + j + 8) * xs + t) : flip;
                        r[j] = veorq_u8(vcombine_u8(a, b), vcombine_u8(flip, flip));
                    }
                    uint8x16_t b8[8];
                    for (int j = 0; j < 8; j += 2)
                        b8[j] = vtrn1q_u8(r[j], r[j + 1]), b8[j + 1] = vtrn2q_u8(r[j], r[j + 1]);
                    uint16x8_t c[8];
#define QRT__T16(a, b2, i, k)                                                                      \
    c[i] = vtrn1q_u16(vreinterpretq_u16_u8(b8[a]), vreinterpretq_u16_u8(b8[b2]));                 \
    c[k] = vtrn2q_u16(vreinterpretq_u16_u8(b8[a]), vreinterpretq_u16_u8(b8[b2]))
                    QRT__T16(0, 2, 0, 2); /* c0: columns 0, 4; c2: 2, 6 (rows 0..3) */
                    QRT__T16(1, 3, 1, 3); /* c1: 1, 5; c3: 3, 7 */
                    QRT__T16(4, 6, 4, 6);
                    QRT__T16(5, 7, 5, 7);
#undef QRT__T16
                    for (int k = 0; k < 4; ++k) {
                        const uint32x4_t u = vreinterpretq_u32_u16(c[k]);
                        const uint32x4_t v = vreinterpretq_u32_u16(c[k + 4]);
                        vst1q_s8(xp + k * c16 + i0, vreinterpretq_s8_u32(vtrn1q_u32(u, v)));
                        vst1q_s8(xp + (k + 4) * c16 + i0, vreinterpretq_s8_u32(vtrn2q_u32(u, v)));
                    }
                }
                int32_t sx[8]; /* sum (x - xz) per position, for weight zero points */
                if (any_wz)
                    for (int j = 0; j < 8; ++j) {
                        int32x4_t s = vdupq_n_s32(0);
                        for (int64_t i = 0; i < c16; i += 16)
                            s = vpadalq_s16(s, vpaddlq_s8(vld1q_s8(xp + j * c16 + i)));
                        sx[j] = (int32_t)((uint32_t)vaddvq_s32(s) +
                                          (uint32_t)(128 - xz) * (uint32_t)ci_n);
                    }
                if (all_small && !any_wz)
                    qrt__gemm_c16_block(p, w, q, wlast, xp, kc, scl, small, wzany, sx, ocb, oce,
                                        yn, t, 1, 1);
                else
                    qrt__gemm_c16_block(p, w, q, wlast, xp, kc, scl, small, wzany, sx, ocb, oce,
                                        yn, t, 0, 0);
            }
        }
    }
}

/** The GEMM path of qrt_conv1d_u8__neon() (p checked, qrt__conv1d_gemm_ok(p)). */
QRT_NEON_FN static inline void qrt__conv1d_gemm__neon(const qrt_conv1d_params *p, const uint8_t *x,
                                               const int8_t *w, const qrt_conv1d_quant *q,
                                               void *out) {
    /* c16 from 32 input channels on (qemu cortex-a72 counts: 0.9x the lane tile's
     * instructions at c_in 32, 0.7x at 320; 1.2x at 24, where its reductions dominate) */
    if (p->c_in >= 32 && (q->wsum_c16 || qrt__gemm_c16_ok(w, p->c_out, p->c_in))) {
        qrt__conv1d_gemm_c16__neon(p, x, w, q, out);
        return;
    }
    int16_t wq[QRT__GEMM_MAX_CIN * 8]; /* [ci][8 channels] w - w_zero */
    const int64_t ci_n = p->c_in, len = p->len_out;
    const uint8x8_t vxz = vdup_n_u8((uint8_t)p->input_zero);
    qrt__gemm_rq rq;
    qrt__gemm_rq_init(p, &rq);
    for (int64_t oc0 = 0; oc0 < p->c_out; oc0 += 8) {
        const int8_t *wr[8];
        int8x8_t wzv[8];
        for (int r = 0; r < 8; ++r) {
            const int64_t oc = oc0 + r < p->c_out ? oc0 + r : p->c_out - 1;
            wr[r] = w + oc * ci_n;
            wzv[r] = vdup_n_s8((int8_t)q->weight_zero[oc]);
        }
        int64_t c8 = 0;
        for (; c8 + 8 <= ci_n; c8 += 8) { /* 8 x 8 int16 transpose of w - wz */
            int16x8_t v[8];
            for (int r = 0; r < 8; ++r) v[r] = vsubl_s8(vld1_s8(wr[r] + c8), wzv[r]);
            int16x8_t t[8];
            for (int r = 0; r < 8; r += 2)
                t[r] = vtrn1q_s16(v[r], v[r + 1]), t[r + 1] = vtrn2q_s16(v[r], v[r + 1]);
            int32x4_t u[8];
#define QRT__T32(a, b, i, j)                                                                       \
    u[i] = vtrn1q_s32(vreinterpretq_s32_s16(t[a]), vreinterpretq_s32_s16(t[b]));                   \
    u[j] = vtrn2q_s32(vreinterpretq_s32_s16(t[a]), vreinterpretq_s32_s16(t[b]))
            QRT__T32(0, 2, 0, 2); /* u0: columns 0, 4; u2: 2, 6 (rows 0..3) */
            QRT__T32(1, 3, 1, 3); /* u1: 1, 5; u3: 3, 7 */
            QRT__T32(4, 6, 4, 6);
            QRT__T32(5, 7, 5, 7);
#undef QRT__T32
            int16_t *d = wq + c8 * 8;
            for (int c = 0; c < 4; ++c) {
                const int64x2_t lo = vreinterpretq_s64_s32(u[c]), hi = vreinterpretq_s64_s32(u[c + 4]);
                vst1q_s16(d + 8 * c, vreinterpretq_s16_s64(vtrn1q_s64(lo, hi)));
                vst1q_s16(d + 8 * (c + 4), vreinterpretq_s16_s64(vtrn2q_s64(lo, hi)));
            }
        }
        for (int r = 0; r < 8; ++r) {
            const int32_t wz = q->weight_zero[oc0 + r < p->c_out ? oc0 + r : p->c_out - 1];
            for (int64_t ci = c8; ci < ci_n; ++ci) wq[ci * 8 + r] = (int16_t)(wr[r][ci] - wz);
        }
        int32_t bias[8];
        int small = 1;
        for (int r = 0; r < 8; ++r) {
            const int64_t oc = oc0 + r < p->c_out ? oc0 + r : p->c_out - 1;
            bias[r] = q->bias_q[oc];
            small &= qrt__neon_small_y(ci_n, q->bias_q[oc], q->scale[oc]);
        }
        for (int64_t n = 0; n < p->n; ++n) {
            const uint8_t *xn = x + n * p->x_stride_n;
            for (int64_t t0 = 0; t0 < len; t0 += 8) {
                const int64_t t = t0 + 8 <= len ? t0 : len - 8;
                int32x4_t acc[16];
                for (int r = 0; r < 8; ++r) acc[2 * r] = acc[2 * r + 1] = vdupq_n_s32(bias[r]);
                const uint8_t *xp = xn + t;
                const int16_t *wp = wq;
                for (int64_t ci = 0; ci < ci_n; ++ci, xp += p->x_stride_c, wp += 8) {
                    const int16x8_t xv = vreinterpretq_s16_u16(vsubl_u8(vld1_u8(xp), vxz));
                    const int16x4_t xl = vget_low_s16(xv);
                    const int16x8_t wv = vld1q_s16(wp);
#define QRT__MAC(r)                                                                                \
    acc[2 * r] = vmlal_laneq_s16(acc[2 * r], xl, wv, r);                                           \
    acc[2 * r + 1] = vmlal_high_laneq_s16(acc[2 * r + 1], xv, wv, r)
                    QRT__MAC(0);
                    QRT__MAC(1);
                    QRT__MAC(2);
                    QRT__MAC(3);
                    QRT__MAC(4);
                    QRT__MAC(5);
                    QRT__MAC(6);
                    QRT__MAC(7);
#undef QRT__MAC
                }
                qrt__gemm_store_tile(p, q, out, n, oc0, p->c_out, t, acc, &rq, small);
            }
        }
    }
}

#else /* armv7 */

/**
 * The GEMM path of qrt_conv1d_u8__neon() on armv7 (p checked, qrt__conv1d_gemm_ok(p)): tiles
 * of 4 output channels x 8 positions in 8 int32x4 accumulators (armv7 has 16 q registers and
 * no vmlal_laneq).  Per block of 4 channels, w - w_zero is packed as int16 [c_in][4]; per
 * input channel the 8 input bytes are widened to x - x_zero (vsubl_u8) and 8 vmlal_lane_s16
 * add them times the 4 channels' weights.  Same sums (exact modulo 2^32) and the same
 * requantization as the aarch64 tile.
 */
QRT_NEON_FN static inline void qrt__conv1d_gemm__neon(const qrt_conv1d_params *p, const uint8_t *x,
                                                      const int8_t *w, const qrt_conv1d_quant *q,
                                                      void *out) {
    int16_t wq[QRT__GEMM_MAX_CIN * 4]; /* [ci][4 channels] w - w_zero */
    const int64_t ci_n = p->c_in, len = p->len_out;
    const ptrdiff_t xs = (ptrdiff_t)p->x_stride_c;
    const uint8x8_t vxz = vdup_n_u8((uint8_t)p->input_zero);
    qrt__gemm_rq rq;
    qrt__gemm_rq_init(p, &rq);
    for (int64_t oc0 = 0; oc0 < p->c_out; oc0 += 4) {
        int32_t bias[4];
        int small = 1;
        for (int r = 0; r < 4; ++r) {
            const int64_t oc = oc0 + r < p->c_out ? oc0 + r : p->c_out - 1;
            const int8_t *wr = w + oc * ci_n;
            const int32_t wz = q->weight_zero[oc];
            for (int64_t ci = 0; ci < ci_n; ++ci) wq[ci * 4 + r] = (int16_t)(wr[ci] - wz);
            bias[r] = q->bias_q[oc];
            small &= qrt__neon_small_y(ci_n, q->bias_q[oc], q->scale[oc]);
        }
        for (int64_t n = 0; n < p->n; ++n) {
            const uint8_t *xn = x + n * p->x_stride_n;
            for (int64_t t0 = 0; t0 < len; t0 += 8) {
                const int64_t t = t0 + 8 <= len ? t0 : len - 8;
                int32x4_t acc[8];
                for (int r = 0; r < 4; ++r) acc[2 * r] = acc[2 * r + 1] = vdupq_n_s32(bias[r]);
                const uint8_t *xp = xn + t;
                const int16_t *wp = wq;
                /* 32-bit trip count (c_in <= QRT__GEMM_MAX_CIN): no 64-bit compare per step */
                for (int ci = 0; ci < (int)ci_n; ++ci, xp += xs, wp += 4) {
                    const int16x8_t xv = vreinterpretq_s16_u16(vsubl_u8(vld1_u8(xp), vxz));
                    const int16x4_t xl = vget_low_s16(xv), xh = vget_high_s16(xv);
                    const int16x4_t wv = vld1_s16(wp);
                    acc[0] = vmlal_lane_s16(acc[0], xl, wv, 0);
                    acc[1] = vmlal_lane_s16(acc[1], xh, wv, 0);
                    acc[2] = vmlal_lane_s16(acc[2], xl, wv, 1);
                    acc[3] = vmlal_lane_s16(acc[3], xh, wv, 1);
                    acc[4] = vmlal_lane_s16(acc[4], xl, wv, 2);
                    acc[5] = vmlal_lane_s16(acc[5], xh, wv, 2);
                    acc[6] = vmlal_lane_s16(acc[6], xl, wv, 3);
                    acc[7] = vmlal_lane_s16(acc[7], xh, wv, 3);
                }
                qrt__gemm_store_tile(p, q, out, n, oc0, p->c_out, t, acc, &rq, small);
            }
        }
    }
}

#endif /* __aarch64__ */
#endif /* QRT_SRC_CONV1D_NEON_GEMM_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_neon_common.h
 * @brief Private to src/neon: the receptive-field gather, the scalar store and the NEON dot
 *        product shared by conv1d_neon.c and conv1d_neondot.c (static inline: each translation
 *        unit compiles its own copy with its own flags, so no dot-product code can be shared
 *        into the baseline NEON unit).
 */
#ifndef QRT_SRC_CONV1D_NEON_COMMON_H
#define QRT_SRC_CONV1D_NEON_COMMON_H

#include <arm_neon.h>
#include "qrt/neon/conv1d_neon.h"
#include "qrt/requant.h"

#if defined(__aarch64__)
#define QRT_NEON_FN
#else
#define QRT_NEON_FN __attribute__((target("fpu=neon")))
#endif

/**
 * round-half-even(y) for |y| < 2^31, INT32_MIN for NaN and |y| >= 2^31 (qrt_cvt_f32_s32_rne).
 * aarch64: fcvtns rounds half to even but saturates, so the out-of-range lanes are replaced.
 * armv7 has no rounding convert.  There y is first raised to at least -2^22, then
 * z = y + 1.5 * 2^23 is formed (NEON always rounds to nearest even) and the lane's result is
 * z's bit pattern minus that of 1.5 * 2^23:
 *  - |y| < 2^22: z lies in [2^23, 2^24), where the float spacing is 1, so the one rounding of
 *    the addition is round-half-even(y) and the difference of the patterns is exactly it;
 *  - y <= -2^22 (raised to -2^22): -2^22, which requantizes to the clamp floor as y itself;
 *  - 2^22 <= y < 2^31: z >= 2^24 and positive floats order as their patterns, so the result
 *    is >= 2^22 and requantizes to the clamp ceiling as round-half-even(y) does;
 *  - NaN, |y| >= 2^31: replaced by -2^22 (where aarch64 gives INT32_MIN): the clamp floor.
 * (|r| >= 2^22 lands far outside 0..255 after adding the zero point.)  NEON's flush-to-zero
 * changes only products below 2^-126, which round to 0 either way.
 */
QRT_NEON_FN static inline int32x4_t qrt__neon_cvt_rne(float32x4_t y) {
    /* |y| < 2^31 (false for NaN); y = -2^31 fails it but its value is INT32_MIN anyway */
    const uint32x4_t ok = vcaltq_f32(y, vdupq_n_f32(2147483648.0f));
#if defined(__aarch64__)
    return vbslq_s32(ok, vcvtnq_s32_f32(y), vdupq_n_s32(INT32_MIN));
#else
    /* the replaced lanes take -2^22 instead of INT32_MIN: the same clamp floor, one
     * constant less (armv7 has 16 vector registers) */
    const float32x4_t magic = vdupq_n_f32(12582912.0f), floor = vdupq_n_f32(-4194304.0f);
    const float32x4_t z = vaddq_f32(vmaxq_f32(vbslq_f32(ok, y, floor), floor), magic);
    return vsubq_s32(vreinterpretq_s32_f32(z), vreinterpretq_s32_f32(magic));
#endif
}

/**
 * qrt__neon_cvt_rne() for lanes known to hold |y| < 2^22 (qrt__neon_small_y): fcvtns alone, or
 * on armv7 the 1.5 * 2^23 addition alone (the first case above).
 */
QRT_NEON_FN static inline int32x4_t qrt__neon_cvt_rne_small(float32x4_t y) {
#if defined(__aarch64__)
    return vcvtnq_s32_f32(y);
#else
    const float32x4_t magic = vdupq_n_f32(12582912.0f);
    return vsubq_s32(vreinterpretq_s32_f32(vaddq_f32(y, magic)), vreinterpretq_s32_f32(magic));
#endif
}

/**
 * Whether every y = f32(f32(v) * scale) of an output channel has |y| < 2^22, so
 * qrt__neon_cvt_rne_small() may serve it; v the wrapped acc + bias of a sum of `terms`
 * products (x - xz) (w - wz), each at most 255 * 255 in magnitude: |v| <= B = |bias| +
 * terms * 65025 (v = acc + bias when B < 2^31, and |v| <= 2^31 <= B otherwise), f32(v) rounds
 * to at most B (1 + 2^-24) and |y| <= B (1 + 2^-24)^2 |scale|.  The test uses (1 + 2^-20)^2 in
 * double (its own rounding is far below that margin).  NaN and inf scales fail it.  Used by
 * the conv1d depthwise and GEMM paths (terms = kernel, c_in) and the depthwise conv2d kernels
 * (terms = kh * kw).
 */
static inline int qrt__neon_small_y(int64_t terms, int32_t bias, float scale) {
    const double b = (double)(bias < 0 ? -(int64_t)bias : (int64_t)bias) + (double)terms * 65025.0;
    const double sc = scale < 0 ? -(double)scale : (double)scale;
    const double g = 1.0 + 1.0 / 1048576.0;
    return b * g * g * sc < 4194304.0;
}

/** Per-output-channel constants of the depthwise path's requantization. */
typedef struct {
    int32x4_t bias; /**< int32 bias: the accumulators' start (sums wrap, as paddd) */
    float32x4_t scale;
    int16x8_t zero;    /**< output zero point */
    uint8x16_t lo, hi; /**< clamp */
} qrt__neon_rq;

/** The requantization constants of one output channel, each broadcast. */
QRT_NEON_FN static inline qrt__neon_rq qrt__neon_rq_of(int32_t bias, float scale, int32_t zp,
                                                      int32_t lo, int32_t hi) {
    qrt__neon_rq c;
    c.bias = vdupq_n_s32(bias);
    c.scale = vdupq_n_f32(scale);
    c.zero = vdupq_n_s16((int16_t)zp);
    c.lo = vdupq_n_u8((uint8_t)lo);
    c.hi = vdupq_n_u8((uint8_t)hi);
    return c;
}

/**
 * 16 accumulators (bias included) -> 16 uint8, bit-exact with
 * qrt_requant_fp32_u8(wrap(acc + bias), ...): the int32 lanes wrap modulo 2^32 like the
 * reference's wrapping bias add (the exact sum fits int32), y = f32(f32(acc) * scale)
 * (vcvtq_f32_s32 rounds to nearest like the scalar conversion), r = qrt__neon_cvt_rne(y), then
 * r + zero clamped to [lo, hi] through saturating narrowings (int32 -> int16, + zero in int16,
 * int16 -> uint8, then the clamp): each saturation is monotone and the identity on 0..255,
 * which holds [lo, hi], so the result equals clamp(r + zero).
 */
QRT_NEON_FN static inline __attribute__((always_inline)) uint8x16_t
qrt__neon_requant16(int32x4_t a0, int32x4_t a1, int32x4_t a2, int32x4_t a3, const qrt__neon_rq *c,
                    const int small) {
#define QRT__RQ4(a)                                                                                \
    vqmovn_s32(small ? qrt__neon_cvt_rne_small(vmulq_f32(vcvtq_f32_s32(a), c->scale))              \
                     : qrt__neon_cvt_rne(vmulq_f32(vcvtq_f32_s32(a), c->scale)))
    const int16x8_t l = vqaddq_s16(vcombine_s16(QRT__RQ4(a0), QRT__RQ4(a1)), c->zero);
    const int16x8_t h = vqaddq_s16(vcombine_s16(QRT__RQ4(a2), QRT__RQ4(a3)), c->zero);
#undef QRT__RQ4
    const uint8x16_t u = vcombine_u8(vqmovun_s16(l), vqmovun_s16(h));
    return vminq_u8(vmaxq_u8(u, c->lo), c->hi);
}

/** Taps gathered per pass; larger receptive fields are processed in chunks of this size. */
#define QRT__NEON_CHUNK 2048

/**
 * Gather taps [j0, j1) of output position t (batch n, group g) into buf, natural [cg][K] order.
 * Returns a pointer to the taps: buf, or the input itself when it is contiguous (linear).
 */
static inline const uint8_t *qrt__conv1d_gather(const qrt_conv1d_params *p, const uint8_t *x,
                                                int64_t n, int64_t g, int64_t t, int64_t j0,
                                                int64_t j1, uint8_t *buf) {
    const int64_t cg = p->c_in / p->groups, kk = p->kernel;
    const uint8_t xz = (uint8_t)p->input_zero;
    const int64_t t0 = t * p->stride - p->pad_left;
    if (kk == 1 && p->x_stride_c == 1 && t0 >= 0 && t0 < p->len_in)
        return x + n * p->x_stride_n + (g * cg + j0) * p->x_stride_c + t0 * p->x_stride_t;
    for (int64_t j = j0; j < j1; ++j) {
        const int64_t ic = j / kk, k = j - ic * kk;
        const int64_t tm = t0 + k * p->dilation;
        buf[j - j0] =
            (tm < 0 || tm >= p->len_in)
                ? xz
                : x[n * p->x_stride_n + (g * cg + ic) * p->x_stride_c + tm * p->x_stride_t];
    }
    return buf;
}

/** Write one accumulator through the reference's requantization (bit-exact by construction). */
static inline void qrt__conv1d_store(const qrt_conv1d_params *p, const qrt_conv1d_quant *q,
                                     void *out, int64_t n, int64_t oc, int64_t t, int32_t acc) {
    const int64_t o = n * p->y_stride_n + oc * p->y_stride_c + t * p->y_stride_t;
    if (p->out_kind == QRT_CONV1D_OUT_F32)
        ((float *)out)[o] = qrt_dequant_acc_f32(acc, q->scale[oc], q->bias_f[oc]);
    else
        ((uint8_t *)out)[o] =
            qrt_requant_fp32_u8(qrt_add_s32_wrap(acc, q->bias_q[oc]), q->scale[oc], p->output_zero,
                                p->output_min, p->output_max);
}

/** Horizontal sum of four int32 lanes (vaddvq_s32 exists on aarch64 only). */
QRT_NEON_FN static inline int32_t qrt__neon_hsum_s32(int32x4_t v) {
#if defined(__aarch64__)
    return vaddvq_s32(v);
#else
    const int32x2_t s = vadd_s32(vget_low_s32(v), vget_high_s32(v));
    return vget_lane_s32(vpadd_s32(s, s), 0);
#endif
}

/** sum_j (xs[j] - xz) * (w[j] - wz) over m taps, exact (see the file comment for the bound). */
QRT_NEON_FN static inline int32_t qrt__conv1d_dot__neon(const uint8_t *xs, const int8_t *w,
                                                        int64_t m, int32_t xz, int32_t wz) {
    const uint8x8_t vxz = vdup_n_u8((uint8_t)xz);
    const int8x8_t vwz = vdup_n_s8((int8_t)wz);
    int32x4_t a0 = vdupq_n_s32(0), a1 = vdupq_n_s32(0);
    int64_t j = 0;
    for (; j + 16 <= m; j += 16) {
        const uint8x16_t xv = vld1q_u8(xs + j);
        const int8x16_t wv = vld1q_s8(w + j);
        /* x - xz wraps in 16 bits to the right signed value in -255..255 */
        const int16x8_t xl = vreinterpretq_s16_u16(vsubl_u8(vget_low_u8(xv), vxz));
        const int16x8_t xh = vreinterpretq_s16_u16(vsubl_u8(vget_high_u8(xv), vxz));
        const int16x8_t wl = vsubl_s8(vget_low_s8(wv), vwz);
        const int16x8_t wh = vsubl_s8(vget_high_s8(wv), vwz);
        a0 = vmlal_s16(a0, vget_low_s16(xl), vget_low_s16(wl));
        a1 = vmlal_s16(a1, vget_high_s16(xl), vget_high_s16(wl));
        a0 = vmlal_s16(a0, vget_low_s16(xh), vget_low_s16(wh));
        a1 = vmlal_s16(a1, vget_high_s16(xh), vget_high_s16(wh));
    }
    int32_t acc = qrt__neon_hsum_s32(vaddq_s32(a0, a1));
    for (; j < m; ++j) acc += ((int32_t)xs[j] - xz) * ((int32_t)w[j] - wz);
    return acc;
}

#endif /* QRT_SRC_CONV1D_NEON_COMMON_H */

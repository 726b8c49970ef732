/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_neon.h
 * @brief qrt_conv1d_u8__neon(): Arm NEON variant of qrt_conv1d_u8_ref() (Armv8.0 aarch64 and
 *        armv7 NEON), bit-exact with it.  Chosen at run time by conv1d.h (cpu.h features).
 *
 * Design: for each (n, group, t) the receptive field of one output position is gathered once
 * into a small stack buffer in the weight's natural [c_in/groups][kernel] order (padding taps
 * hold input_zero, so they contribute 0 exactly as in the reference), then every output
 * channel of the group takes an exact dot product with its contiguous weight row:
 *   (x - x_zero) and (w - w_zero) widened to int16 (vsubl), multiply-accumulated into int32
 *   lanes (vmlal_s16).
 * Every partial sum is bounded by the full sum's bound (qrt_conv1d_check: taps * 255 * 255 <
 * 2^31), so no lane overflows and the int32 total equals the reference's accumulator.  The
 * requantization is the reference's own scalar code (requant.h).  Linear layers (kernel 1,
 * channel stride 1) skip the gather and read the input row in place.
 *
 * Depthwise path (c_in/groups == 1, any channel multiplier, uint8 output, unit time strides,
 * stride 1 or 2; see qrt__conv1d_dw_ok): lanes over time.  For each output channel and each
 * block of 16 output positions, every tap loads the 16 input bytes it meets (vld1q, or vld2q's
 * even lanes for stride 2), widens x - x_zero to int16 (vsubl_u8) and multiply-accumulates by
 * the tap's w - w_zero into four int32x4 lanes (vmlal_n_s16): exact, as above.  A block whose
 * every tap lies inside the row loads without a branch; an edge block checks each tap: inside
 * -> load, wholly in the padding -> skipped (it adds 0), straddling -> a 16-byte copy with
 * input_zero in the padding.  No byte outside [row, row + len_in) is ever read and a last
 * partial block stores only its own bytes.  Requantization is vectorized and bit-exact with
 * qrt_requant_fp32_u8: see qrt__neon_requant16.  Other cases with under 16 taps (strided
 * input, float output, stride > 2) still fill no vector, so they run the reference.
 *
 * armv7: Debian armhf's baseline has no NEON, so these functions carry target("fpu=neon") and
 * conv1d.h only calls them when AT_HWCAP reports NEON.  aarch64: NEON is the baseline.
 */
#ifndef QRT_CONV1D_NEON_H
#define QRT_CONV1D_NEON_H

#include <arm_neon.h>
#include "qrt/conv1d_params.h"
#include "qrt/ref/conv1d_ref.h"
#include "qrt/requant.h"

#if defined(__aarch64__)
#define QRT_NEON_FN
#else
#define QRT_NEON_FN __attribute__((target("fpu=neon")))
#endif

/** Taps gathered per pass; larger receptive fields are processed in chunks of this size. */
#define QRT__NEON_CHUNK 2048

/**
 * Gather taps [j0, j1) of output position t (batch n, group g) into buf, natural [cg][K] order.
 * Returns a pointer to the taps: buf, or the input itself when it is contiguous (linear).
 */
static inline const uint8_t *qrt__conv1d_gather(const qrt_conv1d_params *p, const uint8_t *x,
                                                int64_t n, int64_t g, int64_t t, int64_t j0,
                                                int64_t j1, uint8_t *buf)
{
    const int64_t cg = p->c_in / p->groups, kk = p->kernel;
    const uint8_t xz = (uint8_t)p->input_zero;
    const int64_t t0 = t * p->stride - p->pad_left;
    if (kk == 1 && p->x_stride_c == 1 && t0 >= 0 && t0 < p->len_in)
        return x + n * p->x_stride_n + (g * cg + j0) * p->x_stride_c + t0 * p->x_stride_t;
    for (int64_t j = j0; j < j1; ++j) {
        const int64_t ic = j / kk, k = j - ic * kk;
        const int64_t tm = t0 + k * p->dilation;
        buf[j - j0] = (tm < 0 || tm >= p->len_in)
                          ? xz
                          : x[n * p->x_stride_n + (g * cg + ic) * p->x_stride_c +
                              tm * p->x_stride_t];
    }
    return buf;
}

/** Write one accumulator through the reference's requantization (bit-exact by construction). */
static inline void qrt__conv1d_store(const qrt_conv1d_params *p, const qrt_conv1d_quant *q,
                                     void *out, int64_t n, int64_t oc, int64_t t, int32_t acc)
{
    const int64_t o = n * p->y_stride_n + oc * p->y_stride_c + t * p->y_stride_t;
    if (p->out_kind == QRT_CONV1D_OUT_F32)
        ((float *)out)[o] = qrt_dequant_acc_f32(acc, q->scale[oc], q->bias_f[oc]);
    else
        ((uint8_t *)out)[o] = qrt_requant_fp32_u8(qrt_add_s32_wrap(acc, q->bias_q[oc]),
                                                  q->scale[oc], p->output_zero, p->output_min,
                                                  p->output_max);
}

/** Horizontal sum of four int32 lanes (vaddvq_s32 exists on aarch64 only). */
QRT_NEON_FN static inline int32_t qrt__neon_hsum_s32(int32x4_t v)
{
#if defined(__aarch64__)
    return vaddvq_s32(v);
#else
    const int32x2_t s = vadd_s32(vget_low_s32(v), vget_high_s32(v));
    return vget_lane_s32(vpadd_s32(s, s), 0);
#endif
}

/** sum_j (xs[j] - xz) * (w[j] - wz) over m taps, exact (see the file comment for the bound). */
QRT_NEON_FN static inline int32_t qrt__conv1d_dot__neon(const uint8_t *xs, const int8_t *w,
                                                        int64_t m, int32_t xz, int32_t wz)
{
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
    for (; j < m; ++j)
        acc += ((int32_t)xs[j] - xz) * ((int32_t)w[j] - wz);
    return acc;
}

/* ---------------------------------------------------------------------------------------- */
/* Depthwise path: lanes over time                                                           */
/* ---------------------------------------------------------------------------------------- */

/** Whether qrt__conv1d_dw__neon() handles p (c_in/groups == 1, uint8 out, unit time strides). */
static inline int qrt__conv1d_dw_ok(const qrt_conv1d_params *p)
{
    return p->c_in == p->groups && p->out_kind == QRT_CONV1D_OUT_U8 && p->x_stride_t == 1 &&
           p->y_stride_t == 1 && (p->stride == 1 || p->stride == 2);
}

/**
 * round-half-even(y) for |y| < 2^31, INT32_MIN for NaN and |y| >= 2^31 (qrt_cvt_f32_s32_rne).
 * aarch64: fcvtns rounds half to even but saturates, so the out-of-range lanes are replaced.
 * armv7 has no rounding convert: y is first clamped to [-2^22, 2^22] (a lane beyond it
 * requantizes to the clamp bound either way: |r| >= 2^22 is far outside 0..255 after adding
 * the zero point), then y + 1.5 * 2^23 lies in [2^23, 2^24], where the float spacing is 1, so
 * the addition itself rounds half to even (NEON always rounds to nearest) and the integer is
 * the sum's bit pattern minus that of 1.5 * 2^23.  NEON's flush-to-zero changes only products
 * below 2^-126, which round to 0 either way.
 */
QRT_NEON_FN static inline int32x4_t qrt__neon_cvt_rne(float32x4_t y)
{
    const float32x4_t lim = vdupq_n_f32(2147483648.0f);
    const uint32x4_t ok = vandq_u32(vcgeq_f32(y, vnegq_f32(lim)), vcltq_f32(y, lim));
#if defined(__aarch64__)
    const int32x4_t r = vcvtnq_s32_f32(y);
#else
    const float32x4_t big = vdupq_n_f32(4194304.0f), magic = vdupq_n_f32(12582912.0f);
    const float32x4_t yc = vminq_f32(vmaxq_f32(y, vnegq_f32(big)), big);
    const int32x4_t r = vsubq_s32(vreinterpretq_s32_f32(vaddq_f32(yc, magic)),
                                  vreinterpretq_s32_f32(magic));
#endif
    return vbslq_s32(ok, r, vdupq_n_s32(INT32_MIN));
}

/** Per-output-channel constants of the depthwise path's requantization. */
typedef struct {
    int32x4_t bias;   /**< int32 bias (added with wrapping, as paddd) */
    float32x4_t scale;
    int16x8_t zero;   /**< output zero point */
    uint8x16_t lo, hi; /**< clamp */
} qrt__neon_rq;

/**
 * 16 accumulators -> 16 uint8, bit-exact with qrt_requant_fp32_u8(wrap(acc + bias), ...):
 * y = f32(f32(acc) * scale) (vcvtq_f32_s32 rounds to nearest like the scalar conversion);
 * r = qrt__neon_cvt_rne(y); then r + zero clamped to [lo, hi] through saturating narrowings
 * (int32 -> int16, + zero in int16, int16 -> uint8, then the clamp): each saturation is
 * monotone and the identity on 0..255 ⊇ [lo, hi], so the result equals clamp(r + zero).
 */
QRT_NEON_FN static inline uint8x16_t qrt__neon_requant16(int32x4_t a0, int32x4_t a1,
                                                         int32x4_t a2, int32x4_t a3,
                                                         const qrt__neon_rq *c)
{
#define QRT__RQ4(a) qrt__neon_cvt_rne(vmulq_f32(vcvtq_f32_s32(vaddq_s32(a, c->bias)), c->scale))
    const int16x8_t l = vqaddq_s16(vcombine_s16(vqmovn_s32(QRT__RQ4(a0)), vqmovn_s32(QRT__RQ4(a1))),
                                   c->zero);
    const int16x8_t h = vqaddq_s16(vcombine_s16(vqmovn_s32(QRT__RQ4(a2)), vqmovn_s32(QRT__RQ4(a3))),
                                   c->zero);
#undef QRT__RQ4
    const uint8x16_t u = vcombine_u8(vqmovun_s16(l), vqmovun_s16(h));
    return vminq_u8(vmaxq_u8(u, c->lo), c->hi);
}

/** a[0..3] += (xv - xz) * wk over 16 lanes (int16 products widened into int32, exact). */
#define QRT__DW_MAC(xv, wk)                                                                      \
    do {                                                                                         \
        const int16x8_t xl_ = vreinterpretq_s16_u16(vsubl_u8(vget_low_u8(xv), vxz));            \
        const int16x8_t xh_ = vreinterpretq_s16_u16(vsubl_u8(vget_high_u8(xv), vxz));           \
        a0 = vmlal_n_s16(a0, vget_low_s16(xl_), (wk));                                           \
        a1 = vmlal_n_s16(a1, vget_high_s16(xl_), (wk));                                          \
        a2 = vmlal_n_s16(a2, vget_low_s16(xh_), (wk));                                           \
        a3 = vmlal_n_s16(a3, vget_high_s16(xh_), (wk));                                          \
    } while (0)

/**
 * One output row of the depthwise path: yr[t] for t < len_out from the input row xr[0, L)
 * and the K taps wr (zero point wz).  `kc` is K when the caller knows it at compile time
 * (always_inline lets the tap loop unroll), else the same run-time value.
 */
QRT_NEON_FN static inline __attribute__((always_inline)) void
qrt__conv1d_dw_row__neon(const uint8_t *xr, int64_t L, const int8_t *wr, int32_t wz,
                         const int64_t kc, int64_t d, int64_t pad, int64_t s, int32_t xz,
                         const qrt__neon_rq *c, uint8_t *yr, int64_t len_out)
{
    const uint8x8_t vxz = vdup_n_u8((uint8_t)xz);
    const int64_t width = 16 * s; /* bytes one tap's vector load covers */
    const int64_t reach = (kc - 1) * d + width;
    for (int64_t t0 = 0; t0 < len_out; t0 += 16) {
        int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
        const int64_t b = t0 * s - pad; /* first input position of tap 0 */
        if (b >= 0 && b + reach <= L) { /* interior: every tap loads in place */
            const uint8_t *xb = xr + b;
            if (s == 1) {
                for (int64_t k = 0; k < kc; ++k) {
                    const uint8x16_t xv = vld1q_u8(xb + k * d);
                    QRT__DW_MAC(xv, (int16_t)((int32_t)wr[k] - wz));
                }
            } else {
                for (int64_t k = 0; k < kc; ++k) {
                    const uint8x16_t xv = vld2q_u8(xb + k * d).val[0];
                    QRT__DW_MAC(xv, (int16_t)((int32_t)wr[k] - wz));
                }
            }
        } else { /* an edge: check each tap */
            for (int64_t k = 0; k < kc; ++k) {
                const int64_t sk = b + k * d;
                uint8x16_t xv;
                if (sk >= 0 && sk + width <= L) {
                    xv = s == 1 ? vld1q_u8(xr + sk) : vld2q_u8(xr + sk).val[0];
                } else if (sk >= L || sk + 15 * s < 0) {
                    continue; /* all 16 positions are padding: they add 0 */
                } else {
                    uint8_t tmp[16];
                    for (int i = 0; i < 16; ++i) {
                        const int64_t pos = sk + i * s;
                        tmp[i] = (pos >= 0 && pos < L) ? xr[pos] : (uint8_t)xz;
                    }
                    xv = vld1q_u8(tmp);
                }
                QRT__DW_MAC(xv, (int16_t)((int32_t)wr[k] - wz));
            }
        }
        const uint8x16_t yv = qrt__neon_requant16(a0, a1, a2, a3, c);
        if (t0 + 16 <= len_out) {
            vst1q_u8(yr + t0, yv);
        } else {
            uint8_t tmp[16];
            vst1q_u8(tmp, yv);
            for (int64_t i = 0; t0 + i < len_out; ++i)
                yr[t0 + i] = tmp[i];
        }
    }
}
#undef QRT__DW_MAC

/**
 * @brief The depthwise path of qrt_conv1d_u8__neon() (p already checked, qrt__conv1d_dw_ok(p)).
 *        Bit-exact with qrt_conv1d_u8_ref(); see the file comment.
 */
QRT_NEON_FN static void qrt__conv1d_dw__neon(const qrt_conv1d_params *p, const uint8_t *x,
                                             const int8_t *w, const qrt_conv1d_quant *q,
                                             uint8_t *out)
{
    const int64_t og = p->c_out / p->groups, kk = p->kernel, d = p->dilation;
    const int64_t pad = p->pad_left, s = p->stride, L = p->len_in, lo = p->len_out;
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t oc = 0; oc < p->c_out; ++oc) {
            const uint8_t *xr = x + n * p->x_stride_n + (oc / og) * p->x_stride_c;
            uint8_t *yr = out + n * p->y_stride_n + oc * p->y_stride_c;
            const int8_t *wr = w + oc * kk;
            const int32_t wz = q->weight_zero[oc];
            qrt__neon_rq c;
            c.bias = vdupq_n_s32(q->bias_q[oc]);
            c.scale = vdupq_n_f32(q->scale[oc]);
            c.zero = vdupq_n_s16((int16_t)p->output_zero);
            c.lo = vdupq_n_u8((uint8_t)p->output_min);
            c.hi = vdupq_n_u8((uint8_t)p->output_max);
            switch (kk) { /* common kernels get an unrolled tap loop */
            case 3:
                qrt__conv1d_dw_row__neon(xr, L, wr, wz, 3, d, pad, s, p->input_zero, &c, yr, lo);
                break;
            case 5:
                qrt__conv1d_dw_row__neon(xr, L, wr, wz, 5, d, pad, s, p->input_zero, &c, yr, lo);
                break;
            case 9:
                qrt__conv1d_dw_row__neon(xr, L, wr, wz, 9, d, pad, s, p->input_zero, &c, yr, lo);
                break;
            default:
                qrt__conv1d_dw_row__neon(xr, L, wr, wz, kk, d, pad, s, p->input_zero, &c, yr, lo);
                break;
            }
        }
}

/**
 * @brief Same contract as qrt_conv1d_u8_ref(); NEON inner products.  Bit-exact with _ref.
 * @param[in]  p   geometry, strides, zero points (checked here by qrt_conv1d_check)
 * @param[in]  x   uint8 input at the p->x_stride_* element strides
 * @param[in]  w   [c_out][c_in/groups][kernel] int8, contiguous
 * @param[in]  q   per-output-channel constants
 * @param[out] out uint8 (OUT_U8) or float (OUT_F32) at the p->y_stride_* strides
 * @return QRT_OK, or the gate's error (nothing written)
 */
QRT_NEON_FN static qrt_status qrt_conv1d_u8__neon(const qrt_conv1d_params *p, const uint8_t *x,
                                                  const int8_t *w, const qrt_conv1d_quant *q,
                                                  void *out)
{
    const qrt_status st = qrt_conv1d_check(p);
    if (st != QRT_OK)
        return st;
    if (qrt__conv1d_dw_ok(p)) { /* depthwise / c_in = 1: lanes over time */
        qrt__conv1d_dw__neon(p, x, w, q, (uint8_t *)out);
        return QRT_OK;
    }
    const int64_t cg = p->c_in / p->groups, og = p->c_out / p->groups;
    const int64_t taps = cg * (int64_t)p->kernel;
    if (taps < 16) /* no full vector per output: the plain loop is faster */
        return qrt_conv1d_u8_ref(p, x, w, q, out);
    uint8_t buf[QRT__NEON_CHUNK];
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t g = 0; g < p->groups; ++g)
            for (int64_t t = 0; t < p->len_out; ++t) {
                if (taps <= QRT__NEON_CHUNK) {
                    const uint8_t *xs = qrt__conv1d_gather(p, x, n, g, t, 0, taps, buf);
                    for (int64_t oc = g * og; oc < (g + 1) * og; ++oc)
                        qrt__conv1d_store(p, q, out, n, oc, t,
                                          qrt__conv1d_dot__neon(xs, w + oc * taps, taps,
                                                                p->input_zero,
                                                                q->weight_zero[oc]));
                    continue;
                }
                for (int64_t oc = g * og; oc < (g + 1) * og; ++oc) {
                    uint32_t acc = 0; /* exact total fits int32; partial chunks sum mod 2^32 */
                    for (int64_t j0 = 0; j0 < taps; j0 += QRT__NEON_CHUNK) {
                        const int64_t j1 =
                            j0 + QRT__NEON_CHUNK < taps ? j0 + QRT__NEON_CHUNK : taps;
                        const uint8_t *xs = qrt__conv1d_gather(p, x, n, g, t, j0, j1, buf);
                        acc += (uint32_t)qrt__conv1d_dot__neon(xs, w + oc * taps + j0, j1 - j0,
                                                               p->input_zero, q->weight_zero[oc]);
                    }
                    qrt__conv1d_store(p, q, out, n, oc, t, (int32_t)acc);
                }
            }
    return QRT_OK;
}

#endif /* QRT_CONV1D_NEON_H */

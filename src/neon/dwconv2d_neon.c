/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_neon.c
 * @brief NEON depthwise conv2d (qrt/dwconv2d.h; aarch64 and armv7 with NEON) over the phase
 *        planes of src/dwconv2d_impl.h: 16 flat outputs per step, one vmlal (int16 x int16 ->
 *        int32, exact) per tap and 4 outputs.  Requantization equals requant.h's: y =
 *        f32(acc + bias) * scale in f32, rounded to nearest-even by the 1.5 * 2^23 trick on y
 *        clamped to +-512 (rne and clamping commute), and y outside [-2^31, 2^31) -- where
 *        x86's cvtps2dq gives INT32_MIN -- lands on the clamp floor as the reference does.
 */
#include <arm_neon.h>

#include "../dwconv2d_impl.h"
#include "qrt/neon/dwconv2d_neon.h"
#include "qrt/requant.h"

#if defined(__aarch64__)
#define QRT_DWN_FN
#else
#define QRT_DWN_FN __attribute__((target("fpu=neon")))
#endif

static inline QRT_DWN_FN int16x4_t qrt__dwn_rq(int32x4_t acc, int32x4_t vb, float32x4_t vs,
                                               int32x4_t vlo, int32x4_t vhi, int32x4_t vz) {
    const float32x4_t y = vmulq_f32(vcvtq_f32_s32(vaddq_s32(acc, vb)), vs);
    const uint32x4_t ok = vandq_u32(vcgeq_f32(y, vdupq_n_f32(-2147483648.0f)),
                                    vcltq_f32(y, vdupq_n_f32(2147483648.0f)));
    const float32x4_t yc = vminq_f32(vmaxq_f32(y, vdupq_n_f32(-512.0f)), vdupq_n_f32(512.0f));
    const float32x4_t magic = vdupq_n_f32(12582912.0f);
    int32x4_t r = vcvtq_s32_f32(vsubq_f32(vaddq_f32(yc, magic), magic));
    r = vbslq_s32(ok, r, vdupq_n_s32(-512));
    r = vaddq_s32(vminq_s32(vmaxq_s32(r, vlo), vhi), vz);
    return vqmovn_s32(r);
}

static QRT_DWN_FN void qrt__dwn_kernel(const int16_t *const *src, const int16_t *wt,
                                       const int32_t *wp, int64_t taps, int64_t count,
                                       int32_t bias, float scale, int32_t zp, int32_t lo,
                                       int32_t hi, uint8_t *stage) {
    (void)wp;
    const int32x4_t vb = vdupq_n_s32(bias), vlo = vdupq_n_s32(lo - zp),
                    vhi = vdupq_n_s32(hi - zp), vz = vdupq_n_s32(zp);
    const float32x4_t vs = vdupq_n_f32(scale);
    for (int64_t f = 0; f < count; f += 16) {
        int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t t = 0; t < taps; ++t) {
            const int16_t *s = src[t] + f;
            const int16_t wv = wt[t];
            const int16x8_t x0 = vld1q_s16(s), x1 = vld1q_s16(s + 8);
            a0 = vmlal_n_s16(a0, vget_low_s16(x0), wv);
            a1 = vmlal_n_s16(a1, vget_high_s16(x0), wv);
            a2 = vmlal_n_s16(a2, vget_low_s16(x1), wv);
            a3 = vmlal_n_s16(a3, vget_high_s16(x1), wv);
        }
        const int16x8_t v0 = vcombine_s16(qrt__dwn_rq(a0, vb, vs, vlo, vhi, vz),
                                          qrt__dwn_rq(a1, vb, vs, vlo, vhi, vz));
        const int16x8_t v1 = vcombine_s16(qrt__dwn_rq(a2, vb, vs, vlo, vhi, vz),
                                          qrt__dwn_rq(a3, vb, vs, vlo, vhi, vz));
        vst1q_u8(stage + f, vcombine_u8(vqmovun_s16(v0), vqmovun_s16(v1)));
    }
}

static QRT_DWN_FN void qrt__dwn_widen(const uint8_t *s, int16_t *d, int64_t len, int32_t xz,
                                      int64_t step) {
    const int16x8_t vz = vdupq_n_s16((int16_t)xz);
    int64_t j = 0;
    if (step == 1) {
        for (; j + 8 <= len; j += 8)
            vst1q_s16(d + j, vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vld1_u8(s + j))), vz));
    } else { /* step 2: vld2 splits even / odd bytes; reads s[2j .. 2j + 15] <= s[2 (len-1)] */
        for (; j + 8 < len; j += 8)
            vst1q_s16(d + j,
                      vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vld2_u8(s + 2 * j).val[0])), vz));
    }
    for (; j < len; ++j) d[j] = (int16_t)((int32_t)s[j * step] - xz);
}

/* as qrt__dwn_rq, the bias already in the sums; on aarch64 vcvtnq (round to nearest even,
 * saturating) with |y| < 2^31 (false for NaN) choosing the x86 INT32_MIN otherwise */
static inline QRT_DWN_FN int16x4_t qrt__dwn_rq0(int32x4_t acc, float32x4_t vs, int32x4_t vlo,
                                                int32x4_t vhi, int32x4_t vz) {
    const float32x4_t y = vmulq_f32(vcvtq_f32_s32(acc), vs);
#if defined(__aarch64__)
    const uint32x4_t ok = vcltq_f32(vabsq_f32(y), vdupq_n_f32(2147483648.0f));
    int32x4_t r = vbslq_s32(ok, vcvtnq_s32_f32(y), vdupq_n_s32(INT32_MIN));
#else
    const uint32x4_t ok = vandq_u32(vcgeq_f32(y, vdupq_n_f32(-2147483648.0f)),
                                    vcltq_f32(y, vdupq_n_f32(2147483648.0f)));
    const float32x4_t yc = vminq_f32(vmaxq_f32(y, vdupq_n_f32(-512.0f)), vdupq_n_f32(512.0f));
    const float32x4_t magic = vdupq_n_f32(12582912.0f);
    int32x4_t r = vcvtq_s32_f32(vsubq_f32(vaddq_f32(yc, magic), magic));
    r = vbslq_s32(ok, r, vdupq_n_s32(-512));
#endif
    r = vaddq_s32(vminq_s32(vmaxq_s32(r, vlo), vhi), vz);
    return vqmovn_s32(r);
}

/* the flat path's kernel body: the sums start at the bias (vmlal wraps; the order of modular
 * adds does not matter); `taps` a constant for the 3x3 instance, so its pointers, masks and
 * weights stay in registers */
__attribute__((always_inline)) static inline QRT_DWN_FN void qrt__dwn_body_m(
    const int16_t *const *src, const int16_t *const *mk, const int16_t *wt, int64_t taps,
    int64_t count, int32_t bias, float scale, int32_t zp, int32_t lo, int32_t hi,
    uint8_t *stage) {
    const int32x4_t vb = vdupq_n_s32(bias), vlo = vdupq_n_s32(lo - zp),
                    vhi = vdupq_n_s32(hi - zp), vz = vdupq_n_s32(zp);
    const float32x4_t vs = vdupq_n_f32(scale);
    for (int64_t f = 0; f < count; f += 16) {
        int32x4_t a0 = vb, a1 = vb, a2 = vb, a3 = vb;
        for (int64_t t = 0; t < taps; ++t) {
            const int16_t *s = src[t] + f, *m = mk[t];
            const int16_t wv = wt[t];
            int16x8_t x0 = vld1q_s16(s), x1 = vld1q_s16(s + 8);
            if (m) {
                x0 = vandq_s16(x0, vld1q_s16(m + f));
                x1 = vandq_s16(x1, vld1q_s16(m + f + 8));
            }
            a0 = vmlal_n_s16(a0, vget_low_s16(x0), wv);
            a2 = vmlal_n_s16(a2, vget_low_s16(x1), wv);
#if defined(__aarch64__)
            a1 = vmlal_high_n_s16(a1, x0, wv); /* smlal2: no dup of the high half */
            a3 = vmlal_high_n_s16(a3, x1, wv);
#else
            a1 = vmlal_n_s16(a1, vget_high_s16(x0), wv);
            a3 = vmlal_n_s16(a3, vget_high_s16(x1), wv);
#endif
        }
        const int16x8_t v0 = vcombine_s16(qrt__dwn_rq0(a0, vs, vlo, vhi, vz),
                                          qrt__dwn_rq0(a1, vs, vlo, vhi, vz));
        const int16x8_t v1 = vcombine_s16(qrt__dwn_rq0(a2, vs, vlo, vhi, vz),
                                          qrt__dwn_rq0(a3, vs, vlo, vhi, vz));
        vst1q_u8(stage + f, vcombine_u8(vqmovun_s16(v0), vqmovun_s16(v1)));
    }
}

/* one tap of the 3x3 kernel: run s (masked by m where not NULL), weight w */
#if defined(__aarch64__)
#define QRT__DWN_TAP(s, m, w)                                                                     \
    do {                                                                                          \
        int16x8_t x0 = vld1q_s16((s) + f), x1 = vld1q_s16((s) + f + 8);                           \
        if (m) {                                                                                  \
            x0 = vandq_s16(x0, vld1q_s16((m) + f));                                               \
            x1 = vandq_s16(x1, vld1q_s16((m) + f + 8));                                           \
        }                                                                                         \
        a0 = vmlal_n_s16(a0, vget_low_s16(x0), (w));                                              \
        a2 = vmlal_n_s16(a2, vget_low_s16(x1), (w));                                              \
        a1 = vmlal_high_n_s16(a1, x0, (w));                                                       \
        a3 = vmlal_high_n_s16(a3, x1, (w));                                                       \
    } while (0)
#else
#define QRT__DWN_TAP(s, m, w)                                                                     \
    do {                                                                                          \
        int16x8_t x0 = vld1q_s16((s) + f), x1 = vld1q_s16((s) + f + 8);                           \
        if (m) {                                                                                  \
            x0 = vandq_s16(x0, vld1q_s16((m) + f));                                               \
            x1 = vandq_s16(x1, vld1q_s16((m) + f + 8));                                           \
        }                                                                                         \
        a0 = vmlal_n_s16(a0, vget_low_s16(x0), (w));                                              \
        a1 = vmlal_n_s16(a1, vget_high_s16(x0), (w));                                             \
        a2 = vmlal_n_s16(a2, vget_low_s16(x1), (w));                                              \
        a3 = vmlal_n_s16(a3, vget_high_s16(x1), (w));                                             \
    } while (0)
#endif

/* 3x3: the run pointers, masks and weights copied to locals first (the stage stores could
 * alias the tables, so the compiler would reload them for every step otherwise) */
static QRT_DWN_FN void qrt__dwn_kernel9(const int16_t *const *src, const int16_t *const *mk,
                                        const int16_t *wt, int64_t count, int32_t bias,
                                        float scale, int32_t zp, int32_t lo, int32_t hi,
                                        uint8_t *stage) {
    const int16_t *s0 = src[0], *s1 = src[1], *s2 = src[2], *s3 = src[3], *s4 = src[4],
                  *s5 = src[5], *s6 = src[6], *s7 = src[7], *s8 = src[8];
    const int16_t *m0 = mk[0], *m1 = mk[1], *m2 = mk[2], *m3 = mk[3], *m4 = mk[4], *m5 = mk[5],
                  *m6 = mk[6], *m7 = mk[7], *m8 = mk[8];
    const int16_t w0 = wt[0], w1 = wt[1], w2 = wt[2], w3 = wt[3], w4 = wt[4], w5 = wt[5],
                  w6 = wt[6], w7 = wt[7], w8 = wt[8];
    const int32x4_t vb = vdupq_n_s32(bias), vlo = vdupq_n_s32(lo - zp),
                    vhi = vdupq_n_s32(hi - zp), vz = vdupq_n_s32(zp);
    const float32x4_t vs = vdupq_n_f32(scale);
    for (int64_t f = 0; f < count; f += 16) {
        int32x4_t a0 = vb, a1 = vb, a2 = vb, a3 = vb;
        QRT__DWN_TAP(s0, m0, w0);
        QRT__DWN_TAP(s1, m1, w1);
        QRT__DWN_TAP(s2, m2, w2);
        QRT__DWN_TAP(s3, m3, w3);
        QRT__DWN_TAP(s4, m4, w4);
        QRT__DWN_TAP(s5, m5, w5);
        QRT__DWN_TAP(s6, m6, w6);
        QRT__DWN_TAP(s7, m7, w7);
        QRT__DWN_TAP(s8, m8, w8);
        const int16x8_t v0 = vcombine_s16(qrt__dwn_rq0(a0, vs, vlo, vhi, vz),
                                          qrt__dwn_rq0(a1, vs, vlo, vhi, vz));
        const int16x8_t v1 = vcombine_s16(qrt__dwn_rq0(a2, vs, vlo, vhi, vz),
                                          qrt__dwn_rq0(a3, vs, vlo, vhi, vz));
        vst1q_u8(stage + f, vcombine_u8(vqmovun_s16(v0), vqmovun_s16(v1)));
    }
}

static QRT_DWN_FN void qrt__dwn_kernel_m(const int16_t *const *src, const int16_t *const *mk,
                                         const int16_t *wt, const int32_t *wp, int64_t taps,
                                         int64_t count, int32_t bias, float scale, int32_t zp,
                                         int32_t lo, int32_t hi, uint8_t *stage) {
    (void)wp;
    if (taps == 9)
        qrt__dwn_kernel9(src, mk, wt, count, bias, scale, zp, lo, hi, stage);
    else
        qrt__dwn_body_m(src, mk, wt, taps, count, bias, scale, zp, lo, hi, stage);
}

/* stride-2 split of one row: vld2 of 16 bytes where sroom / room allow, else the tail
 * (< 16 bytes) through a small buffer (nothing past src[len-1] read, nothing past the phase
 * rows written) */
static inline __attribute__((always_inline)) QRT_DWN_FN void qrt__dwn_widen2(const uint8_t *s, int16_t *d0, int16_t *d1, int64_t len,
                                       int32_t xz, int64_t sroom, int64_t room) {
    const int16x8_t vz = vdupq_n_s16((int16_t)xz);
    int64_t j = 0;
    for (; 2 * j < len && 2 * j + 16 <= sroom && j + 8 <= room; j += 8) {
        const uint8x8x2_t v = vld2_u8(s + 2 * j);
        vst1q_s16(d0 + j, vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(v.val[0])), vz));
        vst1q_s16(d1 + j, vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(v.val[1])), vz));
    }
    for (; 2 * j < len; j += 8) {
        const int64_t nb = len - 2 * j < 16 ? len - 2 * j : 16;
        uint8_t tb[16];
        int16_t t0[8], t1[8];
        memset(tb, 0, sizeof tb);
        memcpy(tb, s + 2 * j, (size_t)nb);
        const uint8x8x2_t v = vld2_u8(tb);
        vst1q_s16(t0, vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(v.val[0])), vz));
        vst1q_s16(t1, vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(v.val[1])), vz));
        memcpy(d0 + j, t0, (size_t)((nb + 1) / 2) * 2u);
        memcpy(d1 + j, t1, (size_t)(nb / 2) * 2u);
    }
}

QRT_DWN_FN void qrt_dwconv2d_u8__neon(const qrt_dwconv2d_params *p, const uint8_t *x,
                                      const int8_t *w, const qrt_conv1d_quant *q, uint8_t *y,
                                      void *scratch, int64_t u0, int64_t u1) {
    if (qrt__dwf_ok(p))
        qrt__dwf_run(p, x, w, q, y, scratch, u0, u1, qrt__dwn_kernel_m, qrt__dwn_widen,
                     qrt__dwn_widen2);
    else
        qrt__dw_run(p, x, w, q, y, scratch, u0, u1, qrt__dwn_kernel, qrt__dwn_widen);
}

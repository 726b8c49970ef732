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

#if defined(__aarch64__)
/* ---- Channels in lanes, small planes (aarch64; the NEON form of src/x86/dwconv2d_avx2_cl.c,
 * on the same gate, weight pairs (qrt_dwconv2d_pack_cl) and scratch, qrt__dwcl_geom_of):
 * blocks of 16 input channels; B[pos] = the 16 channels' bytes of each image position (16 x 16
 * byte transposes, zips at 8/16/32/64 bits: the x86 unpack network); T[r][col] = the 16
 * channels' int16 (x - input_zero) of the zero-padded image (32 bytes an entry, every column);
 * each output sums kh * kw taps as 4 vmlal (int16 x int16 -> int32, exact, wrapping adds from
 * the bias) per tap and 16 channels, 4 outputs of a row at a time (16 accumulators); then
 * qrt__dwn_rq0 per lane with the lane's channel scale into a position-major stage, transposed
 * back to the NCHW rows. */

static inline QRT_DWN_FN void qrt__dwcn_tr(const uint8x16_t in[16], uint8x16_t out[16]) {
    uint8x16_t a[16];
    uint16x8_t b[16];
    for (int i = 0; i < 8; ++i) {
        a[i] = vzip1q_u8(in[2 * i], in[2 * i + 1]);
        a[i + 8] = vzip2q_u8(in[2 * i], in[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {
        const uint16x8_t p0 = vreinterpretq_u16_u8(a[2 * i]), p1 = vreinterpretq_u16_u8(a[2 * i + 1]);
        const uint16x8_t q0 = vreinterpretq_u16_u8(a[8 + 2 * i]),
                         q1 = vreinterpretq_u16_u8(a[8 + 2 * i + 1]);
        b[i] = vzip1q_u16(p0, p1);
        b[i + 4] = vzip2q_u16(p0, p1);
        b[i + 8] = vzip1q_u16(q0, q1);
        b[i + 12] = vzip2q_u16(q0, q1);
    }
    for (int g = 0; g < 16; g += 4) { /* b[g..g+3]: rows 0-3, 4-7, 8-11, 12-15; cols g..g+3 */
        const uint32x4_t e0 = vzip1q_u32(vreinterpretq_u32_u16(b[g]), vreinterpretq_u32_u16(b[g + 1]));
        const uint32x4_t e1 = vzip2q_u32(vreinterpretq_u32_u16(b[g]), vreinterpretq_u32_u16(b[g + 1]));
        const uint32x4_t f0 = vzip1q_u32(vreinterpretq_u32_u16(b[g + 2]), vreinterpretq_u32_u16(b[g + 3]));
        const uint32x4_t f1 = vzip2q_u32(vreinterpretq_u32_u16(b[g + 2]), vreinterpretq_u32_u16(b[g + 3]));
        out[g] = vreinterpretq_u8_u64(vzip1q_u64(vreinterpretq_u64_u32(e0), vreinterpretq_u64_u32(f0)));
        out[g + 1] = vreinterpretq_u8_u64(vzip2q_u64(vreinterpretq_u64_u32(e0), vreinterpretq_u64_u32(f0)));
        out[g + 2] = vreinterpretq_u8_u64(vzip1q_u64(vreinterpretq_u64_u32(e1), vreinterpretq_u64_u32(f1)));
        out[g + 3] = vreinterpretq_u8_u64(vzip2q_u64(vreinterpretq_u64_u32(e1), vreinterpretq_u64_u32(f1)));
    }
}

/* a0 += x.lo * w.lo, a1 += x.hi * w.hi for the 8 int16 at t, as one asm block: gcc 12
 * otherwise loads every T entry of a step up front (sharing them between outputs and taps)
 * and spills them and the accumulators; the same instructions, the same bits */
static inline __attribute__((always_inline)) QRT_DWN_FN void
qrt__dwcn_mac(int32x4_t *a0, int32x4_t *a1, const int16_t *t, int16x8_t w) {
    int16x8_t x;
    __asm__("ldr %q[x], %[m]\n\tsmlal %[a0].4s, %[x].4h, %[w].4h\n\tsmlal2 %[a1].4s, %[x].8h, %[w].8h"
            : [a0] "+w"(*a0), [a1] "+w"(*a1), [x] "=&w"(x)
            : [m] "m"(*(const int16x8_t *)(const void *)t), [w] "w"(w));
}

/* OB outputs (ox0 ..) of row oy, 16 channels (KH x KW taps, KH == 0: the runtime kh, kw; SS:
 * a constant stride), requantized into the stage (position pos's 16 bytes at stage + 16 pos) */
static inline __attribute__((always_inline)) QRT_DWN_FN void
qrt__dwcn_outs(const int16_t *T, int64_t tw, const int16_t *wt, int64_t kh, int64_t kw,
               int64_t s, int64_t oy, int64_t ox0, int64_t wo, const int32x4_t vb[4],
               const float32x4_t vs[4], int16x8_t vz16, uint8x16_t vlo8, uint8x16_t vhi8,
               uint8_t *stage, const int OB, const int KH, const int KW, const int SS) {
    int32x4_t acc[4][4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) acc[i][v] = vb[v];
    if (SS) s = SS;
    const int64_t nky = KH ? KH : kh, nkx = KW ? KW : kw;
#pragma GCC unroll 7
    for (int64_t ky = 0; ky < nky; ++ky) {
        const int16_t *tr = T + ((oy * s + ky) * tw + ox0 * s) * 16;
#pragma GCC unroll 7
        for (int64_t kx = 0; kx < nkx; ++kx) {
            const int16_t *wk = wt + (ky * nkx + kx) * 16;
            const int16x8_t w0 = vld1q_s16(wk), w1 = vld1q_s16(wk + 8);
#pragma GCC unroll 4
            for (int i = 0; i < 4; ++i) {
                if (i >= OB) continue;
                const int16_t *t = tr + (i * s + kx) * 16;
                qrt__dwcn_mac(&acc[i][0], &acc[i][1], t, w0);
                qrt__dwcn_mac(&acc[i][2], &acc[i][3], t + 8, w1);
            }
        }
    }
    uint8_t *d = stage + (oy * wo + ox0) * 16;
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        if (i >= OB) continue;
        /* requant.h's rounding (y outside +-2^31 or NaN: INT32_MIN, x86's cvtps2dq), then
         * clamp(r + zp, lo, hi) as umin(umax(sqxtun(sqadd16(sqxtn(r), zp)), lo), hi): equal,
         * 0 <= zp <= 255 and a saturated r stays past either end (INT32_MIN lands on lo) */
        int32x4_t r[4];
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) {
            const float32x4_t yv = vmulq_f32(vcvtq_f32_s32(acc[i][v]), vs[v]);
            const uint32x4_t ok = vcltq_f32(vabsq_f32(yv), vdupq_n_f32(2147483648.0f));
            r[v] = vbslq_s32(ok, vcvtnq_s32_f32(yv), vdupq_n_s32(INT32_MIN));
        }
        const int16x8_t lo = vqaddq_s16(vcombine_s16(vqmovn_s32(r[0]), vqmovn_s32(r[1])), vz16);
        const int16x8_t hi = vqaddq_s16(vcombine_s16(vqmovn_s32(r[2]), vqmovn_s32(r[3])), vz16);
        const uint8x16_t b = vcombine_u8(vqmovun_s16(lo), vqmovun_s16(hi));
        vst1q_u8(d + 16 * i, vminq_u8(vmaxq_u8(b, vlo8), vhi8));
    }
}

static inline __attribute__((always_inline)) QRT_DWN_FN void
qrt__dwcn_rows(const int16_t *T, int64_t tw, const int16_t *wt, int64_t kh, int64_t kw,
               int64_t s, int64_t ho, int64_t wo, const int32x4_t vb[4], const float32x4_t vs[4],
               int16x8_t vz16, uint8x16_t vlo8, uint8x16_t vhi8, uint8_t *stage, const int KH,
               const int KW, const int SS) {
#define QRT__DWCN_OUTS(OB)                                                                         \
    qrt__dwcn_outs(T, tw, wt, kh, kw, s, oy, ox, wo, vb, vs, vz16, vlo8, vhi8, stage, OB, KH, KW, \
                   SS)
    for (int64_t oy = 0; oy < ho; ++oy) {
        int64_t ox = 0;
        for (; ox + 4 <= wo; ox += 4) QRT__DWCN_OUTS(4);
        switch (wo - ox) {
        case 3: QRT__DWCN_OUTS(3); break;
        case 2: QRT__DWCN_OUTS(2); break;
        case 1: QRT__DWCN_OUTS(1); break;
        default: break;
        }
    }
#undef QRT__DWCN_OUTS
}

static QRT_DWN_FN void qrt__dwcl_run_neon(const qrt_dwconv2d_params *p, const uint8_t *x,
                                          const qrt_conv1d_quant *q, uint8_t *y, void *scratch,
                                          int64_t u0, int64_t u1) {
    const qrt__dwcl_geom g = qrt__dwcl_geom_of(p);
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    uint8_t *B = base + g.off_e;                    /* [ceil64(rows * W)][16] */
    int16_t *T = (int16_t *)(void *)(base + g.off_t); /* [hp][tw][16] (room: 64 bytes each) */
    uint8_t *stage = base + g.off_stage;            /* [npo][16] (room: [16][sst]) */
    const int64_t s = p->sh, kh = p->kh, kw = p->kw, kp = (kw + 1) / 2, pt = p->pad_top,
                  pl = p->pad_left, H = p->h, W = p->w, ho = p->ho, wo = p->wo;
    const int64_t tw = g.tw, hp = g.hp, npo = ho * wo;
    const int64_t nrows = hp - pt < H ? (hp - pt > 0 ? hp - pt : 0) : H, np = nrows * W;
    const int32_t *wcl = (const int32_t *)(const void *)q->wpack_cl; /* [kh * kp][c_in] */
    const int64_t C = p->c_in;
    memset(T, 0, (size_t)(hp * tw) * 32u);
    const int16x8_t vxz = vdupq_n_s16((int16_t)p->input_zero);
    const int16x8_t vz16 = vdupq_n_s16((int16_t)p->output_zero);
    const uint8x16_t vlo8 = vdupq_n_u8((uint8_t)p->output_min),
                     vhi8 = vdupq_n_u8((uint8_t)p->output_max);
    const int64_t r0 = pt, r1 = pt + H < hp ? pt + H : hp;
    const int64_t ca = pl < tw ? pl : tw, cb = pl + W < tw ? pl + W : tw; /* image columns */
    int16_t wt[QRT__DWCL_MAXK * QRT__DWCL_MAXK * 16];
    int32_t bq[16];
    float sc[16];
    for (int64_t u = u0; u < u1;) {
        const int64_t n = u / C, c0 = u - n * C;
        int64_t nc = u1 - u < 16 ? u1 - u : 16;
        if (nc > C - c0) nc = C - c0;
        const uint8_t *xb = x + n * p->x_stride_n + c0 * p->x_stride_c;
        /* 1. B; lanes past the block's nc channels repeat its last one (never stored), a
         * channel's last < 16 bytes come through a buffer (nothing past its rows is read) */
        const uint8_t *xk[16];
        for (int k = 0; k < 16; ++k) xk[k] = xb + (k < nc ? k : nc - 1) * p->x_stride_c;
        int64_t z = 0;
        for (; z + 16 <= np; z += 16) {
            uint8x16_t in[16], o[16];
#pragma GCC unroll 16
            for (int k = 0; k < 16; ++k) in[k] = vld1q_u8(xk[k] + z);
            qrt__dwcn_tr(in, o); /* o[j]: position z + j */
#pragma GCC unroll 16
            for (int j = 0; j < 16; ++j) vst1q_u8(B + (z + j) * 16, o[j]);
        }
        if (z < np) {
            uint8x16_t in[16], o[16];
            uint8_t tb[16];
            memset(tb, 0, sizeof tb);
            for (int k = 0; k < 16; ++k) {
                memcpy(tb, xk[k] + z, (size_t)(np - z));
                in[k] = vld1q_u8(tb);
            }
            qrt__dwcn_tr(in, o);
            for (int64_t j = 0; j < np - z; ++j) vst1q_u8(B + (z + j) * 16, o[j]);
        }
        /* 2. T rows inside the image (the padding rows stay zero; padding columns stored 0) */
        for (int64_t r = r0; r < r1; ++r) {
            const uint8_t *br = B + (r - pt) * W * 16;
            int16_t *trow = T + r * tw * 16;
            for (int64_t col = 0; col < ca; ++col) {
                vst1q_s16(trow + col * 16, vdupq_n_s16(0));
                vst1q_s16(trow + col * 16 + 8, vdupq_n_s16(0));
            }
            for (int64_t col = ca; col < cb; ++col) {
                const uint8x16_t v = vld1q_u8(br + (col - pl) * 16);
                vst1q_s16(trow + col * 16, vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(v))), vxz));
                vst1q_s16(trow + col * 16 + 8, vsubq_s16(vreinterpretq_s16_u16(vmovl_high_u8(v)), vxz));
            }
            for (int64_t col = cb; col < tw; ++col) {
                vst1q_s16(trow + col * 16, vdupq_n_s16(0));
                vst1q_s16(trow + col * 16 + 8, vdupq_n_s16(0));
            }
        }
        /* 3, 4. the block's weights (w - wz per tap and lane, from the pairs), bias and scales,
         * zero past its nc channels; the outputs, staged */
        memset(bq, 0, sizeof bq);
        memset(sc, 0, sizeof sc);
        for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t pp = 0; pp < kp; ++pp) { /* pair (2pp, 2pp + 1) of row ky */
                int32_t pr[16];
                memset(pr, 0, sizeof pr);
                memcpy(pr, wcl + (ky * kp + pp) * C + c0, (size_t)nc * 4u);
                const int16x8_t a0 = vreinterpretq_s16_s32(vld1q_s32(pr)),
                                a1 = vreinterpretq_s16_s32(vld1q_s32(pr + 4)),
                                a2 = vreinterpretq_s16_s32(vld1q_s32(pr + 8)),
                                a3 = vreinterpretq_s16_s32(vld1q_s32(pr + 12));
                int16_t *d = wt + (ky * kw + 2 * pp) * 16;
                vst1q_s16(d, vuzp1q_s16(a0, a1)); /* the low halves: tap 2pp */
                vst1q_s16(d + 8, vuzp1q_s16(a2, a3));
                if (2 * pp + 1 < kw) { /* the high halves: tap 2pp + 1 */
                    vst1q_s16(d + 16, vuzp2q_s16(a0, a1));
                    vst1q_s16(d + 24, vuzp2q_s16(a2, a3));
                }
            }
        memcpy(bq, q->bias_q + c0, (size_t)nc * 4u);
        memcpy(sc, q->scale + c0, (size_t)nc * 4u);
        const int32x4_t vb[4] = {vld1q_s32(bq), vld1q_s32(bq + 4), vld1q_s32(bq + 8),
                                 vld1q_s32(bq + 12)};
        const float32x4_t vs[4] = {vld1q_f32(sc), vld1q_f32(sc + 4), vld1q_f32(sc + 8),
                                   vld1q_f32(sc + 12)};
#define QRT__DWCN_ROWS(KH, KW, SS)                                                                 \
    qrt__dwcn_rows(T, tw, wt, kh, kw, s, ho, wo, vb, vs, vz16, vlo8, vhi8, stage, KH, KW, SS)
        if (kh == 3 && kw == 3 && s == 1)
            QRT__DWCN_ROWS(3, 3, 1);
        else if (kh == 3 && kw == 3 && s == 2)
            QRT__DWCN_ROWS(3, 3, 2);
        else if (kh == 5 && kw == 5 && s == 1)
            QRT__DWCN_ROWS(5, 5, 1);
        else if (kh == 5 && kw == 5 && s == 2)
            QRT__DWCN_ROWS(5, 5, 2);
        else
            QRT__DWCN_ROWS(0, 0, 0);
#undef QRT__DWCN_ROWS
        /* back to NCHW, the last 16-position chunk first (as the x86 forms) */
        uint8_t *yb = y + n * p->y_stride_n + c0 * p->y_stride_c;
        const int contiguous = p->y_stride_c == npo;
        for (int64_t z = (npo - 1) / 16 * 16; z >= 0; z -= 16) {
            uint8x16_t in[16], o[16];
            for (int j = 0; j < 16; ++j) in[j] = vld1q_u8(stage + (z + j) * 16);
            qrt__dwcn_tr(in, o); /* o[k]: channel k, positions z .. z + 15 */
            for (int64_t k = 0; k < nc; ++k) {
                uint8_t *dst = yb + k * p->y_stride_c + z;
                if (z + 16 <= npo || (contiguous && k * npo + z + 16 <= nc * npo)) {
                    vst1q_u8(dst, o[k]);
                } else {
                    uint8_t tb[16];
                    vst1q_u8(tb, o[k]);
                    memcpy(dst, tb, (size_t)(npo - z));
                }
            }
        }
        u += nc;
    }
}
#endif

QRT_DWN_FN void qrt_dwconv2d_u8__neon(const qrt_dwconv2d_params *p, const uint8_t *x,
                                      const int8_t *w, const qrt_conv1d_quant *q, uint8_t *y,
                                      void *scratch, int64_t u0, int64_t u1) {
#if defined(__aarch64__)
    if (q->wpack_cl && qrt__dwcl_geom_ok(p) && (uint64_t)p->ho * p->wo <= QRT__DWCL_MAXOUT_NEON) {
        qrt__dwcl_run_neon(p, x, q, y, scratch, u0, u1);
        return;
    }
#endif
    if (qrt__dwf_ok(p))
        qrt__dwf_run(p, x, w, q, y, scratch, u0, u1, qrt__dwn_kernel_m, qrt__dwn_widen,
                     qrt__dwn_widen2);
    else
        qrt__dw_run(p, x, w, q, y, scratch, u0, u1, qrt__dwn_kernel, qrt__dwn_widen);
}

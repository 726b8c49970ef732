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
#include "conv1d_neon_common.h"
#include "dwconv2d_neon_planes.h"
#include "qrt/neon/dwconv2d_neon.h"
#include "qrt/neon/dwconv2d_neondot.h"
#include "qrt/requant.h"

#if defined(__aarch64__)
#define QRT_DWN_FN
#else
#define QRT_DWN_FN __attribute__((target("fpu=neon")))
#endif

/* the general (non-flat) path's kernel: the sums start at the bias (vmlal wraps; the order of
 * modular adds does not matter) */
__attribute__((always_inline)) static inline QRT_DWN_FN void
qrt__dwn_body(const int16_t *const *src, const int16_t *wt, int64_t taps, int64_t count,
              const qrt__neon_rq *c, uint8_t *stage, const int small) {
    for (int64_t f = 0; f < count; f += 16) {
        int32x4_t a0 = c->bias, a1 = a0, a2 = a0, a3 = a0;
        for (int64_t t = 0; t < taps; ++t) {
            const int16_t *s = src[t] + f;
            const int16_t wv = wt[t];
            const int16x8_t x0 = vld1q_s16(s), x1 = vld1q_s16(s + 8);
            a0 = vmlal_n_s16(a0, vget_low_s16(x0), wv);
            a1 = vmlal_n_s16(a1, vget_high_s16(x0), wv);
            a2 = vmlal_n_s16(a2, vget_low_s16(x1), wv);
            a3 = vmlal_n_s16(a3, vget_high_s16(x1), wv);
        }
        vst1q_u8(stage + f, qrt__neon_requant16(a0, a1, a2, a3, c, small));
    }
}

static QRT_DWN_FN void qrt__dwn_kernel(const int16_t *const *src, const int16_t *wt,
                                       const int32_t *wp, int64_t taps, int64_t count,
                                       int32_t bias, float scale, int32_t zp, int32_t lo,
                                       int32_t hi, uint8_t *stage) {
    (void)wp;
    const qrt__neon_rq c = qrt__neon_rq_of(bias, scale, zp, lo, hi);
    if (qrt__neon_small_y(taps, bias, scale))
        qrt__dwn_body(src, wt, taps, count, &c, stage, 1);
    else
        qrt__dwn_body(src, wt, taps, count, &c, stage, 0);
}

/* x - xz widened to int16: usubl (the difference wraps in 16 bits to the signed value) */
static QRT_DWN_FN void qrt__dwn_widen(const uint8_t *s, int16_t *d, int64_t len, int32_t xz,
                                      int64_t step) {
    const uint8x8_t vz = vdup_n_u8((uint8_t)xz);
    int64_t j = 0;
    if (step == 1) {
        const uint8x16_t vz16 = vdupq_n_u8((uint8_t)xz);
        for (; j + 16 <= len; j += 16) {
            const uint8x16_t v = vld1q_u8(s + j);
            vst1q_s16(d + j, vreinterpretq_s16_u16(vsubl_u8(vget_low_u8(v), vget_low_u8(vz16))));
#if defined(__aarch64__)
            vst1q_s16(d + j + 8, vreinterpretq_s16_u16(vsubl_high_u8(v, vz16)));
#else
            vst1q_s16(d + j + 8, vreinterpretq_s16_u16(vsubl_u8(vget_high_u8(v), vz)));
#endif
        }
        for (; j + 8 <= len; j += 8)
            vst1q_s16(d + j, vreinterpretq_s16_u16(vsubl_u8(vld1_u8(s + j), vz)));
    } else { /* step 2: vld2 splits even / odd bytes; reads s[2j .. 2j + 15] <= s[2 (len-1)] */
        for (; j + 8 < len; j += 8)
            vst1q_s16(d + j, vreinterpretq_s16_u16(vsubl_u8(vld2_u8(s + 2 * j).val[0], vz)));
    }
    for (; j < len; ++j) d[j] = (int16_t)((int32_t)s[j * step] - xz);
}

/* the flat path's general kernel (any taps; tap t's run ANDed with mk[t] where not NULL) */
__attribute__((always_inline)) static inline QRT_DWN_FN void
qrt__dwn_body_m(const int16_t *const *src, const int16_t *const *mk, const int16_t *wt,
                int64_t taps, int64_t count, const qrt__neon_rq *c, uint8_t *stage,
                const int small) {
    for (int64_t f = 0; f < count; f += 16) {
        int32x4_t a0 = c->bias, a1 = a0, a2 = a0, a3 = a0;
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
        vst1q_u8(stage + f, qrt__neon_requant16(a0, a1, a2, a3, c, small));
    }
}

/* one tap of the 3x3 kernel: run s, weight lane L of wv (int16x8 on aarch64, the by-element
 * smlal: two weight registers for the nine taps, no lane moves), ANDed with the column mask
 * (ml, mh) when M */
#if defined(__aarch64__)
#define QRT__DWN_TAP(s, M, ml, mh, wv, L)                                                         \
    do {                                                                                          \
        int16x8_t x0 = vld1q_s16((s) + f), x1 = vld1q_s16((s) + f + 8);                           \
        if (M) {                                                                                  \
            x0 = vandq_s16(x0, ml);                                                               \
            x1 = vandq_s16(x1, mh);                                                               \
        }                                                                                         \
        a0 = vmlal_laneq_s16(a0, vget_low_s16(x0), (wv), L);                                      \
        a2 = vmlal_laneq_s16(a2, vget_low_s16(x1), (wv), L);                                      \
        a1 = vmlal_high_laneq_s16(a1, x0, (wv), L);                                               \
        a3 = vmlal_high_laneq_s16(a3, x1, (wv), L);                                               \
    } while (0)
#else /* armv7: the by-scalar vmlal takes a d register and a lane 0..3 */
#define QRT__DWN_TAP(s, M, ml, mh, wv, L)                                                         \
    do {                                                                                          \
        int16x8_t x0 = vld1q_s16((s) + f), x1 = vld1q_s16((s) + f + 8);                           \
        const int16x4_t wd = (L) < 4 ? vget_low_s16(wv) : vget_high_s16(wv);                      \
        if (M) {                                                                                  \
            x0 = vandq_s16(x0, ml);                                                               \
            x1 = vandq_s16(x1, mh);                                                               \
        }                                                                                         \
        a0 = vmlal_lane_s16(a0, vget_low_s16(x0), wd, (L) & 3);                                   \
        a1 = vmlal_lane_s16(a1, vget_high_s16(x0), wd, (L) & 3);                                  \
        a2 = vmlal_lane_s16(a2, vget_low_s16(x1), wd, (L) & 3);                                   \
        a3 = vmlal_lane_s16(a3, vget_high_s16(x1), wd, (L) & 3);                                  \
    } while (0)
#endif

/* 3x3 with the driver's column masks (mk[ky * 3 + kx] = mc[kx]; M0 / M2: columns 0 / 2
 * masked, column 1 never is): each column's mask is loaded once per step for its three taps;
 * the run pointers are copied to locals first (the stage stores could alias the tables, so
 * the compiler would reload them for every step otherwise) */
__attribute__((always_inline)) static inline QRT_DWN_FN void
qrt__dwn_k9(const int16_t *const *src, const int16_t *m0, const int16_t *m2, const int16_t *wt,
            int64_t count, const qrt__neon_rq *c, uint8_t *stage, const int M0, const int M2) {
    const int16_t *s0 = src[0], *s1 = src[1], *s2 = src[2], *s3 = src[3], *s4 = src[4],
                  *s5 = src[5], *s6 = src[6], *s7 = src[7], *s8 = src[8];
    const int16x8_t wa = vld1q_s16(wt), wb = vdupq_n_s16(wt[8]); /* taps 0-7, tap 8 */
    const qrt__neon_rq cc = *c;
    for (int64_t f = 0; f < count; f += 16) {
        int16x8_t l0 = vdupq_n_s16(0), h0 = l0, l2 = l0, h2 = l0;
        if (M0) l0 = vld1q_s16(m0 + f), h0 = vld1q_s16(m0 + f + 8);
        if (M2) l2 = vld1q_s16(m2 + f), h2 = vld1q_s16(m2 + f + 8);
        int32x4_t a0 = cc.bias, a1 = a0, a2 = a0, a3 = a0;
        QRT__DWN_TAP(s0, M0, l0, h0, wa, 0);
        QRT__DWN_TAP(s1, 0, l0, h0, wa, 1);
        QRT__DWN_TAP(s2, M2, l2, h2, wa, 2);
        QRT__DWN_TAP(s3, M0, l0, h0, wa, 3);
        QRT__DWN_TAP(s4, 0, l0, h0, wa, 4);
        QRT__DWN_TAP(s5, M2, l2, h2, wa, 5);
        QRT__DWN_TAP(s6, M0, l0, h0, wa, 6);
        QRT__DWN_TAP(s7, 0, l0, h0, wa, 7);
        QRT__DWN_TAP(s8, M2, l2, h2, wb, 0);
        vst1q_u8(stage + f, qrt__neon_requant16(a0, a1, a2, a3, &cc, 1));
    }
}

static QRT_DWN_FN void qrt__dwn_kernel_m(const int16_t *const *src, const int16_t *const *mk,
                                         const int16_t *wt, const int32_t *wp, int64_t taps,
                                         int64_t count, int32_t bias, float scale, int32_t zp,
                                         int32_t lo, int32_t hi, uint8_t *stage) {
    (void)wp;
    const qrt__neon_rq c = qrt__neon_rq_of(bias, scale, zp, lo, hi);
    const int small = qrt__neon_small_y(taps, bias, scale);
    if (taps == 9 && small && !mk[1] && !mk[4] && !mk[7] && mk[3] == mk[0] && mk[6] == mk[0] &&
        mk[5] == mk[2] && mk[8] == mk[2]) {
        const int16_t *m0 = mk[0], *m2 = mk[2];
        if (m0 && m2)
            qrt__dwn_k9(src, m0, m2, wt, count, &c, stage, 1, 1);
        else if (m0)
            qrt__dwn_k9(src, m0, m2, wt, count, &c, stage, 1, 0);
        else if (m2)
            qrt__dwn_k9(src, m0, m2, wt, count, &c, stage, 0, 1);
        else
            qrt__dwn_k9(src, m0, m2, wt, count, &c, stage, 0, 0);
    } else if (small) {
        qrt__dwn_body_m(src, mk, wt, taps, count, &c, stage, 1);
    } else {
        qrt__dwn_body_m(src, mk, wt, taps, count, &c, stage, 0);
    }
}

/* stride-2 split of one row: vld2 of 16 bytes where sroom / room allow, else the tail
 * (< 16 bytes) through a small buffer (nothing past src[len-1] read, nothing past the phase
 * rows written) */
static inline __attribute__((always_inline)) QRT_DWN_FN void qrt__dwn_widen2(const uint8_t *s, int16_t *d0, int16_t *d1, int64_t len,
                                       int32_t xz, int64_t sroom, int64_t room) {
    const uint8x8_t vz = vdup_n_u8((uint8_t)xz);
#if defined(__aarch64__)
    const uint8x16_t vz16 = vdupq_n_u8((uint8_t)xz);
#endif
    int64_t j = 0;
    /* 32 bytes a step while 2j < len, 2j + 32 <= sroom and j + 16 <= room (one bound) */
    int64_t e = (len + 1) / 2;
    if (sroom < 32 || room < 16) e = 0;
    if (e > (sroom - 32) / 2 + 1) e = (sroom - 32) / 2 + 1;
    if (e > room - 15) e = room - 15;
    for (; j < e; j += 16) {
        const uint8x16x2_t v = vld2q_u8(s + 2 * j);
        vst1q_s16(d0 + j, vreinterpretq_s16_u16(vsubl_u8(vget_low_u8(v.val[0]), vz)));
        vst1q_s16(d1 + j, vreinterpretq_s16_u16(vsubl_u8(vget_low_u8(v.val[1]), vz)));
#if defined(__aarch64__)
        vst1q_s16(d0 + j + 8, vreinterpretq_s16_u16(vsubl_high_u8(v.val[0], vz16)));
        vst1q_s16(d1 + j + 8, vreinterpretq_s16_u16(vsubl_high_u8(v.val[1], vz16)));
#else
        vst1q_s16(d0 + j + 8, vreinterpretq_s16_u16(vsubl_u8(vget_high_u8(v.val[0]), vz)));
        vst1q_s16(d1 + j + 8, vreinterpretq_s16_u16(vsubl_u8(vget_high_u8(v.val[1]), vz)));
#endif
    }
    for (; 2 * j < len && 2 * j + 16 <= sroom && j + 8 <= room; j += 8) {
        const uint8x8x2_t v = vld2_u8(s + 2 * j);
        vst1q_s16(d0 + j, vreinterpretq_s16_u16(vsubl_u8(v.val[0], vz)));
        vst1q_s16(d1 + j, vreinterpretq_s16_u16(vsubl_u8(v.val[1], vz)));
    }
    for (; 2 * j < len; j += 8) {
        const int64_t nb = len - 2 * j < 16 ? len - 2 * j : 16;
        uint8_t tb[16];
        int16_t t0[8], t1[8];
        memset(tb, 0, sizeof tb);
        memcpy(tb, s + 2 * j, (size_t)nb);
        const uint8x8x2_t v = vld2_u8(tb);
        vst1q_s16(t0, vreinterpretq_s16_u16(vsubl_u8(v.val[0], vz)));
        vst1q_s16(t1, vreinterpretq_s16_u16(vsubl_u8(v.val[1], vz)));
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
 * qrt__neon_requant16's sequence per lane with the lane's channel scale into a position-major
 * stage, transposed back to the NCHW rows. */

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
               uint8_t *stage, const int OB, const int KH, const int KW, const int SS,
               const int SM) {
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
        /* requant.h's rounding (y outside +-2^31 or NaN: INT32_MIN, x86's cvtps2dq; SM: every
         * lane's channel passed qrt__neon_small_y, so no lane needs that select), then
         * clamp(r + zp, lo, hi) as umin(umax(sqxtun(sqadd16(sqxtn(r), zp)), lo), hi): equal,
         * 0 <= zp <= 255 and a saturated r stays past either end (INT32_MIN lands on lo) */
        int32x4_t r[4];
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) {
            const float32x4_t yv = vmulq_f32(vcvtq_f32_s32(acc[i][v]), vs[v]);
            r[v] = SM ? qrt__neon_cvt_rne_small(yv) : qrt__neon_cvt_rne(yv);
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
               const int KW, const int SS, const int SM) {
#define QRT__DWCN_OUTS(OB)                                                                         \
    qrt__dwcn_outs(T, tw, wt, kh, kw, s, oy, ox, wo, vb, vs, vz16, vlo8, vhi8, stage, OB, KH, KW, \
                   SS, SM)
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
        int small = 1; /* the lanes past nc: bias 0, scale 0 */
        for (int64_t k = 0; k < nc; ++k) small &= qrt__neon_small_y(kh * kw, bq[k], sc[k]);
#define QRT__DWCN_ROWS(KH, KW, SS)                                                                 \
    qrt__dwcn_rows(T, tw, wt, kh, kw, s, ho, wo, vb, vs, vz16, vlo8, vhi8, stage, KH, KW, SS, 1)
        if (!small)
            qrt__dwcn_rows(T, tw, wt, kh, kw, s, ho, wo, vb, vs, vz16, vlo8, vhi8, stage, 0, 0, 0,
                           0);
        else if (kh == 3 && kw == 3 && s == 1)
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

#if defined(__aarch64__)
/* ---- Byte planes (aarch64): planes over QRT__DWCL_MAXOUT_NEON outputs, in the geometry of the
 * AVX-512 VNNI byte-plane path (src/dwconv2d_impl.h, qrt__dwp_geom: row-phase planes whose rows
 * hold the left padding and the image, count = (ho - 1) rs + wo flat outputs, those between
 * rows computed and dropped).  The planes hold x' = x ^ 0x80 = x - 128 as int8 and the padding
 * input_zero ^ 0x80, so that
 *   sum_taps (x - xz) w = sum_taps x' w + (128 - xz) sum_taps w
 * (a padded tap has x = xz and adds 0 on the left) and the second term joins the bias, mod
 * 2^32.  Taps go in pairs in row-major order: per 16 outputs, smull / smull2 of one tap's 16
 * bytes by its weight, smlal / smlal2 of the next tap's: an int16 lane holds two products
 * x' w in [-16256, 16384], whose sum fits unless both weights are -128, then saddw / saddw2 into
 * four int32x4 (3 instructions per tap and 8 outputs where the int16 planes take 4, and no
 * widening pass, no column masks).  A channel with a weight zero point or a -128 pair runs
 * qrt__dwpn_wide instead: x - xz = x' - (xz - 128) widened per tap (ssubl), times w - wz by
 * smlal, exact for any weights. */

/* the pair sum of taps ta, tb (loaded runs xa, xb; weights dup'd) into a0..a3 */
#define QRT__DWPN_PAIR(xa, wa, xb, wb)                                                             \
    do {                                                                                           \
        int16x8_t lo_ = vmull_s8(vget_low_s8(xa), vget_low_s8(wa));                                \
        int16x8_t hi_ = vmull_high_s8(xa, wa);                                                     \
        lo_ = vmlal_s8(lo_, vget_low_s8(xb), vget_low_s8(wb));                                     \
        hi_ = vmlal_high_s8(hi_, xb, wb);                                                          \
        a0 = vaddw_s16(a0, vget_low_s16(lo_));                                                     \
        a1 = vaddw_high_s16(a1, lo_);                                                              \
        a2 = vaddw_s16(a2, vget_low_s16(hi_));                                                     \
        a3 = vaddw_high_s16(a3, hi_);                                                              \
    } while (0)
#define QRT__DWPN_ONE(xa, wa)                                                                      \
    do {                                                                                           \
        const int16x8_t lo_ = vmull_s8(vget_low_s8(xa), vget_low_s8(wa));                          \
        const int16x8_t hi_ = vmull_high_s8(xa, wa);                                               \
        a0 = vaddw_s16(a0, vget_low_s16(lo_));                                                     \
        a1 = vaddw_high_s16(a1, lo_);                                                              \
        a2 = vaddw_s16(a2, vget_low_s16(hi_));                                                     \
        a3 = vaddw_high_s16(a3, hi_);                                                              \
    } while (0)

/* 3x3, stride S (1 or 2): rows r0..r2 (plane row 0 of taps ky = 0..2), weights in registers;
 * stride 2 takes the even / odd bytes of one vld2q per row for kx = 0, 1 and the even bytes
 * of a second, two bytes on, for kx = 2 */
__attribute__((always_inline)) static inline void
qrt__dwpn_k33(const int8_t *r0, const int8_t *r1, const int8_t *r2, const int8_t *wt,
              const int S, int64_t count, const qrt__neon_rq *c, const int small,
              uint8_t *stage) {
    int8x16_t wv[9];
    for (int t = 0; t < 9; ++t) wv[t] = vdupq_n_s8(wt[t]);
    const qrt__neon_rq cc = *c;
    for (int64_t f = 0; f < count; f += 16) {
        int8x16_t xv[9];
        const int8_t *rr[3] = {r0 + S * f, r1 + S * f, r2 + S * f};
        for (int ky = 0; ky < 3; ++ky) {
            if (S == 1) {
                xv[3 * ky] = vld1q_s8(rr[ky]);
                xv[3 * ky + 1] = vld1q_s8(rr[ky] + 1);
                xv[3 * ky + 2] = vld1q_s8(rr[ky] + 2);
            } else {
                const int8x16x2_t e = vld2q_s8(rr[ky]);
                xv[3 * ky] = e.val[0];
                xv[3 * ky + 1] = e.val[1];
                xv[3 * ky + 2] = vld2q_s8(rr[ky] + 2).val[0];
            }
        }
        int32x4_t a0 = cc.bias, a1 = a0, a2 = a0, a3 = a0;
        QRT__DWPN_PAIR(xv[0], wv[0], xv[1], wv[1]);
        QRT__DWPN_PAIR(xv[2], wv[2], xv[3], wv[3]);
        QRT__DWPN_PAIR(xv[4], wv[4], xv[5], wv[5]);
        QRT__DWPN_PAIR(xv[6], wv[6], xv[7], wv[7]);
        QRT__DWPN_ONE(xv[8], wv[8]);
        vst1q_u8(stage + f, qrt__neon_requant16(a0, a1, a2, a3, &cc, small));
    }
}

/* any kernel, stride S: tap t's run starts at tp[t] (+ S f); weights wt[t] */
__attribute__((always_inline)) static inline void
qrt__dwpn_pairs(const int8_t *const *tp, const int8_t *wt, int64_t taps, const int S,
                int64_t count, const qrt__neon_rq *c, const int small, uint8_t *stage) {
    for (int64_t f = 0; f < count; f += 16) {
        int32x4_t a0 = c->bias, a1 = a0, a2 = a0, a3 = a0;
        int64_t t = 0;
        for (; t + 2 <= taps; t += 2) {
            const int8_t *sa = tp[t] + S * f, *sb = tp[t + 1] + S * f;
            const int8x16_t xa = S == 1 ? vld1q_s8(sa) : vld2q_s8(sa).val[0];
            const int8x16_t xb = S == 1 ? vld1q_s8(sb) : vld2q_s8(sb).val[0];
            const int8x16_t wa = vld1q_dup_s8(wt + t), wb = vld1q_dup_s8(wt + t + 1);
            QRT__DWPN_PAIR(xa, wa, xb, wb);
        }
        if (t < taps) {
            const int8_t *sa = tp[t] + S * f;
            const int8x16_t xa = S == 1 ? vld1q_s8(sa) : vld2q_s8(sa).val[0];
            const int8x16_t wa = vld1q_dup_s8(wt + t);
            QRT__DWPN_ONE(xa, wa);
        }
        vst1q_u8(stage + f, qrt__neon_requant16(a0, a1, a2, a3, c, small));
    }
}

static void qrt__dwpn_k33_any(const int8_t *r0, const int8_t *r1, const int8_t *r2,
                              const int8_t *wt, int64_t S, int64_t count, const qrt__neon_rq *c,
                              int small, uint8_t *stage) {
    if (S == 1 && small)
        qrt__dwpn_k33(r0, r1, r2, wt, 1, count, c, 1, stage);
    else if (S == 1)
        qrt__dwpn_k33(r0, r1, r2, wt, 1, count, c, 0, stage);
    else if (small)
        qrt__dwpn_k33(r0, r1, r2, wt, 2, count, c, 1, stage);
    else
        qrt__dwpn_k33(r0, r1, r2, wt, 2, count, c, 0, stage);
}

static void qrt__dwpn_pairs_any(const int8_t *const *tp, const int8_t *wt, int64_t taps,
                                int64_t S, int64_t count, const qrt__neon_rq *c, int small,
                                uint8_t *stage) {
    if (S == 1 && small)
        qrt__dwpn_pairs(tp, wt, taps, 1, count, c, 1, stage);
    else if (S == 1)
        qrt__dwpn_pairs(tp, wt, taps, 1, count, c, 0, stage);
    else if (small)
        qrt__dwpn_pairs(tp, wt, taps, 2, count, c, 1, stage);
    else
        qrt__dwpn_pairs(tp, wt, taps, 2, count, c, 0, stage);
}

/* the int8 tap-pair kernels as the driver's k8 (3x3 with its weights in registers) */
static void qrt__dwpn_k8(const int8_t *const *tp, const int8_t *wc, int64_t kh, int64_t kw,
                         int64_t s, int64_t count, const qrt__neon_rq *c, int small,
                         uint8_t *stage) {
    if (kh == 3 && kw == 3)
        qrt__dwpn_k33_any(tp[0], tp[3], tp[6], wc, s, count, c, small, stage);
    else
        qrt__dwpn_pairs_any(tp, wc, kh * kw, s, count, c, small, stage);
}

static void qrt__dwpn_run(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                          const qrt_conv1d_quant *q, uint8_t *y, void *scratch, int64_t u0,
                          int64_t u1) {
    qrt__dwpn_drive(p, x, w, q, y, scratch, u0, u1, qrt__dwpn_k8, 0);
}

#endif

QRT_DWN_FN void qrt_dwconv2d_u8__neon(const qrt_dwconv2d_params *p, const uint8_t *x,
                                      const int8_t *w, const qrt_conv1d_quant *q, uint8_t *y,
                                      void *scratch, int64_t u0, int64_t u1) {
#if defined(__aarch64__)
    if (qrt__dwpd_take(p, q->wpack_cl != NULL)) {
        qrt__dwpd_run(p, x, w, q, y, scratch, u0, u1);
        return;
    }
    if (q->wpack_cl && qrt__dwcl_geom_ok(p) && (uint64_t)p->ho * p->wo <= QRT__DWCL_MAXOUT_NEON) {
        qrt__dwcl_run_neon(p, x, q, y, scratch, u0, u1);
        return;
    }
    if (qrt__dwp_ok(p)) {
        qrt__dwpn_run(p, x, w, q, y, scratch, u0, u1);
        return;
    }
#endif
    if (qrt__dwf_ok(p))
        qrt__dwf_run(p, x, w, q, y, scratch, u0, u1, qrt__dwn_kernel_m, qrt__dwn_widen,
                     qrt__dwn_widen2);
    else
        qrt__dw_run(p, x, w, q, y, scratch, u0, u1, qrt__dwn_kernel, qrt__dwn_widen);
}

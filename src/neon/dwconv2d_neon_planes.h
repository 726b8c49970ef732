/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_neon_planes.h
 * @brief The aarch64 byte-plane depthwise driver, shared by src/neon/dwconv2d_neon.c (int8 tap
 *        pairs) and src/neon/dwconv2d_neondot.c (sdot quads): the planes of
 *        src/dwconv2d_impl.h's qrt__dwp_geom as x ^ 0x80, the per-channel folded bias, the
 *        widening kernel for weights with a zero point, the stage copied out.  Each unit
 *        instantiates qrt__dwpn_drive with its own kernel (always_inline: the kernel call is
 *        direct and the driver is compiled with the unit's target).
 */
#ifndef QRT_SRC_NEON_DWCONV2D_NEON_PLANES_H
#define QRT_SRC_NEON_DWCONV2D_NEON_PLANES_H

#include <arm_neon.h>
#include <string.h>

#include "../dwconv2d_impl.h"
#include "conv1d_neon_common.h"

#if defined(__aarch64__)
/* any weights (w16[t] = w - wz in -255..255): x - xz = x' - xzf widened per tap, then smlal */
static __attribute__((unused)) void qrt__dwpn_wide(const int8_t *const *tp, const int16_t *w16,
                                                   int64_t taps, int64_t S, int64_t count,
                                                   int8_t xzf, const qrt__neon_rq *c, int small,
                                                   uint8_t *stage) {
    const int8x16_t vz = vdupq_n_s8(xzf);
    for (int64_t f = 0; f < count; f += 16) {
        int32x4_t a0 = c->bias, a1 = a0, a2 = a0, a3 = a0;
        for (int64_t t = 0; t < taps; ++t) {
            const int8_t *sa = tp[t] + S * f;
            const int8x16_t xa = S == 1 ? vld1q_s8(sa) : vld2q_s8(sa).val[0];
            const int16x8_t lo = vsubl_s8(vget_low_s8(xa), vget_low_s8(vz));
            const int16x8_t hi = vsubl_high_s8(xa, vz);
            const int16_t wv = w16[t];
            a0 = vmlal_n_s16(a0, vget_low_s16(lo), wv);
            a1 = vmlal_high_n_s16(a1, lo, wv);
            a2 = vmlal_n_s16(a2, vget_low_s16(hi), wv);
            a3 = vmlal_high_n_s16(a3, hi, wv);
        }
        vst1q_u8(stage + f, qrt__neon_requant16(a0, a1, a2, a3, c, small));
    }
}

/* d[0 .. n) = s[0 .. n) ^ flip (0x80: a plane row as x - 128; 0: a stage row copied out),
 * reading and writing nothing outside them: 16-byte copies, the last overlapping, else two
 * overlapping 8- or 4-byte copies (fewer instructions than libc's memcpy call for 7..112) */
static inline void qrt__dwpn_bytes(uint8_t *d, const uint8_t *s, int64_t n, const uint8_t flip) {
    const uint8x16_t f16 = vdupq_n_u8(flip);
    if (n >= 16) {
        int64_t j = 0;
        for (; j + 16 <= n; j += 16) vst1q_u8(d + j, veorq_u8(vld1q_u8(s + j), f16));
        if (j < n) vst1q_u8(d + n - 16, veorq_u8(vld1q_u8(s + n - 16), f16));
    } else if (n >= 8) {
        const uint8x8_t f8 = vget_low_u8(f16);
        vst1_u8(d, veor_u8(vld1_u8(s), f8));
        vst1_u8(d + n - 8, veor_u8(vld1_u8(s + n - 8), f8));
    } else if (n >= 4) {
        const uint32_t f4 = flip * 0x01010101u;
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        a ^= f4, b ^= f4;
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else {
        for (int64_t j = 0; j < n; ++j) d[j] = (uint8_t)(s[j] ^ flip);
    }
}

/**
 * The kernel of a channel whose weights need no widening: tap t of output f reads
 * tp[t][S f] (tp[ky kw] = row ky's first tap), weights wc[t] (int8, no weight zero point),
 * count flat outputs from the bias in c into the stage.
 */
typedef void (*qrt__dwpn_k8_fn)(const int8_t *const *tp, const int8_t *wc, int64_t kh,
                                int64_t kw, int64_t s, int64_t count, const qrt__neon_rq *c,
                                int small, uint8_t *stage);

/* units [u0, u1): per input channel its row-phase planes (the padding written once per run),
 * then per output channel its weights, folded bias and kernel into the stage, and the kept
 * outputs into y (as qrt__dwp_run of the AVX-512 VNNI variant).  k8 runs the channels with
 * int8 weights and no weight zero point; any8: k8 takes every such channel (sdot), else only
 * those without a -128 tap pair (the int16 pair sums); the others run qrt__dwpn_wide. */
__attribute__((always_inline)) static inline void
qrt__dwpn_drive(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                const qrt_conv1d_quant *q, uint8_t *y, void *scratch, int64_t u0, int64_t u1,
                qrt__dwpn_k8_fn k8, const int any8) {
    const qrt__dwp_geom g = qrt__dwp_geom_of(p);
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    int8_t *pl[2] = {(int8_t *)base, (int8_t *)base + g.pst};
    uint8_t *stage = base + g.off_stage;
    const int64_t s = g.s, kh = p->kh, kw = p->kw, rs = g.rs, rw = g.rw;
    const int64_t taps = kh * kw, H = p->h, W = p->w, pt = p->pad_top, ho = p->ho, wo = p->wo;
    const int32_t xz = p->input_zero;
    memset(base, xz ^ 0x80, (size_t)(g.pst * s));
    const int8_t *tp[256]; /* kh, kw <= 16 (qrt__dwp_ok) */
    int16_t w16[256];
    for (int64_t ky = 0; ky < kh; ++ky)
        for (int64_t kx = 0; kx < kw; ++kx) tp[ky * kw + kx] = pl[ky % s] + (ky / s) * rw + kx;
    int64_t iy1 = s * g.nr - pt; /* padded row r = iy + pt: row r / s of plane r % s */
    if (iy1 > H) iy1 = H;
    /* the fields the loops read, in locals: the int8 plane stores may alias *p otherwise */
    const int64_t xsn = p->x_stride_n, xsc = p->x_stride_c, xsh = p->x_stride_h;
    const int64_t ysn = p->y_stride_n, ysc = p->y_stride_c, ysh = p->y_stride_h;
    const int64_t c_in = p->c_in, mult = p->mult, pad_l = p->pad_left;
    const int32_t zo = p->output_zero, olo = p->output_min, ohi = p->output_max;
    for (int64_t u = u0; u < u1; ++u) {
        const int64_t n = u / c_in, ci = u - n * c_in;
        const uint8_t *xc = x + n * xsn + ci * xsc;
        if (s == 2) /* (no division per row) */
            for (int64_t iy = 0; iy < iy1; ++iy) {
                const int64_t r = iy + pt;
                qrt__dwpn_bytes((uint8_t *)pl[r & 1] + (r >> 1) * rw + pad_l, xc + iy * xsh, W,
                                0x80);
            }
        else
            for (int64_t iy = 0; iy < iy1; ++iy)
                qrt__dwpn_bytes((uint8_t *)pl[0] + (iy + pt) * rw + pad_l, xc + iy * xsh, W, 0x80);
        for (int64_t j = 0; j < mult; ++j) {
            const int64_t oc = ci * mult + j;
            const int8_t *wc = w + oc * taps;
            const int32_t wz = q->weight_zero[oc];
            int pairs = wz == 0;
            uint32_t wsum = 0;
            {
                int64_t t = 0;
                int32x4_t ws = vdupq_n_s32(0);
                for (; t + 8 <= taps; t += 8) ws = vpadalq_s16(ws, vmovl_s8(vld1_s8(wc + t)));
                wsum = (uint32_t)vaddvq_s32(ws);
                for (; t < taps; ++t) wsum += (uint32_t)(int32_t)wc[t];
            }
            for (int64_t t = 0; !any8 && pairs && t + 1 < taps; t += 2)
                if (wc[t] == -128 && wc[t + 1] == -128) pairs = 0;
            const int32_t bias = q->bias_q[oc];
            const float sc = q->scale[oc];
            const int small = qrt__neon_small_y(taps, bias, sc);
            if (pairs) {
                const int32_t bf = (int32_t)((uint32_t)bias + (uint32_t)(128 - xz) * wsum);
                const qrt__neon_rq c = qrt__neon_rq_of(bf, sc, zo, olo, ohi);
                k8(tp, wc, kh, kw, s, g.count, &c, small, stage);
            } else {
                for (int64_t t = 0; t < taps; ++t) w16[t] = (int16_t)(wc[t] - wz);
                const qrt__neon_rq c = qrt__neon_rq_of(bias, sc, zo, olo, ohi);
                qrt__dwpn_wide(tp, w16, taps, s, g.count, (int8_t)(xz ^ 0x80), &c, small,
                               stage);
            }
            uint8_t *yc = y + n * ysn + oc * ysc;
            for (int64_t oy = 0; oy < ho; ++oy) /* the kept outputs: wo of each rs */
                qrt__dwpn_bytes(yc + oy * ysh, stage + oy * rs, wo, 0);
        }
    }
}
#endif

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_impl.h
 * @brief The channel driver every depthwise conv2d variant shares (static inline: each ISA
 *        translation unit compiles its own copy with its own flags).  Private to src/.
 *
 * One input channel at a time, the driver writes its int16 "phase planes": slabs of
 * (x - input_zero), zero where the window leaves the image, one slab per (row phase, column
 * phase) of the stride.  For stride sh <= kh, row phase q holds padded rows q, q+sh, q+2sh...,
 * so tap row ky reads phase (ky*dh) % sh from slab row oy + (ky*dh)/sh; for sh > kh each tap
 * row gets its own slab of the ho rows it reads (a crafted stride never costs more than the
 * output).  Columns likewise.  A slab row is rs = wo + (kw-1)*dw/sw elements, so output
 * (oy, ox) of tap t reads slab element (oy + roff_t)*rs + ox + coff_t: over the flat index
 * f = oy*rs + ox every tap is ONE contiguous run.  The ISA kernel computes all
 * count = (ho-1)*rs + wo flat outputs (the rs - wo columns between rows are computed and
 * dropped) into a staging row, which the driver copies out row by row.  Integer sums are
 * exact in any order, so every kernel equals the reference.  The zeros of the planes depend on
 * the geometry only: a run writes them for its first channel and then only the image spans.
 */
#ifndef QRT_DWCONV2D_IMPL_H
#define QRT_DWCONV2D_IMPL_H

#include <stdint.h>
#include <string.h>

#include "qrt/cpu.h"
#include "qrt/dwconv2d.h"

#define QRT__DW_TAIL 64 /* elements after each slab and the staging row: kernel vector over-read */

typedef struct {
    int64_t rslots, cslots, rq, rs, slab, count, count_pad, taps;
    int row_a, col_a;
    size_t off_planes, off_src, off_wt, off_wp, off_stage, bytes;
} qrt__dw_geom;

static inline size_t qrt__dw_align(uint64_t b) { return (size_t)((b + 63u) & ~(uint64_t)63u); }

/** The low n bits of a 64-bit mask (n clamped to [0, 64]): masked loads and stores of n bytes. */
static inline uint64_t qrt__dw_m64(int64_t n) {
    return n <= 0 ? 0u : n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1u;
}

/** Geometry of the planes; bytes == 0 when they would not fit a size_t. */
static inline qrt__dw_geom qrt__dw_geom_of(const qrt_dwconv2d_params *p) {
    qrt__dw_geom g;
    g.row_a = p->sh <= p->kh;
    g.col_a = p->sw <= p->kw;
    g.rslots = g.row_a ? p->sh : p->kh;
    g.cslots = g.col_a ? p->sw : p->kw;
    g.rq = (int64_t)p->ho + (g.row_a ? ((int64_t)(p->kh - 1) * p->dh) / p->sh : 0);
    g.rs = (int64_t)p->wo + (g.col_a ? ((int64_t)(p->kw - 1) * p->dw) / p->sw : 0);
    g.slab = g.rq * g.rs + QRT__DW_TAIL;
    g.count = ((int64_t)p->ho - 1) * g.rs + p->wo;
    g.count_pad = (g.count + 63) & ~(int64_t)63;
    g.taps = (int64_t)p->kh * p->kw;
    const uint64_t planes = (uint64_t)g.rslots * g.cslots * (uint64_t)g.slab * 2u;
    g.off_planes = 0;
    const uint64_t o_src = qrt__dw_align(planes);
    const uint64_t o_wt = o_src + qrt__dw_align((uint64_t)g.taps * sizeof(void *));
    const uint64_t o_wp = o_wt + qrt__dw_align((uint64_t)(g.taps + 2) * 2u);
    const uint64_t o_stage = o_wp + qrt__dw_align((uint64_t)(g.taps / 2 + 1) * 4u);
    const uint64_t total = o_stage + qrt__dw_align((uint64_t)g.count_pad + QRT__DW_TAIL) + 64u;
    if (total > (uint64_t)(SIZE_MAX / 4)) {
        g.bytes = 0;
        return g;
    }
    g.off_src = (size_t)o_src;
    g.off_wt = (size_t)o_wt;
    g.off_wp = (size_t)o_wp;
    g.off_stage = (size_t)o_stage;
    g.bytes = (size_t)total;
    return g;
}

/** kernel(src, wt, wp, taps, count, bias, scale, zp, lo, hi, stage): stage[f] for f in
 *  [0, count_pad) = requant(sum_t wt[t] * src[t][f] + bias) (entries >= count are garbage);
 *  wp[i] packs wt[2i] (low half) and wt[2i+1] (high half, 0 past the last tap). */
typedef void (*qrt__dw_kernel_fn)(const int16_t *const *src, const int16_t *wt, const int32_t *wp,
                                  int64_t taps, int64_t count, int32_t bias, float scale,
                                  int32_t zp, int32_t lo, int32_t hi, uint8_t *stage);

/** widen(src, dst, len, xz, step): dst[j] = src[j * step] - xz for step 1 or 2 (NULL: scalar);
 *  reads src[0 .. (len - 1) * step] only. */
typedef void (*qrt__dw_widen_fn)(const uint8_t *src, int16_t *dst, int64_t len, int32_t xz,
                                 int64_t step);

/** Columns [lo, hi) of a slab row (j*sw + cbase) that fall inside the image. */
static inline void qrt__dw_span(const qrt_dwconv2d_params *p, int64_t cbase, int64_t rs,
                                int64_t *lo_out, int64_t *hi_out) {
    const int64_t sw = p->sw, W = p->w, off = cbase - (int64_t)p->pad_left; /* ix = j*sw + off */
    int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
    int64_t hi = W - off <= 0 ? 0 : (W - off - 1) / sw + 1;
    if (lo > rs) lo = rs;
    if (hi > rs) hi = rs;
    if (hi < lo) hi = lo;
    *lo_out = lo;
    *hi_out = hi;
}

/** One slab row: padded row r (image row r - pad_top), columns j*sw + cbase (j < rs), of
 *  which [lo, hi) lie in the image (qrt__dw_span).  The zeros (rows outside the image, columns
 *  outside [lo, hi)) are the same for every channel: written only when `fill`. */
__attribute__((always_inline)) static inline void qrt__dw_plane_row(const qrt_dwconv2d_params *p, const uint8_t *xc, int64_t r,
                                     int64_t cbase, int64_t rs, int64_t lo, int64_t hi,
                                     int16_t *dst, qrt__dw_widen_fn widen, int fill) {
    const int64_t iy = r - (int64_t)p->pad_top;
    if (iy < 0 || iy >= (int64_t)p->h) {
        if (fill) memset(dst, 0, (size_t)rs * 2u);
        return;
    }
    const int64_t sw = p->sw, off = cbase - (int64_t)p->pad_left;
    if (fill && lo) memset(dst, 0, (size_t)lo * 2u);
    const uint8_t *xr = xc + iy * p->x_stride_h;
    const int32_t xz = p->input_zero;
    if (sw <= 2 && p->x_stride_w == 1 && widen) {
        if (hi > lo) widen(xr + lo * sw + off, dst + lo, hi - lo, xz, sw);
    } else {
        const int64_t xs = p->x_stride_w * sw, x0 = off * p->x_stride_w;
        for (int64_t j = lo; j < hi; ++j) dst[j] = (int16_t)((int32_t)xr[x0 + j * xs] - xz);
    }
    if (fill && rs > hi) memset(dst + hi, 0, (size_t)(rs - hi) * 2u);
}

/** Units [u0, u1) of (n, c): planes per input channel, then its mult output channels. */
__attribute__((always_inline)) static inline void qrt__dw_run(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                               const qrt_conv1d_quant *q, uint8_t *y, void *scratch, int64_t u0,
                               int64_t u1, qrt__dw_kernel_fn kernel, qrt__dw_widen_fn widen) {
    const qrt__dw_geom g = qrt__dw_geom_of(p);
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    int16_t *planes = (int16_t *)(base + g.off_planes);
    const int16_t **src = (const int16_t **)(void *)(base + g.off_src);
    int16_t *wt = (int16_t *)(base + g.off_wt);
    int32_t *wp = (int32_t *)(base + g.off_wp);
    uint8_t *stage = base + g.off_stage;
    const int64_t kh = p->kh, kw = p->kw, rs = g.rs;
    /* tap t = ky*kw + kx reads slab (rslot, cslot) from (roff, coff) */
    for (int64_t ky = 0; ky < kh; ++ky) {
        const int64_t rsl = g.row_a ? (ky * p->dh) % p->sh : ky;
        const int64_t roff = g.row_a ? (ky * p->dh) / p->sh : 0;
        for (int64_t kx = 0; kx < kw; ++kx) {
            const int64_t csl = g.col_a ? (kx * p->dw) % p->sw : kx;
            const int64_t coff = g.col_a ? (kx * p->dw) / p->sw : 0;
            src[ky * kw + kx] = planes + (rsl * g.cslots + csl) * g.slab + roff * rs + coff;
        }
    }
    for (int64_t u = u0; u < u1; ++u) {
        const int64_t n = u / p->c_in, c = u - n * p->c_in;
        const uint8_t *xc = x + n * p->x_stride_n + c * p->x_stride_c;
        for (int64_t rsl = 0; rsl < g.rslots; ++rsl)
            for (int64_t csl = 0; csl < g.cslots; ++csl) {
                int16_t *slab = planes + (rsl * g.cslots + csl) * g.slab;
                const int64_t cbase = g.col_a ? csl : csl * (int64_t)p->dw;
                int64_t lo, hi;
                qrt__dw_span(p, cbase, rs, &lo, &hi);
                int64_t r = g.row_a ? rsl : rsl * (int64_t)p->dh;
                for (int64_t rr = 0; rr < g.rq; ++rr, r += p->sh)
                    qrt__dw_plane_row(p, xc, r, cbase, rs, lo, hi, slab + rr * rs, widen,
                                      u == u0);
                if (u == u0) memset(slab + g.rq * rs, 0, QRT__DW_TAIL * 2u);
            }
        for (int64_t j = 0; j < p->mult; ++j) {
            const int64_t oc = c * p->mult + j;
            const int8_t *wc = w + oc * g.taps;
            const int32_t wz = q->weight_zero[oc];
            for (int64_t t = 0; t < g.taps; ++t) wt[t] = (int16_t)(wc[t] - wz);
            wt[g.taps] = 0;
            for (int64_t t = 0; t < g.taps; t += 2)
                wp[t / 2] = (int32_t)((uint32_t)(uint16_t)wt[t] |
                                      ((uint32_t)(uint16_t)wt[t + 1] << 16));
            kernel(src, wt, wp, g.taps, g.count, q->bias_q[oc], q->scale[oc], p->output_zero,
                   p->output_min, p->output_max, stage);
            uint8_t *yc = y + n * p->y_stride_n + oc * p->y_stride_c;
            for (int64_t oy = 0; oy < p->ho; ++oy)
                memcpy(yc + oy * p->y_stride_h, stage + oy * rs, p->wo);
        }
    }
}

/* ---- The flat path: dilation 1, one stride s in {1, 2} on both axes, padding < kernel ----
 *
 * Phase planes without padding columns: plane (row phase a, column phase b) holds element
 * (i, j) = x[s*i + a][s*j + b] - input_zero (zero outside the image) at P + i*rs + j, with
 * rs = max(wo, ceil(W / s)), and zero rows above and below the image rows.  Tap (ky, kx)
 * (dy = ky - pad_top, dx = kx - pad_left) reads plane (dy mod s, dx mod s) at flat offset
 * floor(dy/s)*rs + floor(dx/s) from output f = oy*rs + ox; a column that leaves the plane
 * (ox + floor(dx/s) outside [0, plane width)) reads a neighbouring row, so those taps AND their
 * loads with a per-position int16 mask (0 / -1, one array per kernel column that needs one,
 * built once per call).  With rs == wo (every MobileNet-style 3x3 pad-1 layer) no computed
 * output is dropped, the image rows of a stride-1 NCHW plane are one contiguous widening
 * and the output of a channel is one copy; stride 2 splits each input row into its two
 * column phases in one pass.  All zeros are written once per call. */
#define QRT__DWF_FRONT 32 /* elements before the first plane row (reads reach -(kw-1)) */
#define QRT__DWF_TAIL 160 /* elements after the last plane row (vector over-read + kw; the
                            * stride-2 split may write 64 garbage elements into it) */

static inline int qrt__dwf_ok(const qrt_dwconv2d_params *p) {
    return p->dh == 1 && p->dw == 1 && p->sh == p->sw && p->sh <= 2 && p->kh <= 16 &&
           p->kw <= 16 && p->pad_top < p->kh && p->pad_left < p->kw;
}

/* Channel blocks: the planes of up to QRT__DWF_NB input channels are built before any of
 * their kernels runs, in slots of at most QRT__DWF_BLOCK_BYTES together (large planes: one
 * slot), so a kernel's unaligned loads do not meet the planes' stores still in flight (store
 * forwarding fails on them) and neighbouring channels' builds and kernels can overlap.  On the
 * Zen 4 host this measured within noise of one channel at a time (dwcb, docs/performance.md);
 * it costs one memset of the slots per run. */
#define QRT__DWF_NB 16
#ifndef QRT__DWF_BLOCK_BYTES
#define QRT__DWF_BLOCK_BYTES 24576
#endif

typedef struct {
    int64_t s, rs, count, count_pad, taps, rlo, rhi, pst, mlen, nb, slot;
    int64_t pw[2], prow[2];
    size_t off_masks, off_src, off_mk, off_wt, off_wp, off_stage, bytes;
} qrt__dwf_geom;

static inline qrt__dwf_geom qrt__dwf_geom_of(const qrt_dwconv2d_params *p) {
    qrt__dwf_geom g;
    const int64_t s = p->sh;
    g.s = s;
    for (int64_t ph = 0; ph < 2; ++ph) {
        g.pw[ph] = ph < s && (int64_t)p->w > ph ? ((int64_t)p->w - ph + s - 1) / s : 0;
        g.prow[ph] = ph < s && (int64_t)p->h > ph ? ((int64_t)p->h - ph + s - 1) / s : 0;
    }
    g.rs = (int64_t)p->wo > g.pw[0] ? (int64_t)p->wo : g.pw[0];
    g.count = ((int64_t)p->ho - 1) * g.rs + p->wo;
    g.count_pad = (g.count + 63) & ~(int64_t)63;
    g.taps = (int64_t)p->kh * p->kw;
    g.rlo = -(((int64_t)p->pad_top + s - 1) / s);
    g.rhi = (int64_t)p->ho + ((int64_t)p->kh - 1 - p->pad_top) / s;
    const uint64_t rows = (uint64_t)(g.rhi - g.rlo);
    g.pst = (int64_t)(((uint64_t)QRT__DWF_FRONT + rows * (uint64_t)g.rs + QRT__DWF_TAIL + 31u) &
                      ~(uint64_t)31u);
    g.mlen = g.count_pad + 64;
    const uint64_t slot = (uint64_t)(s * s) * (uint64_t)g.pst; /* elements, a multiple of 32 */
    uint64_t nb = slot * 2u * QRT__DWF_NB <= QRT__DWF_BLOCK_BYTES
                      ? QRT__DWF_NB
                      : (uint64_t)QRT__DWF_BLOCK_BYTES / (slot * 2u);
    if (nb > p->c_in) nb = p->c_in;
    if (nb < 1) nb = 1;
    g.nb = (int64_t)nb;
    g.slot = (int64_t)slot;
    const uint64_t planes = nb * slot * 2u;
    const uint64_t o_masks = qrt__dw_align(planes);
    const uint64_t o_src = o_masks + qrt__dw_align((uint64_t)p->kw * (uint64_t)g.mlen * 2u);
    const uint64_t o_mk = o_src + qrt__dw_align(nb * (uint64_t)g.taps * sizeof(void *));
    const uint64_t o_wt = o_mk + qrt__dw_align((uint64_t)g.taps * sizeof(void *));
    const uint64_t o_wp = o_wt + qrt__dw_align((uint64_t)(g.taps + 2) * 2u);
    const uint64_t o_stage = o_wp + qrt__dw_align((uint64_t)(g.taps / 2 + 1) * 4u);
    const uint64_t total = o_stage + qrt__dw_align((uint64_t)g.count_pad + QRT__DW_TAIL) + 64u;
    g.off_masks = g.off_src = g.off_mk = g.off_wt = g.off_wp = g.off_stage = 0;
    if (total > (uint64_t)(SIZE_MAX / 4)) {
        g.bytes = 0;
        return g;
    }
    g.off_masks = (size_t)o_masks;
    g.off_src = (size_t)o_src;
    g.off_mk = (size_t)o_mk;
    g.off_wt = (size_t)o_wt;
    g.off_wp = (size_t)o_wp;
    g.off_stage = (size_t)o_stage;
    g.bytes = (size_t)total;
    return g;
}

/* ---- The channels-in-lanes path (src/x86/dwconv2d_avx512vnni_cl.c): small planes ----
 * Blocks of 16 channels, one per 32-bit lane: B[h*w] the 16 channels' bytes of each image
 * position, T[hp][tw] int16 pairs (x - xz at col, col + 1) of the zero-padded image, a
 * [16][sst] byte stage of the outputs. */
#define QRT__DWCL_MAXK 7      /* kernel height and width */
#define QRT__DWCL_MAXOUT 256   /* output positions per channel (7x7 1.4-2.5x the flat path, 14x14 1.07-1.12x; 28x28 0.9x) */
/* The AVX2 form's limit (src/x86/dwconv2d_avx2_cl.c): on the Zen 3 host 7x7 outputs ran
 * 1.0-2.0x the flat path (the stride-2 14x14 -> 7x7 layers 1.7-2.0x), 14x14 outputs 0.8-1.0x */
#define QRT__DWCL_MAXOUT_AVX2 64
/* The aarch64 NEON form's limit (src/neon/dwconv2d_neon.c) */
#ifndef QRT__DWCL_MAXOUT_NEON
#define QRT__DWCL_MAXOUT_NEON 256
#endif
/* On dot-product CPUs the sdot byte planes (src/neon/dwconv2d_neondot.c) take the planes over
 * this many outputs from the channels-in-lanes path: their per-channel set-up and row copies
 * amortise on 14x14 planes (MobileNetV2 384 ch 14x14: 0.645 -> 0.566 M executed instructions
 * under qemu cortex-a76) and not on 7x7 ones (960 ch: 0.522 -> 0.654 M with this at 0) */
#ifndef QRT__DWPD_MINOUT
#define QRT__DWPD_MINOUT 64
#endif
#define QRT__DWCL_MAXIN 1024  /* input positions per channel */

typedef struct {
    int64_t hp, tw, sst;
    size_t off_e, off_t, off_stage, bytes;
    /* the byte-quad form (AVX-512 VNNI, int8 weights): ng groups of 4 outputs per row, nq
     * quads of taps per kernel row, bw 16-byte entries per phase row of the padded byte image
     * Bp, the position table, T4 [hp][ng + nq - 1][4] zmm (stride 1, or one quad), a
     * [16][sst4] stage; the same scratch */
    int64_t ng, nq, bw, sst4;
    size_t off_bp, off_tab, off_t4, off_stage4;
} qrt__dwcl_geom;

/** Whether the geometry suits the channels-in-lanes path (the AVX-512 VNNI variant also needs
 *  the packed weight, qrt_conv1d_quant.wpack_cl). */
static inline int qrt__dwcl_geom_ok(const qrt_dwconv2d_params *p) {
    return p->mult == 1 && p->dh == 1 && p->dw == 1 && p->sh == p->sw && p->sh <= 2 &&
           p->kh <= QRT__DWCL_MAXK && p->kw <= QRT__DWCL_MAXK && p->x_stride_w == 1 &&
           p->x_stride_h == (int64_t)p->w && (uint64_t)p->h * p->w <= QRT__DWCL_MAXIN &&
           (uint64_t)p->ho * p->wo <= QRT__DWCL_MAXOUT && p->y_stride_h == (int64_t)p->wo;
}

static inline qrt__dwcl_geom qrt__dwcl_geom_of(const qrt_dwconv2d_params *p) {
    qrt__dwcl_geom g;
    g.hp = ((int64_t)p->ho - 1) * p->sh + p->kh;
    g.tw = ((int64_t)p->wo - 1) * p->sw + p->kw;
    g.sst = ((int64_t)p->ho * p->wo + 63) & ~(int64_t)63;
    g.off_e = 0; /* B: the image positions (at most QRT__DWCL_MAXIN), whole 64-position chunks */
    g.off_t = ((size_t)p->h * p->w + 63u) / 64u * 64u * 16u;
    g.off_stage = g.off_t + (size_t)(g.hp * g.tw) * 64u;
    g.bytes = g.off_stage + 16u * (size_t)g.sst + 64u;
    /* byte quads: padded column s*ox + 4q + k (k < 4) of group g's output ox = 4g + L is entry
     * ox + (4q + k) / s of phase (4q + k) % s; the last read is column s*(4ng - 1) + 4nq - 1 */
    const int64_t s = p->sh;
    g.ng = ((int64_t)p->wo + 3) / 4;
    g.nq = ((int64_t)p->kw + 3) / 4;
    g.bw = (s * (4 * g.ng - 1) + 4 * g.nq - 1) / s + 1;
    g.sst4 = ((int64_t)p->ho * p->wo + 16 + 63) & ~(int64_t)63; /* 3 spilled lanes past the end */
    g.off_bp = 0; /* [hp][s][bw] entries and one for positions no output reads */
    g.off_tab = qrt__dw_align((uint64_t)(g.hp * s * g.bw + 1) * 16u);
    g.off_t4 = g.off_tab + qrt__dw_align(((uint64_t)p->h * p->w + 63u) / 64u * 64u * 4u);
    g.off_stage4 = g.off_t4 + (size_t)(g.hp * (g.ng + g.nq - 1)) * 256u;
    const size_t b4 = g.off_stage4 + 16u * (size_t)g.sst4 + 64u;
    if (b4 > g.bytes) g.bytes = b4;
    return g;
}

/* ---- The byte-plane path (src/x86/dwconv2d_avx512vnni.c): stride 1 or 2, dilation 1 ----
 * s row-phase u8 planes: row i of plane a is padded row s*i + a (image row s*i + a - pad_top),
 * rw = s * rs bytes, byte e = x[e - pad_left] (input_zero outside the image), so tap (ky, kx)
 * of output (oy, ox) reads byte s*ox + kx of row oy + ky / s of plane ky % s, and over the
 * flat output f = oy * rs + ox, taps 4q .. 4q + 3 of row ky are the 4 bytes at
 * plane(ky % s) + (ky / s) * rw + s*f + 4q: one vpdpbusd lane (u8 input x int8 weight, exact
 * int32 sums), the input bytes as they lie.  A 64-byte load at s*f + 4q + d holds in lane j
 * the taps of output f + 4j/s + d/s: stride 1 takes 4 loads (d = 0..3, outputs = d mod 4),
 * stride 2 two (d = 0, 2: even and odd outputs) per 64 / 32 outputs, and the outputs are
 * interleaved back after requantizing.  No widening to int16 and no masks (the flat path
 * spends an unpack per vpdpwssd on the same ports and masks the columns that leave a phase
 * plane), and the plane build is plain byte copies.  The input zero point moves into the bias
 * (sum (w - wz)(x - xz) = sum (w - wz) x - xz sum (w - wz), exact mod 2^32) and the padding
 * holds input_zero, adding 0.  A weight w - wz outside int8 (a non-zero weight zero point) is
 * split into int8 terms (at most three: 255 = 127 + 127 + 1), each a pass over the same row.
 * rs holds the image and its left padding, and a kept output's read past the row end (its
 * right padding) lands in the next row's left padding or the tail, input_zero as well; the
 * rs - wo outputs between rows are computed and dropped (3x3 pad 1: one per row). */
#define QRT__DWP_TAIL 320 /* bytes after the last plane row: 128 outputs' over-read + taps */

typedef struct {
    int64_t s, g4, rs, rw, nr, pst, count, count_pad;
    size_t off_wp, off_rp, off_stage, bytes;
} qrt__dwp_geom;

static inline int qrt__dwp_ok(const qrt_dwconv2d_params *p) {
    return p->sh == p->sw && p->sh <= 2 && p->dh == 1 && p->dw == 1 && p->kh <= 16 &&
           p->kw <= 16 && p->pad_top < p->kh && p->pad_left < p->kw && p->x_stride_w == 1;
}

#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
/* the sdot byte planes (src/neon/dwconv2d_neondot.c) take p on this CPU; cl: the call has
 * the channels-in-lanes weight */
static inline int qrt__dwpd_take(const qrt_dwconv2d_params *p, int cl) {
    return qrt_dwconv2d_dot && (qrt_cpu_features() & QRT_CPU_DOTPROD) && qrt__dwp_ok(p) &&
           ((uint64_t)p->ho * p->wo > QRT__DWPD_MINOUT || !cl || !qrt__dwcl_geom_ok(p));
}
#endif

static inline qrt__dwp_geom qrt__dwp_geom_of(const qrt_dwconv2d_params *p) {
    qrt__dwp_geom g;
    const int64_t s = p->sh;
    g.s = s;
    g.g4 = ((int64_t)p->kw + 3) / 4;
    /* the image inside a row; a kept output's read past the row end lands in the next row's
     * left padding (input_zero, as the padding it stands for) */
    const int64_t img = ((int64_t)p->pad_left + p->w + s - 1) / s;
    const int64_t rd = (s * ((int64_t)p->wo - 1) + p->kw - p->pad_left + s - 1) / s;
    g.rs = img > rd ? img : rd;
    g.rw = s * g.rs;
    g.nr = (int64_t)p->ho + ((int64_t)p->kh - 1) / s;
    g.count = ((int64_t)p->ho - 1) * g.rs + p->wo;
    g.count_pad = (g.count + 127) & ~(int64_t)127;
    g.off_wp = g.off_rp = g.off_stage = 0;
    const uint64_t pst = ((uint64_t)g.nr * (uint64_t)g.rw + QRT__DWP_TAIL + 63u) & ~(uint64_t)63u;
    const uint64_t o_wp = qrt__dw_align((uint64_t)s * pst);
    /* the split weights: 3 terms per row; then the row pointers */
    const uint64_t o_rp = o_wp + qrt__dw_align((uint64_t)p->kh * 3u * (uint64_t)g.g4 * 4u);
    const uint64_t o_stage = o_rp + qrt__dw_align((uint64_t)p->kh * 3u * sizeof(void *));
    const uint64_t total = o_stage + qrt__dw_align((uint64_t)g.count_pad + 64u) + 64u;
    g.pst = (int64_t)pst;
    if (total > (uint64_t)(SIZE_MAX / 4)) {
        g.bytes = 0;
        return g;
    }
    g.off_wp = (size_t)o_wp;
    g.off_rp = (size_t)o_rp;
    g.off_stage = (size_t)o_stage;
    g.bytes = (size_t)total;
    return g;
}

/* ---- Stride-2 rows (src/x86/dwconv2d_avx512vnni.c): the byte planes' sums without planes ----
 * At stride 2 the byte planes copy four input bytes per output, about 40 % of a 112 -> 56
 * layer's time.  This form reads the image rows in place: an item is 32 outputs of one output
 * row (unit u: outputs 32u .. 32u + 31), and for kernel row ky (input row iy = 2*oy - pad_top +
 * ky; a row outside the image reads a row of input_zero bytes) and tap quad q the 64 bytes at
 * column 64u - pad_left + 4q hold in lane j the taps of output 32u + 2j, those 2 bytes on the
 * taps of output 32u + 2j + 1: two vpdpbusd per quad and kernel row, as the planes.  A byte
 * whose column leaves the row where a kept output's nonzero-weight tap reads it takes
 * input_zero by a blend (a mask per unit, parity and quad, built once per run: MobileNet's
 * rows need it on their first unit only); other bytes outside the row meet zero weights or
 * dropped outputs.  A channel whose reads could leave the tensor (the first and last planes)
 * takes the byte planes. */
#define QRT__DWR_MINWO 17 /* output columns (a row of at most 16 leaves half an item unused) */

typedef struct {
    int64_t nu, G;
    size_t off_z, off_mk, bytes;
} qrt__dwr_geom;

static inline int qrt__dwr_ok(const qrt_dwconv2d_params *p) {
    return qrt__dwp_ok(p) && p->sh == 2 && p->kw <= 8 && p->wo >= QRT__DWR_MINWO &&
           p->wo <= 4096;
}

/* after the byte planes' scratch (a channel that cannot read in place runs them) */
static inline qrt__dwr_geom qrt__dwr_geom_of(const qrt_dwconv2d_params *p) {
    qrt__dwr_geom g;
    const size_t b = qrt__dwp_geom_of(p).bytes;
    g.nu = ((int64_t)p->wo + 31) / 32;
    g.G = ((int64_t)p->kw + 3) / 4;
    g.off_z = qrt__dw_align(b);                      /* 64 + 64 nu + 64 bytes of input_zero */
    g.off_mk = g.off_z + qrt__dw_align((uint64_t)(64 * g.nu + 128));
    g.bytes = b ? g.off_mk + (size_t)(g.nu * 2 * g.G) * 8u + 64u : 0;
    return g;
}

/* ---- The byte-permute path (src/x86/dwconv2d_avx512vbmi.c): small planes, int8 weights ----
 * Over the flat output f = oy*wo + ox of an NCHW plane, group g is outputs [16g, 16g + 16),
 * one per 32-bit lane.  Tap t = ky*kw + kx of output f reads the flat input position
 * u(f, t) = (oy*sh - pad_top + ky*dh)*W + ox*sw - pad_left + kx*dw when it lies in the image;
 * a group's positions lie in [lo, hi] (qrt__dwb_span), and where hi - lo < 127 for every group
 * the 127 bytes from win = max(lo, 0) hold all of them: two 64-byte loads and a vpermt2b per
 * 4 taps gather a vpdpbusd operand (byte 127 of the pair holds input_zero: padding).  The
 * tables ([ng][nq] 64-byte indices, per group its window and load masks) depend on the
 * geometry only and are built once per run. */
#define QRT__DWB_MAXOUT 1024 /* output positions per channel (28x28) */
#define QRT__DWB_MAXQ 7      /* quads of taps (kernels up to 28 taps: 5x5) */

typedef struct {
    int64_t ng, nq;
    size_t off_idx, off_win, bytes;
} qrt__dwb_geom;

/** The lowest and highest input position (relative to the plane, unclamped) a tap of an output
 *  of group g can read. */
static inline void qrt__dwb_span(const qrt_dwconv2d_params *p, int64_t g, int64_t *lo,
                                 int64_t *hi) {
    const int64_t npo = (int64_t)p->ho * p->wo, wo = p->wo, W = p->w, sw = p->sw;
    const int64_t f0 = 16 * g, f1 = 16 * g + 15 < npo ? 16 * g + 15 : npo - 1;
    const int64_t oy0 = f0 / wo, ox0 = f0 - oy0 * wo, oy1 = f1 / wo, ox1 = f1 - oy1 * wo;
    const int64_t step = (int64_t)p->sh * W; /* one output row down */
    int64_t mn = oy0 * step + ox0 * sw, mx = oy1 * step + ox1 * sw;
    if (oy1 > oy0) { /* the later rows start at ox 0, the earlier ones end at wo - 1 */
        if ((oy0 + 1) * step < mn) mn = (oy0 + 1) * step;
        if ((oy1 - 1) * step + (wo - 1) * sw > mx) mx = (oy1 - 1) * step + (wo - 1) * sw;
    }
    const int64_t off = -(int64_t)p->pad_top * W - (int64_t)p->pad_left;
    *lo = mn + off;
    *hi = mx + off + ((int64_t)p->kh - 1) * p->dh * W + ((int64_t)p->kw - 1) * p->dw;
}

/** Whether the geometry suits the byte-permute path (its weights must also fit int8: checked
 *  per run). */
static inline int qrt__dwb_ok(const qrt_dwconv2d_params *p) {
    const int64_t npo = (int64_t)p->ho * p->wo;
    if (p->x_stride_w != 1 || p->x_stride_h != (int64_t)p->w || p->y_stride_h != (int64_t)p->wo ||
        npo > QRT__DWB_MAXOUT || (int64_t)p->kh * p->kw > 4 * QRT__DWB_MAXQ ||
        (uint64_t)p->h * p->w > 65536u || p->sh > 64 || p->sw > 64 || p->dh > 64 ||
        p->dw > 64)
        return 0;
    for (int64_t g = 0; 16 * g < npo; ++g) {
        int64_t lo, hi;
        qrt__dwb_span(p, g, &lo, &hi);
        if (hi - lo >= 127) return 0;
    }
    return 1;
}

/** Whether the AVX-512 VNNI variant takes the byte-permute path (given the channels-in-lanes
 *  weight or not): where the geometry suits it, except the stride-1 planes of at most 64
 *  outputs that the channels-in-lanes path takes (MobileNet's 7x7 layers: there four groups
 *  of 16 hold 49 outputs, and on the Zen 5 host the permutes ran 1.2-1.3x slower). */
static inline int qrt__dwb_take(const qrt_dwconv2d_params *p, int cl) {
    return qrt__dwb_ok(p) && !(cl && qrt__dwcl_geom_ok(p) && p->sh == 1 && p->sw == 1 &&
                               (uint64_t)p->ho * p->wo <= 64u);
}

static inline qrt__dwb_geom qrt__dwb_geom_of(const qrt_dwconv2d_params *p) {
    qrt__dwb_geom g;
    g.ng = ((int64_t)p->ho * p->wo + 15) / 16;
    g.nq = ((int64_t)p->kh * p->kw + 3) / 4;
    g.off_idx = 0;
    g.off_win = (size_t)(g.ng * g.nq) * 64u;
    g.bytes = g.off_win + (size_t)g.ng * 32u + 64u; /* per group: win, two load masks */
    return g;
}

/** Scratch bytes of one run (0: too large), for whichever path the variants take. */
static inline size_t qrt__dw_bytes(const qrt_dwconv2d_params *p) {
    size_t b = qrt__dwf_ok(p) ? qrt__dwf_geom_of(p).bytes : qrt__dw_geom_of(p).bytes;
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
    if (b && qrt__dwp_ok(p)) { /* the AVX-512 VNNI / aarch64 NEON byte planes (0: too large) */
        const size_t c = qrt__dwp_geom_of(p).bytes;
        if (!c) return 0;
        if (c > b) b = c;
    }
#endif
#if defined(__x86_64__) || defined(__i386__)
    if (b && qrt__dwr_ok(p)) {
        const size_t c = qrt__dwr_geom_of(p).bytes;
        if (c > b) b = c;
    }
#endif
#if defined(__x86_64__) || defined(__i386__)
    if (b && qrt__dwb_ok(p)) {
        const size_t c = qrt__dwb_geom_of(p).bytes;
        if (c > b) b = c;
    }
#endif
    if (b && qrt__dwcl_geom_ok(p)) {
        const size_t c = qrt__dwcl_geom_of(p).bytes;
        return c > b ? c : b;
    }
    return b;
}

/** kernel_m: as qrt__dw_kernel_fn, and tap t's run is ANDed with mk[t][f] where mk[t] is not
 *  NULL (mk[t] has count_pad + 64 entries). */
typedef void (*qrt__dwf_kernel_fn)(const int16_t *const *src, const int16_t *const *mk,
                                   const int16_t *wt, const int32_t *wp, int64_t taps,
                                   int64_t count, int32_t bias, float scale, int32_t zp,
                                   int32_t lo, int32_t hi, uint8_t *stage);

/** widen2(src, d0, d1, len, xz, sroom, room): d0[j] = src[2j] - xz for 2j < len, d1[j] =
 *  src[2j+1] - xz for 2j+1 < len.  It may read src[0 .. sroom) (sroom >= len) and write
 *  anything to d0[0 .. room) and d1[0 .. room) (room >= (len+1)/2): full vectors instead of
 *  masked or buffered tails (AVX-512 masked stores are slow on Zen 4).  The driver's room
 *  ends at the plane's last image row (its later rows are written afterwards) or, when no
 *  zero row follows that, 64 elements into the plane's tail, which no kept output reads. */
typedef void (*qrt__dwf_widen2_fn)(const uint8_t *src, int16_t *d0, int16_t *d1, int64_t len,
                                   int32_t xz, int64_t sroom, int64_t room);

/** The weights of one output channel as its kernel reads them: the x86 kernels read the
 *  pairs wp[i] = (wc[2i] - wz, wc[2i+1] - wz) (low half first, 0 past the last tap), the Arm
 *  ones wt[t] = wc[t] - wz (wt[taps] = 0); only that form is written (straight from wc: no
 *  store is reloaded wider, which would miss store forwarding). */
__attribute__((always_inline)) static inline void qrt__dwf_wprep(const int8_t *wc, int32_t wz,
                                                                int64_t taps, int16_t *wt,
                                                                int32_t *wp) {
#if defined(__x86_64__) || defined(__i386__)
    (void)wt;
    for (int64_t t = 0; t + 1 < taps; t += 2)
        wp[t / 2] = (int32_t)((uint32_t)(uint16_t)(int16_t)(wc[t] - wz) |
                              (uint32_t)(uint16_t)(int16_t)(wc[t + 1] - wz) << 16);
    if (taps & 1) wp[taps / 2] = (int32_t)(uint32_t)(uint16_t)(int16_t)(wc[taps - 1] - wz);
#else
    (void)wp;
    for (int64_t t = 0; t < taps; ++t) wt[t] = (int16_t)(wc[t] - wz);
    wt[taps] = 0;
#endif
}

/** The image rows of one input channel into its planes pl[0 .. s*s) (element (0, 0) of each;
 *  the zeros around them are already there). */
__attribute__((always_inline)) static inline void qrt__dwf_build(
    const qrt_dwconv2d_params *p, const qrt__dwf_geom *g, const uint8_t *xc, int16_t *const *pl,
    qrt__dw_widen_fn widen, qrt__dwf_widen2_fn widen2) {
    const int32_t xz = p->input_zero;
    const int64_t xsw = p->x_stride_w, xsh = p->x_stride_h, rs = g->rs, W = p->w, H = p->h;
    if (g->s == 1) {
        const int64_t nr = H < g->rhi ? H : g->rhi;
        if (xsw == 1 && rs == W && xsh == W) {
            widen(xc, pl[0], nr * W, xz, 1);
        } else {
            for (int64_t i = 0; i < nr; ++i) {
                const uint8_t *xr = xc + i * xsh;
                int16_t *d = pl[0] + i * rs;
                if (xsw == 1)
                    widen(xr, d, W, xz, 1);
                else
                    for (int64_t j = 0; j < W; ++j) d[j] = (int16_t)((int32_t)xr[j * xsw] - xz);
            }
        }
        return;
    }
    const int64_t nr0 = g->prow[0] < g->rhi ? g->prow[0] : g->rhi;
    const int64_t nr1 = g->prow[1] < g->rhi ? g->prow[1] : g->rhi;
    if (xsw != 1) {
        for (int64_t iy = 0; iy < H && (iy >> 1) < g->rhi; ++iy) {
            const uint8_t *xr = xc + iy * xsh;
            int16_t *d0 = pl[2 * (iy & 1)] + (iy >> 1) * rs, *d1 = pl[2 * (iy & 1) + 1] + (iy >> 1) * rs;
            for (int64_t j = 0; j < g->pw[0]; ++j) d0[j] = (int16_t)((int32_t)xr[2 * j * xsw] - xz);
            for (int64_t j = 0; j < g->pw[1]; ++j)
                d1[j] = (int16_t)((int32_t)xr[(2 * j + 1) * xsw] - xz);
        }
        return;
    }
    /* rows of one channel lie in order: a row may read on to the end of the channel's last
     * row (sroom); its writes may run on into later image rows of its planes (written
     * afterwards) and, when no zero row follows, into the tail, which no kept output reads
     * (room).  Rows 2i and 2i+1 go to row i of planes (0, *) and (1, *). */
    const int64_t last = (H - 1) * xsh + W; /* bytes of the channel from row 0 */
    const int64_t room0 = nr0 < g->rhi ? nr0 * rs : g->rhi * rs + 64;
    const int64_t room1 = nr1 < g->rhi ? nr1 * rs : g->rhi * rs + 64;
    const int64_t rows = H < 2 * g->rhi ? H : 2 * g->rhi;
    int16_t *p00 = pl[0], *p01 = pl[1], *p10 = pl[2], *p11 = pl[3];
    const uint8_t *xr = xc;
    int64_t iy = 0, off = 0, pos = 0; /* off = i * rs, pos = iy * xsh */
    if (xsh < W) { /* rows overlap (a crafted stride): each row reads its own W bytes */
        for (; iy < rows; ++iy, xr += xsh) {
            const int64_t i = iy >> 1;
            if (iy & 1)
                widen2(xr, p10 + i * rs, p11 + i * rs, W, xz, W, room1 - i * rs);
            else
                widen2(xr, p00 + i * rs, p01 + i * rs, W, xz, W, room0 - i * rs);
        }
        return;
    }
    for (; iy + 1 < rows; iy += 2, off += rs, pos += 2 * xsh) {
        widen2(xc + pos, p00 + off, p01 + off, W, xz, last - pos, room0 - off);
        widen2(xc + pos + xsh, p10 + off, p11 + off, W, xz, last - pos - xsh, room1 - off);
    }
    if (iy < rows) widen2(xc + pos, p00 + off, p01 + off, W, xz, last - pos, room0 - off);
}

__attribute__((always_inline)) static inline void qrt__dwf_run(
    const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w, const qrt_conv1d_quant *q,
    uint8_t *y, void *scratch, int64_t u0, int64_t u1, qrt__dwf_kernel_fn kernel,
    qrt__dw_widen_fn widen, qrt__dwf_widen2_fn widen2) {
    const qrt__dwf_geom g = qrt__dwf_geom_of(p);
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    int16_t *planes = (int16_t *)(void *)base;
    int16_t *masks = (int16_t *)(void *)(base + g.off_masks);
    const int16_t **src = (const int16_t **)(void *)(base + g.off_src);
    const int16_t **mk = (const int16_t **)(void *)(base + g.off_mk);
    int16_t *wt = (int16_t *)(void *)(base + g.off_wt);
    int32_t *wp = (int32_t *)(void *)(base + g.off_wp);
    uint8_t *stage = base + g.off_stage;
    const int64_t s = g.s, rs = g.rs, kh = p->kh, kw = p->kw, taps = g.taps;
    int64_t nb = g.nb;
    if (nb > u1 - u0) nb = u1 - u0;
    memset(planes, 0, (size_t)(nb * g.slot) * 2u);
    int16_t *pl[4]; /* plane (a, b) element (0, 0) of slot 0 */
    for (int64_t a = 0; a < s * s; ++a) pl[a] = planes + a * g.pst + QRT__DWF_FRONT - g.rlo * rs;
    const int16_t *mrow[16];
    int64_t coff[16], cph[16];
    for (int64_t kx = 0; kx < kw; ++kx) {
        const int64_t dx = kx - (int64_t)p->pad_left, ph = ((dx % s) + s) % s, off = (dx - ph) / s;
        const int64_t pw = g.pw[ph];
        coff[kx] = off, cph[kx] = ph, mrow[kx] = 0;
        if (off >= 0 && (int64_t)p->wo - 1 + off < pw) continue;
        int16_t *m = masks + kx * g.mlen;
        const int64_t n0 = rs < g.mlen ? rs : g.mlen;
        for (int64_t j = 0; j < n0; ++j) m[j] = (int16_t)(j + off >= 0 && j + off < pw ? -1 : 0);
        for (int64_t f = n0; f < g.mlen; f += rs)
            memcpy(m + f, m, (size_t)(g.mlen - f < rs ? g.mlen - f : rs) * 2u);
        mrow[kx] = m;
    }
    for (int64_t ky = 0; ky < kh; ++ky) {
        const int64_t dy = ky - (int64_t)p->pad_top, ph = ((dy % s) + s) % s, ro = (dy - ph) / s;
        for (int64_t kx = 0; kx < kw; ++kx) {
            const int16_t *t0 = pl[ph * s + cph[kx]] + ro * rs + coff[kx];
            for (int64_t k = 0; k < nb; ++k) src[k * taps + ky * kw + kx] = t0 + k * g.slot;
            mk[ky * kw + kx] = mrow[kx];
        }
    }
    /* contiguous NCHW output with no dropped columns: a kernel writes channel (u, j) straight
     * into y when its count_pad bytes end inside this run's output (the bytes past count
     * belong to later channels of the run, which overwrite them); else through the stage */
    const int64_t cnt = g.count, c_out = (int64_t)p->c_in * p->mult;
    const int direct = rs == (int64_t)p->wo && p->y_stride_h == (int64_t)p->wo &&
                       p->y_stride_c == cnt && p->y_stride_n == c_out * cnt;
    const int64_t yend = u1 * (int64_t)p->mult * cnt; /* this run's output ends at y + yend */
    for (int64_t ub = u0; ub < u1; ub += nb) {
        const int64_t ue = ub + nb < u1 ? ub + nb : u1;
        for (int64_t u = ub; u < ue; ++u) { /* the block's planes first */
            const int64_t n = u / p->c_in, c = u - n * p->c_in;
            int16_t *pk[4];
            for (int64_t a = 0; a < s * s; ++a) pk[a] = pl[a] + (u - ub) * g.slot;
            qrt__dwf_build(p, &g, x + n * p->x_stride_n + c * p->x_stride_c, pk, widen, widen2);
        }
        for (int64_t u = ub; u < ue; ++u) {
            const int64_t n = u / p->c_in, c = u - n * p->c_in;
            const int16_t *const *sk = src + (u - ub) * taps;
            for (int64_t j = 0; j < p->mult; ++j) {
                const int64_t oc = c * p->mult + j;
                const int8_t *wc = w + oc * taps;
                const int32_t wz = q->weight_zero[oc];
                if (taps == 9) /* unrolled */
                    qrt__dwf_wprep(wc, wz, 9, wt, wp);
                else
                    qrt__dwf_wprep(wc, wz, taps, wt, wp);
                uint8_t *yc = y + n * p->y_stride_n + oc * p->y_stride_c;
                const int here = direct && (u * (int64_t)p->mult + j) * cnt + g.count_pad <= yend;
                kernel(sk, mk, wt, wp, taps, cnt, q->bias_q[oc], q->scale[oc], p->output_zero,
                       p->output_min, p->output_max, here ? yc : stage);
                if (here)
                    continue;
                if (rs == (int64_t)p->wo && p->y_stride_h == (int64_t)p->wo)
                    memcpy(yc, stage, (size_t)g.count);
                else
                    for (int64_t oy = 0; oy < p->ho; ++oy)
                        memcpy(yc + oy * p->y_stride_h, stage + oy * rs, p->wo);
            }
        }
    }
}

#endif /* QRT_DWCONV2D_IMPL_H */

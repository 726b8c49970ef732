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

#include "qrt/dwconv2d.h"

#define QRT__DW_TAIL 64 /* elements after each slab and the staging row: kernel vector over-read */

typedef struct {
    int64_t rslots, cslots, rq, rs, slab, count, count_pad, taps;
    int row_a, col_a;
    size_t off_planes, off_src, off_wt, off_wp, off_stage, bytes;
} qrt__dw_geom;

static inline size_t qrt__dw_align(uint64_t b) { return (size_t)((b + 63u) & ~(uint64_t)63u); }

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

#endif /* QRT_DWCONV2D_IMPL_H */

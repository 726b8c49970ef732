/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file im2col.c
 * @brief qrt/im2col.h: the im2col step of conv2d (plain C; the copy of the valid span of each
 *        output row is one memcpy when the input rows are contiguous and the stride is 1).
 */
#include "qrt/im2col.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

qrt_status qrt_im2col_check(const qrt_im2col_params *p) {
    if (!p || !p->n || !p->c || !p->h || !p->w || !p->kh || !p->kw || !p->sh || !p->sw ||
        !p->dh || !p->dw || !p->ho || !p->wo)
        return QRT_ERR_ARG;
    if (p->pad_value < 0 || p->pad_value > 255) return QRT_ERR_ARG;
    if (p->layout != QRT_IM2COL_CK_P && p->layout != QRT_IM2COL_C_PK) return QRT_ERR_ARG;
    const uint64_t lim = (uint64_t)1 << 31;
    if (p->h >= lim || p->w >= lim || p->ho >= lim || p->wo >= lim || p->pad_top >= lim ||
        p->pad_left >= lim || (uint64_t)(p->kh - 1) * p->dh >= lim ||
        (uint64_t)(p->kw - 1) * p->dw >= lim || (uint64_t)p->ho * p->sh >= ((uint64_t)1 << 40) ||
        (uint64_t)p->wo * p->sw >= ((uint64_t)1 << 40))
        return QRT_ERR_OVERFLOW;
    const uint64_t a = (uint64_t)p->n * p->c, b = (uint64_t)p->kh * p->kw,
                   c = (uint64_t)p->ho * p->wo;
    if (a >= lim || b >= lim || c >= ((uint64_t)1 << 62) / (a * b)) return QRT_ERR_OVERFLOW;
    return QRT_OK;
}

uint64_t qrt_im2col_size(const qrt_im2col_params *p) {
    if (qrt_im2col_check(p) != QRT_OK) return 0;
    return (uint64_t)p->n * p->c * p->kh * p->kw * p->ho * p->wo;
}

/* One output row (fixed n, c, ky, kx, oy) of the CK_P layout: wo bytes at dst. */
static void row_ck_p(const qrt_im2col_params *p, const uint8_t *xc, int64_t iy, int64_t kx,
                     uint8_t *dst) {
    const int64_t wo = p->wo, W = p->w, sw = p->sw;
    const uint8_t pv = (uint8_t)p->pad_value;
    if (iy < 0 || iy >= (int64_t)p->h) {
        memset(dst, pv, (size_t)wo);
        return;
    }
    const uint8_t *xr = xc + iy * p->x_stride_h;
    const int64_t off = kx * (int64_t)p->dw - (int64_t)p->pad_left; /* ix = ox*sw + off */
    /* valid ox: 0 <= ox*sw + off < W */
    int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
    int64_t hi = W - off <= 0 ? 0 : (W - off - 1) / sw + 1;
    if (lo > wo) lo = wo;
    if (hi > wo) hi = wo;
    if (hi < lo) hi = lo;
    if (lo) memset(dst, pv, (size_t)lo);
    if (sw == 1 && p->x_stride_w == 1) {
        if (hi > lo) memcpy(dst + lo, xr + lo + off, (size_t)(hi - lo));
    } else {
        const int64_t xs = p->x_stride_w;
        int64_t ox = lo;
#if defined(__SSE2__)
        if (sw == 2 && xs == 1) {
            /* Stride 2 (the stride-2 stems): 16 outputs from 32 contiguous input bytes, the
             * even ones kept by a word mask and packuswb.  Only while the 32 bytes lie inside
             * the row (the last one read is column (ox+15)*2 + off + 1 < W). */
            const __m128i even = _mm_set1_epi16(0x00FF);
            for (; ox + 16 <= hi && (ox + 15) * 2 + off + 1 < W; ox += 16) {
                const uint8_t *s = xr + ox * 2 + off;
                const __m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)s), even);
                const __m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(s + 16)), even);
                _mm_storeu_si128((__m128i *)(dst + ox), _mm_packus_epi16(a, b));
            }
        }
#endif
        for (; ox < hi; ++ox) dst[ox] = xr[(ox * sw + off) * xs];
    }
    if (wo > hi) memset(dst + hi, pv, (size_t)(wo - hi));
}

qrt_status qrt_im2col_u8(const qrt_im2col_params *p, const uint8_t *x, uint8_t *col) {
    const qrt_status st = qrt_im2col_check(p);
    if (st != QRT_OK) return st;
    const int64_t kh = p->kh, kw = p->kw, ho = p->ho, wo = p->wo, H = p->h, W = p->w;
    const uint8_t pv = (uint8_t)p->pad_value;
    uint8_t *dst = col;
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t c = 0; c < p->c; ++c) {
            const uint8_t *xc = x + n * p->x_stride_n + c * p->x_stride_c;
            if (p->layout == QRT_IM2COL_CK_P) {
                for (int64_t ky = 0; ky < kh; ++ky)
                    for (int64_t kx = 0; kx < kw; ++kx)
                        for (int64_t oy = 0; oy < ho; ++oy, dst += wo)
                            row_ck_p(p, xc, oy * p->sh + ky * p->dh - p->pad_top, kx, dst);
            } else {
                for (int64_t oy = 0; oy < ho; ++oy)
                    for (int64_t ox = 0; ox < wo; ++ox)
                        for (int64_t ky = 0; ky < kh; ++ky) {
                            const int64_t iy = oy * p->sh + ky * p->dh - p->pad_top;
                            const int row_ok = iy >= 0 && iy < H;
                            for (int64_t kx = 0; kx < kw; ++kx, ++dst) {
                                const int64_t ix = ox * p->sw + kx * p->dw - p->pad_left;
                                *dst = row_ok && ix >= 0 && ix < W
                                           ? xc[iy * p->x_stride_h + ix * p->x_stride_w]
                                           : pv;
                            }
                        }
            }
        }
    return QRT_OK;
}

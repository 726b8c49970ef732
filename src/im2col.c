/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file im2col.c
 * @brief qrt/im2col.h: the im2col step of conv2d (plain C; the copy of the valid span of each
 *        output row is one memcpy when the input rows are contiguous and the stride is 1;
 *        stride 2 keeps the even bytes of 32, SSE2 on x86-64, vld2q on aarch64).
 */
#include "qrt/im2col.h"

#include "qrt/threadpool.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
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
            /* The last up to 15 outputs: one vector over the 16 outputs that end at hi - 1,
             * from the 32 bytes that end at its last column e = (hi-1)*2 + off (< W), so
             * nothing past the row is read; the odd bytes of that window are the columns.
             * It rewrites outputs already stored with the same values. */
            if (ox < hi && hi - lo >= 16 && (hi - 16) * 2 + off - 1 >= 0) {
                const int64_t o = hi - 16;
                const uint8_t *s = xr + o * 2 + off - 1; /* column e - 31 */
                const __m128i a = _mm_srli_epi16(_mm_loadu_si128((const __m128i *)s), 8);
                const __m128i b = _mm_srli_epi16(_mm_loadu_si128((const __m128i *)(s + 16)), 8);
                _mm_storeu_si128((__m128i *)(dst + o), _mm_packus_epi16(a, b));
                ox = hi;
            }
        }
#elif defined(__aarch64__)
        if (sw == 2 && xs == 1) { /* the same two steps: vld2q's even / odd bytes */
            for (; ox + 16 <= hi && (ox + 15) * 2 + off + 1 < W; ox += 16)
                vst1q_u8(dst + ox, vld2q_u8(xr + ox * 2 + off).val[0]);
            if (ox < hi && hi - lo >= 16 && (hi - 16) * 2 + off - 1 >= 0) {
                const int64_t o = hi - 16;
                vst1q_u8(dst + o, vld2q_u8(xr + o * 2 + off - 1).val[1]);
                ox = hi;
            }
        }
#endif
        for (; ox < hi; ++ox) dst[ox] = xr[(ox * sw + off) * xs];
    }
    if (wo > hi) memset(dst + hi, pv, (size_t)(wo - hi));
}

/* Rows [r0, r1) of the CK_P layout, row r = (((n*C + c)*kh + ky)*kw + kx)*ho + oy. */
static void rows_ck_p(const qrt_im2col_params *p, const uint8_t *x, uint8_t *col, int64_t r0,
                      int64_t r1) {
    const int64_t kh = p->kh, kw = p->kw, ho = p->ho, wo = p->wo, C = p->c;
    if (r0 >= r1) return;
    int64_t q = r0, oy, kx, ky, c, n; /* the indices of r0, then counted up */
    oy = q % ho;
    q /= ho;
    kx = q % kw;
    q /= kw;
    ky = q % kh;
    q /= kh;
    c = q % C;
    n = q / C;
    const uint8_t *xc = x + n * p->x_stride_n + c * p->x_stride_c;
    for (int64_t r = r0; r < r1; ++r) {
        row_ck_p(p, xc, oy * p->sh + ky * p->dh - p->pad_top, kx, col + r * wo);
        if (++oy < ho) continue;
        oy = 0;
        if (++kx < kw) continue;
        kx = 0;
        if (++ky < kh) continue;
        ky = 0;
        if (++c == C) c = 0, ++n;
        xc = x + n * p->x_stride_n + c * p->x_stride_c;
    }
}

qrt_status qrt_im2col_u8(const qrt_im2col_params *p, const uint8_t *x, uint8_t *col) {
    const qrt_status st = qrt_im2col_check(p);
    if (st != QRT_OK) return st;
    const int64_t kh = p->kh, kw = p->kw, ho = p->ho, wo = p->wo, H = p->h, W = p->w;
    const uint8_t pv = (uint8_t)p->pad_value;
    if (p->layout == QRT_IM2COL_CK_P) {
        rows_ck_p(p, x, col, 0, (int64_t)p->n * p->c * kh * kw * ho);
        return QRT_OK;
    }
    uint8_t *dst = col;
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t c = 0; c < p->c; ++c) {
            const uint8_t *xc = x + n * p->x_stride_n + c * p->x_stride_c;
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
    return QRT_OK;
}

double qrt_im2col_mt_min_bytes = QRT_IM2COL_MT_MIN_BYTES;

typedef struct {
    const qrt_im2col_params *p;
    const uint8_t *x;
    uint8_t *col;
    int64_t rows;
    int parts;
} qrt__im2col_job;

static void qrt__im2col_part(void *ctx, int i) {
    const qrt__im2col_job *j = (const qrt__im2col_job *)ctx;
    rows_ck_p(j->p, j->x, j->col, j->rows * i / j->parts, j->rows * (i + 1) / j->parts);
}

int qrt_im2col_parts(const qrt_im2col_params *p, int threads) {
    if (threads <= 1 || p->layout != QRT_IM2COL_CK_P || qrt_im2col_check(p) != QRT_OK) return 1;
    if ((double)qrt_im2col_size(p) < qrt_im2col_mt_min_bytes) return 1;
    const int64_t rows = (int64_t)p->n * p->c * p->kh * p->kw * p->ho;
    int64_t parts = 2 * (int64_t)threads; /* claimed dynamically: a late thread costs less */
    if (parts > rows) parts = rows;
    if (parts > QRT_POOL_MAX_TASKS) parts = QRT_POOL_MAX_TASKS;
    return parts < 2 ? 1 : (int)parts;
}

qrt_status qrt_im2col_u8_mt(const qrt_im2col_params *p, const uint8_t *x, uint8_t *col,
                            int threads) {
    const qrt_status st = qrt_im2col_check(p);
    if (st != QRT_OK) return st;
    const int parts = qrt_im2col_parts(p, threads);
    if (parts <= 1) return qrt_im2col_u8(p, x, col);
    qrt__im2col_job j = {p, x, col, (int64_t)p->n * p->c * p->kh * p->kw * p->ho, parts};
    qrt_pool_run(qrt__im2col_part, &j, parts);
    return QRT_OK;
}

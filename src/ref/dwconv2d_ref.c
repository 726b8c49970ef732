/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_ref.c
 * @brief The reference depthwise conv2d (qrt/dwconv2d.h): the specification every variant is
 *        tested bit-exact against.  Plain loops, one output at a time.
 */
#include "qrt/dwconv2d.h"

#include "qrt/requant.h"

qrt_status qrt_dwconv2d_check(const qrt_dwconv2d_params *p) {
    if (!p || !p->n || !p->c_in || !p->mult || !p->h || !p->w || !p->ho || !p->wo || !p->kh ||
        !p->kw || !p->sh || !p->sw || !p->dh || !p->dw)
        return QRT_ERR_ARG;
    if (p->input_zero < 0 || p->input_zero > 255 || p->output_zero < 0 || p->output_zero > 255 ||
        p->output_min < 0 || p->output_min > p->output_max || p->output_max > 255)
        return QRT_ERR_ARG;
    if ((uint64_t)p->kh * p->kw > QRT_CONV1D_MAX_TAPS) return QRT_ERR_OVERFLOW;
    const uint64_t lim = (uint64_t)1 << 31;
    if ((uint64_t)p->c_in * p->mult >= lim || p->h >= lim || p->w >= lim || p->ho >= lim ||
        p->wo >= lim || p->pad_top >= lim || p->pad_left >= lim ||
        (uint64_t)(p->kh - 1) * p->dh >= lim || (uint64_t)(p->kw - 1) * p->dw >= lim ||
        (uint64_t)p->ho * p->sh >= ((uint64_t)1 << 40) ||
        (uint64_t)p->wo * p->sw >= ((uint64_t)1 << 40))
        return QRT_ERR_OVERFLOW;
    /* one channel's phase planes (src/dwconv2d_impl.h) stay far below 2^40 elements */
    const uint64_t rows = (uint64_t)p->ho + ((uint64_t)(p->kh - 1) * p->dh) / p->sh + 1;
    const uint64_t cols = (uint64_t)p->wo + ((uint64_t)(p->kw - 1) * p->dw) / p->sw + 1;
    const uint64_t rs = p->sh <= p->kh ? p->sh : p->kh, cs = p->sw <= p->kw ? p->sw : p->kw;
    if (rows * cols >= ((uint64_t)1 << 36) || rs * cs >= ((uint64_t)1 << 20) ||
        rows * cols * rs * cs >= ((uint64_t)1 << 40))
        return QRT_ERR_OVERFLOW;
    return QRT_OK;
}

qrt_status qrt_dwconv2d_u8_ref(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                               const qrt_conv1d_quant *q, uint8_t *y) {
    const qrt_status st = qrt_dwconv2d_check(p);
    if (st != QRT_OK) return st;
    const int64_t kk = (int64_t)p->kh * p->kw, xz = p->input_zero;
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t c = 0; c < p->c_in; ++c) {
            const uint8_t *xc = x + n * p->x_stride_n + c * p->x_stride_c;
            for (int64_t j = 0; j < p->mult; ++j) {
                const int64_t oc = c * p->mult + j;
                const int8_t *wc = w + oc * kk;
                const int32_t wz = q->weight_zero[oc];
                uint8_t *yc = y + n * p->y_stride_n + oc * p->y_stride_c;
                for (int64_t oy = 0; oy < p->ho; ++oy)
                    for (int64_t ox = 0; ox < p->wo; ++ox) {
                        int64_t acc = 0;
                        for (int64_t ky = 0; ky < p->kh; ++ky) {
                            const int64_t iy = oy * p->sh + ky * p->dh - p->pad_top;
                            for (int64_t kx = 0; kx < p->kw; ++kx) {
                                const int64_t ix = ox * p->sw + kx * p->dw - p->pad_left;
                                const int64_t xv =
                                    iy >= 0 && iy < p->h && ix >= 0 && ix < p->w
                                        ? xc[iy * p->x_stride_h + ix * p->x_stride_w]
                                        : xz;
                                acc += (xv - xz) * (wc[ky * p->kw + kx] - wz);
                            }
                        }
                        yc[oy * p->y_stride_h + ox] = qrt_requant_fp32_u8(
                            qrt_add_s32_wrap((int32_t)acc, q->bias_q[oc]), q->scale[oc],
                            p->output_zero, p->output_min, p->output_max);
                    }
            }
        }
    return QRT_OK;
}

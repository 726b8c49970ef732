/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_conv.c
 * @brief qrt/float_conv.h: the float32 depthwise 2-d convolution (and 1-d, as height 1).
 */
#include "qrt/float_conv.h"

#include "qrt/cpu.h"

static int geometry_ok(const qrt_dwconv2d_f32_params *p) {
    if (!p->n || !p->c_in || !p->mult || !p->hp || !p->wp || !p->ho || !p->wo || !p->kh ||
        !p->kw || !p->sh || !p->sw || !p->dh || !p->dw)
        return 0;
    /* the last window ends inside the padded input (Python computed ho, wo from it) */
    if ((p->ho - 1) > (SIZE_MAX - 1) / p->sh || (p->kh - 1) > (SIZE_MAX - 1) / p->dh) return 0;
    if ((p->wo - 1) > (SIZE_MAX - 1) / p->sw || (p->kw - 1) > (SIZE_MAX - 1) / p->dw) return 0;
    if ((p->ho - 1) * p->sh + (p->kh - 1) * p->dh >= p->hp) return 0;
    if ((p->wo - 1) * p->sw + (p->kw - 1) * p->dw >= p->wp) return 0;
    return 1;
}

/* One output row: the taps in row-major order, then the bias. */
static void dw_row(const qrt_dwconv2d_f32_params *p, const float *xc, const float *wc, float b,
                   int has_bias, size_t oh, float *restrict yr) {
    const size_t wo = p->wo, sw = p->sw;
    for (size_t i = 0; i < p->kh; i++) {
        const float *xrow = xc + (oh * p->sh + i * p->dh) * p->wp;
        for (size_t j = 0; j < p->kw; j++) {
            const float wv = wc[i * p->kw + j];
            const float *restrict xr = xrow + j * p->dw;
            if (i == 0 && j == 0) {
                if (sw == 1)
                    for (size_t o = 0; o < wo; o++) yr[o] = wv * xr[o];
                else
                    for (size_t o = 0; o < wo; o++) yr[o] = wv * xr[o * sw];
            } else if (sw == 1) {
                for (size_t o = 0; o < wo; o++) yr[o] = yr[o] + wv * xr[o];
            } else {
                for (size_t o = 0; o < wo; o++) yr[o] = yr[o] + wv * xr[o * sw];
            }
        }
    }
    if (has_bias)
        for (size_t o = 0; o < wo; o++) yr[o] = yr[o] + b;
}

/* One output plane with a square stride s, on the padded input's own rows: output (oh, ow)
 * reads xc[s * (oh * wp + ow) + tap offset], so over q = oh * wp + ow each tap is one long loop
 * (the columns ow >= wo of the extended rows are computed and dropped, all inside the plane;
 * float_conv.h's gate). Per output element the operations are dw_row's, in the same order. */
static void dw_plane(const qrt_dwconv2d_f32_params *p, const float *xc, const float *wc, float b,
                     int has_bias, float *restrict e, float *restrict yc) {
    const size_t s = p->sh, wp = p->wp, len = (p->ho - 1) * wp + p->wo;
    for (size_t i = 0; i < p->kh; i++)
        for (size_t j = 0; j < p->kw; j++) {
            const float wv = wc[i * p->kw + j];
            const float *restrict xs = xc + i * p->dh * wp + j * p->dw;
            if (i == 0 && j == 0) {
                if (s == 1)
                    for (size_t q = 0; q < len; q++) e[q] = wv * xs[q];
                else
                    for (size_t q = 0; q < len; q++) e[q] = wv * xs[q * s];
            } else if (s == 1) {
                for (size_t q = 0; q < len; q++) e[q] = e[q] + wv * xs[q];
            } else {
                for (size_t q = 0; q < len; q++) e[q] = e[q] + wv * xs[q * s];
            }
        }
    for (size_t oh = 0; oh < p->ho; oh++) {
        const float *er = e + oh * wp;
        float *yr = yc + oh * p->wo;
        if (has_bias)
            for (size_t o = 0; o < p->wo; o++) yr[o] = er[o] + b;
        else
            for (size_t o = 0; o < p->wo; o++) yr[o] = er[o];
    }
}

size_t qrt_dwconv2d_f32_scratch(const qrt_dwconv2d_f32_params *p) {
    if (!p || !geometry_ok(p) || p->sh != p->sw) return 0;
    return (p->ho - 1) * p->wp + p->wo;
}

qrt_status qrt_dwconv2d_f32(const qrt_dwconv2d_f32_params *p, const float *xp, const float *w,
                            const float *bias, float *y, float *scratch, size_t scratch_len) {
    if (!p || !xp || !w || !y || !geometry_ok(p)) return QRT_ERR_ARG;
    const size_t co = p->c_in * p->mult, plane = p->hp * p->wp, kk = p->kh * p->kw;
    const size_t need = qrt_dwconv2d_f32_scratch(p);
    const int flat = need && scratch && scratch_len >= need;
    for (size_t n = 0; n < p->n; n++)
        for (size_t o = 0; o < co; o++) {
            const float *xc = xp + (n * p->c_in + o / p->mult) * plane;
            float *yc = y + (n * co + o) * p->ho * p->wo;
            const float b = bias ? bias[o] : 0.0f;
            if (flat) {
                dw_plane(p, xc, w + o * kk, b, bias != NULL, scratch, yc);
                continue;
            }
            for (size_t oh = 0; oh < p->ho; oh++)
                dw_row(p, xc, w + o * kk, b, bias != NULL, oh, yc + oh * p->wo);
        }
    return QRT_OK;
}

#define CM_NAME dwconv2d_f32_cm_ref
#define CM_BLOCK 32
#include "float_conv_cm.h"

qrt_status qrt_dwconv2d_f32_cm(const qrt_dwconv2d_f32_params *p, const float *xp,
                               const float *wt, const float *bias, float *y, int variant)
{
    if (!p || !xp || !wt || !y || !geometry_ok(p)) return QRT_ERR_ARG;
#if defined(QRT_HAVE_X86)
    if (variant != QRT_ISA_REF && (qrt_cpu_features() & QRT_CPU_AVX2)) {
        qrt_dwconv2d_f32_cm__avx2(p, xp, wt, bias, y);
        return QRT_OK;
    }
#endif
    (void)variant;
    dwconv2d_f32_cm_ref(p, xp, wt, bias, y);
    return QRT_OK;
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn.c
 * @brief qrt/rnn.h: the step loop of dynamic-quantized recurrent layers (one C call per layer
 *        and direction, so a step costs the GEMM plus a few hundred float operations, with no
 *        Python in between).
 */
#include "qrt/rnn.h"

#include <math.h>

#include "qrt/conv1d_threads.h"
#include "qrt/quant.h"

void qrt_choose_qparams_u8(float mn, float mx, double *scale_out, int32_t *zp_out)
{
    const int32_t qmin = 0, qmax = 255;
    if (mn > 0.0f) mn = 0.0f;
    if (mx < 0.0f) mx = 0.0f;
    double scale = ((double)mx - (double)mn) / (double)(qmax - qmin);
    float s32 = (float)scale;
    if (s32 == 0.0f || isinf(1.0f / s32)) scale = 0.1;
    const float small = 6.1e-5f;
    if (scale < (double)small) {
        float org = (float)scale;
        scale = (double)small;
        if (mn == 0.0f) {
            mx = small * (float)(qmax - qmin);
        } else if (mx == 0.0f) {
            mn = -small * (float)(qmax - qmin);
        } else {
            float amp = small / org;
            mn = mn * amp;
            mx = mx * amp;
        }
    }
    double zmin = (double)qmin - (double)mn / scale;
    double zmax = (double)qmax - (double)mx / scale;
    double emin = fabs((double)qmin) - fabs((double)mn / scale);
    double emax = fabs((double)qmax) - fabs((double)mx / scale);
    double z0 = emin < emax ? zmin : zmax;
    int32_t zp;
    if (z0 < qmin)
        zp = qmin;
    else if (z0 > qmax)
        zp = qmax;
    else
        zp = (int32_t)nearbyint(z0); /* ties to even, as np.rint */
    *scale_out = scale;
    *zp_out = zp;
}

/* torch's float sigmoid formula, 1 / (1 + exp(-x)), in float32 */
static inline float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

qrt_status qrt_rnn_f32(qrt_rnn_args *a)
{
    const uint32_t B = a->batch, H = a->hidden, G = a->gates, T = a->steps;
    const size_t bh = (size_t)B * H, gh_n = (size_t)G * H;
    for (uint32_t k = 0; k < T; k++) {
        const uint32_t t = a->reverse ? T - 1 - k : k;
        /* 1. quantize h as torch's dynamic linear does */
        float lo = a->h[0], hi = a->h[0];
        int bad = 0;
        for (size_t i = 0; i < bh; i++) {
            const float v = a->h[i];
            bad |= !isfinite(v);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        if (bad) return QRT_ERR_ARG;
        double s;
        int32_t z;
        qrt_choose_qparams_u8(lo, hi, &s, &z);
        const float s32 = (float)s;
        qrt_quantize_f32_u8(a->h, bh, 1.0f / s32, (float)z, 0.0f, 255.0f, a->hq, -1);
        for (size_t j = 0; j < gh_n; j++) a->rs[j] = a->wscale[j] * s32;
        a->p->input_zero = z;
        /* 2. gh = W_hh h + b_hh (float epilogue of the kernel) */
        qrt_status st = qrt_conv1d_u8_mt(a->p, a->hq, a->w, a->wpack, a->wsum, a->q, a->gh,
                                         a->scratch, a->scratch_size, a->variant, a->threads);
        if (st != QRT_OK) return st;
        /* 3. gates, torch's order (aten/src/ATen/native/RNN.cpp LSTMCell / GRUCell / SimpleCell) */
        for (uint32_t b = 0; b < B; b++) {
            const float *gi = a->gi + (ptrdiff_t)t * a->gi_st + (ptrdiff_t)b * a->gi_sb;
            float *g = a->gh + (size_t)b * gh_n;
            float *h = a->h + (size_t)b * H;
            if (a->mode == QRT_RNN_LSTM) {
                float *c = a->c + (size_t)b * H;
                for (uint32_t j = 0; j < H; j++) {
                    const float ig = sigm(g[j] + gi[j]);
                    const float fg = sigm(g[H + j] + gi[H + j]);
                    const float cg = tanhf(g[2 * H + j] + gi[2 * H + j]);
                    const float og = sigm(g[3 * H + j] + gi[3 * H + j]);
                    const float fc = fg * c[j];
                    const float icg = ig * cg;
                    const float cy = fc + icg;
                    c[j] = cy;
                    h[j] = og * tanhf(cy);
                }
            } else if (a->mode == QRT_RNN_GRU) {
                for (uint32_t j = 0; j < H; j++) {
                    const float r = sigm(g[j] + gi[j]);
                    const float zg = sigm(g[H + j] + gi[H + j]);
                    const float hn = g[2 * H + j] * r;
                    const float n = tanhf(gi[2 * H + j] + hn);
                    const float d = h[j] - n;
                    const float dz = d * zg;
                    h[j] = dz + n;
                }
            } else if (a->mode == QRT_RNN_TANH) {
                for (uint32_t j = 0; j < H; j++) h[j] = tanhf(g[j] + gi[j]);
            } else {
                for (uint32_t j = 0; j < H; j++) {
                    const float v = g[j] + gi[j];
                    h[j] = v > 0.0f ? v : 0.0f;
                }
            }
            if (a->y) {
                float *y = a->y + (ptrdiff_t)t * a->y_st + (ptrdiff_t)b * a->y_sb;
                for (uint32_t j = 0; j < H; j++) y[j] = h[j];
            }
        }
    }
    return QRT_OK;
}

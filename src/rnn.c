/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn.c
 * @brief qrt/rnn.h: the step loop of dynamic-quantized recurrent layers (one C call per layer
 *        and direction, so a step costs the GEMM plus a few hundred float operations, with no
 *        Python in between).
 */
#if defined(__GNUC__) && !defined(__clang__)
/* lets gcc if-convert the selects of the gate functions (and so vectorise the gate loops);
 * results are unchanged: no option here alters an IEEE operation, only trap assumptions */
#pragma GCC optimize("no-trapping-math")
#endif
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

/* exp and tanh in float32, branch-free so that the gate loops vectorise (Cephes' expf /
 * tanhf polynomials, about 1 ulp: docs/float-ops.md "Recurrent layers").  Plain IEEE float
 * operations without contraction (-ffp-contract=off): every ISA computes the same bits. */
static inline float qrt_expf(float x)
{
    x = x > 88.0f ? 88.0f : x; /* keeps 2^n normal below: n in [-126, 127] */
    x = x < -87.0f ? -87.0f : x;
    float fx = x * 1.44269504088896341f + 0.5f;
    int32_t n = (int32_t)fx;
    n -= (float)n > fx; /* floor */
    const float fn = (float)n;
    x = x - fn * 0.693359375f;
    x = x - fn * -2.12194440e-4f;
    const float z = x * x;
    float y = 1.9875691500e-4f;
    y = y * x + 1.3981999507e-3f;
    y = y * x + 8.3334519073e-3f;
    y = y * x + 4.1665795894e-2f;
    y = y * x + 1.6666665459e-1f;
    y = y * x + 5.0000001201e-1f;
    y = y * z + x + 1.0f;
    union {
        int32_t i;
        float f;
    } u;
    u.i = (n + 127) * (1 << 23); /* 2^n */
    return y * u.f;
}

/* torch's float sigmoid formula, 1 / (1 + exp(-x)) */
static inline float sigm(float x) { return 1.0f / (1.0f + qrt_expf(-x)); }

static inline float qrt_tanhf(float x)
{
    const float a = x < 0.0f ? -x : x;
    const float e = qrt_expf(2.0f * a);
    float big = 1.0f - 2.0f / (e + 1.0f);
    big = x < 0.0f ? -big : big;
    const float z = x * x;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    const float small = p * z * x + x;
    return a > 0.625f ? big : small;
}

/* The hidden projection for B rows: y[b][o] = f32(f32(acc) * rs[o]) + bias[o] with
 * acc = sum_i (hq[b][i] - zx) * (w[o][i] - wz[o]), the integers and the float epilogue of
 * qrt_conv1d_u8_ref / qrt_dequant_acc_f32 (tests compare the two bit for bit).  The dot is
 * sum xs*w - wz*sum xs: exact in int32 because H <= QRT_CONV1D_MAX_TAPS (the plan's gate). */
static void hidden_gemv(const qrt_rnn_args *a, int32_t zx, int16_t *xs)
{
    const size_t H = a->hidden, GH = (size_t)a->gates * a->hidden;
    for (uint32_t b = 0; b < a->batch; b++) {
        const uint8_t *x = a->hq + (size_t)b * H;
        int32_t sx = 0;
        for (size_t i = 0; i < H; i++) {
            xs[i] = (int16_t)((int32_t)x[i] - zx);
            sx += xs[i];
        }
        float *y = a->gh + (size_t)b * GH;
        for (size_t o = 0; o < GH; o++) {
            const int8_t *wr = a->w + o * H;
            int32_t dot = 0;
            for (size_t i = 0; i < H; i++) dot += (int32_t)xs[i] * (int32_t)wr[i];
            const int32_t acc = dot - a->q->weight_zero[o] * sx;
            y[o] = (float)acc * a->rs[o] + a->q->bias_f[o];
        }
    }
}

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
        if (a->xs) {
            hidden_gemv(a, z, a->xs);
        } else {
            qrt_status st = qrt_conv1d_u8_mt(a->p, a->hq, a->w, a->wpack, a->wsum, a->q, a->gh,
                                             a->scratch, a->scratch_size, a->variant,
                                             a->threads);
            if (st != QRT_OK) return st;
        }
        /* 3. gates, torch's order (aten/src/ATen/native/RNN.cpp LSTMCell / GRUCell / SimpleCell) */
        for (uint32_t b = 0; b < B; b++) {
            const float *gi = a->gi + (ptrdiff_t)t * a->gi_st + (ptrdiff_t)b * a->gi_sb;
            float *g = a->gh + (size_t)b * gh_n;
            float *h = a->h + (size_t)b * H;
            if (a->mode == QRT_RNN_LSTM) {
                float *c = a->c + (size_t)b * H;
                float *gg_i = g, *gg_f = g + H, *gg_g = g + 2 * (size_t)H, *gg_o = g + 3 * (size_t)H;
                for (size_t j = 0; j < 4 * (size_t)H; j++) g[j] = g[j] + gi[j];
                for (size_t j = 0; j < 2 * (size_t)H; j++) g[j] = sigm(g[j]);
                for (size_t j = 0; j < H; j++) gg_g[j] = qrt_tanhf(gg_g[j]);
                for (size_t j = 0; j < H; j++) gg_o[j] = sigm(gg_o[j]);
                for (size_t j = 0; j < H; j++) {
                    const float fc = gg_f[j] * c[j];
                    const float icg = gg_i[j] * gg_g[j];
                    c[j] = fc + icg;
                }
                for (size_t j = 0; j < H; j++) h[j] = gg_o[j] * qrt_tanhf(c[j]);
            } else if (a->mode == QRT_RNN_GRU) {
                float *r = g, *zg = g + H, *gn = g + 2 * (size_t)H;
                const float *gin = gi + 2 * (size_t)H;
                for (size_t j = 0; j < 2 * (size_t)H; j++) g[j] = sigm(g[j] + gi[j]);
                for (size_t j = 0; j < H; j++) {
                    const float hn = gn[j] * r[j];
                    gn[j] = qrt_tanhf(gin[j] + hn);
                }
                for (size_t j = 0; j < H; j++) {
                    const float n = gn[j];
                    const float dz = (h[j] - n) * zg[j];
                    h[j] = dz + n;
                }
            } else if (a->mode == QRT_RNN_TANH) {
                for (uint32_t j = 0; j < H; j++) h[j] = qrt_tanhf(g[j] + gi[j]);
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

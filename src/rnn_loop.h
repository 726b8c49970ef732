/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_loop.h
 * @brief The step loop of qrt_rnn_f32 (include/qrt/rnn.h), private to src/: src/rnn.c
 *        compiles it with the baseline flags around the reference hidden projection, and each
 *        ISA unit (src/x86/rnn_avx2.c, src/x86/rnn_avx512vnni.c, src/neon/rnn_neon.c) with its
 *        own flags around its packed GEMV (include/qrt/rnn_gemv.h).  The gate arithmetic is
 *        plain IEEE float32 without contraction (-ffp-contract=off), so every compilation
 *        computes the same bits; only the vector width differs.
 *
 * The including file defines RNN_LOOP_NAME (the function's name), RNN_FLOORF where the unit
 * has a vector floor (SSE4.1 and up: the floor in qrt_expf as floorf, the same value), and
 * RNN_HIDDEN(a, z, s32): gh[b] = W_hh hq[b] + b_hh for every batch row, hq quantized with
 * zero point z and scale s32, a qrt_status expression; optionally RNN_MINMAX (rnn_minmax's
 * contract, below).
 */
#include <math.h>

#include "qrt/quant.h"
#include "qrt/rnn.h"

/* exp and tanh in float32, branch-free so that the gate loops vectorise (Cephes' expf /
 * tanhf polynomials, about 1 ulp: docs/float-ops.md "Recurrent layers").  Plain IEEE float
 * operations without contraction (-ffp-contract=off): every ISA computes the same bits. */
static inline float qrt_expf(float x)
{
    x = x > 88.0f ? 88.0f : x; /* keeps 2^n normal below: n in [-126, 127] */
    x = x < -87.0f ? -87.0f : x;
    float fx = x * 1.44269504088896341f + 0.5f;
#ifdef RNN_FLOORF
    /* the same n (fx is within +-128): gcc if-converts this form, not the one below, when
     * AVX is on */
    const int32_t n = (int32_t)__builtin_floorf(fx);
#else
    int32_t n = (int32_t)fx;
    n -= (float)n > fx; /* floor */
#endif
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

#ifndef RNN_MINMAX
/* min and max of h[0..n) (n >= 1); nonzero when one is NaN or infinite.  A unit may define
 * its own vector form: the min / max of finite floats is the same value in any order (only
 * the sign of a zero may differ, which changes no qparam: qrt_choose_qparams_u8). */
static inline int rnn_minmax(const float *h, size_t n, float *lo_out, float *hi_out)
{
    float lo = h[0], hi = h[0];
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const float v = h[i];
        bad |= !isfinite(v);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    *lo_out = lo, *hi_out = hi;
    return bad;
}
#define RNN_MINMAX rnn_minmax
#endif

static qrt_status RNN_LOOP_NAME(qrt_rnn_args *a)
{
    const uint32_t B = a->batch, H = a->hidden, G = a->gates, T = a->steps;
    const size_t bh = (size_t)B * H, gh_n = (size_t)G * H;
    for (uint32_t k = 0; k < T; k++) {
        const uint32_t t = a->reverse ? T - 1 - k : k;
        /* 1. quantize h as torch's dynamic linear does */
        float lo, hi;
        if (RNN_MINMAX(a->h, bh, &lo, &hi)) return QRT_ERR_ARG;
        double s;
        int32_t z;
        qrt_choose_qparams_u8(lo, hi, &s, &z);
        const float s32 = (float)s;
        qrt_quantize_f32_u8(a->h, bh, 1.0f / s32, (float)z, 0.0f, 255.0f, a->hq, -1);
        /* 2. gh = W_hh h + b_hh (float epilogue of the kernel) */
        {
            const qrt_status st = RNN_HIDDEN(a, z, s32);
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

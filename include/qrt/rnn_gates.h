/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_gates.h
 * @brief The gate arithmetic of the float recurrent layers (src/rnn_float.c): torch's order
 *        (aten RNN.cpp), Cephes' float32 expf / tanhf polynomials as src/rnn.c uses them, the
 *        same bits on every ISA (plain IEEE operations, -ffp-contract=off), plus NaN
 *        propagation (a NaN pre-activation gives NaN, as torch's sigmoid / tanh do; the
 *        results for every other input are those of src/rnn.c's functions).
 */
#ifndef QRT_RNN_GATES_H
#define QRT_RNN_GATES_H

#include <stddef.h>
#include <stdint.h>

#include "qrt/rnn.h"
#include "qrt/rnn_float.h"

static inline float qrt_gate_expf(float x)
{
    x = x == x ? x : 0.0f; /* NaN: computed on 0, replaced by the callers */
    x = x > 88.0f ? 88.0f : x;
    x = x < -87.0f ? -87.0f : x;
    float fx = x * 1.44269504088896341f + 0.5f;
    int32_t n = (int32_t)fx;
    n -= (float)n > fx;
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
    u.i = (n + 127) * (1 << 23);
    return y * u.f;
}

static inline float qrt_gate_sigmoid(float x)
{
    const float r = 1.0f / (1.0f + qrt_gate_expf(-x));
    return x == x ? r : x;
}

static inline float qrt_gate_tanh(float x)
{
    const float a = x < 0.0f ? -x : x;
    const float e = qrt_gate_expf(2.0f * a);
    float big = 1.0f - 2.0f / (e + 1.0f);
    big = x < 0.0f ? -big : big;
    const float z = x * x;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    const float small = p * z * x + x;
    const float r = a > 0.625f ? big : small;
    return x == x ? r : x;
}

/* One batch row's gates, torch's order: g holds gh (b_hh included), gi the input projection;
 * h_in the state (GRU), h_out where the new h goes, c the LSTM cell state. */
static inline void qrt_gates_row(int mode, size_t H, float *g, const float *gi,
                                 const float *h_in, float *h_out, float *c)
{
    if (mode == QRT_RNN_LSTM) {
        float *gg_i = g, *gg_f = g + H, *gg_g = g + 2 * H, *gg_o = g + 3 * H;
        for (size_t j = 0; j < 4 * H; j++) g[j] = g[j] + gi[j];
        for (size_t j = 0; j < 2 * H; j++) g[j] = qrt_gate_sigmoid(g[j]);
        for (size_t j = 0; j < H; j++) gg_g[j] = qrt_gate_tanh(gg_g[j]);
        for (size_t j = 0; j < H; j++) gg_o[j] = qrt_gate_sigmoid(gg_o[j]);
        for (size_t j = 0; j < H; j++) {
            const float fc = gg_f[j] * c[j];
            const float icg = gg_i[j] * gg_g[j];
            c[j] = fc + icg;
        }
        for (size_t j = 0; j < H; j++) h_out[j] = gg_o[j] * qrt_gate_tanh(c[j]);
    } else if (mode == QRT_RNN_GRU) {
        float *r = g, *zg = g + H, *gn = g + 2 * H;
        const float *gin = gi + 2 * H;
        for (size_t j = 0; j < 2 * H; j++) g[j] = qrt_gate_sigmoid(g[j] + gi[j]);
        for (size_t j = 0; j < H; j++) {
            const float hn = gn[j] * r[j];
            gn[j] = qrt_gate_tanh(gin[j] + hn);
        }
        for (size_t j = 0; j < H; j++) {
            const float n = gn[j];
            const float dz = (h_in[j] - n) * zg[j];
            h_out[j] = dz + n;
        }
    } else if (mode == QRT_RNN_TANH) {
        for (size_t j = 0; j < H; j++) h_out[j] = qrt_gate_tanh(g[j] + gi[j]);
    } else {
        for (size_t j = 0; j < H; j++) {
            const float v = g[j] + gi[j];
            h_out[j] = v < 0.0f ? 0.0f : v; /* NaN stays NaN, as torch's relu */
        }
    }
}

/* The gates of step t for all B rows of a float layer (h_out: hf with a projection). */
static inline void qrt_gates_step(const qrt_rnn_float_args *a, size_t t)
{
    const size_t H = a->hidden, GH = (size_t)a->gates * H, R = a->proj ? a->proj : H;
    for (size_t b = 0; b < a->batch; b++) {
        const float *gi = a->gi + (ptrdiff_t)t * a->gi_st + (ptrdiff_t)b * a->gi_sb;
        float *h = a->h + b * R;
        float *c = a->c ? a->c + b * H : NULL;
        qrt_gates_row(a->mode, H, a->gh + b * GH, gi, h, a->proj ? a->hf + b * H : h, c);
    }
}

#endif /* QRT_RNN_GATES_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_float.c
 * @brief qrt/rnn_float.h: the float32 dot-product specification, the variant choice and the
 *        step loop of float recurrent layers (one C call per layer and direction).
 */
#if defined(__GNUC__) && !defined(__clang__)
/* as src/rnn.c: lets gcc if-convert the gate selects; changes no IEEE operation */
#pragma GCC optimize("no-trapping-math")
#endif
#include "qrt/rnn_float.h"

#include <math.h>

#include "qrt/cpu.h"
#include "qrt/rnn.h"
#include "qrt/rnn_gates.h"

/* The specification: per output one fmaf chain in input order, then + bias. */
void qrt_linear_f32_ref(const float *x, size_t ldx, size_t rows, const float *wp, size_t k,
                        size_t n, const float *b, float *y, size_t ldy)
{
    const size_t NR = QRT_LF32_NR;
    for (size_t r = 0; r < rows; r++)
        for (size_t o = 0; o < n; o++) {
            const float *w = wp + (o / NR) * k * NR + o % NR;
            const float *xr = x + r * ldx;
            float s = 0.0f;
            for (size_t i = 0; i < k; i++) s = fmaf(w[i * NR], xr[i], s);
            y[r * ldy + o] = b ? s + b[o] : s;
        }
}

int qrt_linear_f32_isa(void)
{
#ifdef QRT_HAVE_X86
    if (qrt_cpu_features() & QRT_CPU_AVX2) return QRT_ISA_AVX2;
#endif
#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
    if (qrt_cpu_features() & QRT_CPU_NEON) return QRT_ISA_NEON;
#endif
    return QRT_ISA_REF;
}

void qrt_linear_f32(const float *x, size_t ldx, size_t rows, const float *w, size_t k,
                    size_t n, const float *b, float *y, size_t ldy, int variant)
/* w: the packed weights (rnn_float.h) */
{
    if (variant != QRT_ISA_REF) {
#ifdef QRT_HAVE_X86
        if (qrt_linear_f32_isa() == QRT_ISA_AVX2) {
            qrt_linear_f32__avx2(x, ldx, rows, w, k, n, b, y, ldy);
            return;
        }
#endif
#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
        if (qrt_linear_f32_isa() == QRT_ISA_NEON) {
            qrt_linear_f32__neon(x, ldx, rows, w, k, n, b, y, ldy);
            return;
        }
#endif
    }
    qrt_linear_f32_ref(x, ldx, rows, w, k, n, b, y, ldy);
}

/* One batch row's gates, torch's order: g holds gh (b_hh included), gi the input projection. */
static void gates_row(int mode, size_t H, float *g, const float *gi, float *h_in, float *h_out,
                      float *c)
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

void qrt_rnn_float(const qrt_rnn_float_args *a)
{
    const size_t B = a->batch, H = a->hidden, G = a->gates, T = a->steps;
    const size_t P = a->proj, R = P ? P : H, GH = G * H;
    for (size_t k = 0; k < T; k++) {
        const size_t t = a->reverse ? T - 1 - k : k;
        /* gh = W_hh h + b_hh for the B rows */
        qrt_linear_f32(a->h, R, B, a->w_hh, R, GH, a->b_hh, a->gh, GH, a->variant);
        for (size_t b = 0; b < B; b++) {
            const float *gi = a->gi + (ptrdiff_t)t * a->gi_st + (ptrdiff_t)b * a->gi_sb;
            float *h = a->h + b * R;
            float *c = a->c ? a->c + b * H : NULL;
            gates_row(a->mode, H, a->gh + b * GH, gi, h, P ? a->hf + b * H : h, c);
        }
        if (P) /* h = W_hr (o * tanh(c)), no bias */
            qrt_linear_f32(a->hf, H, B, a->w_hr, H, P, NULL, a->h, P, a->variant);
        if (a->y)
            for (size_t b = 0; b < B; b++) {
                float *y = a->y + (ptrdiff_t)t * a->y_st + (ptrdiff_t)b * a->y_sb;
                const float *h = a->h + b * R;
                for (size_t j = 0; j < R; j++) y[j] = h[j];
            }
    }
}

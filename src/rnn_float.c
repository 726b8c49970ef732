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

/* the gates of step t for the B rows (qrt_gates_step of rnn_gates.h, baseline flags: gcc
 * vectorises them for SSE2 / NEON; AVX2: the intrinsics of src/x86/rnn_float_avx2.c) */
static void gates_step_ref(const qrt_rnn_float_args *a, size_t t) { qrt_gates_step(a, t); }

void qrt_rnn_float(const qrt_rnn_float_args *a)
{
    const size_t B = a->batch, H = a->hidden, G = a->gates, T = a->steps;
    const size_t P = a->proj, R = P ? P : H, GH = G * H;
    (void)H;
    for (size_t k = 0; k < T; k++) {
        const size_t t = a->reverse ? T - 1 - k : k;
        /* gh = W_hh h + b_hh for the B rows */
        qrt_linear_f32(a->h, R, B, a->w_hh, R, GH, a->b_hh, a->gh, GH, a->variant);
#ifdef QRT_HAVE_X86
        if (a->variant != QRT_ISA_REF && qrt_linear_f32_isa() == QRT_ISA_AVX2)
            qrt_rnn_float_gates__avx2(a, t);
        else
#endif
            gates_step_ref(a, t);
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

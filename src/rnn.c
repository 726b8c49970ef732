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
#include "qrt/cpu.h" /* QRT_HAVE_ARM (qrt_rnn_input_f32 picks the NEON GEMV by it) */
#include "qrt/minmax.h"
#include "qrt/quant.h"
#include "qrt/rnn_gemv.h"

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

/* the reference hidden projection: hidden_gemv, or the linear kernel itself */
static qrt_status ref_hidden(qrt_rnn_args *a, int32_t z, float s32)
{
    const size_t gh_n = (size_t)a->gates * a->hidden;
    for (size_t j = 0; j < gh_n; j++) a->rs[j] = a->wscale[j] * s32;
    a->p->input_zero = z;
    if (a->xs) {
        hidden_gemv(a, z, a->xs);
        return QRT_OK;
    }
    return qrt_conv1d_u8_mt(a->p, a->hq, a->w, a->wpack, a->wsum, a->q, a->gh, a->scratch,
                            a->scratch_size, a->variant, a->threads);
}

#define RNN_LOOP_NAME rnn_loop_ref
#define RNN_HIDDEN(a, z, s32) ref_hidden((a), (z), (s32))
#include "rnn_loop.h"

qrt_status qrt_rnn_f32(qrt_rnn_args *a)
{
    if (a->gpack) {
#if defined(QRT_HAVE_X86)
        if (a->gisa == QRT_ISA_AVX512VNNI) return qrt_rnn_f32__avx512vnni(a);
        if (a->gisa == QRT_ISA_AVX2) return qrt_rnn_f32__avx2(a);
#elif defined(QRT_HAVE_ARM)
        if (a->gisa == QRT_ISA_NEON) return qrt_rnn_f32__neon(a);
#endif
    }
    return rnn_loop_ref(a);
}

qrt_status qrt_rnn_input_f32(const float *x, size_t rows, uint32_t cols, uint32_t out,
                             uint8_t *xq, const void *gpack, int gisa, const int32_t *wz,
                             const float *ws, const float *bias, float *gi, int *nonfinite)
{
    qrt_rnn_gemv_fn fn = NULL;
#if defined(QRT_HAVE_X86)
    if (gisa == QRT_ISA_AVX512VNNI) fn = qrt_rnn_gemv_u8__avx512vnni;
    if (gisa == QRT_ISA_AVX2) fn = qrt_rnn_gemv_u8__avx2;
#elif defined(QRT_HAVE_ARM)
    if (gisa == QRT_ISA_NEON) fn = qrt_rnn_gemv_u8__neon;
#endif
    if (!nonfinite) return QRT_ERR_ARG;
    *nonfinite = 0;
    if (!fn || !x || !xq || !gpack || !wz || !ws || !bias || !gi || !rows || !cols || !out ||
        cols > QRT_CONV1D_MAX_TAPS || rows > SIZE_MAX / cols)
        return QRT_ERR_ARG;
    const size_t n = rows * (size_t)cols;
    /* 1. torch's per-tensor dynamic quantization of the whole input (Plan.run_dynamic_f32) */
    float lo, hi;
    if (!qrt_minmax_finite_f32(x, n, &lo, &hi)) { /* the linear_dynamic range loop */
        *nonfinite = 1;
        return QRT_OK;
    }
    double s;
    int32_t z;
    qrt_choose_qparams_u8(lo, hi, &s, &z);
    const float s32 = (float)s;
    qrt_quantize_f32_u8(x, n, 1.0f / s32, (float)z, 0.0f, 255.0f, xq, -1);
    /* 2. each row: gi[r] = W x[r] + b (the plan kernel's epilogue, rnn_gemv.h) */
    for (size_t r = 0; r < rows; r++)
        fn(gpack, out, cols, xq + r * cols, z, wz, ws, s32, bias, gi + r * out);
    return QRT_OK;
}

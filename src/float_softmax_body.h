/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_softmax_body.h
 * @brief The row loop of include/qrt/float_softmax.h, private to src/: compiled by
 *        src/float_softmax.c (baseline) and src/x86/float_softmax_avx2.c / _avx512.c, the same
 *        bits (a fixed order; 16 lanes, whatever the vector width).
 */
#include "float_exp_body.h"

#define QRT_SOFTMAX_LANES 16

static inline void qrt_softmax_row(const float *x, float *y, size_t n)
{
    /* the maximum: order-free (a NaN is dropped here, and makes its row NaN below) */
    float mx[QRT_SOFTMAX_LANES];
    for (int j = 0; j < QRT_SOFTMAX_LANES; j++) mx[j] = x[0];
    size_t i = 0;
    for (; i + QRT_SOFTMAX_LANES <= n; i += QRT_SOFTMAX_LANES)
        for (int j = 0; j < QRT_SOFTMAX_LANES; j++) mx[j] = x[i + j] > mx[j] ? x[i + j] : mx[j];
    for (; i < n; i++) mx[0] = x[i] > mx[0] ? x[i] : mx[0];
    for (int w = QRT_SOFTMAX_LANES / 2; w > 0; w /= 2)
        for (int j = 0; j < w; j++) mx[j] = mx[j + w] > mx[j] ? mx[j + w] : mx[j];
    const float m = mx[0];
    /* e = exp(x - m): a row holding +inf or NaN, or all -inf, gets NaN (inf - inf), as torch */
    for (i = 0; i < n; i++) y[i] = qrt_exp32(x[i] - m);
    float s16[QRT_SOFTMAX_LANES];
    for (int j = 0; j < QRT_SOFTMAX_LANES; j++) s16[j] = 0.0f;
    for (i = 0; i + QRT_SOFTMAX_LANES <= n; i += QRT_SOFTMAX_LANES)
        for (int j = 0; j < QRT_SOFTMAX_LANES; j++) s16[j] = s16[j] + y[i + j];
    for (; i < n; i++) s16[0] = s16[0] + y[i];
    for (int w = QRT_SOFTMAX_LANES / 2; w > 0; w /= 2) /* pairwise: lane j + lane j + w */
        for (int j = 0; j < w; j++) s16[j] = s16[j] + s16[j + w];
    const float s = s16[0];
    for (i = 0; i < n; i++) y[i] = y[i] / s;
}

#define QRT_SOFTMAX_ROWS(NAME)                                                                  \
    void NAME(const float *x, float *y, size_t rows, size_t n)                                  \
    {                                                                                           \
        for (size_t r = 0; r < rows; r++) qrt_softmax_row(x + r * n, y + r * n, n);             \
    }

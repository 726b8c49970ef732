/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_norm.h
 * @brief float32 LayerNorm over contiguous rows, bit-exact with torch 2.13's CPU kernel on
 *        x86-64 (qrt/ops/float_nn.py float_layer_norm; docs/float-ops.md):
 *        mean and biased variance by torch's RowwiseMoments (Welford over 8 lanes in chunks of
 *        16 vectors, chunks combined in a cascade, then the scalar tail and the 8 lanes, with
 *        torch's fused multiply-adds), rstd = 1 / sqrt(var + eps),
 *        y = fma((x - mean) * rstd, w, b); w only: ((x - mean) * rstd) * w; b only:
 *        fma(x - mean, rstd, b).
 */
#ifndef QRT_FLOAT_NORM_H
#define QRT_FLOAT_NORM_H

#include <stddef.h>

/** @brief mean and biased variance of x[0..n), n >= 1, as torch's RowwiseMoments. */
void qrt_row_moments_f32(const float *x, size_t n, float *mean, float *var);

/** @brief rows x n floats from x to y (y may equal x); w, b: [n] or NULL. */
void qrt_layer_norm_rows_f32(const float *x, float *y, size_t rows, size_t n, float eps,
                             const float *w, const float *b);

/**
 * @brief float32 GroupNorm of contiguous [n, c, hw] (hw: the product of the later dims),
 *        bit-exact with torch 2.13's CPU kernel: moments per (sample, group) as above,
 *        rstd = f32(1 / sqrt(f64(max(var, 0)) + eps)) in double (eps a double, as in torch);
 *        no affine: (x - mean) * rstd; else per channel
 *        scale = rstd * w, bias = fma(-scale, mean, b), y = fma(scale, x, bias) (w = 1 / b = 0
 *        where absent). groups divides c; w, b: [c] or NULL.
 */
void qrt_group_norm_f32(const float *x, float *y, size_t n, size_t c, size_t hw, size_t groups,
                        double eps, const float *w, const float *b);

#endif /* QRT_FLOAT_NORM_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_norm.h
 * @brief float32 LayerNorm over contiguous rows (qrt/ops/float_nn.py float_layer_norm, the
 *        numpy steps of _rownorm + _affine in one pass per row): mean = f32(sum x) * f32(1/n),
 *        d = x - mean, var = f32(sum d*d) * f32(1/n), rstd = 1 / sqrt(var + eps) (+ var * 0:
 *        NaN where the variance overflowed), y = d * rstd [* w] [+ b].  The sums use eight
 *        partial sums in a fixed order (then a tree of them, then the tail): a different
 *        order than numpy's pairwise sum, within docs/float-ops.md's n eps S bound.
 */
#ifndef QRT_FLOAT_NORM_H
#define QRT_FLOAT_NORM_H

#include <stddef.h>

/** @brief rows x n floats from x to y (y may equal x); w, b: [n] or NULL; inv = f32(1/n). */
void qrt_layer_norm_rows_f32(const float *x, float *y, size_t rows, size_t n, float inv,
                             float eps, const float *w, const float *b);

#endif /* QRT_FLOAT_NORM_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file minmax.h
 * @brief The range of a float32 buffer, for dynamic quantization (qrt.nn.DynamicLinear):
 *        min and max are exact whatever the order, so 16 partial lanes let the compiler
 *        vectorise the loop at baseline flags.
 */
#ifndef QRT_MINMAX_H
#define QRT_MINMAX_H

#include <stddef.h>

/** @brief *lo = min(x), *hi = max(x) over n >= 1 floats; returns 0 (lo / hi unspecified)
 *         when x holds NaN or an infinity, else 1. */
int qrt_minmax_finite_f32(const float *x, size_t n, float *lo, float *hi);

#endif /* QRT_MINMAX_H */

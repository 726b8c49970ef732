/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_softmax.h
 * @brief float32 softmax over contiguous rows (qrt/ops/float_reduce.py, docs/float-ops.md):
 *        m = max(row), e = exp(x - m) by qrt's float32 exp (src/float_exp_body.h),
 *        s = the sum of e in 16 partial sums combined in a fixed tree, y = e / s.  Plain IEEE
 *        float32 operations without contraction and a fixed order: every variant and platform
 *        returns the same bits (tests/test_float_softmax.py).
 */
#ifndef QRT_FLOAT_SOFTMAX_H
#define QRT_FLOAT_SOFTMAX_H

#include <stddef.h>

#include "qrt/types.h"

/** @brief softmax of each of `rows` rows of n >= 1 floats (x and y may be the same buffer);
 *         `variant`: -1 the best, QRT_ISA_REF / QRT_ISA_AVX2 / QRT_ISA_AVX512VNNI (the AVX-512
 *         F/BW/VL/DQ level, as quantize names it) force one.  Returns the QRT_ISA_* code that
 *         ran. */
int qrt_softmax_rows_f32(const float *x, float *y, size_t rows, size_t n, int variant);

void qrt_softmax_rows_f32_ref(const float *x, float *y, size_t rows, size_t n);
void qrt_softmax_rows_f32__avx2(const float *x, float *y, size_t rows, size_t n);
void qrt_softmax_rows_f32__avx512(const float *x, float *y, size_t rows, size_t n);

#endif /* QRT_FLOAT_SOFTMAX_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_gelu.h
 * @brief float32 GELU, approximate = 'none' (qrt/ops/float_unary.py, docs/float-ops.md): the
 *        numpy formula of float_gelu step by step in float64, 1 + erf(z) = erfc(-z) by
 *        Numerical Recipes' erfcc, with a float64 exp of qrt's own (Cephes' rational form,
 *        ~1 ulp of float64, branch-free so that it vectorises), rounded once to float32.
 *        Plain IEEE double operations without contraction: every variant returns the same
 *        bits (tests/test_float_gelu.py).
 */
#ifndef QRT_FLOAT_GELU_H
#define QRT_FLOAT_GELU_H

#include <stddef.h>

#include "qrt/types.h"

/** @brief y[i] = gelu(x[i]) for i < n; `variant` QRT_ISA_REF forces the reference loop.
 *         Returns the QRT_ISA_* code that ran. */
int qrt_gelu_erf_f32(const float *x, float *y, size_t n, int variant);

void qrt_gelu_erf_f32_ref(const float *x, float *y, size_t n);
void qrt_gelu_erf_f32__avx2(const float *x, float *y, size_t n);

#endif /* QRT_FLOAT_GELU_H */

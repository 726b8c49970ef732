/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_gelu.h
 * @brief float32 GELU, approximate = 'none' (qrt/ops/float_unary.py, docs/float-ops.md): the
 *        numpy steps of float_gelu in float32: 1 + erf(z) by a polynomial for |z| < 1, by
 *        Numerical Recipes' erfcc (erfc(-z)) with qrt's float32 exp (src/float_exp_body.h)
 *        above.  Plain IEEE float32 operations without contraction, no libm: every variant
 *        and platform returns the same bits, those of the numpy steps
 *        (tests/test_float_gelu.py).
 */
#ifndef QRT_FLOAT_GELU_H
#define QRT_FLOAT_GELU_H

#include <stddef.h>

#include "qrt/types.h"

/** @brief y[i] = gelu(x[i]) for i < n; `variant`: -1 the best, QRT_ISA_REF / QRT_ISA_AVX2 /
 *         QRT_ISA_AVX512VNNI (the AVX-512 F/BW/VL/DQ level, as quantize names it) force one.
 *         Returns the QRT_ISA_* code that ran. */
int qrt_gelu_erf_f32(const float *x, float *y, size_t n, int variant);

void qrt_gelu_erf_f32_ref(const float *x, float *y, size_t n);
void qrt_gelu_erf_f32__avx2(const float *x, float *y, size_t n);
void qrt_gelu_erf_f32__avx512(const float *x, float *y, size_t n);

#endif /* QRT_FLOAT_GELU_H */

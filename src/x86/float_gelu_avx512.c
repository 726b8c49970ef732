/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_gelu_avx512.c
 * @brief qrt_gelu_erf_f32__avx512: the reference loop of src/float_gelu.c compiled with
 *        AVX-512 F/BW/VL/DQ (16 floats a vector), the same bits.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* if-conversion of the selects; no value changes */
#endif
#include "../float_gelu_body.h"
#include "qrt/float_gelu.h"

void qrt_gelu_erf_f32__avx512(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = qrt_gelu_erf1(x[i]);
}

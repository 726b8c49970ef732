/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_gelu.c
 * @brief qrt/float_gelu.h: the reference loop and the dispatch.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* if-conversion of the selects; no value changes */
#endif
#include "qrt/float_gelu.h"

#include "float_gelu_body.h"
#include "qrt/cpu.h"

void qrt_gelu_erf_f32_ref(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = qrt_gelu_erf1(x[i]);
}

int qrt_gelu_erf_f32(const float *x, float *y, size_t n, int variant)
{
#if defined(QRT_HAVE_X86)
    const unsigned f = qrt_cpu_features();
    if ((variant < 0 || variant == QRT_ISA_AVX512VNNI) && (f & QRT_CPU_AVX512DQ)) {
        qrt_gelu_erf_f32__avx512(x, y, n);
        return QRT_ISA_AVX512VNNI;
    }
    if ((variant < 0 || variant == QRT_ISA_AVX2 || variant == QRT_ISA_AVX512VNNI) &&
        (f & QRT_CPU_AVX2)) {
        qrt_gelu_erf_f32__avx2(x, y, n);
        return QRT_ISA_AVX2;
    }
#endif
    (void)variant;
    qrt_gelu_erf_f32_ref(x, y, n);
    return QRT_ISA_REF;
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_softmax.c
 * @brief qrt/float_softmax.h: the reference loop and the dispatch.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* if-conversion of the selects; no value changes */
#endif
#include "qrt/float_softmax.h"

#include "float_softmax_body.h"
#include "qrt/cpu.h"

QRT_SOFTMAX_ROWS(qrt_softmax_rows_f32_ref)

int qrt_softmax_rows_f32(const float *x, float *y, size_t rows, size_t n, int variant)
{
#if defined(QRT_HAVE_X86)
    const unsigned f = qrt_cpu_features();
    if ((variant < 0 || variant == QRT_ISA_AVX512VNNI) && (f & QRT_CPU_AVX512DQ)) {
        qrt_softmax_rows_f32__avx512(x, y, rows, n);
        return QRT_ISA_AVX512VNNI;
    }
    if ((variant < 0 || variant == QRT_ISA_AVX2 || variant == QRT_ISA_AVX512VNNI) &&
        (f & QRT_CPU_AVX2)) {
        qrt_softmax_rows_f32__avx2(x, y, rows, n);
        return QRT_ISA_AVX2;
    }
#endif
    (void)variant;
    qrt_softmax_rows_f32_ref(x, y, rows, n);
    return QRT_ISA_REF;
}

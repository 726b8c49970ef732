/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qarith.c
 * @brief qrt/qarith.h: run-time choice between the reference and the AVX2 variant.
 */
#include "qrt/qarith.h"

int qrt_mean_isa(void) {
#ifdef QRT_HAVE_X86
    if ((qrt_cpu_features() & QRT_CPU_AVX2)) return QRT_ISA_AVX2;
#endif
    return QRT_ISA_REF;
}

void qrt_mean_rows_u8(const uint8_t *x, size_t rows, size_t len, uint8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_mean_isa() == QRT_ISA_AVX2) {
        qrt_mean_rows_u8__avx2(x, rows, len, out);
        return;
    }
#endif
    (void)variant;
    qrt_mean_rows_u8_ref(x, rows, len, out);
}

void qrt_mean_rows_s8(const int8_t *x, size_t rows, size_t len, int8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_mean_isa() == QRT_ISA_AVX2) {
        qrt_mean_rows_s8__avx2(x, rows, len, out);
        return;
    }
#endif
    (void)variant;
    qrt_mean_rows_s8_ref(x, rows, len, out);
}

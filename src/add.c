/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file add.c
 * @brief qrt/add.h: run-time choice between the reference and the AVX2 variant.
 */
#include "qrt/add.h"

int qrt_add_isa(void) {
#ifdef QRT_HAVE_X86
    if ((qrt_cpu_features() & QRT_CPU_AVX2)) return QRT_ISA_AVX2;
#endif
    return QRT_ISA_REF;
}

void qrt_add_u8(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b, size_t n,
                uint8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_add_isa() == QRT_ISA_AVX2) {
        qrt_add_u8__avx2(p, a, b, n, out);
        return;
    }
#endif
    (void)variant;
    qrt_add_u8_ref(p, a, b, n, out);
}

void qrt_add_float_u8(const qrt_add_float_params *p, const uint8_t *a, const uint8_t *b,
                      size_t rows, size_t inner, size_t nvec, uint8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_add_isa() == QRT_ISA_AVX2) {
        qrt_add_float_u8__avx2(p, a, b, rows, inner, nvec, out);
        return;
    }
#endif
    (void)variant;
    qrt_add_float_u8_ref(p, a, b, rows, inner, nvec, out);
}

void qrt_add_float_s8(const qrt_add_float_params *p, const int8_t *a, const int8_t *b, size_t rows,
                      size_t inner, size_t nvec, int8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_add_isa() == QRT_ISA_AVX2) {
        qrt_add_float_s8__avx2(p, a, b, rows, inner, nvec, out);
        return;
    }
#endif
    (void)variant;
    qrt_add_float_s8_ref(p, a, b, rows, inner, nvec, out);
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file activation.c
 * @brief qrt/activation.h: run-time choice between the reference and the AVX2 variant.
 */
#include "qrt/activation.h"

int qrt_activation_isa(void) {
#ifdef QRT_HAVE_X86
    if ((qrt_cpu_features() & QRT_CPU_AVX2)) return QRT_ISA_AVX2;
#endif
    return QRT_ISA_REF;
}

void qrt_relu_u8(const uint8_t *x, size_t n, uint8_t zp, uint8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_activation_isa() == QRT_ISA_AVX2) {
        qrt_relu_u8__avx2(x, n, zp, out);
        return;
    }
#endif
    (void)variant;
    qrt_relu_u8_ref(x, n, zp, out);
}

void qrt_relu_s8(const int8_t *x, size_t n, int8_t zp, int8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_activation_isa() == QRT_ISA_AVX2) {
        qrt_relu_s8__avx2(x, n, zp, out);
        return;
    }
#endif
    (void)variant;
    qrt_relu_s8_ref(x, n, zp, out);
}

void qrt_lut_u8(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out) {
    qrt_lut_u8_ref(lut, x, n, out);
}

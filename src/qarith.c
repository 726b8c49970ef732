/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qarith.c
 * @brief qrt/qarith.h: run-time choice between the reference and the AVX2 variant.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* if-conversion of the clamps; no value changes */
#endif
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

void qrt_mul_rows_u8(const uint8_t *a, const uint8_t *b, size_t rows, size_t len, int b_per_row,
                     int32_t za, int32_t zb, float m, float lo, float hi, float zo, uint8_t *y)
{
    const float magic = 12582912.0f, big = 4194304.0f; /* 1.5 * 2^23, 2^22 */
    for (size_t r = 0; r < rows; r++) {
        const uint8_t *ar = a + r * len;
        uint8_t *yr = y + r * len;
        if (b_per_row) {
            const int32_t bv = (int32_t)b[r] - zb;
            for (size_t i = 0; i < len; i++) {
                float f = (float)(((int32_t)ar[i] - za) * bv) * m;
                f = f < -big ? -big : (f > big ? big : f);
                f = (f + magic) - magic;
                f = f < lo ? lo : (f > hi ? hi : f);
                yr[i] = (uint8_t)(int32_t)(f + zo);
            }
        } else {
            const uint8_t *br = b + r * len;
            for (size_t i = 0; i < len; i++) {
                float f = (float)(((int32_t)ar[i] - za) * ((int32_t)br[i] - zb)) * m;
                f = f < -big ? -big : (f > big ? big : f);
                f = (f + magic) - magic;
                f = f < lo ? lo : (f > hi ? hi : f);
                yr[i] = (uint8_t)(int32_t)(f + zo);
            }
        }
    }
}

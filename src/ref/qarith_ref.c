/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qarith_ref.c
 * @brief The reference kernels declared in qrt/ref/qarith_ref.h (baseline flags).
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* if-conversion of the clamps; no value changes */
#endif
#include "qrt/ref/qarith_ref.h"

void qrt_mean_rows_u8_ref(const uint8_t *x, size_t rows, size_t len, uint8_t *out) {
    QRT_MEAN_ROWS_8_BODY(uint8_t, uint32_t, uint64_t)
}

void qrt_mean_rows_s8_ref(const int8_t *x, size_t rows, size_t len, int8_t *out) {
    QRT_MEAN_ROWS_8_BODY(int8_t, int32_t, int64_t)
}

void qrt_mean_rows_s32_ref(const int32_t *x, size_t rows, size_t len, int32_t *out) {
    QRT_MEAN_ROWS_S32_BODY
}

void qrt_lut_channels_8_ref(const uint8_t *lut, const uint8_t *x, size_t outer, size_t channels,
                            size_t inner, uint8_t *out) {
    for (size_t o = 0; o < outer; ++o) {
        for (size_t c = 0; c < channels; ++c) {
            const uint8_t *t = lut + c * 256u;
            const size_t base = (o * channels + c) * inner;
            for (size_t i = 0; i < inner; ++i) out[base + i] = t[x[base + i]];
        }
    }
}

void qrt_mul_rows_u8_ref(const uint8_t *a, const uint8_t *b, size_t rows, size_t len,
                         int b_per_row, int32_t za, int32_t zb, float m, float lo, float hi,
                         float zo, uint8_t *y) {
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

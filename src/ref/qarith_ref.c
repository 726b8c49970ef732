/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qarith_ref.c
 * @brief The reference kernels declared in qrt/ref/qarith_ref.h (baseline flags).
 */
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

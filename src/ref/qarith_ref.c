/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qarith_ref.c
 * @brief The reference kernels declared in qrt/ref/qarith_ref.h.
 */
#include <math.h>
#include "qrt/ref/qarith_ref.h"

/* Blocks of 2^16 codes: a uint32 (|int32|) partial sum of one block cannot overflow, and the
 * block loop is a plain widening sum the compiler vectorises. */
#define QRT_MEAN_BLOCK 65536u

void qrt_mean_rows_u8_ref(const uint8_t *x, size_t rows, size_t len, uint8_t *out) {
    for (size_t r = 0; r < rows; ++r) {
        const uint8_t *row = x + r * len;
        uint64_t s = 0;
        for (size_t b = 0; b < len; b += QRT_MEAN_BLOCK) {
            const size_t e = len - b < QRT_MEAN_BLOCK ? len - b : QRT_MEAN_BLOCK;
            uint32_t acc = 0;
            for (size_t i = 0; i < e; ++i) acc += row[b + i];
            s += acc;
        }
        out[r] = (uint8_t)lrintf((float)s / (float)len);  /* within 0..255 */
    }
}

void qrt_mean_rows_s8_ref(const int8_t *x, size_t rows, size_t len, int8_t *out) {
    for (size_t r = 0; r < rows; ++r) {
        const int8_t *row = x + r * len;
        int64_t s = 0;
        for (size_t b = 0; b < len; b += QRT_MEAN_BLOCK) {
            const size_t e = len - b < QRT_MEAN_BLOCK ? len - b : QRT_MEAN_BLOCK;
            int32_t acc = 0;
            for (size_t i = 0; i < e; ++i) acc += row[b + i];
            s += acc;
        }
        out[r] = (int8_t)lrintf((float)s / (float)len);   /* within -128..127 */
    }
}

void qrt_mean_rows_s32_ref(const int32_t *x, size_t rows, size_t len, int32_t *out) {
    for (size_t r = 0; r < rows; ++r) {
        const int32_t *row = x + r * len;
        int64_t s = 0;   /* |s| <= 2^31 * len: exact for any len below 2^32 */
        for (size_t i = 0; i < len; ++i) s += row[i];
        const float y = rintf((float)s / (float)len);
        out[r] = y >= 2147483648.0f ? INT32_MIN : (int32_t)y;
    }
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

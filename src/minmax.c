/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file minmax.c
 * @brief qrt/minmax.h (baseline flags; gcc vectorises the 16 lanes).
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* if-conversion of the selects; no value changes */
#endif
#include "qrt/minmax.h"

#define LANES 16

int qrt_minmax_finite_f32(const float *x, size_t n, float *lo, float *hi)
{
    float mn[LANES], mx[LANES], z[LANES];
    for (int j = 0; j < LANES; j++) {
        mn[j] = x[0];
        mx[j] = x[0];
        z[j] = 0.0f;
    }
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++) {
            const float v = x[i + j];
            mn[j] = v < mn[j] ? v : mn[j];
            mx[j] = v > mx[j] ? v : mx[j];
            z[j] = z[j] + v * 0.0f; /* NaN once a NaN or an infinity passed */
        }
    for (; i < n; i++) {
        const float v = x[i];
        mn[0] = v < mn[0] ? v : mn[0];
        mx[0] = v > mx[0] ? v : mx[0];
        z[0] = z[0] + v * 0.0f;
    }
    float a = mn[0], b = mx[0], c = z[0];
    for (int j = 1; j < LANES; j++) {
        a = mn[j] < a ? mn[j] : a;
        b = mx[j] > b ? mx[j] : b;
        c = c + z[j];
    }
    *lo = a;
    *hi = b;
    return c == 0.0f;
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_norm.c
 * @brief qrt/float_norm.h (baseline flags; gcc vectorises the 8-lane partial sums).
 */
#include "qrt/float_norm.h"

#include <math.h>

static float sum8(const float *v, size_t n, const float *m)
{
    float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    if (m) {
        const float mu = *m;
        for (; i + 8 <= n; i += 8)
            for (int j = 0; j < 8; j++) {
                const float d = v[i + j] - mu;
                a[j] = a[j] + d * d;
            }
    } else {
        for (; i + 8 <= n; i += 8)
            for (int j = 0; j < 8; j++) a[j] = a[j] + v[i + j];
    }
    float s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    if (m) {
        for (; i < n; i++) {
            const float d = v[i] - *m;
            s = s + d * d;
        }
    } else {
        for (; i < n; i++) s = s + v[i];
    }
    return s;
}

void qrt_layer_norm_rows_f32(const float *x, float *y, size_t rows, size_t n, float inv,
                             float eps, const float *w, const float *b)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        const float mean = sum8(xr, n, NULL) * inv;
        float v = sum8(xr, n, &mean) * inv;
        const float z = v * 0.0f; /* NaN where the variance overflowed (torch: NaN) */
        v = v + eps;
        v = sqrtf(v);
        v = 1.0f / v;
        const float rstd = v + z;
        for (size_t i = 0; i < n; i++) yr[i] = (xr[i] - mean) * rstd;
        if (w)
            for (size_t i = 0; i < n; i++) yr[i] = yr[i] * w[i];
        if (b)
            for (size_t i = 0; i < n; i++) yr[i] = yr[i] + b[i];
    }
}

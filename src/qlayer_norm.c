/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qlayer_norm.c
 * @brief qrt/qlayer_norm.h (built with -ffp-contract=off: torch's fused multiply-adds are the
 *        explicit fmaf calls).
 */
#include "qrt/qlayer_norm.h"

#include <math.h>

#define VLEN 32 /* torch's kIntVLen for 8-bit codes */

static int32_t clampq(float t, int32_t qmin, int32_t qmax)
{
    if (!(t == t)) return qmin;                 /* NaN */
    if (t <= (float)qmin) return qmin;
    if (t >= (float)qmax) return qmax;
    return (int32_t)t;
}

void qrt_qlayer_norm_rows(const void *x, void *y, int is_signed, size_t rows, size_t n,
                          float sx, int32_t zx, float sy, int32_t zy, double eps,
                          const float *w, const float *b, int32_t qmin, int32_t qmax)
{
    const float inv = 1.0f / sy;
    const size_t nvec = n - n % VLEN;
    for (size_t r = 0; r < rows; r++) {
        const uint8_t *xu = (const uint8_t *)x + r * n;
        const int8_t *xs = (const int8_t *)x + r * n;
        int64_t s = 0, sq = 0;
        for (size_t i = 0; i < n; i++) {
            const int64_t c = is_signed ? (int64_t)xs[i] : (int64_t)xu[i];
            s += c;
            sq += c * c;
        }
        const float ms = (float)s / (float)n;
        const float mean = ms - (float)zx;
        float var = fmaf(-ms, ms, (float)sq / (float)n);
        var = var > 0.0f ? var : 0.0f;
        float p = var * sx;
        p = p * sx;
        const float scale = (float)((double)sx / sqrt((double)p + eps));
        for (size_t i = 0; i < n; i++) {
            const int32_t c = is_signed ? (int32_t)xs[i] : (int32_t)xu[i];
            const float u = ((float)(c - zx) - mean) * scale;
            const float v = fmaf(u, w ? w[i] : 1.0f, b ? b[i] : 0.0f);
            int32_t q;
            if (i < nvec) {
                const float t = nearbyintf(v * inv);
                q = clampq(t + (float)zy, qmin, qmax);   /* |t| beyond 2^24 saturates anyway */
            } else {
                q = clampq(nearbyintf(v * inv + (float)zy), qmin, qmax);
            }
            if (is_signed)
                ((int8_t *)y)[r * n + i] = (int8_t)q;
            else
                ((uint8_t *)y)[r * n + i] = (uint8_t)q;
        }
    }
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file minmax.c
 * @brief qrt/minmax.h.  gcc does not if-convert the selects of a min / max across partial
 *        lanes (its SLP pass refuses them), so the baseline vector units are used directly:
 *        SSE2 on x86-64, Advanced SIMD on aarch64, a scalar loop elsewhere.  min and max are
 *        exact in any order; only the sign of a zero result may differ from a serial loop, which
 *        qrt_choose_qparams_u8 does not see (it compares with and subtracts from 0).
 */
#include "qrt/minmax.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

int qrt_minmax_finite_f32(const float *x, size_t n, float *lo, float *hi)
{
    size_t i = 0;
    float a = x[0], b = x[0], c = 0.0f;
#if defined(__SSE2__)
    if (n >= 16) {
        __m128 mn[4], mx[4], z[4];
        const __m128 zero = _mm_setzero_ps();
        for (int j = 0; j < 4; j++) {
            mn[j] = mx[j] = _mm_loadu_ps(x + 4 * j);
            z[j] = zero;
        }
        for (; i + 16 <= n; i += 16)
            for (int j = 0; j < 4; j++) {
                const __m128 v = _mm_loadu_ps(x + i + 4 * j);
                mn[j] = _mm_min_ps(mn[j], v);
                mx[j] = _mm_max_ps(mx[j], v);
                z[j] = _mm_add_ps(z[j], _mm_mul_ps(v, zero)); /* NaN once a NaN / inf passed */
            }
        float t[3][16];
        for (int j = 0; j < 4; j++) {
            _mm_storeu_ps(t[0] + 4 * j, mn[j]);
            _mm_storeu_ps(t[1] + 4 * j, mx[j]);
            _mm_storeu_ps(t[2] + 4 * j, z[j]);
        }
        for (int j = 0; j < 16; j++) {
            a = t[0][j] < a ? t[0][j] : a;
            b = t[1][j] > b ? t[1][j] : b;
            c = c + t[2][j];
        }
    }
#elif defined(__aarch64__)
    if (n >= 16) {
        float32x4_t mn[4], mx[4], z[4];
        const float32x4_t zero = vdupq_n_f32(0.0f);
        for (int j = 0; j < 4; j++) {
            mn[j] = mx[j] = vld1q_f32(x + 4 * j);
            z[j] = zero;
        }
        for (; i + 16 <= n; i += 16)
            for (int j = 0; j < 4; j++) {
                const float32x4_t v = vld1q_f32(x + i + 4 * j);
                mn[j] = vminq_f32(mn[j], v);
                mx[j] = vmaxq_f32(mx[j], v);
                z[j] = vaddq_f32(z[j], vmulq_f32(v, zero));
            }
        float t[3][16];
        for (int j = 0; j < 4; j++) {
            vst1q_f32(t[0] + 4 * j, mn[j]);
            vst1q_f32(t[1] + 4 * j, mx[j]);
            vst1q_f32(t[2] + 4 * j, z[j]);
        }
        for (int j = 0; j < 16; j++) {
            a = t[0][j] < a ? t[0][j] : a;
            b = t[1][j] > b ? t[1][j] : b;
            c = c + t[2][j];
        }
    }
#endif
    for (; i < n; i++) {
        const float v = x[i];
        a = v < a ? v : a;
        b = v > b ? v : b;
        c = c + v * 0.0f;
    }
    *lo = a;
    *hi = b;
    return c == 0.0f;
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_gelu_body.h
 * @brief The element function of include/qrt/float_gelu.h, private to src/: compiled by
 *        src/float_gelu.c (baseline) and src/x86/float_gelu_avx2.c (AVX2), same bits.
 *        qrt/ops/float_unary.py's numpy steps, one element, all in float32.
 */
#include "float_exp_body.h"

static inline float qrt_gelu_erf1(float x)
{
    const float z = x * 0.70710677f; /* x / sqrt(2), float32(np.sqrt(0.5)) */
    const float a = z < 0.0f ? -z : z;
    const float s = z * z;
    /* |z| < 1: 1 + erf(z), erf(z) = z P(z^2) (least squares, |error| < 1.3e-7) */
    float p = -5.6254020e-04f;
    p = p * s + 4.9160300e-03f;
    p = p * s + -2.6709961e-02f;
    p = p * s + 1.1280131e-01f;
    p = p * s + -3.7612319e-01f;
    p = p * s + 1.1283791e+00f;
    const float small = 1.0f + z * p;
    /* |z| >= 1: erfc(|z|) = t exp(-z^2 + P(t)), t = 1 / (1 + |z|/2) (Numerical Recipes' erfcc) */
    float t = a * 0.5f;
    t = t + 1.0f;
    t = 1.0f / t;
    float q = 0.17087277f;
    q = q * t + -0.82215223f;
    q = q * t + 1.48851587f;
    q = q * t + -1.13520398f;
    q = q * t + 0.27886807f;
    q = q * t + -0.18628806f;
    q = q * t + 0.09678418f;
    q = q * t + 0.37409196f;
    q = q * t + 1.00002368f;
    q = q * t + -1.26551223f;
    q = q - s;
    const float e = qrt_exp32(q) * t;               /* erfc(|z|) */
    const float large = z > 0.0f ? 2.0f - e : e;    /* 1 + erf(z) = erfc(-z) */
    const float phi2 = a < 1.0f ? small : large;    /* NaN: large, NaN */
    float y = phi2 * x;                             /* torch: inf for |x| > FLT_MAX / 2 */
    y = y * 0.5f;
    return x == __builtin_inff() ? __builtin_nanf("") : y; /* torch: gelu(+inf) is NaN */
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_gelu_body.h
 * @brief The element function of include/qrt/float_gelu.h, private to src/: compiled by
 *        src/float_gelu.c (baseline) and src/x86/float_gelu_avx2.c (AVX2), same bits.
 */
#include <stdint.h>

/* exp(x) in float64, Cephes' exp.c (rational form, |error| ~ 2e-16 relative) with the
 * reduction k = rint(x log2 e) by the 1.5 * 2^52 trick and 2^k built from its bits, so that
 * there is no branch and no libm call.  x is clamped to [-708, 709] (2^k stays normal; the
 * gelu below only feeds it values <= -1.26, where exp(-708) ~ 3e-308 rounds to the same
 * float32 result as 0); NaN passes through. */
static inline double qrt_gelu_exp64(double x)
{
    x = x < -708.0 ? -708.0 : x;
    x = x > 709.0 ? 709.0 : x;
    const double magic = 6755399441055744.0; /* 1.5 * 2^52 */
    const double kb = x * 1.4426950408889634 + magic;
    union {
        double d;
        uint64_t u;
    } b, s;
    b.d = kb;
    const double k = kb - magic;
    x = x - k * 6.93145751953125e-1;
    x = x - k * 1.42860682030941723212e-6;
    const double xx = x * x;
    double p = 1.26177193074810590878e-4;
    p = p * xx + 3.02994407707441961300e-2;
    p = p * xx + 9.99999999999999999910e-1;
    p = p * x;
    double q = 3.00198505138664455042e-6;
    q = q * xx + 2.52448340349684104192e-3;
    q = q * xx + 2.27265548208155028766e-1;
    q = q * xx + 2.00000000000000000009e0;
    double r = p / (q - p);
    r = 1.0 + 2.0 * r;
    s.u = (b.u + 1023u) << 52; /* 2^k: the low bits of b hold k (|k| <= 1022) */
    return r * s.d;
}

/* qrt/ops/float_unary.py's numpy steps, one element */
static inline float qrt_gelu_erf1(float xf)
{
    const double x = (double)xf;
    const double z = x * 0.7071067811865476; /* x / sqrt(2), float(np.sqrt(0.5)) */
    const double e = z < 0.0 ? -z : z;
    double t = e * 0.5;
    t = t + 1.0;
    t = 1.0 / t;
    double acc = 0.17087277;
    acc = acc * t + -0.82215223;
    acc = acc * t + 1.48851587;
    acc = acc * t + -1.13520398;
    acc = acc * t + 0.27886807;
    acc = acc * t + -0.18628806;
    acc = acc * t + 0.09678418;
    acc = acc * t + 0.37409196;
    acc = acc * t + 1.00002368;
    acc = acc * t + -1.26551223;
    acc = acc - z * z;
    acc = qrt_gelu_exp64(acc);
    t = acc * t;                   /* erfc(|z|) */
    t = z > 0.0 ? 2.0 - t : t;     /* 1 + erf(z) = erfc(-z) */
    t = t * x;
    float y = (float)t;            /* one rounding to float32 */
    y = y * 0.5f;
    return xf == __builtin_inff() ? __builtin_nanf("") : y; /* torch: gelu(+inf) is NaN */
}

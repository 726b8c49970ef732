/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_exp_body.h
 * @brief qrt_exp32: a float32 exp of qrt's own, private to src/ (float_gelu_body.h,
 *        float_softmax_body.h).  Plain IEEE float32 multiplies and adds (no contraction, no
 *        libm, no branch), so every compiler and ISA that vectorises it returns the same bits;
 *        qrt/ops/float_unary.py's _exp32 is the same steps in numpy (the specification).
 *
 * Cephes' expf: k = rint(x log2 e) by the 1.5 * 2^23 trick, r = x - k ln 2 in two parts
 * (k * 0.693359375 is exact for |k| <= 2^14), e^r by a degree-7 polynomial (~1 ulp), then
 * 2^k as two power-of-two factors 2^(k/2) 2^(k - k/2), each a normal float for k in
 * [-150, 128], so that subnormal results are rounded once, as a correctly scaled product.
 * x is clamped to [-104, 89]: exp(-104) < 2^-150 rounds to +0 and exp(89) overflows to +inf
 * through the product; NaN passes through (its compares are false; its k bits are garbage,
 * the product NaN).
 */
#ifndef QRT_FLOAT_EXP_BODY_H
#define QRT_FLOAT_EXP_BODY_H

#include <stdint.h>
#include <string.h>

static inline float qrt_bits_f32(int32_t i)
{
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}

static inline int32_t qrt_f32_bits(float f)
{
    int32_t i;
    memcpy(&i, &f, sizeof i);
    return i;
}

static inline float qrt_exp32(float x)
{
    x = x < -104.0f ? -104.0f : x;
    x = x > 89.0f ? 89.0f : x;
    const float magic = 12582912.0f; /* 1.5 * 2^23 */
    const float kb = x * 1.44269504f + magic;
    const float k = kb - magic;
    float r = x - k * 0.693359375f;
    r = r - k * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r;
    p = p + 1.0f;
    /* the low bits of kb hold k; (unsigned) arithmetic so that NaN's garbage bits stay defined */
    const int32_t ki = (int32_t)((uint32_t)qrt_f32_bits(kb) - (uint32_t)qrt_f32_bits(magic));
    const int32_t k1 = ki / 2;
    const int32_t k2 = ki - k1;
    const float s1 = qrt_bits_f32((int32_t)((uint32_t)(k1 + 127) << 23));
    const float s2 = qrt_bits_f32((int32_t)((uint32_t)(k2 + 127) << 23));
    return (p * s1) * s2;
}

#endif /* QRT_FLOAT_EXP_BODY_H */

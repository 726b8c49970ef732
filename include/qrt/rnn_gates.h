/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_gates.h
 * @brief The gate arithmetic of the float recurrent layers (src/rnn_float.c): torch's order
 *        (aten RNN.cpp), Cephes' float32 expf / tanhf polynomials as src/rnn.c uses them, the
 *        same bits on every ISA (plain IEEE operations, -ffp-contract=off), plus NaN
 *        propagation (a NaN pre-activation gives NaN, as torch's sigmoid / tanh do; the
 *        results for every other input are those of src/rnn.c's functions).
 */
#ifndef QRT_RNN_GATES_H
#define QRT_RNN_GATES_H

#include <stddef.h>
#include <stdint.h>

static inline float qrt_gate_expf(float x)
{
    x = x == x ? x : 0.0f; /* NaN: computed on 0, replaced by the callers */
    x = x > 88.0f ? 88.0f : x;
    x = x < -87.0f ? -87.0f : x;
    float fx = x * 1.44269504088896341f + 0.5f;
    int32_t n = (int32_t)fx;
    n -= (float)n > fx;
    const float fn = (float)n;
    x = x - fn * 0.693359375f;
    x = x - fn * -2.12194440e-4f;
    const float z = x * x;
    float y = 1.9875691500e-4f;
    y = y * x + 1.3981999507e-3f;
    y = y * x + 8.3334519073e-3f;
    y = y * x + 4.1665795894e-2f;
    y = y * x + 1.6666665459e-1f;
    y = y * x + 5.0000001201e-1f;
    y = y * z + x + 1.0f;
    union {
        int32_t i;
        float f;
    } u;
    u.i = (n + 127) * (1 << 23);
    return y * u.f;
}

static inline float qrt_gate_sigmoid(float x)
{
    const float r = 1.0f / (1.0f + qrt_gate_expf(-x));
    return x == x ? r : x;
}

static inline float qrt_gate_tanh(float x)
{
    const float a = x < 0.0f ? -x : x;
    const float e = qrt_gate_expf(2.0f * a);
    float big = 1.0f - 2.0f / (e + 1.0f);
    big = x < 0.0f ? -big : big;
    const float z = x * x;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    const float small = p * z * x + x;
    const float r = a > 0.625f ? big : small;
    return x == x ? r : x;
}

#endif /* QRT_RNN_GATES_H */

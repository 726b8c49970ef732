/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file activation_ref.h
 * @brief Reference element-wise activations: relu, and the 256-entry lookup tables that torch
 *        2.13's QNNPACK builds for hardswish and sigmoid. Plain loops; the specification.
 *
 * QNNPACK computes hardswish and sigmoid of a quint8 tensor by building a table over all 256
 * input codes once per call (pytorch/aten/src/ATen/native/quantized/cpu/qnnpack/src/
 * {hardswish,sigmoid}.c) and then indexing it, so a table is an exact model of the op.
 * The table formulas below were verified against torch (docs/ops.md).
 */
#ifndef QRT_REF_ACTIVATION_REF_H
#define QRT_REF_ACTIVATION_REF_H

#include <math.h>
#include "qrt/types.h"

/** Body shared by the relu reference and its AVX2 compilation: out = max(x, zp). */
#define QRT_RELU_BODY                                                                          \
    for (size_t i = 0; i < n; ++i)                                                             \
        out[i] = x[i] > zp ? x[i] : zp;

/**
 * @brief Quantized relu of quint8 codes: out[i] = max(x[i], zero_point).
 * @param[in]  x   [n] quint8 codes
 * @param[in]  n   element count
 * @param[in]  zp  zero point, 0..255
 * @param[out] out [n]; may alias x (in-place relu)
 */
static inline void qrt_relu_u8_ref(const uint8_t *x, size_t n, uint8_t zp, uint8_t *out)
{
    QRT_RELU_BODY
}

/** As qrt_relu_u8_ref(), for qint8 codes (zp in -128..127). */
static inline void qrt_relu_s8_ref(const int8_t *x, size_t n, int8_t zp, int8_t *out)
{
    QRT_RELU_BODY
}

/**
 * @brief Fill QNNPACK's hardswish table (pytorch_qnnp_create_hardswish_nc_q8).
 *
 * For every code i: x = f32(s_in * f32(i - zp_in)); h = f32(f32(x * clamp(x + 3, 0, 6)) / 6);
 * y = f32(f32(f32(1 / s_out) * h) + zp_out) clamped to [0, 255]; lut[i] = rne(y).
 * @param[in]  s_in, s_out  f32 input and output scales (positive, finite)
 * @param[in]  zp_in, zp_out  zero points, 0..255
 * @param[out] lut [256]
 */
static inline void qrt_hardswish_lut_u8_ref(float s_in, int32_t zp_in, float s_out,
                                            int32_t zp_out, uint8_t *lut)
{
    const float inv = 1.0f / s_out;
    for (int32_t i = 0; i < 256; ++i) {
        const float x = s_in * (float)(i - zp_in);
        float t = x + 3.0f;
        t = t > 0.0f ? t : 0.0f;
        t = t < 6.0f ? t : 6.0f;
        t = x * t / 6.0f;
        float y = inv * t + (float)zp_out;
        y = y < 0.0f ? 0.0f : y;
        y = y > 255.0f ? 255.0f : y;
        lut[i] = (uint8_t)lrintf(y);
    }
}

/**
 * @brief Fill QNNPACK's sigmoid table (pytorch_qnnp_create_sigmoid_nc_q8), output (1/256, 0).
 *
 * For every code i: x = f32(s_in * f32(i - zp_in)); y = f32(256 / f32(1 + expf(-x))), clamped
 * to [0, 255]; lut[i] = rne(y).  expf is the C library's, as in torch (docs/ops.md notes the
 * residual risk at exact ties on another libm).
 */
static inline void qrt_sigmoid_lut_u8_ref(float s_in, int32_t zp_in, uint8_t *lut)
{
    for (int32_t i = 0; i < 256; ++i) {
        const float x = s_in * (float)(i - zp_in);
        float y = 256.0f / (1.0f + expf(-x));
        y = y < 0.0f ? 0.0f : y;
        y = y > 255.0f ? 255.0f : y;
        lut[i] = (uint8_t)lrintf(y);
    }
}

/** Body shared by the table lookup reference and its AVX2 compilation. */
#define QRT_LUT_BODY                                                                           \
    for (size_t i = 0; i < n; ++i)                                                             \
        out[i] = lut[x[i]];

/**
 * @brief out[i] = lut[x[i]] for quint8 codes.
 * @param[in]  lut [256]
 * @param[in]  x   [n]
 * @param[out] out [n]; may alias x
 */
static inline void qrt_lut_u8_ref(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out)
{
    QRT_LUT_BODY
}

#endif /* QRT_REF_ACTIVATION_REF_H */

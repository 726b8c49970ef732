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
#include "qrt/ref/aten_quant_ref.h"

/** Body shared by the relu reference and its AVX2 compilation: out = max(x, zp). */
#define QRT_RELU_BODY                                                                              \
    for (size_t i = 0; i < n; ++i) out[i] = x[i] > zp ? x[i] : zp;

/**
 * @brief Quantized relu of quint8 codes: out[i] = max(x[i], zero_point).
 * @param[in]  x   [n] quint8 codes
 * @param[in]  n   element count
 * @param[in]  zp  zero point, 0..255
 * @param[out] out [n]; may alias x (in-place relu)
 */
void qrt_relu_u8_ref(const uint8_t *x, size_t n, uint8_t zp, uint8_t *out);

/** As qrt_relu_u8_ref(), for qint8 codes (zp in -128..127). */
void qrt_relu_s8_ref(const int8_t *x, size_t n, int8_t zp, int8_t *out);

/**
 * @brief Fill QNNPACK's hardswish table (pytorch_qnnp_create_hardswish_nc_q8).
 *
 * For every code i: x = f32(s_in * f32(i - zp_in)); h = f32(f32(x * clamp(x + 3, 0, 6)) / 6);
 * y = f32(f32(f32(1 / s_out) * h) + zp_out) clamped to [0, 255]; lut[i] = rne(y).
 * @param[in]  s_in, s_out  f32 input and output scales (positive, finite)
 * @param[in]  zp_in, zp_out  zero points, 0..255
 * @param[out] lut [256]
 */
void qrt_hardswish_lut_u8_ref(float s_in, int32_t zp_in, float s_out, int32_t zp_out, uint8_t *lut);

/**
 * @brief Fill QNNPACK's sigmoid table (pytorch_qnnp_create_sigmoid_nc_q8), output (1/256, 0).
 *
 * For every code i: x = f32(s_in * f32(i - zp_in)); y = f32(256 / f32(1 + expf(-x))), clamped
 * to [0, 255]; lut[i] = rne(y).  expf is the C library's, as in torch (docs/ops.md notes the
 * residual risk at exact ties on another libm).
 */
void qrt_sigmoid_lut_u8_ref(float s_in, int32_t zp_in, uint8_t *lut);

/** Body of the table lookup reference (and of the SIMD variants' scalar tails). */
#define QRT_LUT_BODY                                                                               \
    for (size_t i = 0; i < n; ++i) out[i] = lut[x[i]];

/**
 * @brief out[i] = lut[x[i]] for quint8 codes.
 * @param[in]  lut [256]
 * @param[in]  x   [n]
 * @param[out] out [n]; may alias x
 */
void qrt_lut_u8_ref(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out);

/* ---- ATen's generic kernels (qint8; quint8 off the qnnpack engine) --------------------------
 * qhardswish_kernel / qsigmoid_kernel run through cpu_kernel_vec, so a code's result depends
 * on whether it sits in a whole 64-code chunk (vector lambda) or in the row's tail (scalar
 * lambda).  Both lambdas are pure functions of the code, so each is a 256-entry table, indexed
 * by the code's byte (uint8_t)code.  Formulas from QuantizedOpKernels.cpp, verified against
 * torch (docs/ops.md).
 */

/** Code of table byte i: i for quint8, (int8_t)i for qint8. */
static inline int32_t qrt_code_of_byte_(int32_t i, int is_signed) {
    return is_signed ? (int32_t)(int8_t)(uint8_t)i : i;
}

/**
 * @brief ATen's generic hardswish tables.
 *
 * vector: x = fmaf(q, f32(s_in), f32(f32(s_in) * -zp_in)); h = f32(f32(x * clamp(x+3, 0, 6)) / 6);
 *         quantize_vec(h, inv = f32(1.0 / s_out))
 * scalar: x = f32((double)f32(q - zp_in) * s_in); h as above;
 *         quantize_scalar(h, inv = f32(1 / f32(s_out)))
 * @param[in] s_in, s_out  the scales as torch stores them (double)
 * @param[in] is_signed    0: quint8 codes, 1: qint8 codes
 * @param[out] lut_vec, lut_scalar  [256] output codes as bytes
 */
void qrt_hardswish_luts_aten_ref(double s_in, int32_t zp_in, double s_out, int32_t zp_out,
                                 int is_signed, uint8_t *lut_vec, uint8_t *lut_scalar);

/**
 * @brief ATen's generic sigmoid tables; output scale 1/256, zero point -128 (qint8) or 0.
 *
 * vector: x = f32(f32(q - zp) * f32(s_in)); y = f32(1 / f32(1 + expf(-x))); quantize_vec(y, 256)
 * scalar: same x; y = f32(1.0f / (1.0 + (double)expf(-x))); quantize_scalar(y, 256)
 * torch's vector path uses Sleef's expf (1-ulp); this uses the C library's (docs/ops.md).
 */
void qrt_sigmoid_luts_aten_ref(double s_in, int32_t zp_in, int is_signed, uint8_t *lut_vec,
                               uint8_t *lut_scalar);

/**
 * @brief Two-table lookup over one contiguous row of bytes: out[i] = lut_vec[x[i]] for
 *        i < nvec, lut_scalar[x[i]] after.
 */
void qrt_lut2_u8_ref(const uint8_t *lut_vec, const uint8_t *lut_scalar, const uint8_t *x, size_t n,
                     size_t nvec, uint8_t *out);

#endif /* QRT_REF_ACTIVATION_REF_H */

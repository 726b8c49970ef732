/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_ref.h
 * @brief qrt_conv1d_u8_ref(): plain loops. THE specification of quantized conv1d / linear /
 *        dynamic linear; every optimized variant is bit-exact with it.
 */
#ifndef QRT_CONV1D_REF_H
#define QRT_CONV1D_REF_H

#include "qrt/conv1d_params.h"
#include "qrt/requant.h"

/**
 * @brief Quantized conv1d, torch 2.13 qnnpack arithmetic.
 *
 * acc[n][oc][t] = sum_{ic < c_in/groups, k < K} (x[n][g*c_in/groups + ic][t*s + k*d - pad_left]
 *                 - input_zero) * (w[oc][ic][k] - weight_zero[oc]),  g = oc / (c_out/groups);
 * positions outside [0, len_in) are padding (value input_zero) and contribute 0.  The sum is
 * exact in int32 (qrt_conv1d_check bounds the tap count).  Then requant.h finishes it.
 *
 * @param[in]  p   geometry, strides, zero points (checked by qrt_conv1d_check)
 * @param[in]  x   input, element (n, c, t) at x[n*x_stride_n + c*x_stride_c + t*x_stride_t], uint8
 * @param[in]  w   [c_out][c_in/groups][kernel] int8, contiguous
 * @param[in]  q   per-output-channel constants
 * @param[out] out uint8 (OUT_U8) or float (OUT_F32), element (n, oc, t) at the y strides
 * @return QRT_OK, or the gate's error (nothing written)
 */
qrt_status qrt_conv1d_u8_ref(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                             const qrt_conv1d_quant *q, void *out);

#endif /* QRT_CONV1D_REF_H */

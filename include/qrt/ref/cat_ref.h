/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cat_ref.h
 * @brief Reference requantizing copy used by quantized cat: torch's quantized_cat_impl
 *        dequantizes every input and quantizes the concatenation with the output qparams.
 *        Plain loops; the specification.
 *
 *   x = f32(s_in * f32(q - zp_in))                       (per-tensor dequantize)
 *   t = min(fmaf(x, inv_out, (float)zp_out), 2147483520)  (per-tensor quantize, FMA path)
 *   out = clamp(rne(t), qmin, qmax)
 */
#ifndef QRT_REF_CAT_REF_H
#define QRT_REF_CAT_REF_H

#include <math.h>
#include "qrt/types.h"

/** Parameters of one input's requantization into the output's qparams. */
typedef struct {
    float in_scale;   /**< f32 scale of the input */
    int32_t in_zero;  /**< input zero point */
    float inv_out;    /**< f32(1 / f32(out_scale)) */
    float out_zero_f; /**< (float)out_zero_point */
    float qmin, qmax; /**< dtype range as floats */
} qrt_requant_copy_params;

#define QRT_REQUANT_COPY_BODY(T)                                                                   \
    for (size_t r = 0; r < rows; ++r) {                                                            \
        const T *x = in + r * in_stride;                                                           \
        T *y = out + r * out_stride;                                                               \
        for (size_t i = 0; i < len; ++i) {                                                         \
            const float v = p->in_scale * (float)((int32_t)x[i] - p->in_zero);                     \
            float t = fmaf(v, p->inv_out, p->out_zero_f);                                          \
            t = t < 2147483520.0f ? t : 2147483520.0f;                                             \
            t = rintf(t);                                                                          \
            t = t > p->qmin ? t : p->qmin;                                                         \
            t = t < p->qmax ? t : p->qmax;                                                         \
            y[i] = (T)(int32_t)t;                                                                  \
        }                                                                                          \
    }

/**
 * @brief Requantize [rows][len] quint8 codes (row stride in_stride) into out (row stride
 *        out_stride): one input's slab of a concatenation.
 */
void qrt_requant_copy_u8_ref(const qrt_requant_copy_params *p, const uint8_t *in, size_t rows,
                             size_t len, size_t in_stride, uint8_t *out, size_t out_stride);

/** As qrt_requant_copy_u8_ref(), for qint8 codes. */
void qrt_requant_copy_s8_ref(const qrt_requant_copy_params *p, const int8_t *in, size_t rows,
                             size_t len, size_t in_stride, int8_t *out, size_t out_stride);

#endif /* QRT_REF_CAT_REF_H */

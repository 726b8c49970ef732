/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file add_params.h
 * @brief Parameters and the precondition gates of quantized add / add_relu.
 */
#ifndef QRT_ADD_PARAMS_H
#define QRT_ADD_PARAMS_H

#include <math.h>
#include <string.h>
#include "qrt/types.h"

/** QNNPACK fixed-point add (pytorch_qnnp_compute_add_quantization_params). */
typedef struct {
    int32_t a_zero, b_zero, out_zero; /**< 0..255 */
    int32_t a_mult, b_mult;           /**< in [0, 2^22) */
    uint32_t shift;                   /**< in [14, 35] */
    int32_t out_min, out_max;         /**< clamp bounds; out_min < out_max */
} qrt_add_qnnp_params;

/** ATen's generic float add (qadd_kernel). */
typedef struct {
    float a_scale, b_scale; /**< f32 scales */
    float a_negzp, b_negzp; /**< f32(scale * -(float)zp), the vector path's premultiplied zp */
    float inv;              /**< f32(1 / f32(out_scale)) */
    int32_t a_zero, b_zero, out_zero;
    int32_t qmin, qmax; /**< dtype range */
    int32_t relu;       /**< nonzero: add_relu */
} qrt_add_float_params;

static inline uint32_t qrt_f32_bits_(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/**
 * @brief Gate + parameters of QNNPACK's add; QRT_ERR_ARG where QNNPACK refuses.
 *
 * QNNPACK (pytorch_qnnp_create_add_nc_q8) refuses when f32(sa / so) or f32(sb / so) is
 * outside [2^-14, 2^8), and add_relu when zo == 255 (output_min >= output_max).
 * @param[in] sa, sb, so  f32 scales of a, b and the output (positive, finite)
 * @param[in] za, zb, zo  zero points, 0..255
 * @param[in] relu        nonzero for add_relu (output_min = zo)
 * @param[out] p
 * @return QRT_OK, or QRT_ERR_ARG (nothing usable written)
 */
static inline qrt_status qrt_add_qnnp_params_init(float sa, int32_t za, float sb, int32_t zb,
                                                  float so, int32_t zo, int relu,
                                                  qrt_add_qnnp_params *p) {
    memset(p, 0, sizeof *p);
    if (!(sa > 0.0f) || !(sb > 0.0f) || !(so > 0.0f) || za < 0 || za > 255 || zb < 0 || zb > 255 ||
        zo < 0 || zo > 255)
        return QRT_ERR_ARG;
    const float ra = sa / so, rb = sb / so;
    if (!(ra >= 0x1.0p-14f && ra < 0x1.0p+8f && rb >= 0x1.0p-14f && rb < 0x1.0p+8f))
        return QRT_ERR_ARG;
    const int32_t out_min = relu ? zo : 0, out_max = 255;
    if (out_min >= out_max) return QRT_ERR_ARG;
    const float rmax = ra > rb ? ra : rb;
    const int32_t exponent = (int32_t)(qrt_f32_bits_(rmax) >> 23) - 127;
    const uint32_t shift = (uint32_t)(21 - exponent);
    const float scale_multiplier = ldexpf(1.0f, (int)shift); /* exact power of two */
    p->a_mult = (int32_t)lrintf(ra * scale_multiplier);
    p->b_mult = (int32_t)lrintf(rb * scale_multiplier);
    p->shift = shift;
    p->a_zero = za;
    p->b_zero = zb;
    p->out_zero = zo;
    p->out_min = out_min;
    p->out_max = out_max;
    return QRT_OK;
}

/**
 * @brief Gate + parameters of ATen's generic float add.
 * @param[in] qmin, qmax  dtype range (0..255 for quint8, -128..127 for qint8)
 * @return QRT_OK, or QRT_ERR_ARG for a non-positive scale or a zero point outside the range
 */
static inline qrt_status qrt_add_float_params_init(float sa, int32_t za, float sb, int32_t zb,
                                                   float so, int32_t zo, int32_t qmin, int32_t qmax,
                                                   int relu, qrt_add_float_params *p) {
    memset(p, 0, sizeof *p);
    if (!(sa > 0.0f) || !(sb > 0.0f) || !(so > 0.0f) || qmin >= qmax || za < qmin || za > qmax ||
        zb < qmin || zb > qmax || zo < qmin || zo > qmax)
        return QRT_ERR_ARG;
    p->a_scale = sa;
    p->b_scale = sb;
    p->a_negzp = sa * -(float)za;
    p->b_negzp = sb * -(float)zb;
    p->inv = 1.0f / so;
    p->a_zero = za;
    p->b_zero = zb;
    p->out_zero = zo;
    p->qmin = qmin;
    p->qmax = qmax;
    p->relu = relu != 0;
    return QRT_OK;
}

#endif /* QRT_ADD_PARAMS_H */

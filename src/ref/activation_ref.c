/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file activation_ref.c
 * @brief The reference (specification) kernels declared in qrt/ref/activation_ref.h: plain loops,
 *        compiled with the baseline flags only.
 */
#include "qrt/ref/activation_ref.h"

void qrt_relu_u8_ref(const uint8_t *x, size_t n, uint8_t zp, uint8_t *out) {
    QRT_RELU_BODY
}

void qrt_relu_s8_ref(const int8_t *x, size_t n, int8_t zp, int8_t *out) {
    QRT_RELU_BODY
}

void qrt_hardswish_lut_u8_ref(float s_in, int32_t zp_in, float s_out, int32_t zp_out,
                              uint8_t *lut) {
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

void qrt_sigmoid_lut_u8_ref(float s_in, int32_t zp_in, uint8_t *lut) {
    for (int32_t i = 0; i < 256; ++i) {
        const float x = s_in * (float)(i - zp_in);
        float y = 256.0f / (1.0f + expf(-x));
        y = y < 0.0f ? 0.0f : y;
        y = y > 255.0f ? 255.0f : y;
        lut[i] = (uint8_t)lrintf(y);
    }
}

void qrt_lut_u8_ref(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out) {
    QRT_LUT_BODY
}

void qrt_hardswish_luts_aten_ref(double s_in, int32_t zp_in, double s_out, int32_t zp_out,
                                 int is_signed, uint8_t *lut_vec, uint8_t *lut_scalar) {
    const int32_t qmin = is_signed ? -128 : 0, qmax = is_signed ? 127 : 255;
    const float sf = (float)s_in, premul = sf * -(float)zp_in;
    const float inv_vec = (float)(1.0 / s_out), inv_scalar = 1.0f / (float)s_out;
    for (int32_t i = 0; i < 256; ++i) {
        const int32_t q = qrt_code_of_byte_(i, is_signed);
        float x = fmaf((float)q, sf, premul);
        float t = x + 3.0f;
        t = t > 0.0f ? t : 0.0f;
        t = t < 6.0f ? t : 6.0f;
        lut_vec[i] = (uint8_t)qrt_aten_quantize_vec(x * t / 6.0f, inv_vec, zp_out, qmin, qmax);
        x = (float)((double)((float)q - (float)zp_in) * s_in);
        t = x + 3.0f;
        t = t > 0.0f ? t : 0.0f;
        t = t < 6.0f ? t : 6.0f;
        lut_scalar[i] =
            (uint8_t)qrt_aten_quantize_scalar(x * t / 6.0f, inv_scalar, zp_out, qmin, qmax);
    }
}

void qrt_sigmoid_luts_aten_ref(double s_in, int32_t zp_in, int is_signed, uint8_t *lut_vec,
                               uint8_t *lut_scalar) {
    const int32_t qmin = is_signed ? -128 : 0, qmax = is_signed ? 127 : 255;
    const int32_t zo = is_signed ? -128 : 0;
    const float sf = (float)s_in;
    for (int32_t i = 0; i < 256; ++i) {
        const int32_t q = qrt_code_of_byte_(i, is_signed);
        const float x = ((float)q - (float)zp_in) * sf;
        const float e = expf(-x);
        lut_vec[i] = (uint8_t)qrt_aten_quantize_vec(1.0f / (1.0f + e), 256.0f, zo, qmin, qmax);
        const float ys = (float)(1.0f / (1.0 + (double)e));
        lut_scalar[i] = (uint8_t)qrt_aten_quantize_scalar(ys, 256.0f, zo, qmin, qmax);
    }
}

void qrt_lut2_u8_ref(const uint8_t *lut_vec, const uint8_t *lut_scalar, const uint8_t *x, size_t n,
                     size_t nvec, uint8_t *out) {
    size_t i = 0;
    for (; i < nvec && i < n; ++i) out[i] = lut_vec[x[i]];
    for (; i < n; ++i) out[i] = lut_scalar[x[i]];
}

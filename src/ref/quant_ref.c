/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file quant_ref.c
 * @brief The reference quantize / dequantize kernels declared in qrt/quant.h (the loop bodies
 *        written once there), compiled with the baseline flags only.
 */
#include "qrt/quant.h"

void qrt_quantize_f32_u8_ref(const float *x, size_t n, float inv, float zpf, float qminf,
                             float qmaxf, uint8_t *out) {
    QRT_QUANT_FMA_BODY(uint8_t)
}

void qrt_quantize_f32_s8_ref(const float *x, size_t n, float inv, float zpf, float qminf,
                             float qmaxf, int8_t *out) {
    QRT_QUANT_FMA_BODY(int8_t)
}

void qrt_quantize_scalar_f32_u8_ref(const float *x, size_t n, float inv, float zpf, double qmin,
                                    double qmax, int32_t nan_code, uint8_t *out) {
    const float qminf = (float)qmin, qmaxf = (float)qmax;
    (void)nan_code;
    QRT_QUANT_SCALAR8_BODY(uint8_t, inv, zpf)
}

void qrt_quantize_scalar_f32_s8_ref(const float *x, size_t n, float inv, float zpf, double qmin,
                                    double qmax, int32_t nan_code, int8_t *out) {
    const float qminf = (float)qmin, qmaxf = (float)qmax;
    (void)nan_code;
    QRT_QUANT_SCALAR8_BODY(int8_t, inv, zpf)
}

void qrt_quantize_scalar_f32_s32_ref(const float *x, size_t n, float inv, float zpf, double qmin,
                                     double qmax, int32_t nan_code, int32_t *out) {
    (void)qmin, (void)qmax, (void)nan_code;
    QRT_QUANT_SCALAR32_BODY(inv, zpf)
}

void qrt_quantize_vparams_f32_u8_ref(const float *x, size_t n, const float *inv, const float *zpf,
                                     uint8_t *out) {
    const float qminf = 0.0f, qmaxf = 255.0f;
    QRT_QUANT_SCALAR8_BODY(uint8_t, inv[i], zpf[i])
}

void qrt_quantize_vparams_f32_s8_ref(const float *x, size_t n, const float *inv, const float *zpf,
                                     int8_t *out) {
    const float qminf = -128.0f, qmaxf = 127.0f;
    QRT_QUANT_SCALAR8_BODY(int8_t, inv[i], zpf[i])
}

void qrt_quantize_vparams_f32_s32_ref(const float *x, size_t n, const float *inv, const float *zpf,
                                      int32_t *out) {
    QRT_QUANT_SCALAR32_BODY(inv[i], zpf[i])
}

void qrt_dequantize_u8_f32_ref(const uint8_t *q, size_t n, float scale, int32_t zp, float *out) {
    QRT_DEQUANT_BODY
}

void qrt_dequantize_s8_f32_ref(const int8_t *q, size_t n, float scale, int32_t zp, float *out) {
    QRT_DEQUANT_BODY
}

void qrt_dequantize_s32_f32_ref(const int32_t *q, size_t n, float scale, int64_t zp, float *out) {
    QRT_DEQUANT32_BODY
}

void qrt_dequantize_pc_u8_f32_ref(const uint8_t *q, size_t n, double scale_d, float zpf,
                                  float *out) {
    QRT_DEQUANT_PC_BODY
}

void qrt_dequantize_pc_s8_f32_ref(const int8_t *q, size_t n, double scale_d, float zpf,
                                  float *out) {
    QRT_DEQUANT_PC_BODY
}

void qrt_dequantize_pc_s32_f32_ref(const int32_t *q, size_t n, double scale_d, float zpf,
                                   float *out) {
    QRT_DEQUANT_PC_BODY
}

void qrt_dequantize_pcv_u8_f32_ref(const uint8_t *q, size_t n, const double *scale_d,
                                   const float *zpf, float *out) {
    QRT_DEQUANT_PCV_BODY
}

void qrt_dequantize_pcv_s8_f32_ref(const int8_t *q, size_t n, const double *scale_d,
                                   const float *zpf, float *out) {
    QRT_DEQUANT_PCV_BODY
}

void qrt_dequantize_pcv_s32_f32_ref(const int32_t *q, size_t n, const double *scale_d,
                                    const float *zpf, float *out) {
    QRT_DEQUANT_PCV_BODY
}

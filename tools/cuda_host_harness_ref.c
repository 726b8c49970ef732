/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cuda_host_harness_ref.c
 * @brief qrt's C reference kernels behind a flat C ABI, for tests/test_cuda_math.py.
 *
 * Compiled as C11 with qrt's own flags (-O3 -ffp-contract=off) against the repository's include/
 * directory, so the CUDA kernels (run on the host by cuda_host_harness.cpp) are compared with the
 * very code qrt's CPU backend runs.  A reference that this checkout does not have yet reports
 * -1 (r_have_* = 0) and the test says so.
 */
#include <stdint.h>
#include "qrt/quant.h"
/* The references are compiled sources (src/ref/*.c, part of libqrt_core): build them here. */
#include "../src/ref/quant_ref.c"

#if defined(__has_include)
#if __has_include("qrt/ref/conv1d_ref.h")
#include "qrt/ref/conv1d_ref.h"
#include "../src/ref/conv1d_ref.c"
#define QRT_H_HAVE_CONV1D 1
#endif
#endif

#if defined(__has_include)
#if __has_include("qrt/ref/add_ref.h") && __has_include("qrt/ref/pool1d_ref.h") &&                 \
                                                        __has_include("qrt/ref/activation_ref.h")
#include "qrt/ref/activation_ref.h"
#include "qrt/ref/add_ref.h"
#include "qrt/ref/cat_ref.h"
#include "qrt/ref/pool1d_ref.h"
#include "../src/ref/activation_ref.c"
#include "../src/ref/add_ref.c"
#include "../src/ref/cat_ref.c"
#include "../src/ref/pool1d_ref.c"
#define QRT_H_HAVE_OPS 1
#endif
#endif

/** 1 when qrt_conv1d_u8_ref() is compiled in. */
int r_have_conv1d(void) {
#ifdef QRT_H_HAVE_CONV1D
    return 1;
#else
    return 0;
#endif
}

/**
 * qrt_conv1d_u8_ref() from the int64[21] parameter vector of the CUDA kernels (same field
 * meaning, see qrt_cuda_math.cuh).  Returns the qrt_status, or -1 without the reference.
 */
int r_conv1d(const long long *P, const uint8_t *x, const int8_t *w, const int32_t *wzero,
             const int32_t *bias_q, const float *scale, const float *bias_f, void *out) {
#ifdef QRT_H_HAVE_CONV1D
    qrt_conv1d_params p;
    p.n = (uint32_t)P[0];
    p.c_in = (uint32_t)P[1];
    p.c_out = (uint32_t)P[2];
    p.len_in = (uint32_t)P[3];
    p.len_out = (uint32_t)P[4];
    p.kernel = (uint32_t)P[5];
    p.stride = (uint32_t)P[6];
    p.dilation = (uint32_t)P[7];
    p.pad_left = (uint32_t)P[8];
    p.groups = (uint32_t)P[9];
    p.x_stride_n = P[10];
    p.x_stride_c = P[11];
    p.x_stride_t = P[12];
    p.y_stride_n = P[13];
    p.y_stride_c = P[14];
    p.y_stride_t = P[15];
    p.input_zero = (int32_t)P[16];
    p.output_zero = (int32_t)P[17];
    p.output_min = (int32_t)P[18];
    p.output_max = (int32_t)P[19];
    p.out_kind = (uint32_t)P[20];
    qrt_conv1d_quant q;
    q.weight_zero = wzero;
    q.bias_q = bias_q;
    q.scale = scale;
    q.bias_f = bias_f;
    return (int)qrt_conv1d_u8_ref(&p, x, w, &q, out);
#else
    (void)P, (void)x, (void)w, (void)wzero, (void)bias_q, (void)scale, (void)bias_f, (void)out;
    return -1;
#endif
}

void r_quantize_f32_u8(const float *x, long long n, float inv, float zpf, float qminf, float qmaxf,
                       uint8_t *out) {
    qrt_quantize_f32_u8_ref(x, (size_t)n, inv, zpf, qminf, qmaxf, out);
}

void r_quantize_f32_s8(const float *x, long long n, float inv, float zpf, float qminf, float qmaxf,
                       int8_t *out) {
    qrt_quantize_f32_s8_ref(x, (size_t)n, inv, zpf, qminf, qmaxf, out);
}

void r_dequantize_u8_f32(const uint8_t *q, long long n, float scale, int zp, float *out) {
    qrt_dequantize_u8_f32_ref(q, (size_t)n, scale, zp, out);
}

void r_dequantize_s8_f32(const int8_t *q, long long n, float scale, int zp, float *out) {
    qrt_dequantize_s8_f32_ref(q, (size_t)n, scale, zp, out);
}

/** 1 when the element-wise and pooling references (add, relu, pool1d) are compiled in. */
int r_have_ops(void) {
#ifdef QRT_H_HAVE_OPS
    return 1;
#else
    return 0;
#endif
}

#ifdef QRT_H_HAVE_OPS
/** qrt_add_u8_ref() with qrt_add_qnnp_params_init(); returns its status. */
int r_add_u8(const uint8_t *a, const uint8_t *b, long long n, float sa, int za, float sb, int zb,
             float so, int zo, int relu, uint8_t *out) {
    qrt_add_qnnp_params p;
    const qrt_status st = qrt_add_qnnp_params_init(sa, za, sb, zb, so, zo, relu, &p);
    if (st != QRT_OK) return (int)st;
    qrt_add_u8_ref(&p, a, b, (size_t)n, out);
    return 0;
}

void r_relu_u8(const uint8_t *x, long long n, int zp, uint8_t *out) {
    qrt_relu_u8_ref(x, (size_t)n, (uint8_t)zp, out);
}

/** Pooling from the CUDA kernels' int64[9] parameter vector (+ zero point and scale). */
static qrt_pool1d_params r_pool_params(const long long *P, int zp, float scale) {
    qrt_pool1d_params p;
    p.rows = (uint32_t)P[0];
    p.len_in = (uint32_t)P[1];
    p.len_out = (uint32_t)P[2];
    p.kernel = (uint32_t)P[3];
    p.stride = (uint32_t)P[4];
    p.dilation = (uint32_t)P[5];
    p.pad = (uint32_t)P[6];
    p.mode = (int32_t)P[7];
    p.count_include_pad = (int32_t)P[8];
    p.zero = zp;
    p.qmin = 0;
    p.qmax = 255;
    p.scale = scale;
    return p;
}

int r_max_pool1d_u8(const long long *P, const uint8_t *x, uint8_t *out) {
    const qrt_pool1d_params p = r_pool_params(P, 0, 0.0f);
    const qrt_status st = qrt_pool1d_check(&p);
    if (st == QRT_OK) qrt_max_pool1d_u8_ref(&p, x, out);
    return (int)st;
}

int r_adaptive_avg_pool1d_u8(const long long *P, const uint8_t *x, uint8_t *out) {
    qrt_pool1d_params p;
    p.rows = (uint32_t)P[0];
    p.len_in = (uint32_t)P[1];
    p.len_out = (uint32_t)P[2];
    p.kernel = p.stride = p.dilation = 1;
    p.pad = 0;
    p.zero = 0;
    p.qmin = 0;
    p.qmax = 255;
    p.mode = QRT_AVG_POOL_GENERIC;
    p.count_include_pad = 1;
    p.scale = 0.0f;
    qrt_adaptive_avg_pool1d_u8_ref(&p, x, out);
    return 0;
}

void r_lut2_u8(const uint8_t *x, long long n, const uint8_t *lut_vec, const uint8_t *lut_tail,
               long long nvec, uint8_t *out) {
    qrt_lut2_u8_ref(lut_vec, lut_tail, x, (size_t)n, (size_t)nvec, out);
}

/** qrt_requant_copy_{u8,s8}_ref: `is_signed` picks the int8 variant. */
void r_requant_copy(int is_signed, const void *x, long long rows, long long len, float in_scale,
                    int in_zero, float inv_out, float out_zero_f, float qminf, float qmaxf,
                    void *out, long long out_stride) {
    qrt_requant_copy_params p;
    p.in_scale = in_scale;
    p.in_zero = in_zero;
    p.inv_out = inv_out;
    p.out_zero_f = out_zero_f;
    p.qmin = qminf;
    p.qmax = qmaxf;
    if (is_signed)
        qrt_requant_copy_s8_ref(&p, (const int8_t *)x, (size_t)rows, (size_t)len, (size_t)len,
                                (int8_t *)out, (size_t)out_stride);
    else
        qrt_requant_copy_u8_ref(&p, (const uint8_t *)x, (size_t)rows, (size_t)len, (size_t)len,
                                (uint8_t *)out, (size_t)out_stride);
}

int r_avg_pool1d_u8(const long long *P, const uint8_t *x, int zp, float scale, uint8_t *out) {
    const qrt_pool1d_params p = r_pool_params(P, zp, scale);
    const qrt_status st = qrt_pool1d_check(&p);
    if (st == QRT_OK) qrt_avg_pool1d_u8_ref(&p, x, out);
    return (int)st;
}
#endif

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

#if defined(__has_include)
#if __has_include("qrt/ref/conv1d_ref.h")
#include "qrt/ref/conv1d_ref.h"
#define QRT_H_HAVE_CONV1D 1
#endif
#endif

/** 1 when qrt_conv1d_u8_ref() is compiled in. */
int r_have_conv1d(void)
{
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
             const int32_t *bias_q, const float *scale, const float *bias_f, void *out)
{
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

void r_quantize_f32_u8(const float *x, long long n, float inv, float zpf, float qminf,
                       float qmaxf, uint8_t *out)
{
    qrt_quantize_f32_u8_ref(x, (size_t)n, inv, zpf, qminf, qmaxf, out);
}

void r_quantize_f32_s8(const float *x, long long n, float inv, float zpf, float qminf,
                       float qmaxf, int8_t *out)
{
    qrt_quantize_f32_s8_ref(x, (size_t)n, inv, zpf, qminf, qmaxf, out);
}

void r_dequantize_u8_f32(const uint8_t *q, long long n, float scale, int zp, float *out)
{
    qrt_dequantize_u8_f32_ref(q, (size_t)n, scale, zp, out);
}

void r_dequantize_s8_f32(const int8_t *q, long long n, float scale, int zp, float *out)
{
    qrt_dequantize_s8_f32_ref(q, (size_t)n, scale, zp, out);
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cuda_host_harness.cpp
 * @brief Runs the CUDA kernels of qrt/backends/cuda/ (*.cu) on the CPU, unchanged.
 *
 * Built by tests/test_cuda_math.py with `g++ -x c++ -O2 -ffp-contract=off` (never -ffast-math)
 * into a shared library together with cuda_host_harness_ref.c (qrt's C reference kernels).  The
 * CUDA built-ins are defined away: `__global__` is empty and blockIdx/threadIdx/blockDim/gridDim
 * are host variables, so every kernel body, including its grid-stride loop and index arithmetic,
 * runs here thread by thread over a small simulated grid.  qrt_cuda_math.cuh's host branch is
 * selected (no __CUDA_ARCH__); tests/test_cuda_compile.py checks that the device branch uses only
 * `.rn` float instructions, so both branches compute the same IEEE operations.
 */
#include <stdint.h>

#define __global__
namespace {
struct qrt_dim3 {
    unsigned int x, y, z;
};
qrt_dim3 blockIdx, threadIdx, blockDim, gridDim;
} // namespace

#include "qrt_conv1d.cu"
#include "qrt_eltwise.cu"
#include "qrt_pool1d.cu"
#include "qrt_quant.cu"

/* Run body once per simulated thread of a grid x block launch (threads are independent). */
#define QRT_H_LAUNCH(grid, block, call)                                                            \
    do {                                                                                           \
        gridDim.x = (unsigned)(grid);                                                              \
        blockDim.x = (unsigned)(block);                                                            \
        gridDim.y = gridDim.z = blockDim.y = blockDim.z = 1;                                       \
        for (unsigned b_ = 0; b_ < gridDim.x; ++b_)                                                \
            for (unsigned t_ = 0; t_ < blockDim.x; ++t_) {                                         \
                blockIdx.x = b_;                                                                   \
                threadIdx.x = t_;                                                                  \
                call;                                                                              \
            }                                                                                      \
    } while (0)

extern "C" {

void h_conv1d(int grid, int block, const long long *P, const uint8_t *x, const int8_t *w,
              const int32_t *wzero, const int32_t *bias_q, const float *scale, const float *bias_f,
              void *out) {
    QRT_H_LAUNCH(grid, block, qrt_cu_conv1d(P, x, w, wzero, bias_q, scale, bias_f, out));
}

void h_conv1d_dot_dp4a(int grid, int block, const long long *P, const uint8_t *x, const int8_t *w,
                       const int32_t *wzero, const int32_t *bias_q, const float *scale,
                       const float *bias_f, const int32_t *wsum, void *out) {
    QRT_H_LAUNCH(grid, block,
                 qrt_cu_conv1d_dot_dp4a(P, x, w, wzero, bias_q, scale, bias_f, wsum, out));
}

void h_quantize_f32_u8(int grid, int block, const float *x, long long n, float inv, float zpf,
                       float qminf, float qmaxf, uint8_t *out) {
    QRT_H_LAUNCH(grid, block, qrt_cu_quantize_f32_u8(x, n, inv, zpf, qminf, qmaxf, out));
}

void h_quantize_f32_s8(int grid, int block, const float *x, long long n, float inv, float zpf,
                       float qminf, float qmaxf, int8_t *out) {
    QRT_H_LAUNCH(grid, block, qrt_cu_quantize_f32_s8(x, n, inv, zpf, qminf, qmaxf, out));
}

void h_dequantize_u8_f32(int grid, int block, const uint8_t *q, long long n, float scale, int zp,
                         float *out) {
    QRT_H_LAUNCH(grid, block, qrt_cu_dequantize_u8_f32(q, n, scale, zp, out));
}

void h_dequantize_s8_f32(int grid, int block, const int8_t *q, long long n, float scale, int zp,
                         float *out) {
    QRT_H_LAUNCH(grid, block, qrt_cu_dequantize_s8_f32(q, n, scale, zp, out));
}

void h_relu_u8(int grid, int block, const uint8_t *q, long long n, int zp, uint8_t *out) {
    QRT_H_LAUNCH(grid, block, qrt_cu_relu_u8(q, n, zp, out));
}

void h_relu_s8(int grid, int block, const int8_t *q, long long n, int zp, int8_t *out) {
    QRT_H_LAUNCH(grid, block, qrt_cu_relu_s8(q, n, zp, out));
}

void h_add_u8(int grid, int block, const uint8_t *a, const uint8_t *b, long long n, int a_zp,
              int b_zp, int y_zp, float a_os, float b_os, int y_min, int y_max, uint8_t *out) {
    QRT_H_LAUNCH(grid, block,
                 qrt_cu_add_u8(a, b, n, a_zp, b_zp, y_zp, a_os, b_os, y_min, y_max, out));
}

void h_max_pool1d_u8(int grid, int block, const long long *P, const uint8_t *x, uint8_t *out) {
    QRT_H_LAUNCH(grid, block, qrt_cu_max_pool1d_u8(P, x, out));
}

void h_avg_pool1d_u8(int grid, int block, const long long *P, const uint8_t *x, int zp, float scale,
                     uint8_t *out) {
    QRT_H_LAUNCH(grid, block, qrt_cu_avg_pool1d_u8(P, x, zp, scale, out));
}

void h_adaptive_avg_pool1d_u8(int grid, int block, const long long *P, const uint8_t *x,
                              uint8_t *out) {
    QRT_H_LAUNCH(grid, block, qrt_cu_adaptive_avg_pool1d_u8(P, x, out));
}

void h_lut_u8(int grid, int block, const uint8_t *x, long long n, const uint8_t *lut_vec,
              const uint8_t *lut_tail, long long nvec, uint8_t *out) {
    QRT_H_LAUNCH(grid, block, qrt_cu_lut_u8(x, n, lut_vec, lut_tail, nvec, out));
}

void h_requant_copy_u8(int grid, int block, const uint8_t *x, long long rows, long long len,
                       float in_scale, int in_zero, float inv_out, float out_zero_f, float qminf,
                       float qmaxf, uint8_t *out, long long out_offset, long long out_stride) {
    QRT_H_LAUNCH(grid, block,
                 qrt_cu_requant_copy_u8(x, rows, len, in_scale, in_zero, inv_out, out_zero_f, qminf,
                                        qmaxf, out, out_offset, out_stride));
}

void h_requant_copy_s8(int grid, int block, const int8_t *x, long long rows, long long len,
                       float in_scale, int in_zero, float inv_out, float out_zero_f, float qminf,
                       float qmaxf, int8_t *out, long long out_offset, long long out_stride) {
    QRT_H_LAUNCH(grid, block,
                 qrt_cu_requant_copy_s8(x, rows, len, in_scale, in_zero, inv_out, out_zero_f, qminf,
                                        qmaxf, out, out_offset, out_stride));
}

} /* extern "C" */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qrt_quant.cu
 * @brief Per-tensor quantize (float32 -> quint8/qint8) and dequantize (8-bit -> float32) on the
 *        GPU, with include/qrt/quant.h's arithmetic (via qrt_cuda_math.cuh).  Contiguous data.
 */
#include "qrt_cuda_math.cuh"

/** @brief out[i] = clamp(rne(min(fmaf(x[i], inv, zpf), 2^31-128))) as uint8. */
extern "C" __global__ void qrt_cu_quantize_f32_u8(const float *__restrict__ x, long long n,
                                                  float inv, float zpf, float qminf, float qmaxf,
                                                  uint8_t *__restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = (uint8_t)qrt_cu_quantize_fma(x[i], inv, zpf, qminf, qmaxf);
}

/** @brief As qrt_cu_quantize_f32_u8, to int8. */
extern "C" __global__ void qrt_cu_quantize_f32_s8(const float *__restrict__ x, long long n,
                                                  float inv, float zpf, float qminf, float qmaxf,
                                                  int8_t *__restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = (int8_t)qrt_cu_quantize_fma(x[i], inv, zpf, qminf, qmaxf);
}

/** @brief out[i] = f32(scale * f32(q[i] - zp)). */
extern "C" __global__ void qrt_cu_dequantize_u8_f32(const uint8_t *__restrict__ q, long long n,
                                                    float scale, int zp, float *__restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = qrt_cu_dequantize((int32_t)q[i], scale, zp);
}

/** @brief As qrt_cu_dequantize_u8_f32, from int8. */
extern "C" __global__ void qrt_cu_dequantize_s8_f32(const int8_t *__restrict__ q, long long n,
                                                    float scale, int zp, float *__restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = qrt_cu_dequantize((int32_t)q[i], scale, zp);
}

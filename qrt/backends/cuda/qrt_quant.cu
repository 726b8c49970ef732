/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qrt_quant.cu
 * @brief Per-tensor quantize (float32 -> quint8/qint8), dequantize (8-bit -> float32) and cat's
 *        requantizing copy on the GPU, with include/qrt/quant.h's and cat_ref.h's arithmetic
 *        (via qrt_cuda_math.cuh).
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

/**
 * @brief cat: out[out_offset + r*out_stride + i] = requant(x[r*len + i]) for r < rows, i < len
 *        (x contiguous [rows][len]); one launch per input tensor.  quint8 codes.
 */
extern "C" __global__ void qrt_cu_requant_copy_u8(const uint8_t *__restrict__ x, long long rows,
                                                  long long len, float in_scale, int in_zero,
                                                  float inv_out, float out_zero_f, float qminf,
                                                  float qmaxf, uint8_t *__restrict__ out,
                                                  long long out_offset, long long out_stride)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows * len;
         i += (long long)gridDim.x * blockDim.x)
        out[out_offset + (i / len) * out_stride + i % len] = (uint8_t)qrt_cu_requant_copy(
            (int32_t)x[i], in_scale, in_zero, inv_out, out_zero_f, qminf, qmaxf);
}

/** @brief As qrt_cu_requant_copy_u8, for qint8 codes. */
extern "C" __global__ void qrt_cu_requant_copy_s8(const int8_t *__restrict__ x, long long rows,
                                                  long long len, float in_scale, int in_zero,
                                                  float inv_out, float out_zero_f, float qminf,
                                                  float qmaxf, int8_t *__restrict__ out,
                                                  long long out_offset, long long out_stride)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < rows * len;
         i += (long long)gridDim.x * blockDim.x)
        out[out_offset + (i / len) * out_stride + i % len] = (int8_t)qrt_cu_requant_copy(
            (int32_t)x[i], in_scale, in_zero, inv_out, out_zero_f, qminf, qmaxf);
}

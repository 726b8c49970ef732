/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qrt_eltwise.cu
 * @brief Quantized relu, add / add_relu (QNNPACK fixed point) and table lookups (hardswish,
 *        sigmoid) on the GPU.  Contiguous data.
 */
#include "qrt_cuda_math.cuh"

/** @brief out[i] = max(q[i], zp) (uint8; the qparams are unchanged). */
extern "C" __global__ void qrt_cu_relu_u8(const uint8_t *__restrict__ q, long long n, int zp,
                                          uint8_t *__restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = (uint8_t)qrt_cu_relu((int32_t)q[i], zp);
}

/** @brief As qrt_cu_relu_u8, for int8. */
extern "C" __global__ void qrt_cu_relu_s8(const int8_t *__restrict__ q, long long n, int zp,
                                          int8_t *__restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = (int8_t)qrt_cu_relu((int32_t)q[i], zp);
}

/**
 * @brief quint8 add with QNNPACK's fixed-point arithmetic; parameters are derived per thread from
 *        the float ratios by qrt_cu_add_params_of (cheap, and one definition shared with the host).
 * @param a_os f32(f32(a_scale) / f32(out_scale)); b_os likewise; both checked by the caller
 * @param y_min 0, or y_zp for add_relu; y_max 255
 */
extern "C" __global__ void qrt_cu_add_u8(const uint8_t *__restrict__ a,
                                         const uint8_t *__restrict__ b, long long n, int a_zp,
                                         int b_zp, int y_zp, float a_os, float b_os, int y_min,
                                         int y_max, uint8_t *__restrict__ out)
{
    const qrt_cu_add_params p = qrt_cu_add_params_of(a_zp, b_zp, y_zp, a_os, b_os, y_min, y_max);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = qrt_cu_add_q8(a[i], b[i], &p);
}

/** @brief out[i] = (i < nvec ? lut_vec : lut_tail)[x[i]] over raw bytes (quint8 or qint8 codes). */
extern "C" __global__ void qrt_cu_lut_u8(const uint8_t *__restrict__ x, long long n,
                                         const uint8_t *__restrict__ lut_vec,
                                         const uint8_t *__restrict__ lut_tail, long long nvec,
                                         uint8_t *__restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = qrt_cu_lut2(lut_vec, lut_tail, x[i], i, nvec);
}

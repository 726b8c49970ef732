/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qrt_pool1d.cu
 * @brief quint8 max_pool1d / avg_pool1d (QNNPACK semantics) over a contiguous [rows][len_in] input.
 */
#include "qrt_cuda_math.cuh"

/** @brief out[r][t] = max over the window's real taps.  P: int64[9] qrt_cu_pool1d_params. */
extern "C" __global__ void qrt_cu_max_pool1d_u8(const long long *__restrict__ P,
                                                const uint8_t *__restrict__ x,
                                                uint8_t *__restrict__ out)
{
    const qrt_cu_pool1d_params p = *(const qrt_cu_pool1d_params *)P;
    const int64_t total = p.rows * p.len_out;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / p.len_out, t = i % p.len_out;
        out[i] = qrt_cu_max_pool1d(&p, x + r * p.len_in, t);
    }
}

/** @brief out[r][t] = average over the window (QNNP or GENERIC mode, see the params);
 *         scale = f32(s / f32(s * kernel)) for QNNP mode. */
extern "C" __global__ void qrt_cu_avg_pool1d_u8(const long long *__restrict__ P,
                                                const uint8_t *__restrict__ x, int zp, float scale,
                                                uint8_t *__restrict__ out)
{
    const qrt_cu_pool1d_params p = *(const qrt_cu_pool1d_params *)P;
    const int64_t total = p.rows * p.len_out;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / p.len_out, t = i % p.len_out;
        out[i] = qrt_cu_avg_pool1d(&p, x + r * p.len_in, t, zp, scale);
    }
}

/** @brief out[r][t] = ATen's adaptive average of row r's window t.  P: int64[3] {rows, L, O}. */
extern "C" __global__ void qrt_cu_adaptive_avg_pool1d_u8(const long long *__restrict__ P,
                                                         const uint8_t *__restrict__ x,
                                                         uint8_t *__restrict__ out)
{
    const int64_t rows = P[0], L = P[1], O = P[2];
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows * O;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = qrt_cu_adaptive_avg_pool1d(x + (i / O) * L, L, O, i % O);
}

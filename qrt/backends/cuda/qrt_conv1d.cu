/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qrt_conv1d.cu
 * @brief conv1d / linear / dynamic linear on the GPU.  One thread per output element; the
 *        arithmetic is qrt_cuda_math.cuh's, i.e. include/qrt/ref/conv1d_ref.h's.
 */
#include "qrt_cuda_math.cuh"

/**
 * @brief General conv1d (any groups, depthwise included; any strides, padding, dilation).
 * @param[in]  P      int64[21] qrt_cu_conv1d_params
 * @param[in]  x      uint8 input, element (n, c, t) at the params' x strides
 * @param[in]  w      [c_out][c_in/groups][kernel] int8
 * @param[in]  wzero  [c_out] int32 weight zero points
 * @param[in]  bias_q [c_out] int32 quantized bias (OUT_U8)
 * @param[in]  scale  [c_out] float requantization (OUT_U8) or output (OUT_F32) scale
 * @param[in]  bias_f [c_out] float bias (OUT_F32)
 * @param[out] out    uint8 or float32 at the params' y strides
 */
extern "C" __global__ void qrt_cu_conv1d(const long long *__restrict__ P,
                                         const uint8_t *__restrict__ x,
                                         const int8_t *__restrict__ w,
                                         const int32_t *__restrict__ wzero,
                                         const int32_t *__restrict__ bias_q,
                                         const float *__restrict__ scale,
                                         const float *__restrict__ bias_f, void *__restrict__ out)
{
    const qrt_cu_conv1d_params p = *(const qrt_cu_conv1d_params *)P;
    const int64_t total = p.n * p.c_out * p.len_out;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        /* t fastest: neighbouring threads read neighbouring inputs and share the weights. */
        const int64_t t = i % p.len_out, oc = (i / p.len_out) % p.c_out,
                      n = i / (p.len_out * p.c_out);
        const int32_t acc = qrt_cu_conv1d_acc(&p, x, w, wzero[oc], n, oc, t);
        const int64_t o = qrt_cu_conv1d_out_index(&p, n, oc, t);
        if (p.out_kind == QRT_CU_OUT_F32)
            ((float *)out)[o] = qrt_cu_dequant_acc_f32(acc, scale[oc], bias_f[oc]);
        else
            ((uint8_t *)out)[o] = qrt_cu_conv1d_finish_u8(&p, acc, bias_q[oc], scale[oc]);
    }
}

/**
 * @brief Kernel-1, stride-1, unpadded, ungrouped conv1d over an input with unit channel stride
 *        (linear layers: rows = n * len_in, c = features), four channels per __dp4a.
 * @param[in] wsum [c_out] int32 sum of each output channel's weights
 * Other parameters as qrt_cu_conv1d; the host selects this kernel only when
 * params.kernel == 1, stride == 1, pad_left == 0, groups == 1 and xs_c == 1.
 */
extern "C" __global__ void qrt_cu_conv1d_dot_dp4a(const long long *__restrict__ P,
                                                  const uint8_t *__restrict__ x,
                                                  const int8_t *__restrict__ w,
                                                  const int32_t *__restrict__ wzero,
                                                  const int32_t *__restrict__ bias_q,
                                                  const float *__restrict__ scale,
                                                  const float *__restrict__ bias_f,
                                                  const int32_t *__restrict__ wsum,
                                                  void *__restrict__ out)
{
    const qrt_cu_conv1d_params p = *(const qrt_cu_conv1d_params *)P;
    const int64_t total = p.n * p.c_out * p.len_out;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        /* oc fastest: a warp reads one input row (broadcast) against 32 weight rows. */
        const int64_t oc = i % p.c_out, t = (i / p.c_out) % p.len_out,
                      n = i / (p.c_out * p.len_out);
        const uint8_t *xr = x + n * p.xs_n + t * p.xs_t;
        const int32_t acc = qrt_cu_dot_acc_dp4a(xr, w + oc * p.c_in, p.c_in,
                                                (int32_t)p.input_zero, wzero[oc], wsum[oc]);
        const int64_t o = qrt_cu_conv1d_out_index(&p, n, oc, t);
        if (p.out_kind == QRT_CU_OUT_F32)
            ((float *)out)[o] = qrt_cu_dequant_acc_f32(acc, scale[oc], bias_f[oc]);
        else
            ((uint8_t *)out)[o] = qrt_cu_conv1d_finish_u8(&p, acc, bias_q[oc], scale[oc]);
    }
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file requant.h
 * @brief Scalar requantization helpers shared by every conv1d / linear variant.
 *
 * Each helper equals what one x86 SSE2/AVX instruction sequence in torch 2.13's QNNPACK computes
 * (pytorch_qnnpack q8conv / q8gemm / q8gemm_dq SSE2 micro-kernels), so SIMD variants that use the
 * same instructions are bit-exact with the reference by construction.
 */
#ifndef QRT_REQUANT_H
#define QRT_REQUANT_H

#include <math.h>
#include <stdint.h>

/** Equals cvtps2dq under round-to-nearest-even: NaN or |y| >= 2^31 -> INT32_MIN ("indefinite"). */
static inline int32_t qrt_cvt_f32_s32_rne(float y) {
    if (!(y >= -2147483648.0f && y < 2147483648.0f)) return INT32_MIN;
    return (int32_t)rintf(y);
}

/** Equals paddd: two's-complement wrapping int32 addition (torch adds the int32 bias this way). */
static inline int32_t qrt_add_s32_wrap(int32_t a, int32_t b) {
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/**
 * @brief QNNPACK fp32 requantization of one accumulator to quint8.
 *
 * y = f32(f32(acc) * scale); q = clamp(rne(y) + zero, lo, hi), where rne() is cvtps2dq
 * (so y >= 2^31 gives INT32_MIN and clamps to lo, exactly as torch's SSE2 kernel does; the
 * later packssdw / paddsw / packuswb saturations never change the clamped value).
 * @param[in] acc   accumulator plus int32 bias, already wrapped to int32
 * @param[in] scale f32(f32(w_scale * in_scale) * f32(1 / out_scale))
 * @param[in] zero  output zero point, 0..255
 * @param[in] lo,hi clamp bounds, 0 <= lo <= hi <= 255 (relu: lo = zero)
 */
static inline uint8_t qrt_requant_fp32_u8(int32_t acc, float scale, int32_t zero, int32_t lo,
                                          int32_t hi) {
    const float y = (float)acc * scale;
    int64_t r = (int64_t)qrt_cvt_f32_s32_rne(y) + zero;
    r = r < lo ? lo : r;
    r = r > hi ? hi : r;
    return (uint8_t)r;
}

/**
 * @brief QNNPACK dynamic-linear output: f32(f32(f32(acc) * scale) + bias).
 * @param[in] scale f32(w_scale * f32(in_scale))
 * @param[in] bias  float bias (0.0f when the layer has none)
 */
static inline float qrt_dequant_acc_f32(int32_t acc, float scale, float bias) {
    const float y = (float)acc * scale;
    return y + bias;
}

#endif /* QRT_REQUANT_H */

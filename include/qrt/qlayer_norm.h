/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qlayer_norm.h
 * @brief Quantized LayerNorm over contiguous rows (qrt/ops/qarith.py layer_norm): torch
 *        2.13's quantized::layer_norm CPU kernel (QuantizedOpKernels.cpp
 *        quantized_normalize_kernel), which every engine runs, step for step:
 *        S = sum of the codes, Q = sum of their squares (int64, exact), ms = f32(S) / f32(n),
 *        mean = ms - zx, var = max(fma(-ms, ms, f32(Q) / f32(n)), 0),
 *        s = f32(f64(sx) / sqrt(f64(f32(var * sx) * sx) + eps)); per element
 *        u = (f32(q - zx) - mean) * s, y = fma(u, w, b) (w = 1, b = 0 where absent);
 *        the first n - n % 32 elements of a row quantize as torch's vector loop,
 *        clamp(rne(f32(y * inv)) + zy), the rest as its scalar tail,
 *        clamp(rne(f32(f32(y * inv) + zy))), inv = f32(1 / sy). NaN quantizes to qmin.
 */
#ifndef QRT_QLAYER_NORM_H
#define QRT_QLAYER_NORM_H

#include <stddef.h>
#include <stdint.h>

/** @brief rows x n codes (uint8 when is_signed = 0, int8 otherwise) from x to y; w, b: [n]
 *  float32 or NULL; qmin / qmax: the output dtype's range. */
void qrt_qlayer_norm_rows(const void *x, void *y, int is_signed, size_t rows, size_t n,
                          float sx, int32_t zx, float sy, int32_t zy, double eps,
                          const float *w, const float *b, int32_t qmin, int32_t qmax);

#endif /* QRT_QLAYER_NORM_H */

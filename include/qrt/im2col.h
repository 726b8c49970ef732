/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file im2col.h
 * @brief qrt_im2col_u8(): the NCHW -> conv1d data layout step of quantized conv2d.
 *
 * qrt's conv2d is a conv1d over an im2col layout of its uint8 input (docs/architecture.md,
 * "conv2d"): the window of output (oy, ox) and tap (ky, kx) reads input row
 * iy = oy*stride_h + ky*dil_h - pad_top and column ix = ox*stride_w + kx*dil_w - pad_left; a
 * position outside the image reads @c pad_value (the input zero point, so it adds
 * (zp - zp) * w = 0 to the accumulator, as qnnpack's zero buffer does).  Two layouts:
 *  - QRT_IM2COL_CK_P: col[n][c][ky][kx][oy][ox]: a conv1d of kernel 1 over c*kh*kw channels
 *    (grouped and dense convolutions: a GEMM);
 *  - QRT_IM2COL_C_PK: col[n][c][oy][ox][ky][kx]: a conv1d of kernel kh*kw and stride kh*kw
 *    (depthwise convolutions, one input channel per group).
 * Pure data movement: the arithmetic is the conv1d reference's (qrt/ref/conv1d_ref.h).
 */
#ifndef QRT_IM2COL_H
#define QRT_IM2COL_H

#include <stdint.h>
#include "qrt/types.h"

#define QRT_IM2COL_CK_P 0u
#define QRT_IM2COL_C_PK 1u

/** Geometry of one call. Field order is mirrored in _kernels.pxd. */
typedef struct {
    uint32_t n, c, h, w;                  /**< input batch, channels, height, width */
    uint32_t kh, kw, sh, sw, dh, dw;      /**< kernel, stride, dilation (all >= 1) */
    uint32_t pad_top, pad_left;           /**< zero-point padding before the image */
    uint32_t ho, wo;                      /**< output height and width (>= 1) */
    int64_t x_stride_n, x_stride_c, x_stride_h, x_stride_w; /**< input element strides */
    int32_t pad_value;                    /**< 0..255 */
    uint32_t layout;                      /**< QRT_IM2COL_CK_P or QRT_IM2COL_C_PK */
} qrt_im2col_params;

/**
 * @brief The precondition gate: QRT_OK, QRT_ERR_ARG (zero size, bad pad value or layout) or
 *        QRT_ERR_OVERFLOW (the column buffer would not be addressable with int64 / 2^62).
 */
qrt_status qrt_im2col_check(const qrt_im2col_params *p);

/** Column buffer elements: n * c * kh * kw * ho * wo (0 when the gate fails). */
uint64_t qrt_im2col_size(const qrt_im2col_params *p);

/** @brief Write the qrt_im2col_size(p) column bytes of @p x into @p col (contiguous). */
qrt_status qrt_im2col_u8(const qrt_im2col_params *p, const uint8_t *x, uint8_t *col);

#ifndef QRT_IM2COL_MT_MIN_BYTES
/** Column bytes below which qrt_im2col_u8_mt() runs on the calling thread only. */
#define QRT_IM2COL_MT_MIN_BYTES 65536.0
#endif
/** Run-time threshold (tests lower it to cut tiny calls); in src/im2col.c. */
extern double qrt_im2col_mt_min_bytes;

/** @brief Tasks qrt_im2col_u8_mt() runs for `threads` threads (1: not cut; CK_P only). */
int qrt_im2col_parts(const qrt_im2col_params *p, int threads);

/**
 * @brief qrt_im2col_u8() on up to `threads` threads of the qrt pool (include/qrt/threadpool.h):
 *        the CK_P rows are cut into balanced runs, each written by one task; the same bytes.
 */
qrt_status qrt_im2col_u8_mt(const qrt_im2col_params *p, const uint8_t *x, uint8_t *col,
                            int threads);

#endif /* QRT_IM2COL_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool2d.h
 * @brief Direct 2-d max and average pooling of NCHW codes (quint8 / qint8), row by row: per
 *        output row, the window's image rows are reduced into one padded row (max, or int32
 *        sums of x - zero), then each output reduces its kw taps of that row.  No im2col.
 *
 * Semantics (the same as the 1-d kernels, include/qrt/ref/pool1d_ref.h, in two dimensions):
 *  - max: the largest code among the window's real positions (iy in [0, h), ix in [0, w));
 *    a window with none gives qmin (padding never wins, ATen's generic kernel).
 *  - average: acc = sum over the window's real positions of (x - zero), then
 *    qrt_avg_pool1d_round_() with mode QNNP (y = rne(f32(acc) * scale) + zero) or GENERIC
 *    (div = divisor if > 0, else count_include_pad ? pool_h * pool_w : real positions, with
 *    pool = min(start + k, len + pad) - start per axis; y = rne(f32(f32(acc) * f32(1 / div))
 *    + zero)), clamped to [qmin, qmax].
 * Output [n, c, ho, wo] contiguous; the input any non-negative element strides.
 */
#ifndef QRT_POOL2D_H
#define QRT_POOL2D_H

#include <stddef.h>
#include <stdint.h>

#include "qrt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One 2-d pooling call. */
typedef struct {
    int64_t n, c, h, w;             /**< input, each >= 1 */
    int64_t ho, wo;                 /**< output, each >= 1 */
    int64_t xs_n, xs_c, xs_h, xs_w; /**< input strides in elements, each >= 0 */
    int32_t kh, kw, sh, sw;         /**< >= 1 */
    int32_t ph, pw, dh, dw;         /**< pad in [0, kernel * dilation], dilation >= 1 */
    int32_t zero, qmin, qmax;       /**< qparams shared by input and output; the dtype range */
    int32_t mode;                   /**< average: QRT_AVG_POOL_QNNP or QRT_AVG_POOL_GENERIC */
    int32_t count_include_pad;      /**< average, GENERIC */
    int32_t divisor;                /**< average, GENERIC: divisor_override (> 0) or 0 */
    float scale;                    /**< average, QNNP: f32(s / f32(s * kh * kw)) */
} qrt_pool2d_params;

/**
 * @brief Reject parameters a kernel must never see: sizes, strides and every index the
 *        kernels form bounded (each below 2^31), every window starting before len + pad
 *        on both axes, average windows of at most 2^23 positions (exact int32 sums).
 * @return QRT_OK or QRT_ERR_ARG
 */
qrt_status qrt_pool2d_check(const qrt_pool2d_params *p);

/** Scratch bytes a call with up to `threads` threads needs for p (checked p): one slot per
 *  thread; SIZE_MAX where that cannot exist.  64-byte alignment not required. */
size_t qrt_pool2d_scratch_size(const qrt_pool2d_params *p, int threads);

/** Max pooling.  threads: at most this many tasks of whole planes on the thread pool
 *  (qrt/threadpool.h; small calls run on the caller alone); scratch of at least
 *  qrt_pool2d_scratch_size(p, threads) bytes.  The result does not depend on threads. */
qrt_status qrt_max_pool2d_u8(const qrt_pool2d_params *p, const uint8_t *x, uint8_t *y,
                             void *scratch, size_t scratch_bytes, int threads);
qrt_status qrt_max_pool2d_s8(const qrt_pool2d_params *p, const int8_t *x, int8_t *y,
                             void *scratch, size_t scratch_bytes, int threads);
/** Average pooling (QNNP mode: quint8 only, 0 < scale <= FLT_MAX), as max pooling. */
qrt_status qrt_avg_pool2d_u8(const qrt_pool2d_params *p, const uint8_t *x, uint8_t *y,
                             void *scratch, size_t scratch_bytes, int threads);
qrt_status qrt_avg_pool2d_s8(const qrt_pool2d_params *p, const int8_t *x, int8_t *y,
                             void *scratch, size_t scratch_bytes, int threads);

#ifdef __cplusplus
}
#endif

#endif /* QRT_POOL2D_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file transpose.h
 * @brief Batched 2-d transpose, the copy behind a permute that moves the innermost dimension
 *        (NCHW -> NHWC: [N][C][H*W] -> [N][H*W][C]):
 *        dst[b * rows * cols + c * rows + r] = src[b * src_bs + r * src_rs + c]
 *        for b < batch, r < rows, c < cols; elements of 1, 2 or 4 bytes.
 *        Bytes go through 8x8 tiles transposed in two 64-bit words per row pair (three
 *        mask-and-shift stages); wider elements through 8x8 tiles of plain loads and stores.
 *        Both keep every cache line they touch in use (a strided copy reads one element per
 *        line of the source).
 */
#ifndef QRT_TRANSPOSE_H
#define QRT_TRANSPOSE_H

#include <stdint.h>

#include "qrt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** QRT_ERR_ARG for an element size other than 1, 2, 4 or negative sizes / strides. */
qrt_status qrt_transpose2d(int64_t esize, int64_t batch, int64_t rows, int64_t cols,
                           const void *src, int64_t src_bs, int64_t src_rs, void *dst);

#ifdef __cplusplus
}
#endif

#endif /* QRT_TRANSPOSE_H */

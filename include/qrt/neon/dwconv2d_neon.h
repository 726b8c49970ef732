/* SPDX-License-Identifier: Apache-2.0 */
/** @file dwconv2d_neon.h
 *  @brief The NEON depthwise conv2d variant (src/neon/dwconv2d_neon.c; aarch64 and armv7):
 *         units [u0, u1) of (n, c_in) of qrt_dwconv2d_u8() (src/dwconv2d.c). */
#ifndef QRT_NEON_DWCONV2D_NEON_H
#define QRT_NEON_DWCONV2D_NEON_H

#include "qrt/dwconv2d.h"

void qrt_dwconv2d_u8__neon(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                           const qrt_conv1d_quant *q, uint8_t *y, void *scratch, int64_t u0,
                           int64_t u1);

#endif

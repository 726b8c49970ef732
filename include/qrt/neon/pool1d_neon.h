/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool1d_neon.h
 * @brief The NEON pooling variants (aarch64, and armv7 with NEON in AT_HWCAP;
 *        src/neon/pool1d_neon.c).
 *        Same contracts as the qrt_*_pool1d_*_ref() functions of ref/pool1d_ref.h and bit-exact
 *        with them; the design is described in the source file.
 */
#ifndef QRT_NEON_POOL1D_NEON_H
#define QRT_NEON_POOL1D_NEON_H

#include "qrt/pool1d_params.h"
#include "qrt/ref/pool1d_ref.h"

void qrt_max_pool1d_u8__neon(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out);
void qrt_avg_pool1d_u8__neon(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out);
void qrt_adaptive_avg_pool1d_u8__neon(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out);
void qrt_max_pool1d_s8__neon(const qrt_pool1d_params *p, const int8_t *in, int8_t *out);
void qrt_avg_pool1d_s8__neon(const qrt_pool1d_params *p, const int8_t *in, int8_t *out);
void qrt_adaptive_avg_pool1d_s8__neon(const qrt_pool1d_params *p, const int8_t *in, int8_t *out);

#endif /* QRT_NEON_POOL1D_NEON_H */

/* SPDX-License-Identifier: Apache-2.0 */
/** @file dwconv2d_x86.h
 *  @brief The x86 depthwise conv2d variants (src/x86/dwconv2d_*.c): units [u0, u1) of
 *         (n, c_in) of qrt_dwconv2d_u8() (src/dwconv2d.c), scratch from its geometry. */
#ifndef QRT_X86_DWCONV2D_X86_H
#define QRT_X86_DWCONV2D_X86_H

#include "qrt/dwconv2d.h"

void qrt_dwconv2d_u8__avx2(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                           const qrt_conv1d_quant *q, uint8_t *y, void *scratch, int64_t u0,
                           int64_t u1);
void qrt_dwconv2d_u8__avx512vnni(const qrt_dwconv2d_params *p, const uint8_t *x,
                                 const int8_t *w, const qrt_conv1d_quant *q, uint8_t *y,
                                 void *scratch, int64_t u0, int64_t u1);
/* With VBMI (src/x86/dwconv2d_avx512vbmi.c): the byte-permute path where it applies, else
 * qrt_dwconv2d_u8__avx512vnni(); the same scratch. */
void qrt_dwconv2d_u8__avx512vbmi(const qrt_dwconv2d_params *p, const uint8_t *x,
                                 const int8_t *w, const qrt_conv1d_quant *q, uint8_t *y,
                                 void *scratch, int64_t u0, int64_t u1);
/* The AVX-512 VNNI channels-in-lanes path for small planes (src/x86/dwconv2d_avx512vnni_cl.c):
 * qrt__dwcl_geom_ok(p) holds and q->wpack_cl is qrt_dwconv2d_pack_cl()'s weight. */
void qrt__dwcl_run(const qrt_dwconv2d_params *p, const uint8_t *x, const qrt_conv1d_quant *q,
                   uint8_t *y, void *scratch, int64_t u0, int64_t u1);
/* Its AVX2 form (src/x86/dwconv2d_avx2_cl.c), on the same geometry, weight and scratch. */
void qrt__dwcl_run_avx2(const qrt_dwconv2d_params *p, const uint8_t *x,
                        const qrt_conv1d_quant *q, uint8_t *y, void *scratch, int64_t u0,
                        int64_t u1);

#endif

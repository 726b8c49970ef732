/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_avx2.h
 * @brief qrt_conv1d_u8__avx2(): conv1d / linear for x86-64 CPUs with AVX2 but no AVX-512 VNNI
 *        (Haswell .. Zen 3).  Bit-exact with qrt_conv1d_u8_ref().  Defined (and the design
 *        described) in src/x86/conv1d_avx2.c; src/conv1d.c calls it when cpu.h reports AVX2.
 */
#ifndef QRT_X86_CONV1D_AVX2_H
#define QRT_X86_CONV1D_AVX2_H

#include <stddef.h>
#include "qrt/conv1d_params.h"

/** @brief Scratch bytes qrt_conv1d_u8__avx2() needs: with q->wpack_a2 set (q may be NULL:
 *         none), no room for the weight panels. */
size_t qrt_conv1d_u8__avx2_scratch_size(const qrt_conv1d_params *p, const qrt_conv1d_quant *q);

/** @brief Whether qrt_conv1d_u8__avx2() reads weight panels (qrt_conv1d_pack_a2()) for p: not
 *         on its depthwise and GEMV paths. */
int qrt_conv1d_u8__avx2_uses_panels(const qrt_conv1d_params *p);

/**
 * @brief Same contract as qrt_conv1d_u8_ref() (reads the raw weight w).
 * @param[in] scratch qrt_conv1d_u8__avx2_scratch_size(p, q) bytes, any alignment
 */
qrt_status qrt_conv1d_u8__avx2(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                               const qrt_conv1d_quant *q, void *out, void *scratch);

#endif /* QRT_X86_CONV1D_AVX2_H */

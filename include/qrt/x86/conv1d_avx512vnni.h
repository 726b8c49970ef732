/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_avx512vnni.h
 * @brief qrt_conv1d_u8__avx512vnni(): 512-bit VNNI variant of qrt_conv1d_u8_ref(), bit-exact
 *        with it.  Defined in src/x86/conv1d_avx512vnni*.c (design in the driver's file
 *        comment); src/conv1d.c calls it when cpu.h reports AVX-512 VNNI.
 */
#ifndef QRT_CONV1D_AVX512VNNI_H
#define QRT_CONV1D_AVX512VNNI_H

#include <stddef.h>
#include "qrt/conv1d_params.h"

/** Bytes of scratch qrt_conv1d_u8__avx512vnni() needs (64-byte aligned pieces). */
size_t qrt_conv1d_u8__avx512vnni_scratch_size(const qrt_conv1d_params *p);

/**
 * @brief Same contract as qrt_conv1d_u8_ref(), reading the packed weight instead of w.
 * @param[in]  wpack   [c_out][Kc][CQ][4] from qrt_conv1d_pack_weights()
 * @param[in]  wsum    [c_out] from qrt_conv1d_pack_weights()
 * @param[in]  scratch qrt_conv1d_u8__avx512vnni_scratch_size(p) bytes, any alignment
 * Bit-exact with qrt_conv1d_u8_ref().
 */
qrt_status qrt_conv1d_u8__avx512vnni(const qrt_conv1d_params *p, const uint8_t *x,
                                     const int8_t *wpack, const int32_t *wsum,
                                     const qrt_conv1d_quant *q, void *out, void *scratch);

/** @brief Whether qrt_conv1d_u8__avx512vnni(p, ..., q, ...) runs the row tail of a 1x1 row
 *         (qrt_conv1d_vnni_tail, src/x86/conv1d_avx512vnni_packed.c); 0 for an invalid p. */
int qrt_conv1d_u8__avx512vnni_tail(const qrt_conv1d_params *p, const qrt_conv1d_quant *q);

#endif /* QRT_CONV1D_AVX512VNNI_H */

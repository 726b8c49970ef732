/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file quant_vfpv4.c
 * @brief armv7 only: the fused per-tensor quantize bodies of qrt/quant.h compiled with
 *        -mfpu=vfpv4-d16 (src/meson.build), so fmaf is one vfma.f32 instead of glibc's software
 *        fmaf.  Bit-exact with the reference by construction (quant.h, "armv7").
 */
#include "qrt/quant.h"

void qrt_quantize_f32_u8__vfpv4(const float *x, size_t n, float inv, float zpf, float qminf,
                                float qmaxf, uint8_t *out) {
    QRT_QUANT_FMA_BODY(uint8_t)
}

void qrt_quantize_f32_s8__vfpv4(const float *x, size_t n, float inv, float zpf, float qminf,
                                float qmaxf, int8_t *out) {
    QRT_QUANT_FMA_BODY(int8_t)
}

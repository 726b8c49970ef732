/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file quant_avx2.c
 * @brief The AVX2 quantize / dequantize variants: qrt/quant.h's loop bodies compiled in this
 *        translation unit with -mavx2 -mfma
 *        (meson.build; the functions keep their target attributes too).  Bit-exact with the
 *        reference by construction (quant.h's file comment).
 */
#include "qrt/quant.h"

QRT_DEFINE_X86_VARIANTS(avx2, QRT_TGT_AVX2)

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file quant_avx512.c
 * @brief The AVX512 quantize / dequantize variants: qrt/quant.h's loop bodies compiled in this
 *        translation unit with -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl -mavx512dq
 *        -mprefer-vector-width=512
 *        (meson.build; the functions keep their target attributes too).  Bit-exact with the
 *        reference by construction (quant.h's file comment).
 */
#include "qrt/quant.h"

QRT_DEFINE_X86_VARIANTS(avx512, QRT_TGT_AVX512)

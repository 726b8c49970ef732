/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file upsample_avx2.c
 * @brief qrt_upsample_bilinear__avx2: the reference loop of src/upsample.c compiled with AVX2
 *        and FMA (fmaf inline, the row combinations 8 wide), the same bits.
 */
#define QRT_UPSAMPLE_FN qrt_upsample_bilinear__avx2
#include "../upsample_body.h"

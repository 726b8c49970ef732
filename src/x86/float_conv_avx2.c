/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_conv_avx2.c
 * @brief qrt_dwconv2d_f32_cm__avx2: the body of src/float_conv_cm.h compiled with AVX2
 *        (8 floats a vector, 64 accumulators a pass), the same bits as the reference.
 */
#define CM_NAME dwconv2d_f32_cm_avx2
#define CM_BLOCK 64
#include "../float_conv_cm.h"

void qrt_dwconv2d_f32_cm__avx2(const qrt_dwconv2d_f32_params *p, const float *xp,
                               const float *wt, const float *bias, float *y)
{
    dwconv2d_f32_cm_avx2(p, xp, wt, bias, y);
}

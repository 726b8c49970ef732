/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file upsample.h
 * @brief Bilinear upsample of NCHW planes (qrt/ops/upsample.py: the op, its float32 formula
 *        and which of torch's two kernels a tensor takes).  The caller (Python) computes the
 *        source taps per output row and column (i0, i1, l0, l1: torch's
 *        area_pixel_compute_source_index) and validates every size and index; the kernel
 *        trusts them.
 *
 * Per plane, each input row r in use is interpolated along W once (A[ox], the first half of
 * torch's formula), then every output row combines two such rows:
 *  - generic (torch's NCHW loop): A = m0 * p0 + m1 * p1, r = l0 * A0 + l1 * A1;
 *  - fused (torch's NHWC kernel, built with FMA contraction): channels below `nv` (its vector
 *    loop) A = fmaf(m1, p1, m0 * p0), r = fmaf(l1, A1, l0 * A0); the others (its scalar tail)
 *    A = fmaf(m0, p0, m1 * p1), r = fmaf(l0, A0, l1 * A1);
 * every operation float32, rounded once (no contraction beyond the fmaf written).  Quantized:
 * q = clamp(rint(f32(f32(r - zp) + zp)), lo, hi), the inputs read as float (p = x);
 * float32: y = r.  Every variant returns the same bits (fmaf is correctly rounded).
 */
#ifndef QRT_UPSAMPLE_H
#define QRT_UPSAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "qrt/types.h"

enum { QRT_UPSAMPLE_U8 = 0, QRT_UPSAMPLE_S8 = 1, QRT_UPSAMPLE_F32 = 2 };

typedef struct {
    int64_t planes;       /**< n * c planes of h x w, contiguous; out oh x ow */
    int64_t c;            /**< channels: plane % c is the channel */
    int64_t h, w, oh, ow; /**< sizes (>= 1) */
    int64_t nv;           /**< fused: channels [0, nv) take the vector-loop form */
    int dtype;            /**< QRT_UPSAMPLE_U8 / S8 / F32 (input and output) */
    int fused;            /**< torch's NHWC kernel's FMA forms */
    float zp;             /**< input zero point (quantized) */
    int lo, hi;           /**< output clamp (quantized) */
} qrt_upsample_params;

/**
 * @brief y = bilinear upsample of x.  hi0/hi1/hl0/hl1: per output row the two source rows
 *        (< h) and weights; wi0/wi1/wl0/wl1: per output column.  work: 2 * ow floats.
 *        `variant` QRT_ISA_REF forces the reference loop.  Returns the QRT_ISA_* code that ran.
 */
int qrt_upsample_bilinear(const qrt_upsample_params *p, const void *x, void *y,
                          const int32_t *hi0, const int32_t *hi1, const float *hl0,
                          const float *hl1, const int32_t *wi0, const int32_t *wi1,
                          const float *wl0, const float *wl1, float *work, int variant);

void qrt_upsample_bilinear_ref(const qrt_upsample_params *p, const void *x, void *y,
                               const int32_t *hi0, const int32_t *hi1, const float *hl0,
                               const float *hl1, const int32_t *wi0, const int32_t *wi1,
                               const float *wl0, const float *wl1, float *work);
void qrt_upsample_bilinear__avx2(const qrt_upsample_params *p, const void *x, void *y,
                                 const int32_t *hi0, const int32_t *hi1, const float *hl0,
                                 const float *hl1, const int32_t *wi0, const int32_t *wi1,
                                 const float *wl0, const float *wl1, float *work);

#endif /* QRT_UPSAMPLE_H */

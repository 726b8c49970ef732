/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file upsample.c
 * @brief qrt/upsample.h: the reference loop and the dispatch.
 */
#define QRT_UPSAMPLE_FN qrt_upsample_bilinear_ref
#include "upsample_body.h"

#include "qrt/cpu.h"

int qrt_upsample_bilinear(const qrt_upsample_params *p, const void *x, void *y,
                          const int32_t *hi0, const int32_t *hi1, const float *hl0,
                          const float *hl1, const int32_t *wi0, const int32_t *wi1,
                          const float *wl0, const float *wl1, float *work, int variant) {
#if defined(QRT_HAVE_X86)
    if (variant != QRT_ISA_REF && (qrt_cpu_features() & QRT_CPU_AVX2)) {
        qrt_upsample_bilinear__avx2(p, x, y, hi0, hi1, hl0, hl1, wi0, wi1, wl0, wl1, work);
        return QRT_ISA_AVX2;
    }
#endif
    (void)variant;
    qrt_upsample_bilinear_ref(p, x, y, hi0, hi1, hl0, hl1, wi0, wi1, wl0, wl1, work);
    return QRT_ISA_REF;
}

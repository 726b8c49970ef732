/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool1d.c
 * @brief qrt/pool1d.h: the parameter gates and the run-time choice of the pooling variant.
 */
#include "qrt/pool1d.h"

#ifdef QRT_HAVE_X86
#include "qrt/x86/pool1d_avx2.h"
#endif
#ifdef QRT_HAVE_ARM
#include "qrt/neon/pool1d_neon.h"
#endif

/* Run `ref_call` or the variant qrt_pool1d_isa() names (`name`__avx2 / __neon), same args. */
#if defined(QRT_HAVE_X86)
#define QRT__POOL1D_DISPATCH(variant, name, args)                                                  \
    if ((variant) != QRT_ISA_REF && qrt_pool1d_isa() == QRT_ISA_AVX2)                              \
        name##__avx2 args;                                                                         \
    else                                                                                           \
        name##_ref args;
#elif defined(QRT_HAVE_ARM)
#define QRT__POOL1D_DISPATCH(variant, name, args)                                                  \
    if ((variant) != QRT_ISA_REF && qrt_pool1d_isa() == QRT_ISA_NEON)                              \
        name##__neon args;                                                                         \
    else                                                                                           \
        name##_ref args;
#else
#define QRT__POOL1D_DISPATCH(variant, name, args)                                                  \
    (void)(variant);                                                                               \
    name##_ref args;
#endif

int qrt_pool1d_isa(void) {
#ifdef QRT_HAVE_X86
    if (qrt_cpu_features() & QRT_CPU_AVX2) return QRT_ISA_AVX2;
#endif
#ifdef QRT_HAVE_ARM
    if (qrt_cpu_features() & QRT_CPU_NEON) return QRT_ISA_NEON;
#endif
    return QRT_ISA_REF;
}

qrt_status qrt_max_pool1d_u8(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out,
                             int variant) {
    const qrt_status st = qrt_pool1d_check(p);
    if (st == QRT_OK) {
        QRT__POOL1D_DISPATCH(variant, qrt_max_pool1d_u8, (p, in, out))
    }
    return st;
}

qrt_status qrt_max_pool1d_s8(const qrt_pool1d_params *p, const int8_t *in, int8_t *out,
                             int variant) {
    const qrt_status st = qrt_pool1d_check(p);
    if (st == QRT_OK) {
        QRT__POOL1D_DISPATCH(variant, qrt_max_pool1d_s8, (p, in, out))
    }
    return st;
}

qrt_status qrt_avg_pool1d_u8(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out,
                             int variant) {
    qrt_status st = qrt_pool1d_check(p);
    if (st == QRT_OK && (p->dilation != 1 || (p->mode == QRT_AVG_POOL_QNNP && !(p->scale > 0))))
        st = QRT_ERR_ARG;
    if (st == QRT_OK) {
        QRT__POOL1D_DISPATCH(variant, qrt_avg_pool1d_u8, (p, in, out))
    }
    return st;
}

qrt_status qrt_avg_pool1d_s8(const qrt_pool1d_params *p, const int8_t *in, int8_t *out,
                             int variant) {
    qrt_status st = qrt_pool1d_check(p);
    if (st == QRT_OK && (p->dilation != 1 || p->mode == QRT_AVG_POOL_QNNP)) st = QRT_ERR_ARG;
    if (st == QRT_OK) {
        QRT__POOL1D_DISPATCH(variant, qrt_avg_pool1d_s8, (p, in, out))
    }
    return st;
}

qrt_status qrt_adaptive_pool1d_check_(const qrt_pool1d_params *p) {
    if (p->len_in < 1 || p->len_out < 1 || p->qmin >= p->qmax) return QRT_ERR_ARG;
    if (p->len_in / p->len_out + 2u > QRT_POOL1D_MAX_WINDOW) return QRT_ERR_ARG;
    return QRT_OK;
}

qrt_status qrt_adaptive_avg_pool1d_u8(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out,
                                      int variant) {
    const qrt_status st = qrt_adaptive_pool1d_check_(p);
    if (st == QRT_OK) {
        QRT__POOL1D_DISPATCH(variant, qrt_adaptive_avg_pool1d_u8, (p, in, out))
    }
    return st;
}

qrt_status qrt_adaptive_avg_pool1d_s8(const qrt_pool1d_params *p, const int8_t *in, int8_t *out,
                                      int variant) {
    const qrt_status st = qrt_adaptive_pool1d_check_(p);
    if (st == QRT_OK) {
        QRT__POOL1D_DISPATCH(variant, qrt_adaptive_avg_pool1d_s8, (p, in, out))
    }
    return st;
}

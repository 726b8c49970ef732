/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d.h
 * @brief Public qrt_conv1d_u8(): runs the best variant compiled in and supported by this CPU
 *        (AVX-512 VNNI on x86-64), or the reference (forced by variant = QRT_ISA_REF, by
 *        -Dsimd=ref, or when no packed weight is given).
 */
#ifndef QRT_CONV1D_H
#define QRT_CONV1D_H

#include "qrt/conv1d_pack.h"
#include "qrt/conv1d_params.h"
#include "qrt/ref/conv1d_ref.h"
#include "qrt/types.h"
#ifdef QRT_HAVE_X86
#include "qrt/x86/conv1d_avx512vnni.h"
#endif

/** The QRT_ISA_* code of the variant qrt_conv1d_u8() picks on this CPU. */
static inline int qrt_conv1d_isa(void)
{
#ifdef QRT_HAVE_X86
    if (qrt_cpu_has_avx512vnni())
        return QRT_ISA_AVX512VNNI;
#endif
    return QRT_ISA_REF;
}

/** Which variant a call with `variant` (-1: best, QRT_ISA_REF: reference) runs. */
static inline int qrt_conv1d_variant(int variant)
{
    return variant == QRT_ISA_REF ? QRT_ISA_REF : qrt_conv1d_isa();
}

/** @brief Scratch bytes qrt_conv1d_u8() needs for `variant` (0 for the reference). */
static inline size_t qrt_conv1d_u8_scratch_size(const qrt_conv1d_params *p, int variant)
{
#ifdef QRT_HAVE_X86
    if (qrt_conv1d_variant(variant) == QRT_ISA_AVX512VNNI)
        return qrt_conv1d_u8__avx512vnni_scratch_size(p);
#endif
    (void)p;
    (void)variant;
    return 0;
}

/**
 * @brief Same contract as qrt_conv1d_u8_ref(); runs the fastest variant available.
 * @param[in] w       [c_out][c_in/groups][kernel] int8 (read by the reference)
 * @param[in] wpack   packed quads and @p wsum from qrt_conv1d_pack_weights() (read by the
 *                    dot-product variants)
 * @param[in] scratch qrt_conv1d_u8_scratch_size(p, variant) bytes, @p scratch_size given
 * @param[in] variant -1 for the best, QRT_ISA_REF to force the reference
 * @return QRT_OK; the gate's error; QRT_ERR_ARG when scratch is too small
 */
static inline qrt_status qrt_conv1d_u8(const qrt_conv1d_params *p, const uint8_t *x,
                                       const int8_t *w, const int8_t *wpack, const int32_t *wsum,
                                       const qrt_conv1d_quant *q, void *out, void *scratch,
                                       size_t scratch_size, int variant)
{
#ifdef QRT_HAVE_X86
    if (qrt_conv1d_variant(variant) == QRT_ISA_AVX512VNNI) {
        if (!wpack || !wsum || !scratch || scratch_size < qrt_conv1d_u8__avx512vnni_scratch_size(p))
            return QRT_ERR_ARG;
        return qrt_conv1d_u8__avx512vnni(p, x, wpack, wsum, q, out, scratch);
    }
#endif
    (void)wpack;
    (void)wsum;
    (void)scratch;
    (void)scratch_size;
    (void)variant;
    return qrt_conv1d_u8_ref(p, x, w, q, out);
}

#endif /* QRT_CONV1D_H */

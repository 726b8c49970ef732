/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file add.h
 * @brief Public quantized add / add_relu dispatchers.
 *
 * The AVX2 variants are the reference loops compiled with AVX2+FMA enabled: the integer path
 * is exact by construction and the float path uses fmaf() only where the reference does, with
 * -ffp-contract=off elsewhere, so both are bit-exact with their `_ref`.
 */
#ifndef QRT_ADD_H
#define QRT_ADD_H

#include "qrt/cpu.h"
#include "qrt/ref/add_ref.h"

#ifdef QRT_HAVE_X86
__attribute__((target("avx2,fma"))) static void
qrt_add_u8__avx2(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b, size_t n,
                 uint8_t *out)
{
    QRT_ADD_QNNP_BODY
}
__attribute__((target("avx2,fma"))) static void
qrt_add_float_u8__avx2(const qrt_add_float_params *p, const uint8_t *a, const uint8_t *b,
                       size_t rows, size_t inner, size_t nvec, uint8_t *out)
{
    QRT_ADD_FLOAT_BODY(uint8_t)
}
__attribute__((target("avx2,fma"))) static void
qrt_add_float_s8__avx2(const qrt_add_float_params *p, const int8_t *a, const int8_t *b,
                       size_t rows, size_t inner, size_t nvec, int8_t *out)
{
    QRT_ADD_FLOAT_BODY(int8_t)
}
#endif

/** Which add variant runs on this CPU (QRT_ISA_*). */
static inline int qrt_add_isa(void)
{
#ifdef QRT_HAVE_X86
    if ((qrt_cpu_features() & QRT_CPU_AVX2))
        return QRT_ISA_AVX2;
#endif
    return QRT_ISA_REF;
}

/** Same contract as qrt_add_u8_ref(); `variant` == QRT_ISA_REF forces the reference. */
static inline void qrt_add_u8(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b,
                              size_t n, uint8_t *out, int variant)
{
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_add_isa() == QRT_ISA_AVX2) {
        qrt_add_u8__avx2(p, a, b, n, out);
        return;
    }
#endif
    (void)variant;
    qrt_add_u8_ref(p, a, b, n, out);
}

/** Same contract as qrt_add_float_u8_ref(). */
static inline void qrt_add_float_u8(const qrt_add_float_params *p, const uint8_t *a,
                                    const uint8_t *b, size_t rows, size_t inner, size_t nvec,
                                    uint8_t *out, int variant)
{
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_add_isa() == QRT_ISA_AVX2) {
        qrt_add_float_u8__avx2(p, a, b, rows, inner, nvec, out);
        return;
    }
#endif
    (void)variant;
    qrt_add_float_u8_ref(p, a, b, rows, inner, nvec, out);
}

/** Same contract as qrt_add_float_s8_ref(). */
static inline void qrt_add_float_s8(const qrt_add_float_params *p, const int8_t *a,
                                    const int8_t *b, size_t rows, size_t inner, size_t nvec,
                                    int8_t *out, int variant)
{
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_add_isa() == QRT_ISA_AVX2) {
        qrt_add_float_s8__avx2(p, a, b, rows, inner, nvec, out);
        return;
    }
#endif
    (void)variant;
    qrt_add_float_s8_ref(p, a, b, rows, inner, nvec, out);
}

#endif /* QRT_ADD_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file activation.h
 * @brief Public element-wise activations (relu, table lookups for hardswish/sigmoid).
 *
 * The dispatchers run the fastest compiled-in variant; each variant is bit-exact with its
 * `_ref` in ref/activation_ref.h (integer code: the AVX2 variant is the same loop compiled
 * with AVX2 enabled).
 */
#ifndef QRT_ACTIVATION_H
#define QRT_ACTIVATION_H

#include "qrt/cpu.h"
#include "qrt/ref/activation_ref.h"

#ifdef QRT_HAVE_X86
__attribute__((target("avx2"))) static void qrt_relu_u8__avx2(const uint8_t *x, size_t n,
                                                              uint8_t zp, uint8_t *out)
{
    QRT_RELU_BODY
}
__attribute__((target("avx2"))) static void qrt_relu_s8__avx2(const int8_t *x, size_t n,
                                                              int8_t zp, int8_t *out)
{
    QRT_RELU_BODY
}
#endif

/** Which relu variant runs on this CPU (QRT_ISA_*). */
static inline int qrt_activation_isa(void)
{
#ifdef QRT_HAVE_X86
    if ((qrt_cpu_features() & QRT_CPU_AVX2))
        return QRT_ISA_AVX2;
#endif
    return QRT_ISA_REF;
}

/** Same contract as qrt_relu_u8_ref(); `variant` == QRT_ISA_REF forces the reference. */
static inline void qrt_relu_u8(const uint8_t *x, size_t n, uint8_t zp, uint8_t *out, int variant)
{
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_activation_isa() == QRT_ISA_AVX2) {
        qrt_relu_u8__avx2(x, n, zp, out);
        return;
    }
#endif
    (void)variant;
    qrt_relu_u8_ref(x, n, zp, out);
}

/** Same contract as qrt_relu_s8_ref(). */
static inline void qrt_relu_s8(const int8_t *x, size_t n, int8_t zp, int8_t *out, int variant)
{
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_activation_isa() == QRT_ISA_AVX2) {
        qrt_relu_s8__avx2(x, n, zp, out);
        return;
    }
#endif
    (void)variant;
    qrt_relu_s8_ref(x, n, zp, out);
}

/** Table lookup; a gather does not beat the scalar loop, so only the reference exists. */
static inline void qrt_lut_u8(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out)
{
    qrt_lut_u8_ref(lut, x, n, out);
}

#endif /* QRT_ACTIVATION_H */

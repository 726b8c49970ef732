/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d.c
 * @brief qrt/conv1d.h: run-time choice of the conv1d variant (cpu.h features).  Generic code:
 *        compiled with the baseline flags; every variant sits in its own translation unit.
 */
#include "qrt/conv1d.h"
#include "qrt/conv1d_pack.h"

#include "qrt/cpu.h"
#ifdef QRT_HAVE_X86
#include "qrt/x86/conv1d_avx2.h"
#include "qrt/x86/conv1d_avx512vnni.h"
#endif
/* --- Arm (arm branch): NEON baseline, Armv8.2 sdot on aarch64; chosen by cpu.h HWCAP bits --- */
#ifdef QRT_HAVE_ARM
#include "qrt/neon/conv1d_neon.h"
#if defined(__aarch64__)
#include "qrt/neon/conv1d_neondot.h"
#endif
#endif

int qrt_conv1d_vnni_tail = 1;

int qrt_conv1d_isa(void) {
#ifdef QRT_HAVE_X86
    if (qrt_cpu_features() & QRT_CPU_AVX512VNNI) /* honours QRT_DISABLE_ISA (cpu.h) */
        return QRT_ISA_AVX512VNNI;
    if (qrt_cpu_features() & QRT_CPU_AVX2) return QRT_ISA_AVX2;
#endif
#ifdef QRT_HAVE_ARM
#if defined(__aarch64__)
    if (qrt_cpu_features() & QRT_CPU_DOTPROD) return QRT_ISA_NEONDOT;
#endif
    if (qrt_cpu_features() & QRT_CPU_NEON) return QRT_ISA_NEON;
#endif
    return QRT_ISA_REF;
}

int qrt_conv1d_supports(int isa) {
    if (isa == QRT_ISA_REF) return 1;
#ifdef QRT_HAVE_X86
    if (isa == QRT_ISA_AVX2) return (qrt_cpu_features() & QRT_CPU_AVX2) != 0;
    if (isa == QRT_ISA_AVX512VNNI) return (qrt_cpu_features() & QRT_CPU_AVX512VNNI) != 0;
#endif
#ifdef QRT_HAVE_ARM
#if defined(__aarch64__)
    if (isa == QRT_ISA_NEONDOT) return (qrt_cpu_features() & QRT_CPU_DOTPROD) != 0;
#endif
    if (isa == QRT_ISA_NEON) return (qrt_cpu_features() & QRT_CPU_NEON) != 0;
#endif
    return 0;
}

int qrt_conv1d_variant(int variant) {
#ifdef QRT_HAVE_ARM
    /* QRT_ISA_NEON on a dot-product CPU runs the baseline NEON variant (tests use it). */
    if (variant == QRT_ISA_NEON && (qrt_cpu_features() & QRT_CPU_NEON)) return QRT_ISA_NEON;
#endif
#ifdef QRT_HAVE_X86
    if ((variant == QRT_ISA_AVX2 || variant == QRT_ISA_AVX512VNNI) && qrt_conv1d_supports(variant))
        return variant;
#endif
    return variant == QRT_ISA_REF ? QRT_ISA_REF : qrt_conv1d_isa();
}

size_t qrt_conv1d_u8_scratch_size(const qrt_conv1d_params *p, const qrt_conv1d_quant *q,
                                  int variant) {
#ifdef QRT_HAVE_X86
    if (qrt_conv1d_variant(variant) == QRT_ISA_AVX512VNNI)
        return qrt_conv1d_u8__avx512vnni_scratch_size(p);
    if (qrt_conv1d_variant(variant) == QRT_ISA_AVX2) return qrt_conv1d_u8__avx2_scratch_size(p, q);
#endif
    (void)p;
    (void)q;
    (void)variant;
    return 0;
}

int qrt_conv1d_u8_uses_a2_panels(const qrt_conv1d_params *p, int variant) {
#ifdef QRT_HAVE_X86
    if (qrt_conv1d_variant(variant) == QRT_ISA_AVX2) return qrt_conv1d_u8__avx2_uses_panels(p);
#endif
    (void)p;
    (void)variant;
    return 0;
}

int qrt_conv1d_u8_uses_dot_panels(const qrt_conv1d_params *p, int variant) {
#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
    if (qrt_conv1d_variant(variant) == QRT_ISA_NEONDOT)
        return qrt_conv1d_check(p) == QRT_OK && qrt_conv1d_u8__neon_gemm_ok(p) && p->c_out > 0;
#endif
    (void)p;
    (void)variant;
    return 0;
}

int qrt_conv1d_u8_uses_vnni_tail(const qrt_conv1d_params *p, const qrt_conv1d_quant *q,
                                 int variant) {
#ifdef QRT_HAVE_X86
    if (qrt_conv1d_variant(variant) == QRT_ISA_AVX512VNNI)
        return qrt_conv1d_u8__avx512vnni_tail(p, q);
#endif
    (void)p;
    (void)q;
    (void)variant;
    return 0;
}

qrt_status qrt_conv1d_u8(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                         const int8_t *wpack, const int32_t *wsum, const qrt_conv1d_quant *q,
                         void *out, void *scratch, size_t scratch_size, int variant) {
#ifdef QRT_HAVE_X86
    if (qrt_conv1d_variant(variant) == QRT_ISA_AVX512VNNI) {
        if (!wpack || !wsum || !scratch || scratch_size < qrt_conv1d_u8__avx512vnni_scratch_size(p))
            return QRT_ERR_ARG;
        return qrt_conv1d_u8__avx512vnni(p, x, wpack, wsum, q, out, scratch);
    }
    if (qrt_conv1d_variant(variant) == QRT_ISA_AVX2) {
        if (!scratch || scratch_size < qrt_conv1d_u8__avx2_scratch_size(p, q)) return QRT_ERR_ARG;
        return qrt_conv1d_u8__avx2(p, x, w, q, out, scratch);
    }
#endif
#ifdef QRT_HAVE_ARM
    switch (qrt_conv1d_variant(variant)) {
#if defined(__aarch64__)
    case QRT_ISA_NEONDOT:
        return qrt_conv1d_u8__neondot(p, x, w, q, out);
#endif
    case QRT_ISA_NEON:
        return qrt_conv1d_u8__neon(p, x, w, q, out);
    default:
        break;
    }
#endif
    (void)wpack;
    (void)wsum;
    (void)scratch;
    (void)scratch_size;
    (void)variant;
    return qrt_conv1d_u8_ref(p, x, w, q, out);
}

/* include/qrt/conv1d_pack.h */
void qrt_conv1d_pack_weights(uint32_t c_out, uint32_t cg, uint32_t kernel, const int8_t *w,
                             int8_t *wpack, int32_t *wsum) {
    const qrt_conv1d_layout l = qrt_conv1d_layout_of(cg, kernel);
    const size_t per_oc = (size_t)l.kc * l.cq * 4u, taps = (size_t)cg * kernel;
    for (size_t oc = 0; oc < c_out; ++oc) {
        const int8_t *wo = w + oc * taps;
        int8_t *po = wpack + oc * per_oc;
        int32_t s = 0;
        for (size_t i = 0; i < taps; ++i) s += wo[i];
        wsum[oc] = s;
        for (size_t i = 0; i < per_oc; ++i) po[i] = 0;
        if (l.im2col) {
            for (size_t i = 0; i < taps; ++i) po[i] = wo[i];
        } else {
            for (size_t ic = 0; ic < cg; ++ic)
                for (size_t k = 0; k < kernel; ++k)
                    po[(k * l.cq + ic / 4u) * 4u + ic % 4u] = wo[ic * kernel + k];
        }
    }
}

/* include/qrt/conv1d_pack.h */
int qrt_conv1d_c16_pairs_ok(uint32_t c_out, uint32_t c_in, const int8_t *w) {
    for (size_t oc = 0; oc < c_out; ++oc) {
        const int8_t *wr = w + oc * (size_t)c_in;
        for (size_t i = 0; i < c_in; i += 16)
            for (size_t j = i; j < i + 8 && j + 8 < c_in; ++j)
                if (wr[j] == -128 && wr[j + 8] == -128) return 0;
    }
    return 1;
}

/* include/qrt/conv1d_pack.h */
void qrt_conv1d_pack_cl(uint32_t c_out, uint32_t c_in, const int8_t *wpack, int8_t *wcl) {
    const size_t cq = (c_in + 3u) / 4u, co16 = (c_out + 15u) / 16u * 16u;
    for (size_t oc = 0; oc < co16; ++oc)
        for (size_t q = 0; q < cq; ++q)
            for (size_t j = 0; j < 4; ++j)
                wcl[(((oc / 16u) * cq + q) * 16u + oc % 16u) * 4u + j] =
                    oc < c_out ? wpack[(oc * cq + q) * 4u + j] : 0;
}

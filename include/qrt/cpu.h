/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cpu.h
 * @brief Run-time CPU feature detection for kernel dispatch, with a test override.
 *
 * - aarch64: NEON (ASIMD) is part of the baseline; the Armv8.2 dot product (sdot/udot, Pi 5's
 *   Cortex-A76; not Pi 4's Cortex-A72) is read from getauxval(AT_HWCAP) & HWCAP_ASIMDDP.
 * - armv7 (armhf): Debian's baseline has no NEON, so it is read from AT_HWCAP & HWCAP_NEON.
 * - x86-64: AVX2+FMA and AVX-512 VNNI, through types.h's helpers.
 *
 * The environment variable QRT_DISABLE_ISA (read once per extension module) masks features,
 * so tests and users can force a slower variant: a comma-separated list of
 * "neon", "dotprod", "avx2", "avx512vnni", or "all".  Masking "neon" masks "dotprod" too.
 */
#ifndef QRT_CPU_H
#define QRT_CPU_H

#include <stdlib.h>
#include <string.h>
#include "qrt/types.h"

#if !defined(QRT_FORCE_REF) && defined(__linux__) && (defined(__aarch64__) || defined(__arm__))
#define QRT_HAVE_ARM 1
#include <sys/auxv.h>
#endif

#define QRT_CPU_NEON (1u << 0)       /**< Advanced SIMD (aarch64 baseline; armv7 optional) */
#define QRT_CPU_DOTPROD (1u << 1)    /**< Armv8.2 sdot/udot (aarch64 HWCAP_ASIMDDP) */
#define QRT_CPU_AVX2 (1u << 2)       /**< AVX2 + FMA */
#define QRT_CPU_AVX512VNNI (1u << 3) /**< AVX-512 F/BW/VL + VNNI */

/** @brief Features the hardware (or qemu's CPU model) reports, before any override. */
static inline unsigned qrt_cpu_features_raw(void)
{
    unsigned f = 0;
#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
    const unsigned long hw = getauxval(AT_HWCAP);
    f |= QRT_CPU_NEON;            /* ASIMD is mandatory in the AArch64 Linux ABI */
    if (hw & (1ul << 20))         /* HWCAP_ASIMDDP */
        f |= QRT_CPU_DOTPROD;
#elif defined(QRT_HAVE_ARM)
    if (getauxval(AT_HWCAP) & (1ul << 12)) /* HWCAP_NEON */
        f |= QRT_CPU_NEON;
#endif
#ifdef QRT_HAVE_X86
    if (qrt_cpu_has_avx2_fma())
        f |= QRT_CPU_AVX2;
    if (qrt_cpu_has_avx512vnni())
        f |= QRT_CPU_AVX512VNNI;
#endif
    return f;
}

/** @brief The feature bits QRT_DISABLE_ISA (`spec`, may be NULL) removes. */
static inline unsigned qrt_cpu_disabled_mask(const char *spec)
{
    static const struct {
        const char *name;
        unsigned bits;
    } names[] = {
        {"neon", QRT_CPU_NEON | QRT_CPU_DOTPROD},
        {"dotprod", QRT_CPU_DOTPROD},
        {"avx2", QRT_CPU_AVX2},
        {"avx512vnni", QRT_CPU_AVX512VNNI},
        {"all", ~0u},
    };
    unsigned m = 0;
    while (spec && *spec) {
        const char *end = strchr(spec, ',');
        const size_t len = end ? (size_t)(end - spec) : strlen(spec);
        for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
            if (len == strlen(names[i].name) && strncmp(spec, names[i].name, len) == 0)
                m |= names[i].bits;
        spec = end ? end + 1 : NULL;
    }
    return m;
}

/** @brief Usable features: qrt_cpu_features_raw() minus QRT_DISABLE_ISA, computed once. */
static inline unsigned qrt_cpu_features(void)
{
    static volatile int cached = -1; /* idempotent: a race only recomputes the same value */
    int f = cached;
    if (f < 0) {
        f = (int)(qrt_cpu_features_raw() & ~qrt_cpu_disabled_mask(getenv("QRT_DISABLE_ISA")) &
                  0x7fffffffu);
        cached = f;
    }
    return (unsigned)f;
}

#endif /* QRT_CPU_H */

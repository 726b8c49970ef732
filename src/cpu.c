/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cpu.c
 * @brief qrt/cpu.h: CPU features and the QRT_DISABLE_ISA override.  This translation unit is
 *        compiled once, into libqrt_core, so the feature cache is one per process.
 */
#include "qrt/cpu.h"

#include <stdlib.h>
#include <string.h>

#ifdef QRT_HAVE_ARM
#include <sys/auxv.h>
#endif

unsigned qrt_cpu_features_raw(void) {
    unsigned f = 0;
#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
    const unsigned long hw = getauxval(AT_HWCAP);
    f |= QRT_CPU_NEON;    /* ASIMD is mandatory in the AArch64 Linux ABI */
    if (hw & (1ul << 20)) /* HWCAP_ASIMDDP */
        f |= QRT_CPU_DOTPROD;
#elif defined(QRT_HAVE_ARM)
    const unsigned long hw = getauxval(AT_HWCAP);
    if (hw & (1ul << 12)) /* HWCAP_NEON */
        f |= QRT_CPU_NEON;
    if (hw & (1ul << 16)) /* HWCAP_VFPv4: every Pi from the Pi 2 (Cortex-A7) on */
        f |= QRT_CPU_VFPV4;
#endif
#ifdef QRT_HAVE_X86
    __builtin_cpu_init();
    const int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                       __builtin_cpu_supports("avx512vl");
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) f |= QRT_CPU_AVX2;
    if (avx512 && __builtin_cpu_supports("avx512vnni")) /* Cascade Lake, Ice Lake, Zen 4 */
        f |= QRT_CPU_AVX512VNNI;
    if (avx512 && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma"))
        f |= QRT_CPU_AVX512DQ;
    if (avx512 && __builtin_cpu_supports("avx512vbmi")) /* Ice Lake, Zen 4 */
        f |= QRT_CPU_AVX512VBMI;
#endif
    return f;
}

unsigned qrt_cpu_disabled_mask(const char *spec) {
    static const struct {
        const char *name;
        unsigned bits;
    } names[] = {
        {"neon", QRT_CPU_NEON | QRT_CPU_DOTPROD},
        {"dotprod", QRT_CPU_DOTPROD},
        {"vfpv4", QRT_CPU_VFPV4},
        {"avx2", QRT_CPU_AVX2},
        /* the quantize kernels' AVX-512 level is named after the conv1d one */
        {"avx512vnni", QRT_CPU_AVX512VNNI | QRT_CPU_AVX512DQ | QRT_CPU_AVX512VBMI},
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

unsigned qrt_cpu_features(void) {
    static volatile int cached = -1; /* idempotent: a race only recomputes the same value */
    int f = cached;
    if (f < 0) {
        f = (int)(qrt_cpu_features_raw() & ~qrt_cpu_disabled_mask(getenv("QRT_DISABLE_ISA")) &
                  0x7fffffffu);
        cached = f;
    }
    return (unsigned)f;
}

const char *qrt_isa_name(int isa) {
    static const char *const names[QRT_ISA_COUNT] = {
        [QRT_ISA_REF] = "ref",   [QRT_ISA_AVX2] = "avx2",       [QRT_ISA_AVX512VNNI] = "avx512vnni",
        [QRT_ISA_NEON] = "neon", [QRT_ISA_NEONDOT] = "neondot",
    };
    return isa >= 0 && isa < QRT_ISA_COUNT ? names[isa] : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file cpu.h
 * @brief Run-time CPU feature detection for kernel dispatch, with a test override
 *        (defined in src/cpu.c: one feature cache per process, in libqrt_core).
 *
 * - aarch64: NEON (ASIMD) is part of the baseline; the Armv8.2 dot product (sdot/udot, Pi 5's
 *   Cortex-A76; not Pi 4's Cortex-A72) is read from getauxval(AT_HWCAP) & HWCAP_ASIMDDP.
 * - armv7 (armhf): Debian's baseline has no NEON, so it is read from AT_HWCAP & HWCAP_NEON.
 * - x86-64: AVX2+FMA, AVX-512 VNNI, DQ and VBMI, from cpuid (__builtin_cpu_supports).
 *
 * The environment variable QRT_DISABLE_ISA (read once per process, on the first query) masks
 * features, so tests and users can force a slower variant: a comma-separated list of
 * "neon", "dotprod", "avx2", "avx512vnni", or "all".  Masking "neon" masks "dotprod" too;
 * "avx512vnni" masks every AVX-512 level (DQ, VBMI).
 */
#ifndef QRT_CPU_H
#define QRT_CPU_H

#include "qrt/types.h"

#if !defined(QRT_FORCE_REF) && defined(__linux__) && (defined(__aarch64__) || defined(__arm__))
#define QRT_HAVE_ARM 1
#endif

#define QRT_CPU_NEON       (1u << 0) /**< Advanced SIMD (aarch64 baseline; armv7 optional) */
#define QRT_CPU_DOTPROD    (1u << 1) /**< Armv8.2 sdot/udot (aarch64 HWCAP_ASIMDDP) */
#define QRT_CPU_AVX2       (1u << 2) /**< AVX2 + FMA */
#define QRT_CPU_AVX512VNNI (1u << 3) /**< AVX-512 F/BW/VL + VNNI */
#define QRT_CPU_AVX512DQ   (1u << 4) /**< AVX-512 F/BW/VL/DQ + FMA (the quantize AVX-512 level) */
#define QRT_CPU_AVX512VBMI (1u << 5) /**< AVX-512 F/BW/VL + VBMI (vpermt2b: the table lookup) */
#define QRT_CPU_VFPV4      (1u << 6) /**< armv7 VFPv4: a hardware fused multiply-add (HWCAP_VFPv4) */

/** @brief Features the hardware (or qemu's CPU model) reports, before any override. */
unsigned qrt_cpu_features_raw(void);

/** @brief The feature bits QRT_DISABLE_ISA (`spec`, may be NULL) removes. */
unsigned qrt_cpu_disabled_mask(const char *spec);

/** @brief Usable features: qrt_cpu_features_raw() minus QRT_DISABLE_ISA, computed once. */
unsigned qrt_cpu_features(void);

/** @brief Name of variant `isa` (a QRT_ISA_* code): "ref", "avx2", "avx512vnni", "neon",
 *         "neondot"; NULL outside [0, QRT_ISA_COUNT).  The one table of these names. */
const char *qrt_isa_name(int isa);

#endif /* QRT_CPU_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file types.h
 * @brief Status codes, dtype codes and CPU-feature queries shared by every qrt kernel.
 */
#ifndef QRT_TYPES_H
#define QRT_TYPES_H

#include <stddef.h>
#include <stdint.h>

/** Result of a kernel call; anything but QRT_OK means nothing was written. */
typedef enum {
    QRT_OK = 0,
    QRT_ERR_ARG = 1,      /**< a parameter failed the precondition gate */
    QRT_ERR_OVERFLOW = 2, /**< a size or accumulator bound would overflow */
} qrt_status;

/** Element type codes; the values are part of the blob format and never change. */
typedef enum {
    QRT_DTYPE_QUINT8 = 1,
    QRT_DTYPE_QINT8 = 2,
    QRT_DTYPE_QINT32 = 3,
    QRT_DTYPE_F32 = 4,
    QRT_DTYPE_S32 = 5,
    QRT_DTYPE_U8 = 6,
    QRT_DTYPE_S8 = 7,
} qrt_dtype;

/* Variant identifiers, reported to Python so tests can assert which code ran. */
#define QRT_ISA_REF 0
#define QRT_ISA_AVX2 1
#define QRT_ISA_AVX512VNNI 2
#define QRT_ISA_NEON 3
#define QRT_ISA_NEONDOT 4

#if !defined(QRT_FORCE_REF) && (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define QRT_HAVE_X86 1
#endif

#ifdef QRT_HAVE_X86
/** True when the CPU runs AVX2 and FMA (Haswell and later, Zen). */
static inline int qrt_cpu_has_avx2_fma(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
/** True when the CPU runs 512-bit VNNI with BW/VL (Cascade Lake, Ice Lake, Zen 4). */
static inline int qrt_cpu_has_avx512vnni(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}
#endif

#endif /* QRT_TYPES_H */

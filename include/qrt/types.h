/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file types.h
 * @brief Status codes and variant identifiers shared by every qrt kernel.
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

/* Variant identifiers, reported to Python so tests can assert which code ran. */
#define QRT_ISA_REF        0
#define QRT_ISA_AVX2       1
#define QRT_ISA_AVX512VNNI 2
#define QRT_ISA_NEON       3
#define QRT_ISA_NEONDOT    4
#define QRT_ISA_COUNT      5 /**< one past the last code; names: qrt_isa_name() (cpu.h) */

#if !defined(QRT_FORCE_REF) && (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define QRT_HAVE_X86 1
#endif

#endif /* QRT_TYPES_H */

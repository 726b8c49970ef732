/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool1d.h
 * @brief Public 1-d pooling entry points: gate (qrt_pool1d_check) + the best variant this CPU
 *        runs: AVX2 on x86-64 (x86/pool1d_avx2.h), NEON on Arm (neon/pool1d_neon.h), else the
 *        reference (ref/pool1d_ref.h).  Every variant is bit-exact with the reference.
 *
 * `variant`: -1 for the best, QRT_ISA_REF to force the reference (tests compare the two); any
 * other code runs the best.  QRT_DISABLE_ISA (cpu.h) masks a variant at run time.
 */
#ifndef QRT_POOL1D_H
#define QRT_POOL1D_H

#include "qrt/cpu.h"
#include "qrt/ref/pool1d_ref.h"

/** The QRT_ISA_* code of the pooling variant this CPU runs (honours QRT_DISABLE_ISA). */
int qrt_pool1d_isa(void);

/**
 * @brief Quantized max_pool1d over quint8 codes; see qrt_max_pool1d_u8_ref().
 * @param[in] variant -1: the best variant; QRT_ISA_REF: the reference (see the file comment)
 * @return QRT_OK, or QRT_ERR_ARG (nothing written)
 */
qrt_status qrt_max_pool1d_u8(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out,
                             int variant);

/** As qrt_max_pool1d_u8(), for qint8 codes. */
qrt_status qrt_max_pool1d_s8(const qrt_pool1d_params *p, const int8_t *in, int8_t *out,
                             int variant);

/** @brief Quantized avg_pool1d over quint8 codes; see qrt_avg_pool1d_u8_ref(). */
qrt_status qrt_avg_pool1d_u8(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out,
                             int variant);

/** As qrt_avg_pool1d_u8(); qint8 only has ATen's generic kernel. */
qrt_status qrt_avg_pool1d_s8(const qrt_pool1d_params *p, const int8_t *in, int8_t *out,
                             int variant);

/** Adaptive pooling: non-empty, and every window short enough for exact sums. */
qrt_status qrt_adaptive_pool1d_check_(const qrt_pool1d_params *p);

/** @brief Quantized adaptive_avg_pool1d over quint8 codes (ATen's generic arithmetic). */
qrt_status qrt_adaptive_avg_pool1d_u8(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out,
                                      int variant);

/** As qrt_adaptive_avg_pool1d_u8(), for qint8 codes. */
qrt_status qrt_adaptive_avg_pool1d_s8(const qrt_pool1d_params *p, const int8_t *in, int8_t *out,
                                      int variant);

#endif /* QRT_POOL1D_H */

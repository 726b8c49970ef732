/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool1d.h
 * @brief Public 1-d pooling entry points: gate (qrt_pool1d_check) + reference kernel.
 *
 * Pooling reads each input a few times and is memory-bound at the sizes of a 1-d CNN, so the
 * reference is also the shipped variant.
 */
#ifndef QRT_POOL1D_H
#define QRT_POOL1D_H

#include "qrt/ref/pool1d_ref.h"

/**
 * @brief Quantized max_pool1d over quint8 codes; see qrt_max_pool1d_u8_ref().
 * @return QRT_OK, or QRT_ERR_ARG (nothing written)
 */
static inline qrt_status qrt_max_pool1d_u8(const qrt_pool1d_params *p, const uint8_t *in,
                                           uint8_t *out)
{
    const qrt_status st = qrt_pool1d_check(p);
    if (st == QRT_OK)
        qrt_max_pool1d_u8_ref(p, in, out);
    return st;
}

/** As qrt_max_pool1d_u8(), for qint8 codes. */
static inline qrt_status qrt_max_pool1d_s8(const qrt_pool1d_params *p, const int8_t *in,
                                           int8_t *out)
{
    const qrt_status st = qrt_pool1d_check(p);
    if (st == QRT_OK)
        qrt_max_pool1d_s8_ref(p, in, out);
    return st;
}

/** @brief Quantized avg_pool1d over quint8 codes; see qrt_avg_pool1d_u8_ref(). */
static inline qrt_status qrt_avg_pool1d_u8(const qrt_pool1d_params *p, const uint8_t *in,
                                           uint8_t *out)
{
    qrt_status st = qrt_pool1d_check(p);
    if (st == QRT_OK && (p->dilation != 1 || (p->mode == QRT_AVG_POOL_QNNP && !(p->scale > 0))))
        st = QRT_ERR_ARG;
    if (st == QRT_OK)
        qrt_avg_pool1d_u8_ref(p, in, out);
    return st;
}

/** As qrt_avg_pool1d_u8(); qint8 only has ATen's generic kernel. */
static inline qrt_status qrt_avg_pool1d_s8(const qrt_pool1d_params *p, const int8_t *in,
                                           int8_t *out)
{
    qrt_status st = qrt_pool1d_check(p);
    if (st == QRT_OK && (p->dilation != 1 || p->mode == QRT_AVG_POOL_QNNP))
        st = QRT_ERR_ARG;
    if (st == QRT_OK)
        qrt_avg_pool1d_s8_ref(p, in, out);
    return st;
}

/** Adaptive pooling: non-empty, and every window short enough for exact sums. */
static inline qrt_status qrt_adaptive_pool1d_check_(const qrt_pool1d_params *p)
{
    if (p->len_in < 1 || p->len_out < 1 || p->qmin >= p->qmax)
        return QRT_ERR_ARG;
    if (p->len_in / p->len_out + 2u > QRT_POOL1D_MAX_WINDOW)
        return QRT_ERR_ARG;
    return QRT_OK;
}

/** @brief Quantized adaptive_avg_pool1d over quint8 codes (ATen's generic arithmetic). */
static inline qrt_status qrt_adaptive_avg_pool1d_u8(const qrt_pool1d_params *p,
                                                    const uint8_t *in, uint8_t *out)
{
    const qrt_status st = qrt_adaptive_pool1d_check_(p);
    if (st == QRT_OK)
        qrt_adaptive_avg_pool1d_u8_ref(p, in, out);
    return st;
}

/** As qrt_adaptive_avg_pool1d_u8(), for qint8 codes. */
static inline qrt_status qrt_adaptive_avg_pool1d_s8(const qrt_pool1d_params *p,
                                                    const int8_t *in, int8_t *out)
{
    const qrt_status st = qrt_adaptive_pool1d_check_(p);
    if (st == QRT_OK)
        qrt_adaptive_avg_pool1d_s8_ref(p, in, out);
    return st;
}

#endif /* QRT_POOL1D_H */

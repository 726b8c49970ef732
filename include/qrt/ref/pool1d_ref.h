/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool1d_ref.h
 * @brief Reference 1-d max / average / adaptive-average pooling over [rows][len] codes with
 *        torch 2.13's arithmetic. Plain loops; the specification. Every function assumes
 *        qrt_pool1d_check(p) == QRT_OK (the dispatchers in qrt/pool1d.h check it).
 */
#ifndef QRT_REF_POOL1D_REF_H
#define QRT_REF_POOL1D_REF_H

#include <math.h>
#include "qrt/pool1d_params.h"

/*
 * Max pooling, window t: positions t*stride - pad + j*dilation, j < kernel; positions outside
 * [0, len_in) are skipped (padding never wins).  A window with no real position gives qmin,
 * as ATen's generic kernel (its running max starts at the type's lowest value).
 */
#define QRT_MAX_POOL1D_BODY(T)                                                                 \
    const int64_t L = p->len_in, K = p->kernel, S = p->stride, P = p->pad, D = p->dilation;    \
    for (uint32_t r = 0; r < p->rows; ++r) {                                                   \
        const T *x = in + (size_t)r * p->len_in;                                               \
        T *y = out + (size_t)r * p->len_out;                                                   \
        for (int64_t t = 0; t < (int64_t)p->len_out; ++t) {                                    \
            int32_t m = p->qmin;                                                               \
            for (int64_t j = 0; j < K; ++j) {                                                  \
                const int64_t i = t * S - P + j * D;                                           \
                if (i >= 0 && i < L && (int32_t)x[i] > m)                                      \
                    m = x[i];                                                                  \
            }                                                                                  \
            y[t] = (T)m;                                                                       \
        }                                                                                      \
    }

/**
 * @brief Quantized max_pool1d of quint8 codes.
 * @param[in]  p   geometry; len_out as torch computes it (floor or ceil mode)
 * @param[in]  in  [rows][len_in]
 * @param[out] out [rows][len_out]
 */
static inline void qrt_max_pool1d_u8_ref(const qrt_pool1d_params *p, const uint8_t *in,
                                         uint8_t *out)
{
    QRT_MAX_POOL1D_BODY(uint8_t)
}

/** As qrt_max_pool1d_u8_ref(), for qint8 codes. */
static inline void qrt_max_pool1d_s8_ref(const qrt_pool1d_params *p, const int8_t *in,
                                         int8_t *out)
{
    QRT_MAX_POOL1D_BODY(int8_t)
}

/*
 * Average pooling, window t starting at h = t*stride - pad:
 *  QNNP (pytorch_qnnp average pooling; padded positions read the zero point):
 *    acc = sum over real positions of (x - zp);  y = rne(f32(acc) * scale) + zp, clamped.
 *  GENERIC (ATen _qavg_pool_nchw_kernel):
 *    end = min(h + kernel, len_in + pad); pool = end - h; real window [max(h,0), min(end,L));
 *    acc = sum(x) - n_real * zp; div = count_include_pad ? pool : n_real;
 *    y = rne(f32(f32(f32(acc) * f32(1.0 / div)) + (float)zp)), clamped.
 *  GENERIC_VEC (ATen's NHWC kernel on its vectorised channels, QuantizeAvx512): as GENERIC
 *    but y = rne(f32(acc) * f32(1.0 / div)) + zp, clamped (zp added after rounding).
 */
#define QRT_AVG_POOL1D_BODY(T)                                                                 \
    const int64_t L = p->len_in, K = p->kernel, S = p->stride, P = p->pad;                     \
    const int32_t zp = p->zero;                                                                \
    for (uint32_t r = 0; r < p->rows; ++r) {                                                   \
        const T *x = in + (size_t)r * p->len_in;                                               \
        T *y = out + (size_t)r * p->len_out;                                                   \
        for (int64_t t = 0; t < (int64_t)p->len_out; ++t) {                                    \
            const int64_t h = t * S - P;                                                       \
            int64_t end = h + K;                                                               \
            if (p->mode != QRT_AVG_POOL_QNNP && end > L + P)                                   \
                end = L + P;                                                                   \
            const int64_t lo = h > 0 ? h : 0, hi = end < L ? end : L;                          \
            int32_t acc = 0;                                                                   \
            for (int64_t i = lo; i < hi; ++i)                                                  \
                acc += (int32_t)x[i] - zp;                                                     \
            float v;                                                                           \
            if (p->mode == QRT_AVG_POOL_QNNP) {                                                \
                v = rintf((float)acc * p->scale) + (float)zp;                                  \
            } else {                                                                           \
                const int64_t div = p->count_include_pad ? end - h : hi - lo;                  \
                const float rcp = (float)(1.0 / (double)div);                                  \
                if (p->mode == QRT_AVG_POOL_GENERIC_VEC)                                       \
                    v = rintf((float)acc * rcp) + (float)zp;                                   \
                else                                                                           \
                    v = rintf((float)acc * rcp + (float)zp);                                   \
            }                                                                                  \
            v = v < (float)p->qmin ? (float)p->qmin : v;                                       \
            v = v > (float)p->qmax ? (float)p->qmax : v;                                       \
            y[t] = (T)(int32_t)v;                                                              \
        }                                                                                      \
    }

/**
 * @brief Quantized avg_pool1d of quint8 codes (input and output share scale and zero point).
 * @param[in]  p   geometry, mode (QRT_AVG_POOL_QNNP / _GENERIC), count_include_pad, scale
 * @param[in]  in  [rows][len_in]
 * @param[out] out [rows][len_out]
 */
static inline void qrt_avg_pool1d_u8_ref(const qrt_pool1d_params *p, const uint8_t *in,
                                         uint8_t *out)
{
    QRT_AVG_POOL1D_BODY(uint8_t)
}

/** As qrt_avg_pool1d_u8_ref(), for qint8 codes (GENERIC mode: QNNPACK is quint8-only). */
static inline void qrt_avg_pool1d_s8_ref(const qrt_pool1d_params *p, const int8_t *in,
                                         int8_t *out)
{
    QRT_AVG_POOL1D_BODY(int8_t)
}

/*
 * Adaptive average pooling (ATen's generic qadaptive_avg_pool kernel), output t of O:
 *   start = floor(t * L / O), end = ceil((t + 1) * L / O), k = end - start;
 *   y = rne(f32(f32(sum of raw codes) * f32(1 / k))), clamped.  Only p->rows, len_in,
 *   len_out, qmin, qmax are used.
 */
#define QRT_ADAPTIVE_AVG_POOL1D_BODY(T)                                                        \
    const int64_t L = p->len_in, O = p->len_out;                                               \
    for (uint32_t r = 0; r < p->rows; ++r) {                                                   \
        const T *x = in + (size_t)r * p->len_in;                                               \
        T *y = out + (size_t)r * p->len_out;                                                   \
        for (int64_t t = 0; t < O; ++t) {                                                      \
            const int64_t lo = (t * L) / O, hi = ((t + 1) * L + O - 1) / O;                    \
            int32_t acc = 0;                                                                   \
            for (int64_t i = lo; i < hi; ++i)                                                  \
                acc += (int32_t)x[i];                                                          \
            const float rcp = 1.0f / (float)(hi - lo);                                         \
            float v = rintf((float)acc * rcp);                                                 \
            v = v < (float)p->qmin ? (float)p->qmin : v;                                       \
            v = v > (float)p->qmax ? (float)p->qmax : v;                                       \
            y[t] = (T)(int32_t)v;                                                              \
        }                                                                                      \
    }

/** @brief Quantized adaptive_avg_pool1d of quint8 codes, ATen's generic arithmetic. */
static inline void qrt_adaptive_avg_pool1d_u8_ref(const qrt_pool1d_params *p, const uint8_t *in,
                                                  uint8_t *out)
{
    QRT_ADAPTIVE_AVG_POOL1D_BODY(uint8_t)
}

/** As qrt_adaptive_avg_pool1d_u8_ref(), for qint8 codes. */
static inline void qrt_adaptive_avg_pool1d_s8_ref(const qrt_pool1d_params *p, const int8_t *in,
                                                  int8_t *out)
{
    QRT_ADAPTIVE_AVG_POOL1D_BODY(int8_t)
}

#endif /* QRT_REF_POOL1D_REF_H */

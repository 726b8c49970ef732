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
 *
 * Average pooling, window t starting at h = t*stride - pad:
 *  QNNP (pytorch_qnnp average pooling; padded positions read the zero point):
 *    acc = sum over real positions of (x - zp);  y = rne(f32(acc) * scale) + zp, clamped.
 *  GENERIC (ATen _qavg_pool_nchw_kernel):
 *    end = min(h + kernel, len_in + pad); pool = end - h; real window [max(h,0), min(end,L));
 *    acc = sum(x) - n_real * zp; div = count_include_pad ? pool : n_real;
 *    y = rne(f32(f32(f32(acc) * f32(1.0 / div)) + (float)zp)), clamped.
 *  GENERIC_VEC (ATen's NHWC kernel on its vectorised channels, QuantizeAvx512): as GENERIC
 *    but y = rne(f32(acc) * f32(1.0 / div)) + zp, clamped (zp added after rounding).
 *
 * One output per call: the optimized variants (qrt/pool1d.h) reuse these for border outputs.
 */
#define QRT_POOL1D_DEFINE_OUTPUTS(T, sfx)                                                          \
    static inline T qrt_max_pool1d_out_##sfx(const qrt_pool1d_params *p, const T *x, int64_t t) {  \
        int32_t m = p->qmin;                                                                       \
        for (int64_t j = 0; j < (int64_t)p->kernel; ++j) {                                         \
            const int64_t i = t * (int64_t)p->stride - (int64_t)p->pad + j * (int64_t)p->dilation; \
            if (i >= 0 && i < (int64_t)p->len_in && (int32_t)x[i] > m) m = x[i];                   \
        }                                                                                          \
        return (T)m;                                                                               \
    }                                                                                              \
    static inline T qrt_avg_pool1d_out_##sfx(const qrt_pool1d_params *p, const T *x, int64_t t) {  \
        const int64_t L = p->len_in, P = p->pad, h = t * (int64_t)p->stride - P;                   \
        int64_t end = h + (int64_t)p->kernel;                                                      \
        if (p->mode != QRT_AVG_POOL_QNNP && end > L + P) end = L + P;                              \
        const int64_t lo = h > 0 ? h : 0, hi = end < L ? end : L;                                  \
        int32_t acc = 0;                                                                           \
        for (int64_t i = lo; i < hi; ++i) acc += (int32_t)x[i] - p->zero;                          \
        return (T)(int32_t)qrt_avg_pool1d_round_(p, acc,                                           \
                                                 p->count_include_pad ? end - h : hi - lo);        \
    }

/** Requantize one window sum: the three formulas above, clamped to [qmin, qmax]. */
static inline float qrt_avg_pool1d_round_(const qrt_pool1d_params *p, int32_t acc, int64_t div) {
    float v;
    if (p->mode == QRT_AVG_POOL_QNNP) {
        v = rintf((float)acc * p->scale) + (float)p->zero;
    } else {
        const float rcp = (float)(1.0 / (double)div);
        if (p->mode == QRT_AVG_POOL_GENERIC_VEC)
            v = rintf((float)acc * rcp) + (float)p->zero;
        else
            v = rintf((float)acc * rcp + (float)p->zero);
    }
    v = v < (float)p->qmin ? (float)p->qmin : v;
    return v > (float)p->qmax ? (float)p->qmax : v;
}

QRT_POOL1D_DEFINE_OUTPUTS(uint8_t, u8)
QRT_POOL1D_DEFINE_OUTPUTS(int8_t, s8)

#define QRT_POOL1D_REF_BODY(one)                                                                   \
    for (uint32_t r = 0; r < p->rows; ++r)                                                         \
        for (int64_t t = 0; t < (int64_t)p->len_out; ++t)                                          \
            out[(size_t)r * p->len_out + (size_t)t] = one(p, in + (size_t)r * p->len_in, t);

/**
 * @brief Quantized max_pool1d of quint8 codes.
 * @param[in]  p   geometry; len_out as torch computes it (floor or ceil mode)
 * @param[in]  in  [rows][len_in]
 * @param[out] out [rows][len_out]
 */
void qrt_max_pool1d_u8_ref(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out);

/** As qrt_max_pool1d_u8_ref(), for qint8 codes. */
void qrt_max_pool1d_s8_ref(const qrt_pool1d_params *p, const int8_t *in, int8_t *out);

/**
 * @brief Quantized avg_pool1d of quint8 codes (input and output share scale and zero point).
 * @param[in]  p   geometry, mode (QRT_AVG_POOL_*), count_include_pad, scale
 * @param[in]  in  [rows][len_in]
 * @param[out] out [rows][len_out]
 */
void qrt_avg_pool1d_u8_ref(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out);

/** As qrt_avg_pool1d_u8_ref(), for qint8 codes (GENERIC modes: QNNPACK is quint8-only). */
void qrt_avg_pool1d_s8_ref(const qrt_pool1d_params *p, const int8_t *in, int8_t *out);

/*
 * Adaptive average pooling (ATen's generic qadaptive_avg_pool kernel), output t of O:
 *   start = floor(t * L / O), end = ceil((t + 1) * L / O), k = end - start;
 *   y = rne(f32(f32(sum of raw codes) * f32(1 / k))), clamped.  Only p->rows, len_in,
 *   len_out, qmin, qmax are used.
 */
#define QRT_ADAPTIVE_AVG_POOL1D_BODY(T)                                                            \
    const int64_t L = p->len_in, O = p->len_out;                                                   \
    for (uint32_t r = 0; r < p->rows; ++r) {                                                       \
        const T *x = in + (size_t)r * p->len_in;                                                   \
        T *y = out + (size_t)r * p->len_out;                                                       \
        for (int64_t t = 0; t < O; ++t) {                                                          \
            const int64_t lo = (t * L) / O, hi = ((t + 1) * L + O - 1) / O;                        \
            int32_t acc = 0;                                                                       \
            for (int64_t i = lo; i < hi; ++i) acc += (int32_t)x[i];                                \
            const float rcp = 1.0f / (float)(hi - lo);                                             \
            float v = rintf((float)acc * rcp);                                                     \
            v = v < (float)p->qmin ? (float)p->qmin : v;                                           \
            v = v > (float)p->qmax ? (float)p->qmax : v;                                           \
            y[t] = (T)(int32_t)v;                                                                  \
        }                                                                                          \
    }

/** @brief Quantized adaptive_avg_pool1d of quint8 codes, ATen's generic arithmetic. */
void qrt_adaptive_avg_pool1d_u8_ref(const qrt_pool1d_params *p, const uint8_t *in, uint8_t *out);

/** As qrt_adaptive_avg_pool1d_u8_ref(), for qint8 codes. */
void qrt_adaptive_avg_pool1d_s8_ref(const qrt_pool1d_params *p, const int8_t *in, int8_t *out);

#endif /* QRT_REF_POOL1D_REF_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file quant.h
 * @brief Affine quantize / dequantize with torch 2.13's exact arithmetic (x86-64 build).
 *
 * Formulas (docs/quantization.md, measured against torch):
 *  - per-tensor quint8/qint8: t = fmaf(x, inv, zp); t = min(t, 2147483520) (NaN -> that);
 *    q = clamp(rne(t), qmin, qmax).  This is FBGEMM's AVX2 "legacy" path.
 *  - per-tensor qint32 and every per-channel quantize: q = rne(f32(f32(x * inv) + zp)),
 *    then clamp; NaN -> INT32_MIN before the clamp (so qmin, or 0 after torch's truncation
 *    for 8-bit per-channel; see qrt_nan_code).
 *  - dequantize per-tensor: f32(scale * f32(q - zp)); per-channel: the product is taken in
 *    double with the double scale, then rounded to float.
 *
 * Every function here is a plain loop: the x86 variants are the same source compiled with
 * AVX2+FMA enabled, so they are bit-exact with the baseline by construction (fmaf is
 * correctly rounded in both, rintf rounds to nearest even under the default mode).
 */
#ifndef QRT_QUANT_H
#define QRT_QUANT_H

#include <math.h>
#include "qrt/types.h"

/** Largest float below 2^31: FBGEMM clamps with minps before cvtps2dq. */
#define QRT_F32_BELOW_2P31 2147483520.0f

/* --- per-tensor 8-bit: the fused path --------------------------------------------------- */
#define QRT_QUANT_FMA_BODY(T)                                                                  \
    for (size_t i = 0; i < n; ++i) {                                                           \
        float t = fmaf(x[i], inv, zpf);                                                        \
        t = t < QRT_F32_BELOW_2P31 ? t : QRT_F32_BELOW_2P31; /* minps: NaN -> 2^31-128 */      \
        t = rintf(t);                                                                          \
        t = t > qminf ? t : qminf;                                                             \
        t = t < qmaxf ? t : qmaxf;                                                             \
        out[i] = (T)(int32_t)t;                                                                \
    }

/**
 * @brief Quantize n floats to uint8 with torch's per-tensor formula.
 * @param[in] x    [n] float32
 * @param[in] inv  f32(1 / f32(scale))
 * @param[in] zpf  (float)zero_point
 * @param[in] qminf, qmaxf  clamp bounds as floats (0..255, or a narrower range)
 * @param[out] out [n]
 */
static inline void qrt_quantize_f32_u8_ref(const float *x, size_t n, float inv, float zpf,
                                           float qminf, float qmaxf, uint8_t *out)
{
    QRT_QUANT_FMA_BODY(uint8_t)
}

/** As qrt_quantize_f32_u8_ref(), to int8. */
static inline void qrt_quantize_f32_s8_ref(const float *x, size_t n, float inv, float zpf,
                                           float qminf, float qmaxf, int8_t *out)
{
    QRT_QUANT_FMA_BODY(int8_t)
}

/* --- per-tensor qint32 and per-channel: the scalar (non-fused) path ---------------------- */

/** rne(f32(f32(x * inv) + zpf)) clamped to [qmin, qmax] in double; NaN -> nan_code. */
#define QRT_QUANT_SCALAR_BODY(T)                                                               \
    for (size_t i = 0; i < n; ++i) {                                                           \
        float t = x[i] * inv;                                                                  \
        t = t + zpf;                                                                           \
        double r = (double)rintf(t);                                                           \
        T v;                                                                                   \
        if (r != r)                                                                            \
            v = (T)nan_code;                                                                   \
        else                                                                                   \
            v = (T)(r < qmin ? qmin : (r > qmax ? qmax : r));                                  \
        out[i] = v;                                                                            \
    }

/**
 * @brief Non-fused quantize of n floats (qint32 per-tensor; every per-channel row).
 * @param[in] nan_code what a NaN becomes (torch: INT32_MIN, truncated to the dtype)
 */
static inline void qrt_quantize_scalar_f32_u8_ref(const float *x, size_t n, float inv, float zpf,
                                                  double qmin, double qmax, int32_t nan_code,
                                                  uint8_t *out)
{
    QRT_QUANT_SCALAR_BODY(uint8_t)
}
static inline void qrt_quantize_scalar_f32_s8_ref(const float *x, size_t n, float inv, float zpf,
                                                  double qmin, double qmax, int32_t nan_code,
                                                  int8_t *out)
{
    QRT_QUANT_SCALAR_BODY(int8_t)
}
static inline void qrt_quantize_scalar_f32_s32_ref(const float *x, size_t n, float inv, float zpf,
                                                   double qmin, double qmax, int32_t nan_code,
                                                   int32_t *out)
{
    QRT_QUANT_SCALAR_BODY(int32_t)
}

/* --- dequantize ------------------------------------------------------------------------ */
#define QRT_DEQUANT_BODY                                                                       \
    for (size_t i = 0; i < n; ++i)                                                             \
        out[i] = scale * (float)((int32_t)q[i] - zp);

/** @brief out[i] = f32(scale * f32(q[i] - zp)); bit-exact with torch's per-tensor dequantize. */
static inline void qrt_dequantize_u8_f32_ref(const uint8_t *q, size_t n, float scale, int32_t zp,
                                             float *out)
{
    QRT_DEQUANT_BODY
}
static inline void qrt_dequantize_s8_f32_ref(const int8_t *q, size_t n, float scale, int32_t zp,
                                             float *out)
{
    QRT_DEQUANT_BODY
}
/** qint32: q - zp is formed in 64 bits and rounded to float once, as torch does. */
static inline void qrt_dequantize_s32_f32_ref(const int32_t *q, size_t n, float scale, int64_t zp,
                                              float *out)
{
    for (size_t i = 0; i < n; ++i)
        out[i] = scale * (float)((int64_t)q[i] - zp);
}

/** Per-channel dequantize row: f32((double)f32((float)q - (float)zp) * scale_d). */
#define QRT_DEQUANT_PC_BODY                                                                    \
    for (size_t i = 0; i < n; ++i)                                                             \
        out[i] = (float)((double)((float)q[i] - zpf) * scale_d);

static inline void qrt_dequantize_pc_u8_f32_ref(const uint8_t *q, size_t n, double scale_d,
                                                float zpf, float *out)
{
    QRT_DEQUANT_PC_BODY
}
static inline void qrt_dequantize_pc_s8_f32_ref(const int8_t *q, size_t n, double scale_d,
                                                float zpf, float *out)
{
    QRT_DEQUANT_PC_BODY
}
static inline void qrt_dequantize_pc_s32_f32_ref(const int32_t *q, size_t n, double scale_d,
                                                 float zpf, float *out)
{
    QRT_DEQUANT_PC_BODY
}

/* --- x86 variants: the same bodies compiled for AVX2+FMA ------------------------------- */
#ifdef QRT_HAVE_X86
#define QRT_AVX2 __attribute__((target("avx2,fma")))
QRT_AVX2 static void qrt_quantize_f32_u8__avx2(const float *x, size_t n, float inv, float zpf,
                                               float qminf, float qmaxf, uint8_t *out)
{
    QRT_QUANT_FMA_BODY(uint8_t)
}
QRT_AVX2 static void qrt_quantize_f32_s8__avx2(const float *x, size_t n, float inv, float zpf,
                                               float qminf, float qmaxf, int8_t *out)
{
    QRT_QUANT_FMA_BODY(int8_t)
}
QRT_AVX2 static void qrt_dequantize_u8_f32__avx2(const uint8_t *q, size_t n, float scale,
                                                 int32_t zp, float *out)
{
    QRT_DEQUANT_BODY
}
QRT_AVX2 static void qrt_dequantize_s8_f32__avx2(const int8_t *q, size_t n, float scale,
                                                 int32_t zp, float *out)
{
    QRT_DEQUANT_BODY
}
#endif

/* --- dispatchers ----------------------------------------------------------------------- */
/** Which variant the dispatchers below run on this CPU (QRT_ISA_*). */
static inline int qrt_quant_isa(void)
{
#ifdef QRT_HAVE_X86
    if (qrt_cpu_has_avx2_fma())
        return QRT_ISA_AVX2;
#endif
    return QRT_ISA_REF;
}

/** Same contract as qrt_quantize_f32_u8_ref(); `variant` < 0 picks the best for this CPU. */
static inline void qrt_quantize_f32_u8(const float *x, size_t n, float inv, float zpf, float qminf,
                                       float qmaxf, uint8_t *out, int variant)
{
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_quant_isa() == QRT_ISA_AVX2) {
        qrt_quantize_f32_u8__avx2(x, n, inv, zpf, qminf, qmaxf, out);
        return;
    }
#endif
    (void)variant;
    qrt_quantize_f32_u8_ref(x, n, inv, zpf, qminf, qmaxf, out);
}
static inline void qrt_quantize_f32_s8(const float *x, size_t n, float inv, float zpf, float qminf,
                                       float qmaxf, int8_t *out, int variant)
{
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_quant_isa() == QRT_ISA_AVX2) {
        qrt_quantize_f32_s8__avx2(x, n, inv, zpf, qminf, qmaxf, out);
        return;
    }
#endif
    (void)variant;
    qrt_quantize_f32_s8_ref(x, n, inv, zpf, qminf, qmaxf, out);
}
static inline void qrt_dequantize_u8_f32(const uint8_t *q, size_t n, float scale, int32_t zp,
                                         float *out, int variant)
{
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_quant_isa() == QRT_ISA_AVX2) {
        qrt_dequantize_u8_f32__avx2(q, n, scale, zp, out);
        return;
    }
#endif
    (void)variant;
    qrt_dequantize_u8_f32_ref(q, n, scale, zp, out);
}
static inline void qrt_dequantize_s8_f32(const int8_t *q, size_t n, float scale, int32_t zp,
                                         float *out, int variant)
{
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_quant_isa() == QRT_ISA_AVX2) {
        qrt_dequantize_s8_f32__avx2(q, n, scale, zp, out);
        return;
    }
#endif
    (void)variant;
    qrt_dequantize_s8_f32_ref(q, n, scale, zp, out);
}

#endif /* QRT_QUANT_H */

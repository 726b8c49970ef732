/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file quant.h
 * @brief Affine quantize / dequantize with torch 2.13's exact arithmetic (x86-64 build).
 *
 * Formulas (docs/quantization.md, measured against torch):
 *  - per-tensor quint8/qint8 ("fused"): t = fmaf(x, inv, zp); t = min(t, 2147483520) (NaN ->
 *    that); q = clamp(rne(t), qmin, qmax).  This is FBGEMM's AVX2 "legacy" path.
 *  - per-tensor qint32 and every per-channel quantize ("scalar"): t = f32(f32(x * inv) + zp);
 *    q = clamp(rne(t), qmin, qmax); NaN -> INT32_MIN, truncated to the element type (so 0 for
 *    quint8/qint8, INT32_MIN for qint32).
 *  - dequantize per-tensor: f32(scale * f32(q - zp)); for qint32, q - zp wraps modulo 2^32
 *    as torch's int32 subtraction does.  Per-channel: f32((double)f32(q - zp) * scale_d), the
 *    product taken in double with the double scale.
 *
 * Every kernel is one plain loop written once as a macro body; the x86 variants are the same
 * body compiled for AVX2+FMA or AVX-512, so they are bit-exact with the reference by
 * construction: fmaf is correctly rounded everywhere (hardware FMA or glibc's exact software
 * fmaf), rintf rounds to nearest even under the default rounding mode, and every other step
 * is one IEEE float or double operation.  The loops are written branch-free (selects only) so
 * that GCC and Clang vectorize them; tests/test_quant.py checks ref == dispatched.
 *
 * Platform notes: this file must be compiled with -ffp-contract=off (GCC contracts x*inv + zp
 * into an FMA across statements otherwise, which changes ties) and without -ffast-math; the
 * #error below catches the latter, FLT_EVAL_METHOD catches x87 double rounding.
 */
#ifndef QRT_QUANT_H
#define QRT_QUANT_H

#include <float.h>
#include <math.h>
#include "qrt/types.h"

#if defined(__FAST_MATH__)
#error "qrt/quant.h must not be compiled with -ffast-math: results would not match torch"
#endif
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0 && FLT_EVAL_METHOD != -1
#error "qrt/quant.h needs float arithmetic evaluated in float (FLT_EVAL_METHOD == 0), e.g. SSE2"
#endif
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/** Largest float below 2^31: FBGEMM clamps with minps before cvtps2dq. */
#define QRT_F32_BELOW_2P31 2147483520.0f
#define QRT_F32_2P31       2147483648.0f

/* ---- loop bodies (each variant below instantiates these) ------------------------------ */

/* Per-tensor 8-bit, fused: fmaf, then minps (NaN -> 2^31-128), rne, clamp. */
#define QRT_QUANT_FMA_BODY(T)                                                                      \
    for (size_t i = 0; i < n; ++i) {                                                               \
        float t = fmaf(x[i], inv, zpf);                                                            \
        t = t < QRT_F32_BELOW_2P31 ? t : QRT_F32_BELOW_2P31;                                       \
        t = rintf(t);                                                                              \
        t = t > qminf ? t : qminf;                                                                 \
        t = t < qmaxf ? t : qmaxf;                                                                 \
        out[i] = (T)(int32_t)t;                                                                    \
    }

/* Scalar path, 8-bit: t = f32(f32(x*inv) + zp); NaN -> 0 (INT32_MIN truncated); else clamp. */
#define QRT_QUANT_SCALAR8_BODY(T, INV, ZPF)                                                        \
    for (size_t i = 0; i < n; ++i) {                                                               \
        float t = x[i] * (INV);                                                                    \
        t = t + (ZPF);                                                                             \
        float r = rintf(t);                                                                        \
        r = r > qminf ? r : qminf;                                                                 \
        r = r < qmaxf ? r : qmaxf;                                                                 \
        r = t == t ? r : 0.0f;                                                                     \
        out[i] = (T)(int32_t)r;                                                                    \
    }

/* Scalar path, int32: clamp to [-2^31, 2^31-1]; NaN -> INT32_MIN (the max() picks -2^31). */
#define QRT_QUANT_SCALAR32_BODY(INV, ZPF)                                                          \
    for (size_t i = 0; i < n; ++i) {                                                               \
        float t = x[i] * (INV);                                                                    \
        t = t + (ZPF);                                                                             \
        float r = rintf(t);                                                                        \
        float c = r > -QRT_F32_2P31 ? r : -QRT_F32_2P31;                                           \
        c = c < QRT_F32_BELOW_2P31 ? c : QRT_F32_BELOW_2P31; /* keep the cast in range */          \
        int32_t v = (int32_t)c;                                                                    \
        out[i] = r >= QRT_F32_2P31 ? INT32_MAX : v;                                                \
    }

#define QRT_DEQUANT_BODY                                                                           \
    for (size_t i = 0; i < n; ++i) out[i] = scale * (float)((int32_t)q[i] - zp);

/* int32: torch subtracts in int32 and wraps; do it in uint32 (defined) and reinterpret. */
#define QRT_DEQUANT32_BODY                                                                         \
    for (size_t i = 0; i < n; ++i) out[i] = scale * (float)(int32_t)((uint32_t)q[i] - (uint32_t)zp);

#define QRT_DEQUANT_PC_BODY                                                                        \
    for (size_t i = 0; i < n; ++i) out[i] = (float)((double)((float)q[i] - zpf) * scale_d);

/* Per-channel dequantize with one (scale, zp) per element (channel axis innermost). */
#define QRT_DEQUANT_PCV_BODY                                                                       \
    for (size_t i = 0; i < n; ++i) out[i] = (float)((double)((float)q[i] - zpf[i]) * scale_d[i]);

/* ---- the reference kernels (the specification) ---------------------------------------- */

/**
 * @brief Quantize n floats to uint8 with torch's per-tensor formula (fused path).
 * @param[in] x    [n] float32
 * @param[in] n    element count
 * @param[in] inv  f32(1 / f32(scale))
 * @param[in] zpf  (float)zero_point
 * @param[in] qminf lower clamp bound (0, or a narrower range) as a float
 * @param[in] qmaxf upper clamp bound (255, or a narrower range) as a float
 * @param[out] out [n]
 */
void qrt_quantize_f32_u8_ref(const float *x, size_t n, float inv, float zpf, float qminf,
                             float qmaxf, uint8_t *out);

/** @brief As qrt_quantize_f32_u8_ref(), to int8 (qminf/qmaxf within -128..127). */
void qrt_quantize_f32_s8_ref(const float *x, size_t n, float inv, float zpf, float qminf,
                             float qmaxf, int8_t *out);

/**
 * @brief Non-fused ("scalar") quantize to uint8: per-channel rows.
 *
 * q = clamp(rne(f32(f32(x * inv) + zpf)), qmin, qmax); NaN -> nan_code.
 * @param[in] x    [n] float32
 * @param[in] n    element count
 * @param[in] inv  f32(1 / f32(scale))
 * @param[in] zpf  (float)zero_point
 * @param[in] qmin lower bound (0 for quint8)
 * @param[in] qmax upper bound (255 for quint8)
 * @param[in] nan_code what NaN becomes: torch gives INT32_MIN truncated to the type, 0 here;
 *                     kept as a parameter for ABI stability, only 0 is supported for 8 bits
 * @param[out] out [n]
 */
void qrt_quantize_scalar_f32_u8_ref(const float *x, size_t n, float inv, float zpf, double qmin,
                                    double qmax, int32_t nan_code, uint8_t *out);
/** @brief As qrt_quantize_scalar_f32_u8_ref(), to int8. */
void qrt_quantize_scalar_f32_s8_ref(const float *x, size_t n, float inv, float zpf, double qmin,
                                    double qmax, int32_t nan_code, int8_t *out);
/**
 * @brief As qrt_quantize_scalar_f32_u8_ref(), to int32 (qint32 per-tensor and per-channel).
 *
 * The clamp is the full int32 range and NaN gives INT32_MIN, as torch; qmin, qmax and nan_code
 * are accepted for ABI stability and must be INT32_MIN, INT32_MAX and INT32_MIN.
 */
void qrt_quantize_scalar_f32_s32_ref(const float *x, size_t n, float inv, float zpf, double qmin,
                                     double qmax, int32_t nan_code, int32_t *out);

/**
 * @brief Scalar-path quantize with one (inv, zp) per element: a per-channel tensor whose
 * channel axis is (nearly) innermost, processed as rows of C*inner elements.
 * @param[in] inv [n] per-element f32(1/f32(scale[c]))
 * @param[in] zpf [n] per-element (float)zero_point[c]
 */
void qrt_quantize_vparams_f32_u8_ref(const float *x, size_t n, const float *inv, const float *zpf,
                                     uint8_t *out);
/** @brief As qrt_quantize_vparams_f32_u8_ref(), to int8. */
void qrt_quantize_vparams_f32_s8_ref(const float *x, size_t n, const float *inv, const float *zpf,
                                     int8_t *out);
/** @brief As qrt_quantize_vparams_f32_u8_ref(), to int32. */
void qrt_quantize_vparams_f32_s32_ref(const float *x, size_t n, const float *inv, const float *zpf,
                                      int32_t *out);

/**
 * @brief out[i] = f32(scale * f32(q[i] - zp)); bit-exact with torch's per-tensor dequantize.
 * @param[in] q     [n] uint8
 * @param[in] n     element count
 * @param[in] scale f32(scale)
 * @param[in] zp    zero point
 * @param[out] out  [n] float32
 */
void qrt_dequantize_u8_f32_ref(const uint8_t *q, size_t n, float scale, int32_t zp, float *out);
/** @brief As qrt_dequantize_u8_f32_ref(), from int8. */
void qrt_dequantize_s8_f32_ref(const int8_t *q, size_t n, float scale, int32_t zp, float *out);
/**
 * @brief qint32 per-tensor dequantize: f32(scale * f32(wrap32(q - zp))).
 *
 * torch subtracts in int32, so q - zp wraps modulo 2^32 when it overflows (only possible with
 * a zero point far from 0); qrt reproduces that.  @param[in] zp in int32 range.
 */
void qrt_dequantize_s32_f32_ref(const int32_t *q, size_t n, float scale, int64_t zp, float *out);

/**
 * @brief Per-channel dequantize row: out[i] = f32((double)f32((float)q[i] - zpf) * scale_d).
 * @param[in] scale_d the channel's scale as given (double, not rounded to float)
 * @param[in] zpf     (float)zero_point[c]
 */
void qrt_dequantize_pc_u8_f32_ref(const uint8_t *q, size_t n, double scale_d, float zpf,
                                  float *out);
/** @brief As qrt_dequantize_pc_u8_f32_ref(), from int8. */
void qrt_dequantize_pc_s8_f32_ref(const int8_t *q, size_t n, double scale_d, float zpf, float *out);
/** @brief As qrt_dequantize_pc_u8_f32_ref(), from int32. */
void qrt_dequantize_pc_s32_f32_ref(const int32_t *q, size_t n, double scale_d, float zpf,
                                   float *out);

/**
 * @brief Per-channel dequantize with per-element parameters: out[i] =
 * f32((double)f32((float)q[i] - zpf[i]) * scale_d[i]); rows of C*inner elements when the
 * channel axis is (nearly) innermost.
 * @param[in] scale_d [n] per-element channel scale (double)
 * @param[in] zpf     [n] per-element (float)zero_point
 */
void qrt_dequantize_pcv_u8_f32_ref(const uint8_t *q, size_t n, const double *scale_d,
                                   const float *zpf, float *out);
/** @brief As qrt_dequantize_pcv_u8_f32_ref(), from int8. */
void qrt_dequantize_pcv_s8_f32_ref(const int8_t *q, size_t n, const double *scale_d,
                                   const float *zpf, float *out);
/** @brief As qrt_dequantize_pcv_u8_f32_ref(), from int32. */
void qrt_dequantize_pcv_s32_f32_ref(const int32_t *q, size_t n, const double *scale_d,
                                    const float *zpf, float *out);

/* ---- armv7: the fused bodies compiled for VFPv4 ------------------------------------------
 * Debian armhf's baseline FPU (VFPv3-D16) has no fused multiply-add, so the reference's fmaf
 * is glibc's software fmaf (~100 instructions per element under qemu cortex-a7).  The same
 * body compiled with -mfpu=vfpv4-d16 (src/neon/quant_vfpv4.c) issues vfma.f32: scalar VFP,
 * IEEE arithmetic (no flush to zero: GCC does not put float loops on armv7 NEON without
 * -funsafe-math-optimizations), so it is bit-exact with the reference by construction.
 * quant.c runs it when AT_HWCAP has VFPv4 and the call does not force the reference. */
#if defined(__arm__) && !defined(__aarch64__)
void qrt_quantize_f32_u8__vfpv4(const float *x, size_t n, float inv, float zpf, float qminf,
                                float qmaxf, uint8_t *out);
void qrt_quantize_f32_s8__vfpv4(const float *x, size_t n, float inv, float zpf, float qminf,
                                float qmaxf, int8_t *out);
#endif

/* ---- x86 variants: the same bodies compiled for AVX2+FMA and for AVX-512 --------------- */
#ifdef QRT_HAVE_X86
#define QRT_TGT_AVX2 __attribute__((target("avx2,fma")))
#if defined(__clang__)
#define QRT_TGT_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")))
#else /* GCC would otherwise keep 256-bit vectors for these loops */
#define QRT_TGT_AVX512                                                                             \
    __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq,prefer-vector-width=512")))
#endif

/* One function per (ISA, kernel).  Bit-exact with the matching _ref (same body). */
#define QRT_DEFINE_X86_VARIANTS(ISA, TGT)                                                          \
    TGT void qrt_quantize_f32_u8__##ISA(const float *x, size_t n, float inv, float zpf,            \
                                        float qminf, float qmaxf,                                  \
                                        uint8_t *out){QRT_QUANT_FMA_BODY(                          \
        uint8_t)} TGT void qrt_quantize_f32_s8__##ISA(const float *x, size_t n, float inv,         \
                                                      float zpf, float qminf, float qmaxf,         \
                                                      int8_t *out){QRT_QUANT_FMA_BODY(             \
        int8_t)} TGT void qrt_quantize_scalar_f32_u8__##ISA(const float *x, size_t n, float inv,   \
                                                            float zpf, float qminf, float qmaxf,   \
                                                            uint8_t *out){QRT_QUANT_SCALAR8_BODY(  \
        uint8_t, inv,                                                                              \
        zpf)} TGT void qrt_quantize_scalar_f32_s8__##ISA(const float *x, size_t n, float inv,      \
                                                         float zpf, float qminf, float qmaxf,      \
                                                         int8_t *out){QRT_QUANT_SCALAR8_BODY(      \
        int8_t, inv,                                                                               \
        zpf)} TGT void qrt_quantize_scalar_f32_s32__##ISA(const float *x, size_t n, float inv,     \
                                                          float zpf,                               \
                                                          int32_t *out){QRT_QUANT_SCALAR32_BODY(   \
        inv, zpf)} TGT void qrt_quantize_vparams_f32_u8__##ISA(const float *x, size_t n,           \
                                                               const float *inv, const float *zpf, \
                                                               uint8_t *out) {                     \
        const float qminf = 0.0f, qmaxf = 255.0f;                                                  \
        QRT_QUANT_SCALAR8_BODY(uint8_t, inv[i], zpf[i])                                            \
    }                                                                                              \
    TGT void qrt_quantize_vparams_f32_s8__##ISA(const float *x, size_t n, const float *inv,        \
                                                const float *zpf, int8_t *out) {                   \
        const float qminf = -128.0f, qmaxf = 127.0f;                                               \
        QRT_QUANT_SCALAR8_BODY(int8_t, inv[i], zpf[i])                                             \
    }                                                                                              \
    TGT void qrt_quantize_vparams_f32_s32__##ISA(const float *x, size_t n, const float *inv,       \
                                                 const float *zpf,                                 \
                                                 int32_t *out){QRT_QUANT_SCALAR32_BODY(            \
        inv[i], zpf[i])} TGT void qrt_dequantize_u8_f32__##ISA(const uint8_t *q, size_t n,         \
                                                               float scale, int32_t zp,            \
                                                               float *out){                        \
        QRT_DEQUANT_BODY} TGT void qrt_dequantize_s8_f32__##ISA(const int8_t *q, size_t n,         \
                                                                float scale, int32_t zp,           \
                                                                float *out){                       \
        QRT_DEQUANT_BODY} TGT void qrt_dequantize_s32_f32__##ISA(const int32_t *q, size_t n,       \
                                                                 float scale, int64_t zp,          \
                                                                 float *out){                      \
        QRT_DEQUANT32_BODY} TGT void qrt_dequantize_pc_u8_f32__##ISA(const uint8_t *q, size_t n,   \
                                                                     double scale_d, float zpf,    \
                                                                     float *out){                  \
        QRT_DEQUANT_PC_BODY} TGT void qrt_dequantize_pc_s8_f32__##ISA(const int8_t *q, size_t n,   \
                                                                      double scale_d, float zpf,   \
                                                                      float *out){                 \
        QRT_DEQUANT_PC_BODY} TGT void qrt_dequantize_pc_s32_f32__##ISA(const int32_t *q, size_t n, \
                                                                       double scale_d, float zpf,  \
                                                                       float *out){                \
        QRT_DEQUANT_PC_BODY} TGT void qrt_dequantize_pcv_u8_f32__##ISA(const uint8_t *q, size_t n, \
                                                                       const double *scale_d,      \
                                                                       const float *zpf,           \
                                                                       float *out){                \
        QRT_DEQUANT_PCV_BODY} TGT void qrt_dequantize_pcv_s8_f32__##ISA(const int8_t *q, size_t n, \
                                                                        const double *scale_d,     \
                                                                        const float *zpf,          \
                                                                        float *out){               \
        QRT_DEQUANT_PCV_BODY} TGT void qrt_dequantize_pcv_s32_f32__##ISA(const int32_t *q,         \
                                                                         size_t n,                 \
                                                                         const double *scale_d,    \
                                                                         const float *zpf,         \
                                                                         float *out) {             \
        QRT_DEQUANT_PCV_BODY                                                                       \
    }

/* Declarations of the x86 variants (defined by QRT_DEFINE_X86_VARIANTS in
 * src/x86/quant_avx2.c and src/x86/quant_avx512.c, each compiled with its own flags). */
#define QRT_DECLARE_X86_VARIANTS(ISA)                                                              \
    void qrt_quantize_f32_u8__##ISA(const float *x, size_t n, float inv, float zpf, float qminf,   \
                                    float qmaxf, uint8_t *out);                                    \
    void qrt_quantize_f32_s8__##ISA(const float *x, size_t n, float inv, float zpf, float qminf,   \
                                    float qmaxf, int8_t *out);                                     \
    void qrt_quantize_scalar_f32_u8__##ISA(const float *x, size_t n, float inv, float zpf,         \
                                           float qminf, float qmaxf, uint8_t *out);                \
    void qrt_quantize_scalar_f32_s8__##ISA(const float *x, size_t n, float inv, float zpf,         \
                                           float qminf, float qmaxf, int8_t *out);                 \
    void qrt_quantize_scalar_f32_s32__##ISA(const float *x, size_t n, float inv, float zpf,        \
                                            int32_t *out);                                         \
    void qrt_quantize_vparams_f32_u8__##ISA(const float *x, size_t n, const float *inv,            \
                                            const float *zpf, uint8_t *out);                       \
    void qrt_quantize_vparams_f32_s8__##ISA(const float *x, size_t n, const float *inv,            \
                                            const float *zpf, int8_t *out);                        \
    void qrt_quantize_vparams_f32_s32__##ISA(const float *x, size_t n, const float *inv,           \
                                             const float *zpf, int32_t *out);                      \
    void qrt_dequantize_u8_f32__##ISA(const uint8_t *q, size_t n, float scale, int32_t zp,         \
                                      float *out);                                                 \
    void qrt_dequantize_s8_f32__##ISA(const int8_t *q, size_t n, float scale, int32_t zp,          \
                                      float *out);                                                 \
    void qrt_dequantize_s32_f32__##ISA(const int32_t *q, size_t n, float scale, int64_t zp,        \
                                       float *out);                                                \
    void qrt_dequantize_pc_u8_f32__##ISA(const uint8_t *q, size_t n, double scale_d, float zpf,    \
                                         float *out);                                              \
    void qrt_dequantize_pc_s8_f32__##ISA(const int8_t *q, size_t n, double scale_d, float zpf,     \
                                         float *out);                                              \
    void qrt_dequantize_pc_s32_f32__##ISA(const int32_t *q, size_t n, double scale_d, float zpf,   \
                                          float *out);                                             \
    void qrt_dequantize_pcv_u8_f32__##ISA(const uint8_t *q, size_t n, const double *scale_d,       \
                                          const float *zpf, float *out);                           \
    void qrt_dequantize_pcv_s8_f32__##ISA(const int8_t *q, size_t n, const double *scale_d,        \
                                          const float *zpf, float *out);                           \
    void qrt_dequantize_pcv_s32_f32__##ISA(const int32_t *q, size_t n, const double *scale_d,      \
                                           const float *zpf, float *out);
QRT_DECLARE_X86_VARIANTS(avx2)
QRT_DECLARE_X86_VARIANTS(avx512)
#endif /* QRT_HAVE_X86 */

/* ---- dispatch (src/quant.c) ----------------------------------------------------------- */

/** @brief The best variant this CPU runs (QRT_ISA_REF, QRT_ISA_AVX2 or QRT_ISA_AVX512VNNI;
 *         aarch64: QRT_ISA_NEON, which only the fused per-tensor 8-bit quantize has). */
int qrt_quant_isa(void);

/**
 * @brief The variant to run for a request: `variant` < 0 asks for the best one; a request for
 * a variant the CPU lacks falls back to the best one it has below it.
 */
int qrt_quant_pick(int variant);

/** @brief Same contract as qrt_quantize_f32_u8_ref(); `variant`: QRT_ISA_* or -1 for best. */
void qrt_quantize_f32_u8(const float *x, size_t n, float inv, float zpf, float qminf, float qmaxf,
                         uint8_t *out, int variant);
/** @brief Same contract as qrt_quantize_f32_s8_ref(). */
void qrt_quantize_f32_s8(const float *x, size_t n, float inv, float zpf, float qminf, float qmaxf,
                         int8_t *out, int variant);
/** @brief Same contract as qrt_quantize_scalar_f32_u8_ref() with nan_code 0. */
void qrt_quantize_scalar_f32_u8(const float *x, size_t n, float inv, float zpf, double qmin,
                                double qmax, uint8_t *out, int variant);
/** @brief Same contract as qrt_quantize_scalar_f32_s8_ref() with nan_code 0. */
void qrt_quantize_scalar_f32_s8(const float *x, size_t n, float inv, float zpf, double qmin,
                                double qmax, int8_t *out, int variant);
/** @brief Same contract as qrt_quantize_scalar_f32_s32_ref() (full int32 range). */
void qrt_quantize_scalar_f32_s32(const float *x, size_t n, float inv, float zpf, int32_t *out,
                                 int variant);
/** @brief Same contract as qrt_quantize_vparams_f32_u8_ref(). */
void qrt_quantize_vparams_f32_u8(const float *x, size_t n, const float *inv, const float *zpf,
                                 uint8_t *out, int variant);
/** @brief Same contract as qrt_quantize_vparams_f32_s8_ref(). */
void qrt_quantize_vparams_f32_s8(const float *x, size_t n, const float *inv, const float *zpf,
                                 int8_t *out, int variant);
/** @brief Same contract as qrt_quantize_vparams_f32_s32_ref(). */
void qrt_quantize_vparams_f32_s32(const float *x, size_t n, const float *inv, const float *zpf,
                                  int32_t *out, int variant);
/** @brief Same contract as qrt_dequantize_u8_f32_ref(). */
void qrt_dequantize_u8_f32(const uint8_t *q, size_t n, float scale, int32_t zp, float *out,
                           int variant);
/** @brief Same contract as qrt_dequantize_s8_f32_ref(). */
void qrt_dequantize_s8_f32(const int8_t *q, size_t n, float scale, int32_t zp, float *out,
                           int variant);
/** @brief Same contract as qrt_dequantize_s32_f32_ref(). */
void qrt_dequantize_s32_f32(const int32_t *q, size_t n, float scale, int64_t zp, float *out,
                            int variant);
/** @brief Same contract as qrt_dequantize_pc_u8_f32_ref(). */
void qrt_dequantize_pc_u8_f32(const uint8_t *q, size_t n, double scale_d, float zpf, float *out,
                              int variant);
/** @brief Same contract as qrt_dequantize_pc_s8_f32_ref(). */
void qrt_dequantize_pc_s8_f32(const int8_t *q, size_t n, double scale_d, float zpf, float *out,
                              int variant);
/** @brief Same contract as qrt_dequantize_pc_s32_f32_ref(). */
void qrt_dequantize_pc_s32_f32(const int32_t *q, size_t n, double scale_d, float zpf, float *out,
                               int variant);

/** @brief Same contract as qrt_dequantize_pcv_u8_f32_ref(). */
void qrt_dequantize_pcv_u8_f32(const uint8_t *q, size_t n, const double *scale_d, const float *zpf,
                               float *out, int variant);
/** @brief Same contract as qrt_dequantize_pcv_s8_f32_ref(). */
void qrt_dequantize_pcv_s8_f32(const int8_t *q, size_t n, const double *scale_d, const float *zpf,
                               float *out, int variant);
/** @brief Same contract as qrt_dequantize_pcv_s32_f32_ref(). */
void qrt_dequantize_pcv_s32_f32(const int32_t *q, size_t n, const double *scale_d, const float *zpf,
                                float *out, int variant);

#endif /* QRT_QUANT_H */

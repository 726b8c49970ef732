/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file quant.c
 * @brief qrt/quant.h: run-time choice of the quantize / dequantize variant.  Generic code; on
 *        Arm (reference only) it needs no libc, so the freestanding harness can include it.
 */
#include "qrt/quant.h"
#if defined(__arm__) && !defined(__aarch64__) && defined(__linux__) && !defined(QRT_FORCE_REF) && \
    !defined(QRT_QUANT_FREESTANDING)
#define QRT_QUANT_VFPV4 1 /* armv7 libqrt_core: the VFPv4 unit is linked in */
#endif
#if defined(QRT_HAVE_X86) || defined(QRT_QUANT_VFPV4) || \
    (defined(__aarch64__) && !defined(QRT_QUANT_FREESTANDING))
#include "qrt/cpu.h" /* not in tests/c/quant_harness.c, which builds quant.c freestanding */
#endif

#ifdef QRT_HAVE_X86
#define QRT_QUANT_DISPATCH(CALL_AVX512, CALL_AVX2, CALL_REF)                                       \
    switch (qrt_quant_pick(variant)) {                                                             \
    case QRT_ISA_AVX512VNNI:                                                                       \
        CALL_AVX512;                                                                               \
        return;                                                                                    \
    case QRT_ISA_AVX2:                                                                             \
        CALL_AVX2;                                                                                 \
        return;                                                                                    \
    default:                                                                                       \
        CALL_REF;                                                                                  \
        return;                                                                                    \
    }
#else
#define QRT_QUANT_DISPATCH(CALL_AVX512, CALL_AVX2, CALL_REF)                                       \
    (void)variant;                                                                                 \
    CALL_REF;
#endif

#if defined(__aarch64__) && !defined(QRT_FORCE_REF)
/*
 * aarch64 (NEON is baseline there): the fused per-tensor quantize, 16 values a step.
 * vfmaq_f32 is fmaf (one rounding); vminnmq_f32(t, 2^31 - 128) is `t < c ? t : c` (minNum
 * returns c for a NaN t); vcvtnq_s32_f32 rounds half to even as rintf in the default mode and
 * is exact for |t| < 2^31 (-inf saturates to INT32_MIN); the clamp of the integer to the
 * integral bounds [qmin, qmax] goes through saturating narrowings (monotone, the identity on
 * the 8-bit range) and an 8-bit max / min, which equals the reference's float clamp and
 * truncating cast.  The tail (< 16) runs the reference body.
 */
#include <arm_neon.h>
/* 16 values -> rne(min(fmaf(x, inv, zp), 2^31 - 128)), saturated to int16 (h[0]: 0..7) */
static inline void qrt__quantize16_neon(const float *x, float32x4_t vi, float32x4_t vz,
                                        int16x8_t h[2]) {
    const float32x4_t vc = vdupq_n_f32(QRT_F32_BELOW_2P31);
    int32x4_t r[4];
    for (int k = 0; k < 4; ++k)
        r[k] = vcvtnq_s32_f32(vminnmq_f32(vfmaq_f32(vz, vld1q_f32(x + 4 * k), vi), vc));
    h[0] = vcombine_s16(vqmovn_s32(r[0]), vqmovn_s32(r[1]));
    h[1] = vcombine_s16(vqmovn_s32(r[2]), vqmovn_s32(r[3]));
}
static void qrt__quantize_f32_u8_neon(const float *x, size_t n, float inv, float zpf,
                                      float qminf, float qmaxf, uint8_t *out) {
    const float32x4_t vi = vdupq_n_f32(inv), vz = vdupq_n_f32(zpf);
    const uint8x16_t lo = vdupq_n_u8((uint8_t)qminf), hi = vdupq_n_u8((uint8_t)qmaxf);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        int16x8_t h[2];
        qrt__quantize16_neon(x + i, vi, vz, h);
        const uint8x16_t u = vcombine_u8(vqmovun_s16(h[0]), vqmovun_s16(h[1]));
        vst1q_u8(out + i, vminq_u8(vmaxq_u8(u, lo), hi));
    }
    if (i < n) qrt_quantize_f32_u8_ref(x + i, n - i, inv, zpf, qminf, qmaxf, out + i);
}
static void qrt__quantize_f32_s8_neon(const float *x, size_t n, float inv, float zpf,
                                      float qminf, float qmaxf, int8_t *out) {
    const float32x4_t vi = vdupq_n_f32(inv), vz = vdupq_n_f32(zpf);
    const int8x16_t lo = vdupq_n_s8((int8_t)qminf), hi = vdupq_n_s8((int8_t)qmaxf);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        int16x8_t h[2];
        qrt__quantize16_neon(x + i, vi, vz, h);
        const int8x16_t v = vcombine_s8(vqmovn_s16(h[0]), vqmovn_s16(h[1]));
        vst1q_s8(out + i, vminq_s8(vmaxq_s8(v, lo), hi));
    }
    if (i < n) qrt_quantize_f32_s8_ref(x + i, n - i, inv, zpf, qminf, qmaxf, out + i);
}
/* integral bounds inside the type's range (the kernels' clamp is on 8-bit integers) */
static inline int qrt__q8_bounds(float qminf, float qmaxf, float tmin, float tmax) {
    return qminf >= tmin && qmaxf <= tmax && qminf <= qmaxf && qminf == (float)(int)qminf &&
           qmaxf == (float)(int)qmaxf;
}
#endif

int qrt_quant_isa(void) {
#ifdef QRT_HAVE_X86
    /* The AVX-512 variant needs F/BW/VL/DQ only; VNNI is what the code names the level
     * (QRT_DISABLE_ISA=avx512vnni masks it, =avx2 the AVX2 level, as for conv1d).  Both bits
     * come from the process-wide cache of cpu.c. */
    const unsigned f = qrt_cpu_features();
    if (f & QRT_CPU_AVX512DQ) return QRT_ISA_AVX512VNNI;
    if (f & QRT_CPU_AVX2) return QRT_ISA_AVX2;
#elif defined(__aarch64__) && !defined(QRT_FORCE_REF)
    /* the fused per-tensor quantize (the other kernels: the reference); QRT_DISABLE_ISA=neon
     * clears the bit (the freestanding harness has no cpu.c: NEON is aarch64's baseline) */
#if defined(QRT_QUANT_FREESTANDING)
    return QRT_ISA_NEON;
#else
    if (qrt_cpu_features() & QRT_CPU_NEON) return QRT_ISA_NEON;
#endif
#endif
    return QRT_ISA_REF;
}

int qrt_quant_pick(int variant) {
    int best = qrt_quant_isa();
    if (variant < 0 || variant > best) return best;
#if defined(__aarch64__)
    return variant == QRT_ISA_NEON ? variant : QRT_ISA_REF;
#else
    return variant == QRT_ISA_AVX2 || variant == QRT_ISA_AVX512VNNI ? variant : QRT_ISA_REF;
#endif
}

void qrt_quantize_f32_u8(const float *x, size_t n, float inv, float zpf, float qminf, float qmaxf,
                         uint8_t *out, int variant) {
#if defined(__aarch64__) && !defined(QRT_FORCE_REF)
    if (qrt_quant_pick(variant) == QRT_ISA_NEON && qrt__q8_bounds(qminf, qmaxf, 0.0f, 255.0f)) {
        qrt__quantize_f32_u8_neon(x, n, inv, zpf, qminf, qmaxf, out);
        return;
    }
#endif
#ifdef QRT_QUANT_VFPV4
    if (variant != QRT_ISA_REF && (qrt_cpu_features() & QRT_CPU_VFPV4)) {
        qrt_quantize_f32_u8__vfpv4(x, n, inv, zpf, qminf, qmaxf, out);
        return;
    }
#endif
    QRT_QUANT_DISPATCH(qrt_quantize_f32_u8__avx512(x, n, inv, zpf, qminf, qmaxf, out),
                       qrt_quantize_f32_u8__avx2(x, n, inv, zpf, qminf, qmaxf, out),
                       qrt_quantize_f32_u8_ref(x, n, inv, zpf, qminf, qmaxf, out))
}

void qrt_quantize_f32_s8(const float *x, size_t n, float inv, float zpf, float qminf, float qmaxf,
                         int8_t *out, int variant) {
#if defined(__aarch64__) && !defined(QRT_FORCE_REF)
    if (qrt_quant_pick(variant) == QRT_ISA_NEON &&
        qrt__q8_bounds(qminf, qmaxf, -128.0f, 127.0f)) {
        qrt__quantize_f32_s8_neon(x, n, inv, zpf, qminf, qmaxf, out);
        return;
    }
#endif
#ifdef QRT_QUANT_VFPV4
    if (variant != QRT_ISA_REF && (qrt_cpu_features() & QRT_CPU_VFPV4)) {
        qrt_quantize_f32_s8__vfpv4(x, n, inv, zpf, qminf, qmaxf, out);
        return;
    }
#endif
    QRT_QUANT_DISPATCH(qrt_quantize_f32_s8__avx512(x, n, inv, zpf, qminf, qmaxf, out),
                       qrt_quantize_f32_s8__avx2(x, n, inv, zpf, qminf, qmaxf, out),
                       qrt_quantize_f32_s8_ref(x, n, inv, zpf, qminf, qmaxf, out))
}

void qrt_quantize_scalar_f32_u8(const float *x, size_t n, float inv, float zpf, double qmin,
                                double qmax, uint8_t *out, int variant) {
    QRT_QUANT_DISPATCH(
        qrt_quantize_scalar_f32_u8__avx512(x, n, inv, zpf, (float)qmin, (float)qmax, out),
        qrt_quantize_scalar_f32_u8__avx2(x, n, inv, zpf, (float)qmin, (float)qmax, out),
        qrt_quantize_scalar_f32_u8_ref(x, n, inv, zpf, qmin, qmax, 0, out))
}

void qrt_quantize_scalar_f32_s8(const float *x, size_t n, float inv, float zpf, double qmin,
                                double qmax, int8_t *out, int variant) {
    QRT_QUANT_DISPATCH(
        qrt_quantize_scalar_f32_s8__avx512(x, n, inv, zpf, (float)qmin, (float)qmax, out),
        qrt_quantize_scalar_f32_s8__avx2(x, n, inv, zpf, (float)qmin, (float)qmax, out),
        qrt_quantize_scalar_f32_s8_ref(x, n, inv, zpf, qmin, qmax, 0, out))
}

void qrt_quantize_scalar_f32_s32(const float *x, size_t n, float inv, float zpf, int32_t *out,
                                 int variant) {
    QRT_QUANT_DISPATCH(qrt_quantize_scalar_f32_s32__avx512(x, n, inv, zpf, out),
                       qrt_quantize_scalar_f32_s32__avx2(x, n, inv, zpf, out),
                       qrt_quantize_scalar_f32_s32_ref(x, n, inv, zpf, (double)INT32_MIN,
                                                       (double)INT32_MAX, INT32_MIN, out))
}

void qrt_quantize_vparams_f32_u8(const float *x, size_t n, const float *inv, const float *zpf,
                                 uint8_t *out, int variant) {
    QRT_QUANT_DISPATCH(qrt_quantize_vparams_f32_u8__avx512(x, n, inv, zpf, out),
                       qrt_quantize_vparams_f32_u8__avx2(x, n, inv, zpf, out),
                       qrt_quantize_vparams_f32_u8_ref(x, n, inv, zpf, out))
}

void qrt_quantize_vparams_f32_s8(const float *x, size_t n, const float *inv, const float *zpf,
                                 int8_t *out, int variant) {
    QRT_QUANT_DISPATCH(qrt_quantize_vparams_f32_s8__avx512(x, n, inv, zpf, out),
                       qrt_quantize_vparams_f32_s8__avx2(x, n, inv, zpf, out),
                       qrt_quantize_vparams_f32_s8_ref(x, n, inv, zpf, out))
}

void qrt_quantize_vparams_f32_s32(const float *x, size_t n, const float *inv, const float *zpf,
                                  int32_t *out, int variant) {
    QRT_QUANT_DISPATCH(qrt_quantize_vparams_f32_s32__avx512(x, n, inv, zpf, out),
                       qrt_quantize_vparams_f32_s32__avx2(x, n, inv, zpf, out),
                       qrt_quantize_vparams_f32_s32_ref(x, n, inv, zpf, out))
}

void qrt_dequantize_u8_f32(const uint8_t *q, size_t n, float scale, int32_t zp, float *out,
                           int variant) {
    QRT_QUANT_DISPATCH(qrt_dequantize_u8_f32__avx512(q, n, scale, zp, out),
                       qrt_dequantize_u8_f32__avx2(q, n, scale, zp, out),
                       qrt_dequantize_u8_f32_ref(q, n, scale, zp, out))
}

void qrt_dequantize_s8_f32(const int8_t *q, size_t n, float scale, int32_t zp, float *out,
                           int variant) {
    QRT_QUANT_DISPATCH(qrt_dequantize_s8_f32__avx512(q, n, scale, zp, out),
                       qrt_dequantize_s8_f32__avx2(q, n, scale, zp, out),
                       qrt_dequantize_s8_f32_ref(q, n, scale, zp, out))
}

void qrt_dequantize_s32_f32(const int32_t *q, size_t n, float scale, int64_t zp, float *out,
                            int variant) {
    QRT_QUANT_DISPATCH(qrt_dequantize_s32_f32__avx512(q, n, scale, zp, out),
                       qrt_dequantize_s32_f32__avx2(q, n, scale, zp, out),
                       qrt_dequantize_s32_f32_ref(q, n, scale, zp, out))
}

void qrt_dequantize_pc_u8_f32(const uint8_t *q, size_t n, double scale_d, float zpf, float *out,
                              int variant) {
    QRT_QUANT_DISPATCH(qrt_dequantize_pc_u8_f32__avx512(q, n, scale_d, zpf, out),
                       qrt_dequantize_pc_u8_f32__avx2(q, n, scale_d, zpf, out),
                       qrt_dequantize_pc_u8_f32_ref(q, n, scale_d, zpf, out))
}

void qrt_dequantize_pc_s8_f32(const int8_t *q, size_t n, double scale_d, float zpf, float *out,
                              int variant) {
    QRT_QUANT_DISPATCH(qrt_dequantize_pc_s8_f32__avx512(q, n, scale_d, zpf, out),
                       qrt_dequantize_pc_s8_f32__avx2(q, n, scale_d, zpf, out),
                       qrt_dequantize_pc_s8_f32_ref(q, n, scale_d, zpf, out))
}

void qrt_dequantize_pc_s32_f32(const int32_t *q, size_t n, double scale_d, float zpf, float *out,
                               int variant) {
    QRT_QUANT_DISPATCH(qrt_dequantize_pc_s32_f32__avx512(q, n, scale_d, zpf, out),
                       qrt_dequantize_pc_s32_f32__avx2(q, n, scale_d, zpf, out),
                       qrt_dequantize_pc_s32_f32_ref(q, n, scale_d, zpf, out))
}

void qrt_dequantize_pcv_u8_f32(const uint8_t *q, size_t n, const double *scale_d, const float *zpf,
                               float *out, int variant) {
    QRT_QUANT_DISPATCH(qrt_dequantize_pcv_u8_f32__avx512(q, n, scale_d, zpf, out),
                       qrt_dequantize_pcv_u8_f32__avx2(q, n, scale_d, zpf, out),
                       qrt_dequantize_pcv_u8_f32_ref(q, n, scale_d, zpf, out))
}

void qrt_dequantize_pcv_s8_f32(const int8_t *q, size_t n, const double *scale_d, const float *zpf,
                               float *out, int variant) {
    QRT_QUANT_DISPATCH(qrt_dequantize_pcv_s8_f32__avx512(q, n, scale_d, zpf, out),
                       qrt_dequantize_pcv_s8_f32__avx2(q, n, scale_d, zpf, out),
                       qrt_dequantize_pcv_s8_f32_ref(q, n, scale_d, zpf, out))
}

void qrt_dequantize_pcv_s32_f32(const int32_t *q, size_t n, const double *scale_d, const float *zpf,
                                float *out, int variant) {
    QRT_QUANT_DISPATCH(qrt_dequantize_pcv_s32_f32__avx512(q, n, scale_d, zpf, out),
                       qrt_dequantize_pcv_s32_f32__avx2(q, n, scale_d, zpf, out),
                       qrt_dequantize_pcv_s32_f32_ref(q, n, scale_d, zpf, out))
}

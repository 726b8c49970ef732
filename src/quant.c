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
#if defined(QRT_HAVE_X86) || defined(QRT_QUANT_VFPV4)
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

int qrt_quant_isa(void) {
#ifdef QRT_HAVE_X86
    /* The AVX-512 variant needs F/BW/VL/DQ only; VNNI is what the code names the level
     * (QRT_DISABLE_ISA=avx512vnni masks it, =avx2 the AVX2 level, as for conv1d).  Both bits
     * come from the process-wide cache of cpu.c. */
    const unsigned f = qrt_cpu_features();
    if (f & QRT_CPU_AVX512DQ) return QRT_ISA_AVX512VNNI;
    if (f & QRT_CPU_AVX2) return QRT_ISA_AVX2;
#endif
    return QRT_ISA_REF;
}

int qrt_quant_pick(int variant) {
    int best = qrt_quant_isa();
    if (variant < 0 || variant > best) return best;
    return variant == QRT_ISA_AVX2 || variant == QRT_ISA_AVX512VNNI ? variant : QRT_ISA_REF;
}

void qrt_quantize_f32_u8(const float *x, size_t n, float inv, float zpf, float qminf, float qmaxf,
                         uint8_t *out, int variant) {
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

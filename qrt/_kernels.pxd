# SPDX-License-Identifier: Apache-2.0
# Declarations only; mirrors include/qrt/*.h.
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t

cdef extern from "qrt/types.h" nogil:
    ctypedef enum qrt_status:
        QRT_OK
        QRT_ERR_ARG
        QRT_ERR_OVERFLOW
    int QRT_ISA_REF
    int QRT_ISA_AVX2
    int QRT_ISA_AVX512VNNI
    int QRT_ISA_NEON
    int QRT_ISA_NEONDOT

cdef extern from "qrt/cpu.h" nogil:
    unsigned QRT_CPU_NEON
    unsigned QRT_CPU_DOTPROD
    unsigned QRT_CPU_AVX2
    unsigned QRT_CPU_AVX512VNNI
    unsigned qrt_cpu_features_raw()
    unsigned qrt_cpu_features()

cdef extern from "qrt/quant.h" nogil:
    void qrt_quantize_f32_u8(const float *x, size_t n, float inv, float zpf, float qminf,
                             float qmaxf, uint8_t *out, int variant)
    void qrt_quantize_f32_s8(const float *x, size_t n, float inv, float zpf, float qminf,
                             float qmaxf, int8_t *out, int variant)
    void qrt_quantize_scalar_f32_u8_ref(const float *x, size_t n, float inv, float zpf,
                                        double qmin, double qmax, int32_t nan_code, uint8_t *out)
    void qrt_quantize_scalar_f32_s8_ref(const float *x, size_t n, float inv, float zpf,
                                        double qmin, double qmax, int32_t nan_code, int8_t *out)
    void qrt_quantize_scalar_f32_s32_ref(const float *x, size_t n, float inv, float zpf,
                                         double qmin, double qmax, int32_t nan_code, int32_t *out)
    void qrt_dequantize_u8_f32(const uint8_t *q, size_t n, float scale, int32_t zp, float *out,
                               int variant)
    void qrt_dequantize_s8_f32(const int8_t *q, size_t n, float scale, int32_t zp, float *out,
                               int variant)
    void qrt_dequantize_s32_f32_ref(const int32_t *q, size_t n, float scale, int64_t zp,
                                    float *out)
    void qrt_dequantize_pc_u8_f32_ref(const uint8_t *q, size_t n, double scale_d, float zpf,
                                      float *out)
    void qrt_dequantize_pc_s8_f32_ref(const int8_t *q, size_t n, double scale_d, float zpf,
                                      float *out)
    void qrt_dequantize_pc_s32_f32_ref(const int32_t *q, size_t n, double scale_d, float zpf,
                                       float *out)
    int qrt_quant_isa()

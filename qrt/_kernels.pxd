# SPDX-License-Identifier: Apache-2.0
# Declarations only; mirrors include/qrt/*.h.
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t

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
    int QRT_ISA_COUNT

cdef extern from "qrt/cpu.h" nogil:
    unsigned QRT_CPU_NEON
    unsigned QRT_CPU_DOTPROD
    unsigned QRT_CPU_AVX2
    unsigned QRT_CPU_AVX512VNNI
    unsigned qrt_cpu_features_raw()
    unsigned qrt_cpu_features()
    const char *qrt_isa_name(int isa)

cdef extern from "qrt/quant.h" nogil:
    int qrt_quant_isa()
    int qrt_quant_pick(int variant)
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
    void qrt_quantize_scalar_f32_u8(const float *x, size_t n, float inv, float zpf, double qmin,
                                    double qmax, uint8_t *out, int variant)
    void qrt_quantize_scalar_f32_s8(const float *x, size_t n, float inv, float zpf, double qmin,
                                    double qmax, int8_t *out, int variant)
    void qrt_quantize_scalar_f32_s32(const float *x, size_t n, float inv, float zpf,
                                     int32_t *out, int variant)
    void qrt_quantize_vparams_f32_u8(const float *x, size_t n, const float *inv,
                                     const float *zpf, uint8_t *out, int variant)
    void qrt_quantize_vparams_f32_s8(const float *x, size_t n, const float *inv,
                                     const float *zpf, int8_t *out, int variant)
    void qrt_quantize_vparams_f32_s32(const float *x, size_t n, const float *inv,
                                      const float *zpf, int32_t *out, int variant)
    void qrt_dequantize_u8_f32(const uint8_t *q, size_t n, float scale, int32_t zp, float *out,
                               int variant)
    void qrt_dequantize_s8_f32(const int8_t *q, size_t n, float scale, int32_t zp, float *out,
                               int variant)
    void qrt_dequantize_s32_f32(const int32_t *q, size_t n, float scale, int64_t zp, float *out,
                                int variant)
    void qrt_dequantize_s32_f32_ref(const int32_t *q, size_t n, float scale, int64_t zp,
                                    float *out)
    void qrt_dequantize_pc_u8_f32_ref(const uint8_t *q, size_t n, double scale_d, float zpf,
                                      float *out)
    void qrt_dequantize_pc_s8_f32_ref(const int8_t *q, size_t n, double scale_d, float zpf,
                                      float *out)
    void qrt_dequantize_pc_s32_f32_ref(const int32_t *q, size_t n, double scale_d, float zpf,
                                       float *out)
    void qrt_dequantize_pc_u8_f32(const uint8_t *q, size_t n, double scale_d, float zpf,
                                  float *out, int variant)
    void qrt_dequantize_pc_s8_f32(const int8_t *q, size_t n, double scale_d, float zpf,
                                  float *out, int variant)
    void qrt_dequantize_pc_s32_f32(const int32_t *q, size_t n, double scale_d, float zpf,
                                   float *out, int variant)
    void qrt_dequantize_pcv_u8_f32(const uint8_t *q, size_t n, const double *scale_d,
                                   const float *zpf, float *out, int variant)
    void qrt_dequantize_pcv_s8_f32(const int8_t *q, size_t n, const double *scale_d,
                                   const float *zpf, float *out, int variant)
    void qrt_dequantize_pcv_s32_f32(const int32_t *q, size_t n, const double *scale_d,
                                    const float *zpf, float *out, int variant)

cdef extern from "qrt/conv1d.h" nogil:
    ctypedef struct qrt_conv1d_params:
        uint32_t n, c_in, c_out, len_in, len_out
        uint32_t kernel, stride, dilation, pad_left, groups
        int64_t x_stride_n, x_stride_c, x_stride_t
        int64_t y_stride_n, y_stride_c, y_stride_t
        int32_t input_zero, output_zero, output_min, output_max
        uint32_t out_kind
    ctypedef struct qrt_conv1d_quant:
        const int32_t *weight_zero
        const int32_t *bias_q
        const float *scale
        const float *bias_f
        const int8_t *wpack_cl
        const int32_t *wpack_a2
        const int32_t *wsum_c16
        const int8_t *wpack_dot
    ctypedef struct qrt_conv1d_layout:
        uint32_t im2col, kc, cq
    uint32_t QRT_CONV1D_MAX_TAPS
    uint32_t QRT_CONV1D_OUT_U8
    uint32_t QRT_CONV1D_OUT_F32
    qrt_status qrt_conv1d_check(const qrt_conv1d_params *p)
    qrt_conv1d_layout qrt_conv1d_layout_of(uint32_t cg, uint32_t kernel)
    size_t qrt_conv1d_packed_weight_size(uint32_t c_out, uint32_t cg, uint32_t kernel)
    size_t qrt_conv1d_cl_weight_size(uint32_t c_out, uint32_t c_in)
    void qrt_conv1d_pack_cl(uint32_t c_out, uint32_t c_in, const int8_t *wpack, int8_t *wcl)
    uint32_t QRT_CONV1D_CL_MAX_LEN
    size_t qrt_conv1d_a2_weight_size(uint32_t c_out, uint32_t cg, uint32_t kernel,
                                     uint32_t groups)
    void qrt_conv1d_pack_a2(uint32_t c_out, uint32_t cg, uint32_t kernel, uint32_t groups,
                            const int8_t *w, const int32_t *wz, int32_t *out)
    void qrt_conv1d_pack_weights(uint32_t c_out, uint32_t cg, uint32_t kernel, const int8_t *w,
                                 int8_t *wpack, int32_t *wsum)
    int qrt_conv1d_c16_pairs_ok(uint32_t c_out, uint32_t c_in, const int8_t *w)
    size_t qrt_conv1d_dot_weight_size(uint32_t c_out, uint32_t c_in)
    void qrt_conv1d_pack_dot(uint32_t oc0, uint32_t noc, uint32_t c_in, const int8_t *w,
                             int8_t *out)
    int qrt_conv1d_isa()
    int qrt_conv1d_variant(int variant)
    size_t qrt_conv1d_u8_scratch_size(const qrt_conv1d_params *p, const qrt_conv1d_quant *q,
                                      int variant)
    int qrt_conv1d_u8_uses_a2_panels(const qrt_conv1d_params *p, int variant)
    int qrt_conv1d_u8_uses_dot_panels(const qrt_conv1d_params *p, int variant)
    int qrt_conv1d_vnni_tail
    int qrt_conv1d_u8_uses_vnni_tail(const qrt_conv1d_params *p, const qrt_conv1d_quant *q,
                                     int variant)
    qrt_status qrt_conv1d_u8(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                             const int8_t *wpack, const int32_t *wsum, const qrt_conv1d_quant *q,
                             void *out, void *scratch, size_t scratch_size, int variant)
    qrt_status qrt_conv1d_u8_ref(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                                 const qrt_conv1d_quant *q, void *out)

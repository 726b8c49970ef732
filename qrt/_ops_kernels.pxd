# SPDX-License-Identifier: Apache-2.0
# Declarations only; mirrors include/qrt/{activation,add,add_params,pool1d,pool1d_params,pool2d,transpose,cat}.h
# and include/qrt/{embedding.h,qarith.h,ref/qarith_ref.h}.
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t

from qrt._kernels cimport qrt_status

cdef extern from "qrt/activation.h" nogil:
    void qrt_relu_u8(const uint8_t *x, size_t n, uint8_t zp, uint8_t *out, int variant)
    void qrt_relu_s8(const int8_t *x, size_t n, int8_t zp, int8_t *out, int variant)
    void qrt_hardswish_lut_u8_ref(float s_in, int32_t zp_in, float s_out, int32_t zp_out,
                                  uint8_t *lut)
    void qrt_sigmoid_lut_u8_ref(float s_in, int32_t zp_in, uint8_t *lut)
    void qrt_lut_u8(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out, int variant)
    void qrt_hardswish_luts_aten_ref(double s_in, int32_t zp_in, double s_out, int32_t zp_out,
                                     int is_signed, uint8_t *lut_vec, uint8_t *lut_scalar)
    void qrt_sigmoid_luts_aten_ref(double s_in, int32_t zp_in, int is_signed, uint8_t *lut_vec,
                                   uint8_t *lut_scalar)
    void qrt_lut2_u8_ref(const uint8_t *lut_vec, const uint8_t *lut_scalar, const uint8_t *x,
                         size_t n, size_t nvec, uint8_t *out)
    int qrt_activation_isa()
    int qrt_lut_isa()
    size_t qrt_lut_mt_min
    void qrt_lut2_u8_mt(const uint8_t *lut_vec, const uint8_t *lut_scalar, const uint8_t *x,
                        size_t n, size_t nvec, uint8_t *out, int variant, int threads)

cdef extern from "qrt/add_params.h" nogil:
    ctypedef struct qrt_add_qnnp_params:
        int32_t a_zero, b_zero, out_zero
        int32_t a_mult, b_mult
        uint32_t shift
        int32_t out_min, out_max
    ctypedef struct qrt_add_float_params:
        float a_scale, b_scale
        float a_negzp, b_negzp
        float inv
        int32_t a_zero, b_zero, out_zero
        int32_t qmin, qmax
        int32_t relu
    qrt_status qrt_add_qnnp_params_init(float sa, int32_t za, float sb, int32_t zb, float so,
                                        int32_t zo, int relu, qrt_add_qnnp_params *p)
    qrt_status qrt_add_float_params_init(float sa, int32_t za, float sb, int32_t zb, float so,
                                         int32_t zo, int32_t qmin, int32_t qmax, int relu,
                                         qrt_add_float_params *p)

cdef extern from "qrt/threadpool.h" nogil:
    int qrt_pool_get_threads()

cdef extern from "qrt/add.h" nogil:
    void qrt_add_u8(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b, size_t n,
                    uint8_t *out, int variant)
    void qrt_add_u8_mt(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b,
                       size_t n, uint8_t *out, int variant, int threads)
    void qrt_add_float_u8(const qrt_add_float_params *p, const uint8_t *a, const uint8_t *b,
                          size_t rows, size_t inner, size_t nvec, uint8_t *out, int variant)
    void qrt_add_float_s8(const qrt_add_float_params *p, const int8_t *a, const int8_t *b,
                          size_t rows, size_t inner, size_t nvec, int8_t *out, int variant)
    int qrt_add_isa()

cdef extern from "qrt/pool1d_params.h" nogil:
    int QRT_AVG_POOL_QNNP
    int QRT_AVG_POOL_GENERIC
    int QRT_AVG_POOL_GENERIC_VEC
    ctypedef struct qrt_pool1d_params:
        uint32_t rows
        uint32_t len_in, len_out
        uint32_t kernel, stride
        uint32_t pad, dilation
        int32_t zero
        int32_t qmin, qmax
        int32_t mode
        int32_t count_include_pad
        float scale
    qrt_status qrt_pool1d_check(const qrt_pool1d_params *p)

cdef extern from "qrt/pool1d.h" nogil:
    qrt_status qrt_max_pool1d_u8(const qrt_pool1d_params *p, const uint8_t *inp, uint8_t *out,
                                 int variant)
    qrt_status qrt_max_pool1d_s8(const qrt_pool1d_params *p, const int8_t *inp, int8_t *out,
                                 int variant)
    qrt_status qrt_avg_pool1d_u8(const qrt_pool1d_params *p, const uint8_t *inp, uint8_t *out,
                                 int variant)
    qrt_status qrt_avg_pool1d_s8(const qrt_pool1d_params *p, const int8_t *inp, int8_t *out,
                                 int variant)
    qrt_status qrt_adaptive_avg_pool1d_u8(const qrt_pool1d_params *p, const uint8_t *inp,
                                          uint8_t *out, int variant)
    qrt_status qrt_adaptive_avg_pool1d_s8(const qrt_pool1d_params *p, const int8_t *inp,
                                          int8_t *out, int variant)
    int qrt_pool1d_isa()

cdef extern from "qrt/pool2d.h" nogil:
    ctypedef struct qrt_pool2d_params:
        int64_t n, c, h, w, ho, wo
        int64_t xs_n, xs_c, xs_h, xs_w
        int32_t kh, kw, sh, sw, ph, pw, dh, dw
        int32_t zero, qmin, qmax, mode, count_include_pad, divisor
        float scale
    qrt_status qrt_pool2d_check(const qrt_pool2d_params *p)
    size_t qrt_pool2d_scratch_size(const qrt_pool2d_params *p, int threads)
    qrt_status qrt_max_pool2d_u8(const qrt_pool2d_params *p, const uint8_t *x, uint8_t *y,
                                 void *scratch, size_t scratch_bytes, int threads)
    qrt_status qrt_max_pool2d_s8(const qrt_pool2d_params *p, const int8_t *x, int8_t *y,
                                 void *scratch, size_t scratch_bytes, int threads)
    qrt_status qrt_avg_pool2d_u8(const qrt_pool2d_params *p, const uint8_t *x, uint8_t *y,
                                 void *scratch, size_t scratch_bytes, int threads)
    qrt_status qrt_avg_pool2d_s8(const qrt_pool2d_params *p, const int8_t *x, int8_t *y,
                                 void *scratch, size_t scratch_bytes, int threads)

cdef extern from "qrt/transpose.h" nogil:
    qrt_status qrt_transpose2d(int64_t esize, int64_t batch, int64_t rows, int64_t cols,
                               const void *src, int64_t src_bs, int64_t src_rs, void *dst)

cdef extern from "qrt/cat.h" nogil:
    ctypedef struct qrt_requant_copy_params:
        float in_scale
        int32_t in_zero
        float inv_out
        float out_zero_f
        float qmin, qmax
    qrt_status qrt_requant_copy_u8(const qrt_requant_copy_params *p, const uint8_t *inp,
                                   size_t rows, size_t length, size_t in_stride, uint8_t *out,
                                   size_t out_stride, int variant)
    qrt_status qrt_requant_copy_s8(const qrt_requant_copy_params *p, const int8_t *inp,
                                   size_t rows, size_t length, size_t in_stride, int8_t *out,
                                   size_t out_stride, int variant)

cdef extern from "qrt/embedding.h" nogil:
    int QRT_EMBEDDING_SUM, QRT_EMBEDDING_MEAN, QRT_EMBEDDING_MAX
    ctypedef struct qrt_embedding_params:
        size_t num_rows, dim, row_bytes, n_idx, n_bags
        int mode, fma_weights, bits
        int64_t padding_idx
    qrt_status qrt_embedding_bag_f32(const qrt_embedding_params *p, const float *table,
                                     const int64_t *idx, const int64_t *starts,
                                     const float *w, float *out, int variant)
    qrt_status qrt_embedding_bag_rowwise(const qrt_embedding_params *p, const uint8_t *codes,
                                         const float *scale, const float *bias,
                                         const int64_t *idx, const int64_t *starts,
                                         const float *w, float *out, int variant)

cdef extern from "qrt/qarith.h" nogil:
    void qrt_mean_rows_u8(const uint8_t *x, size_t rows, size_t len, uint8_t *out, int variant)
    void qrt_mean_rows_s8(const int8_t *x, size_t rows, size_t len, int8_t *out, int variant)
    void qrt_mean_rows_s32_ref(const int32_t *x, size_t rows, size_t len, int32_t *out)
    void qrt_lut_channels_8_ref(const uint8_t *lut, const uint8_t *x, size_t outer,
                                size_t channels, size_t inner, uint8_t *out)
    int qrt_mul_isa()
    size_t qrt_mul_mt_min
    void qrt_mul_rows_u8_mt(const uint8_t *a, const uint8_t *b, size_t rows, size_t len,
                            int b_per_row, int32_t za, int32_t zb, float m, float lo, float hi,
                            float zo, uint8_t *y, int variant, int threads)


cdef extern from "qrt/float_conv.h" nogil:
    ctypedef struct qrt_dwconv2d_f32_params:
        size_t n, c_in, mult, hp, wp, ho, wo, kh, kw, sh, sw, dh, dw
    qrt_status qrt_dwconv2d_f32(const qrt_dwconv2d_f32_params *p, const float *xp,
                                const float *w, const float *bias, float *y, float *scratch,
                                size_t scratch_len)
    size_t qrt_dwconv2d_f32_scratch(const qrt_dwconv2d_f32_params *p)
    qrt_status qrt_dwconv2d_f32_cm(const qrt_dwconv2d_f32_params *p, const float *xp,
                                   const float *wt, const float *bias, float *y, int variant)

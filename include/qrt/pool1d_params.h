/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool1d_params.h
 * @brief qrt_pool1d_params and qrt_pool1d_check(): the only precondition gate of the 1-d
 *        pooling kernels (max, average, adaptive average).
 */
#ifndef QRT_POOL1D_PARAMS_H
#define QRT_POOL1D_PARAMS_H

#include "qrt/types.h"

/** Average pooling flavours (see ref/pool1d_ref.h). */
#define QRT_AVG_POOL_QNNP        0 /**< QNNPACK: divide by kernel, float scale f32(s / f32(s*k)) */
#define QRT_AVG_POOL_GENERIC     1 /**< ATen's generic kernel: count_include_pad honoured */
#define QRT_AVG_POOL_GENERIC_VEC 2 /**< ATen's NHWC kernel, vectorised channels (zp after rne) */

/** Longest window any pooling kernel sums or scans. */
#define QRT_POOL1D_MAX_WINDOW (1u << 23)

/** Geometry and quantization of one pooling call over [rows][len_in] -> [rows][len_out]. */
typedef struct {
    uint32_t rows;             /**< N * C */
    uint32_t len_in, len_out;  /**< L and the output length (>= 1) */
    uint32_t kernel, stride;   /**< >= 1 */
    uint32_t pad, dilation;    /**< pad >= 0, dilation >= 1 (1 for average pooling) */
    int32_t zero;              /**< zero point of input and output (they share qparams) */
    int32_t qmin, qmax;        /**< dtype range */
    int32_t mode;              /**< QRT_AVG_POOL_*; ignored by max pooling */
    int32_t count_include_pad; /**< generic average pooling only */
    float scale;               /**< QNNP mode: f32(s / f32(s * kernel)) */
} qrt_pool1d_params;

/**
 * @brief Reject parameters a kernel must never see.
 *
 * Checks the ranges above and that every output window starts before len_in + pad (so each
 * index the kernels form stays in int64 and inside [-pad, len_in + pad + span)).
 * @return QRT_OK or QRT_ERR_ARG
 */
static inline qrt_status qrt_pool1d_check(const qrt_pool1d_params *p) {
    if (p->len_in < 1 || p->len_out < 1 || p->kernel < 1 || p->stride < 1 || p->dilation < 1)
        return QRT_ERR_ARG;
    if (p->qmin >= p->qmax || p->zero < p->qmin || p->zero > p->qmax) return QRT_ERR_ARG;
    if (p->mode != QRT_AVG_POOL_QNNP && p->mode != QRT_AVG_POOL_GENERIC &&
        p->mode != QRT_AVG_POOL_GENERIC_VEC)
        return QRT_ERR_ARG;
    if ((uint64_t)(p->len_out - 1) * p->stride >= (uint64_t)p->len_in + p->pad) return QRT_ERR_ARG;
    if ((uint64_t)p->pad > (uint64_t)p->kernel * p->dilation) return QRT_ERR_ARG;
    /* Window sums stay exact in int32: 255 * 2^23 < 2^31. */
    if (p->kernel > QRT_POOL1D_MAX_WINDOW) return QRT_ERR_ARG;
    return QRT_OK;
}

/**
 * @brief The interior outputs [*t0, *t1) of one row: their windows t*stride - pad + j*dilation
 *        (j < kernel) lie wholly inside [0, len), so no padding position and no end clamp
 *        applies.  Outputs outside it are "border" outputs.  Shared by every optimized
 *        variant (they run the reference for border outputs).
 */
static inline void qrt_pool1d_interior(int64_t len, int64_t len_out, int64_t kernel, int64_t stride,
                                       int64_t pad, int64_t dilation, int64_t *t0, int64_t *t1) {
    int64_t a = (pad + stride - 1) / stride; /* first t with t*stride - pad >= 0 */
    const int64_t last = len - 1 + pad - (kernel - 1) * dilation; /* t*stride <= last */
    int64_t b = last < 0 ? 0 : last / stride + 1;
    a = a < len_out ? a : len_out;
    b = b < a ? a : (b > len_out ? len_out : b);
    *t0 = a;
    *t1 = b;
}

/**
 * @brief Whether the [rows][len_in] rows may be read as one row of rows * len_in: no padding,
 *        len_in == len_out * stride and every window is interior, so output r*len_out + t of
 *        the long row is output t of row r.  Lets the variants vectorise across short rows.
 */
static inline int qrt_pool1d_flat(const qrt_pool1d_params *p) {
    int64_t a, b;
    qrt_pool1d_interior(p->len_in, p->len_out, p->kernel, p->stride, p->pad, p->dilation, &a, &b);
    return p->pad == 0 && a == 0 && b == (int64_t)p->len_out &&
           (uint64_t)p->len_in == (uint64_t)p->len_out * p->stride;
}

/**
 * The optimized variants' row driver, shared by every ISA.  When qrt_pool1d_flat() holds, all
 * rows run as one long row; otherwise each row's border outputs take the reference's
 * one-output function OUT(p, x, t) and its interior outputs [qa, qb) (qrt_pool1d_interior()
 * with dilation DIL) the variant: the statement given last, which may use qx (the input row),
 * qn (its length), qa, qb and qy (the output row).
 */
#define QRT_POOL1D_DRIVE(p, T, in, out, DIL, OUT, ...)                                             \
    do {                                                                                           \
        const int64_t qL = (p)->len_in, qLo = (p)->len_out;                                        \
        if (qrt_pool1d_flat(p)) {                                                                  \
            const T *qx = (in);                                                                    \
            T *qy = (out);                                                                         \
            const int64_t qn = (int64_t)(p)->rows * qL, qa = 0, qb = (int64_t)(p)->rows * qLo;     \
            __VA_ARGS__;                                                                           \
            break;                                                                                 \
        }                                                                                          \
        int64_t qa, qb;                                                                            \
        qrt_pool1d_interior(qL, qLo, (p)->kernel, (p)->stride, (p)->pad, (DIL), &qa, &qb);         \
        for (uint32_t qr = 0; qr < (p)->rows; ++qr) {                                              \
            const T *qx = (in) + (size_t)qr * (size_t)qL;                                          \
            T *qy = (out) + (size_t)qr * (size_t)qLo;                                              \
            const int64_t qn = qL;                                                                 \
            for (int64_t qt = 0; qt < qa; ++qt) qy[qt] = OUT(p, qx, qt);                           \
            __VA_ARGS__;                                                                           \
            for (int64_t qt = qb; qt < qLo; ++qt) qy[qt] = OUT(p, qx, qt);                         \
        }                                                                                          \
    } while (0)

/** Whether [qmin, qmax] lies inside the code type's range (the variants' precondition). */
static inline int qrt_pool1d_range_ok(const qrt_pool1d_params *p, int is_signed) {
    return is_signed ? (p->qmin >= -128 && p->qmax <= 127) : (p->qmin >= 0 && p->qmax <= 255);
}

#endif /* QRT_POOL1D_PARAMS_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_params.h
 * @brief Parameters of a quantized conv1d / linear call and qrt_conv1d_check(), the only
 *        precondition gate every variant calls first.
 *
 * A linear layer is a conv1d with kernel 1 whose "time" axis is the row index: Python passes the
 * [rows][in] input with element strides (c: 1, t: in) and the [rows][out] output likewise, so
 * one kernel serves both.
 */
#ifndef QRT_CONV1D_PARAMS_H
#define QRT_CONV1D_PARAMS_H

#include <stdint.h>
#include "qrt/types.h"

/**
 * Largest (c_in / groups) * kernel for which the exact accumulator fits int32:
 * |acc| <= taps * 255 * 255 and 33025 * 65025 = 2147450625 < 2^31.  Beyond it the gate answers
 * QRT_ERR_OVERFLOW (torch would silently wrap).
 */
#define QRT_CONV1D_MAX_TAPS 33025u

/** Output kinds. */
#define QRT_CONV1D_OUT_U8  0u /**< quint8, static requantization (conv1d, linear) */
#define QRT_CONV1D_OUT_F32 1u /**< float32 (dynamic linear) */

/** Geometry, strides and quantization of one call. Field order is mirrored in _kernels.pxd. */
typedef struct {
    uint32_t n;        /**< batch */
    uint32_t c_in;     /**< input channels */
    uint32_t c_out;    /**< output channels */
    uint32_t len_in;   /**< input length L */
    uint32_t len_out;  /**< output length; (L + pad_l + pad_r - dil*(K-1) - 1) / stride + 1 */
    uint32_t kernel;   /**< K >= 1 */
    uint32_t stride;   /**< >= 1 */
    uint32_t dilation; /**< >= 1 */
    uint32_t pad_left; /**< zero-point padding before the input; the right side is implied */
    uint32_t groups;   /**< divides c_in and c_out */
    int64_t x_stride_n, x_stride_c, x_stride_t; /**< input element strides (any sign) */
    int64_t y_stride_n, y_stride_c, y_stride_t; /**< output element strides */
    int32_t input_zero;                         /**< 0..255 */
    int32_t output_zero;                        /**< 0..255 (OUT_U8) */
    int32_t output_min; /**< clamp floor: 0, or output_zero for the fused relu */
    int32_t output_max; /**< clamp ceiling, <= 255 */
    uint32_t out_kind;  /**< QRT_CONV1D_OUT_U8 or QRT_CONV1D_OUT_F32 */
} qrt_conv1d_params;

/**
 * Per-output-channel quantization constants (all arrays [c_out]).
 *  - OUT_U8:  y = f32(f32(wrap32(acc + bias_q)) * scale); q = clamp(rne(y) + output_zero, min, max)
 *  - OUT_F32: y = f32(f32(f32(acc) * scale) + bias_f)
 */
typedef struct {
    const int32_t *weight_zero; /**< [c_out] weight zero points, -128..127 */
    const int32_t *bias_q;      /**< [c_out] int32 bias (OUT_U8) */
    const float *scale;         /**< [c_out] requantization (OUT_U8) or output (OUT_F32) scale */
    const float *bias_f;        /**< [c_out] float bias (OUT_F32) */
    /** NULL, or the weight in the channels-in-lanes order of qrt_conv1d_pack_cl() (a dense 1x1
     *  layer on an AVX-512 VNNI host: short rows then take that path); read by no other
     *  variant.  Last, so initialisers that stop at bias_f leave it NULL. */
    const int8_t *wpack_cl;
    /** NULL, or the weight in the AVX2 variant's panel order (qrt_conv1d_pack_a2(), made once
     *  per layer); without it that variant makes the panels in its scratch on every call.
     *  Read by no other variant. */
    const int32_t *wpack_a2;
    /** NULL, or sum_ci w per output channel (qrt_conv1d_pack_weights' wsum) of a dense
     *  kernel-1 layer whose weights passed qrt_conv1d_c16_pairs_ok(): the aarch64 NEON c16
     *  tile then takes its weight sums from here instead of checking and summing the weights
     *  on every call.  Read by no other variant. */
    const int32_t *wsum_c16;
    /** NULL, or the weight of a dense kernel-1 layer in the aarch64 NEON-dot GEMM tile's panel
     *  order (qrt_conv1d_pack_dot(), made once per layer: 8 output channels' weight sums and
     *  c_in-by-8 weights a panel); without it that tile packs panels on its stack per call.
     *  Read by no other variant. */
    const int8_t *wpack_dot;
} qrt_conv1d_quant;

/**
 * @brief The precondition gate: every variant calls it first and writes nothing on failure.
 * @return QRT_OK; QRT_ERR_ARG for an inconsistent geometry or out-of-range zero point / clamp;
 *         QRT_ERR_OVERFLOW when (c_in/groups)*kernel > QRT_CONV1D_MAX_TAPS or a size would not
 *         fit the index arithmetic.
 */
static inline qrt_status qrt_conv1d_check(const qrt_conv1d_params *p) {
    if (!p || p->c_in == 0 || p->c_out == 0 || p->kernel == 0 || p->stride == 0 ||
        p->dilation == 0 || p->groups == 0)
        return QRT_ERR_ARG;
    if (p->c_in % p->groups || p->c_out % p->groups) return QRT_ERR_ARG;
    if (p->input_zero < 0 || p->input_zero > 255) return QRT_ERR_ARG;
    if (p->out_kind == QRT_CONV1D_OUT_U8) {
        if (p->output_zero < 0 || p->output_zero > 255 || p->output_min < 0 ||
            p->output_min > p->output_max || p->output_max > 255)
            return QRT_ERR_ARG;
    } else if (p->out_kind != QRT_CONV1D_OUT_F32) {
        return QRT_ERR_ARG;
    }
    if ((uint64_t)(p->c_in / p->groups) * p->kernel > QRT_CONV1D_MAX_TAPS) return QRT_ERR_OVERFLOW;
    /* Index arithmetic is done in int64: keep every term far from overflow. */
    const uint64_t lim = (uint64_t)1 << 31;
    if (p->len_in >= lim || p->len_out >= lim || p->pad_left >= lim ||
        (uint64_t)(p->kernel - 1) * p->dilation >= lim ||
        (uint64_t)p->len_out * p->stride >= ((uint64_t)1 << 40))
        return QRT_ERR_OVERFLOW;
    return QRT_OK;
}

#endif /* QRT_CONV1D_PARAMS_H */

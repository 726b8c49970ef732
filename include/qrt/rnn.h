/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn.h
 * @brief qrt_rnn_f32(): the time loop of torch's dynamic-quantized LSTM / GRU / RNN layers
 *        (one layer, one direction), qnnpack arithmetic. Normative text: qrt/ops/rnn.py and
 *        docs/float-ops.md "Recurrent layers".
 *
 * Per step: the hidden state h [B, H] is quantized as torch's dynamic linear does (per-tensor
 * min/max, ChooseQuantizationParams over [0, 255], quantize), multiplied by the hidden weights
 * with the conv1d/linear kernel (int32 accumulators, f32(acc * f32(sw * s)) + b_hh), added to
 * the precomputed input projection gi[t] (which holds b_ih) and passed through the gates in
 * float32 in torch's order.  The C gate trusts its caller (qrt/_conv1d.pyx checks extents).
 */
#ifndef QRT_RNN_H
#define QRT_RNN_H

#include <stddef.h>
#include <stdint.h>

#include "qrt/conv1d_params.h"
#include "qrt/types.h"

#define QRT_RNN_LSTM 0
#define QRT_RNN_GRU 1
#define QRT_RNN_TANH 2
#define QRT_RNN_RELU 3

typedef struct {
    int mode;          /**< QRT_RNN_* */
    int reverse;       /**< 1: steps run from t = steps-1 down to 0 */
    uint32_t batch;    /**< B >= 1 */
    uint32_t hidden;   /**< H >= 1 */
    uint32_t steps;    /**< T >= 1 */
    uint32_t gates;    /**< G: 4 (LSTM), 3 (GRU), 1 (RNN) */
    const float *gi;   /**< input projection: row (t, b) at gi + t*gi_st + b*gi_sb, G*H floats */
    ptrdiff_t gi_st, gi_sb;
    float *y;          /**< output: h of step t, batch b at y + t*y_st + b*y_sb (H floats); or NULL */
    ptrdiff_t y_st, y_sb;
    float *h;          /**< [B*H] state: initial in, final out */
    float *c;          /**< [B*H] LSTM cell state (in and out), else unused */
    float *gh;         /**< [B*G*H] scratch: the hidden projection */
    uint8_t *hq;       /**< [B*H] scratch: quantized h */
    /* the hidden-projection GEMM: a conv1d plan of geometry (1, H, B) -> (1, G*H, B), f32 out */
    qrt_conv1d_params *p;      /**< its input_zero is set per step */
    const int8_t *w, *wpack;
    const int32_t *wsum;
    const qrt_conv1d_quant *q; /**< q->scale == rs */
    float *rs;                 /**< [G*H] per-step output scale f32(wscale * f32(s)) */
    const float *wscale;       /**< [G*H] float32 weight scales */
    void *scratch;
    size_t scratch_size;
    int variant, threads;
    int16_t *xs; /**< [H] scratch: when set, the hidden projection is hidden_gemv (a GEMV over
                      the raw weights, bit-exact with the kernel), else qrt_conv1d_u8_mt */
    const void *gpack; /**< when set: the hidden projection is the packed GEMV of variant gisa
                            (include/qrt/rnn_gemv.h; qrt_rnn_gemv_pack of w for gisa, which the
                            caller checked the CPU has), and the whole loop runs in that
                            variant's unit; rs and xs are then unused */
    int gisa;
} qrt_rnn_args;

/**
 * @brief torch's ChooseQuantizationParams(min, max, 0, 255) (aten QuantUtils.h), exactly as
 *        qrt.quantization.choose_qparams: scale (the double torch returns) and zero point.
 */
void qrt_choose_qparams_u8(float mn, float mx, double *scale, int32_t *zero_point);

/**
 * @brief Run the steps of one layer and direction.
 * @return QRT_OK; QRT_ERR_ARG when h holds NaN or infinity at a step (torch's dynamic
 *         quantization fails on it too), or an error of the GEMM.
 */
qrt_status qrt_rnn_f32(qrt_rnn_args *a);

/**
 * @brief The input projection of a whole layer input (torch's linear_ih over T*B rows: one
 *        per-tensor min / max, qrt_choose_qparams_u8, one quantization of every row into xq),
 *        each row by the packed GEMV of include/qrt/rnn_gemv.h (the linear_dynamic kernel's
 *        integers and float epilogue, the same bits as the plan's kernel).
 * @param x       [rows][cols] float32, contiguous; rows, cols >= 1, cols <= QRT_CONV1D_MAX_TAPS
 * @param xq      [rows][cols] bytes of scratch (the quantized input)
 * @param gpack   qrt_rnn_gemv_pack of the [out, cols] weights for `gisa` (a packed variant the
 *                CPU runs: qrt_rnn_gemv_pick)
 * @param wz, ws, bias  per output row: weight zero point, float32 weight scale, float32 bias
 * @param gi      [rows][out] float32 output
 * @param nonfinite  set to 1 (nothing written) when x holds NaN or infinity, else 0
 * @return QRT_OK; QRT_ERR_ARG (nothing written) for a bad argument or a variant without a GEMV
 */
qrt_status qrt_rnn_input_f32(const float *x, size_t rows, uint32_t cols, uint32_t out,
                             uint8_t *xq, const void *gpack, int gisa, const int32_t *wz,
                             const float *ws, const float *bias, float *gi, int *nonfinite);

/* The loop compiled in each ISA unit around its packed GEMV (src/rnn_loop.h). */
qrt_status qrt_rnn_f32__avx2(qrt_rnn_args *a);
qrt_status qrt_rnn_f32__avx512vnni(qrt_rnn_args *a);
qrt_status qrt_rnn_f32__neon(qrt_rnn_args *a);

#endif /* QRT_RNN_H */

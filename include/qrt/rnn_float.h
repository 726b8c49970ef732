/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_float.h
 * @brief Float32 recurrent layers (op rnn_float, qrt/ops/rnn_float.py): torch's float
 *        nn.LSTM / nn.GRU / nn.RNN and the cells, one layer and direction per call.
 *        Normative text: qrt/ops/rnn_float.py and docs/float-ops.md "Float recurrent layers".
 *
 * The matrix products are qrt_linear_f32(): per output one fused multiply-add chain in input
 * order, s = fmaf(w[o][i], x[i], s) for i = 0..k-1 from s = 0, then s + bias (the
 * specification: qrt_linear_f32_ref()).  Weights are packed in panels of QRT_LF32_NR outputs,
 * wp[(o / NR) * k * NR + i * NR + o % NR] = w[o][i] (zero rows pad the last panel), so that the
 * AVX2+FMA (x86-64) and NEON (aarch64) variants run one output per vector lane, with no
 * horizontal sum: the same bits (tested).  The gates are
 * include/qrt/rnn_gates.h, the step order torch's (aten RNN.cpp LSTMCell / GRUCell /
 * SimpleCell, with LSTM projections).  The C code trusts its caller (qrt/_ops.pyx checks
 * extents).
 */
#ifndef QRT_RNN_FLOAT_H
#define QRT_RNN_FLOAT_H

#include <stddef.h>
#include <stdint.h>

#include "qrt/cpu.h"
#include "qrt/types.h"

#define QRT_LF32_NR 8 /**< outputs per weight panel */

/** @brief Which variant qrt_linear_f32() runs on this CPU (QRT_ISA_REF, _AVX2 or _NEON). */
int qrt_linear_f32_isa(void);

/**
 * @brief y[r*ldy + o] = dot(w[o], x + r*ldx) (+ b[o]) for r < rows, o < n.
 * @param wp the packed weights (ceil(n / NR) * k * NR floats); @param b bias [n] or NULL;
 * @param variant -1: best, QRT_ISA_REF: the reference.
 */
void qrt_linear_f32(const float *x, size_t ldx, size_t rows, const float *wp, size_t k,
                    size_t n, const float *b, float *y, size_t ldy, int variant);

void qrt_linear_f32_ref(const float *x, size_t ldx, size_t rows, const float *wp, size_t k,
                        size_t n, const float *b, float *y, size_t ldy);
#ifdef QRT_HAVE_X86
void qrt_linear_f32__avx2(const float *x, size_t ldx, size_t rows, const float *wp, size_t k,
                          size_t n, const float *b, float *y, size_t ldy);
#endif
#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
void qrt_linear_f32__neon(const float *x, size_t ldx, size_t rows, const float *wp, size_t k,
                          size_t n, const float *b, float *y, size_t ldy);
#endif

typedef struct {
    int mode;          /**< QRT_RNN_* of qrt/rnn.h (LSTM 0, GRU 1, tanh 2, relu 3) */
    int reverse;       /**< 1: steps run from t = steps-1 down to 0 */
    uint32_t batch;    /**< B >= 1 */
    uint32_t hidden;   /**< H >= 1 */
    uint32_t proj;     /**< LSTM proj_size P (0: none); the state h then has R = P columns */
    uint32_t steps;    /**< T >= 1 */
    uint32_t gates;    /**< G: 4, 3, 1 */
    const float *gi;   /**< input projection (b_ih included): row (t, b) at gi + t*gi_st + b*gi_sb */
    ptrdiff_t gi_st, gi_sb;
    float *y;          /**< h of step t, batch b at y + t*y_st + b*y_sb (R floats), or NULL */
    ptrdiff_t y_st, y_sb;
    float *h;          /**< [B*R] state: initial in, final out */
    float *c;          /**< [B*H] LSTM cell state (in and out) */
    float *gh;         /**< [B*G*H] scratch */
    float *hf;         /**< [B*H] scratch: o*tanh(c) before the projection (proj > 0) */
    const float *w_hh; /**< [G*H, R], packed (qrt_linear_f32) */
    const float *b_hh; /**< [G*H] */
    const float *w_hr; /**< [P, H] (proj > 0), packed */
    int variant;
} qrt_rnn_float_args;

#ifdef QRT_HAVE_X86
/** @brief The gates of step t (rnn_gates.h's qrt_gates_step) in AVX2 intrinsics, the same
 *  operations lane by lane: bit-exact with the baseline build. */
void qrt_rnn_float_gates__avx2(const qrt_rnn_float_args *a, size_t t);
#endif

/** @brief Run the steps of one layer and direction (NaN and infinity propagate as in torch). */
void qrt_rnn_float(const qrt_rnn_float_args *a);

#endif /* QRT_RNN_FLOAT_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_conv.h
 * @brief float32 depthwise 2-d convolution (float_conv2d with in/groups == 1, qrt/ops/float_nn.py).
 *
 * One kernel, in plain C: it is the specification and the only variant. The project compiles
 * every C file with -ffp-contract=off and without fast-math, so `y + w * x` is a float32
 * multiply then a float32 add on every platform (no FMA contraction) and the compiler's
 * vectorisation runs across the output row, never across a sum: the result is the same bits
 * on x86-64, aarch64 and armv7, and the same bits as qrt's numpy formula (the float_conv2d
 * depthwise path: y = w[tap 0] * x[tap 0], then y = y + w[tap] * x[tap] in row-major tap
 * order, then y = y + bias), which tests/test_float_conv2d.py checks.
 */
#ifndef QRT_FLOAT_CONV_H
#define QRT_FLOAT_CONV_H

#include "qrt/types.h"

/** Geometry of one call; every field >= 1 (dilation, stride too). */
typedef struct {
    size_t n;        /**< batch */
    size_t c_in;     /**< input channels (= groups) */
    size_t mult;     /**< channel multiplier: output channels = c_in * mult */
    size_t hp, wp;   /**< padded input height, width */
    size_t ho, wo;   /**< output height, width */
    size_t kh, kw;   /**< kernel height, width */
    size_t sh, sw;   /**< strides */
    size_t dh, dw;   /**< dilations */
} qrt_dwconv2d_f32_params;

/**
 * @brief y[n][o][oh][ow] = sum over taps (i, j), row-major, of
 *        w[o][i][j] * xp[n][o / mult][oh * sh + i * dh][ow * sw + j * dw], then + bias[o].
 * @param p       geometry (gate: every field >= 1, the last window inside the padded input)
 * @param xp      padded input [n][c_in][hp][wp], contiguous
 * @param w       weights [c_in * mult][kh][kw], contiguous
 * @param bias    [c_in * mult] or NULL
 * @param y       output [n][c_in * mult][ho][wo], contiguous, not overlapping xp
 * @param scratch NULL, or qrt_dwconv2d_f32_scratch(p) floats: with a square stride, each tap
 *                then runs as one loop over the padded input's rows (the same bits, faster on
 *                small planes); without it, row by row
 * @return QRT_OK, QRT_ERR_ARG (nothing written)
 */
qrt_status qrt_dwconv2d_f32(const qrt_dwconv2d_f32_params *p, const float *xp, const float *w,
                            const float *bias, float *y, float *scratch, size_t scratch_len);

/**
 * @brief The same values as qrt_dwconv2d_f32 (every output element by the same operations in
 *        the same order, so the same bits), computed with the channel multiplier innermost:
 *        for many output channels per input channel (e.g. a Conv1d(1, 64, k) front end) the
 *        accumulators of one output position are one vector loop (src/float_conv_cm.h; an
 *        AVX2 compilation of it where the CPU has AVX2, the same bits).
 * @param wt      weights tap-major: [c_in][kh][kw][mult], contiguous (wt[ci][i][j][m] =
 *                w[ci * mult + m][i][j])
 * @param variant QRT_ISA_REF (0) forces the baseline compilation; anything else: the best
 * Other parameters as qrt_dwconv2d_f32 (no scratch).
 * @return QRT_OK, QRT_ERR_ARG (nothing written)
 */
qrt_status qrt_dwconv2d_f32_cm(const qrt_dwconv2d_f32_params *p, const float *xp,
                               const float *wt, const float *bias, float *y, int variant);

#ifdef QRT_HAVE_X86
/** the AVX2 compilation (src/x86/float_conv_avx2.c); geometry checked by the caller */
void qrt_dwconv2d_f32_cm__avx2(const qrt_dwconv2d_f32_params *p, const float *xp,
                               const float *wt, const float *bias, float *y);
#endif

/** Floats of scratch qrt_dwconv2d_f32 uses (0: none, the stride is not square). */
size_t qrt_dwconv2d_f32_scratch(const qrt_dwconv2d_f32_params *p);

#endif /* QRT_FLOAT_CONV_H */

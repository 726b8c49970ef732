/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d.h
 * @brief Direct depthwise quantized conv2d (groups == in_channels, any channel multiplier):
 *        NCHW quint8 in and out, qnnpack's fp32 requantization (qrt/requant.h).
 *
 * Output channel oc = c * mult + j reads input channel c only:
 *   acc = sum_{ky,kx} (x[n][c][iy][ix] - input_zero) * (w[oc][ky*kw + kx] - weight_zero[oc]),
 *   iy = oy*sh + ky*dh - pad_top, ix = ox*sw + kx*dw - pad_left (outside the image x reads
 *   input_zero, as qnnpack's zero buffer), then
 *   y[n][oc][oy][ox] = qrt_requant_fp32_u8(wrap32(acc + bias_q[oc]), scale[oc], output_zero,
 *                                          output_min, output_max).
 * The reference (src/ref/dwconv2d_ref.c) is the specification; the variants (src/x86/,
 * src/neon/) repack one input channel at a time into int16 "phase planes" (x - input_zero,
 * padded with zeros, one plane per stride phase) so that every tap of every output position
 * is one contiguous load, and are bit-exact with it (integer sums are exact; the
 * requantization is the same instruction sequence).  Dispatch and threads: src/dwconv2d.c.
 */
#ifndef QRT_DWCONV2D_H
#define QRT_DWCONV2D_H

#include <stddef.h>
#include <stdint.h>

#include "qrt/conv1d_params.h" /* qrt_conv1d_quant, QRT_CONV1D_MAX_TAPS */
#include "qrt/types.h"

/** Geometry and quantization of one call.  Field order is mirrored in qrt/_conv1d.pyx. */
typedef struct {
    uint32_t n, c_in, mult;         /**< batch, input channels, outputs per input channel */
    uint32_t h, w, ho, wo;          /**< input and output height / width (all >= 1) */
    uint32_t kh, kw, sh, sw, dh, dw; /**< kernel, stride, dilation (>= 1) */
    uint32_t pad_top, pad_left;     /**< zero-point padding before the image */
    int64_t x_stride_n, x_stride_c, x_stride_h, x_stride_w; /**< input element strides */
    int64_t y_stride_n, y_stride_c, y_stride_h; /**< output element strides (width: 1) */
    int32_t input_zero;  /**< 0..255 */
    int32_t output_zero; /**< 0..255 */
    int32_t output_min;  /**< clamp floor (relu: output_zero) */
    int32_t output_max;  /**< clamp ceiling, <= 255 */
} qrt_dwconv2d_params;

/**
 * @brief The precondition gate every entry point calls first (nothing is written on failure):
 *        QRT_OK; QRT_ERR_ARG (a zero size, out-of-range zero point / clamp); QRT_ERR_OVERFLOW
 *        (kh*kw > QRT_CONV1D_MAX_TAPS, or a size too large for the index arithmetic or the
 *        variants' scratch).
 */
qrt_status qrt_dwconv2d_check(const qrt_dwconv2d_params *p);

/** @brief The reference: w is [c_in*mult][kh*kw] int8, q's arrays [c_in*mult]. */
qrt_status qrt_dwconv2d_u8_ref(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                               const qrt_conv1d_quant *q, uint8_t *y);

/** The QRT_ISA_* code of the variant the best call runs on this CPU. */
int qrt_dwconv2d_isa(void);

/** Which variant a call with `variant` runs (-1: best; QRT_ISA_REF; a supported QRT_ISA_*
 *  code, as tests force it; QRT_ISA_NEONDOT runs the NEON variant). */
int qrt_dwconv2d_variant(int variant);

/** Scratch bytes one call with `variant` on `threads` threads needs (0 for the reference). */
size_t qrt_dwconv2d_u8_scratch_size(const qrt_dwconv2d_params *p, int variant, int threads);

/**
 * @brief Run the depthwise conv: the variant qrt_dwconv2d_variant(variant) on up to
 *        `threads` threads of the qrt pool (split over batch x input channels).
 * @return QRT_OK; the gate's error; QRT_ERR_ARG when the scratch is too small.
 */
qrt_status qrt_dwconv2d_u8(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                           const qrt_conv1d_quant *q, uint8_t *y, void *scratch,
                           size_t scratch_size, int variant, int threads);

/** @brief Bytes of qrt_dwconv2d_pack_cl()'s weight: kh * ceil(kw / 2) * c * 4. */
static inline size_t qrt_dwconv2d_cl_weight_size(uint32_t c, uint32_t kh, uint32_t kw) {
    return (size_t)kh * ((kw + 1u) / 2u) * c * 4u;
}

/**
 * @brief The weight of the AVX-512 VNNI channels-in-lanes depthwise path (channel multiplier
 *        1), passed as qrt_conv1d_quant.wpack_cl: int32 [kh * ceil(kw / 2)][c], entry
 *        (ky * ceil(kw / 2) + p, oc) = the int16 pair (w[oc][ky*kw + 2p] - wz[oc] low,
 *        w[oc][ky*kw + 2p + 1] - wz[oc] high, 0 past the row).  Defined in src/dwconv2d.c.
 */
void qrt_dwconv2d_pack_cl(uint32_t c, uint32_t kh, uint32_t kw, const int8_t *w,
                          const int32_t *weight_zero, int32_t *out);

/** Whether `variant` (-1: the best) takes its channels-in-lanes path for p when given that
 *  weight (channel multiplier 1, dilation 1, stride 1 or 2, kernels up to 7x7, at most 1024
 *  input positions per channel, contiguous rows, and at most 256 output positions per channel
 *  on AVX-512 VNNI, 64 on AVX2; no other variant has the path). */
int qrt_dwconv2d_cl_path(const qrt_dwconv2d_params *p, int variant);

/** Whether `variant` (-1: the best) takes its byte-plane path for p where it does not take the
 *  channels-in-lanes one (stride 1 or 2 on both axes, dilation 1, kernels up to 16x16, padding
 *  under the kernel, unit column stride: src/dwconv2d_impl.h): the AVX-512 VNNI and the
 *  aarch64 NEON variants. */
int qrt_dwconv2d_byte_path(const qrt_dwconv2d_params *p, int variant);

/** Whether `variant` (-1: the best) takes its byte-permute path for p, given weights w - wz
 *  that fit int8 (checked per call; else the variant's other paths) and, when `cl`, the
 *  channels-in-lanes weight: the AVX-512 VNNI variant on a CPU with VBMI while
 *  qrt_dwconv2d_permute is set, for at most 1024 output positions and 28 taps, contiguous NCHW
 *  rows, each 16 consecutive outputs reading within 127 input bytes (src/dwconv2d_impl.h),
 *  except the stride-1 planes of at most 64 outputs that the channels-in-lanes path takes. */
int qrt_dwconv2d_permute_path(const qrt_dwconv2d_params *p, int variant, int cl);

/** Whether `variant` (-1: the best) runs its byte planes with sdot for p (aarch64 CPUs with the
 *  dot product while qrt_dwconv2d_dot is set: the byte-plane geometry over 64 output positions,
 *  or any when the channels-in-lanes weight (`cl`) is absent or does not apply); those calls
 *  take neither the channels-in-lanes nor the int8 tap-pair kernels. */
int qrt_dwconv2d_dot_path(const qrt_dwconv2d_params *p, int variant, int cl);

/** Non-zero (the default): AVX-512 VNNI calls take the byte-permute path where it applies
 *  (tests clear it to reach the channels-in-lanes path a CPU without VBMI takes). */
extern int qrt_dwconv2d_permute;

/** Whether `variant` (-1: the best) reads a stride-2 call's image rows in place where it takes
 *  the byte-plane path for p (the channels-in-lanes and byte-permute paths come first): the
 *  AVX-512 VNNI variant while qrt_dwconv2d_rows is set, stride 2 on both axes, kernels up to 8
 *  wide, 17 .. 4096 output columns (src/dwconv2d_impl.h); a call's first and last input planes
 *  may still run the byte planes. */
int qrt_dwconv2d_rows_path(const qrt_dwconv2d_params *p, int variant);

/** Non-zero (the default): AVX-512 VNNI calls at stride 2 read the image rows in place where
 *  they would take the byte planes (tests clear it to reach the byte planes). */
extern int qrt_dwconv2d_rows;

/** Non-zero (the default): on aarch64 CPUs with the dot product the NEON variant runs its byte
 *  planes with sdot (qrt/neon/dwconv2d_neondot.h) wherever they apply (tests clear it to reach
 *  the paths a CPU without the dot product takes). */
extern int qrt_dwconv2d_dot;

/** Work (multiply-accumulates) under which qrt_dwconv2d_u8 stays on the calling thread. */
extern double qrt_dwconv2d_mt_min_work;

#endif /* QRT_DWCONV2D_H */

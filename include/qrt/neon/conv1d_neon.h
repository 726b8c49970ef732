/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_neon.h
 * @brief qrt_conv1d_u8__neon(): Arm NEON variant of qrt_conv1d_u8_ref() (Armv8.0 aarch64 and
 *        armv7 NEON), bit-exact with it.  Chosen at run time by src/conv1d.c (cpu.h features).
 *        Defined in src/neon/conv1d_neon.c (armv7: compiled with -mfpu=neon); the helpers it
 *        shares with the dot-product variant are in src/neon/conv1d_neon_common.h.
 *
 * Design: for each (n, group, t) the receptive field of one output position is gathered once
 * into a small stack buffer in the weight's natural [c_in/groups][kernel] order (padding taps
 * hold input_zero, so they contribute 0 exactly as in the reference), then every output
 * channel of the group takes an exact dot product with its contiguous weight row:
 *   (x - x_zero) and (w - w_zero) widened to int16 (vsubl), multiply-accumulated into int32
 *   lanes (vmlal_s16).
 * Every partial sum is bounded by the full sum's bound (qrt_conv1d_check: taps * 255 * 255 <
 * 2^31), so no lane overflows and the int32 total equals the reference's accumulator.  The
 * requantization is the reference's own scalar code (requant.h).  Linear layers (kernel 1,
 * channel stride 1) skip the gather and read the input row in place.
 *
 * Depthwise path (c_in/groups == 1, any channel multiplier, uint8 output, unit time strides,
 * stride 1 or 2; see qrt__conv1d_dw_ok): lanes over time.  For each output channel and each
 * block of 16 output positions, every tap loads the 16 input bytes it meets (vld1q, or vld2q's
 * even lanes for stride 2), widens x - x_zero to int16 (vsubl_u8) and multiply-accumulates by
 * the tap's w - w_zero into four int32x4 lanes (vmlal_n_s16): exact, as above; the lanes start
 * at the int32 bias.  Interior blocks (every tap inside the row) load in place without a check;
 * the blocks at each end run once over a small copy of the row end with input_zero in the
 * padding (qrt__conv1d_dw_run__neon; past 1 KiB of it, block by block with each tap checked).
 * No byte outside [row, row + len_in) is ever read and a last partial block stores only its
 * own bytes.  Requantization is vectorized and bit-exact with qrt_requant_fp32_u8: see
 * qrt__neon_requant16 and qrt__neon_cvt_rne.  Other cases with under 16 taps (strided input,
 * float output, stride > 2) still fill no vector, so they run the reference.
 *
 * GEMM path (aarch64; kernel 1, stride 1, groups 1, no padding, unit time strides, uint8
 * output, 16 <= c_in <= 1024, len_out >= 8: a 1x1 stride-1 conv2d read as [C_in][H*W], or an
 * im2col'd conv): out[oc][t] = sum_ci w[oc][ci] x[ci][t] as 8 x 8 register tiles (16 int32x4
 * accumulators starting at the bias).  Per block of 8 output channels, w - w_zero is packed once
 * on the stack as int16 [c_in][8]; per input channel the 8 bytes x[ci][t..t+8) are loaded in
 * place, widened to x - x_zero (vsubl_u8) and multiply-accumulated by the 8 channels' weights
 * (vmlal(_high)_laneq_s16): exact, as above.  Requantization is vectorized (fcvtns and
 * saturating narrowings) and bit-exact with qrt_requant_fp32_u8.  See
 * src/neon/conv1d_neon_gemm.h.
 *
 * armv7: Debian armhf's baseline has no NEON, so src/neon/conv1d_neon.c alone is compiled with
 * -mfpu=neon (its functions also keep target("fpu=neon")), and src/conv1d.c only calls them
 * when AT_HWCAP reports NEON.  aarch64: NEON is the baseline.
 */
#ifndef QRT_CONV1D_NEON_H
#define QRT_CONV1D_NEON_H

#include "qrt/conv1d_params.h"
#include "qrt/ref/conv1d_ref.h"

/** Whether qrt__conv1d_dw__neon() handles p (c_in/groups == 1, uint8 out, unit time strides). */
static inline int qrt__conv1d_dw_ok(const qrt_conv1d_params *p) {
    return p->c_in == p->groups && p->out_kind == QRT_CONV1D_OUT_U8 && p->x_stride_t == 1 &&
           p->y_stride_t == 1 && (p->stride == 1 || p->stride == 2);
}

/**
 * @brief The depthwise path of qrt_conv1d_u8__neon() (p already checked, qrt__conv1d_dw_ok(p)),
 *        also taken by qrt_conv1d_u8__neondot().  Bit-exact with qrt_conv1d_u8_ref().
 */
void qrt__conv1d_dw__neon(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                          const qrt_conv1d_quant *q, uint8_t *out);

/** @brief Whether p (checked) is the kernel-1 GEMM case that the NEON and NEON-dot variants run
 *         as register tiles (src/neon/conv1d_neon_gemm.h, qrt__conv1d_gemm_ok): the layers
 *         whose NEON-dot tile reads weight panels (qrt_conv1d_u8_uses_dot_panels). */
int qrt_conv1d_u8__neon_gemm_ok(const qrt_conv1d_params *p);

/**
 * @brief Same contract as qrt_conv1d_u8_ref(); NEON inner products.  Bit-exact with _ref.
 * @param[in]  p   geometry, strides, zero points (checked here by qrt_conv1d_check)
 * @param[in]  x   uint8 input at the p->x_stride_* element strides
 * @param[in]  w   [c_out][c_in/groups][kernel] int8, contiguous
 * @param[in]  q   per-output-channel constants
 * @param[out] out uint8 (OUT_U8) or float (OUT_F32) at the p->y_stride_* strides
 * @return QRT_OK, or the gate's error (nothing written)
 */
qrt_status qrt_conv1d_u8__neon(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                               const qrt_conv1d_quant *q, void *out);

#endif /* QRT_CONV1D_NEON_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_neondot.h
 * @brief qrt_conv1d_u8__neondot(): Armv8.2 dot-product (sdot) variant of qrt_conv1d_u8_ref()
 *        for aarch64 (Pi 5's Cortex-A76), bit-exact with it.  Defined in
 *        src/neon/conv1d_neondot.c, the one translation unit compiled with
 *        -march=armv8.2-a+dotprod (and target("arch=armv8.2-a+dotprod") on its functions), and
 *        only called when AT_HWCAP reports ASIMDDP (src/conv1d.c), so a Pi 4 (Cortex-A72)
 *        never executes an sdot.
 *
 * Same gather as conv1d_neon.h.  sdot multiplies signed bytes, so the uint8 input is biased to
 * x' = x - 128 (an eor with 0x80) and the zero points are folded in afterwards, per tap:
 *   (x - xz)(w - wz) = x'w + (128 - xz) w - wz (x - xz)
 * summed over the vector part with two sdot streams (x'.w and 1.w), plus the row sum of
 * (x - xz), which is shared by every output channel.  The terms are combined modulo 2^32; the
 * true sum fits int32 (qrt_conv1d_check), so the wrapped result equals the reference exactly.
 * Depthwise calls (qrt__conv1d_dw_ok) take conv1d_neon.h's depthwise path: one tap per output
 * position leaves nothing for a 4-byte dot product.
 *
 * GEMM calls (kernel 1, stride 1, groups 1: a 1x1 conv2d; see conv1d_neon.h's GEMM path for
 * the exact case) run 8 x 8 register tiles instead: per block of 16 positions (a row's last
 * 16 or 8) the input is packed once on the stack as x' in [c_in/4][16 positions][4] order
 * (zero past c_in), with each position's sum of (x - xz) when some w_zero != 0; each tile of 8
 * output channels reads its weights from an 8-channel panel (qrt_conv1d_pack_dot: the plan's
 * qrt_conv1d_quant.wpack_dot, or packed on the stack per chunk of channels) and runs indexed
 * sdots (vdotq_laneq_s32: one 4-channel group of one channel against 4 positions), so one
 * sdot does 16 MACs.  The zero-point terms are folded as above, per output channel ((128 -
 * xz) sum w + bias, from the panel's sums once per call) and per position (wz sum (x - xz),
 * skipped when the 8 channels' w_zero are all 0).  A tile with no weight zero point, all 8
 * channels stored and every scale on the fast requantization (a torch-quantized layer's tiles)
 * runs as one asm block with the same instructions (qrt__gemm_dot_tile_asm), and a row's last
 * 1..4 positions as a 4-position asm tile.  See src/neon/conv1d_neondot.c.
 */
#ifndef QRT_CONV1D_NEONDOT_H
#define QRT_CONV1D_NEONDOT_H

#include "qrt/neon/conv1d_neon.h"

/**
 * @brief Same contract as qrt_conv1d_u8_ref(); sdot inner products.  Bit-exact with _ref.
 * @param[in]  p   geometry, strides, zero points (checked here by qrt_conv1d_check)
 * @param[in]  x   uint8 input at the p->x_stride_* element strides
 * @param[in]  w   [c_out][c_in/groups][kernel] int8, contiguous
 * @param[in]  q   per-output-channel constants
 * @param[out] out uint8 (OUT_U8) or float (OUT_F32) at the p->y_stride_* strides
 * @return QRT_OK, or the gate's error (nothing written)
 */
qrt_status qrt_conv1d_u8__neondot(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                                  const qrt_conv1d_quant *q, void *out);

#endif /* QRT_CONV1D_NEONDOT_H */

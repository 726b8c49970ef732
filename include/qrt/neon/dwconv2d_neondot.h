/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_neondot.h
 * @brief The depthwise conv2d byte planes with sdot (aarch64 CPUs with the dot product: Pi 5's
 *        Cortex-A76), a path of qrt_dwconv2d_u8__neon (src/neon/dwconv2d_neon.c) defined in
 *        src/neon/dwconv2d_neondot.c, a unit compiled with -march=armv8.2-a+dotprod and
 *        entered only when AT_HWCAP reports ASIMDDP, so a Pi 4 never executes an sdot.
 *
 * The planes, bias folding and copy-out are the NEON byte-plane path's
 * (src/neon/dwconv2d_neon_planes.h: x' = x ^ 0x80 = x - 128 as int8 in src/dwconv2d_impl.h's
 * qrt__dwp_geom, sum (x - xz) w = sum x' w + (128 - xz) sum w).  A kernel row's taps 4q ..
 * 4q + 3 are 4 adjacent plane bytes, so one sdot lane sums them against the row's weights
 * (zero past the row's kw): at stride 1 the 16 bytes at f + 4q + d hold in lane j the taps of
 * output f + 4j + d (d = 0..3: 16 outputs), at stride 2 those at 2f + 4q + d (d = 0, 2, 16,
 * 18) the taps of outputs f + 2j + d/2; the requantized bytes are put back in order by one
 * tbl.  int8 x int8 products summed in int32 are exact for every weight, so every channel
 * without a weight zero point takes it; the others run the widening kernel.
 */
#ifndef QRT_NEON_DWCONV2D_NEONDOT_H
#define QRT_NEON_DWCONV2D_NEONDOT_H

#include "qrt/cpu.h"
#include "qrt/dwconv2d.h"

#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
/** Units [u0, u1) of p on the sdot byte planes (qrt__dwp_ok(p) holds; a dot-product CPU). */
void qrt__dwpd_run(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                   const qrt_conv1d_quant *q, uint8_t *y, void *scratch, int64_t u0, int64_t u1);
#endif

#endif

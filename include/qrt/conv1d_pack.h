/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_pack.h
 * @brief The "quad" weight layout read by the dot-product variants (x86 VNNI today; the same
 *        layout suits Arm sdot/udot), and its one-time packing.
 *
 * The reduction axis (input channel of the group x tap) is split in quads of 4 bytes, the unit
 * of one u8 x s8 dot-product instruction.  Two orders exist, chosen from the geometry alone:
 *  - channel quads (im2col = 0): Kc = kernel, CQ = ceil(cg / 4); byte (oc, k, cq, j) =
 *    w[oc][4*cq + j][k], 0 where 4*cq + j >= cg.  Taps are shifts of one packed input.
 *  - tap quads (im2col = 1): Kc = 1, CQ = ceil(cg * K / 4); byte (oc, 0, rq, j) = the (4*rq + j)th
 *    byte of w[oc] in its natural [cg][K] order, 0 past the end.  The input is im2col'ed.
 * im2col is used when it pads fewer multiply-adds (cg not a multiple of 4, e.g. depthwise or
 * c_in = 1) and cg < 32.  packed[c_out][Kc][CQ][4] int8 plus wsum[c_out] = sum of w[oc] (int32).
 */
#ifndef QRT_CONV1D_PACK_H
#define QRT_CONV1D_PACK_H

#include <stddef.h>
#include <stdint.h>
#include "qrt/conv1d_params.h"

/** Shape of the packed weight, derived from the geometry only. */
typedef struct {
    uint32_t im2col; /**< 1: tap quads, 0: channel quads */
    uint32_t kc;     /**< taps in the packed weight (1 with im2col) */
    uint32_t cq;     /**< quads per tap */
} qrt_conv1d_layout;

/** @brief The packed layout for (c_in/groups, kernel); see the file comment. */
static inline qrt_conv1d_layout qrt_conv1d_layout_of(uint32_t cg, uint32_t kernel) {
    qrt_conv1d_layout l;
    const uint64_t chan = (uint64_t)kernel * ((cg + 3u) / 4u) * 4u;
    const uint64_t taps = ((uint64_t)cg * kernel + 3u) / 4u * 4u;
    l.im2col = (taps < chan && cg < 32u) ? 1u : 0u;
    l.kc = l.im2col ? 1u : kernel;
    l.cq = l.im2col ? (uint32_t)(taps / 4u) : (cg + 3u) / 4u;
    return l;
}

/** @brief Bytes of the packed weight: c_out * Kc * CQ * 4. */
static inline size_t qrt_conv1d_packed_weight_size(uint32_t c_out, uint32_t cg, uint32_t kernel) {
    const qrt_conv1d_layout l = qrt_conv1d_layout_of(cg, kernel);
    return (size_t)c_out * l.kc * l.cq * 4u;
}

/**
 * @brief Pack w once into the quad layout.
 * @param[in]  w     [c_out][cg][kernel] int8, contiguous
 * @param[out] wpack [c_out][Kc][CQ][4] int8 (qrt_conv1d_packed_weight_size bytes)
 * @param[out] wsum  [c_out] sum of each output channel's weights
 *
 * Defined in src/conv1d.c (libqrt_core, -O3): a load-time loop, not glue for the -Os modules.
 */
void qrt_conv1d_pack_weights(uint32_t c_out, uint32_t cg, uint32_t kernel, const int8_t *w,
                             int8_t *wpack, int32_t *wsum);

/**
 * @brief Whether no output channel of a dense kernel-1 weight w [c_out][c_in] holds -128 at
 *        both i and i + 8 of one of its 16-weight blocks (blocks from ci 0, both < c_in): the
 *        aarch64 NEON c16 tile sums two int8 products in an int16 lane, which only such a pair
 *        (times two inputs of 0) overflows.  A plan that passes sets qrt_conv1d_quant.wsum_c16.
 */
int qrt_conv1d_c16_pairs_ok(uint32_t c_out, uint32_t c_in, const int8_t *w);

/** Rows (output positions per sample) of at most this many positions take the AVX-512 VNNI
 *  channels-in-lanes path of a dense 1x1 layer, when its weight is given (wpack_cl). */
#ifndef QRT_CONV1D_CL_MAX_LEN
#define QRT_CONV1D_CL_MAX_LEN 64u
#endif

/** @brief Bytes of the channels-in-lanes weight of a dense 1x1 layer: ceil16(c_out) * CQ * 4. */
static inline size_t qrt_conv1d_cl_weight_size(uint32_t c_out, uint32_t c_in) {
    return (size_t)((c_out + 15u) / 16u) * 16u * ((c_in + 3u) / 4u) * 4u;
}

/**
 * @brief The channels-in-lanes order of a dense 1x1 layer's packed weight (kernel 1, groups 1):
 *        quad (oc, cq) of wpack at quad ((oc / 16) * CQ + cq) * 16 + oc % 16, zero for the
 *        channels past c_out; a vector load then holds one quad of 16 output channels.  Read
 *        by the AVX-512 VNNI channels-in-lanes path (qrt_conv1d_quant.wpack_cl).
 * @param[in]  wpack [c_out][CQ][4] from qrt_conv1d_pack_weights(c_out, c_in, 1, ...)
 * @param[out] wcl   qrt_conv1d_cl_weight_size(c_out, c_in) bytes
 * Defined in src/conv1d.c.
 */
void qrt_conv1d_pack_cl(uint32_t c_out, uint32_t c_in, const int8_t *wpack, int8_t *wcl);

/** Output channels per weight panel of the AVX2 variant (its tile width). */
#define QRT_CONV1D_A2_NO 4u

/** @brief int32 entries of the AVX2 variant's weight panels:
 *         groups * ceil4(c_out / groups) * ceil(cg * kernel / 2). */
static inline size_t qrt_conv1d_a2_weight_size(uint32_t c_out, uint32_t cg, uint32_t kernel,
                                               uint32_t groups) {
    const size_t og = groups ? c_out / groups : 0;
    return (size_t)groups * ((og + QRT_CONV1D_A2_NO - 1u) / QRT_CONV1D_A2_NO * QRT_CONV1D_A2_NO) *
           (((size_t)cg * kernel + 1u) / 2u);
}

/**
 * @brief The AVX2 variant's weight order (src/x86/conv1d_avx2.c): per group, panels of 4 output
 *        channels, [groups][ceil(og / 4)][R2][4] int32 entries, each an int16 pair
 *        (w[oc][2 r2] - w_zp[oc], w[oc][2 r2 + 1] - w_zp[oc]) over the reduction r = ic * K + k
 *        (R = cg * K, R2 = ceil(R / 2)); 0 past R and for the channels past og in a group's last
 *        panel.  One broadcast then gives a tile channel's pair for `vpmaddwd`.  Made once per
 *        layer (qrt_conv1d_quant.wpack_a2) or, without it, per call in the kernel's scratch.
 * @param[in]  w   [c_out][cg][kernel] int8
 * @param[in]  wz  [c_out] weight zero points
 * @param[out] out qrt_conv1d_a2_weight_size() int32 entries
 */
static inline void qrt_conv1d_pack_a2(uint32_t c_out, uint32_t cg, uint32_t kernel,
                                      uint32_t groups, const int8_t *w, const int32_t *wz,
                                      int32_t *out) {
    const size_t og = c_out / groups, R = (size_t)cg * kernel, R2 = (R + 1u) / 2u;
    const size_t NO = QRT_CONV1D_A2_NO, npan = (og + NO - 1u) / NO;
    for (size_t g = 0; g < groups; ++g)
        for (size_t pi = 0; pi < npan; ++pi)
            for (size_t i = 0; i < NO; ++i) {
                const size_t o = pi * NO + i, oc = g * og + o;
                int32_t *d = out + (g * npan + pi) * R2 * NO + i;
                if (o >= og) {
                    for (size_t r2 = 0; r2 < R2; ++r2) d[NO * r2] = 0;
                    continue;
                }
                const int8_t *s = w + oc * R;
                const int32_t z = wz[oc];
                for (size_t r2 = 0; r2 < R2; ++r2) {
                    const int16_t lo = (int16_t)(s[2 * r2] - z);
                    const int16_t hi = 2 * r2 + 1 < R ? (int16_t)(s[2 * r2 + 1] - z) : 0;
                    d[NO * r2] = (int32_t)((uint32_t)(uint16_t)lo | ((uint32_t)(uint16_t)hi << 16));
                }
            }
}

/** Output channels per panel of the aarch64 NEON-dot GEMM tile (its tile height). */
#define QRT_CONV1D_DOT_NO 8u

/** @brief Bytes of one NEON-dot GEMM panel: 8 int32 weight sums, then ceil16(c_in) x 8 weights
 *         (a multiple of 16, so panels stay 16-byte aligned in an aligned buffer). */
static inline size_t qrt_conv1d_dot_panel_size(uint32_t c_in) {
    return 32u + (size_t)QRT_CONV1D_DOT_NO * (((size_t)c_in + 15u) & ~(size_t)15u);
}

/** @brief Bytes of the NEON-dot GEMM panels of a dense kernel-1 layer: ceil(c_out / 8) panels. */
static inline size_t qrt_conv1d_dot_weight_size(uint32_t c_out, uint32_t c_in) {
    return (size_t)((c_out + QRT_CONV1D_DOT_NO - 1u) / QRT_CONV1D_DOT_NO) *
           qrt_conv1d_dot_panel_size(c_in);
}

/**
 * @brief The aarch64 NEON-dot GEMM tile's weight order (src/neon/conv1d_neondot.c) for output
 *        channels oc0 .. oc0 + noc - 1 of a dense kernel-1 weight: per panel of 8 channels,
 *        int32 sum_ci w[oc][ci] of its 8 channels (0 for a channel past noc), then for each
 *        block of 16 input channels the 8 channels' 16 weights, 16 bytes each
 *        ([ceil16(c_in) / 16][8][16] int8; 0 past c_in and for the channels past noc).  One
 *        panel's block is then 8 consecutive vectors, the tile's 8 weight rows.  Made once per
 *        layer (qrt_conv1d_quant.wpack_dot, oc0 = 0, noc = c_out) or, without it, by the tile
 *        per chunk of channels on its stack.
 * @param[in]  w   [c_out][c_in] int8 (rows oc0 .. oc0 + noc - 1 are read)
 * @param[out] out ceil(noc / 8) panels of qrt_conv1d_dot_panel_size(c_in) bytes, 4-byte aligned
 */
static inline void qrt_conv1d_pack_dot(uint32_t oc0, uint32_t noc, uint32_t c_in, const int8_t *w,
                                       int8_t *out) {
    const size_t NO = QRT_CONV1D_DOT_NO, c16 = ((size_t)c_in + 15u) & ~(size_t)15u;
    const size_t ps = qrt_conv1d_dot_panel_size(c_in), npan = (noc + NO - 1u) / NO;
    for (size_t b = 0; b < npan; ++b) {
        int8_t *pan = out + b * ps;
        int32_t *ws = (int32_t *)(void *)pan;
        for (size_t r = 0; r < NO; ++r) {
            const size_t o = b * NO + r;
            const int8_t *row = o < noc ? w + ((size_t)oc0 + o) * c_in : NULL;
            int32_t s = 0;
            for (size_t i = 0; i < c16; ++i) {
                const int8_t v = row && i < c_in ? row[i] : 0;
                s += v;
                pan[32u + (i / 16u) * NO * 16u + r * 16u + i % 16u] = v;
            }
            ws[r] = s;
        }
    }
}

#endif /* QRT_CONV1D_PACK_H */

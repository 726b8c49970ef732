/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d.h
 * @brief Public qrt_conv1d_u8(): runs the best variant compiled in and supported by this CPU
 *        (AVX-512 VNNI, else AVX2, on x86-64; sdot, else NEON, on Arm), or the reference
 *        (forced by variant = QRT_ISA_REF, by -Dsimd=ref, or when no packed weight is given).
 *        Defined in src/conv1d.c; the variants live in src/{ref,x86,neon}/conv1d_*.c.
 */
#ifndef QRT_CONV1D_H
#define QRT_CONV1D_H

#include "qrt/conv1d_pack.h"
#include "qrt/conv1d_params.h"
#include "qrt/ref/conv1d_ref.h"
#include "qrt/types.h"

/** The QRT_ISA_* code of the variant qrt_conv1d_u8() picks on this CPU. */
int qrt_conv1d_isa(void);

/** Whether this build and CPU can run variant `isa` (a QRT_ISA_* code). */
int qrt_conv1d_supports(int isa);

/** Which variant a call with `variant` (-1: best, QRT_ISA_REF: reference, or a supported
 *  QRT_ISA_* code, which tests use to force it) runs. */
int qrt_conv1d_variant(int variant);

/** @brief Scratch bytes qrt_conv1d_u8() needs for `variant` (0 for the reference) with the
 *         quantization arrays q (NULL, or q->wpack_a2 NULL: the AVX2 variant makes its weight
 *         panels in the scratch; only q->wpack_a2 is read). */
size_t qrt_conv1d_u8_scratch_size(const qrt_conv1d_params *p, const qrt_conv1d_quant *q,
                                  int variant);

/** @brief Whether `variant` reads the AVX2 weight panels (qrt_conv1d_quant.wpack_a2) for p: a
 *         plan makes them only then. */
int qrt_conv1d_u8_uses_a2_panels(const qrt_conv1d_params *p, int variant);

/** @brief Whether `variant` on this CPU is the aarch64 NEON-dot one and p the kernel-1 GEMM
 *         case its register tiles run (a 1x1 conv of at least 8 positions and 16..1024 input
 *         channels; not a linear row), whose tile then reads weight panels
 *         (qrt_conv1d_pack_dot(), qrt_conv1d_quant.wpack_dot) when given them. */
int qrt_conv1d_u8_uses_dot_panels(const qrt_conv1d_params *p, int variant);

/** 1 (the default): the AVX-512 VNNI variant runs the last 1..4 positions of a 1x1 row past a
 *  multiple of 16 as a row tail (lanes over 4 positions x 4 channel quads, 196 = 12 x 16 + 4
 *  on 14 x 14 images) instead of one more 16-position vector; 0: as that vector.  Tests and
 *  benchmarks compare both (qrt/_conv1d.pyx `_set_conv_tail`); set it only while no call runs. */
extern int qrt_conv1d_vnni_tail;

/** @brief Whether a one-thread call of `variant` on this CPU with p and q runs that row tail. */
int qrt_conv1d_u8_uses_vnni_tail(const qrt_conv1d_params *p, const qrt_conv1d_quant *q,
                                 int variant);

/**
 * @brief Same contract as qrt_conv1d_u8_ref(); runs the fastest variant available.
 * @param[in] w       [c_out][c_in/groups][kernel] int8 (read by the reference)
 * @param[in] wpack   packed quads and @p wsum from qrt_conv1d_pack_weights() (read by the
 *                    dot-product variants)
 * @param[in] scratch qrt_conv1d_u8_scratch_size(p, q, variant) bytes, @p scratch_size given
 * @param[in] variant -1 for the best, QRT_ISA_REF to force the reference
 * @return QRT_OK; the gate's error; QRT_ERR_ARG when scratch is too small
 */
qrt_status qrt_conv1d_u8(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                         const int8_t *wpack, const int32_t *wsum, const qrt_conv1d_quant *q,
                         void *out, void *scratch, size_t scratch_size, int variant);

#endif /* QRT_CONV1D_H */

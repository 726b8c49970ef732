/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_conv_cm.h
 * @brief The body of qrt_dwconv2d_f32_cm (include/qrt/float_conv.h), private to src/:
 *        src/float_conv.c compiles it with the baseline flags, src/x86/float_conv_avx2.c with
 *        AVX2.  Plain float32 multiplies and adds without contraction (-ffp-contract=off):
 *        every compilation computes the same bits; only the vector width differs.
 *
 * The including file defines CM_NAME (the function's name) and CM_BLOCK (the output channels
 * whose accumulators one pass keeps: the vectorised loops' fixed trip count).
 *
 * Output channels [m0, m0 + CM_BLOCK) of input channel ci at one output position are one
 * vector loop over the channel multiplier (weights tap-major, wt[ci][tap][m]); per output
 * element the operations are those of qrt_dwconv2d_f32 in the same order: tap 0 times x, +
 * each other tap in row-major order, + bias (w * x == x * w).
 */
#include "qrt/float_conv.h"

#define CM_CAT2(a, b) a##b
#define CM_CAT(a, b) CM_CAT2(a, b)

/* one output position, channels [m0, m0 + CM_BLOCK) (a full block: fixed trip counts) */
static inline void CM_CAT(CM_NAME, _full)(const qrt_dwconv2d_f32_params *p, const float *x0,
                                          const float *wc, const float *bc, size_t m0,
                                          float *yo, size_t opl)
{
    const size_t M = p->mult, kw = p->kw;
    float acc[CM_BLOCK];
    const float xv0 = x0[0];
    for (size_t m = 0; m < CM_BLOCK; m++) acc[m] = wc[m0 + m] * xv0;
    for (size_t i = 0; i < p->kh; i++) {
        const float *xr = x0 + i * p->dh * p->wp;
        const float *wi = wc + i * kw * M + m0;
        for (size_t j = i == 0; j < kw; j++) {   /* tap (0, 0) is above */
            const float xv = xr[j * p->dw];
            const float *wr = wi + j * M;
            for (size_t m = 0; m < CM_BLOCK; m++) acc[m] = acc[m] + wr[m] * xv;
        }
    }
    if (bc)
        for (size_t m = 0; m < CM_BLOCK; m++) acc[m] = acc[m] + bc[m0 + m];
    for (size_t m = 0; m < CM_BLOCK; m++) yo[(m0 + m) * opl] = acc[m];
}

/* the same for the last mb < CM_BLOCK channels */
static inline void CM_CAT(CM_NAME, _tail)(const qrt_dwconv2d_f32_params *p, const float *x0,
                                          const float *wc, const float *bc, size_t m0,
                                          size_t mb, float *yo, size_t opl)
{
    const size_t M = p->mult, kw = p->kw;
    float acc[CM_BLOCK];
    const float xv0 = x0[0];
    for (size_t m = 0; m < mb; m++) acc[m] = wc[m0 + m] * xv0;
    for (size_t i = 0; i < p->kh; i++) {
        const float *xr = x0 + i * p->dh * p->wp;
        const float *wi = wc + i * kw * M + m0;
        for (size_t j = i == 0; j < kw; j++) {   /* tap (0, 0) is above */
            const float xv = xr[j * p->dw];
            const float *wr = wi + j * M;
            for (size_t m = 0; m < mb; m++) acc[m] = acc[m] + wr[m] * xv;
        }
    }
    if (bc)
        for (size_t m = 0; m < mb; m++) acc[m] = acc[m] + bc[m0 + m];
    for (size_t m = 0; m < mb; m++) yo[(m0 + m) * opl] = acc[m];
}

/* geometry checked by the caller (qrt_dwconv2d_f32_cm) */
static void CM_NAME(const qrt_dwconv2d_f32_params *p, const float *xp, const float *wt,
                    const float *bias, float *y)
{
    const size_t M = p->mult, co = p->c_in * M, plane = p->hp * p->wp, kk = p->kh * p->kw;
    const size_t opl = p->ho * p->wo, full = M - M % CM_BLOCK;
    for (size_t n = 0; n < p->n; n++)
        for (size_t ci = 0; ci < p->c_in; ci++) {
            const float *xc = xp + (n * p->c_in + ci) * plane;
            const float *wc = wt + ci * kk * M;
            const float *bc = bias ? bias + ci * M : NULL;
            float *yc = y + (n * co + ci * M) * opl;
            for (size_t oh = 0; oh < p->ho; oh++)
                for (size_t ow = 0; ow < p->wo; ow++) {
                    const float *x0 = xc + oh * p->sh * p->wp + ow * p->sw;
                    float *yo = yc + oh * p->wo + ow;
                    for (size_t m0 = 0; m0 < full; m0 += CM_BLOCK)
                        CM_CAT(CM_NAME, _full)(p, x0, wc, bc, m0, yo, opl);
                    if (full < M) CM_CAT(CM_NAME, _tail)(p, x0, wc, bc, full, M - full, yo, opl);
                }
        }
}

#undef CM_CAT
#undef CM_CAT2

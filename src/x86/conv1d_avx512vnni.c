/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_avx512vnni.c
 * @brief qrt_conv1d_u8__avx512vnni(): 512-bit VNNI variant of qrt_conv1d_u8_ref(), bit-exact
 *        with it.  Chosen at run time (src/conv1d.c).  This file is the position-chunk driver:
 *        long rows of big layers run as L2-sized chunks of output positions, each packing
 *        only its own window; the algorithms are in conv1d_avx512vnni_packed.c and
 *        conv1d_avx512vnni_dw4.c (private header conv1d_avx512vnni.h).
 *
 * Design ("lanes over time"): each zmm accumulator holds 16 consecutive output positions of one
 * output channel, so NCL output rows are written with one masked byte store.  Per group, the
 * input is first packed into quads ([CQ][phase][U] uint32, 4 reduction bytes per output
 * position; stride phases de-interleaved so every tap is a unit-stride load), and vpdpbusd
 * multiplies them by a broadcast weight quad (conv1d_pack.h).  The raw int8 weight is used:
 *   acc = sum x*w - x_zero*sum(w) - w_zero*S(t) + taps*x_zero*w_zero      (mod 2^32)
 * where S(t) is the window sum of x (only computed when some w_zero != 0).  All terms wrap mod
 * 2^32 like torch's int32 arithmetic, and the true accumulator fits int32 (the gate's bound),
 * so the result equals the reference exactly.  Requantization is the same instruction sequence
 * as requant.h (cvtdq2ps, mulps, cvtps2dq, clamp).
 */
#include "conv1d_avx512vnni.h"

size_t qrt_conv1d_u8__avx512vnni_scratch_size(const qrt_conv1d_params *p) {
    if (qrt__dw_ok(p)) return 64u; /* the depthwise path reads the input in place */
    const qrt_conv1d_layout l = qrt_conv1d_layout_of(p->c_in / p->groups, p->kernel);
    const size_t phases = l.im2col ? 1u : p->stride;
    const size_t xq = (size_t)l.cq * phases * (size_t)qrt__c1_row(p, &l) * 4u *
                      (size_t)qrt__c1_group_chunk(p, &l);
    const size_t koff = (size_t)l.kc * 8u;
    const size_t colsum = (size_t)p->len_in * 4u;
    const size_t wsum = (size_t)qrt__c1_ceil16(p->len_out) * 4u;
    const size_t tmp = p->stride > 1 ? (size_t)qrt__c1_row(p, &l) * p->stride * 4u + 64u : 0u;
    return 64u + ((xq + 63u) & ~(size_t)63u) + ((koff + 63u) & ~(size_t)63u) +
           ((colsum + 63u) & ~(size_t)63u) + ((wsum + 63u) & ~(size_t)63u) +
           ((tmp + 63u) & ~(size_t)63u) + 64u;
}

int qrt_conv1d_u8__avx512vnni_tail(const qrt_conv1d_params *p, const qrt_conv1d_quant *q) {
    if (!q || qrt_conv1d_check(p) != QRT_OK) return 0;
    if (qrt__dw_ok(p) || qrt__c1_gemv_ok(p) || qrt__c1_cl_ok(p, q)) return 0; /* the dispatch */
    const qrt_conv1d_layout l = qrt_conv1d_layout_of(p->c_in / p->groups, p->kernel);
    int asym = 0;
    for (uint32_t oc = 0; oc < p->c_out; ++oc) asym |= q->weight_zero[oc] != 0;
    if (qrt__c1_group_chunk(p, &l) > 1 && !asym) return 0; /* the grouped depthwise tiles */
    const int k1 = l.kc == 1 && p->out_kind == QRT_CONV1D_OUT_U8 && p->y_stride_t == 1;
    return qrt__c1_tail_ok(p, k1, asym);
}

/**
 * @brief Same contract as qrt_conv1d_u8_ref(), reading the packed weight instead of w.
 * @param[in]  wpack   [c_out][Kc][CQ][4] from qrt_conv1d_pack_weights()
 * @param[in]  wsum    [c_out] from qrt_conv1d_pack_weights()
 * @param[in]  scratch qrt_conv1d_u8__avx512vnni_scratch_size(p) bytes, any alignment
 * Bit-exact with qrt_conv1d_u8_ref().
 */
QRT_VNNI qrt_status qrt_conv1d_u8__avx512vnni(const qrt_conv1d_params *p, const uint8_t *x,
                                              const int8_t *wpack, const int32_t *wsum,
                                              const qrt_conv1d_quant *q, void *out, void *scratch) {
    const qrt_status st = qrt_conv1d_check(p);
    if (st != QRT_OK) return st;
    if (qrt__dw_ok(p)) return qrt__conv1d_vnni_dw4(p, x, wpack, wsum, q, (uint8_t *)out);
    if (qrt__c1_gemv_ok(p)) return qrt__conv1d_vnni_gemv(p, x, wpack, wsum, q, (uint8_t *)out);
    if (qrt__c1_cl_ok(p, q))
        return qrt__conv1d_vnni_cl(p, x, q->wpack_cl, wsum, q, (uint8_t *)out, scratch);
#ifndef QRT__C1_NOCHUNK
    {
        /* Long rows of a big layer: run the call over position chunks whose packed input stays
         * in L2 (each chunk packs only its own window), instead of packing the whole row. */
        const qrt_conv1d_layout l0 = qrt_conv1d_layout_of(p->c_in / p->groups, p->kernel);
        const int64_t per_pos = (int64_t)l0.cq * 4; /* packed bytes per position */
        int64_t chunk = ((int64_t)QRT__C1_CHUNK_BYTES / (per_pos > 0 ? per_pos : 1)) / 48 * 48;
        chunk = chunk < 96 ? 96 : chunk; /* tests build with QRT__C1_CHUNK_BYTES=1: 96 */
        /* at least two chunks (the first boundary is kept), so every sub-call is shorter
         * than this call and the recursion ends */
        /* pad_left < chunk: the first chunk's window reaches the input (a left padding
         * longer than a chunk gave chunks of padding alone, whose negative input span wrapped
         * to a huge len_in and a false "too large" refusal) */
        /* (1x1 unit-stride layers pack one position block at a time, qrt__c1_pack_block:
         * they need no chunks) */
        if (p->groups == 1 && p->stride == 1 && !qrt__c1_blocked(p) && p->len_in > 0 &&
            p->len_out > chunk + chunk / 2 &&
            (int64_t)p->pad_left < chunk && chunk - (int64_t)p->pad_left < p->len_in) {
            const size_t es = p->out_kind == QRT_CONV1D_OUT_F32 ? 4u : 1u;
            for (int64_t u0 = 0, u1; u0 < p->len_out; u0 = u1) {
                /* the last chunk takes a short tail, and every output whose window lies in
                 * the right padding alone: each chunk's first window overlaps the input */
                u1 = u0 + chunk;
                if (u1 + chunk / 2 >= p->len_out || u1 - (int64_t)p->pad_left >= p->len_in)
                    u1 = p->len_out;
                qrt_conv1d_params r = *p;
                const int64_t start = u0 - (int64_t)p->pad_left; /* first tap of u0 */
                const int64_t span = (u1 - u0 - 1) + (int64_t)(p->kernel - 1) * p->dilation + 1;
                const int64_t x0 = start > 0 ? start : 0;
                const int64_t avail = (int64_t)p->len_in - x0, need = start + span - x0;
                r.pad_left = (uint32_t)(start < 0 ? -start : 0);
                r.len_in = (uint32_t)(avail < 0 ? 0 : avail < need ? avail : need);
                r.len_out = (uint32_t)(u1 - u0);
                const qrt_status s2 = qrt_conv1d_u8__avx512vnni(
                    &r, x + x0 * p->x_stride_t, wpack, wsum, q,
                    (uint8_t *)out + (ptrdiff_t)(u0 * p->y_stride_t) * (ptrdiff_t)es, scratch);
                if (s2 != QRT_OK) return s2;
            }
            return QRT_OK;
        }
    }
#endif
    return qrt__conv1d_vnni_packed(p, x, wpack, wsum, q, out, scratch);
}

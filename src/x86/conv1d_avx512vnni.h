/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_avx512vnni.h
 * @brief Private to src/x86: the geometry helpers and the two algorithms behind
 *        qrt_conv1d_u8__avx512vnni() (src/x86/conv1d_avx512vnni.c, the position-chunk driver):
 *  - qrt__conv1d_vnni_packed() (conv1d_avx512vnni_packed.c): the packed-quad tiled path, input
 *    packed per group into [CQ][stride phase][U] quads, 8-channel x 48-position vpdpbusd tiles;
 *  - qrt__conv1d_vnni_dw4() (conv1d_avx512vnni_dw4.c): the depthwise "four phases" path, stride
 *    1, reading the NCL rows in place.
 * All three translation units are compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni.
 */
#ifndef QRT_SRC_CONV1D_AVX512VNNI_H
#define QRT_SRC_CONV1D_AVX512VNNI_H

#include <immintrin.h>
#include <string.h>
#include "qrt/conv1d_pack.h"
#include "qrt/conv1d.h" /* qrt_conv1d_vnni_tail */
#include "qrt/conv1d_params.h"
#include "qrt/x86/conv1d_avx512vnni.h"

#define QRT_VNNI   __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define QRT__C1_NR 8 /* output channels per tile */
#define QRT__C1_MT 3 /* 16-position vectors per tile */
#define QRT__C1_NR4 6 /* output channels per 4-vector tile (64 positions) */
#define QRT__C1_MTX 4 /* the most 16-position vectors of any tile */
#ifndef QRT__C1_CHUNK_BYTES
#define QRT__C1_CHUNK_BYTES (128 * 1024) /* packed input per position chunk (L2) */
#endif
#ifndef QRT__C1_GROUP_BUDGET
#define QRT__C1_GROUP_BUDGET (32 * 1024) /* bytes of packed input per group chunk (L1) */
#endif

/** acc + vpdpbusd(x, w), as _mm512_dpbusd_epi32, but with the accumulator tied to the
 *  destination register: gcc 12 copies 24 live intrinsic accumulators around (and spills some)
 *  in the 1x1 loop; the asm keeps every one in its own zmm.  The same instruction, the same
 *  bits. */
static inline __attribute__((always_inline)) QRT_VNNI __m512i qrt__c1_dp(__m512i acc, __m512i x,
                                                                          __m512i w) {
    __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w));
    return acc;
}

/** QNNPACK's saturating narrowing of four requantized int32 vectors (packssdw, paddsw of the
 *  output zero point, packuswb, the byte clamp: the same bytes as clamp(r + zp, lo, hi)):
 *  128-bit lane L holds the dwords r0[4L .. 4L + 3], r1[..], r2[..], r3[..] as bytes. */
static inline __attribute__((always_inline)) QRT_VNNI __m512i
qrt__c1_pack4(__m512i r0, __m512i r1, __m512i r2, __m512i r3, __m512i voz16, __m512i vlo8,
              __m512i vhi8) {
    const __m512i h01 = _mm512_adds_epi16(_mm512_packs_epi32(r0, r1), voz16);
    const __m512i h23 = _mm512_adds_epi16(_mm512_packs_epi32(r2, r3), voz16);
    return _mm512_min_epu8(_mm512_max_epu8(_mm512_packus_epi16(h01, h23), vlo8), vhi8);
}

/** 8 rows x 16 bytes -> 16 rows x 8 bytes (pure byte moves): tr[i] holds column 2i in its low
 *  8 bytes and column 2i + 1 in its high 8 bytes, row r at byte r of each. */
static inline __attribute__((always_inline)) QRT_VNNI void qrt__c1_tr8x16(const __m128i b[8],
                                                                          __m128i tr[8]) {
    const __m128i a0 = _mm_unpacklo_epi8(b[0], b[1]), a1 = _mm_unpackhi_epi8(b[0], b[1]);
    const __m128i a2 = _mm_unpacklo_epi8(b[2], b[3]), a3 = _mm_unpackhi_epi8(b[2], b[3]);
    const __m128i a4 = _mm_unpacklo_epi8(b[4], b[5]), a5 = _mm_unpackhi_epi8(b[4], b[5]);
    const __m128i a6 = _mm_unpacklo_epi8(b[6], b[7]), a7 = _mm_unpackhi_epi8(b[6], b[7]);
    const __m128i c0 = _mm_unpacklo_epi16(a0, a2), c1 = _mm_unpackhi_epi16(a0, a2);
    const __m128i c2 = _mm_unpacklo_epi16(a1, a3), c3 = _mm_unpackhi_epi16(a1, a3);
    const __m128i d0 = _mm_unpacklo_epi16(a4, a6), d1 = _mm_unpackhi_epi16(a4, a6);
    const __m128i d2 = _mm_unpacklo_epi16(a5, a7), d3 = _mm_unpackhi_epi16(a5, a7);
    tr[0] = _mm_unpacklo_epi32(c0, d0), tr[1] = _mm_unpackhi_epi32(c0, d0);
    tr[2] = _mm_unpacklo_epi32(c1, d1), tr[3] = _mm_unpackhi_epi32(c1, d1);
    tr[4] = _mm_unpacklo_epi32(c2, d2), tr[5] = _mm_unpackhi_epi32(c2, d2);
    tr[6] = _mm_unpacklo_epi32(c3, d3), tr[7] = _mm_unpackhi_epi32(c3, d3);
}

static inline int64_t qrt__c1_ceil16(int64_t v) {
    return (v + 15) & ~(int64_t)15;
}

/** Row length U (quads) of the packed input for this geometry. */
static inline int64_t qrt__c1_row(const qrt_conv1d_params *p, const qrt_conv1d_layout *l) {
    int64_t u = qrt__c1_ceil16(p->len_out);
    if (!l->im2col) u += ((int64_t)(p->kernel - 1) * p->dilation) / p->stride;
    /* Rows are read together by a tile: make their stride an odd number of 64-byte lines so
     * they spread over all L1 sets instead of aliasing into a few. */
    u = qrt__c1_ceil16(u);
    if ((u / 16) % 2 == 0) u += 16;
    return u;
}

/** Whether the packed path packs p's input one position block at a time, just before the
 *  block's tiles (qrt__c1_pack_block): 1x1 layers of unit stride on unit-stride rows. */
static inline int qrt__c1_blocked(const qrt_conv1d_params *p) {
    return p->kernel == 1 && p->stride == 1 && p->x_stride_t == 1;
}

/** Channels of a group the row tail's stack buffer holds (4 bytes each). */
#define QRT__C1_TAIL_MAXC 2048

/**
 * Whether a call's last len_out % 16 (1..4) positions run qrt__c1_tail_tile() instead of a
 * 16-position vector of which 12..15 lanes would be padding (196 = 12 x 16 + 4 on 14 x 14
 * images, 49 = 3 x 16 + 1 on 7 x 7): a blocked 1x1 layer (k1: quint8 NCL output), no weight
 * zero point, no padding, at least one full vector, and channel rows the gather can index;
 * while qrt_conv1d_vnni_tail is set.
 */
static inline int qrt__c1_tail_ok(const qrt_conv1d_params *p, int k1, int asym) {
    const int64_t rem = p->len_out % 16, cg = p->c_in / p->groups;
    return qrt_conv1d_vnni_tail && k1 && qrt__c1_blocked(p) && !asym && p->pad_left == 0 &&
           p->len_out > 16 &&
           rem >= 1 && rem <= 4 && p->len_out <= p->len_in && cg <= QRT__C1_TAIL_MAXC &&
           p->x_stride_c > 0 && p->x_stride_c <= INT32_MAX / 16;
}

/** Groups packed together when each group has one output channel (depthwise-like), else 1. */
static inline int64_t qrt__c1_group_chunk(const qrt_conv1d_params *p, const qrt_conv1d_layout *l) {
    if (p->c_out != p->groups || p->groups < 2) return 1;
    const int64_t per = (int64_t)l->cq * (l->im2col ? 1 : p->stride) * qrt__c1_row(p, l) * 4;
    int64_t gc = ((int64_t)QRT__C1_GROUP_BUDGET) / (per > 0 ? per : 1);
    gc = gc < 8 ? 8 : gc;
    return gc > (int64_t)p->groups ? (int64_t)p->groups : gc;
}

#define QRT__DW_MAXSPAN 63 /* (K-1)*dilation + 1 <= 64: at most 16 weight blocks */
#define QRT__DW_MAXBLK  16
#define QRT__DW_SHORT   192 /* rows of at most this many outputs run from a padded copy */

/** Whether the depthwise four-phase path serves p (described below; else the packed
 *  path runs). */
static inline int qrt__dw_ok(const qrt_conv1d_params *p) {
    return p->c_in == p->groups && p->out_kind == QRT_CONV1D_OUT_U8 && p->stride == 1 &&
           p->x_stride_t == 1 && p->y_stride_t == 1 &&
           (uint64_t)(p->kernel - 1) * p->dilation <= QRT__DW_MAXSPAN;
}

/** The packed-quad path (any geometry the gate accepts); see the file comment. */
qrt_status qrt__conv1d_vnni_packed(const qrt_conv1d_params *p, const uint8_t *x,
                                   const int8_t *wpack, const int32_t *wsum,
                                   const qrt_conv1d_quant *q, void *out, void *scratch);

/** Whether the GEMV path serves p: a dense kernel-1 layer (stride 1, no padding) with
 *  channels adjacent in memory, quint8 output and at most 4 output positions (a linear of
 *  1-4 rows, a 1x1 conv on a 1x1 image). */
static inline int qrt__c1_gemv_ok(const qrt_conv1d_params *p) {
    return p->groups == 1 && p->kernel == 1 && p->stride == 1 && p->pad_left == 0 &&
           p->x_stride_c == 1 && p->out_kind == QRT_CONV1D_OUT_U8 && p->len_out <= 4 &&
           p->len_out <= p->len_in && p->c_in > 0;
}

/** The GEMV path (qrt__c1_gemv_ok(p), p checked); reads no scratch. */
qrt_status qrt__conv1d_vnni_gemv(const qrt_conv1d_params *p, const uint8_t *x,
                                 const int8_t *wpack, const int32_t *wsum,
                                 const qrt_conv1d_quant *q, uint8_t *out);

/** Whether the channels-in-lanes path serves p: a dense 1x1 layer (stride 1, no padding) over
 *  short unit-stride rows, quint8 NCL output, with the channels-in-lanes weight at hand. */
static inline int qrt__c1_cl_ok(const qrt_conv1d_params *p, const qrt_conv1d_quant *q) {
    return q->wpack_cl != NULL && p->groups == 1 && p->kernel == 1 && p->stride == 1 &&
           p->pad_left == 0 && p->out_kind == QRT_CONV1D_OUT_U8 && p->x_stride_t == 1 &&
           p->y_stride_t == 1 && p->len_out == p->len_in && p->len_out >= 1 &&
           p->len_out <= QRT_CONV1D_CL_MAX_LEN;
}

/** The channels-in-lanes path (qrt__c1_cl_ok(p, q), p checked): conv1d_avx512vnni_cl.c.
 *  Reads q->wpack_cl (qrt_conv1d_pack_cl()) and the packed path's scratch for p. */
qrt_status qrt__conv1d_vnni_cl(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *wcl,
                               const int32_t *wsum, const qrt_conv1d_quant *q, uint8_t *out,
                               void *scratch);

/** The packed path's unit-stride quad interleave (dst[i] = quad of the 4 rows base[j] at time
 *  time0[j] + i, i < count; zero for a NULL row, x_zero outside [0, len)). */
void qrt__c1_pack_quads(const uint8_t *const base[4], const int64_t time0[4], int64_t count,
                        int64_t len, int64_t xsc, uint8_t xz, uint32_t *dst);

/** The depthwise four-phase path (qrt__dw_ok(p), p checked); reads no scratch. */
qrt_status qrt__conv1d_vnni_dw4(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *wpack,
                                const int32_t *wsum, const qrt_conv1d_quant *q, uint8_t *out);

#endif /* QRT_SRC_CONV1D_AVX512VNNI_H */

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_neondot.c
 * @brief qrt_conv1d_u8__neondot() (design: qrt/neon/conv1d_neondot.h).  The only translation
 *        unit built with -march=armv8.2-a+dotprod; nothing else may be added to it.
 */
#include <arm_neon.h>
#include "conv1d_neon_common.h"
#include "conv1d_neon_gemm.h"
#include "qrt/conv1d_pack.h"
#include "qrt/neon/conv1d_neondot.h"

#define QRT_NEONDOT_FN __attribute__((target("arch=armv8.2-a+dotprod")))

/** sum_j (xs[j] - xz) over the first m taps, as uint32 (mod 2^32). */
static inline uint32_t qrt__conv1d_rowsum(const uint8_t *xs, int64_t m, int32_t xz) {
    uint32_t s = 0;
    for (int64_t j = 0; j < m; ++j) s += xs[j];
    return s - (uint32_t)xz * (uint32_t)m;
}

/** As qrt__conv1d_dot__neon(); `m16` = m rounded down to 16, `xsum` = rowsum over m16 taps. */
QRT_NEONDOT_FN static inline int32_t qrt__conv1d_dot__neondot(const uint8_t *xs, const int8_t *w,
                                                              int64_t m, int64_t m16, uint32_t xsum,
                                                              int32_t xz, int32_t wz) {
    const uint8x16_t bias = vdupq_n_u8(0x80);
    const int8x16_t ones = vdupq_n_s8(1);
    int32x4_t d0 = vdupq_n_s32(0), d1 = vdupq_n_s32(0), s0 = vdupq_n_s32(0);
    int64_t j = 0;
    for (; j + 32 <= m16; j += 32) {
        const int8x16_t x0 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(xs + j), bias));
        const int8x16_t x1 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(xs + j + 16), bias));
        const int8x16_t w0 = vld1q_s8(w + j), w1 = vld1q_s8(w + j + 16);
        d0 = vdotq_s32(d0, x0, w0);
        d1 = vdotq_s32(d1, x1, w1);
        s0 = vdotq_s32(s0, ones, w0);
        s0 = vdotq_s32(s0, ones, w1);
    }
    for (; j < m16; j += 16) {
        const int8x16_t x0 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(xs + j), bias));
        const int8x16_t w0 = vld1q_s8(w + j);
        d0 = vdotq_s32(d0, x0, w0);
        s0 = vdotq_s32(s0, ones, w0);
    }
    const uint32_t xw = (uint32_t)vaddvq_s32(vaddq_s32(d0, d1));
    const uint32_t ws = (uint32_t)vaddvq_s32(s0);
    uint32_t acc = xw + (uint32_t)(128 - xz) * ws - (uint32_t)wz * xsum;
    for (; j < m; ++j) acc += (uint32_t)(((int32_t)xs[j] - xz) * ((int32_t)w[j] - wz));
    return (int32_t)acc;
}

/**
 * qrt__conv1d_rows__neon (conv1d_neon.c) with sdot: one output position's taps packed once as
 * x' = x ^ 0x80 (with sum x'), then per 16 taps and output channel one sdot of x' by w and one
 * of 1 by w (the row's weight sum), 8 channels a pass; the same identity mod 2^32 and a scalar
 * tail under 16 taps.
 */
QRT_NEONDOT_FN static void qrt__conv1d_rows__neondot(const qrt_conv1d_params *p,
                                                     const qrt_conv1d_quant *q,
                                                     const uint8_t *xs, const int8_t *w,
                                                     int64_t taps, int64_t oc0, int64_t oc1,
                                                     int64_t n, int64_t t, void *out) {
    int8_t xp[QRT__NEON_CHUNK] __attribute__((aligned(16)));
    const int64_t t16 = taps & ~(int64_t)15;
    const int32_t xz = p->input_zero;
    const uint8x16_t flip = vdupq_n_u8(0x80);
    const int8x16_t ones = vdupq_n_s8(1);
    int32x4_t sxa = vdupq_n_s32(0);
    for (int64_t i = 0; i < t16; i += 16) {
        const int8x16_t v = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(xs + i), flip));
        vst1q_s8(xp + i, v);
        sxa = vdotq_s32(sxa, v, ones);
    }
    uint32_t sx = (uint32_t)vaddvq_s32(sxa);
    for (int64_t i = t16; i < taps; ++i) {
        xp[i] = (int8_t)(xs[i] ^ 0x80u);
        sx += (uint32_t)(int32_t)xp[i];
    }
    sx += (uint32_t)(128 - xz) * (uint32_t)taps; /* sum (x - xz) */
    for (int64_t ob = oc0; ob < oc1; ob += 8) {
        const int64_t nb = oc1 - ob < 8 ? oc1 - ob : 8;
        const int8_t *wr[8];
        for (int k = 0; k < 8; ++k) wr[k] = w + (ob + (k < nb ? k : nb - 1)) * taps;
        int32x4_t acc[8], ws[8];
        for (int k = 0; k < 8; ++k) acc[k] = ws[k] = vdupq_n_s32(0);
        for (int64_t i = 0; i < t16; i += 16) {
            const int8x16_t xv = vld1q_s8(xp + i);
            for (int k = 0; k < 8; ++k) {
                const int8x16_t wv = vld1q_s8(wr[k] + i);
                acc[k] = vdotq_s32(acc[k], xv, wv);
                ws[k] = vdotq_s32(ws[k], ones, wv);
            }
        }
        for (int k = 0; k < nb; ++k) {
            uint32_t a = (uint32_t)vaddvq_s32(acc[k]), sw = (uint32_t)vaddvq_s32(ws[k]);
            for (int64_t i = t16; i < taps; ++i) {
                a += (uint32_t)((int32_t)xp[i] * (int32_t)wr[k][i]);
                sw += (uint32_t)(int32_t)wr[k][i];
            }
            const int64_t oc = ob + k;
            a += (uint32_t)(128 - xz) * sw - (uint32_t)q->weight_zero[oc] * sx;
            qrt__conv1d_store(p, q, out, n, oc, t, (int32_t)a);
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* GEMM path (conv1d_neon_gemm.h's case): sdot over 4-channel groups                          */
/* ---------------------------------------------------------------------------------------- */

/** Output channels whose constants are kept per pass (stack). */
#define QRT__GEMM_OC_CHUNK 1024
/** Stack bytes for the weight panels a call packs itself (no qrt_conv1d_quant.wpack_dot). */
#define QRT__GEMM_PANEL_STACK 16448

/** One 4-channel group of a 16-position block: rows r0..r3 (16 positions of x' each) ->
 *  [16 positions][4 channels] at d (64 bytes), with their sums per position quad into sx. */
QRT_NEONDOT_FN static inline __attribute__((always_inline)) void
qrt__gemm_dot_quad16(uint8x16_t r0, uint8x16_t r1, uint8x16_t r2, uint8x16_t r3, int8_t *d,
                     int sums, int32x4_t sx[4]) {
    const int8x16_t ones = vdupq_n_s8(1);
    const uint16x8_t ab0 = vreinterpretq_u16_u8(vzip1q_u8(r0, r1));
    const uint16x8_t ab1 = vreinterpretq_u16_u8(vzip2q_u8(r0, r1));
    const uint16x8_t cd0 = vreinterpretq_u16_u8(vzip1q_u8(r2, r3));
    const uint16x8_t cd1 = vreinterpretq_u16_u8(vzip2q_u8(r2, r3));
    const int8x16_t q[4] = {vreinterpretq_s8_u16(vzip1q_u16(ab0, cd0)),
                            vreinterpretq_s8_u16(vzip2q_u16(ab0, cd0)),
                            vreinterpretq_s8_u16(vzip1q_u16(ab1, cd1)),
                            vreinterpretq_s8_u16(vzip2q_u16(ab1, cd1))};
    for (int k = 0; k < 4; ++k) {
        vst1q_s8(d + 16 * k, q[k]);
        if (sums) sx[k] = vdotq_s32(sx[k], q[k], ones);
    }
}

/** 4 input bytes at s as x ^ 0x80 in lanes 0..3, zero in the others (a 4-position block). */
QRT_NEONDOT_FN static inline __attribute__((always_inline)) uint8x16_t
qrt__gemm_dot_word(const uint8_t *s) {
    uint32_t v;
    __builtin_memcpy(&v, s, 4);
    return vreinterpretq_u8_u32(vsetq_lane_u32(v ^ 0x80808080u, vdupq_n_u32(0), 0));
}

/**
 * Pack one block of positions t .. t + np (np = 16, 8 or 4) of the input as
 * x' = x ^ 0x80 in [c_in / 4][16 positions][4 channels] order (64 bytes per 4-channel group;
 * a block of 8 or 4 holds zeros at the positions past np), channels past c_in zero (the groups past
 * the last partial one stay zero from the call's start).  With `sums`, sx[k] holds sum_ci x'
 * of positions 4k .. 4k + 3 (lanes).
 */
QRT_NEONDOT_FN static inline __attribute__((always_inline)) void
qrt__gemm_dot_pack(const uint8_t *xn, int64_t xs, int64_t ci_n, int64_t t, int np, int sums,
                   int8_t *xp, int32x4_t sx[4]) {
    const uint8x16_t flip = vdupq_n_u8(0x80);
    for (int k = 0; k < 4; ++k) sx[k] = vdupq_n_s32(0);
    const uint8_t *xr = xn + t;
#define QRT__ROW(k)                                                                                \
    (np == 16  ? veorq_u8(vld1q_u8(xr + (k) * xs), flip)                                           \
     : np == 8 ? vcombine_u8(veor_u8(vld1_u8(xr + (k) * xs), vget_low_u8(flip)), vdup_n_u8(0))    \
               : qrt__gemm_dot_word(xr + (k) * xs))
    int64_t g = 0;
    for (; g * 4 + 4 <= ci_n; ++g, xr += 4 * xs)
        qrt__gemm_dot_quad16(QRT__ROW(0), QRT__ROW(1), QRT__ROW(2), QRT__ROW(3), xp + 64 * g,
                             sums, sx);
    if (g * 4 < ci_n) { /* the last, partial group: its missing channels are 0 */
        uint8x16_t r[4];
        for (int k = 0; k < 4; ++k) r[k] = g * 4 + k < ci_n ? QRT__ROW(k) : vdupq_n_u8(0);
        qrt__gemm_dot_quad16(r[0], r[1], r[2], r[3], xp + 64 * g, sums, sx);
    }
#undef QRT__ROW
}

/** The tile's requantization off its fast path (channels past oce, or a scale that needs the
 *  range select): from memory, once per such tile. */
QRT_NEONDOT_FN static __attribute__((noinline)) void
qrt__gemm_dot_store_slow(const qrt_conv1d_params *p, const qrt_conv1d_quant *q, void *out,
                         int64_t n, int64_t oc0, int64_t oce, int64_t t, const int32x4_t *acc,
                         const qrt__gemm_rq *rq) {
    qrt__gemm_store_tile(p, q, out, n, oc0, oce, t, acc, rq, 0);
}

/**
 * One 8 x 8 tile: output channels oc0 .. oc0 + 7 (panel weights at wq, [c16 / 16][8][16]) by
 * the 8 packed positions at xq (groups 64 bytes apart), output positions t .. t + 7; `half`
 * (a constant): ceil8(c_in) = c16 - 8, whose last 8 channels are zero on both sides and
 * skipped.  kt: the channels' (128 - xz) sum w + bias; sxa, sxb: positions' sum (x - xz)
 * (used when wz8 != 0).
 */
QRT_NEONDOT_FN static inline __attribute__((always_inline)) void
qrt__gemm_dot_tile(const qrt_conv1d_params *p, const qrt_conv1d_quant *q, void *out, int64_t n,
                   int64_t oc0, int64_t oce, int64_t t, const int8_t *xq, const int8_t *wq,
                   int64_t c16, const int half, const uint32_t *kt, int wz8, int fast,
                   int32x4_t sxa, int32x4_t sxb, const qrt__gemm_rq *rq) {
    int32x4_t acc[16];
    for (int r = 0; r < 8; ++r) /* start: (128 - xz) sum w + bias */
        acc[2 * r] = acc[2 * r + 1] = vld1q_dup_s32((const int32_t *)kt + r);
#define QRT__DOT(g)                                                                                \
    do {                                                                                           \
        const int8x16_t x0_ = vld1q_s8(xq + 64 * (g)), x1_ = vld1q_s8(xq + 64 * (g) + 16);         \
        for (int r = 0; r < 8; ++r) {                                                              \
            acc[2 * r] = vdotq_laneq_s32(acc[2 * r], x0_, wv[r], g);                               \
            acc[2 * r + 1] = vdotq_laneq_s32(acc[2 * r + 1], x1_, wv[r], g);                       \
        }                                                                                          \
    } while (0)
    const int64_t full = half ? c16 - 16 : c16;
    for (int64_t i = 0; i < full; i += 16, xq += 256, wq += 128) {
        int8x16_t wv[8];
        for (int r = 0; r < 8; ++r) wv[r] = vld1q_s8(wq + 16 * r);
        QRT__DOT(0);
        QRT__DOT(1);
        QRT__DOT(2);
        QRT__DOT(3);
    }
    if (half) { /* c_in's last 8 channels in a block of 16: its last two groups are all 0 */
        int8x16_t wv[8];
        for (int r = 0; r < 8; ++r) wv[r] = vld1q_s8(wq + 16 * r);
        QRT__DOT(0);
        QRT__DOT(1);
    }
#undef QRT__DOT
    if (wz8)
        for (int r = 0; r < 8; ++r) { /* - wz sum (x - xz) */
            const int32_t wz = q->weight_zero[oc0 + r < oce ? oc0 + r : oce - 1];
            acc[2 * r] = vmlsq_n_s32(acc[2 * r], sxa, wz);
            acc[2 * r + 1] = vmlsq_n_s32(acc[2 * r + 1], sxb, wz);
        }
    if (!fast) {
        int32x4_t a[16];
        for (int r = 0; r < 16; ++r) a[r] = acc[r];
        qrt__gemm_dot_store_slow(p, q, out, n, oc0, oce, t, a, rq);
        return;
    }
    /* all 8 channels stored and small (qrt__neon_small_y): qrt__gemm_store_tile's fast path */
    qrt__gemm_store_fast((uint8_t *)out + n * p->y_stride_n + oc0 * p->y_stride_c + t,
                         p->y_stride_c, q->scale + oc0, acc, rq);
}

/* The asm tile's text: the 16 indexed sdots of one 4-channel group g (x at v8, positions 0..3,
 * and v9, 4..7; channel r's weights at vr), and the requantization steps per accumulator. */
#define QRT__SD(a, x, r, g) "sdot v" #a ".4s, v" #x ".16b, v" #r ".4b[" #g "]\n\t"
#define QRT__SD8(x, a0, a1, a2, a3, a4, a5, a6, a7, g)                                            \
    QRT__SD(a0, x, 0, g) QRT__SD(a1, x, 1, g) QRT__SD(a2, x, 2, g) QRT__SD(a3, x, 3, g)           \
    QRT__SD(a4, x, 4, g) QRT__SD(a5, x, 5, g) QRT__SD(a6, x, 6, g) QRT__SD(a7, x, 7, g)
#define QRT__GROUP(g)                                                                              \
    "ldp q8, q9, [%[x]], #64\n\t"                                    \
    QRT__SD8(8, 16, 17, 18, 19, 20, 21, 22, 23, g) QRT__SD8(9, 24, 25, 26, 27, 28, 29, 30, 31, g)
#define QRT__WLOAD                                                                                 \
    "ldp q0, q1, [%[w]], #32\n\tldp q2, q3, [%[w]], #32\n\t"                                       \
    "ldp q4, q5, [%[w]], #32\n\tldp q6, q7, [%[w]], #32\n\t"
#define QRT__EACH16(op)                                                                            \
    op(16) op(17) op(18) op(19) op(20) op(21) op(22) op(23)                                        \
    op(24) op(25) op(26) op(27) op(28) op(29) op(30) op(31)
#define QRT__CVT(a) "scvtf v" #a ".4s, v" #a ".4s\n\t"
#define QRT__RNE(a) "fcvtns v" #a ".4s, v" #a ".4s\n\t"
#define QRT__MUL(a, s, l) "fmul v" #a ".4s, v" #a ".4s, v" #s ".s[" #l "]\n\t"
#define QRT__NARROW(a, b) "sqxtn v" #a ".4h, v" #a ".4s\n\tsqxtn2 v" #a ".8h, v" #b ".4s\n\t"     \
                          "sqadd v" #a ".8h, v" #a ".8h, %[zero].8h\n\t"
#define QRT__PAIR(a, b)                                                                            \
    "sqxtun v" #a ".8b, v" #a ".8h\n\tsqxtun2 v" #a ".16b, v" #b ".8h\n\t"                        \
    "umax v" #a ".16b, v" #a ".16b, %[lo].16b\n\tumin v" #a ".16b, v" #a ".16b, %[hi].16b\n\t"   \
    "st1 {v" #a ".d}[0], [%[y]], %[ys]\n\tst1 {v" #a ".d}[1], [%[y]], %[ys]\n\t"

/**
 * qrt__gemm_dot_tile()'s common case as one asm block: no weight zero point among the panel's
 * 8 channels, all 8 stored and on the fast requantization (qrt__gemm_store_fast's steps).  Its
 * instructions are the intrinsic tile's, in registers chosen once: accumulators v16 + r
 * (channel r, positions 0..3) and v24 + r (4..7), started from kt by four ld4r; per 16 input
 * channels the panel's 8 weight rows v0..v7 and per 4-channel group the positions v8, v9, with
 * post-indexed loads; then scvtf, fmul by the scale lane, fcvtns, sqxtn(2), sqadd zero,
 * sqxtun(2), umax, umin, and per channel one 8-byte lane store.  GCC's allocation of the
 * intrinsic tile kept kt live across a tile pair and spilled around the requantization: on
 * the 16 -> 96 layer at 112 x 112 the tile took 233 instructions per 64 outputs, 156 of them
 * outside the sdot loop; this one 198 and 121 (docs/kernels.md 4h).
 *   nk: full 16-channel blocks (>= 1); half: one more block whose last 8 channels are zero.
 */
QRT_NEONDOT_FN static inline __attribute__((always_inline)) void
qrt__gemm_dot_tile_asm(const int8_t *xq, const int8_t *wq, int64_t nk, int64_t half,
                       const uint32_t *kt, const float *sc, uint8_t *y, int64_t ys,
                       int16x8_t zero, uint8x16_t lo, uint8x16_t hi) {
    __asm__ volatile(
        "ld4r {v16.4s, v17.4s, v18.4s, v19.4s}, [%[kt]], #16\n\t"
        "ld4r {v20.4s, v21.4s, v22.4s, v23.4s}, [%[kt]]\n\t"
        "sub %[kt], %[kt], #16\n\t"
        "ld4r {v24.4s, v25.4s, v26.4s, v27.4s}, [%[kt]], #16\n\t"
        "ld4r {v28.4s, v29.4s, v30.4s, v31.4s}, [%[kt]]\n\t"
        "1:\n\t" QRT__WLOAD QRT__GROUP(0) QRT__GROUP(1) QRT__GROUP(2) QRT__GROUP(3)
        "subs %[nk], %[nk], #1\n\t"
        "b.ne 1b\n\t"
        "cbz %[half], 2f\n\t" QRT__WLOAD QRT__GROUP(0) QRT__GROUP(1)
        "2:\n\t"
        "ldp q0, q1, [%[sc]]\n\t" QRT__EACH16(QRT__CVT)
        QRT__MUL(16, 0, 0) QRT__MUL(17, 0, 1) QRT__MUL(18, 0, 2) QRT__MUL(19, 0, 3)
        QRT__MUL(20, 1, 0) QRT__MUL(21, 1, 1) QRT__MUL(22, 1, 2) QRT__MUL(23, 1, 3)
        QRT__MUL(24, 0, 0) QRT__MUL(25, 0, 1) QRT__MUL(26, 0, 2) QRT__MUL(27, 0, 3)
        QRT__MUL(28, 1, 0) QRT__MUL(29, 1, 1) QRT__MUL(30, 1, 2) QRT__MUL(31, 1, 3)
        QRT__EACH16(QRT__RNE)
        QRT__NARROW(16, 24) QRT__NARROW(17, 25) QRT__NARROW(18, 26) QRT__NARROW(19, 27)
        QRT__NARROW(20, 28) QRT__NARROW(21, 29) QRT__NARROW(22, 30) QRT__NARROW(23, 31)
        QRT__PAIR(16, 17) QRT__PAIR(18, 19) QRT__PAIR(20, 21) QRT__PAIR(22, 23)
        : [x] "+r"(xq), [w] "+r"(wq), [nk] "+r"(nk), [kt] "+r"(kt), [y] "+r"(y)
        : [half] "r"(half), [sc] "r"(sc), [ys] "r"(ys), [zero] "w"(zero), [lo] "w"(lo),
          [hi] "w"(hi)
        : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v16",
          "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",
          "v29", "v30", "v31");
}

/**
 * The 4-position form of qrt__gemm_dot_tile_asm() for a row's last 1..4 positions (a block of
 * 4 ending at the row's end, where an 8-position block would compute up to 7 positions twice:
 * 49 = 3 x 16 + 1 on 7 x 7 images): accumulators v16 + r, one 16-byte input load per group,
 * and channel r's 4 bytes stored by a 4-byte lane store.
 */
QRT_NEONDOT_FN static inline __attribute__((always_inline)) void
qrt__gemm_dot_tile4_asm(const int8_t *xq, const int8_t *wq, int64_t nk, int64_t half,
                        const uint32_t *kt, const float *sc, uint8_t *y, int64_t ys,
                        int16x8_t zero, uint8x16_t lo, uint8x16_t hi) {
#define QRT__GROUP4(g) "ldr q8, [%[x]], #64\n\t" QRT__SD8(8, 16, 17, 18, 19, 20, 21, 22, 23, g)
#define QRT__NARROW4(a, b) "sqxtn v" #a ".4h, v" #a ".4s\n\tsqxtn2 v" #a ".8h, v" #b ".4s\n\t"   \
                           "sqadd v" #a ".8h, v" #a ".8h, %[zero].8h\n\t"
#define QRT__QUAD4(a, b)                                                                           \
    "sqxtun v" #a ".8b, v" #a ".8h\n\tsqxtun2 v" #a ".16b, v" #b ".8h\n\t"                        \
    "umax v" #a ".16b, v" #a ".16b, %[lo].16b\n\tumin v" #a ".16b, v" #a ".16b, %[hi].16b\n\t"   \
    "st1 {v" #a ".s}[0], [%[y]], %[ys]\n\tst1 {v" #a ".s}[1], [%[y]], %[ys]\n\t"                 \
    "st1 {v" #a ".s}[2], [%[y]], %[ys]\n\tst1 {v" #a ".s}[3], [%[y]], %[ys]\n\t"
    __asm__ volatile(
        "ld4r {v16.4s, v17.4s, v18.4s, v19.4s}, [%[kt]], #16\n\t"
        "ld4r {v20.4s, v21.4s, v22.4s, v23.4s}, [%[kt]]\n\t"
        "1:\n\t" QRT__WLOAD QRT__GROUP4(0) QRT__GROUP4(1) QRT__GROUP4(2) QRT__GROUP4(3)
        "subs %[nk], %[nk], #1\n\t"
        "b.ne 1b\n\t"
        "cbz %[half], 2f\n\t" QRT__WLOAD QRT__GROUP4(0) QRT__GROUP4(1)
        "2:\n\t"
        "ldp q0, q1, [%[sc]]\n\t"
        QRT__CVT(16) QRT__CVT(17) QRT__CVT(18) QRT__CVT(19)
        QRT__CVT(20) QRT__CVT(21) QRT__CVT(22) QRT__CVT(23)
        QRT__MUL(16, 0, 0) QRT__MUL(17, 0, 1) QRT__MUL(18, 0, 2) QRT__MUL(19, 0, 3)
        QRT__MUL(20, 1, 0) QRT__MUL(21, 1, 1) QRT__MUL(22, 1, 2) QRT__MUL(23, 1, 3)
        QRT__RNE(16) QRT__RNE(17) QRT__RNE(18) QRT__RNE(19)
        QRT__RNE(20) QRT__RNE(21) QRT__RNE(22) QRT__RNE(23)
        QRT__NARROW4(16, 17) QRT__NARROW4(18, 19) QRT__NARROW4(20, 21) QRT__NARROW4(22, 23)
        QRT__QUAD4(16, 18) QRT__QUAD4(20, 22)
        : [x] "+r"(xq), [w] "+r"(wq), [nk] "+r"(nk), [kt] "+r"(kt), [y] "+r"(y)
        : [half] "r"(half), [sc] "r"(sc), [ys] "r"(ys), [zero] "w"(zero), [lo] "w"(lo),
          [hi] "w"(hi)
        : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v16", "v17",
          "v18", "v19", "v20", "v21", "v22", "v23");
#undef QRT__GROUP4
#undef QRT__NARROW4
#undef QRT__QUAD4
}
#undef QRT__SD
#undef QRT__SD8
#undef QRT__GROUP
#undef QRT__WLOAD
#undef QRT__EACH16
#undef QRT__CVT
#undef QRT__RNE
#undef QRT__MUL
#undef QRT__NARROW
#undef QRT__PAIR

/**
 * The GEMM path of qrt_conv1d_u8__neondot() (p checked, qrt__conv1d_gemm_ok(p)).  The weights
 * come as panels of 8 output channels (qrt_conv1d_pack_dot: their sums, then per 16 input
 * channels 8 x 16 bytes): the plan's (q->wpack_dot), or packed here on the stack for a chunk
 * of channels at a time.  Per block of 16 positions (8 for a row's last few) the input is
 * packed once as x' = x ^ 0x80 = x - 128 (int8) in [ci/4][16 pos][4] order, zero past c_in up
 * to a multiple of 16, with sum_ci (x - xz) per position when a w_zero of the chunk is not 0.
 * Each 8 x 8 tile then runs 8 indexed sdots per 4-channel group and position quad:
 *   sum (x - xz)(w - wz) = sum x' w + (128 - xz) sum w - wz sum (x - xz)   (mod 2^32).
 * Blocks tile a row as 16s, then a last block of 16 or 8 ending at the row's end (it overlaps
 * the one before and rewrites the same bytes), or of 4 for a last 1..4 positions when every
 * tile of the chunk is an asm tile.
 */
QRT_NEONDOT_FN static void qrt__conv1d_gemm__neondot(const qrt_conv1d_params *p,
                                                     const uint8_t *x, const int8_t *w,
                                                     const qrt_conv1d_quant *q, void *out) {
    int8_t xp[QRT__GEMM_MAX_CIN * 16] __attribute__((aligned(16)));
    int8_t pstack[QRT__GEMM_PANEL_STACK] __attribute__((aligned(16)));
    uint32_t kc[QRT__GEMM_OC_CHUNK + 8]; /* (128 - xz) sum w + bias, per output channel */
    uint8_t fast[QRT__GEMM_OC_CHUNK / 8]; /* 8 channels stored, all qrt__neon_small_y */
    uint8_t wzany[QRT__GEMM_OC_CHUNK / 8]; /* some w_zero != 0, per block of 8 */
    const int64_t ci_n = p->c_in, c16 = (ci_n + 15) & ~(int64_t)15, len = p->len_out;
    const int64_t co_n = p->c_out, xs = p->x_stride_c;
    const int half = ((ci_n + 7) & ~(int64_t)7) != c16; /* the last 16-block holds 8 channels */
    const int64_t ps = (int64_t)qrt_conv1d_dot_panel_size((uint32_t)ci_n);
    const int32_t xz = p->input_zero;
    qrt__gemm_rq rq;
    qrt__gemm_rq_init(p, &rq);
    const uint8x16_t lo16 = vcombine_u8(rq.lo, rq.lo), hi16 = vcombine_u8(rq.hi, rq.hi);
    const int64_t nk = (half ? c16 - 16 : c16) / 16; /* the asm tile's full 16-channel blocks */
    for (int64_t i = (ci_n / 4) * 64; i < c16 * 16; ++i) xp[i] = 0; /* past the full groups */
    /* channels per pass: the plan's panels, or as many as the stack holds (at least one panel:
     * c16 <= QRT__GEMM_MAX_CIN) */
    int64_t chunk = q->wpack_dot ? QRT__GEMM_OC_CHUNK : QRT__GEMM_PANEL_STACK / ps * 8;
    if (chunk > QRT__GEMM_OC_CHUNK) chunk = QRT__GEMM_OC_CHUNK;
    for (int64_t ocb = 0; ocb < co_n; ocb += chunk) {
        const int64_t oce = ocb + chunk < co_n ? ocb + chunk : co_n;
        const int8_t *pan = q->wpack_dot ? q->wpack_dot + ocb / 8 * ps : pstack;
        if (!q->wpack_dot)
            qrt_conv1d_pack_dot((uint32_t)ocb, (uint32_t)(oce - ocb), (uint32_t)ci_n, w, pstack);
        for (int64_t oc = ocb; oc < oce; ++oc) {
            const int32_t ws = ((const int32_t *)(const void *)(pan + (oc - ocb) / 8 * ps))[oc % 8];
            kc[oc - ocb] = (uint32_t)(128 - xz) * (uint32_t)ws + (uint32_t)q->bias_q[oc];
            const int64_t b = (oc - ocb) / 8;
            if ((oc - ocb) % 8 == 0) fast[b] = oc + 8 <= oce, wzany[b] = 0;
            if (!qrt__neon_small_y(ci_n, q->bias_q[oc], q->scale[oc])) fast[b] = 0;
            if (q->weight_zero[oc] != 0) wzany[b] = 1;
        }
        for (int64_t oc = oce; oc < oce + 8; ++oc) kc[oc - ocb] = 0; /* rows not stored */
        int wzchunk = 0; /* the position sums are needed only for a nonzero w_zero */
        int allfz = 1;   /* every tile of the chunk is an asm tile */
        for (int64_t b = 0; b < (oce - ocb + 7) / 8; ++b)
            wzchunk |= wzany[b], allfz &= fast[b] && !wzany[b];
        const int32x4_t off = vdupq_n_s32((int32_t)((uint32_t)(128 - xz) * (uint32_t)ci_n));
        for (int64_t n = 0; n < p->n; ++n) {
            const uint8_t *xn = x + n * p->x_stride_n;
            for (int64_t t0 = 0; t0 < len;) {
                /* a block of 16, or the row's last: 16 or 8 ending at len (len >= 8), or 4
                 * ending at len for its last 1..4 positions when every tile is an asm tile */
                const int np = t0 + 16 <= len || (len - t0 > 8 && len >= 16) ? 16
                               : len - t0 <= 4 && t0 > 0 && allfz           ? 4
                                                                            : 8;
                const int64_t t = t0 + np <= len ? t0 : len - np;
                t0 = t + np;
                int32x4_t sx[4];
                if (np == 4) {
                    qrt__gemm_dot_pack(xn, xs, ci_n, t, 4, 0, xp, sx);
                    uint8_t *y = (uint8_t *)out + n * p->y_stride_n + ocb * p->y_stride_c + t;
                    for (int64_t oc0 = ocb; oc0 < oce; oc0 += 8, y += 8 * p->y_stride_c)
                        qrt__gemm_dot_tile4_asm(xp, pan + (oc0 - ocb) / 8 * ps + 32, nk, half,
                                                kc + (oc0 - ocb), q->scale + oc0, y,
                                                p->y_stride_c, rq.zero, lo16, hi16);
                    continue;
                }
                if (np == 16) /* constant block widths for the inlined packing */
                    qrt__gemm_dot_pack(xn, xs, ci_n, t, 16, wzchunk, xp, sx);
                else
                    qrt__gemm_dot_pack(xn, xs, ci_n, t, 8, wzchunk, xp, sx);
                /* sum (x - xz) = sum x' + (128 - xz) c_in, mod 2^32 */
                for (int k = 0; k < 4; ++k) sx[k] = vaddq_s32(sx[k], off);
#define QRT__TILES(HALF)                                                                           \
    for (int64_t oc0 = ocb; oc0 < oce; oc0 += 8) {                                                 \
        const int64_t b = (oc0 - ocb) / 8;                                                         \
        const int8_t *wq = pan + b * ps + 32;                                                      \
        if (fast[b] && !wzany[b]) {                                                                \
            uint8_t *y = (uint8_t *)out + n * p->y_stride_n + oc0 * p->y_stride_c + t;             \
            qrt__gemm_dot_tile_asm(xp, wq, nk, HALF, kc + (oc0 - ocb), q->scale + oc0, y,          \
                                   p->y_stride_c, rq.zero, lo16, hi16);                            \
            if (np == 16)                                                                          \
                qrt__gemm_dot_tile_asm(xp + 32, wq, nk, HALF, kc + (oc0 - ocb), q->scale + oc0,    \
                                       y + 8, p->y_stride_c, rq.zero, lo16, hi16);                 \
            continue;                                                                              \
        }                                                                                          \
        qrt__gemm_dot_tile(p, q, out, n, oc0, oce, t, xp, wq, c16, HALF, kc + (oc0 - ocb),         \
                           wzany[b], fast[b], sx[0], sx[1], &rq);                                  \
        if (np == 16)                                                                              \
            qrt__gemm_dot_tile(p, q, out, n, oc0, oce, t + 8, xp + 32, wq, c16, HALF,              \
                               kc + (oc0 - ocb), wzany[b], fast[b], sx[2], sx[3], &rq);            \
    }
                if (half)
                    QRT__TILES(1)
                else
                    QRT__TILES(0)
#undef QRT__TILES
            }
        }
    }
}

/**
 * @brief Same contract as qrt_conv1d_u8_ref(); sdot inner products.  Bit-exact with _ref.
 * @param[in]  p   geometry, strides, zero points (checked here by qrt_conv1d_check)
 * @param[in]  x   uint8 input at the p->x_stride_* element strides
 * @param[in]  w   [c_out][c_in/groups][kernel] int8, contiguous
 * @param[in]  q   per-output-channel constants
 * @param[out] out uint8 (OUT_U8) or float (OUT_F32) at the p->y_stride_* strides
 * @return QRT_OK, or the gate's error (nothing written)
 */
QRT_NEONDOT_FN qrt_status qrt_conv1d_u8__neondot(const qrt_conv1d_params *p, const uint8_t *x,
                                                 const int8_t *w, const qrt_conv1d_quant *q,
                                                 void *out) {
    const qrt_status st = qrt_conv1d_check(p);
    if (st != QRT_OK) return st;
    if (qrt__conv1d_dw_ok(p)) { /* depthwise / c_in = 1: conv1d_neon.h's lanes over time */
        qrt__conv1d_dw__neon(p, x, w, q, (uint8_t *)out);
        return QRT_OK;
    }
    if (qrt__conv1d_gemm_ok(p)) { /* kernel-1 GEMM (1x1 conv2d): conv1d_neon_gemm.h */
        qrt__conv1d_gemm__neondot(p, x, w, q, out);
        return QRT_OK;
    }
    const int64_t cg = p->c_in / p->groups, og = p->c_out / p->groups;
    const int64_t taps = cg * (int64_t)p->kernel;
    if (taps < 16) /* no full vector per output: the plain loop is faster */
        return qrt_conv1d_u8_ref(p, x, w, q, out);
    uint8_t buf[QRT__NEON_CHUNK];
    const int32_t xz = p->input_zero;
    for (int64_t n = 0; n < p->n; ++n)
        for (int64_t g = 0; g < p->groups; ++g)
            for (int64_t t = 0; t < p->len_out; ++t) {
                if (taps <= QRT__NEON_CHUNK) {
                    const uint8_t *xs = qrt__conv1d_gather(p, x, n, g, t, 0, taps, buf);
                    qrt__conv1d_rows__neondot(p, q, xs, w, taps, g * og, (g + 1) * og, n, t,
                                              out);
                    continue;
                }
                for (int64_t oc = g * og; oc < (g + 1) * og; ++oc) {
                    uint32_t acc = 0;
                    for (int64_t j0 = 0; j0 < taps; j0 += QRT__NEON_CHUNK) {
                        const int64_t j1 =
                            j0 + QRT__NEON_CHUNK < taps ? j0 + QRT__NEON_CHUNK : taps;
                        const uint8_t *xs = qrt__conv1d_gather(p, x, n, g, t, j0, j1, buf);
                        const int64_t m16 = (j1 - j0) & ~(int64_t)15;
                        acc += (uint32_t)qrt__conv1d_dot__neondot(
                            xs, w + oc * taps + j0, j1 - j0, m16, qrt__conv1d_rowsum(xs, m16, xz),
                            xz, q->weight_zero[oc]);
                    }
                    qrt__conv1d_store(p, q, out, n, oc, t, (int32_t)acc);
                }
            }
    return QRT_OK;
}

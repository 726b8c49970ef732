/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_avx512vnni_cl.c
 * @brief The channels-in-lanes depthwise path of qrt_dwconv2d_u8__avx512vnni(): small planes
 *        (at most 256 outputs: MobileNet's 14x14 and 7x7 depthwise layers, stride 1 or 2, 3x3
 *        to 7x7 kernels),
 *        where the flat path's per-channel work (its planes, weights and masks for 49 or 196
 *        outputs) costs more than the multiply-adds.
 *
 * A block of up to 16 input channels is processed together, one channel per 32-bit lane:
 *  1. the block's planes are transposed in registers (16 x 16 byte transposes within each
 *     128-bit lane, four 16-position groups per zmm) into B[pos], the 16 channels' bytes of
 *     each image position;
 *  2. T[r][col] = the int16 pair (x - input_zero at col, at col + 1) per lane of the zero-padded
 *     image, for the rows inside the image (x reads as input_zero outside it; the rows of the
 *     padding are zero pairs, written once per run); at stride 2 only the even columns of T
 *     are built and stored (the odd pairs are never read), halving its stores;
 *  3. each output position sums kh * ceil(kw / 2) vpdpwssd of T[oy*s + ky][ox*s + 2p] with the
 *     weight pairs (w[c][ky][2p] - wz[c], w[c][ky][2p + 1] - wz[c]) (0 past the last column)
 *     of qrt_dwconv2d_pack_cl(), from the int32 bias, 2 rows x 8 outputs at a time: int16 x
 *     int16 products of at most 255 * 255, exact, so the sum equals the reference's in any
 *     order;
 *  4. requant.h's sequence per lane with the lane's channel scale (cvtdq2ps, mulps, cvtps2dq,
 *     clamp, + zero point), so every byte equals qrt_dwconv2d_u8_ref()'s; the 16-channel bytes
 *     of each position are staged and transposed back to the NCHW rows.
 */
#include <immintrin.h>
#include <string.h>

#include "../dwconv2d_impl.h"
#include "conv1d_avx512vnni.h" /* qrt__c1_dp: vpdpbusd, the accumulator tied */
#include "qrt/x86/dwconv2d_x86.h"

#define QRT_AVX512VNNI_CL __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

/* in[k] lane L byte j -> out[j] lane L byte k, for each 128-bit lane L (16 x 16 bytes) */
static inline __attribute__((always_inline)) QRT_AVX512VNNI_CL void
qrt__dwcl_tr(const __m512i in[16], __m512i out[16]) {
    __m512i a[16], b[16];
    for (int i = 0; i < 8; ++i) {
        a[i] = _mm512_unpacklo_epi8(in[2 * i], in[2 * i + 1]);
        a[i + 8] = _mm512_unpackhi_epi8(in[2 * i], in[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {
        b[i] = _mm512_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
        b[i + 4] = _mm512_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
        b[i + 8] = _mm512_unpacklo_epi16(a[8 + 2 * i], a[8 + 2 * i + 1]);
        b[i + 12] = _mm512_unpackhi_epi16(a[8 + 2 * i], a[8 + 2 * i + 1]);
    }
    for (int g = 0; g < 16; g += 4) { /* b[g..g+3]: rows 0-3, 4-7, 8-11, 12-15; cols g..g+3 */
        const __m512i e0 = _mm512_unpacklo_epi32(b[g], b[g + 1]);
        const __m512i e1 = _mm512_unpackhi_epi32(b[g], b[g + 1]);
        const __m512i f0 = _mm512_unpacklo_epi32(b[g + 2], b[g + 3]);
        const __m512i f1 = _mm512_unpackhi_epi32(b[g + 2], b[g + 3]);
        out[g] = _mm512_unpacklo_epi64(e0, f0);
        out[g + 1] = _mm512_unpackhi_epi64(e0, f0);
        out[g + 2] = _mm512_unpacklo_epi64(e1, f1);
        out[g + 3] = _mm512_unpackhi_epi64(e1, f1);
    }
}

/* channels in the block from unit u (channel c0 of its image): at most 16, within [u, u1) and
 * the image's C channels */
static inline int64_t qrt__dwcl_nc(int64_t u, int64_t u1, int64_t C, int64_t c0) {
    int64_t nc = u1 - u < 16 ? u1 - u : 16;
    return nc > C - c0 ? C - c0 : nc;
}

/* acc + vpdpwssd(x, w) with the accumulator tied to its register (gcc 12 otherwise copies
 * the live accumulators around; cf. qrt__c1_dp): the same instruction, the same bits */
static inline __attribute__((always_inline)) QRT_AVX512VNNI_CL __m512i qrt__dwcl_dp(__m512i acc,
                                                                                    __m512i x,
                                                                                    __m512i w) {
    __asm__("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w));
    return acc;
}

/* NR rows (oy, oy + 1) x OB outputs from ox0 (KH x KP tap pairs; KH == 0: the runtime kh,
 * kp): sums of the tap pairs, requantized into the stage (position p's 16 bytes at
 * stage + (p % 16) * sst + (p / 16) * 16) */
static inline __attribute__((always_inline)) QRT_AVX512VNNI_CL void
qrt__dwcl_outs(const __m512i *T, int64_t tw, const __m512i *wv, int64_t kh, int64_t kp, int64_t s,
               int64_t oy, int64_t ox0, int64_t wo, __m512i vb, __m512 vs, __m512i vlo, __m512i vhi,
               __m512i vz, uint8_t *stage, int64_t sst, const int NR, const int OB, const int KH,
               const int KP, const int SS) {
    __m512i acc[16];
    if (SS) s = SS; /* a constant stride: the tap offsets fold into the loads */
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) acc[i] = vb;
    const int64_t nky = KH ? KH : kh, nkp = KP ? KP : kp;
    /* T holds the columns the outputs read (stride 2: the even ones), so output ox + i reads
     * column ox + i, and tap pair p is 2p columns on (stride 1) or p (stride 2) */
    const int64_t ps = s == 1 ? 2 : 1;
#pragma GCC unroll 7
    for (int64_t ky = 0; ky < nky; ++ky) {
        const __m512i *t0 = T + (oy * s + ky) * tw + ox0, *t1 = t0 + s * tw;
#pragma GCC unroll 4
        for (int64_t p = 0; p < nkp; ++p) {
            const __m512i w2 = _mm512_load_si512(wv + ky * nkp + p);
#pragma GCC unroll 8
            for (int i = 0; i < 8; ++i)
                if (i < OB) acc[i] = qrt__dwcl_dp(acc[i], _mm512_load_si512(t0 + i + ps * p), w2);
            if (NR == 2) {
#pragma GCC unroll 8
                for (int i = 0; i < 8; ++i)
                    if (i < OB)
                        acc[8 + i] =
                            qrt__dwcl_dp(acc[8 + i], _mm512_load_si512(t1 + i + ps * p), w2);
            }
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
        if ((i & 7) >= OB || (i >> 3) >= NR) continue;
        __m512i r = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[i]), vs));
        r = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(r, vlo), vhi), vz);
        const int64_t pos = (oy + (i >> 3)) * wo + ox0 + (i & 7);
        _mm_store_si128((__m128i *)(stage + (pos & 15) * sst + (pos >> 4) * 16),
                        _mm512_cvtepi32_epi8(r));
    }
}

/* rows oy, oy + 1 (NR of them) of the block, for a kernel of KH x KP tap pairs (0: runtime) */
static inline __attribute__((always_inline)) QRT_AVX512VNNI_CL void
qrt__dwcl_row2(const __m512i *T, int64_t tw, const __m512i *wv, int64_t kh, int64_t kp, int64_t s,
               int64_t oy, int64_t wo, __m512i vb, __m512 vs, __m512i vlo, __m512i vhi, __m512i vz,
               uint8_t *stage, int64_t sst, const int NR, const int KH, const int KP,
               const int SS) {
    int64_t ox = 0;
    for (; ox + 8 <= wo; ox += 8)
        qrt__dwcl_outs(T, tw, wv, kh, kp, s, oy, ox, wo, vb, vs, vlo, vhi, vz, stage, sst, NR, 8,
                       KH, KP, SS);
#define QRT__DWCL_TAIL(n)                                                                          \
    case n:                                                                                        \
        qrt__dwcl_outs(T, tw, wv, kh, kp, s, oy, ox, wo, vb, vs, vlo, vhi, vz, stage, sst, NR, n,  \
                       KH, KP, SS);                                                                \
        break;
    switch (wo - ox) {
        QRT__DWCL_TAIL(7)
        QRT__DWCL_TAIL(6)
        QRT__DWCL_TAIL(5)
        QRT__DWCL_TAIL(4)
        QRT__DWCL_TAIL(3)
        QRT__DWCL_TAIL(2)
        QRT__DWCL_TAIL(1)
    default:
        break;
    }
#undef QRT__DWCL_TAIL
}

/* all outputs of the block, two rows at a time */
static inline __attribute__((always_inline)) QRT_AVX512VNNI_CL void
qrt__dwcl_rows(const __m512i *T, int64_t tw, const __m512i *wv, int64_t kh, int64_t kp, int64_t s,
               int64_t ho, int64_t wo, __m512i vb, __m512 vs, __m512i vlo, __m512i vhi, __m512i vz,
               uint8_t *stage, int64_t sst, const int KH, const int KP, const int SS) {
    int64_t oy = 0;
    for (; oy + 2 <= ho; oy += 2)
        qrt__dwcl_row2(T, tw, wv, kh, kp, s, oy, wo, vb, vs, vlo, vhi, vz, stage, sst, 2, KH, KP,
                       SS);
    if (oy < ho)
        qrt__dwcl_row2(T, tw, wv, kh, kp, s, oy, wo, vb, vs, vlo, vhi, vz, stage, sst, 1, KH, KP,
                       SS);
}

/* o[j] lane L = the nc channels' bytes (16 channels, 0 past nc) of image position z + 16L + j
 * (positions past np read as 0) */
static inline __attribute__((always_inline)) QRT_AVX512VNNI_CL void
qrt__dwcl_in(const uint8_t *xb, int64_t stride_c, int64_t np, int64_t z, int64_t nc,
             __m512i o[16]) {
    const __mmask64 mz = (__mmask64)qrt__dw_m64(np - z);
    __m512i in[16];
    for (int k = 0; k < 16; ++k)
        in[k] =
            k < nc ? _mm512_maskz_loadu_epi8(mz, xb + k * stride_c + z) : _mm512_setzero_si512();
    qrt__dwcl_tr(in, o);
}

/* step 1 of both forms: the block's image positions [0, np), transposed (qrt__dwcl_in), to
 * dst, position i's 16 channel bytes at dst[tab ? tab[i] : i] (tab and, without it, dst hold
 * whole 64-position chunks) */
static inline __attribute__((always_inline)) QRT_AVX512VNNI_CL void
qrt__dwcl_bytes(const uint8_t *xb, int64_t stride_c, int64_t np, int64_t nc, __m128i *dst,
                const int32_t *tab) {
    for (int64_t z = 0; z < np; z += 64) {
        __m512i o[16];
        qrt__dwcl_in(xb, stride_c, np, z, nc, o); /* o[j] lane L: position z + 16L + j */
#define QRT__DWCL_AT(i) (dst + (tab ? tab[z + (i)] : z + (i)))
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) {
            _mm_store_si128(QRT__DWCL_AT(j), _mm512_castsi512_si128(o[j]));
            _mm_store_si128(QRT__DWCL_AT(16 + j), _mm512_extracti32x4_epi32(o[j], 1));
            _mm_store_si128(QRT__DWCL_AT(32 + j), _mm512_extracti32x4_epi32(o[j], 2));
            _mm_store_si128(QRT__DWCL_AT(48 + j), _mm512_extracti32x4_epi32(o[j], 3));
        }
#undef QRT__DWCL_AT
    }
}

/* back to NCHW: stage row j holds positions 16m + j (position p's 16 bytes at stage +
 * (p % 16) * sst + (p / 16) * 16); one transpose per 64 positions, the last chunk first: its
 * full stores may run on into the first bytes of the next channel's row, which a later
 * (earlier-position) chunk then writes */
static inline __attribute__((always_inline)) QRT_AVX512VNNI_CL void
qrt__dwcl_store(const qrt_dwconv2d_params *p, const uint8_t *stage, int64_t sst, int64_t npo,
                int64_t nc, uint8_t *yb) {
    for (int64_t z = (npo - 1) / 64 * 64; z >= 0; z -= 64) {
        __m512i in[16], o[16];
        for (int j = 0; j < 16; ++j) in[j] = _mm512_load_si512(stage + j * sst + z);
        qrt__dwcl_tr(in, o); /* o[k] lane L byte j = channel k, position z + 16L + j */
        if (z + 64 <= npo) { /* inside every channel's row: plain stores */
            for (int64_t k = 0; k < nc; ++k) _mm512_storeu_si512(yb + k * p->y_stride_c + z, o[k]);
        } else {
            /* a row's last < 64 bytes: with contiguous channel rows a full store runs on
             * into the rows of the block's later channels, which are stored after it
             * (masked stores are slow on Zen 4 and 5); the block's last rows get a masked
             * one (nothing outside the block's own output is touched) */
            const __mmask64 mz = (__mmask64)qrt__dw_m64(npo - z);
            const int contiguous = p->y_stride_c == npo;
            for (int64_t k = 0; k < nc; ++k) {
                uint8_t *dst = yb + k * p->y_stride_c + z;
                if (contiguous && k * npo + z + 64 <= nc * npo)
                    _mm512_storeu_si512(dst, o[k]);
                else
                    _mm512_mask_storeu_epi8(dst, mz, o[k]);
            }
        }
    }
}

/* ---- The byte-quad form: u8 input x int8 weight, four taps per vpdpbusd lane ----
 * Taken when every weight w - wz of the layer fits int8 (torch's symmetric qint8 weights: all
 * of torchvision's quantized models).  The input zero point moves into the bias, sum (w - wz)
 * (x - xz) = sum (w - wz) x - xz sum (w - wz) (exact mod 2^32, as the byte planes), and the
 * padding holds input_zero.  Per block of 16 channels:
 *  1. the transposed positions (qrt__dwcl_in) go to Bp, the padded byte image, 16 bytes (the
 *     16 channels) per entry, s column phases per row: padded (r, c) is entry c / s of phase
 *     row r * s + c % s (bw entries each; a position table tab[] maps image positions);
 *  2. for each padded row r and entry e (the 4 outputs ox = 4e + L, lane L), the 4 loads
 *     X_k = Bp entries 4e + k / s .. + 3 of phase k % s hold in lane L the bytes of padded
 *     column s*ox + k; two levels of byte / word unpacks give T4[r][e][j], lane L dword i =
 *     the 4 bytes (columns s*ox .. s*ox + 3) of channel 4j + i (8 unpacks per 4 zmm).  Quad q
 *     of group g (taps 4q .. 4q + 3, columns s*ox + 4q ..) is entry g + q at stride 1; at
 *     stride 2 the form takes kernels of one quad only (kw <= 4: a second quad would be a
 *     second build of T4, and MobileNetV3's 5x5 stride-2 layer ran no faster than the pairs);
 *  3. output unit (oy, g): acc[j] = bias - xz * sum w + sum over (ky, q) of vpdpbusd(T4[s*oy
 *     + ky][g + q][j], wb[ky][q][j]), wb = the quads (w[4q .. 4q + 3] - wz, 0 past kw) of
 *     channels 4j .. 4j + 3 in every lane: kh * ceil(kw / 4) vpdpbusd per 4 outputs and
 *     channel quad (3x3: 3, the int16 pairs take 6), products of at most 255 * 128;
 *  4. requant.h's cvtdq2ps / mulps / cvtps2dq per lane, then QNNPACK's packssdw, paddsw of
 *     the zero point, packuswb (lane L = position ox's 16 channel bytes) and the byte clamp:
 *     the same bytes as clamp(r + zp, lo, hi); staged for qrt__dwcl_store.  A unit's lanes
 *     past wo land on later positions, which their own units write afterwards. */
/* out[j] = 128-bit lane j of v (channels 4j .. 4j + 3) in every lane */
static inline __attribute__((always_inline)) QRT_AVX512VNNI_CL void qrt__dwq_lanes(__m512i v,
                                                                                   __m512i out[4]) {
    out[0] = _mm512_shuffle_i32x4(v, v, 0x00);
    out[1] = _mm512_shuffle_i32x4(v, v, 0x55);
    out[2] = _mm512_shuffle_i32x4(v, v, 0xAA);
    out[3] = _mm512_shuffle_i32x4(v, v, 0xFF);
}

/* NU output units from (oy, gg) in row-major order: sums, requantized into the stage */
static inline __attribute__((always_inline)) QRT_AVX512VNNI_CL void
qrt__dwq_tile(const __m512i *T4, int64_t ng, int64_t nq, int64_t kh, int64_t s, int64_t oy,
              int64_t gg, int64_t wo, const __m512i *wb, const __m512i *vb, const __m512 *vs,
              __m512i voz, __m512i vlo, __m512i vhi, uint8_t *stage, int64_t sst, const int NU,
              const int KH, const int NQ, const int SS) {
    if (SS) s = SS;
    const int64_t nky = KH ? KH : kh, nqq = NQ ? NQ : nq, rstep = (ng + nqq - 1) * 4;
    const __m512i *b[4];
    int64_t pos[4];
    __m512i acc[4][4];
#pragma GCC unroll 4
    for (int t = 0; t < NU; ++t) {
        b[t] = T4 + (s * oy) * rstep + gg * 4;
        pos[t] = oy * wo + 4 * gg;
        if (++gg == ng) gg = 0, ++oy;
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) acc[t][j] = vb[j];
    }
#pragma GCC unroll 7
    for (int64_t ky = 0; ky < nky; ++ky)
#pragma GCC unroll 2
        for (int64_t q = 0; q < nqq; ++q)
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) {
                const __m512i w = wb[(ky * nqq + q) * 4 + j];
#pragma GCC unroll 4
                for (int t = 0; t < NU; ++t)
                    acc[t][j] =
                        qrt__c1_dp(acc[t][j], _mm512_load_si512(b[t] + ky * rstep + q * 4 + j), w);
            }
#pragma GCC unroll 4
    for (int t = 0; t < NU; ++t) {
        __m512i r[4];
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j)
            r[j] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[t][j]), vs[j]));
        const __m512i o = qrt__c1_pack4(r[0], r[1], r[2], r[3], voz, vlo, vhi);
        const int64_t p0 = pos[t];
        _mm_store_si128((__m128i *)(stage + (p0 & 15) * sst + (p0 >> 4) * 16),
                        _mm512_castsi512_si128(o));
#define QRT__DWQ_LANE(L)                                                                           \
    _mm_store_si128((__m128i *)(stage + ((p0 + L) & 15) * sst + ((p0 + L) >> 4) * 16),             \
                    _mm512_extracti32x4_epi32(o, L))
        QRT__DWQ_LANE(1);
        QRT__DWQ_LANE(2);
        QRT__DWQ_LANE(3);
#undef QRT__DWQ_LANE
    }
}

static inline __attribute__((always_inline)) QRT_AVX512VNNI_CL void
qrt__dwq_units(const __m512i *T4, int64_t ng, int64_t nq, int64_t kh, int64_t s, int64_t ho,
               int64_t wo, const __m512i *wb, const __m512i *vb, const __m512 *vs, __m512i voz,
               __m512i vlo, __m512i vhi, uint8_t *stage, int64_t sst, const int KH, const int NQ,
               const int SS) {
    int64_t oy = 0, gg = 0, left = ho * ng;
    for (; left >= 4; left -= 4) {
        qrt__dwq_tile(T4, ng, nq, kh, s, oy, gg, wo, wb, vb, vs, voz, vlo, vhi, stage, sst, 4, KH,
                      NQ, SS);
        for (gg += 4; gg >= ng;) gg -= ng, ++oy;
    }
#define QRT__DWQ_TAIL(n)                                                                           \
    case n:                                                                                        \
        qrt__dwq_tile(T4, ng, nq, kh, s, oy, gg, wo, wb, vb, vs, voz, vlo, vhi, stage, sst, n, KH, \
                      NQ, SS);                                                                     \
        break;
    switch (left) {
        QRT__DWQ_TAIL(3)
        QRT__DWQ_TAIL(2)
        QRT__DWQ_TAIL(1)
    default:
        break;
    }
#undef QRT__DWQ_TAIL
}

/* whether every weight pair of channels [c_lo, c_hi) holds two int8 values */
static QRT_AVX512VNNI_CL int qrt__dwq_int8(const int32_t *wcl, int64_t taps, int64_t C,
                                           int64_t c_lo, int64_t c_hi) {
    __mmask32 bad = 0;
    const __m512i lo = _mm512_set1_epi16(-128), hi = _mm512_set1_epi16(127);
    for (int64_t t = 0; t < taps; ++t)
        for (int64_t c = c_lo; c < c_hi; c += 16) {
            const __mmask16 m = (__mmask16)(c_hi - c >= 16 ? 0xFFFFu : (1u << (c_hi - c)) - 1u);
            const __m512i v = _mm512_maskz_loadu_epi32(m, wcl + t * C + c);
            bad |= _mm512_cmplt_epi16_mask(v, lo) | _mm512_cmpgt_epi16_mask(v, hi);
        }
    return bad == 0;
}

static QRT_AVX512VNNI_CL void qrt__dwq_run(const qrt_dwconv2d_params *p, const uint8_t *x,
                                           const qrt_conv1d_quant *q, uint8_t *y, void *scratch,
                                           int64_t u0, int64_t u1) {
    const qrt__dwcl_geom g = qrt__dwcl_geom_of(p);
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    __m128i *Bp = (__m128i *)(void *)(base + g.off_bp);   /* [hp][s][bw] + 1 */
    int32_t *tab = (int32_t *)(void *)(base + g.off_tab); /* [ceil64(np)] */
    __m512i *T4 = (__m512i *)(void *)(base + g.off_t4);   /* [hp][ne][4] */
    uint8_t *stage = base + g.off_stage4;                 /* [16][sst4] */
    const int64_t s = p->sh, kh = p->kh, kp = (p->kw + 1) / 2, pt = p->pad_top, pl = p->pad_left,
                  H = p->h, W = p->w, ho = p->ho, wo = p->wo, hp = g.hp, ng = g.ng, nq = g.nq,
                  bw = g.bw, sst = g.sst4, npo = ho * wo, C = p->c_in,
                  ne = ng + nq - 1; /* T4 entries per row: quad q of group g is entry g + q */
    const int64_t nrows = hp - pt < H ? (hp - pt > 0 ? hp - pt : 0) : H, np = nrows * W;
    const int64_t dump = hp * s * bw;
    const int32_t *wcl = (const int32_t *)(const void *)q->wpack_cl; /* [kh * kp][c_in] */
    memset(Bp, p->input_zero, (size_t)(dump + 1) * 16u);
    for (int64_t iy = 0; iy < nrows; ++iy) /* image position -> Bp entry */
        for (int64_t ix = 0, c = pl; ix < W; ++ix, ++c) {
            const int64_t i = c >> (s - 1); /* s is 1 or 2 */
            tab[iy * W + ix] = (int32_t)(i < bw ? ((iy + pt) * s + (c & (s - 1))) * bw + i : dump);
        }
    for (int64_t z = np; z < (np + 63) / 64 * 64; ++z) tab[z] = (int32_t)dump;
    const __m512i voz = _mm512_set1_epi16((short)p->output_zero),
                  vlo = _mm512_set1_epi8((char)p->output_min),
                  vhi = _mm512_set1_epi8((char)p->output_max), ones = _mm512_set1_epi8(1),
                  vxz = _mm512_set1_epi32(p->input_zero);
    /* lane i of a 128-bit lane of packs(P0, P1): channel i's (w0, w1) at bytes 2i, 2i + 1,
     * (w2, w3) at 8 + 2i, 9 + 2i */
    const __m512i qidx =
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15));
    const int64_t r0 = pt, r1 = pt + H < hp ? pt + H : hp; /* rows of T4 with image bytes */
    int64_t xoff[4]; /* tap k of a quad: entry offset (k % s) * bw + k / s */
    for (int64_t k = 0; k < 4; ++k) xoff[k] = (k & (s - 1)) * bw + (k >> (s - 1));
    int first = 1;
    for (int64_t u = u0; u < u1;) {
        const int64_t n = u / C, c0 = u - n * C, nc = qrt__dwcl_nc(u, u1, C, c0);
        const __mmask16 mc = (__mmask16)((1u << nc) - 1u);
        const uint8_t *xb = x + n * p->x_stride_n + c0 * p->x_stride_c;
        /* 1. the image positions into Bp */
        qrt__dwcl_bytes(xb, p->x_stride_c, np, nc, Bp, tab);
        /* 2. T4 (the padding rows hold input_zero only: built for the run's first block) */
        for (int64_t r = first ? 0 : r0; r < (first ? hp : r1); ++r) {
            const __m128i *br = Bp + r * s * bw;
            __m512i *t4 = T4 + r * ne * 4;
            for (int64_t e = 0; e < ne; ++e, t4 += 4) {
                __m512i X[4];
#pragma GCC unroll 4
                for (int k = 0; k < 4; ++k) X[k] = _mm512_loadu_si512(br + xoff[k] + 4 * e);
                const __m512i a0 = _mm512_unpacklo_epi8(X[0], X[1]),
                              a1 = _mm512_unpackhi_epi8(X[0], X[1]),
                              a2 = _mm512_unpacklo_epi8(X[2], X[3]),
                              a3 = _mm512_unpackhi_epi8(X[2], X[3]);
                _mm512_store_si512(t4, _mm512_unpacklo_epi16(a0, a2));
                _mm512_store_si512(t4 + 1, _mm512_unpackhi_epi16(a0, a2));
                _mm512_store_si512(t4 + 2, _mm512_unpacklo_epi16(a1, a3));
                _mm512_store_si512(t4 + 3, _mm512_unpackhi_epi16(a1, a3));
            }
        }
        first = 0;
        /* 3. the weight quads, in every lane per channel quad; the bias less xz * sum w */
        __m512i wb[QRT__DWCL_MAXK * 2 * 4];
        __m512i wsum = _mm512_setzero_si512();
        for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t qd = 0; qd < nq; ++qd) {
                const int64_t p0 = ky * kp + 2 * qd;
                const __m512i P0 = _mm512_maskz_loadu_epi32(mc, wcl + p0 * C + c0);
                const __m512i P1 = 2 * qd + 1 < kp
                                       ? _mm512_maskz_loadu_epi32(mc, wcl + (p0 + 1) * C + c0)
                                       : _mm512_setzero_si512();
                const __m512i wq = _mm512_shuffle_epi8(_mm512_packs_epi16(P0, P1), qidx);
                wsum = _mm512_dpbusd_epi32(wsum, ones, wq);
                qrt__dwq_lanes(wq, wb + (ky * nq + qd) * 4);
            }
        const __m512i vbias = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(mc, q->bias_q + c0),
                                               _mm512_mullo_epi32(wsum, vxz));
        const __m512 vsc = _mm512_maskz_loadu_ps(mc, q->scale + c0);
        __m512i vb[4];
        qrt__dwq_lanes(vbias, vb);
        const __m512 vs[4] = {
            _mm512_shuffle_f32x4(vsc, vsc, 0x00), _mm512_shuffle_f32x4(vsc, vsc, 0x55),
            _mm512_shuffle_f32x4(vsc, vsc, 0xAA), _mm512_shuffle_f32x4(vsc, vsc, 0xFF)};
        /* 4. the outputs, staged */
#define QRT__DWQ_UNITS(KH, NQ, SS)                                                                 \
    qrt__dwq_units(T4, ng, nq, kh, s, ho, wo, wb, vb, vs, voz, vlo, vhi, stage, sst, KH, NQ, SS)
        if (kh == 3 && nq == 1 && s == 1)
            QRT__DWQ_UNITS(3, 1, 1);
        else if (kh == 3 && nq == 1 && s == 2)
            QRT__DWQ_UNITS(3, 1, 2);
        else if (kh == 5 && nq == 2 && s == 1) /* (stride 2 takes one quad only) */
            QRT__DWQ_UNITS(5, 2, 1);
        else
            QRT__DWQ_UNITS(0, 0, 0);
#undef QRT__DWQ_UNITS
        qrt__dwcl_store(p, stage, sst, npo, nc, y + n * p->y_stride_n + c0 * p->y_stride_c);
        u += nc;
    }
}

QRT_AVX512VNNI_CL void qrt__dwcl_run(const qrt_dwconv2d_params *p, const uint8_t *x,
                                     const qrt_conv1d_quant *q, uint8_t *y, void *scratch,
                                     int64_t u0, int64_t u1) {
#ifndef QRT_DWQ_OFF /* (benchmarks/dwconv2d_layers.c -DQRT_DWQ_OFF: the pairs alone) */
    /* the byte quads: stride 1, or one quad per kernel row (at stride 2 a second quad is a
     * second T4 build, and 5x5 ran no faster than the pairs) */
    if (p->sh == 1 || p->kw <= 4) {
        /* only the run's channels: from u0's, at most C of them (the scan wraps past C - 1) */
        const int32_t *wp = (const int32_t *)(const void *)q->wpack_cl;
        const int64_t C = p->c_in, taps = (int64_t)p->kh * ((p->kw + 1) / 2), cs = u0 % C,
                      ce = cs + (u1 - u0 < C ? u1 - u0 : C);
        if (qrt__dwq_int8(wp, taps, C, cs, ce < C ? ce : C) &&
            (ce <= C || qrt__dwq_int8(wp, taps, C, 0, ce - C))) {
            qrt__dwq_run(p, x, q, y, scratch, u0, u1);
            return;
        }
    }
#endif
    const qrt__dwcl_geom g = qrt__dwcl_geom_of(p);
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    __m128i *B = (__m128i *)(void *)(base + g.off_e); /* [ceil64(rows * W)] */
    __m512i *T = (__m512i *)(void *)(base + g.off_t); /* [hp][tw] */
    uint8_t *stage = base + g.off_stage;              /* [16][sst] */
    const int64_t s = p->sh, kh = p->kh, kp = (p->kw + 1) / 2, pt = p->pad_top, pl = p->pad_left,
                  H = p->h, W = p->w, ho = p->ho, wo = p->wo;
    /* T's row: every column at stride 1, the even ones at stride 2 (the only ones read) */
    const int64_t tw = s == 2 ? (g.tw + 1) / 2 : g.tw, hp = g.hp, npo = ho * wo;
    /* the image rows some output reads: rows [0, hp - pt) */
    const int64_t nrows = hp - pt < H ? (hp - pt > 0 ? hp - pt : 0) : H, np = nrows * W;
    const int64_t sst = g.sst;
    const int32_t *wcl = (const int32_t *)(const void *)q->wpack_cl; /* [kh * kp][c_in] */
    const int64_t C = p->c_in;
    memset(T, 0, (size_t)(hp * tw) * 64u);
    const __m512i vxz = _mm512_set1_epi32(p->input_zero),
                  vxz2 = _mm512_set1_epi16((short)p->input_zero);
    const __m512i vlo = _mm512_set1_epi32(p->output_min - p->output_zero),
                  vhi = _mm512_set1_epi32(p->output_max - p->output_zero),
                  vz = _mm512_set1_epi32(p->output_zero);
    /* rows of T inside the image */
    const int64_t r0 = pt, r1 = pt + H < hp ? pt + H : hp;
    for (int64_t u = u0; u < u1;) {
        const int64_t n = u / C, c0 = u - n * C, nc = qrt__dwcl_nc(u, u1, C, c0);
        const __mmask16 mc = (__mmask16)((1u << nc) - 1u);
        const uint8_t *xb = x + n * p->x_stride_n + c0 * p->x_stride_c;
        /* 1. B[pos]: the 16 channels' bytes of each image position (row-major) */
        qrt__dwcl_bytes(xb, p->x_stride_c, np, nc, B, NULL);
        /* 2. T[r][col] = (x(iy, ix) - xz, x(iy, ix + 1) - xz) int16 pairs, r = iy + pt,
         * col = ix + pl (x = xz outside the image); rows of the padding stay zero */
        for (int64_t r = r0; r < r1; ++r) {
            const __m128i *br = B + (r - pt) * W; /* image row r - pt */
            __m512i *trow = T + r * tw;
#define QRT__DWCL_C(ix)                                                                            \
    ((ix) >= 0 && (ix) < W ? _mm512_cvtepu8_epi32(_mm_load_si128(br + (ix))) : vxz)
#define QRT__DWCL_PAIR(a, b)                                                                       \
    _mm512_sub_epi16(_mm512_or_si512((a), _mm512_slli_epi32((b), 16)), vxz2)
            if (s == 2) { /* T column j is image column 2j - pl (its pair: 2j - pl + 1) */
                for (int64_t j = 0; j < tw; ++j)
                    _mm512_store_si512(trow + j, QRT__DWCL_PAIR(QRT__DWCL_C(2 * j - pl),
                                                                QRT__DWCL_C(2 * j - pl + 1)));
                continue;
            }
            /* columns whose two positions lie inside the image: ix = col - pl in [0, W - 1) */
            const int64_t ca = pl < tw ? pl : tw;
            const int64_t cb = W - 1 + pl < tw ? (W - 1 + pl > ca ? W - 1 + pl : ca) : tw;
            for (int64_t col = 0; col < ca; ++col)
                _mm512_store_si512(
                    trow + col, QRT__DWCL_PAIR(QRT__DWCL_C(col - pl), QRT__DWCL_C(col - pl + 1)));
            if (cb > ca) {
                __m512i cur = QRT__DWCL_C(ca - pl);
                for (int64_t col = ca; col < cb; ++col) {
                    const __m512i nxt = _mm512_cvtepu8_epi32(_mm_load_si128(br + col - pl + 1));
                    _mm512_store_si512(trow + col, QRT__DWCL_PAIR(cur, nxt));
                    cur = nxt;
                }
            }
            for (int64_t col = cb; col < tw; ++col)
                _mm512_store_si512(
                    trow + col, QRT__DWCL_PAIR(QRT__DWCL_C(col - pl), QRT__DWCL_C(col - pl + 1)));
#undef QRT__DWCL_PAIR
#undef QRT__DWCL_C
        }
        /* 3, 4. the outputs, staged */
        __m512i wv[QRT__DWCL_MAXK * ((QRT__DWCL_MAXK + 1) / 2)];
        for (int64_t t = 0; t < kh * kp; ++t)
            wv[t] = _mm512_maskz_loadu_epi32(mc, wcl + t * C + c0);
        const __m512i vb = _mm512_maskz_loadu_epi32(mc, q->bias_q + c0);
        const __m512 vs = _mm512_maskz_loadu_ps(mc, q->scale + c0);
        /* MobileNet's kernels and strides as constants; the rest at run time */
#define QRT__DWCL_ROWS(KH, KP, SS)                                                                 \
    qrt__dwcl_rows(T, tw, wv, kh, kp, s, ho, wo, vb, vs, vlo, vhi, vz, stage, sst, KH, KP, SS)
        if (kh == 3 && kp == 2 && s == 1)
            QRT__DWCL_ROWS(3, 2, 1);
        else if (kh == 3 && kp == 2 && s == 2)
            QRT__DWCL_ROWS(3, 2, 2);
        else if (kh == 5 && kp == 3 && s == 1)
            QRT__DWCL_ROWS(5, 3, 1);
        else if (kh == 5 && kp == 3 && s == 2)
            QRT__DWCL_ROWS(5, 3, 2);
        else
            QRT__DWCL_ROWS(0, 0, 0);
#undef QRT__DWCL_ROWS
        qrt__dwcl_store(p, stage, sst, npo, nc, y + n * p->y_stride_n + c0 * p->y_stride_c);
        u += nc;
    }
}

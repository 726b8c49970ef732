/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_avx2_cl.c
 * @brief The channels-in-lanes depthwise path of qrt_dwconv2d_u8__avx2(): small planes (at
 *        most 256 outputs: MobileNet's 14x14 and 7x7 depthwise layers and the stride-2 layers
 *        that make them, 3x3 to 7x7 kernels), where the flat path's per-channel work (its
 *        planes, masks, weights and a 32-output step for 49 outputs) costs more than the
 *        multiply-adds.  The AVX2 form of src/x86/dwconv2d_avx512vnni_cl.c, on its geometry
 *        and scratch (qrt__dwcl_geom_of, src/dwconv2d_impl.h):
 *
 *  1. a block of up to 16 input channels is transposed in registers (16 x 16 byte transposes
 *     within each 128-bit lane, two 16-position groups per ymm) into B[pos], the 16 channels'
 *     bytes of each image position;
 *  2. T[r][col] = the int16 pair (x - input_zero at col, at col + 1) of the zero-padded image,
 *     one channel per 32-bit lane, two ymm per entry (channels 0-7, 8-15); at stride 2 only the
 *     even columns are built (the odd pairs are never read);
 *  3. each output sums kh * ceil(kw / 2) vpmaddwd of T[oy*s + ky][ox*s + 2p] with the weight
 *     pairs of qrt_dwconv2d_pack_cl() (0 past the last column) from the int32 bias, 8 outputs
 *     of one row and one channel half at a time: int16 x int16 products of at most 255 * 255,
 *     pair sums of at most 2 * 255 * 255, exact, so the sum equals the reference's in any
 *     order, and no unpack or mask per tap as in the flat path;
 *  4. requant.h's sequence per lane with the lane's channel scale (cvtdq2ps, mulps, cvtps2dq,
 *     clamp, + zero point), so every byte equals qrt_dwconv2d_u8_ref()'s; each position's 16
 *     channel bytes are staged and transposed back to the NCHW rows.
 */
#include <immintrin.h>
#include <string.h>

#include "../dwconv2d_impl.h"
#include "qrt/x86/dwconv2d_x86.h"

#define QRT_AVX2_CL __attribute__((target("avx2,fma")))
#define QRT__DWCA_INL __attribute__((always_inline)) QRT_AVX2_CL

/* in[k] lane L byte j -> out[j] lane L byte k, for each 128-bit lane L (16 x 16 bytes) */
static inline QRT__DWCA_INL void qrt__dwca_tr(const __m256i in[16], __m256i out[16]) {
    __m256i a[16], b[16];
    for (int i = 0; i < 8; ++i) {
        a[i] = _mm256_unpacklo_epi8(in[2 * i], in[2 * i + 1]);
        a[i + 8] = _mm256_unpackhi_epi8(in[2 * i], in[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {
        b[i] = _mm256_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
        b[i + 4] = _mm256_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
        b[i + 8] = _mm256_unpacklo_epi16(a[8 + 2 * i], a[8 + 2 * i + 1]);
        b[i + 12] = _mm256_unpackhi_epi16(a[8 + 2 * i], a[8 + 2 * i + 1]);
    }
    for (int g = 0; g < 16; g += 4) { /* b[g..g+3]: rows 0-3, 4-7, 8-11, 12-15; cols g..g+3 */
        const __m256i e0 = _mm256_unpacklo_epi32(b[g], b[g + 1]);
        const __m256i e1 = _mm256_unpackhi_epi32(b[g], b[g + 1]);
        const __m256i f0 = _mm256_unpacklo_epi32(b[g + 2], b[g + 3]);
        const __m256i f1 = _mm256_unpackhi_epi32(b[g + 2], b[g + 3]);
        out[g] = _mm256_unpacklo_epi64(e0, f0);
        out[g + 1] = _mm256_unpackhi_epi64(e0, f0);
        out[g + 2] = _mm256_unpacklo_epi64(e1, f1);
        out[g + 3] = _mm256_unpackhi_epi64(e1, f1);
    }
}

/* acc + vpmaddwd(*t, w) as one asm block: gcc 12 otherwise hoists every product of a step
 * ahead of the adds and spills them (cf. qrt__dwcl_dp); the same instructions, the same bits */
static inline QRT__DWCA_INL __m256i qrt__dwca_dp(__m256i acc, const __m256i *t, __m256i w) {
    __m256i tmp;
    __asm__("vpmaddwd %[t], %[w], %[tmp]\n\tvpaddd %[tmp], %[acc], %[acc]"
            : [acc] "+x"(acc), [tmp] "=&x"(tmp)
            : [t] "m"(*t), [w] "x"(w));
    return acc;
}

/* requantize one position's two channel halves (a: channels 0-7, b: 8-15) into its 16
 * stage bytes: requant.h's cvtdq2ps, mulps, cvtps2dq, then clamp(r + zp, lo, hi) as
 * packus(adds16(sat16(r), zp)) (equal: 0 <= zp <= 255, and a saturated r stays past either
 * end) and a byte max / min where the clamp is narrower than 0..255 (clo / chi) */
static inline QRT__DWCA_INL void qrt__dwca_rq2(__m256i a, __m256i b, const __m256 vs[2],
                                               __m256i vz16, __m256i vlo8, __m256i vhi8,
                                               int clo, int chi, uint8_t *dst) {
    a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(a), vs[0]));
    b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(b), vs[1]));
    /* lane 0: channels 0-3, 8-11; lane 1: 4-7, 12-15 */
    __m256i v = _mm256_packus_epi16(_mm256_adds_epi16(_mm256_packs_epi32(a, b), vz16),
                                    _mm256_setzero_si256());
    if (clo) v = _mm256_max_epu8(v, vlo8);
    if (chi) v = _mm256_min_epu8(v, vhi8);
    v = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm_store_si128((__m128i *)dst, _mm256_castsi256_si128(v));
}

/* OB outputs (ox0 ..) of row oy, both channel halves (KH x KP tap pairs, KH == 0: the
 * runtime kh, kp; SS: a constant stride): sums of the tap pairs from the bias, requantized
 * into the stage (position pos's 16 channel bytes at stage + 16 pos) */
static inline QRT__DWCA_INL void qrt__dwca_outs(const __m256i *T, int64_t tw, const __m256i *wv,
                                                int64_t kh, int64_t kp, int64_t s, int64_t oy,
                                                int64_t ox0, int64_t wo, const __m256i vb[2],
                                                const __m256 vs[2], __m256i vz16, __m256i vlo8,
                                                __m256i vhi8, int clo, int chi, uint8_t *stage,
                                                const int OB, const int KH, const int KP,
                                                const int SS) {
    __m256i acc[8]; /* output i, half h: acc[2i + h] */
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) acc[i] = vb[i & 1];
    if (SS) s = SS;
    const int64_t nky = KH ? KH : kh, nkp = KP ? KP : kp;
    /* T holds the columns the outputs read (stride 2: the even ones): output ox + i reads
     * column ox + i, and tap pair p is 2p columns on (stride 1) or p (stride 2) */
    const int64_t ps = s == 1 ? 2 : 1;
#pragma GCC unroll 7
    for (int64_t ky = 0; ky < nky; ++ky) {
        const __m256i *t0 = T + ((oy * s + ky) * tw + ox0) * 2;
#pragma GCC unroll 4
        for (int64_t p = 0; p < nkp; ++p) {
            const __m256i w0 = _mm256_load_si256(wv + (ky * nkp + p) * 2);
            const __m256i w1 = _mm256_load_si256(wv + (ky * nkp + p) * 2 + 1);
#pragma GCC unroll 4
            for (int i = 0; i < 4; ++i)
                if (i < OB) {
                    acc[2 * i] = qrt__dwca_dp(acc[2 * i], t0 + 2 * (i + ps * p), w0);
                    acc[2 * i + 1] = qrt__dwca_dp(acc[2 * i + 1], t0 + 2 * (i + ps * p) + 1, w1);
                }
        }
    }
    uint8_t *d = stage + (oy * wo + ox0) * 16;
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i)
        if (i < OB)
            qrt__dwca_rq2(acc[2 * i], acc[2 * i + 1], vs, vz16, vlo8, vhi8, clo, chi, d + 16 * i);
}

/* all outputs of the block, a row at a time, 4 outputs per step */
static inline QRT__DWCA_INL void qrt__dwca_rows(const __m256i *T, int64_t tw, const __m256i *wv,
                                                int64_t kh, int64_t kp, int64_t s, int64_t ho,
                                                int64_t wo, const __m256i vb[2],
                                                const __m256 vs[2], __m256i vz16, __m256i vlo8,
                                                __m256i vhi8, int clo, int chi, uint8_t *stage,
                                                const int KH, const int KP, const int SS) {
#define QRT__DWCA_OUTS(OB)                                                                         \
    qrt__dwca_outs(T, tw, wv, kh, kp, s, oy, ox, wo, vb, vs, vz16, vlo8, vhi8, clo, chi, stage,  \
                   OB, KH, KP, SS)
    for (int64_t oy = 0; oy < ho; ++oy) {
        int64_t ox = 0;
        for (; ox + 4 <= wo; ox += 4) QRT__DWCA_OUTS(4);
        switch (wo - ox) {
        case 3: QRT__DWCA_OUTS(3); break;
        case 2: QRT__DWCA_OUTS(2); break;
        case 1: QRT__DWCA_OUTS(1); break;
        default: break;
        }
    }
#undef QRT__DWCA_OUTS
}

/* the int32 lanes of channel half h of B entry e (16 channel bytes) */
static inline QRT__DWCA_INL __m256i qrt__dwca_c32(const __m128i *e, int h) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)((const uint8_t *)e + 8 * h)));
}

QRT_AVX2_CL void qrt__dwcl_run_avx2(const qrt_dwconv2d_params *p, const uint8_t *x,
                                    const qrt_conv1d_quant *q, uint8_t *y, void *scratch,
                                    int64_t u0, int64_t u1) {
    const qrt__dwcl_geom g = qrt__dwcl_geom_of(p);
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63u) & ~(uintptr_t)63u);
    __m128i *B = (__m128i *)(void *)(base + g.off_e); /* [ceil64(rows * W)] */
    __m256i *T = (__m256i *)(void *)(base + g.off_t); /* [hp][tw][2] */
    uint8_t *stage = base + g.off_stage;              /* [npo][16] (room: [16][sst]) */
    const int64_t s = p->sh, kh = p->kh, kp = (p->kw + 1) / 2, pt = p->pad_top,
                  pl = p->pad_left, H = p->h, W = p->w, ho = p->ho, wo = p->wo;
    /* T's row: every column at stride 1, the even ones at stride 2 (the only ones read) */
    const int64_t tw = s == 2 ? (g.tw + 1) / 2 : g.tw, hp = g.hp, npo = ho * wo;
    /* the image rows some output reads: rows [0, hp - pt) */
    const int64_t nrows = hp - pt < H ? (hp - pt > 0 ? hp - pt : 0) : H, np = nrows * W;
    const int32_t *wcl = (const int32_t *)(const void *)q->wpack_cl; /* [kh * kp][c_in] */
    const int64_t C = p->c_in;
    memset(T, 0, (size_t)(hp * tw) * 64u);
    const __m256i vxz = _mm256_set1_epi32(p->input_zero),
                  vxz2 = _mm256_set1_epi16((short)p->input_zero);
    const __m256i vz16 = _mm256_set1_epi16((short)p->output_zero),
                  vlo8 = _mm256_set1_epi8((char)p->output_min),
                  vhi8 = _mm256_set1_epi8((char)p->output_max);
    const int clo = p->output_min > 0, chi = p->output_max < 255; /* packus gives 0..255 */
    /* rows of T inside the image */
    const int64_t r0 = pt, r1 = pt + H < hp ? pt + H : hp;
    for (int64_t u = u0; u < u1;) {
        const int64_t n = u / C, c0 = u - n * C;
        int64_t nc = u1 - u < 16 ? u1 - u : 16;
        if (nc > C - c0) nc = C - c0;
        const uint8_t *xb = x + n * p->x_stride_n + c0 * p->x_stride_c;
        /* 1. B[pos]: the 16 channels' bytes of each image position (row-major); a channel's
         * last < 32 bytes through a zeroed buffer (nothing past its rows is read) */
        for (int64_t z = 0; z < np; z += 32) {
            __m256i in[16], o[16];
            for (int k = 0; k < 16; ++k) {
                if (k >= nc) {
                    in[k] = _mm256_setzero_si256();
                } else if (z + 32 <= np) {
                    in[k] = _mm256_loadu_si256((const __m256i *)(xb + k * p->x_stride_c + z));
                } else {
                    uint8_t tb[32];
                    memset(tb, 0, sizeof tb);
                    memcpy(tb, xb + k * p->x_stride_c + z, (size_t)(np - z));
                    in[k] = _mm256_loadu_si256((const __m256i *)tb);
                }
            }
            qrt__dwca_tr(in, o); /* o[j] lane L: position z + 16L + j */
            __m128i *bz = B + z; /* B has room for whole 64-position chunks */
#pragma GCC unroll 16
            for (int j = 0; j < 16; ++j) {
                _mm_store_si128(bz + j, _mm256_castsi256_si128(o[j]));
                _mm_store_si128(bz + 16 + j, _mm256_extracti128_si256(o[j], 1));
            }
        }
        /* 2. T[r][col] = (x(iy, ix) - xz, x(iy, ix + 1) - xz) int16 pairs, r = iy + pt,
         * col = ix + pl (x = xz outside the image); rows of the padding stay zero */
        for (int64_t r = r0; r < r1; ++r) {
            const __m128i *br = B + (r - pt) * W; /* image row r - pt */
            __m256i *trow = T + r * tw * 2;
#define QRT__DWCA_C(ix, h) ((ix) >= 0 && (ix) < W ? qrt__dwca_c32(br + (ix), h) : vxz)
#define QRT__DWCA_PAIR(a, b) _mm256_sub_epi16(_mm256_or_si256((a), _mm256_slli_epi32((b), 16)), vxz2)
            for (int h = 0; h < 2; ++h) {
                if (s == 2) { /* T column j is image column 2j - pl (its pair: 2j - pl + 1) */
                    for (int64_t j = 0; j < tw; ++j)
                        _mm256_store_si256(trow + 2 * j + h,
                                           QRT__DWCA_PAIR(QRT__DWCA_C(2 * j - pl, h),
                                                          QRT__DWCA_C(2 * j - pl + 1, h)));
                    continue;
                }
                /* columns whose two positions lie inside the image: ix = col - pl in [0, W-1) */
                const int64_t ca = pl < tw ? pl : tw;
                const int64_t cb = W - 1 + pl < tw ? (W - 1 + pl > ca ? W - 1 + pl : ca) : tw;
                for (int64_t col = 0; col < ca; ++col)
                    _mm256_store_si256(trow + 2 * col + h,
                                       QRT__DWCA_PAIR(QRT__DWCA_C(col - pl, h),
                                                      QRT__DWCA_C(col - pl + 1, h)));
                if (cb > ca) {
                    __m256i cur = QRT__DWCA_C(ca - pl, h);
                    for (int64_t col = ca; col < cb; ++col) {
                        const __m256i nxt = qrt__dwca_c32(br + col - pl + 1, h);
                        _mm256_store_si256(trow + 2 * col + h, QRT__DWCA_PAIR(cur, nxt));
                        cur = nxt;
                    }
                }
                for (int64_t col = cb; col < tw; ++col)
                    _mm256_store_si256(trow + 2 * col + h,
                                       QRT__DWCA_PAIR(QRT__DWCA_C(col - pl, h),
                                                      QRT__DWCA_C(col - pl + 1, h)));
            }
#undef QRT__DWCA_PAIR
#undef QRT__DWCA_C
        }
        /* 3, 4. the outputs, staged; the block's weights, bias and scales in 16-lane buffers
         * (zero past its nc channels) */
        __m256i wv[QRT__DWCL_MAXK * ((QRT__DWCL_MAXK + 1) / 2) * 2];
        int32_t bq[16] __attribute__((aligned(32)));
        float sc[16] __attribute__((aligned(32)));
        memset(wv, 0, (size_t)(kh * kp) * 64u);
        memset(bq, 0, sizeof bq);
        memset(sc, 0, sizeof sc);
        for (int64_t t = 0; t < kh * kp; ++t) memcpy(&wv[2 * t], wcl + t * C + c0, (size_t)nc * 4u);
        memcpy(bq, q->bias_q + c0, (size_t)nc * 4u);
        memcpy(sc, q->scale + c0, (size_t)nc * 4u);
        const __m256i vb[2] = {_mm256_load_si256((const __m256i *)bq),
                               _mm256_load_si256((const __m256i *)(bq + 8))};
        const __m256 vs[2] = {_mm256_load_ps(sc), _mm256_load_ps(sc + 8)};
        /* MobileNet's kernels and strides as constants; the rest at run time */
#define QRT__DWCA_ROWS(KH, KP, SS)                                                                 \
    qrt__dwca_rows(T, tw, wv, kh, kp, s, ho, wo, vb, vs, vz16, vlo8, vhi8, clo, chi, stage, KH,  \
                   KP, SS)
        if (kh == 3 && kp == 2 && s == 1)
            QRT__DWCA_ROWS(3, 2, 1);
        else if (kh == 3 && kp == 2 && s == 2)
            QRT__DWCA_ROWS(3, 2, 2);
        else if (kh == 5 && kp == 3 && s == 1)
            QRT__DWCA_ROWS(5, 3, 1);
        else if (kh == 5 && kp == 3 && s == 2)
            QRT__DWCA_ROWS(5, 3, 2);
        else
            QRT__DWCA_ROWS(0, 0, 0);
#undef QRT__DWCA_ROWS
        /* back to NCHW: position pos's 16 bytes at stage + 16 pos; one transpose per 32 positions,
         * the last chunk first: with contiguous channel rows its full stores may run on into
         * the first bytes of the block's next channel rows, which a later (earlier-position)
         * chunk then writes; elsewhere a row's last < 32 bytes go through a buffer */
        uint8_t *yb = y + n * p->y_stride_n + c0 * p->y_stride_c;
        const int contiguous = p->y_stride_c == npo;
        for (int64_t z = (npo - 1) / 32 * 32; z >= 0; z -= 32) {
            __m256i in[16], o[16];
            for (int j = 0; j < 16; ++j) /* lane 0: position z + j, lane 1: z + 16 + j */
                in[j] = _mm256_inserti128_si256(
                    _mm256_castsi128_si256(_mm_load_si128((const __m128i *)(stage + (z + j) * 16))),
                    _mm_load_si128((const __m128i *)(stage + (z + 16 + j) * 16)), 1);
            qrt__dwca_tr(in, o); /* o[k] lane L byte j = channel k, position z + 16L + j */
            for (int64_t k = 0; k < nc; ++k) {
                uint8_t *dst = yb + k * p->y_stride_c + z;
                if (z + 32 <= npo || (contiguous && k * npo + z + 32 <= nc * npo)) {
                    _mm256_storeu_si256((__m256i *)dst, o[k]);
                } else {
                    uint8_t tb[32];
                    _mm256_storeu_si256((__m256i *)tb, o[k]);
                    memcpy(dst, tb, (size_t)(npo - z));
                }
            }
        }
        u += nc;
    }
}

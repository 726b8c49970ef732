/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_float_avx2.c
 * @brief qrt_linear_f32__avx2 (compiled with -mavx2 -mfma): qrt_linear_f32_ref()'s fmaf
 *        chains with one output per vector lane (a weight panel of 8 outputs is one vector per
 *        input i), x[r][i] broadcast.  Register tiles: 1 row x 8 panels (8 independent chains
 *        hide the FMA latency) or 2 rows x 4 panels.  The order of every chain is the
 *        reference's: bit-exact with it (tests/test_rnn_float.py).
 */
#include <immintrin.h>
#include <string.h>

#include "qrt/rnn_float.h"

#define QRT_TGT __attribute__((target("avx2,fma")))
#define NR QRT_LF32_NR

#define UNROLL _Pragma("GCC unroll 16")

/* rows r0..r0+RB-1, panels p0..p0+PG-1 (outputs p*8.., the last one possibly partial); the
 * accumulators stay in registers: every loop over them is unrolled (constant RB, PG), and
 * the epilogue reads them through a stored copy */
QRT_TGT static inline __attribute__((always_inline)) void tile(
    const float *x, size_t ldx, const float *wp, size_t k, size_t n, const float *b, float *y,
    size_t ldy, size_t p0, const int RB, const int PG)
{
    __m256 acc[2][8];
    UNROLL for (int r = 0; r < RB; r++) UNROLL for (int p = 0; p < PG; p++)
        acc[r][p] = _mm256_setzero_ps();
    const float *w0 = wp + p0 * k * NR;
    for (size_t i = 0; i < k; i++) {
        __m256 wv[8];
        UNROLL for (int p = 0; p < PG; p++) wv[p] = _mm256_loadu_ps(w0 + (p * k + i) * NR);
        UNROLL for (int r = 0; r < RB; r++) {
            const __m256 xb = _mm256_broadcast_ss(x + r * ldx + i);
            UNROLL for (int p = 0; p < PG; p++) acc[r][p] = _mm256_fmadd_ps(wv[p], xb, acc[r][p]);
        }
    }
    float res[2][8][NR];
    UNROLL for (int r = 0; r < RB; r++) UNROLL for (int p = 0; p < PG; p++)
        _mm256_storeu_ps(res[r][p], acc[r][p]);
    for (int p = 0; p < PG; p++) {
        const size_t o = (p0 + p) * NR, m = n - o < NR ? n - o : NR;
        for (int r = 0; r < RB; r++) {
            float *yr = y + r * ldy + o;
            if (b)
                for (size_t j = 0; j < m; j++) yr[j] = res[r][p][j] + b[o + j];
            else
                for (size_t j = 0; j < m; j++) yr[j] = res[r][p][j];
        }
    }
}

#define TILE(RB, PG)                                                                           \
    QRT_TGT static void tile_##RB##_##PG(const float *x, size_t ldx, const float *wp, size_t k,  \
                                         size_t n, const float *b, float *y, size_t ldy,       \
                                         size_t p0)                                            \
    {                                                                                          \
        tile(x, ldx, wp, k, n, b, y, ldy, p0, RB, PG);                                         \
    }

TILE(1, 1)
TILE(1, 2)
TILE(1, 3)
TILE(1, 4)
TILE(1, 5)
TILE(1, 6)
TILE(1, 7)
TILE(1, 8)
TILE(2, 1)
TILE(2, 2)
TILE(2, 3)
TILE(2, 4)

typedef void (*tile_fn)(const float *, size_t, const float *, size_t, size_t, const float *,
                        float *, size_t, size_t);
static const tile_fn tiles1[9] = {0, tile_1_1, tile_1_2, tile_1_3, tile_1_4,
                                  tile_1_5, tile_1_6, tile_1_7, tile_1_8};
static const tile_fn tiles2[5] = {0, tile_2_1, tile_2_2, tile_2_3, tile_2_4};

QRT_TGT void qrt_linear_f32__avx2(const float *x, size_t ldx, size_t rows, const float *wp,
                                  size_t k, size_t n, const float *b, float *y, size_t ldy)
{
    const size_t panels = (n + NR - 1) / NR;
    size_t r = 0;
    for (; r + 2 <= rows; r += 2)
        for (size_t p = 0; p < panels; p += 4) {
            const size_t pg = panels - p < 4 ? panels - p : 4;
            tiles2[pg](x + r * ldx, ldx, wp, k, n, b, y + r * ldy, ldy, p);
        }
    for (; r < rows; r++)
        for (size_t p = 0; p < panels; p += 8) {
            const size_t pg = panels - p < 8 ? panels - p : 8;
            tiles1[pg](x + r * ldx, ldx, wp, k, n, b, y + r * ldy, ldy, p);
        }
}


/* ---- the gates (rnn_gates.h) with AVX2 intrinsics: the scalar functions' operations in
 * the same order, lane by lane (gcc does not vectorise those loops for AVX2); tails run the
 * scalar functions themselves.  Bit-exact with the baseline build (tests/test_rnn_float.py). */
#include "qrt/rnn_gates.h"

QRT_TGT static inline __m256 v_sel(__m256 mask, __m256 a, __m256 b) /* mask ? a : b */
{
    return _mm256_blendv_ps(b, a, mask);
}

QRT_TGT static inline __m256 v_expf(__m256 x)
{
    const __m256 ord = _mm256_cmp_ps(x, x, _CMP_ORD_Q);
    x = _mm256_and_ps(x, ord);
    const __m256 hi = _mm256_set1_ps(88.0f), lo = _mm256_set1_ps(-87.0f);
    x = v_sel(_mm256_cmp_ps(x, hi, _CMP_GT_OQ), hi, x);
    x = v_sel(_mm256_cmp_ps(x, lo, _CMP_LT_OQ), lo, x);
    const __m256 fx = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                    _mm256_set1_ps(0.5f));
    __m256i n = _mm256_cvttps_epi32(fx);
    n = _mm256_add_epi32(n, _mm256_castps_si256(
                                _mm256_cmp_ps(_mm256_cvtepi32_ps(n), fx, _CMP_GT_OQ)));
    const __m256 fn = _mm256_cvtepi32_ps(n);
    x = _mm256_sub_ps(x, _mm256_mul_ps(fn, _mm256_set1_ps(0.693359375f)));
    x = _mm256_sub_ps(x, _mm256_mul_ps(fn, _mm256_set1_ps(-2.12194440e-4f)));
    const __m256 z = _mm256_mul_ps(x, x);
    __m256 y = _mm256_set1_ps(1.9875691500e-4f);
    y = _mm256_add_ps(_mm256_mul_ps(y, x), _mm256_set1_ps(1.3981999507e-3f));
    y = _mm256_add_ps(_mm256_mul_ps(y, x), _mm256_set1_ps(8.3334519073e-3f));
    y = _mm256_add_ps(_mm256_mul_ps(y, x), _mm256_set1_ps(4.1665795894e-2f));
    y = _mm256_add_ps(_mm256_mul_ps(y, x), _mm256_set1_ps(1.6666665459e-1f));
    y = _mm256_add_ps(_mm256_mul_ps(y, x), _mm256_set1_ps(5.0000001201e-1f));
    y = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(y, z), x), _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

QRT_TGT static inline __m256 v_sigmoid(__m256 x)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 r = _mm256_div_ps(
        one, _mm256_add_ps(one, v_expf(_mm256_xor_ps(x, _mm256_set1_ps(-0.0f)))));
    return v_sel(_mm256_cmp_ps(x, x, _CMP_ORD_Q), r, x);
}

QRT_TGT static inline __m256 v_tanh(__m256 x)
{
    const __m256 zero = _mm256_setzero_ps(), neg0 = _mm256_set1_ps(-0.0f);
    const __m256 isneg = _mm256_cmp_ps(x, zero, _CMP_LT_OQ);
    const __m256 a = v_sel(isneg, _mm256_xor_ps(x, neg0), x);
    const __m256 e = v_expf(_mm256_mul_ps(_mm256_set1_ps(2.0f), a));
    __m256 big = _mm256_sub_ps(_mm256_set1_ps(1.0f),
                               _mm256_div_ps(_mm256_set1_ps(2.0f),
                                             _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
    big = v_sel(isneg, _mm256_xor_ps(big, neg0), big);
    const __m256 z = _mm256_mul_ps(x, x);
    __m256 p = _mm256_set1_ps(-5.70498872745e-3f);
    p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(2.06390887954e-2f));
    p = _mm256_sub_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(5.37397155531e-2f));
    p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(1.33314422036e-1f));
    p = _mm256_sub_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(3.33332819422e-1f));
    const __m256 small = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(p, z), x), x);
    const __m256 r = v_sel(_mm256_cmp_ps(a, _mm256_set1_ps(0.625f), _CMP_GT_OQ), big, small);
    return v_sel(_mm256_cmp_ps(x, x, _CMP_ORD_Q), r, x);
}

#define LD(p) _mm256_loadu_ps(p)
#define ST(p, v) _mm256_storeu_ps(p, v)

QRT_TGT static void gates_row_avx2(int mode, size_t H, float *g, const float *gi,
                                   const float *h_in, float *h_out, float *c)
{
    size_t j;
    if (mode == QRT_RNN_LSTM) {
        float *gg_i = g, *gg_f = g + H, *gg_g = g + 2 * H, *gg_o = g + 3 * H;
        for (j = 0; j + 8 <= 4 * H; j += 8) ST(g + j, _mm256_add_ps(LD(g + j), LD(gi + j)));
        for (; j < 4 * H; j++) g[j] = g[j] + gi[j];
        for (j = 0; j + 8 <= 2 * H; j += 8) ST(g + j, v_sigmoid(LD(g + j)));
        for (; j < 2 * H; j++) g[j] = qrt_gate_sigmoid(g[j]);
        for (j = 0; j + 8 <= H; j += 8) ST(gg_g + j, v_tanh(LD(gg_g + j)));
        for (; j < H; j++) gg_g[j] = qrt_gate_tanh(gg_g[j]);
        for (j = 0; j + 8 <= H; j += 8) ST(gg_o + j, v_sigmoid(LD(gg_o + j)));
        for (; j < H; j++) gg_o[j] = qrt_gate_sigmoid(gg_o[j]);
        for (j = 0; j + 8 <= H; j += 8)
            ST(c + j, _mm256_add_ps(_mm256_mul_ps(LD(gg_f + j), LD(c + j)),
                                    _mm256_mul_ps(LD(gg_i + j), LD(gg_g + j))));
        for (; j < H; j++) {
            const float fc = gg_f[j] * c[j];
            const float icg = gg_i[j] * gg_g[j];
            c[j] = fc + icg;
        }
        for (j = 0; j + 8 <= H; j += 8)
            ST(h_out + j, _mm256_mul_ps(LD(gg_o + j), v_tanh(LD(c + j))));
        for (; j < H; j++) h_out[j] = gg_o[j] * qrt_gate_tanh(c[j]);
    } else if (mode == QRT_RNN_GRU) {
        float *r = g, *zg = g + H, *gn = g + 2 * H;
        const float *gin = gi + 2 * H;
        for (j = 0; j + 8 <= 2 * H; j += 8)
            ST(g + j, v_sigmoid(_mm256_add_ps(LD(g + j), LD(gi + j))));
        for (; j < 2 * H; j++) g[j] = qrt_gate_sigmoid(g[j] + gi[j]);
        for (j = 0; j + 8 <= H; j += 8)
            ST(gn + j, v_tanh(_mm256_add_ps(LD(gin + j), _mm256_mul_ps(LD(gn + j), LD(r + j)))));
        for (; j < H; j++) {
            const float hn = gn[j] * r[j];
            gn[j] = qrt_gate_tanh(gin[j] + hn);
        }
        for (j = 0; j + 8 <= H; j += 8) {
            const __m256 n = LD(gn + j);
            ST(h_out + j, _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(LD(h_in + j), n),
                                                      LD(zg + j)), n));
        }
        for (; j < H; j++) {
            const float n = gn[j];
            const float dz = (h_in[j] - n) * zg[j];
            h_out[j] = dz + n;
        }
    } else if (mode == QRT_RNN_TANH) {
        for (j = 0; j + 8 <= H; j += 8)
            ST(h_out + j, v_tanh(_mm256_add_ps(LD(g + j), LD(gi + j))));
        for (; j < H; j++) h_out[j] = qrt_gate_tanh(g[j] + gi[j]);
    } else {
        qrt_gates_row(mode, H, g, gi, h_in, h_out, c);
    }
}

QRT_TGT void qrt_rnn_float_gates__avx2(const qrt_rnn_float_args *a, size_t t)
{
    const size_t H = a->hidden, GH = (size_t)a->gates * H, R = a->proj ? a->proj : H;
    for (size_t b = 0; b < a->batch; b++) {
        const float *gi = a->gi + (ptrdiff_t)t * a->gi_st + (ptrdiff_t)b * a->gi_sb;
        float *h = a->h + b * R;
        float *c = a->c ? a->c + b * H : NULL;
        gates_row_avx2(a->mode, H, a->gh + b * GH, gi, h, a->proj ? a->hf + b * H : h, c);
    }
}

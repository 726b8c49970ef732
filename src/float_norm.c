/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file float_norm.c
 * @brief qrt/float_norm.h: torch's CPU LayerNorm, step for step (built with
 *        -ffp-contract=off: every fused multiply-add below is an explicit fmaf, as in torch).
 */
#include "qrt/float_norm.h"

#include <math.h>
#include <string.h>

#define LANES 8   /* torch's Vectorized<float>::size() in the kernel x86-64 runs (AVX2) */
#define CHUNK 16  /* kChunkSize */
#define MAX_DEPTH 64

typedef struct {
    long long m0;
    float m1[LANES], m2[LANES];
} moments8;

/* AddMomentsVec(m0_add, m1_add, m2_add -> s) */
static void add_moments_vec(long long m0_add, const float *m1_add, const float *m2_add,
                            moments8 *s)
{
    const long long n = s->m0 + m0_add;
    const float c = n == 0 ? 0.0f : (float)m0_add / (float)n;
    const float m0f = (float)s->m0;
    for (int l = 0; l < LANES; l++) {
        const float delta = m1_add[l] - s->m1[l];
        const float m2_tmp = s->m2[l] + m2_add[l];
        const float c_delta = c * delta;
        const float m0_delta = delta * m0f;
        s->m1[l] = s->m1[l] + c_delta;
        s->m2[l] = fmaf(m0_delta, c_delta, m2_tmp);
    }
    s->m0 = n;
}

void qrt_row_moments_f32(const float *x, size_t N, float *mean, float *var)
{
    static const float c_vecs[CHUNK] = {
        1.0f / 1, 1.0f / 2, 1.0f / 3, 1.0f / 4, 1.0f / 5, 1.0f / 6, 1.0f / 7, 1.0f / 8,
        1.0f / 9, 1.0f / 10, 1.0f / 11, 1.0f / 12, 1.0f / 13, 1.0f / 14, 1.0f / 15, 1.0f / 16};
    const size_t n = N / LANES;
    const size_t m = (n + CHUNK - 1) / CHUNK;
    int depth = 0;                        /* utils::CeilLog2(m) */
    while (depth < MAX_DEPTH && ((size_t)1 << depth) < m) depth++;
    moments8 stk[MAX_DEPTH + 1];
    const int ns = depth > 0 ? depth : 1;
    memset(stk, 0, sizeof(moments8) * (size_t)ns);
    for (size_t i = 0; i < m; i++) {
        const float *xp = x + i * CHUNK * LANES;
        const size_t rem = n - i * CHUNK;
        const long long m0 = (long long)(rem < CHUNK ? rem : CHUNK);
        float m1v[LANES] = {0}, m2v[LANES] = {0};
        for (long long j = 0; j < m0; j++) {   /* UpdateMomentsVec */
            const float cj = c_vecs[j];
            for (int l = 0; l < LANES; l++) {
                const float xv = xp[j * LANES + l];
                const float delta = xv - m1v[l];
                m1v[l] = fmaf(cj, delta, m1v[l]);
                const float t2 = xv - m1v[l];
                m2v[l] = fmaf(delta, t2, m2v[l]);
            }
        }
        add_moments_vec(m0, m1v, m2v, &stk[0]);
        size_t mask = i + 1;
        for (int j = 1; j < depth && (mask & 1) == 0; j++) {
            add_moments_vec(stk[j - 1].m0, stk[j - 1].m1, stk[j - 1].m2, &stk[j]);
            memset(&stk[j - 1], 0, sizeof(moments8));
            mask >>= 1;
        }
    }
    for (int j = 1; j < depth; j++) add_moments_vec(stk[j].m0, stk[j].m1, stk[j].m2, &stk[0]);
    long long m0 = 0;
    float m1 = 0.0f, m2 = 0.0f;
    for (size_t i = n * LANES; i < N; i++) {  /* the tail, scalar Welford */
        const float xv = x[i];
        const float delta = xv - m1;
        ++m0;
        m1 += delta / (float)m0;
        m2 += delta * (xv - m1);
    }
    const long long m0_add = (long long)n;
    for (int l = 0; l < LANES; l++) {         /* AddMoments, one lane at a time */
        const long long nn = m0 + m0_add;
        const float c = nn == 0 ? 0.0f : (float)m0_add / (float)nn;
        const float delta = stk[0].m1[l] - m1;
        m1 = fmaf(c, delta, m1);
        m2 = m2 + fmaf(delta * delta * c, (float)m0, stk[0].m2[l]);
        m0 = nn;
    }
    *mean = m1;
    *var = m2 / (float)N;
}

void qrt_layer_norm_rows_f32(const float *x, float *y, size_t rows, size_t n, float eps,
                             const float *w, const float *b)
{
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        float mean, v;
        qrt_row_moments_f32(xr, n, &mean, &v);
        const float rstd = 1.0f / sqrtf(v + eps);
        if (w && b)
            for (size_t i = 0; i < n; i++) yr[i] = fmaf((xr[i] - mean) * rstd, w[i], b[i]);
        else if (w)
            for (size_t i = 0; i < n; i++) yr[i] = ((xr[i] - mean) * rstd) * w[i];
        else if (b) /* torch's scalar path, its multiply by gamma = 1 folded away */
            for (size_t i = 0; i < n; i++) yr[i] = fmaf(xr[i] - mean, rstd, b[i]);
        else
            for (size_t i = 0; i < n; i++) yr[i] = (xr[i] - mean) * rstd;
    }
}

void qrt_group_norm_f32(const float *x, float *y, size_t n, size_t c, size_t hw, size_t groups,
                        double eps, const float *w, const float *b)
{
    const size_t d = c / groups, inner = d * hw;
    for (size_t i = 0; i < n * groups; i++) {
        const float *xr = x + i * inner;
        float *yr = y + i * inner;
        float mean, v;
        qrt_row_moments_f32(xr, inner, &mean, &v);
        /* torch: eps is a double here, and so are the sum, the root and the division */
        const float rstd = (float)(1.0 / sqrt((double)(v > 0.0f ? v : 0.0f) + eps));
        if (!w && !b) {
            for (size_t k = 0; k < inner; k++) yr[k] = (xr[k] - mean) * rstd;
            continue;
        }
        const size_t g = i % groups;
        for (size_t j = 0; j < d; j++) {   /* per channel: torch's scale and bias */
            const size_t ch = g * d + j;
            const float scale = rstd * (w ? w[ch] : 1.0f);
            const float bias = fmaf(-scale, mean, b ? b[ch] : 0.0f);
            const float *xc = xr + j * hw;
            float *yc = yr + j * hw;
            for (size_t k = 0; k < hw; k++) yc[k] = fmaf(scale, xc[k], bias);
        }
    }
}

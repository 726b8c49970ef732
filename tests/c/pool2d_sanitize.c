/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool2d_sanitize.c
 * @brief The direct 2-d pooling kernels (src/pool2d.c) under AddressSanitizer + UBSan: random
 *        geometry (kernels, strides, padding, dilation, ceil-mode output sizes, widths past the
 *        vector lengths), NCHW and strided inputs (NHWC strides, gaps), quint8 and qint8, max
 *        and both average formulas, on exact-size malloc'd input, output and scratch buffers,
 *        == a per-output loop written from the header's definition.  Also: hostile parameters
 *        are refused.
 *
 *   gcc -std=c11 -g -O1 -ffp-contract=off -fsanitize=address,undefined \
 *       -fno-sanitize-recover=all -Iinclude tests/c/pool2d_sanitize.c -o /tmp/p2s -lpthread -lm
 *   /tmp/p2s [cases [seed]]      # prints "ok <cases>"
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/threadpool.c"
#include "../../src/pool2d.c"

static uint64_t g_s = 88172645463325252ull;
static uint32_t rnd(void) {
    g_s ^= g_s << 13, g_s ^= g_s >> 7, g_s ^= g_s << 17;
    return (uint32_t)(g_s >> 11);
}
static int64_t rin(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* torch's output length: floor or ceil, the last window starting inside image or left pad */
static int64_t out_len(int64_t L, int64_t k, int64_t s, int64_t p, int64_t d, int ceil_mode) {
    const int64_t num = L + 2 * p - d * (k - 1) - 1;
    if (num < 0) return 0;
    int64_t o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
    if (ceil_mode && (o - 1) * s >= L + p) --o;
    return o;
}

/* the definition: one output at a time */
static int32_t ref_one(const qrt_pool2d_params *p, const uint8_t *x, int sgn, int avg, int64_t n,
                       int64_t c, int64_t oy, int64_t ox) {
    int32_t m = p->qmin, acc = 0;
    int64_t real = 0;
    for (int64_t ky = 0; ky < p->kh; ++ky)
        for (int64_t kx = 0; kx < p->kw; ++kx) {
            const int64_t iy = oy * p->sh - p->ph + ky * p->dh, ix = ox * p->sw - p->pw + kx * p->dw;
            if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
            const uint8_t b = x[n * p->xs_n + c * p->xs_c + iy * p->xs_h + ix * p->xs_w];
            const int32_t v = sgn ? (int32_t)(int8_t)b : (int32_t)b;
            m = v > m ? v : m;
            acc += v - p->zero;
            ++real;
        }
    if (!avg) return m;
    const int64_t sy = oy * p->sh - p->ph, sx = ox * p->sw - p->pw;
    const int64_t ey = sy + p->kh < p->h + p->ph ? sy + p->kh : p->h + p->ph;
    const int64_t ex = sx + p->kw < p->w + p->pw ? sx + p->kw : p->w + p->pw;
    int64_t div = p->divisor > 0 ? p->divisor : p->count_include_pad ? (ey - sy) * (ex - sx) : real;
    if (div < 1) div = 1;
    float v;
    if (p->mode == QRT_AVG_POOL_QNNP)
        v = rintf((float)acc * p->scale) + (float)p->zero;
    else
        v = rintf((float)acc * (float)(1.0 / (double)div) + (float)p->zero);
    v = v < (float)p->qmin ? (float)p->qmin : v > (float)p->qmax ? (float)p->qmax : v;
    return (int32_t)v;
}

static int one_case(int idx) {
    qrt_pool2d_params p;
    memset(&p, 0, sizeof p);
    const int avg = (int)(rnd() % 2), sgn = (int)(rnd() % 3 == 0);
    p.n = rin(1, 2), p.c = rin(1, 5);
    const int big = rnd() % 3 == 0;
    p.h = rin(1, big ? 40 : 12), p.w = rin(1, big ? 150 : 12);
    p.kh = (int32_t)rin(1, 5), p.kw = (int32_t)rin(1, 5);
    p.sh = (int32_t)rin(1, 3), p.sw = (int32_t)rin(1, 3);
    p.dh = avg || rnd() % 3 ? 1 : (int32_t)rin(1, 3);
    p.dw = avg || rnd() % 3 ? 1 : (int32_t)rin(1, 3);
    p.ph = (int32_t)rin(0, p.kh / 2), p.pw = (int32_t)rin(0, p.kw / 2);
    const int cm = (int)(rnd() % 3 == 0);
    p.ho = out_len(p.h, p.kh, p.sh, p.ph, p.dh, cm);
    p.wo = out_len(p.w, p.kw, p.sw, p.pw, p.dw, cm);
    if (p.ho < 1 || p.wo < 1) return 0;
    p.qmin = sgn ? -128 : 0, p.qmax = sgn ? 127 : 255;
    p.zero = (int32_t)rin(p.qmin, p.qmax);
    p.mode = !sgn && !cm && rnd() % 2 ? QRT_AVG_POOL_QNNP : QRT_AVG_POOL_GENERIC;
    p.count_include_pad = (int32_t)(rnd() % 2);
    p.divisor = rnd() % 5 == 0 ? (int32_t)rin(1, 30) : 0;
    p.scale = rnd() % 4 == 0 ? (float)rin(1, 5000) / 7.0f /* past the codes: the clamp */
                             : 1.0f / (float)(p.kh * p.kw) * (0.5f + (float)(rnd() % 100) / 100.0f);
    /* layout: NCHW, NHWC or NCHW with gaps after rows and planes */
    const int lay = (int)(rnd() % 3);
    int64_t gw = 0, gh = 0;
    if (lay == 0) {
        p.xs_w = 1, p.xs_h = p.w, p.xs_c = p.h * p.w, p.xs_n = p.c * p.h * p.w;
    } else if (lay == 1) {
        p.xs_c = 1, p.xs_w = p.c, p.xs_h = p.w * p.c, p.xs_n = p.h * p.w * p.c;
    } else {
        gw = rin(0, 2), gh = rin(0, 3);
        p.xs_w = 1 + gw, p.xs_h = p.w * p.xs_w + gh, p.xs_c = p.h * p.xs_h + rin(0, 5);
        p.xs_n = p.c * p.xs_c + rin(0, 5);
    }
    const size_t xn = (size_t)((p.n - 1) * p.xs_n + (p.c - 1) * p.xs_c + (p.h - 1) * p.xs_h +
                               (p.w - 1) * p.xs_w + 1);
    const int threads = rnd() % 2 ? 3 : 1;
    qrt_pool_set_threads(threads);
    const size_t yn = (size_t)(p.n * p.c * p.ho * p.wo), sn = qrt_pool2d_scratch_size(&p, threads);
    uint8_t *x = malloc(xn), *y = malloc(yn), *s = malloc(sn);
    for (size_t i = 0; i < xn; ++i) x[i] = (uint8_t)rnd();
    qrt_status st;
    if (avg)
        st = sgn ? qrt_avg_pool2d_s8(&p, (const int8_t *)x, (int8_t *)y, s, sn, threads)
                 : qrt_avg_pool2d_u8(&p, x, y, s, sn, threads);
    else
        st = sgn ? qrt_max_pool2d_s8(&p, (const int8_t *)x, (int8_t *)y, s, sn, threads)
                 : qrt_max_pool2d_u8(&p, x, y, s, sn, threads);
    int bad = 0;
    if (st != QRT_OK) {
        fprintf(stderr, "case %d refused\n", idx);
        bad = 1;
    }
    for (int64_t n = 0; !bad && n < p.n; ++n)
        for (int64_t c = 0; !bad && c < p.c; ++c)
            for (int64_t oy = 0; !bad && oy < p.ho; ++oy)
                for (int64_t ox = 0; !bad && ox < p.wo; ++ox) {
                    const uint8_t got = y[((n * p.c + c) * p.ho + oy) * p.wo + ox];
                    const int32_t g = sgn ? (int32_t)(int8_t)got : (int32_t)got;
                    const int32_t want = ref_one(&p, x, sgn, avg, n, c, oy, ox);
                    if (g != want) {
                        fprintf(stderr,
                                "case %d %s %s n%lld c%lld h%lld w%lld k%dx%d s%dx%d p%dx%d "
                                "d%dx%d ho%lld wo%lld lay%d: (%lld,%lld,%lld,%lld) %d != %d\n",
                                idx, avg ? "avg" : "max", sgn ? "s8" : "u8", (long long)p.n,
                                (long long)p.c, (long long)p.h, (long long)p.w, p.kh, p.kw, p.sh,
                                p.sw, p.ph, p.pw, p.dh, p.dw, (long long)p.ho, (long long)p.wo,
                                lay, (long long)n, (long long)c, (long long)oy, (long long)ox, g,
                                want);
                        bad = 1;
                    }
                }
    /* a scratch one byte short of one slot is refused */
    const size_t one = qrt_pool2d_scratch_size(&p, 1);
    if (!bad && (avg ? qrt_avg_pool2d_u8(&p, x, y, s, one - 1, 1)
                     : qrt_max_pool2d_u8(&p, x, y, s, one - 1, 1)) == QRT_OK &&
        !(avg && sgn)) {
        fprintf(stderr, "case %d: short scratch accepted\n", idx);
        bad = 1;
    }
    free(x), free(y), free(s);
    return bad;
}

static int hostile(void) {
    qrt_pool2d_params p;
    memset(&p, 0, sizeof p);
    p.n = p.c = 1, p.h = p.w = 8, p.ho = p.wo = 4, p.kh = p.kw = 2, p.sh = p.sw = 2;
    p.dh = p.dw = 1, p.xs_w = 1, p.xs_h = 8, p.xs_c = p.xs_n = 64, p.qmax = 255;
    if (qrt_pool2d_check(&p) != QRT_OK) return 1;
    qrt_pool2d_params q = p;
    q.ho = 5; /* a window starting past the image and its padding */
    if (qrt_pool2d_check(&q) == QRT_OK) return 2;
    q = p, q.kw = 0;
    if (qrt_pool2d_check(&q) == QRT_OK) return 3;
    q = p, q.pw = 3; /* pad past kernel * dilation */
    if (qrt_pool2d_check(&q) == QRT_OK) return 4;
    q = p, q.xs_h = -1;
    if (qrt_pool2d_check(&q) == QRT_OK) return 5;
    q = p, q.w = (int64_t)1 << 31;
    if (qrt_pool2d_check(&q) == QRT_OK) return 6;
    q = p, q.zero = 300;
    if (qrt_pool2d_check(&q) == QRT_OK) return 7;
    q = p, q.mode = QRT_AVG_POOL_QNNP, q.scale = NAN;
    uint8_t x[64] = {0}, y[16], s[4096];
    if (qrt_avg_pool2d_u8(&q, x, y, s, sizeof s, 1) == QRT_OK) return 8;
    q = p, q.dh = 2; /* average pooling has no dilation */
    if (qrt_avg_pool2d_u8(&q, x, y, s, sizeof s, 1) == QRT_OK) return 9;
    q = p, q.mode = QRT_AVG_POOL_QNNP, q.scale = 0.25f, q.qmin = -128, q.qmax = 127;
    if (qrt_avg_pool2d_s8(&q, (const int8_t *)x, (int8_t *)y, s, sizeof s, 1) == QRT_OK) return 10;
    if (qrt_max_pool2d_u8(NULL, x, y, s, sizeof s, 1) == QRT_OK) return 11;
    if (qrt_max_pool2d_u8(&p, x, y, NULL, sizeof s, 1) == QRT_OK) return 12;
    return 0;
}

int main(int argc, char **argv) {
    const int cases = argc > 1 ? atoi(argv[1]) : 400;
    g_s += argc > 2 ? (uint64_t)atoi(argv[2]) * 0x9E3779B97F4A7C15ull : 0;
    const int h = hostile();
    if (h) {
        fprintf(stderr, "hostile parameters accepted (%d)\n", h);
        return 1;
    }
    int ran = 0;
    for (int i = 0; i < cases; ++i) {
        if (one_case(i)) return 1;
        ++ran;
    }
    printf("ok %d\n", ran);
    return 0;
}

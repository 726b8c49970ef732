/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file im2col_sanitize.c
 * @brief Memory-safety and value driver for qrt_im2col_u8 (src/im2col.c): random geometries
 *        (kernel, stride, dilation, padding wider than the image, 1x1 images, NCHW and NHWC
 *        input strides, both layouts), input and column buffers malloc'ed to their exact size
 *        (AddressSanitizer sees any access past them), every byte compared with the
 *        definition x[n][c][oy*sh + ky*dh - pt][ox*sw + kx*dw - pl] or the pad value.
 *        Every third case runs qrt_im2col_u8(), the others qrt_im2col_u8_mt() on 2 and 3
 *        threads with the cut threshold at 0 (row runs written by the pool's workers).
 *        Built with -fsanitize=address,undefined -lpthread and run by tests/test_conv2d.py.
 *
 * usage: im2col_sanitize [cases] [seed]; prints "ok <cases> <bytes>" or the first mismatch.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in src/threadpool.c */
#include <stdio.h>
#include <stdlib.h>

#include "../../src/im2col.c"
#include "../../src/threadpool.c"

static uint64_t rs = 88172645463325252ull;
static uint32_t rnd(uint32_t n) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs % n);
}

int main(int argc, char **argv) {
    const int cases = argc > 1 ? atoi(argv[1]) : 300;
    if (argc > 2) rs += (uint64_t)atoll(argv[2]);
    uint64_t checked = 0;
    qrt_im2col_mt_min_bytes = 0.0;
    qrt_pool_set_threads(3);
    for (int i = 0; i < cases; ++i) {
        qrt_im2col_params p;
        p.n = 1 + rnd(2);
        p.c = 1 + rnd(5);
        p.h = 1 + rnd(12);
        p.w = rnd(4) ? 1 + rnd(12) : 1 + rnd(90); /* wide rows: the 16-wide stride-2 copy */
        p.kh = 1 + rnd(5);
        p.kw = 1 + rnd(5);
        p.sh = 1 + rnd(3);
        p.sw = 1 + rnd(3);
        p.dh = 1 + rnd(3);
        p.dw = 1 + rnd(3);
        p.pad_top = rnd(p.dh * (p.kh - 1) + 2);
        p.pad_left = rnd(p.dw * (p.kw - 1) + 2);
        const int64_t span_h = (int64_t)p.dh * (p.kh - 1) + 1, span_w = (int64_t)p.dw * (p.kw - 1) + 1;
        const int64_t ph = (int64_t)p.h + 2 * p.pad_top - span_h, pw = (int64_t)p.w + 2 * p.pad_left - span_w;
        if (ph < 0 || pw < 0) continue;
        p.ho = (uint32_t)(ph / p.sh + 1);
        p.wo = (uint32_t)(pw / p.sw + 1);
        const int nhwc = (int)rnd(2);
        p.x_stride_n = (int64_t)p.c * p.h * p.w;
        p.x_stride_c = nhwc ? 1 : (int64_t)p.h * p.w;
        p.x_stride_h = nhwc ? (int64_t)p.w * p.c : p.w;
        p.x_stride_w = nhwc ? p.c : 1;
        p.pad_value = (int32_t)rnd(256);
        p.layout = rnd(2) ? QRT_IM2COL_C_PK : QRT_IM2COL_CK_P;
        const size_t nx = (size_t)p.n * p.c * p.h * p.w;
        uint8_t *x = malloc(nx);
        for (size_t j = 0; j < nx; ++j) x[j] = (uint8_t)rnd(256);
        const uint64_t nc = qrt_im2col_size(&p);
        uint8_t *col = malloc((size_t)nc);
        const int threads = i % 3 + 1;
        if ((threads == 1 ? qrt_im2col_u8(&p, x, col) : qrt_im2col_u8_mt(&p, x, col, threads)) !=
            QRT_OK) {
            printf("case %d: refused\n", i);
            return 1;
        }
        uint64_t o = 0;
        for (int64_t n = 0; n < p.n; ++n)
            for (int64_t c = 0; c < p.c; ++c)
                for (int64_t a = 0; a < (p.layout == QRT_IM2COL_CK_P ? p.kh * p.kw : p.ho * p.wo); ++a)
                    for (int64_t b = 0; b < (p.layout == QRT_IM2COL_CK_P ? p.ho * p.wo : p.kh * p.kw); ++b, ++o) {
                        const int64_t tap = p.layout == QRT_IM2COL_CK_P ? a : b;
                        const int64_t pos = p.layout == QRT_IM2COL_CK_P ? b : a;
                        const int64_t ky = tap / p.kw, kx = tap % p.kw, oy = pos / p.wo, ox = pos % p.wo;
                        const int64_t iy = oy * p.sh + ky * p.dh - p.pad_top;
                        const int64_t ix = ox * p.sw + kx * p.dw - p.pad_left;
                        const int in = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w;
                        const uint8_t want = in ? x[n * p.x_stride_n + c * p.x_stride_c +
                                                    iy * p.x_stride_h + ix * p.x_stride_w]
                                                : (uint8_t)p.pad_value;
                        if (col[o] != want) {
                            printf("case %d: byte %llu is %d, want %d\n", i,
                                   (unsigned long long)o, col[o], want);
                            return 1;
                        }
                    }
        checked += o;
        free(x);
        free(col);
    }
    /* the gate */
    qrt_im2col_params z = {0};
    if (qrt_im2col_check(&z) != QRT_ERR_ARG) return 1;
    printf("ok %d %llu\n", cases, (unsigned long long)checked);
    return 0;
}

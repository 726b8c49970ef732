/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_sanitize.c
 * @brief Memory-safety driver for the conv1d kernels: random geometries with odd sizes around
 *        every tile edge, each buffer malloc'ed to its exact size (so AddressSanitizer / valgrind
 *        see any read or write past it), every variant this CPU runs and 1, 2, 3, 7 threads,
 *        all compared with the reference.  Built and run by tests/test_conv1d_variants.py with
 *        -fsanitize=address,undefined (see docs/kernels.md, "Memory safety").
 *
 * usage: conv1d_sanitize [cases] [seed]; prints "ok <cases> <runs>" or the first mismatch.
 */
#define _POSIX_C_SOURCE 200809L /* threadpool.c: clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qrt/conv1d_threads.h"

/* libqrt_core's conv1d sources, compiled into this one translation unit (the variants carry
 * their target attributes, so the driver needs no -mavx2 / -mavx512* flags). */
#include "../../src/cpu.c"
#include "../../src/threadpool.c"
#include "../../src/conv1d_threads.c"
#include "../../src/conv1d_sources.inc"

static uint64_t rs = 88172645463325252ull;
static uint32_t rnd(uint32_t n) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs % n);
}

static const uint32_t EDGE[] = {1,  2,  3,  4,  5,  7,  8,  9,  15, 16, 17,
                                31, 32, 33, 47, 48, 49, 63, 64, 65, 97};
#define NEDGE (sizeof EDGE / sizeof EDGE[0])

int main(int argc, char **argv) {
    const int cases = argc > 1 ? atoi(argv[1]) : 200;
    if (argc > 2) rs += (uint64_t)atoll(argv[2]) * 0x9E3779B97F4A7C15ull;
    const int variants[] = {QRT_ISA_REF, QRT_ISA_AVX2, QRT_ISA_AVX512VNNI};
    const int threads[] = {1, 2, 3, 7};
    qrt_conv1d_mt_min_work = 0.0; /* cut every layer */
    long runs = 0;
    for (int c = 0; c < cases; ++c) {
        qrt_conv1d_params p;
        memset(&p, 0, sizeof p);
        /* 4: a dense 1x1 layer on a short row (channels in lanes); 5: a 1x1 layer (groups 1..3)
         * on a long row ending in 1..4 positions past a multiple of 16 (the VNNI row tail) */
        const int kind = (int)rnd(6);
        p.groups = kind == 0 ? EDGE[rnd(8)] : kind == 1 || kind == 5 ? 1 + rnd(3) : 1;
        const uint32_t cg = kind == 0 ? 1 : kind >= 4 ? 1 + rnd(200) : EDGE[rnd(NEDGE - 3)];
        const uint32_t og = kind == 0   ? 1 + rnd(2)
                            : kind >= 4 ? 1 + rnd(130)
                                        : EDGE[rnd(NEDGE - 2)];
        p.c_in = cg * p.groups;
        p.c_out = og * p.groups;
        p.n = 1 + rnd(3);
        p.kernel = 1 + rnd(9);
        p.stride = 1 + rnd(3);
        p.dilation = 1 + rnd(3);
        p.pad_left = rnd(p.kernel + 2);
        uint32_t pad_r = rnd(p.kernel + 2);
        uint32_t span = p.dilation * (p.kernel - 1) + 1;
        p.len_in = EDGE[rnd(NEDGE)] + (rnd(2) ? 0 : 100 + rnd(60));
        if (kind == 4) { /* kernel 1, stride 1, no padding, up to the path's longest row + 1 */
            p.kernel = p.stride = p.dilation = 1;
            p.pad_left = 0;
            pad_r = 0;
            span = 1;
            p.len_in = 1 + rnd(QRT_CONV1D_CL_MAX_LEN + 1);
        }
        if (kind == 5) {
            p.kernel = p.stride = p.dilation = 1;
            p.pad_left = 0;
            pad_r = 0;
            span = 1;
            p.len_in = 16 * (1 + rnd(13)) + (rnd(4) ? 1 + rnd(4) : rnd(16));
        }
        if (p.len_in + p.pad_left + pad_r < span) p.len_in = span;
        p.len_out = (p.len_in + p.pad_left + pad_r - span) / p.stride + 1;
        const int nlc = kind >= 4 ? 0 : (int)rnd(2); /* channels-last input (strided) */
        p.x_stride_t = nlc ? p.c_in : 1;
        p.x_stride_c = nlc ? 1 : p.len_in;
        p.x_stride_n = (int64_t)p.c_in * p.len_in;
        p.out_kind = rnd(4) == 0 ? QRT_CONV1D_OUT_F32 : QRT_CONV1D_OUT_U8;
        p.y_stride_t = 1;
        p.y_stride_c = p.len_out;
        p.y_stride_n = (int64_t)p.c_out * p.len_out;
        p.input_zero = (int32_t)rnd(256);
        p.output_zero = (int32_t)rnd(256);
        p.output_min = rnd(3) == 0 ? p.output_zero : 0;
        p.output_max = 255;
        if (rnd(4) == 0) { /* a fused clamp's ceiling (relu6) */
            const int32_t hi = 128 + (int32_t)rnd(127);
            p.output_max = hi < p.output_min ? p.output_min : hi;
        }
        const size_t nx = (size_t)p.n * p.c_in * p.len_in, nw = (size_t)p.c_out * cg * p.kernel;
        const size_t ny = (size_t)p.n * p.c_out * p.len_out, es = p.out_kind ? 4 : 1;
        uint8_t *x = malloc(nx);
        int8_t *w = malloc(nw);
        int32_t *wz = malloc(p.c_out * 4), *bq = malloc(p.c_out * 4), *wsum = malloc(p.c_out * 4);
        float *sc = malloc(p.c_out * 4), *bf = malloc(p.c_out * 4);
        const size_t npk = qrt_conv1d_packed_weight_size(p.c_out, cg, p.kernel);
        int8_t *wpack = malloc(npk);
        uint8_t *want = malloc(ny * es), *got = malloc(ny * es);
        for (size_t i = 0; i < nx; ++i) x[i] = (uint8_t)rnd(256);
        for (size_t i = 0; i < nw; ++i) w[i] = (int8_t)((int)rnd(256) - 128);
        const int asym = (int)rnd(2);
        for (uint32_t o = 0; o < p.c_out; ++o) {
            wz[o] = asym ? (int32_t)rnd(41) - 20 : 0;
            bq[o] = (int32_t)rnd(20001) - 10000;
            sc[o] = 1e-4f * (float)(1 + rnd(100));
            /* now and then a scale that sends y past int16 and int32 (cvtps2dq's INT32_MIN):
             * the saturating packs of the VNNI epilogues must still give clamp(rne(y) + zp) */
            if (rnd(16) == 0) sc[o] = 3e4f * (float)(1 + rnd(100));
            bf[o] = 0.01f * (float)((int)rnd(201) - 100);
        }
        qrt_conv1d_pack_weights(p.c_out, cg, p.kernel, w, wpack, wsum);
        /* the channels-in-lanes weight, exactly sized, for most dense 1x1 layers */
        int8_t *wcl = NULL;
        if (p.kernel == 1 && p.groups == 1 && rnd(4) != 0) {
            wcl = malloc(qrt_conv1d_cl_weight_size(p.c_out, p.c_in));
            qrt_conv1d_pack_cl(p.c_out, p.c_in, wpack, wcl);
        }
        /* the AVX2 variant's weight panels, exactly sized, for most layers (else it packs them
         * in its scratch) */
        int32_t *wa2 = NULL;
        if (rnd(4) != 0) {
            const size_t na2 = qrt_conv1d_a2_weight_size(p.c_out, cg, p.kernel, p.groups);
            wa2 = malloc(na2 ? na2 * 4u : 1u);
            qrt_conv1d_pack_a2(p.c_out, cg, p.kernel, p.groups, w, wz, wa2);
        }
        const qrt_conv1d_quant q = {wz, bq, sc, bf, wcl, wa2};
        qrt_conv1d_vnni_tail = rnd(4) != 0; /* the VNNI row tail, or one more vector */
        if (qrt_conv1d_u8_ref(&p, x, w, &q, want) != QRT_OK) {
            printf("ref rejected case %d\n", c);
            return 1;
        }
        for (size_t vi = 0; vi < sizeof variants / sizeof variants[0]; ++vi) {
            if (!qrt_conv1d_supports(variants[vi])) continue;
            for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ++ti) {
                qrt_pool_set_threads(threads[ti]);
                const size_t ns = qrt_conv1d_u8_mt_scratch_size(&p, &q, variants[vi], threads[ti]);
                /* held panels take no scratch room; only the AVX2 tile path has any */
                const size_t n0 =
                    qrt_conv1d_u8_mt_scratch_size(&p, NULL, variants[vi], threads[ti]);
                const int tiles = qrt_conv1d_u8_uses_a2_panels(&p, variants[vi]);
                if (tiles && !qrt_conv1d_supports(QRT_ISA_AVX2)) {
                    printf("case %d: variant %d reads AVX2 panels on a CPU without AVX2\n", c,
                           variants[vi]);
                    return 1;
                }
                /* (split over threads, a part may not use the panels: a part of one group of
                 * a grouped layer over a row of <= 4 positions is the GEMV path) */
                if (!wa2 ? ns != n0 : tiles && threads[ti] == 1 ? ns >= n0 : ns > n0) {
                    printf("case %d variant %d threads %d: scratch %zu with panels, %zu without\n",
                           c, variants[vi], threads[ti], ns, n0);
                    return 1;
                }
                void *scr = malloc(ns ? ns : 1);
                memset(got, 0xA5, ny * es);
                const qrt_status st = qrt_conv1d_u8_mt(&p, x, w, wpack, wsum, &q, got, scr, ns,
                                                       variants[vi], threads[ti]);
                free(scr);
                ++runs;
                if (st != QRT_OK || memcmp(got, want, ny * es) != 0) {
                    printf("MISMATCH case %d variant %d threads %d status %d: n %u cin %u cout %u "
                           "L %u K %u s %u d %u pad %u g %u out_kind %u\n",
                           c, variants[vi], threads[ti], (int)st, p.n, p.c_in, p.c_out, p.len_in,
                           p.kernel, p.stride, p.dilation, p.pad_left, p.groups, p.out_kind);
                    return 1;
                }
            }
        }
        free(x), free(w), free(wz), free(bq), free(wsum), free(sc), free(bf), free(wpack),
            free(wcl), free(wa2);
        free(want), free(got);
    }
    printf("ok %d %ld\n", cases, runs);
    return 0;
}

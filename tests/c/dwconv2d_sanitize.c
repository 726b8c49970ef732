/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_sanitize.c
 * @brief Memory-safety and value driver for the depthwise conv2d kernels (qrt/dwconv2d.h):
 *        random geometries (kernel, stride, dilation, padding up to the kernel's reach, 1x1
 *        images, odd sizes, channel multipliers 1-3, NCHW and NHWC input strides, per-channel
 *        weight zero points, relu / clamp bounds, huge requant scales; half the cases take
 *        the flat path of src/dwconv2d_impl.h: dilation 1, stride 1 or 2 (on AVX-512 VNNI the
 *        byte-plane path where the rows are contiguous, NHWC input the flat one); a quarter of the
 *        small ones have up to 70 channels: several channel blocks), input, output and
 *        scratch buffers malloc'ed to their exact size (AddressSanitizer sees any access past
 *        them); a quarter of the cases are small NCHW planes for the AVX-512 byte-permute
 *        path (any stride and dilation, kernels up to 5x5, weights w - wz inside int8 on most
 *        channels); every variant this CPU runs, on 1 and 3 threads (AVX-512 VNNI with and
 *        without the byte-permute path, aarch64 NEON with and without the sdot byte planes on
 *        dot-product CPUs), == the reference byte for byte.  Built with -fsanitize=address,undefined by tests/test_dwconv2d.py (and under
 *        qemu for the Arm variants).
 *
 * usage: dwconv2d_sanitize [cases] [seed]; prints "ok <cases> <bytes>" or the first mismatch.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/cpu.c"
#include "../../src/threadpool.c"
#include "../../src/dwconv2d.c"
#include "../../src/ref/dwconv2d_ref.c"
#ifdef QRT_HAVE_X86
#include "../../src/x86/dwconv2d_avx2.c"
#include "../../src/x86/dwconv2d_avx2_cl.c"
#include "../../src/x86/dwconv2d_avx512vnni.c"
#include "../../src/x86/dwconv2d_avx512vnni_cl.c"
#include "../../src/x86/dwconv2d_avx512vbmi.c"
#endif
#ifdef QRT_HAVE_ARM
#include "../../src/neon/dwconv2d_neon.c"
#include "../../src/neon/dwconv2d_neondot.c"
#endif

static uint64_t rs = 88172645463325252ull;
static uint32_t rnd(uint32_t n) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs % n);
}

static uint32_t out_len(uint32_t in, uint32_t k, uint32_t s, uint32_t p0, uint32_t p1,
                        uint32_t d) {
    const int64_t span = (int64_t)in + p0 + p1 - (int64_t)d * (k - 1) - 1;
    return span < 0 ? 0 : (uint32_t)(span / s + 1);
}

int main(int argc, char **argv) {
    const int cases = argc > 1 ? atoi(argv[1]) : 300;
    if (argc > 2) rs += (uint64_t)atoll(argv[2]);
    qrt_dwconv2d_mt_min_work = 0; /* thread every call that has two units */
    static const int isas[] = {QRT_ISA_AVX2, QRT_ISA_AVX512VNNI, QRT_ISA_NEON};
    uint64_t checked = 0;
    int done = 0, permuted = 0, dotted = 0, rowed = 0;
    while (done < cases) {
        qrt_dwconv2d_params p;
        memset(&p, 0, sizeof p);
        const int big = rnd(8) == 0, many = !big && rnd(4) == 0; /* many: channel blocks */
        p.n = 1 + rnd(2);
        p.c_in = 1 + rnd(big ? 40 : many ? 70 : 6);
        p.mult = 1 + (rnd(3) == 0 ? rnd(3) : 0);
        p.kh = 1 + rnd(big ? 3 : 6);
        p.kw = 1 + rnd(big ? 3 : 6);
        p.sh = 1 + rnd(rnd(6) == 0 ? 9 : 3);
        p.sw = 1 + rnd(rnd(6) == 0 ? 9 : 3);
        p.dh = 1 + rnd(3);
        p.dw = 1 + rnd(3);
        if (rnd(2)) { /* the flat path (dilation 1, stride 1 or 2 on both axes), 3x3 often */
            p.dh = p.dw = 1;
            p.sh = p.sw = 1 + rnd(2);
            if (rnd(2)) p.kh = p.kw = 3;
        }
        const int clk = rnd(4) == 0; /* the channels-in-lanes path: small planes, multiplier 1 */
        if (clk) {
            p.mult = 1;
            p.dh = p.dw = 1;
            p.sh = p.sw = 1 + rnd(2);
            p.kh = 1 + rnd(7);
            p.kw = rnd(2) ? p.kh : 1 + rnd(7);
            p.c_in = 1 + rnd(40);
        }
        const int pmk = !clk && rnd(4) == 0; /* the byte-permute path: small NCHW planes */
        if (pmk) {
            p.kh = 1 + rnd(5);
            p.kw = rnd(2) ? p.kh : 1 + rnd(5);
            p.sh = 1 + rnd(3);
            p.sw = rnd(2) ? p.sh : 1 + rnd(3);
            p.dh = 1 + (rnd(4) == 0);
            p.dw = 1 + (rnd(4) == 0);
            p.c_in = 1 + rnd(40);
        }
        const int rws = !clk && !pmk && rnd(3) == 0; /* AVX-512 stride-2 rows: wide rows */
        if (rws) {
            p.sh = p.sw = 2;
            p.dh = p.dw = 1;
            p.kh = 1 + rnd(6);
            p.kw = rnd(2) ? p.kh : 1 + rnd(8);
            p.c_in = 1 + rnd(12);
        }
        const uint32_t reach_h = p.dh * (p.kh - 1) + 1, reach_w = p.dw * (p.kw - 1) + 1;
        const uint32_t pt = rnd(reach_h + 1), pb = rnd(reach_h + 1), pl = rnd(reach_w + 1),
                       pr = rnd(reach_w + 1);
        p.h = 1 + rnd(big ? 70 : 12);
        p.w = 1 + rnd(big ? 140 : 40);
        if (clk) p.h = 1 + rnd(16), p.w = 1 + rnd(16);
        if (rws) p.h = 1 + rnd(rnd(4) == 0 ? 20 : 50), p.w = 36 + rnd(rnd(4) == 0 ? 300 : 120);
        if (pmk) p.h = 1 + rnd(34), p.w = 1 + rnd(34);
        p.pad_top = rws ? pt % p.kh : pt; /* rows: padding under the kernel */
        p.pad_left = rws ? pl % p.kw : pl;
        p.ho = out_len(p.h, p.kh, p.sh, p.pad_top, pb, p.dh);
        p.wo = out_len(p.w, p.kw, p.sw, p.pad_left, pr, p.dw);
        if (!p.ho || !p.wo) continue;
        const uint32_t c_out = p.c_in * p.mult;
        const int nhwc = !clk && !pmk && !rws && rnd(3) == 0;
        if (nhwc) {
            p.x_stride_c = 1;
            p.x_stride_w = p.c_in;
            p.x_stride_h = (int64_t)p.w * p.c_in;
            p.x_stride_n = (int64_t)p.h * p.w * p.c_in;
        } else {
            p.x_stride_w = 1;
            p.x_stride_h = p.w;
            p.x_stride_c = (int64_t)p.h * p.w;
            p.x_stride_n = (int64_t)p.c_in * p.h * p.w;
        }
        /* output rows / planes with a gap after each (as into a wider tensor) in some cases */
        const uint32_t gap = rnd(8) == 0 ? 1 + rnd(40) : 0, cgap = rnd(8) == 0 ? 1 + rnd(40) : 0;
        p.y_stride_h = p.wo + gap;
        p.y_stride_c = (int64_t)p.ho * p.y_stride_h + cgap;
        p.y_stride_n = (int64_t)c_out * p.y_stride_c;
        p.input_zero = (int32_t)rnd(256);
        p.output_zero = (int32_t)rnd(256);
        const int act = (int)rnd(3);
        p.output_min = act == 1 ? p.output_zero : act == 2 ? (int32_t)rnd(128) : 0;
        p.output_max = act == 2 ? 128 + (int32_t)rnd(128) : 255;
        const size_t xn = (size_t)p.n * p.c_in * p.h * p.w, yn = (size_t)p.n * p.y_stride_n;
        const size_t kk = (size_t)p.kh * p.kw;
        uint8_t *x = malloc(xn), *y0 = malloc(yn), *y1 = malloc(yn);
        int8_t *w = malloc(c_out * kk);
        int32_t *wz = malloc(c_out * 4), *bq = malloc(c_out * 4);
        float *sc = malloc(c_out * 4);
        const int extreme = rnd(4) == 0;
        for (size_t i = 0; i < xn; ++i) x[i] = extreme ? (rnd(2) ? 255 : 0) : (uint8_t)rnd(256);
        for (size_t i = 0; i < c_out * kk; ++i)
            w[i] = extreme ? (int8_t)(rnd(2) ? 127 : -128) : (int8_t)(rnd(256) - 128);
        for (uint32_t i = 0; i < c_out; ++i) {
            /* extreme with zero wz: -128 tap pairs on x = 0, whose pair sum 2 * 128 * 128 would
             * overflow NEON's int16 pair lanes (aarch64 byte planes: the widening kernel) */
            wz[i] = extreme ? (rnd(3) == 0 ? 0 : rnd(2) ? 127 : -128)
                            : (rnd(2) ? 0 : (int32_t)rnd(256) - 128);
            if (pmk && rnd(8) != 0) { /* w - wz inside int8: small zero points, or none */
                wz[i] = rnd(2) ? 0 : (int32_t)rnd(7) - 3;
                for (size_t t = 0; t < kk; ++t)
                    if (w[i * kk + t] > 124 || w[i * kk + t] < -124) w[i * kk + t] /= 2;
            }
            bq[i] = rnd(8) == 0 ? (int32_t)(2147483647u - rnd(1000)) : (int32_t)rnd(20001) - 10000;
            sc[i] = rnd(10) == 0 ? 3e30f : 1.0f / (float)(1 + rnd(20000));
        }
        /* the channels-in-lanes weight pairs, exactly sized, for most multiplier-1 layers */
        int32_t *wcl = NULL;
        if (p.mult == 1 && p.kh <= 7 && p.kw <= 7 && rnd(4) != 0) {
            wcl = malloc(qrt_dwconv2d_cl_weight_size(p.c_in, p.kh, p.kw));
            qrt_dwconv2d_pack_cl(p.c_in, p.kh, p.kw, w, wz, wcl);
        }
        qrt_conv1d_quant q = {wz, bq, sc, NULL, (const int8_t *)wcl};
        memset(y0, 0xA5, yn); /* the gaps keep it */
        if (qrt_dwconv2d_u8_ref(&p, x, w, &q, y0) != QRT_OK) {
            printf("reference refused case %d\n", done);
            return 1;
        }
        qrt_dwconv2d_permute = qrt_dwconv2d_dot = qrt_dwconv2d_rows = 1;
        permuted += qrt_dwconv2d_permute_path(&p, QRT_ISA_AVX512VNNI, wcl != NULL);
        rowed += !qrt_dwconv2d_permute_path(&p, QRT_ISA_AVX512VNNI, wcl != NULL) &&
                 !(wcl && qrt_dwconv2d_cl_path(&p, QRT_ISA_AVX512VNNI)) &&
                 qrt_dwconv2d_rows_path(&p, QRT_ISA_AVX512VNNI);
        dotted += qrt_dwconv2d_dot_path(&p, QRT_ISA_NEON, wcl != NULL);
        for (size_t v = 0; v < sizeof isas / sizeof isas[0]; ++v) {
            if (qrt_dwconv2d_variant(isas[v]) != isas[v]) continue;
            for (int run = 0; run < 6; ++run) {
                const int threads = 1 + 2 * (run & 1);
                if (run >= 2 && isas[v] != QRT_ISA_AVX512VNNI && isas[v] != QRT_ISA_NEON) break;
                if (run >= 4 && isas[v] != QRT_ISA_AVX512VNNI) break;
                /* runs 2, 3: the paths a CPU without VBMI / without the dot product takes;
                 * runs 4, 5: stride 2 through the byte planes rather than the rows in place */
                qrt_dwconv2d_permute = qrt_dwconv2d_dot = run < 2 || run >= 4;
                qrt_dwconv2d_rows = run < 4;
                const size_t need = qrt_dwconv2d_u8_scratch_size(&p, isas[v], threads);
                void *scr = malloc(need ? need : 1);
                memset(scr, 0x5A, need ? need : 1); /* the kernels write every zero they read */
                memset(y1, 0xA5, yn);
                const qrt_status st =
                    qrt_dwconv2d_u8(&p, x, w, &q, y1, scr, need, isas[v], threads);
                free(scr);
                if (st != QRT_OK || memcmp(y0, y1, yn)) {
                    size_t at = 0;
                    while (at < yn && y0[at] == y1[at]) ++at;
                    printf("mismatch case %d isa %s%s threads %d status %d at %zu: n%u c%u m%u "
                           "%ux%u k%ux%u s%ux%u d%ux%u pad %u,%u -> %ux%u nhwc %d\n",
                           done, qrt_isa_name(isas[v]), run < 2 ? "" : " (no permute / dot)", threads,
                           (int)st, at, p.n, p.c_in,
                           p.mult, p.h, p.w, p.kh, p.kw, p.sh, p.sw, p.dh, p.dw, p.pad_top, p.pad_left, p.ho,
                           p.wo, nhwc);
                    return 1;
                }
                checked += yn;
            }
        }
        free(x), free(y0), free(y1), free(w), free(wz), free(bq), free(sc), free(wcl);
        ++done;
    }
    printf("ok %d %llu permute-path %d dot-path %d rows-path %d\n", cases,
           (unsigned long long)checked, permuted, dotted, rowed);
    return 0;
}

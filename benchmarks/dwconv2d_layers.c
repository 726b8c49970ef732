/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_layers.c
 * @brief Per-layer timing of the depthwise conv2d kernel (qrt/dwconv2d.h) on MobileNetV2
 *        224's 17 depthwise layers (3x3, pad 1, NCHW, per-channel weights), one thread, the
 *        best variant (QRT_DISABLE_ISA=avx512vnni for AVX2).  Compiles the sources directly:
 *
 *   gcc -std=c11 -O2 -ffp-contract=off -Iinclude benchmarks/dwconv2d_layers.c -o dwl -lpthread -lm
 *   ./dwl [reps [layer [inner]]]   # per layer: channels, size, stride, median (min) us of
 *                                  # thread CPU time, GMAC/s of the median
 * layer (0-16, default all) and inner (calls per timed rep, default 20) let an instruction
 * counter (tools/qemu_insn_count.c) take one layer's count: reps 1 minus reps 0.
 * DWL_K=5 (env) runs the same layers with k x k kernels, padding k/2.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/cpu.c"
#include "../src/threadpool.c"
#include "../src/dwconv2d.c"
#include "../src/ref/dwconv2d_ref.c"
#ifdef QRT_HAVE_X86
#include "../src/x86/dwconv2d_avx2.c"
#include "../src/x86/dwconv2d_avx512vnni.c"
#endif
#ifdef QRT_HAVE_ARM
#include "../src/neon/dwconv2d_neon.c"
#endif

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* the host is shared: CPU time */
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 21;
    const int only = argc > 2 ? atoi(argv[2]) : -1, inner = argc > 3 ? atoi(argv[3]) : 20;
    static const unsigned L[17][3] = {{32, 112, 1},  {96, 112, 2},  {144, 56, 1}, {144, 56, 2},
                                      {192, 28, 1},  {192, 28, 1},  {192, 28, 2}, {384, 14, 1},
                                      {384, 14, 1},  {384, 14, 1},  {384, 14, 1}, {576, 14, 1},
                                      {576, 14, 1},  {576, 14, 2},  {960, 7, 1},  {960, 7, 1},
                                      {960, 7, 1}};
    double tot = 0, macs_all = 0;
    const char *ke = getenv("DWL_K");
    const unsigned K = ke && atoi(ke) > 0 ? (unsigned)atoi(ke) : 3;
    printf("isa %s\n", qrt_isa_name(qrt_dwconv2d_isa()));
    for (int l = 0; l < 17; ++l) {
        if (only >= 0 && l != only) continue;
        qrt_dwconv2d_params p;
        memset(&p, 0, sizeof p);
        const unsigned C = L[l][0], H = L[l][1], s = L[l][2];
        p.n = 1, p.c_in = C, p.mult = 1, p.h = p.w = H, p.kh = p.kw = K, p.sh = p.sw = s;
        p.dh = p.dw = 1, p.pad_top = p.pad_left = K / 2;
        p.ho = p.wo = (H + 2 * (K / 2) - K) / s + 1;
        p.x_stride_w = 1, p.x_stride_h = H, p.x_stride_c = (int64_t)H * H;
        p.x_stride_n = (int64_t)C * H * H;
        p.y_stride_h = p.wo, p.y_stride_c = (int64_t)p.ho * p.wo;
        p.y_stride_n = (int64_t)C * p.ho * p.wo;
        p.input_zero = 3, p.output_zero = 0, p.output_min = 0, p.output_max = 255;
        uint8_t *x = malloc((size_t)C * H * H), *y = malloc((size_t)C * p.ho * p.wo);
        int8_t *w = malloc((size_t)C * K * K);
        int32_t *wz = calloc(C, 4), *bq = calloc(C, 4);
        float *sc = malloc(C * 4);
        for (size_t i = 0; i < (size_t)C * H * H; ++i) x[i] = (uint8_t)(i * 37 + 11);
        for (size_t i = 0; i < (size_t)C * K * K; ++i) w[i] = (int8_t)(i * 13 - 50);
        for (unsigned i = 0; i < C; ++i) sc[i] = 1e-3f, bq[i] = (int32_t)i;
        qrt_conv1d_quant q = {wz, bq, sc, NULL};
        const size_t need = qrt_dwconv2d_u8_scratch_size(&p, -1, 1);
        void *scr = malloc(need);
        double t[101] = {0};
        const int r = reps > 101 ? 101 : reps;
        for (int i = 0; i < r; ++i) {
            const double t0 = now();
            for (int k = 0; k < inner; ++k) qrt_dwconv2d_u8(&p, x, w, &q, y, scr, need, -1, 1);
            t[i] = (now() - t0) / (inner > 0 ? inner : 1);
        }
        qsort(t, (size_t)r, sizeof t[0], cmp);
        const double macs = (double)C * p.ho * p.wo * K * K;
        printf("%2d %4u x %3u s%u -> %3u  %8.1f (%8.1f) us  %6.1f GMAC/s\n", l, C, H, s, p.ho,
               t[r / 2] * 1e6, t[0] * 1e6, macs / t[r / 2] * 1e-9);
        tot += t[r / 2], macs_all += macs;
        free(x), free(y), free(w), free(wz), free(bq), free(sc), free(scr);
    }
    printf("total %.1f us  %.1f GMAC/s\n", tot * 1e6, macs_all / tot * 1e-9);
    return 0;
}

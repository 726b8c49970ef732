/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_layers.c
 * @brief Per-layer timing of the depthwise conv2d kernel (qrt/dwconv2d.h) on the depthwise
 *        layers of MobileNetV2 224 (17 layers, 3x3, pad 1) and MobileNetV3-Large 224 (15
 *        layers, 3x3 / 5x5, pad k/2, strides 1 / 2), NCHW, per-channel weights, the best
 *        variant (QRT_DISABLE_ISA=avx512vnni for AVX2).  Compiles the sources directly:
 *
 *   gcc -std=c11 -O3 -ffp-contract=off -Iinclude benchmarks/dwconv2d_layers.c -o dwl -lpthread -lm
 *   (-O3 as meson builds the runtime: at -O2 the channels-in-lanes loops ran 1.5x slower;
 *   -DQRT_DWQ_OFF times the AVX-512 channels-in-lanes path's int16 pairs instead of its
 *   byte quads)
 *   ./dwl [reps [layer [inner [threads]]]]  # per layer: channels, size, kernel, stride, median
 *                                           # (min) us, GMAC/s of the median
 * Layers 0-16 are MobileNetV2's, 17-31 MobileNetV3-Large's; layer -1 (default) runs all.
 * inner (calls per timed rep, default 20) lets an instruction counter
 * (tools/qemu_insn_count.c) take one layer's count: reps 1 minus reps 0.  threads (default 1)
 * > 1 runs the qrt pool and times wall clock instead of the thread's CPU time.
 * DWL_K=5 (env) runs MobileNetV2's layers with 5x5 kernels, padding 2.  The channels-in-lanes
 * weight (qrt_dwconv2d_pack_cl) is passed as the runtime passes it; DWL_CL=0 leaves it out,
 * timing the flat path alone.  DWL_C=n runs every layer with n channels instead of its own
 * (a few channels keep a layer's planes in L1: the same GMAC/s there as with all of them says
 * the layer is not bound by memory).  DWL_PERM=0 turns the AVX-512 VBMI byte-permute path off
 * (qrt_dwconv2d_permute = 0: the paths a CPU without VBMI takes).  DWL_ROWS=0 runs the
 * AVX-512 VNNI stride-2 layers through the byte planes instead of their image rows in place.
 * DWL_BW=1 (x86 with AVX-512 VNNI) adds per layer its memory floor (one streaming pass that reads
 * the layer's input and writes its output, best of 200), the number of vpdpbusd its
 * multiply-adds alone take (kh * ceil(kw/4) per 16 outputs: at one a cycle, the compute floor
 * before any load or requantization; timed here at this core's vpdpbusd throughput), the layer's
 * time over its memory floor, and its time over its roofline floor (the larger of the two:
 * "compute side" where the vpdpbusd alone outlast the data's trip).  DWL_DOT=0 turns the aarch64
 * sdot byte planes off (qrt_dwconv2d_dot = 0: the paths a CPU without the dot product takes).
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
#include "../src/x86/dwconv2d_avx2_cl.c"
#include "../src/x86/dwconv2d_avx512vnni.c"
#include "../src/x86/dwconv2d_avx512vnni_cl.c"
#include "../src/x86/dwconv2d_avx512vbmi.c"
#endif
#ifdef QRT_HAVE_ARM
#include "../src/neon/dwconv2d_neon.c"
#include "../src/neon/dwconv2d_neondot.c"
#endif

static int g_wall; /* threads > 1: wall clock */
static double now(void) {
    struct timespec t;
    clock_gettime(g_wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &t); /* shared host */
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

#ifdef QRT_HAVE_X86
/* DWL_BW=1: the layer's memory floor, one streaming pass that reads x and writes y (the same
 * buffers the timed calls use, so they sit where the calls leave them: L2 / L3 here) */
__attribute__((target("avx512f"), noinline)) static int stream(const uint8_t *x, size_t n,
                                                               uint8_t *y, size_t m) {
    __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
    size_t i = 0;
    for (; i + 256 <= n; i += 256) {
        a = _mm512_add_epi32(a, _mm512_loadu_si512(x + i));
        b = _mm512_add_epi32(b, _mm512_loadu_si512(x + i + 64));
        c = _mm512_add_epi32(c, _mm512_loadu_si512(x + i + 128));
        d = _mm512_add_epi32(d, _mm512_loadu_si512(x + i + 192));
    }
    const __m512i v = _mm512_add_epi32(_mm512_add_epi32(a, b), _mm512_add_epi32(c, d));
    for (i = 0; i + 64 <= m; i += 64) _mm512_storeu_si512(y + i, v);
    return _mm_cvtsi128_si32(_mm512_castsi512_si128(v));
}

/* DWL_BW=1: seconds per vpdpbusd zmm at this core's throughput (12 independent chains, as
 * benchmarks/vnni_peak.c; best of 20), so a layer's multiply-adds alone have a time */
__attribute__((target("avx512f,avx512vnni"), noinline)) static double dp_seconds(void) {
    double best = 1e9;
    for (int r = 0; r < 20; ++r) {
        __m512i a[12];
        for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_epi32(i);
        const __m512i u = _mm512_set1_epi8(3), v = _mm512_set1_epi8(-2);
        const long n = 100000;
        const double t0 = now();
        for (long k = 0; k < n; ++k)
            for (int i = 0; i < 12; ++i) {
                a[i] = _mm512_dpbusd_epi32(a[i], u, v);
                __asm__ volatile("" : "+v"(a[i]));
            }
        const double dt = (now() - t0) / (12.0 * n);
        __m512i z = a[0];
        for (int i = 1; i < 12; ++i) z = _mm512_add_epi32(z, a[i]);
        volatile int sink = _mm_cvtsi128_si32(_mm512_castsi512_si128(z));
        (void)sink;
        best = dt < best ? dt : best;
    }
    return best;
}
#endif

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 21;
    const int only = argc > 2 ? atoi(argv[2]) : -1, inner = argc > 3 ? atoi(argv[3]) : 20;
    const int threads = argc > 4 && atoi(argv[4]) > 1 ? atoi(argv[4]) : 1;
    g_wall = threads > 1;
    qrt_pool_set_threads(threads);
    /* channels, input size, stride, kernel (0: DWL_K, default 3) */
    static const unsigned L[32][4] = {
        {32, 112, 1, 0},  {96, 112, 2, 0},  {144, 56, 1, 0}, {144, 56, 2, 0}, {192, 28, 1, 0},
        {192, 28, 1, 0},  {192, 28, 2, 0},  {384, 14, 1, 0}, {384, 14, 1, 0}, {384, 14, 1, 0},
        {384, 14, 1, 0},  {576, 14, 1, 0},  {576, 14, 1, 0}, {576, 14, 2, 0}, {960, 7, 1, 0},
        {960, 7, 1, 0},   {960, 7, 1, 0},
        /* MobileNetV3-Large */
        {16, 112, 1, 3},  {64, 112, 2, 3},  {72, 56, 1, 3},  {72, 56, 2, 5},  {120, 28, 1, 5},
        {120, 28, 1, 5},  {240, 28, 2, 3},  {200, 14, 1, 3}, {184, 14, 1, 3}, {184, 14, 1, 3},
        {480, 14, 1, 3},  {672, 14, 1, 3},  {672, 14, 2, 5}, {960, 7, 1, 5},  {960, 7, 1, 5}};
    double tot = 0, macs_all = 0, roof_all = 0, mem_all = 0, cf_all = 0;
    const char *ke = getenv("DWL_K"), *cn = getenv("DWL_C");
    const unsigned K0 = ke && atoi(ke) > 0 ? (unsigned)atoi(ke) : 3;
    const char *pe = getenv("DWL_PERM"); /* 0: without the byte-permute path */
    if (pe && atoi(pe) == 0) qrt_dwconv2d_permute = 0;
    const char *re = getenv("DWL_ROWS"); /* 0: stride 2 through the byte planes (x86) */
    if (re && atoi(re) == 0) qrt_dwconv2d_rows = 0;
    const char *de = getenv("DWL_DOT"); /* 0: without the sdot byte planes (aarch64) */
    if (de && atoi(de) == 0) qrt_dwconv2d_dot = 0;
    printf("isa %s threads %d\n", qrt_isa_name(qrt_dwconv2d_isa()), threads);
    for (int l = 0; l < 32; ++l) {
        if (only >= 0 && l != only) continue;
        qrt_dwconv2d_params p;
        memset(&p, 0, sizeof p);
        const unsigned C = cn && atoi(cn) > 0 ? (unsigned)atoi(cn) : L[l][0], H = L[l][1], s = L[l][2], K = L[l][3] ? L[l][3] : K0;
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
        /* the channels-in-lanes weight, as the runtime passes it (DWL_CL=0: the flat path) */
        const char *ce = getenv("DWL_CL");
        int32_t *wcl = malloc(qrt_dwconv2d_cl_weight_size(C, K, K));
        qrt_dwconv2d_pack_cl(C, K, K, w, wz, wcl);
        qrt_conv1d_quant q = {wz, bq, sc, NULL, ce && atoi(ce) == 0 ? NULL : (const int8_t *)wcl};
        const size_t need = qrt_dwconv2d_u8_scratch_size(&p, -1, threads);
        void *scr = malloc(need);
        double t[101] = {0};
        const int r = reps > 101 ? 101 : reps;
        for (int i = 0; i < r; ++i) {
            const double t0 = now();
            for (int k = 0; k < inner; ++k) qrt_dwconv2d_u8(&p, x, w, &q, y, scr, need, -1, threads);
            t[i] = (now() - t0) / (inner > 0 ? inner : 1);
        }
        qsort(t, (size_t)r, sizeof t[0], cmp);
        const double macs = (double)C * p.ho * p.wo * K * K;
        printf("%2d %4u x %3u k%u s%u -> %3u  %8.1f (%8.1f) us  %6.1f GMAC/s\n", l, C, H, K, s,
               p.ho, t[r / 2] * 1e6, t[0] * 1e6, macs / t[r / 2] * 1e-9);
        tot += t[r / 2], macs_all += macs;
#ifdef QRT_HAVE_X86
        const char *bw = getenv("DWL_BW");
        if (bw && atoi(bw) && (qrt_cpu_features() & QRT_CPU_AVX512VNNI)) {
            const size_t xb = (size_t)C * H * H, yb = (size_t)C * p.ho * p.wo;
            double best = 1e9;
            int sink = 0;
            for (int i = 0; i < 200; ++i) {
                const double t0 = now();
                sink += stream(x, xb, y, yb);
                const double dt = now() - t0;
                best = dt < best ? dt : best;
            }
            /* the multiply-adds alone: kh * ceil(kw / 4) vpdpbusd per 16 outputs and channel */
            const double dp = (double)C * ((p.ho * p.wo + 15) / 16) * K * ((K + 3) / 4);
            static double tdp;
            if (tdp == 0) tdp = dp_seconds();
            /* the roofline: the larger of the two floors bounds any exact int8 kernel */
            const double cf = dp * tdp, roof = cf > best ? cf : best;
            printf("   memory floor %.1f us (%.0f GB/s, %d)  vpdpbusd %.3f M = %.1f us  time / "
                   "memory floor %.2f  time / roofline %.2f (%s side)\n",
                   best * 1e6, (double)(xb + yb) / best * 1e-9, sink & 1, dp * 1e-6, cf * 1e6,
                   t[r / 2] / best, t[r / 2] / roof, cf > best ? "compute" : "memory");
            roof_all += roof, mem_all += best, cf_all += cf;
        }
#endif
        free(x), free(y), free(w), free(wz), free(bq), free(sc), free(scr), free(wcl);
    }
    printf("total %.1f us  %.1f GMAC/s\n", tot * 1e6, macs_all / tot * 1e-9);
    if (roof_all > 0)
        printf("floors: memory %.1f us, vpdpbusd %.1f us, roofline %.1f us; time / roofline %.2f\n",
               mem_all * 1e6, cf_all * 1e6, roof_all * 1e6, tot / roof_all);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pointwise_layers.c
 * @brief Kernel-only timing of MobileNetV2 224's 1x1 convolutions (the 19 shapes of
 *        benchmarks/pointwise.py) on the conv1d kernel (qrt/conv1d.h), one thread, the best
 *        variant, with the weights packed as a plan packs them (the channels-in-lanes weight
 *        for rows of at most QRT_CONV1D_CL_MAX_LEN positions).  No Python, no output
 *        allocation: the figure to hold against benchmarks/vnni_peak.c.
 *
 *   gcc -std=c11 -O3 -ffp-contract=off -Iinclude benchmarks/pointwise_layers.c -o pwl \
 *       -lpthread -lm
 *   ./pwl [reps [layer [peak_gmacs [copies]]]]
 *
 * copies (default 8): the layer's weights are held in that many copies, called in turn, so a
 * call finds its weight cold as a model call does (every layer of a model runs once per call,
 * after layers that filled the caches with their own weights): 8 copies of the big 7x7 layers
 * (0.3-0.4 MB each) are past L2, 64 (26 MB for 1280 <- 320) past this VM's share of L3; small
 * layers need more copies to leave the caches.  copies 1 keeps one hot copy.  The input row
 * is the same for every call (in a model it was just written by the layer before).  PWL_TAIL=0
 * runs a 14x14 row's last 4 positions (196 = 12 x 16 + 4; 7x7 rows take the channels-in-lanes
 * path) as one more 16-position vector instead of the AVX-512 VNNI row tail
 * (qrt_conv1d_vnni_tail).  Per layer: median (min) microseconds of the
 * thread's CPU time per call, GMAC/s of the median, % of peak_gmacs (default 0: not printed).
 */
#define _ISOC11_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/cpu.c"
#include "../src/threadpool.c"
#include "../src/conv1d_sources.inc"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* shared host: the thread's own time */
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* 64-byte aligned, as qrt.Storage holds every weight and activation */
static void *amalloc(size_t n) {
    return aligned_alloc(64, (n + 63u) & ~(size_t)63u);
}

static int cmp(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MAXC 64

int main(int argc, char **argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 21;
    const int only = argc > 2 ? atoi(argv[2]) : -1;
    const double peak = argc > 3 ? atof(argv[3]) : 0.0;
    int copies = argc > 4 ? atoi(argv[4]) : 8;
    copies = copies < 1 ? 1 : copies > MAXC ? MAXC : copies;
    const char *te = getenv("PWL_TAIL");
    if (te && atoi(te) == 0) qrt_conv1d_vnni_tail = 0;
    /* c_in, c_out, h*w, relu, count in the model */
    static const unsigned L[19][5] = {
        {32, 16, 112 * 112, 0, 1}, {16, 96, 112 * 112, 1, 1}, {96, 24, 56 * 56, 0, 1},
        {24, 144, 56 * 56, 1, 2},  {144, 24, 56 * 56, 0, 1},  {144, 32, 28 * 28, 0, 1},
        {32, 192, 28 * 28, 1, 3},  {192, 32, 28 * 28, 0, 2},  {192, 64, 14 * 14, 0, 1},
        {64, 384, 14 * 14, 1, 4},  {384, 64, 14 * 14, 0, 3},  {384, 96, 14 * 14, 0, 1},
        {96, 576, 14 * 14, 1, 3},  {576, 96, 14 * 14, 0, 2},  {576, 160, 7 * 7, 0, 1},
        {160, 960, 7 * 7, 1, 3},   {960, 160, 7 * 7, 0, 2},   {960, 320, 7 * 7, 0, 1},
        {320, 1280, 7 * 7, 1, 1}};
    printf("isa %s, %d weight cop%s\n", qrt_isa_name(qrt_conv1d_isa()), copies,
           copies == 1 ? "y (hot)" : "ies called in turn (cold)");
    double tot = 0, macs_all = 0;
    for (int l = 0; l < 19; ++l) {
        if (only >= 0 && l != only) continue;
        const unsigned ci = L[l][0], co = L[l][1], hw = L[l][2];
        qrt_conv1d_params p;
        memset(&p, 0, sizeof p);
        p.n = 1, p.c_in = ci, p.c_out = co, p.len_in = p.len_out = hw, p.kernel = 1;
        p.stride = p.dilation = p.groups = 1;
        p.x_stride_n = (int64_t)ci * hw, p.x_stride_c = hw, p.x_stride_t = 1;
        p.y_stride_n = (int64_t)co * hw, p.y_stride_c = hw, p.y_stride_t = 1;
        p.input_zero = 3, p.output_zero = 0, p.output_min = 0, p.output_max = 255;
        if (L[l][3]) p.output_max = 200; /* a fused relu6's ceiling */
        p.out_kind = QRT_CONV1D_OUT_U8;
        uint8_t *x = amalloc((size_t)ci * hw), *y = amalloc((size_t)co * hw);
        for (size_t i = 0; i < (size_t)ci * hw; ++i) x[i] = (uint8_t)(i * 37 + 11);
        int32_t *wz = calloc(co, 4), *bq = calloc(co, 4);
        float *sc = malloc(co * 4);
        for (unsigned i = 0; i < co; ++i) sc[i] = 1e-4f * (1 + i % 7), bq[i] = (int32_t)i * 5;
        int8_t *w = malloc((size_t)co * ci), *wp[MAXC], *wcl[MAXC];
        int32_t *ws[MAXC];
        const size_t wpn = qrt_conv1d_packed_weight_size(co, ci, 1);
        const int cl = hw <= QRT_CONV1D_CL_MAX_LEN;
        for (int k = 0; k < copies; ++k) {
            for (size_t i = 0; i < (size_t)co * ci; ++i)
                w[i] = (int8_t)((i * 13 + k * 7) % 255 - 127);
            wp[k] = amalloc(wpn), ws[k] = amalloc(co * 4u);
            qrt_conv1d_pack_weights(co, ci, 1, w, wp[k], ws[k]);
            wcl[k] = NULL;
            if (cl) {
                wcl[k] = amalloc(qrt_conv1d_cl_weight_size(co, ci));
                qrt_conv1d_pack_cl(co, ci, wp[k], wcl[k]);
            }
        }
        qrt_conv1d_quant q = {wz, bq, sc, NULL, NULL, NULL, NULL};
        const size_t need = qrt_conv1d_u8_scratch_size(&p, &q, -1);
        void *scr = amalloc(need ? need : 1);
        double t[101] = {0};
        const int r = reps > 101 ? 101 : reps < 1 ? 1 : reps;
        const int inner = 4 * copies;
        for (int i = -1; i < r; ++i) { /* i = -1: warm-up */
            const double t0 = now();
            for (int k = 0; k < inner; ++k) {
                const int c = k % copies;
                q.wpack_cl = wcl[c];
                if (qrt_conv1d_u8(&p, x, w, wp[c], ws[c], &q, y, scr, need, -1) != QRT_OK) {
                    printf("layer %d: call failed\n", l);
                    return 1;
                }
            }
            if (i >= 0) t[i] = (now() - t0) / inner;
        }
        qsort(t, (size_t)r, sizeof t[0], cmp);
        const double macs = (double)ci * co * hw, g = macs / t[r / 2] * 1e-9;
        printf("%2d %4u -> %4u x %5u  %8.1f (%8.1f) us  %6.1f GMAC/s", l, ci, co, hw,
               t[r / 2] * 1e6, t[0] * 1e6, g);
        if (peak > 0) printf("  %3.0f %%", 100.0 * g / peak);
        printf("\n");
        tot += t[r / 2] * L[l][4], macs_all += macs * L[l][4];
        for (int k = 0; k < copies; ++k) free(wp[k]), free(ws[k]), free(wcl[k]);
        free(x), free(y), free(w), free(wz), free(bq), free(sc), free(scr);
    }
    printf("model's 1x1 layers (x counts): %.1f us  %.1f GMAC/s\n", tot * 1e6,
           macs_all / tot * 1e-9);
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file eltwise_sanitize.c
 * @brief Memory-safety and value driver for the quantized mul (qrt/qarith.h), the table
 *        lookups (qrt/activation.h) and the QNNPACK add (qrt/add.h): lengths 0..200 around the vector widths and longer, odd
 *        tails, unaligned pointers (buffers malloc'ed to their exact size, so AddressSanitizer
 *        sees any access past them), in-place calls, per-row and full operands, zero points
 *        at 0 / 255 and outside the variants' domain, multipliers from 0 and subnormal to
 *        3e38 and negative, clamp bounds at and beyond the code range, non-integer bounds and
 *        zero points; every variant this CPU runs, on 1 and 3 threads (thresholds off), ==
 *        the reference byte for byte.  Built with -fsanitize=address,undefined by
 *        tests/test_eltwise_kernels.py (and run under qemu for the NEON variants).
 *
 * usage: eltwise_sanitize [cases] [seed]; prints "ok <cases> <bytes>" or the first mismatch.
 */
#define _POSIX_C_SOURCE 200809L /* threadpool.c: clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/cpu.c"
#include "../../src/threadpool.c"
#include "../../src/qarith.c"
#include "../../src/activation.c"
#include "../../src/add.c"
#include "../../src/ref/qarith_ref.c"
#include "../../src/ref/activation_ref.c"
#include "../../src/ref/add_ref.c"
#ifdef QRT_HAVE_X86
#include "../../src/x86/qarith_avx2.c"
#include "../../src/x86/qarith_avx512.c"
#include "../../src/x86/add_avx2.c"
#include "../../src/x86/add_avx512.c"
#include "../../src/x86/activation_avx2.c"
#include "../../src/x86/activation_avx512vbmi.c"
#endif
#ifdef QRT_HAVE_ARM
#include "../../src/neon/qarith_neon.c"
#include "../../src/neon/activation_neon.c"
#endif

static uint64_t rs = 88172645463325252ull;
static uint32_t rnd(uint32_t n) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs % n);
}

static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)rnd(1u << 24) / 16777216.0f; }

static size_t rnd_len(void) {
    switch (rnd(4)) {
    case 0: return rnd(201);                      /* 0..200: every tail */
    case 1: return 64u * (1 + rnd(8)) - 1 + rnd(3); /* around the vector widths */
    case 2: return 1 + rnd(40);
    default: return rnd(3000);
    }
}

static uint8_t *dup_at(const uint8_t *src, size_t n, size_t off, uint8_t **base) {
    *base = malloc(n + off ? n + off : 1); /* exact size from the (unaligned) start */
    if (n) memcpy(*base + off, src, n);
    return *base + off;
}

static const int isas[] = {QRT_ISA_AVX2, QRT_ISA_AVX512VNNI, QRT_ISA_NEON};

static int runs(int isa, int best) {
    if (isa > best) return 0;
#ifdef QRT_HAVE_X86
    return isa == QRT_ISA_AVX2 || isa == QRT_ISA_AVX512VNNI;
#else
    return isa == QRT_ISA_NEON;
#endif
}

static int mismatch(const char *what, int c, int isa, int threads, const uint8_t *y0,
                    const uint8_t *y1, size_t n) {
    size_t at = 0;
    while (at < n && y0[at] == y1[at]) ++at;
    printf("%s mismatch case %d isa %s threads %d n %zu at %zu: %u != %u\n", what, c,
           qrt_isa_name(isa), threads, n, at, y1[at], y0[at]);
    return 1;
}

static int mul_case(int c, uint64_t *bytes) {
    const int per_row = (int)rnd(2);
    const size_t rows = 1 + rnd(per_row ? 12 : 3), len = rnd_len() / (per_row ? 4 : 1);
    const size_t n = rows * len, nb = per_row ? rows : n;
    int32_t za = (int32_t)rnd(256), zb = (int32_t)rnd(256);
    if (rnd(6) == 0) za = rnd(2) ? 0 : 255;
    if (rnd(6) == 0) zb = rnd(2) ? 0 : 255;
    if (rnd(20) == 0) za = (int32_t)rnd(600) - 300; /* outside the variants' domain */
    float m;
    switch (rnd(8)) {
    case 0: m = 0.0f; break;
    case 1: m = 1e-40f; break; /* subnormal */
    case 2: m = rnd(2) ? 3e38f : 70.0f; break; /* products past the 2^22 clamp */
    case 3: m = -rndf(1e-4f, 0.1f); break;
    case 4: m = (float)(1 + rnd(4)) * 0.5f; break; /* exact halves: ties to even */
    default: m = rndf(1e-5f, 0.05f); break;
    }
    float zo = (float)rnd(256), lo = -zo, hi = 255.0f - zo;
    switch (rnd(6)) {
    case 0: lo = 0.0f; break; /* relu */
    case 1: lo = rndf(-300.0f, 0.0f); hi = lo + rndf(0.0f, 600.0f); break; /* beyond, odd */
    case 2: zo = rndf(-3.0f, 258.0f); break; /* a non-integer zero point */
    case 3: lo = hi = (float)rnd(256) - zo; break;
    case 4: lo = -1e9f; hi = 1e9f; break; /* int32 codes past the byte */
    default: break;
    }
    uint8_t *a = malloc(n ? n : 1), *b = malloc(nb ? nb : 1), *y0 = malloc(n ? n : 1);
    const int extreme = rnd(4) == 0;
    for (size_t i = 0; i < n; ++i) a[i] = extreme ? (rnd(2) ? 255 : 0) : (uint8_t)rnd(256);
    for (size_t i = 0; i < nb; ++i) b[i] = extreme ? (rnd(2) ? 255 : 0) : (uint8_t)rnd(256);
    qrt_mul_rows_u8_ref(a, b, rows, len, per_row, za, zb, m, lo, hi, zo, y0);
    int bad = 0;
    const int best = qrt_mul_isa();
    for (size_t v = 0; v < sizeof isas / sizeof isas[0] && !bad; ++v) {
        if (!runs(isas[v], best)) continue;
        for (int threads = 1; threads <= 3 && !bad; threads += 2) {
            uint8_t *ab, *bb, *yb;
            const int inplace = rnd(3) == 0;
            uint8_t *a1 = dup_at(a, n, rnd(64), &ab), *b1 = dup_at(b, nb, rnd(64), &bb);
            uint8_t *y1 = inplace ? a1 : dup_at(a, n, rnd(64), &yb);
            if (!inplace) memset(y1, 0xA5, n);
            qrt_mul_rows_u8_mt(a1, b1, rows, len, per_row, za, zb, m, lo, hi, zo, y1, isas[v],
                               threads);
            if (memcmp(y0, y1, n)) bad = mismatch("mul", c, isas[v], threads, y0, y1, n);
            free(ab);
            free(bb);
            if (!inplace) free(yb);
            *bytes += n;
        }
    }
    free(a);
    free(b);
    free(y0);
    return bad;
}

/* The QNNPACK add (qrt/add.h): random qparams QNNPACK accepts, exact-size unaligned buffers,
 * in place or not, every x86 variant (Arm runs the reference: nothing to compare). */
static int add_case(int c, uint64_t *bytes) {
    qrt_add_qnnp_params p;
    const float sa = rndf(1e-3f, 1.0f), sb = rndf(1e-3f, 1.0f);
    const float so = (sa > sb ? sa : sb) * rndf(0.7f, 30.0f);
    if (qrt_add_qnnp_params_init(sa, (int32_t)rnd(256), sb, (int32_t)rnd(256), so,
                                 (int32_t)rnd(255), (int)rnd(2), &p) != QRT_OK)
        return 0;
    const size_t n = rnd_len();
    uint8_t *a = malloc(n ? n : 1), *b = malloc(n ? n : 1), *y0 = malloc(n ? n : 1);
    const int extreme = rnd(4) == 0;
    for (size_t i = 0; i < n; ++i) a[i] = extreme ? (rnd(2) ? 255 : 0) : (uint8_t)rnd(256);
    for (size_t i = 0; i < n; ++i) b[i] = extreme ? (rnd(2) ? 255 : 0) : (uint8_t)rnd(256);
    qrt_add_u8_ref(&p, a, b, n, y0);
    int bad = 0;
    const int best = qrt_add_isa();
    for (size_t v = 0; v < sizeof isas / sizeof isas[0] && !bad; ++v) {
        if (!runs(isas[v], best)) continue;
        uint8_t *ab, *bb, *yb;
        const int inplace = rnd(3) == 0;
        uint8_t *a1 = dup_at(a, n, rnd(64), &ab), *b1 = dup_at(b, n, rnd(64), &bb);
        uint8_t *y1 = inplace ? a1 : dup_at(a, n, rnd(64), &yb);
        if (!inplace) memset(y1, 0xA5, n);
        qrt_add_u8(&p, a1, b1, n, y1, isas[v]);
        if (memcmp(y0, y1, n)) bad = mismatch("add", c, isas[v], 1, y0, y1, n);
        free(ab);
        free(bb);
        if (!inplace) free(yb);
        *bytes += n;
    }
    free(a);
    free(b);
    free(y0);
    return bad;
}

static int lut_case(int c, uint64_t *bytes) {
    uint8_t tv[256], ts[256];
    for (int i = 0; i < 256; ++i) tv[i] = (uint8_t)rnd(256), ts[i] = (uint8_t)rnd(256);
    const size_t n = rnd(3) == 0 ? 256 + rnd(200) : rnd_len();
    const size_t nvec = rnd(2) ? n : (n ? rnd((uint32_t)n + 1) : 0);
    uint8_t *x = malloc(n ? n : 1), *y0 = malloc(n ? n : 1);
    for (size_t i = 0; i < n; ++i) x[i] = n >= 256 && i < 256 ? (uint8_t)i : (uint8_t)rnd(256);
    qrt_lut2_u8_ref(tv, ts, x, n, nvec, y0);
    int bad = 0;
    const int best = qrt_lut_isa();
    for (size_t v = 0; v < sizeof isas / sizeof isas[0] && !bad; ++v) {
        if (!runs(isas[v], best)) continue;
        for (int threads = 1; threads <= 3 && !bad; threads += 2) {
            uint8_t *xb, *yb, *tb;
            const int inplace = rnd(3) == 0;
            uint8_t *x1 = dup_at(x, n, rnd(64), &xb);
            uint8_t *t1 = dup_at(tv, 256, rnd(64), &tb); /* an unaligned table */
            uint8_t *y1 = inplace ? x1 : dup_at(x, n, rnd(64), &yb);
            if (!inplace) memset(y1, 0xA5, n);
            qrt_lut2_u8_mt(t1, ts, x1, n, nvec, y1, isas[v], threads);
            if (memcmp(y0, y1, n)) bad = mismatch("lut", c, isas[v], threads, y0, y1, n);
            free(xb);
            free(tb);
            if (!inplace) free(yb);
            *bytes += n;
        }
    }
    free(x);
    free(y0);
    return bad;
}

int main(int argc, char **argv) {
    const int cases = argc > 1 ? atoi(argv[1]) : 2000;
    if (argc > 2) rs += (uint64_t)atoll(argv[2]);
    qrt_mul_mt_min = qrt_lut_mt_min = 0; /* thread every call that has two 64-code runs */
    uint64_t bytes = 0;
    for (int c = 0; c < cases; ++c)
        if (mul_case(c, &bytes) || lut_case(c, &bytes) || add_case(c, &bytes)) return 1;
    printf("ok %d %llu mul:%s lut:%s add:%s\n", cases, (unsigned long long)bytes,
           qrt_isa_name(qrt_mul_isa()), qrt_isa_name(qrt_lut_isa()), qrt_isa_name(qrt_add_isa()));
    return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_float_harness.c
 * @brief The NEON float GEMV (src/neon/rnn_float_neon.c) against the reference
 *        qrt_linear_f32_ref (src/rnn_float.c), bit for bit, on aarch64 under qemu-user.
 *        Freestanding (raw syscalls, no libc: tests/test_rnn_float.py cross-compiles it with
 *        a math.h that maps fmaf to the compiler builtin, an FMA instruction on aarch64).
 *        Outputs carry canaries after their end, which must survive.
 *
 * usage: rnn_float_harness; prints "ok <cases> <outputs>" (exit 0) or "FAIL ..." (exit 1).
 */
#include <stddef.h>
#include <stdint.h>

#if !defined(__aarch64__)
#error "aarch64 only (the x86-64 AVX2 variant is checked from Python)"
#endif
static long sys3(long nr, long a, long b, long c) {
    register long x8 __asm__("x8") = nr, x0 __asm__("x0") = a, x1 __asm__("x1") = b,
                     x2 __asm__("x2") = c;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    return x0;
}
#define SYS_WRITE 64
#define SYS_EXIT  93

void *memcpy(void *d, const void *s, size_t n) {
    unsigned char *a = d;
    const unsigned char *b = s;
    while (n--) *a++ = *b++;
    return d;
}
void *memset(void *d, int v, size_t n) {
    unsigned char *a = d;
    while (n--) *a++ = (unsigned char)v;
    return d;
}
int memcmp(const void *x, const void *y, size_t n) {
    const unsigned char *a = x, *b = y;
    for (; n; n--, a++, b++)
        if (*a != *b) return *a < *b ? -1 : 1;
    return 0;
}
size_t strlen(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}
unsigned qrt_cpu_features(void) { return ~0u; }

#include "../../src/neon/rnn_float_neon.c"
#include "../../src/rnn_float.c"

static void put(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    sys3(SYS_WRITE, 1, (long)s, (long)n);
}
static void put_int(long v) {
    char b[24];
    int i = 23;
    b[i] = 0;
    if (v == 0) b[--i] = '0';
    while (v > 0) {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    }
    put(b + i);
}

static uint64_t rs = 88172645463325252ull;
static float rnd(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (float)((int)(rs >> 40) % 20001 - 10000) / 1337.0f;
}

#define MAXK 130
#define MAXN 264
#define MAXR 9
static float x[MAXR * MAXK], wp[(MAXN / 8 + 1) * MAXK * 8], b[MAXN];
static float y0[MAXR * MAXN + 8], y1[MAXR * MAXN + 8];

static int run(void) {
    static const int ks[] = {1, 3, 7, 8, 9, 16, 40, 63, 64, 65, 130};
    static const int ns[] = {1, 3, 4, 5, 8, 9, 13, 31, 32, 33, 256, 264};
    long cases = 0, outs = 0;
    for (int a = 0; a < 11; a++)
        for (int c = 0; c < 12; c++)
            for (int rows = 1; rows <= MAXR; rows += 2)
                for (int bias = 0; bias < 2; bias++) {
                    const int k = ks[a], n = ns[c], P = (n + 7) / 8;
                    for (int i = 0; i < rows * k; i++) x[i] = rnd();
                    memset(wp, 0, sizeof(float) * (size_t)P * k * 8);
                    for (int o = 0; o < n; o++) {
                        b[o] = rnd();
                        for (int i = 0; i < k; i++) wp[(o / 8) * k * 8 + i * 8 + o % 8] = rnd();
                    }
                    for (int i = 0; i < rows * n + 8; i++) y0[i] = y1[i] = -7.0f;
                    qrt_linear_f32_ref(x, k, rows, wp, k, n, bias ? b : 0, y0, n);
                    qrt_linear_f32(x, k, rows, wp, k, n, bias ? b : 0, y1, n, -1);
                    if (memcmp(y0, y1, sizeof(float) * (size_t)(rows * n + 8))) {
                        put("FAIL k=");
                        put_int(k);
                        put(" n=");
                        put_int(n);
                        put(" rows=");
                        put_int(rows);
                        put("\n");
                        return 1;
                    }
                    cases++;
                    outs += rows * n;
                }
    if (qrt_linear_f32_isa() != QRT_ISA_NEON) {
        put("FAIL: the NEON variant was not selected\n");
        return 1;
    }
    put("ok ");
    put_int(cases);
    put(" ");
    put_int(outs);
    put("\n");
    return 0;
}

__asm__(".global _start\n_start:\n mov x0, sp\n bl start_c\n");
void start_c(long *sp) {
    (void)sp;
    sys3(SYS_EXIT, run(), 0, 0);
    for (;;) {
    }
}

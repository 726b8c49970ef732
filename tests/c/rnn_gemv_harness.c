/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file rnn_gemv_harness.c
 * @brief Random-geometry check of the packed recurrent GEMVs (include/qrt/rnn_gemv.h) against
 *        the formula, bit for bit: neon on aarch64 / armv7, avx2 on x86-64 (tests/test_rnn_gemv.py
 *        also compares every x86 variant's whole loop with the reference loop in the build).  Freestanding (raw syscalls, no libc), so
 *        tests/test_rnn_gemv.py cross-compiles it without a target libc and runs it under
 *        qemu-user.  Rows 1..300 and columns 1..200 around every block edge, full-range
 *        weights, zero points and inputs; a canary after y must survive.
 *
 * usage: rnn_gemv_harness [cases]; prints "ok <cases> <outputs>" (exit 0) or the first
 * mismatch (exit 1).
 */
#include <stddef.h>
#include <stdint.h>

#if defined(__aarch64__)
static long sys6(long nr, long a, long b, long c, long d, long e, long f) {
    register long x8 __asm__("x8") = nr, x0 __asm__("x0") = a, x1 __asm__("x1") = b,
                     x2 __asm__("x2") = c, x3 __asm__("x3") = d, x4 __asm__("x4") = e,
                     x5 __asm__("x5") = f;
    __asm__ volatile("svc #0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
}
#define SYS_WRITE    64
#define SYS_EXIT     93
#define SYS_MMAP     222
#define SYS_MPROTECT 226
#elif defined(__arm__)
static long sys6(long nr, long a, long b, long c, long d, long e, long f) {
    register long r7 __asm__("r7") = nr, r0 __asm__("r0") = a, r1 __asm__("r1") = b,
                     r2 __asm__("r2") = c, r3 __asm__("r3") = d, r4 __asm__("r4") = e,
                     r5 __asm__("r5") = f;
    __asm__ volatile("svc #0"
                     : "+r"(r0)
                     : "r"(r7), "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5)
                     : "memory");
    return r0;
}
#define SYS_WRITE    4
#define SYS_EXIT     1
#define SYS_MMAP     192 /* mmap2: offset in pages (0 here) */
#define SYS_MPROTECT 125
#elif defined(__x86_64__)
static long sys6(long nr, long a, long b, long c, long d, long e, long f) {
    long ret;
    register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#define SYS_WRITE    1
#define SYS_EXIT     60
#define SYS_MMAP     9
#define SYS_MPROTECT 10
#endif
/* What the compiler may call even freestanding. */
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
#if defined(__arm__)
/* libgcc's 64-bit division calls raise() on a division by zero (never happens here). */
int raise(int sig) {
    (void)sig;
    return 0;
}
#endif

#include "../../src/rnn_gemv.c"
#if defined(__aarch64__) || defined(__arm__)
#include "../../src/neon/rnn_neon.c"
#else
#include "../../src/x86/rnn_avx2.c"
#endif

/* what the units call outside the GEMV (never reached here) */
unsigned qrt_cpu_features(void) { return 0; }
void qrt_quantize_f32_u8(const float *x, size_t n, float inv, float zpf, float qminf,
                         float qmaxf, uint8_t *out, int variant) {
    (void)x, (void)n, (void)inv, (void)zpf, (void)qminf, (void)qmaxf, (void)out, (void)variant;
}
void qrt_choose_qparams_u8(float mn, float mx, double *scale, int32_t *zp) {
    (void)mn, (void)mx;
    *scale = 1.0, *zp = 0;
}

static uint64_t rs = 88172645463325252ull;
static uint32_t rnd(uint32_t n) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs % n);
}
static float rndf(void) { return ((float)rnd(2000001) - 1000000.0f) / 65536.0f; }

static char msg[256];
static size_t msg_len;
static void put_s(const char *s) {
    while (*s && msg_len < sizeof msg - 1) msg[msg_len++] = *s++;
}
static void put_i(long long v) {
    char b[24];
    int n = 0;
    unsigned long long u = v < 0 ? (unsigned long long)(-v) : (unsigned long long)v;
    do {
        b[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) b[n++] = '-';
    while (n) msg[msg_len < sizeof msg - 1 ? msg_len++ : msg_len] = b[--n];
}

#define RMAX 300
#define CMAX 200
static int8_t w[RMAX * CMAX];
static uint8_t x[CMAX], pk[4 * (RMAX + 16) + (RMAX + 16) * (CMAX + 4) * 2];
static int32_t wz[RMAX];
static float ws[RMAX], bias[RMAX], y[RMAX + 16], want[RMAX];

static int run(int cases, int isa) {
    long long outs = 0;
    for (int k = 0; k < cases; k++) {
        const uint32_t rows = k % 3 ? 1 + rnd(40) : 1 + rnd(RMAX), cols = k % 2 ? 1 + rnd(20) :
                                                                         1 + rnd(CMAX);
        const int32_t zx = (int32_t)rnd(256);
        const float s = 1.0f / (float)(1 + rnd(5000));
        for (uint32_t i = 0; i < rows * cols; i++) w[i] = (int8_t)(rnd(256) - 128);
        for (uint32_t i = 0; i < cols; i++) x[i] = (uint8_t)(k % 5 ? rnd(256) : 255 * rnd(2));
        for (uint32_t o = 0; o < rows; o++) {
            wz[o] = (int32_t)rnd(256) - 128;
            ws[o] = (1.0f + (float)rnd(1000)) / 16384.0f;
            bias[o] = rndf();
            int32_t acc = 0;
            for (uint32_t i = 0; i < cols; i++)
                acc += ((int32_t)x[i] - zx) * ((int32_t)w[o * cols + i] - wz[o]);
            want[o] = (float)acc * (ws[o] * s) + bias[o];
        }
        for (uint32_t o = rows; o < rows + 16; o++) y[o] = -7.0f; /* canary */
        const size_t n = qrt_rnn_gemv_pack_size(rows, cols, isa);
        if (n == 0 || n > sizeof pk) return put_s("bad pack size"), 1;
        qrt_rnn_gemv_pack(w, rows, cols, isa, pk);
#if defined(__aarch64__) || defined(__arm__)
        qrt_rnn_gemv_u8__neon(pk, rows, cols, x, zx, wz, ws, s, bias, y);
#else
        qrt_rnn_gemv_u8__avx2(pk, rows, cols, x, zx, wz, ws, s, bias, y);
#endif
        for (uint32_t o = 0; o < rows + 16; o++) {
            uint32_t a, b;
            const float e = o < rows ? want[o] : -7.0f;
            memcpy(&a, &y[o], 4);
            memcpy(&b, &e, 4);
            if (a != b) {
                put_s("mismatch case "), put_i(k), put_s(" rows "), put_i(rows), put_s(" cols "),
                    put_i(cols), put_s(" row "), put_i(o), put_s("\n");
                return 1;
            }
        }
        outs += rows;
    }
    put_s("ok "), put_i(cases), put_s(" "), put_i(outs), put_s("\n");
    return 0;
}

static int parse(const char *s) {
    int v = 0;
    while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    return v;
}

int harness_main(long argc, char **argv) {
#if defined(__aarch64__) || defined(__arm__)
    const int isa = QRT_ISA_NEON;
#else
    const int isa = QRT_ISA_AVX2;
#endif
    const int r = run(argc > 1 ? parse(argv[1]) : 2000, isa);
    sys6(SYS_WRITE, 1, (long)msg, (long)msg_len, 0, 0, 0);
    return r;
}

/* _start: the kernel puts argc at [sp], argv after it; a C shim reads them. */
#if defined(__aarch64__)
__asm__(".global _start\n_start:\n mov x0, sp\n bl start_c\n");
#elif defined(__arm__)
__asm__(".global _start\n_start:\n mov r0, sp\n bic sp, sp, #7\n bl start_c\n");
#elif defined(__x86_64__)
__asm__(".global _start\n_start:\n mov %rsp, %rdi\n and $-16, %rsp\n call start_c\n");
#endif

void start_c(long *sp) {
    sys6(SYS_EXIT, harness_main(sp[0], (char **)(sp + 1)), 0, 0, 0, 0, 0);
    for (;;) {
    }
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool1d_harness.c
 * @brief Random-geometry check of the SIMD pooling variants against the reference:
 *        neon/pool1d_neon.h on aarch64 / armv7, x86/pool1d_avx2.h on x86-64.  Freestanding
 *        (raw syscalls, no libc), so tests/test_pool1d_neon.py cross-compiles it without a
 *        target libc and runs it under qemu-user.
 *
 * Every case: max / avg (QNNP, GENERIC, GENERIC_VEC, count_include_pad both ways) / adaptive
 * avg pooling, quint8 and qint8, kernel 1..8, stride 1..4, padding, dilation, ceil_mode,
 * lengths around the vector edges up to 200, N*C 1..70.  The input touches a PROT_NONE page
 * (after its end, or before its start, alternately), so a load outside it faults; outputs
 * carry canary bytes before and after, which must survive.
 *
 * usage: pool1d_harness [cases]; prints "ok <cases> <outputs>" (exit 0) or the first mismatch
 * (exit 1).
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
#if defined(__arm__) && !defined(__ARM_FEATURE_DIRECTED_ROUNDING)
/* armv7 has no vrintx: round to nearest-even with the 2^23 trick (exact in the default
 * rounding mode, which is what libm's rintf does there too). */
float rintf(float x) {
    const float big = 8388608.0f;
    float a = x < 0 ? -x : x;
    if (!(a < big)) return x; /* NaN, inf, or already integral */
    float r = (a + big) - big;
    return x < 0 ? -r : (r == 0 ? 0.0f * x : r);
}
#endif

/* The kernels' sources themselves, in this one translation unit (the variants carry their
 * target attributes, so no -mavx2 / -mfpu flag is needed). */
#include "../../src/ref/pool1d_ref.c"
#if defined(__aarch64__) || defined(__arm__)
#include "../../src/neon/pool1d_neon.c"
#define VARIANT(name) name##__neon
#else
#include "../../src/x86/pool1d_avx2.c"
#define VARIANT(name) name##__avx2
#endif

static uint64_t rs = 88172645463325252ull;
static uint32_t rnd(uint32_t n) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs % n);
}

static char msg[512];
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
static void flush(void) {
    sys6(SYS_WRITE, 1, (long)msg, (long)msg_len, 0, 0, 0);
    msg_len = 0;
}

static const uint32_t EDGES[] = {1,   2,   3,   4,   5,   7,   8,   9,   15,  16, 17, 31,
                                 32,  33,  34,  47,  48,  63,  64,  65,  66,  95, 96, 97,
                                 127, 128, 129, 130, 131, 160, 191, 192, 193, 200};
#define NEDGES     (sizeof EDGES / sizeof EDGES[0])
#define PAGE       4096
#define DATA_PAGES 4 /* 70 * 200 bytes fit */
#define CANARY     16
#define OUT_MAX    (70 * 216) /* len_out <= len_in + 2 * pad (pad <= 4 here) + 1 */

static uint8_t out_a[CANARY + OUT_MAX + CANARY], out_b[CANARY + OUT_MAX + CANARY];

static long long torch_len_out(long long L, long long k, long long s, long long p, long long d,
                               int ceil_mode) {
    long long num = L + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
    if (num < 0) return 0;
    long long lo = num / s + 1;
    if (ceil_mode && (lo - 1) * s >= L + p) lo -= 1;
    return lo;
}

/* kinds: 0 max, 1 avg QNNP (u8), 2 avg GENERIC, 3 avg GENERIC_VEC, 4 adaptive */
static int run_one(int kind, int sgn, const qrt_pool1d_params *p, const uint8_t *x) {
    const size_t n = (size_t)p->rows * p->len_out;
    for (size_t i = 0; i < sizeof out_a; ++i) out_a[i] = out_b[i] = (uint8_t)rnd(256);
    uint8_t *ya = out_a + CANARY, *yb = out_b + CANARY;
    if (kind == 0) {
        if (sgn) {
            qrt_max_pool1d_s8_ref(p, (const int8_t *)x, (int8_t *)ya);
            VARIANT(qrt_max_pool1d_s8)(p, (const int8_t *)x, (int8_t *)yb);
        } else {
            qrt_max_pool1d_u8_ref(p, x, ya);
            VARIANT(qrt_max_pool1d_u8)(p, x, yb);
        }
    } else if (kind == 4) {
        if (sgn) {
            qrt_adaptive_avg_pool1d_s8_ref(p, (const int8_t *)x, (int8_t *)ya);
            VARIANT(qrt_adaptive_avg_pool1d_s8)(p, (const int8_t *)x, (int8_t *)yb);
        } else {
            qrt_adaptive_avg_pool1d_u8_ref(p, x, ya);
            VARIANT(qrt_adaptive_avg_pool1d_u8)(p, x, yb);
        }
    } else {
        if (sgn) {
            qrt_avg_pool1d_s8_ref(p, (const int8_t *)x, (int8_t *)ya);
            VARIANT(qrt_avg_pool1d_s8)(p, (const int8_t *)x, (int8_t *)yb);
        } else {
            qrt_avg_pool1d_u8_ref(p, x, ya);
            VARIANT(qrt_avg_pool1d_u8)(p, x, yb);
        }
    }
    for (size_t i = 0; i < CANARY + n + CANARY; ++i)
        if (out_a[i] != out_b[i]) {
            put_s("mismatch kind ");
            put_i(kind);
            put_s(sgn ? " s8" : " u8");
            put_s(" rows ");
            put_i(p->rows);
            put_s(" L ");
            put_i(p->len_in);
            put_s(" Lo ");
            put_i(p->len_out);
            put_s(" k ");
            put_i(p->kernel);
            put_s(" s ");
            put_i(p->stride);
            put_s(" p ");
            put_i(p->pad);
            put_s(" d ");
            put_i(p->dilation);
            put_s(" cip ");
            put_i(p->count_include_pad);
            put_s(" at ");
            put_i((long long)i - CANARY);
            put_s(" ref ");
            put_i(out_a[i]);
            put_s(" variant ");
            put_i(out_b[i]);
            put_s("\n");
            flush();
            return 1;
        }
    return 0;
}

static int run(int cases) {
    /* [guard][DATA_PAGES readable][guard] */
    long m = sys6(SYS_MMAP, 0, (DATA_PAGES + 2) * PAGE, 3 /* RW */, 0x22 /* PRIVATE|ANON */, -1, 0);
    if (m < 0 && m > -4096) return 3;
    uint8_t *base = (uint8_t *)m;
    if (sys6(SYS_MPROTECT, (long)base, PAGE, 0, 0, 0, 0) != 0 ||
        sys6(SYS_MPROTECT, (long)(base + (DATA_PAGES + 1) * PAGE), PAGE, 0, 0, 0, 0) != 0)
        return 3;
    uint8_t *lo_edge = base + PAGE, *hi_edge = base + (DATA_PAGES + 1) * PAGE;
    long long outputs = 0;
    for (int c = 0; c < cases; ++c) {
        qrt_pool1d_params p;
        memset(&p, 0, sizeof p);
        const int kind = (int)rnd(5);
        const int sgn = kind == 1 ? 0 : (int)rnd(2);
        static const uint32_t ROWS[] = {1, 1, 2, 3, 7, 16, 31, 32, 33, 64, 70};
        p.rows = ROWS[rnd(sizeof ROWS / sizeof ROWS[0])];
        p.len_in = EDGES[rnd(NEDGES)];
        p.kernel = 1 + rnd(8);
        p.stride = rnd(3) ? 1 + rnd(4) : 1 + rnd(2);
        p.dilation = kind == 0 && rnd(2) ? 1 + rnd(3) : 1;
        p.pad = rnd(3) ? rnd(p.kernel / 2 + 1) : 0;
        const int ceil_mode = (int)rnd(2);
        p.qmin = sgn ? -128 : 0;
        p.qmax = sgn ? 127 : 255;
        p.zero = sgn ? (int32_t)rnd(256) - 128 : (int32_t)rnd(256);
        p.mode = kind == 1   ? QRT_AVG_POOL_QNNP
                 : kind == 3 ? QRT_AVG_POOL_GENERIC_VEC
                             : QRT_AVG_POOL_GENERIC;
        p.count_include_pad = (int32_t)rnd(2);
        p.scale = (float)(1 + rnd(2000)) / 1024.0f;
        if (kind == 4) {
            p.len_out = rnd(2) ? 1 : 1 + rnd(p.len_in);
            p.kernel = p.stride = p.dilation = 1;
            p.pad = 0;
        } else {
            const long long lo =
                torch_len_out(p.len_in, p.kernel, p.stride, p.pad, p.dilation, ceil_mode);
            if (lo < 1) continue;
            p.len_out = (uint32_t)lo;
            if (qrt_pool1d_check(&p) != QRT_OK) continue;
        }
        if ((size_t)p.rows * p.len_out > OUT_MAX)
            return 5; /* the harness's own bound: never expected */
        const size_t nb = (size_t)p.rows * p.len_in;
        uint8_t *x = (c & 1) ? hi_edge - nb : lo_edge;
        for (size_t i = 0; i < nb; ++i) x[i] = (uint8_t)rnd(256);
        if (rnd(8) == 0) /* saturated inputs */
            for (size_t i = 0; i < nb; ++i)
                x[i] = (uint8_t)(sgn ? ((i & 1) ? 0x7f : 0x80) : ((i & 1) ? 0xff : 0));
        if (run_one(kind, sgn, &p, x)) return 1;
        outputs += (long long)p.rows * p.len_out;
    }
    put_s("ok ");
    put_i(cases);
    put_s(" ");
    put_i(outputs);
    put_s("\n");
    flush();
    return 0;
}

static int parse(const char *s) {
    int v = 0;
    while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    return v;
}

int harness_main(long argc, char **argv) {
    return run(argc > 1 ? parse(argv[1]) : 3000);
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

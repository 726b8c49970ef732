/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file quant_harness.c
 * @brief Runs include/qrt/quant.h's dispatched kernels on stdin -> stdout, freestanding, so
 * tests can cross-compile it for aarch64 / armv7 without a target libc and run it under
 * qemu-user (tests/test_quant.py::test_cross_platform_kernels_match).
 *
 * stdin:  uint32 n, uint32 m, float inv, float zpf, float scale, double scale_d, int32 zp,
 *         float x[n], uint8 q8[256], int32 q32[m]            (n <= 65536, m <= 4096)
 * stdout: uint8 fu8[n], int8 fs8[n], uint8 su8[n], int8 ss8[n], int32 s32[n],
 *         float du8[256], ds8[256], d32[m], pu8[256], ps8[256], p32[m]
 */
#include <stddef.h>
#include <stdint.h>

#if defined(__aarch64__)
static long sys3(long nr, long a, long b, long c) {
    register long x8 __asm__("x8") = nr, x0 __asm__("x0") = a, x1 __asm__("x1") = b,
                     x2 __asm__("x2") = c;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    return x0;
}
#define SYS_READ  63
#define SYS_WRITE 64
#define SYS_EXIT  93
#elif defined(__arm__)
static long sys3(long nr, long a, long b, long c) {
    register long r7 __asm__("r7") = nr, r0 __asm__("r0") = a, r1 __asm__("r1") = b,
                     r2 __asm__("r2") = c;
    __asm__ volatile("svc #0" : "+r"(r0) : "r"(r7), "r"(r1), "r"(r2) : "memory");
    return r0;
}
#define SYS_READ  3
#define SYS_WRITE 4
#define SYS_EXIT  1
#elif defined(__x86_64__)
static long sys3(long nr, long a, long b, long c) {
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}
#define SYS_READ  0
#define SYS_WRITE 1
#define SYS_EXIT  60
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

/* The kernels' sources themselves (on Arm: the reference and its dispatcher, no libc). */
#define QRT_QUANT_FREESTANDING 1 /* no cpu.c here: quant.c runs its loop bodies only */
#include "../../src/ref/quant_ref.c"
#include "../../src/quant.c"

#define NMAX 65536
#define MMAX 4096
static unsigned char in_buf[32 + NMAX * 4 + 256 + MMAX * 4];
static unsigned char out_buf[NMAX * 8 + 4 * (1024 + 2 * MMAX)];

static void put(size_t *off, const void *p, size_t n) {
    memcpy(out_buf + *off, p, n);
    *off += n;
}

static int run(void) {
    size_t got = 0;
    long r;
    while ((r = sys3(SYS_READ, 0, (long)(in_buf + got), (long)(sizeof in_buf - got))) > 0)
        got += (size_t)r;
    uint32_t n, m;
    float inv, zpf, scale;
    double scale_d;
    int32_t zp;
    memcpy(&n, in_buf, 4);
    memcpy(&m, in_buf + 4, 4);
    memcpy(&inv, in_buf + 8, 4);
    memcpy(&zpf, in_buf + 12, 4);
    memcpy(&scale, in_buf + 16, 4);
    memcpy(&scale_d, in_buf + 20, 8);
    memcpy(&zp, in_buf + 28, 4);
    if (n > NMAX || m > MMAX || got != 32 + (size_t)n * 4 + 256 + (size_t)m * 4) return 3;
    static float x[NMAX], d8[1024], d32[2 * MMAX];
    static int32_t q32[MMAX], s32[NMAX];
    static uint8_t q8[256], fu8[NMAX], su8[NMAX];
    static int8_t fs8[NMAX], ss8[NMAX];
    memcpy(x, in_buf + 32, (size_t)n * 4);
    memcpy(q8, in_buf + 32 + (size_t)n * 4, 256);
    memcpy(q32, in_buf + 32 + (size_t)n * 4 + 256, (size_t)m * 4);
    float zu = zpf < 0 ? 0 : (zpf > 255 ? 255 : zpf);
    float zs = zpf < -128 ? -128 : (zpf > 127 ? 127 : zpf);
    qrt_quantize_f32_u8(x, n, inv, zu, 0.0f, 255.0f, fu8, -1);
    qrt_quantize_f32_s8(x, n, inv, zs, -128.0f, 127.0f, fs8, -1);
    qrt_quantize_scalar_f32_u8(x, n, inv, zu, 0.0, 255.0, su8, -1);
    qrt_quantize_scalar_f32_s8(x, n, inv, zs, -128.0, 127.0, ss8, -1);
    qrt_quantize_scalar_f32_s32(x, n, inv, zpf, s32, -1);
    qrt_dequantize_u8_f32(q8, 256, scale, (int32_t)zu, d8, -1);
    qrt_dequantize_s8_f32((const int8_t *)q8, 256, scale, (int32_t)zs, d8 + 256, -1);
    qrt_dequantize_s32_f32(q32, m, scale, zp, d32, -1);
    qrt_dequantize_pc_u8_f32(q8, 256, scale_d, zu, d8 + 512, -1);
    qrt_dequantize_pc_s8_f32((const int8_t *)q8, 256, scale_d, zs, d8 + 768, -1);
    qrt_dequantize_pc_s32_f32(q32, m, scale_d, zpf, d32 + m, -1);
    size_t off = 0;
    put(&off, fu8, n);
    put(&off, fs8, n);
    put(&off, su8, n);
    put(&off, ss8, n);
    put(&off, s32, (size_t)n * 4);
    put(&off, d8, 512 * 4);
    put(&off, d32, (size_t)m * 4);
    put(&off, d8 + 512, 512 * 4);
    put(&off, d32 + m, (size_t)m * 4);
    size_t done = 0;
    while (done < off) {
        r = sys3(SYS_WRITE, 1, (long)(out_buf + done), (long)(off - done));
        if (r <= 0) return 4;
        done += (size_t)r;
    }
    return 0;
}

void _start(void) {
    sys3(SYS_EXIT, run(), 0, 0);
    for (;;) {
    }
}

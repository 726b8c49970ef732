/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file freestanding_arm.h
 * @brief What the freestanding Arm harnesses (no target libc: built with -ffreestanding
 *        -nostdlib -static and run under qemu-user) need from an OS: sys6() for the read,
 *        write, exit, mmap and mprotect system calls of aarch64 and armv7, and the memcpy /
 *        memset (and, on armv7, libgcc's raise) that the compiler may call, and out() / outi()
 *        for the report.  Included once, by
 *        the harness's one translation unit.
 */
#ifndef QRT_TESTS_FREESTANDING_ARM_H
#define QRT_TESTS_FREESTANDING_ARM_H

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
#define SYS_READ     63
#define SYS_WRITE    64
#define SYS_EXIT     93
#define SYS_MMAP     222 /* offset in bytes */
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
#define SYS_READ     3
#define SYS_WRITE    4
#define SYS_EXIT     1
#define SYS_MMAP     192 /* mmap2: offset in pages */
#define SYS_MPROTECT 125
#else
#error "an Arm harness"
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
/* libgcc's 64-bit division reports a division by zero through raise() */
int raise(int sig) {
    sys6(SYS_EXIT, 100 + sig, 0, 0, 0, 0, 0);
    return 0;
}
#endif

/* Output: a string, and an integer followed by a space, on stdout. */
static void out(const char *s) {
    size_t n = 0;
    while (s[n]) ++n;
    sys6(SYS_WRITE, 1, (long)s, (long)n, 0, 0, 0);
}
static void outi(int64_t v) {
    char b[24];
    int i = 23;
    const int neg = v < 0;
    uint64_t u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    b[i] = 0;
    do {
        b[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (neg) b[--i] = '-';
    out(b + i);
    out(" ");
}

#endif /* QRT_TESTS_FREESTANDING_ARM_H */

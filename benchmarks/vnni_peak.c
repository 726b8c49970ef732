/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file vnni_peak.c
 * @brief The int8 ceiling of this core: 12 independent vpdpbusd zmm chains (64 u8 x s8 MACs each),
 *        timed against a dependent 1-cycle add chain for the clock.  The figure for
 *        `python benchmarks/conv1d.py --peak`.
 *
 *     gcc -O2 -mavx512f -mavx512vnni benchmarks/vnni_peak.c -o /tmp/vnni_peak && /tmp/vnni_peak
 *
 * "per cycle" uses the add chain's clock, which may run faster than the AVX-512 clock, so it
 * understates the instruction rate; GMAC/s is the number that matters.
 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
__attribute__((target("avx512f,avx512vnni"), noinline)) __m512i run(long n, __m512i a, __m512i b) {
    __m512i c0 = a, c1 = b, c2 = a, c3 = b, c4 = a, c5 = b, c6 = a, c7 = b, c8 = a, c9 = b, c10 = a,
            c11 = b;
    for (long i = 0; i < n; i++) {
        __asm__ volatile("vpdpbusd %12,%13,%0\n vpdpbusd %12,%13,%1\n vpdpbusd %12,%13,%2\n "
                         "vpdpbusd %12,%13,%3\n"
                         "vpdpbusd %12,%13,%4\n vpdpbusd %12,%13,%5\n vpdpbusd %12,%13,%6\n "
                         "vpdpbusd %12,%13,%7\n"
                         "vpdpbusd %12,%13,%8\n vpdpbusd %12,%13,%9\n vpdpbusd %12,%13,%10\n "
                         "vpdpbusd %12,%13,%11\n"
                         : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5), "+v"(c6),
                           "+v"(c7), "+v"(c8), "+v"(c9), "+v"(c10), "+v"(c11)
                         : "v"(a), "v"(b));
    }
    return _mm512_add_epi32(
        _mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3)),
        _mm512_add_epi32(_mm512_add_epi32(c4, c5),
                         _mm512_add_epi32(_mm512_add_epi32(c6, c7),
                                          _mm512_add_epi32(_mm512_add_epi32(c8, c9),
                                                           _mm512_add_epi32(c10, c11)))));
}
__attribute__((noinline)) long chain(long n) {
    long x = 0;
    for (long i = 0; i < n; i++) {
        __asm__ volatile("add $1,%0\n add $1,%0\n add $1,%0\n add $1,%0\n" : "+r"(x));
    }
    return x;
}
int main(void) {
    __m512i a = _mm512_set1_epi32(1), b = _mm512_set1_epi32(2);
    double best = 1e9, bc = 1e9;
    long n = 10000000;
    for (int r = 0; r < 7; r++) {
        double t0 = now();
        volatile __m512i z = run(n, a, b);
        (void)z;
        double dt = now() - t0;
        if (dt < best) best = dt;
        t0 = now();
        volatile long q = chain(n);
        (void)q;
        dt = now() - t0;
        if (dt < bc) bc = dt;
    }
    double ghz = 4.0 * n / bc / 1e9;
    printf("clock %.2f GHz; vpdpbusd zmm %.2f per cycle; %.1f GMAC/s\n", ghz,
           12.0 * n / best / 1e9 / ghz, 12.0 * n * 64 / best / 1e9);
}

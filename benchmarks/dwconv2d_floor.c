/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d_floor.c
 * @brief The floor of the AVX-512 VBMI byte-permute depthwise loop (docs/kernels.md 4f, "Byte
 *        permute"): cycles per group of 16 outputs of a 3x3 kernel (3 vpermt2b + 3 vpdpbusd),
 *        with the path's other work added step by step, on L1-resident data, so that
 *        benchmarks/dwconv2d_layers.c's times can be read against it:
 *
 *   gcc -O2 -mavx512f -mavx512bw -mavx512vnni -mavx512vbmi benchmarks/dwconv2d_floor.c \
 *       -o /tmp/dwfloor && /tmp/dwfloor
 *
 *   core      the 3 permutes and 3 dot products of 4 independent groups, windows and
 *             indices in registers
 *   +loads    the two 64-byte window loads (byte 127 set to input_zero by a blend) and the 3
 *             index vectors from a table, per group, as the path does
 *   +requant  cvtdq2ps / mulps / cvtps2dq per group, QNNPACK's saturating packs and clamp of
 *             4 groups and one 64-byte store (the last line: no store)
 * The clock is a dependent 1-cycle add chain (as benchmarks/vnni_peak.c).  A 3x3 group is 144
 * multiply-adds, so GMAC/s = 144 * clock / cycles.
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define QRT_F __attribute__((target("avx512f,avx512bw,avx512vnni,avx512vbmi"), noinline))

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint8_t xbuf[8192 + 256] __attribute__((aligned(64)));
static uint8_t ybuf[4096 + 64] __attribute__((aligned(64)));
static __m512i itab[3 * 64];

__attribute__((noinline)) static long chain(long n) {
    long x = 0;
    for (long i = 0; i < n; i++)
        __asm__ volatile("add $1,%0\n add $1,%0\n add $1,%0\n add $1,%0\n" : "+r"(x));
    return x;
}

/* mode 0: core, 1: +loads, 2: +requant, 3: +requant without the store; n iterations of 4
 * groups */
QRT_F static __m512i run(int mode, long n) {
    const __m512i w0 = _mm512_set1_epi32(0x01fe03fd), w1 = _mm512_set1_epi32(0x02fd04fc),
                  w2 = _mm512_set1_epi32(0x05), vxz = _mm512_set1_epi8(3),
                  i0 = _mm512_load_si512(itab), i1 = _mm512_load_si512(itab + 1),
                  i2 = _mm512_load_si512(itab + 2), vb = _mm512_set1_epi32(100);
    const __m512 vs = _mm512_set1_ps(1e-3f);
    const __m512i voz = _mm512_set1_epi16(5), vlo = _mm512_setzero_si512(),
                  vhi = _mm512_set1_epi8((char)255),
                  tr = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m512i sink = _mm512_setzero_si512();
    __m512i A, B, W[5];
    for (int g = 0; g < 5; ++g) W[g] = _mm512_loadu_si512(xbuf + 64 * g);
    for (long it = 0; it < n; ++it) {
        __m512i acc[4];
        for (int g = 0; g < 4; ++g) {
            __m512i j0 = i0, j1 = i1, j2 = i2;
            if (mode == 0) { /* four windows in registers */
                A = W[g];
                B = W[g + 1];
            } else {
                const uint8_t *s = xbuf + ((it * 4 + g) * 16 & 8191);
                const __m512i *t = itab + 3 * ((it * 4 + g) & 63);
                A = _mm512_loadu_si512(s);
                B = _mm512_mask_blend_epi8((__mmask64)1 << 63, _mm512_loadu_si512(s + 64), vxz);
                j0 = _mm512_load_si512(t), j1 = _mm512_load_si512(t + 1),
                j2 = _mm512_load_si512(t + 2);
            }
            __m512i a = vb;
            a = _mm512_dpbusd_epi32(a, _mm512_permutex2var_epi8(A, j0, B), w0);
            a = _mm512_dpbusd_epi32(a, _mm512_permutex2var_epi8(A, j1, B), w1);
            a = _mm512_dpbusd_epi32(a, _mm512_permutex2var_epi8(A, j2, B), w2);
            acc[g] = a;
        }
        if (mode >= 2) {
            __m512i r[4];
            for (int g = 0; g < 4; ++g)
                r[g] = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[g]), vs));
            const __m512i lo = _mm512_adds_epi16(_mm512_packs_epi32(r[0], r[1]), voz),
                          hi = _mm512_adds_epi16(_mm512_packs_epi32(r[2], r[3]), voz);
            const __m512i o = _mm512_permutexvar_epi32(
                tr, _mm512_min_epu8(_mm512_max_epu8(_mm512_packus_epi16(lo, hi), vlo), vhi));
            if (mode == 2)
                _mm512_storeu_si512(ybuf + (it * 64 & 4095), o);
            else
                sink = _mm512_xor_si512(sink, o);
        } else {
            sink = _mm512_xor_si512(sink, _mm512_xor_si512(_mm512_xor_si512(acc[0], acc[1]),
                                                           _mm512_xor_si512(acc[2], acc[3])));
        }
    }
    return sink;
}

int main(void) {
    for (int i = 0; i < (int)sizeof xbuf; ++i) xbuf[i] = (uint8_t)(i * 37 + 11);
    for (int k = 0; k < 3 * 64; ++k) { /* index vectors inside the 127-byte window */
        uint8_t b[64];
        for (int e = 0; e < 64; ++e) b[e] = (uint8_t)((e * 7 + k) % 127);
        itab[k] = _mm512_loadu_si512(b);
    }
    const long n = 2000000;
    double bc = 1e9;
    for (int r = 0; r < 7; ++r) {
        const double t0 = now();
        volatile long q = chain(n * 4);
        (void)q;
        const double dt = now() - t0;
        if (dt < bc) bc = dt;
    }
    const double ghz = 16.0 * n / bc / 1e9;
    printf("clock %.2f GHz (add chain)\n", ghz);
    static const char *name[4] = {"core (3 vpermt2b + 3 vpdpbusd)", "+loads (windows, indices)",
                                  "+requant (packs, 64-byte store)", "+requant, no store"};
    for (int mode = 0; mode < 4; ++mode) {
        double best = 1e9;
        for (int r = 0; r < 9; ++r) {
            const double t0 = now();
            volatile __m512i z = run(mode, n);
            (void)z;
            const double dt = now() - t0;
            if (dt < best) best = dt;
        }
        const double cyc = best * ghz * 1e9 / (4.0 * n);
        printf("%-34s %5.2f cycles / 16 outputs  (3x3: %5.1f GMAC/s)\n", name[mode], cyc,
               144.0 * ghz / cyc);
    }
    return 0;
}

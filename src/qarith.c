/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file qarith.c
 * @brief qrt/qarith.h: run-time choice between the reference and the SIMD variants, and the
 *        mul's cut over the thread pool.
 */
#include "qrt/qarith.h"
#include "qrt/threadpool.h"

int qrt_mean_isa(void) {
#ifdef QRT_HAVE_X86
    if ((qrt_cpu_features() & QRT_CPU_AVX2)) return QRT_ISA_AVX2;
#endif
    return QRT_ISA_REF;
}

void qrt_mean_rows_u8(const uint8_t *x, size_t rows, size_t len, uint8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_mean_isa() == QRT_ISA_AVX2) {
        qrt_mean_rows_u8__avx2(x, rows, len, out);
        return;
    }
#endif
    (void)variant;
    qrt_mean_rows_u8_ref(x, rows, len, out);
}

void qrt_mean_rows_s8(const int8_t *x, size_t rows, size_t len, int8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_mean_isa() == QRT_ISA_AVX2) {
        qrt_mean_rows_s8__avx2(x, rows, len, out);
        return;
    }
#endif
    (void)variant;
    qrt_mean_rows_s8_ref(x, rows, len, out);
}

int qrt_mul_isa(void) {
#ifdef QRT_HAVE_X86
    const unsigned f = qrt_cpu_features();
    if (f & QRT_CPU_AVX512DQ) return QRT_ISA_AVX512VNNI;
    if (f & QRT_CPU_AVX2) return QRT_ISA_AVX2;
#endif
#ifdef QRT_HAVE_ARM
    if (qrt_cpu_features() & QRT_CPU_NEON) return QRT_ISA_NEON;
#endif
    return QRT_ISA_REF;
}

void qrt_mul_rows_u8(const uint8_t *a, const uint8_t *b, size_t rows, size_t len, int b_per_row,
                     int32_t za, int32_t zb, float m, float lo, float hi, float zo, uint8_t *y,
                     int variant) {
    const int best = qrt_mul_isa();
    const int v = variant < 0 || variant > best ? best : variant;
    const int domain = za >= 0 && za <= 255 && zb >= 0 && zb <= 255 && m - m == 0.0f && lo <= hi;
#ifdef QRT_HAVE_X86
    if (domain && v == QRT_ISA_AVX512VNNI) {
        qrt_mul_rows_u8__avx512(a, b, rows, len, b_per_row, za, zb, m, lo, hi, zo, y);
        return;
    }
    if (domain && v == QRT_ISA_AVX2) {
        qrt_mul_rows_u8__avx2(a, b, rows, len, b_per_row, za, zb, m, lo, hi, zo, y);
        return;
    }
#endif
#ifdef QRT_HAVE_ARM
    if (domain && v == QRT_ISA_NEON) {
        qrt_mul_rows_u8__neon(a, b, rows, len, b_per_row, za, zb, m, lo, hi, zo, y);
        return;
    }
#endif
    (void)v;
    (void)domain;
    qrt_mul_rows_u8_ref(a, b, rows, len, b_per_row, za, zb, m, lo, hi, zo, y);
}

size_t qrt_mul_mt_min = QRT_MUL_MT_MIN;

typedef struct {
    const uint8_t *a, *b;
    uint8_t *y;
    size_t rows, len, chunks;
    int b_per_row, variant;
    int32_t za, zb;
    float m, lo, hi, zo;
} qrt__mul_job;

static void qrt__mul_task(void *ctx, int t) {
    const qrt__mul_job *j = (const qrt__mul_job *)ctx;
    const size_t n = j->rows * j->len, blocks = (n + 63u) / 64u;
    size_t e0 = blocks * (size_t)t / j->chunks * 64u, e1 = blocks * (size_t)(t + 1) / j->chunks * 64u;
    if (e1 > n) e1 = n;
#define QRT__MUL_PART(A, B, ROWS, LEN, Y)                                                          \
    qrt_mul_rows_u8(A, B, ROWS, LEN, j->b_per_row, j->za, j->zb, j->m, j->lo, j->hi, j->zo, Y,    \
                    j->variant)
    if (!j->b_per_row) { /* one flat run */
        if (e1 > e0) QRT__MUL_PART(j->a + e0, j->b + e0, 1, e1 - e0, j->y + e0);
        return;
    }
    while (e0 < e1) { /* a partial first row, whole rows, a partial last row */
        const size_t r = e0 / j->len, i = e0 % j->len;
        if (i != 0 || e1 - e0 < j->len) {
            const size_t k = j->len - i < e1 - e0 ? j->len - i : e1 - e0;
            QRT__MUL_PART(j->a + e0, j->b + r, 1, k, j->y + e0);
            e0 += k;
        } else {
            const size_t whole = (e1 - e0) / j->len;
            QRT__MUL_PART(j->a + e0, j->b + r, whole, j->len, j->y + e0);
            e0 += whole * j->len;
        }
    }
#undef QRT__MUL_PART
}

void qrt_mul_rows_u8_mt(const uint8_t *a, const uint8_t *b, size_t rows, size_t len,
                        int b_per_row, int32_t za, int32_t zb, float m, float lo, float hi,
                        float zo, uint8_t *y, int variant, int threads) {
    const size_t n = rows * len;
    if (threads <= 1 || n < qrt_mul_mt_min || n < 128) {
        qrt_mul_rows_u8(a, b, rows, len, b_per_row, za, zb, m, lo, hi, zo, y, variant);
        return;
    }
    if ((size_t)threads > (n + 63u) / 64u) threads = (int)((n + 63u) / 64u);
    qrt__mul_job j = {a, b, y, rows, len, (size_t)threads, b_per_row, variant, za, zb, m, lo, hi,
                      zo};
    qrt_pool_run(qrt__mul_task, &j, threads);
}

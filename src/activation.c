/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file activation.c
 * @brief qrt/activation.h: run-time choice between the reference and the SIMD variants, and
 *        the table lookup's cut over the thread pool.
 */
#include "qrt/activation.h"
#include "qrt/threadpool.h"

int qrt_activation_isa(void) {
#ifdef QRT_HAVE_X86
    if ((qrt_cpu_features() & QRT_CPU_AVX2)) return QRT_ISA_AVX2;
#endif
    return QRT_ISA_REF;
}

void qrt_relu_u8(const uint8_t *x, size_t n, uint8_t zp, uint8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_activation_isa() == QRT_ISA_AVX2) {
        qrt_relu_u8__avx2(x, n, zp, out);
        return;
    }
#endif
    (void)variant;
    qrt_relu_u8_ref(x, n, zp, out);
}

void qrt_relu_s8(const int8_t *x, size_t n, int8_t zp, int8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_activation_isa() == QRT_ISA_AVX2) {
        qrt_relu_s8__avx2(x, n, zp, out);
        return;
    }
#endif
    (void)variant;
    qrt_relu_s8_ref(x, n, zp, out);
}

int qrt_lut_isa(void) {
#ifdef QRT_HAVE_X86
    if (qrt_cpu_features() & QRT_CPU_AVX512VBMI) return QRT_ISA_AVX512VNNI;
    if (qrt_cpu_features() & QRT_CPU_AVX2) return QRT_ISA_AVX2;
#endif
#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
    if (qrt_cpu_features() & QRT_CPU_NEON) return QRT_ISA_NEON;
#endif
    return QRT_ISA_REF;
}

void qrt_lut_u8(const uint8_t *lut, const uint8_t *x, size_t n, uint8_t *out, int variant) {
    const int best = qrt_lut_isa();
    const int v = variant < 0 || variant > best ? best : variant;
#ifdef QRT_HAVE_X86
    if (v == QRT_ISA_AVX512VNNI) {
        qrt_lut_u8__avx512vbmi(lut, x, n, out);
        return;
    }
    if (v == QRT_ISA_AVX2 && (qrt_cpu_features() & QRT_CPU_AVX2)) {
        qrt_lut_u8__avx2(lut, x, n, out);
        return;
    }
#endif
#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
    if (v == QRT_ISA_NEON) {
        qrt_lut_u8__neon(lut, x, n, out);
        return;
    }
#endif
    (void)v;
    qrt_lut_u8_ref(lut, x, n, out);
}

void qrt_lut2_u8(const uint8_t *lut_vec, const uint8_t *lut_scalar, const uint8_t *x, size_t n,
                 size_t nvec, uint8_t *out, int variant) {
    if (nvec > n) nvec = n;
    if (nvec) qrt_lut_u8(lut_vec, x, nvec, out, variant);
    if (n > nvec) qrt_lut_u8(lut_scalar, x + nvec, n - nvec, out + nvec, variant);
}

size_t qrt_lut_mt_min = QRT_LUT_MT_MIN;

typedef struct {
    const uint8_t *lut_vec, *lut_scalar, *x;
    uint8_t *out;
    size_t n, nvec, chunks;
    int variant;
} qrt__lut_job;

static void qrt__lut_task(void *ctx, int t) {
    const qrt__lut_job *j = (const qrt__lut_job *)ctx;
    const size_t blocks = (j->n + 63u) / 64u;
    const size_t i0 = blocks * (size_t)t / j->chunks * 64u;
    size_t i1 = blocks * (size_t)(t + 1) / j->chunks * 64u;
    if (i1 > j->n) i1 = j->n;
    if (i1 <= i0) return;
    const size_t nv = j->nvec <= i0 ? 0 : (j->nvec < i1 ? j->nvec : i1) - i0;
    qrt_lut2_u8(j->lut_vec, j->lut_scalar, j->x + i0, i1 - i0, nv, j->out + i0, j->variant);
}

void qrt_lut2_u8_mt(const uint8_t *lut_vec, const uint8_t *lut_scalar, const uint8_t *x, size_t n,
                    size_t nvec, uint8_t *out, int variant, int threads) {
    if (threads <= 1 || n < qrt_lut_mt_min || n < 128) {
        qrt_lut2_u8(lut_vec, lut_scalar, x, n, nvec, out, variant);
        return;
    }
    if ((size_t)threads > (n + 63u) / 64u) threads = (int)((n + 63u) / 64u);
    qrt__lut_job j = {lut_vec, lut_scalar, x, out, n, nvec, (size_t)threads, variant};
    qrt_pool_run(qrt__lut_task, &j, threads);
}

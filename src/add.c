/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file add.c
 * @brief qrt/add.h: run-time choice between the reference and the AVX2 variant.
 */
#include "qrt/add.h"

#include "qrt/threadpool.h"

int qrt_add_isa(void) {
#ifdef QRT_HAVE_X86
    /* the QNNPACK add has an AVX-512 variant (F/BW/VL/DQ level, reported as
     * QRT_ISA_AVX512VNNI, as the mul does); the float add's best is AVX2 */
    if ((qrt_cpu_features() & QRT_CPU_AVX512DQ)) return QRT_ISA_AVX512VNNI;
    if ((qrt_cpu_features() & QRT_CPU_AVX2)) return QRT_ISA_AVX2;
#endif
#ifdef QRT_HAVE_ARM
    if (qrt_cpu_features() & QRT_CPU_NEON) return QRT_ISA_NEON; /* the QNNPACK add */
#endif
    return QRT_ISA_REF;
}

void qrt_add_u8(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b, size_t n,
                uint8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    const int best = qrt_add_isa(); /* a lower variant can be forced (tests) */
    const int v = variant < 0 || variant > best ? best : variant;
    if (v == QRT_ISA_AVX512VNNI) {
        qrt_add_u8__avx512(p, a, b, n, out);
        return;
    }
    if (v == QRT_ISA_AVX2) {
        qrt_add_u8__avx2(p, a, b, n, out);
        return;
    }
#endif
#ifdef QRT_HAVE_ARM
    if ((variant < 0 || variant >= QRT_ISA_NEON) && qrt_add_isa() == QRT_ISA_NEON) {
        qrt_add_u8__neon(p, a, b, n, out);
        return;
    }
#endif
    (void)variant;
    qrt_add_u8_ref(p, a, b, n, out);
}

typedef struct {
    const qrt_add_qnnp_params *p;
    const uint8_t *a, *b;
    uint8_t *out;
    size_t n, chunks;
    int variant;
} qrt__add_job;

static void qrt__add_task(void *ctx, int i) {
    const qrt__add_job *j = (const qrt__add_job *)ctx;
    const size_t blocks = (j->n + 63u) / 64u; /* 64-element blocks, balanced over the runs */
    size_t i0 = blocks * (size_t)i / j->chunks * 64u, i1 = blocks * (size_t)(i + 1) / j->chunks * 64u;
    if (i1 > j->n) i1 = j->n;
    if (i1 > i0) qrt_add_u8(j->p, j->a + i0, j->b + i0, i1 - i0, j->out + i0, j->variant);
}

void qrt_add_u8_mt(const qrt_add_qnnp_params *p, const uint8_t *a, const uint8_t *b, size_t n,
                   uint8_t *out, int variant, int threads) {
    if (threads <= 1 || n < (size_t)QRT_ADD_MT_MIN) {
        qrt_add_u8(p, a, b, n, out, variant);
        return;
    }
    qrt__add_job j = {p, a, b, out, n, (size_t)threads, variant};
    qrt_pool_run(qrt__add_task, &j, threads);
}

void qrt_add_float_u8(const qrt_add_float_params *p, const uint8_t *a, const uint8_t *b,
                      size_t rows, size_t inner, size_t nvec, uint8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_add_isa() != QRT_ISA_REF) {
        qrt_add_float_u8__avx2(p, a, b, rows, inner, nvec, out);
        return;
    }
#endif
    (void)variant;
    qrt_add_float_u8_ref(p, a, b, rows, inner, nvec, out);
}

void qrt_add_float_s8(const qrt_add_float_params *p, const int8_t *a, const int8_t *b, size_t rows,
                      size_t inner, size_t nvec, int8_t *out, int variant) {
#ifdef QRT_HAVE_X86
    if (variant != QRT_ISA_REF && qrt_add_isa() != QRT_ISA_REF) {
        qrt_add_float_s8__avx2(p, a, b, rows, inner, nvec, out);
        return;
    }
#endif
    (void)variant;
    qrt_add_float_s8_ref(p, a, b, rows, inner, nvec, out);
}

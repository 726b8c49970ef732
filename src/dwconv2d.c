/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file dwconv2d.c
 * @brief qrt/dwconv2d.h: run-time choice of the depthwise conv2d variant (cpu.h features,
 *        QRT_DISABLE_ISA honoured) and its split over the thread pool: batch x input channel
 *        units in equal contiguous runs, one scratch slot per run.  Generic code, baseline
 *        flags; the variants sit in their own translation units.
 */
#include "qrt/dwconv2d.h"

#include "dwconv2d_impl.h"
#include "qrt/cpu.h"
#include "qrt/threadpool.h"
#ifdef QRT_HAVE_X86
#include "qrt/x86/dwconv2d_x86.h"
#endif
#ifdef QRT_HAVE_ARM
#include "qrt/neon/dwconv2d_neon.h"
#endif

#ifndef QRT_DWCONV2D_MT_MIN_WORK
#define QRT_DWCONV2D_MT_MIN_WORK 250000.0
#endif
double qrt_dwconv2d_mt_min_work = QRT_DWCONV2D_MT_MIN_WORK;
int qrt_dwconv2d_permute = 1;
int qrt_dwconv2d_dot = 1;
int qrt_dwconv2d_rows = 1;

int qrt_dwconv2d_isa(void) {
#ifdef QRT_HAVE_X86
    if (qrt_cpu_features() & QRT_CPU_AVX512VNNI) return QRT_ISA_AVX512VNNI;
    if (qrt_cpu_features() & QRT_CPU_AVX2) return QRT_ISA_AVX2;
#endif
#ifdef QRT_HAVE_ARM
    if (qrt_cpu_features() & QRT_CPU_NEON) return QRT_ISA_NEON;
#endif
    return QRT_ISA_REF;
}

int qrt_dwconv2d_variant(int variant) {
    if (variant == QRT_ISA_REF) return QRT_ISA_REF;
#ifdef QRT_HAVE_X86
    if (variant == QRT_ISA_AVX2 && (qrt_cpu_features() & QRT_CPU_AVX2)) return QRT_ISA_AVX2;
    if (variant == QRT_ISA_AVX512VNNI && (qrt_cpu_features() & QRT_CPU_AVX512VNNI))
        return QRT_ISA_AVX512VNNI;
#endif
    return qrt_dwconv2d_isa();
}

typedef void (*qrt__dw_variant_fn)(const qrt_dwconv2d_params *, const uint8_t *, const int8_t *,
                                   const qrt_conv1d_quant *, uint8_t *, void *, int64_t,
                                   int64_t);

static qrt__dw_variant_fn qrt__dw_fn(int isa) {
#ifdef QRT_HAVE_X86
    if (isa == QRT_ISA_AVX512VNNI)
        return qrt_dwconv2d_permute && (qrt_cpu_features() & QRT_CPU_AVX512VBMI)
                   ? qrt_dwconv2d_u8__avx512vbmi
                   : qrt_dwconv2d_u8__avx512vnni;
    if (isa == QRT_ISA_AVX2) return qrt_dwconv2d_u8__avx2;
#endif
#ifdef QRT_HAVE_ARM
    if (isa == QRT_ISA_NEON) return qrt_dwconv2d_u8__neon;
#endif
    (void)isa;
    return 0;
}

/* Runs (>= 1) of the n * c_in units for `threads` threads.  The work is an estimate of the
 * one-thread time in multiply-accumulate units: the MACs plus, per unit, its setup (~500) and
 * its plane building (~2 per input element): the small and stride-2 layers cost 2-5x their
 * MACs (a 576-channel 14x14 -> 7x7 stride-2 layer: 254k MACs, ~45 us), so a MAC count alone
 * kept them on one thread, where two threads gain.  Runs are claimed dynamically; a big layer
 * gets several runs per thread so that a thread that starts late (a busy machine) leaves its
 * later runs to the others. */
static int64_t qrt__dw_chunks(const qrt_dwconv2d_params *p, int threads) {
    const int64_t units = (int64_t)p->n * p->c_in;
    const double work = (double)units * p->mult * p->ho * p->wo * p->kh * p->kw +
                        (double)units * (500.0 + 2.0 * (double)p->h * p->w);
    if (threads <= 1 || work < qrt_dwconv2d_mt_min_work) return 1;
    const double m = qrt_dwconv2d_mt_min_work > 1.0 ? qrt_dwconv2d_mt_min_work : 1.0;
    /* four runs per thread only where a run's setup (zeroing its planes) is small */
    int64_t c = work >= 8.0 * m && (uint64_t)p->h * p->w <= 784u ? 4 * (int64_t)threads
                : work >= 3.0 * m ? 2 * (int64_t)threads
                                  : threads;
    if (c > units) c = units;
    if (c > QRT_POOL_MAX_TASKS) c = QRT_POOL_MAX_TASKS;
    return c < 1 ? 1 : c;
}

size_t qrt_dwconv2d_u8_scratch_size(const qrt_dwconv2d_params *p, int variant, int threads) {
    if (qrt_dwconv2d_check(p) != QRT_OK || !qrt__dw_fn(qrt_dwconv2d_variant(variant))) return 0;
    const size_t bytes = qrt__dw_bytes(p);
    const int64_t c = qrt__dw_chunks(p, threads);
    if (!bytes || bytes > SIZE_MAX / 4 / (size_t)c) return SIZE_MAX;
    return bytes * (size_t)c;
}

typedef struct {
    const qrt_dwconv2d_params *p;
    const uint8_t *x;
    const int8_t *w;
    const qrt_conv1d_quant *q;
    uint8_t *y;
    uint8_t *scratch;
    size_t slot;
    int64_t units, chunks;
    qrt__dw_variant_fn fn;
} qrt__dw_job;

static void qrt__dw_task(void *ctx, int i) {
    const qrt__dw_job *j = (const qrt__dw_job *)ctx;
    const int64_t u0 = j->units * i / j->chunks, u1 = j->units * (i + 1) / j->chunks;
    if (u1 > u0) j->fn(j->p, j->x, j->w, j->q, j->y, j->scratch + (size_t)i * j->slot, u0, u1);
}

qrt_status qrt_dwconv2d_u8(const qrt_dwconv2d_params *p, const uint8_t *x, const int8_t *w,
                           const qrt_conv1d_quant *q, uint8_t *y, void *scratch,
                           size_t scratch_size, int variant, int threads) {
    const qrt_status st = qrt_dwconv2d_check(p);
    if (st != QRT_OK) return st;
    const qrt__dw_variant_fn fn = qrt__dw_fn(qrt_dwconv2d_variant(variant));
    if (!fn) return qrt_dwconv2d_u8_ref(p, x, w, q, y);
    const size_t need = qrt_dwconv2d_u8_scratch_size(p, variant, threads);
    if (!scratch || need == SIZE_MAX || scratch_size < need) return QRT_ERR_ARG;
    qrt__dw_job j;
    j.p = p, j.x = x, j.w = w, j.q = q, j.y = y, j.scratch = (uint8_t *)scratch;
    j.units = (int64_t)p->n * p->c_in;
    j.chunks = qrt__dw_chunks(p, threads);
    j.slot = need / (size_t)j.chunks;
    j.fn = fn;
    if (j.chunks <= 1)
        fn(p, x, w, q, y, scratch, 0, j.units);
    else
        qrt_pool_run(qrt__dw_task, &j, (int)j.chunks);
    return QRT_OK;
}

/* include/qrt/dwconv2d.h */
void qrt_dwconv2d_pack_cl(uint32_t c, uint32_t kh, uint32_t kw, const int8_t *w,
                          const int32_t *weight_zero, int32_t *out) {
    const size_t kp = (kw + 1u) / 2u, kk = (size_t)kh * kw;
    for (size_t oc = 0; oc < c; ++oc)
        for (size_t ky = 0; ky < kh; ++ky)
            for (size_t i = 0; i < kp; ++i) {
                const int32_t wz = weight_zero[oc];
                const size_t t = ky * kw + 2u * i;
                const int32_t lo = w[oc * kk + t] - wz;
                const int32_t hi = 2u * i + 1u < kw ? w[oc * kk + t + 1u] - wz : 0;
                out[(ky * kp + i) * c + oc] =
                    (int32_t)((uint32_t)(uint16_t)(int16_t)lo | ((uint32_t)(uint16_t)(int16_t)hi << 16));
            }
}

int qrt_dwconv2d_cl_path(const qrt_dwconv2d_params *p, int variant) {
    if (qrt_dwconv2d_check(p) != QRT_OK || !qrt__dwcl_geom_ok(p)) return 0;
    switch (qrt_dwconv2d_variant(variant)) {
    case QRT_ISA_AVX512VNNI: return 1;
    case QRT_ISA_AVX2: return (uint64_t)p->ho * p->wo <= QRT__DWCL_MAXOUT_AVX2;
#if defined(__aarch64__)
    case QRT_ISA_NEON:
        return (uint64_t)p->ho * p->wo <= QRT__DWCL_MAXOUT_NEON && !qrt__dwpd_take(p, 1);
#endif
    default: return 0;
    }
}

int qrt_dwconv2d_byte_path(const qrt_dwconv2d_params *p, int variant) {
    if (qrt_dwconv2d_check(p) != QRT_OK || !qrt__dwp_ok(p)) return 0;
    switch (qrt_dwconv2d_variant(variant)) {
    case QRT_ISA_AVX512VNNI: return 1;
#if defined(__aarch64__)
    case QRT_ISA_NEON: return 1;
#endif
    default: return 0;
    }
}

int qrt_dwconv2d_rows_path(const qrt_dwconv2d_params *p, int variant) {
#ifdef QRT_HAVE_X86
    return qrt_dwconv2d_byte_path(p, variant) && qrt_dwconv2d_rows && qrt__dwr_ok(p) &&
           qrt_dwconv2d_variant(variant) == QRT_ISA_AVX512VNNI;
#else
    (void)p, (void)variant;
    return 0;
#endif
}

int qrt_dwconv2d_dot_path(const qrt_dwconv2d_params *p, int variant, int cl) {
#if defined(QRT_HAVE_ARM) && defined(__aarch64__)
    return qrt_dwconv2d_check(p) == QRT_OK && qrt_dwconv2d_variant(variant) == QRT_ISA_NEON &&
           qrt__dwpd_take(p, cl);
#else
    (void)p, (void)variant, (void)cl;
    return 0;
#endif
}

int qrt_dwconv2d_permute_path(const qrt_dwconv2d_params *p, int variant, int cl) {
#ifdef QRT_HAVE_X86
    return qrt_dwconv2d_check(p) == QRT_OK && qrt__dwb_take(p, cl) &&
           qrt_dwconv2d_variant(variant) == QRT_ISA_AVX512VNNI && qrt_dwconv2d_permute &&
           (qrt_cpu_features() & QRT_CPU_AVX512VBMI);
#else
    (void)p, (void)variant, (void)cl;
    return 0;
#endif
}

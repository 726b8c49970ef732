/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_threads.c
 * @brief qrt/conv1d_threads.h: qrt_conv1d_u8() cut into sub-calls run on the qrt thread pool.
 */
#include "qrt/conv1d_threads.h"

#include <stdatomic.h>

double qrt_conv1d_mt_min_work = QRT_CONV1D_MT_MIN_WORK;

qrt_conv1d_split qrt_conv1d_split_of(const qrt_conv1d_params *p, int threads) {
    qrt_conv1d_split s = {1, 0, 0, 0};
    if (threads <= 1 || p->n == 0 || p->len_out == 0) return s;
    const double cg = (double)(p->c_in / p->groups);
    const double work =
        (double)p->n * p->c_out * p->len_out * cg * p->kernel +
        16.0 * ((double)p->n * p->c_out * p->len_out + (double)p->n * p->c_in * p->len_in);
    if (work < qrt_conv1d_mt_min_work) return s;
    int64_t T = threads;
    if ((int64_t)p->n >= T) { /* batch */
        s.axis = 0;
        s.units = p->n;
    } else if ((int64_t)p->len_out >= 2 * QRT_CONV1D_MT_ALIGN_T) { /* positions */
        s.axis = 1;
        s.units = p->len_out;
        /* every chunk must start on a real input sample (no chunk made only of right
         * padding): keep chunks whose first window starts before len_in */
    } else if (p->groups > 1 || p->c_out >= 16) { /* groups, or channels */
        s.axis = 2;
        s.units = p->groups > 1 ? p->groups : p->c_out;
    } else {
        return s;
    }
    /* big layers: two chunks per thread, so a thread that starts late (a busy machine) costs
     * at most one small chunk */
    if (s.axis != 0 && work >= 4.0 * QRT_CONV1D_MT_MIN_WORK) T *= 2;
    int64_t per = (s.units + T - 1) / T;
    if (s.axis == 1) {
        per = (per + QRT_CONV1D_MT_ALIGN_T - 1) / QRT_CONV1D_MT_ALIGN_T * QRT_CONV1D_MT_ALIGN_T;
    } else if (s.axis == 2 && p->groups == 1) {
        per = (per + 7) / 8 * 8; /* 8-channel tiles */
    }
    s.per = per;
    s.chunks = (int)((s.units + per - 1) / per);
    if (s.axis == 1) {
        /* the last chunk's first window must overlap the input (else its sub-call would see
         * an empty input): shrink the chunk count until it does */
        while (s.chunks > 1 &&
               (int64_t)(s.chunks - 1) * per * p->stride >= (int64_t)p->pad_left + p->len_in)
            s.chunks--;
        s.per = (s.units + s.chunks - 1) / s.chunks;
        s.per = (s.per + QRT_CONV1D_MT_ALIGN_T - 1) / QRT_CONV1D_MT_ALIGN_T * QRT_CONV1D_MT_ALIGN_T;
        s.chunks = (int)((s.units + s.per - 1) / s.per);
        while (s.chunks > 1 &&
               (int64_t)(s.chunks - 1) * s.per * p->stride >= (int64_t)p->pad_left + p->len_in)
            s.chunks--, s.per = (s.units + s.chunks - 1) / s.chunks;
    }
    if (s.chunks <= 1) s.chunks = 1;
    return s;
}

qrt__c1_sub qrt_conv1d_sub(const qrt_conv1d_params *p, const qrt_conv1d_split *s, int i,
                           const uint8_t *x, const int8_t *w, const int8_t *wpack,
                           const int32_t *wsum, const qrt_conv1d_quant *q, void *out) {
    qrt__c1_sub r;
    r.p = *p;
    r.x = x;
    r.w = w;
    r.wpack = wpack;
    r.wsum = wsum;
    r.q = *q;
    r.out = out;
    const size_t es = p->out_kind == QRT_CONV1D_OUT_F32 ? 4u : 1u;
    const int64_t u0 = (int64_t)i * s->per;
    int64_t u1 = u0 + s->per;
    if (u1 > s->units) u1 = s->units;
    if (s->chunks <= 1) return r;
    if (s->axis == 0) {
        r.p.n = (uint32_t)(u1 - u0);
        r.x = x + u0 * p->x_stride_n;
        r.out = (uint8_t *)out + (ptrdiff_t)(u0 * p->y_stride_n) * (ptrdiff_t)es;
    } else if (s->axis == 1) {
        const int64_t start = u0 * p->stride - (int64_t)p->pad_left; /* first tap of u0 */
        const int64_t span = (u1 - u0 - 1) * p->stride + (int64_t)(p->kernel - 1) * p->dilation + 1;
        int64_t x0 = start > 0 ? start : 0;
        int64_t avail = (int64_t)p->len_in - x0;
        int64_t need = start + span - x0; /* input samples the chunk can read */
        if (need < 1) need = 1;
        r.p.pad_left = (uint32_t)(start < 0 ? -start : 0);
        r.p.len_in = (uint32_t)(avail < 0 ? 0 : avail < need ? avail : need);
        r.p.len_out = (uint32_t)(u1 - u0);
        r.x = x + x0 * p->x_stride_t;
        r.out = (uint8_t *)out + (ptrdiff_t)(u0 * p->y_stride_t) * (ptrdiff_t)es;
    } else {
        const int64_t cg = p->c_in / p->groups, cpg = p->c_out / p->groups;
        const qrt_conv1d_layout l = qrt_conv1d_layout_of((uint32_t)cg, p->kernel);
        const int64_t per_oc = (int64_t)l.kc * l.cq * 4;
        int64_t oc0, noc;
        if (p->groups > 1) {
            r.p.groups = (uint32_t)(u1 - u0);
            r.p.c_in = (uint32_t)((u1 - u0) * cg);
            r.x = x + u0 * cg * p->x_stride_c;
            oc0 = u0 * cpg;
            noc = (u1 - u0) * cpg;
        } else {
            oc0 = u0;
            noc = u1 - u0;
        }
        r.p.c_out = (uint32_t)noc;
        r.w = w + oc0 * cg * p->kernel;
        r.wpack = wpack ? wpack + oc0 * per_oc : NULL;
        r.wsum = wsum ? wsum + oc0 : NULL;
        r.q.weight_zero = q->weight_zero + oc0;
        r.q.bias_q = q->bias_q ? q->bias_q + oc0 : NULL;
        r.q.scale = q->scale + oc0;
        r.q.bias_f = q->bias_f ? q->bias_f + oc0 : NULL;
        r.out = (uint8_t *)out + (ptrdiff_t)(oc0 * p->y_stride_c) * (ptrdiff_t)es;
    }
    return r;
}

size_t qrt_conv1d_u8_mt_scratch_size(const qrt_conv1d_params *p, int variant, int threads) {
    const qrt_conv1d_split s = qrt_conv1d_split_of(p, threads);
    if (s.chunks <= 1) return qrt_conv1d_u8_scratch_size(p, variant);
    static const qrt_conv1d_quant q0 = {NULL, NULL, NULL, NULL};
    size_t slot = 0;
    for (int i = 0; i < s.chunks; ++i) {
        const qrt__c1_sub r = qrt_conv1d_sub(p, &s, i, NULL, NULL, NULL, NULL, &q0, NULL);
        const size_t b = qrt_conv1d_u8_scratch_size(&r.p, variant);
        slot = b > slot ? b : slot;
    }
    slot = (slot + 63u) & ~(size_t)63u;
    return slot * (size_t)s.chunks;
}

typedef struct {
    const qrt_conv1d_params *p;
    const qrt_conv1d_split *s;
    const uint8_t *x;
    const int8_t *w, *wpack;
    const int32_t *wsum;
    const qrt_conv1d_quant *q;
    void *out;
    uint8_t *scratch;
    size_t slot;
    int variant;
    atomic_int status;
} qrt__c1_job;

static void qrt__c1_run_chunk(void *ctx, int i) {
    qrt__c1_job *j = (qrt__c1_job *)ctx;
    qrt__c1_sub r = qrt_conv1d_sub(j->p, j->s, i, j->x, j->w, j->wpack, j->wsum, j->q, j->out);
    const qrt_status st =
        qrt_conv1d_u8(&r.p, r.x, r.w, r.wpack, r.wsum, &r.q, r.out,
                      j->scratch ? j->scratch + j->slot * (size_t)i : NULL, j->slot, j->variant);
    if (st != QRT_OK) atomic_store(&j->status, (int)st);
}

qrt_status qrt_conv1d_u8_mt(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                            const int8_t *wpack, const int32_t *wsum, const qrt_conv1d_quant *q,
                            void *out, void *scratch, size_t scratch_size, int variant,
                            int threads) {
    const qrt_status st0 = qrt_conv1d_check(p);
    if (st0 != QRT_OK) return st0;
    const qrt_conv1d_split s = qrt_conv1d_split_of(p, threads);
    if (s.chunks <= 1)
        return qrt_conv1d_u8(p, x, w, wpack, wsum, q, out, scratch, scratch_size, variant);
    const size_t need = qrt_conv1d_u8_mt_scratch_size(p, variant, threads);
    if (scratch_size < need) return QRT_ERR_ARG;
    qrt__c1_job j;
    j.p = p;
    j.s = &s;
    j.x = x;
    j.w = w;
    j.wpack = wpack;
    j.wsum = wsum;
    j.q = q;
    j.out = out;
    j.scratch = (uint8_t *)scratch;
    j.slot = need / (size_t)s.chunks;
    j.variant = variant;
    atomic_init(&j.status, QRT_OK);
    qrt_pool_run(qrt__c1_run_chunk, &j, s.chunks);
    return (qrt_status)atomic_load(&j.status);
}

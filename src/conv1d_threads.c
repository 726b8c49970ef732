/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_threads.c
 * @brief qrt/conv1d_threads.h: qrt_conv1d_u8() cut into sub-calls run on the qrt thread pool.
 */
#include "qrt/conv1d_threads.h"

#include <stdatomic.h>

double qrt_conv1d_mt_min_work = QRT_CONV1D_MT_MIN_WORK;

/* Channel cuts of a dense 1x1 layer fall on multiples of 16 (the channels-in-lanes weight's
 * blocks: every part keeps that path), others on multiples of one 8-channel tile. */
static inline int64_t qrt__c1_gran_c(const qrt_conv1d_params *p) {
    return p->kernel == 1 && p->groups == 1 ? 2 * QRT_CONV1D_MT_GRAN_C : QRT_CONV1D_MT_GRAN_C;
}

/* Start of part k of `parts` over `units` cut on multiples of `gran` (balanced in granules). */
static inline int64_t qrt__c1_bound(int64_t units, int64_t gran, int64_t parts, int64_t k) {
    const int64_t g = (units + gran - 1) / gran;
    const int64_t b = g * k / parts * gran;
    return b < units ? b : units;
}

/* The last position part starts on a real input sample (a part made only of right padding
 * would see an empty input). */
static inline int qrt__c1_t_parts_ok(const qrt_conv1d_params *p, int64_t parts) {
    const int64_t last = qrt__c1_bound(p->len_out, QRT_CONV1D_MT_GRAN_T, parts, parts - 1);
    return last * p->stride < (int64_t)p->pad_left + p->len_in;
}

qrt_conv1d_split qrt_conv1d_split_of(const qrt_conv1d_params *p, int threads) {
    qrt_conv1d_split s = {1, 0, 0, 0, 1, 1};
    if (threads <= 1 || p->n == 0 || p->len_out == 0) return s;
    const double cg = (double)(p->c_in / p->groups);
    double work =
        (double)p->n * p->c_out * p->len_out * cg * p->kernel +
        16.0 * ((double)p->n * p->c_out * p->len_out + (double)p->n * p->c_in * p->len_in);
    /* A GEMV-like call (a linear, a squeeze-excitation 1x1 conv on a 1x1 image) reads each
     * weight byte once or twice, usually from L3 or memory: its time is the weight stream's,
     * and two cores stream twice as fast.  Its work counts QRT_CONV1D_MT_GEMV_BYTE units per
     * weight byte (a 64 KB weight passes the default threshold). */
    if ((int64_t)p->n * p->len_out <= 4) {
        const double wb = (double)p->c_out * cg * p->kernel * QRT_CONV1D_MT_GEMV_BYTE;
        if (wb > work) work = wb;
    }
    if (work < qrt_conv1d_mt_min_work) return s;
    const int64_t T = threads;
    if ((int64_t)p->n >= T && ((int64_t)p->n % T == 0 || (int64_t)p->n >= 4 * T)) { /* batch */
        s.axis = 0;
        s.units = p->n;
        s.per = (s.units + T - 1) / T;
        s.chunks = (int)((s.units + s.per - 1) / s.per);
        return s;
    }
    /* big layers: two chunks per thread, so a thread that starts late (a busy machine) costs
     * at most one small chunk: tasks are claimed dynamically, the caller takes what is left */
    int64_t C = work >= 4.0 * qrt_conv1d_mt_min_work ? 2 * T : T;
    if (C > QRT_POOL_MAX_TASKS) C = QRT_POOL_MAX_TASKS;
    const int64_t gt = ((int64_t)p->len_out + QRT_CONV1D_MT_GRAN_T - 1) / QRT_CONV1D_MT_GRAN_T;
    const int64_t gc = p->groups > 1 ? (int64_t)p->groups
                                     : ((int64_t)p->c_out + qrt__c1_gran_c(p) - 1) /
                                           qrt__c1_gran_c(p);
    /* positions first (the input is packed once in all, and each part writes whole vectors),
     * then output-channel tiles for what positions cannot give (short rows, a linear layer) */
    int64_t pt = gt / QRT_CONV1D_MT_MIN_T;
    if (pt > C) pt = C;
    if (pt < 1) pt = 1;
    while (pt > 1 && !qrt__c1_t_parts_ok(p, pt)) pt--;
    int64_t pc = (C + pt - 1) / pt;
    if (pc > gc) pc = gc;
    if (pc < 1) pc = 1;
    /* a grid that cannot give every thread a share falls back to what the channels give */
    if (pt * pc < T && gc >= T) pt = 1, pc = C < gc ? C : gc;
    if (pt * pc <= 1) return s;
    s.parts_t = (int)pt;
    s.parts_c = (int)pc;
    s.chunks = (int)(pt * pc);
    s.axis = pc == 1 ? 1 : pt == 1 ? 2 : 3;
    if (s.axis == 1) {
        s.units = p->len_out;
        s.per = (gt + pt - 1) / pt * QRT_CONV1D_MT_GRAN_T;
    } else {
        s.units = p->groups > 1 ? p->groups : p->c_out;
        s.per = (gc + pc - 1) / pc * (p->groups > 1 ? 1 : qrt__c1_gran_c(p));
    }
    return s;
}

/* Restrict r (a copy of p's call) to output positions [u0, u1). */
static inline void qrt__c1_cut_t(qrt__c1_sub *r, const qrt_conv1d_params *p, int64_t u0,
                                 int64_t u1, size_t es) {
    const int64_t start = u0 * p->stride - (int64_t)p->pad_left; /* first tap of u0 */
    const int64_t span = (u1 - u0 - 1) * p->stride + (int64_t)(p->kernel - 1) * p->dilation + 1;
    int64_t x0 = start > 0 ? start : 0;
    int64_t avail = (int64_t)p->len_in - x0;
    int64_t need = start + span - x0; /* input samples the chunk can read */
    if (need < 1) need = 1;
    r->p.pad_left = (uint32_t)(start < 0 ? -start : 0);
    r->p.len_in = (uint32_t)(avail < 0 ? 0 : avail < need ? avail : need);
    r->p.len_out = (uint32_t)(u1 - u0);
    r->x = r->x + x0 * p->x_stride_t;
    r->out = (uint8_t *)r->out + (ptrdiff_t)(u0 * p->y_stride_t) * (ptrdiff_t)es;
}

/* Restrict r to groups (groups > 1) or output channels (groups == 1) [u0, u1). */
static inline void qrt__c1_cut_c(qrt__c1_sub *r, const qrt_conv1d_params *p,
                                 const qrt_conv1d_quant *q, int64_t u0, int64_t u1, size_t es) {
    const int64_t cg = p->c_in / p->groups, cpg = p->c_out / p->groups;
    const qrt_conv1d_layout l = qrt_conv1d_layout_of((uint32_t)cg, p->kernel);
    const int64_t per_oc = (int64_t)l.kc * l.cq * 4;
    int64_t oc0, noc;
    if (p->groups > 1) {
        r->p.groups = (uint32_t)(u1 - u0);
        r->p.c_in = (uint32_t)((u1 - u0) * cg);
        r->x = r->x + u0 * cg * p->x_stride_c;
        oc0 = u0 * cpg;
        noc = (u1 - u0) * cpg;
    } else {
        oc0 = u0;
        noc = u1 - u0;
    }
    r->p.c_out = (uint32_t)noc;
    r->w = r->w + oc0 * cg * p->kernel;
    r->wpack = r->wpack ? r->wpack + oc0 * per_oc : NULL;
    r->wsum = r->wsum ? r->wsum + oc0 : NULL;
    r->q.weight_zero = q->weight_zero + oc0;
    r->q.bias_q = q->bias_q ? q->bias_q + oc0 : NULL;
    r->q.scale = q->scale + oc0;
    r->q.bias_f = q->bias_f ? q->bias_f + oc0 : NULL;
    /* the channels-in-lanes weight is in blocks of 16 channels: a cut inside a block runs
     * the packed path (the same bytes) */
    r->q.wpack_cl = q->wpack_cl && oc0 % 16 == 0 ? q->wpack_cl + oc0 * per_oc : NULL;
    /* the AVX2 panels: whole groups, or (one group) a cut on a 4-channel panel */
    {
        const int64_t r2 = (cg * p->kernel + 1) / 2, NO = QRT_CONV1D_A2_NO;
        const int64_t npan = (cpg + NO - 1) / NO;
        r->q.wpack_a2 = !q->wpack_a2                 ? NULL
                        : p->groups > 1             ? q->wpack_a2 + u0 * npan * r2 * NO
                        : oc0 % NO == 0             ? q->wpack_a2 + oc0 * r2
                                                    : NULL;
    }
    r->q.wsum_c16 = q->wsum_c16 ? q->wsum_c16 + oc0 : NULL;
    /* the NEON-dot panels (one group): a cut on an 8-channel panel, else the tile packs */
    r->q.wpack_dot = q->wpack_dot && p->groups == 1 && oc0 % QRT_CONV1D_DOT_NO == 0
                         ? q->wpack_dot + (size_t)(oc0 / QRT_CONV1D_DOT_NO) *
                                              qrt_conv1d_dot_panel_size(p->c_in)
                         : NULL;
    r->out = (uint8_t *)r->out + (ptrdiff_t)(oc0 * p->y_stride_c) * (ptrdiff_t)es;
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
    if (s->chunks <= 1) return r;
    if (s->axis == 0) {
        const int64_t u0 = (int64_t)i * s->per;
        int64_t u1 = u0 + s->per;
        if (u1 > s->units) u1 = s->units;
        r.p.n = (uint32_t)(u1 - u0);
        r.x = x + u0 * p->x_stride_n;
        r.out = (uint8_t *)out + (ptrdiff_t)(u0 * p->y_stride_n) * (ptrdiff_t)es;
        return r;
    }
    const int64_t it = i / s->parts_c, ic = i % s->parts_c;
    if (s->parts_c > 1) { /* channels first: the position cut reads p's geometry only */
        const int64_t units = p->groups > 1 ? p->groups : p->c_out;
        const int64_t gran = p->groups > 1 ? 1 : qrt__c1_gran_c(p);
        qrt__c1_cut_c(&r, p, q, qrt__c1_bound(units, gran, s->parts_c, ic),
                      qrt__c1_bound(units, gran, s->parts_c, ic + 1), es);
    }
    if (s->parts_t > 1)
        qrt__c1_cut_t(&r, p, qrt__c1_bound(p->len_out, QRT_CONV1D_MT_GRAN_T, s->parts_t, it),
                      qrt__c1_bound(p->len_out, QRT_CONV1D_MT_GRAN_T, s->parts_t, it + 1), es);
    return r;
}

size_t qrt_conv1d_u8_mt_scratch_size(const qrt_conv1d_params *p, const qrt_conv1d_quant *q,
                                     int variant, int threads) {
    const qrt_conv1d_split s = qrt_conv1d_split_of(p, threads);
    if (s.chunks <= 1) return qrt_conv1d_u8_scratch_size(p, q, variant);
    /* only the panel pointer matters (a part gets it, offset, when its cut is on a panel) */
    const qrt_conv1d_quant q0 = {NULL, NULL, NULL, NULL, NULL, q ? q->wpack_a2 : NULL};
    size_t slot = 0;
    for (int i = 0; i < s.chunks; ++i) {
        const qrt__c1_sub r = qrt_conv1d_sub(p, &s, i, NULL, NULL, NULL, NULL, &q0, NULL);
        const size_t b = qrt_conv1d_u8_scratch_size(&r.p, &r.q, variant);
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
    const size_t need = qrt_conv1d_u8_mt_scratch_size(p, q, variant, threads);
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

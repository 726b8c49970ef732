/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file pool2d.c
 * @brief Direct 2-d max / average pooling of NCHW codes (include/qrt/pool2d.h).
 *
 * Rows form (any stride): per output row oy, the window's image rows iy = oy*sh - ph + ky*dh
 * inside [0, h) are reduced element-wise into one padded row v (max of the codes; for
 * averages int32 sums of x - zero), v[pw + ix] for ix in [0, w) and qmin / 0 elsewhere
 * (written once per call: the padding and the ceil-mode tail never win a max and add nothing
 * to a sum).  Output ox then reduces v[ox*sw + kx*dw] over kx.  Stride 2 first splits v into
 * its even and odd elements so that every tap is a contiguous run again.
 * Flat form (stride 1, contiguous rows): the same over a whole padded plane at once, so small
 * planes (14x14, 7x7) run a few long loops instead of a few short ones per output row.
 * The loops are plain C over contiguous runs, which the compiler vectorises (-O3); the
 * arithmetic is the 1-d kernels' (include/qrt/ref/pool1d_ref.h), so this file is both the
 * reference and the fast path (tests/c/pool2d_sanitize.c checks it against a per-output loop
 * written from the header's definition; tests/test_pool2d.py against torch).
 */
#include "qrt/pool2d.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

#include "qrt/pool1d_params.h"
#include "qrt/threadpool.h"

#define QRT__P2_LIM ((int64_t)1 << 31)

/* the padded row: tap j = ox*sw + kx*dw of output ox for j in [0, Wp) */
static int64_t qrt__p2_wp(const qrt_pool2d_params *p) {
    const int64_t a = (int64_t)p->pw + p->w;
    const int64_t b = (p->wo - 1) * (int64_t)p->sw + ((int64_t)p->kw - 1) * p->dw + 1;
    return a > b ? a : b;
}

/* the flat stride-1 form (below): contiguous input rows, unit strides */
static int qrt__p2_flat(const qrt_pool2d_params *p) {
    return p->sh == 1 && p->sw == 1 && p->xs_w == 1;
}

/* its padded plane's rows: every tap row oy + ky*dh of an output row (ceil tail included) */
static int64_t qrt__p2_hp(const qrt_pool2d_params *p) {
    const int64_t a = (int64_t)p->ph + p->h;
    const int64_t b = (p->ho - 1) + ((int64_t)p->kh - 1) * p->dh + 1;
    return a > b ? a : b;
}

qrt_status qrt_pool2d_check(const qrt_pool2d_params *p) {
    if (!p) return QRT_ERR_ARG;
    const int64_t dims[6] = {p->n, p->c, p->h, p->w, p->ho, p->wo};
    for (int i = 0; i < 6; ++i)
        if (dims[i] < 1 || dims[i] >= QRT__P2_LIM) return QRT_ERR_ARG;
    const int32_t geo[4] = {p->kh, p->kw, p->sh, p->sw};
    for (int i = 0; i < 4; ++i)
        if (geo[i] < 1) return QRT_ERR_ARG;
    if (p->dh < 1 || p->dw < 1 || p->ph < 0 || p->pw < 0) return QRT_ERR_ARG;
    if ((int64_t)p->ph > (int64_t)p->kh * p->dh || (int64_t)p->pw > (int64_t)p->kw * p->dw)
        return QRT_ERR_ARG;
    if ((int64_t)p->kh * p->dh >= QRT__P2_LIM || (int64_t)p->kw * p->dw >= QRT__P2_LIM)
        return QRT_ERR_ARG;
    /* every window starts before len + pad (the last one inside the image or its padding) */
    if ((p->ho - 1) * (int64_t)p->sh >= p->h + p->ph) return QRT_ERR_ARG;
    if ((p->wo - 1) * (int64_t)p->sw >= p->w + p->pw) return QRT_ERR_ARG;
    if (qrt__p2_wp(p) >= QRT__P2_LIM || p->ho * p->wo >= QRT__P2_LIM) return QRT_ERR_ARG;
    if (qrt__p2_hp(p) >= QRT__P2_LIM || qrt__p2_hp(p) * qrt__p2_wp(p) >= QRT__P2_LIM)
        return QRT_ERR_ARG;
    const int64_t xs[4] = {p->xs_n, p->xs_c, p->xs_h, p->xs_w};
    const int64_t ext[4] = {p->n, p->c, p->h, p->w};
    int64_t span = 0;
    for (int i = 0; i < 4; ++i) {
        if (xs[i] < 0 || xs[i] >= ((int64_t)1 << 40)) return QRT_ERR_ARG;
        if (xs[i] > 0 && ext[i] - 1 > (((int64_t)1 << 60) - span) / xs[i]) return QRT_ERR_ARG;
        span += (ext[i] - 1) * xs[i]; /* < 2^60: every input index fits int64 */
    }
    if (p->qmin >= p->qmax || p->zero < p->qmin || p->zero > p->qmax) return QRT_ERR_ARG;
    return QRT_OK;
}

static qrt_status qrt__p2_avg_check(const qrt_pool2d_params *p) {
    qrt_status st = qrt_pool2d_check(p);
    if (st != QRT_OK) return st;
    if (p->dh != 1 || p->dw != 1) return QRT_ERR_ARG;
    if ((int64_t)p->kh * p->kw > (int64_t)QRT_POOL1D_MAX_WINDOW) return QRT_ERR_ARG;
    if (p->mode == QRT_AVG_POOL_QNNP)
        return p->scale > 0 && p->scale <= FLT_MAX ? QRT_OK : QRT_ERR_ARG;
    if (p->mode != QRT_AVG_POOL_GENERIC || p->divisor < 0) return QRT_ERR_ARG;
    return QRT_OK;
}

static size_t qrt__p2_slot(const qrt_pool2d_params *p) {
    /* int32 row + its even / odd halves, the int32 sums and three int32 tables of wo */
    const int64_t wp = qrt__p2_wp(p);
    uint64_t b = 4u * (2u * (uint64_t)wp + 32u) + 16u * (uint64_t)p->wo +
                 4u * (uint64_t)p->ho * (uint64_t)p->wo + 64u;
    if (qrt__p2_flat(p)) /* the padded plane, int32 rows sums and window sums */
        b += (uint64_t)qrt__p2_hp(p) * (uint64_t)wp + 8u * (uint64_t)p->ho * (uint64_t)wp + 192u;
    b = (b + 63u) & ~(uint64_t)63u; /* slots 64-byte apart */
    return b > (uint64_t)SIZE_MAX / QRT_POOL_MAX_THREADS ? 0 : (size_t)b;
}

/* the tasks a call splits into: planes over the pool's threads where the call has at least
 * QRT__P2_MT_MIN window positions to reduce (smaller pools run on the caller alone) */
#ifndef QRT__P2_MT_MIN /* (-DQRT__P2_MT_MIN=1: every call of two or more planes splits) */
#define QRT__P2_MT_MIN 262144
#endif
static int qrt__p2_tasks(const qrt_pool2d_params *p, int threads) {
    const int64_t planes = p->n * p->c;
    if (threads <= 1 || planes < 2) return 1;
    const double work = (double)planes * (double)p->ho * (double)p->wo * p->kh * p->kw;
    if (work < QRT__P2_MT_MIN) return 1;
    int t = threads > QRT_POOL_MAX_THREADS ? QRT_POOL_MAX_THREADS : threads;
    return planes < t ? (int)planes : t;
}

size_t qrt_pool2d_scratch_size(const qrt_pool2d_params *p, int threads) {
    const size_t slot = qrt__p2_slot(p);
    if (slot == 0) return SIZE_MAX; /* no buffer is that big: the call is refused */
    return slot * (size_t)(threads < 1 ? 1 : threads > QRT_POOL_MAX_THREADS ? QRT_POOL_MAX_THREADS
                                                                          : threads);
}

typedef void (*qrt__p2_fn)(const qrt_pool2d_params *p, const void *x, void *y, void *scr,
                           int64_t u0, int64_t u1);
typedef struct {
    const qrt_pool2d_params *p;
    const void *x;
    void *y;
    uint8_t *scr;
    size_t slot;
    int64_t planes;
    int tasks;
    qrt__p2_fn fn;
} qrt__p2_job;

static void qrt__p2_task(void *ctx, int i) {
    const qrt__p2_job *j = (const qrt__p2_job *)ctx;
    const int64_t u0 = j->planes * i / j->tasks, u1 = j->planes * (i + 1) / j->tasks;
    if (u1 > u0) j->fn(j->p, j->x, j->y, j->scr + (size_t)i * j->slot, u0, u1);
}

static qrt_status qrt__p2_go(const qrt_pool2d_params *p, const void *x, void *y, void *scratch,
                             size_t scratch_bytes, int threads, qrt__p2_fn fn) {
    if (!x || !y || !scratch) return QRT_ERR_ARG;
    const int tasks = qrt__p2_tasks(p, threads);
    const size_t slot = qrt__p2_slot(p);
    if (slot == 0 || scratch_bytes < slot * (size_t)tasks) return QRT_ERR_ARG;
    qrt__p2_job j = {p, x, y, (uint8_t *)scratch, slot, p->n * p->c, tasks, fn};
    if (tasks == 1)
        fn(p, x, y, scratch, 0, j.planes);
    else
        qrt_pool_run(qrt__p2_task, &j, tasks);
    return QRT_OK;
}

/* taps j of output o inside [0, len): [*jlo, *jhi) */
static inline void qrt__p2_taps(int64_t o, int64_t s, int64_t pad, int64_t d, int64_t k,
                                int64_t len, int64_t *jlo, int64_t *jhi) {
    const int64_t start = o * s - pad;
    int64_t lo = start >= 0 ? 0 : (-start + d - 1) / d;
    int64_t hi = start >= len ? 0 : (len - start + d - 1) / d;
    if (hi > k) hi = k;
    if (lo > hi) lo = hi;
    *jlo = lo, *jhi = hi;
}


/* ---- average pooling's rounding ----------------------------------------------------- */
/* qrt_avg_pool1d_round_() (include/qrt/ref/pool1d_ref.h): QNNP (generic 0) rne(acc * m) +
 * zero, GENERIC rne(acc * m + zero), clamped to [lo, hi].  Where |acc| < 2^22 and m <= 1
 * (windows of at most 2^14 positions, every real scale) the rne is the 1.5 * 2^23 addition
 * (exact round-to-nearest-even below 2^22) and the clamp is on the integer: no float compare,
 * so the compiler vectorises the row (float compares may trap: -ftrapping-math).  Otherwise
 * the value is first limited to +-2048 (beyond the codes either way). */
static inline int32_t qrt__p2_rq(int32_t acc, float m, float zf, int generic, int fast,
                                 int32_t lo, int32_t hi) {
    const float magic = 12582912.0f;
    float v = (float)acc * m;
    if (generic) v = v + zf;
    if (!fast) { /* (a NaN, which the gates exclude, would go to -2048) */
        v = v > -2048.0f ? v : -2048.0f;
        v = v < 2048.0f ? v : 2048.0f;
    }
    v = (v + magic) - magic;
    if (!generic) v = v + zf;
    int32_t r = (int32_t)v;
    r = r < lo ? lo : r;
    return r > hi ? hi : r;
}

/* one output row of codes from its window sums */
#define QRT__P2_ROW(T, yr, ar, rc)                                                               \
    do {                                                                                         \
        if (p->mode == QRT_AVG_POOL_QNNP) {                                                      \
            if (fast)                                                                            \
                for (int64_t ox = 0; ox < wo; ++ox)                                              \
                    (yr)[ox] = (T)qrt__p2_rq((ar)[ox], p->scale, zf, 0, 1, lo, hi);              \
            else                                                                                 \
                for (int64_t ox = 0; ox < wo; ++ox)                                              \
                    (yr)[ox] = (T)qrt__p2_rq((ar)[ox], p->scale, zf, 0, 0, lo, hi);              \
        } else if (fast) {                                                                       \
            for (int64_t ox = 0; ox < wo; ++ox)                                                  \
                (yr)[ox] = (T)qrt__p2_rq((ar)[ox], (rc)[ox], zf, 1, 1, lo, hi);                  \
        } else {                                                                                 \
            for (int64_t ox = 0; ox < wo; ++ox)                                                  \
                (yr)[ox] = (T)qrt__p2_rq((ar)[ox], (rc)[ox], zf, 1, 0, lo, hi);                  \
        }                                                                                        \
    } while (0)

/* the vectorisable rounding applies: |acc| <= 2^14 * 255 < 2^22, multipliers <= 1 (1 / div) */
static inline int qrt__p2_fast(const qrt_pool2d_params *p) {
    return (int64_t)p->kh * p->kw <= ((int64_t)1 << 14) &&
           (p->mode != QRT_AVG_POOL_QNNP || p->scale <= 1.0f);
}

/* GENERIC: f32(1 / div) per output [oy * wo + ox] (one row of them for a divisor_override):
 * div = divisor, or count_include_pad ? pool_h * pool_w : real positions, pool = min(start +
 * k, len + pad) - start per axis; 1 where no position is real (acc is 0 there) */
static void qrt__p2_rcp(const qrt_pool2d_params *p, float *rcp) {
    if (p->mode == QRT_AVG_POOL_QNNP) return;
    for (int64_t oy = 0; oy < (p->divisor > 0 ? 1 : p->ho); ++oy) {
        int64_t k0, k1;
        qrt__p2_taps(oy, p->sh, p->ph, 1, p->kh, p->h, &k0, &k1);
        const int64_t sy = oy * p->sh - p->ph;
        const int64_t ey = sy + p->kh < p->h + p->ph ? sy + p->kh : p->h + p->ph;
        for (int64_t ox = 0; ox < p->wo; ++ox) {
            int64_t a, b;
            qrt__p2_taps(ox, p->sw, p->pw, 1, p->kw, p->w, &a, &b);
            const int64_t sx = ox * p->sw - p->pw;
            const int64_t ex = sx + p->kw < p->w + p->pw ? sx + p->kw : p->w + p->pw;
            int64_t div = p->divisor > 0           ? p->divisor
                          : p->count_include_pad ? (ey - sy) * (ex - sx)
                                                 : (k1 - k0) * (b - a);
            if (div < 1) div = 1;
            rcp[oy * p->wo + ox] = (float)(1.0 / (double)div);
        }
    }
}

/* ---- the two forms, each written once for max and average pooling ---------------------
 * Instantiated per code type T with its accumulator A (T for max, int32 for averages) and
 * AVG (0 / 1, a constant the compiler folds): LD(a) takes a code into A (itself, or a - zero),
 * CB(s, b) combines (max, or +), a padded position of the row is qmin / 0 and one of the flat
 * form's padded plane qmin / the zero point (x - zero adds 0 there), and an output row of A
 * becomes codes by a copy / the rounding above (QRT__P2_ROW). */
#define QRT__P2_LD(a) (qrt__AVG ? (qrt__A)((int32_t)(a) - z) : (qrt__A)(a))
#define QRT__P2_CB(s, b) (qrt__AVG ? (qrt__A)((s) + (b)) : ((b) > (s) ? (b) : (s)))
#define QRT__P2_FINISH(yr, ar, oy)                                                               \
    do {                                                                                         \
        if (qrt__AVG)                                                                            \
            QRT__P2_ROW(qrt__T, yr, ar, rcp + (p->divisor > 0 ? 0 : (oy) * wo));                \
        else /* A is T: the row as it is (dead code where A is int32) */                         \
            memcpy(yr, ar, (size_t)wo * sizeof(qrt__T));                                         \
    } while (0)

/* Rows form (any stride): per output row, the window's image rows reduced into the padded
 * row v, then each output's taps along v (stride 2: v's even / odd halves) into acc. */
#define QRT__P2_ROWS(name, T, A, AVG)                                                            \
    static void name(const qrt_pool2d_params *p, const void *xv, void *yv, void *scr,            \
                     int64_t u0, int64_t u1) {                                                   \
        typedef T qrt__T;                                                                        \
        typedef A qrt__A;                                                                        \
        enum { qrt__AVG = AVG };                                                                 \
        const T *x = (const T *)xv;                                                              \
        T *y = (T *)yv;                                                                          \
        const int64_t wp = qrt__p2_wp(p), W = p->w, wo = p->wo, ho = p->ho;                      \
        const int64_t sw = p->sw, dw = p->dw, kw = p->kw, pw = p->pw, xw = p->xs_w;              \
        const int32_t z = p->zero, lo = p->qmin, hi = p->qmax;                                   \
        const float zf = (float)z;                                                               \
        const int fast = qrt__p2_fast(p);                                                        \
        const A pad = AVG ? (A)0 : (A)p->qmin;                                                   \
        A *v = (A *)scr, *ev = v + wp + 8, *od = ev + (wp + 1) / 2 + 8, *acc = od + wp / 2 + 8;  \
        float *rcp = (float *)(void *)(acc + wo + 8);                                            \
        (void)lo, (void)hi, (void)zf, (void)fast, (void)rcp;                                     \
        for (int64_t j = 0; j < wp; ++j) v[j] = pad;                                             \
        if (AVG) qrt__p2_rcp(p, rcp);                                                            \
        A *vr = v + pw;                                                                          \
        for (int64_t u = u0; u < u1; ++u) {                                                      \
            const int64_t n = u / p->c, c = u - n * p->c;                                        \
            const T *xp = x + n * p->xs_n + c * p->xs_c;                                         \
            T *yp = y + (n * p->c + c) * ho * wo;                                                \
            for (int64_t oy = 0; oy < ho; ++oy) {                                                \
                int64_t k0, k1;                                                                  \
                qrt__p2_taps(oy, p->sh, p->ph, p->dh, p->kh, p->h, &k0, &k1);                    \
                const int64_t iy0 = oy * p->sh - p->ph;                                          \
                if (k0 == k1) /* no image row: every position is padding */                      \
                    for (int64_t ix = 0; ix < W; ++ix) vr[ix] = pad;                             \
                for (int64_t ky = k0; ky < k1; ++ky) {                                           \
                    const T *r = xp + (iy0 + ky * p->dh) * p->xs_h;                              \
                    if (ky == k0 && xw == 1)                                                     \
                        for (int64_t ix = 0; ix < W; ++ix) vr[ix] = QRT__P2_LD(r[ix]);           \
                    else if (ky == k0)                                                           \
                        for (int64_t ix = 0; ix < W; ++ix) vr[ix] = QRT__P2_LD(r[ix * xw]);      \
                    else if (xw == 1)                                                            \
                        for (int64_t ix = 0; ix < W; ++ix)                                       \
                            vr[ix] = QRT__P2_CB(vr[ix], QRT__P2_LD(r[ix]));                      \
                    else                                                                         \
                        for (int64_t ix = 0; ix < W; ++ix)                                       \
                            vr[ix] = QRT__P2_CB(vr[ix], QRT__P2_LD(r[ix * xw]));                 \
                }                                                                                \
                if (sw == 1) {                                                                   \
                    for (int64_t ox = 0; ox < wo; ++ox) acc[ox] = v[ox];                         \
                    for (int64_t kx = 1; kx < kw; ++kx) {                                        \
                        const A *t = v + kx * dw;                                                \
                        for (int64_t ox = 0; ox < wo; ++ox) acc[ox] = QRT__P2_CB(acc[ox], t[ox]); \
                    }                                                                            \
                } else if (sw == 2) {                                                            \
                    for (int64_t i = 0; i < wp / 2; ++i) ev[i] = v[2 * i], od[i] = v[2 * i + 1]; \
                    if (wp & 1) ev[wp / 2] = v[wp - 1];                                          \
                    for (int64_t ox = 0; ox < wo; ++ox) acc[ox] = ev[ox];                        \
                    for (int64_t kx = 1; kx < kw; ++kx) {                                        \
                        const int64_t o = kx * dw;                                               \
                        const A *t = (o & 1 ? od : ev) + o / 2;                                  \
                        for (int64_t ox = 0; ox < wo; ++ox) acc[ox] = QRT__P2_CB(acc[ox], t[ox]); \
                    }                                                                            \
                } else {                                                                         \
                    for (int64_t ox = 0; ox < wo; ++ox) {                                        \
                        const A *t = v + ox * sw;                                                \
                        A s = t[0];                                                              \
                        for (int64_t kx = 1; kx < kw; ++kx) s = QRT__P2_CB(s, t[kx * dw]);      \
                        acc[ox] = s;                                                             \
                    }                                                                            \
                }                                                                                \
                QRT__P2_FINISH(yp + oy * wo, acc, oy);                                           \
            }                                                                                    \
        }                                                                                        \
    }

/* Flat form (stride 1, contiguous rows): per plane the image copied into the padded plane P
 * (rows of wp; its padding written once per call), then over the flat index f = oy*wp + ox one
 * loop per tap row (V[f] = CB over ky of P[f + ky*dh*wp]) and one per tap column (S[f] = CB
 * over kx of V[f + kx*dw]), each as long as the plane: small planes (14x14, 7x7) run a few long
 * loops instead of a few short ones per output row.  S's rows of wp give the output rows. */
#define QRT__P2_FLAT(name, T, A, AVG)                                                            \
    static void name(const qrt_pool2d_params *p, const void *xv, void *yv, void *scr,            \
                     int64_t u0, int64_t u1) {                                                   \
        typedef T qrt__T;                                                                        \
        typedef A qrt__A;                                                                        \
        enum { qrt__AVG = AVG };                                                                 \
        const T *x = (const T *)xv;                                                              \
        T *y = (T *)yv;                                                                          \
        const int64_t wp = qrt__p2_wp(p), hp = qrt__p2_hp(p), W = p->w, wo = p->wo, ho = p->ho; \
        const int64_t nf = ho * wp, ny = (ho - 1) * wp + wo, dwp = p->dh * wp, dw = p->dw;      \
        const int32_t z = p->zero, lo = p->qmin, hi = p->qmax;                                   \
        const float zf = (float)z;                                                               \
        const int fast = qrt__p2_fast(p);                                                        \
        T *P = (T *)scr;                                                                         \
        A *V = (A *)(void *)((uint8_t *)scr + ((hp * wp + 64) & ~(int64_t)15)), *S = V + nf + 16; \
        float *rcp = (float *)(void *)(S + ny + 16);                                             \
        (void)lo, (void)hi, (void)zf, (void)fast, (void)rcp;                                     \
        const T padc = AVG ? (T)z : (T)p->qmin;                                                  \
        for (int64_t j = 0; j < hp * wp; ++j) P[j] = padc;                                       \
        if (AVG) qrt__p2_rcp(p, rcp);                                                            \
        T *pi = P + (int64_t)p->ph * wp + p->pw;                                                 \
        for (int64_t u = u0; u < u1; ++u) {                                                      \
            const int64_t n = u / p->c, c = u - n * p->c;                                        \
            const T *xp = x + n * p->xs_n + c * p->xs_c;                                         \
            T *yp = y + (n * p->c + c) * ho * wo;                                                \
            for (int64_t iy = 0; iy < p->h; ++iy)                                                \
                memcpy(pi + iy * wp, xp + iy * p->xs_h, (size_t)W * sizeof(T));                  \
            for (int64_t f = 0; f < nf; ++f) V[f] = QRT__P2_LD(P[f]);                            \
            for (int64_t ky = 1; ky < p->kh; ++ky) {                                             \
                const T *r = P + ky * dwp;                                                       \
                for (int64_t f = 0; f < nf; ++f) V[f] = QRT__P2_CB(V[f], QRT__P2_LD(r[f]));      \
            }                                                                                    \
            for (int64_t f = 0; f < ny; ++f) S[f] = V[f];                                        \
            for (int64_t kx = 1; kx < p->kw; ++kx) {                                             \
                const A *t = V + kx * dw;                                                        \
                for (int64_t f = 0; f < ny; ++f) S[f] = QRT__P2_CB(S[f], t[f]);                  \
            }                                                                                    \
            for (int64_t oy = 0; oy < ho; ++oy) QRT__P2_FINISH(yp + oy * wo, S + oy * wp, oy);   \
        }                                                                                        \
    }

QRT__P2_ROWS(qrt__p2_max_u8, uint8_t, uint8_t, 0)
QRT__P2_ROWS(qrt__p2_max_s8, int8_t, int8_t, 0)
QRT__P2_ROWS(qrt__p2_avg_u8, uint8_t, int32_t, 1)
QRT__P2_ROWS(qrt__p2_avg_s8, int8_t, int32_t, 1)
QRT__P2_FLAT(qrt__p2_maxf_u8, uint8_t, uint8_t, 0)
QRT__P2_FLAT(qrt__p2_maxf_s8, int8_t, int8_t, 0)
QRT__P2_FLAT(qrt__p2_avgf_u8, uint8_t, int32_t, 1)
QRT__P2_FLAT(qrt__p2_avgf_s8, int8_t, int32_t, 1)

/* [average][flat form][qint8] */
static const qrt__p2_fn qrt__p2_kernels[2][2][2] = {
    {{qrt__p2_max_u8, qrt__p2_max_s8}, {qrt__p2_maxf_u8, qrt__p2_maxf_s8}},
    {{qrt__p2_avg_u8, qrt__p2_avg_s8}, {qrt__p2_avgf_u8, qrt__p2_avgf_s8}}};

static qrt_status qrt__p2_entry(const qrt_pool2d_params *p, int avg, int s8, const void *x,
                                void *y, void *scratch, size_t scratch_bytes, int threads) {
    const qrt_status st = avg ? qrt__p2_avg_check(p) : qrt_pool2d_check(p);
    if (st != QRT_OK) return st;
    if (avg && s8 && p->mode == QRT_AVG_POOL_QNNP) return QRT_ERR_ARG; /* quint8 only */
    return qrt__p2_go(p, x, y, scratch, scratch_bytes, threads,
                      qrt__p2_kernels[avg][qrt__p2_flat(p)][s8]);
}

qrt_status qrt_max_pool2d_u8(const qrt_pool2d_params *p, const uint8_t *x, uint8_t *y,
                             void *scratch, size_t scratch_bytes, int threads) {
    return qrt__p2_entry(p, 0, 0, x, y, scratch, scratch_bytes, threads);
}

qrt_status qrt_max_pool2d_s8(const qrt_pool2d_params *p, const int8_t *x, int8_t *y,
                             void *scratch, size_t scratch_bytes, int threads) {
    return qrt__p2_entry(p, 0, 1, x, y, scratch, scratch_bytes, threads);
}

qrt_status qrt_avg_pool2d_u8(const qrt_pool2d_params *p, const uint8_t *x, uint8_t *y,
                             void *scratch, size_t scratch_bytes, int threads) {
    return qrt__p2_entry(p, 1, 0, x, y, scratch, scratch_bytes, threads);
}

qrt_status qrt_avg_pool2d_s8(const qrt_pool2d_params *p, const int8_t *x, int8_t *y,
                             void *scratch, size_t scratch_bytes, int threads) {
    return qrt__p2_entry(p, 1, 1, x, y, scratch, scratch_bytes, threads);
}

/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file upsample_body.h
 * @brief The one loop of qrt/upsample.h, included by the reference (src/upsample.c) and the
 *        AVX2 + FMA unit (src/x86/upsample_avx2.c) under their own names: QRT_UPSAMPLE_FN.
 */
#include <math.h>

#include "qrt/upsample.h"

/* A[ox] of input row `row` of a plane (form: 0 generic, 1 fused vector, 2 fused tail) */
#define QRT__UP_ROW(T)                                                                             \
    static inline void QRT__UP_CAT(row_, T)(const T *src, float *a, int64_t ow,                    \
                                           const int32_t *wi0, const int32_t *wi1,                 \
                                           const float *wl0, const float *wl1, int form) {         \
        if (form == 0)                                                                             \
            for (int64_t i = 0; i < ow; i++)                                                       \
                a[i] = wl0[i] * (float)src[wi0[i]] + wl1[i] * (float)src[wi1[i]];                  \
        else if (form == 1)                                                                        \
            for (int64_t i = 0; i < ow; i++)                                                       \
                a[i] = fmaf(wl1[i], (float)src[wi1[i]], wl0[i] * (float)src[wi0[i]]);              \
        else                                                                                       \
            for (int64_t i = 0; i < ow; i++)                                                       \
                a[i] = fmaf(wl0[i], (float)src[wi0[i]], wl1[i] * (float)src[wi1[i]]);              \
    }
#define QRT__UP_CAT2(a, b) a##b
#define QRT__UP_CAT(a, b) QRT__UP_CAT2(a, b)
QRT__UP_ROW(uint8_t)
QRT__UP_ROW(int8_t)
QRT__UP_ROW(float)

static inline void qrt__up_row(const qrt_upsample_params *p, const void *plane, int64_t row,
                               float *a, const int32_t *wi0, const int32_t *wi1,
                               const float *wl0, const float *wl1, int form) {
    const int64_t off = row * p->w;
    if (p->dtype == QRT_UPSAMPLE_U8)
        row_uint8_t((const uint8_t *)plane + off, a, p->ow, wi0, wi1, wl0, wl1, form);
    else if (p->dtype == QRT_UPSAMPLE_S8)
        row_int8_t((const int8_t *)plane + off, a, p->ow, wi0, wi1, wl0, wl1, form);
    else
        row_float((const float *)plane + off, a, p->ow, wi0, wi1, wl0, wl1, form);
}

/* one output row of codes: r (the formula of `form`), q = clamp(rint(f32(r - zp) + zp)) */
#define QRT__UP_STORE(T)                                                                           \
    do {                                                                                           \
        T *yq = (T *)y + yo;                                                                       \
        for (int64_t i = 0; i < ow; i++) {                                                         \
            const float r = form == 0   ? l0 * ra[i] + l1 * rb[i]                                  \
                            : form == 1 ? fmaf(l1, rb[i], l0 * ra[i])                              \
                                        : fmaf(l0, ra[i], l1 * rb[i]);                             \
            float q = rintf((r - zp) + zp);                                                        \
            q = q < lo ? lo : (q > hi ? hi : q);                                                   \
            yq[i] = (T)(int)q;                                                                     \
        }                                                                                          \
    } while (0)

void QRT_UPSAMPLE_FN(const qrt_upsample_params *p, const void *x, void *y, const int32_t *hi0,
                     const int32_t *hi1, const float *hl0, const float *hl1, const int32_t *wi0,
                     const int32_t *wi1, const float *wl0, const float *wl1, float *work) {
    const int64_t hw = p->h * p->w, ohw = p->oh * p->ow, ow = p->ow;
    const size_t isz = p->dtype == QRT_UPSAMPLE_F32 ? 4 : 1;
    float *ra = work, *rb = work + ow; /* A of rows ia and ib */
    for (int64_t pl = 0; pl < p->planes; pl++) {
        const void *xp = (const char *)x + (size_t)(pl * hw) * isz;
        const int form = !p->fused ? 0 : (pl % p->c < p->nv ? 1 : 2);
        int64_t ia = -1, ib = -1;
        for (int64_t oy = 0; oy < p->oh; oy++) {
            const int64_t r0 = hi0[oy], r1 = hi1[oy];
            if (ia != r0) {
                if (ib == r0) { /* the previous second row is this first one */
                    float *t = ra;
                    ra = rb, rb = t, ia = r0, ib = -1;
                } else {
                    qrt__up_row(p, xp, r0, ra, wi0, wi1, wl0, wl1, form);
                    ia = r0;
                }
            }
            if (ib != r1) {
                if (r1 == r0) {
                    for (int64_t i = 0; i < ow; i++) rb[i] = ra[i];
                } else {
                    qrt__up_row(p, xp, r1, rb, wi0, wi1, wl0, wl1, form);
                }
                ib = r1;
            }
            const float l0 = hl0[oy], l1 = hl1[oy];
            const int64_t yo = pl * ohw + oy * ow;
            if (p->dtype == QRT_UPSAMPLE_F32) {
                float *yf = (float *)y + yo;
                if (form == 0)
                    for (int64_t i = 0; i < ow; i++) yf[i] = l0 * ra[i] + l1 * rb[i];
                else if (form == 1)
                    for (int64_t i = 0; i < ow; i++) yf[i] = fmaf(l1, rb[i], l0 * ra[i]);
                else
                    for (int64_t i = 0; i < ow; i++) yf[i] = fmaf(l0, ra[i], l1 * rb[i]);
                continue;
            }
            const float zp = p->zp, lo = (float)p->lo, hi = (float)p->hi;
            if (p->dtype == QRT_UPSAMPLE_U8)
                QRT__UP_STORE(uint8_t);
            else
                QRT__UP_STORE(int8_t);
        }
    }
}

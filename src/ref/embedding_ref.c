/* SPDX-License-Identifier: Apache-2.0 */
/* Reference embedding-bag kernels: see include/qrt/ref/embedding_ref.h. Compiled with
 * -ffp-contract=off: the only FMAs are the fmaf() calls. */
#include "qrt/ref/embedding_ref.h"

qrt_status qrt_embedding_check(const qrt_embedding_params *p, const int64_t *idx,
                               const int64_t *starts) {
    if (p == NULL || starts == NULL || (p->n_idx && idx == NULL) || p->dim == 0)
        return QRT_ERR_ARG;
    for (size_t k = 0; k < p->n_idx; ++k)
        if (idx[k] < 0 || (uint64_t)idx[k] >= (uint64_t)p->num_rows)
            return QRT_ERR_ARG;
    if (p->n_bags == 0)
        return QRT_OK;
    if (starts[0] != 0 || (uint64_t)starts[p->n_bags] != (uint64_t)p->n_idx)
        return QRT_ERR_ARG;
    for (size_t b = 0; b < p->n_bags; ++b)
        if (starts[b + 1] < starts[b])
            return QRT_ERR_ARG;
    return QRT_OK;
}

qrt_status qrt_embedding_f32_check(const qrt_embedding_params *p, const int64_t *idx,
                                   const int64_t *starts, const float *w) {
    qrt_status st = qrt_embedding_check(p, idx, starts);
    if (st != QRT_OK)
        return st;
    if (p->mode < QRT_EMBEDDING_SUM || p->mode > QRT_EMBEDDING_MAX ||
        (w != NULL && p->mode != QRT_EMBEDDING_SUM))
        return QRT_ERR_ARG;
    return QRT_OK;
}

qrt_status qrt_embedding_rowwise_check(const qrt_embedding_params *p, const int64_t *idx,
                                       const int64_t *starts) {
    qrt_status st = qrt_embedding_check(p, idx, starts);
    if (st != QRT_OK)
        return st;
    if (!(p->bits == 8 && p->row_bytes == p->dim) &&
        !(p->bits == 4 && p->row_bytes == (p->dim + 1) / 2))
        return QRT_ERR_ARG;
    return QRT_OK;
}

qrt_status qrt_embedding_bag_f32_ref(const qrt_embedding_params *p, const float *table,
                                     const int64_t *idx, const int64_t *starts, const float *w,
                                     float *out) {
    qrt_status st = qrt_embedding_f32_check(p, idx, starts, w);
    if (st != QRT_OK)
        return st;
    QRT_EMBEDDING_BAG_F32_BODY
    return QRT_OK;
}

qrt_status qrt_embedding_bag_rowwise_ref(const qrt_embedding_params *p, const uint8_t *codes,
                                         const float *scale, const float *bias,
                                         const int64_t *idx, const int64_t *starts,
                                         const float *w, float *out) {
    qrt_status st = qrt_embedding_rowwise_check(p, idx, starts);
    if (st != QRT_OK)
        return st;
    QRT_EMBEDDING_BAG_ROWWISE_BODY
    return QRT_OK;
}

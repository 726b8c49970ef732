/* SPDX-License-Identifier: Apache-2.0 */
/* Reference embedding-bag kernels: see include/qrt/ref/embedding_ref.h. Compiled with
 * -ffp-contract=off: the only FMAs are the fmaf() calls. */
#include <math.h>
#include <string.h>

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

qrt_status qrt_embedding_bag_f32_ref(const qrt_embedding_params *p, const float *table,
                                     const int64_t *idx, const int64_t *starts, const float *w,
                                     float *out) {
    qrt_status st = qrt_embedding_check(p, idx, starts);
    if (st != QRT_OK)
        return st;
    if (p->mode < QRT_EMBEDDING_SUM || p->mode > QRT_EMBEDDING_MAX ||
        (w != NULL && p->mode != QRT_EMBEDDING_SUM))
        return QRT_ERR_ARG;
    const size_t D = p->dim;
    for (size_t b = 0; b < p->n_bags; ++b) {
        float *acc = out + b * D;
        size_t count = 0;
        memset(acc, 0, D * sizeof(float));
        for (int64_t k = starts[b]; k < starts[b + 1]; ++k) {
            const int64_t i = idx[k];
            if (i == p->padding_idx)
                continue;
            const float *row = table + (size_t)i * D;
            if (p->mode == QRT_EMBEDDING_MAX) {
                for (size_t d = 0; d < D; ++d)
                    acc[d] = (count == 0 || row[d] > acc[d]) ? row[d] : acc[d];
            } else if (w == NULL) {
                for (size_t d = 0; d < D; ++d)
                    acc[d] = acc[d] + row[d];
            } else if (p->fma_weights) {
                const float wk = w[k];
                for (size_t d = 0; d < D; ++d)
                    acc[d] = fmaf(wk, row[d], acc[d]);
            } else {
                const float wk = w[k];
                for (size_t d = 0; d < D; ++d) {
                    const float t = wk * row[d];
                    acc[d] = acc[d] + t;
                }
            }
            ++count;
        }
        if (p->mode == QRT_EMBEDDING_MEAN) {
            const float n = (float)(count ? count : 1);
            for (size_t d = 0; d < D; ++d)
                acc[d] = acc[d] / n;
        }
    }
    return QRT_OK;
}

qrt_status qrt_embedding_bag_rowwise_ref(const qrt_embedding_params *p, const uint8_t *codes,
                                         const float *scale, const float *bias,
                                         const int64_t *idx, const int64_t *starts,
                                         const float *w, float *out) {
    qrt_status st = qrt_embedding_check(p, idx, starts);
    if (st != QRT_OK)
        return st;
    const size_t D = p->dim;
    if (!(p->bits == 8 && p->row_bytes == D) && !(p->bits == 4 && p->row_bytes == (D + 1) / 2))
        return QRT_ERR_ARG;
    for (size_t b = 0; b < p->n_bags; ++b) {
        float *acc = out + b * D;
        memset(acc, 0, D * sizeof(float));
        for (int64_t k = starts[b]; k < starts[b + 1]; ++k) {
            const size_t i = (size_t)idx[k];
            const float wk = w != NULL ? w[k] : 1.0f;
            const float s = wk * scale[i];
            const float bb = wk * bias[i];
            const uint8_t *row = codes + i * p->row_bytes;
            if (p->bits == 8) {
                for (size_t d = 0; d < D; ++d)
                    acc[d] = fmaf(s, (float)row[d], acc[d] + bb);
            } else {
                for (size_t d = 0; d < D; ++d) {
                    const unsigned q = (row[d >> 1] >> ((d & 1) * 4)) & 15u;
                    acc[d] = fmaf(s, (float)q, acc[d] + bb);
                }
            }
        }
    }
    return QRT_OK;
}

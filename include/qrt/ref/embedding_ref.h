/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file embedding_ref.h
 * @brief Reference embedding-bag kernels (float32 tables and torch's row-wise quantized
 *        8-bit / 4-bit tables) with torch 2.13's arithmetic. Plain loops; the specification
 *        (qrt/embedding.h: the dispatchers and the AVX2+FMA variant, bit-identical).
 *
 * Bags: bag b reads indices [starts[b], starts[b+1]) (n_bags + 1 entries). An Embedding is
 * the case of one index per bag. Every function first checks all of its operands (starts[0]
 * == 0, starts non-decreasing, starts[n_bags] == n_idx, 0 <= idx < num_rows) and returns
 * QRT_ERR_ARG without writing anything when one fails: an index never reads outside the table.
 *
 * float32 tables (ATen embedding_bag, CPU; docs/float-ops.md "Embedding"):
 *   rows equal to padding_idx (>= 0) are skipped and not counted;
 *   SUM:      acc = 0; acc += row[d] in index order;
 *             weighted: acc = fmaf(w, row[d], acc) when `fma_weights` (fbgemm's kernel, torch's
 *             path without padding_idx), else acc = acc + f32(w * row[d]) (ATen's own loop);
 *   MEAN:     the SUM, then acc / (float)max(count, 1);
 *   MAX:      acc = the first row; then row[d] > acc ? row[d] : acc; an empty bag gives 0.
 * Row-wise quantized tables (torch.ops.quantized.embedding_bag_byte / _4bit, embedding_byte):
 *   row i holds codes q (8-bit: one per byte; 4-bit: two per byte, low nibble first), a float
 *   scale s_i and bias b_i (= f32(-zero_point * scale), rounded to fp16 for 4-bit, by the
 *   caller); with per-sample weight w (1 without): sw = f32(w * s_i), bw = f32(w * b_i);
 *   acc = fmaf(sw, (float)q, f32(acc + bw)) in index order (fbgemm's reference order; its JIT
 *   kernel and ATen's fallback compute the same). Always a sum: torch ignores the mode.
 */
#ifndef QRT_REF_EMBEDDING_REF_H
#define QRT_REF_EMBEDDING_REF_H

#include <math.h>
#include "qrt/types.h"

#define QRT_EMBEDDING_SUM  0
#define QRT_EMBEDDING_MEAN 1
#define QRT_EMBEDDING_MAX  2

/** Shape and options of one embedding-bag call. */
typedef struct {
    size_t num_rows;     /**< rows of the table (num_embeddings) */
    size_t dim;          /**< embedding_dim (floats per output row) */
    size_t row_bytes;    /**< quantized tables: bytes per row (dim or ceil(dim/2)) */
    size_t n_idx;        /**< number of indices */
    size_t n_bags;       /**< number of bags (output rows) */
    int mode;            /**< QRT_EMBEDDING_SUM / MEAN / MAX (float tables) */
    int fma_weights;     /**< float SUM with weights: fmaf (1) or multiply then add (0) */
    int bits;            /**< quantized tables: 8 or 4 */
    int64_t padding_idx; /**< float tables: the row skipped in every bag; < 0: none */
} qrt_embedding_params;

/* The loop bodies, shared by the reference (src/ref/embedding_ref.c) and the AVX2+FMA
 * variant (src/x86/embedding_avx2.c: the same code, fmaf inlined and vectorised over d). They
 * assume qrt_embedding_check() passed. */
#define QRT_EMBEDDING_BAG_F32_BODY                                                               \
    const size_t D = p->dim;                                                                     \
    for (size_t b = 0; b < p->n_bags; ++b) {                                                     \
        float *acc = out + b * D;                                                                \
        size_t count = 0;                                                                        \
        for (size_t d = 0; d < D; ++d)                                                           \
            acc[d] = 0.0f;                                                                       \
        for (int64_t k = starts[b]; k < starts[b + 1]; ++k) {                                    \
            const int64_t i = idx[k];                                                            \
            if (i == p->padding_idx)                                                             \
                continue;                                                                        \
            const float *row = table + (size_t)i * D;                                            \
            if (p->mode == QRT_EMBEDDING_MAX) {                                                  \
                for (size_t d = 0; d < D; ++d)                                                   \
                    acc[d] = (count == 0 || row[d] > acc[d]) ? row[d] : acc[d];                  \
            } else if (w == NULL) {                                                              \
                for (size_t d = 0; d < D; ++d)                                                   \
                    acc[d] = acc[d] + row[d];                                                    \
            } else if (p->fma_weights) {                                                         \
                const float wk = w[k];                                                           \
                for (size_t d = 0; d < D; ++d)                                                   \
                    acc[d] = fmaf(wk, row[d], acc[d]);                                           \
            } else {                                                                             \
                const float wk = w[k];                                                           \
                for (size_t d = 0; d < D; ++d) {                                                 \
                    const float t = wk * row[d];                                                 \
                    acc[d] = acc[d] + t;                                                         \
                }                                                                                \
            }                                                                                    \
            ++count;                                                                             \
        }                                                                                        \
        if (p->mode == QRT_EMBEDDING_MEAN) {                                                     \
            const float n = (float)(count ? count : 1);                                          \
            for (size_t d = 0; d < D; ++d)                                                       \
                acc[d] = acc[d] / n;                                                             \
        }                                                                                        \
    }

#define QRT_EMBEDDING_BAG_ROWWISE_BODY                                                           \
    const size_t D = p->dim;                                                                     \
    for (size_t b = 0; b < p->n_bags; ++b) {                                                     \
        float *acc = out + b * D;                                                                \
        for (size_t d = 0; d < D; ++d)                                                           \
            acc[d] = 0.0f;                                                                       \
        for (int64_t k = starts[b]; k < starts[b + 1]; ++k) {                                    \
            const size_t i = (size_t)idx[k];                                                     \
            const float wk = w != NULL ? w[k] : 1.0f;                                            \
            const float s = wk * scale[i];                                                       \
            const float bb = wk * bias[i];                                                       \
            const uint8_t *row = codes + i * p->row_bytes;                                       \
            if (p->bits == 8) {                                                                  \
                for (size_t d = 0; d < D; ++d)                                                   \
                    acc[d] = fmaf(s, (float)row[d], acc[d] + bb);                                \
            } else {                                                                             \
                for (size_t d = 0; d < D; ++d) {                                                 \
                    const unsigned q = (row[d >> 1] >> ((d & 1) * 4)) & 15u;                     \
                    acc[d] = fmaf(s, (float)q, acc[d] + bb);                                     \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }

/** The operand checks every kernel makes first (see the file comment). */
qrt_status qrt_embedding_check(const qrt_embedding_params *p, const int64_t *idx,
                               const int64_t *starts);
/** qrt_embedding_check() + a known mode; weights only with SUM. */
qrt_status qrt_embedding_f32_check(const qrt_embedding_params *p, const int64_t *idx,
                                   const int64_t *starts, const float *w);
/** qrt_embedding_check() + bits 8 (row_bytes == dim) or 4 (row_bytes == ceil(dim / 2)). */
qrt_status qrt_embedding_rowwise_check(const qrt_embedding_params *p, const int64_t *idx,
                                       const int64_t *starts);

/** float32 table [num_rows][dim] -> out [n_bags][dim]; `w` (n_idx) may be NULL (SUM only). */
qrt_status qrt_embedding_bag_f32_ref(const qrt_embedding_params *p, const float *table,
                                     const int64_t *idx, const int64_t *starts, const float *w,
                                     float *out);

/** Row-wise quantized table [num_rows][row_bytes] with per-row scale/bias -> out
 *  [n_bags][dim]; `w` (n_idx) may be NULL. */
qrt_status qrt_embedding_bag_rowwise_ref(const qrt_embedding_params *p, const uint8_t *codes,
                                         const float *scale, const float *bias,
                                         const int64_t *idx, const int64_t *starts,
                                         const float *w, float *out);

#endif /* QRT_REF_EMBEDDING_REF_H */

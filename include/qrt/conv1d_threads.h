/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_threads.h
 * @brief qrt_conv1d_u8_mt(): qrt_conv1d_u8() cut into independent sub-calls (over batch,
 *        output positions, or output channels / groups) run on the qrt thread pool.
 *
 * Every output element is computed by exactly one sub-call with the same exact int32
 * arithmetic, so the result is bit-identical for every thread count.  Small layers (below
 * QRT_CONV1D_MT_MIN_WORK) run on the calling thread only.
 */
#ifndef QRT_CONV1D_THREADS_H
#define QRT_CONV1D_THREADS_H

#include "qrt/conv1d.h"
#include "qrt/threadpool.h"

#ifndef QRT_CONV1D_MT_MIN_WORK
/** Work units (MACs + 16 per input/output element) below which one thread is used. */
#define QRT_CONV1D_MT_MIN_WORK 1000000.0
#endif
#ifndef QRT_CONV1D_MT_GEMV_BYTE
/** Work units per weight byte of a call with at most 4 output positions in all (a GEMV:
 *  bound by the weight stream, not by its multiply-adds). */
#define QRT_CONV1D_MT_GEMV_BYTE 16.0
#endif
/** Run-time threshold (tests lower it to cut tiny layers); one per process, in
 *  src/conv1d_threads.c. */
extern double qrt_conv1d_mt_min_work;
#define QRT_CONV1D_MT_GRAN_T 16 /**< position cuts fall on multiples of one 16-lane vector */
#define QRT_CONV1D_MT_MIN_T 2   /**< position granules per chunk at least (32 positions) */
#define QRT_CONV1D_MT_GRAN_C 8  /**< channel cuts fall on multiples of one 8-channel tile */

/**
 * How a call is cut.  Batch: `chunks` runs of `per` batch rows.  Otherwise a grid of
 * `parts_t` position parts x `parts_c` channel parts (chunk i = position part i / parts_c,
 * channel part i % parts_c); the parts of an axis are balanced in granules (16 positions, 8
 * output channels or one group), so no thread gets more than one granule more than another.
 */
typedef struct {
    int chunks;  /**< sub-calls (1: not cut) */
    int axis;    /**< 0: batch, 1: output positions, 2: output channels / groups, 3: both */
    int64_t per; /**< largest run of units (batches, positions, or groups/channels) of a chunk */
    int64_t units;
    int parts_t, parts_c; /**< position parts x channel parts (axes 1..3) */
} qrt_conv1d_split;

/** @brief How qrt_conv1d_u8_mt() cuts `p` for `threads` threads (pure function of both). */
qrt_conv1d_split qrt_conv1d_split_of(const qrt_conv1d_params *p, int threads);

/** Arguments of sub-call `i`. */
typedef struct {
    qrt_conv1d_params p;
    const uint8_t *x;
    const int8_t *w, *wpack;
    const int32_t *wsum;
    qrt_conv1d_quant q;
    void *out;
} qrt__c1_sub;

/** @brief Sub-call i of split s (pointer offsets only; nothing is read). */
qrt__c1_sub qrt_conv1d_sub(const qrt_conv1d_params *p, const qrt_conv1d_split *s, int i,
                           const uint8_t *x, const int8_t *w, const int8_t *wpack,
                           const int32_t *wsum, const qrt_conv1d_quant *q, void *out);

/** @brief Scratch bytes qrt_conv1d_u8_mt() needs for `threads` threads (64-byte slots), with
 *         q as for qrt_conv1d_u8_scratch_size() (NULL allowed). */
size_t qrt_conv1d_u8_mt_scratch_size(const qrt_conv1d_params *p, const qrt_conv1d_quant *q,
                                     int variant, int threads);

/**
 * @brief qrt_conv1d_u8() on up to `threads` threads; same contract and bit-identical result.
 * @param[in] scratch qrt_conv1d_u8_mt_scratch_size(p, q, variant, threads) bytes
 */
qrt_status qrt_conv1d_u8_mt(const qrt_conv1d_params *p, const uint8_t *x, const int8_t *w,
                            const int8_t *wpack, const int32_t *wsum, const qrt_conv1d_quant *q,
                            void *out, void *scratch, size_t scratch_size, int variant,
                            int threads);

#endif /* QRT_CONV1D_THREADS_H */

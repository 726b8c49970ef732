/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file threadpool.h
 * @brief A small persistent pthread pool (no OpenMP): qrt_pool_run(fn, ctx, ntasks) runs
 *        fn(ctx, 0..ntasks-1) on the calling thread plus up to qrt_pool_get_threads()-1 workers
 *        and returns when every task is done.
 *
 * One job runs at a time: a caller that finds the pool busy (another Python thread inside a
 * nogil kernel) runs its tasks inline, so results never depend on who ran what.  Workers are
 * started lazily, spin briefly after a job (back-to-back calls skip the futex wake-up), then
 * sleep on a condition variable.  After fork() the child starts with no workers.
 *
 * The state lives in src/threadpool.c, compiled once into libqrt_core: one pool per process,
 * whichever extension module (or C driver) calls it.
 */
#ifndef QRT_THREADPOOL_H
#define QRT_THREADPOOL_H

#include <stddef.h>
#include <stdint.h>

#define QRT_POOL_MAX_THREADS 64   /**< upper bound of qrt_pool_set_threads() */
#define QRT_POOL_MAX_TASKS   4096 /**< tasks per job (more run on the caller alone) */
#ifndef QRT_POOL_SPIN
#define QRT_POOL_SPIN 20000 /**< pause iterations a worker spins before sleeping */
#endif
#ifndef QRT_POOL_MAIN_SPIN
#define QRT_POOL_MAIN_SPIN 20000 /**< pause iterations the caller spins before yielding */
#endif

/** A task: fn(ctx, i) for i in [0, ntasks). */
typedef void (*qrt_pool_fn)(void *ctx, int i);

/** @brief Threads used by qrt_pool_run() (caller included), >= 1. */
int qrt_pool_get_threads(void);

/**
 * @brief Set the thread count (caller included); clamped to [1, QRT_POOL_MAX_THREADS].
 *        Workers are created on the next job that needs them; extra ones keep sleeping.
 */
void qrt_pool_set_threads(int n);

/**
 * @brief Run fn(ctx, i) for every i in [0, ntasks) and wait for all of them.  Tasks must be
 *        independent (they may run in any order, on any thread).
 */
void qrt_pool_run(qrt_pool_fn fn, void *ctx, int ntasks);

#endif /* QRT_THREADPOOL_H */

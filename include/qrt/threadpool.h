/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file threadpool.h
 * @brief A small persistent pthread pool (no OpenMP): qrt_pool_run(fn, ctx, ntasks) runs
 *        fn(ctx, 0..ntasks-1) on the calling thread plus up to qrt_pool_get_threads()-1 workers
 *        and returns when every task is done.
 *
 * One job runs at a time: a caller that finds the pool busy (another Python thread inside a
 * nogil kernel) runs its tasks inline, so results never depend on who ran what.  Tasks are
 * claimed one at a time by whoever is free (the caller too), so a worker that starts late
 * leaves its share to the others.  Workers are started lazily, spin QRT_POOL_SPIN_NS after a
 * job (back-to-back layers skip the wake-up), then sleep on a condition variable; the caller
 * takes the condition variable's lock only when some worker sleeps.  After fork() the child
 * starts with no workers.
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
#ifndef QRT_POOL_SPIN_NS
/** How long a worker spins after a job before sleeping: covers the gap between two layers
 *  (Python dispatch, unthreaded ops: MobileNetV3's squeeze-excitation block, pool + two SE
 *  convs + table + mul, took 130-175 us between two threaded 1x1 convs, and a worker asleep
 *  when the next one starts wakes too late to help: 2T slower than 1T), not more: a spinning
 *  thread on a busy machine takes time from the threads that have work. */
#define QRT_POOL_SPIN_NS 250000
#endif
#ifndef QRT_POOL_MAIN_SPIN_NS
/** How long the caller spins waiting for the last running tasks before it yields the core. */
#define QRT_POOL_MAIN_SPIN_NS 30000
#endif

#ifndef QRT_POOL_LATE_NS
/** A job is "late" when the caller, out of tasks, waits longer than twice its own share plus
 *  this for a worker; QRT_POOL_STRIKES late jobs in a row make the next QRT_POOL_BACKOFF jobs
 *  run on the caller alone (an oversubscribed machine, where waiting for a descheduled worker
 *  costs more than the second thread gains). */
#define QRT_POOL_LATE_NS 100000
#endif
#ifndef QRT_POOL_STRIKES
#define QRT_POOL_STRIKES 3
#endif
#ifndef QRT_POOL_BACKOFF
#define QRT_POOL_BACKOFF 64
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

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
 * The state is static: every translation unit including this header has its own pool (qrt
 * includes it from one extension module, qrt._conv1d).
 */
#ifndef QRT_THREADPOOL_H
#define QRT_THREADPOOL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#define QRT_POOL_MAX_THREADS 64 /**< upper bound of qrt_pool_set_threads() */
#ifndef QRT_POOL_SPIN
#define QRT_POOL_SPIN 20000 /**< pause iterations a worker spins before sleeping */
#endif

/** A task: fn(ctx, i) for i in [0, ntasks). */
typedef void (*qrt_pool_fn)(void *ctx, int i);

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_uint generation;   /* bumped for every job */
    atomic_int next;          /* next task index to claim */
    atomic_int done;          /* tasks finished */
    atomic_int busy;          /* a job is in flight */
    atomic_int checked_in;    /* workers done with the current job */
    int ntasks;
    qrt_pool_fn fn;
    void *ctx;
    int started;              /* workers created */
    int wanted;               /* threads in total, caller included */
    pid_t pid;                /* process that created the workers */
} qrt__pool_t;

static qrt__pool_t qrt__pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0,
                                0, 0, NULL, NULL, 0, 1, 0};

static inline void qrt__pool_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Claim and run tasks until none is left. */
static inline void qrt__pool_drain(qrt__pool_t *P, qrt_pool_fn fn, void *ctx, int ntasks)
{
    for (;;) {
        const int i = atomic_fetch_add_explicit(&P->next, 1, memory_order_acq_rel);
        if (i >= ntasks)
            break;
        fn(ctx, i);
        atomic_fetch_add_explicit(&P->done, 1, memory_order_acq_rel);
    }
}

static qrt__pool_t qrt__pool;

/* arg: the generation when the worker was created (the pool is claimed then, so the next job
 * is generation arg + 1 and the worker must take part in it). */
static void *qrt__pool_worker(void *arg)
{
    qrt__pool_t *P = &qrt__pool;
    unsigned seen = (unsigned)(uintptr_t)arg;
    for (;;) {
        unsigned g;
        int spins = 0;
        while ((g = atomic_load_explicit(&P->generation, memory_order_acquire)) == seen &&
               spins < QRT_POOL_SPIN) {
            qrt__pool_pause();
            ++spins;
        }
        if (g == seen) {
            pthread_mutex_lock(&P->mu);
            while ((g = atomic_load_explicit(&P->generation, memory_order_acquire)) == seen)
                pthread_cond_wait(&P->cv, &P->mu);
            pthread_mutex_unlock(&P->mu);
        }
        seen = g;
        /* fn/ctx/ntasks were written before the generation was bumped (release). */
        qrt__pool_drain(P, P->fn, P->ctx, P->ntasks);
        /* Last touch of the job: the caller waits for every worker to check in before it
         * returns, so no late worker can ever read the fields of a later job. */
        atomic_fetch_add_explicit(&P->checked_in, 1, memory_order_acq_rel);
    }
    return NULL;
}

/** @brief Threads used by qrt_pool_run() (caller included), >= 1. */
static inline int qrt_pool_get_threads(void) { return qrt__pool.wanted; }

/**
 * @brief Set the thread count (caller included); clamped to [1, QRT_POOL_MAX_THREADS].
 *        Workers are created on the next job that needs them; extra ones keep sleeping.
 */
static inline void qrt_pool_set_threads(int n)
{
    if (n < 1)
        n = 1;
    if (n > QRT_POOL_MAX_THREADS)
        n = QRT_POOL_MAX_THREADS;
    qrt__pool.wanted = n;
}

/* Make sure `want - 1` workers exist (called with the pool claimed). */
static inline int qrt__pool_grow(qrt__pool_t *P, int want)
{
    const pid_t pid = getpid();
    if (P->pid != pid) { /* first use, or a forked child: the parent's workers are gone */
        P->started = 0;
        P->pid = pid;
    }
    while (P->started < want - 1) {
        pthread_t th;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, 256 * 1024);
        const unsigned g = atomic_load_explicit(&P->generation, memory_order_acquire);
        const int rc = pthread_create(&th, &at, qrt__pool_worker, (void *)(uintptr_t)g);
        pthread_attr_destroy(&at);
        if (rc != 0)
            break;
        P->started++;
    }
    return P->started + 1;
}

/**
 * @brief Run fn(ctx, i) for every i in [0, ntasks) and wait for all of them.  Tasks must be
 *        independent (they may run in any order, on any thread).
 */
static inline void qrt_pool_run(qrt_pool_fn fn, void *ctx, int ntasks)
{
    qrt__pool_t *P = &qrt__pool;
    int expected = 0;
    if (ntasks <= 1 || P->wanted <= 1 ||
        !atomic_compare_exchange_strong(&P->busy, &expected, 1)) {
        for (int i = 0; i < ntasks; ++i)
            fn(ctx, i);
        return;
    }
    if (qrt__pool_grow(P, P->wanted) <= 1) { /* could not start a worker */
        atomic_store(&P->busy, 0);
        for (int i = 0; i < ntasks; ++i)
            fn(ctx, i);
        return;
    }
    P->fn = fn;
    P->ctx = ctx;
    P->ntasks = ntasks;
    atomic_store_explicit(&P->done, 0, memory_order_relaxed);
    atomic_store_explicit(&P->next, 0, memory_order_relaxed);
    atomic_store_explicit(&P->checked_in, 0, memory_order_relaxed);
    const int workers = P->started;
    pthread_mutex_lock(&P->mu);
    atomic_fetch_add_explicit(&P->generation, 1, memory_order_release);
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
    qrt__pool_drain(P, fn, ctx, ntasks);
    int spins = 0;
    while (atomic_load_explicit(&P->done, memory_order_acquire) < ntasks ||
           atomic_load_explicit(&P->checked_in, memory_order_acquire) < workers) {
        if (++spins < 100000)
            qrt__pool_pause();
        else
            sched_yield();
    }
    atomic_store_explicit(&P->busy, 0, memory_order_release);
}

#endif /* QRT_THREADPOOL_H */

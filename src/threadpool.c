/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file threadpool.c
 * @brief qrt/threadpool.h: the persistent pthread pool.  Compiled once, into libqrt_core, so
 *        every extension module shares this one pool (and its thread count).
 */
#include "qrt/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

/* The words that different threads write live on their own cache lines: workers spin on
 * `generation` (written once per job), every task claim is a CAS on `claim` and every finished
 * task an increment of `done`, so a spinning worker's line is not invalidated by each claim and
 * the caller's wait does not bounce the claim line. */
#define QRT__LINE 64
typedef struct {
    _Alignas(QRT__LINE) atomic_uint generation; /* bumped for every job; workers spin on it */
    qrt_pool_fn fn;                             /* the job (published before generation) */
    void *ctx;
    int ntasks;
    _Alignas(QRT__LINE) _Atomic uint64_t claim; /* generation << 32 | ntasks << 16 | next */
    _Alignas(QRT__LINE) atomic_int done;        /* tasks finished */
    _Alignas(QRT__LINE) atomic_int busy;        /* a job is in flight */
    atomic_int sleepers;                        /* workers waiting on cv (under mu) */
    int strikes;     /* consecutive jobs whose wait for a worker was late (caller only) */
    int inline_left; /* jobs to run on the caller alone after QRT_POOL_STRIKES strikes */
    int started;                                /* workers created */
    int wanted;                                 /* threads in total, caller included */
    pid_t pid;                                  /* process that created the workers */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} qrt__pool_t;

static qrt__pool_t qrt__pool = {.wanted = 1,
                                .mu = PTHREAD_MUTEX_INITIALIZER,
                                .cv = PTHREAD_COND_INITIALIZER};

static inline int64_t qrt__pool_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void qrt__pool_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Claim and run tasks of job `gen` until none is left.  A task index is claimed by a CAS on
 * the word (gen << 32 | ntasks << 16 | next), which carries the job's own task count: a worker late for a finished job sees another generation and
 * claims nothing, so it never runs a task with another job's fn/ctx (the caller cannot start a
 * new job before every claimed task of the current one is done). */
static inline void qrt__pool_drain(qrt__pool_t *P, unsigned gen) {
    uint64_t w = atomic_load_explicit(&P->claim, memory_order_acquire);
    for (;;) {
        const int i = (int)(w & 0xffffu), nt = (int)((w >> 16) & 0xffffu);
        if ((unsigned)(w >> 32) != gen || i >= nt) return;
        if (!atomic_compare_exchange_weak_explicit(&P->claim, &w, w + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue;
        /* the claim succeeded on job gen with a task left: fn/ctx (published before the claim
         * word) are this job's, and the caller cannot return before this task is done */
        P->fn(P->ctx, i);
        atomic_fetch_add_explicit(&P->done, 1, memory_order_acq_rel);
        w = atomic_load_explicit(&P->claim, memory_order_acquire);
    }
}

/* arg: the generation when the worker was created. */
static void *qrt__pool_worker(void *arg) {
    qrt__pool_t *P = &qrt__pool;
    unsigned seen = (unsigned)(uintptr_t)arg;
    for (;;) {
        unsigned g;
        const int64_t until = qrt__pool_now_ns() + QRT_POOL_SPIN_NS;
        unsigned spins = 0;
        while ((g = atomic_load_explicit(&P->generation, memory_order_acquire)) == seen) {
            qrt__pool_pause();
            if ((++spins & 63u) == 0) {
                if (qrt__pool_now_ns() > until) break;
                /* a worker woken onto the caller's core (the other one busy) must not spin
                 * the caller off it: let whoever shares this core run */
                if ((spins & 511u) == 0) sched_yield();
            }
        }
        if (g == seen) {
            /* announce the sleep before the last look at generation (both seq_cst): the
             * caller either sees sleepers > 0 and broadcasts under mu, or this look sees its
             * new generation */
            pthread_mutex_lock(&P->mu);
            atomic_fetch_add(&P->sleepers, 1);
            while ((g = atomic_load(&P->generation)) == seen) pthread_cond_wait(&P->cv, &P->mu);
            atomic_fetch_sub(&P->sleepers, 1);
            pthread_mutex_unlock(&P->mu);
        }
        seen = g;
        qrt__pool_drain(P, g);
    }
    return NULL;
}

int qrt_pool_get_threads(void) {
    return qrt__pool.wanted;
}

void qrt_pool_set_threads(int n) {
    if (n < 1) n = 1;
    if (n > QRT_POOL_MAX_THREADS) n = QRT_POOL_MAX_THREADS;
    qrt__pool.wanted = n;
}

/* Make sure `want - 1` workers exist (called with the pool claimed). */
static inline int qrt__pool_grow(qrt__pool_t *P, int want) {
    const pid_t pid = getpid();
    if (P->pid != pid) { /* first use, or a forked child: the parent's workers are gone and
                          * the mutex may have been copied while one of them held it */
        if (P->pid != 0) {
            pthread_mutex_init(&P->mu, NULL);
            pthread_cond_init(&P->cv, NULL);
        }
        atomic_store(&P->sleepers, 0);
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
        if (rc != 0) break;
        P->started++;
    }
    return P->started + 1;
}

void qrt_pool_run(qrt_pool_fn fn, void *ctx, int ntasks) {
    qrt__pool_t *P = &qrt__pool;
    int expected = 0;
    if (ntasks <= 1 || ntasks > QRT_POOL_MAX_TASKS || P->wanted <= 1 ||
        !atomic_compare_exchange_strong(&P->busy, &expected, 1)) {
        for (int i = 0; i < ntasks; ++i) fn(ctx, i);
        return;
    }
    if (P->inline_left > 0 || qrt__pool_grow(P, P->wanted) <= 1) {
        /* backing off after late workers (below), or could not start a worker */
        if (P->inline_left > 0) P->inline_left--;
        atomic_store(&P->busy, 0);
        for (int i = 0; i < ntasks; ++i) fn(ctx, i);
        return;
    }
    const int64_t t0 = qrt__pool_now_ns();
    P->fn = fn;
    P->ctx = ctx;
    P->ntasks = ntasks;
    atomic_store_explicit(&P->done, 0, memory_order_relaxed);
    const unsigned gen = atomic_load_explicit(&P->generation, memory_order_relaxed) + 1u;
    atomic_store_explicit(&P->claim, (uint64_t)gen << 32 | (uint64_t)ntasks << 16,
                          memory_order_release);
    atomic_store(&P->generation, gen); /* seq_cst: ordered before the sleepers load */
    if (atomic_load(&P->sleepers) > 0) { /* spinning workers need no syscall */
        pthread_mutex_lock(&P->mu);
        pthread_cond_broadcast(&P->cv);
        pthread_mutex_unlock(&P->mu);
    }
    qrt__pool_drain(P, gen);
    if (atomic_load_explicit(&P->done, memory_order_acquire) < ntasks) {
        const int64_t t1 = qrt__pool_now_ns(), until = t1 + QRT_POOL_MAIN_SPIN_NS;
        unsigned spins = 0;
        int yield = 0;
        while (atomic_load_explicit(&P->done, memory_order_acquire) < ntasks) {
            if (yield) {
                sched_yield(); /* a preempted worker holds the last task: give it the core */
            } else {
                qrt__pool_pause();
                if ((++spins & 63u) == 0 && qrt__pool_now_ns() > until) yield = 1;
            }
        }
        /* A worker that holds a task long after the caller ran out of its own was descheduled
         * (more runnable threads than cores): waiting for it costs more than the second
         * thread gains.  After QRT_POOL_STRIKES such jobs in a row, run the next
         * QRT_POOL_BACKOFF jobs on the caller alone, then try the workers again.  Who runs a
         * task never changes its result. */
        const int64_t t2 = qrt__pool_now_ns();
        if (t2 - t1 > 2 * (t1 - t0) + QRT_POOL_LATE_NS) {
            if (++P->strikes >= QRT_POOL_STRIKES) P->strikes = 0, P->inline_left = QRT_POOL_BACKOFF;
        } else {
            P->strikes = 0;
        }
    } else {
        P->strikes = 0;
    }
    atomic_store_explicit(&P->busy, 0, memory_order_release);
}

/* A persistent pthread pool. Every wait (a worker's for the next run, thread 0's
 * for the end of a run, a barrier's for the last thread in) spins for up to
 * SPIN_NS and then sleeps on a condition variable: a decode loop's runs and a
 * graph's nodes follow each other within microseconds, and waking a sleeper
 * costs tens of them on a VM (measured: a 1024 x 1024 Q4_K mat-vec took as long
 * on two threads as on one), while an oversubscribed machine is not burnt by
 * threads that spin for long. The thread that completes a barrier takes the
 * sleepers' mutex only when one of them sleeps: between the short nodes of a
 * graph nobody does, and a lock and a broadcast per node were most of a small
 * node's cost on two threads. */
#include "threadpool.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum { ERROR_MAX = 384 };
#define SPIN_NS 50000 /* how long a wait spins before it sleeps */

typedef struct worker {
    ct_cpu_threadpool *pool;
    int ith;
    pthread_t thread;
} worker;

struct ct_cpu_threadpool {
    int n_threads;
    worker *workers;       /* [1, n_threads) used */
    int *cur_node;         /* node each thread is computing, written by that thread only */

    pthread_mutex_t mutex; /* guards the fields down to `arg` (generation and pending are set
                              under it; a worker's decrement of pending and the spinning
                              waits need not hold it) */
    pthread_cond_t work_cv;
    pthread_cond_t done_cv;
    atomic_ulong generation;
    atomic_int pending;
    bool shutdown;
    ct_cpu_job_fn fn;
    void *arg;

    atomic_int bar_count;
    atomic_uint bar_phase;
    atomic_int bar_sleepers; /* threads inside the sleeping part of the barrier */
    pthread_mutex_t bar_mutex;
    pthread_cond_t bar_cv;

    atomic_int err_node;   /* -1, or the node of the first error */
    atomic_int abort_at;   /* -1, or the node before which the abort callback said stop */
    ct_status err_status;  /* written by the thread that set err_node */
    char err_message[ERROR_MAX];
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Pauses until cond holds or about SPIN_NS have passed (the clock read every 64 pauses). */
#define SPIN_UNTIL(cond)                                        \
    do {                                                        \
        uint64_t spin_t0_ = 0;                                  \
        for (unsigned spin_i_ = 1; !(cond); spin_i_++) {        \
            cpu_relax();                                        \
            if (spin_i_ % 64 != 0) continue;                    \
            const uint64_t spin_t_ = now_ns();                  \
            if (spin_t0_ == 0) spin_t0_ = spin_t_;              \
            else if (spin_t_ - spin_t0_ > SPIN_NS) break;       \
        }                                                       \
    } while (0)

static void *worker_main(void *arg) {
    worker *w = arg;
    ct_cpu_threadpool *pool = w->pool;
    unsigned long seen = 0;
    for (;;) {
        SPIN_UNTIL(atomic_load(&pool->generation) != seen);
        pthread_mutex_lock(&pool->mutex);
        while (atomic_load(&pool->generation) == seen && !pool->shutdown)
            pthread_cond_wait(&pool->work_cv, &pool->mutex);
        if (pool->shutdown) break;
        seen = atomic_load(&pool->generation);
        ct_cpu_job_fn fn = pool->fn;
        void *fn_arg = pool->arg;
        pthread_mutex_unlock(&pool->mutex);
        fn(pool, w->ith, fn_arg);
        /* The last one out wakes thread 0 if it sleeps: it checks pending under the
         * mutex before it waits, so a signal sent with the mutex held is not lost. */
        if (atomic_fetch_sub(&pool->pending, 1) == 1) {
            pthread_mutex_lock(&pool->mutex);
            pthread_cond_signal(&pool->done_cv);
            pthread_mutex_unlock(&pool->mutex);
        }
    }
    pthread_mutex_unlock(&pool->mutex);
    return NULL;
}

/* Stops and joins workers [1, n_started), then frees everything. */
static void pool_destroy(ct_cpu_threadpool *pool, int n_started) {
    pthread_mutex_lock(&pool->mutex);
    pool->shutdown = true;
    pthread_cond_broadcast(&pool->work_cv);
    pthread_mutex_unlock(&pool->mutex);
    for (int i = 1; i < n_started; i++) pthread_join(pool->workers[i].thread, NULL);
    pthread_cond_destroy(&pool->bar_cv);
    pthread_mutex_destroy(&pool->bar_mutex);
    pthread_cond_destroy(&pool->done_cv);
    pthread_cond_destroy(&pool->work_cv);
    pthread_mutex_destroy(&pool->mutex);
    ct_free(pool->cur_node);
    ct_free(pool->workers);
    ct_free(pool);
}

ct_status ct_cpu_threadpool_new(const char *caller, int n_threads, ct_cpu_threadpool **out) {
    *out = NULL;
    if (n_threads < 1 || n_threads > CT_CPU_MAX_THREADS) {
        return ct_fail(CT_INVALID_ARGUMENT, "%s: n_threads=%d is outside [1, %d]", caller, n_threads,
                       CT_CPU_MAX_THREADS);
    }
    ct_cpu_threadpool *pool = ct_calloc(1, sizeof *pool);
    worker *workers = ct_calloc((size_t)n_threads, sizeof *workers);
    int *cur_node = ct_calloc((size_t)n_threads, sizeof *cur_node);
    if (!pool || !workers || !cur_node) {
        ct_free(cur_node);
        ct_free(workers);
        ct_free(pool);
        return ct_fail(CT_OUT_OF_MEMORY, "%s: cannot allocate a thread pool of %d threads", caller, n_threads);
    }
    pool->n_threads = n_threads;
    pool->workers = workers;
    pool->cur_node = cur_node;
    /* Default attributes cannot fail to initialize on the platforms we build for. */
    pthread_mutex_init(&pool->mutex, NULL);
    pthread_cond_init(&pool->work_cv, NULL);
    pthread_cond_init(&pool->done_cv, NULL);
    pthread_mutex_init(&pool->bar_mutex, NULL);
    pthread_cond_init(&pool->bar_cv, NULL);
    atomic_init(&pool->generation, 0ul);
    atomic_init(&pool->pending, 0);
    atomic_init(&pool->bar_count, 0);
    atomic_init(&pool->bar_phase, 0u);
    atomic_init(&pool->bar_sleepers, 0);
    atomic_init(&pool->err_node, -1);
    atomic_init(&pool->abort_at, -1);
    for (int i = 1; i < n_threads; i++) {
        workers[i].pool = pool;
        workers[i].ith = i;
        int rc = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
        if (rc != 0) {
            pool_destroy(pool, i);
            return ct_fail(CT_OUT_OF_MEMORY, "%s: cannot start worker thread %d of %d: %s", caller, i, n_threads,
                           strerror(rc));
        }
    }
    *out = pool;
    return CT_OK;
}

void ct_cpu_threadpool_free(ct_cpu_threadpool *pool) {
    if (pool) pool_destroy(pool, pool->n_threads);
}

int ct_cpu_threadpool_n_threads(const ct_cpu_threadpool *pool) { return pool->n_threads; }

void ct_cpu_threadpool_run(ct_cpu_threadpool *pool, ct_cpu_job_fn fn, void *arg) {
    atomic_store(&pool->err_node, -1);
    atomic_store(&pool->abort_at, -1);
    pool->err_status = CT_OK;
    pool->err_message[0] = '\0';
    for (int i = 0; i < pool->n_threads; i++) pool->cur_node[i] = -1;
    if (pool->n_threads > 1) {
        pthread_mutex_lock(&pool->mutex);
        pool->fn = fn;
        pool->arg = arg;
        atomic_store(&pool->pending, pool->n_threads - 1);
        atomic_fetch_add(&pool->generation, 1ul);
        pthread_cond_broadcast(&pool->work_cv);
        pthread_mutex_unlock(&pool->mutex);
    }
    fn(pool, 0, arg);
    if (pool->n_threads > 1) {
        SPIN_UNTIL(atomic_load(&pool->pending) == 0);
        pthread_mutex_lock(&pool->mutex);
        while (atomic_load(&pool->pending) > 0) pthread_cond_wait(&pool->done_cv, &pool->mutex);
        pthread_mutex_unlock(&pool->mutex);
    }
}

void ct_cpu_threadpool_barrier(ct_cpu_threadpool *pool) {
    if (pool->n_threads == 1) return;
    unsigned phase = atomic_load(&pool->bar_phase);
    if (atomic_fetch_add(&pool->bar_count, 1) == pool->n_threads - 1) {
        /* Last one in: reset the count before releasing, so a fast thread may re-enter at once. */
        atomic_store(&pool->bar_count, 0);
        atomic_fetch_add(&pool->bar_phase, 1u);
        /* A sleeper announces itself before it reads the phase, and the phase moved
         * before this read (both sequentially consistent): either it sees the new
         * phase and does not wait, or this thread sees it and wakes it. */
        if (atomic_load(&pool->bar_sleepers) > 0) {
            pthread_mutex_lock(&pool->bar_mutex);
            pthread_cond_broadcast(&pool->bar_cv);
            pthread_mutex_unlock(&pool->bar_mutex);
        }
        return;
    }
    SPIN_UNTIL(atomic_load(&pool->bar_phase) != phase);
    if (atomic_load(&pool->bar_phase) != phase) return;
    pthread_mutex_lock(&pool->bar_mutex);
    atomic_fetch_add(&pool->bar_sleepers, 1);
    while (atomic_load(&pool->bar_phase) == phase) pthread_cond_wait(&pool->bar_cv, &pool->bar_mutex);
    atomic_fetch_sub(&pool->bar_sleepers, 1);
    pthread_mutex_unlock(&pool->bar_mutex);
}

void ct_cpu_threadpool_begin_node(ct_cpu_threadpool *pool, int ith, int node_index) {
    pool->cur_node[ith] = node_index;
}

void ct_cpu_threadpool_request_abort(ct_cpu_threadpool *pool, int node_index) {
    int expected = -1;
    atomic_compare_exchange_strong(&pool->abort_at, &expected, node_index);
}

bool ct_cpu_threadpool_should_stop(ct_cpu_threadpool *pool, int node_index) {
    int e = atomic_load(&pool->err_node);
    int a = atomic_load(&pool->abort_at);
    return (e >= 0 && e < node_index) || (a >= 0 && a <= node_index);
}

int ct_cpu_threadpool_error(const ct_cpu_threadpool *pool, ct_status *status, const char **message) {
    int e = atomic_load(&((ct_cpu_threadpool *)pool)->err_node);
    *status = e >= 0 ? pool->err_status : CT_OK;
    *message = pool->err_message;
    return e;
}

int ct_cpu_threadpool_aborted_at(const ct_cpu_threadpool *pool) {
    return atomic_load(&((ct_cpu_threadpool *)pool)->abort_at);
}

/* ---- services for the op functions (cpu_ops.h) ---------------------------- */

/* A pool-less direct call: the params object that recorded an error on this thread. */
static _Thread_local const ct_cpu_params *solo_error;

void ct_cpu_barrier(const ct_cpu_params *params) {
    if (params->pool && params->nth > 1) ct_cpu_threadpool_barrier(params->pool);
}

void ct_cpu_set_error(const ct_cpu_params *params, ct_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ct_cpu_threadpool *pool = params->pool;
    if (!pool) {
        if (solo_error != params) {
            solo_error = params;
            ct_failv(status, fmt, ap);
        }
        va_end(ap);
        return;
    }
    int ith = params->ith >= 0 && params->ith < pool->n_threads ? params->ith : 0;
    int node = pool->cur_node[ith] >= 0 ? pool->cur_node[ith] : 0;
    int expected = -1;
    if (atomic_compare_exchange_strong(&pool->err_node, &expected, node)) {
        pool->err_status = status;
        vsnprintf(pool->err_message, sizeof pool->err_message, fmt, ap);
    }
    va_end(ap);
}


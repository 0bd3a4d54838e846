/* The CPU backend's thread pool: n - 1 persistent workers plus the calling
 * thread as thread 0, a barrier, and the per-compute error and abort state
 * behind ct_cpu_set_error (cpu_ops.h).
 *
 * The op functions get params->pool non-NULL from the CPU backend. A direct
 * call with pool == NULL (a test running one op on one thread) is allowed:
 * ct_cpu_barrier does nothing, ct_cpu_set_error records with ct_fail on that
 * thread (the first error of that params object wins). */
#ifndef CT_CPU_THREADPOOL_H
#define CT_CPU_THREADPOOL_H

#include "cpu_ops.h"

/* Largest thread count accepted (ct_backend_cpu_set_n_threads, "n_threads=N"). */
#define CT_CPU_MAX_THREADS 512

/* Runs on every thread of the pool; ith is 0 for the caller of ..._run. */
typedef void (*ct_cpu_job_fn)(ct_cpu_threadpool *pool, int ith, void *arg);

/* Starts n_threads - 1 workers; CT_OUT_OF_MEMORY (nothing left behind) when
 * memory or a thread cannot be had. Messages start with `caller`. */
ct_status ct_cpu_threadpool_new(const char *caller, int n_threads, ct_cpu_threadpool **pool);
/* Stops and joins the workers. NULL is a no-op. */
void ct_cpu_threadpool_free(ct_cpu_threadpool *pool);
int ct_cpu_threadpool_n_threads(const ct_cpu_threadpool *pool);

/* Clears the error and abort state, runs fn on all threads and returns when
 * every thread has returned from it. One run at a time per pool. */
void ct_cpu_threadpool_run(ct_cpu_threadpool *pool, ct_cpu_job_fn fn, void *arg);
void ct_cpu_threadpool_barrier(ct_cpu_threadpool *pool);

/* Node bookkeeping inside a run. Errors and aborts are tagged with a node
 * index, so threads that passed the same barrier take the same decision:
 * should_stop(i) is true after an error in a node before i, or an abort
 * requested at a node <= i. Call it only right after a barrier, or on thread 0
 * while the other threads wait at one (a node thread 0 runs alone). */
void ct_cpu_threadpool_begin_node(ct_cpu_threadpool *pool, int ith, int node_index);
void ct_cpu_threadpool_request_abort(ct_cpu_threadpool *pool, int node_index);
bool ct_cpu_threadpool_should_stop(ct_cpu_threadpool *pool, int node_index);

/* After a run: the node index of the first error (-1 if none), its status and
 * message; and the node index at which an abort was requested (-1 if none). */
int ct_cpu_threadpool_error(const ct_cpu_threadpool *pool, ct_status *status, const char **message);
int ct_cpu_threadpool_aborted_at(const ct_cpu_threadpool *pool);

#endif

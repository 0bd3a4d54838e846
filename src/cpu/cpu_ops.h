/* The CPU backend's op functions, one family per file (get_rows.c, set_rows.c,
 * cpy.c, mul_mat.c, norm.c, sum_rows.c), and the thread-pool services they use.
 *
 * graph_compute (cpu_backend.c) runs every node on all n threads of the pool:
 * each op function is called once per thread with ith in [0, nth) and splits
 * the work itself. Op functions never record errors with ct_fail (that writes
 * the worker's thread-local message); they call ct_cpu_set_error, and the
 * compute reports the first error on the caller's thread after the node.
 */
#ifndef CT_CPU_OPS_H
#define CT_CPU_OPS_H

#include "ctensor.h"
#include "core/internal.h"

typedef struct ct_cpu_threadpool ct_cpu_threadpool;

typedef struct ct_cpu_params {
    int ith;                   /* this thread, 0..nth-1 */
    int nth;                   /* threads working on this node */
    void *wdata;               /* scratch shared by the node's threads, ct_cpu_work_size bytes, 64-aligned */
    size_t wsize;
    ct_cpu_threadpool *pool;   /* for ct_cpu_barrier */
} ct_cpu_params;

/* Waits until every thread of the node has reached the barrier. */
void ct_cpu_barrier(const ct_cpu_params *params);
/* Records an error for the node (the first one wins); the node's result is then
 * unspecified but nothing is written outside its tensors. */
void ct_cpu_set_error(const ct_cpu_params *params, ct_status status, const char *fmt, ...) CT_PRINTF(3, 4);

/* Scratch bytes a node needs with n_threads threads (0 for most ops), from the
 * op table's work_size entry (cpu_backend.c). */
size_t ct_cpu_work_size(const ct_tensor *node, int n_threads);

/* Exact support checks, one per family, next to its kernels. The compute calls
 * an op function only for a node its check accepted (ct_backend_graph_compute
 * checks every node first), so op functions assert what the check guarantees. */
bool ct_cpu_get_rows_supported(const ct_tensor *op);
bool ct_cpu_set_rows_supported(const ct_tensor *op);
bool ct_cpu_cpy_supported(const ct_tensor *op);       /* CPY, DUP, CONT */
bool ct_cpu_mul_mat_supported(const ct_tensor *op);
bool ct_cpu_norm_supported(const ct_tensor *op);      /* NORM, RMS_NORM, L2_NORM, GROUP_NORM */
bool ct_cpu_sum_rows_supported(const ct_tensor *op);  /* SUM_ROWS, MEAN */

/* The op functions. Index ops check every index before writing anything and
 * report CT_INDEX_OUT_OF_RANGE. */
void ct_cpu_get_rows(const ct_cpu_params *params, ct_tensor *dst);
void ct_cpu_set_rows(const ct_cpu_params *params, ct_tensor *dst);
void ct_cpu_cpy(const ct_cpu_params *params, ct_tensor *dst);   /* CPY, DUP, CONT */
void ct_cpu_mul_mat(const ct_cpu_params *params, ct_tensor *dst);
size_t ct_cpu_mul_mat_work_size(const ct_tensor *dst, int n_threads);
void ct_cpu_norm(const ct_cpu_params *params, ct_tensor *dst);  /* NORM, RMS_NORM, L2_NORM, GROUP_NORM */
void ct_cpu_sum_rows(const ct_cpu_params *params, ct_tensor *dst); /* SUM_ROWS, MEAN */

#endif

/* The CPU backend's op functions, one family per file (get_rows.c, set_rows.c,
 * cpy.c, mul_mat.c, norm.c, sum_rows.c), and the thread-pool services they use.
 *
 * graph_compute (cpu_backend.c) runs every node on all n threads of the pool,
 * except a small one, which thread 0 runs alone with nth = 1: each op function
 * is called once per thread with ith in [0, nth) and splits the work itself. Op functions never record errors with ct_fail (that writes
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

/* This thread's share [*start, *end) of n items split evenly over the node's threads (the
 * first n % nth threads take one more). */
static inline void ct_cpu_split(int64_t n, const ct_cpu_params *params, int64_t *start, int64_t *end) {
    const int64_t per = n / params->nth, rem = n % params->nth, ith = params->ith;
    *start = ith * per + (ith < rem ? ith : rem);
    *end = *start + per + (ith < rem ? 1 : 0);
}

/* A row (i1, i2, i3) of a tensor with ne1 x ne2 rows per ne3 index: ct_cpu_row_at finds row r
 * (r = 0 needs no division, so empty tensors are fine), ct_cpu_row_next steps to the next one
 * without divisions and says which index moved: CT_CPU_ROW_I1 (i1 only), CT_CPU_ROW_I2 (i2, i1
 * back to 0) or CT_CPU_ROW_I3 (i3, both back to 0). */
typedef struct ct_cpu_row {
    int64_t i1, i2, i3;
} ct_cpu_row;

enum { CT_CPU_ROW_I1 = 1, CT_CPU_ROW_I2, CT_CPU_ROW_I3 };

static inline ct_cpu_row ct_cpu_row_at(int64_t r, int64_t ne1, int64_t ne2) {
    if (r == 0) return (ct_cpu_row){0, 0, 0};
    return (ct_cpu_row){r % ne1, (r / ne1) % ne2, r / (ne1 * ne2)};
}

static inline int ct_cpu_row_next(ct_cpu_row *p, int64_t ne1, int64_t ne2) {
    if (++p->i1 < ne1) return CT_CPU_ROW_I1;
    p->i1 = 0;
    if (++p->i2 < ne2) return CT_CPU_ROW_I2;
    p->i2 = 0;
    p->i3++;
    return CT_CPU_ROW_I3;
}

/* Waits until every thread of the node has reached the barrier. */
void ct_cpu_barrier(const ct_cpu_params *params);
/* Records an error for the node (the first one wins); the node's result is then
 * unspecified but nothing is written outside its tensors. */
void ct_cpu_set_error(const ct_cpu_params *params, ct_status status, const char *fmt, ...) CT_PRINTF(3, 4);

/* Scratch bytes a node needs with n_threads threads (0 for most ops), from the
 * op table's work_size entry (cpu_backend.c). */
size_t ct_cpu_work_size(const ct_tensor *node, int n_threads);

/* Each family of the op list (CT_OP_LIST) has, in src/cpu/<family>.c, an exact
 * support check and the op function, declared here from the list:
 *   bool ct_cpu_<family>_supported(const ct_tensor *op);
 *   void ct_cpu_<family>(const ct_cpu_params *params, ct_tensor *dst);
 * The op table (cpu_backend.c) names the ones the CPU computes. The compute calls
 * an op function only for a node its check accepted (ct_backend_graph_compute
 * checks every node first), so op functions assert what the check guarantees.
 * Index ops check every index before writing anything and report
 * CT_INDEX_OUT_OF_RANGE. */
#define CT_CPU_DECLARE_FAMILY(id, name, is_view, family) CT_CPU_DECLARE_FAMILY_##is_view(family)
#define CT_CPU_DECLARE_FAMILY_0(family)                       \
    bool ct_cpu_##family##_supported(const ct_tensor *op); \
    void ct_cpu_##family(const ct_cpu_params *params, ct_tensor *dst);
#define CT_CPU_DECLARE_FAMILY_1(family) /* a view op: nothing to compute */
CT_OP_LIST(CT_CPU_DECLARE_FAMILY)

/* The element-wise row engine (unary.c) of UNARY and the math ops: dst and src[0] F32 or
 * F16 of one type and shape, any strides; dst's rows split over the node's threads, each
 * chunk of at most 256 elements converted to float, fn(dst, src is F32, x, n) rewrites it
 * in place, and the chunk is rounded back to dst's type. */
typedef void (*ct_cpu_rows_fn)(const ct_tensor *dst, bool f32, float *x, int64_t n);
void ct_cpu_map_rows(const ct_cpu_params *params, ct_tensor *dst, ct_cpu_rows_fn fn);

size_t ct_cpu_mul_mat_work_size(const ct_tensor *dst, int n_threads);
size_t ct_cpu_rope_work_size(const ct_tensor *dst, int n_threads);
size_t ct_cpu_reduce_work_size(const ct_tensor *dst, int n_threads);
size_t ct_cpu_argsort_work_size(const ct_tensor *dst, int n_threads);
size_t ct_cpu_mul_mat_id_work_size(const ct_tensor *dst, int n_threads);
size_t ct_cpu_flash_attn_work_size(const ct_tensor *dst, int n_threads);

#endif

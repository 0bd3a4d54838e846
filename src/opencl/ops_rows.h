/* Helpers shared by the GET_ROWS, SET_ROWS and CPY encoders. */
#ifndef CT_OPENCL_OPS_ROWS_H
#define CT_OPENCL_OPS_ROWS_H

#include "opencl_internal.h"

/* The rows-per-work-group rule (ggml Metal's) for rows of nk units: nth doubles from 32
 * while below nk and max; short rows are batched nrptg to a group. max is the
 * kernel's clamped work-group size, max_y the device's dim-1 limit. */
static inline void ct_ocl_rows_wg(size_t nk, size_t max, size_t max_y, size_t *nth_out, size_t *nrptg_out) {
    size_t nth = 32, nrptg = 1;
    if (nk == 0) nk = 1;
    while (nth < nk && nth < max) nth *= 2;
    if (nth > max) nth = max;
    if (nth > nk) {
        nrptg = (nth + nk - 1) / nk;
        nth = nk;
        if (nrptg * nth > max) nrptg--;
    }
    if (nrptg > max_y) nrptg = max_y;
    if (nrptg < 1) nrptg = 1;
    *nth_out = nth; /* at most nk: the branch above caps it */
    *nrptg_out = nrptg;
}

/* The largest power of two up to cap that divides addr (ct_ocl_addr_bits of a tensor, or
 * several or-ed) and every stride of t. */
static inline unsigned ct_ocl_alignment(cl_ulong addr, const size_t nb[4], unsigned cap) {
    cl_ulong bits = addr | nb[0] | nb[1] | nb[2] | nb[3];
    unsigned a = 1;
    while (a < cap && (bits & a) == 0) a *= 2;
    return a;
}

/* Sequential kernel arguments; the first failure sticks. */
typedef struct args {
    ct_ocl_backend *be;
    ct_ocl_kernel_id kid;
    cl_uint i;
    ct_status st;
} args;

static inline void arg_i64(args *a, int64_t v) {
    const cl_long x = v;
    if (a->st == CT_OK) a->st = CT_OCL_SET_ARG(a->be, a->kid, a->i, x);
    a->i++;
}
static inline void arg_u64(args *a, size_t v) {
    const cl_ulong x = v;
    if (a->st == CT_OK) a->st = CT_OCL_SET_ARG(a->be, a->kid, a->i, x);
    a->i++;
}
static inline void arg_i32(args *a, int v) {
    const cl_int x = v;
    if (a->st == CT_OK) a->st = CT_OCL_SET_ARG(a->be, a->kid, a->i, x);
    a->i++;
}
static inline void arg_u32(args *a, unsigned v) {
    const cl_uint x = v;
    if (a->st == CT_OK) a->st = CT_OCL_SET_ARG(a->be, a->kid, a->i, x);
    a->i++;
}
static inline void arg_tensor(args *a, const ct_tensor *t, const char *role) {
    if (a->st == CT_OK) a->st = ct_ocl_set_arg_tensor(a->be, a->kid, a->i, t, role);
    a->i += 2;
}
static inline void arg_flag(args *a) {
    if (a->st == CT_OK) a->st = ct_ocl_set_arg_error_flag(a->be, a->kid, a->i);
    a->i += 2;
}

/* A tensor pair the kernel never reads (no index tensor): a NULL buffer, offset 0. */
static inline void arg_null_tensor(args *a) {
    const cl_mem none = NULL;
    const cl_ulong zero = 0;
    if (a->st == CT_OK) a->st = CT_OCL_SET_ARG(a->be, a->kid, a->i, none);
    if (a->st == CT_OK) a->st = CT_OCL_SET_ARG(a->be, a->kid, a->i + 1, zero);
    a->i += 2;
}
/* The error-flag pair of a kernel launched without indices (it never reads them). */
static inline void arg_no_flag(args *a) {
    const cl_mem none = NULL;
    const cl_int zero = 0;
    if (a->st == CT_OK) a->st = CT_OCL_SET_ARG(a->be, a->kid, a->i, none);
    if (a->st == CT_OK) a->st = CT_OCL_SET_ARG(a->be, a->kid, a->i + 1, zero);
    a->i += 2;
}

/* Enqueues ct_check_indices over idx (I32 or I64, dims 0..2): it raises the error
 * flag for an index outside [0, limit). Defined in ops_get_rows.c. */
ct_status ct_ocl_encode_check_indices(ct_ocl_backend *be, const ct_tensor *idx, int64_t limit);

/* ---- fast row kernels (ct_rows4_<t> in kernels/get_rows.cl, ct_quant_rows_<t> in
 * kernels/set_rows.cl), shared by GET_ROWS, SET_ROWS and CPY ---------------------- */

/* How a job's row i1 of slice (i2, i3) maps (kernels/get_rows.cl's CT_ROWS_*). */
enum { CT_OCL_ROWS_CPY = 0, CT_OCL_ROWS_GET = 1, CT_OCL_ROWS_SET = 2 };

/* The most units a work-item of ct_rows8 and ct_rows_staged takes (CT_ROWS_NPER of
 * get_rows.cl; ct_rows4: 4), of ct_cpy_rows_raw (CT_CPY_NPER of cpy.cl); the largest
 * local size of ct_quant_rows (CT_QT_WG of set_rows.cl; IQ4_NL's CT_QT_WG_iq4_nl), whose local
 * arrays are sized for it, its slice (CT_QT_SLICE: local sizes are multiples of it) and the
 * blocks a team takes (CT_QT_NPER; CT_QT_NPER_WIDE in ct_quant_rows_wide). */
enum {
    CT_OCL_ROWS_NPER = 8,
    CT_OCL_CPY_NPER = 4,
    CT_OCL_QT_WG = 256,
    CT_OCL_QT_SLICE = 32,
    CT_OCL_QT_NPER = 2,
    CT_OCL_QT_NPER_WIDE = 4,
    CT_OCL_QT_WG_IQ4_NL = 128
};

/* The local array of ct_rows_staged_<t> (CT_STAGE_WORDS of get_rows.cl, in bytes): the
 * most a segment of block rows may take. */
enum { CT_OCL_STAGE_BYTES = 292 * 16 };

/* Units a work-item takes (max, a power of two, or fewer): 8 for jobs of at least
 * 2^wide_log2 (the device's rows8_min_log2, 20) work-items that way, up to 4 for jobs of
 * at least 2^16; fewer below, where launch latency dominates and more work-items hide the
 * memory latency better. On the H200, 8 units moved GET_ROWS and SET_ROWS of 16384 rows of
 * 4096 by up to 10 points, and cost a CPY of 4096 x 4096 6 points: too few waves of
 * work-groups. */
static inline size_t ct_ocl_rows_nper(size_t units, size_t max, unsigned wide_log2) {
    size_t nper = max;
    while (nper > 1 && units < nper * ((size_t)1 << (nper > 4 ? wide_log2 : 16))) nper /= 2;
    return nper;
}

/* Rows (i1 < n1, i2 < n2, i3 < n3) of ne0 elements, packed in both tensors:
 *   CPY  source row i1 -> destination row i1;
 *   GET  source row idx[i1, i2, i3] -> destination row i1;
 *   SET  source row i1 -> destination row idx[i1, i2 % idx->ne[1], i3 % idx->ne[2]].
 * lim bounds the indexed rows; snb/dnb are the row strides of dims 1..3 (for CPY into a
 * contiguous tensor, those of its flat order). */
typedef struct ct_ocl_rows_job {
    const ct_tensor *src, *idx, *dst; /* idx NULL for CPY */
    int mode;
    int64_t ne0, n1, n2, n3, lim;
    size_t snb[3], dnb[3];
} ct_ocl_rows_job;

/* Each encodes the job when its kernel fits it (types, alignments, work-group size) and
 * sets *done; otherwise it leaves *done false and enqueues nothing. */
/* ct_rows4_<src type>: F32/I32, F16, BF16 or a block type into F32 (I32), F16 or BF16; for
 * block rows in aligned segments ct_rows_staged_<t> (get_rows.cl). */
ct_status ct_ocl_try_rows4(ct_ocl_backend *be, const ct_ocl_rows_job *j, bool *done);
/* ct_quant_rows_<dst type>: F32, F16 or BF16 into Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 or IQ4_NL. */
ct_status ct_ocl_try_quant_rows(ct_ocl_backend *be, const ct_ocl_rows_job *j, bool *done);

/* The largest power of two up to cap dividing addr (ct_ocl_addr_bits) and every stride whose
 * extent exceeds 1. */
static inline unsigned ct_ocl_rows_align(cl_ulong addr, const size_t nb[3], const int64_t ne[3], unsigned cap) {
    cl_ulong bits = addr;
    for (int k = 0; k < 3; k++)
        if (ne[k] > 1) bits |= nb[k];
    unsigned a = 1;
    while (a < cap && (bits & a) == 0) a *= 2;
    return a;
}

/* The alignments (powers of two up to 16) of every source and destination row of the
 * job as kernels see it; extra_src bits are or-ed into the source's (a row length, say). */
static inline ct_status ct_ocl_rows_job_align(ct_ocl_backend *be, const ct_ocl_rows_job *j, cl_ulong extra_src,
                                              unsigned *src_align, unsigned *dst_align) {
    cl_mem mem;
    cl_ulong offs;
    ct_status st = ct_ocl_tensor_mem(be, j->src, "src0", &mem, &offs); /* in a view of a buffer of ours */
    if (st == CT_OK) st = ct_ocl_tensor_mem(be, j->dst, "dst", &mem, &offs);
    if (st != CT_OK) return st;
    const int64_t sn[3] = {j->mode == CT_OCL_ROWS_GET ? j->lim : j->n1, j->n2, j->n3};
    const int64_t dn[3] = {j->mode == CT_OCL_ROWS_SET ? j->lim : j->n1, j->n2, j->n3};
    *src_align = ct_ocl_rows_align(ct_ocl_addr_bits(be->dev, j->src) | extra_src, j->snb, sn, 16);
    *dst_align = ct_ocl_rows_align(ct_ocl_addr_bits(be->dev, j->dst), j->dnb, dn, 16);
    return CT_OK;
}

/* Arguments from idx onwards, shared by both kernels: the index tensor (or none), the
 * mapping, and the error flag where indices are read. */
static inline void arg_rows_index(args *a, const ct_ocl_rows_job *j) {
    const ct_tensor *c = j->idx;
    arg_i32(a, j->mode);
    arg_i32(a, c && c->type == CT_TYPE_I64);
    arg_i64(a, c ? c->ne[1] : 1);
    arg_i64(a, c ? c->ne[2] : 1);
    for (int k = 0; k < 3; k++) arg_u64(a, c ? c->nb[k] : 0);
    arg_i64(a, j->lim);
}

#endif

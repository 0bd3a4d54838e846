/* Helpers shared by the GET_ROWS, SET_ROWS and CPY encoders. */
#ifndef CT_OPENCL_OPS_ROWS_H
#define CT_OPENCL_OPS_ROWS_H

#include "opencl_internal.h"

/* SPEC §5.9's rows-per-work-group rule for rows of nk units: nth doubles from 32
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

/* The largest power of two up to cap that divides offs and every stride of t. */
static inline unsigned ct_ocl_alignment(cl_ulong offs, const size_t nb[4], unsigned cap) {
    cl_ulong bits = offs | nb[0] | nb[1] | nb[2] | nb[3];
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

/* Enqueues ct_check_indices over idx (I32 or I64, dims 0..2): it raises the error
 * flag for an index outside [0, limit). Defined in ops_get_rows.c. */
ct_status ct_ocl_encode_check_indices(ct_ocl_backend *be, const ct_tensor *idx, int64_t limit);

#endif

/* The row engine shared by the GET_ROWS, SET_ROWS and CPY encoders: jobs of rows moved,
 * converted, quantized or dequantized by the fast row kernels (ct_rows4/ct_rows8/
 * ct_rows_staged in kernels/get_rows.cl, ct_quant_rows* in kernels/set_rows.cl, all
 * taking ct_rows_args), and the index check. */
#ifndef CT_OPENCL_ENCODERS_ROWS_H
#define CT_OPENCL_ENCODERS_ROWS_H

#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"

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

/* The bytes ct_rows_staged_<t>'s local array holds: the most a segment of block rows may take. */
enum { CT_OCL_STAGE_BYTES = CT_STAGE_WORDS * 16 };

/* Rows (i1 < n1, i2 < n2, i3 < n3) of ne0 elements, packed in both tensors:
 *   CPY  source row i1 -> destination row i1;
 *   GET  source row idx[i1, i2, i3] -> destination row i1;
 *   SET  source row i1 -> destination row idx[i1, i2 % idx->ne[1], i3 % idx->ne[2]].
 * lim bounds the indexed rows; snb/dnb are the row strides of dims 1..3 (for CPY into a
 * contiguous tensor, those of its flat order); mode is CT_ROWS_* (kernel_args.h). */
typedef struct ct_ocl_rows_job {
    const ct_tensor *src, *idx, *dst; /* idx NULL for CPY */
    int mode;
    bool check_all; /* the row kernel checks the whole index list (ct_ocl_rows_check_inline) */
    int64_t ne0, n1, n2, n3, lim;
    size_t snb[3], dnb[3];
} ct_ocl_rows_job;

/* The alignments (powers of two up to 16) of every source and destination row of the
 * job as kernels see it; extra_src bits are or-ed into the source's (a row length, say).
 * With the encoder's error recorded (a tensor in no single view), both are 1. */
void ct_ocl_rows_job_align(ct_ocl_enc *enc, const ct_ocl_rows_job *j, cl_ulong extra_src, unsigned *src_align,
                           unsigned *dst_align);

/* Each encodes the job when its kernels fit it (types, alignments, work-group size) and
 * returns true; otherwise it returns false and enqueues nothing. */
/* ct_rows4_<src type>: F32/I32, F16, BF16 or a block type into F32 (I32), F16 or BF16; for
 * block rows in aligned segments ct_rows_staged_<t>, for large float jobs ct_rows8_<t>. */
bool ct_ocl_try_rows4(ct_ocl_enc *enc, const ct_ocl_rows_job *j);
/* ct_quant_rows_<dst type>: F32, F16 or BF16 into Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 or IQ4_NL. */
bool ct_ocl_try_quant_rows(ct_ocl_enc *enc, const ct_ocl_rows_job *j);

/* Whether the row kernels check idx's whole list themselves (ct_rows_args.check_all) rather
 * than after ct_check_indices' launch: lists of up to 16 indices (a decoded token's SET_ROWS
 * and GET_ROWS), which every work-item reads from cache. */
static inline bool ct_ocl_rows_check_inline(const ct_tensor *idx) { return ct_nelements(idx) <= 16; }

/* Enqueues ct_check_indices over idx (I32 or I64, dims 0..2): it raises the error flag
 * for an index outside [0, limit). */
void ct_ocl_encode_check_indices(ct_ocl_enc *enc, const ct_tensor *idx, int64_t limit);

#endif

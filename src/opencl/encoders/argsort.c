/* ARGSORT and TOP_K on OpenCL (kernels/argsort.cl, taking ct_argsort_args): blocks of a
 * power of two sorted in local memory as 64-bit keys, then merge passes doubling the
 * sorted runs, ping-ponging between the work memory's two halves (keys); the last pass
 * (the block sort when a row is one block) writes the indices into dst (TOP_K: the
 * first k of each row). */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"

#include <limits.h>

enum { SORT_WG = 256, MERGE_WG = 64, BLOCK_MAX = 2048 };

bool ct_ocl_argsort_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op || (op->op != CT_OP_ARGSORT && op->op != CT_OP_TOP_K)) return false;
    if (!ct_ocl_kernel_available(dev, CT_OCL_K_ARGSORT_BLOCK_F32) ||
        !ct_ocl_kernel_available(dev, CT_OCL_K_ARGSORT_MERGE_F32))
        return false;
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_I32 || !ct_is_contiguous(op)) return false;
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (a->ne[i] < 0 || a->ne[i] > INT_MAX / 2) return false;
    if (ct_nrows(a) > INT_MAX) return false;
    if (op->ne[1] != a->ne[1] || op->ne[2] != a->ne[2] || op->ne[3] != a->ne[3]) return false;
    if (op->op == CT_OP_ARGSORT) {
        if (op->ne[0] != a->ne[0]) return false;
        if (op->op_params[0] != CT_SORT_ORDER_ASC && op->op_params[0] != CT_SORT_ORDER_DESC) return false;
    } else if (op->ne[0] > a->ne[0]) {
        return false;
    }
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (a->nb[i] % sizeof(float) != 0) return false;
    return ct_ocl_start_aligned(dev, a, sizeof(float)) && ct_ocl_start_aligned(dev, op, sizeof(int32_t));
}

typedef struct plan {
    int64_t n, nrows;
    int block, passes; /* block size; merge passes */
    size_t half;       /* bytes of one key buffer of n per row, 256-aligned */
    size_t work;       /* work memory bytes */
} plan;

static plan make_plan(const ct_ocl_device *dev, const ct_tensor *node) {
    plan p = {.n = node->src[0]->ne[0], .nrows = ct_nrows(node->src[0])};
    int bmax = BLOCK_MAX;
    while (bmax > 2 && (size_t)bmax * sizeof(uint64_t) > dev->local_mem / 2) bmax /= 2;
    p.block = 2;
    while (p.block < bmax && p.block < p.n) p.block *= 2;
    for (int64_t len = p.block; len < p.n; len *= 2) p.passes++;
    p.half = ((size_t)p.n * (size_t)p.nrows * sizeof(uint64_t) + 255) / 256 * 256;
    const int bufs = p.passes > 1 ? 2 : p.passes;
    p.work = p.half * (size_t)bufs;
    return p;
}

ct_status ct_ocl_argsort_work_bytes(ct_ocl_enc *enc, const ct_tensor *node, size_t *bytes) {
    *bytes = ct_is_empty(node) ? 0 : make_plan(enc->be->dev, node).work;
    return CT_OK;
}

/* The buffer pass p writes (or, p - 1's, reads): 0 dst, 1 and 2 the work memory's halves. */
static int out_buf(const plan *pl, int p) { return p == pl->passes ? 0 : 1 + p % 2; }

static void arg_buf(ct_ocl_enc *enc, ct_tensor *node, const plan *pl, int b, cl_mem work) {
    if (b == 0) {
        ct_ocl_arg_tensor(enc, node, "dst");
    } else {
        ct_ocl_arg_mem(enc, work);
        ct_ocl_arg_u64(enc, b == 1 ? 0 : pl->half);
    }
}

ct_status ct_ocl_encode_argsort(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_argsort_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    const ct_tensor *a = node->src[0];
    const plan pl = make_plan(enc->be->dev, node);
    const cl_mem work = pl.work ? ct_ocl_enc_work(enc, pl.work) : NULL;
    const int top = (int)node->ne[0];
    ct_argsort_args args = {
        .nb00 = a->nb[0], .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3],
        .ne00 = (int32_t)pl.n, .ne01 = (int32_t)a->ne[1], .ne02 = (int32_t)a->ne[2], .nrows = (int32_t)pl.nrows,
        .top = node->op == CT_OP_TOP_K ? top : (int32_t)pl.n,
        .desc = node->op == CT_OP_TOP_K || node->op_params[0] == CT_SORT_ORDER_DESC,
    };

    /* the blocks */
    {
        const int b = out_buf(&pl, 0);
        args.len = pl.block;
        args.ld_in = (uint64_t)pl.n;
        args.ld_out = b == 0 ? (uint64_t)node->ne[0] : (uint64_t)pl.n;
        size_t nx = ct_ocl_enc_clamp_wg(enc, CT_OCL_K_ARGSORT_BLOCK_F32, SORT_WG);
        if (nx > (size_t)pl.block / 2) nx = (size_t)pl.block / 2;
        const size_t local[3] = {nx, 1, 1};
        const size_t groups[3] = {(size_t)((pl.n + pl.block - 1) / pl.block), (size_t)pl.nrows, 1};
        ct_ocl_enc_kernel(enc, CT_OCL_K_ARGSORT_BLOCK_F32);
        ct_ocl_arg_tensor(enc, a, "src0");
        arg_buf(enc, node, &pl, b, work);
        ct_ocl_arg_bytes(enc, &args, sizeof args);
        ct_ocl_arg_i32(enc, b == 0);
        ct_ocl_arg_local(enc, (size_t)pl.block * sizeof(uint64_t));
        ct_ocl_enc_dispatch(enc, groups, local);
    }
    /* the merges */
    int64_t len = pl.block;
    for (int p = 1; p <= pl.passes; p++, len *= 2) {
        const int bi = out_buf(&pl, p - 1), bo = out_buf(&pl, p);
        args.len = (int32_t)len;
        args.ld_in = (uint64_t)pl.n;
        args.ld_out = bo == 0 ? (uint64_t)node->ne[0] : (uint64_t)pl.n;
        const size_t nx = ct_ocl_enc_clamp_wg(enc, CT_OCL_K_ARGSORT_MERGE_F32, MERGE_WG);
        const size_t local[3] = {nx, 1, 1};
        const size_t groups[3] = {(size_t)((pl.n + 2 * len - 1) / (2 * len)), (size_t)pl.nrows, 1};
        ct_ocl_enc_kernel(enc, CT_OCL_K_ARGSORT_MERGE_F32);
        arg_buf(enc, node, &pl, bi, work);
        arg_buf(enc, node, &pl, bo, work);
        ct_ocl_arg_bytes(enc, &args, sizeof args);
        ct_ocl_arg_i32(enc, bo == 0);
        ct_ocl_enc_dispatch(enc, groups, local);
    }
    return enc->st;
}

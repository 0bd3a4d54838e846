/* MUL_MAT_ID and ADD_ID on OpenCL (kernels/mul_mat_id.cl).
 *
 * MUL_MAT_ID: one launch of ct_mul_mv_id_<t>_f32, MUL_MAT's mat-vec body (mul_mat.cl) run
 * per (used expert, token) on the expert the ids name, as ggml-metal's mul_mv_id: each
 * weight row of a used expert is read once per token that uses it, so decode reads only the
 * used experts. The types and shapes are MUL_MAT's: a node is supported where MUL_MAT would
 * take one expert's matrix times one of its src1 rows (ct_ocl_mul_mat_supported on that
 * node), its src1 rows are packed F32 (the mat-vec reads them so) and the type has its id
 * kernel; nothing here lists types. Batches go through the same mat-vec (no tiled id kernel
 * yet).
 * ADD_ID: one work-group row per dst row; F32 or F16 rows packed. */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"
#include "tensor/tensor_internal.h"

#include <limits.h>
#include <string.h>

enum { MV_WG = 128, ADD_WG = 64 };

static bool available(const ct_ocl_device *dev, ct_ocl_kernel_id id) {
    return id != CT_OCL_K_COUNT && ct_ocl_kernel_available(dev, id);
}

static bool strides_aligned(const ct_ocl_device *dev, const ct_tensor *t, int from, size_t a) {
    for (int i = from; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % a != 0) return false;
    return ct_ocl_start_aligned(dev, t, a);
}

static bool dims_fit(const ct_tensor *t) {
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->ne[i] > INT_MAX) return false;
    return true;
}

static bool add_id_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!ct_add_id_node_valid(op)) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1], *ids = op->src[2];
    if (!available(dev, ct_ocl_kernel_for(CT_OCL_FAMILY_ADD_ID, a->type))) return false;
    const size_t es = ct_type_size(a->type);
    if (a->nb[0] != es || b->nb[0] != es || op->nb[0] != es) return false;
    if (!dims_fit(a) || !dims_fit(b) || !dims_fit(ids) || ct_nrows(a) > INT_MAX) return false;
    return strides_aligned(dev, a, 1, es) && strides_aligned(dev, b, 1, es) && strides_aligned(dev, op, 1, es) &&
           strides_aligned(dev, ids, 0, 4);
}

/* The MUL_MAT node of one expert's matrix times one src1 row into one dst row. */
static void expert_node(const ct_tensor *op, ct_tensor *a, ct_tensor *b, ct_tensor *d) {
    *a = *op->src[0];
    a->ne[2] = 1;
    *b = *op->src[1];
    b->ne[1] = 1, b->ne[2] = 1;
    *d = *op;
    d->op = CT_OP_MUL_MAT;
    d->ne[1] = 1, d->ne[2] = 1;
    d->src[0] = a, d->src[1] = b, d->src[2] = NULL;
}

static bool mul_mat_id_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!ct_mul_mat_id_node_valid(op)) return false;
    const ct_tensor *as = op->src[0], *b = op->src[1], *ids = op->src[2];
    if (!available(dev, ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MV_ID, as->type))) return false;
    if (b->type != CT_TYPE_F32 || b->nb[0] != sizeof(float)) return false;
    if (!dims_fit(as) || !dims_fit(b) || !dims_fit(ids) || !dims_fit(op)) return false;
    int64_t n_ids;
    if (!ct_mul_i64(op->ne[1], op->ne[2], &n_ids) || n_ids > INT_MAX) return false;
    if (as->nb[2] % (as->type == CT_TYPE_F32 ? 4 : 2) != 0 || !strides_aligned(dev, ids, 0, 4)) return false;
    ct_tensor a1, b1, d1;
    expert_node(op, &a1, &b1, &d1);
    return ct_ocl_mul_mat_supported(dev, &d1);
}

bool ct_ocl_mul_mat_id_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op) return false;
    return op->op == CT_OP_ADD_ID ? add_id_supported(dev, op) : mul_mat_id_supported(dev, op);
}

static ct_status encode_add_id(ct_ocl_enc *enc, ct_tensor *node) {
    const ct_tensor *a = node->src[0], *b = node->src[1], *ids = node->src[2];
    const ct_ocl_kernel_id id = ct_ocl_kernel_for(CT_OCL_FAMILY_ADD_ID, a->type);
    const ct_add_id_args args = {
        .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3], .nb11 = b->nb[1],
        .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3], .nbi0 = ids->nb[0], .nbi1 = ids->nb[1],
        .ne0 = (int32_t)a->ne[0], .ne1 = (int32_t)a->ne[1], .ne2 = (int32_t)a->ne[2], .n_as = (int32_t)b->ne[1],
        .nrows = (int32_t)ct_nrows(a),
    };
    /* rows of up to 64 values: 32 work-items a row, several rows a group */
    const size_t wg = ct_ocl_enc_clamp_wg(enc, id, ADD_WG);
    size_t lx = a->ne[0] <= 32 ? 32 : wg;
    if (lx > wg) lx = wg;
    size_t ly = wg / lx;
    if (ly > enc->be->dev->max_work_item_sizes[1]) ly = enc->be->dev->max_work_item_sizes[1];
    if (ly == 0) ly = 1;
    const size_t local[3] = {lx, ly, 1};
    const size_t groups[3] = {((size_t)args.nrows + ly - 1) / ly, 1, 1};
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, a, "src0");
    ct_ocl_arg_tensor(enc, b, "src1");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_tensor(enc, ids, "src2");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}

static ct_status encode_mul_mat_id(ct_ocl_enc *enc, ct_tensor *node) {
    const ct_tensor *as = node->src[0], *b = node->src[1], *ids = node->src[2];
    const ct_ocl_kernel_id id = ct_ocl_kernel_for(CT_OCL_FAMILY_MUL_MV_ID, as->type);
    const ct_mul_mat_id_args args = {
        .nb01 = as->nb[1], .nb02 = as->nb[2], .nb11 = b->nb[1], .nb12 = b->nb[2],
        .nb1 = node->nb[1], .nb2 = node->nb[2], .nbi0 = ids->nb[0], .nbi1 = ids->nb[1],
        .ne00 = (int32_t)as->ne[0], .ne01 = (int32_t)as->ne[1], .ne11 = (int32_t)b->ne[1],
        .n_used = (int32_t)node->ne[1], .n_as = (int32_t)as->ne[2],
    };
    /* MUL_MAT's mat-vec shape (encoders/mul_mat.c): local rows of the fewest work-items
     * (a power of two) that cover a row's 8-value units, CT_MV_NR0 src0 rows each */
    const size_t total = ct_ocl_enc_clamp_wg(enc, id, MV_WG), units = ((size_t)as->ne[0] + 7) / 8;
    size_t lx = 1;
    while (lx < total && lx < units) lx *= 2;
    if (lx > total) lx = total;
    const size_t local[3] = {lx, total / lx, 1};
    const size_t rows_per_group = CT_MV_NR0 * local[1];
    const size_t groups[3] = {((size_t)as->ne[1] + rows_per_group - 1) / rows_per_group, 1,
                              (size_t)node->ne[1] * (size_t)node->ne[2]};
    const size_t floats = CT_MV_NR0 * CT_MV_NR1 * local[0] * local[1];
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, as, "src0");
    ct_ocl_arg_tensor(enc, b, "src1");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_tensor(enc, ids, "src2");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_arg_local(enc, (floats < 16 ? 16 : floats) * sizeof(float)); /* IQ4_NL's table */
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}

ct_status ct_ocl_encode_mul_mat_id(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_mul_mat_id_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    return node->op == CT_OP_ADD_ID ? encode_add_id(enc, node) : encode_mul_mat_id(enc, node);
}

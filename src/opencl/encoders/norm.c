/* NORM, RMS_NORM, L2_NORM, GROUP_NORM on OpenCL (kernels/norm.cl, taking ct_norm_args).
 * Rows are spread over dim 0 of the work-group, and short rows are packed several to a
 * group (dim 1), so a group has ROWS_WG work-items whatever the row length. */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"

#include <limits.h>
#include <string.h>

enum { ROWS_WG = 256, GROUP_WG = 256 };

static ct_ocl_kernel_id kernel_for(ct_op op) {
    switch (op) {
    case CT_OP_NORM: return CT_OCL_K_NORM_F32;
    case CT_OP_RMS_NORM: return CT_OCL_K_RMS_NORM_F32;
    case CT_OP_L2_NORM: return CT_OCL_K_L2_NORM_F32;
    case CT_OP_GROUP_NORM: return CT_OCL_K_GROUP_NORM_F32;
    default: return CT_OCL_K_COUNT;
    }
}

static bool strides_aligned(const ct_ocl_device *dev, const ct_tensor *t) {
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % sizeof(float) != 0) return false;
    return ct_ocl_start_aligned(dev, t, sizeof(float));
}

bool ct_ocl_norm_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op) return false;
    const ct_ocl_kernel_id id = kernel_for(op->op);
    if (id == CT_OCL_K_COUNT || !ct_ocl_kernel_available(dev, id)) return false;
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_F32 || !ct_are_same_shape(a, op)) return false;
    if (op->op == CT_OP_GROUP_NORM && op->op_params[0] <= 0) return false;
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (a->ne[i] < 0 || a->ne[i] > INT_MAX) return false;
    if (ct_nrows(a) > INT_MAX) return false;
    return strides_aligned(dev, a) && strides_aligned(dev, op);
}

/* (nx, ny): 32 work-items per row for rows up to 64, else ROWS_WG; ny rows fill the
 * group. Two shapes only, so JIT-specializing drivers (PoCL) build each kernel twice. */
static void rows_shape(ct_ocl_enc *enc, ct_ocl_kernel_id id, int64_t ne00, size_t local[3]) {
    const size_t max = ct_ocl_enc_clamp_wg(enc, id, ROWS_WG);
    size_t nx = ne00 <= 64 ? 32 : ROWS_WG;
    if (nx > max) nx = max;
    size_t ny = max / nx;
    if (ny > enc->be->dev->max_work_item_sizes[1]) ny = enc->be->dev->max_work_item_sizes[1];
    local[0] = nx, local[1] = ny ? ny : 1, local[2] = 1;
}

ct_status ct_ocl_encode_norm(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_norm_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    const ct_tensor *a = node->src[0];
    const ct_ocl_kernel_id id = kernel_for(node->op);
    const bool group = node->op == CT_OP_GROUP_NORM;
    ct_norm_args args = {
        .nb00 = a->nb[0], .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3],
        .nb0 = node->nb[0], .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .ne00 = (int32_t)a->ne[0], .ne01 = (int32_t)a->ne[1], .ne02 = (int32_t)a->ne[2],
        .nrows = (int32_t)ct_nrows(a),
    };
    memcpy(&args.eps, &node->op_params[group ? 1 : 0], sizeof args.eps);
    size_t local[3], groups[3], scratch;
    if (group) {
        const int64_t n_groups = node->op_params[0];
        args.channels_per_group = (int32_t)((a->ne[2] + n_groups - 1) / n_groups);
        /* only the groups that hold channels: the last may be short, later ones empty */
        groups[0] = (size_t)((args.ne02 + args.channels_per_group - 1) / args.channels_per_group);
        groups[1] = (size_t)a->ne[3], groups[2] = 1;
        local[0] = ct_ocl_enc_clamp_wg(enc, id, GROUP_WG), local[1] = 1, local[2] = 1;
        scratch = local[0] * sizeof(float);
    } else {
        rows_shape(enc, id, a->ne[0], local);
        groups[0] = ((size_t)args.nrows + local[1] - 1) / local[1], groups[1] = 1, groups[2] = 1;
        scratch = local[0] * local[1] * sizeof(float);
    }
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, a, "src0");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_arg_local(enc, scratch);
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}

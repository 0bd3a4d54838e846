/* NORM, RMS_NORM, L2_NORM, GROUP_NORM on OpenCL (kernels/norm.cl). Rows are spread
 * over dim 0 of the work-group, and short rows are packed several to a group (dim 1),
 * so a group has ROWS_WG work-items whatever the row length. */
#include "opencl_internal.h"

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
static void rows_shape(const ct_ocl_backend *be, ct_ocl_kernel_id id, int64_t ne00, size_t local[3]) {
    const size_t max = ct_ocl_clamp_wg(be, id, ROWS_WG);
    size_t nx = ne00 <= 64 ? 32 : ROWS_WG;
    if (nx > max) nx = max;
    size_t ny = max / nx;
    if (ny > be->dev->max_work_item_sizes[1]) ny = be->dev->max_work_item_sizes[1];
    local[0] = nx, local[1] = ny ? ny : 1, local[2] = 1;
}

static ct_status encode_group_norm(ct_ocl_backend *be, ct_tensor *node) {
    const ct_tensor *a = node->src[0];
    const ct_ocl_kernel_id id = CT_OCL_K_GROUP_NORM_F32;
    const int64_t n_groups = node->op_params[0];
    const cl_int cpg = (cl_int)((a->ne[2] + n_groups - 1) / n_groups);
    float eps;
    memcpy(&eps, &node->op_params[1], sizeof eps);
    const cl_int ne00 = (cl_int)a->ne[0], ne01 = (cl_int)a->ne[1], ne02 = (cl_int)a->ne[2];
    const cl_ulong nb00 = a->nb[0], nb01 = a->nb[1], nb02 = a->nb[2], nb03 = a->nb[3];
    const cl_ulong nb0 = node->nb[0], nb1 = node->nb[1], nb2 = node->nb[2], nb3 = node->nb[3];
    /* only the groups that hold channels: the last may be short, later ones empty */
    const size_t groups[3] = {(size_t)((ne02 + cpg - 1) / cpg), (size_t)a->ne[3], 1};
    const size_t local[3] = {ct_ocl_clamp_wg(be, id, GROUP_WG), 1, 1};

    ct_status st = ct_ocl_set_arg_tensor(be, id, 0, a, "src0");
    if (st == CT_OK) st = ct_ocl_set_arg_tensor(be, id, 2, node, "dst");
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 4, ne00);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 5, ne01);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 6, ne02);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 7, cpg);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 8, nb00);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 9, nb01);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 10, nb02);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 11, nb03);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 12, nb0);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 13, nb1);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 14, nb2);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 15, nb3);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 16, eps);
    if (st == CT_OK) st = ct_ocl_set_arg_local(be, id, 17, local[0] * sizeof(float));
    if (st == CT_OK) st = ct_ocl_dispatch(be, id, groups, local);
    return st;
}

ct_status ct_ocl_encode_norm(ct_ocl_backend *be, ct_tensor *node) {
    const ct_tensor *a = node->src[0];
    if (!ct_ocl_norm_supported(be->dev, node)) {
        return ct_ocl_fail(be, CT_UNSUPPORTED, "%s of src0 %s into dst %s is not supported", ct_op_name(node->op),
                           a ? ct_type_name(a->type) : "none", ct_type_name(node->type));
    }
    if (ct_is_empty(node)) return CT_OK;
    if (node->op == CT_OP_GROUP_NORM) return encode_group_norm(be, node);

    const ct_ocl_kernel_id id = kernel_for(node->op);
    const int64_t nrows = ct_nrows(a);
    size_t local[3];
    rows_shape(be, id, a->ne[0], local);
    const size_t groups[3] = {((size_t)nrows + local[1] - 1) / local[1], 1, 1};
    float eps;
    memcpy(&eps, &node->op_params[0], sizeof eps);
    const cl_int ne00 = (cl_int)a->ne[0], ne01 = (cl_int)a->ne[1], ne02 = (cl_int)a->ne[2], nr = (cl_int)nrows;
    const cl_ulong nb00 = a->nb[0], nb01 = a->nb[1], nb02 = a->nb[2], nb03 = a->nb[3];
    const cl_ulong nb0 = node->nb[0], nb1 = node->nb[1], nb2 = node->nb[2], nb3 = node->nb[3];

    ct_status st = ct_ocl_set_arg_tensor(be, id, 0, a, "src0");
    if (st == CT_OK) st = ct_ocl_set_arg_tensor(be, id, 2, node, "dst");
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 4, ne00);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 5, ne01);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 6, ne02);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 7, nr);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 8, nb00);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 9, nb01);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 10, nb02);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 11, nb03);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 12, nb0);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 13, nb1);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 14, nb2);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 15, nb3);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 16, eps);
    if (st == CT_OK) st = ct_ocl_set_arg_local(be, id, 17, local[0] * local[1] * sizeof(float));
    if (st == CT_OK) st = ct_ocl_dispatch(be, id, groups, local);
    return st;
}

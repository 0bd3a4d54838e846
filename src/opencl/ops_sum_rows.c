/* SUM_ROWS and MEAN on OpenCL (kernels/sum_rows.cl): the row layout of ops_norm.c,
 * short rows packed several to a work-group. */
#include "opencl_internal.h"

#include <limits.h>

enum { ROWS_WG = 256 };

static bool strides_aligned(const ct_ocl_device *dev, const ct_tensor *t) {
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % sizeof(float) != 0) return false;
    return ct_ocl_start_aligned(dev, t, sizeof(float));
}

bool ct_ocl_sum_rows_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op || (op->op != CT_OP_SUM_ROWS && op->op != CT_OP_MEAN)) return false;
    const ct_ocl_kernel_id id = op->op == CT_OP_MEAN ? CT_OCL_K_MEAN_F32 : CT_OCL_K_SUM_ROWS_F32;
    if (!ct_ocl_kernel_available(dev, id)) return false;
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_F32) return false;
    if (op->ne[0] != 1 || op->ne[1] != a->ne[1] || op->ne[2] != a->ne[2] || op->ne[3] != a->ne[3]) return false;
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (a->ne[i] < 0 || a->ne[i] > INT_MAX) return false;
    if (ct_nrows(a) > INT_MAX) return false;
    return strides_aligned(dev, a) && strides_aligned(dev, op);
}

ct_status ct_ocl_encode_sum_rows(ct_ocl_backend *be, ct_tensor *node) {
    const ct_tensor *a = node->src[0];
    if (!ct_ocl_sum_rows_supported(be->dev, node)) {
        return ct_ocl_fail(be, CT_UNSUPPORTED, "%s of src0 %s into dst %s is not supported", ct_op_name(node->op),
                           a ? ct_type_name(a->type) : "none", ct_type_name(node->type));
    }
    if (ct_is_empty(node)) return CT_OK;
    const ct_ocl_kernel_id id = node->op == CT_OP_MEAN ? CT_OCL_K_MEAN_F32 : CT_OCL_K_SUM_ROWS_F32;
    const int64_t nrows = ct_nrows(a);

    /* (nx, ny): 32 work-items per row for rows up to 64, else ROWS_WG; ny rows fill the group */
    const size_t max = ct_ocl_clamp_wg(be, id, ROWS_WG);
    size_t nx = a->ne[0] <= 64 ? 32 : ROWS_WG;
    if (nx > max) nx = max;
    size_t ny = max / nx;
    if (ny > be->dev->max_work_item_sizes[1]) ny = be->dev->max_work_item_sizes[1];
    if (ny == 0) ny = 1;
    const size_t local[3] = {nx, ny, 1};
    const size_t groups[3] = {((size_t)nrows + ny - 1) / ny, 1, 1};

    const cl_int ne00 = (cl_int)a->ne[0], ne01 = (cl_int)a->ne[1], ne02 = (cl_int)a->ne[2], nr = (cl_int)nrows;
    const cl_ulong nb00 = a->nb[0], nb01 = a->nb[1], nb02 = a->nb[2], nb03 = a->nb[3];
    const cl_ulong nb1 = node->nb[1], nb2 = node->nb[2], nb3 = node->nb[3];
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
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 12, nb1);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 13, nb2);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, id, 14, nb3);
    if (st == CT_OK) st = ct_ocl_set_arg_local(be, id, 15, nx * ny * sizeof(float));
    if (st == CT_OK) st = ct_ocl_dispatch(be, id, groups, local);
    return st;
}

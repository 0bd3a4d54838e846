/* SUM_ROWS and MEAN on OpenCL (kernels/sum_rows.cl, taking ct_sum_rows_args): the row
 * layout of norm.c, short rows packed several to a work-group. */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"

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

ct_status ct_ocl_encode_sum_rows(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_sum_rows_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    const ct_tensor *a = node->src[0];
    const ct_ocl_kernel_id id = node->op == CT_OP_MEAN ? CT_OCL_K_MEAN_F32 : CT_OCL_K_SUM_ROWS_F32;
    const int64_t nrows = ct_nrows(a);

    /* (nx, ny): 32 work-items per row for rows up to 64, else ROWS_WG; ny rows fill the group */
    const size_t max = ct_ocl_enc_clamp_wg(enc, id, ROWS_WG);
    size_t nx = a->ne[0] <= 64 ? 32 : ROWS_WG;
    if (nx > max) nx = max;
    size_t ny = max / nx;
    if (ny > enc->be->dev->max_work_item_sizes[1]) ny = enc->be->dev->max_work_item_sizes[1];
    if (ny == 0) ny = 1;
    const size_t local[3] = {nx, ny, 1};
    const size_t groups[3] = {((size_t)nrows + ny - 1) / ny, 1, 1};

    const ct_sum_rows_args args = {
        .nb00 = a->nb[0], .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3],
        .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .ne00 = (int32_t)a->ne[0], .ne01 = (int32_t)a->ne[1], .ne02 = (int32_t)a->ne[2], .nrows = (int32_t)nrows,
    };
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, a, "src0");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_arg_local(enc, nx * ny * sizeof(float));
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}

/* SUM, CUMSUM and ARGMAX on OpenCL (kernels/sum.cl, taking ct_reduce_args). */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"

#include <limits.h>

enum { REDUCE_WG = 256 };

static bool strides_aligned(const ct_ocl_device *dev, const ct_tensor *t) {
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % sizeof(float) != 0) return false;
    return ct_ocl_start_aligned(dev, t, sizeof(float));
}

static ct_ocl_kernel_id kernel_of(ct_op op) {
    return op == CT_OP_SUM ? CT_OCL_K_SUM_F32 : op == CT_OP_CUMSUM ? CT_OCL_K_CUMSUM_F32 : CT_OCL_K_ARGMAX_F32;
}

bool ct_ocl_reduce_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op || (op->op != CT_OP_SUM && op->op != CT_OP_CUMSUM && op->op != CT_OP_ARGMAX)) return false;
    if (!ct_ocl_kernel_available(dev, kernel_of(op->op))) return false;
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32) return false;
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (a->ne[i] < 0 || a->ne[i] > INT_MAX) return false;
    if (ct_nrows(a) > INT_MAX) return false;
    switch (op->op) {
    case CT_OP_SUM:
        if (op->type != CT_TYPE_F32 || ct_nelements(op) != 1) return false;
        break;
    case CT_OP_CUMSUM:
        if (op->type != CT_TYPE_F32 || op->nb[0] != sizeof(float)) return false;
        for (int i = 0; i < CT_MAX_DIMS; i++)
            if (op->ne[i] != a->ne[i]) return false;
        break;
    default: /* ARGMAX */
        if (op->type != CT_TYPE_I32 || a->ne[2] != 1 || a->ne[3] != 1) return false;
        if (op->ne[0] != a->ne[1] || op->ne[1] != 1 || op->ne[2] != 1 || op->ne[3] != 1) return false;
        break;
    }
    return strides_aligned(dev, a) && strides_aligned(dev, op);
}

ct_status ct_ocl_encode_reduce(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_reduce_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    const ct_tensor *a = node->src[0];
    const ct_ocl_kernel_id id = kernel_of(node->op);
    const ct_reduce_args args = {
        .nb00 = a->nb[0], .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3],
        .nb1 = node->op == CT_OP_ARGMAX ? node->nb[0] : node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .ne00 = (int32_t)a->ne[0], .ne01 = (int32_t)a->ne[1], .ne02 = (int32_t)a->ne[2], .ne03 = (int32_t)a->ne[3],
    };
    /* work-items: up to REDUCE_WG, about one per 8 elements of a row (CUMSUM, ARGMAX) */
    size_t nx = ct_ocl_enc_clamp_wg(enc, id, REDUCE_WG);
    size_t groups[3] = {1, 1, 1};
    if (node->op != CT_OP_SUM) {
        size_t want = 1;
        while (want < nx && want * 8 < (size_t)a->ne[0]) want *= 2;
        nx = want;
        groups[0] = (size_t)ct_nrows(a);
    }
    const size_t local[3] = {nx, 1, 1};
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, a, "src0");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    if (node->op == CT_OP_ARGMAX) {
        ct_ocl_arg_local(enc, nx * sizeof(float));
        for (int i = 0; i < 3; i++) ct_ocl_arg_local(enc, nx * sizeof(int32_t));
    } else {
        ct_ocl_arg_local(enc, nx * sizeof(float));
    }
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}

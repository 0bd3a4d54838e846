/* SOFT_MAX on OpenCL (kernels/soft_max.cl, taking ct_soft_max_args): one work-group per row,
 * of 32 to 256 work-items by the row's length (kernels/soft_max.cl keeps up to 16 elements a
 * work-item in registers). */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"

#include <limits.h>
#include <math.h>
#include <string.h>

static bool strides_aligned(const ct_ocl_device *dev, const ct_tensor *t, size_t a) {
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % a != 0) return false;
    return ct_ocl_start_aligned(dev, t, a);
}

static bool dims_fit(const ct_tensor *t) {
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->ne[i] < 0 || t->ne[i] > INT_MAX) return false;
    return true;
}

bool ct_ocl_soft_max_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op || op->op != CT_OP_SOFT_MAX || !ct_ocl_kernel_available(dev, CT_OCL_K_SOFT_MAX_F32)) return false;
    const ct_tensor *a = op->src[0], *mask = op->src[1], *sinks = op->src[2];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_F32 || !ct_are_same_shape(a, op)) return false;
    if (op->nb[0] != sizeof(float) || !dims_fit(a)) return false;
    if (!strides_aligned(dev, a, sizeof(float)) || !strides_aligned(dev, op, sizeof(float))) return false;
    if (mask) {
        if (mask->type != CT_TYPE_F32 && mask->type != CT_TYPE_F16) return false;
        if (mask->ne[0] != a->ne[0] || mask->ne[1] < a->ne[1] || mask->ne[2] < 1 || mask->ne[3] < 1) return false;
        if (a->ne[2] % mask->ne[2] != 0 || a->ne[3] % mask->ne[3] != 0 || !dims_fit(mask)) return false;
        if (!strides_aligned(dev, mask, ct_type_size(mask->type))) return false;
    } else {
        float max_bias;
        memcpy(&max_bias, &op->op_params[1], sizeof max_bias);
        if (max_bias > 0.0f) return false;
    }
    if (sinks && (sinks->type != CT_TYPE_F32 || sinks->ne[0] != a->ne[2] || !strides_aligned(dev, sinks, sizeof(float))))
        return false;
    return true;
}

ct_status ct_ocl_encode_soft_max(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_soft_max_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    const ct_tensor *a = node->src[0], *mask = node->src[1], *sinks = node->src[2];
    ct_soft_max_args args = {
        .nb00 = a->nb[0], .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3],
        .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .ne00 = (int32_t)a->ne[0], .ne01 = (int32_t)a->ne[1], .ne02 = (int32_t)a->ne[2],
        .ne12 = 1, .ne13 = 1,
    };
    memcpy(&args.scale, &node->op_params[0], sizeof args.scale);
    memcpy(&args.max_bias, &node->op_params[1], sizeof args.max_bias);
    if (mask) {
        args.nb10 = mask->nb[0], args.nb11 = mask->nb[1], args.nb12 = mask->nb[2], args.nb13 = mask->nb[3];
        args.ne12 = (int32_t)mask->ne[2], args.ne13 = (int32_t)mask->ne[3];
        args.mask_type = mask->type == CT_TYPE_F16 ? 2 : 1;
    }
    if (sinks) {
        args.has_sinks = 1;
        args.nbs0 = sinks->nb[0];
    }
    if (args.max_bias > 0.0f) {
        /* ALiBi's constants as ggml computes them from n_head = ne02 */
        const uint32_t n_head_log2 = 1u << (uint32_t)floor(log2((double)a->ne[2]));
        args.n_head_log2 = (int32_t)n_head_log2;
        args.m0 = powf(2.0f, -(args.max_bias) / (float)n_head_log2);
        args.m1 = powf(2.0f, -(args.max_bias / 2.0f) / (float)n_head_log2);
    }
    const ct_ocl_kernel_id id = CT_OCL_K_SOFT_MAX_F32;
    /* the fewest work-items (32 at least, 256 at most) that hold a row in SM_KEEP (16) registers
     * each: a work-group's items run as loops on CPU devices, where idle items cost time too */
    size_t nx = a->ne[0] <= 16 * 32 ? 32 : a->ne[0] <= 16 * 64 ? 64 : a->ne[0] <= 16 * 128 ? 128 : 256;
    nx = ct_ocl_enc_clamp_wg(enc, id, nx);
    const size_t local[3] = {nx, 1, 1};
    const size_t groups[3] = {(size_t)a->ne[1], (size_t)a->ne[2], (size_t)a->ne[3]};
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, a, "src0");
    if (mask) ct_ocl_arg_tensor(enc, mask, "src1");
    else ct_ocl_arg_null_tensor(enc);
    if (sinks) ct_ocl_arg_tensor(enc, sinks, "src2");
    else ct_ocl_arg_null_tensor(enc);
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_arg_local(enc, nx * sizeof(float));
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}

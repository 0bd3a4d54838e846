/* UNARY and SCALE on OpenCL (kernels/unary.cl, taking ct_unary_args):
 * one element a work-item over a 1-d launch, any strides that are multiples of the
 * element size; the launch is the element-wise engine the math ops share (encoder.h). */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"

#include <limits.h>
#include <string.h>

enum { WG = 256 };

static ct_ocl_kernel_id kernel_for(const ct_tensor *op) {
    const bool f32 = op->type == CT_TYPE_F32;
    if (op->op == CT_OP_UNARY) return f32 ? CT_OCL_K_UNARY_F32 : CT_OCL_K_UNARY_F16;
    return f32 ? CT_OCL_K_SCALE_F32 : CT_OCL_K_SCALE_F16;
}

static bool strides_aligned(const ct_ocl_device *dev, const ct_tensor *t) {
    const size_t ts = ct_type_size(t->type);
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % ts != 0) return false;
    return ct_ocl_start_aligned(dev, t, ts);
}

/* The checks of every element-wise kernel (encoder.h): F32 or F16 in and out, same shape,
 * int dims, strides that are multiples of the element size. */
bool ct_ocl_elementwise_supported(const ct_ocl_device *dev, const ct_tensor *op, ct_ocl_kernel_id kid) {
    const ct_tensor *a = op->src[0];
    if (!a || (a->type != CT_TYPE_F32 && a->type != CT_TYPE_F16) || op->type != a->type) return false;
    if (!ct_are_same_shape(a, op) || !ct_ocl_kernel_available(dev, kid)) return false;
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (a->ne[i] < 0 || a->ne[i] > INT_MAX) return false;
    return strides_aligned(dev, a) && strides_aligned(dev, op);
}

static bool elementwise_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    return ct_ocl_elementwise_supported(dev, op, kernel_for(op));
}

bool ct_ocl_unary_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op || op->op != CT_OP_UNARY) return false;
    if (op->op_params[0] < 0 || op->op_params[0] >= CT_UNARY_OP_COUNT) return false;
    return elementwise_supported(dev, op);
}

bool ct_ocl_scale_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op || op->op != CT_OP_SCALE) return false;
    return elementwise_supported(dev, op);
}

ct_status ct_ocl_encode_elementwise(ct_ocl_enc *enc, ct_tensor *node, ct_ocl_kernel_id id, int32_t op,
                                    const float p[4]) {
    if (ct_is_empty(node)) return CT_OK;
    const ct_tensor *a = node->src[0];
    ct_unary_args args = {
        .nb00 = a->nb[0], .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3],
        .nb0 = node->nb[0], .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .n = (uint64_t)ct_nelements(a),
        .ne00 = (int32_t)a->ne[0], .ne01 = (int32_t)a->ne[1], .ne02 = (int32_t)a->ne[2],
        .op = op,
    };
    memcpy(args.p, p, sizeof args.p);
    const size_t local[3] = {ct_ocl_enc_clamp_wg(enc, id, WG), 1, 1};
    const size_t groups[3] = {(size_t)((args.n + local[0] - 1) / local[0]), 1, 1};
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, a, "src0");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}

static ct_status encode(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    *n_nodes = 1;
    float p[4] = {0};
    int32_t op = 0;
    if (node->op == CT_OP_UNARY) {
        op = node->op_params[0];
        memcpy(p, &node->op_params[1], sizeof p);
    } else {
        memcpy(p, &node->op_params[0], 2 * sizeof(float));
    }
    return ct_ocl_encode_elementwise(enc, node, kernel_for(node), op, p);
}

ct_status ct_ocl_encode_unary(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_unary_supported(enc->be->dev, node));
    return encode(enc, node, n_nodes);
}

ct_status ct_ocl_encode_scale(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_scale_supported(enc->be->dev, node));
    return encode(enc, node, n_nodes);
}

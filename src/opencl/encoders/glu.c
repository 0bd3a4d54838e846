/* GLU on OpenCL (kernels/glu.cl, taking ct_glu_args): one work-item per element of the
 * result, rows over the launch's dims 1 (ne1) and 2 (ne2·ne3); the fused form passes
 * src0 twice, with the byte offsets of its row's halves. */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"
#include "tensor/tensor_internal.h"

#include <limits.h>
#include <string.h>

enum { GLU_WG = 256 };

static ct_ocl_kernel_id kernel_for(const ct_tensor *op) {
    return op->type == CT_TYPE_F16 ? CT_OCL_K_GLU_F16 : CT_OCL_K_GLU_F32;
}

static bool strides_aligned(const ct_ocl_device *dev, const ct_tensor *t, size_t a) {
    for (int i = 1; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % a != 0) return false;
    return ct_ocl_start_aligned(dev, t, a);
}

bool ct_ocl_glu_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op || !ct_glu_node_valid(op)) return false;
    if (!ct_ocl_kernel_available(dev, kernel_for(op))) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1];
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (a->ne[i] > INT_MAX) return false;
    if (a->ne[2] * a->ne[3] > INT_MAX) return false;
    const size_t ts = ct_type_size(op->type);
    return strides_aligned(dev, a, ts) && strides_aligned(dev, op, ts) && (!b || strides_aligned(dev, b, ts));
}

static float param_f32(const ct_tensor *t, int i) {
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

ct_status ct_ocl_encode_glu(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_glu_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    const ct_tensor *a = node->src[0], *b = node->src[1];
    const ct_tensor *g = b ? b : a;
    const ct_ocl_kernel_id id = kernel_for(node);
    const size_t ts = ct_type_size(node->type);
    const int64_t nc = node->ne[0];
    const bool swapped = node->op_params[1] != 0;
    ct_glu_args args = {
        .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3],
        .nb11 = g->nb[1], .nb12 = g->nb[2], .nb13 = g->nb[3],
        .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .xo = b ? 0 : (uint64_t)(swapped ? nc : 0) * ts, .go = b ? 0 : (uint64_t)(swapped ? 0 : nc) * ts,
        .ne0 = (int32_t)nc, .ne1 = (int32_t)node->ne[1], .ne2 = (int32_t)node->ne[2], .op = node->op_params[0],
        .alpha = param_f32(node, 2), .limit = param_f32(node, 3),
    };
    size_t local[3] = {ct_ocl_enc_clamp_wg(enc, id, GLU_WG), 1, 1};
    if ((size_t)nc < local[0]) {
        size_t l = 1;
        while (l < (size_t)nc) l *= 2;
        local[0] = l;
    }
    const size_t groups[3] = {((size_t)nc + local[0] - 1) / local[0], (size_t)node->ne[1],
                              (size_t)(node->ne[2] * node->ne[3])};
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, a, "src0");
    ct_ocl_arg_tensor(enc, g, b ? "src1" : "src0");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}

/* ROPE on OpenCL (kernels/rope.cl, taking ct_rope_args): one work-item per element,
 * rows over dims 1 and 2. The constants of the angles (theta_scale, YaRN's corr dims
 * and magnitude scale) are computed here with the CPU's float expressions. */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"
#include "tensor/tensor_internal.h"

#include <limits.h>
#include <math.h>
#include <string.h>

enum { ROPE_WG = 64 };

static bool strides_aligned(const ct_ocl_device *dev, const ct_tensor *t, size_t a) {
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (t->nb[i] % a != 0) return false;
    return ct_ocl_start_aligned(dev, t, a);
}

bool ct_ocl_rope_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op || !ct_rope_node_valid(op)) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1], *c = op->src[2];
    const ct_ocl_kernel_id id = a->type == CT_TYPE_F16 ? CT_OCL_K_ROPE_F16 : CT_OCL_K_ROPE_F32;
    if (!ct_ocl_kernel_available(dev, id)) return false;
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (a->ne[i] > INT_MAX) return false;
    if (a->ne[2] * a->ne[3] > INT_MAX || 4 * a->ne[2] > INT_MAX) return false;
    const size_t ts = ct_type_size(a->type);
    if (!strides_aligned(dev, a, ts) || !strides_aligned(dev, op, ts)) return false;
    if (!strides_aligned(dev, b, sizeof(int32_t))) return false;
    return !c || strides_aligned(dev, c, sizeof(float));
}

static float param_f32(const ct_tensor *t, int i) {
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

static float corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return n_dims * logf(n_ctx_orig / (n_rot * 2 * (float)M_PI)) / (2 * logf(base));
}

ct_status ct_ocl_encode_rope(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_rope_supported(enc->be->dev, node));
    *n_nodes = 1;
    if (ct_is_empty(node)) return CT_OK;
    const ct_tensor *a = node->src[0], *b = node->src[1], *c = node->src[2];
    const ct_ocl_kernel_id id = a->type == CT_TYPE_F16 ? CT_OCL_K_ROPE_F16 : CT_OCL_K_ROPE_F32;
    const int n_dims = node->op_params[1], n_ctx_orig = node->op_params[4];
    const float freq_base = param_f32(node, 5), freq_scale = param_f32(node, 6), ext_factor = param_f32(node, 7);
    const float beta_fast = param_f32(node, 9), beta_slow = param_f32(node, 10);
    float mscale = param_f32(node, 8);
    if (ext_factor != 0.0f) mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);
    ct_rope_args args = {
        .nb00 = a->nb[0], .nb01 = a->nb[1], .nb02 = a->nb[2], .nb03 = a->nb[3],
        .nb0 = node->nb[0], .nb1 = node->nb[1], .nb2 = node->nb[2], .nb3 = node->nb[3],
        .nbp = b->nb[0], .nbf = c ? c->nb[0] : 0,
        .ne0 = (int32_t)a->ne[0], .ne1 = (int32_t)a->ne[1], .ne2 = (int32_t)a->ne[2], .ne3 = (int32_t)a->ne[3],
        .n_dims = n_dims, .mode = node->op_params[2], .n_offs = node->op_params[15], .has_ff = c != NULL,
        .s0 = node->op_params[11], .s1 = node->op_params[12], .s2 = node->op_params[13], .s3 = node->op_params[14],
        .theta_scale = powf(freq_base, -2.0f / n_dims), .freq_scale = freq_scale, .ext_factor = ext_factor,
        .mscale = mscale,
        .corr0 = fmaxf(0.0f, floorf(corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base))),
        .corr1 = fminf((float)(n_dims - 1), ceilf(corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base))),
    };
    size_t local[3] = {ct_ocl_enc_clamp_wg(enc, id, ROPE_WG), 1, 1};
    if ((size_t)a->ne[0] < local[0]) {
        size_t l = 1;
        while (l < (size_t)a->ne[0]) l *= 2;
        local[0] = l;
    }
    const size_t groups[3] = {((size_t)a->ne[0] + local[0] - 1) / local[0], (size_t)a->ne[1],
                              (size_t)(a->ne[2] * a->ne[3])};
    ct_ocl_enc_kernel(enc, id);
    ct_ocl_arg_tensor(enc, a, "src0");
    ct_ocl_arg_tensor(enc, node, "dst");
    ct_ocl_arg_tensor(enc, b, "src1");
    if (c) ct_ocl_arg_tensor(enc, c, "src2");
    else ct_ocl_arg_tensor(enc, b, "src1"); /* never read: has_ff is 0 */
    ct_ocl_arg_bytes(enc, &args, sizeof args);
    ct_ocl_enc_dispatch(enc, groups, local);
    return enc->st;
}

/* Math constructors (docs/TENSORS.md, Math): SQR, SQRT, SIN, COS, LOG, CLAMP, LEAKY_RELU and
 * FILL, ggml's element-wise ops of their own (not UNARY sub-ops), on F32 or F16 rows, in new
 * tensors or in place. */
#include "tensor/tensor_internal.h"

#include <string.h>

static ct_tensor *math_impl(const char *func, ct_context *ctx, ct_tensor *a, ct_op op, int n_params,
                            const float *params, bool inplace) {
    if (ct_op_check_args(func, ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return NULL;
    if (a->type != CT_TYPE_F32 && a->type != CT_TYPE_F16) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32 or f16", func,
                            ct_tensor_label(a, "a").s, ct_type_name(a->type));
    }
    if (!ct_is_contiguous_rows(a)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s nb[0]=%zu but its rows must be packed (nb[0]=%zu)", func,
                            ct_tensor_label(a, "a").s, a->nb[0], ct_type_size(a->type));
    }
    ct_tensor *t = inplace ? ct_view_impl(ctx, func, a, a->ne, a->nb, 0) : ct_tensor_new_impl(ctx, func, a->type, a->ne);
    if (t == NULL) return NULL;
    memset(t->op_params, 0, sizeof t->op_params);
    t->op = op;
    for (int i = 0; i < n_params; i++) ct_tensor_set_param_f32(t, i, params[i]);
    t->src[0] = a;
    if (inplace) ct_tensor_name_from(t, a, " (view)");
    return t;
}

#define CT_MATH_PLAIN(fn, OP)                                                                               \
    ct_tensor *ct_##fn(ct_context *ctx, ct_tensor *a) {                                                     \
        return math_impl("ct_" #fn, ctx, a, CT_OP_##OP, 0, NULL, false);                                    \
    }                                                                                                       \
    ct_tensor *ct_##fn##_inplace(ct_context *ctx, ct_tensor *a) {                                           \
        return math_impl("ct_" #fn "_inplace", ctx, a, CT_OP_##OP, 0, NULL, true);                          \
    }
CT_MATH_PLAIN(sqr, SQR)
CT_MATH_PLAIN(sqrt, SQRT)
CT_MATH_PLAIN(sin, SIN)
CT_MATH_PLAIN(cos, COS)
CT_MATH_PLAIN(ln, LOG)
#undef CT_MATH_PLAIN

ct_tensor *ct_clamp(ct_context *ctx, ct_tensor *a, float min, float max) {
    const float p[2] = {min, max};
    return math_impl("ct_clamp", ctx, a, CT_OP_CLAMP, 2, p, false);
}

ct_tensor *ct_clamp_inplace(ct_context *ctx, ct_tensor *a, float min, float max) {
    const float p[2] = {min, max};
    return math_impl("ct_clamp_inplace", ctx, a, CT_OP_CLAMP, 2, p, true);
}

ct_tensor *ct_leaky_relu(ct_context *ctx, ct_tensor *a, float negative_slope, bool inplace) {
    return math_impl("ct_leaky_relu", ctx, a, CT_OP_LEAKY_RELU, 1, &negative_slope, inplace);
}

ct_tensor *ct_fill(ct_context *ctx, ct_tensor *a, float c) {
    return math_impl("ct_fill", ctx, a, CT_OP_FILL, 1, &c, false);
}

ct_tensor *ct_fill_inplace(ct_context *ctx, ct_tensor *a, float c) {
    return math_impl("ct_fill_inplace", ctx, a, CT_OP_FILL, 1, &c, true);
}

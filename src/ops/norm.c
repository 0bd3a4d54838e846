/* NORM, RMS_NORM, L2_NORM and GROUP_NORM constructors (docs/TENSORS.md, Norms). Only F32
 * rows are accepted: no backend computes another type. */
#include "tensor/tensor_internal.h"

#include <math.h>

static ct_tensor *norm_impl(const char *func, ct_op op, ct_context *ctx, ct_tensor *a, float eps) {
    if (ct_op_check_args(func, ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return NULL;
    if (a->type != CT_TYPE_F32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32", func,
                            ct_tensor_label(a, "src").s, ct_type_name(a->type));
    }
    if (!isfinite(eps) || eps < 0.0f) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: eps=%g but must be finite and >= 0", func, (double)eps);
    }
    ct_tensor *t = ct_tensor_new_impl(ctx, func, a->type, a->ne);
    if (t == NULL) return NULL;
    t->op = op;
    t->src[0] = a;
    return t;
}

ct_tensor *ct_norm(ct_context *ctx, ct_tensor *a, float eps) {
    ct_tensor *t = norm_impl("ct_norm", CT_OP_NORM, ctx, a, eps);
    if (t) ct_tensor_set_param_f32(t, 0, eps);
    return t;
}

ct_tensor *ct_rms_norm(ct_context *ctx, ct_tensor *a, float eps) {
    ct_tensor *t = norm_impl("ct_rms_norm", CT_OP_RMS_NORM, ctx, a, eps);
    if (t) ct_tensor_set_param_f32(t, 0, eps);
    return t;
}

ct_tensor *ct_l2_norm(ct_context *ctx, ct_tensor *a, float eps) {
    ct_tensor *t = norm_impl("ct_l2_norm", CT_OP_L2_NORM, ctx, a, eps);
    if (t) ct_tensor_set_param_f32(t, 0, eps);
    return t;
}

ct_tensor *ct_group_norm(ct_context *ctx, ct_tensor *a, int n_groups, float eps) {
    if (ctx != NULL && a != NULL && n_groups < 1) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_group_norm: n_groups=%d but must be >= 1", n_groups);
    }
    ct_tensor *t = norm_impl("ct_group_norm", CT_OP_GROUP_NORM, ctx, a, eps);
    if (t == NULL) return NULL;
    t->op_params[0] = n_groups;
    ct_tensor_set_param_f32(t, 1, eps);
    return t;
}

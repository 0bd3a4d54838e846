/* SCALE constructors (docs/TENSORS.md, Scale): y = x*s + b on F32 or F16 rows,
 * op_params[0] = s, [1] = b as floats. */
#include "tensor/tensor_internal.h"

static ct_tensor *scale_impl(const char *func, ct_context *ctx, ct_tensor *a, float s, float b) {
    if (ct_op_check_args(func, ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return NULL;
    if (a->type != CT_TYPE_F32 && a->type != CT_TYPE_F16) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32 or f16", func,
                            ct_tensor_label(a, "src").s, ct_type_name(a->type));
    }
    if (a->nb[0] != ct_type_size(a->type)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s nb[0]=%zu but its rows must be packed (nb[0]=%zu)", func,
                            ct_tensor_label(a, "src").s, a->nb[0], ct_type_size(a->type));
    }
    ct_tensor *t = ct_tensor_new_impl(ctx, func, a->type, a->ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_SCALE;
    ct_tensor_set_param_f32(t, 0, s);
    ct_tensor_set_param_f32(t, 1, b);
    t->src[0] = a;
    return t;
}

ct_tensor *ct_scale(ct_context *ctx, ct_tensor *a, float s) { return scale_impl("ct_scale", ctx, a, s, 0.0f); }

ct_tensor *ct_scale_bias(ct_context *ctx, ct_tensor *a, float s, float b) {
    return scale_impl("ct_scale_bias", ctx, a, s, b);
}

/* SOFT_MAX constructor (docs/TENSORS.md, SOFT_MAX): ggml_soft_max_ext with its optional mask
 * (src[1]) and sinks (src[2]). F32 rows only: no backend computes another type. */
#include "tensor/tensor_internal.h"

#include <math.h>

ct_tensor *ct_soft_max_ext(ct_context *ctx, ct_tensor *a, ct_tensor *mask, ct_tensor *sinks, float scale,
                           float max_bias) {
    static const char *const func = "ct_soft_max_ext";
    if (ct_op_check_args(func, ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return NULL;
    if (a->type != CT_TYPE_F32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32", func, ct_tensor_label(a, "a").s,
                            ct_type_name(a->type));
    }
    if (!isfinite(scale) || !isfinite(max_bias)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: scale=%g, max_bias=%g but both must be finite", func,
                            (double)scale, (double)max_bias);
    }
    if (mask != NULL) {
        if (mask->type != CT_TYPE_F16 && mask->type != CT_TYPE_F32) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f16 or f32", func,
                                ct_tensor_label(mask, "mask").s, ct_type_name(mask->type));
        }
        if (mask->ne[0] != a->ne[0] || mask->ne[1] < a->ne[1]) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                                "%s: %s ne0=%lld, ne1=%lld but must have ne0 == %lld and ne1 >= %lld (a's)", func,
                                ct_tensor_label(mask, "mask").s, (long long)mask->ne[0], (long long)mask->ne[1],
                                (long long)a->ne[0], (long long)a->ne[1]);
        }
        if (mask->ne[2] < 1 || mask->ne[3] < 1 || a->ne[2] % mask->ne[2] != 0 || a->ne[3] % mask->ne[3] != 0) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                                "%s: %s ne2=%lld, ne3=%lld but must be >= 1 and divide a's ne2=%lld, ne3=%lld", func,
                                ct_tensor_label(mask, "mask").s, (long long)mask->ne[2], (long long)mask->ne[3],
                                (long long)a->ne[2], (long long)a->ne[3]);
        }
    } else if (max_bias > 0.0f) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: max_bias=%g > 0 (ALiBi) but mask is NULL", func,
                            (double)max_bias);
    }
    if (sinks != NULL) {
        if (sinks->type != CT_TYPE_F32) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32", func,
                                ct_tensor_label(sinks, "sinks").s, ct_type_name(sinks->type));
        }
        if (sinks->ne[0] != a->ne[2]) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne0=%lld but must be a's ne2=%lld (one per head)", func,
                                ct_tensor_label(sinks, "sinks").s, (long long)sinks->ne[0], (long long)a->ne[2]);
        }
        if (a->ne[2] > 0 && ct_is_empty(sinks)) { /* its first row is read: it must hold one */
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne=[%lld,%lld,%lld,%lld] has no elements", func,
                                ct_tensor_label(sinks, "sinks").s, (long long)sinks->ne[0], (long long)sinks->ne[1],
                                (long long)sinks->ne[2], (long long)sinks->ne[3]);
        }
    }
    ct_tensor *t = ct_tensor_new_impl(ctx, func, CT_TYPE_F32, a->ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_SOFT_MAX;
    t->src[0] = a;
    t->src[1] = mask;
    t->src[2] = sinks;
    ct_tensor_set_param_f32(t, 0, scale);
    ct_tensor_set_param_f32(t, 1, max_bias);
    return t;
}

ct_tensor *ct_soft_max(ct_context *ctx, ct_tensor *a) { return ct_soft_max_ext(ctx, a, NULL, NULL, 1.0f, 0.0f); }

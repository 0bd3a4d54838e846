/* SUM, CUMSUM and ARGMAX constructors (docs/TENSORS.md, SUM, CUMSUM and ARGMAX). F32 only:
 * no backend computes another type (ggml-metal neither). */
#include "tensor/tensor_internal.h"

#include <stdint.h>

static bool check_f32(const char *func, ct_context *ctx, const ct_tensor *a) {
    if (ct_op_check_args(func, ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return false;
    if (a->type != CT_TYPE_F32) {
        ct_fail(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32", func, ct_tensor_label(a, "src").s,
                ct_type_name(a->type));
        return false;
    }
    return true;
}

ct_tensor *ct_sum(ct_context *ctx, ct_tensor *a) {
    if (!check_f32("ct_sum", ctx, a)) return NULL;
    const int64_t ne[CT_MAX_DIMS] = {1, 1, 1, 1};
    ct_tensor *t = ct_tensor_new_impl(ctx, "ct_sum", CT_TYPE_F32, ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_SUM;
    t->src[0] = a;
    return t;
}

ct_tensor *ct_cumsum(ct_context *ctx, ct_tensor *a) {
    if (!check_f32("ct_cumsum", ctx, a)) return NULL;
    ct_tensor *t = ct_tensor_new_impl(ctx, "ct_cumsum", CT_TYPE_F32, a->ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_CUMSUM;
    t->src[0] = a;
    return t;
}

ct_tensor *ct_argmax(ct_context *ctx, ct_tensor *a) {
    if (!check_f32("ct_argmax", ctx, a)) return NULL;
    if (a->ne[2] != 1 || a->ne[3] != 1) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne=[%lld, %lld, %lld, %lld] but must be a matrix (ne2 = ne3 = 1)",
                            "ct_argmax", ct_tensor_label(a, "src").s, (long long)a->ne[0], (long long)a->ne[1],
                            (long long)a->ne[2], (long long)a->ne[3]);
    }
    if (a->ne[0] > INT32_MAX) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne0=%lld but must be at most INT32_MAX", "ct_argmax",
                            ct_tensor_label(a, "src").s, (long long)a->ne[0]);
    }
    const int64_t ne[CT_MAX_DIMS] = {a->ne[1], 1, 1, 1};
    ct_tensor *t = ct_tensor_new_impl(ctx, "ct_argmax", CT_TYPE_I32, ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_ARGMAX;
    t->src[0] = a;
    return t;
}

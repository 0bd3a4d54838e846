/* ARGSORT and TOP_K constructors (docs/TENSORS.md, ARGSORT and TOP_K). F32 rows, I32 indices. */
#include "tensor/tensor_internal.h"

#include <stdint.h>

static bool check_rows(const char *func, ct_context *ctx, const ct_tensor *a) {
    if (ct_op_check_args(func, ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return false;
    if (a->type != CT_TYPE_F32) {
        ct_fail(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32", func, ct_tensor_label(a, "src").s,
                ct_type_name(a->type));
        return false;
    }
    if (a->ne[0] > INT32_MAX) {
        ct_fail(CT_INVALID_ARGUMENT, "%s: %s ne0=%lld but must be at most INT32_MAX", func, ct_tensor_label(a, "src").s,
                (long long)a->ne[0]);
        return false;
    }
    return true;
}

ct_tensor *ct_argsort(ct_context *ctx, ct_tensor *a, ct_sort_order order) {
    if (!check_rows("ct_argsort", ctx, a)) return NULL;
    if (order != CT_SORT_ORDER_ASC && order != CT_SORT_ORDER_DESC) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_argsort: order=%d but must be CT_SORT_ORDER_ASC (0) or "
                            "CT_SORT_ORDER_DESC (1)", (int)order);
    }
    ct_tensor *t = ct_tensor_new_impl(ctx, "ct_argsort", CT_TYPE_I32, a->ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_ARGSORT;
    t->op_params[0] = (int32_t)order;
    t->src[0] = a;
    return t;
}

ct_tensor *ct_top_k(ct_context *ctx, ct_tensor *a, int k) {
    if (!check_rows("ct_top_k", ctx, a)) return NULL;
    if (k < 0 || k > a->ne[0]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_top_k: k=%d but must be in [0, %s ne0=%lld]", k,
                            ct_tensor_label(a, "src").s, (long long)a->ne[0]);
    }
    const int64_t ne[CT_MAX_DIMS] = {k, a->ne[1], a->ne[2], a->ne[3]};
    ct_tensor *t = ct_tensor_new_impl(ctx, "ct_top_k", CT_TYPE_I32, ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_TOP_K;
    t->src[0] = a;
    return t;
}

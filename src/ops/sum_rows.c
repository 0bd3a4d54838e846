/* SUM_ROWS and MEAN constructors (docs/TENSORS.md, SUM_ROWS and MEAN). F32 only: the reference
 * computes no other type, and supports_op must stay exact. */
#include "tensor/tensor_internal.h"

static ct_tensor *reduce_rows(const char *func, ct_op op, ct_context *ctx, ct_tensor *a) {
    if (ct_op_check_args(func, ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return NULL;
    if (a->type != CT_TYPE_F32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32", func,
                            ct_tensor_label(a, "src").s, ct_type_name(a->type));
    }
    const int64_t ne[CT_MAX_DIMS] = {1, a->ne[1], a->ne[2], a->ne[3]};
    ct_tensor *t = ct_tensor_new_impl(ctx, func, CT_TYPE_F32, ne);
    if (t == NULL) return NULL;
    t->op = op;
    t->src[0] = a;
    return t;
}

ct_tensor *ct_sum_rows(ct_context *ctx, ct_tensor *a) { return reduce_rows("ct_sum_rows", CT_OP_SUM_ROWS, ctx, a); }

ct_tensor *ct_mean(ct_context *ctx, ct_tensor *a) { return reduce_rows("ct_mean", CT_OP_MEAN, ctx, a); }

/* GET_ROWS constructor (SPEC.md §4.1). */
#include "tensor/tensor_internal.h"

ct_tensor *ct_get_rows(ct_context *ctx, ct_tensor *a, ct_tensor *b) {
    static const char F[] = "ct_get_rows";
    if (ct_op_check_args(F, ctx, a, "a", b, "b", NULL, NULL) != CT_OK) return NULL;
    if (!ct_type_is_valid(a->type)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%d is not a valid type id", F,
                            ct_tensor_label(a, "src").s, (int)a->type);
    }
    if (b->type != CT_TYPE_I32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be i32", F,
                            ct_tensor_label(b, "indices").s, ct_type_name(b->type));
    }
    if (b->ne[3] != 1) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[3]=%lld but must be 1", F,
                            ct_tensor_label(b, "indices").s, (long long)b->ne[3]);
    }
    /* b's dims 1 and 2 select a's batch dims 2 and 3 one to one. */
    for (int i = 2; i <= 3; i++) {
        if (a->ne[i] != b->ne[i - 1]) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[%d]=%lld but %s ne[%d]=%lld", F,
                                ct_tensor_label(a, "src").s, i, (long long)a->ne[i],
                                ct_tensor_label(b, "indices").s, i - 1, (long long)b->ne[i - 1]);
        }
    }
    const ct_type type = a->type == CT_TYPE_I32 ? CT_TYPE_I32 : CT_TYPE_F32;
    const int64_t ne[CT_MAX_DIMS] = {a->ne[0], b->ne[0], b->ne[1], b->ne[2]};
    ct_tensor *t = ct_tensor_new_impl(ctx, F, type, ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_GET_ROWS;
    t->src[0] = a;
    t->src[1] = b;
    return t;
}

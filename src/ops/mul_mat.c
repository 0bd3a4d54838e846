/* MUL_MAT constructor (docs/TENSORS.md, MUL_MAT). */
#include "tensor/tensor_internal.h"

ct_tensor *ct_mul_mat(ct_context *ctx, ct_tensor *a, ct_tensor *b) {
    static const char F[] = "ct_mul_mat";
    if (ct_op_check_args(F, ctx, a, "a", b, "b", NULL, NULL) != CT_OK) return NULL;
    const ct_label la = ct_tensor_label(a, "a"), lb = ct_tensor_label(b, "b");
    if (!ct_type_is_valid(a->type) || !ct_type_is_valid(b->type)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%d or %s type=%d is not a valid type id", F, la.s,
                            (int)a->type, lb.s, (int)b->type);
    }
    if (a->ne[0] != b->ne[0]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[0]=%lld but %s ne[0]=%lld", F, la.s,
                            (long long)a->ne[0], lb.s, (long long)b->ne[0]);
    }
    /* a is broadcast over b's batch dims; an empty a dim can only meet an empty b dim. */
    for (int i = 2; i <= 3; i++) {
        bool ok = a->ne[i] == 0 ? b->ne[i] == 0 : b->ne[i] % a->ne[i] == 0;
        if (!ok) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[%d]=%lld is not a multiple of %s ne[%d]=%lld", F,
                                lb.s, i, (long long)b->ne[i], la.s, i, (long long)a->ne[i]);
        }
    }
    /* An empty a has zero strides past its empty dim, which reads as "transposed". */
    if (!ct_is_empty(a) && ct_is_transposed(a)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s is transposed: nb[0]=%zu but nb[1]=%zu", F, la.s,
                            a->nb[0], a->nb[1]);
    }
    const int64_t ne[CT_MAX_DIMS] = {a->ne[1], b->ne[1], b->ne[2], b->ne[3]};
    ct_tensor *t = ct_tensor_new_impl(ctx, F, CT_TYPE_F32, ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_MUL_MAT;
    t->src[0] = a;
    t->src[1] = b;
    return t;
}

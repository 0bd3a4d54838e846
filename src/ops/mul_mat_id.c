/* MUL_MAT_ID and ADD_ID constructors (docs/TENSORS.md, MUL_MAT_ID and ADD_ID). */
#include "tensor/tensor_internal.h"

static bool shapes_valid(const ct_tensor *as, const ct_tensor *b, const ct_tensor *ids) {
    return as->ne[3] == 1 && b->ne[3] == 1 && ids->ne[2] == 1 && ids->ne[3] == 1 && ids->ne[1] == b->ne[2] &&
           as->ne[0] == b->ne[0] && (b->ne[1] == 0 ? ids->ne[0] == 0 : ids->ne[0] % b->ne[1] == 0);
}

bool ct_mul_mat_id_node_valid(const ct_tensor *op) {
    if (!op || op->op != CT_OP_MUL_MAT_ID || op->type != CT_TYPE_F32) return false;
    const ct_tensor *as = op->src[0], *b = op->src[1], *ids = op->src[2];
    if (!as || !b || !ids || ids->type != CT_TYPE_I32) return false;
    if (!ct_type_is_valid(as->type) || !ct_type_is_valid(b->type)) return false;
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (as->ne[i] < 0 || b->ne[i] < 0 || ids->ne[i] < 0) return false;
    if (!shapes_valid(as, b, ids)) return false;
    if (!ct_is_empty(as) && ct_is_transposed(as)) return false;
    return op->ne[0] == as->ne[1] && op->ne[1] == ids->ne[0] && op->ne[2] == b->ne[2] && op->ne[3] == 1;
}

bool ct_add_id_node_valid(const ct_tensor *op) {
    if (!op || op->op != CT_OP_ADD_ID) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1], *ids = op->src[2];
    if (!a || !b || !ids || ids->type != CT_TYPE_I32) return false;
    if ((a->type != CT_TYPE_F32 && a->type != CT_TYPE_F16) || b->type != a->type || op->type != a->type)
        return false;
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (a->ne[i] < 0 || b->ne[i] < 0 || ids->ne[i] < 0 || op->ne[i] != a->ne[i]) return false;
    if (!ct_is_empty(a) && (ct_is_empty(b) || ct_is_empty(ids))) return false;
    return a->ne[0] == b->ne[0] && a->ne[1] == ids->ne[0] && a->ne[2] == ids->ne[1];
}

ct_tensor *ct_mul_mat_id(ct_context *ctx, ct_tensor *as, ct_tensor *b, ct_tensor *ids) {
    static const char F[] = "ct_mul_mat_id";
    if (ct_op_check_args(F, ctx, as, "as", b, "b", ids, "ids") != CT_OK) return NULL;
    const ct_label la = ct_tensor_label(as, "as"), lb = ct_tensor_label(b, "b"), li = ct_tensor_label(ids, "ids");
    if (!ct_type_is_valid(as->type) || !ct_type_is_valid(b->type)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%d or %s type=%d is not a valid type id", F, la.s,
                            (int)as->type, lb.s, (int)b->type);
    }
    if (ids->type != CT_TYPE_I32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s has type %s, expected I32", F, li.s,
                            ct_type_name(ids->type));
    }
    if (as->ne[3] != 1 || b->ne[3] != 1) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[3]=%lld and %s ne[3]=%lld must be 1 (3-D)", F, la.s,
                            (long long)as->ne[3], lb.s, (long long)b->ne[3]);
    }
    if (ids->ne[2] != 1 || ids->ne[3] != 1) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s must be 2-D: ne[2]=%lld ne[3]=%lld", F, li.s,
                            (long long)ids->ne[2], (long long)ids->ne[3]);
    }
    if (ids->ne[1] != b->ne[2]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[1]=%lld but %s ne[2]=%lld (one expert list per token)",
                            F, li.s, (long long)ids->ne[1], lb.s, (long long)b->ne[2]);
    }
    if (as->ne[0] != b->ne[0]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[0]=%lld but %s ne[0]=%lld", F, la.s,
                            (long long)as->ne[0], lb.s, (long long)b->ne[0]);
    }
    if (b->ne[1] == 0 ? ids->ne[0] != 0 : ids->ne[0] % b->ne[1] != 0) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[0]=%lld is not a multiple of %s ne[1]=%lld", F, li.s,
                            (long long)ids->ne[0], lb.s, (long long)b->ne[1]);
    }
    if (!ct_is_empty(as) && ct_is_transposed(as)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s is transposed: nb[0]=%zu but nb[1]=%zu", F, la.s,
                            as->nb[0], as->nb[1]);
    }
    const int64_t ne[CT_MAX_DIMS] = {as->ne[1], ids->ne[0], b->ne[2], 1};
    ct_tensor *t = ct_tensor_new_impl(ctx, F, CT_TYPE_F32, ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_MUL_MAT_ID;
    t->src[0] = as;
    t->src[1] = b;
    t->src[2] = ids;
    return t;
}

ct_tensor *ct_add_id(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *ids) {
    static const char F[] = "ct_add_id";
    if (ct_op_check_args(F, ctx, a, "a", b, "b", ids, "ids") != CT_OK) return NULL;
    const ct_label la = ct_tensor_label(a, "a"), lb = ct_tensor_label(b, "b"), li = ct_tensor_label(ids, "ids");
    if (!ct_type_is_valid(a->type) || !ct_type_is_valid(b->type)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%d or %s type=%d is not a valid type id", F, la.s,
                            (int)a->type, lb.s, (int)b->type);
    }
    if (ids->type != CT_TYPE_I32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s has type %s, expected I32", F, li.s,
                            ct_type_name(ids->type));
    }
    if (a->ne[0] != b->ne[0]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[0]=%lld but %s ne[0]=%lld", F, la.s,
                            (long long)a->ne[0], lb.s, (long long)b->ne[0]);
    }
    if (a->ne[1] != ids->ne[0] || a->ne[2] != ids->ne[1]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[1..2]=[%lld, %lld] but %s ne[0..1]=[%lld, %lld]", F,
                            la.s, (long long)a->ne[1], (long long)a->ne[2], li.s, (long long)ids->ne[0],
                            (long long)ids->ne[1]);
    }
    /* every row of a reads an id and may read a row of b */
    if (!ct_is_empty(a) && (ct_is_empty(b) || ct_is_empty(ids))) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s is not empty but %s [%lld, %lld, %lld, %lld] or %s [%lld, "
                            "%lld, %lld, %lld] is", F, la.s, lb.s, (long long)b->ne[0], (long long)b->ne[1],
                            (long long)b->ne[2], (long long)b->ne[3], li.s, (long long)ids->ne[0],
                            (long long)ids->ne[1], (long long)ids->ne[2], (long long)ids->ne[3]);
    }
    ct_tensor *t = ct_tensor_new_impl(ctx, F, a->type, a->ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_ADD_ID;
    t->src[0] = a;
    t->src[1] = b;
    t->src[2] = ids;
    return t;
}

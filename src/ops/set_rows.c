/* SET_ROWS constructor (docs/TENSORS.md, SET_ROWS): the result is a view of a, written in place. */
#include "tensor/tensor_internal.h"

#include <string.h>

/* b's dim d is indexed modulo c's dim d-1; an empty c dim can serve only an empty b dim. */
static bool broadcasts(int64_t nb_dim, int64_t nc_dim) {
    return nc_dim == 0 ? nb_dim == 0 : nb_dim % nc_dim == 0;
}

bool ct_set_rows_types_supported(const ct_tensor *op) {
    if (!op || op->op != CT_OP_SET_ROWS) return false;
    const ct_tensor *b = op->src[0], *c = op->src[1];
    if (!b || !c) return false;
    if (!ct_type_can_quantize(op->type)) return false;
    if (b->type != CT_TYPE_F32 && b->type != CT_TYPE_F16) return false;
    if (c->type != CT_TYPE_I64 && c->type != CT_TYPE_I32) return false;
    if (b->ne[0] != op->ne[0] || b->ne[2] != op->ne[2] || b->ne[3] != op->ne[3] || c->ne[0] != b->ne[1] ||
        c->ne[3] != 1)
        return false;
    if (ct_is_empty(b)) return true; /* nothing is read or written */
    if (c->ne[1] <= 0 || c->ne[2] <= 0 || b->ne[2] % c->ne[1] != 0 || b->ne[3] % c->ne[2] != 0) return false;
    /* Each row is quantized in place by the row quantizer: whole blocks, packed along dim 0. */
    const int64_t blck = ct_type_block_size(op->type);
    return op->ne[0] % blck == 0 && ct_is_contiguous_rows(op);
}

ct_tensor *ct_set_rows(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *c) {
    static const char F[] = "ct_set_rows";
    if (ct_op_check_args(F, ctx, a, "a", b, "b", c, "c") != CT_OK) return NULL;
    const ct_label dst = ct_tensor_label(a, "dst"), src = ct_tensor_label(b, "src"),
                   idx = ct_tensor_label(c, "indices");
    if (!ct_type_is_valid(a->type)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%d is not a valid type id", F, dst.s, (int)a->type);
    }
    if (b->type != CT_TYPE_F32 && b->type != CT_TYPE_F16) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32 or f16", F, src.s,
                            ct_type_name(b->type));
    }
    if (c->type != CT_TYPE_I64 && c->type != CT_TYPE_I32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be i64 or i32", F, idx.s,
                            ct_type_name(c->type));
    }
    for (int i = 0; i < CT_MAX_DIMS; i++) {
        if (i != 1 && b->ne[i] != a->ne[i]) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[%d]=%lld but %s ne[%d]=%lld", F, src.s, i,
                                (long long)b->ne[i], dst.s, i, (long long)a->ne[i]);
        }
    }
    if (b->ne[1] != c->ne[0]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[1]=%lld but %s ne[0]=%lld", F, src.s,
                            (long long)b->ne[1], idx.s, (long long)c->ne[0]);
    }
    for (int i = 2; i <= 3; i++) {
        if (!broadcasts(b->ne[i], c->ne[i - 1])) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[%d]=%lld is not a multiple of %s ne[%d]=%lld", F,
                                src.s, i, (long long)b->ne[i], idx.s, i - 1, (long long)c->ne[i - 1]);
        }
    }
    if (c->ne[3] != 1) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[3]=%lld but must be 1", F, idx.s, (long long)c->ne[3]);
    }
    if (!ct_is_contiguous_rows(a)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s rows are not contiguous (nb[0]=%zu, type size %zu)", F,
                            dst.s, a->nb[0], ct_type_size(a->type));
    }
    if (!ct_is_contiguous_rows(b)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s rows are not contiguous (nb[0]=%zu, type size %zu)", F,
                            src.s, b->nb[0], ct_type_size(b->type));
    }
    ct_tensor *t = ct_view_impl(ctx, F, a, a->ne, a->nb, 0);
    if (t == NULL) return NULL;
    t->op = CT_OP_SET_ROWS;
    memset(t->op_params, 0, sizeof t->op_params);
    t->src[0] = b;
    t->src[1] = c;
    ct_tensor_name_from(t, a, " (view)");
    return t;
}

/* GET_ROWS constructor (docs/TENSORS.md, GET_ROWS). */
#include "tensor/tensor_internal.h"

bool ct_get_rows_types_supported(const ct_tensor *op) {
    if (!op || op->op != CT_OP_GET_ROWS) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1];
    if (!a || !b || b->type != CT_TYPE_I32) return false;
    const bool float_rows = ct_type_can_dequantize(a->type) && op->type == CT_TYPE_F32;
    const bool int_rows = a->type == CT_TYPE_I32 && op->type == CT_TYPE_I32;
    if (!float_rows && !int_rows) return false;
    if (op->ne[0] != a->ne[0] || op->ne[1] != b->ne[0] || op->ne[2] != b->ne[1] || op->ne[3] != b->ne[2])
        return false;
    if (ct_is_empty(op)) return true;
    /* src0's batch dims must cover every (i11, i12) a dst row reads. */
    if (b->ne[3] != 1 || a->ne[2] != b->ne[1] || a->ne[3] < b->ne[2]) return false;
    const int64_t blck = ct_type_block_size(a->type);
    /* Block rows are dequantized from one pointer: blocks packed along dim 0. */
    return blck == 1 || (a->ne[0] % blck == 0 && ct_is_contiguous_rows(a));
}

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

/* CPY, DUP, CONT and cast constructors (docs/TENSORS.md, CPY, DUP, CONT and cast). */
#include "tensor/tensor_internal.h"
#include "types/types_internal.h"

#include <stdio.h>
#include <string.h>

bool ct_cpy_types_supported(const ct_tensor *op) {
    if (!op || (op->op != CT_OP_CPY && op->op != CT_OP_DUP && op->op != CT_OP_CONT)) return false;
    const ct_tensor *src = op->src[0];
    if (!src || !ct_type_is_valid(src->type) || !ct_type_is_valid(op->type)) return false;
    if (ct_nelements(src) != ct_nelements(op)) return false;
    const ct_type st = src->type, dt = op->type;
    const int64_t bs = ct_type_block_size(st), bd = ct_type_block_size(dt);
    /* Rows of whole blocks, so that blocks are the units walked. */
    if (src->ne[0] % bs != 0 || op->ne[0] % bd != 0) return false;
    if (st == dt) return true;
    if (ct_type_is_float(st) && ct_type_is_float(dt)) return true;
    /* A destination block is filled from one source row. */
    if (ct_type_is_float(st) && ct_type_can_quantize(dt)) return src->ne[0] % bd == 0;
    if (ct_type_can_dequantize(st) && ct_type_is_float(dt)) return true;
    return false;
}

/* A block-quantized destination is written in whole blocks per source row. */
static ct_status check_row_blocks(const char *func, const ct_tensor *a, ct_type dst_type) {
    const int64_t blck = ct_type_block_size(dst_type);
    if (blck > 1 && a->ne[0] % blck != 0) {
        return ct_fail(CT_INVALID_ARGUMENT, "%s: %s ne[0]=%lld is not a multiple of dst type %s's block size %lld",
                       func, ct_tensor_label(a, "src").s, (long long)a->ne[0], ct_type_name(dst_type),
                       (long long)blck);
    }
    return CT_OK;
}

static ct_status check_src_type(const char *func, const ct_tensor *a) {
    if (ct_type_is_valid(a->type)) return CT_OK;
    return ct_fail(CT_INVALID_ARGUMENT, "%s: %s type=%d is not a valid type id", func, ct_tensor_label(a, "src").s,
                   (int)a->type);
}

ct_tensor *ct_cpy(ct_context *ctx, ct_tensor *a, ct_tensor *b) {
    static const char F[] = "ct_cpy";
    if (ct_op_check_args(F, ctx, a, "a", b, "b", NULL, NULL) != CT_OK) return NULL;
    if (check_src_type(F, a) != CT_OK) return NULL;
    if (!ct_type_is_valid(b->type)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%d is not a valid type id", F,
                            ct_tensor_label(b, "dst").s, (int)b->type);
    }
    if (ct_nelements(a) != ct_nelements(b)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s has %lld elements but %s has %lld", F,
                            ct_tensor_label(a, "src").s, (long long)ct_nelements(a), ct_tensor_label(b, "dst").s,
                            (long long)ct_nelements(b));
    }
    if (check_row_blocks(F, a, b->type) != CT_OK) return NULL;
    ct_tensor *t = ct_view_impl(ctx, F, b, b->ne, b->nb, 0);
    if (t == NULL) return NULL;
    t->op = CT_OP_CPY;
    memset(t->op_params, 0, sizeof t->op_params);
    t->src[0] = a;
    t->src[1] = b;
    if (b->name[0] != '\0') {
        char name[2 * CT_MAX_NAME + 16];
        snprintf(name, sizeof name, a->name[0] ? "%s (copy of %s)" : "%s (copy)", b->name, a->name);
        ct_tensor_set_name(t, name);
    } else {
        ct_tensor_name_from(t, a, " (copy)");
    }
    return t;
}

ct_tensor *ct_cast(ct_context *ctx, ct_tensor *a, ct_type type) {
    static const char F[] = "ct_cast";
    if (ct_op_check_args(F, ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return NULL;
    if (check_src_type(F, a) != CT_OK) return NULL;
    if (!ct_type_is_valid(type)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: type=%d is not a valid type id", F, (int)type);
    }
    if (check_row_blocks(F, a, type) != CT_OK) return NULL;
    ct_tensor *t = ct_tensor_new_impl(ctx, F, type, a->ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_CPY;
    t->src[0] = a;
    t->src[1] = t; /* as ggml: the destination of the copy is the result itself */
    ct_tensor_name_from(t, a, " (copy)");
    return t;
}

ct_tensor *ct_dup(ct_context *ctx, ct_tensor *a) {
    static const char F[] = "ct_dup";
    if (ct_op_check_args(F, ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return NULL;
    if (check_src_type(F, a) != CT_OK) return NULL;
    ct_tensor *t = ct_tensor_new_impl(ctx, F, a->type, a->ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_DUP;
    t->src[0] = a;
    return t;
}

ct_tensor *ct_cont(ct_context *ctx, ct_tensor *a) {
    static const char F[] = "ct_cont";
    if (ct_op_check_args(F, ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return NULL;
    if (check_src_type(F, a) != CT_OK) return NULL;
    ct_tensor *t = ct_tensor_new_impl(ctx, F, a->type, a->ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_CONT;
    t->src[0] = a;
    ct_tensor_name_from(t, a, " (cont)");
    return t;
}

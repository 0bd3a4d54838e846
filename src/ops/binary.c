/* ADD, SUB, MUL, DIV and ADD1 constructors (docs/TENSORS.md, Binary ops): b repeats
 * over a; the types every backend computes are (f32, f32), (f16, f16), (f16, f32). */
#include "tensor/tensor_internal.h"

static bool types_ok(ct_type a, ct_type b) {
    return (a == CT_TYPE_F32 && b == CT_TYPE_F32) || (a == CT_TYPE_F16 && (b == CT_TYPE_F16 || b == CT_TYPE_F32));
}

/* ggml_can_repeat(b, a) */
static bool can_repeat(const ct_tensor *b, const ct_tensor *a) {
    if (ct_is_empty(b)) return ct_is_empty(a);
    for (int i = 0; i < CT_MAX_DIMS; i++)
        if (a->ne[i] % b->ne[i] != 0) return false;
    return true;
}

static bool padded_1d(const ct_tensor *a) {
    return a->nb[0] == ct_type_size(a->type) && a->nb[2] == a->nb[1] * (size_t)a->ne[1] &&
           a->nb[3] == a->nb[2] * (size_t)a->ne[2];
}

bool ct_binary_node_valid(const ct_tensor *op) {
    if (!op) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1];
    if (!a || !b || !types_ok(a->type, b->type) || op->type != a->type || !ct_are_same_shape(a, op)) return false;
    switch (op->op) {
    case CT_OP_ADD: case CT_OP_SUB: case CT_OP_MUL: case CT_OP_DIV: return can_repeat(b, a);
    case CT_OP_ADD1: return ct_nelements(b) == 1;
    default: return false;
    }
}

static ct_tensor *binary_impl(const char *func, ct_op op, ct_context *ctx, ct_tensor *a, ct_tensor *b) {
    if (ct_op_check_args(func, ctx, a, "a", b, "b", NULL, NULL) != CT_OK) return NULL;
    if (!types_ok(a->type, b->type)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s and %s type=%s but must be f32 and f32, f16 and f16, or f16 and f32",
                            func, ct_tensor_label(a, "a").s, ct_type_name(a->type), ct_tensor_label(b, "b").s,
                            ct_type_name(b->type));
    }
    if (op == CT_OP_ADD1) {
        if (ct_nelements(b) != 1) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne=[%lld,%lld,%lld,%lld] but must be a scalar (one element)",
                                func, ct_tensor_label(b, "b").s, (long long)b->ne[0], (long long)b->ne[1],
                                (long long)b->ne[2], (long long)b->ne[3]);
        }
        if (!padded_1d(a)) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                                "%s: %s nb=[%zu,%zu,%zu,%zu] but must be padded 1-d (nb0 the type size, nb2 = nb1*ne1, nb3 = nb2*ne2)",
                                func, ct_tensor_label(a, "a").s, a->nb[0], a->nb[1], a->nb[2], a->nb[3]);
        }
    } else if (!can_repeat(b, a)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                            "%s: %s ne=[%lld,%lld,%lld,%lld] does not repeat to %s ne=[%lld,%lld,%lld,%lld] (each of a's dims must be a multiple of b's; b empty only when a is)",
                            func, ct_tensor_label(b, "b").s, (long long)b->ne[0], (long long)b->ne[1],
                            (long long)b->ne[2], (long long)b->ne[3], ct_tensor_label(a, "a").s, (long long)a->ne[0],
                            (long long)a->ne[1], (long long)a->ne[2], (long long)a->ne[3]);
    }
    ct_tensor *t = ct_tensor_new_impl(ctx, func, a->type, a->ne);
    if (t == NULL) return NULL;
    t->op = op;
    t->src[0] = a;
    t->src[1] = b;
    return t;
}

ct_tensor *ct_add(ct_context *ctx, ct_tensor *a, ct_tensor *b) { return binary_impl("ct_add", CT_OP_ADD, ctx, a, b); }
ct_tensor *ct_sub(ct_context *ctx, ct_tensor *a, ct_tensor *b) { return binary_impl("ct_sub", CT_OP_SUB, ctx, a, b); }
ct_tensor *ct_mul(ct_context *ctx, ct_tensor *a, ct_tensor *b) { return binary_impl("ct_mul", CT_OP_MUL, ctx, a, b); }
ct_tensor *ct_div(ct_context *ctx, ct_tensor *a, ct_tensor *b) { return binary_impl("ct_div", CT_OP_DIV, ctx, a, b); }
ct_tensor *ct_add1(ct_context *ctx, ct_tensor *a, ct_tensor *b) { return binary_impl("ct_add1", CT_OP_ADD1, ctx, a, b); }

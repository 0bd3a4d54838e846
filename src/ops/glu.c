/* GLU constructors (docs/TENSORS.md, GLU): ggml's gated linear units on F32 or F16 rows,
 * fused (one source, the row's halves) or split (two sources); op_params as ggml:
 * [0] the sub-op (ggml's numbering), [1] swapped, [2] alpha, [3] limit. */
#include "tensor/tensor_internal.h"

#include <math.h>

static const char *const glu_names[CT_GLU_OP_COUNT] = {
    "REGLU", "GEGLU", "SWIGLU", "SWIGLU_OAI", "GEGLU_ERF", "GEGLU_QUICK", "SWIGLU_CLAMP",
};

const char *ct_glu_op_name(ct_glu_op op) { return (unsigned)op < CT_GLU_OP_COUNT ? glu_names[op] : "INVALID"; }

static bool float_type(ct_type t) { return t == CT_TYPE_F32 || t == CT_TYPE_F16; }

bool ct_glu_node_valid(const ct_tensor *op) {
    if (!op || op->op != CT_OP_GLU) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1];
    if (!a || !float_type(a->type) || op->type != a->type || !ct_is_contiguous_rows(a)) return false;
    if (!ct_is_contiguous_rows(op)) return false;
    const int32_t g = op->op_params[0], swapped = op->op_params[1];
    if (g < 0 || g >= CT_GLU_OP_COUNT || (swapped != 0 && swapped != 1)) return false;
    for (int i = 2; i < CT_MAX_SRC; i++)
        if (op->src[i]) return false;
    if (b) {
        if (b->type != a->type || !ct_are_same_shape(a, b) || !ct_is_contiguous_rows(b) || swapped != 0) return false;
        return ct_are_same_shape(a, op);
    }
    if (op->ne[0] != a->ne[0] / 2) return false;
    for (int i = 1; i < CT_MAX_DIMS; i++)
        if (op->ne[i] != a->ne[i]) return false;
    return true;
}

static bool check_src(const char *func, const ct_tensor *t, const char *role) {
    if (!float_type(t->type)) {
        ct_fail(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32 or f16", func, ct_tensor_label(t, role).s,
                ct_type_name(t->type));
        return false;
    }
    if (!ct_is_contiguous_rows(t)) {
        ct_fail(CT_INVALID_ARGUMENT, "%s: %s nb[0]=%zu but its rows must be packed (nb[0]=%zu)", func,
                ct_tensor_label(t, role).s, t->nb[0], ct_type_size(t->type));
        return false;
    }
    return true;
}

static ct_tensor *glu_impl(const char *func, ct_context *ctx, ct_tensor *a, ct_tensor *b, bool split, int32_t op,
                           bool swapped, float alpha, float limit) {
    if (ct_op_check_args(func, ctx, a, "a", b, split ? "b" : NULL, NULL, NULL) != CT_OK) return NULL;
    if ((unsigned)op >= CT_GLU_OP_COUNT) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: op=%d but must be a ct_glu_op (0..%d)", func, (int)op,
                            (int)CT_GLU_OP_COUNT - 1);
    }
    if (!check_src(func, a, "a")) return NULL;
    int64_t ne[CT_MAX_DIMS] = {a->ne[0] / 2, a->ne[1], a->ne[2], a->ne[3]};
    if (b != NULL) {
        if (!check_src(func, b, "b")) return NULL;
        if (b->type != a->type) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be a's type %s", func,
                                ct_tensor_label(b, "b").s, ct_type_name(b->type), ct_type_name(a->type));
        }
        if (!ct_are_same_shape(a, b)) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                                "%s: %s ne=[%lld,%lld,%lld,%lld] but must be a's ne=[%lld,%lld,%lld,%lld]", func,
                                ct_tensor_label(b, "b").s, (long long)b->ne[0], (long long)b->ne[1],
                                (long long)b->ne[2], (long long)b->ne[3], (long long)a->ne[0], (long long)a->ne[1],
                                (long long)a->ne[2], (long long)a->ne[3]);
        }
        ne[0] = a->ne[0];
    }
    ct_tensor *t = ct_tensor_new_impl(ctx, func, a->type, ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_GLU;
    t->op_params[0] = op;
    t->op_params[1] = b == NULL && swapped ? 1 : 0;
    ct_tensor_set_param_f32(t, 2, alpha);
    ct_tensor_set_param_f32(t, 3, limit);
    t->src[0] = a;
    t->src[1] = b;
    return t;
}

ct_tensor *ct_glu(ct_context *ctx, ct_tensor *a, ct_glu_op op, bool swapped) {
    return glu_impl("ct_glu", ctx, a, NULL, false, (int32_t)op, swapped, 0.0f, 0.0f);
}

ct_tensor *ct_glu_split(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_glu_op op) {
    return glu_impl("ct_glu_split", ctx, a, b, true, (int32_t)op, false, 0.0f, 0.0f);
}

#define CT_GLU_PAIR(name, OP)                                                                              \
    ct_tensor *ct_##name(ct_context *ctx, ct_tensor *a) {                                                  \
        return glu_impl("ct_" #name, ctx, a, NULL, false, CT_GLU_OP_##OP, false, 0.0f, 0.0f);             \
    }                                                                                                      \
    ct_tensor *ct_##name##_split(ct_context *ctx, ct_tensor *a, ct_tensor *b) {                            \
        return glu_impl("ct_" #name "_split", ctx, a, b, true, CT_GLU_OP_##OP, false, 0.0f, 0.0f);        \
    }
CT_GLU_PAIR(reglu, REGLU)
CT_GLU_PAIR(geglu, GEGLU)
CT_GLU_PAIR(swiglu, SWIGLU)
CT_GLU_PAIR(geglu_erf, GEGLU_ERF)
CT_GLU_PAIR(geglu_quick, GEGLU_QUICK)
#undef CT_GLU_PAIR

ct_tensor *ct_swiglu_oai(ct_context *ctx, ct_tensor *a, ct_tensor *b, float alpha, float limit) {
    if (ctx != NULL && a != NULL && !(isfinite(alpha) && isfinite(limit))) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_swiglu_oai: alpha=%g limit=%g but both must be finite",
                            (double)alpha, (double)limit);
    }
    return glu_impl("ct_swiglu_oai", ctx, a, b, b != NULL, CT_GLU_OP_SWIGLU_OAI, false, alpha, limit);
}

ct_tensor *ct_swiglu_clamp(ct_context *ctx, ct_tensor *a, ct_tensor *b, float limit) {
    if (ctx != NULL && a != NULL && !isfinite(limit)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_swiglu_clamp: limit=%g but must be finite", (double)limit);
    }
    return glu_impl("ct_swiglu_clamp", ctx, a, b, b != NULL, CT_GLU_OP_SWIGLU_CLAMP, false, 0.0f, limit);
}

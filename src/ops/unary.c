/* UNARY constructors (docs/TENSORS.md, Unary): ggml's element-wise sub-ops on F32 or
 * F16 rows, the sub-op in op_params[0] (ggml's numbering). */
#include "tensor/tensor_internal.h"

#include <math.h>

static const char *const unary_names[CT_UNARY_OP_COUNT] = {
    "ABS",  "SGN",       "NEG",      "STEP",  "TANH",  "ELU",   "RELU",  "SIGMOID",
    "GELU", "GELU_QUICK", "SILU",    "HARDSWISH", "HARDSIGMOID", "EXP", "EXPM1", "SOFTPLUS",
    "GELU_ERF", "XIELU", "FLOOR",   "CEIL",  "ROUND", "TRUNC",
};

const char *ct_unary_op_name(ct_unary_op op) {
    return (unsigned)op < CT_UNARY_OP_COUNT ? unary_names[op] : "INVALID";
}

static ct_tensor *unary_impl(const char *func, ct_context *ctx, ct_tensor *a, int32_t op) {
    if (ct_op_check_args(func, ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return NULL;
    if (a->type != CT_TYPE_F32 && a->type != CT_TYPE_F16) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32 or f16", func,
                            ct_tensor_label(a, "src").s, ct_type_name(a->type));
    }
    if (!ct_is_contiguous_rows(a)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s nb[0]=%zu but its rows must be packed (nb[0]=%zu)", func,
                            ct_tensor_label(a, "src").s, a->nb[0], ct_type_size(a->type));
    }
    ct_tensor *t = ct_tensor_new_impl(ctx, func, a->type, a->ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_UNARY;
    t->op_params[0] = op;
    t->src[0] = a;
    return t;
}

ct_tensor *ct_unary(ct_context *ctx, ct_tensor *a, ct_unary_op op) {
    if (ctx != NULL && a != NULL && ((unsigned)op >= CT_UNARY_OP_COUNT || op == CT_UNARY_OP_XIELU)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_unary: op=%d but must be a ct_unary_op other than XIELU (%d)",
                            (int)op, (int)CT_UNARY_OP_XIELU);
    }
    return unary_impl("ct_unary", ctx, a, (int32_t)op);
}

/* ggml's softplus, in float. */
static float softplus(float x) { return x > 20.0f ? x : logf(1.0f + expf(x)); }

ct_tensor *ct_xielu(ct_context *ctx, ct_tensor *a, float alpha_n, float alpha_p, float beta, float eps) {
    if (ctx != NULL && a != NULL && !(isfinite(alpha_n) && isfinite(alpha_p) && isfinite(beta) && isfinite(eps))) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_xielu: alpha_n=%g alpha_p=%g beta=%g eps=%g but must be finite",
                            (double)alpha_n, (double)alpha_p, (double)beta, (double)eps);
    }
    ct_tensor *t = unary_impl("ct_xielu", ctx, a, CT_UNARY_OP_XIELU);
    if (t == NULL) return NULL;
    ct_tensor_set_param_f32(t, 1, beta + softplus(alpha_n));
    ct_tensor_set_param_f32(t, 2, softplus(alpha_p));
    ct_tensor_set_param_f32(t, 3, beta);
    ct_tensor_set_param_f32(t, 4, eps);
    return t;
}

/* UNARY on F32 and F16 rows: each element converted to float, ggml's formula in
 * float, the result rounded to the destination type. GELU and GELU_QUICK on F32 round
 * through fp16 as ggml-cpu's tables do (ops/gelu.h; docs/TENSORS.md, Unary). */
#include "ops/gelu.h"
#include "ref/ref_ops.h"

#include <math.h>

static bool float_type(ct_type t) { return t == CT_TYPE_F32 || t == CT_TYPE_F16; }

bool ct_ref_unary_supported(const ct_tensor *op) {
    const ct_tensor *a = op->src[0];
    if (!a || !float_type(a->type) || op->type != a->type || !ct_are_same_shape(a, op)) return false;
    const int32_t u = ct_op_param_i32(op, 0);
    return u >= 0 && u < CT_UNARY_OP_COUNT;
}

typedef struct xielu_params {
    float alpha_n, alpha_p, beta, eps;
} xielu_params;

/* f32: the source is F32 */
static float unary_f32(int32_t op, float x, const xielu_params *p, bool f32) {
    switch ((ct_unary_op)op) {
    case CT_UNARY_OP_ABS: return fabsf(x);
    case CT_UNARY_OP_SGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
    case CT_UNARY_OP_NEG: return -x;
    case CT_UNARY_OP_STEP: return x > 0.0f ? 1.0f : 0.0f;
    case CT_UNARY_OP_TANH: return tanhf(x);
    case CT_UNARY_OP_ELU: return x > 0.0f ? x : expm1f(x);
    case CT_UNARY_OP_RELU: return x > 0.0f ? x : 0.0f;
    case CT_UNARY_OP_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case CT_UNARY_OP_GELU: return f32 ? ct_gelu_f32(x) : ct_gelu(x);
    case CT_UNARY_OP_GELU_QUICK: return f32 ? ct_gelu_quick_f32(x) : ct_gelu_quick(x);
    case CT_UNARY_OP_SILU: return x / (1.0f + expf(-x));
    case CT_UNARY_OP_HARDSWISH: return x * fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f));
    case CT_UNARY_OP_HARDSIGMOID: return fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f));
    case CT_UNARY_OP_EXP: return expf(x);
    case CT_UNARY_OP_EXPM1: return expf(x) - 1.0f;
    case CT_UNARY_OP_SOFTPLUS: return x > 20.0f ? x : logf(1.0f + expf(x));
    case CT_UNARY_OP_GELU_ERF: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440084436210484f));
    case CT_UNARY_OP_XIELU:
        if (x > 0.0f) return p->alpha_p * x * x + p->beta * x;
        return (expm1f(fminf(x, p->eps)) - x) * p->alpha_n + p->beta * x;
    case CT_UNARY_OP_FLOOR: return floorf(x);
    case CT_UNARY_OP_CEIL: return ceilf(x);
    case CT_UNARY_OP_ROUND: return roundf(x);
    case CT_UNARY_OP_TRUNC: return truncf(x);
    default: return NAN;
    }
}

ct_status ct_ref_unary(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    const int32_t op = ct_op_param_i32(dst, 0);
    const xielu_params p = {ct_op_param_f32(dst, 1), ct_op_param_f32(dst, 2), ct_op_param_f32(dst, 3),
                            ct_op_param_f32(dst, 4)};
    const bool f32 = a->type == CT_TYPE_F32;
    float *x = ct_ref_alloc_floats(a->ne[0], dst);
    if (!x) return ct_last_status();
    ct_status st = CT_OK;
    for (int64_t i3 = 0; i3 < a->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2] && st == CT_OK; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1] && st == CT_OK; i1++) {
                st = ct_ref_read_row(a, i1, i2, i3, x);
                if (st != CT_OK) break;
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++) x[i0] = unary_f32(op, x[i0], &p, f32);
                st = ct_ref_write_row(dst, i1, i2, i3, x);
            }
    ct_free(x);
    return st;
}

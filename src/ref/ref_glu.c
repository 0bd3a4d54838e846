/* GLU on F32 and F16 rows: x and g of each row converted to float, ggml's formula in
 * float, the result rounded to the destination type. GEGLU and GEGLU_QUICK take f(x) as
 * ggml-cpu's fp16 tables give it (ops/gelu.h): on F32 GELU's F32 values, on F16 fp16(f(x))
 * (docs/TENSORS.md, GLU). */
#include "ops/gelu.h"
#include "ref/ref_ops.h"
#include "tensor/tensor_internal.h"

#include <math.h>

bool ct_ref_glu_supported(const ct_tensor *op) { return ct_glu_node_valid(op); }

/* f32: the sources are F32 */
static float glu_f32(int32_t op, float x, float g, float alpha, float limit, bool f32) {
    switch ((ct_glu_op)op) {
    case CT_GLU_OP_REGLU: return x > 0.0f ? x * g : 0.0f;
    case CT_GLU_OP_GEGLU: return (f32 ? ct_gelu_f32(x) : ct_round_fp16(ct_gelu(x))) * g;
    case CT_GLU_OP_SWIGLU: return x / (1.0f + expf(-x)) * g;
    case CT_GLU_OP_SWIGLU_OAI: {
        const float xc = fminf(x, limit), gc = fminf(fmaxf(g, -limit), limit);
        return xc / (1.0f + expf(alpha * (-xc))) * (gc + 1.0f);
    }
    case CT_GLU_OP_GEGLU_ERF: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440084436210484f)) * g;
    case CT_GLU_OP_GEGLU_QUICK: return (f32 ? ct_gelu_quick_f32(x) : ct_round_fp16(ct_gelu_quick(x))) * g;
    case CT_GLU_OP_SWIGLU_CLAMP: {
        const float xc = fminf(x, limit), gc = fminf(fmaxf(g, -limit), limit);
        return xc / (1.0f + expf(-xc)) * gc;
    }
    default: return NAN;
    }
}

ct_status ct_ref_glu(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    const int32_t op = ct_op_param_i32(dst, 0), swapped = ct_op_param_i32(dst, 1);
    const float alpha = ct_op_param_f32(dst, 2), limit = ct_op_param_f32(dst, 3);
    const int64_t nc = dst->ne[0];
    const bool f32 = a->type == CT_TYPE_F32;
    /* the fused form's halves: x at xo, g at go of a's row */
    const int64_t xo = b ? 0 : (swapped ? nc : 0), go = b ? 0 : (swapped ? 0 : nc);
    float *ra = ct_ref_alloc_floats(a->ne[0] + 1, dst);
    float *rb = b ? ct_ref_alloc_floats(b->ne[0] + 1, dst) : NULL;
    float *y = ct_ref_alloc_floats(nc + 1, dst);
    ct_status st = CT_OK;
    if (!ra || (b && !rb) || !y) st = ct_last_status();
    for (int64_t i3 = 0; i3 < dst->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2] && st == CT_OK; i2++)
            for (int64_t i1 = 0; i1 < dst->ne[1] && st == CT_OK; i1++) {
                st = ct_ref_read_row(a, i1, i2, i3, ra);
                if (st == CT_OK && b) st = ct_ref_read_row(b, i1, i2, i3, rb);
                if (st != CT_OK) break;
                const float *x = ra + xo, *g = b ? rb : ra + go;
                for (int64_t k = 0; k < nc; k++) y[k] = glu_f32(op, x[k], g[k], alpha, limit, f32);
                st = ct_ref_write_row(dst, i1, i2, i3, y);
            }
    ct_free(ra);
    ct_free(rb);
    ct_free(y);
    return st;
}

/* SQR, SQRT, SIN, COS, LOG, CLAMP, LEAKY_RELU and FILL on F32 and F16 rows: each element
 * converted to float, ggml-cpu's formula in float, the result rounded to the destination
 * type (docs/TENSORS.md, Math). */
#include "ref/ref_ops.h"

#include <math.h>

static bool is_math_op(ct_op op) {
    switch (op) {
    case CT_OP_SQR: case CT_OP_SQRT: case CT_OP_SIN: case CT_OP_COS: case CT_OP_LOG:
    case CT_OP_CLAMP: case CT_OP_LEAKY_RELU: case CT_OP_FILL: return true;
    default: return false;
    }
}

bool ct_ref_math_supported(const ct_tensor *op) {
    const ct_tensor *a = op->src[0];
    if (!is_math_op(op->op) || !a || (a->type != CT_TYPE_F32 && a->type != CT_TYPE_F16)) return false;
    return op->type == a->type && ct_are_same_shape(a, op);
}

static float math_f32(ct_op op, float x, float p0, float p1) {
    switch (op) {
    case CT_OP_SQR: return x * x;
    case CT_OP_SQRT: return sqrtf(x);
    case CT_OP_SIN: return sinf(x);
    case CT_OP_COS: return cosf(x);
    case CT_OP_LOG: return logf(x);
    case CT_OP_CLAMP: {
        const float m = x < p1 ? x : p1; /* ggml's MIN(x, max), then MAX(., min) */
        return m > p0 ? m : p0;
    }
    case CT_OP_LEAKY_RELU: return (x > 0.0f ? x : 0.0f) + p0 * (x < 0.0f ? x : 0.0f);
    case CT_OP_FILL: return p0;
    default: return NAN;
    }
}

ct_status ct_ref_math(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    const float p0 = ct_op_param_f32(dst, 0), p1 = ct_op_param_f32(dst, 1);
    float *x = ct_ref_alloc_floats(a->ne[0], dst);
    if (!x) return ct_last_status();
    ct_status st = CT_OK;
    for (int64_t i3 = 0; i3 < a->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2] && st == CT_OK; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1] && st == CT_OK; i1++) {
                st = ct_ref_read_row(a, i1, i2, i3, x);
                if (st != CT_OK) break;
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++) x[i0] = math_f32(dst->op, x[i0], p0, p1);
                st = ct_ref_write_row(dst, i1, i2, i3, x);
            }
    ct_free(x);
    return st;
}

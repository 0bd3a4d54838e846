/* SQR, SQRT, SIN, COS, LOG, CLAMP, LEAKY_RELU and FILL on F32 and F16 rows, threaded over
 * rows by UNARY's row engine (ct_cpu_map_rows, unary.c): ggml-cpu's formulas in float on
 * chunks of a row, one loop per op (docs/TENSORS.md, Math). */
#include "cpu/cpu_ops.h"

#include <math.h>
#include <string.h>

bool ct_cpu_math_supported(const ct_tensor *op) {
    if (!op) return false;
    switch (op->op) {
    case CT_OP_SQR: case CT_OP_SQRT: case CT_OP_SIN: case CT_OP_COS: case CT_OP_LOG:
    case CT_OP_CLAMP: case CT_OP_LEAKY_RELU: case CT_OP_FILL: break;
    default: return false;
    }
    const ct_tensor *a = op->src[0];
    if (!a || (a->type != CT_TYPE_F32 && a->type != CT_TYPE_F16) || op->type != a->type) return false;
    return ct_are_same_shape(a, op);
}

static float param_f32(const ct_tensor *t, int i) {
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

static void math_rows(const ct_tensor *dst, bool f32, float *x, int64_t n) {
    (void)f32;
    const float p0 = param_f32(dst, 0), p1 = param_f32(dst, 1);
    switch (dst->op) {
    case CT_OP_SQR: for (int64_t i = 0; i < n; i++) x[i] = x[i] * x[i]; break;
    case CT_OP_SQRT: for (int64_t i = 0; i < n; i++) x[i] = sqrtf(x[i]); break;
    case CT_OP_SIN: for (int64_t i = 0; i < n; i++) x[i] = sinf(x[i]); break;
    case CT_OP_COS: for (int64_t i = 0; i < n; i++) x[i] = cosf(x[i]); break;
    case CT_OP_LOG: for (int64_t i = 0; i < n; i++) x[i] = logf(x[i]); break;
    case CT_OP_CLAMP: /* ggml's MAX(MIN(x, max), min): a NaN gives max */
        for (int64_t i = 0; i < n; i++) {
            const float m = x[i] < p1 ? x[i] : p1;
            x[i] = m > p0 ? m : p0;
        }
        break;
    case CT_OP_LEAKY_RELU:
        for (int64_t i = 0; i < n; i++) x[i] = (x[i] > 0.0f ? x[i] : 0.0f) + p0 * (x[i] < 0.0f ? x[i] : 0.0f);
        break;
    case CT_OP_FILL: for (int64_t i = 0; i < n; i++) x[i] = p0; break;
    default: break; /* the check accepted only these ops */
    }
}

void ct_cpu_math(const ct_cpu_params *params, ct_tensor *dst) { ct_cpu_map_rows(params, dst, math_rows); }

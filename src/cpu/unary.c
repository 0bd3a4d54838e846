/* UNARY on F32 and F16 rows, threaded over rows. Each chunk of a row is converted to
 * float, the sub-op's loop runs over it (the switch is outside the element loop, so
 * the simple ones vectorize), and the chunk is converted back. The arithmetic is
 * ggml-cpu's: GELU on F32 goes through an fp16 table (its GGML_GELU_FP16 default:
 * x <= -10 gives 0, x >= 10 gives x, else gelu of x rounded to fp16, rounded to fp16)
 * and GELU_QUICK on F32 through an fp16 table for every x; both are computed here
 * without the table, value for value the same (ops/gelu.h). docs/TENSORS.md, Unary. */
#include "cpu/cpu_ops.h"
#include "ops/gelu.h"
#include "types/types_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { CHUNK = 256 };

bool ct_cpu_unary_supported(const ct_tensor *op) {
    if (!op || op->op != CT_OP_UNARY) return false;
    const ct_tensor *a = op->src[0];
    if (!a || (a->type != CT_TYPE_F32 && a->type != CT_TYPE_F16) || op->type != a->type) return false;
    const int32_t u = op->op_params[0];
    return ct_are_same_shape(a, op) && u >= 0 && u < CT_UNARY_OP_COUNT;
}

static float param_f32(const ct_tensor *t, int i) {
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

/* y = op(x) over n floats; f32: the source is F32 (GELU/GELU_QUICK take ggml-cpu's fp16 table path). */
static void apply(int32_t op, const ct_tensor *dst, bool f32, float *x, int64_t n) {
    switch ((ct_unary_op)op) {
    case CT_UNARY_OP_ABS: for (int64_t i = 0; i < n; i++) x[i] = fabsf(x[i]); break;
    case CT_UNARY_OP_SGN:
        for (int64_t i = 0; i < n; i++) x[i] = x[i] > 0.0f ? 1.0f : (x[i] < 0.0f ? -1.0f : 0.0f);
        break;
    case CT_UNARY_OP_NEG: for (int64_t i = 0; i < n; i++) x[i] = -x[i]; break;
    case CT_UNARY_OP_STEP: for (int64_t i = 0; i < n; i++) x[i] = x[i] > 0.0f ? 1.0f : 0.0f; break;
    case CT_UNARY_OP_TANH: for (int64_t i = 0; i < n; i++) x[i] = tanhf(x[i]); break;
    case CT_UNARY_OP_ELU: for (int64_t i = 0; i < n; i++) x[i] = x[i] > 0.0f ? x[i] : expm1f(x[i]); break;
    case CT_UNARY_OP_RELU: for (int64_t i = 0; i < n; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f; break;
    case CT_UNARY_OP_SIGMOID: for (int64_t i = 0; i < n; i++) x[i] = 1.0f / (1.0f + expf(-x[i])); break;
    case CT_UNARY_OP_GELU:
        if (f32) {
            for (int64_t i = 0; i < n; i++)
                x[i] = ct_gelu_f32(x[i]);
        } else {
            for (int64_t i = 0; i < n; i++) x[i] = ct_gelu(x[i]);
        }
        break;
    case CT_UNARY_OP_GELU_QUICK:
        if (f32) {
            for (int64_t i = 0; i < n; i++) x[i] = ct_gelu_quick_f32(x[i]);
        } else {
            for (int64_t i = 0; i < n; i++) x[i] = ct_gelu_quick(x[i]);
        }
        break;
    case CT_UNARY_OP_SILU: for (int64_t i = 0; i < n; i++) x[i] = x[i] / (1.0f + expf(-x[i])); break;
    case CT_UNARY_OP_HARDSWISH:
        for (int64_t i = 0; i < n; i++) x[i] = x[i] * fminf(1.0f, fmaxf(0.0f, (x[i] + 3.0f) / 6.0f));
        break;
    case CT_UNARY_OP_HARDSIGMOID:
        for (int64_t i = 0; i < n; i++) x[i] = fminf(1.0f, fmaxf(0.0f, (x[i] + 3.0f) / 6.0f));
        break;
    case CT_UNARY_OP_EXP: for (int64_t i = 0; i < n; i++) x[i] = expf(x[i]); break;
    case CT_UNARY_OP_EXPM1: for (int64_t i = 0; i < n; i++) x[i] = expf(x[i]) - 1.0f; break;
    case CT_UNARY_OP_SOFTPLUS:
        for (int64_t i = 0; i < n; i++) x[i] = x[i] > 20.0f ? x[i] : logf(1.0f + expf(x[i]));
        break;
    case CT_UNARY_OP_GELU_ERF:
        for (int64_t i = 0; i < n; i++) x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752440084436210484f));
        break;
    case CT_UNARY_OP_XIELU: {
        const float alpha_n = param_f32(dst, 1), alpha_p = param_f32(dst, 2), beta = param_f32(dst, 3),
                    eps = param_f32(dst, 4);
        for (int64_t i = 0; i < n; i++) {
            const float v = x[i];
            x[i] = v > 0.0f ? alpha_p * v * v + beta * v : (expm1f(fminf(v, eps)) - v) * alpha_n + beta * v;
        }
        break;
    }
    case CT_UNARY_OP_FLOOR: for (int64_t i = 0; i < n; i++) x[i] = floorf(x[i]); break;
    case CT_UNARY_OP_CEIL: for (int64_t i = 0; i < n; i++) x[i] = ceilf(x[i]); break;
    case CT_UNARY_OP_ROUND: for (int64_t i = 0; i < n; i++) x[i] = roundf(x[i]); break;
    case CT_UNARY_OP_TRUNC: for (int64_t i = 0; i < n; i++) x[i] = truncf(x[i]); break;
    default: break; /* the check accepted only listed sub-ops */
    }
}

/* The row engine of the element-wise families (UNARY here, the math ops in math.c):
 * dst's rows split over the threads, each chunk of a row converted to float, fn run
 * over it, the chunk converted back (cpu_ops.h). */
void ct_cpu_map_rows(const ct_cpu_params *params, ct_tensor *dst, ct_cpu_rows_fn fn) {
    if (ct_is_empty(dst)) return;
    const ct_tensor *a = dst->src[0];
    const int64_t ne00 = a->ne[0], ne01 = a->ne[1], ne02 = a->ne[2];
    const bool f32 = a->type == CT_TYPE_F32;
    int64_t r0, r1;
    ct_cpu_split(ct_nrows(a), params, &r0, &r1);
    float buf[CHUNK];
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i01 = r % ne01, i02 = (r / ne01) % ne02, i03 = r / (ne01 * ne02);
        const char *x = (const char *)a->data + (size_t)i01 * a->nb[1] + (size_t)i02 * a->nb[2] + (size_t)i03 * a->nb[3];
        char *y = (char *)dst->data + (size_t)i01 * dst->nb[1] + (size_t)i02 * dst->nb[2] + (size_t)i03 * dst->nb[3];
        /* F16 rows with packed, 2-byte aligned elements go through the row converters (same values) */
        const bool src_rows16 = !f32 && a->nb[0] == sizeof(ct_fp16) && (uintptr_t)x % sizeof(ct_fp16) == 0;
        const bool dst_rows16 = !f32 && dst->nb[0] == sizeof(ct_fp16) && (uintptr_t)y % sizeof(ct_fp16) == 0;
        for (int64_t c0 = 0; c0 < ne00; c0 += CHUNK) {
            const int64_t n = ne00 - c0 < CHUNK ? ne00 - c0 : CHUNK;
            if (f32 && a->nb[0] == sizeof(float)) {
                memcpy(buf, x + (size_t)c0 * sizeof(float), (size_t)n * sizeof(float));
            } else if (f32) {
                for (int64_t i = 0; i < n; i++) memcpy(&buf[i], x + (size_t)(c0 + i) * a->nb[0], sizeof(float));
            } else if (src_rows16) { /* packed, aligned fp16: the (F16C) row converter */
                ct_fp16_to_fp32_row((const ct_fp16 *)(const void *)(x + (size_t)c0 * sizeof(ct_fp16)), buf, n);
            } else {
                for (int64_t i = 0; i < n; i++) {
                    ct_fp16 h;
                    memcpy(&h, x + (size_t)(c0 + i) * a->nb[0], sizeof h);
                    buf[i] = ct_fp16_to_fp32_inline(h);
                }
            }
            fn(dst, f32, buf, n);
            if (f32 && dst->nb[0] == sizeof(float)) {
                memcpy(y + (size_t)c0 * sizeof(float), buf, (size_t)n * sizeof(float));
            } else if (f32) {
                for (int64_t i = 0; i < n; i++) memcpy(y + (size_t)(c0 + i) * dst->nb[0], &buf[i], sizeof(float));
            } else if (dst_rows16) {
                ct_fp32_to_fp16_row(buf, (ct_fp16 *)(void *)(y + (size_t)c0 * sizeof(ct_fp16)), n);
            } else {
                for (int64_t i = 0; i < n; i++) {
                    const ct_fp16 h = ct_fp32_to_fp16_inline(buf[i]);
                    memcpy(y + (size_t)(c0 + i) * dst->nb[0], &h, sizeof h);
                }
            }
        }
    }
}

static void unary_rows(const ct_tensor *dst, bool f32, float *x, int64_t n) { apply(dst->op_params[0], dst, f32, x, n); }

void ct_cpu_unary(const ct_cpu_params *params, ct_tensor *dst) { ct_cpu_map_rows(params, dst, unary_rows); }

/* NORM, RMS_NORM, L2_NORM, GROUP_NORM on F32, with the CPU reference's
 * arithmetic: double sums of floats (squares rounded to float first), the
 * statistics rounded to float, and a float scale applied by multiplication. */
#include "ref/ref_ops.h"

#include <math.h>

bool ct_ref_norm_supported(const ct_tensor *op) {
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_F32 || !ct_are_same_shape(a, op)) return false;
    if (op->op == CT_OP_GROUP_NORM) return ct_op_param_i32(op, 0) > 0;
    return true;
}

static void norm_row(enum ct_op op, const float *x, float *y, int64_t n, float eps) {
    if (op == CT_OP_NORM) {
        double sum = 0.0;
        for (int64_t i = 0; i < n; i++) sum += (double)x[i];
        const float mean = (float)(sum / (double)n);
        double sum2 = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const float v = x[i] - mean;
            y[i] = v;
            sum2 += (double)(v * v);
        }
        const float variance = (float)(sum2 / (double)n);
        const float scale = 1.0f / sqrtf(variance + eps);
        for (int64_t i = 0; i < n; i++) y[i] *= scale;
        return;
    }
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)(x[i] * x[i]);
    float scale;
    if (op == CT_OP_RMS_NORM) {
        const float mean = (float)(sum / (double)n);
        scale = 1.0f / sqrtf(mean + eps);
    } else { /* L2_NORM */
        scale = 1.0f / fmaxf(sqrtf((float)sum), eps);
    }
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * scale;
}

static ct_status rows_norm(ct_tensor *dst, float *x, float *y) {
    const ct_tensor *a = dst->src[0];
    const float eps = ct_op_param_f32(dst, 0);
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1]; i1++) {
                ct_status st = ct_ref_read_row(a, i1, i2, i3, x);
                if (st != CT_OK) return st;
                norm_row(dst->op, x, y, a->ne[0], eps);
                st = ct_ref_write_row(dst, i1, i2, i3, y);
                if (st != CT_OK) return st;
            }
    return CT_OK;
}

/* Groups of ceil(ne02/n_groups) channels, the last one truncated (possibly to
 * nothing), normalized separately for every i03 over their true sizes. Row
 * sums are formed first and then added, as the CPU reference does. */
static ct_status group_norm(ct_tensor *dst, float *x, float *y) {
    const ct_tensor *a = dst->src[0];
    const int64_t ne00 = a->ne[0], ne01 = a->ne[1], ne02 = a->ne[2];
    const int64_t n_groups = ct_op_param_i32(dst, 0);
    const float eps = ct_op_param_f32(dst, 1);
    const int64_t cpg = (ne02 + n_groups - 1) / n_groups;
    ct_status st = CT_OK;
    for (int64_t g = 0; g < n_groups && g * cpg < ne02; g++) {
        const int64_t start = g * cpg;
        const int64_t end = start + cpg < ne02 ? start + cpg : ne02;
        const double count = (double)(ne00 * ne01 * (end - start));
        for (int64_t i3 = 0; i3 < a->ne[3]; i3++) {
            double sum = 0.0;
            for (int64_t i2 = start; i2 < end; i2++)
                for (int64_t i1 = 0; i1 < ne01; i1++) {
                    if ((st = ct_ref_read_row(a, i1, i2, i3, x)) != CT_OK) return st;
                    double sumr = 0.0;
                    for (int64_t i0 = 0; i0 < ne00; i0++) sumr += (double)x[i0];
                    sum += sumr;
                }
            const float mean = (float)(sum / count);
            double sum2 = 0.0;
            for (int64_t i2 = start; i2 < end; i2++)
                for (int64_t i1 = 0; i1 < ne01; i1++) {
                    if ((st = ct_ref_read_row(a, i1, i2, i3, x)) != CT_OK) return st;
                    double sumr = 0.0;
                    for (int64_t i0 = 0; i0 < ne00; i0++) {
                        const float v = x[i0] - mean;
                        sumr += (double)(v * v);
                    }
                    sum2 += sumr;
                }
            const float variance = (float)(sum2 / count);
            const float scale = 1.0f / sqrtf(variance + eps);
            for (int64_t i2 = start; i2 < end; i2++)
                for (int64_t i1 = 0; i1 < ne01; i1++) {
                    if ((st = ct_ref_read_row(a, i1, i2, i3, x)) != CT_OK) return st;
                    for (int64_t i0 = 0; i0 < ne00; i0++) y[i0] = (x[i0] - mean) * scale;
                    if ((st = ct_ref_write_row(dst, i1, i2, i3, y)) != CT_OK) return st;
                }
        }
    }
    return CT_OK;
}

ct_status ct_ref_norm(ct_tensor *dst) {
    const int64_t n = dst->src[0]->ne[0];
    float *x = ct_ref_alloc_floats(n, dst);
    if (!x) return ct_last_status();
    float *y = ct_ref_alloc_floats(n, dst);
    if (!y) {
        ct_free(x);
        return ct_last_status();
    }
    const ct_status st = dst->op == CT_OP_GROUP_NORM ? group_norm(dst, x, y) : rows_norm(dst, x, y);
    ct_free(x);
    ct_free(y);
    return st;
}

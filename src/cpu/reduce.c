/* SUM, CUMSUM and ARGMAX of F32 tensors, threaded over rows. SUM: each row summed in
 * double (eight lanes in a fixed order), each thread's rows added in double, the threads'
 * totals in thread order, rounded to float once. CUMSUM: float adds along the row, in
 * order (ggml-cpu's bytes). ARGMAX: ggml-cpu's running maximum. */
#include "cpu/cpu_ops.h"

#include <math.h>
#include <string.h>

bool ct_cpu_reduce_supported(const ct_tensor *op) {
    if (!op) return false;
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32) return false;
    switch (op->op) {
    case CT_OP_SUM: return op->type == CT_TYPE_F32 && ct_nelements(op) == 1;
    case CT_OP_CUMSUM:
        return op->type == CT_TYPE_F32 && op->nb[0] == sizeof(float) && op->ne[0] == a->ne[0] && op->ne[1] == a->ne[1] && op->ne[2] == a->ne[2] &&
               op->ne[3] == a->ne[3];
    case CT_OP_ARGMAX:
        return op->type == CT_TYPE_I32 && a->ne[2] == 1 && a->ne[3] == 1 && a->ne[0] <= INT32_MAX &&
               op->ne[0] == a->ne[1] && op->ne[1] == 1 && op->ne[2] == 1 && op->ne[3] == 1;
    default: return false;
    }
}

size_t ct_cpu_reduce_work_size(const ct_tensor *dst, int n_threads) {
    return dst->op == CT_OP_SUM ? sizeof(double) * (size_t)(n_threads > 0 ? n_threads : 1) : 0;
}

#define LANES 8

static double row_sum(const char *x, size_t nb00, int64_t n) {
    double acc[LANES] = {0};
    int64_t i = 0;
    if (nb00 == sizeof(float) && (uintptr_t)x % _Alignof(float) == 0) {
        const float *restrict p = (const float *)(const void *)x;
        for (; i + LANES <= n; i += LANES)
            for (int k = 0; k < LANES; k++) acc[k] += (double)p[i + k];
    }
    for (int k = 0; i < n; i++, k = (k + 1) % LANES) {
        float v;
        memcpy(&v, x + (size_t)i * nb00, sizeof v);
        acc[k] += (double)v;
    }
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

static void cumsum_row(const char *x, size_t nb00, float *restrict y, int64_t n) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        float v;
        memcpy(&v, x + (size_t)i * nb00, sizeof v);
        s = i == 0 ? v : s + v;
        y[i] = s;
    }
}

/* ggml-cpu's loop: max = max > v ? max : v; if (max == v) idx = i. */
static int32_t argmax_row(const char *x, size_t nb00, int64_t n) {
    if (nb00 == sizeof(float) && (uintptr_t)x % _Alignof(float) == 0) {
        /* Without NaNs that loop gives the last index equal to the largest value: found
         * by passes the compiler vectorizes (any NaN, the maximum) and a backward scan. */
        const float *restrict p = (const float *)(const void *)x;
        bool nan = false;
        float m = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            nan |= p[i] != p[i];
            m = p[i] > m ? p[i] : m;
        }
        if (!nan) {
            for (int64_t i = n - 1; i >= 0; i--)
                if (p[i] == m) return (int32_t)i;
            return 0;
        }
    }
    float max = -INFINITY;
    int32_t idx = 0;
    for (int64_t i = 0; i < n; i++) {
        float v;
        memcpy(&v, x + (size_t)i * nb00, sizeof v);
        max = max > v ? max : v;
        if (max == v) idx = (int32_t)i;
    }
    return idx;
}

void ct_cpu_reduce(const ct_cpu_params *params, ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    const int64_t ne00 = a->ne[0], ne01 = a->ne[1], ne02 = a->ne[2];
    const size_t nb00 = a->nb[0], nb01 = a->nb[1], nb02 = a->nb[2], nb03 = a->nb[3];
    /* an empty source adds nothing and CUMSUM writes nothing (its other dims are unbounded:
     * ne0 = 0 with ne1 = 2^63 - 1); ARGMAX writes one index a row, into its dst */
    const int64_t nr = !ct_is_empty(a) || dst->op == CT_OP_ARGMAX ? ct_nrows(a) : 0;
    int64_t r0, r1;
    ct_cpu_split(nr, params, &r0, &r1);
    double total = 0.0;
    /* r0 > 0 only where there are rows: ne01 * ne02 is then nonzero and fits */
    ct_cpu_row i = ct_cpu_row_at(r0, ne01, ne02);
    for (int64_t r = r0; r < r1; r++, ct_cpu_row_next(&i, ne01, ne02)) {
        const char *x = (const char *)a->data + (size_t)i.i1 * nb01 + (size_t)i.i2 * nb02 + (size_t)i.i3 * nb03;
        if (dst->op == CT_OP_SUM) {
            total += row_sum(x, nb00, ne00);
        } else if (dst->op == CT_OP_CUMSUM) {
            float *y = (float *)(void *)((char *)dst->data + (size_t)i.i1 * dst->nb[1] + (size_t)i.i2 * dst->nb[2] +
                                         (size_t)i.i3 * dst->nb[3]);
            cumsum_row(x, nb00, y, ne00);
        } else {
            const int32_t idx = argmax_row(x, nb00, ne00);
            memcpy((char *)dst->data + (size_t)i.i1 * dst->nb[0], &idx, sizeof idx);
        }
    }
    if (dst->op != CT_OP_SUM) return;
    double *part = params->wdata;
    part[params->ith] = total;
    ct_cpu_barrier(params);
    if (params->ith == 0) {
        double s = 0.0;
        for (int t = 0; t < params->nth; t++) s += part[t];
        const float v = (float)s;
        memcpy(dst->data, &v, sizeof v);
    }
}

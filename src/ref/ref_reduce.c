/* SUM, CUMSUM and ARGMAX of F32 tensors, plain scalar code in ggml-cpu's order: SUM
 * sums each row in double and the rows' sums in double; CUMSUM adds in float along the
 * row; ARGMAX runs ggml's running maximum (the last of equal maxima, NaN restarting). */
#include "ref/ref_ops.h"

#include <math.h>
#include <string.h>

bool ct_ref_reduce_supported(const ct_tensor *op) {
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32) return false;
    switch (op->op) {
    case CT_OP_SUM: return op->type == CT_TYPE_F32 && ct_nelements(op) == 1;
    case CT_OP_CUMSUM:
        return op->type == CT_TYPE_F32 && op->ne[0] == a->ne[0] && op->ne[1] == a->ne[1] && op->ne[2] == a->ne[2] &&
               op->ne[3] == a->ne[3];
    case CT_OP_ARGMAX:
        return op->type == CT_TYPE_I32 && a->ne[2] == 1 && a->ne[3] == 1 && a->ne[0] <= INT32_MAX &&
               op->ne[0] == a->ne[1] && op->ne[1] == 1 && op->ne[2] == 1 && op->ne[3] == 1;
    default: return false;
    }
}

ct_status ct_ref_reduce(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    /* an empty source adds nothing and CUMSUM writes nothing (its other dims are unbounded,
     * and so is ne0 when another dim is 0: no row buffer for it) */
    const bool rows = !ct_is_empty(a) || dst->op == CT_OP_ARGMAX;
    float *x = ct_ref_alloc_floats(rows && a->ne[0] > 0 ? a->ne[0] : 1, dst);
    if (!x) return ct_last_status();
    ct_status st = CT_OK;
    double total = 0.0;
    const int64_t ne3 = rows ? a->ne[3] : 0;
    for (int64_t i3 = 0; i3 < ne3 && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2] && st == CT_OK; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1] && st == CT_OK; i1++) {
                if ((st = ct_ref_read_row(a, i1, i2, i3, x)) != CT_OK) break;
                if (dst->op == CT_OP_SUM) {
                    double row = 0.0;
                    for (int64_t i0 = 0; i0 < a->ne[0]; i0++) row += (double)x[i0];
                    total += row;
                } else if (dst->op == CT_OP_CUMSUM) {
                    float y = 0.0f;
                    for (int64_t i0 = 0; i0 < a->ne[0]; i0++) {
                        y = i0 == 0 ? x[0] : y + x[i0];
                        memcpy(ct_ref_addr(dst, i0, i1, i2, i3), &y, sizeof y);
                    }
                } else {
                    float max = -INFINITY;
                    int32_t idx = 0;
                    for (int64_t i0 = 0; i0 < a->ne[0]; i0++) {
                        max = max > x[i0] ? max : x[i0];
                        if (max == x[i0]) idx = (int32_t)i0;
                    }
                    memcpy(ct_ref_addr(dst, i1, 0, 0, 0), &idx, sizeof idx);
                }
            }
    if (st == CT_OK && dst->op == CT_OP_SUM) {
        const float v = (float)total;
        memcpy(dst->data, &v, sizeof v);
    }
    ct_free(x);
    return st;
}

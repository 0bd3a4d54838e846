/* SUM_ROWS and MEAN of F32 rows: a double sum rounded to float; MEAN then
 * divides by ne00 in float, as the CPU reference does. */
#include "ref/ref_ops.h"

#include <string.h>

bool ct_ref_sum_rows_supported(const ct_tensor *op) {
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_F32) return false;
    return op->ne[0] == 1 && op->ne[1] == a->ne[1] && op->ne[2] == a->ne[2] && op->ne[3] == a->ne[3];
}

ct_status ct_ref_sum_rows(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    float *x = ct_ref_alloc_floats(a->ne[0], dst);
    if (!x) return ct_last_status();
    ct_status st = CT_OK;
    for (int64_t i3 = 0; i3 < a->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2] && st == CT_OK; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1] && st == CT_OK; i1++) {
                if ((st = ct_ref_read_row(a, i1, i2, i3, x)) != CT_OK) break;
                double sum = 0.0;
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++) sum += (double)x[i0];
                float v = (float)sum;
                if (dst->op == CT_OP_MEAN) v /= (float)a->ne[0];
                memcpy(ct_ref_addr(dst, 0, i1, i2, i3), &v, sizeof v);
            }
    ct_free(x);
    return st;
}

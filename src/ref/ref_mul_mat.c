/* MUL_MAT: dst[i0, i1, i2, i3] = sum_k src0[k, i0, i2/r2, i3/r3] * src1[k, i1, i2, i3],
 * accumulated in double (products of floats are exact there) and rounded once. */
#include "ref/ref_ops.h"

#include <string.h>

bool ct_ref_mul_mat_supported(const ct_tensor *op) {
    const ct_tensor *a = op->src[0], *b = op->src[1];
    if (!a || !b || op->type != CT_TYPE_F32) return false;
    if (!ct_type_can_dequantize(a->type) || !ct_type_can_dequantize(b->type)) return false;
    if (ct_is_empty(op)) return true;
    return a->ne[0] == b->ne[0] && op->ne[0] == a->ne[1] && op->ne[1] == b->ne[1] && op->ne[2] == b->ne[2] &&
           op->ne[3] == b->ne[3] && a->ne[2] > 0 && a->ne[3] > 0 && b->ne[2] % a->ne[2] == 0 &&
           b->ne[3] % a->ne[3] == 0;
}

ct_status ct_ref_mul_mat(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t K = a->ne[0];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];

    float *arow = ct_ref_alloc_floats(K, dst);
    if (!arow) return ct_last_status();
    float *brow = ct_ref_alloc_floats(K, dst);
    if (!brow) {
        ct_free(arow);
        return ct_last_status();
    }
    ct_status st = CT_OK;
    for (int64_t i3 = 0; i3 < dst->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2] && st == CT_OK; i2++)
            for (int64_t i1 = 0; i1 < dst->ne[1] && st == CT_OK; i1++) {
                st = ct_ref_read_row(b, i1, i2, i3, brow);
                for (int64_t i0 = 0; i0 < dst->ne[0] && st == CT_OK; i0++) {
                    if ((st = ct_ref_read_row(a, i0, i2 / r2, i3 / r3, arow)) != CT_OK) break;
                    double sum = 0.0;
                    for (int64_t k = 0; k < K; k++) sum += (double)arow[k] * (double)brow[k];
                    const float v = (float)sum;
                    memcpy(ct_ref_addr(dst, i0, i1, i2, i3), &v, sizeof v);
                }
            }
    ct_free(arow);
    ct_free(brow);
    return st;
}

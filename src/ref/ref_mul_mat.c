/* MUL_MAT: dst[i0, i1, i2, i3] = sum_k src0[k, i0, i2/r2, i3/r3] * src1[k, i1, i2, i3],
 * accumulated in double (products of floats are exact there) and rounded once.
 *
 * Each output element is the same sum in the same order (k = 0, 1, ...) as the
 * textbook triple loop; only the dequantization is shared: a block of src1 rows is
 * converted to floats once, and each src0 row once per block, instead of once per
 * output element. */
#include "ref/ref_ops.h"

#include <string.h>

/* Floats of src1 rows held at once (16 MiB): bounds the scratch whatever the shape. */
#define REF_MUL_MAT_B_FLOATS ((int64_t)4 << 20)

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
    const int64_t K = a->ne[0], N = dst->ne[1];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    /* src1 rows per block: all N where they fit in the bound, at least one */
    int64_t nb = K > 0 ? REF_MUL_MAT_B_FLOATS / K : N;
    if (nb > N) nb = N;
    if (nb < 1) nb = 1;

    float *arow = ct_ref_alloc_floats(K, dst);
    if (!arow) return ct_last_status();
    float *brows = ct_ref_alloc_floats(nb * K, dst);
    if (!brows) {
        ct_free(arow);
        return ct_last_status();
    }
    ct_status st = CT_OK;
    for (int64_t i3 = 0; i3 < dst->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2] && st == CT_OK; i2++)
            for (int64_t j0 = 0; j0 < N && st == CT_OK; j0 += nb) {
                const int64_t j1 = j0 + nb < N ? j0 + nb : N;
                for (int64_t i1 = j0; i1 < j1 && st == CT_OK; i1++)
                    st = ct_ref_read_row(b, i1, i2, i3, brows + (i1 - j0) * K);
                for (int64_t i0 = 0; i0 < dst->ne[0] && st == CT_OK; i0++) {
                    if ((st = ct_ref_read_row(a, i0, i2 / r2, i3 / r3, arow)) != CT_OK) break;
                    for (int64_t i1 = j0; i1 < j1; i1++) {
                        const float *brow = brows + (i1 - j0) * K;
                        double sum = 0.0;
                        for (int64_t k = 0; k < K; k++) sum += (double)arow[k] * (double)brow[k];
                        const float v = (float)sum;
                        memcpy(ct_ref_addr(dst, i0, i1, i2, i3), &v, sizeof v);
                    }
                }
            }
    ct_free(arow);
    ct_free(brows);
    return st;
}

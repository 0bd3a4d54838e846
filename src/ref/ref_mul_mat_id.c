/* MUL_MAT_ID: dst[i0, i1, i2] = sum_k as[k, i0, ids[i1, i2]] * b[k, i1 % ne11, i2], each
 * sum in double in the order k = 0, 1, ... (as REF's MUL_MAT), rounded once; an id outside
 * [0, n_as) gives zeros.
 * ADD_ID: dst[i0, i1, i2, i3] = a[i0, i1, i2, i3] + b[i0, ids[i1, i2]] in float, rounded
 * to dst's type; an id outside [0, b.ne1) adds nothing. */
#include "ref/ref_ops.h"
#include "tensor/tensor_internal.h"

#include <string.h>

bool ct_ref_mul_mat_id_supported(const ct_tensor *op) {
    if (op && op->op == CT_OP_ADD_ID) return ct_add_id_node_valid(op);
    if (!ct_mul_mat_id_node_valid(op)) return false;
    return ct_type_can_dequantize(op->src[0]->type) && ct_type_can_dequantize(op->src[1]->type);
}

static int32_t read_id(const ct_tensor *ids, int64_t i0, int64_t i1) {
    int32_t e;
    memcpy(&e, ct_ref_addr(ids, i0, i1, 0, 0), sizeof e);
    return e;
}

static ct_status mul_mat_id(ct_tensor *dst) {
    const ct_tensor *as = dst->src[0], *b = dst->src[1], *ids = dst->src[2];
    const int64_t K = as->ne[0], M = dst->ne[0], n_as = as->ne[2];
    if (ct_is_empty(dst)) return CT_OK;
    float *arow = ct_ref_alloc_floats(K, dst);
    if (!arow) return ct_last_status();
    float *brow = ct_ref_alloc_floats(K, dst);
    if (!brow) {
        ct_free(arow);
        return ct_last_status();
    }
    ct_status st = CT_OK;
    for (int64_t i2 = 0; i2 < dst->ne[2] && st == CT_OK; i2++)
        for (int64_t i1 = 0; i1 < dst->ne[1] && st == CT_OK; i1++) {
            const int32_t e = read_id(ids, i1, i2);
            if (e < 0 || e >= n_as) {
                const float z = 0.0f;
                for (int64_t i0 = 0; i0 < M; i0++) memcpy(ct_ref_addr(dst, i0, i1, i2, 0), &z, sizeof z);
                continue;
            }
            if ((st = ct_ref_read_row(b, i1 % b->ne[1], i2, 0, brow)) != CT_OK) break;
            for (int64_t i0 = 0; i0 < M; i0++) {
                if ((st = ct_ref_read_row(as, i0, e, 0, arow)) != CT_OK) break;
                double sum = 0.0;
                for (int64_t k = 0; k < K; k++) sum += (double)arow[k] * (double)brow[k];
                const float v = (float)sum;
                memcpy(ct_ref_addr(dst, i0, i1, i2, 0), &v, sizeof v);
            }
        }
    ct_free(arow);
    ct_free(brow);
    return st;
}

static ct_status add_id(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1], *ids = dst->src[2];
    const int64_t n = a->ne[0];
    if (ct_is_empty(dst)) return CT_OK;
    float *row = ct_ref_alloc_floats(n, dst);
    if (!row) return ct_last_status();
    float *brow = ct_ref_alloc_floats(n, dst);
    if (!brow) {
        ct_free(row);
        return ct_last_status();
    }
    ct_status st = CT_OK;
    for (int64_t i3 = 0; i3 < a->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2] && st == CT_OK; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1] && st == CT_OK; i1++) {
                if ((st = ct_ref_read_row(a, i1, i2, i3, row)) != CT_OK) break;
                const int32_t e = read_id(ids, i1, i2);
                if (e >= 0 && e < b->ne[1]) {
                    if ((st = ct_ref_read_row(b, e, 0, 0, brow)) != CT_OK) break;
                    for (int64_t i0 = 0; i0 < n; i0++) row[i0] += brow[i0];
                }
                st = ct_ref_write_row(dst, i1, i2, i3, row);
            }
    ct_free(row);
    ct_free(brow);
    return st;
}

ct_status ct_ref_mul_mat_id(ct_tensor *dst) { return dst->op == CT_OP_ADD_ID ? add_id(dst) : mul_mat_id(dst); }

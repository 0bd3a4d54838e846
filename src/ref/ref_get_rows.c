/* GET_ROWS: dst[:, i10, i11, i12] = src0[:, src1[i10, i11, i12], i11, i12]. */
#include "ref/ref_ops.h"

#include <string.h>

bool ct_ref_get_rows_supported(const ct_tensor *op) {
    const ct_tensor *a = op->src[0], *b = op->src[1];
    if (!a || !b || b->type != CT_TYPE_I32) return false;
    const bool float_rows = ct_type_can_dequantize(a->type) && op->type == CT_TYPE_F32;
    const bool int_rows = a->type == CT_TYPE_I32 && op->type == CT_TYPE_I32;
    if (!float_rows && !int_rows) return false;
    if (ct_is_empty(op)) return true;
    /* src0's batch dims must cover every (i11, i12) a dst row reads. */
    return op->ne[0] == a->ne[0] && op->ne[1] == b->ne[0] && op->ne[2] == b->ne[1] && op->ne[3] == b->ne[2] &&
           b->ne[3] == 1 && a->ne[2] == b->ne[1] && b->ne[2] <= a->ne[3];
}

ct_status ct_ref_get_rows(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t ne00 = a->ne[0], ne01 = a->ne[1];

    /* Every index first, so that a bad one leaves dst untouched. */
    for (int64_t i12 = 0; i12 < b->ne[2]; i12++)
        for (int64_t i11 = 0; i11 < b->ne[1]; i11++)
            for (int64_t i10 = 0; i10 < b->ne[0]; i10++) {
                int32_t r;
                memcpy(&r, ct_ref_addr(b, i10, i11, i12, 0), sizeof r);
                if (r < 0 || r >= ne01)
                    return ct_fail(CT_INDEX_OUT_OF_RANGE,
                                   CT_REF_FN ": GET_ROWS '%s': index %s[%lld, %lld, %lld] = %d is outside "
                                   "[0, %lld), the rows of %s",
                                   ct_ref_label(dst, "dst"), ct_ref_label(b, "src1"), (long long)i10,
                                   (long long)i11, (long long)i12, (int)r, (long long)ne01,
                                   ct_ref_label(a, "src0"));
            }

    if (a->type == CT_TYPE_I32) {
        for (int64_t i12 = 0; i12 < b->ne[2]; i12++)
            for (int64_t i11 = 0; i11 < b->ne[1]; i11++)
                for (int64_t i10 = 0; i10 < b->ne[0]; i10++) {
                    int32_t r;
                    memcpy(&r, ct_ref_addr(b, i10, i11, i12, 0), sizeof r);
                    for (int64_t i0 = 0; i0 < ne00; i0++)
                        memcpy(ct_ref_addr(dst, i0, i10, i11, i12), ct_ref_addr(a, i0, r, i11, i12), sizeof(int32_t));
                }
        return CT_OK;
    }

    float *row = ct_ref_alloc_floats(ne00, dst);
    if (!row) return ct_last_status();
    ct_status st = CT_OK;
    for (int64_t i12 = 0; i12 < b->ne[2] && st == CT_OK; i12++)
        for (int64_t i11 = 0; i11 < b->ne[1] && st == CT_OK; i11++)
            for (int64_t i10 = 0; i10 < b->ne[0] && st == CT_OK; i10++) {
                int32_t r;
                memcpy(&r, ct_ref_addr(b, i10, i11, i12, 0), sizeof r);
                st = ct_ref_read_row(a, r, i11, i12, row);
                if (st == CT_OK) st = ct_ref_write_row(dst, i10, i11, i12, row);
            }
    ct_free(row);
    return st;
}

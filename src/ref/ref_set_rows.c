/* SET_ROWS: dst[:, src1[i, i02 % ne11, i03 % ne12], i02, i03] = convert(src0[:, i, i02, i03]). */
#include "ref/ref_ops.h"

#include <string.h>

bool ct_ref_set_rows_supported(const ct_tensor *op) {
    const ct_tensor *b = op->src[0], *c = op->src[1];
    if (!b || !c) return false;
    if (!ct_type_can_quantize(op->type)) return false;
    if (b->type != CT_TYPE_F32 && b->type != CT_TYPE_F16) return false;
    if (c->type != CT_TYPE_I64 && c->type != CT_TYPE_I32) return false;
    if (ct_is_empty(op) || ct_is_empty(b)) return true; /* nothing is written */
    return b->ne[0] == op->ne[0] && b->ne[2] == op->ne[2] && b->ne[3] == op->ne[3] && c->ne[0] == b->ne[1] &&
           c->ne[1] > 0 && c->ne[2] > 0 && b->ne[2] % c->ne[1] == 0 && b->ne[3] % c->ne[2] == 0 && c->ne[3] == 1;
}

static int64_t read_index(const ct_tensor *c, int64_t i10, int64_t i11, int64_t i12) {
    const char *p = ct_ref_addr(c, i10, i11, i12, 0);
    if (c->type == CT_TYPE_I32) {
        int32_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    int64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

ct_status ct_ref_set_rows(ct_tensor *dst) {
    const ct_tensor *b = dst->src[0], *c = dst->src[1];
    if (ct_is_empty(b)) return CT_OK;

    /* Every index first, so that a bad one leaves dst untouched. */
    for (int64_t i03 = 0; i03 < b->ne[3]; i03++)
        for (int64_t i02 = 0; i02 < b->ne[2]; i02++)
            for (int64_t i = 0; i < b->ne[1]; i++) {
                const int64_t i11 = i02 % c->ne[1], i12 = i03 % c->ne[2];
                const int64_t r = read_index(c, i, i11, i12);
                if (r < 0 || r >= dst->ne[1])
                    return ct_fail(CT_INDEX_OUT_OF_RANGE,
                                   CT_REF_FN ": SET_ROWS '%s': index %s[%lld, %lld, %lld] = %lld is outside "
                                   "[0, %lld), the rows of dst",
                                   ct_ref_label(dst, "dst"), ct_ref_label(c, "src1"), (long long)i, (long long)i11,
                                   (long long)i12, (long long)r, (long long)dst->ne[1]);
            }

    float *row = ct_ref_alloc_floats(b->ne[0], dst);
    if (!row) return ct_last_status();
    ct_status st = CT_OK;
    /* Source order, so that of duplicate indices the last row wins. */
    for (int64_t i03 = 0; i03 < b->ne[3] && st == CT_OK; i03++)
        for (int64_t i02 = 0; i02 < b->ne[2] && st == CT_OK; i02++)
            for (int64_t i = 0; i < b->ne[1] && st == CT_OK; i++) {
                const int64_t r = read_index(c, i, i02 % c->ne[1], i03 % c->ne[2]);
                st = ct_ref_read_row(b, i, i02, i03, row);
                if (st == CT_OK) st = ct_ref_write_row(dst, r, i02, i03, row);
            }
    ct_free(row);
    return st;
}

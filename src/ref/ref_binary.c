/* ADD, SUB, MUL, DIV, ADD1: each element of src0 and its repeated src1 element as
 * floats, the float result rounded to dst's type (the CPU reference's arithmetic). */
#include "ref/ref_ops.h"
#include "tensor/tensor_internal.h"

bool ct_ref_binary_supported(const ct_tensor *op) { return ct_binary_node_valid(op); }

static float apply(ct_op op, float x, float y) {
    switch (op) {
    case CT_OP_SUB: return x - y;
    case CT_OP_MUL: return x * y;
    case CT_OP_DIV: return x / y;
    default: return x + y; /* ADD, ADD1 */
    }
}

ct_status ct_ref_binary(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    if (ct_is_empty(dst)) return CT_OK;
    float *x = ct_ref_alloc_floats(a->ne[0], dst);
    if (!x) return ct_last_status();
    float *y = ct_ref_alloc_floats(b->ne[0], dst);
    if (!y) {
        ct_free(x);
        return ct_last_status();
    }
    ct_status st = CT_OK;
    for (int64_t i3 = 0; i3 < a->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2] && st == CT_OK; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1] && st == CT_OK; i1++) {
                st = ct_ref_read_row(a, i1, i2, i3, x);
                if (st == CT_OK) st = ct_ref_read_row(b, i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3], y);
                if (st != CT_OK) break;
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++) x[i0] = apply(dst->op, x[i0], y[i0 % b->ne[0]]);
                st = ct_ref_write_row(dst, i1, i2, i3, x);
            }
    ct_free(x);
    ct_free(y);
    return st;
}

/* SCALE on F32 and F16 rows: y = x*s + b in float (a product then a sum, two
 * roundings; no sum when b is 0, as ggml-cpu), rounded to the destination type. */
#include "ref/ref_ops.h"

bool ct_ref_scale_supported(const ct_tensor *op) {
    const ct_tensor *a = op->src[0];
    return a && (a->type == CT_TYPE_F32 || a->type == CT_TYPE_F16) && op->type == a->type && ct_are_same_shape(a, op);
}

ct_status ct_ref_scale(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    const float s = ct_op_param_f32(dst, 0), b = ct_op_param_f32(dst, 1);
    float *x = ct_ref_alloc_floats(a->ne[0], dst);
    if (!x) return ct_last_status();
    ct_status st = CT_OK;
    for (int64_t i3 = 0; i3 < a->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2] && st == CT_OK; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1] && st == CT_OK; i1++) {
                st = ct_ref_read_row(a, i1, i2, i3, x);
                if (st != CT_OK) break;
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++) {
                    const float p = x[i0] * s; /* two roundings: -ffp-contract=off */
                    x[i0] = b == 0.0f ? p : p + b; /* ggml adds no zero bias (-0 stays -0) */
                }
                st = ct_ref_write_row(dst, i1, i2, i3, x);
            }
    ct_free(x);
    return st;
}

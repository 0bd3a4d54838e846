/* Row conversion and scratch helpers shared by the REF op families. */
#include "ref/ref_ops.h"

const char *ct_ref_label(const ct_tensor *t, const char *role) {
    return t->name[0] ? t->name : role;
}

ct_status ct_ref_read_row(const ct_tensor *t, int64_t i1, int64_t i2, int64_t i3, float *out) {
    const int64_t bs = ct_type_block_size(t->type);
    for (int64_t b = 0; b < t->ne[0] / bs; b++) {
        ct_status st = ct_dequantize_row(t->type, ct_ref_addr(t, b, i1, i2, i3), out + b * bs, bs);
        if (st != CT_OK) return st;
    }
    return CT_OK;
}

ct_status ct_ref_write_row(ct_tensor *t, int64_t i1, int64_t i2, int64_t i3, const float *in) {
    const int64_t bs = ct_type_block_size(t->type);
    for (int64_t b = 0; b < t->ne[0] / bs; b++) {
        ct_status st = ct_quantize_row(t->type, in + b * bs, ct_ref_addr(t, b, i1, i2, i3), bs);
        if (st != CT_OK) return st;
    }
    return CT_OK;
}

float *ct_ref_alloc_floats(int64_t n, const ct_tensor *node) {
    size_t bytes;
    if (n < 0 || !ct_mul_size((size_t)n, sizeof(float), &bytes))
        return CT_FAIL_NULL(CT_OUT_OF_MEMORY, CT_REF_FN ": %s '%s': scratch of %lld floats overflows",
                            ct_op_name(node->op), ct_ref_label(node, "dst"), (long long)n);
    float *p = ct_malloc(bytes);
    if (!p)
        return CT_FAIL_NULL(CT_OUT_OF_MEMORY, CT_REF_FN ": %s '%s': cannot allocate %zu bytes of scratch",
                            ct_op_name(node->op), ct_ref_label(node, "dst"), bytes);
    return p;
}

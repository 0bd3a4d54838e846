/* CPY, DUP, CONT: the source's elements in logical row-major order go to the
 * destination's logical row-major order. The source is gathered whole before
 * anything is written, so overlapping source and destination are safe. */
#include "ref/ref_ops.h"

#include <string.h>

bool ct_ref_cpy_supported(const ct_tensor *op) {
    const ct_tensor *a = op->src[0];
    if (!a || !ct_type_is_valid(a->type) || !ct_type_is_valid(op->type)) return false;
    if (ct_nelements(a) != ct_nelements(op)) return false;
    if (a->type == op->type) {
        const int64_t bs = ct_type_block_size(a->type);
        return a->ne[0] % bs == 0 && op->ne[0] % bs == 0;
    }
    return ct_type_can_dequantize(a->type) && ct_type_can_quantize(op->type);
}

/* Same type: blocks (or elements) move unchanged, so every type and every bit pattern is kept. */
static ct_status copy_bytes(ct_tensor *dst, const ct_tensor *a) {
    const size_t ts = ct_type_size(a->type);
    const int64_t bs = ct_type_block_size(a->type);
    size_t bytes;
    if (!ct_mul_size((size_t)(ct_nelements(a) / bs), ts, &bytes))
        return ct_fail(CT_OUT_OF_MEMORY, CT_REF_FN ": %s '%s': scratch size overflows", ct_op_name(dst->op),
                       ct_ref_label(dst, "dst"));
    char *buf = ct_malloc(bytes);
    if (!buf)
        return ct_fail(CT_OUT_OF_MEMORY, CT_REF_FN ": %s '%s': cannot allocate %zu bytes of scratch",
                       ct_op_name(dst->op), ct_ref_label(dst, "dst"), bytes);
    size_t k = 0;
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1]; i1++)
                for (int64_t u = 0; u < a->ne[0] / bs; u++, k += ts) memcpy(buf + k, ct_ref_addr(a, u, i1, i2, i3), ts);
    k = 0;
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++)
                for (int64_t u = 0; u < dst->ne[0] / bs; u++, k += ts)
                    memcpy(ct_ref_addr(dst, u, i1, i2, i3), buf + k, ts);
    ct_free(buf);
    return CT_OK;
}

ct_status ct_ref_cpy(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    if (a->type == dst->type) return copy_bytes(dst, a);

    float *flat = ct_ref_alloc_floats(ct_nelements(a), dst);
    if (!flat) return ct_last_status();
    ct_status st = CT_OK;
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < a->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2] && st == CT_OK; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1] && st == CT_OK; i1++, k += a->ne[0])
                st = ct_ref_read_row(a, i1, i2, i3, flat + k);
    k = 0;
    for (int64_t i3 = 0; i3 < dst->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2] && st == CT_OK; i2++)
            for (int64_t i1 = 0; i1 < dst->ne[1] && st == CT_OK; i1++, k += dst->ne[0])
                st = ct_ref_write_row(dst, i1, i2, i3, flat + k);
    ct_free(flat);
    return st;
}

/* REPEAT, CONCAT, PAD, ARANGE and ACC: element by element, each element (a block, for
 * CONCAT of block types) addressed through its strides and copied as bytes; PAD's zeros,
 * ARANGE's values and ACC's sums in float (docs/TENSORS.md, Shape ops). */
#include "ref/ref_ops.h"
#include "tensor/tensor_internal.h"

#include <string.h>

bool ct_ref_shape_supported(const ct_tensor *op) { return ct_shape_node_valid(op); }

static int64_t wrap(int64_t i, int64_t n) { return ((i % n) + n) % n; }

static void repeat(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    const size_t es = ct_type_size(a->type);
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++)
                    memcpy(ct_ref_addr(dst, i0, i1, i2, i3),
                           ct_ref_addr(a, i0 % a->ne[0], i1 % a->ne[1], i2 % a->ne[2], i3 % a->ne[3]), es);
}

static void concat(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    const int dim = dst->op_params[0];
    const int64_t bs = ct_type_block_size(dst->type);
    const size_t es = ct_type_size(dst->type);
    const int64_t n0 = dst->ne[0] / bs, na = dim == 0 ? a->ne[0] / bs : a->ne[dim];
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < n0; i0++) {
                    int64_t j[4] = {i0, i1, i2, i3};
                    const ct_tensor *s = a;
                    if (j[dim] >= na) {
                        s = b;
                        j[dim] -= na;
                    }
                    memcpy(ct_ref_addr(dst, i0, i1, i2, i3), ct_ref_addr(s, j[0], j[1], j[2], j[3]), es);
                }
}

static void pad(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    const int32_t *p = dst->op_params;
    const bool circular = p[8] != 0;
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                    const int64_t i[4] = {i0, i1, i2, i3};
                    int64_t j[4];
                    bool inside = true;
                    for (int d = 0; d < 4; d++) {
                        j[d] = i[d] - p[2 * d];
                        if (circular) j[d] = wrap(j[d], a->ne[d]);
                        else inside = inside && j[d] >= 0 && j[d] < a->ne[d];
                    }
                    float v = 0.0f;
                    if (inside) memcpy(&v, ct_ref_addr(a, j[0], j[1], j[2], j[3]), sizeof v);
                    memcpy(ct_ref_addr(dst, i0, i1, i2, i3), &v, sizeof v);
                }
}

static void arange(ct_tensor *dst) {
    const float start = ct_op_param_f32(dst, 0), step = ct_op_param_f32(dst, 2);
    for (int64_t i = 0; i < dst->ne[0]; i++) {
        const float v = start + step * (float)i;
        memcpy(ct_ref_addr(dst, i, 0, 0, 0), &v, sizeof v);
    }
}

static void acc(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    const int32_t *p = dst->op_params;
    if (dst->data != a->data) memcpy(dst->data, a->data, ct_nbytes(a)); /* both contiguous */
    if (ct_is_empty(b)) return; /* adds nothing; its other dims are not bounded (ne0 = 0, ne3 = 2^40) */
    for (int64_t i3 = 0; i3 < b->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < b->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < b->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < b->ne[0]; i0++) {
                    const size_t off = (size_t)p[3] + (size_t)i0 * sizeof(float) + (size_t)i1 * (size_t)p[0] +
                                       (size_t)i2 * (size_t)p[1] + (size_t)i3 * (size_t)p[2];
                    float x, y;
                    memcpy(&x, (const char *)a->data + off, sizeof x);
                    memcpy(&y, ct_ref_addr(b, i0, i1, i2, i3), sizeof y);
                    x += y;
                    memcpy((char *)dst->data + off, &x, sizeof x);
                }
}

ct_status ct_ref_shape(ct_tensor *dst) {
    if (ct_is_empty(dst)) return CT_OK;
    switch (dst->op) {
    case CT_OP_REPEAT: repeat(dst); break;
    case CT_OP_CONCAT: concat(dst); break;
    case CT_OP_PAD: pad(dst); break;
    case CT_OP_ARANGE: arange(dst); break;
    case CT_OP_ACC: acc(dst); break;
    default: break;
    }
    return CT_OK;
}

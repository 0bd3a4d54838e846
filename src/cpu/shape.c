/* REPEAT, CONCAT, PAD, ARANGE and ACC on the CPU: the destination's rows split over the
 * threads (ARANGE: its elements; ACC: the copy of a, a barrier, then b's rows), each row
 * copied with memcpy where the source's elements are packed, element by element where
 * they are not (docs/TENSORS.md, Shape ops). */
#include "cpu/cpu_ops.h"
#include "tensor/tensor_internal.h"

#include <string.h>

bool ct_cpu_shape_supported(const ct_tensor *op) { return ct_shape_node_valid(op); }

static const char *row_of(const ct_tensor *t, int64_t i1, int64_t i2, int64_t i3) {
    return (const char *)t->data + (size_t)i1 * t->nb[1] + (size_t)i2 * t->nb[2] + (size_t)i3 * t->nb[3];
}

/* n units of es bytes from src (nb0 apart) to packed dst. */
static void copy_units(char *dst, const char *src, size_t nb0, size_t es, int64_t n) {
    if (nb0 == es) {
        memcpy(dst, src, (size_t)n * es);
    } else {
        for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * es, src + (size_t)i * nb0, es);
    }
}

static void repeat(const ct_cpu_params *params, ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    const size_t es = ct_type_size(a->type);
    const int64_t ne1 = dst->ne[1], ne2 = dst->ne[2], ne00 = a->ne[0], nr0 = dst->ne[0] / ne00;
    int64_t r0, r1;
    ct_cpu_split(ct_nrows(dst), params, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        char *y = (char *)row_of(dst, i1, i2, i3);
        const char *x = row_of(a, i1 % a->ne[1], i2 % a->ne[2], i3 % a->ne[3]);
        copy_units(y, x, a->nb[0], es, ne00);
        for (int64_t k = 1; k < nr0; k++) memcpy(y + (size_t)(k * ne00) * es, y, (size_t)ne00 * es);
    }
}

static void concat(const ct_cpu_params *params, ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    const int dim = dst->op_params[0];
    const int64_t bs = ct_type_block_size(dst->type);
    const size_t es = ct_type_size(dst->type);
    const int64_t ne1 = dst->ne[1], ne2 = dst->ne[2], na0 = a->ne[0] / bs, nb0 = b->ne[0] / bs;
    int64_t r0, r1;
    ct_cpu_split(ct_nrows(dst), params, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t j[4] = {0, r % ne1, (r / ne1) % ne2, r / (ne1 * ne2)};
        char *y = (char *)row_of(dst, j[1], j[2], j[3]);
        if (dim == 0) {
            copy_units(y, row_of(a, j[1], j[2], j[3]), a->nb[0], es, na0);
            copy_units(y + (size_t)na0 * es, row_of(b, j[1], j[2], j[3]), b->nb[0], es, nb0);
            continue;
        }
        const ct_tensor *s = a;
        if (j[dim] >= a->ne[dim]) {
            s = b;
            j[dim] -= a->ne[dim];
        }
        copy_units(y, row_of(s, j[1], j[2], j[3]), s->nb[0], es, dst->ne[0] / bs);
    }
}

static int64_t wrap(int64_t i, int64_t n) { return ((i % n) + n) % n; }

static void pad(const ct_cpu_params *params, ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    const int32_t *p = dst->op_params;
    const bool circular = p[8] != 0;
    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2];
    int64_t r0, r1;
    ct_cpu_split(ct_nrows(dst), params, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        float *y = (float *)row_of(dst, i1, i2, i3);
        int64_t j1 = i1 - p[2], j2 = i2 - p[4], j3 = i3 - p[6];
        if (circular) {
            j1 = wrap(j1, a->ne[1]), j2 = wrap(j2, a->ne[2]), j3 = wrap(j3, a->ne[3]);
            const char *x = row_of(a, j1, j2, j3);
            for (int64_t i0 = 0; i0 < ne0; i0++)
                memcpy(&y[i0], x + (size_t)wrap(i0 - p[0], a->ne[0]) * a->nb[0], sizeof(float));
            continue;
        }
        if (j1 < 0 || j1 >= a->ne[1] || j2 < 0 || j2 >= a->ne[2] || j3 < 0 || j3 >= a->ne[3]) {
            memset(y, 0, (size_t)ne0 * sizeof(float));
            continue;
        }
        memset(y, 0, (size_t)p[0] * sizeof(float));
        copy_units((char *)(y + p[0]), row_of(a, j1, j2, j3), a->nb[0], sizeof(float), a->ne[0]);
        memset(y + p[0] + a->ne[0], 0, (size_t)p[1] * sizeof(float));
    }
}

static void arange(const ct_cpu_params *params, ct_tensor *dst) {
    float start, step;
    memcpy(&start, &dst->op_params[0], sizeof start);
    memcpy(&step, &dst->op_params[2], sizeof step);
    int64_t i0, i1;
    ct_cpu_split(dst->ne[0], params, &i0, &i1);
    float *y = dst->data;
    for (int64_t i = i0; i < i1; i++) y[i] = start + step * (float)i;
}

static void acc(const ct_cpu_params *params, ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1];
    const int32_t *p = dst->op_params;
    if (dst->data != a->data) { /* both contiguous: the copy in byte slices, then the window */
        const size_t n = ct_nbytes(a);
        int64_t b0, b1;
        ct_cpu_split((int64_t)(n / 64 + 1), params, &b0, &b1);
        const size_t s0 = (size_t)b0 * 64, s1 = (size_t)b1 * 64 < n ? (size_t)b1 * 64 : n;
        if (s0 < s1) memcpy((char *)dst->data + s0, (const char *)a->data + s0, s1 - s0);
        ct_cpu_barrier(params);
    }
    const int64_t ne11 = b->ne[1], ne12 = b->ne[2];
    int64_t r0, r1;
    /* an empty b adds nothing (its other dims are not bounded by its size: ne0 = 0, ne3 = 2^40) */
    ct_cpu_split(ct_is_empty(b) ? 0 : ct_nrows(b), params, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne11, i2 = (r / ne11) % ne12, i3 = r / (ne11 * ne12);
        const size_t off = (size_t)p[3] + (size_t)i1 * (size_t)p[0] + (size_t)i2 * (size_t)p[1] + (size_t)i3 * (size_t)p[2];
        const char *x = (const char *)a->data + off, *z = row_of(b, i1, i2, i3);
        char *y = (char *)dst->data + off;
        for (int64_t i0 = 0; i0 < b->ne[0]; i0++) { /* b's rows need not be 4-byte aligned */
            float u, v;
            memcpy(&u, x + (size_t)i0 * sizeof(float), sizeof u);
            memcpy(&v, z + (size_t)i0 * sizeof(float), sizeof v);
            u += v;
            memcpy(y + (size_t)i0 * sizeof(float), &u, sizeof u);
        }
    }
}

void ct_cpu_shape(const ct_cpu_params *params, ct_tensor *dst) {
    if (ct_is_empty(dst)) return;
    switch (dst->op) {
    case CT_OP_REPEAT: repeat(params, dst); break;
    case CT_OP_CONCAT: concat(params, dst); break;
    case CT_OP_PAD: pad(params, dst); break;
    case CT_OP_ARANGE: arange(params, dst); break;
    case CT_OP_ACC: acc(params, dst); break;
    default: break;
    }
}

/* MUL_MAT_ID and ADD_ID on the CPU.
 *
 * MUL_MAT_ID runs MUL_MAT (mul_mat.c) once per expert, as ggml-cpu does: the rows of b
 * that use an expert are grouped (thread 0 maps the ids: each (slot, token) pair gets its
 * place in its expert's group, or none for an id outside [0, n_as)), gathered into the
 * scratch packed, multiplied by the expert's matrix as a MUL_MAT node of their own (all
 * threads, the MUL_MAT kernels and tiles, b converted once per expert), and the results
 * scattered to dst (zeros for an unmapped pair). The per-expert node is a 2-D MUL_MAT of
 * the expert's matrix and the gathered rows, so the types and shapes MUL_MAT_ID takes are
 * the ones ct_cpu_mul_mat_supported takes for it: nothing here lists types.
 *
 * ADD_ID: threaded over dst rows; in float, rounded to dst's type (F32 or F16). */
#include "cpu/cpu_ops.h"
#include "tensor/tensor_internal.h"
#include "types/types_internal.h"

#include <stdint.h>
#include <string.h>

#define ALIGN64(x) (((x) + 63) & ~(size_t)63)

/* The scratch: the map (per expert its first place; per pair its place or -1), the
 * gathered b rows, the results, then MUL_MAT's scratch for the largest expert group. */
typedef struct mmid_layout {
    int64_t n_as, n_ids;
    size_t row_b;                               /* bytes of a gathered b row */
    size_t off_first, off_place, off_b, off_out, off_mm, total;
} mmid_layout;

/* The per-expert MUL_MAT node: expert e's matrix times n packed rows of b's type at bdata,
 * into n packed float rows at ddata. */
static void expert_node(const ct_tensor *op, int64_t e, int64_t n, void *bdata, void *ddata, ct_tensor *a,
                        ct_tensor *b, ct_tensor *d) {
    const ct_tensor *as = op->src[0], *b0 = op->src[1];
    *a = *as;
    a->ne[2] = 1;
    a->nb[3] = a->nb[2] = a->nb[1] * (size_t)a->ne[1];
    a->op = CT_OP_NONE;
    a->data = as->data ? (char *)as->data + (size_t)e * as->nb[2] : NULL;
    memset(b, 0, sizeof *b);
    b->type = b0->type;
    b->ne[0] = b0->ne[0], b->ne[1] = n, b->ne[2] = 1, b->ne[3] = 1;
    b->nb[0] = ct_type_size(b0->type);
    b->nb[1] = b->nb[0] * (size_t)(b0->ne[0] / (ct_type_block_size(b0->type) > 0 ? ct_type_block_size(b0->type) : 1));
    b->nb[3] = b->nb[2] = b->nb[1] * (size_t)n;
    b->data = bdata;
    memcpy(b->name, b0->name, sizeof b->name);
    memset(d, 0, sizeof *d);
    d->type = CT_TYPE_F32;
    d->op = CT_OP_MUL_MAT;
    d->ne[0] = op->ne[0], d->ne[1] = n, d->ne[2] = 1, d->ne[3] = 1;
    d->nb[0] = sizeof(float);
    d->nb[1] = sizeof(float) * (size_t)op->ne[0];
    d->nb[3] = d->nb[2] = d->nb[1] * (size_t)n;
    d->src[0] = a;
    d->src[1] = b;
    d->data = ddata;
    memcpy(d->name, op->name, sizeof d->name);
}

static bool layout(const ct_tensor *op, mmid_layout *l) {
    const ct_tensor *as = op->src[0], *b = op->src[1];
    memset(l, 0, sizeof *l);
    l->n_as = as->ne[2];
    if (!ct_mul_i64(op->ne[1], op->ne[2], &l->n_ids)) return false;
    if (ct_row_size(b->type, b->ne[0], &l->row_b) != CT_OK) return false;
    /* MUL_MAT's scratch for all pairs in one group bounds any group's */
    ct_tensor a1, b1, d1;
    expert_node(op, 0, l->n_ids, NULL, NULL, &a1, &b1, &d1);
    if (!ct_cpu_mul_mat_supported(&d1)) return false;
    const size_t mm = ct_cpu_mul_mat_work_size(&d1, 1);
    size_t first, place, gb, out;
    if (!ct_mul_size((size_t)l->n_as + 1, sizeof(int64_t), &first) ||
        !ct_mul_size((size_t)l->n_ids, sizeof(int64_t), &place) || !ct_mul_size((size_t)l->n_ids, l->row_b, &gb) ||
        !ct_mul_size((size_t)l->n_ids, sizeof(float) * (size_t)op->ne[0], &out))
        return false;
    const size_t parts[5] = {first, place, gb, out, mm};
    size_t *offs[5] = {&l->off_first, &l->off_place, &l->off_b, &l->off_out, &l->off_mm};
    size_t at = 0;
    for (int i = 0; i < 5; i++) {
        *offs[i] = at;
        if (parts[i] > SIZE_MAX - 64 - at) return false;
        at = ALIGN64(at + parts[i]);
    }
    l->total = at;
    return true;
}

bool ct_cpu_mul_mat_id_supported(const ct_tensor *op) {
    if (op && op->op == CT_OP_ADD_ID) return ct_add_id_node_valid(op);
    if (!ct_mul_mat_id_node_valid(op)) return false;
    mmid_layout l;
    return layout(op, &l);
}

size_t ct_cpu_mul_mat_id_work_size(const ct_tensor *dst, int n_threads) {
    CT_UNUSED(n_threads);
    if (!dst || dst->op != CT_OP_MUL_MAT_ID || !ct_cpu_mul_mat_id_supported(dst) || ct_is_empty(dst)) return 0;
    mmid_layout l;
    return layout(dst, &l) ? l.total : 0;
}

static int32_t read_id(const ct_tensor *ids, int64_t i0, int64_t i1) {
    int32_t e;
    memcpy(&e, (const char *)ids->data + (size_t)i0 * ids->nb[0] + (size_t)i1 * ids->nb[1], sizeof e);
    return e;
}

static void mul_mat_id(const ct_cpu_params *params, ct_tensor *dst) {
    const int ith = params->ith, nth = params->nth;
    const ct_tensor *as = dst->src[0], *b = dst->src[1], *ids = dst->src[2];
    if (ct_is_empty(dst)) return;
    if (!as->data || !b->data || !ids->data || !dst->data) {
        if (ith == 0)
            ct_cpu_set_error(params, CT_INVALID_ARGUMENT, "ct_backend_graph_compute: MUL_MAT_ID %s: %s has no data",
                             dst->name[0] ? dst->name : "dst",
                             !as->data ? "src0" : !b->data ? "src1" : !ids->data ? "src2" : "dst");
        return;
    }
    mmid_layout l;
    const bool ok = layout(dst, &l);
    CT_ASSERT(ok && l.total <= params->wsize && params->wdata != NULL);
    char *w = params->wdata;
    int64_t *first = (int64_t *)(w + l.off_first), *place = (int64_t *)(w + l.off_place);
    const int64_t n_used = dst->ne[1], ne11 = b->ne[1], m = dst->ne[0];

    /* the map: counts, then each expert's first place, then each pair's place */
    if (ith == 0) {
        memset(first, 0, sizeof(int64_t) * (size_t)(l.n_as + 1));
        for (int64_t j = 0; j < l.n_ids; j++) {
            const int32_t e = read_id(ids, j % n_used, j / n_used);
            if (e >= 0 && e < l.n_as) first[e + 1]++;
        }
        for (int64_t e = 0; e < l.n_as; e++) first[e + 1] += first[e];
        for (int64_t j = 0; j < l.n_ids; j++) {
            const int32_t e = read_id(ids, j % n_used, j / n_used);
            place[j] = e >= 0 && e < l.n_as ? first[e]++ : -1;
        }
        /* first[e] is now the end of e's group: shift back to the starts */
        for (int64_t e = l.n_as; e > 0; e--) first[e] = first[e - 1];
        first[0] = 0;
    }
    if (nth > 1) ct_cpu_barrier(params);

    /* gather: pair j's b row into its place */
    const size_t esz = ct_type_size(b->type);
    const bool packed = b->nb[0] == esz || ct_type_block_size(b->type) != 1;
    for (int64_t j = ith; j < l.n_ids; j += nth) {
        if (place[j] < 0) continue;
        const char *s = (const char *)b->data + (size_t)((j % n_used) % ne11) * b->nb[1] + (size_t)(j / n_used) * b->nb[2];
        char *o = w + l.off_b + (size_t)place[j] * l.row_b;
        if (packed) {
            memcpy(o, s, l.row_b);
        } else {
            for (int64_t i = 0; i < b->ne[0]; i++) memcpy(o + (size_t)i * esz, s + (size_t)i * b->nb[0], esz);
        }
    }
    if (nth > 1) ct_cpu_barrier(params);

    /* each expert with rows: a MUL_MAT of its own on every thread */
    ct_cpu_params sub = *params;
    sub.wdata = w + l.off_mm;
    sub.wsize = params->wsize - l.off_mm;
    for (int64_t e = 0; e < l.n_as; e++) {
        const int64_t n = first[e + 1] - first[e];
        if (n == 0) continue;
        ct_tensor a1, b1, d1;
        expert_node(dst, e, n, w + l.off_b + (size_t)first[e] * l.row_b,
                    w + l.off_out + (size_t)first[e] * sizeof(float) * (size_t)m, &a1, &b1, &d1);
        ct_cpu_mul_mat(&sub, &d1);
        if (nth > 1) ct_cpu_barrier(params); /* the next expert reuses MUL_MAT's scratch */
    }

    /* scatter */
    for (int64_t j = ith; j < l.n_ids; j += nth) {
        char *d = (char *)dst->data + (size_t)(j % n_used) * dst->nb[1] + (size_t)(j / n_used) * dst->nb[2];
        if (place[j] < 0) {
            const float z = 0.0f;
            for (int64_t i = 0; i < m; i++) memcpy(d + (size_t)i * dst->nb[0], &z, sizeof z);
        } else {
            const char *s = w + l.off_out + (size_t)place[j] * sizeof(float) * (size_t)m;
            if (dst->nb[0] == sizeof(float)) {
                memcpy(d, s, sizeof(float) * (size_t)m);
            } else {
                for (int64_t i = 0; i < m; i++) memcpy(d + (size_t)i * dst->nb[0], s + 4 * i, sizeof(float));
            }
        }
    }
}

static void add_id(const ct_cpu_params *params, ct_tensor *dst) {
    const ct_tensor *a = dst->src[0], *b = dst->src[1], *ids = dst->src[2];
    if (ct_is_empty(dst)) return;
    if (!a->data || !b->data || !ids->data || !dst->data) {
        if (params->ith == 0)
            ct_cpu_set_error(params, CT_INVALID_ARGUMENT, "ct_backend_graph_compute: ADD_ID %s: %s has no data",
                             dst->name[0] ? dst->name : "dst",
                             !a->data ? "src0" : !b->data ? "src1" : !ids->data ? "src2" : "dst");
        return;
    }
    const int64_t n = a->ne[0], ne1 = a->ne[1], ne2 = a->ne[2];
    const int64_t nr = ne1 * ne2 * a->ne[3];
    const int64_t dr = (nr + params->nth - 1) / params->nth;
    const int64_t r0 = dr * params->ith, r1 = r0 + dr < nr ? r0 + dr : nr;
    const bool f32 = a->type == CT_TYPE_F32;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        const char *x = (const char *)a->data + (size_t)i1 * a->nb[1] + (size_t)i2 * a->nb[2] + (size_t)i3 * a->nb[3];
        char *z = (char *)dst->data + (size_t)i1 * dst->nb[1] + (size_t)i2 * dst->nb[2] + (size_t)i3 * dst->nb[3];
        const int32_t e = read_id(ids, i1, i2);
        const char *y = e >= 0 && e < b->ne[1] ? (const char *)b->data + (size_t)e * b->nb[1] : NULL;
        if (f32 && y && a->nb[0] == 4 && b->nb[0] == 4 && dst->nb[0] == 4 &&
            (((uintptr_t)x | (uintptr_t)y | (uintptr_t)z) & 3) == 0) {
            const float *xf = (const float *)x, *yf = (const float *)y;
            float *zf = (float *)z;
            for (int64_t i = 0; i < n; i++) zf[i] = xf[i] + yf[i];
            continue;
        }
        for (int64_t i = 0; i < n; i++) {
            float v = ct_load_f32_or_f16(a->type, x + (size_t)i * a->nb[0]);
            if (y) v += ct_load_f32_or_f16(b->type, y + (size_t)i * b->nb[0]);
            ct_store_f32_or_f16(dst->type, z + (size_t)i * dst->nb[0], v);
        }
    }
}

void ct_cpu_mul_mat_id(const ct_cpu_params *params, ct_tensor *dst) {
    if (dst->op == CT_OP_ADD_ID) {
        add_id(params, dst);
    } else {
        mul_mat_id(params, dst);
    }
}

/* Tensor creation, shape queries, contiguity predicates, names and op names. */
#include "tensor/tensor_internal.h"

#include <stdio.h>
#include <string.h>

ct_label ct_tensor_label(const ct_tensor *t, const char *role) {
    ct_label l;
    if (t != NULL && t->name[0] != '\0') {
        snprintf(l.s, sizeof l.s, "%s \"%.*s\"", role, CT_MAX_NAME - 1, t->name);
    } else {
        snprintf(l.s, sizeof l.s, "%s", role);
    }
    return l;
}

static ct_status type_check(const char *func, const char *role, ct_type type) {
    if (ct_type_is_valid(type)) return CT_OK;
    return ct_fail(CT_INVALID_ARGUMENT, "%s: %s type=%d is not a valid type id", func, role, (int)type);
}

bool ct_tensor_span(ct_type type, const int64_t ne[CT_MAX_DIMS], const size_t nb[CT_MAX_DIMS], size_t *nbytes) {
    const int64_t blck = ct_type_block_size(type);
    for (int i = 0; i < CT_MAX_DIMS; i++) {
        if (ne[i] <= 0) {
            *nbytes = 0;
            return true;
        }
    }
    if (blck <= 0) return false;
    size_t total;
    if (blck == 1) {
        total = ct_type_size(type);
    } else if (!ct_mul_size((size_t)(ne[0] / blck), nb[0], &total)) {
        return false;
    }
    for (int i = blck == 1 ? 0 : 1; i < CT_MAX_DIMS; i++) {
        size_t step;
        if (!ct_mul_size((size_t)(ne[i] - 1), nb[i], &step) || !ct_add_size(total, step, &total)) return false;
    }
    *nbytes = total;
    return true;
}

ct_status ct_tensor_layout(const char *func, const char *role, ct_type type, const int64_t ne[CT_MAX_DIMS],
                           size_t nb[CT_MAX_DIMS], size_t *nbytes) {
    ct_status st = type_check(func, role, type);
    if (st != CT_OK) return st;
    for (int i = 0; i < CT_MAX_DIMS; i++) {
        if (ne[i] < 0) {
            return ct_fail(CT_INVALID_ARGUMENT, "%s: %s ne[%d]=%lld is negative", func, role, i, (long long)ne[i]);
        }
    }
    const int64_t blck = ct_type_block_size(type);
    if (ne[0] % blck != 0) {
        return ct_fail(CT_INVALID_ARGUMENT, "%s: %s ne[0]=%lld is not a multiple of %s's block size %lld", func,
                       role, (long long)ne[0], ct_type_name(type), (long long)blck);
    }
    int64_t nelem = 1;
    bool ok = true;
    for (int i = 0; i < CT_MAX_DIMS; i++) ok = ok && ct_mul_i64(nelem, ne[i], &nelem);
    /* The full extent nb[3]*ne[3] must also fit, as must every stride. */
    nb[0] = ct_type_size(type);
    ok = ok && ct_mul_size(nb[0], (size_t)(ne[0] / blck), &nb[1]);
    ok = ok && ct_mul_size(nb[1], (size_t)ne[1], &nb[2]);
    ok = ok && ct_mul_size(nb[2], (size_t)ne[2], &nb[3]);
    size_t extent = 0;
    ok = ok && ct_mul_size(nb[3], (size_t)ne[3], &extent) && extent <= (size_t)INT64_MAX;
    if (!ok) {
        return ct_fail(CT_INVALID_ARGUMENT, "%s: %s shape [%lld, %lld, %lld, %lld] of %s overflows the byte size",
                       func, role, (long long)ne[0], (long long)ne[1], (long long)ne[2], (long long)ne[3],
                       ct_type_name(type));
    }
    /* A contiguous tensor spans exactly its extent (0 when empty). */
    *nbytes = extent;
    return CT_OK;
}

/* Header (and data) carved in one allocation, so a failure leaves nothing behind. */
static ct_tensor *tensor_alloc(ct_context *ctx, const char *func, ct_type type, const int64_t ne[CT_MAX_DIMS],
                               const size_t nb[CT_MAX_DIMS], size_t data_size, ct_tensor *view_src,
                               size_t view_offs) {
    const size_t header = ct_tensor_overhead();
    size_t total = header;
    bool with_data = view_src == NULL && !ctx->no_alloc;
    if (with_data && !ct_add_size(header, data_size, &total)) {
        return CT_FAIL_NULL(CT_OUT_OF_MEMORY, "%s: tensor data of %zu bytes cannot fit any arena", func,
                            data_size);
    }
    uint8_t *p = ct_context_alloc(ctx, total, func, "tensor");
    if (p == NULL) return NULL;
    ct_tensor_obj *obj = (ct_tensor_obj *)p;
    memset(obj, 0, sizeof *obj);
    ct_tensor *t = &obj->tensor;
    t->type = type;
    for (int i = 0; i < CT_MAX_DIMS; i++) {
        t->ne[i] = ne[i];
        t->nb[i] = nb[i];
    }
    t->op = CT_OP_NONE;
    if (view_src != NULL) {
        t->view_src = view_src;
        t->view_offs = view_offs;
        t->buffer = view_src->buffer;
        t->data = view_src->data ? (uint8_t *)view_src->data + view_offs : NULL;
    } else if (with_data) {
        t->data = p + header;
    }
    ct_context_link(ctx, obj);
    return t;
}

ct_tensor *ct_tensor_new_impl(ct_context *ctx, const char *func, ct_type type, const int64_t ne[CT_MAX_DIMS]) {
    size_t nb[CT_MAX_DIMS], nbytes;
    if (ct_tensor_layout(func, "tensor", type, ne, nb, &nbytes) != CT_OK) return NULL;
    return tensor_alloc(ctx, func, type, ne, nb, nbytes, NULL, 0);
}

ct_tensor *ct_view_impl(ct_context *ctx, const char *func, ct_tensor *a, const int64_t ne[CT_MAX_DIMS],
                        const size_t nb[CT_MAX_DIMS], size_t offset) {
    for (int i = 0; i < CT_MAX_DIMS; i++) {
        if (ne[i] < 0) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: view ne[%d]=%lld is negative", func, i, (long long)ne[i]);
        }
    }
    const int64_t blck = ct_type_block_size(a->type);
    if (blck <= 0) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: a type=%d is not valid", func, (int)a->type);
    if (ne[0] % blck != 0) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: view ne[0]=%lld is not a multiple of %s's block size %lld",
                            func, (long long)ne[0], ct_type_name(a->type), (long long)blck);
    }
    int64_t nelem = 1;
    bool ok = true;
    for (int i = 0; i < CT_MAX_DIMS; i++) ok = ok && ct_mul_i64(nelem, ne[i], &nelem);
    if (!ok) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: view shape [%lld, %lld, %lld, %lld] has too many elements",
                            func, (long long)ne[0], (long long)ne[1], (long long)ne[2], (long long)ne[3]);
    }
    ct_tensor *root = a->view_src ? a->view_src : a;
    size_t offs, span, end, root_bytes;
    if (!ct_add_size(a->view_offs, offset, &offs)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: offset=%zu overflows after %s's own offset %zu", func,
                            offset, ct_tensor_label(a, "a").s, a->view_offs);
    }
    if (!ct_tensor_span(a->type, ne, nb, &span) || !ct_add_size(offs, span, &end)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                            "%s: view of [%lld, %lld, %lld, %lld] with nb=[%zu, %zu, %zu, %zu] at offset %zu "
                            "overflows the byte size",
                            func, (long long)ne[0], (long long)ne[1], (long long)ne[2], (long long)ne[3], nb[0],
                            nb[1], nb[2], nb[3], offs);
    }
    root_bytes = ct_nbytes(root);
    if (end > root_bytes) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                            "%s: view bytes [%zu, %zu) lie outside %s's %zu bytes", func, offs, end,
                            ct_tensor_label(root, a == root ? "a" : "a's root").s, root_bytes);
    }
    ct_tensor *t = tensor_alloc(ctx, func, a->type, ne, nb, 0, root, offs);
    if (t == NULL) return NULL;
    t->op = CT_OP_VIEW;
    t->src[0] = a;
    memcpy(t->op_params, &offset, sizeof offset);
    return t;
}

/* ---- public creation ------------------------------------------------------ */

ct_tensor *ct_tensor_new(ct_context *ctx, ct_type type, int n_dims, const int64_t *ne) {
    if (ctx == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_tensor_new: ctx is NULL");
    if (n_dims < 1 || n_dims > CT_MAX_DIMS) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_tensor_new: n_dims=%d is outside 1..%d", n_dims, CT_MAX_DIMS);
    }
    if (ne == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_tensor_new: ne is NULL");
    int64_t shape[CT_MAX_DIMS] = {1, 1, 1, 1};
    for (int i = 0; i < n_dims; i++) shape[i] = ne[i];
    return ct_tensor_new_impl(ctx, "ct_tensor_new", type, shape);
}

ct_tensor *ct_tensor_new_1d(ct_context *ctx, ct_type type, int64_t ne0) {
    return ct_tensor_new(ctx, type, 1, (const int64_t[]){ne0});
}

ct_tensor *ct_tensor_new_2d(ct_context *ctx, ct_type type, int64_t ne0, int64_t ne1) {
    return ct_tensor_new(ctx, type, 2, (const int64_t[]){ne0, ne1});
}

ct_tensor *ct_tensor_new_3d(ct_context *ctx, ct_type type, int64_t ne0, int64_t ne1, int64_t ne2) {
    return ct_tensor_new(ctx, type, 3, (const int64_t[]){ne0, ne1, ne2});
}

ct_tensor *ct_tensor_new_4d(ct_context *ctx, ct_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    return ct_tensor_new(ctx, type, 4, (const int64_t[]){ne0, ne1, ne2, ne3});
}

ct_tensor *ct_tensor_dup(ct_context *ctx, const ct_tensor *a) {
    if (ctx == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_tensor_dup: ctx is NULL");
    if (a == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_tensor_dup: a is NULL");
    return ct_tensor_new_impl(ctx, "ct_tensor_dup", a->type, a->ne);
}

/* ---- names ---------------------------------------------------------------- */

ct_tensor *ct_set_output(ct_tensor *t) {
    if (t == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_set_output: t is NULL");
    t->flags |= CT_TENSOR_FLAG_OUTPUT;
    return t;
}

ct_tensor *ct_tensor_set_name(ct_tensor *t, const char *name) {
    if (t == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_tensor_set_name: t is NULL");
    if (name == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_tensor_set_name: name is NULL");
    size_t n = strlen(name);
    if (n > CT_MAX_NAME - 1) n = CT_MAX_NAME - 1;
    memmove(t->name, name, n); /* memmove: name may be t->name itself */
    t->name[n] = '\0';
    return t;
}

const char *ct_tensor_get_name(const ct_tensor *t) { return t ? t->name : ""; }

void ct_tensor_name_from(ct_tensor *t, const ct_tensor *a, const char *suffix) {
    if (a->name[0] == '\0') return; /* " (view)" alone would name nothing */
    size_t n = strnlen(a->name, CT_MAX_NAME - 1);
    size_t s = strlen(suffix);
    if (n + s > CT_MAX_NAME - 1) s = CT_MAX_NAME - 1 - n;
    char tmp[CT_MAX_NAME];
    memcpy(tmp, a->name, n);
    memcpy(tmp + n, suffix, s);
    tmp[n + s] = '\0';
    memcpy(t->name, tmp, n + s + 1);
}

/* ---- shape queries -------------------------------------------------------- */

int ct_n_dims(const ct_tensor *t) {
    if (t == NULL) return 0;
    for (int i = CT_MAX_DIMS - 1; i >= 1; i--) {
        if (t->ne[i] != 1) return i + 1;
    }
    return 1;
}

/* Saturating: creation guarantees the products fit, but a hand-built tensor may not. */
int64_t ct_nelements(const ct_tensor *t) {
    if (t == NULL) return 0;
    int64_t n = 1;
    for (int i = 0; i < CT_MAX_DIMS; i++) {
        if (!ct_mul_i64(n, t->ne[i], &n)) return INT64_MAX;
    }
    return n;
}

int64_t ct_nrows(const ct_tensor *t) {
    if (t == NULL) return 0;
    int64_t n = 1;
    for (int i = 1; i < CT_MAX_DIMS; i++) {
        if (!ct_mul_i64(n, t->ne[i], &n)) return INT64_MAX;
    }
    return n;
}

size_t ct_nbytes(const ct_tensor *t) {
    if (t == NULL) return 0;
    size_t n;
    return ct_tensor_span(t->type, t->ne, t->nb, &n) ? n : SIZE_MAX;
}

size_t ct_tensor_row_size(const ct_tensor *t) {
    if (t == NULL) return 0;
    const int64_t blck = ct_type_block_size(t->type);
    if (blck <= 0 || t->ne[0] < 0) return 0;
    size_t n;
    return ct_mul_size(ct_type_size(t->type), (size_t)(t->ne[0] / blck), &n) ? n : SIZE_MAX;
}

bool ct_is_empty(const ct_tensor *t) {
    if (t == NULL) return false;
    for (int i = 0; i < CT_MAX_DIMS; i++) {
        if (t->ne[i] == 0) return true;
    }
    return false;
}

/* ---- predicates (docs/TENSORS.md, Contiguity predicates) ------------------ */

bool ct_is_contiguous_n(const ct_tensor *t, int n) {
    if (t == NULL) return false;
    const int64_t blck = ct_type_block_size(t->type);
    if (blck <= 0) return false;
    size_t next_nb = ct_type_size(t->type);
    if (t->ne[0] != blck && t->nb[0] != next_nb) return false;
    next_nb *= (size_t)(t->ne[0] / blck);
    for (int i = 1; i < CT_MAX_DIMS; i++) {
        if (t->ne[i] == 1) continue;
        if (i > n) {
            if (t->nb[i] != next_nb) return false;
            next_nb *= (size_t)t->ne[i];
        } else {
            next_nb = (size_t)t->ne[i] * t->nb[i];
        }
    }
    return true;
}

bool ct_is_contiguous(const ct_tensor *t) { return ct_is_contiguous_n(t, 0); }

bool ct_is_contiguous_rows(const ct_tensor *t) {
    if (t == NULL) return false;
    return t->ne[0] == ct_type_block_size(t->type) || t->nb[0] == ct_type_size(t->type);
}

bool ct_is_transposed(const ct_tensor *t) { return t != NULL && t->nb[0] > t->nb[1]; }

bool ct_is_permuted(const ct_tensor *t) {
    if (t == NULL) return false;
    return t->nb[0] > t->nb[1] || t->nb[1] > t->nb[2] || t->nb[2] > t->nb[3];
}

bool ct_are_same_shape(const ct_tensor *a, const ct_tensor *b) {
    if (a == NULL || b == NULL) return false;
    return a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3];
}

/* ---- ops: names and parameters -------------------------------------------- */

/* Op ids are ABI: new ops go after TRANSPOSE; a reordered or shortened list fails here. */
_Static_assert(CT_OP_MEAN == 12 && CT_OP_TRANSPOSE == 16, "the op list changed existing ids");

typedef struct op_info {
    const char *name;
    bool is_view;
} op_info;

static const op_info op_table[CT_OP_COUNT] = {
#define OP_INFO_ENTRY(id, op_name, view, family) [CT_OP_##id] = {op_name, view},
    CT_OP_LIST(OP_INFO_ENTRY)
#undef OP_INFO_ENTRY
};

static bool op_is_listed(ct_op op) { return (unsigned)op < (unsigned)CT_OP_COUNT; }

const char *ct_op_name(ct_op op) { return op_is_listed(op) ? op_table[op].name : "INVALID"; }

bool ct_op_is_view(ct_op op) { return op_is_listed(op) && op_table[op].is_view; }

enum { N_OP_PARAMS = (int)(CT_MAX_OP_PARAMS / sizeof(int32_t)) };

float ct_op_param_f32(const ct_tensor *t, int i) {
    if (t == NULL || i < 0 || i >= N_OP_PARAMS) {
        ct_fail(CT_INVALID_ARGUMENT, "ct_op_param_f32: %s, index %d outside 0..%d", t ? "t" : "t is NULL", i,
                N_OP_PARAMS - 1);
        return 0.0f;
    }
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

int32_t ct_op_param_i32(const ct_tensor *t, int i) {
    if (t == NULL || i < 0 || i >= N_OP_PARAMS) {
        ct_fail(CT_INVALID_ARGUMENT, "ct_op_param_i32: %s, index %d outside 0..%d", t ? "t" : "t is NULL", i,
                N_OP_PARAMS - 1);
        return 0;
    }
    return t->op_params[i];
}

void ct_tensor_set_param_f32(ct_tensor *t, int i, float value) { memcpy(&t->op_params[i], &value, sizeof value); }

ct_status ct_op_check_args(const char *func, const ct_context *ctx, const ct_tensor *a, const char *role_a,
                           const ct_tensor *b, const char *role_b, const ct_tensor *c, const char *role_c) {
    if (ctx == NULL) return ct_fail(CT_INVALID_ARGUMENT, "%s: ctx is NULL", func);
    if (role_a && a == NULL) return ct_fail(CT_INVALID_ARGUMENT, "%s: %s is NULL", func, role_a);
    if (role_b && b == NULL) return ct_fail(CT_INVALID_ARGUMENT, "%s: %s is NULL", func, role_b);
    if (role_c && c == NULL) return ct_fail(CT_INVALID_ARGUMENT, "%s: %s is NULL", func, role_c);
    return CT_OK;
}

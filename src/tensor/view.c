/* Views, reshapes, permutes and transposes: tensors sharing their root's bytes. */
#include "tensor/tensor_internal.h"

#include <string.h>

static ct_status view_args(const char *func, const ct_context *ctx, const ct_tensor *a) {
    if (ctx == NULL) return ct_fail(CT_INVALID_ARGUMENT, "%s: ctx is NULL", func);
    if (a == NULL) return ct_fail(CT_INVALID_ARGUMENT, "%s: a is NULL", func);
    return CT_OK;
}

ct_tensor *ct_view_tensor(ct_context *ctx, ct_tensor *a) {
    if (view_args("ct_view_tensor", ctx, a) != CT_OK) return NULL;
    ct_tensor *t = ct_view_impl(ctx, "ct_view_tensor", a, a->ne, a->nb, 0);
    if (t) ct_tensor_name_from(t, a, " (view)");
    return t;
}

/* Strides given for dims 1..n-1 (nb[0] is the type's); the rest continue densely. */
static ct_tensor *view_nd(const char *func, ct_context *ctx, ct_tensor *a, int n, const int64_t *ne_in,
                          const size_t *nb_in, size_t offset) {
    if (view_args(func, ctx, a) != CT_OK) return NULL;
    int64_t ne[CT_MAX_DIMS] = {1, 1, 1, 1};
    size_t nb[CT_MAX_DIMS];
    for (int i = 0; i < n; i++) ne[i] = ne_in[i];
    for (int i = 0; i < CT_MAX_DIMS; i++) {
        if (ne[i] < 0) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: view ne[%d]=%lld is negative", func, i, (long long)ne[i]);
        }
    }
    const int64_t blck = ct_type_block_size(a->type);
    nb[0] = ct_type_size(a->type);
    for (int i = 1; i < CT_MAX_DIMS; i++) {
        if (i < n) {
            nb[i] = nb_in[i - 1];
            continue;
        }
        const size_t prev = i == 1 ? (size_t)(ne[0] / (blck > 0 ? blck : 1)) : (size_t)ne[i - 1];
        if (!ct_mul_size(nb[i - 1], prev, &nb[i])) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: view shape [%lld, %lld, %lld, %lld] overflows the byte size",
                                func, (long long)ne[0], (long long)ne[1], (long long)ne[2], (long long)ne[3]);
        }
    }
    ct_tensor *t = ct_view_impl(ctx, func, a, ne, nb, offset);
    if (t) ct_tensor_name_from(t, a, " (view)");
    return t;
}

ct_tensor *ct_view_1d(ct_context *ctx, ct_tensor *a, int64_t ne0, size_t offset) {
    return view_nd("ct_view_1d", ctx, a, 1, (const int64_t[]){ne0}, NULL, offset);
}

ct_tensor *ct_view_2d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset) {
    return view_nd("ct_view_2d", ctx, a, 2, (const int64_t[]){ne0, ne1}, (const size_t[]){nb1}, offset);
}

ct_tensor *ct_view_3d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2,
                      size_t offset) {
    return view_nd("ct_view_3d", ctx, a, 3, (const int64_t[]){ne0, ne1, ne2}, (const size_t[]){nb1, nb2}, offset);
}

ct_tensor *ct_view_4d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1,
                      size_t nb2, size_t nb3, size_t offset) {
    return view_nd("ct_view_4d", ctx, a, 4, (const int64_t[]){ne0, ne1, ne2, ne3}, (const size_t[]){nb1, nb2, nb3},
                   offset);
}

static ct_tensor *reshape_impl(const char *func, ct_context *ctx, ct_tensor *a, int n_dims, const int64_t *ne_in) {
    if (view_args(func, ctx, a) != CT_OK) return NULL;
    if (n_dims < 1 || n_dims > CT_MAX_DIMS) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: n_dims=%d is outside 1..%d", func, n_dims, CT_MAX_DIMS);
    }
    if (ne_in == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: ne is NULL", func);
    if (!ct_is_contiguous(a)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s is not contiguous (nb=[%zu, %zu, %zu, %zu])", func,
                            ct_tensor_label(a, "a").s, a->nb[0], a->nb[1], a->nb[2], a->nb[3]);
    }
    int64_t ne[CT_MAX_DIMS] = {1, 1, 1, 1};
    for (int i = 0; i < n_dims; i++) ne[i] = ne_in[i];
    size_t nb[CT_MAX_DIMS], nbytes;
    if (ct_tensor_layout(func, "result", a->type, ne, nb, &nbytes) != CT_OK) return NULL;
    int64_t n_new = ne[0] * ne[1] * ne[2] * ne[3]; /* checked by ct_tensor_layout */
    if (n_new != ct_nelements(a)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                            "%s: result shape [%lld, %lld, %lld, %lld] has %lld elements but %s has %lld", func,
                            (long long)ne[0], (long long)ne[1], (long long)ne[2], (long long)ne[3],
                            (long long)n_new, ct_tensor_label(a, "a").s, (long long)ct_nelements(a));
    }
    ct_tensor *t = ct_view_impl(ctx, func, a, ne, nb, 0);
    if (t == NULL) return NULL;
    t->op = CT_OP_RESHAPE;
    memset(t->op_params, 0, sizeof t->op_params);
    ct_tensor_name_from(t, a, " (reshaped)");
    return t;
}

ct_tensor *ct_reshape(ct_context *ctx, ct_tensor *a, int n_dims, const int64_t *ne) {
    return reshape_impl("ct_reshape", ctx, a, n_dims, ne);
}

ct_tensor *ct_reshape_1d(ct_context *ctx, ct_tensor *a, int64_t ne0) {
    return reshape_impl("ct_reshape_1d", ctx, a, 1, (const int64_t[]){ne0});
}

ct_tensor *ct_reshape_2d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1) {
    return reshape_impl("ct_reshape_2d", ctx, a, 2, (const int64_t[]){ne0, ne1});
}

ct_tensor *ct_reshape_3d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2) {
    return reshape_impl("ct_reshape_3d", ctx, a, 3, (const int64_t[]){ne0, ne1, ne2});
}

ct_tensor *ct_reshape_4d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    return reshape_impl("ct_reshape_4d", ctx, a, 4, (const int64_t[]){ne0, ne1, ne2, ne3});
}

/* Moving dim 0 of a block-quantized tensor would put a block stride on a
 * non-block dim, which no op can read, so it is refused. */
static ct_tensor *permute_impl(const char *func, ct_context *ctx, ct_tensor *a, const int axis[CT_MAX_DIMS]) {
    if (view_args(func, ctx, a) != CT_OK) return NULL;
    bool seen[CT_MAX_DIMS] = {false, false, false, false};
    for (int i = 0; i < CT_MAX_DIMS; i++) {
        if (axis[i] < 0 || axis[i] >= CT_MAX_DIMS || seen[axis[i]]) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                                "%s: axes (%d, %d, %d, %d) are not a permutation of 0..3", func, axis[0], axis[1],
                                axis[2], axis[3]);
        }
        seen[axis[i]] = true;
    }
    if (axis[0] != 0 && ct_type_block_size(a->type) > 1) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s has block size %lld and cannot move dim 0", func,
                            ct_tensor_label(a, "a").s, ct_type_name(a->type),
                            (long long)ct_type_block_size(a->type));
    }
    int64_t ne[CT_MAX_DIMS];
    size_t nb[CT_MAX_DIMS];
    for (int i = 0; i < CT_MAX_DIMS; i++) {
        ne[axis[i]] = a->ne[i];
        nb[axis[i]] = a->nb[i];
    }
    /* Same bytes as a, so the bounds check of the view passes exactly when a's would. */
    ct_tensor *t = ct_view_impl(ctx, func, a, ne, nb, 0);
    if (t == NULL) return NULL;
    memset(t->op_params, 0, sizeof t->op_params);
    return t;
}

ct_tensor *ct_permute(ct_context *ctx, ct_tensor *a, int axis0, int axis1, int axis2, int axis3) {
    const int axis[CT_MAX_DIMS] = {axis0, axis1, axis2, axis3};
    ct_tensor *t = permute_impl("ct_permute", ctx, a, axis);
    if (t == NULL) return NULL;
    t->op = CT_OP_PERMUTE;
    for (int i = 0; i < CT_MAX_DIMS; i++) t->op_params[i] = axis[i];
    ct_tensor_name_from(t, a, " (permuted)");
    return t;
}

ct_tensor *ct_transpose(ct_context *ctx, ct_tensor *a) {
    const int axis[CT_MAX_DIMS] = {1, 0, 2, 3};
    ct_tensor *t = permute_impl("ct_transpose", ctx, a, axis);
    if (t == NULL) return NULL;
    t->op = CT_OP_TRANSPOSE;
    ct_tensor_name_from(t, a, " (transposed)");
    return t;
}

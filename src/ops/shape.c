/* Shape op constructors (docs/TENSORS.md, Shape ops): REPEAT, CONCAT, PAD, ARANGE, ACC with
 * ggml's semantics and op_params. */
#include "tensor/tensor_internal.h"

#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#define NE4(t) (long long)(t)->ne[0], (long long)(t)->ne[1], (long long)(t)->ne[2], (long long)(t)->ne[3]

static ct_tensor *repeat_impl(const char *F, ct_context *ctx, ct_tensor *a, const int64_t ne[CT_MAX_DIMS]) {
    const ct_label la = ct_tensor_label(a, "a");
    if (ct_type_block_size(a->type) != 1) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be a type of single elements (not blocks)",
                            F, la.s, ct_type_name(a->type));
    }
    bool empty = false;
    for (int d = 0; d < CT_MAX_DIMS; d++) {
        if (ne[d] < 0) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: ne[%d]=%lld but must be >= 0", F, d, (long long)ne[d]);
        empty = empty || ne[d] == 0;
    }
    if (ct_is_empty(a) && !empty) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne=[%lld, %lld, %lld, %lld] is empty but the result "
                            "ne=[%lld, %lld, %lld, %lld] is not", F, la.s, NE4(a), (long long)ne[0], (long long)ne[1],
                            (long long)ne[2], (long long)ne[3]);
    }
    for (int d = 0; d < CT_MAX_DIMS && !ct_is_empty(a); d++) {
        if (ne[d] % a->ne[d] != 0) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: ne[%d]=%lld but must be a multiple of %s ne[%d]=%lld", F, d,
                                (long long)ne[d], la.s, d, (long long)a->ne[d]);
        }
    }
    ct_tensor *t = ct_tensor_new_impl(ctx, F, a->type, ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_REPEAT;
    t->src[0] = a;
    return t;
}

ct_tensor *ct_repeat(ct_context *ctx, ct_tensor *a, ct_tensor *b) {
    if (ct_op_check_args("ct_repeat", ctx, a, "a", b, "b", NULL, NULL) != CT_OK) return NULL;
    return repeat_impl("ct_repeat", ctx, a, b->ne);
}

ct_tensor *ct_repeat_4d(ct_context *ctx, ct_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    if (ct_op_check_args("ct_repeat_4d", ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return NULL;
    const int64_t ne[CT_MAX_DIMS] = {ne0, ne1, ne2, ne3};
    return repeat_impl("ct_repeat_4d", ctx, a, ne);
}

ct_tensor *ct_concat(ct_context *ctx, ct_tensor *a, ct_tensor *b, int dim) {
    const char *F = "ct_concat";
    if (ct_op_check_args(F, ctx, a, "a", b, "b", NULL, NULL) != CT_OK) return NULL;
    const ct_label la = ct_tensor_label(a, "a"), lb = ct_tensor_label(b, "b");
    if (dim < 0 || dim >= CT_MAX_DIMS) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: dim=%d but must be 0..3", F, dim);
    if (a->type != b->type) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but %s type=%s", F, la.s, ct_type_name(a->type), lb.s,
                            ct_type_name(b->type));
    }
    if (ct_type_block_size(a->type) != 1) {
        const size_t ts = ct_type_size(a->type);
        const ct_tensor *bad = a->ne[0] > ct_type_block_size(a->type) && a->nb[0] != ts ? a
                               : b->ne[0] > ct_type_block_size(b->type) && b->nb[0] != ts ? b : NULL;
        if (bad) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s nb[0]=%zu but the rows of a block type must be packed "
                                "(nb[0]=%zu)", F, bad == a ? la.s : lb.s, bad->nb[0], ts);
        }
    }
    int64_t ne[CT_MAX_DIMS];
    for (int d = 0; d < CT_MAX_DIMS; d++) {
        if (d != dim && a->ne[d] != b->ne[d]) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[%d]=%lld but %s ne[%d]=%lld (only dim %d may differ)", F,
                                la.s, d, (long long)a->ne[d], lb.s, d, (long long)b->ne[d], dim);
        }
        ne[d] = a->ne[d];
        if (d == dim && !ct_add_i64(a->ne[d], b->ne[d], &ne[d])) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[%d]=%lld plus %s ne[%d]=%lld overflows int64", F, la.s, d,
                                (long long)a->ne[d], lb.s, d, (long long)b->ne[d]);
        }
    }
    ct_tensor *t = ct_tensor_new_impl(ctx, F, a->type, ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_CONCAT;
    t->op_params[0] = dim;
    t->src[0] = a;
    t->src[1] = b;
    return t;
}

static ct_tensor *pad_impl(const char *F, ct_context *ctx, ct_tensor *a, const int p[8], bool circular) {
    if (ct_op_check_args(F, ctx, a, "a", NULL, NULL, NULL, NULL) != CT_OK) return NULL;
    const ct_label la = ct_tensor_label(a, "a");
    if (a->type != CT_TYPE_F32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32", F, la.s, ct_type_name(a->type));
    }
    int64_t ne[CT_MAX_DIMS];
    bool empty = false;
    for (int d = 0; d < CT_MAX_DIMS; d++) {
        if (p[2 * d] < 0 || p[2 * d + 1] < 0) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: lp%d=%d rp%d=%d but must be >= 0", F, d, p[2 * d], d,
                                p[2 * d + 1]);
        }
        if (!ct_add_i64(a->ne[d], (int64_t)p[2 * d] + p[2 * d + 1], &ne[d])) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[%d]=%lld plus lp%d=%d and rp%d=%d overflows int64", F,
                                la.s, d, (long long)a->ne[d], d, p[2 * d], d, p[2 * d + 1]);
        }
        empty = empty || ne[d] == 0;
    }
    if (circular && ct_is_empty(a) && !empty) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne=[%lld, %lld, %lld, %lld] is empty: nothing to wrap around",
                            F, la.s, NE4(a));
    }
    ct_tensor *t = ct_tensor_new_impl(ctx, F, a->type, ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_PAD;
    memcpy(t->op_params, p, 8 * sizeof(int32_t));
    t->op_params[8] = circular;
    t->src[0] = a;
    return t;
}

ct_tensor *ct_pad(ct_context *ctx, ct_tensor *a, int p0, int p1, int p2, int p3) {
    const int p[8] = {0, p0, 0, p1, 0, p2, 0, p3};
    return pad_impl("ct_pad", ctx, a, p, false);
}

ct_tensor *ct_pad_ext(ct_context *ctx, ct_tensor *a, int lp0, int rp0, int lp1, int rp1, int lp2, int rp2, int lp3,
                      int rp3) {
    const int p[8] = {lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3};
    return pad_impl("ct_pad_ext", ctx, a, p, false);
}

ct_tensor *ct_pad_ext_circular(ct_context *ctx, ct_tensor *a, int lp0, int rp0, int lp1, int rp1, int lp2, int rp2,
                               int lp3, int rp3) {
    const int p[8] = {lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3};
    return pad_impl("ct_pad_ext_circular", ctx, a, p, true);
}

ct_tensor *ct_arange(ct_context *ctx, float start, float stop, float step) {
    const char *F = "ct_arange";
    if (ct_op_check_args(F, ctx, NULL, NULL, NULL, NULL, NULL, NULL) != CT_OK) return NULL;
    if (!(isfinite(start) && isfinite(stop) && isfinite(step) && stop > start && step > 0.0f)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: start=%g stop=%g step=%g but must be finite with stop > start "
                            "and step > 0", F, (double)start, (double)stop, (double)step);
    }
    const float n = ceilf((stop - start) / step);
    if (!(n <= (float)INT32_MAX)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: start=%g stop=%g step=%g give %g values but at most %d", F,
                            (double)start, (double)stop, (double)step, (double)n, INT32_MAX);
    }
    const int64_t ne[CT_MAX_DIMS] = {(int64_t)n, 1, 1, 1};
    ct_tensor *t = ct_tensor_new_impl(ctx, F, CT_TYPE_F32, ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_ARANGE;
    ct_tensor_set_param_f32(t, 0, start);
    ct_tensor_set_param_f32(t, 1, stop);
    ct_tensor_set_param_f32(t, 2, step);
    return t;
}

/* The byte just past the last element of b's window in a (0 for an empty b; SIZE_MAX past
 * the range of size_t). */
static size_t acc_window_end(const ct_tensor *b, const size_t nb[4], size_t offset) {
    if (ct_is_empty(b)) return 0;
    size_t end = offset + sizeof(float);
    for (int d = 0; d < CT_MAX_DIMS; d++) {
        const size_t n = (size_t)(b->ne[d] - 1);
        if (nb[d] != 0 && n > (SIZE_MAX - end) / nb[d]) return SIZE_MAX;
        end += n * nb[d];
    }
    return end;
}

static ct_tensor *acc_impl(const char *F, ct_context *ctx, ct_tensor *a, ct_tensor *b, size_t nb1, size_t nb2,
                           size_t nb3, size_t offset, bool inplace) {
    if (ct_op_check_args(F, ctx, a, "a", b, "b", NULL, NULL) != CT_OK) return NULL;
    const ct_label la = ct_tensor_label(a, "a"), lb = ct_tensor_label(b, "b");
    if (a->type != CT_TYPE_F32 || b->type != CT_TYPE_F32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s and %s type=%s but both must be f32", F, la.s,
                            ct_type_name(a->type), lb.s, ct_type_name(b->type));
    }
    if (!ct_is_contiguous(a)) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s must be contiguous", F, la.s);
    if (!ct_is_contiguous_rows(b)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s nb[0]=%zu but its rows must be packed (nb[0]=4)", F, lb.s,
                            b->nb[0]);
    }
    if (ct_nelements(b) > ct_nelements(a)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s has %lld elements but %s only %lld", F, lb.s,
                            (long long)ct_nelements(b), la.s, (long long)ct_nelements(a));
    }
    const size_t v[4] = {nb1, nb2, nb3, offset};
    for (int i = 0; i < 4; i++) {
        if (v[i] % sizeof(float) != 0 || v[i] > (size_t)INT32_MAX) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: nb1=%zu nb2=%zu nb3=%zu offset=%zu but each must be a "
                                "multiple of 4 below 2^31", F, nb1, nb2, nb3, offset);
        }
    }
    const size_t nb[4] = {sizeof(float), nb1, nb2, nb3};
    const size_t end = acc_window_end(b, nb, offset);
    if (end > ct_nbytes(a)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: the window of %s (nb1=%zu nb2=%zu nb3=%zu offset=%zu) ends at "
                            "byte %zu but %s has %zu", F, lb.s, nb1, nb2, nb3, offset, end, la.s, ct_nbytes(a));
    }
    ct_tensor *t = inplace ? ct_view_impl(ctx, F, a, a->ne, a->nb, 0) : ct_tensor_new_impl(ctx, F, a->type, a->ne);
    if (t == NULL) return NULL;
    memset(t->op_params, 0, sizeof t->op_params);
    t->op = CT_OP_ACC;
    t->op_params[0] = (int32_t)nb1;
    t->op_params[1] = (int32_t)nb2;
    t->op_params[2] = (int32_t)nb3;
    t->op_params[3] = (int32_t)offset;
    t->op_params[4] = inplace;
    t->src[0] = a;
    t->src[1] = b;
    if (inplace) ct_tensor_name_from(t, a, " (view)");
    return t;
}

ct_tensor *ct_acc(ct_context *ctx, ct_tensor *a, ct_tensor *b, size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return acc_impl("ct_acc", ctx, a, b, nb1, nb2, nb3, offset, false);
}

ct_tensor *ct_acc_inplace(ct_context *ctx, ct_tensor *a, ct_tensor *b, size_t nb1, size_t nb2, size_t nb3,
                          size_t offset) {
    return acc_impl("ct_acc_inplace", ctx, a, b, nb1, nb2, nb3, offset, true);
}

bool ct_shape_node_valid(const ct_tensor *op) {
    if (!op) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1];
    for (int d = 0; d < CT_MAX_DIMS; d++)
        if (op->ne[d] < 0) return false;
    switch (op->op) {
    case CT_OP_REPEAT:
        if (!a || b || op->type != a->type || ct_type_block_size(a->type) != 1) return false;
        if (ct_is_empty(a)) return ct_is_empty(op);
        for (int d = 0; d < CT_MAX_DIMS; d++)
            if (op->ne[d] % a->ne[d] != 0) return false;
        return true;
    case CT_OP_CONCAT: {
        const int dim = op->op_params[0];
        if (!a || !b || a->type != op->type || b->type != op->type || dim < 0 || dim >= CT_MAX_DIMS) return false;
        for (int d = 0; d < CT_MAX_DIMS; d++)
            if (op->ne[d] != (d == dim ? a->ne[d] + b->ne[d] : a->ne[d]) || (d != dim && b->ne[d] != a->ne[d]))
                return false;
        if (ct_type_block_size(op->type) != 1) {
            const size_t ts = ct_type_size(op->type);
            const int64_t bs = ct_type_block_size(op->type);
            if ((a->ne[0] > bs && a->nb[0] != ts) || (b->ne[0] > bs && b->nb[0] != ts) || op->nb[0] != ts) return false;
        }
        return true;
    }
    case CT_OP_PAD: {
        if (!a || b || a->type != CT_TYPE_F32 || op->type != CT_TYPE_F32) return false;
        const int32_t *p = op->op_params;
        if (p[8] != 0 && p[8] != 1) return false;
        for (int d = 0; d < CT_MAX_DIMS; d++)
            if (p[2 * d] < 0 || p[2 * d + 1] < 0 || op->ne[d] != a->ne[d] + p[2 * d] + p[2 * d + 1]) return false;
        return !(p[8] && ct_is_empty(a) && !ct_is_empty(op));
    }
    case CT_OP_ARANGE: {
        if (a || b || op->type != CT_TYPE_F32) return false;
        float start, stop, step;
        memcpy(&start, &op->op_params[0], sizeof start);
        memcpy(&stop, &op->op_params[1], sizeof stop);
        memcpy(&step, &op->op_params[2], sizeof step);
        if (!(isfinite(start) && isfinite(stop) && isfinite(step) && stop > start && step > 0.0f)) return false;
        const float n = ceilf((stop - start) / step);
        return n <= (float)INT32_MAX && op->ne[0] == (int64_t)n && op->ne[1] == 1 && op->ne[2] == 1 && op->ne[3] == 1;
    }
    case CT_OP_ACC: {
        if (!a || !b || a->type != CT_TYPE_F32 || b->type != CT_TYPE_F32 || op->type != CT_TYPE_F32) return false;
        if (!ct_are_same_shape(a, op) || !ct_is_contiguous(a) || !ct_is_contiguous(op) || !ct_is_contiguous_rows(b))
            return false;
        const int32_t *p = op->op_params;
        for (int i = 0; i < 4; i++)
            if (p[i] < 0 || p[i] % 4 != 0) return false;
        if (p[4] != 0 && p[4] != 1) return false;
        const size_t nb[4] = {sizeof(float), (size_t)p[0], (size_t)p[1], (size_t)p[2]};
        return acc_window_end(b, nb, (size_t)p[3]) <= ct_nbytes(a);
    }
    default: return false;
    }
}

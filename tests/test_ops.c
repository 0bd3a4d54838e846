/* Op constructors: result type, shape, strides, op, sources and op_params for
 * good inputs (broadcasts, views, permutes, one-element and empty dims), and the
 * NULL result, status and message for every violated precondition. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static ct_context *ctx;

static ct_tensor *T4(ct_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    ct_tensor *t = ct_tensor_new_4d(ctx, type, ne0, ne1, ne2, ne3);
    CHECK_MSG(t != NULL, "%s", ct_last_error());
    return t;
}

static bool shape_is(const ct_tensor *t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    return t && t->ne[0] == ne0 && t->ne[1] == ne1 && t->ne[2] == ne2 && t->ne[3] == ne3;
}

/* A fresh (non-view) result with contiguous strides, own data, given type and shape. */
static bool fresh(const ct_tensor *t, ct_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    if (!t || t->type != type || !shape_is(t, ne0, ne1, ne2, ne3) || t->view_src != NULL) return false;
    size_t nb = ct_type_size(type);
    if (t->nb[0] != nb) return false;
    nb *= (size_t)(ne0 / ct_type_block_size(type));
    for (int i = 1; i < 4; i++) {
        if (t->nb[i] != nb) return false;
        nb *= (size_t)t->ne[i];
    }
    return t->data != NULL && t->buffer == NULL;
}

static bool srcs_are(const ct_tensor *t, const ct_tensor *s0, const ct_tensor *s1) {
    if (!t || t->src[0] != s0 || t->src[1] != s1) return false;
    for (int i = 2; i < CT_MAX_SRC; i++) {
        if (t->src[i] != NULL) return false;
    }
    return true;
}

static bool params_zero_from(const ct_tensor *t, int i0) {
    for (int i = i0; i < 16; i++) {
        if (t->op_params[i] != 0) return false;
    }
    return true;
}

static void test_get_rows(void) {
    ct_tensor *a = T4(CT_TYPE_F32, 5, 7, 3, 2);
    ct_tensor *b = T4(CT_TYPE_I32, 4, 3, 2, 1);
    ct_tensor *r = ct_get_rows(ctx, a, b);
    CHECK(fresh(r, CT_TYPE_F32, 5, 4, 3, 2) && r->op == CT_OP_GET_ROWS && srcs_are(r, a, b) && params_zero_from(r, 0));
    /* Quantized and F16 sources give F32; I32 stays I32. */
    ct_tensor *q = T4(CT_TYPE_Q4_0, 64, 10, 1, 1);
    ct_tensor *b1 = T4(CT_TYPE_I32, 3, 1, 1, 1);
    CHECK(fresh(ct_get_rows(ctx, q, b1), CT_TYPE_F32, 64, 3, 1, 1));
    CHECK(fresh(ct_get_rows(ctx, T4(CT_TYPE_F16, 6, 2, 1, 1), b1), CT_TYPE_F32, 6, 3, 1, 1));
    CHECK(fresh(ct_get_rows(ctx, T4(CT_TYPE_I32, 6, 2, 1, 1), b1), CT_TYPE_I32, 6, 3, 1, 1));
    /* Permuted source, a view of the indices, empty and one-element index sets. */
    ct_tensor *p = ct_permute(ctx, T4(CT_TYPE_F32, 5, 3, 7, 2), 0, 2, 1, 3); /* [5,7,3,2] */
    ct_tensor *bv = ct_view_3d(ctx, T4(CT_TYPE_I32, 8, 3, 2, 1), 4, 3, 2, 32, 96, 0);
    r = ct_get_rows(ctx, p, bv);
    CHECK(fresh(r, CT_TYPE_F32, 5, 4, 3, 2) && srcs_are(r, p, bv));
    CHECK(fresh(ct_get_rows(ctx, a, T4(CT_TYPE_I32, 0, 3, 2, 1)), CT_TYPE_F32, 5, 0, 3, 2));
    CHECK(fresh(ct_get_rows(ctx, T4(CT_TYPE_F32, 1, 1, 1, 1), T4(CT_TYPE_I32, 1, 1, 1, 1)), CT_TYPE_F32, 1, 1, 1, 1));

    CHECK(ct_get_rows(ctx, a, T4(CT_TYPE_F32, 4, 3, 2, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_get_rows: indices type=f32 but must be i32");
    CHECK(ct_get_rows(ctx, a, T4(CT_TYPE_I64, 4, 3, 2, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_get_rows: indices type=i64 but must be i32");
    CHECK(ct_get_rows(ctx, a, T4(CT_TYPE_I32, 4, 3, 2, 2)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_get_rows: indices ne[3]=2 but must be 1");
    CHECK(ct_get_rows(ctx, a, T4(CT_TYPE_I32, 4, 2, 2, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_get_rows: src ne[2]=3 but indices ne[1]=2");
    CHECK(ct_get_rows(ctx, a, T4(CT_TYPE_I32, 4, 3, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_get_rows: src ne[3]=2 but indices ne[2]=1");
    ct_tensor_set_name(a, "tok_embd");
    CHECK(ct_get_rows(ctx, a, T4(CT_TYPE_I32, 4, 3, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_get_rows: src \"tok_embd\" ne[3]=2 but indices ne[2]=1");
    CHECK(ct_get_rows(NULL, a, b) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_get_rows: ctx is NULL");
    CHECK(ct_get_rows(ctx, NULL, b) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_get_rows: a is NULL");
    CHECK(ct_get_rows(ctx, a, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_get_rows: b is NULL");
}

static void test_set_rows(void) {
    ct_tensor *a = T4(CT_TYPE_F16, 8, 10, 3, 2);
    ct_tensor *b = T4(CT_TYPE_F32, 8, 4, 3, 2);
    /* Indices broadcast over b's dims 2 and 3: c.ne1 = 1 divides 3, c.ne2 = 2 divides 2. */
    ct_tensor *c = T4(CT_TYPE_I64, 4, 1, 2, 1);
    ct_tensor *r = ct_set_rows(ctx, a, b, c);
    CHECK(r && r->op == CT_OP_SET_ROWS && srcs_are(r, b, c) && r->view_src == a && r->view_offs == 0);
    CHECK(r && r->type == a->type && ct_are_same_shape(r, a) && memcmp(r->nb, a->nb, sizeof a->nb) == 0);
    CHECK(r && r->data == a->data && params_zero_from(r, 0));
    /* Quantized destination, F16 source, I32 indices, full index tensor. */
    ct_tensor *q = T4(CT_TYPE_Q8_0, 64, 10, 1, 1);
    r = ct_set_rows(ctx, q, T4(CT_TYPE_F16, 64, 3, 1, 1), T4(CT_TYPE_I32, 3, 1, 1, 1));
    CHECK(r && r->type == CT_TYPE_Q8_0 && r->view_src == q && ct_are_same_shape(r, q));
    CHECK(ct_set_rows(ctx, a, b, T4(CT_TYPE_I32, 4, 3, 2, 1)) != NULL);
    /* Destination a view (rows 2.. of a cache): the result is a view of the root at its offset. */
    ct_tensor *cache = T4(CT_TYPE_F32, 16, 12, 1, 1);
    ct_tensor *dv = ct_view_2d(ctx, cache, 16, 10, cache->nb[1], 2 * cache->nb[1]);
    r = ct_set_rows(ctx, dv, T4(CT_TYPE_F32, 16, 5, 1, 1), T4(CT_TYPE_I64, 5, 1, 1, 1));
    CHECK(r && r->view_src == cache && r->view_offs == 128 && r->data == dv->data && ct_are_same_shape(r, dv));
    /* Permuted destination and source (dims 1 and 2 swapped): rows stay packed. */
    ct_tensor *ap = ct_permute(ctx, T4(CT_TYPE_F32, 8, 3, 10, 1), 0, 2, 1, 3); /* [8,10,3,1] */
    ct_tensor *bp = ct_permute(ctx, T4(CT_TYPE_F32, 8, 3, 4, 1), 0, 2, 1, 3); /* [8,4,3,1] */
    r = ct_set_rows(ctx, ap, bp, T4(CT_TYPE_I64, 4, 3, 1, 1));
    CHECK(r && memcmp(r->nb, ap->nb, sizeof ap->nb) == 0 && r->view_src == ap->view_src);
    /* Empty: no rows to write; empty batch dims with empty index dims. */
    CHECK(ct_set_rows(ctx, a, T4(CT_TYPE_F32, 8, 0, 3, 2), T4(CT_TYPE_I64, 0, 3, 2, 1)) != NULL);
    CHECK(ct_set_rows(ctx, T4(CT_TYPE_F32, 8, 10, 0, 2), T4(CT_TYPE_F32, 8, 4, 0, 2), T4(CT_TYPE_I64, 4, 0, 2, 1)) !=
          NULL);
    CHECK(ct_set_rows(ctx, T4(CT_TYPE_F32, 1, 1, 1, 1), T4(CT_TYPE_F32, 1, 1, 1, 1), T4(CT_TYPE_I64, 1, 1, 1, 1)) !=
          NULL);

    /* Every precondition, one at a time. */
    CHECK(ct_set_rows(ctx, T4(CT_TYPE_F32, 256, 4, 1, 1), T4(CT_TYPE_F32, 255, 2, 1, 1), T4(CT_TYPE_I64, 2, 1, 1, 1)) ==
          NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: src ne[0]=255 but dst ne[0]=256");
    CHECK(ct_set_rows(ctx, a, T4(CT_TYPE_I32, 8, 4, 3, 2), c) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: src type=i32 but must be f32 or f16");
    CHECK(ct_set_rows(ctx, a, T4(CT_TYPE_BF16, 8, 4, 3, 2), c) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: src type=bf16 but must be f32 or f16");
    CHECK(ct_set_rows(ctx, a, b, T4(CT_TYPE_F32, 4, 1, 2, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: indices type=f32 but must be i64 or i32");
    CHECK(ct_set_rows(ctx, a, T4(CT_TYPE_F32, 8, 4, 2, 2), c) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: src ne[2]=2 but dst ne[2]=3");
    CHECK(ct_set_rows(ctx, a, T4(CT_TYPE_F32, 8, 4, 3, 1), c) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: src ne[3]=1 but dst ne[3]=2");
    CHECK(ct_set_rows(ctx, a, b, T4(CT_TYPE_I64, 5, 1, 2, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: src ne[1]=4 but indices ne[0]=5");
    CHECK(ct_set_rows(ctx, a, b, T4(CT_TYPE_I64, 4, 2, 2, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: src ne[2]=3 is not a multiple of indices ne[1]=2");
    CHECK(ct_set_rows(ctx, a, b, T4(CT_TYPE_I64, 4, 0, 2, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: src ne[2]=3 is not a multiple of indices ne[1]=0");
    CHECK(ct_set_rows(ctx, a, b, T4(CT_TYPE_I64, 4, 1, 3, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: src ne[3]=2 is not a multiple of indices ne[2]=3");
    CHECK(ct_set_rows(ctx, a, b, T4(CT_TYPE_I64, 4, 1, 0, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: src ne[3]=2 is not a multiple of indices ne[2]=0");
    CHECK(ct_set_rows(ctx, a, b, T4(CT_TYPE_I64, 4, 1, 2, 2)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: indices ne[3]=2 but must be 1");
    ct_tensor *at = ct_transpose(ctx, T4(CT_TYPE_F32, 10, 8, 1, 1)); /* [8,10], nb0 = 40 */
    CHECK(ct_set_rows(ctx, at, T4(CT_TYPE_F32, 8, 4, 1, 1), T4(CT_TYPE_I64, 4, 1, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: dst rows are not contiguous (nb[0]=40, type size 4)");
    ct_tensor *bt = ct_transpose(ctx, T4(CT_TYPE_F32, 4, 8, 1, 1)); /* [8,4], nb0 = 16 */
    CHECK(ct_set_rows(ctx, T4(CT_TYPE_F32, 8, 10, 1, 1), bt, T4(CT_TYPE_I64, 4, 1, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: src rows are not contiguous (nb[0]=16, type size 4)");
    ct_tensor_set_name(a, "cache_k");
    CHECK(ct_set_rows(ctx, a, T4(CT_TYPE_F32, 7, 4, 3, 2), c) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: src ne[0]=7 but dst \"cache_k\" ne[0]=8");
    CHECK(ct_set_rows(NULL, a, b, c) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: ctx is NULL");
    CHECK(ct_set_rows(ctx, NULL, b, c) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: a is NULL");
    CHECK(ct_set_rows(ctx, a, NULL, c) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: b is NULL");
    CHECK(ct_set_rows(ctx, a, b, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_rows: c is NULL");
}

static void test_mul_mat(void) {
    ct_tensor *a = T4(CT_TYPE_F16, 32, 6, 2, 3);
    ct_tensor *b = T4(CT_TYPE_F32, 32, 5, 4, 6); /* broadcast a by 2 and 2 */
    ct_tensor *r = ct_mul_mat(ctx, a, b);
    CHECK(fresh(r, CT_TYPE_F32, 6, 5, 4, 6) && r->op == CT_OP_MUL_MAT && srcs_are(r, a, b) && params_zero_from(r, 0));
    CHECK(fresh(ct_mul_mat(ctx, T4(CT_TYPE_Q4_0, 64, 8, 1, 1), T4(CT_TYPE_F32, 64, 3, 1, 1)), CT_TYPE_F32, 8, 3, 1, 1));
    /* Permuted operands (not transposed) are fine; so is a transposed b. */
    ct_tensor *ap = ct_permute(ctx, T4(CT_TYPE_F32, 32, 2, 6, 3), 0, 2, 1, 3); /* [32,6,2,3] */
    ct_tensor *bt = ct_transpose(ctx, T4(CT_TYPE_F32, 5, 32, 4, 6));          /* [32,5,4,6] */
    CHECK(fresh(ct_mul_mat(ctx, ap, bt), CT_TYPE_F32, 6, 5, 4, 6));
    /* One-element and empty dims. */
    CHECK(fresh(ct_mul_mat(ctx, T4(CT_TYPE_F32, 1, 1, 1, 1), T4(CT_TYPE_F32, 1, 1, 1, 1)), CT_TYPE_F32, 1, 1, 1, 1));
    CHECK(fresh(ct_mul_mat(ctx, T4(CT_TYPE_F32, 4, 0, 1, 1), T4(CT_TYPE_F32, 4, 3, 1, 1)), CT_TYPE_F32, 0, 3, 1, 1));
    CHECK(fresh(ct_mul_mat(ctx, T4(CT_TYPE_F32, 4, 2, 0, 1), T4(CT_TYPE_F32, 4, 3, 0, 1)), CT_TYPE_F32, 2, 3, 0, 1));
    CHECK(fresh(ct_mul_mat(ctx, T4(CT_TYPE_F32, 4, 2, 3, 1), T4(CT_TYPE_F32, 4, 3, 0, 1)), CT_TYPE_F32, 2, 3, 0, 1));
    CHECK(fresh(ct_mul_mat(ctx, T4(CT_TYPE_F32, 0, 2, 1, 1), T4(CT_TYPE_F32, 0, 3, 1, 1)), CT_TYPE_F32, 2, 3, 1, 1));

    CHECK(ct_mul_mat(ctx, a, T4(CT_TYPE_F32, 16, 5, 4, 6)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat: a ne[0]=32 but b ne[0]=16");
    CHECK(ct_mul_mat(ctx, a, T4(CT_TYPE_F32, 32, 5, 3, 6)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat: b ne[2]=3 is not a multiple of a ne[2]=2");
    CHECK(ct_mul_mat(ctx, a, T4(CT_TYPE_F32, 32, 5, 4, 4)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat: b ne[3]=4 is not a multiple of a ne[3]=3");
    CHECK(ct_mul_mat(ctx, T4(CT_TYPE_F32, 4, 2, 0, 1), T4(CT_TYPE_F32, 4, 3, 2, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat: b ne[2]=2 is not a multiple of a ne[2]=0");
    CHECK(ct_mul_mat(ctx, T4(CT_TYPE_F32, 4, 2, 1, 0), T4(CT_TYPE_F32, 4, 3, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat: b ne[3]=1 is not a multiple of a ne[3]=0");
    ct_tensor *at = ct_transpose(ctx, T4(CT_TYPE_F32, 6, 32, 1, 1)); /* [32,6], nb [24,4] */
    CHECK(ct_mul_mat(ctx, at, T4(CT_TYPE_F32, 32, 5, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat: a is transposed: nb[0]=24 but nb[1]=4");
    CHECK(ct_mul_mat(NULL, a, b) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat: ctx is NULL");
    CHECK(ct_mul_mat(ctx, NULL, b) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat: a is NULL");
    CHECK(ct_mul_mat(ctx, a, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat: b is NULL");
}

static void test_copies(void) {
    /* cpy: a view of b, whatever the shapes, as long as the counts match. */
    ct_tensor *a = T4(CT_TYPE_F32, 8, 6, 1, 1);
    ct_tensor *b = T4(CT_TYPE_F16, 6, 8, 1, 1);
    ct_tensor *r = ct_cpy(ctx, a, b);
    CHECK(r && r->op == CT_OP_CPY && srcs_are(r, a, b) && r->view_src == b && r->view_offs == 0);
    CHECK(r && r->type == CT_TYPE_F16 && ct_are_same_shape(r, b) && memcmp(r->nb, b->nb, sizeof b->nb) == 0);
    CHECK(r && r->data == b->data && params_zero_from(r, 0));
    ct_tensor *q = T4(CT_TYPE_Q8_0, 128, 1, 1, 1);
    CHECK(ct_cpy(ctx, T4(CT_TYPE_F32, 64, 2, 1, 1), q) != NULL);
    CHECK(ct_cpy(ctx, q, T4(CT_TYPE_F32, 32, 4, 1, 1)) != NULL);
    /* Into a view of a bigger tensor, from a permuted source. */
    ct_tensor *big = T4(CT_TYPE_F32, 8, 10, 1, 1);
    ct_tensor *dv = ct_view_2d(ctx, big, 8, 6, big->nb[1], 4 * big->nb[1]);
    ct_tensor *ap = ct_permute(ctx, T4(CT_TYPE_F32, 6, 8, 1, 1), 1, 0, 2, 3);
    r = ct_cpy(ctx, ap, dv);
    CHECK(r && r->view_src == big && r->view_offs == 128 && r->src[1] == dv && r->data == dv->data);
    CHECK(ct_cpy(ctx, T4(CT_TYPE_F32, 0, 3, 1, 1), T4(CT_TYPE_F16, 5, 0, 1, 1)) != NULL);
    ct_tensor_set_name(a, "k");
    ct_tensor_set_name(b, "cache");
    r = ct_cpy(ctx, a, b);
    CHECK(r && strcmp(r->name, "cache (copy of k)") == 0);

    CHECK(ct_cpy(ctx, T4(CT_TYPE_F32, 8, 6, 1, 1), T4(CT_TYPE_F32, 50, 1, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cpy: src has 48 elements but dst has 50");
    CHECK(ct_cpy(ctx, T4(CT_TYPE_F32, 48, 4, 1, 1), T4(CT_TYPE_Q8_0, 192, 1, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cpy: src ne[0]=48 is not a multiple of dst type q8_0's block size 32");
    CHECK(ct_cpy(NULL, a, b) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cpy: ctx is NULL");
    CHECK(ct_cpy(ctx, NULL, b) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cpy: a is NULL");
    CHECK(ct_cpy(ctx, a, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cpy: b is NULL");

    /* cast: a new tensor naming itself as the destination. */
    ct_tensor *x = T4(CT_TYPE_F32, 64, 3, 2, 1);
    r = ct_cast(ctx, x, CT_TYPE_Q4_0);
    CHECK(fresh(r, CT_TYPE_Q4_0, 64, 3, 2, 1) && r->op == CT_OP_CPY && srcs_are(r, x, r));
    ct_tensor *xp = ct_permute(ctx, x, 1, 0, 2, 3); /* [3,64,2,1] */
    CHECK(fresh(ct_cast(ctx, xp, CT_TYPE_F16), CT_TYPE_F16, 3, 64, 2, 1));
    CHECK(fresh(ct_cast(ctx, T4(CT_TYPE_Q8_0, 32, 0, 1, 1), CT_TYPE_F32), CT_TYPE_F32, 32, 0, 1, 1));
    CHECK(ct_cast(ctx, xp, CT_TYPE_Q4_0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cast: src ne[0]=3 is not a multiple of dst type q4_0's block size 32");
    CHECK(ct_cast(ctx, x, CT_TYPE_COUNT) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cast: type=39 is not a valid type id");
    CHECK(ct_cast(ctx, x, (ct_type)5) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cast: type=5 is not a valid type id");
    CHECK(ct_cast(NULL, x, CT_TYPE_F16) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cast: ctx is NULL");
    CHECK(ct_cast(ctx, NULL, CT_TYPE_F16) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cast: a is NULL");

    /* dup and cont: contiguous copies of a's type and shape. */
    r = ct_dup(ctx, xp);
    CHECK(fresh(r, CT_TYPE_F32, 3, 64, 2, 1) && r->op == CT_OP_DUP && srcs_are(r, xp, NULL));
    r = ct_cont(ctx, xp);
    CHECK(fresh(r, CT_TYPE_F32, 3, 64, 2, 1) && r->op == CT_OP_CONT && srcs_are(r, xp, NULL));
    CHECK(fresh(ct_cont(ctx, ct_view_1d(ctx, q, 64, 34)), CT_TYPE_Q8_0, 64, 1, 1, 1));
    CHECK(fresh(ct_dup(ctx, T4(CT_TYPE_I32, 0, 2, 1, 1)), CT_TYPE_I32, 0, 2, 1, 1));
    CHECK(ct_dup(ctx, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_dup: a is NULL");
    CHECK(ct_cont(NULL, x) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cont: ctx is NULL");
}

typedef ct_tensor *(*norm_fn)(ct_context *, ct_tensor *, float);

static void test_norms(void) {
    const struct {
        norm_fn fn;
        ct_op op;
        const char *name;
    } norms[] = {{ct_norm, CT_OP_NORM, "ct_norm"}, {ct_rms_norm, CT_OP_RMS_NORM, "ct_rms_norm"},
                 {ct_l2_norm, CT_OP_L2_NORM, "ct_l2_norm"}};
    char msg[128];
    for (int k = 0; k < 3; k++) {
        ct_tensor *a = T4(CT_TYPE_F32, 7, 3, 2, 1);
        const float eps = tu_rand_uniform(0.0f, 1e-3f);
        ct_tensor *r = norms[k].fn(ctx, a, eps);
        CHECK(fresh(r, CT_TYPE_F32, 7, 3, 2, 1) && r->op == norms[k].op && srcs_are(r, a, NULL));
        CHECK(r && ct_op_param_f32(r, 0) == eps && params_zero_from(r, 1));
        /* A permuted input gives a contiguous result of its shape; eps 0 and one-element rows are fine. */
        ct_tensor *p = ct_permute(ctx, a, 2, 0, 1, 3); /* [3,2,7,1] */
        CHECK(fresh(norms[k].fn(ctx, p, 0.0f), CT_TYPE_F32, 3, 2, 7, 1));
        CHECK(fresh(norms[k].fn(ctx, T4(CT_TYPE_F32, 1, 1, 1, 1), 1e-6f), CT_TYPE_F32, 1, 1, 1, 1));
        CHECK(fresh(norms[k].fn(ctx, T4(CT_TYPE_F32, 0, 4, 1, 1), 1e-6f), CT_TYPE_F32, 0, 4, 1, 1));

        CHECK(norms[k].fn(ctx, T4(CT_TYPE_F16, 7, 3, 1, 1), 1e-6f) == NULL);
        snprintf(msg, sizeof msg, "%s: src type=f16 but must be f32", norms[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(norms[k].fn(ctx, T4(CT_TYPE_Q8_0, 32, 1, 1, 1), 1e-6f) == NULL);
        snprintf(msg, sizeof msg, "%s: src type=q8_0 but must be f32", norms[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(norms[k].fn(ctx, a, -1.0f) == NULL);
        snprintf(msg, sizeof msg, "%s: eps=-1 but must be finite and >= 0", norms[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(norms[k].fn(ctx, a, NAN) == NULL);
        CHECK_ERROR(CT_INVALID_ARGUMENT, "but must be finite and >= 0");
        CHECK(norms[k].fn(ctx, a, INFINITY) == NULL);
        CHECK_ERROR(CT_INVALID_ARGUMENT, "eps=inf but must be finite");
        CHECK(norms[k].fn(ctx, a, -1e-30f) == NULL);
        CHECK_ERROR(CT_INVALID_ARGUMENT, "eps=-1e-30");
        CHECK(norms[k].fn(NULL, a, 0.0f) == NULL);
        snprintf(msg, sizeof msg, "%s: ctx is NULL", norms[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(norms[k].fn(ctx, NULL, 0.0f) == NULL);
        snprintf(msg, sizeof msg, "%s: a is NULL", norms[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
    }

    ct_tensor *a = T4(CT_TYPE_F32, 4, 5, 6, 2);
    ct_tensor *r = ct_group_norm(ctx, a, 4, 1e-6f);
    CHECK(fresh(r, CT_TYPE_F32, 4, 5, 6, 2) && r->op == CT_OP_GROUP_NORM && srcs_are(r, a, NULL));
    CHECK(r && ct_op_param_i32(r, 0) == 4 && ct_op_param_f32(r, 1) == 1e-6f && params_zero_from(r, 2));
    CHECK(ct_group_norm(ctx, a, 1, 0.0f) != NULL);
    CHECK(ct_group_norm(ctx, a, 100, 0.0f) != NULL); /* more groups than channels: empty groups */
    CHECK(ct_group_norm(ctx, a, 0, 1e-6f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_group_norm: n_groups=0 but must be >= 1");
    CHECK(ct_group_norm(ctx, a, -3, 1e-6f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_group_norm: n_groups=-3 but must be >= 1");
    CHECK(ct_group_norm(ctx, a, 2, -0.5f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_group_norm: eps=-0.5 but must be finite and >= 0");
    CHECK(ct_group_norm(ctx, T4(CT_TYPE_BF16, 4, 5, 6, 1), 2, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_group_norm: src type=bf16 but must be f32");
    CHECK(ct_group_norm(ctx, NULL, 2, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_group_norm: a is NULL");
}

static void test_sum_rows(void) {
    ct_tensor *a = T4(CT_TYPE_F32, 7, 3, 2, 4);
    ct_tensor *r = ct_sum_rows(ctx, a);
    CHECK(fresh(r, CT_TYPE_F32, 1, 3, 2, 4) && r->op == CT_OP_SUM_ROWS && srcs_are(r, a, NULL) && params_zero_from(r, 0));
    r = ct_mean(ctx, a);
    CHECK(fresh(r, CT_TYPE_F32, 1, 3, 2, 4) && r->op == CT_OP_MEAN && srcs_are(r, a, NULL));
    ct_tensor *p = ct_permute(ctx, a, 1, 0, 2, 3); /* [3,7,2,4] */
    CHECK(fresh(ct_sum_rows(ctx, p), CT_TYPE_F32, 1, 7, 2, 4));
    CHECK(fresh(ct_mean(ctx, ct_view_2d(ctx, a, 3, 2, a->nb[1], 8)), CT_TYPE_F32, 1, 2, 1, 1));
    CHECK(fresh(ct_sum_rows(ctx, T4(CT_TYPE_F32, 0, 3, 1, 1)), CT_TYPE_F32, 1, 3, 1, 1));
    CHECK(fresh(ct_mean(ctx, T4(CT_TYPE_F32, 5, 0, 2, 1)), CT_TYPE_F32, 1, 0, 2, 1));
    CHECK(fresh(ct_sum_rows(ctx, T4(CT_TYPE_F32, 1, 1, 1, 1)), CT_TYPE_F32, 1, 1, 1, 1));

    CHECK(ct_sum_rows(ctx, T4(CT_TYPE_F16, 7, 3, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_sum_rows: src type=f16 but must be f32");
    CHECK(ct_mean(ctx, T4(CT_TYPE_I32, 7, 3, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mean: src type=i32 but must be f32");
    CHECK(ct_sum_rows(NULL, a) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_sum_rows: ctx is NULL");
    CHECK(ct_mean(ctx, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mean: a is NULL");
}

static void test_unary(void) {
    CHECK(strcmp(ct_unary_op_name(CT_UNARY_OP_ABS), "ABS") == 0 && strcmp(ct_unary_op_name(CT_UNARY_OP_GELU), "GELU") == 0);
    CHECK(strcmp(ct_unary_op_name(CT_UNARY_OP_GELU_ERF), "GELU_ERF") == 0);
    CHECK(strcmp(ct_unary_op_name(CT_UNARY_OP_TRUNC), "TRUNC") == 0 && CT_UNARY_OP_TRUNC == 21);
    CHECK(strcmp(ct_unary_op_name(CT_UNARY_OP_COUNT), "INVALID") == 0);
    CHECK(strcmp(ct_unary_op_name((ct_unary_op)-1), "INVALID") == 0);
    for (int op = 0; op < CT_UNARY_OP_COUNT; op++) {
        if (op == CT_UNARY_OP_XIELU) continue;
        ct_tensor *a = T4(op % 2 ? CT_TYPE_F16 : CT_TYPE_F32, 7, 3, 2, 1);
        ct_tensor *r = ct_unary(ctx, a, (ct_unary_op)op);
        CHECK(fresh(r, a->type, 7, 3, 2, 1) && r->op == CT_OP_UNARY && srcs_are(r, a, NULL) &&
              r->op_params[0] == op && params_zero_from(r, 1));
    }
    ct_tensor *a = T4(CT_TYPE_F32, 6, 4, 3, 2);
    /* rows of a view, and one-element rows of a transpose */
    CHECK(fresh(ct_unary(ctx, ct_view_3d(ctx, a, 3, 2, 3, a->nb[1], a->nb[2], 4), CT_UNARY_OP_SILU), CT_TYPE_F32, 3,
                2, 3, 1));
    CHECK(fresh(ct_unary(ctx, ct_view_2d(ctx, a, 1, 5, a->nb[1], 0), CT_UNARY_OP_RELU), CT_TYPE_F32, 1, 5, 1, 1));
    CHECK(fresh(ct_unary(ctx, T4(CT_TYPE_F16, 0, 3, 1, 1), CT_UNARY_OP_EXP), CT_TYPE_F16, 0, 3, 1, 1));
    ct_tensor *r = ct_xielu(ctx, a, 0.8f, 0.8f, 0.5f, -1e-6f);
    CHECK(fresh(r, CT_TYPE_F32, 6, 4, 3, 2) && r->op == CT_OP_UNARY && r->op_params[0] == CT_UNARY_OP_XIELU);
    CHECK(r && ct_op_param_f32(r, 1) == 0.5f + logf(1.0f + expf(0.8f)) && ct_op_param_f32(r, 2) == logf(1.0f + expf(0.8f)));
    CHECK(r && ct_op_param_f32(r, 3) == 0.5f && ct_op_param_f32(r, 4) == -1e-6f && params_zero_from(r, 5));
    CHECK(r && ct_op_param_f32(ct_xielu(ctx, a, 30.0f, 25.0f, 0.0f, 0.0f), 2) == 25.0f);

    CHECK(ct_unary(ctx, ct_transpose(ctx, a), CT_UNARY_OP_GELU) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_unary: src nb[0]=24 but its rows must be packed (nb[0]=4)");
    CHECK(ct_unary(ctx, T4(CT_TYPE_BF16, 4, 1, 1, 1), CT_UNARY_OP_GELU) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_unary: src type=bf16 but must be f32 or f16");
    CHECK(ct_unary(ctx, T4(CT_TYPE_Q8_0, 32, 1, 1, 1), CT_UNARY_OP_NEG) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_unary: src type=q8_0 but must be f32 or f16");
    CHECK(ct_unary(ctx, a, CT_UNARY_OP_XIELU) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_unary: op=17 but must be a ct_unary_op other than XIELU (17)");
    CHECK(ct_unary(ctx, a, CT_UNARY_OP_COUNT) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_unary: op=22 but must be");
    CHECK(ct_unary(ctx, a, (ct_unary_op)-1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_unary: op=-1 but must be");
    CHECK(ct_unary(NULL, a, CT_UNARY_OP_ABS) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_unary: ctx is NULL");
    CHECK(ct_unary(ctx, NULL, CT_UNARY_OP_ABS) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_unary: a is NULL");
    CHECK(ct_xielu(ctx, a, NAN, 0.8f, 0.5f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_xielu: alpha_n=nan alpha_p=0.8 beta=0.5 eps=0 but must be finite");
    CHECK(ct_xielu(ctx, a, 0.8f, 0.8f, 0.5f, INFINITY) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_xielu: alpha_n=0.8 alpha_p=0.8 beta=0.5 eps=inf but must be finite");
    CHECK(ct_xielu(ctx, T4(CT_TYPE_I32, 4, 1, 1, 1), 0.8f, 0.8f, 0.5f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_xielu: src type=i32 but must be f32 or f16");
}

static void test_scale(void) {
    ct_tensor *a = T4(CT_TYPE_F32, 6, 4, 3, 2);
    ct_tensor *r = ct_scale(ctx, a, 2.5f);
    CHECK(fresh(r, CT_TYPE_F32, 6, 4, 3, 2) && r->op == CT_OP_SCALE && srcs_are(r, a, NULL));
    CHECK(r && ct_op_param_f32(r, 0) == 2.5f && r->op_params[1] == 0 && params_zero_from(r, 2));
    r = ct_scale_bias(ctx, T4(CT_TYPE_F16, 5, 3, 1, 1), -0.5f, 3.0f);
    CHECK(fresh(r, CT_TYPE_F16, 5, 3, 1, 1) && r->op == CT_OP_SCALE);
    CHECK(r && ct_op_param_f32(r, 0) == -0.5f && ct_op_param_f32(r, 1) == 3.0f && params_zero_from(r, 2));
    CHECK(fresh(ct_scale(ctx, ct_view_2d(ctx, a, 3, 5, a->nb[1], 8), 2.0f), CT_TYPE_F32, 3, 5, 1, 1));
    CHECK(fresh(ct_scale(ctx, T4(CT_TYPE_F32, 0, 2, 1, 1), 2.0f), CT_TYPE_F32, 0, 2, 1, 1));

    CHECK(ct_scale(ctx, ct_transpose(ctx, a), 2.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_scale: src nb[0]=24 but its rows must be packed (nb[0]=4)");
    CHECK(ct_scale_bias(ctx, T4(CT_TYPE_BF16, 4, 1, 1, 1), 2.0f, 1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_scale_bias: src type=bf16 but must be f32 or f16");
    CHECK(ct_scale(ctx, T4(CT_TYPE_Q4_0, 32, 1, 1, 1), 2.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_scale: src type=q4_0 but must be f32 or f16");
    CHECK(ct_scale(NULL, a, 1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_scale: ctx is NULL");
    CHECK(ct_scale_bias(ctx, NULL, 1.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_scale_bias: a is NULL");
}

typedef ct_tensor *(*binary_fn)(ct_context *, ct_tensor *, ct_tensor *);

static void test_binary(void) {
    static const struct {
        binary_fn fn;
        ct_op op;
        const char *name;
    } ops[] = {{ct_add, CT_OP_ADD, "ct_add"}, {ct_sub, CT_OP_SUB, "ct_sub"}, {ct_mul, CT_OP_MUL, "ct_mul"},
               {ct_div, CT_OP_DIV, "ct_div"}};
    char msg[256];
    ct_tensor *a = T4(CT_TYPE_F32, 8, 6, 4, 2);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        binary_fn fn = ops[k].fn;
        /* same shape, broadcast rows, a scalar, every dim repeated */
        ct_tensor *b = T4(CT_TYPE_F32, 8, 6, 4, 2);
        ct_tensor *r = fn(ctx, a, b);
        CHECK(fresh(r, CT_TYPE_F32, 8, 6, 4, 2) && r->op == ops[k].op && srcs_are(r, a, b) && params_zero_from(r, 0));
        CHECK(fresh(fn(ctx, a, T4(CT_TYPE_F32, 8, 1, 1, 1)), CT_TYPE_F32, 8, 6, 4, 2));
        CHECK(fresh(fn(ctx, a, T4(CT_TYPE_F32, 1, 1, 1, 1)), CT_TYPE_F32, 8, 6, 4, 2));
        CHECK(fresh(fn(ctx, a, T4(CT_TYPE_F32, 4, 3, 2, 1)), CT_TYPE_F32, 8, 6, 4, 2));
        CHECK(fresh(fn(ctx, a, T4(CT_TYPE_F32, 1, 6, 1, 2)), CT_TYPE_F32, 8, 6, 4, 2));
        /* the type pairs; the result has a's type */
        ct_tensor *h = T4(CT_TYPE_F16, 8, 6, 1, 1);
        CHECK(fresh(fn(ctx, h, T4(CT_TYPE_F16, 8, 1, 1, 1)), CT_TYPE_F16, 8, 6, 1, 1));
        CHECK(fresh(fn(ctx, h, T4(CT_TYPE_F32, 8, 6, 1, 1)), CT_TYPE_F16, 8, 6, 1, 1));
        /* views: a permuted src1, a permuted src0, overlapping views of one tensor */
        ct_tensor *pb = ct_permute(ctx, T4(CT_TYPE_F32, 6, 4, 8, 1), 1, 2, 0, 3); /* [8,6,4,1] */
        CHECK(fresh(fn(ctx, a, pb), CT_TYPE_F32, 8, 6, 4, 2));
        ct_tensor *pa = ct_transpose(ctx, a); /* [6,8,4,2] */
        CHECK(fresh(fn(ctx, pa, T4(CT_TYPE_F32, 6, 1, 4, 1)), CT_TYPE_F32, 6, 8, 4, 2));
        ct_tensor *v0 = ct_view_2d(ctx, a, 8, 3, a->nb[1], 0), *v1 = ct_view_2d(ctx, a, 8, 3, a->nb[1], a->nb[1]);
        CHECK(fresh(fn(ctx, v0, v1), CT_TYPE_F32, 8, 3, 1, 1));
        /* empty: b empty with a empty; a empty with b not */
        CHECK(fresh(fn(ctx, T4(CT_TYPE_F32, 0, 3, 1, 1), T4(CT_TYPE_F32, 0, 1, 1, 1)), CT_TYPE_F32, 0, 3, 1, 1));
        CHECK(fresh(fn(ctx, T4(CT_TYPE_F32, 0, 3, 1, 1), T4(CT_TYPE_F32, 4, 1, 1, 1)), CT_TYPE_F32, 0, 3, 1, 1));

        CHECK(fn(ctx, a, T4(CT_TYPE_F32, 3, 1, 1, 1)) == NULL);
        snprintf(msg, sizeof msg, "%s: b ne=[3,1,1,1] does not repeat to a ne=[8,6,4,2]", ops[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(fn(ctx, T4(CT_TYPE_F32, 8, 1, 1, 1), T4(CT_TYPE_F32, 8, 2, 1, 1)) == NULL);
        snprintf(msg, sizeof msg, "%s: b ne=[8,2,1,1] does not repeat to a ne=[8,1,1,1]", ops[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(fn(ctx, T4(CT_TYPE_F32, 4, 1, 1, 1), T4(CT_TYPE_F32, 0, 1, 1, 1)) == NULL);
        snprintf(msg, sizeof msg, "%s: b ne=[0,1,1,1] does not repeat to a ne=[4,1,1,1]", ops[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(fn(ctx, a, T4(CT_TYPE_F16, 8, 1, 1, 1)) == NULL);
        snprintf(msg, sizeof msg,
                 "%s: a type=f32 and b type=f16 but must be f32 and f32, f16 and f16, or f16 and f32", ops[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(fn(ctx, T4(CT_TYPE_BF16, 8, 1, 1, 1), T4(CT_TYPE_BF16, 8, 1, 1, 1)) == NULL);
        snprintf(msg, sizeof msg, "%s: a type=bf16 and b type=bf16", ops[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(fn(ctx, T4(CT_TYPE_Q8_0, 32, 1, 1, 1), T4(CT_TYPE_F32, 32, 1, 1, 1)) == NULL);
        snprintf(msg, sizeof msg, "%s: a type=q8_0 and b type=f32", ops[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(fn(NULL, a, a) == NULL);
        snprintf(msg, sizeof msg, "%s: ctx is NULL", ops[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(fn(ctx, NULL, a) == NULL);
        snprintf(msg, sizeof msg, "%s: a is NULL", ops[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(fn(ctx, a, NULL) == NULL);
        snprintf(msg, sizeof msg, "%s: b is NULL", ops[k].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
    }

    /* ADD1: a scalar b of any shape of one element; a padded 1-d */
    ct_tensor *s = T4(CT_TYPE_F32, 1, 1, 1, 1);
    ct_tensor *r = ct_add1(ctx, a, s);
    CHECK(fresh(r, CT_TYPE_F32, 8, 6, 4, 2) && r->op == CT_OP_ADD1 && srcs_are(r, a, s) && params_zero_from(r, 0));
    CHECK(fresh(ct_add1(ctx, T4(CT_TYPE_F16, 5, 3, 1, 1), T4(CT_TYPE_F16, 1, 1, 1, 1)), CT_TYPE_F16, 5, 3, 1, 1));
    CHECK(fresh(ct_add1(ctx, T4(CT_TYPE_F16, 5, 3, 1, 1), s), CT_TYPE_F16, 5, 3, 1, 1));
    CHECK(fresh(ct_add1(ctx, ct_view_2d(ctx, a, 4, 6, a->nb[1], 0), s), CT_TYPE_F32, 4, 6, 1, 1));
    CHECK(fresh(ct_add1(ctx, T4(CT_TYPE_F32, 0, 2, 1, 1), s), CT_TYPE_F32, 0, 2, 1, 1));
    CHECK(ct_add1(ctx, a, T4(CT_TYPE_F32, 2, 1, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add1: b ne=[2,1,1,1] but must be a scalar (one element)");
    CHECK(ct_add1(ctx, a, T4(CT_TYPE_F32, 0, 1, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add1: b ne=[0,1,1,1] but must be a scalar");
    CHECK(ct_add1(ctx, ct_transpose(ctx, a), s) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add1: a nb=[32,4,192,768] but must be padded 1-d");
    CHECK(ct_add1(ctx, ct_view_3d(ctx, a, 8, 3, 2, a->nb[1], a->nb[2], 0), s) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add1: a nb=[4,32,192,384] but must be padded 1-d");
    CHECK(ct_add1(ctx, a, T4(CT_TYPE_F16, 1, 1, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add1: a type=f32 and b type=f16 but must be");
    CHECK(ct_add1(ctx, NULL, s) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add1: a is NULL");
    CHECK(ct_add1(ctx, a, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add1: b is NULL");
}

static void test_soft_max(void) {
    ct_tensor *a = T4(CT_TYPE_F32, 10, 5, 4, 3);
    ct_tensor *r = ct_soft_max(ctx, a);
    CHECK(fresh(r, CT_TYPE_F32, 10, 5, 4, 3) && r->op == CT_OP_SOFT_MAX && srcs_are(r, a, NULL));
    CHECK(r && ct_op_param_f32(r, 0) == 1.0f && ct_op_param_f32(r, 1) == 0.0f && params_zero_from(r, 2));
    /* masks of either type, taller than a and broadcast over dims 2 and 3; sinks one per head */
    ct_tensor *m = T4(CT_TYPE_F16, 10, 8, 2, 1), *s = T4(CT_TYPE_F32, 4, 1, 1, 1);
    r = ct_soft_max_ext(ctx, a, m, s, 0.125f, 8.0f);
    CHECK(fresh(r, CT_TYPE_F32, 10, 5, 4, 3) && r && r->src[0] == a && r->src[1] == m && r->src[2] == s);
    CHECK(r && ct_op_param_f32(r, 0) == 0.125f && ct_op_param_f32(r, 1) == 8.0f && params_zero_from(r, 2));
    CHECK(fresh(ct_soft_max_ext(ctx, a, T4(CT_TYPE_F32, 10, 5, 4, 3), NULL, 1.0f, 0.0f), CT_TYPE_F32, 10, 5, 4, 3));
    CHECK(fresh(ct_soft_max_ext(ctx, a, T4(CT_TYPE_F32, 10, 5, 1, 3), NULL, -2.0f, -1.0f), CT_TYPE_F32, 10, 5, 4, 3));
    r = ct_soft_max_ext(ctx, a, NULL, s, 1.0f, 0.0f);
    CHECK(fresh(r, CT_TYPE_F32, 10, 5, 4, 3) && r && r->src[1] == NULL && r->src[2] == s);
    /* a permuted a, a view of a mask, empty and one-element rows */
    ct_tensor *p = ct_permute(ctx, a, 1, 0, 2, 3); /* [5,10,4,3] */
    CHECK(fresh(ct_soft_max(ctx, p), CT_TYPE_F32, 5, 10, 4, 3));
    ct_tensor *mv = ct_view_2d(ctx, T4(CT_TYPE_F32, 12, 6, 1, 1), 10, 5, 12 * sizeof(float), 0);
    CHECK(fresh(ct_soft_max_ext(ctx, a, mv, NULL, 1.0f, 0.0f), CT_TYPE_F32, 10, 5, 4, 3));
    CHECK(fresh(ct_soft_max(ctx, T4(CT_TYPE_F32, 1, 1, 1, 1)), CT_TYPE_F32, 1, 1, 1, 1));
    CHECK(fresh(ct_soft_max(ctx, T4(CT_TYPE_F32, 0, 3, 1, 1)), CT_TYPE_F32, 0, 3, 1, 1));

    CHECK(ct_soft_max(ctx, T4(CT_TYPE_F16, 10, 5, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: a type=f16 but must be f32");
    CHECK(ct_soft_max_ext(ctx, a, T4(CT_TYPE_BF16, 10, 5, 1, 1), NULL, 1.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: mask type=bf16 but must be f16 or f32");
    CHECK(ct_soft_max_ext(ctx, a, T4(CT_TYPE_F32, 9, 5, 1, 1), NULL, 1.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: mask ne0=9, ne1=5 but must have ne0 == 10 and ne1 >= 5 (a's)");
    CHECK(ct_soft_max_ext(ctx, a, T4(CT_TYPE_F32, 10, 4, 1, 1), NULL, 1.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: mask ne0=10, ne1=4 but must have");
    CHECK(ct_soft_max_ext(ctx, a, T4(CT_TYPE_F32, 10, 5, 3, 1), NULL, 1.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: mask ne2=3, ne3=1 but must be >= 1 and divide a's ne2=4, ne3=3");
    CHECK(ct_soft_max_ext(ctx, a, T4(CT_TYPE_F32, 10, 5, 4, 2), NULL, 1.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: mask ne2=4, ne3=2 but must be");
    CHECK(ct_soft_max_ext(ctx, a, T4(CT_TYPE_F32, 10, 5, 0, 1), NULL, 1.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: mask ne2=0, ne3=1 but must be >= 1");
    CHECK(ct_soft_max_ext(ctx, a, NULL, NULL, 1.0f, 0.5f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: max_bias=0.5 > 0 (ALiBi) but mask is NULL");
    CHECK(ct_soft_max_ext(ctx, a, NULL, NULL, NAN, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "but both must be finite");
    CHECK(ct_soft_max_ext(ctx, a, m, NULL, 1.0f, INFINITY) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: scale=1, max_bias=inf but both must be finite");
    CHECK(ct_soft_max_ext(ctx, a, NULL, T4(CT_TYPE_F16, 4, 1, 1, 1), 1.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: sinks type=f16 but must be f32");
    CHECK(ct_soft_max_ext(ctx, a, NULL, T4(CT_TYPE_F32, 5, 1, 1, 1), 1.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: sinks ne0=5 but must be a's ne2=4 (one per head)");
    CHECK(ct_soft_max_ext(ctx, a, NULL, T4(CT_TYPE_F32, 4, 0, 1, 1), 1.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: sinks ne=[4,0,1,1] has no elements");
    CHECK(ct_soft_max(NULL, a) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: ctx is NULL");
    CHECK(ct_soft_max_ext(ctx, NULL, m, s, 1.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_soft_max_ext: a is NULL");
}

static void test_rope(void) {
    ct_tensor *a = T4(CT_TYPE_F32, 128, 8, 5, 2), *pos = T4(CT_TYPE_I32, 5, 1, 1, 1);
    ct_tensor *ff = T4(CT_TYPE_F32, 64, 1, 1, 1);
    ct_tensor *r = ct_rope_ext(ctx, a, pos, ff, 128, CT_ROPE_TYPE_NEOX, 4096, 10000.0f, 0.5f, 1.0f, 1.0f, 32.0f, 1.0f);
    CHECK(fresh(r, CT_TYPE_F32, 128, 8, 5, 2) && r->op == CT_OP_ROPE && r->src[0] == a && r->src[1] == pos &&
          r->src[2] == ff);
    CHECK(r && r->op_params[0] == 0 && r->op_params[1] == 128 && r->op_params[2] == 2 && r->op_params[3] == 0 &&
          r->op_params[4] == 4096 && ct_op_param_f32(r, 5) == 10000.0f && ct_op_param_f32(r, 6) == 0.5f &&
          ct_op_param_f32(r, 9) == 32.0f && ct_op_param_f32(r, 10) == 1.0f && params_zero_from(r, 11));
    CHECK(ct_rope_set_offset(r, 0) == r && r->op_params[15] == 0);
    /* F16, a view of a wider tensor, no freq factors, a window of 32 at 96 */
    ct_tensor *h = T4(CT_TYPE_F16, 256, 8, 5, 1);
    ct_tensor *hv = ct_view_4d(ctx, h, 128, 8, 5, 1, h->nb[1], h->nb[2], h->nb[3], 128 * 2);
    r = ct_rope_ext(ctx, hv, pos, NULL, 32, CT_ROPE_TYPE_NORMAL, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    CHECK(fresh(r, CT_TYPE_F16, 128, 8, 5, 1) && r->src[2] == NULL);
    CHECK(ct_rope_set_offset(r, 96) == r && r->op_params[15] == 96);
    CHECK(ct_rope_set_offset(r, 98) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_set_offset: n_offs=98 but must be even, >= 0 and n_offs + n_dims (32) <= ne[0]=128");
    /* in place: a view of a with op ROPE */
    r = ct_rope_ext_inplace(ctx, hv, pos, NULL, 128, CT_ROPE_TYPE_NEOX, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    CHECK(r && r->op == CT_OP_ROPE && r->view_src == h && r->view_offs == 256 && r->nb[1] == h->nb[1] && r->src[0] == hv);
    /* multi-section: 4 positions a token, sections in [11..14] */
    const int sec[4] = {16, 24, 24, 0};
    ct_tensor *pos4 = T4(CT_TYPE_I32, 20, 1, 1, 1);
    r = ct_rope_multi(ctx, a, pos4, NULL, 128, sec, CT_ROPE_TYPE_IMROPE, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    CHECK(fresh(r, CT_TYPE_F32, 128, 8, 5, 2) && r->op_params[2] == 40 && r->op_params[11] == 16 &&
          r->op_params[12] == 24 && r->op_params[13] == 24 && r->op_params[14] == 0);
    r = ct_rope_multi(ctx, a, pos4, ff, 64, (const int[4]){16, 16, 0, 0}, CT_ROPE_TYPE_VISION, 0, 10000.0f, 1.0f,
                      0.0f, 1.0f, 0.0f, 0.0f);
    CHECK(fresh(r, CT_TYPE_F32, 128, 8, 5, 2));
    CHECK(ct_rope_set_offset(r, 2) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_set_offset: n_offs=2 but VISION takes no offset");

    /* refused */
    CHECK(ct_rope_ext(ctx, a, pos, NULL, 128, CT_ROPE_TYPE_MROPE, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_ext: mode=8 but must be 0 (NORMAL) or 2 (NEOX)");
    CHECK(ct_rope_ext(ctx, a, pos, NULL, 128, 1, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_ext: mode=1 but must be 0 (NORMAL) or 2 (NEOX)");
    CHECK(ct_rope_multi(ctx, a, pos4, NULL, 128, sec, CT_ROPE_TYPE_NEOX, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_multi: mode=2 but must be 8 (MROPE), 24 (VISION) or 40 (IMROPE)");
    CHECK(ct_rope_ext(ctx, T4(CT_TYPE_BF16, 128, 8, 5, 1), pos, NULL, 128, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_ext: a type=bf16 but must be f32 or f16");
    CHECK(ct_rope_ext(ctx, a, T4(CT_TYPE_I64, 5, 1, 1, 1), NULL, 128, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_ext: positions type=i64 but must be i32");
    CHECK(ct_rope_ext(ctx, a, T4(CT_TYPE_I32, 5, 2, 1, 1), NULL, 128, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_ext: positions ne=[5, 2, 1, 1] but must be a vector");
    CHECK(ct_rope_ext(ctx, a, T4(CT_TYPE_I32, 4, 1, 1, 1), NULL, 128, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_ext: positions ne[0]=4 but must be a ne[2]=5");
    CHECK(ct_rope_multi(ctx, a, pos, NULL, 128, sec, CT_ROPE_TYPE_MROPE, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_multi: positions ne[0]=5 but must be 4 x a ne[2]=5");
    CHECK(ct_rope_ext(ctx, a, pos, NULL, 130, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_ext: n_dims=130 but must be even, > 0 and <= a ne[0]=128");
    CHECK(ct_rope_ext(ctx, a, pos, NULL, 7, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK(ct_rope_ext(ctx, a, pos, NULL, 0, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK(ct_rope_multi(ctx, a, pos4, NULL, 32, (const int[4]){8, 8, 0, 0}, CT_ROPE_TYPE_VISION, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_multi: VISION needs n_dims=32 == a ne[0]/2 (ne[0]=128)");
    CHECK(ct_rope_multi(ctx, a, pos4, NULL, 128, (const int[4]){0, 0, 0, 5}, CT_ROPE_TYPE_MROPE, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_multi: sections={0, 0, 0, 5} but one of the first three must be > 0");
    CHECK(ct_rope_multi(ctx, a, pos4, NULL, 128, (const int[4]){-1, 8, 0, 0}, CT_ROPE_TYPE_MROPE, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_multi: sections[0]=-1 but must be >= 0");
    CHECK(ct_rope_multi(ctx, a, pos4, NULL, 128, NULL, CT_ROPE_TYPE_MROPE, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_multi: sections is NULL");
    CHECK(ct_rope_ext(ctx, a, pos, T4(CT_TYPE_F32, 63, 1, 1, 1), 128, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_ext: freq factors (c) ne[0]=63 but must be >= 64");
    CHECK(ct_rope_ext(ctx, a, pos, T4(CT_TYPE_F16, 64, 1, 1, 1), 128, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_ext: freq factors (c) type=f16 but must be f32");
    CHECK(ct_rope_ext(ctx, a, pos, T4(CT_TYPE_F32, 64, 0, 1, 1), 128, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_ext: freq factors (c) ne=[64,0,1,1] has no elements");
    CHECK(ct_rope_ext(ctx, a, NULL, NULL, 128, 0, 0, 1e4f, 1, 0, 1, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_ext: positions (b) is NULL");
    CHECK(ct_rope_set_offset(ct_mean(ctx, a), 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_set_offset: t op=MEAN but must be ROPE");
    CHECK(ct_rope_set_offset(NULL, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_rope_set_offset: t is NULL");
}

static void test_flash_attn(void) {
    ct_tensor *q = T4(CT_TYPE_F32, 64, 7, 8, 2), *k = T4(CT_TYPE_F16, 64, 33, 2, 2), *v = T4(CT_TYPE_Q8_0, 96, 33, 4, 2);
    ct_tensor *m = T4(CT_TYPE_F16, 40, 8, 1, 2), *s = T4(CT_TYPE_F32, 8, 1, 1, 1);
    ct_tensor *r = ct_flash_attn_ext(ctx, q, k, v, m, 0.125f, 8.0f, 30.0f);
    CHECK(r && r->op == CT_OP_FLASH_ATTN_EXT && r->type == CT_TYPE_F32);
    CHECK(r && r->ne[0] == 96 && r->ne[1] == 8 && r->ne[2] == 7 && r->ne[3] == 2);
    CHECK(r && ct_op_param_f32(r, 0) == 0.125f && ct_op_param_f32(r, 1) == 8.0f && ct_op_param_f32(r, 2) == 30.0f);
    CHECK(r && r->src[0] == q && r->src[1] == k && r->src[2] == v && r->src[3] == m && r->src[4] == NULL);
    CHECK(ct_flash_attn_ext_add_sinks(r, s) == r && r->src[4] == s);
    CHECK(ct_flash_attn_ext_add_sinks(r, s) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext_add_sinks: t has sinks already");
    CHECK(ct_flash_attn_ext_add_sinks(r, NULL) == r && r->src[4] == NULL);
    CHECK(ct_flash_attn_ext_add_sinks(r, T4(CT_TYPE_F32, 4, 1, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext_add_sinks: sinks ne=[4, 1, 1, 1] but must have ne0 == q's ne2=8");
    CHECK(ct_flash_attn_ext_add_sinks(r, T4(CT_TYPE_F16, 8, 1, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext_add_sinks: sinks type=f16 but must be f32");
    CHECK(ct_flash_attn_ext_set_prec(r, CT_PREC_F32) == r && r->op_params[3] == CT_PREC_F32);
    CHECK(ct_flash_attn_ext_set_prec(r, 20) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext_set_prec: prec=20 but must be 0 (CT_PREC_DEFAULT) or 10");
    CHECK(ct_flash_attn_ext_set_prec(ct_mean(ctx, q), 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext_set_prec: t op=MEAN but must be FLASH_ATTN_EXT");
    CHECK(ct_flash_attn_ext_add_sinks(NULL, s) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext_add_sinks: t is NULL");
    /* no mask; empty n_kv and n_q */
    CHECK(ct_flash_attn_ext(ctx, q, k, v, NULL, 1.0f, 0.0f, 0.0f) != NULL);
    CHECK(ct_flash_attn_ext(ctx, T4(CT_TYPE_F32, 64, 0, 8, 2), T4(CT_TYPE_F16, 64, 0, 2, 2), T4(CT_TYPE_F16, 64, 0, 2, 2),
                            NULL, 1.0f, 0.0f, 0.0f) != NULL);
    /* refused */
    CHECK(ct_flash_attn_ext(ctx, q, k, v, NULL, 1.0f, 8.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext: max_bias=8 > 0 (ALiBi) but mask is NULL");
    CHECK(ct_flash_attn_ext(ctx, T4(CT_TYPE_F16, 64, 7, 8, 2), k, v, m, 1.0f, 0.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext: q type=f16 but must be f32");
    CHECK(ct_flash_attn_ext(ctx, q, T4(CT_TYPE_Q4_K, 256, 33, 2, 2), v, m, 1.0f, 0.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext: k type=q4_K, v type=q8_0 but each must be f32, f16");
    CHECK(ct_flash_attn_ext(ctx, q, k, v, m, NAN, 0.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext: scale=nan, max_bias=0, logit_softcap=0 but all must be finite");
    CHECK(ct_flash_attn_ext(ctx, q, T4(CT_TYPE_F16, 32, 33, 2, 2), v, m, 1.0f, 0.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext: k ne0=32 but must be q ne0=64 (the K head size)");
    CHECK(ct_flash_attn_ext(ctx, q, k, T4(CT_TYPE_F16, 96, 32, 4, 2), m, 1.0f, 0.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext: v ne1=32 but must be k ne1=33 (n_kv)");
    CHECK(ct_flash_attn_ext(ctx, q, T4(CT_TYPE_F16, 64, 33, 2, 1), v, m, 1.0f, 0.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext: k ne3=1, v ne3=2 but both must be q ne3=2");
    CHECK(ct_flash_attn_ext(ctx, q, T4(CT_TYPE_F16, 64, 33, 3, 2), v, m, 1.0f, 0.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext: k ne2=3, v ne2=4 but each must be >= 1 and divide q ne2=8");
    CHECK(ct_flash_attn_ext(ctx, q, k, v, T4(CT_TYPE_F32, 40, 8, 1, 2), 1.0f, 0.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext: mask type=f32 but must be f16 and contiguous");
    CHECK(ct_flash_attn_ext(ctx, q, k, v, ct_transpose(ctx, T4(CT_TYPE_F16, 8, 40, 1, 2)), 1.0f, 0.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "(not contiguous) but must be f16 and contiguous");
    CHECK(ct_flash_attn_ext(ctx, q, k, v, T4(CT_TYPE_F16, 32, 8, 1, 2), 1.0f, 0.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext: mask ne0=32, ne1=8 but must have ne0 >= n_kv=33 and ne1 >= n_q=7");
    CHECK(ct_flash_attn_ext(ctx, q, k, v, T4(CT_TYPE_F16, 40, 6, 1, 2), 1.0f, 0.0f, 0.0f) == NULL);
    CHECK(ct_flash_attn_ext(ctx, q, k, v, T4(CT_TYPE_F16, 40, 8, 3, 2), 1.0f, 0.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext: mask ne2=3, ne3=2 but must be >= 1 and divide q ne2=8, ne3=2");
    CHECK(ct_flash_attn_ext(ctx, q, NULL, v, m, 1.0f, 0.0f, 0.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_flash_attn_ext: k is NULL");
}

/* With the arena exactly full, every constructor reports CT_OUT_OF_MEMORY and
 * consumes nothing; in a no_alloc context results have no data. */
static void test_glu(void) {
    CHECK(strcmp(ct_glu_op_name(CT_GLU_OP_REGLU), "REGLU") == 0 && strcmp(ct_glu_op_name(CT_GLU_OP_GEGLU), "GEGLU") == 0);
    CHECK(strcmp(ct_glu_op_name(CT_GLU_OP_SWIGLU_OAI), "SWIGLU_OAI") == 0 && CT_GLU_OP_SWIGLU_OAI == 3);
    CHECK(strcmp(ct_glu_op_name(CT_GLU_OP_SWIGLU_CLAMP), "SWIGLU_CLAMP") == 0 && CT_GLU_OP_COUNT == 7);
    CHECK(strcmp(ct_glu_op_name(CT_GLU_OP_COUNT), "INVALID") == 0 && strcmp(ct_glu_op_name((ct_glu_op)-1), "INVALID") == 0);
    /* fused: half of ne0 (an odd ne0's last element unused); split: a's shape */
    for (int op = 0; op < CT_GLU_OP_COUNT; op++) {
        ct_tensor *a = T4(op % 2 ? CT_TYPE_F16 : CT_TYPE_F32, 7, 3, 2, 1);
        ct_tensor *b = T4(a->type, 7, 3, 2, 1);
        ct_tensor *r = ct_glu(ctx, a, (ct_glu_op)op, op % 3 == 0);
        CHECK(fresh(r, a->type, 3, 3, 2, 1) && r->op == CT_OP_GLU && srcs_are(r, a, NULL) && r->op_params[0] == op &&
              r->op_params[1] == (op % 3 == 0) && params_zero_from(r, 2));
        r = ct_glu_split(ctx, a, b, (ct_glu_op)op);
        CHECK(fresh(r, a->type, 7, 3, 2, 1) && r->op == CT_OP_GLU && srcs_are(r, a, b) && r->op_params[0] == op &&
              params_zero_from(r, 1));
    }
    ct_tensor *a = T4(CT_TYPE_F32, 8, 4, 3, 2), *b = T4(CT_TYPE_F32, 8, 4, 3, 2);
    struct {
        ct_tensor *r;
        int op;
    } named[] = {{ct_reglu(ctx, a), CT_GLU_OP_REGLU},           {ct_geglu(ctx, a), CT_GLU_OP_GEGLU},
                 {ct_swiglu(ctx, a), CT_GLU_OP_SWIGLU},         {ct_geglu_erf(ctx, a), CT_GLU_OP_GEGLU_ERF},
                 {ct_geglu_quick(ctx, a), CT_GLU_OP_GEGLU_QUICK}, {ct_reglu_split(ctx, a, b), CT_GLU_OP_REGLU},
                 {ct_geglu_split(ctx, a, b), CT_GLU_OP_GEGLU},   {ct_swiglu_split(ctx, a, b), CT_GLU_OP_SWIGLU},
                 {ct_geglu_erf_split(ctx, a, b), CT_GLU_OP_GEGLU_ERF},
                 {ct_geglu_quick_split(ctx, a, b), CT_GLU_OP_GEGLU_QUICK}};
    for (int i = 0; i < 10; i++)
        CHECK(fresh(named[i].r, CT_TYPE_F32, i < 5 ? 4 : 8, 4, 3, 2) && named[i].r->op_params[0] == named[i].op &&
              srcs_are(named[i].r, a, i < 5 ? NULL : b) && params_zero_from(named[i].r, 1));
    ct_tensor *r = ct_swiglu_oai(ctx, a, b, 1.702f, 7.0f);
    CHECK(fresh(r, CT_TYPE_F32, 8, 4, 3, 2) && srcs_are(r, a, b) && r->op_params[0] == CT_GLU_OP_SWIGLU_OAI &&
          r->op_params[1] == 0 && ct_op_param_f32(r, 2) == 1.702f && ct_op_param_f32(r, 3) == 7.0f &&
          params_zero_from(r, 4));
    r = ct_swiglu_oai(ctx, a, NULL, 0.5f, 2.0f);
    CHECK(fresh(r, CT_TYPE_F32, 4, 4, 3, 2) && srcs_are(r, a, NULL) && ct_op_param_f32(r, 2) == 0.5f);
    r = ct_swiglu_clamp(ctx, a, b, 10.0f);
    CHECK(fresh(r, CT_TYPE_F32, 8, 4, 3, 2) && r->op_params[0] == CT_GLU_OP_SWIGLU_CLAMP && r->op_params[2] == 0 &&
          ct_op_param_f32(r, 3) == 10.0f && params_zero_from(r, 4));
    CHECK(fresh(ct_swiglu_clamp(ctx, a, NULL, 2.0f), CT_TYPE_F32, 4, 4, 3, 2));
    /* views with row gaps, one-element and empty rows */
    ct_tensor *v = ct_view_3d(ctx, a, 6, 2, 3, a->nb[1], a->nb[2], 4);
    CHECK(fresh(ct_glu(ctx, v, CT_GLU_OP_SWIGLU, true), CT_TYPE_F32, 3, 2, 3, 1));
    CHECK(fresh(ct_glu_split(ctx, v, ct_view_3d(ctx, b, 6, 2, 3, b->nb[1], b->nb[2], 8), CT_GLU_OP_GEGLU), CT_TYPE_F32,
                6, 2, 3, 1));
    CHECK(fresh(ct_glu(ctx, ct_view_2d(ctx, a, 1, 5, a->nb[1], 0), CT_GLU_OP_REGLU, false), CT_TYPE_F32, 0, 5, 1, 1));
    CHECK(fresh(ct_glu_split(ctx, T4(CT_TYPE_F16, 0, 3, 1, 1), T4(CT_TYPE_F16, 0, 3, 1, 1), CT_GLU_OP_SWIGLU),
                CT_TYPE_F16, 0, 3, 1, 1));

    CHECK(ct_glu(ctx, ct_transpose(ctx, a), CT_GLU_OP_GEGLU, false) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_glu: a nb[0]=32 but its rows must be packed (nb[0]=4)");
    CHECK(ct_geglu_split(ctx, a, ct_transpose(ctx, b)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_geglu_split: b nb[0]=32 but its rows must be packed (nb[0]=4)");
    CHECK(ct_swiglu(ctx, T4(CT_TYPE_BF16, 4, 1, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_swiglu: a type=bf16 but must be f32 or f16");
    CHECK(ct_glu(ctx, T4(CT_TYPE_Q8_0, 32, 1, 1, 1), CT_GLU_OP_REGLU, false) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_glu: a type=q8_0 but must be f32 or f16");
    CHECK(ct_glu_split(ctx, a, T4(CT_TYPE_F16, 8, 4, 3, 2), CT_GLU_OP_REGLU) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_glu_split: b type=f16 but must be a's type f32");
    CHECK(ct_swiglu_split(ctx, a, T4(CT_TYPE_F32, 8, 4, 3, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_swiglu_split: b ne=[8,4,3,1] but must be a's ne=[8,4,3,2]");
    CHECK(ct_swiglu_oai(ctx, a, T4(CT_TYPE_F32, 4, 4, 3, 2), 1.0f, 1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_swiglu_oai: b ne=[4,4,3,2] but must be a's ne=[8,4,3,2]");
    CHECK(ct_glu(ctx, a, CT_GLU_OP_COUNT, false) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_glu: op=7 but must be a ct_glu_op (0..6)");
    CHECK(ct_glu_split(ctx, a, b, (ct_glu_op)-1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_glu_split: op=-1 but must be a ct_glu_op (0..6)");
    CHECK(ct_glu_split(ctx, a, NULL, CT_GLU_OP_REGLU) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_glu_split: b is NULL");
    CHECK(ct_geglu_split(ctx, NULL, b) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_geglu_split: a is NULL");
    CHECK(ct_glu(NULL, a, CT_GLU_OP_REGLU, false) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_glu: ctx is NULL");
    CHECK(ct_swiglu_oai(ctx, a, b, NAN, 7.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_swiglu_oai: alpha=nan limit=7 but both must be finite");
    CHECK(ct_swiglu_oai(ctx, a, NULL, 1.0f, -INFINITY) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_swiglu_oai: alpha=1 limit=-inf but both must be finite");
    CHECK(ct_swiglu_clamp(ctx, a, b, INFINITY) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_swiglu_clamp: limit=inf but must be finite");
    CHECK(ct_swiglu_clamp(ctx, NULL, NULL, 1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_swiglu_clamp: a is NULL");
}

static void test_reduce_argsort(void) {
    ct_tensor *a = T4(CT_TYPE_F32, 7, 3, 2, 4);
    ct_tensor *r = ct_sum(ctx, a);
    CHECK(fresh(r, CT_TYPE_F32, 1, 1, 1, 1) && r->op == CT_OP_SUM && srcs_are(r, a, NULL) && params_zero_from(r, 0));
    r = ct_cumsum(ctx, a);
    CHECK(fresh(r, CT_TYPE_F32, 7, 3, 2, 4) && r->op == CT_OP_CUMSUM && srcs_are(r, a, NULL) && params_zero_from(r, 0));
    r = ct_argsort(ctx, a, CT_SORT_ORDER_DESC);
    CHECK(fresh(r, CT_TYPE_I32, 7, 3, 2, 4) && r->op == CT_OP_ARGSORT && srcs_are(r, a, NULL) && r->op_params[0] == 1 &&
          params_zero_from(r, 1));
    r = ct_argsort(ctx, a, CT_SORT_ORDER_ASC);
    CHECK(fresh(r, CT_TYPE_I32, 7, 3, 2, 4) && params_zero_from(r, 0));
    r = ct_top_k(ctx, a, 3);
    CHECK(fresh(r, CT_TYPE_I32, 3, 3, 2, 4) && r->op == CT_OP_TOP_K && srcs_are(r, a, NULL) && params_zero_from(r, 0));
    CHECK(fresh(ct_top_k(ctx, a, 7), CT_TYPE_I32, 7, 3, 2, 4));
    CHECK(fresh(ct_top_k(ctx, a, 0), CT_TYPE_I32, 0, 3, 2, 4));
    ct_tensor *m = T4(CT_TYPE_F32, 9, 5, 1, 1);
    r = ct_argmax(ctx, m);
    CHECK(fresh(r, CT_TYPE_I32, 5, 1, 1, 1) && r->op == CT_OP_ARGMAX && srcs_are(r, m, NULL) && params_zero_from(r, 0));
    /* views and permuted sources, empty and one-element dims */
    ct_tensor *p = ct_permute(ctx, a, 1, 0, 2, 3); /* [3,7,2,4] */
    CHECK(fresh(ct_sum(ctx, p), CT_TYPE_F32, 1, 1, 1, 1));
    CHECK(fresh(ct_cumsum(ctx, p), CT_TYPE_F32, 3, 7, 2, 4));
    CHECK(fresh(ct_argsort(ctx, p, CT_SORT_ORDER_ASC), CT_TYPE_I32, 3, 7, 2, 4));
    CHECK(fresh(ct_top_k(ctx, p, 2), CT_TYPE_I32, 2, 7, 2, 4));
    CHECK(fresh(ct_argmax(ctx, ct_transpose(ctx, m)), CT_TYPE_I32, 9, 1, 1, 1));
    CHECK(fresh(ct_argmax(ctx, ct_view_2d(ctx, m, 3, 2, m->nb[1], 8)), CT_TYPE_I32, 2, 1, 1, 1));
    CHECK(fresh(ct_sum(ctx, T4(CT_TYPE_F32, 0, 3, 1, 1)), CT_TYPE_F32, 1, 1, 1, 1));
    CHECK(fresh(ct_cumsum(ctx, T4(CT_TYPE_F32, 5, 0, 2, 1)), CT_TYPE_F32, 5, 0, 2, 1));
    CHECK(fresh(ct_argmax(ctx, T4(CT_TYPE_F32, 0, 3, 1, 1)), CT_TYPE_I32, 3, 1, 1, 1));
    CHECK(fresh(ct_argsort(ctx, T4(CT_TYPE_F32, 0, 3, 1, 1), CT_SORT_ORDER_DESC), CT_TYPE_I32, 0, 3, 1, 1));
    CHECK(fresh(ct_top_k(ctx, T4(CT_TYPE_F32, 1, 1, 1, 1), 1), CT_TYPE_I32, 1, 1, 1, 1));

    /* refused */
    CHECK(ct_sum(ctx, T4(CT_TYPE_F16, 7, 3, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_sum: src type=f16 but must be f32");
    CHECK(ct_cumsum(ctx, T4(CT_TYPE_I32, 7, 3, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cumsum: src type=i32 but must be f32");
    CHECK(ct_argmax(ctx, T4(CT_TYPE_BF16, 7, 3, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_argmax: src type=bf16 but must be f32");
    CHECK(ct_argmax(ctx, a) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_argmax: src ne=[7, 3, 2, 4] but must be a matrix (ne2 = ne3 = 1)");
    CHECK(ct_argmax(ctx, T4(CT_TYPE_F32, 7, 3, 1, 2)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_argmax: src ne=[7, 3, 1, 2] but must be a matrix");
    CHECK(ct_argsort(ctx, T4(CT_TYPE_F16, 7, 3, 1, 1), CT_SORT_ORDER_ASC) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_argsort: src type=f16 but must be f32");
    CHECK(ct_argsort(ctx, a, (ct_sort_order)2) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_argsort: order=2 but must be CT_SORT_ORDER_ASC (0) or CT_SORT_ORDER_DESC (1)");
    CHECK(ct_argsort(ctx, a, (ct_sort_order)-1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_argsort: order=-1");
    CHECK(ct_top_k(ctx, a, 8) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_top_k: k=8 but must be in [0, src ne0=7]");
    CHECK(ct_top_k(ctx, a, -1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_top_k: k=-1 but must be in [0, src ne0=7]");
    CHECK(ct_top_k(ctx, T4(CT_TYPE_Q8_0, 32, 3, 1, 1), 2) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_top_k: src type=q8_0 but must be f32");
    ct_context *big = ct_context_new((ct_context_params){.mem_size = 1 << 16, .mem_buffer = NULL, .no_alloc = true});
    ct_tensor *wide = ct_tensor_new_2d(big, CT_TYPE_F32, (int64_t)INT32_MAX + 1, 1);
    CHECK(wide != NULL);
    CHECK(ct_argmax(big, wide) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_argmax: src ne0=2147483648 but must be at most INT32_MAX");
    CHECK(ct_argsort(big, wide, CT_SORT_ORDER_ASC) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_argsort: src ne0=2147483648 but must be at most INT32_MAX");
    CHECK(ct_top_k(big, wide, 1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_top_k: src ne0=2147483648 but must be at most INT32_MAX");
    CHECK(ct_sum(big, wide) != NULL && ct_cumsum(big, wide) != NULL);
    ct_context_free(big);
    CHECK(ct_sum(NULL, a) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_sum: ctx is NULL");
    CHECK(ct_cumsum(ctx, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_cumsum: a is NULL");
    CHECK(ct_argmax(NULL, m) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_argmax: ctx is NULL");
    CHECK(ct_argsort(ctx, NULL, CT_SORT_ORDER_ASC) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_argsort: a is NULL");
    CHECK(ct_top_k(NULL, a, 1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_top_k: ctx is NULL");
}

static void test_mul_mat_id(void) {
    ct_tensor *as = T4(CT_TYPE_Q4_0, 64, 16, 8, 1), *b = T4(CT_TYPE_F32, 64, 1, 5, 1);
    ct_tensor *ids = T4(CT_TYPE_I32, 4, 5, 1, 1);
    ct_tensor *r = ct_mul_mat_id(ctx, as, b, ids);
    CHECK(fresh(r, CT_TYPE_F32, 16, 4, 5, 1) && r->op == CT_OP_MUL_MAT_ID && r->src[0] == as && r->src[1] == b &&
          r->src[2] == ids);
    /* one b row per used expert */
    r = ct_mul_mat_id(ctx, as, T4(CT_TYPE_F32, 64, 4, 5, 1), ids);
    CHECK(fresh(r, CT_TYPE_F32, 16, 4, 5, 1));
    /* empty: no tokens */
    r = ct_mul_mat_id(ctx, as, T4(CT_TYPE_F32, 64, 1, 0, 1), T4(CT_TYPE_I32, 4, 0, 1, 1));
    CHECK(fresh(r, CT_TYPE_F32, 16, 4, 0, 1));
    CHECK(ct_mul_mat_id(ctx, as, b, T4(CT_TYPE_I64, 4, 5, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat_id: ids has type i64, expected I32");
    CHECK(ct_mul_mat_id(ctx, T4(CT_TYPE_F32, 64, 16, 8, 2), b, ids) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat_id: as ne[3]=2 and b ne[3]=1 must be 1 (3-D)");
    CHECK(ct_mul_mat_id(ctx, as, b, T4(CT_TYPE_I32, 4, 5, 2, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat_id: ids must be 2-D: ne[2]=2 ne[3]=1");
    CHECK(ct_mul_mat_id(ctx, as, b, T4(CT_TYPE_I32, 4, 6, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat_id: ids ne[1]=6 but b ne[2]=5 (one expert list per token)");
    CHECK(ct_mul_mat_id(ctx, as, T4(CT_TYPE_F32, 32, 1, 5, 1), ids) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat_id: as ne[0]=64 but b ne[0]=32");
    CHECK(ct_mul_mat_id(ctx, as, T4(CT_TYPE_F32, 64, 3, 5, 1), ids) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat_id: ids ne[0]=4 is not a multiple of b ne[1]=3");
    CHECK(ct_mul_mat_id(ctx, as, T4(CT_TYPE_F32, 64, 0, 5, 1), ids) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat_id: ids ne[0]=4 is not a multiple of b ne[1]=0");
    ct_tensor *f = T4(CT_TYPE_F32, 16, 16, 8, 1);
    CHECK(ct_mul_mat_id(ctx, ct_transpose(ctx, f), T4(CT_TYPE_F32, 16, 1, 5, 1), ids) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat_id: as is transposed: nb[0]=64 but nb[1]=4");
    CHECK(ct_mul_mat_id(ctx, as, NULL, ids) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat_id: b is NULL");
    CHECK(ct_mul_mat_id(ctx, as, b, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_mul_mat_id: ids is NULL");
}

static void test_add_id(void) {
    ct_tensor *a = T4(CT_TYPE_F32, 32, 4, 5, 1), *b = T4(CT_TYPE_F32, 32, 8, 1, 1);
    ct_tensor *ids = T4(CT_TYPE_I32, 4, 5, 1, 1);
    ct_tensor *r = ct_add_id(ctx, a, b, ids);
    CHECK(fresh(r, CT_TYPE_F32, 32, 4, 5, 1) && r->op == CT_OP_ADD_ID && r->src[0] == a && r->src[1] == b &&
          r->src[2] == ids);
    r = ct_add_id(ctx, T4(CT_TYPE_F16, 32, 4, 5, 1), T4(CT_TYPE_F16, 32, 8, 1, 1), ids);
    CHECK(fresh(r, CT_TYPE_F16, 32, 4, 5, 1));
    CHECK(ct_add_id(ctx, a, b, T4(CT_TYPE_F32, 4, 5, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add_id: ids has type f32, expected I32");
    CHECK(ct_add_id(ctx, a, T4(CT_TYPE_F32, 16, 8, 1, 1), ids) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add_id: a ne[0]=32 but b ne[0]=16");
    CHECK(ct_add_id(ctx, a, b, T4(CT_TYPE_I32, 5, 4, 1, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add_id: a ne[1..2]=[4, 5] but ids ne[0..1]=[5, 4]");
    CHECK(ct_add_id(ctx, a, b, T4(CT_TYPE_I32, 4, 5, 0, 1)) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add_id: a is not empty but b [32, 8, 1, 1] or ids [4, 5, 0, 1] is");
    CHECK(ct_add_id(ctx, a, NULL, ids) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add_id: b is NULL");
}

static void test_arena_full(void) {
    const size_t oh = ct_tensor_overhead();
    ct_context *c = ct_context_new((ct_context_params){.mem_size = 3 * oh + 3 * 64, .mem_buffer = NULL, .no_alloc = false});
    ct_tensor *a = ct_tensor_new_1d(c, CT_TYPE_F32, 16);
    ct_tensor *b = ct_tensor_new_1d(c, CT_TYPE_I32, 4);
    ct_tensor *i = ct_tensor_new_1d(c, CT_TYPE_I64, 4);
    CHECK(a && b && i && ct_context_used(c) == ct_context_size(c));
    ct_tensor *a2 = ct_reshape_2d(c, a, 16, 1);
    CHECK(a2 == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_reshape_2d: context arena full: tensor needs");
    CHECK(ct_get_rows(c, a, b) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_get_rows: context arena full");
    CHECK(ct_mul_mat(c, a, a) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_mul_mat: context arena full");
    CHECK(ct_cpy(c, a, a) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_cpy: context arena full");
    CHECK(ct_cast(c, a, CT_TYPE_F16) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_cast: context arena full");
    CHECK(ct_rms_norm(c, a, 0.0f) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_rms_norm: context arena full");
    CHECK(ct_sum_rows(c, a) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_sum_rows: context arena full");
    CHECK(ct_add(c, a, a) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_add: context arena full");
    CHECK(ct_add1(c, a, ct_view_1d(NULL, a, 1, 0)) == NULL); /* the view fails first: b NULL */
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_add1: b is NULL");
    CHECK(ct_transpose(c, a) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_transpose: context arena full");
    CHECK(ct_context_used(c) == ct_context_size(c));
    int n = 0;
    for (ct_tensor *t = ct_context_first_tensor(c); t; t = ct_context_next_tensor(c, t)) n++;
    CHECK(n == 3);
    ct_context_free(c);

    c = ct_context_new((ct_context_params){.mem_size = 1 << 16, .mem_buffer = NULL, .no_alloc = true});
    a = ct_tensor_new_2d(c, CT_TYPE_F32, 64, 4);
    ct_tensor *r = ct_rms_norm(c, a, 1e-6f);
    ct_tensor *s = ct_set_rows(c, a, ct_tensor_new_2d(c, CT_TYPE_F32, 64, 2), ct_tensor_new_1d(c, CT_TYPE_I64, 2));
    CHECK(r && r->data == NULL && s && s->data == NULL && s->view_src == a);
    CHECK(ct_context_used(c) == 5 * oh);
    ct_context_free(c);
}

static void test_math(void) {
    typedef ct_tensor *(*plain_fn)(ct_context *, ct_tensor *);
    static const struct {
        plain_fn f, fi;
        ct_op op;
        const char *name;
    } plain[] = {
        {ct_sqr, ct_sqr_inplace, CT_OP_SQR, "ct_sqr"},   {ct_sqrt, ct_sqrt_inplace, CT_OP_SQRT, "ct_sqrt"},
        {ct_sin, ct_sin_inplace, CT_OP_SIN, "ct_sin"},   {ct_cos, ct_cos_inplace, CT_OP_COS, "ct_cos"},
        {ct_ln, ct_ln_inplace, CT_OP_LOG, "ct_ln"},
    };
    ct_tensor *a = T4(CT_TYPE_F32, 6, 4, 3, 2);
    ct_tensor *h = T4(CT_TYPE_F16, 5, 1, 2, 1);
    char want[160];
    for (int i = 0; i < (int)(sizeof plain / sizeof plain[0]); i++) {
        ct_tensor *r = plain[i].f(ctx, a);
        CHECK(fresh(r, CT_TYPE_F32, 6, 4, 3, 2) && r->op == plain[i].op && srcs_are(r, a, NULL) && params_zero_from(r, 0));
        CHECK(fresh(plain[i].f(ctx, h), CT_TYPE_F16, 5, 1, 2, 1));
        /* in place: a view of a with the op */
        r = plain[i].fi(ctx, a);
        CHECK(r && r->op == plain[i].op && r->view_src == a && r->data == a->data && shape_is(r, 6, 4, 3, 2) &&
              r->nb[1] == a->nb[1] && srcs_are(r, a, NULL) && params_zero_from(r, 0));
        /* rows of a strided view; a transpose's rows are not packed */
        CHECK(fresh(plain[i].f(ctx, ct_view_3d(ctx, a, 3, 2, 3, a->nb[1], a->nb[2], 4)), CT_TYPE_F32, 3, 2, 3, 1));
        CHECK(plain[i].f(ctx, ct_transpose(ctx, a)) == NULL);
        snprintf(want, sizeof want, "%s: a nb[0]=24 but its rows must be packed (nb[0]=4)", plain[i].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, want);
        CHECK(plain[i].fi(ctx, T4(CT_TYPE_BF16, 4, 1, 1, 1)) == NULL);
        snprintf(want, sizeof want, "%s_inplace: a type=bf16 but must be f32 or f16", plain[i].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, want);
        CHECK(plain[i].f(NULL, a) == NULL);
        snprintf(want, sizeof want, "%s: ctx is NULL", plain[i].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, want);
        CHECK(plain[i].f(ctx, NULL) == NULL);
        snprintf(want, sizeof want, "%s: a is NULL", plain[i].name);
        CHECK_ERROR(CT_INVALID_ARGUMENT, want);
    }
    ct_tensor *r = ct_clamp(ctx, a, -0.5f, 0.25f);
    CHECK(fresh(r, CT_TYPE_F32, 6, 4, 3, 2) && r->op == CT_OP_CLAMP && srcs_are(r, a, NULL) &&
          ct_op_param_f32(r, 0) == -0.5f && ct_op_param_f32(r, 1) == 0.25f && params_zero_from(r, 2));
    r = ct_clamp_inplace(ctx, h, 1.0f, -1.0f); /* min > max is ggml's too: every element max */
    CHECK(r && r->op == CT_OP_CLAMP && r->view_src == h && ct_op_param_f32(r, 0) == 1.0f && ct_op_param_f32(r, 1) == -1.0f);
    r = ct_leaky_relu(ctx, a, 0.1f, false);
    CHECK(fresh(r, CT_TYPE_F32, 6, 4, 3, 2) && r->op == CT_OP_LEAKY_RELU && ct_op_param_f32(r, 0) == 0.1f &&
          params_zero_from(r, 1));
    r = ct_leaky_relu(ctx, h, 0.1f, true);
    CHECK(r && r->op == CT_OP_LEAKY_RELU && r->view_src == h && r->type == CT_TYPE_F16);
    r = ct_fill(ctx, a, 2.5f);
    CHECK(fresh(r, CT_TYPE_F32, 6, 4, 3, 2) && r->op == CT_OP_FILL && ct_op_param_f32(r, 0) == 2.5f && params_zero_from(r, 1));
    r = ct_fill_inplace(ctx, a, -INFINITY);
    CHECK(r && r->op == CT_OP_FILL && r->view_src == a && isinf(ct_op_param_f32(r, 0)));
    /* empty and one-element dims */
    CHECK(fresh(ct_clamp(ctx, T4(CT_TYPE_F16, 0, 3, 1, 1), 0.0f, 1.0f), CT_TYPE_F16, 0, 3, 1, 1));
    CHECK(fresh(ct_sqr(ctx, ct_view_2d(ctx, a, 1, 5, a->nb[1], 0)), CT_TYPE_F32, 1, 5, 1, 1));

    CHECK(ct_clamp(ctx, T4(CT_TYPE_Q8_0, 32, 1, 1, 1), 0.0f, 1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_clamp: a type=q8_0 but must be f32 or f16");
    ct_tensor_set_name(a, "x");
    CHECK(ct_clamp_inplace(ctx, ct_transpose(ctx, a), 0.0f, 1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_clamp_inplace: a \"x (transposed)\" nb[0]=24 but its rows must be packed");
    CHECK(ct_leaky_relu(ctx, T4(CT_TYPE_I32, 4, 1, 1, 1), 0.1f, true) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_leaky_relu: a type=i32 but must be f32 or f16");
    CHECK(ct_fill(ctx, NULL, 1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_fill: a is NULL");
    CHECK(ct_fill_inplace(ctx, T4(CT_TYPE_BF16, 4, 1, 1, 1), 1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_fill_inplace: a type=bf16 but must be f32 or f16");
}

static void test_shape_ops(void) {
    ct_tensor *a = T4(CT_TYPE_F32, 3, 2, 1, 2);
    /* REPEAT: any single-element type, a strided source, empty into empty */
    ct_tensor *r = ct_repeat_4d(ctx, a, 6, 4, 3, 2);
    CHECK(fresh(r, CT_TYPE_F32, 6, 4, 3, 2) && r->op == CT_OP_REPEAT && srcs_are(r, a, NULL) && params_zero_from(r, 0));
    ct_tensor *like = T4(CT_TYPE_I16, 3, 4, 1, 2);
    CHECK(fresh(ct_repeat(ctx, T4(CT_TYPE_I16, 3, 1, 1, 1), like), CT_TYPE_I16, 3, 4, 1, 2));
    CHECK(fresh(ct_repeat_4d(ctx, ct_transpose(ctx, a), 4, 6, 1, 2), CT_TYPE_F32, 4, 6, 1, 2));
    CHECK(fresh(ct_repeat_4d(ctx, T4(CT_TYPE_F16, 0, 2, 1, 1), 0, 4, 1, 1), CT_TYPE_F16, 0, 4, 1, 1));
    CHECK(ct_repeat_4d(ctx, a, 5, 4, 3, 2) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_repeat_4d: ne[0]=5 but must be a multiple of a ne[0]=3");
    CHECK(ct_repeat_4d(ctx, a, 3, 2, 1, -2) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_repeat_4d: ne[3]=-2 but must be >= 0");
    CHECK(ct_repeat_4d(ctx, T4(CT_TYPE_F32, 0, 2, 1, 1), 4, 2, 1, 1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_repeat_4d: a ne=[0, 2, 1, 1] is empty but the result ne=[4, 2, 1, 1] is not");
    CHECK(ct_repeat_4d(ctx, T4(CT_TYPE_Q8_0, 32, 1, 1, 1), 64, 1, 1, 1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_repeat_4d: a type=q8_0 but must be a type of single elements (not blocks)");
    CHECK(ct_repeat(ctx, a, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_repeat: b is NULL");

    /* CONCAT: every dim, block types in whole blocks, a permuted source */
    ct_tensor *b = T4(CT_TYPE_F32, 3, 5, 1, 2);
    r = ct_concat(ctx, a, b, 1);
    CHECK(fresh(r, CT_TYPE_F32, 3, 7, 1, 2) && r->op == CT_OP_CONCAT && srcs_are(r, a, b) && r->op_params[0] == 1 &&
          params_zero_from(r, 1));
    CHECK(fresh(ct_concat(ctx, a, T4(CT_TYPE_F32, 3, 2, 1, 4), 3), CT_TYPE_F32, 3, 2, 1, 6));
    /* empty tensors whose other dims are huge: the result's dim would pass int64 */
    CHECK(ct_concat(ctx, T4(CT_TYPE_F32, 0, INT64_MAX, 1, 1), T4(CT_TYPE_F32, 0, 2, 1, 1), 1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ne[1]=9223372036854775807 plus b ne[1]=2 overflows int64");
    CHECK(ct_pad_ext(ctx, T4(CT_TYPE_F32, 0, INT64_MAX, 1, 1), 0, 0, 1, 0, 0, 0, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ne[1]=9223372036854775807 plus lp1=1 and rp1=0 overflows int64");
    CHECK(fresh(ct_concat(ctx, T4(CT_TYPE_Q4_0, 64, 2, 1, 1), T4(CT_TYPE_Q4_0, 32, 2, 1, 1), 0), CT_TYPE_Q4_0, 96, 2,
                1, 1));
    CHECK(fresh(ct_concat(ctx, ct_transpose(ctx, T4(CT_TYPE_I8, 2, 3, 1, 1)), T4(CT_TYPE_I8, 1, 2, 1, 1), 0),
                CT_TYPE_I8, 4, 2, 1, 1));
    CHECK(ct_concat(ctx, a, b, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_concat: a ne[1]=2 but b ne[1]=5 (only dim 0 may differ)");
    CHECK(ct_concat(ctx, a, b, 4) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_concat: dim=4 but must be 0..3");
    CHECK(ct_concat(ctx, a, T4(CT_TYPE_F16, 3, 2, 1, 2), 2) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_concat: a type=f32 but b type=f16");

    /* PAD */
    r = ct_pad_ext(ctx, a, 1, 2, 0, 1, 3, 0, 0, 0);
    CHECK(fresh(r, CT_TYPE_F32, 6, 3, 4, 2) && r->op == CT_OP_PAD && srcs_are(r, a, NULL) && r->op_params[0] == 1 &&
          r->op_params[1] == 2 && r->op_params[3] == 1 && r->op_params[4] == 3 && r->op_params[8] == 0 &&
          params_zero_from(r, 9));
    r = ct_pad_ext_circular(ctx, a, 4, 3, 0, 0, 0, 0, 1, 1);
    CHECK(fresh(r, CT_TYPE_F32, 10, 2, 1, 4) && r->op_params[8] == 1);
    r = ct_pad(ctx, a, 1, 0, 0, 2);
    CHECK(fresh(r, CT_TYPE_F32, 4, 2, 1, 4) && r->op_params[0] == 0 && r->op_params[1] == 1 && r->op_params[7] == 2);
    CHECK(fresh(ct_pad(ctx, T4(CT_TYPE_F32, 0, 2, 1, 1), 3, 0, 0, 0), CT_TYPE_F32, 3, 2, 1, 1));
    CHECK(ct_pad_ext_circular(ctx, T4(CT_TYPE_F32, 0, 2, 1, 1), 3, 0, 0, 0, 0, 0, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_pad_ext_circular: a ne=[0, 2, 1, 1] is empty: nothing to wrap around");
    CHECK(ct_pad_ext(ctx, a, 0, 0, -1, 0, 0, 0, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_pad_ext: lp1=-1 rp1=0 but must be >= 0");
    CHECK(ct_pad(ctx, T4(CT_TYPE_F16, 4, 1, 1, 1), 1, 0, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_pad: a type=f16 but must be f32");

    /* ARANGE */
    r = ct_arange(ctx, 0.0f, 10.0f, 3.0f);
    CHECK(fresh(r, CT_TYPE_F32, 4, 1, 1, 1) && r->op == CT_OP_ARANGE && srcs_are(r, NULL, NULL) &&
          ct_op_param_f32(r, 0) == 0.0f && ct_op_param_f32(r, 1) == 10.0f && ct_op_param_f32(r, 2) == 3.0f &&
          params_zero_from(r, 3));
    CHECK(ct_arange(ctx, 1.0f, 1.0f, 1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_arange: start=1 stop=1 step=1 but must be finite with stop > start and step > 0");
    CHECK(ct_arange(ctx, 0.0f, 1.0f, -1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_arange: start=0 stop=1 step=-1 but must be");
    CHECK(ct_arange(ctx, 0.0f, NAN, 1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_arange: start=0 stop=nan step=1 but must be");
    CHECK(ct_arange(ctx, 0.0f, 1e30f, 1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_arange: start=0 stop=1e+30 step=1 give 1e+30 values but at most 2147483647");
    CHECK(ct_arange(NULL, 0.0f, 1.0f, 1.0f) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_arange: ctx is NULL");

    /* ACC */
    ct_tensor *x = T4(CT_TYPE_F32, 8, 4, 2, 1), *y = T4(CT_TYPE_F32, 4, 3, 2, 1);
    r = ct_acc(ctx, x, y, x->nb[1], x->nb[2], x->nb[3], 8);
    CHECK(fresh(r, CT_TYPE_F32, 8, 4, 2, 1) && r->op == CT_OP_ACC && srcs_are(r, x, y) &&
          r->op_params[0] == (int32_t)x->nb[1] && r->op_params[1] == (int32_t)x->nb[2] &&
          r->op_params[2] == (int32_t)x->nb[3] && r->op_params[3] == 8 && r->op_params[4] == 0 && params_zero_from(r, 5));
    r = ct_acc_inplace(ctx, x, y, x->nb[1], x->nb[2], x->nb[3], 0);
    CHECK(r && r->op == CT_OP_ACC && r->view_src == x && r->data == x->data && r->op_params[4] == 1);
    /* b a strided view; the window's last element ends at a's last byte */
    ct_tensor *yv = ct_view_2d(ctx, T4(CT_TYPE_F32, 8, 4, 1, 1), 8, 3, 32, 32);
    CHECK(fresh(ct_acc(ctx, x, yv, 32, 96, 192, 256 - 4 - 7 * 4 - 2 * 32), CT_TYPE_F32, 8, 4, 2, 1));
    CHECK(ct_acc(ctx, x, yv, 32, 96, 192, 256 - 7 * 4 - 2 * 32) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_acc: the window of b (nb1=32 nb2=96 nb3=192 offset=164) ends at byte 260 but a has 256");
    CHECK(ct_acc(ctx, x, y, 30, 96, 192, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_acc: nb1=30 nb2=96 nb3=192 offset=0 but each must be a multiple of 4 below 2^31");
    CHECK(ct_acc(ctx, x, T4(CT_TYPE_F32, 8, 4, 3, 1), 32, 96, 192, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_acc: b has 96 elements but a only 64");
    CHECK(ct_acc(ctx, ct_transpose(ctx, x), y, 32, 96, 192, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "must be contiguous");
    CHECK(ct_acc(ctx, x, ct_transpose(ctx, T4(CT_TYPE_F32, 3, 4, 1, 1)), 32, 96, 192, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_acc: b nb[0]=12 but its rows must be packed (nb[0]=4)");
    CHECK(ct_acc_inplace(ctx, x, T4(CT_TYPE_F16, 4, 1, 1, 1), 32, 96, 192, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_acc_inplace: a type=f32 and b type=f16 but both must be f32");
    CHECK(ct_acc(ctx, x, NULL, 32, 96, 192, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_acc: b is NULL");
}

int main(void) {
    tu_init("test_ops");
    ctx = ct_context_new((ct_context_params){.mem_size = 4 << 20, .mem_buffer = NULL, .no_alloc = false});
    CHECK(ctx != NULL);
    test_get_rows();
    test_set_rows();
    test_mul_mat();
    test_copies();
    test_norms();
    test_sum_rows();
    test_unary();
    test_math();
    test_shape_ops();
    test_scale();
    test_binary();
    test_soft_max();
    test_rope();
    test_glu();
    test_reduce_argsort();
    test_mul_mat_id();
    test_add_id();
    test_flash_attn();
    test_arena_full();
    ct_context_free(ctx);
    return tu_finish();
}

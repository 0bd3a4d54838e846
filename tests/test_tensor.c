/* Contexts and tensors: creation, strides and sizes, contiguity predicates,
 * views, reshape, permute, transpose, arena accounting, iteration and names. */
#include "testutil.h"

#include <stdint.h>
#include <stdlib.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static ct_context *new_ctx(size_t size, bool no_alloc) {
    ct_context *ctx = ct_context_new((ct_context_params){.mem_size = size, .mem_buffer = NULL, .no_alloc = no_alloc});
    CHECK(ctx != NULL);
    return ctx;
}

static size_t align64(size_t n) { return (n + CT_MEM_ALIGN - 1) / CT_MEM_ALIGN * CT_MEM_ALIGN; }

static bool strides_are(const ct_tensor *t, size_t nb0, size_t nb1, size_t nb2, size_t nb3) {
    return t && t->nb[0] == nb0 && t->nb[1] == nb1 && t->nb[2] == nb2 && t->nb[3] == nb3;
}

static bool shape_is(const ct_tensor *t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    return t && t->ne[0] == ne0 && t->ne[1] == ne1 && t->ne[2] == ne2 && t->ne[3] == ne3;
}

/* Strides and byte sizes against docs/TENSORS.md, Strides and byte sizes, for plain and block types. */
static void test_creation(void) {
    ct_context *ctx = new_ctx(1 << 20, false);
    const ct_type types[] = {CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_BF16, CT_TYPE_I8, CT_TYPE_I64,
                             CT_TYPE_Q4_0, CT_TYPE_Q8_0, CT_TYPE_Q4_K, CT_TYPE_IQ4_NL};
    for (size_t k = 0; k < ARRAY_LEN(types); k++) {
        const ct_type type = types[k];
        const int64_t blck = ct_type_block_size(type);
        const size_t ts = ct_type_size(type);
        const int64_t ne[4] = {blck * (1 + tu_rand_below(3)), 1 + tu_rand_below(3), 1 + tu_rand_below(3),
                               1 + tu_rand_below(3)};
        ct_tensor *t = ct_tensor_new(ctx, type, 4, ne);
        CHECK(t != NULL);
        if (!t) continue;
        CHECK(t->type == type && t->op == CT_OP_NONE && t->view_src == NULL && t->buffer == NULL);
        CHECK(shape_is(t, ne[0], ne[1], ne[2], ne[3]));
        const size_t nb1 = ts * (size_t)(ne[0] / blck);
        CHECK(strides_are(t, ts, nb1, nb1 * (size_t)ne[1], nb1 * (size_t)(ne[1] * ne[2])));
        CHECK(ct_nbytes(t) == nb1 * (size_t)(ne[1] * ne[2] * ne[3]));
        CHECK(ct_nelements(t) == ne[0] * ne[1] * ne[2] * ne[3]);
        CHECK(ct_nrows(t) == ne[1] * ne[2] * ne[3]);
        CHECK(ct_tensor_row_size(t) == nb1);
        CHECK(t->data != NULL && (uintptr_t)t->data % CT_MEM_ALIGN == 0);
        CHECK(ct_is_contiguous(t) && ct_is_contiguous_rows(t) && !ct_is_permuted(t) && !ct_is_transposed(t));
        for (int i = 0; i < 16; i++) CHECK(t->op_params[i] == 0);
        for (int i = 0; i < CT_MAX_SRC; i++) CHECK(t->src[i] == NULL);
        CHECK(t->name[0] == '\0');
    }

    /* Trailing dims are 1; 1d..4d wrappers agree with ct_tensor_new. */
    ct_tensor *t1 = ct_tensor_new_1d(ctx, CT_TYPE_F32, 7);
    ct_tensor *t2 = ct_tensor_new_2d(ctx, CT_TYPE_F16, 7, 3);
    ct_tensor *t3 = ct_tensor_new_3d(ctx, CT_TYPE_Q8_0, 64, 3, 2);
    ct_tensor *t4 = ct_tensor_new_4d(ctx, CT_TYPE_I32, 2, 3, 4, 5);
    CHECK(shape_is(t1, 7, 1, 1, 1) && strides_are(t1, 4, 28, 28, 28) && ct_nbytes(t1) == 28);
    CHECK(shape_is(t2, 7, 3, 1, 1) && strides_are(t2, 2, 14, 42, 42) && ct_nbytes(t2) == 42);
    /* Q8_0: 34-byte blocks of 32; a row of 64 is two blocks. */
    CHECK(shape_is(t3, 64, 3, 2, 1) && strides_are(t3, 34, 68, 204, 408) && ct_nbytes(t3) == 408);
    CHECK(shape_is(t4, 2, 3, 4, 5) && strides_are(t4, 4, 8, 24, 96) && ct_nbytes(t4) == 480);
    CHECK(ct_n_dims(t1) == 1 && ct_n_dims(t2) == 2 && ct_n_dims(t3) == 3 && ct_n_dims(t4) == 4);
    ct_tensor *t5 = ct_tensor_new_4d(ctx, CT_TYPE_F32, 4, 1, 1, 5);
    CHECK(ct_n_dims(t5) == 4);
    ct_tensor *t6 = ct_tensor_new_4d(ctx, CT_TYPE_F32, 1, 1, 2, 1);
    CHECK(ct_n_dims(t6) == 3);

    /* ct_tensor_dup: same type and shape, new memory, no op. */
    ct_tensor *d = ct_tensor_dup(ctx, t3);
    CHECK(d && d->type == CT_TYPE_Q8_0 && ct_are_same_shape(d, t3) && d->data != t3->data && d->op == CT_OP_NONE);
    CHECK(!ct_are_same_shape(t1, t2));

    /* Empty tensors: any ne == 0 gives 0 bytes and is_empty. */
    ct_tensor *e = ct_tensor_new_2d(ctx, CT_TYPE_F32, 0, 3);
    CHECK(e && ct_nbytes(e) == 0 && ct_is_empty(e) && ct_nelements(e) == 0 && ct_is_contiguous(e));
    CHECK(e && strides_are(e, 4, 0, 0, 0));
    ct_tensor *e2 = ct_tensor_new_4d(ctx, CT_TYPE_Q4_0, 32, 2, 0, 4);
    CHECK(e2 && ct_nbytes(e2) == 0 && ct_is_empty(e2) && ct_nrows(e2) == 0 && strides_are(e2, 18, 18, 36, 0));
    CHECK(!ct_is_empty(t4));
    CHECK(ct_n_dims(e2) == 4);

    /* Data of consecutive tensors does not overlap and stays inside the arena. */
    CHECK((uint8_t *)t2->data >= (uint8_t *)t1->data + ct_nbytes(t1));
    ct_context_free(ctx);
}

static void test_creation_errors(void) {
    ct_context *ctx = new_ctx(1 << 16, false);
    const int64_t ne[4] = {4, 4, 4, 4};
    size_t used = ct_context_used(ctx);

    CHECK(ct_tensor_new(NULL, CT_TYPE_F32, 1, ne) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_new: ctx is NULL");
    CHECK(ct_tensor_new(ctx, CT_TYPE_F32, 0, ne) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_new: n_dims=0 is outside 1..4");
    CHECK(ct_tensor_new(ctx, CT_TYPE_F32, 5, ne) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "n_dims=5");
    CHECK(ct_tensor_new(ctx, CT_TYPE_F32, 2, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_new: ne is NULL");
    CHECK(ct_tensor_new_2d(ctx, CT_TYPE_F32, 4, -1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_new: tensor ne[1]=-1 is negative");
    CHECK(ct_tensor_new_1d(ctx, CT_TYPE_Q4_0, 31) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ne[0]=31 is not a multiple of q4_0's block size 32");
    CHECK(ct_tensor_new_1d(ctx, CT_TYPE_Q4_K, 32) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ne[0]=32 is not a multiple of q4_K's block size 256");
    CHECK(ct_tensor_new_1d(ctx, (ct_type)4, 4) == NULL); /* removed id */
    CHECK_ERROR(CT_INVALID_ARGUMENT, "type=4 is not a valid type id");
    CHECK(ct_tensor_new_1d(ctx, CT_TYPE_COUNT, 4) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "type=39 is not a valid type id");
    CHECK(ct_tensor_new_1d(ctx, (ct_type)-1, 4) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "type=-1 is not a valid type id");

    /* Absurd shapes are refused, never wrapped. */
    CHECK(ct_tensor_new_2d(ctx, CT_TYPE_F32, INT64_MAX, 2) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overflows the byte size");
    CHECK(ct_tensor_new_2d(ctx, CT_TYPE_I8, INT64_MAX, 2) == NULL); /* bytes fit size_t, elements don't fit int64 */
    CHECK_ERROR(CT_INVALID_ARGUMENT, "shape [9223372036854775807, 2, 1, 1] of i8 overflows");
    CHECK(ct_tensor_new_2d(ctx, CT_TYPE_F32, INT64_C(1) << 61, 2) == NULL); /* 2^62 elements, 2^64 bytes */
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overflows the byte size");
    CHECK(ct_tensor_new_4d(ctx, CT_TYPE_F64, 1 << 20, 1 << 20, 1 << 20, 1 << 3) == NULL); /* 2^66 bytes */
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overflows the byte size");
    CHECK(ct_tensor_new_4d(ctx, CT_TYPE_Q8_0, INT64_C(32) << 40, 1 << 20, 1, 1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "of q8_0 overflows the byte size");
    /* An empty tensor with a huge dim is fine: 0 bytes. */
    ct_tensor *e = ct_tensor_new_2d(ctx, CT_TYPE_F32, 0, INT64_MAX);
    CHECK(e && ct_nbytes(e) == 0 && ct_nelements(e) == 0);
    /* Large but representable sizes in a no_alloc context: fine. */
    ct_context *na = new_ctx(1 << 12, true);
    ct_tensor *big = ct_tensor_new_2d(na, CT_TYPE_F32, INT64_C(1) << 30, 1 << 20);
    CHECK(big && ct_nbytes(big) == (size_t)1 << 52 && big->data == NULL);
    ct_context_free(na);

    /* Failures consume no arena (only e was created). */
    CHECK(ct_context_used(ctx) == used + ct_tensor_overhead());
    ct_context_free(ctx);
}

/* An allocator that fails from the n-th call on (0: always). */
static int allocs_left;
static void *flaky_alloc(size_t size, size_t alignment, void *user) {
    (void)user;
    if (allocs_left-- <= 0) return NULL;
    void *p = NULL;
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}
static void plain_free(void *p, void *user) {
    (void)user;
    free(p);
}

static void test_alloc_failure(void) {
    const ct_allocator hooks = {flaky_alloc, plain_free, NULL};
    CHECK(ct_set_allocator(&hooks) == CT_OK);
    allocs_left = 0;
    CHECK(ct_context_new((ct_context_params){.mem_size = 4096, .mem_buffer = NULL, .no_alloc = false}) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_context_new: cannot allocate the context");
    allocs_left = 1; /* the context struct, not its arena: nothing may leak (LeakSanitizer) */
    CHECK(ct_context_new((ct_context_params){.mem_size = 4096, .mem_buffer = NULL, .no_alloc = false}) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_context_new: cannot allocate an arena of 4096 bytes");
    allocs_left = 2;
    ct_context *ctx = ct_context_new((ct_context_params){.mem_size = 4096, .mem_buffer = NULL, .no_alloc = false});
    CHECK(ctx != NULL);
    ct_context_free(ctx);
    CHECK(ct_set_allocator(NULL) == CT_OK);
}

/* Arena accounting, exhaustion with caller memory and with the context's own. */
static void test_arena(void) {
    const size_t oh = ct_tensor_overhead();
    CHECK(oh % CT_MEM_ALIGN == 0 && oh >= sizeof(ct_tensor));

    /* Own memory: exactly two tensors of 100 floats fit, the third does not. */
    const size_t one = oh + align64(400);
    ct_context *ctx = new_ctx(2 * one, false);
    CHECK(ct_context_size(ctx) == 2 * one && ct_context_used(ctx) == 0 && !ct_context_no_alloc(ctx));
    ct_tensor *a = ct_tensor_new_1d(ctx, CT_TYPE_F32, 100);
    CHECK(a && ct_context_used(ctx) == one);
    ct_tensor *b = ct_tensor_new_1d(ctx, CT_TYPE_F32, 100);
    CHECK(b && ct_context_used(ctx) == 2 * one);
    ct_clear_error();
    CHECK(ct_tensor_new_1d(ctx, CT_TYPE_F32, 1) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_tensor_new: context arena full: tensor needs");
    CHECK(strstr(ct_last_error(), "but 0 of ") != NULL);
    CHECK(ct_context_used(ctx) == 2 * one);
    /* Writing the whole of both tensors stays in bounds (ASan checks). */
    memset(a->data, 0xAB, ct_nbytes(a));
    memset(b->data, 0xCD, ct_nbytes(b));
    CHECK(((uint8_t *)a->data)[399] == 0xAB);
    ct_context_free(ctx);

    /* Caller memory, 64-aligned: header fits, data does not -> nothing is carved. */
    void *mem = NULL;
    CHECK(posix_memalign(&mem, CT_MEM_ALIGN, 4096) == 0);
    ctx = ct_context_new((ct_context_params){.mem_size = 4096, .mem_buffer = mem, .no_alloc = false});
    CHECK(ctx != NULL);
    ct_tensor *c = ct_tensor_new_1d(ctx, CT_TYPE_F32, 256); /* oh + 1024 bytes */
    CHECK(c && (uint8_t *)c->data >= (uint8_t *)mem && (uint8_t *)c->data + 1024 <= (uint8_t *)mem + 4096);
    size_t used = ct_context_used(ctx);
    CHECK(ct_tensor_new_1d(ctx, CT_TYPE_F32, 1024) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "needs");
    CHECK(ct_context_used(ctx) == used);
    /* A smaller one still fits afterwards. */
    CHECK(ct_tensor_new_1d(ctx, CT_TYPE_F32, 16) != NULL);
    ct_context_free(ctx); /* must not free caller memory */
    memset(mem, 0, 4096);
    free(mem);

    /* Misaligned caller memory is refused. */
    uint8_t *raw = malloc(4096 + 64);
    uint8_t *odd = raw + (CT_MEM_ALIGN - (uintptr_t)raw % CT_MEM_ALIGN) % CT_MEM_ALIGN + 8;
    CHECK(ct_context_new((ct_context_params){.mem_size = 1024, .mem_buffer = odd, .no_alloc = false}) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_context_new: mem_buffer=");
    CHECK(strstr(ct_last_error(), "is not aligned to 64 bytes") != NULL);
    free(raw);

    /* mem_size 0: a valid, empty context in which every creation fails. */
    ctx = new_ctx(0, false);
    CHECK(ct_context_size(ctx) == 0 && ct_context_first_tensor(ctx) == NULL);
    CHECK(ct_tensor_new_1d(ctx, CT_TYPE_F32, 1) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "context arena full");
    CHECK(ct_graph_new(ctx, 4) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_graph_new: context arena full: graph needs");
    ct_context_free(ctx);

    /* Only whole alignment units count. */
    ctx = new_ctx(1000, false);
    CHECK(ct_context_size(ctx) == 960);
    ct_context_free(ctx);

    ct_context_free(NULL);
    CHECK(ct_context_used(NULL) == 0 && ct_context_size(NULL) == 0);
}

static void test_no_alloc(void) {
    const size_t oh = ct_tensor_overhead();
    ct_context *ctx = new_ctx(8 * oh, true);
    CHECK(ct_context_no_alloc(ctx));
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 1000, 1000);
    CHECK(a && a->data == NULL && ct_nbytes(a) == 4000000 && ct_context_used(ctx) == oh);
    ct_tensor *v = ct_view_2d(ctx, a, 10, 10, a->nb[1], 40);
    CHECK(v && v->data == NULL && v->view_src == a && v->view_offs == 40 && ct_context_used(ctx) == 2 * oh);
    ct_tensor *r = ct_mul_mat(ctx, a, a);
    CHECK(r && r->data == NULL && ct_context_used(ctx) == 3 * oh);
    ct_context_free(ctx);
}

static void test_iteration_and_names(void) {
    ct_context *ctx = new_ctx(1 << 16, false);
    CHECK(ct_context_first_tensor(ctx) == NULL);
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 4, 3);
    ct_tensor *b = ct_tensor_new_2d(ctx, CT_TYPE_F32, 4, 3);
    ct_tensor *v = ct_view_tensor(ctx, a);
    ct_tensor *m = ct_mul_mat(ctx, a, b);
    ct_tensor *t = ct_transpose(ctx, b);
    CHECK(ct_tensor_new_1d(ctx, CT_TYPE_Q4_0, 3) == NULL); /* a failure adds nothing */
    ct_tensor *want[] = {a, b, v, m, t};
    ct_tensor *it = ct_context_first_tensor(ctx);
    for (size_t i = 0; i < ARRAY_LEN(want); i++) {
        CHECK(it == want[i]);
        it = ct_context_next_tensor(ctx, it);
    }
    CHECK(it == NULL);

    /* A tensor of another context is refused. */
    ct_context *other = new_ctx(1 << 12, false);
    ct_tensor *x = ct_tensor_new_1d(other, CT_TYPE_F32, 1);
    CHECK(ct_context_next_tensor(ctx, x) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "is not a tensor of this context");
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_context_next_tensor: tensor ");
    /* A pointer that is no tensor is refused by its address alone, never read: a heap block
     * of 8 bytes (ASan reports a read past it), and one shaped like a tensor whose name
     * must not reach the message. */
    ct_tensor *small = malloc(8);
    ct_tensor *fake = calloc(1, sizeof(ct_tensor));
    CHECK(small && fake);
    if (small && fake) {
        memset(small, 0x41, 8);
        strcpy(fake->name, "not-a-tensor");
        char msg[96];
        snprintf(msg, sizeof msg, "tensor %p is not a tensor of this context", (void *)small);
        CHECK(ct_context_next_tensor(ctx, small) == NULL);
        CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
        CHECK(ct_context_next_tensor(ctx, fake) == NULL);
        CHECK_ERROR(CT_INVALID_ARGUMENT, "is not a tensor of this context (arena ");
        CHECK_MSG(!strstr(ct_last_error(), "not-a-tensor"), "the message read the pointer: %s", ct_last_error());
    }
    free(small);
    free(fake);
    CHECK(ct_context_next_tensor(ctx, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_context_next_tensor: tensor is NULL");
    CHECK(ct_context_first_tensor(NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ctx is NULL");
    ct_context_free(other);

    /* Names: set, get, look up, truncate. */
    CHECK(strcmp(ct_tensor_get_name(a), "") == 0);
    CHECK(ct_tensor_set_name(a, "weights") == a && strcmp(ct_tensor_get_name(a), "weights") == 0);
    ct_tensor_set_name(b, "bias");
    CHECK(ct_context_get_tensor(ctx, "weights") == a);
    CHECK(ct_context_get_tensor(ctx, "bias") == b);
    CHECK(ct_context_get_tensor(ctx, "nothing") == NULL);
    ct_tensor_set_name(m, "bias"); /* the first of two with a name wins */
    CHECK(ct_context_get_tensor(ctx, "bias") == b);
    char longname[100];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ct_tensor_set_name(v, longname);
    CHECK(strlen(ct_tensor_get_name(v)) == CT_MAX_NAME - 1 && strncmp(v->name, longname, CT_MAX_NAME - 1) == 0);
    ct_tensor_set_name(v, v->name); /* aliasing its own name is fine */
    CHECK(strlen(v->name) == CT_MAX_NAME - 1);
    CHECK(ct_tensor_set_name(NULL, "x") == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_set_name: t is NULL");
    CHECK(ct_tensor_set_name(a, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_set_name: name is NULL");
    CHECK(strcmp(ct_tensor_get_name(a), "weights") == 0);
    CHECK(ct_context_get_tensor(ctx, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_context_get_tensor: name is NULL");
    /* ct_set_output flags a tensor output, once however often it is called */
    CHECK(b->flags == 0);
    CHECK(ct_set_output(b) == b && b->flags == CT_TENSOR_FLAG_OUTPUT);
    CHECK(ct_set_output(b) == b && b->flags == CT_TENSOR_FLAG_OUTPUT);
    CHECK(ct_set_output(NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_output: t is NULL");

    /* View names follow ggml's; a long name is truncated, not overflowed. */
    CHECK(strcmp(ct_view_tensor(ctx, a)->name, "weights (view)") == 0);
    CHECK(strcmp(ct_transpose(ctx, a)->name, "weights (transposed)") == 0);
    CHECK(strcmp(ct_permute(ctx, a, 0, 1, 3, 2)->name, "weights (permuted)") == 0);
    CHECK(strcmp(ct_reshape_1d(ctx, a, 12)->name, "weights (reshaped)") == 0);
    ct_tensor *lv = ct_view_tensor(ctx, v);
    CHECK(lv && strlen(lv->name) == CT_MAX_NAME - 1);
    /* Derived names only from named tensors; error messages name a named tensor. */
    CHECK(t->name[0] == '\0');
    CHECK(ct_reshape_1d(ctx, t, 12) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_reshape_1d: a is not contiguous");
    CHECK(ct_reshape_1d(ctx, ct_transpose(ctx, a), 12) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_reshape_1d: a \"weights (transposed)\" is not contiguous");
    ct_context_free(ctx);
}

/* The predicates of docs/TENSORS.md, Contiguity predicates, on hand-built layouts; the expected answers are
 * worked out from the rule: dim 0 packed unless ne0 == blck; dims i > n with
 * ne != 1 must continue the running stride; dims i <= n reset it to ne*nb. */
static void test_predicates(void) {
    ct_context *ctx = new_ctx(1 << 16, false);

    /* Dense [4,3,2,5]: contiguous at every level. */
    ct_tensor *d = ct_tensor_new_4d(ctx, CT_TYPE_F32, 4, 3, 2, 5);
    for (int n = 0; n <= 2; n++) CHECK(ct_is_contiguous_n(d, n));

    /* Rows 0..5 of [8,6], first 4 columns: ne [4,6], nb [4,32,192,192].
     * n=0: nb1=32 but the running stride is 16 -> no. n=1: dim 1 free -> yes. */
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 8, 6);
    ct_tensor *v = ct_view_2d(ctx, a, 4, 6, 32, 0);
    CHECK(strides_are(v, 4, 32, 192, 192));
    CHECK(!ct_is_contiguous(v) && ct_is_contiguous_n(v, 1) && ct_is_contiguous_n(v, 2));
    CHECK(ct_is_contiguous_rows(v) && !ct_is_transposed(v) && !ct_is_permuted(v));

    /* First 3 of 6 rows of each of 4 matrices of [8,6,4]: nb [4,32,192,768].
     * n=0: dim 1 ok (32 == 32) then dim 2 needs 96 but is 192 -> no.
     * n=1: running stride 3*32 = 96, dim 2 needs 96 -> no. n=2: dims 1, 2 free -> yes. */
    ct_tensor *b = ct_tensor_new_3d(ctx, CT_TYPE_F32, 8, 6, 4);
    ct_tensor *w = ct_view_3d(ctx, b, 8, 3, 4, 32, 192, 0);
    CHECK(strides_are(w, 4, 32, 192, 768));
    CHECK(!ct_is_contiguous_n(w, 0) && !ct_is_contiguous_n(w, 1) && ct_is_contiguous_n(w, 2));

    /* Transposed [3,5] -> ne [5,3], nb [12,4,60,60]: dim 0 not packed -> never contiguous. */
    ct_tensor *c = ct_tensor_new_2d(ctx, CT_TYPE_F32, 3, 5);
    ct_tensor *ct = ct_transpose(ctx, c);
    CHECK(shape_is(ct, 5, 3, 1, 1) && strides_are(ct, 12, 4, 60, 60));
    for (int n = 0; n <= 2; n++) CHECK(!ct_is_contiguous_n(ct, n));
    CHECK(!ct_is_contiguous_rows(ct) && ct_is_transposed(ct) && ct_is_permuted(ct));

    /* permute(0,2,1,3) of [2,3,4,5]: ne [2,4,3,5], nb [4,24,8,96].
     * n=0: dim 1 needs 8, is 24 -> no. n=1: stride 4*24 = 96, dim 2 needs 96, is 8 -> no.
     * n=2: stride 3*8 = 24, dim 3 needs 24, is 96 -> no. Rows packed; permuted (24 > 8). */
    ct_tensor *e = ct_tensor_new_4d(ctx, CT_TYPE_F32, 2, 3, 4, 5);
    ct_tensor *p = ct_permute(ctx, e, 0, 2, 1, 3);
    CHECK(shape_is(p, 2, 4, 3, 5) && strides_are(p, 4, 24, 8, 96));
    for (int n = 0; n <= 2; n++) CHECK(!ct_is_contiguous_n(p, n));
    CHECK(ct_is_contiguous_rows(p) && !ct_is_transposed(p) && ct_is_permuted(p));

    /* Transposed column [5,1] -> ne [1,5], nb [20,4,20,20]: ne0 == 1 == blck so dim 0
     * is exempt; dim 1 continues with 4 -> contiguous, although "transposed". */
    ct_tensor *col = ct_tensor_new_2d(ctx, CT_TYPE_F32, 5, 1);
    ct_tensor *row = ct_transpose(ctx, col);
    CHECK(strides_are(row, 20, 4, 20, 20));
    CHECK(ct_is_contiguous(row) && ct_is_contiguous_rows(row) && ct_is_transposed(row));

    /* One-element dims are skipped whatever their stride: [4,1,3] with nb1 = 1000. */
    ct_tensor *f = ct_tensor_new_3d(ctx, CT_TYPE_F32, 4, 1, 3);
    ct_tensor *fv = ct_view_3d(ctx, f, 4, 1, 3, 1000, 16, 0);
    CHECK(fv && strides_are(fv, 4, 1000, 16, 48) && ct_is_contiguous(fv));
    CHECK(ct_is_permuted(fv)); /* 1000 > 16: the stride order alone decides */

    /* Q8_0 [64,3], first block of each row: ne0 == blck, nb1 = 68, running stride 34.
     * n=0 -> no; n=1 -> yes; rows packed since ne0 == blck. */
    ct_tensor *q = ct_tensor_new_2d(ctx, CT_TYPE_Q8_0, 64, 3);
    ct_tensor *qv = ct_view_2d(ctx, q, 32, 3, 68, 0);
    CHECK(qv && strides_are(qv, 34, 68, 204, 204));
    CHECK(!ct_is_contiguous(qv) && ct_is_contiguous_n(qv, 1) && ct_is_contiguous_rows(qv));

    /* Every 2nd element of a row of 8 (nb0 = 8 via a permuted view): not contiguous rows. */
    ct_tensor *g = ct_tensor_new_2d(ctx, CT_TYPE_F32, 2, 8);
    ct_tensor *gt = ct_transpose(ctx, g); /* ne [8,2], nb [8,4] */
    CHECK(!ct_is_contiguous_rows(gt) && !ct_is_contiguous_n(gt, 2));

    CHECK(!ct_is_contiguous(NULL) && !ct_is_permuted(NULL) && !ct_are_same_shape(NULL, d));
    ct_context_free(ctx);
}

static void test_views(void) {
    ct_context *ctx = new_ctx(1 << 16, false);
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 8, 6); /* 192 bytes */
    float *ad = a->data;
    for (int i = 0; i < 48; i++) ad[i] = (float)i;

    ct_tensor *v1 = ct_view_1d(ctx, a, 10, 8);
    CHECK(v1 && v1->op == CT_OP_VIEW && v1->src[0] == a && v1->view_src == a && v1->view_offs == 8);
    CHECK(v1 && v1->data == (uint8_t *)a->data + 8 && ((float *)v1->data)[0] == 2.0f);
    size_t off;
    memcpy(&off, v1->op_params, sizeof off);
    CHECK(off == 8);
    /* Nested: view_src is the root and offsets add up; op_params keep the local offset. */
    ct_tensor *v2 = ct_view_1d(ctx, v1, 4, 12);
    CHECK(v2 && v2->view_src == a && v2->src[0] == v1 && v2->view_offs == 20);
    CHECK(v2 && v2->data == (uint8_t *)a->data + 20 && ((float *)v2->data)[0] == 5.0f);
    memcpy(&off, v2->op_params, sizeof off);
    CHECK(off == 12);
    ct_tensor *vt = ct_view_tensor(ctx, v2);
    CHECK(vt && vt->view_src == a && vt->view_offs == 20 && ct_are_same_shape(vt, v2) && vt->op == CT_OP_VIEW);

    /* A view may reach the root's last byte, but not one past it. */
    CHECK(ct_view_1d(ctx, a, 48, 0) != NULL);
    CHECK(ct_view_1d(ctx, a, 47, 4) != NULL);
    CHECK(ct_view_1d(ctx, a, 48, 4) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_view_1d: view bytes [4, 196) lie outside a's 192 bytes");
    /* Measured from the root even through a view: v1 starts at 8, so 184 more is too many. */
    CHECK(ct_view_1d(ctx, v1, 46, 0) != NULL);
    CHECK(ct_view_1d(ctx, v1, 47, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "lie outside a's root's 192 bytes");
    /* Strided: 6 rows of 4 with nb1 = 32 from offset 16 end at 16 + 5*32 + 16 = 192: fits. */
    CHECK(ct_view_2d(ctx, a, 4, 6, 32, 16) != NULL);
    CHECK(ct_view_2d(ctx, a, 4, 6, 32, 20) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "view bytes [20, 196)");
    CHECK(ct_view_3d(ctx, a, 2, 2, 2, 8, 96, 0) != NULL);
    /* Span 4 + (4 + 8 + 48 + 96) = 160 from offset 80 ends at 240. */
    CHECK(ct_view_4d(ctx, a, 2, 2, 2, 2, 8, 48, 96, 80) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_view_4d: view bytes [80, 240) lie outside a's 192 bytes");
    CHECK(ct_view_4d(ctx, a, 2, 2, 2, 2, 8, 16, 32, 0) != NULL);
    /* Offsets and strides that overflow are errors, not wraps. */
    CHECK(ct_view_1d(ctx, a, 1, SIZE_MAX) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_view_1d:");
    CHECK(ct_view_1d(ctx, v1, 1, SIZE_MAX - 4) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overflows after a's own offset 8");
    CHECK(ct_view_2d(ctx, a, 1, 3, SIZE_MAX / 2, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overflows the byte size");
    CHECK(ct_view_2d(ctx, a, 4, INT64_MAX, 0, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "has too many elements");
    CHECK(ct_view_1d(ctx, a, -1, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_view_1d: view ne[0]=-1 is negative");
    /* An empty view may sit at the end, but not past it. */
    ct_tensor *ev = ct_view_1d(ctx, a, 0, 192);
    CHECK(ev && ct_nbytes(ev) == 0);
    CHECK(ct_view_1d(ctx, a, 0, 193) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "view bytes [193, 193)");
    /* Quantized views must cover whole blocks. */
    ct_tensor *q = ct_tensor_new_2d(ctx, CT_TYPE_Q4_0, 64, 2);
    CHECK(ct_view_1d(ctx, q, 16, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_view_1d: view ne[0]=16 is not a multiple of q4_0's block size 32");
    ct_tensor *qv = ct_view_2d(ctx, q, 32, 2, 36, 18);
    CHECK(qv && strides_are(qv, 18, 36, 72, 72) && ct_nbytes(qv) == 54);
    CHECK(ct_view_1d(NULL, a, 1, 0) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_view_1d: ctx is NULL");
    CHECK(ct_view_tensor(ctx, NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_view_tensor: a is NULL");

    /* Reshape: contiguous strides over the same bytes. */
    ct_tensor *r = ct_reshape_3d(ctx, a, 4, 3, 4);
    CHECK(r && r->op == CT_OP_RESHAPE && r->src[0] == a && r->view_src == a && r->data == a->data);
    CHECK(shape_is(r, 4, 3, 4, 1) && strides_are(r, 4, 16, 48, 192) && ct_is_contiguous(r));
    ct_tensor *r2 = ct_reshape_4d(ctx, r, 2, 2, 2, 6);
    CHECK(r2 && r2->view_src == a && shape_is(r2, 2, 2, 2, 6) && strides_are(r2, 4, 8, 16, 32));
    ct_tensor *r3 = ct_reshape(ctx, v2, 2, (const int64_t[]){2, 2});
    CHECK(r3 && r3->view_offs == 20 && ((float *)r3->data)[3] == 8.0f);
    CHECK(ct_reshape_2d(ctx, a, 5, 10) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_reshape_2d: result shape [5, 10, 1, 1] has 50 elements but a has 48");
    CHECK(ct_reshape_2d(ctx, ct_transpose(ctx, a), 6, 8) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_reshape_2d: a is not contiguous (nb=[32, 4, 192, 192])");
    CHECK(ct_reshape(ctx, a, 0, (const int64_t[]){48}) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_reshape: n_dims=0 is outside 1..4");
    CHECK(ct_reshape_1d(ctx, a, -48) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ne[0]=-48 is negative");
    ct_tensor *qr = ct_reshape_1d(ctx, q, 128);
    CHECK(qr && strides_are(qr, 18, 72, 72, 72));
    CHECK(ct_reshape_2d(ctx, q, 16, 8) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ne[0]=16 is not a multiple of q4_0's block size 32");

    /* Permute errors. */
    CHECK(ct_permute(ctx, a, 0, 0, 1, 2) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_permute: axes (0, 0, 1, 2) are not a permutation of 0..3");
    CHECK(ct_permute(ctx, a, 0, 1, 2, 4) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "axes (0, 1, 2, 4)");
    CHECK(ct_permute(ctx, a, -1, 1, 2, 3) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "axes (-1, 1, 2, 3)");
    CHECK(ct_transpose(ctx, q) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_transpose: a type=q4_0 has block size 32 and cannot move dim 0");
    ct_tensor *qp = ct_permute(ctx, q, 0, 2, 1, 3);
    CHECK(qp && shape_is(qp, 64, 1, 2, 1) && strides_are(qp, 18, 72, 36, 72) && qp->op == CT_OP_PERMUTE);
    CHECK(qp && qp->op_params[0] == 0 && qp->op_params[1] == 2 && qp->op_params[2] == 1 && qp->op_params[3] == 3);
    ct_context_free(ctx);
}

/* After permute(ax), element i of the result is source element j with j[k] = i[ax[k]]:
 * checked on the bytes each addresses and on random values. */
static void test_permute_numeric(void) {
    ct_context *ctx = new_ctx(1 << 20, false);
    const int64_t ne[4] = {2 + tu_rand_below(3), 1 + tu_rand_below(4), 3, 2 + tu_rand_below(2)};
    ct_tensor *a = ct_tensor_new(ctx, CT_TYPE_F32, 4, ne);
    tu_fill_uniform(a->data, (size_t)ct_nelements(a), -1.0f, 1.0f);
    /* Through a view too, so offsets are exercised: skip the first row of a copy. */
    ct_tensor *big = ct_tensor_new_4d(ctx, CT_TYPE_F32, ne[0], ne[1] + 1, ne[2], ne[3]);
    tu_fill_uniform(big->data, (size_t)ct_nelements(big), -1.0f, 1.0f);
    ct_tensor *sub = ct_view_4d(ctx, big, ne[0], ne[1], ne[2], ne[3], big->nb[1], big->nb[2], big->nb[3], big->nb[1]);
    CHECK(sub != NULL);
    ct_tensor *srcs[2] = {a, sub};
    int n_perm = 0;
    for (int p = 0; p < 256; p++) {
        int ax[4] = {p & 3, (p >> 2) & 3, (p >> 4) & 3, (p >> 6) & 3};
        if (ax[0] == ax[1] || ax[0] == ax[2] || ax[0] == ax[3] || ax[1] == ax[2] || ax[1] == ax[3] ||
            ax[2] == ax[3]) {
            continue;
        }
        n_perm++;
        for (int s = 0; s < 2; s++) {
            ct_tensor *x = srcs[s];
            ct_tensor *t = ct_permute(ctx, x, ax[0], ax[1], ax[2], ax[3]);
            CHECK(t != NULL);
            if (!t) continue;
            CHECK(t->view_src == (x->view_src ? x->view_src : x) && t->view_offs == x->view_offs);
            CHECK(ct_nelements(t) == ct_nelements(x) && ct_nbytes(t) == ct_nbytes(x));
            int bad = 0;
            int64_t i[4], j[4];
            for (i[3] = 0; i[3] < t->ne[3]; i[3]++)
                for (i[2] = 0; i[2] < t->ne[2]; i[2]++)
                    for (i[1] = 0; i[1] < t->ne[1]; i[1]++)
                        for (i[0] = 0; i[0] < t->ne[0]; i[0]++) {
                            for (int k = 0; k < 4; k++) j[k] = i[ax[k]];
                            const uint8_t *pt = (const uint8_t *)t->data, *px = (const uint8_t *)x->data;
                            for (int k = 0; k < 4; k++) {
                                pt += (size_t)i[k] * t->nb[k];
                                px += (size_t)j[k] * x->nb[k];
                            }
                            float ft, fx;
                            memcpy(&ft, pt, 4);
                            memcpy(&fx, px, 4);
                            bad += pt != px || !tu_same_f32(ft, fx);
                        }
            CHECK_MSG(bad == 0, "permute(%d,%d,%d,%d) src %d: %d mismatches", ax[0], ax[1], ax[2], ax[3], s, bad);
        }
    }
    CHECK(n_perm == 24);

    /* transpose == permute(1,0,2,3), and transposing twice restores the layout. */
    ct_tensor *t1 = ct_transpose(ctx, a);
    ct_tensor *p1 = ct_permute(ctx, a, 1, 0, 2, 3);
    CHECK(t1 && p1 && ct_are_same_shape(t1, p1) && memcmp(t1->nb, p1->nb, sizeof t1->nb) == 0);
    CHECK(t1 && t1->op == CT_OP_TRANSPOSE && t1->src[0] == a && p1->op == CT_OP_PERMUTE);
    ct_tensor *t2 = ct_transpose(ctx, t1);
    CHECK(t2 && ct_are_same_shape(t2, a) && memcmp(t2->nb, a->nb, sizeof a->nb) == 0 && t2->view_src == a);
    ct_context_free(ctx);
}

static void test_op_names_and_params(void) {
    CHECK(strcmp(ct_op_name(CT_OP_NONE), "NONE") == 0);
    CHECK(strcmp(ct_op_name(CT_OP_GET_ROWS), "GET_ROWS") == 0);
    CHECK(strcmp(ct_op_name(CT_OP_SET_ROWS), "SET_ROWS") == 0);
    CHECK(strcmp(ct_op_name(CT_OP_TRANSPOSE), "TRANSPOSE") == 0);
    CHECK(strcmp(ct_op_name(CT_OP_COUNT), "INVALID") == 0);
    CHECK(strcmp(ct_op_name((ct_op)-3), "INVALID") == 0);
    for (int op = 0; op < CT_OP_COUNT; op++) {
        CHECK(strcmp(ct_op_name((ct_op)op), "INVALID") != 0);
        for (int k = 0; k < op; k++) CHECK(strcmp(ct_op_name((ct_op)op), ct_op_name((ct_op)k)) != 0);
    }
    /* the ops that compute nothing, written out independently of CT_OP_LIST */
    int n_views = 0;
    for (int op = 0; op < CT_OP_COUNT; op++) n_views += ct_op_is_view((ct_op)op);
    CHECK(n_views == 5);
    CHECK(ct_op_is_view(CT_OP_NONE) && ct_op_is_view(CT_OP_VIEW) && ct_op_is_view(CT_OP_RESHAPE) &&
          ct_op_is_view(CT_OP_PERMUTE) && ct_op_is_view(CT_OP_TRANSPOSE));
    CHECK(!ct_op_is_view(CT_OP_CPY) && !ct_op_is_view(CT_OP_MUL_MAT));
    CHECK(!ct_op_is_view(CT_OP_COUNT) && !ct_op_is_view((ct_op)-3));
    ct_context *ctx = new_ctx(1 << 14, true);
    ct_tensor *a = ct_tensor_new_1d(ctx, CT_TYPE_F32, 8);
    ct_tensor *g = ct_group_norm(ctx, a, 3, 1e-5f);
    CHECK(ct_op_param_i32(g, 0) == 3 && ct_op_param_f32(g, 1) == 1e-5f);
    CHECK(ct_op_param_i32(g, 16) == 0);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_op_param_i32:");
    CHECK(ct_op_param_f32(g, -1) == 0.0f);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_op_param_f32:");
    CHECK(ct_op_param_f32(NULL, 0) == 0.0f);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "t is NULL");
    ct_context_free(ctx);
}

int main(void) {
    tu_init("test_tensor");
    test_creation();
    test_creation_errors();
    test_arena();
    test_alloc_failure();
    test_no_alloc();
    test_iteration_and_names();
    test_predicates();
    test_views();
    test_permute_numeric();
    test_op_names_and_params();
    return tu_finish();
}

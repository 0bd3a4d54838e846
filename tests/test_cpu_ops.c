/* The CPU backend's memory-bound op families (GET_ROWS, SET_ROWS, CPY/DUP/CONT,
 * the norms, SUM_ROWS/MEAN), driven directly on a thread pool of 1, 2 and 3
 * threads, against naive loops over logical indices that convert through
 * ct_dequantize_row / ct_quantize_row one block or element at a time. */
#include "testutil.h"
#include "cpu/cpu_ops.h"
#include "cpu/threadpool.h"
#include "types/types_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NTH 3

static ct_cpu_threadpool *pools[MAX_NTH + 1];

typedef void (*op_fn)(const ct_cpu_params *, ct_tensor *);

typedef struct job_arg {
    op_fn fn;
    ct_tensor *dst;
    int nth;
} job_arg;

static void job(ct_cpu_threadpool *pool, int ith, void *arg) {
    const job_arg *j = arg;
    const ct_cpu_params p = {ith, j->nth, NULL, 0, pool};
    j->fn(&p, j->dst);
}

/* Runs fn on nth threads; the node's status, and its message in *msg. */
static ct_status run_op(op_fn fn, ct_tensor *dst, int nth, const char **msg) {
    job_arg j = {fn, dst, nth};
    ct_cpu_threadpool_run(pools[nth], job, &j);
    const char *m = "";
    ct_status st = CT_OK;
    ct_cpu_threadpool_error(pools[nth], &st, &m);
    if (msg) *msg = m;
    return st;
}

static ct_context *new_ctx_bytes(size_t bytes) {
    ct_context_params p = {bytes, NULL, false};
    ct_context *c = ct_context_new(p);
    CHECK(c != NULL);
    return c;
}

static ct_context *new_ctx(void) { return new_ctx_bytes(32u << 20); }

/* ---- memory of a tensor's root, and a twin of the tensor over a saved copy --- */

static ct_tensor *root_of(const ct_tensor *t) { return t->view_src ? t->view_src : (ct_tensor *)t; }

typedef struct twin {
    ct_tensor view;   /* t's shape and strides over `bytes` */
    unsigned char *bytes;
    size_t size;
} twin;

static void twin_make(twin *tw, const ct_tensor *t) {
    const ct_tensor *root = root_of(t);
    tw->size = ct_nbytes(root);
    tw->bytes = malloc(tw->size ? tw->size : 1);
    memcpy(tw->bytes, root->data, tw->size);
    tw->view = *t;
    tw->view.data = tw->bytes + ((const char *)t->data - (const char *)root->data);
}

static void twin_free(twin *tw) { free(tw->bytes); }

static bool root_equals(const ct_tensor *t, const void *bytes) {
    const ct_tensor *root = root_of(t);
    return memcmp(root->data, bytes, ct_nbytes(root)) == 0;
}

static void root_restore(ct_tensor *t, const void *bytes) {
    ct_tensor *root = root_of(t);
    memcpy(root->data, bytes, ct_nbytes(root));
}

/* ---- data ---------------------------------------------------------------- */

static bool is_float(ct_type t) { return t == CT_TYPE_F32 || t == CT_TYPE_F16 || t == CT_TYPE_BF16; }

/* Special float values every float source gets a few of. */
static const uint32_t specials[] = {
    0x7FC01234u, 0x7F800001u, 0xFFC00000u, 0x7F800000u, 0xFF800000u, 0x80000000u, 0x00000001u,
    0x00800000u, 0x477FF000u, 0x477FEFFFu, 0x33800000u, 0x387FC000u, 0x3F808000u, 0x3F818000u,
};

/* Fills a contiguous root with valid data of its type: random floats (and, with
 * special, the values above), quantized random floats, or random bytes. */
static void fill_root(ct_tensor *t, bool special) {
    const int64_t n = ct_nelements(t);
    const ct_type type = t->type;
    if (ct_type_can_quantize(type)) {
        float *f = malloc((size_t)(n ? n : 1) * sizeof(float));
        for (int64_t i = 0; i < n; i++) f[i] = tu_rand_normal() * 2.0f;
        if (special && is_float(type) && n > 0)
            for (size_t k = 0; k < CT_ARRAY_LEN(specials); k++) f[tu_rand_below(n)] = tu_bits_f32(specials[k]);
        CHECK(ct_quantize_row(type, f, t->data, n) == CT_OK);
        if (special && (type == CT_TYPE_F16 || type == CT_TYPE_BF16) && n > 0) {
            /* NaN payloads and subnormals only a half can hold. */
            const uint16_t h[] = {0x7C01, 0xFE01, 0x0001, 0x8001, 0x7F81, 0xFFFF};
            for (size_t k = 0; k < CT_ARRAY_LEN(h); k++) ((uint16_t *)t->data)[tu_rand_below(n)] = h[k];
        }
        free(f);
    } else {
        tu_fill_bytes(t->data, ct_nbytes(t));
    }
}

/* Address of element (i0, ...) (its block for block types). */
static char *elem(const ct_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (char *)t->data + (size_t)(i0 / ct_type_block_size(t->type)) * t->nb[0] + (size_t)i1 * t->nb[1] +
           (size_t)i2 * t->nb[2] + (size_t)i3 * t->nb[3];
}

static void ref_read_row(const ct_tensor *t, int64_t i1, int64_t i2, int64_t i3, float *out) {
    const int64_t blck = ct_type_block_size(t->type);
    for (int64_t i0 = 0; i0 < t->ne[0]; i0 += blck)
        if (ct_dequantize_row(t->type, elem(t, i0, i1, i2, i3), out + i0, blck) != CT_OK) CHECK(false);
}

static void ref_write_row(const ct_tensor *t, int64_t i1, int64_t i2, int64_t i3, const float *in) {
    const int64_t blck = ct_type_block_size(t->type);
    for (int64_t i0 = 0; i0 < t->ne[0]; i0 += blck)
        if (ct_quantize_row(t->type, in + i0, elem(t, i0, i1, i2, i3), blck) != CT_OK) CHECK(false);
}

static void coords(const ct_tensor *t, int64_t k, int64_t i[4]) {
    i[0] = k % t->ne[0];
    k /= t->ne[0];
    i[1] = k % t->ne[1];
    k /= t->ne[1];
    i[2] = k % t->ne[2];
    i[3] = k / t->ne[2];
}

/* Runs fn on 1..MAX_NTH threads from the same starting bytes; each result must equal
 * the twin's bytes (the expected result over a copy of dst's root). */
static void check_runs(const char *what, op_fn fn, ct_tensor *dst, const twin *expect, const void *initial) {
    for (int nth = 1; nth <= MAX_NTH; nth++) {
        root_restore(dst, initial);
        const char *msg;
        const ct_status st = run_op(fn, dst, nth, &msg);
        CHECK_MSG(st == CT_OK, "%s nth=%d: %s", what, nth, msg);
        CHECK_MSG(root_equals(dst, expect->bytes), "%s nth=%d: bytes differ from the reference", what, nth);
    }
}

/* ---- GET_ROWS ------------------------------------------------------------- */

static const ct_type deq_types[] = {
    CT_TYPE_F32,  CT_TYPE_F16,  CT_TYPE_BF16, CT_TYPE_Q4_0, CT_TYPE_Q4_1, CT_TYPE_Q5_0,   CT_TYPE_Q5_1, CT_TYPE_Q8_0,
    CT_TYPE_Q2_K, CT_TYPE_Q3_K, CT_TYPE_Q4_K, CT_TYPE_Q5_K, CT_TYPE_Q6_K, CT_TYPE_IQ4_NL, CT_TYPE_IQ4_XS, CT_TYPE_Q8_K,
};

enum { LAYOUT_PLAIN, LAYOUT_STRIDED_ROWS, LAYOUT_PERMUTED, LAYOUT_TRANSPOSED };

/* A [ne0, ne1, ne2, ne3] tensor of type laid out as asked, filled. */
static ct_tensor *make_src(ct_context *c, ct_type type, const int64_t ne[4], int layout, bool special) {
    const int64_t blck = ct_type_block_size(type);
    ct_tensor *root, *t = NULL;
    switch (layout) {
    case LAYOUT_STRIDED_ROWS:
        root = ct_tensor_new_4d(c, type, ne[0] + 2 * blck, ne[1], ne[2], ne[3]);
        CHECK(root != NULL);
        fill_root(root, special);
        t = ct_view_4d(c, root, ne[0], ne[1], ne[2], ne[3], root->nb[1], root->nb[2], root->nb[3], root->nb[0]);
        break;
    case LAYOUT_PERMUTED:
        root = ct_tensor_new_4d(c, type, ne[0], ne[2], ne[1], ne[3]);
        CHECK(root != NULL);
        fill_root(root, special);
        t = ct_permute(c, root, 0, 2, 1, 3);
        break;
    case LAYOUT_TRANSPOSED:
        root = ct_tensor_new_4d(c, type, ne[1], ne[0], ne[2], ne[3]);
        CHECK(root != NULL);
        fill_root(root, special);
        t = ct_transpose(c, root);
        break;
    default:
        t = ct_tensor_new_4d(c, type, ne[0], ne[1], ne[2], ne[3]);
        CHECK(t != NULL);
        fill_root(t, special);
        break;
    }
    CHECK(t != NULL && t->ne[0] == ne[0] && t->ne[1] == ne[1] && t->ne[2] == ne[2] && t->ne[3] == ne[3]);
    return t;
}

static void ref_get_rows(const ct_tensor *dst, const ct_tensor *a, const ct_tensor *b) {
    float *row = malloc((size_t)(a->ne[0] ? a->ne[0] : 1) * sizeof(float));
    for (int64_t i12 = 0; i12 < b->ne[2]; i12++)
        for (int64_t i11 = 0; i11 < b->ne[1]; i11++)
            for (int64_t i10 = 0; i10 < b->ne[0]; i10++) {
                int32_t r;
                memcpy(&r, elem(b, i10, i11, i12, 0), sizeof r);
                if (a->type == CT_TYPE_I32) {
                    for (int64_t i0 = 0; i0 < a->ne[0]; i0++)
                        memcpy(elem(dst, i0, i10, i11, i12), elem(a, i0, r, i11, i12), 4);
                } else {
                    ref_read_row(a, r, i11, i12, row);
                    ref_write_row(dst, i10, i11, i12, row);
                }
            }
    free(row);
}

static void set_i32(const ct_tensor *t, int64_t i0, int64_t i1, int64_t i2, int32_t v) {
    memcpy(elem(t, i0, i1, i2, 0), &v, sizeof v);
}

/* One GET_ROWS case: a [ne00, ne01, ne02, ne03] laid out as asked, indices
 * [ne10, ne02, ne03] plain or transposed (strided along dim 0). */
static void get_rows_case(ct_type type, int64_t ne00, int64_t ne01, int64_t ne02, int64_t ne03, int64_t ne10,
                          int layout, bool idx_transposed) {
    ct_context *c = new_ctx_bytes((size_t)(ne00 * ne10 * ne02 * ne03) * sizeof(float) + (32u << 20));
    const int64_t ne[4] = {ne00, ne01, ne02, ne03};
    ct_tensor *a = make_src(c, type, ne, layout, true);
    ct_tensor *b;
    if (idx_transposed) {
        ct_tensor *br = ct_tensor_new_3d(c, CT_TYPE_I32, ne02, ne10, ne03);
        b = ct_transpose(c, br);
    } else {
        b = ct_tensor_new_3d(c, CT_TYPE_I32, ne10, ne02, ne03);
    }
    CHECK(b != NULL);
    for (int64_t i2 = 0; i2 < ne03; i2++)
        for (int64_t i1 = 0; i1 < ne02; i1++)
            for (int64_t i0 = 0; i0 < ne10; i0++) set_i32(b, i0, i1, i2, (int32_t)tu_rand_below(ne01));
    ct_tensor *dst = ct_get_rows(c, a, b);
    CHECK(dst != NULL);
    if (!dst) {
        ct_context_free(c);
        return;
    }
    CHECK(ct_cpu_get_rows_supported(dst));
    tu_fill_bytes(dst->data, ct_nbytes(dst));
    twin expect, initial;
    twin_make(&initial, dst);
    twin_make(&expect, dst);
    ref_get_rows(&expect.view, a, b);
    char what[128];
    snprintf(what, sizeof what, "get_rows %s [%lld,%lld,%lld,%lld] rows %lld layout %d idxT %d", ct_type_name(type),
             (long long)ne00, (long long)ne01, (long long)ne02, (long long)ne03, (long long)ne10, layout,
             (int)idx_transposed);
    check_runs(what, ct_cpu_get_rows, dst, &expect, initial.bytes);

    /* Out-of-range indices: the status names the index, and dst is untouched. */
    const int32_t bad[] = {-1, (int32_t)ne01, INT32_MAX, INT32_MIN};
    for (size_t k = 0; k < CT_ARRAY_LEN(bad); k++) {
        const int64_t i0 = tu_rand_below(ne10), i1 = tu_rand_below(ne02), i2 = tu_rand_below(ne03);
        int32_t keep;
        memcpy(&keep, elem(b, i0, i1, i2, 0), sizeof keep);
        set_i32(b, i0, i1, i2, bad[k]);
        char want[96];
        snprintf(want, sizeof want, "[%lld, %lld, %lld] = %d is outside [0, %lld)", (long long)i0, (long long)i1,
                 (long long)i2, (int)bad[k], (long long)ne01);
        for (int nth = 1; nth <= MAX_NTH; nth++) {
            root_restore(dst, initial.bytes);
            const char *msg;
            CHECK_MSG(run_op(ct_cpu_get_rows, dst, nth, &msg) == CT_INDEX_OUT_OF_RANGE, "%s bad %d", what,
                      (int)bad[k]);
            CHECK_MSG(strstr(msg, "GET_ROWS") && strstr(msg, want), "%s: message \"%s\" lacks \"%s\"", what, msg,
                      want);
            CHECK_MSG(root_equals(dst, initial.bytes), "%s: dst written despite bad index %d", what, (int)bad[k]);
        }
        set_i32(b, i0, i1, i2, keep);
    }
    twin_free(&expect);
    twin_free(&initial);
    ct_context_free(c);
}

static void test_get_rows(void) {
    for (size_t k = 0; k < CT_ARRAY_LEN(deq_types); k++) {
        const ct_type t = deq_types[k];
        const int64_t blck = ct_type_block_size(t);
        get_rows_case(t, blck, 5, 1, 1, 4, LAYOUT_PLAIN, false);
        get_rows_case(t, 2 * blck, 7, 3, 2, 9, LAYOUT_STRIDED_ROWS, true);
        get_rows_case(t, blck, 4, 3, 2, 5, LAYOUT_PERMUTED, false);
        if (blck == 1) {
            get_rows_case(t, 1, 3, 2, 1, 7, LAYOUT_PLAIN, true);
            get_rows_case(t, 31, 6, 2, 2, 3, LAYOUT_TRANSPOSED, false);
            get_rows_case(t, 33, 2, 1, 3, 8, LAYOUT_STRIDED_ROWS, false);
            get_rows_case(t, 1100, 3, 1, 1, 2, LAYOUT_TRANSPOSED, true); /* more than one scratch chunk */
        }
    }
    /* Outputs past 32 MiB: block rows dequantize through non-temporal stores (q4_0: a last step of 32) */
    get_rows_case(CT_TYPE_Q4_0, 4128, 64, 1, 1, 2050, LAYOUT_PLAIN, false);
    get_rows_case(CT_TYPE_Q6_K, 4352, 64, 1, 1, 1930, LAYOUT_PLAIN, false);
    /* ... and so do float rows there (4130: every other row unaligned, a last step of 34) */
    get_rows_case(CT_TYPE_F16, 4130, 64, 1, 1, 2050, LAYOUT_PLAIN, false);
    get_rows_case(CT_TYPE_F32, 4130, 64, 1, 1, 2050, LAYOUT_PLAIN, false);
    get_rows_case(CT_TYPE_BF16, 4096, 64, 1, 1, 2050, LAYOUT_PLAIN, false);
    get_rows_case(CT_TYPE_I32, 256, 5, 7, 1, 4, LAYOUT_PLAIN, false);
    get_rows_case(CT_TYPE_I32, 33, 5, 2, 3, 4, LAYOUT_TRANSPOSED, true);
    get_rows_case(CT_TYPE_I32, 1, 1, 1, 1, 1, LAYOUT_PLAIN, false);

    /* Pool-less call: the error goes to this thread's ct_last_error. */
    ct_context *c = new_ctx();
    ct_tensor *a = ct_tensor_new_2d(c, CT_TYPE_F32, 4, 3);
    ct_tensor *b = ct_tensor_set_name(ct_tensor_new_1d(c, CT_TYPE_I32, 2), "ids");
    fill_root(a, false);
    ((int32_t *)b->data)[0] = 1;
    ((int32_t *)b->data)[1] = 3;
    ct_tensor *dst = ct_tensor_set_name(ct_get_rows(c, a, b), "out");
    memset(dst->data, 0x5A, ct_nbytes(dst));
    static const ct_cpu_params solo = {0, 1, NULL, 0, NULL};
    ct_clear_error();
    ct_cpu_get_rows(&solo, dst);
    CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, "GET_ROWS 'out': index ids[1, 0, 0] = 3 is outside [0, 3)");
    CHECK(((unsigned char *)dst->data)[0] == 0x5A && ((unsigned char *)dst->data)[31] == 0x5A);

    /* Exact support: what the kernels compute, nothing else. */
    CHECK(ct_cpu_get_rows_supported(dst));
    dst->type = CT_TYPE_F16;
    CHECK(!ct_cpu_get_rows_supported(dst));
    dst->type = CT_TYPE_F32;
    const ct_type refused[] = {CT_TYPE_IQ2_XXS, CT_TYPE_I16, CT_TYPE_I8, CT_TYPE_F64, CT_TYPE_TQ1_0, CT_TYPE_I64};
    for (size_t k = 0; k < CT_ARRAY_LEN(refused); k++) {
        ct_tensor *q = ct_tensor_new_2d(c, refused[k], ct_type_block_size(refused[k]), 3);
        ct_tensor *g = ct_get_rows(c, q, b);
        CHECK_MSG(g == NULL || !ct_cpu_get_rows_supported(g), "get_rows of %s accepted", ct_type_name(refused[k]));
    }
    ct_tensor *b64 = ct_tensor_new_1d(c, CT_TYPE_I64, 2);
    dst->src[1] = b64;
    CHECK(!ct_cpu_get_rows_supported(dst));
    dst->src[1] = b;
    dst->op = CT_OP_CPY;
    CHECK(!ct_cpu_get_rows_supported(dst));
    ct_context_free(c);
}

/* ---- SET_ROWS ------------------------------------------------------------- */

static const ct_type quant_types[] = {
    CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_BF16, CT_TYPE_Q8_0, CT_TYPE_Q4_0, CT_TYPE_Q4_1, CT_TYPE_Q5_0, CT_TYPE_Q5_1,
    CT_TYPE_IQ4_NL,
};

static int64_t get_index(const ct_tensor *c, int64_t i0, int64_t i1, int64_t i2) {
    if (c->type == CT_TYPE_I32) {
        int32_t v;
        memcpy(&v, elem(c, i0, i1, i2, 0), sizeof v);
        return v;
    }
    int64_t v;
    memcpy(&v, elem(c, i0, i1, i2, 0), sizeof v);
    return v;
}

static void put_index(const ct_tensor *c, int64_t i0, int64_t i1, int64_t i2, int64_t v) {
    if (c->type == CT_TYPE_I32) {
        const int32_t w = (int32_t)v;
        memcpy(elem(c, i0, i1, i2, 0), &w, sizeof w);
    } else {
        memcpy(elem(c, i0, i1, i2, 0), &v, sizeof v);
    }
}

/* In source order, so that of duplicate indices the last source row wins. */
static void ref_set_rows(const ct_tensor *dst, const ct_tensor *b, const ct_tensor *c) {
    float *row = malloc((size_t)(b->ne[0] ? b->ne[0] : 1) * sizeof(float));
    for (int64_t i03 = 0; i03 < b->ne[3]; i03++)
        for (int64_t i02 = 0; i02 < b->ne[2]; i02++)
            for (int64_t i = 0; i < b->ne[1]; i++) {
                const int64_t r = get_index(c, i, i02 % c->ne[1], i03 % c->ne[2]);
                ref_read_row(b, i, i02, i03, row);
                ref_write_row(dst, r, i02, i03, row);
            }
    free(row);
}

enum { IDX_UNIQUE, IDX_DUPS, IDX_SAME };

/* dst [ne0, ne1, ne2, ne3]; src [ne0, n_rows, ne2, ne3]; indices [n_rows, ne11, ne12]. */
static void set_rows_case(ct_type dtype, ct_type stype, ct_type itype, int64_t ne0, int64_t ne1, int64_t ne2,
                          int64_t ne3, int64_t n_rows, int64_t ne11, int64_t ne12, int src_layout, int idx_mode) {
    ct_context *c = new_ctx_bytes((size_t)(ne0 * (ne1 + n_rows) * ne2 * ne3) * 16 + (32u << 20));
    ct_tensor *a = ct_tensor_set_name(ct_tensor_new_4d(c, dtype, ne0, ne1, ne2, ne3), "cache");
    CHECK(a != NULL);
    tu_fill_bytes(a->data, ct_nbytes(a)); /* untouched rows keep these bytes */
    const int64_t ne[4] = {ne0, n_rows, ne2, ne3};
    ct_tensor *b = make_src(c, stype, ne, src_layout == LAYOUT_TRANSPOSED ? LAYOUT_PLAIN : src_layout, true);
    ct_tensor *idx = ct_tensor_new_3d(c, itype, n_rows, ne11, ne12);
    CHECK(idx != NULL);
    for (int64_t i2 = 0; i2 < ne12; i2++)
        for (int64_t i1 = 0; i1 < ne11; i1++) {
            /* A random permutation of the rows, truncated: unique targets. */
            int64_t *perm = malloc((size_t)ne1 * sizeof *perm);
            for (int64_t k = 0; k < ne1; k++) perm[k] = k;
            for (int64_t k = ne1 - 1; k > 0; k--) {
                const int64_t j = tu_rand_below(k + 1), t = perm[k];
                perm[k] = perm[j];
                perm[j] = t;
            }
            for (int64_t i0 = 0; i0 < n_rows; i0++) {
                int64_t v = idx_mode == IDX_UNIQUE ? perm[i0 % ne1] : tu_rand_below(ne1);
                if (idx_mode == IDX_SAME) v = perm[0];
                put_index(idx, i0, i1, i2, v);
            }
            free(perm);
        }
    ct_tensor *dst = ct_set_rows(c, a, b, idx);
    CHECK(dst != NULL);
    if (!dst) {
        ct_context_free(c);
        return;
    }
    if (src_layout == LAYOUT_TRANSPOSED) {
        /* Not what the constructor builds, but what the kernel accepts: a source strided along dim 0. */
        ct_tensor *br = ct_tensor_new_4d(c, stype, n_rows, ne0, ne2, ne3);
        fill_root(br, true);
        dst->src[0] = b = ct_transpose(c, br);
    }
    CHECK(ct_cpu_set_rows_supported(dst));
    twin expect, initial;
    twin_make(&initial, dst);
    twin_make(&expect, dst);
    ref_set_rows(&expect.view, b, idx);
    char what[160];
    snprintf(what, sizeof what, "set_rows %s<-%s idx %s [%lld,%lld,%lld,%lld] rows %lld bcast %lld,%lld layout %d mode %d",
             ct_type_name(dtype), ct_type_name(stype), ct_type_name(itype), (long long)ne0, (long long)ne1,
             (long long)ne2, (long long)ne3, (long long)n_rows, (long long)ne11, (long long)ne12, src_layout, idx_mode);
    check_runs(what, ct_cpu_set_rows, dst, &expect, initial.bytes);

    if (n_rows > 0 && ne2 > 0 && ne3 > 0) {
        const int64_t bad[] = {-1, ne1, itype == CT_TYPE_I32 ? INT32_MAX : INT64_MAX,
                               itype == CT_TYPE_I32 ? INT32_MIN : INT64_MIN};
        for (size_t k = 0; k < CT_ARRAY_LEN(bad); k++) {
            const int64_t i0 = tu_rand_below(n_rows), i1 = tu_rand_below(ne11), i2 = tu_rand_below(ne12);
            const int64_t keep = get_index(idx, i0, i1, i2);
            put_index(idx, i0, i1, i2, bad[k]);
            char want[128];
            snprintf(want, sizeof want, "SET_ROWS 'cache (view)': index src1[%lld, %lld, %lld] = %lld is outside [0, %lld)",
                     (long long)i0, (long long)i1, (long long)i2, (long long)bad[k], (long long)ne1);
            for (int nth = 1; nth <= MAX_NTH; nth++) {
                root_restore(dst, initial.bytes);
                const char *msg;
                CHECK_MSG(run_op(ct_cpu_set_rows, dst, nth, &msg) == CT_INDEX_OUT_OF_RANGE, "%s bad %lld", what,
                          (long long)bad[k]);
                CHECK_MSG(strstr(msg, want) != NULL, "%s: message \"%s\" lacks \"%s\"", what, msg, want);
                CHECK_MSG(root_equals(dst, initial.bytes), "%s: dst written despite bad index", what);
            }
            put_index(idx, i0, i1, i2, keep);
        }
    }
    twin_free(&expect);
    twin_free(&initial);
    ct_context_free(c);
}

static void test_set_rows(void) {
    for (size_t k = 0; k < CT_ARRAY_LEN(quant_types); k++) {
        const ct_type t = quant_types[k];
        const int64_t blck = ct_type_block_size(t);
        for (int s = 0; s < 2; s++) {
            const ct_type st = s ? CT_TYPE_F16 : CT_TYPE_F32;
            const ct_type it = (k + (size_t)s) % 2 ? CT_TYPE_I32 : CT_TYPE_I64;
            set_rows_case(t, st, it, 256, 5, 2, 3, 1, 2, 3, LAYOUT_PLAIN, IDX_UNIQUE);
            set_rows_case(t, st, it, 256, 11, 2, 3, 7, 1, 3, LAYOUT_STRIDED_ROWS, IDX_UNIQUE);
            set_rows_case(t, st, it, 3 * blck, 3, 4, 3, 2, 2, 1, LAYOUT_PERMUTED, IDX_UNIQUE);
            set_rows_case(t, st, it, blck, 6, 2, 2, 9, 2, 2, LAYOUT_PLAIN, IDX_DUPS);
            set_rows_case(t, st, it, 2 * blck, 4, 3, 1, 8, 3, 1, LAYOUT_TRANSPOSED, IDX_SAME);
            set_rows_case(t, st, it, 1280 * blck / (blck > 1 ? 32 : 1), 3, 1, 1, 2, 1, 1, LAYOUT_TRANSPOSED, IDX_DUPS);
            if (blck == 1) {
                set_rows_case(t, st, it, 31, 3, 2, 1, 2, 1, 1, LAYOUT_PLAIN, IDX_UNIQUE);
                set_rows_case(t, st, it, 33, 5, 1, 2, 1, 1, 2, LAYOUT_STRIDED_ROWS, IDX_UNIQUE);
                set_rows_case(t, st, it, 1, 40, 2, 1, 100, 2, 1, LAYOUT_PLAIN, IDX_DUPS);
                set_rows_case(t, st, it, 1, 64, 1, 1, 64, 1, 1, LAYOUT_PLAIN, IDX_UNIQUE);
            }
        }
    }
    /* F32 rows into an F32 destination past 32 MiB are streamed (4100: every other row unaligned). */
    set_rows_case(CT_TYPE_F32, CT_TYPE_F32, CT_TYPE_I32, 4100, 2100, 1, 1, 1500, 1, 1, LAYOUT_PLAIN, IDX_DUPS);
    set_rows_case(CT_TYPE_F32, CT_TYPE_F32, CT_TYPE_I64, 4096, 2100, 1, 1, 1500, 1, 1, LAYOUT_PLAIN, IDX_UNIQUE);
    /* An empty source writes nothing. */
    set_rows_case(CT_TYPE_Q8_0, CT_TYPE_F32, CT_TYPE_I64, 32, 4, 2, 1, 0, 1, 1, LAYOUT_PLAIN, IDX_UNIQUE);

    /* The documented rule, spelled out: of duplicate indices the last source row wins, on any thread count. */
    for (int nth = 1; nth <= MAX_NTH; nth++) {
        ct_context *c = new_ctx();
        ct_tensor *a = ct_tensor_new_2d(c, CT_TYPE_F32, 3, 4);
        ct_tensor *b = ct_tensor_new_2d(c, CT_TYPE_F32, 3, 5);
        ct_tensor *i = ct_tensor_new_1d(c, CT_TYPE_I32, 5);
        memset(a->data, 0, ct_nbytes(a));
        for (int k = 0; k < 15; k++) ((float *)b->data)[k] = (float)k;
        const int32_t rows[5] = {1, 3, 1, 0, 1};
        memcpy(i->data, rows, sizeof rows);
        ct_tensor *dst = ct_set_rows(c, a, b, i);
        CHECK(run_op(ct_cpu_set_rows, dst, nth, NULL) == CT_OK);
        const float *f = a->data;
        CHECK(f[3] == 12.0f && f[4] == 13.0f && f[5] == 14.0f); /* row 1 from source row 4 */
        CHECK(f[0] == 9.0f && f[9] == 3.0f && f[6] == 0.0f);
        ct_context_free(c);
    }

    ct_context *c = new_ctx();
    ct_tensor *a = ct_tensor_new_2d(c, CT_TYPE_F16, 32, 4);
    ct_tensor *b = ct_tensor_new_2d(c, CT_TYPE_F32, 32, 2);
    ct_tensor *i = ct_tensor_new_1d(c, CT_TYPE_I64, 2);
    ct_tensor *dst = ct_set_rows(c, a, b, i);
    CHECK(dst && ct_cpu_set_rows_supported(dst));
    const ct_type refused[] = {CT_TYPE_IQ3_S, CT_TYPE_Q8_1, CT_TYPE_IQ1_M, CT_TYPE_I32, CT_TYPE_IQ2_XXS, CT_TYPE_F64};
    for (size_t k = 0; k < CT_ARRAY_LEN(refused); k++) {
        const int64_t blck = ct_type_block_size(refused[k]);
        ct_tensor *q = ct_tensor_new_2d(c, refused[k], blck, 4);
        ct_tensor *qb = ct_tensor_new_2d(c, CT_TYPE_F32, blck, 2);
        ct_tensor *s = ct_set_rows(c, q, qb, i);
        CHECK_MSG(s == NULL || !ct_cpu_set_rows_supported(s), "set_rows into %s accepted", ct_type_name(refused[k]));
    }
    dst->src[0] = ct_tensor_new_2d(c, CT_TYPE_BF16, 32, 2);
    CHECK(!ct_cpu_set_rows_supported(dst));
    dst->src[0] = b;
    dst->src[1] = ct_tensor_new_1d(c, CT_TYPE_I16, 2);
    CHECK(!ct_cpu_set_rows_supported(dst));
    ct_context_free(c);
}

/* ---- CPY / DUP / CONT ------------------------------------------------------ */

/* Elements in the source's logical order, written in the destination's. */
static void ref_cpy(const ct_tensor *src, const ct_tensor *dst) {
    const int64_t n = ct_nelements(src);
    if (src->type == dst->type) {
        const int64_t blck = ct_type_block_size(src->type);
        for (int64_t k = 0; k < n; k += blck) {
            int64_t s[4], d[4];
            coords(src, k, s);
            coords(dst, k, d);
            memcpy(elem(dst, d[0], d[1], d[2], d[3]), elem(src, s[0], s[1], s[2], s[3]), ct_type_size(src->type));
        }
        return;
    }
    float *f = malloc((size_t)(n ? n : 1) * sizeof(float));
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < src->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < src->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < src->ne[1]; i1++, k += src->ne[0]) ref_read_row(src, i1, i2, i3, f + k);
    k = 0;
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++, k += dst->ne[0]) ref_write_row(dst, i1, i2, i3, f + k);
    free(f);
}

enum { OP_CPY, OP_DUP, OP_CONT, OP_CAST };

/* src [ne] laid out as src_layout; dst of shape dne (same count) laid out as dst_layout. */
static void cpy_case(ct_type st, ct_type dt, const int64_t ne[4], int src_layout, const int64_t dne[4],
                     int dst_layout, int kind) {
    ct_context *c = new_ctx_bytes((size_t)(ne[0] * ne[1] * ne[2] * ne[3]) * 24 + (32u << 20));
    ct_tensor *src = make_src(c, st, ne, src_layout, true);
    ct_tensor *dst = NULL;
    switch (kind) {
    case OP_DUP: dst = ct_dup(c, src); break;
    case OP_CONT: dst = ct_cont(c, src); break;
    case OP_CAST: dst = ct_cast(c, src, dt); break;
    default: {
        ct_tensor *b = make_src(c, dt, dne, dst_layout, false);
        dst = ct_cpy(c, src, b);
        break;
    }
    }
    char what[160];
    snprintf(what, sizeof what, "cpy(%d) %s [%lld,%lld,%lld,%lld] layout %d -> %s [%lld,%lld,%lld,%lld] layout %d",
             kind, ct_type_name(st), (long long)ne[0], (long long)ne[1], (long long)ne[2], (long long)ne[3],
             src_layout, ct_type_name(dt), (long long)dne[0], (long long)dne[1], (long long)dne[2], (long long)dne[3],
             dst_layout);
    CHECK_MSG(dst != NULL, "%s: %s", what, ct_last_error());
    if (!dst) {
        ct_context_free(c);
        return;
    }
    CHECK_MSG(ct_cpu_cpy_supported(dst), "%s: not supported", what);
    if (kind != OP_CPY) tu_fill_bytes(dst->data, ct_nbytes(dst));
    twin expect, initial;
    twin_make(&initial, dst);
    twin_make(&expect, dst);
    ref_cpy(src, &expect.view);
    check_runs(what, ct_cpu_cpy, dst, &expect, initial.bytes);
    twin_free(&expect);
    twin_free(&initial);
    ct_context_free(c);
}

static const ct_type all_types[] = {
    CT_TYPE_F32,    CT_TYPE_F16,    CT_TYPE_Q4_0,   CT_TYPE_Q4_1,  CT_TYPE_Q5_0,   CT_TYPE_Q5_1,  CT_TYPE_Q8_0,
    CT_TYPE_Q8_1,   CT_TYPE_Q2_K,   CT_TYPE_Q3_K,   CT_TYPE_Q4_K,  CT_TYPE_Q5_K,   CT_TYPE_Q6_K,  CT_TYPE_Q8_K,
    CT_TYPE_IQ2_XXS, CT_TYPE_IQ2_XS, CT_TYPE_IQ3_XXS, CT_TYPE_IQ1_S, CT_TYPE_IQ4_NL, CT_TYPE_IQ3_S, CT_TYPE_IQ2_S,
    CT_TYPE_IQ4_XS, CT_TYPE_I8,     CT_TYPE_I16,    CT_TYPE_I32,   CT_TYPE_I64,    CT_TYPE_F64,   CT_TYPE_IQ1_M,
    CT_TYPE_BF16,   CT_TYPE_TQ1_0,  CT_TYPE_TQ2_0,
};

static void test_cpy(void) {
    const ct_type floats[] = {CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_BF16};
    /* Same type, every type: contiguous (one memcpy), permuted, reshaped, into a permuted dst. */
    for (size_t k = 0; k < CT_ARRAY_LEN(all_types); k++) {
        const ct_type t = all_types[k];
        const int64_t b = ct_type_block_size(t);
        const int64_t ne[4] = {2 * b, 2, 3, 2}, flat[4] = {4 * b, 3, 2, 1}, perm[4] = {2 * b, 3, 2, 2};
        cpy_case(t, t, ne, LAYOUT_PLAIN, ne, LAYOUT_PLAIN, OP_CPY);
        cpy_case(t, t, ne, LAYOUT_PERMUTED, flat, LAYOUT_PLAIN, OP_CPY);
        cpy_case(t, t, ne, LAYOUT_STRIDED_ROWS, perm, LAYOUT_PERMUTED, OP_CPY);
        cpy_case(t, t, ne, LAYOUT_PERMUTED, ne, LAYOUT_STRIDED_ROWS, OP_DUP);
        cpy_case(t, t, ne, LAYOUT_PERMUTED, ne, LAYOUT_PLAIN, OP_CONT);
        if (b == 1) {
            const int64_t odd[4] = {33, 3, 2, 1}, odd2[4] = {11, 9, 2, 1}, one[4] = {1, 5, 1, 3}, one2[4] = {5, 1, 3, 1};
            cpy_case(t, t, odd, LAYOUT_TRANSPOSED, odd2, LAYOUT_TRANSPOSED, OP_CPY);
            cpy_case(t, t, one, LAYOUT_PLAIN, one2, LAYOUT_PERMUTED, OP_CPY);
        }
    }
    /* Between float types, and into every quantized type, strided either side. */
    for (size_t i = 0; i < CT_ARRAY_LEN(floats); i++) {
        for (size_t k = 0; k < CT_ARRAY_LEN(quant_types); k++) {
            const ct_type st = floats[i], dt = quant_types[k];
            const int64_t b = ct_type_block_size(dt);
            const int64_t ne[4] = {2 * b, 3, 2, 2}, flat[4] = {6 * b, 4, 1, 1}, perm[4] = {2 * b, 2, 3, 2};
            const int64_t big[4] = {40 * b, 3, 1, 1}, bigd[4] = {20 * b, 6, 1, 1};
            cpy_case(st, dt, ne, LAYOUT_PLAIN, ne, LAYOUT_PLAIN, OP_CPY);
            cpy_case(st, dt, ne, LAYOUT_PLAIN, ne, LAYOUT_PLAIN, OP_CAST);
            cpy_case(st, dt, ne, LAYOUT_PERMUTED, flat, LAYOUT_PLAIN, OP_CPY);
            cpy_case(st, dt, ne, LAYOUT_TRANSPOSED, perm, LAYOUT_PERMUTED, OP_CPY);
            cpy_case(st, dt, ne, LAYOUT_STRIDED_ROWS, ne, LAYOUT_STRIDED_ROWS, OP_CPY);
            cpy_case(st, dt, big, LAYOUT_PLAIN, bigd, LAYOUT_PLAIN, OP_CPY);
            cpy_case(st, dt, big, LAYOUT_TRANSPOSED, bigd, LAYOUT_STRIDED_ROWS, OP_CPY);
            if (b == 1) {
                const int64_t odd[4] = {31, 3, 1, 2}, odd2[4] = {3, 31, 2, 1}, one[4] = {1, 7, 3, 1};
                cpy_case(st, dt, odd, LAYOUT_TRANSPOSED, odd2, LAYOUT_TRANSPOSED, OP_CPY);
                cpy_case(st, dt, one, LAYOUT_PERMUTED, one, LAYOUT_STRIDED_ROWS, OP_CPY);
            }
        }
    }
    /* Out of every dequantizable type into the float types; a dst row may end inside a source block. */
    for (size_t k = 0; k < CT_ARRAY_LEN(deq_types); k++) {
        for (size_t i = 0; i < CT_ARRAY_LEN(floats); i++) {
            const ct_type st = deq_types[k], dt = floats[i];
            if (st == dt) continue;
            const int64_t b = ct_type_block_size(st);
            const int64_t ne[4] = {2 * b, 3, 2, 2}, half[4] = {b, 6, 2, 2}, odd[4] = {b == 1 ? 3 : b / 8 * 3, b == 1 ? 8 : 64, 1, 1};
            const int64_t big[4] = {8 * b, 2, 1, 1};
            cpy_case(st, dt, ne, LAYOUT_PLAIN, ne, LAYOUT_PLAIN, OP_CPY);
            cpy_case(st, dt, ne, LAYOUT_PERMUTED, half, LAYOUT_PERMUTED, OP_CPY);
            cpy_case(st, dt, ne, LAYOUT_STRIDED_ROWS, odd, LAYOUT_TRANSPOSED, OP_CPY);
            cpy_case(st, dt, big, LAYOUT_PLAIN, big, LAYOUT_STRIDED_ROWS, OP_CAST);
        }
    }

    /* Contiguous conversions into a destination past 32 MiB are streamed in steps of 256
     * elements: into and out of F32, between halves, out of and into blocks. */
    {
        const int64_t h[4] = {4100, 4100, 1, 1}, w[4] = {4100, 2100, 1, 1}, b[4] = {4096, 2100, 1, 1};
        const int64_t bh[4] = {4096, 4100, 1, 1}, q8[4] = {4096, 7712, 1, 1};
        cpy_case(CT_TYPE_F32, CT_TYPE_F16, h, LAYOUT_PLAIN, h, LAYOUT_PLAIN, OP_CPY);
        cpy_case(CT_TYPE_F16, CT_TYPE_F32, w, LAYOUT_PLAIN, w, LAYOUT_PLAIN, OP_CAST);
        cpy_case(CT_TYPE_Q4_0, CT_TYPE_F32, b, LAYOUT_PLAIN, b, LAYOUT_PLAIN, OP_CPY);
        cpy_case(CT_TYPE_F16, CT_TYPE_BF16, bh, LAYOUT_PLAIN, bh, LAYOUT_PLAIN, OP_CPY);
        cpy_case(CT_TYPE_Q4_0, CT_TYPE_F16, bh, LAYOUT_PLAIN, bh, LAYOUT_PLAIN, OP_CPY);
        cpy_case(CT_TYPE_F32, CT_TYPE_Q8_0, q8, LAYOUT_PLAIN, q8, LAYOUT_PLAIN, OP_CPY);
    }

    /* Bits: NaN payloads survive an F32 copy on every path; F16 NaN/inf/subnormal widen exactly. */
    {
        ct_context *c = new_ctx();
        ct_tensor *a = ct_tensor_new_2d(c, CT_TYPE_F32, 4, 2);
        const uint32_t bits[8] = {0x7F800001u, 0xFFC0BEEFu, 0x7F800000u, 0x00000001u,
                                  0x80000000u, 0x7FFFFFFFu, 0xFF800000u, 0x3F800000u};
        memcpy(a->data, bits, sizeof bits);
        ct_tensor *t = ct_cont(c, ct_transpose(c, a));
        ct_tensor *d = ct_dup(c, a);
        CHECK(run_op(ct_cpu_cpy, t, 2, NULL) == CT_OK && run_op(ct_cpu_cpy, d, 3, NULL) == CT_OK);
        const uint32_t *tb = t->data, *db = d->data;
        for (int i = 0; i < 8; i++) CHECK(db[i] == bits[i]);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 2; j++) CHECK(tb[i * 2 + j] == bits[j * 4 + i]);
        ct_tensor *h = ct_tensor_new_1d(c, CT_TYPE_F16, 4);
        const uint16_t hb[4] = {0x7C01, 0xFC00, 0x0001, 0x8000};
        memcpy(h->data, hb, sizeof hb);
        ct_tensor *w = ct_cast(c, h, CT_TYPE_F32);
        CHECK(run_op(ct_cpu_cpy, w, 1, NULL) == CT_OK);
        const uint32_t *wb = w->data;
        CHECK(wb[0] == 0x7FC02000u && wb[1] == 0xFF800000u && wb[2] == 0x33800000u && wb[3] == 0x80000000u);
        ct_context_free(c);
    }

    /* Overlapping contiguous views of one buffer (legal input): the bytes memmove gives, on any
     * thread count, whichever way the views overlap. */
    for (int nth = 1; nth <= MAX_NTH; nth++) {
        for (int shift = -37; shift <= 37; shift += 74) {
            ct_context *c = new_ctx();
            ct_tensor *buf = ct_tensor_new_1d(c, CT_TYPE_I8, 4096);
            uint8_t *bytes = buf->data, want[4096];
            for (int i = 0; i < 4096; i++) bytes[i] = (uint8_t)(i * 131 + 7);
            const size_t at = 1024, len = 2000;
            ct_tensor *src = ct_view_1d(c, buf, (int64_t)len, at);
            ct_tensor *dst = ct_view_1d(c, buf, (int64_t)len, (size_t)((int64_t)at + shift));
            ct_tensor *t = ct_cpy(c, src, dst);
            CHECK(t != NULL);
            memcpy(want, bytes, sizeof want);
            memmove(want + at + shift, want + at, len);
            CHECK(run_op(ct_cpu_cpy, t, nth, NULL) == CT_OK);
            CHECK_MSG(memcmp(bytes, want, sizeof want) == 0, "overlapping cpy, shift %d, %d threads", shift, nth);
            ct_context_free(c);
        }
    }

    /* A contiguous copy past CT_CPU_STREAM_MIN_BYTES (streamed in 64-byte lines of dst) between
     * views at odd offsets, on 1-3 threads: the source's bytes, and none outside dst. */
    {
        const size_t len = ((size_t)33 << 20) + 77, size = 2 * len + 256;
        ct_context *c = new_ctx_bytes(size + 4096);
        ct_tensor *buf = ct_tensor_new_1d(c, CT_TYPE_I8, (int64_t)size);
        uint8_t *bytes = buf->data;
        for (int nth = 1; nth <= MAX_NTH; nth++) {
            const size_t src_at = 3 + (size_t)nth, dst_at = len + 64 + 5 * (size_t)nth;
            for (size_t i = 0; i < size; i++) bytes[i] = (uint8_t)(i * 2654435761u >> 13);
            ct_tensor *t = ct_cpy(c, ct_view_1d(c, buf, (int64_t)len, src_at), ct_view_1d(c, buf, (int64_t)len, dst_at));
            CHECK(t != NULL && run_op(ct_cpu_cpy, t, nth, NULL) == CT_OK);
            bool same = memcmp(bytes + dst_at, bytes + src_at, len) == 0;
            for (size_t i = dst_at - 64; i < dst_at; i++) same = same && bytes[i] == (uint8_t)(i * 2654435761u >> 13);
            for (size_t i = dst_at + len; i < size; i++) same = same && bytes[i] == (uint8_t)(i * 2654435761u >> 13);
            CHECK_MSG(same, "streamed cpy of %zu bytes, %d threads", len, nth);
        }
        ct_context_free(c);
    }

    /* Exact support. */
    ct_context *c = new_ctx();
    struct { ct_type st, dt; int64_t ne0; bool ok; } pairs[] = {
        {CT_TYPE_Q4_0, CT_TYPE_Q8_0, 64, false}, {CT_TYPE_I32, CT_TYPE_F32, 8, false},
        {CT_TYPE_F32, CT_TYPE_I32, 8, false},    {CT_TYPE_F32, CT_TYPE_Q2_K, 256, true}, 
        {CT_TYPE_F64, CT_TYPE_F32, 8, false},    {CT_TYPE_IQ2_XXS, CT_TYPE_F32, 256, false},
        {CT_TYPE_I8, CT_TYPE_I16, 8, false},     {CT_TYPE_Q6_K, CT_TYPE_BF16, 256, true},
        {CT_TYPE_BF16, CT_TYPE_IQ4_NL, 64, true}, {CT_TYPE_IQ1_M, CT_TYPE_IQ1_M, 256, true},
        {CT_TYPE_Q8_K, CT_TYPE_F16, 256, true},   {CT_TYPE_F16, CT_TYPE_IQ4_XS, 256, true},
        {CT_TYPE_F32, CT_TYPE_Q8_K, 256, true},   {CT_TYPE_F32, CT_TYPE_IQ3_S, 256, false},
        {CT_TYPE_Q8_K, CT_TYPE_Q4_K, 256, false},
    };
    for (size_t k = 0; k < CT_ARRAY_LEN(pairs); k++) {
        ct_tensor *a = ct_tensor_new_2d(c, pairs[k].st, pairs[k].ne0, 2);
        ct_tensor *b = ct_tensor_new_2d(c, pairs[k].dt, pairs[k].ne0, 2);
        ct_tensor *t = ct_cpy(c, a, b);
        CHECK_MSG(t != NULL && ct_cpu_cpy_supported(t) == pairs[k].ok, "cpy %s -> %s: supported should be %d",
                  ct_type_name(pairs[k].st), ct_type_name(pairs[k].dt), (int)pairs[k].ok);
    }
    /* A source row that is not whole destination blocks: the kernel would split a block. */
    ct_tensor *a = ct_tensor_new_2d(c, CT_TYPE_F32, 32, 3);
    ct_tensor *b = ct_tensor_new_2d(c, CT_TYPE_Q8_0, 32, 3);
    ct_tensor *t = ct_cpy(c, a, b);
    CHECK(t && ct_cpu_cpy_supported(t));
    t->src[0] = ct_tensor_new_2d(c, CT_TYPE_F32, 48, 2);
    CHECK(!ct_cpu_cpy_supported(t));
    t->src[0] = ct_tensor_new_2d(c, CT_TYPE_F32, 32, 2); /* element counts differ */
    CHECK(!ct_cpu_cpy_supported(t));
    ct_context_free(c);
}

/* ---- norms and row sums --------------------------------------------------- */

/* The CPU reference of docs/TENSORS.md, Norms: sequential double sums. */
static void ref_norm_row(ct_op op, const float *x, int64_t n, float eps, float *y) {
    double sum = 0.0;
    if (op == CT_OP_NORM) {
        for (int64_t i = 0; i < n; i++) sum += (double)x[i];
        const float mean = (float)(sum / (double)n);
        double sum2 = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const float v = x[i] - mean;
            y[i] = v;
            sum2 += (double)(v * v);
        }
        const float variance = (float)(sum2 / (double)n);
        const float scale = 1.0f / sqrtf(variance + eps);
        for (int64_t i = 0; i < n; i++) y[i] *= scale;
        return;
    }
    for (int64_t i = 0; i < n; i++) sum += (double)(x[i] * x[i]);
    float scale;
    if (op == CT_OP_RMS_NORM) {
        const float mean = (float)(sum / (double)n);
        scale = 1.0f / sqrtf(mean + eps);
    } else {
        scale = 1.0f / fmaxf(sqrtf((float)sum), eps);
    }
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * scale;
}

static float get_f32(const ct_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    float v;
    memcpy(&v, elem(t, i0, i1, i2, i3), sizeof v);
    return v;
}

/* dst (F32) against want in dst's logical order: same NaNs, else within a few ulps.
 * The kernels sum in eight double lanes, the reference in one chain. */
static void check_close(const char *what, int nth, const ct_tensor *dst, const float *want) {
    int64_t k = 0, bad = 0, exact = 0;
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++, k++) {
                    const float got = get_f32(dst, i0, i1, i2, i3), w = want[k];
                    if (tu_same_f32(got, w)) {
                        exact++;
                        continue;
                    }
                    if (isnan(got) || isnan(w) || !(fabsf(got - w) <= 1e-6f * fabsf(w) + 1e-35f)) {
                        if (bad++ < 3)
                            fprintf(stderr, "%s nth=%d: element %lld is %.9g, want %.9g\n", what, nth, (long long)k,
                                    (double)got, (double)w);
                    }
                }
    CHECK_MSG(bad == 0, "%s nth=%d: %lld of %lld elements differ", what, nth, (long long)bad, (long long)k);
    CHECK_MSG(exact * 100 >= k * 99, "%s nth=%d: only %lld of %lld elements bit-equal", what, nth, (long long)exact,
              (long long)k);
}

/* The source of a norm or row sum, filled with normal values (and NaN/inf in some rows when special). */
static ct_tensor *make_f32(ct_context *c, const int64_t ne[4], int layout, float amp, bool special) {
    ct_tensor *t = make_src(c, CT_TYPE_F32, ne, layout, false);
    ct_tensor *root = root_of(t);
    float *f = root->data;
    const int64_t n = ct_nelements(root);
    for (int64_t i = 0; i < n; i++) f[i] = tu_rand_normal() * amp + 0.25f * amp;
    if (special && n > 8) {
        f[tu_rand_below(n)] = NAN;
        f[tu_rand_below(n)] = INFINITY;
        f[tu_rand_below(n)] = 1e-41f;
    }
    return t;
}

static void run_and_compare(const char *what, op_fn fn, ct_tensor *dst, const float *want) {
    for (int nth = 1; nth <= MAX_NTH; nth++) {
        tu_fill_bytes(root_of(dst)->data, ct_nbytes(root_of(dst)));
        const char *msg;
        CHECK_MSG(run_op(fn, dst, nth, &msg) == CT_OK, "%s: %s", what, msg);
        check_close(what, nth, dst, want);
    }
}

static void norm_case(ct_op op, const int64_t ne[4], int layout, float eps, float amp) {
    const size_t bytes = (size_t)(ne[0] * ne[1] * ne[2] * ne[3]) * 2 * sizeof(float); /* src and dst */
    ct_context *c = new_ctx_bytes(bytes + (32u << 20));
    ct_tensor *a = make_f32(c, ne, layout, amp, layout == LAYOUT_PLAIN);
    ct_tensor *dst = op == CT_OP_NORM ? ct_norm(c, a, eps) : op == CT_OP_RMS_NORM ? ct_rms_norm(c, a, eps)
                                                                                    : ct_l2_norm(c, a, eps);
    char what[128];
    snprintf(what, sizeof what, "%s [%lld,%lld,%lld,%lld] layout %d eps %g amp %g", ct_op_name(op), (long long)ne[0],
             (long long)ne[1], (long long)ne[2], (long long)ne[3], layout, (double)eps, (double)amp);
    CHECK_MSG(dst != NULL && ct_cpu_norm_supported(dst), "%s: %s", what, ct_last_error());
    if (!dst) {
        ct_context_free(c);
        return;
    }
    const int64_t n = ct_nelements(a);
    float *x = malloc((size_t)n * sizeof(float)), *want = malloc((size_t)n * sizeof(float));
    for (int64_t k = 0, r = 0; r < ct_nrows(a); r++, k += ne[0]) {
        const int64_t i1 = r % ne[1], i2 = (r / ne[1]) % ne[2], i3 = r / (ne[1] * ne[2]);
        for (int64_t i0 = 0; i0 < ne[0]; i0++) x[k + i0] = get_f32(a, i0, i1, i2, i3);
        ref_norm_row(op, x + k, ne[0], eps, want + k);
    }
    run_and_compare(what, ct_cpu_norm, dst, want);
    free(x);
    free(want);
    ct_context_free(c);
}

static void group_norm_case(const int64_t ne[4], int layout, int n_groups, float eps) {
    ct_context *c = new_ctx_bytes((size_t)(ne[0] * ne[1] * ne[2] * ne[3]) * 2 * sizeof(float) + (32u << 20));
    ct_tensor *a = make_f32(c, ne, layout, 3.0f, false);
    ct_tensor *dst = ct_group_norm(c, a, n_groups, eps);
    char what[128];
    snprintf(what, sizeof what, "GROUP_NORM [%lld,%lld,%lld,%lld] layout %d groups %d", (long long)ne[0],
             (long long)ne[1], (long long)ne[2], (long long)ne[3], layout, n_groups);
    CHECK_MSG(dst != NULL && ct_cpu_norm_supported(dst), "%s: %s", what, ct_last_error());
    if (!dst) {
        ct_context_free(c);
        return;
    }
    const int64_t n = ct_nelements(a);
    float *want = malloc((size_t)n * sizeof(float));
    const int64_t per = (ne[2] + n_groups - 1) / n_groups;
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int64_t g = 0; g < n_groups; g++) {
            const int64_t c0 = g * per, c1 = c0 + per < ne[2] ? c0 + per : ne[2];
            if (c0 >= c1) continue;
            const double count = (double)(ne[0] * ne[1] * (c1 - c0));
            double sum = 0.0;
            for (int64_t i2 = c0; i2 < c1; i2++)
                for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                    double sumr = 0.0;
                    for (int64_t i0 = 0; i0 < ne[0]; i0++) sumr += (double)get_f32(a, i0, i1, i2, i3);
                    sum += sumr;
                }
            const float mean = (float)(sum / count);
            double sum2 = 0.0;
            for (int64_t i2 = c0; i2 < c1; i2++)
                for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                    double sumr = 0.0;
                    for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                        const float v = get_f32(a, i0, i1, i2, i3) - mean;
                        want[((i3 * ne[2] + i2) * ne[1] + i1) * ne[0] + i0] = v;
                        sumr += (double)(v * v);
                    }
                    sum2 += sumr;
                }
            const float scale = 1.0f / sqrtf((float)(sum2 / count) + eps);
            for (int64_t i2 = c0; i2 < c1; i2++)
                for (int64_t i1 = 0; i1 < ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < ne[0]; i0++) want[((i3 * ne[2] + i2) * ne[1] + i1) * ne[0] + i0] *= scale;
        }
    run_and_compare(what, ct_cpu_norm, dst, want);
    free(want);
    ct_context_free(c);
}

static void test_norms(void) {
    const ct_op ops[] = {CT_OP_NORM, CT_OP_RMS_NORM, CT_OP_L2_NORM};
    const float eps[] = {0.0f, 1e-6f, 1e-1f};
    for (size_t o = 0; o < CT_ARRAY_LEN(ops); o++) {
        for (size_t e = 0; e < CT_ARRAY_LEN(eps); e++) {
            const int64_t base[4] = {64, 5, 4, 3}, odd[4] = {33, 3, 1, 2}, one[4] = {1, 7, 2, 1};
            const int64_t wide[4] = {1003, 2, 1, 1};
            norm_case(ops[o], base, LAYOUT_PLAIN, eps[e], 10.0f);
            norm_case(ops[o], base, LAYOUT_STRIDED_ROWS, eps[e], 1.0f);
            norm_case(ops[o], odd, LAYOUT_PERMUTED, eps[e], 1.0f);
            norm_case(ops[o], odd, LAYOUT_TRANSPOSED, eps[e], 1.0f);
            norm_case(ops[o], one, LAYOUT_PLAIN, eps[e], 1.0f);
            norm_case(ops[o], wide, LAYOUT_PLAIN, eps[e], 1e-3f); /* L2: sqrt(s) < eps for eps 0.1 */
        }
    }
    {
        /* Outputs past 32 MiB take non-temporal stores (rows of odd length: unaligned starts). */
        const int64_t big[4] = {4099, 2049, 1, 1};
        for (size_t o = 0; o < CT_ARRAY_LEN(ops); o++) norm_case(ops[o], big, LAYOUT_PLAIN, 1e-6f, 1.0f);
    }
    {
        /* A zero row with eps 0 divides by zero the same way as the reference. */
        const int64_t ne[4] = {8, 1, 1, 1};
        for (size_t o = 0; o < CT_ARRAY_LEN(ops); o++) norm_case(ops[o], ne, LAYOUT_PLAIN, 0.0f, 0.0f);
    }
    const int64_t g1[4] = {9, 9, 10, 2}, g2[4] = {5, 3, 5, 1}, g3[4] = {64, 4, 32, 1}, g4[4] = {7, 2, 6, 3};
    group_norm_case(g1, LAYOUT_PLAIN, 4, 1e-6f);   /* 3 channels a group, the last one truncated to 1 */
    group_norm_case(g2, LAYOUT_PLAIN, 4, 1e-6f);   /* 2 a group: channels 4 and the empty fourth group */
    group_norm_case(g3, LAYOUT_STRIDED_ROWS, 32, 1e-6f);
    group_norm_case(g4, LAYOUT_TRANSPOSED, 5, 0.1f);
    group_norm_case(g4, LAYOUT_PERMUTED, 1, 0.0f);
    const int64_t g5[4] = {1024, 1025, 8, 1}; /* an output past 32 MiB: non-temporal stores */
    group_norm_case(g5, LAYOUT_PLAIN, 4, 1e-6f);

    ct_context *c = new_ctx();
    ct_tensor *a = ct_tensor_new_2d(c, CT_TYPE_F32, 4, 2);
    ct_tensor *n = ct_rms_norm(c, a, 1e-6f);
    CHECK(n && ct_cpu_norm_supported(n));
    n->type = CT_TYPE_F16;
    CHECK(!ct_cpu_norm_supported(n));
    n->type = CT_TYPE_F32;
    n->src[0] = ct_tensor_new_2d(c, CT_TYPE_F16, 4, 2);
    CHECK(!ct_cpu_norm_supported(n));
    n->src[0] = ct_tensor_new_2d(c, CT_TYPE_F32, 4, 3);
    CHECK(!ct_cpu_norm_supported(n));
    ct_tensor *g = ct_group_norm(c, a, 2, 1e-6f);
    CHECK(g && ct_cpu_norm_supported(g));
    g->op_params[0] = 0;
    CHECK(!ct_cpu_norm_supported(g));
    ct_context_free(c);
}

static void sum_rows_case(bool mean, const int64_t ne[4], int layout) {
    ct_context *c = new_ctx();
    ct_tensor *a = make_f32(c, ne, layout, 5.0f, layout == LAYOUT_PLAIN);
    ct_tensor *dst = mean ? ct_mean(c, a) : ct_sum_rows(c, a);
    char what[128];
    snprintf(what, sizeof what, "%s [%lld,%lld,%lld,%lld] layout %d", mean ? "MEAN" : "SUM_ROWS", (long long)ne[0],
             (long long)ne[1], (long long)ne[2], (long long)ne[3], layout);
    CHECK_MSG(dst != NULL && ct_cpu_sum_rows_supported(dst), "%s: %s", what, ct_last_error());
    if (!dst) {
        ct_context_free(c);
        return;
    }
    float *want = malloc((size_t)ct_nrows(a) * sizeof(float));
    for (int64_t r = 0; r < ct_nrows(a); r++) {
        const int64_t i1 = r % ne[1], i2 = (r / ne[1]) % ne[2], i3 = r / (ne[1] * ne[2]);
        double sum = 0.0;
        for (int64_t i0 = 0; i0 < ne[0]; i0++) sum += (double)get_f32(a, i0, i1, i2, i3);
        want[r] = (float)sum;
        if (mean) want[r] /= (float)ne[0];
    }
    run_and_compare(what, ct_cpu_sum_rows, dst, want);
    free(want);
    ct_context_free(c);
}

static void test_sum_rows(void) {
    const int64_t base[4] = {10, 5, 4, 3}, one[4] = {1, 3, 1, 2}, wide[4] = {1000, 3, 1, 1}, odd[4] = {33, 2, 3, 1};
    for (int m = 0; m < 2; m++) {
        sum_rows_case(m, base, LAYOUT_PLAIN);
        sum_rows_case(m, base, LAYOUT_STRIDED_ROWS);
        sum_rows_case(m, odd, LAYOUT_PERMUTED);
        sum_rows_case(m, odd, LAYOUT_TRANSPOSED);
        sum_rows_case(m, one, LAYOUT_PLAIN);
        sum_rows_case(m, wide, LAYOUT_PLAIN);
    }
    ct_context *c = new_ctx();
    ct_tensor *a = ct_tensor_new_2d(c, CT_TYPE_F16, 4, 2);
    ct_tensor *s = ct_sum_rows(c, a);
    CHECK(s == NULL || !ct_cpu_sum_rows_supported(s)); /* the reference sums F32 only */
    ct_tensor *f = ct_tensor_new_2d(c, CT_TYPE_F32, 4, 2);
    ct_tensor *m = ct_mean(c, f);
    CHECK(m && ct_cpu_sum_rows_supported(m));
    m->src[0] = ct_tensor_new_2d(c, CT_TYPE_F32, 4, 3);
    CHECK(!ct_cpu_sum_rows_supported(m));
    ct_context_free(c);
}

/* GEGLU and GEGLU_QUICK on F32 (x rounded to fp16, f from a table, times g) give the same
 * bytes through the vector lookup (F16C, where the CPU has it) as through the scalar
 * loop (a NaN times a NaN: a NaN), on 1 and 3 threads: x takes every fp16 value (every table entry is read, the last
 * index and NaNs of both signs included), GEGLU's clamps at -10 and 10 and their float
 * neighbours, values between adjacent halves (ties too), NaNs with payloads, infinities,
 * fp16 subnormals and overflow, zeros of both signs; g takes the same specials among
 * random values; an odd row length leaves tails. */
static void test_glu_table_lookup(void) {
    if (!ct_types_use_avx2()) {
        printf("no AVX2/F16C: the GLU vector lookup is not compared\n");
        return;
    }
    enum { NE0 = 1003, NE1 = 70 };
    ct_context *c = new_ctx();
    ct_tensor *x = ct_tensor_new_2d(c, CT_TYPE_F32, NE0, NE1), *g = ct_tensor_new_2d(c, CT_TYPE_F32, NE0, NE1);
    CHECK(x && g);
    if (!x || !g) {
        ct_context_free(c);
        return;
    }
    float *xv = x->data, *gv = g->data;
    const int64_t n = (int64_t)NE0 * NE1;
    static const uint32_t special_bits[] = {0x7F800001u, 0xFFC12345u, 0x7FC00000u, 0xFF800000u, 0x7F800000u,
                                            0x80000000u, 0x00000001u, 0x33800000u, 0x477FF000u, 0x477FF001u};
    for (int64_t i = 0; i < n; i++) {
        if (i < 65536) {
            xv[i] = ct_fp16_to_fp32((ct_fp16)i);
        } else {
            const int64_t k = i - 65536;
            /* a finite half and the next one up */
            const ct_fp16 h = (ct_fp16)tu_rand_below(0x7C00);
            const float a = ct_fp16_to_fp32(h), b = ct_fp16_to_fp32((ct_fp16)(h + 1));
            switch (k % 8) {
            case 0: xv[i] = k % 16 ? 10.0f : -10.0f; break;
            case 1: xv[i] = nextafterf(k % 16 > 8 ? 10.0f : -10.0f, 0.0f); break;
            case 2: xv[i] = nextafterf(k % 16 > 8 ? 10.0f : -10.0f, k % 16 > 8 ? 20.0f : -20.0f); break;
            case 3: xv[i] = (a + b) / 2 * (k % 16 > 8 ? -1.0f : 1.0f); break;
            case 4: xv[i] = a + (b - a) * tu_rand_uniform(0.0f, 1.0f); break;
            default: {
                const uint32_t u = special_bits[tu_rand_below((int64_t)(sizeof special_bits / sizeof special_bits[0]))];
                memcpy(&xv[i], &u, sizeof u);
            }
            }
        }
        gv[i] = tu_rand_uniform(-2.0f, 2.0f);
        if (tu_rand_below(50) == 0) {
            const uint32_t u = special_bits[tu_rand_below((int64_t)(sizeof special_bits / sizeof special_bits[0]))];
            memcpy(&gv[i], &u, sizeof u);
        }
    }
    const ct_glu_op ops[] = {CT_GLU_OP_GEGLU, CT_GLU_OP_GEGLU_QUICK};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        ct_tensor *d = ct_glu_split(c, x, g, ops[o]);
        CHECK_MSG(d != NULL, "%s", ct_last_error());
        if (!d) continue;
        float *want = malloc(sizeof(float) * (size_t)n);
        CHECK(want != NULL);
        if (!want) continue;
        ct_types_force_portable(true);
        CHECK(run_op(ct_cpu_glu, d, 1, NULL) == CT_OK);
        ct_types_force_portable(false);
        memcpy(want, d->data, sizeof(float) * (size_t)n);
        for (int nth = 1; nth <= MAX_NTH; nth += 2) {
            memset(d->data, 0xA5, sizeof(float) * (size_t)n);
            CHECK(run_op(ct_cpu_glu, d, nth, NULL) == CT_OK);
            int64_t bad = 0, first = -1;
            for (int64_t i = 0; i < n; i++) {
                const float got = ((float *)d->data)[i];
                /* f(x)·g of two NaNs (a NaN g, and x NaN or infinite) is either NaN, as the
                 * compiler orders the scalar product's operands */
                const bool two_nans = isnan(gv[i]) && !isfinite(xv[i]) && isnan(want[i]) && isnan(got);
                if (!two_nans && memcmp(&want[i], &got, sizeof(float)) != 0 && bad++ == 0) first = i;
            }
            CHECK_MSG(bad == 0, "%s, %d threads: %lld of %lld elements differ from the scalar loop's bytes, the first "
                      "at x = %a, g = %a: %a, not %a", ct_glu_op_name(ops[o]), nth, (long long)bad, (long long)n,
                      first >= 0 ? (double)xv[first] : 0.0, first >= 0 ? (double)gv[first] : 0.0,
                      first >= 0 ? (double)((float *)d->data)[first] : 0.0, first >= 0 ? (double)want[first] : 0.0);
        }
        free(want);
    }
    ct_context_free(c);
}

int main(void) {
    tu_init("test_cpu_ops");
    for (int n = 1; n <= MAX_NTH; n++) CHECK(ct_cpu_threadpool_new("test_cpu_ops", n, &pools[n]) == CT_OK);
    test_get_rows();
    test_set_rows();
    test_cpy();
    test_norms();
    test_sum_rows();
    test_glu_table_lookup();
    for (int n = 1; n <= MAX_NTH; n++) ct_cpu_threadpool_free(pools[n]);
    return tu_finish();
}

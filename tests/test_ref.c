/* The REF backend: the device and its backend, and every op on small cases
 * whose expected values are worked out here, plus random cases checked
 * against plain loops over logical indices (no strides) in this file. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>

static ct_device *g_dev;
static ct_backend *g_be;

static ct_context *new_ctx(void) {
    ct_context_params p = {.mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = true};
    ct_context *ctx = ct_context_new(p);
    CHECK(ctx != NULL);
    return ctx;
}

/* Builds the graph of out (then of out2, when not NULL), then allocates every
 * tensor of ctx in the REF device's buffer type. *buf must be freed. */
static ct_graph *prepare2(ct_context *ctx, ct_tensor *out, ct_tensor *out2, ct_buffer **buf) {
    *buf = NULL;
    if (!out) {
        fprintf(stderr, "constructor failed: %s\n", ct_last_error());
        CHECK(out != NULL);
        return NULL;
    }
    ct_graph *g = ct_graph_new(ctx, 32);
    CHECK(g != NULL);
    if (!g) return NULL;
    CHECK(ct_graph_build_forward(g, out) == CT_OK);
    if (out2) CHECK(ct_graph_build_forward(g, out2) == CT_OK);
    ct_status st = ct_context_alloc_tensors(ctx, ct_device_buffer_type(g_dev), buf);
    CHECK_MSG(st == CT_OK, "%s", ct_last_error());
    return st == CT_OK ? g : NULL;
}

static ct_graph *prepare(ct_context *ctx, ct_tensor *out, ct_buffer **buf) {
    return prepare2(ctx, out, NULL, buf);
}

static void set(ct_tensor *t, const void *data, size_t size) {
    CHECK(ct_nbytes(t) == size);
    CHECK(ct_tensor_set(t, data, 0, size) == CT_OK);
}

static void get(const ct_tensor *t, void *data, size_t size) {
    CHECK(ct_nbytes(t) == size);
    CHECK(ct_tensor_get(t, data, 0, size) == CT_OK);
}

static ct_status compute(ct_graph *g) {
    return ct_backend_graph_compute(g_be, g);
}

static bool close_f32(float got, float want, float rel) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabsf(got - want) <= rel * fmaxf(1.0f, fabsf(want));
}

/* ---- device ----------------------------------------------------------------- */

static void test_device(void) {
    CHECK(strcmp(ct_device_name(g_dev), "REF") == 0);
    CHECK(strcmp(ct_device_description(g_dev), "ctensor scalar reference (tests only)") == 0);
    CHECK(ct_device_get_type(g_dev) == CT_DEVICE_TYPE_CPU);
    ct_device_props props;
    CHECK(ct_device_get_props(g_dev, &props) == CT_OK);
    CHECK(strcmp(props.name, "REF") == 0);
    CHECK(!props.caps.async && !props.caps.host_buffer && !props.caps.buffer_from_host_ptr && !props.caps.events);
    CHECK(props.memory_free <= props.memory_total);
    CHECK(ct_backend_reg_by_name("REF") != NULL);
    CHECK(ct_device_reg(g_dev) == ct_backend_reg_by_name("ref"));

    /* Tensors live in the CPU's host buffers. */
    ct_device *cpu = ct_device_by_name("CPU");
    CHECK(cpu != NULL);
    ct_buffer_type *buft = ct_device_buffer_type(g_dev);
    CHECK(buft != NULL && cpu && buft == ct_device_buffer_type(cpu));
    CHECK(ct_buffer_type_is_host(buft));
    CHECK(ct_device_supports_buft(g_dev, buft));
    CHECK(ct_device_host_buffer_type(g_dev) == NULL);

    CHECK(strcmp(ct_backend_name(g_be), "REF") == 0);
    CHECK(ct_backend_get_device(g_be) == g_dev);
    CHECK(!ct_backend_is_cpu(g_be));

    ct_backend *be = NULL;
    CHECK(ct_device_init_backend(g_dev, "n_threads=4", &be) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "n_threads=4");
    CHECK(ct_device_init_backend(g_dev, "", &be) == CT_OK);
    ct_backend_free(be);
    CHECK(ct_backend_init_by_name("REF", NULL, &be) == CT_OK);
    ct_backend_free(be);
}

/* ---- MUL_MAT ---------------------------------------------------------------- */

static void test_mul_mat_small(void) {
    ct_context *ctx = new_ctx();
    /* [[1 2 3], [4 5 6]] times (1, 2, 3) = (14, 32); times (-1, 0, 0.5) = (0.5, -1). */
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 3, 2);
    ct_tensor *b = ct_tensor_new_2d(ctx, CT_TYPE_F32, 3, 2);
    ct_tensor *out = ct_mul_mat(ctx, a, b);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        CHECK(out->ne[0] == 2 && out->ne[1] == 2);
        const float av[6] = {1, 2, 3, 4, 5, 6}, bv[6] = {1, 2, 3, -1, 0, 0.5f};
        set(a, av, sizeof av);
        set(b, bv, sizeof bv);
        CHECK(ct_device_supports_op(g_dev, out));
        CHECK(compute(g) == CT_OK);
        float r[4];
        get(out, r, sizeof r);
        CHECK(r[0] == 14 && r[1] == 32 && r[2] == 0.5f && r[3] == -1);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* Broadcast (r2 = 2) over a permuted src1: dst[i0, i1, i2] = sum_k a[k, i0, i2/2] * b[k, i1, i2]. */
static void test_mul_mat_broadcast_permuted(void) {
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_3d(ctx, CT_TYPE_F32, 2, 1, 2);  /* a[:, 0, 0] = (1, 1), a[:, 0, 1] = (1, -1) */
    ct_tensor *braw = ct_tensor_new_3d(ctx, CT_TYPE_F32, 2, 4, 2); /* braw[k, i2, i1] */
    ct_tensor *b = ct_permute(ctx, braw, 0, 2, 1, 3);               /* b[k, i1, i2] = braw[k, i2, i1] */
    ct_tensor *out = ct_mul_mat(ctx, a, b);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        CHECK(out->ne[0] == 1 && out->ne[1] == 2 && out->ne[2] == 4);
        const float av[4] = {1, 1, 1, -1};
        float bv[16];
        for (int i = 0; i < 16; i++) bv[i] = (float)(i * i); /* braw[k, i2, i1] at k + 2*i2 + 8*i1 */
        set(a, av, sizeof av);
        set(braw, bv, sizeof bv);
        CHECK(compute(g) == CT_OK);
        float r[8]; /* r[i1 + 2*i2] */
        get(out, r, sizeof r);
        for (int i2 = 0; i2 < 4; i2++)
            for (int i1 = 0; i1 < 2; i1++) {
                const float b0 = bv[2 * i2 + 8 * i1], b1 = bv[1 + 2 * i2 + 8 * i1];
                const float want = i2 < 2 ? b0 + b1 : b0 - b1;
                CHECK_MSG(r[i1 + 2 * i2] == want, "i1=%d i2=%d: %g, want %g", i1, i2, r[i1 + 2 * i2], want);
            }
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* A Q8_0 row of +-127 (d = 1 exactly) times 0..31: 127 * (1 - 0 + 3 - 2 + ...) = 127 * 16. */
static void test_mul_mat_q8_0(void) {
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_Q8_0, 32, 1);
    ct_tensor *b = ct_tensor_new_2d(ctx, CT_TYPE_F32, 32, 1);
    ct_tensor *out = ct_mul_mat(ctx, a, b);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        float af[32], bf[32];
        for (int k = 0; k < 32; k++) af[k] = k % 2 ? 127.0f : -127.0f, bf[k] = (float)k;
        unsigned char q[34];
        CHECK(ct_quantize_row(CT_TYPE_Q8_0, af, q, 32) == CT_OK);
        set(a, q, sizeof q);
        set(b, bf, sizeof bf);
        CHECK(compute(g) == CT_OK);
        float r;
        get(out, &r, sizeof r);
        CHECK(r == 127.0f * 16);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* Random weights of type ta, a permuted and broadcast src1, against a loop over
 * logical indices with the same double accumulation: bit-equal. */
static void mul_mat_random(ct_type ta, int64_t K, int64_t M, int64_t N, int64_t B2, int64_t R2, int64_t B3) {
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_4d(ctx, ta, K, M, B2, B3);
    ct_tensor *braw = ct_tensor_new_4d(ctx, CT_TYPE_F32, K, B2 * R2, N, B3); /* braw[k, i2, i1, i3] */
    ct_tensor *b = ct_permute(ctx, braw, 0, 2, 1, 3);
    ct_tensor *out = ct_mul_mat(ctx, a, b);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    const int64_t na = K * M * B2 * B3, nb = K * B2 * R2 * N * B3, nd = M * N * B2 * R2 * B3;
    float *af = malloc(sizeof(float) * (size_t)na), *adq = malloc(sizeof(float) * (size_t)na);
    float *bf = malloc(sizeof(float) * (size_t)nb), *r = malloc(sizeof(float) * (size_t)nd);
    size_t arow;
    CHECK(ct_row_size(ta, na, &arow) == CT_OK);
    unsigned char *aq = malloc(arow);
    if (g && af && adq && bf && r && aq) {
        tu_fill_uniform(af, (size_t)na, -1, 1);
        tu_fill_uniform(bf, (size_t)nb, -1, 1);
        CHECK(ct_quantize_row(ta, af, aq, na) == CT_OK);
        CHECK(ct_dequantize_row(ta, aq, adq, na) == CT_OK);
        set(a, aq, arow);
        set(braw, bf, sizeof(float) * (size_t)nb);
        CHECK(compute(g) == CT_OK);
        get(out, r, sizeof(float) * (size_t)nd);
        int bad = 0;
        for (int64_t i3 = 0; i3 < B3; i3++)
            for (int64_t i2 = 0; i2 < B2 * R2; i2++)
                for (int64_t i1 = 0; i1 < N; i1++)
                    for (int64_t i0 = 0; i0 < M; i0++) {
                        double s = 0;
                        for (int64_t k = 0; k < K; k++)
                            s += (double)adq[k + K * (i0 + M * (i2 / R2 + B2 * i3))] *
                                 (double)bf[k + K * (i2 + B2 * R2 * (i1 + N * i3))];
                        const float got = r[i0 + M * (i1 + N * (i2 + B2 * R2 * i3))];
                        if (!tu_same_f32(got, (float)s) && bad++ < 5)
                            fprintf(stderr, "mul_mat %s [%lld %lld %lld %lld]: %.9g, want %.9g\n", ct_type_name(ta),
                                    (long long)i0, (long long)i1, (long long)i2, (long long)i3, got, (double)(float)s);
                    }
        CHECK_MSG(bad == 0, "%s: %d mismatches", ct_type_name(ta), bad);
    }
    free(af), free(adq), free(bf), free(r), free(aq);
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

static void test_mul_mat_random(ct_type ta) {
    mul_mat_random(ta, ct_type_block_size(ta) == 1 ? 7 : 64, 3, 2, 2, 3, 2);
}

/* REF converts src1 rows in blocks of at most 4 Mi floats (ref_mul_mat.c): with
 * K = 1.4 M a block holds 2 rows, so N = 5 spans three blocks, the last one short;
 * every element must still be the plain loop's sum. */
static void test_mul_mat_row_blocks(void) {
    mul_mat_random(CT_TYPE_F32, 1400000, 3, 5, 1, 1, 1);
}

/* ---- norms ------------------------------------------------------------------ */

static void norm_case(ct_tensor *(*op)(ct_context *, ct_tensor *, float), float eps, const float *x, int n,
                      const float *want, const char *what) {
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_1d(ctx, CT_TYPE_F32, n);
    ct_tensor *out = op(ctx, a, eps);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        set(a, x, sizeof(float) * (size_t)n);
        CHECK(compute(g) == CT_OK);
        float y[8];
        get(out, y, sizeof(float) * (size_t)n);
        for (int i = 0; i < n; i++)
            CHECK_MSG(close_f32(y[i], want[i], 1e-6f), "%s[%d] = %.9g, want %.9g", what, i, y[i], want[i]);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

static void test_norms(void) {
    const float x34[2] = {3, 4};
    /* sqrt(9 + 16) = 5 */
    norm_case(ct_l2_norm, 0.0f, x34, 2, (const float[]){0.6f, 0.8f}, "l2 {3,4}");
    /* eps floors the norm itself, not the squared sum: 1/max(5, 10). */
    norm_case(ct_l2_norm, 10.0f, x34, 2, (const float[]){0.3f, 0.4f}, "l2 {3,4} eps 10");
    norm_case(ct_l2_norm, 1e-6f, (const float[]){0, 0}, 2, (const float[]){0, 0}, "l2 zeros");
    /* mean of squares 12.5 */
    norm_case(ct_rms_norm, 0.0f, x34, 2, (const float[]){3 / sqrtf(12.5f), 4 / sqrtf(12.5f)}, "rms {3,4}");
    norm_case(ct_rms_norm, 3.5f, x34, 2, (const float[]){0.75f, 1.0f}, "rms {3,4} eps 3.5"); /* sqrt(16) */
    /* mean 2.5, variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25; + eps 2.75 = 4 */
    norm_case(ct_norm, 2.75f, (const float[]){1, 2, 3, 4}, 4, (const float[]){-0.75f, -0.25f, 0.25f, 0.75f},
              "norm 1..4");
    /* one element: variance 0, y = 0 * 1/sqrt(eps) */
    norm_case(ct_norm, 1e-5f, (const float[]){42}, 1, (const float[]){0}, "norm one element");
    /* squares are rounded to float before the double sum: 1e30^2 is inf, so the scale is 0 */
    norm_case(ct_rms_norm, 0.0f, (const float[]){1e30f, 1e30f}, 2, (const float[]){0, 0}, "rms huge");
}

/* ne00 = 2, ne01 = 1, 3 channels, 2 groups: channels {0, 1} and a truncated
 * group {2}, normalized over their true sizes (4 and 2 elements), per i03. */
static void test_group_norm(void) {
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_4d(ctx, CT_TYPE_F32, 2, 1, 3, 2);
    ct_tensor *out = ct_group_norm(ctx, a, 2, 0.0f);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        const float x[12] = {1, 3, 5, 7, 10, 20, /* i03 = 0: group 0 mean 4 var 5; group 1 mean 15 var 25 */
                             0, 0, 0, 4, -3, 5}; /* i03 = 1: group 0 mean 1 var 3; group 1 mean 1 var 16 */
        set(a, x, sizeof x);
        CHECK(compute(g) == CT_OK);
        float y[12];
        get(out, y, sizeof y);
        const float s5 = 1 / sqrtf(5), s3 = 1 / sqrtf(3);
        const float want[12] = {-3 * s5, -1 * s5, 1 * s5, 3 * s5, -1, 1, -1 * s3, -1 * s3, -1 * s3, 3 * s3, -1, 1};
        for (int i = 0; i < 12; i++)
            CHECK_MSG(close_f32(y[i], want[i], 1e-6f), "group_norm[%d] = %.9g, want %.9g", i, y[i], want[i]);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);

    /* 5 channels in 4 groups of 2: groups {0,1}, {2,3}, {4}, and a fourth with no channel. */
    ctx = new_ctx();
    a = ct_tensor_new_3d(ctx, CT_TYPE_F32, 1, 2, 5);
    out = ct_group_norm(ctx, a, 4, 0.0f);
    g = prepare(ctx, out, &buf);
    if (g) {
        const float x[10] = {0, 2, 2, 4, 1, 1, 1, 1, -2, 2};
        set(a, x, sizeof x);
        CHECK(compute(g) == CT_OK);
        float y[10];
        get(out, y, sizeof y);
        /* group 0: {0,2,2,4} mean 2 var 2; group 1: all 1 -> 0/0; group 2: {-2,2} mean 0 var 4 */
        const float s2 = 1 / sqrtf(2);
        const float want[10] = {-2 * s2, 0, 0, 2 * s2, NAN, NAN, NAN, NAN, -1, 1};
        for (int i = 0; i < 10; i++)
            CHECK_MSG(close_f32(y[i], want[i], 1e-6f), "group_norm 5/4 [%d] = %.9g, want %.9g", i, y[i], want[i]);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* ---- SUM_ROWS, MEAN --------------------------------------------------------- */

static void test_sum_rows(void) {
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 3, 4);
    ct_tensor *s = ct_sum_rows(ctx, a);
    ct_tensor *m = ct_mean(ctx, a);
    ct_buffer *buf;
    ct_graph *g = prepare2(ctx, s, m, &buf);
    if (g) {
        /* 1e8 + 1 - 1e8 is 1 only with a double sum; inf and NaN propagate. */
        const float x[12] = {1, 2, 3, 1e8f, 1, -1e8f, INFINITY, 1, 2, NAN, 0, 0};
        set(a, x, sizeof x);
        CHECK(compute(g) == CT_OK);
        float rs[4], rm[4];
        get(s, rs, sizeof rs);
        get(m, rm, sizeof rm);
        CHECK(rs[0] == 6 && rs[1] == 1 && rs[2] == INFINITY && isnan(rs[3]));
        CHECK(rm[0] == 2 && rm[1] == 1.0f / 3.0f && rm[2] == INFINITY && isnan(rm[3]));
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* ---- SUM, CUMSUM, ARGMAX, ARGSORT, TOP_K -------------------------------------- */

static void test_reduce_argsort(void) {
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 6, 5);
    ct_tensor *sum = ct_sum(ctx, a), *cs = ct_cumsum(ctx, a), *am = ct_argmax(ctx, a);
    ct_tensor *asc = ct_argsort(ctx, a, CT_SORT_ORDER_ASC), *desc = ct_argsort(ctx, a, CT_SORT_ORDER_DESC);
    ct_tensor *tk = ct_top_k(ctx, a, 3);
    ct_buffer *buf = NULL;
    ct_graph *g = prepare2(ctx, sum, cs, &buf);
    if (g) {
        CHECK(ct_graph_build_forward(g, am) == CT_OK && ct_graph_build_forward(g, asc) == CT_OK);
        CHECK(ct_graph_build_forward(g, desc) == CT_OK && ct_graph_build_forward(g, tk) == CT_OK);
        const float N = NAN, I = INFINITY;
        const float x[30] = {
            1e8f, 1, -1e8f, 2, 2, -3,     /* ties: the last maximum; a stable sort */
            1, N, 5, 4, N, 3,             /* a NaN restarts ARGMAX: the maximum after the last one before the end */
            7, 2, 9, N, N, N,             /* NaNs at the end change nothing */
            N, N, N, N, N, N,             /* all NaN: 0 */
            -I, -I, -0.0f, 0.0f, -I, -I,  /* -0 and +0 are equal */
        };
        CHECK(ct_tensor_set(a, x, 0, sizeof x) == CT_OK);
        CHECK(compute(g) == CT_OK);
        float s, c[30];
        int32_t m[5], o1[30], o2[30], t[15];
        get(sum, &s, sizeof s);
        get(cs, c, sizeof c);
        get(am, m, sizeof m);
        get(asc, o1, sizeof o1);
        get(desc, o2, sizeof o2);
        get(tk, t, sizeof t);
        CHECK(isnan(s));
        /* float adds in order: 1e8 + 1 rounds to 1e8 */
        CHECK(c[0] == 1e8f && c[1] == 1e8f && c[2] == 0 && c[3] == 2 && c[4] == 4 && c[5] == 1);
        CHECK(c[6] == 1 && isnan(c[7]) && isnan(c[11]) && c[24] == -I && c[27] == -I && c[14] == 18);
        CHECK(m[0] == 0 && m[1] == 5 && m[2] == 2 && m[3] == 0 && m[4] == 3);
        static const int32_t w1[30] = {2, 5, 1, 3, 4, 0, 0, 5, 3, 2, 1, 4, 1, 0, 2, 3, 4, 5,
                                       0, 1, 2, 3, 4, 5, 0, 1, 4, 5, 2, 3};
        static const int32_t w2[30] = {0, 3, 4, 1, 5, 2, 2, 3, 5, 0, 1, 4, 2, 0, 1, 3, 4, 5,
                                       0, 1, 2, 3, 4, 5, 2, 3, 0, 1, 4, 5};
        static const int32_t w3[15] = {0, 3, 4, 2, 3, 5, 2, 0, 1, 0, 1, 2, 2, 3, 0};
        CHECK(memcmp(o1, w1, sizeof w1) == 0);
        CHECK(memcmp(o2, w2, sizeof w2) == 0);
        CHECK(memcmp(t, w3, sizeof w3) == 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* ---- GET_ROWS --------------------------------------------------------------- */

static void test_get_rows(void) {
    ct_context *ctx = new_ctx();
    /* table[:, r, i11] = (100*i11 + 10*r, 100*i11 + 10*r + 1); 4 rows, 2 batches */
    ct_tensor *a = ct_tensor_new_3d(ctx, CT_TYPE_F32, 2, 4, 2);
    ct_tensor *b = ct_tensor_new_2d(ctx, CT_TYPE_I32, 3, 2);
    ct_tensor *out = ct_get_rows(ctx, a, b);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        CHECK(out->type == CT_TYPE_F32 && out->ne[0] == 2 && out->ne[1] == 3 && out->ne[2] == 2);
        float t[16];
        for (int i11 = 0; i11 < 2; i11++)
            for (int r = 0; r < 4; r++)
                for (int j = 0; j < 2; j++) t[j + 2 * (r + 4 * i11)] = (float)(100 * i11 + 10 * r + j);
        const int32_t idx[6] = {3, 0, 3, 1, 1, 2};
        set(a, t, sizeof t);
        set(b, idx, sizeof idx);
        CHECK(compute(g) == CT_OK);
        float r[12];
        get(out, r, sizeof r);
        const float want[12] = {30, 31, 0, 1, 30, 31, 110, 111, 110, 111, 120, 121};
        CHECK(memcmp(r, want, sizeof r) == 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

static void test_get_rows_types(void) {
    /* I32 rows stay I32, bit for bit. */
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_I32, 3, 2);
    ct_tensor *b = ct_tensor_new_1d(ctx, CT_TYPE_I32, 2);
    ct_tensor *out = ct_get_rows(ctx, a, b);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        CHECK(out->type == CT_TYPE_I32);
        const int32_t t[6] = {INT32_MIN, -1, 7, INT32_MAX, 0, 5}, idx[2] = {1, 0};
        set(a, t, sizeof t);
        set(b, idx, sizeof idx);
        CHECK(compute(g) == CT_OK);
        int32_t r[6];
        get(out, r, sizeof r);
        const int32_t want[6] = {INT32_MAX, 0, 5, INT32_MIN, -1, 7};
        CHECK(memcmp(r, want, sizeof r) == 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);

    /* Random F16, BF16, Q4_1, Q6_K tables: rows equal ct_dequantize_row of the picked row. */
    const ct_type types[4] = {CT_TYPE_F16, CT_TYPE_BF16, CT_TYPE_Q4_1, CT_TYPE_Q6_K};
    for (int ti = 0; ti < 4; ti++) {
        const ct_type type = types[ti];
        const int64_t n = ct_type_block_size(type) == 1 ? 5 : 256, rows = 3, nidx = 4;
        ctx = new_ctx();
        a = ct_tensor_new_2d(ctx, type, n, rows);
        b = ct_tensor_new_1d(ctx, CT_TYPE_I32, nidx);
        out = ct_get_rows(ctx, a, b);
        g = prepare(ctx, out, &buf);
        size_t rs = 0;
        CHECK(ct_row_size(type, n, &rs) == CT_OK);
        unsigned char *q = malloc(rs * rows);
        float *x = malloc(sizeof(float) * (size_t)(n * rows)), *deq = malloc(sizeof(float) * (size_t)(n * rows));
        float *r = malloc(sizeof(float) * (size_t)(n * nidx));
        if (g && q && x && deq && r) {
            tu_fill_uniform(x, (size_t)(n * rows), -2, 2);
            x[0] = INFINITY; /* plain types keep inf */
            if (ct_type_can_quantize(type)) {
                if (ct_type_is_quantized(type)) x[0] = 0;
                CHECK(ct_quantize_row(type, x, q, n * rows) == CT_OK);
            } else { /* Q6_K: random blocks with a sane d (the last two bytes of the 210) */
                tu_fill_bytes(q, rs * rows);
                const ct_fp16 d = ct_fp32_to_fp16(0.01f);
                for (int64_t blk = 0; blk < rows; blk++) memcpy(q + 210 * blk + 208, &d, sizeof d);
            }
            CHECK(ct_dequantize_row(type, q, deq, n * rows) == CT_OK);
            int32_t idx[4];
            for (int i = 0; i < 4; i++) idx[i] = (int32_t)tu_rand_below(rows);
            set(a, q, rs * rows);
            set(b, idx, sizeof idx);
            CHECK(compute(g) == CT_OK);
            get(out, r, sizeof(float) * (size_t)(n * nidx));
            CHECK_MSG(memcmp(r, deq + idx[0] * n, sizeof(float) * (size_t)n) == 0 &&
                          memcmp(r + 3 * n, deq + idx[3] * n, sizeof(float) * (size_t)n) == 0,
                      "get_rows %s", ct_type_name(type));
        }
        free(q), free(x), free(deq), free(r);
        ct_buffer_free(buf);
        ct_context_free(ctx);
    }
}

static void test_get_rows_out_of_range(void) {
    const int32_t bad[2] = {4, -1};
    for (int k = 0; k < 2; k++) {
        ct_context *ctx = new_ctx();
        ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 2, 4);
        ct_tensor *b = ct_tensor_new_1d(ctx, CT_TYPE_I32, 3);
        ct_tensor_set_name(b, "ids");
        ct_tensor *out = ct_get_rows(ctx, a, b);
        ct_buffer *buf;
        ct_graph *g = prepare(ctx, out, &buf);
        if (g) {
            const float t[8] = {0};
            const int32_t idx[3] = {0, 1, bad[k]};
            const float sentinel[6] = {-5, -5, -5, -5, -5, -5};
            set(a, t, sizeof t);
            set(b, idx, sizeof idx);
            set(out, sentinel, sizeof sentinel);
            ct_clear_error();
            CHECK(compute(g) == CT_INDEX_OUT_OF_RANGE);
            CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, k == 0 ? "ids[2, 0, 0] = 4" : "ids[2, 0, 0] = -1");
            CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, "GET_ROWS");
            float r[6];
            get(out, r, sizeof r);
            CHECK(memcmp(r, sentinel, sizeof r) == 0); /* rows 0 and 1 were valid, and still not written */
        }
        ct_buffer_free(buf);
        ct_context_free(ctx);
    }
}

/* ---- SET_ROWS --------------------------------------------------------------- */

/* dst [1, 4, 2, 2]; src [1, 2, 2, 2]; I32 indices [2, 1, 2]: i11 = i02 % 1 = 0 broadcasts
 * over dim 2, i12 = i03 selects per dim 3. */
static void test_set_rows_broadcast(void) {
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_4d(ctx, CT_TYPE_F32, 1, 4, 2, 2);
    ct_tensor *src = ct_tensor_new_4d(ctx, CT_TYPE_F32, 1, 2, 2, 2);
    ct_tensor *idx = ct_tensor_new_3d(ctx, CT_TYPE_I32, 2, 1, 2);
    ct_tensor *out = ct_set_rows(ctx, a, src, idx);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        const float init[16] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
        const float s[8] = {1, 2, 3, 4, 5, 6, 7, 8}; /* s[i + 2*i02 + 4*i03] */
        const int32_t ix[4] = {3, 0, 1, 2};            /* i03 = 0: rows 3, 0; i03 = 1: rows 1, 2 */
        set(a, init, sizeof init);
        set(src, s, sizeof s);
        set(idx, ix, sizeof ix);
        CHECK(compute(g) == CT_OK);
        float r[16]; /* r[row + 4*i02 + 8*i03] */
        get(a, r, sizeof r);
        const float want[16] = {2, -1, -1, 1, 4, -1, -1, 3, -1, 5, 6, -1, -1, 7, 8, -1};
        CHECK(memcmp(r, want, sizeof r) == 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* I64 duplicates: the later source row wins. F16 source into a Q8_0 destination
 * gives ct_quantize_row's bytes. An out-of-range index writes nothing. */
static void test_set_rows_types(void) {
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 2, 3);
    ct_tensor *src = ct_tensor_new_2d(ctx, CT_TYPE_F32, 2, 3);
    ct_tensor *idx = ct_tensor_new_1d(ctx, CT_TYPE_I64, 3);
    ct_tensor *out = ct_set_rows(ctx, a, src, idx);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        const float init[6] = {0, 0, 0, 0, 0, 0}, s[6] = {1, 2, 3, 4, 5, 6};
        const int64_t ix[3] = {2, 0, 2};
        set(a, init, sizeof init);
        set(src, s, sizeof s);
        set(idx, ix, sizeof ix);
        CHECK(compute(g) == CT_OK);
        float r[6];
        get(a, r, sizeof r);
        const float want[6] = {3, 4, 0, 0, 5, 6};
        CHECK(memcmp(r, want, sizeof r) == 0);

        const int64_t bad[3] = {0, (int64_t)1 << 40, 1};
        set(a, init, sizeof init);
        set(idx, bad, sizeof bad);
        ct_tensor_set_name(idx, "rowids");
        CHECK(compute(g) == CT_INDEX_OUT_OF_RANGE);
        CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, "rowids[1, 0, 0] = 1099511627776");
        get(a, r, sizeof r);
        CHECK(memcmp(r, init, sizeof r) == 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);

    ctx = new_ctx();
    a = ct_tensor_new_2d(ctx, CT_TYPE_Q8_0, 64, 2);
    src = ct_tensor_new_2d(ctx, CT_TYPE_F16, 64, 1);
    idx = ct_tensor_new_1d(ctx, CT_TYPE_I64, 1);
    out = ct_set_rows(ctx, a, src, idx);
    g = prepare(ctx, out, &buf);
    if (g) {
        float x[64];
        ct_fp16 h[64];
        tu_fill_uniform(x, 64, -3, 3);
        x[5] = 0;
        CHECK(ct_fp32_to_fp16_row(x, h, 64) == CT_OK);
        CHECK(ct_fp16_to_fp32_row(h, x, 64) == CT_OK);
        unsigned char init[136], want[136]; /* 2 rows of 2 blocks of 34 bytes */
        tu_fill_bytes(init, sizeof init);
        memcpy(want, init, sizeof want);
        CHECK(ct_quantize_row(CT_TYPE_Q8_0, x, want + 68, 64) == CT_OK); /* row 1 */
        const int64_t ix = 1;
        set(a, init, sizeof init);
        set(src, h, sizeof h);
        set(idx, &ix, sizeof ix);
        CHECK(compute(g) == CT_OK);
        unsigned char r[136];
        get(a, r, sizeof r);
        CHECK(memcmp(r, want, sizeof r) == 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* ---- CPY, DUP, CONT --------------------------------------------------------- */

/* t[i0, i1, i2] = i0 + 2*i1 + 6*i2 of shape [2, 3, 2]; its transpose p[j0, j1, j2] = t[j1, j0, j2]
 * made contiguous reads (for j2, j1, j0) j1 + 2*j0 + 6*j2. */
static void test_cpy_permuted(void) {
    ct_context *ctx = new_ctx();
    ct_tensor *t = ct_tensor_new_3d(ctx, CT_TYPE_F32, 2, 3, 2);
    ct_tensor *p = ct_permute(ctx, t, 1, 0, 2, 3);
    ct_tensor *out = ct_cont(ctx, p);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        CHECK(out->ne[0] == 3 && out->ne[1] == 2 && out->ne[2] == 2 && ct_is_contiguous(out));
        float v[12];
        for (int i = 0; i < 12; i++) v[i] = (float)i;
        set(t, v, sizeof v);
        CHECK(compute(g) == CT_OK);
        float r[12];
        get(out, r, sizeof r);
        const float want[12] = {0, 2, 4, 1, 3, 5, 6, 8, 10, 7, 9, 11};
        CHECK(memcmp(r, want, sizeof r) == 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);

    /* cpy into a permuted destination of another shape: flat order of both sides. */
    ctx = new_ctx();
    t = ct_tensor_new_2d(ctx, CT_TYPE_F32, 6, 1);
    ct_tensor *d = ct_tensor_new_2d(ctx, CT_TYPE_F16, 2, 3);
    ct_tensor *dt = ct_transpose(ctx, d); /* dt[j0, j1] = d[j1, j0], shape [3, 2] */
    out = ct_cpy(ctx, t, dt);
    g = prepare(ctx, out, &buf);
    if (g) {
        const float v[6] = {1, -2, 0.5f, 65504, 1e6f, NAN};
        set(t, v, sizeof v);
        CHECK(compute(g) == CT_OK);
        ct_fp16 r[6];
        get(d, r, sizeof r);
        /* dt[j0, j1] = v[j0 + 3*j1] sits at d[j1 + 2*j0] */
        const ct_fp16 want[6] = {ct_fp32_to_fp16(1), ct_fp32_to_fp16(65504), ct_fp32_to_fp16(-2),
                                 0x7C00 /* 1e6 overflows */, ct_fp32_to_fp16(0.5f), 0x7E00};
        CHECK(memcmp(r, want, sizeof r) == 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* Random permuted F32 source cast to F16, BF16, Q4_0 and IQ4_NL: bytes equal the
 * conversion of the logically ordered floats, row by row. */
static void test_cpy_convert(ct_type dt) {
    const int64_t n0 = 32, n1 = 3, n2 = 2;
    ct_context *ctx = new_ctx();
    ct_tensor *t = ct_tensor_new_3d(ctx, CT_TYPE_F32, n0, n2, n1); /* t[i0, i2, i1] */
    ct_tensor *p = ct_permute(ctx, t, 0, 2, 1, 3);                 /* p[i0, i1, i2] */
    ct_tensor *out = ct_cast(ctx, p, dt);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        float v[192], logical[192];
        tu_fill_uniform(v, 192, -4, 4);
        v[3] = 0, v[40] = -0.0f, v[77] = 1e-40f;
        for (int64_t i2 = 0; i2 < n2; i2++)
            for (int64_t i1 = 0; i1 < n1; i1++)
                for (int64_t i0 = 0; i0 < n0; i0++) logical[i0 + n0 * (i1 + n1 * i2)] = v[i0 + n0 * (i2 + n2 * i1)];
        size_t rs;
        CHECK(ct_row_size(dt, 192, &rs) == CT_OK);
        unsigned char want[768], got[768];
        CHECK(ct_quantize_row(dt, logical, want, 192) == CT_OK);
        set(t, v, sizeof v);
        CHECK(compute(g) == CT_OK);
        get(out, got, rs);
        CHECK_MSG(memcmp(got, want, rs) == 0, "cpy f32 -> %s", ct_type_name(dt));
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* IQ4_NL edge blocks (NaN, inf, sums that overflow: tu_iq4_nl_edge_block), one row each,
 * through CPY and through SET_ROWS (rows in reverse): every block is the naive reference's,
 * ggml's rule (a NaN element gives d = +0). */
static void test_iq4nl_edges(void) {
    enum { NR = TU_IQ4_NL_EDGE_KINDS, NE = 64 }; /* rows of 2 blocks: an edge block, then an ordinary one */
    static float x[NR * NE];
    for (int r = 0; r < NR; r++) {
        tu_iq4_nl_edge_block(x + r * NE, r);
        for (int j = 32; j < NE; j++) x[r * NE + j] = tu_rand_normal();
    }
    static unsigned char want[NR * 36], got[NR * 36];
    for (int b = 0; b < 2 * NR; b++) tu_iq4_nl_naive(x + 32 * b, want + 18 * b);
    for (int op = 0; op < 2; op++) {
        ct_context *ctx = new_ctx();
        ct_tensor *src = ct_tensor_new_2d(ctx, CT_TYPE_F32, NE, NR);
        ct_tensor *dst = ct_tensor_new_2d(ctx, CT_TYPE_IQ4_NL, NE, NR);
        ct_tensor *idx = op ? ct_tensor_new_1d(ctx, CT_TYPE_I32, NR) : NULL;
        ct_tensor *out = op ? ct_set_rows(ctx, dst, src, idx) : ct_cpy(ctx, src, dst);
        ct_buffer *buf;
        ct_graph *g = prepare(ctx, out, &buf);
        if (g) {
            int32_t ix[NR];
            for (int r = 0; r < NR; r++) ix[r] = NR - 1 - r;
            if (op) {
                static float rev[NR * NE];
                for (int r = 0; r < NR; r++) memcpy(rev + ix[r] * NE, x + r * NE, sizeof(float) * NE);
                set(src, rev, sizeof rev); /* row r of the source lands in row NR-1-r: x's order */
                set(idx, ix, sizeof ix);
            } else {
                set(src, x, sizeof x);
            }
            CHECK(compute(g) == CT_OK);
            get(dst, got, sizeof got);
            for (int b = 0; b < 2 * NR; b++) {
                CHECK_MSG(memcmp(got + 18 * b, want + 18 * b, 18) == 0,
                          "%s into iq4_nl: block %d (edge kind %d): d 0x%02x%02x, the naive reference 0x%02x%02x",
                          op ? "SET_ROWS" : "CPY", b, b / 2, got[18 * b + 1], got[18 * b], want[18 * b + 1],
                          want[18 * b]);
            }
        }
        ct_buffer_free(buf);
        ct_context_free(ctx);
    }
}

/* Same-type copies move bytes: I16 through a transposed view, and IQ2_XXS (which
 * has no float conversion) reshaped from [256, 2] into [512, 1]. Q8_0 -> F32 dequantizes. */
static void test_cpy_same_type(void) {
    ct_context *ctx = new_ctx();
    ct_tensor *t = ct_tensor_new_2d(ctx, CT_TYPE_I16, 3, 2);
    ct_tensor *out = ct_dup(ctx, ct_transpose(ctx, t));
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        const int16_t v[6] = {1, 2, 3, -4, INT16_MIN, INT16_MAX};
        set(t, v, sizeof v);
        CHECK(compute(g) == CT_OK);
        int16_t r[6];
        get(out, r, sizeof r);
        const int16_t want[6] = {1, -4, 2, INT16_MIN, 3, INT16_MAX};
        CHECK(memcmp(r, want, sizeof r) == 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);

    ctx = new_ctx();
    t = ct_tensor_new_2d(ctx, CT_TYPE_IQ2_XXS, 256, 2);
    ct_tensor *d = ct_tensor_new_1d(ctx, CT_TYPE_IQ2_XXS, 512);
    out = ct_cpy(ctx, t, d);
    g = prepare(ctx, out, &buf);
    if (g) {
        unsigned char v[132], r[132];
        tu_fill_bytes(v, sizeof v);
        set(t, v, sizeof v);
        CHECK(compute(g) == CT_OK);
        get(d, r, sizeof r);
        CHECK(memcmp(r, v, sizeof r) == 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);

    ctx = new_ctx();
    t = ct_tensor_new_2d(ctx, CT_TYPE_Q8_0, 32, 2);
    out = ct_cast(ctx, t, CT_TYPE_F32);
    g = prepare(ctx, out, &buf);
    if (g) {
        float x[64], deq[64], r[64];
        unsigned char q[68];
        tu_fill_uniform(x, 64, -1, 1);
        CHECK(ct_quantize_row(CT_TYPE_Q8_0, x, q, 64) == CT_OK);
        CHECK(ct_dequantize_row(CT_TYPE_Q8_0, q, deq, 64) == CT_OK);
        set(t, q, sizeof q);
        CHECK(compute(g) == CT_OK);
        get(out, r, sizeof r);
        CHECK(memcmp(r, deq, sizeof r) == 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* ---- compute: unsupported, abort, empty ------------------------------------- */

static void test_unsupported(void) {
    ct_context *ctx = new_ctx();
    ct_tensor *t = ct_tensor_new_1d(ctx, CT_TYPE_IQ2_XXS, 256); /* no float conversion */
    ct_tensor *out = ct_cast(ctx, t, CT_TYPE_F32);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        CHECK(!ct_device_supports_op(g_dev, out));
        CHECK(!ct_backend_supports_op(g_be, out));
        const float sentinel = 123.0f;
        CHECK(ct_tensor_set(out, &sentinel, 0, sizeof sentinel) == CT_OK);
        CHECK(compute(g) == CT_UNSUPPORTED);
        CHECK_ERROR(CT_UNSUPPORTED, "CPY");
        float r;
        CHECK(ct_tensor_get(out, &r, 0, sizeof r) == CT_OK);
        CHECK(r == sentinel);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);

    /* A view op is supported (and computes nothing). */
    ctx = new_ctx();
    t = ct_tensor_new_2d(ctx, CT_TYPE_F32, 2, 2);
    CHECK(ct_device_supports_op(g_dev, ct_transpose(ctx, t)));
    ct_context_free(ctx);
}

typedef struct abort_state {
    int calls;
    int stop_at;
} abort_state;

static bool abort_cb(void *user_data) {
    abort_state *s = user_data;
    return ++s->calls >= s->stop_at;
}

/* Two nodes; the callback says stop on its second call: the first node is
 * computed, the second is not. */
static void test_abort(void) {
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 2, 2);
    ct_tensor *s = ct_sum_rows(ctx, a);
    ct_tensor *m = ct_mean(ctx, a);
    ct_buffer *buf;
    ct_graph *g = prepare2(ctx, s, m, &buf);
    if (g) {
        const float x[4] = {1, 2, 3, 4}, sentinel[2] = {-9, -9};
        set(a, x, sizeof x);
        set(s, sentinel, sizeof sentinel);
        set(m, sentinel, sizeof sentinel);
        abort_state st = {0, 2};
        ct_backend_set_abort_callback(g_be, abort_cb, &st);
        CHECK(compute(g) == CT_ABORTED);
        CHECK_ERROR(CT_ABORTED, "abort");
        CHECK(st.calls == 2);
        float rs[2], rm[2];
        get(s, rs, sizeof rs);
        get(m, rm, sizeof rm);
        CHECK(rs[0] == 3 && rs[1] == 7);
        CHECK(memcmp(rm, sentinel, sizeof rm) == 0);

        st = (abort_state){0, 100};
        CHECK(compute(g) == CT_OK);
        get(m, rm, sizeof rm);
        CHECK(rm[0] == 1.5f && rm[1] == 3.5f);
        ct_backend_set_abort_callback(g_be, NULL, NULL);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* SET_ROWS with no source rows computes nothing. */
static void test_empty(void) {
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 2, 3);
    ct_tensor *src = ct_tensor_new_2d(ctx, CT_TYPE_F32, 2, 0);
    ct_tensor *idx = ct_tensor_new_1d(ctx, CT_TYPE_I64, 0);
    ct_tensor *out = ct_set_rows(ctx, a, src, idx);
    ct_buffer *buf;
    ct_graph *g = prepare(ctx, out, &buf);
    if (g) {
        const float init[6] = {1, 2, 3, 4, 5, 6};
        set(a, init, sizeof init);
        CHECK(ct_device_supports_op(g_dev, out));
        CHECK(compute(g) == CT_OK);
        float r[6];
        get(a, r, sizeof r);
        CHECK(memcmp(r, init, sizeof r) == 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

int main(void) {
    tu_init("test_ref");
    g_dev = ct_device_by_name("REF");
    CHECK_MSG(g_dev != NULL, "no REF device: is ct_backend_ref_reg in the registry?");
    if (!g_dev) return tu_finish();
    CHECK(ct_device_init_backend(g_dev, NULL, &g_be) == CT_OK);
    if (!g_be) return tu_finish();

    test_device();
    test_mul_mat_small();
    test_mul_mat_broadcast_permuted();
    test_mul_mat_q8_0();
    test_mul_mat_random(CT_TYPE_F32);
    test_mul_mat_random(CT_TYPE_F16);
    test_mul_mat_random(CT_TYPE_Q4_0);
    test_mul_mat_row_blocks();
    test_norms();
    test_group_norm();
    test_sum_rows();
    test_reduce_argsort();
    test_get_rows();
    test_get_rows_types();
    test_get_rows_out_of_range();
    test_set_rows_broadcast();
    test_set_rows_types();
    test_cpy_permuted();
    test_cpy_convert(CT_TYPE_F16);
    test_cpy_convert(CT_TYPE_BF16);
    test_cpy_convert(CT_TYPE_Q4_0);
    test_cpy_convert(CT_TYPE_IQ4_NL);
    test_iq4nl_edges();
    test_cpy_same_type();
    test_unsupported();
    test_abort();
    test_empty();

    ct_backend_free(g_be);
    return tu_finish();
}

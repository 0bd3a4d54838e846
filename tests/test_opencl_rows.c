/* The OpenCL GET_ROWS, SET_ROWS and CPY/DUP/CONT kernels against the CPU backend,
 * byte for byte: every type pair both support, views, permutes, odd and differing
 * shapes, long rows, misaligned views, quantizer edge blocks (zeros, signed zeros,
 * NaN, inf, subnormals, ties, near-zero IQ4_NL), out-of-range indices (status, and
 * nothing written), and the helper sources' software division and quantizers built on
 * their own. Exits 77 (skipped) without an OpenCL device. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CT_HAVE_OPENCL

int main(void) {
    tu_init("test_opencl_rows");
    printf("SKIP: ctensor was built without OpenCL (CT_OPENCL=OFF)\n");
    return 77;
}

#else

#include "opencl/opencl_internal.h"

enum { SKIP = 77, MAX_FILL = 4 };

static ct_backend *cpu_be, *ocl_be;
static ct_device *ocl_dev;
static int n_cases;

/* ---- the harness ------------------------------------------------------------- */

/* One graph, built the same way for each backend. */
typedef struct gcase {
    ct_tensor *fill[MAX_FILL];        /* tensors (roots) whose bytes are set before compute */
    const void *fill_data[MAX_FILL];  /* explicit bytes (indices), or NULL for random data */
    int n_fill;
    ct_tensor *check;                 /* the tensor whose bytes are compared (a root) */
} gcase;

typedef ct_tensor *(*build_fn)(ct_context *ctx, const void *param, gcase *g);

static void add_fill(gcase *g, ct_tensor *t, const void *data) {
    g->fill[g->n_fill] = t;
    g->fill_data[g->n_fill] = data;
    g->n_fill++;
}

/* Floats with edge values mixed in: zeros of both signs, NaN, inf, subnormals, ties. */
static float edge_float(void) {
    static const uint32_t bits[] = {0x00000000u, 0x80000000u, 0x7FC00000u, 0xFFC00123u, 0x7F800000u,
                                    0xFF800000u, 0x00000001u, 0x80400000u, 0x477FF000u, 0x3F000000u,
                                    0xBFC00000u, 0x33800000u, 0x7F7FFFFFu, 0x7FA00001u};
    if (tu_rand_below(40) == 0) return tu_bits_f32(bits[tu_rand_below((int64_t)(sizeof bits / sizeof bits[0]))]);
    return tu_rand_uniform(-1.0f, 1.0f);
}

/* Random bytes for t's type: floats (with edge values when edge), halves of
 * floats, blocks with finite scales, or raw bytes. */
static void gen_data(ct_type type, uint8_t *p, size_t n, bool edge) {
    switch (type) {
    case CT_TYPE_F32:
        for (size_t i = 0; i + 4 <= n; i += 4) {
            const float f = edge ? edge_float() : tu_rand_uniform(-1.0f, 1.0f);
            memcpy(p + i, &f, 4);
        }
        return;
    case CT_TYPE_F16:
    case CT_TYPE_BF16:
        for (size_t i = 0; i + 2 <= n; i += 2) {
            const float f = edge ? edge_float() : tu_rand_uniform(-1.0f, 1.0f);
            const uint16_t h = type == CT_TYPE_F16 ? ct_fp32_to_fp16(f) : ct_fp32_to_bf16(f);
            memcpy(p + i, &h, 2);
        }
        if (edge && n >= 2) p[1] = 0x7D; /* a signalling NaN payload in the first element */
        return;
    default: break;
    }
    tu_fill_bytes(p, n);
    /* fp16 scales finite, but with edge values one block in 8 gets a special one (infinities,
     * NaNs with sign and payload, zeros, a subnormal): the kernels decode with plain
     * operations and again with the x86 NaN rule only when a NaN comes out, so the second
     * path needs NaN and infinite scales to run at all (a GPU's own NaNs differ from x86's). */
    static const uint16_t special[] = {0x7C00u, 0xFC00u, 0x7E00u, 0x7D01u, 0xFE55u, 0x0000u, 0x8000u, 0x0001u};
    static const struct { ct_type t; int offs[2]; } scales[] = {
        {CT_TYPE_Q4_0, {0, -1}},    {CT_TYPE_Q4_1, {0, 2}},  {CT_TYPE_Q5_0, {0, -1}},  {CT_TYPE_Q5_1, {0, 2}},
        {CT_TYPE_Q8_0, {0, -1}},    {CT_TYPE_IQ4_NL, {0, -1}}, {CT_TYPE_Q2_K, {80, 82}}, {CT_TYPE_Q3_K, {108, -1}},
        {CT_TYPE_Q4_K, {0, 2}},     {CT_TYPE_Q5_K, {0, 2}},  {CT_TYPE_Q6_K, {208, -1}}, {CT_TYPE_IQ4_XS, {0, -1}},
    };
    const size_t ts = ct_type_size(type);
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        if (scales[k].t != type) continue;
        for (size_t b = 0; b + ts <= n; b += ts) {
            const bool odd = edge && tu_rand_below(8) == 0;
            for (int f = 0; f < 2; f++) {
                if (scales[k].offs[f] < 0) continue;
                uint8_t *h = p + b + (size_t)scales[k].offs[f];
                h[1] &= 0xBF;
                if (odd && tu_rand_below(2) == 0) {
                    const uint16_t v = special[tu_rand_below((int64_t)(sizeof special / sizeof special[0]))];
                    memcpy(h, &v, 2);
                }
            }
        }
    }
    if (type == CT_TYPE_Q8_K) {
        for (size_t b = 0; b + ts <= n; b += ts) {
            const float d = edge && tu_rand_below(8) == 0 ? edge_float() : tu_rand_uniform(-0.01f, 0.01f);
            memcpy(p + b, &d, 4);
        }
    }
}

typedef struct run_out {
    ct_status status;
    uint8_t *check; /* bytes of g.check after compute */
    uint8_t *before;
    size_t n;
    bool sentinel_ok;
} run_out;

/* Builds, allocates, fills (data[i] generated on the first call, reused after),
 * computes on be. */
static bool run_on(ct_backend *be, build_fn build, const void *param, uint8_t *data[MAX_FILL], bool edge,
                   run_out *out) {
    memset(out, 0, sizeof *out);
    ct_context_params cp = {.mem_size = 64 * ct_tensor_overhead() + ct_graph_overhead(16), .no_alloc = true};
    ct_context *ctx = ct_context_new(cp);
    if (!ctx) return false;
    gcase g;
    memset(&g, 0, sizeof g);
    ct_tensor *res = build(ctx, param, &g);
    ct_tensor *sentinel = ct_tensor_new_1d(ctx, CT_TYPE_F32, 256);
    ct_graph *graph = ct_graph_new(ctx, 16);
    ct_buffer *buf = NULL;
    bool ok = res && sentinel && graph && ct_graph_build_forward(graph, res) == CT_OK &&
              ct_context_alloc_tensors(ctx, ct_backend_buffer_type(be), &buf) == CT_OK;
    for (int i = 0; ok && i < g.n_fill; i++) {
        const size_t n = ct_nbytes(g.fill[i]);
        if (!data[i]) {
            data[i] = malloc(n ? n : 1);
            if (g.fill_data[i]) memcpy(data[i], g.fill_data[i], n);
            else gen_data(g.fill[i]->type, data[i], n, edge);
        }
        ok = ct_tensor_set(g.fill[i], data[i], 0, n) == CT_OK;
    }
    uint8_t pattern[1024];
    memset(pattern, 0xA5, sizeof pattern);
    ok = ok && ct_tensor_set(sentinel, pattern, 0, sizeof pattern) == CT_OK;
    if (ok) {
        out->n = ct_nbytes(g.check);
        out->check = malloc(out->n ? out->n : 1);
        out->before = malloc(out->n ? out->n : 1);
        ok = out->check && out->before && ct_tensor_get(g.check, out->before, 0, out->n) == CT_OK;
    }
    if (ok) {
        out->status = ct_backend_graph_compute(be, graph);
        uint8_t after[1024];
        ok = ct_tensor_get(g.check, out->check, 0, out->n) == CT_OK &&
             ct_tensor_get(sentinel, after, 0, sizeof after) == CT_OK;
        out->sentinel_ok = memcmp(after, pattern, sizeof after) == 0;
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
    return ok;
}

static void run_out_free(run_out *o) {
    free(o->check);
    free(o->before);
}

/* Runs on both backends with the same inputs; the bytes must be equal. Returns
 * false when the OpenCL device does not support the graph (expect says whether
 * it should). */
static void compare_case(const char *name, build_fn build, const void *param, bool edge) {
    uint8_t *data[MAX_FILL] = {NULL};
    run_out a, b;
    n_cases++;
    const bool ok_cpu = run_on(cpu_be, build, param, data, edge, &a);
    const bool ok_ocl = run_on(ocl_be, build, param, data, edge, &b);
    CHECK_MSG(ok_cpu && ok_ocl, "%s: setting up the graph failed: %s", name, ct_last_error());
    if (ok_cpu && ok_ocl) {
        CHECK_MSG(a.status == CT_OK, "%s: CPU: %s", name, ct_status_str(a.status));
        CHECK_MSG(b.status == CT_OK, "%s: OpenCL: %s: %s", name, ct_status_str(b.status), ct_last_error());
        CHECK_MSG(b.sentinel_ok, "%s: OpenCL wrote past the tensors", name);
        size_t first = a.n, diff = 0;
        for (size_t i = 0; i < a.n; i++) {
            if (a.check[i] != b.check[i]) {
                if (first == a.n) first = i;
                diff++;
            }
        }
        CHECK_MSG(a.n == b.n && diff == 0, "%s: %zu of %zu bytes differ, first at %zu (CPU 0x%02x, OpenCL 0x%02x)",
                  name, diff, a.n, first, first < a.n ? a.check[first] : 0, first < a.n ? b.check[first] : 0);
    }
    run_out_free(&a);
    run_out_free(&b);
    for (int i = 0; i < MAX_FILL; i++) free(data[i]);
}

/* Runs on OpenCL only and expects CT_INDEX_OUT_OF_RANGE with the checked tensor untouched. */
static void bad_index_case(const char *name, build_fn build, const void *param) {
    uint8_t *data[MAX_FILL] = {NULL};
    run_out b;
    n_cases++;
    if (run_on(ocl_be, build, param, data, false, &b)) {
        CHECK_MSG(b.status == CT_INDEX_OUT_OF_RANGE, "%s: status %s", name, ct_status_str(b.status));
        CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, "out of range");
        CHECK_MSG(memcmp(b.check, b.before, b.n) == 0, "%s: the destination was written", name);
        CHECK_MSG(b.sentinel_ok, "%s: wrote past the tensors", name);
    } else {
        CHECK_MSG(false, "%s: setting up the graph failed: %s", name, ct_last_error());
    }
    run_out_free(&b);
    for (int i = 0; i < MAX_FILL; i++) free(data[i]);
}

/* ---- GET_ROWS ------------------------------------------------------------------ */

typedef struct rows_p {
    ct_type type;  /* GET_ROWS source / SET_ROWS destination */
    ct_type stype; /* SET_ROWS source */
    ct_type itype; /* SET_ROWS indices */
    int64_t ne0;
    int variant; /* 0 plain, 1 strided index/source view, 2 transposed (GET_ROWS) or misaligned (SET_ROWS) source,
                    3 views at an aligned offset into padded rows (SET_ROWS floats: rows of 35, ending in a
                    partial vector), 4 long rows, 5 (SET_ROWS) rows of 8192 (two work-groups' blocks a row,
                    written through local memory), 5 (GET_ROWS floats) one row of 35 at an aligned offset;
                    GET_ROWS blocks, through local memory: 6 one row of 37 32-blocks or 5 256-blocks (two
                    segments, the last not a multiple of 16 bytes), 7 130 rows of 4096 (two units a
                    work-item, two segments a row; float rows: the plain row kernel), 8 520 rows of
                    4096 with the device's rows8_min_log2 lowered to 16: 8 units a work-item
                    (ct_rows8, or local memory for blocks); 6 (SET_ROWS) rows of 131072 with it lowered
                    to 16 (floats: ct_rows8; blocks: ct_quant_rows_wide, IQ4_NL staged) */
    int bad;     /* an index outside the rows: 0 none, 1 too large, 2 negative */
    int32_t idx32[520];
    int64_t idx64[160];
} rows_p;

/* [ne0, ne1, ne2, ne3] cut from a root wider by pad elements, starting at element offs;
 * *root_out (when given) receives the root. */
static ct_tensor *view4(ct_context *ctx, gcase *g, ct_type type, const int64_t ne[4], int64_t pad, int64_t offs,
                        ct_tensor **root_out) {
    const int64_t bs = ct_type_block_size(type);
    ct_tensor *root = ct_tensor_new_4d(ctx, type, ne[0] + pad, ne[1], ne[2], ne[3]);
    add_fill(g, root, NULL);
    if (root_out) *root_out = root;
    return ct_view_4d(ctx, root, ne[0], ne[1], ne[2], ne[3], root->nb[1], root->nb[2], root->nb[3],
                      (size_t)(offs / bs) * ct_type_size(type));
}

static ct_tensor *row_view(ct_context *ctx, gcase *g, ct_type type, int64_t ne0, int64_t ne1, int64_t pad,
                           int64_t offs) {
    const int64_t ne[4] = {ne0, ne1, 3, 2};
    return view4(ctx, g, type, ne, pad, offs, NULL);
}

static ct_tensor *build_get_rows(ct_context *ctx, const void *param, gcase *g) {
    const rows_p *p = param;
    const int64_t bs = ct_type_block_size(p->type);
    ct_tensor *a;
    if (p->variant == 3) { /* floats: rows of 36 in rows of 44, 4 elements in; blocks: one block, one in */
        a = bs > 1 ? row_view(ctx, g, p->type, bs, 7, 2 * bs, bs) : row_view(ctx, g, p->type, 36, 7, 8, 4);
    } else if (p->variant == 4) { /* rows longer than one work-group's span */
        a = row_view(ctx, g, p->type, bs > 1 ? (bs == 32 ? 129 : 17) * bs : 4104, 7, bs > 1 ? 0 : 4, 0);
    } else if (p->variant == 5) { /* one row of 35, 4 elements in: the row ends in a partial vector */
        const int64_t ne[4] = {35, 7, 1, 1};
        a = view4(ctx, g, p->type, ne, 9, 4, NULL);
        ct_tensor *b = ct_tensor_new_3d(ctx, CT_TYPE_I32, 1, 1, 1);
        add_fill(g, b, p->idx32);
        ct_tensor *r = ct_get_rows(ctx, a, b);
        g->check = r;
        return r;
    } else if (p->variant >= 6) {
        const bool one = p->variant == 6;
        a = ct_tensor_new_2d(ctx, p->type, one ? (bs == 32 ? 37 : 5) * bs : 4096, one ? 1 : 7);
        add_fill(g, a, NULL);
        ct_tensor *b = ct_tensor_new_1d(ctx, CT_TYPE_I32, one ? 3 : p->variant == 7 ? 130 : 520);
        add_fill(g, b, p->idx32);
        ct_tensor *r = ct_get_rows(ctx, a, b);
        g->check = r;
        return r;
    } else if (p->variant == 2) {
        ct_tensor *root = ct_tensor_new_4d(ctx, p->type, 7, p->ne0, 3, 2);
        add_fill(g, root, NULL);
        a = ct_permute(ctx, root, 1, 0, 2, 3);
    } else {
        a = ct_tensor_new_4d(ctx, p->type, p->ne0, 7, 3, 2);
        add_fill(g, a, NULL);
    }
    ct_tensor *b;
    if (p->variant == 1) {
        ct_tensor *root = ct_tensor_new_3d(ctx, CT_TYPE_I32, 10, 3, 2);
        add_fill(g, root, p->idx32);
        b = ct_view_3d(ctx, root, 5, 3, 2, root->nb[1], root->nb[2], 4);
    } else {
        b = ct_tensor_new_3d(ctx, CT_TYPE_I32, 5, 3, 2);
        add_fill(g, b, p->idx32);
    }
    ct_tensor *r = ct_get_rows(ctx, a, b);
    g->check = r;
    return r;
}

static void test_get_rows(void) {
    static const ct_type types[] = {CT_TYPE_F32,  CT_TYPE_F16,  CT_TYPE_BF16, CT_TYPE_Q4_0,   CT_TYPE_Q4_1,
                                    CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_Q8_0, CT_TYPE_IQ4_NL, CT_TYPE_Q2_K,
                                    CT_TYPE_Q3_K, CT_TYPE_Q4_K, CT_TYPE_Q5_K, CT_TYPE_Q6_K,   CT_TYPE_Q8_K,
                                    CT_TYPE_IQ4_XS, CT_TYPE_I32};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const int64_t blck = ct_type_block_size(types[t]);
        for (int variant = 0; variant < 9; variant++) {
            if ((variant == 2 || variant == 5) && blck > 1) continue;
            if (variant == 6 && blck == 1) continue;
            rows_p p = {.type = types[t], .ne0 = blck > 1 ? 2 * blck : 33, .variant = variant};
            for (size_t i = 0; i < sizeof p.idx32 / sizeof p.idx32[0]; i++)
                p.idx32[i] = (int32_t)tu_rand_below(variant == 6 ? 1 : 7);
            char name[96];
            snprintf(name, sizeof name, "GET_ROWS %s variant %d", ct_type_name(types[t]), variant);
            const unsigned rows8_min = ct_ocl_device_of(ocl_dev)->rows8_min_log2;
            if (variant == 8) ct_ocl_device_of(ocl_dev)->rows8_min_log2 = 16;
            compare_case(name, build_get_rows, &p, true);
            ct_ocl_device_of(ocl_dev)->rows8_min_log2 = rows8_min;
        }
    }
    for (int bad = 1; bad <= 6; bad++) {
        /* a block type and an aligned float view (the fast row kernel), a general float case, then
         * block rows through local memory */
        static const ct_type bt[6] = {CT_TYPE_Q8_0, CT_TYPE_Q8_0, CT_TYPE_F16,
                                      CT_TYPE_F32,  CT_TYPE_Q4_K, CT_TYPE_Q5_0};
        static const int bv[6] = {0, 0, 3, 0, 7, 7};
        rows_p p = {.type = bt[bad - 1], .ne0 = bt[bad - 1] == CT_TYPE_F32 ? 33 : 64, .variant = bv[bad - 1]};
        for (size_t i = 0; i < sizeof p.idx32 / sizeof p.idx32[0]; i++) p.idx32[i] = (int32_t)tu_rand_below(7);
        p.idx32[5 * 3 * 2 - 2] = bad % 2 ? 7 : -1; /* (the last batch of 3-d indices): no row may be written */
        char name[64];
        snprintf(name, sizeof name, "GET_ROWS %s variant %d index %s", ct_type_name(p.type), p.variant,
                 bad % 2 ? "= rows" : "-1");
        bad_index_case(name, build_get_rows, &p);
    }
    /* short lists, which the row kernels check themselves: one index (F32 rows), three (block
     * rows through local memory), the last one bad */
    for (int bad = 1; bad <= 2; bad++) {
        rows_p p = {.type = bad == 1 ? CT_TYPE_F32 : CT_TYPE_Q4_0, .variant = bad == 1 ? 5 : 6};
        p.idx32[0] = bad == 1 ? 7 : 0;
        p.idx32[2] = -1;
        char name[64];
        snprintf(name, sizeof name, "GET_ROWS %s variant %d, short list, index %s", ct_type_name(p.type), p.variant,
                 bad == 1 ? "= rows" : "-1");
        bad_index_case(name, build_get_rows, &p);
    }
}

/* ---- SET_ROWS ------------------------------------------------------------------ */

/* dst [ne0, 9, 2, 3] <- src [ne0, 5, 2, 3] with indices [5, 2, 1] (broadcast along dim 3). */
static ct_tensor *build_set_rows(ct_context *ctx, const void *param, gcase *g) {
    const rows_p *p = param;
    ct_tensor *a, *b = NULL, *check;
    if (p->variant == 3) { /* both views, 4 elements (one block) in, rows padded to aligned lengths */
        const int64_t bs = ct_type_block_size(p->type), pad = bs > 1 ? 32 : 5, offs = bs > 1 ? 32 : 4;
        const int64_t na[4] = {p->ne0, 9, 2, 3}, nb[4] = {p->ne0, 5, 2, 3};
        a = view4(ctx, g, p->type, na, pad, offs, &check);
        b = view4(ctx, g, p->stype, nb, pad, offs, NULL);
    } else {
        a = ct_tensor_new_4d(ctx, p->type, p->ne0, 9, 2, 3);
        add_fill(g, a, NULL);
        check = a;
    }
    if (p->variant == 1) {
        ct_tensor *root = ct_tensor_new_4d(ctx, p->stype, p->ne0 + 3, 6, 2, 3);
        add_fill(g, root, NULL);
        b = ct_view_4d(ctx, root, p->ne0, 5, 2, 3, root->nb[1], root->nb[2], root->nb[3], root->nb[1]);
    } else if (p->variant == 2) { /* a source view at an odd byte offset */
        ct_tensor *root = ct_tensor_new_4d(ctx, p->stype, p->ne0, 6, 2, 3);
        add_fill(g, root, NULL);
        b = ct_view_4d(ctx, root, p->ne0, 5, 2, 3, root->nb[1], root->nb[2], root->nb[3], 1);
    } else if (p->variant != 3) {
        b = ct_tensor_new_4d(ctx, p->stype, p->ne0, 5, 2, 3);
        add_fill(g, b, NULL);
    }
    ct_tensor *c = ct_tensor_new_3d(ctx, p->itype, 5, 2, 1);
    add_fill(g, c, p->itype == CT_TYPE_I64 ? (const void *)p->idx64 : (const void *)p->idx32);
    g->check = check;
    return ct_set_rows(ctx, a, b, c);
}

/* Unique targets per batch: a random permutation of the 9 rows, truncated. */
static void set_rows_indices(rows_p *p) {
    for (int batch = 0; batch < 2; batch++) {
        int perm[9];
        for (int i = 0; i < 9; i++) perm[i] = i;
        for (int i = 8; i > 0; i--) {
            const int j = (int)tu_rand_below(i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (int i = 0; i < 5; i++) {
            p->idx32[batch * 5 + i] = perm[i];
            p->idx64[batch * 5 + i] = perm[i];
        }
    }
}

static void test_set_rows(void) {
    static const ct_type types[] = {CT_TYPE_F32,  CT_TYPE_F16,  CT_TYPE_BF16, CT_TYPE_Q8_0,  CT_TYPE_Q4_0,
                                    CT_TYPE_Q4_1, CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_IQ4_NL};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const int64_t blck = ct_type_block_size(types[t]);
        for (int s = 0; s < 2; s++) {
            for (int v = 0; v < 7; v++) {
                static const int64_t float_ne0[7] = {33, 1, 1, 35, 4128, 8192, 131072};
                rows_p p = {.type = types[t],
                            .stype = s ? CT_TYPE_F16 : CT_TYPE_F32,
                            .itype = (v + s) % 2 ? CT_TYPE_I32 : CT_TYPE_I64,
                            .ne0 = v >= 4 ? float_ne0[v] : blck > 1 ? 96 : float_ne0[v],
                            .variant = v};
                set_rows_indices(&p);
                char name[96];
                snprintf(name, sizeof name, "SET_ROWS %s <- %s[%s] variant %d", ct_type_name(p.type),
                         ct_type_name(p.stype), ct_type_name(p.itype), v);
                const unsigned rows8_min = ct_ocl_device_of(ocl_dev)->rows8_min_log2;
                if (v == 6) ct_ocl_device_of(ocl_dev)->rows8_min_log2 = 16;
                compare_case(name, build_set_rows, &p, true);
                ct_ocl_device_of(ocl_dev)->rows8_min_log2 = rows8_min;
            }
        }
    }
    for (int bad = 1; bad <= 4; bad++) {
        /* the third: rows of 8192 into Q8_0, written through local memory; the fourth: rows of
         * 131072 at 4 blocks a team (ct_quant_rows_wide) */
        rows_p p = {.type = bad >= 3 ? CT_TYPE_Q8_0 : CT_TYPE_Q4_0, .stype = CT_TYPE_F32,
                    .itype = bad == 1 ? CT_TYPE_I64 : CT_TYPE_I32, .ne0 = bad == 4 ? 131072 : bad == 3 ? 8192 : 64,
                    .variant = bad == 4 ? 6 : bad == 3 ? 5 : 0};
        set_rows_indices(&p);
        p.idx64[9] = bad == 1 ? 9 : -1;
        p.idx32[9] = bad == 1 ? 9 : -1;
        static const char *const names[4] = {"SET_ROWS index = rows (I64)", "SET_ROWS index -1 (I32)",
                                             "SET_ROWS Q8_0 rows of 8192, index -1 (I32)",
                                             "SET_ROWS Q8_0 rows of 131072 (wide), index -1 (I32)"};
        const unsigned rows8_min = ct_ocl_device_of(ocl_dev)->rows8_min_log2;
        if (bad == 4) ct_ocl_device_of(ocl_dev)->rows8_min_log2 = 16;
        bad_index_case(names[bad - 1], build_set_rows, &p);
        ct_ocl_device_of(ocl_dev)->rows8_min_log2 = rows8_min;
    }
    /* an index beyond 32 bits */
    rows_p p = {.type = CT_TYPE_F16, .stype = CT_TYPE_F32, .itype = CT_TYPE_I64, .ne0 = 8};
    set_rows_indices(&p);
    p.idx64[0] = (int64_t)1 << 32;
    bad_index_case("SET_ROWS index 2^32", build_set_rows, &p);
}

/* ---- CPY / DUP / CONT ------------------------------------------------------------ */

typedef struct cpy_p {
    ct_type st, dt;
    int variant; /* 0 contiguous, 1 permuted src, 2 permuted dst, 3 other shape, 4 transposed dst with
                    short rows, 5 long rows, 6 misaligned views; 7 DUP, 8 CONT (build_dup_cont); 9 a partial
                    last vector, 10 ragged transposes (floats and 2- and 4-byte types), 11 long rows through
                    local memory: 130 block rows of 4096 into F32, 3 float rows of 8192 into blocks, 12 one
                    row of 2^21 + 6 floats with the device's rows8_min_log2 lowered to 16 (ct_rows8: 8
                    units a work-item, the row ending in a partial unit), 13 513 float rows of 4096 into
                    blocks with it lowered to 16 (ct_quant_rows_wide, the last work-group half past the
                    end) */
} cpy_p;

/* Contiguous n0 x n1 source and destination of p's types, both filled; the destination
 * is the tensor checked. */
static void plain_pair(ct_context *ctx, gcase *g, const cpy_p *p, int64_t n0, int64_t n1, ct_tensor **src,
                       ct_tensor **dst) {
    *src = ct_tensor_new_2d(ctx, p->st, n0, n1);
    add_fill(g, *src, NULL);
    *dst = ct_tensor_new_2d(ctx, p->dt, n0, n1);
    add_fill(g, *dst, NULL);
    g->check = *dst;
}

static ct_tensor *build_cpy(ct_context *ctx, const void *param, gcase *g) {
    const cpy_p *p = param;
    const int64_t bs = ct_type_block_size(p->st), bd = ct_type_block_size(p->dt);
    const int64_t u = bs > bd ? bs : (bd > 1 ? bd : 32), ne0 = 2 * u;
    ct_tensor *src, *dst;
    switch (p->variant) {
    case 1: {
        ct_tensor *root = ct_tensor_new_4d(ctx, p->st, ne0, 2, 3, 2);
        add_fill(g, root, NULL);
        src = ct_permute(ctx, root, 0, 2, 1, 3);
        dst = ct_tensor_new_4d(ctx, p->dt, ne0, 3, 2, 2);
        add_fill(g, dst, NULL);
        g->check = dst;
        break;
    }
    case 2: {
        src = ct_tensor_new_4d(ctx, p->st, ne0, 3, 2, 2);
        add_fill(g, src, NULL);
        ct_tensor *root = ct_tensor_new_4d(ctx, p->dt, ne0, 2, 3, 2);
        add_fill(g, root, NULL);
        dst = ct_permute(ctx, root, 0, 2, 1, 3);
        g->check = root;
        break;
    }
    case 3:
        src = ct_tensor_new_4d(ctx, p->st, ne0, 6, 1, 2);
        add_fill(g, src, NULL);
        dst = ct_tensor_new_4d(ctx, p->dt, u, 3, 4, 2);
        add_fill(g, dst, NULL);
        g->check = dst;
        break;
    case 4: { /* a transposed dst with rows of 5: they cross the source's rows */
        src = ct_tensor_new_2d(ctx, p->st, ne0, 5);
        add_fill(g, src, NULL);
        ct_tensor *root = ct_tensor_new_2d(ctx, p->dt, ne0, 5);
        add_fill(g, root, NULL);
        dst = ct_transpose(ctx, root);
        g->check = root;
        break;
    }
    case 5: { /* long rows, split into segments; a transposed source when plain */
        const int64_t q = p->st == p->dt ? bs : (bs == 1 && bd == 1) ? 1 : bs == 1 ? 32 : 16;
        const int64_t len = (q * 8200 + u - 1) / u * u + (bs == 1 && bd == 1 ? 7 : 0);
        if (bs == 1) {
            ct_tensor *root = ct_tensor_new_2d(ctx, p->st, 2, len);
            add_fill(g, root, NULL);
            src = ct_transpose(ctx, root);
        } else {
            src = ct_tensor_new_2d(ctx, p->st, len, 2);
            add_fill(g, src, NULL);
        }
        if (bd == 1) {
            ct_tensor *root = ct_tensor_new_2d(ctx, p->dt, len, 3);
            add_fill(g, root, NULL);
            dst = ct_view_2d(ctx, root, len, 2, root->nb[1], root->nb[1]);
            g->check = root;
        } else {
            dst = ct_tensor_new_2d(ctx, p->dt, len, 2);
            add_fill(g, dst, NULL);
            g->check = dst;
        }
        break;
    }
    case 11: /* 130 block rows of 4096 (read through local memory), or 3 rows of 8192 into blocks */
        plain_pair(ctx, g, p, bd > 1 ? 8192 : 4096, bd > 1 ? 3 : 130, &src, &dst);
        break;
    case 13: plain_pair(ctx, g, p, 4096, 513, &src, &dst); break;
    case 12: plain_pair(ctx, g, p, ((int64_t)1 << 21) + 6, 1, &src, &dst); break;
    case 9: /* an element count that ends in a partial vector */
        plain_pair(ctx, g, p, 37, 3, &src, &dst);
        break;
    case 10: { /* a transposed view one row in, ragged 32x32 tiles, into another shape */
        ct_tensor *root = ct_tensor_new_3d(ctx, p->st, 45, 71, 2);
        add_fill(g, root, NULL);
        src = ct_transpose(ctx, ct_view_3d(ctx, root, 45, 70, 2, root->nb[1], root->nb[2], root->nb[1]));
        dst = ct_tensor_new_2d(ctx, p->dt, 70 * 45, 2);
        add_fill(g, dst, NULL);
        g->check = dst;
        break;
    }
    case 6: { /* views at odd byte offsets: nothing is aligned */
        ct_tensor *sroot = ct_tensor_new_1d(ctx, p->st, ne0 * 3 + u);
        ct_tensor *droot = ct_tensor_new_1d(ctx, p->dt, ne0 * 3 + u);
        add_fill(g, sroot, NULL);
        add_fill(g, droot, NULL);
        src = ct_view_2d(ctx, sroot, ne0, 3, ct_type_size(p->st) * (size_t)(ne0 / bs), 1);
        dst = ct_view_2d(ctx, droot, ne0, 3, ct_type_size(p->dt) * (size_t)(ne0 / bd), 3);
        g->check = droot;
        break;
    }
    default:
        src = ct_tensor_new_4d(ctx, p->st, ne0, 3, 2, 2);
        add_fill(g, src, NULL);
        dst = ct_tensor_new_4d(ctx, p->dt, ne0, 3, 2, 2);
        add_fill(g, dst, NULL);
        g->check = dst;
        break;
    }
    return src && dst ? ct_cpy(ctx, src, dst) : NULL;
}

static ct_tensor *build_dup_cont(ct_context *ctx, const void *param, gcase *g) {
    const cpy_p *p = param;
    ct_tensor *root = ct_tensor_new_3d(ctx, p->st, 7, 5, 3);
    add_fill(g, root, NULL);
    ct_tensor *r = p->variant == 7 ? ct_dup(ctx, ct_transpose(ctx, root)) : ct_cont(ctx, ct_permute(ctx, root, 2, 0, 1, 3));
    g->check = r;
    return r;
}

static void cpy_case(ct_type st, ct_type dt, int variant) {
    cpy_p p = {st, dt, variant};
    char name[96];
    snprintf(name, sizeof name, "CPY %s -> %s variant %d", ct_type_name(st), ct_type_name(dt), variant);
    compare_case(name, build_cpy, &p, true);
}

static void test_cpy(void) {
    static const ct_type floats[] = {CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_BF16};
    static const ct_type quants[] = {CT_TYPE_Q8_0, CT_TYPE_Q4_0, CT_TYPE_Q4_1, CT_TYPE_Q5_0, CT_TYPE_Q5_1,
                                     CT_TYPE_IQ4_NL};
    static const ct_type deqs[] = {CT_TYPE_Q4_0, CT_TYPE_Q4_1, CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_Q8_0,
                                   CT_TYPE_IQ4_NL, CT_TYPE_Q2_K, CT_TYPE_Q3_K, CT_TYPE_Q4_K, CT_TYPE_Q5_K,
                                   CT_TYPE_Q6_K, CT_TYPE_Q8_K, CT_TYPE_IQ4_XS};
    static const ct_type raws[] = {CT_TYPE_I8,   CT_TYPE_I16,  CT_TYPE_I32,     CT_TYPE_I64,  CT_TYPE_F64,
                                   CT_TYPE_Q4_0, CT_TYPE_Q4_K, CT_TYPE_IQ2_XXS, CT_TYPE_TQ1_0, CT_TYPE_Q8_K};
    for (int v = 0; v <= 6; v++) {
        for (size_t i = 0; i < 3; i++) {
            for (size_t j = 0; j < 3; j++) cpy_case(floats[i], floats[j], v);
            for (size_t j = 0; j < sizeof quants / sizeof quants[0]; j++) {
                if (v != 4) cpy_case(floats[i], quants[j], v);
            }
        }
        for (size_t i = 0; i < sizeof deqs / sizeof deqs[0]; i++) {
            for (size_t j = 0; j < 3; j++) {
                if (v != 5 || j == 0) cpy_case(deqs[i], floats[j], v);
            }
        }
        for (size_t i = 0; i < sizeof raws / sizeof raws[0]; i++) {
            if (v == 4 && ct_type_block_size(raws[i]) > 1) continue;
            if (v != 5 || i < 3) cpy_case(raws[i], raws[i], v);
        }
    }
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 3; j++) {
            cpy_case(floats[i], floats[j], 9);
            cpy_case(floats[i], floats[j], 10);
        }
    }
    for (size_t i = 0; i < sizeof deqs / sizeof deqs[0]; i++) cpy_case(deqs[i], CT_TYPE_F32, 11);
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < sizeof quants / sizeof quants[0]; j++) cpy_case(floats[i], quants[j], 11);
    }
    cpy_case(CT_TYPE_I16, CT_TYPE_I16, 10);
    cpy_case(CT_TYPE_I32, CT_TYPE_I32, 10);
    const unsigned rows8_min = ct_ocl_device_of(ocl_dev)->rows8_min_log2;
    ct_ocl_device_of(ocl_dev)->rows8_min_log2 = 16;
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 3; j++) cpy_case(floats[i], floats[j], 12);
        for (size_t j = 0; j < sizeof quants / sizeof quants[0]; j++) cpy_case(floats[i], quants[j], 13);
    }
    ct_ocl_device_of(ocl_dev)->rows8_min_log2 = rows8_min;
    static const ct_type dups[] = {CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_BF16, CT_TYPE_I16, CT_TYPE_I32};
    for (size_t i = 0; i < sizeof dups / sizeof dups[0]; i++) {
        for (int v = 7; v <= 8; v++) {
            cpy_p p = {dups[i], dups[i], v};
            char name[64];
            snprintf(name, sizeof name, "%s %s", v == 7 ? "DUP" : "CONT", ct_type_name(dups[i]));
            compare_case(name, build_dup_cont, &p, true);
        }
    }
}

/* ---- quantizer edge blocks ---------------------------------------------------------- */

enum { EDGE_BLOCKS = 64 };

static void edge_blocks(float *x) {
    for (int b = 0; b < EDGE_BLOCKS; b++) {
        float *y = x + 32 * b;
        for (int j = 0; j < 32; j++) y[j] = tu_rand_uniform(-1.0f, 1.0f);
        switch (b) {
        case 0: for (int j = 0; j < 32; j++) y[j] = 0.0f; break;
        case 1: for (int j = 0; j < 32; j++) y[j] = j == 0 ? -0.0f : 0.0f; break;
        case 2: for (int j = 0; j < 32; j++) y[j] = -0.0f; break;
        case 3: break;
        case 4: y[5] = NAN; break;
        case 5: y[31] = NAN; break;
        case 6: y[7] = tu_bits_f32(0xFFC00321u); y[31] = -NAN; break;
        case 7: y[3] = INFINITY; break;
        case 8: y[30] = -INFINITY; break;
        case 9: for (int j = 0; j < 32; j++) y[j] = INFINITY; break;
        case 10: y[0] = INFINITY; y[1] = -INFINITY; break;
        case 11: for (int j = 0; j < 32; j++) y[j] *= 1e-20f; break;
        case 12: for (int j = 0; j < 32; j++) y[j] *= 1.5e-15f; break;
        case 13: for (int j = 0; j < 32; j++) y[j] *= 1e-38f; break;
        case 14: for (int j = 0; j < 32; j++) y[j] = (j & 1) ? 3e38f : -3e38f; break;
        case 15: for (int j = 0; j < 32; j++) y[j] = (float)(j - 16) + 0.5f; y[0] = 127.0f; break;
        case 16: { /* IQ4_NL midpoints with d0 = 1 */
            static const float mid[] = {-115.5f, -93.5f, -74.0f, -57.0f, -42.0f, -28.5f, -16.0f, -4.5f,
                                        7.0f,    19.0f,  31.5f,  45.5f,  61.0f,  79.0f,  101.0f};
            for (int j = 0; j < 32; j++) y[j] = mid[j % 15];
            y[31] = -127.0f;
            break;
        }
        case 17: for (int j = 0; j < 32; j++) y[j] = (j & 1) ? 65504.0f * 127.0f : 65520.0f; break;
        case 18: for (int j = 0; j < 32; j++) y[j] = 1000.0f * tu_rand_normal(); break;
        case 19: for (int j = 0; j < 32; j++) y[j] = 0.3f; break;
        case 20: for (int j = 0; j < 32; j++) y[j] = NAN; break;
        case 21: for (int j = 0; j < 32; j++) y[j] = tu_bits_f32(1u + (uint32_t)j); break; /* subnormals */
        case 22: for (int j = 0; j < 32; j++) y[j] = (float)(j % 17 - 8) * 0.125f; break; /* Q4 ties */
        /* NaN at each place relative to the 4-element runs a work-item of a team loads, after a
         * larger value (Q8_0's running max restarts after a NaN), ties of |x| across runs */
        case 23: y[0] = 100.0f; y[12] = NAN; break;
        case 24: y[0] = 100.0f; y[15] = NAN; break;
        case 25: y[0] = 100.0f; y[16] = NAN; y[17] = -0.0f; break;
        case 26: y[2] = NAN; y[29] = NAN; y[30] = -50.0f; y[9] = 80.0f; break;
        case 27: y[27] = 100.0f; y[28] = NAN; break;
        case 28: y[5] = -3.0f; y[20] = 3.0f; y[26] = -3.0f; break;
        case 29: y[20] = -3.0f; y[5] = 3.0f; y[3] = INFINITY; y[4] = NAN; break;
        case 30: for (int j = 0; j < 32; j++) y[j] = (j % 4 == 3) ? NAN : (float)(j % 7) - 3.0f; break;
        case 31: for (int j = 0; j < 32; j++) y[j] = tu_rand_uniform(-1.0f, 1.0f) * 1e4f; break;
        default: { /* blocks 32..: half their elements special, so NaNs meet run boundaries and equal
                      |x| fall in different runs of a team's lanes */
            static const uint32_t special[] = {0x7FC00000u, 0xFFC00123u, 0x7FA00001u, 0xFF800000u, 0x7F800000u,
                                               0x00000000u, 0x80000000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x00000001u,
                                               0x807FFFFFu, 0x3F000000u, 0xBF000000u, 0x3F000000u};
            for (int j = 0; j < 32; j++) {
                if (tu_rand_below(2) == 0)
                    y[j] = tu_bits_f32(special[tu_rand_below((int64_t)(sizeof special / sizeof special[0]))]);
            }
            break;
        }
        }
    }
}

static float edge_data[32 * EDGE_BLOCKS];

static ct_tensor *build_edge(ct_context *ctx, const void *param, gcase *g) {
    const cpy_p *p = param;
    ct_tensor *src = ct_tensor_new_1d(ctx, CT_TYPE_F32, 32 * EDGE_BLOCKS);
    add_fill(g, src, edge_data);
    ct_tensor *dst = ct_tensor_new_1d(ctx, p->dt, 32 * EDGE_BLOCKS);
    add_fill(g, dst, NULL);
    g->check = dst;
    return ct_cpy(ctx, src, dst);
}

static void test_quant_edges(void) {
    edge_blocks(edge_data);
    static const ct_type types[] = {CT_TYPE_F16,  CT_TYPE_BF16, CT_TYPE_Q8_0, CT_TYPE_Q4_0,
                                    CT_TYPE_Q4_1, CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_IQ4_NL};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        cpy_p p = {CT_TYPE_F32, types[t], 0};
        char name[64];
        snprintf(name, sizeof name, "edge blocks F32 -> %s", ct_type_name(types[t]));
        compare_case(name, build_edge, &p, false);
    }
}

/* IQ4_NL edge blocks (NaN, inf, sums that overflow: tu_iq4_nl_edge_block) on the OpenCL
 * device through each quantizing kernel: CPY into short rows (one block a work-item), rows
 * of 8192 (teams, through local memory), 513 rows of 4096 with rows8_min_log2 lowered to 16
 * (ct_quant_rows_wide), and SET_ROWS (reversed rows). Every block must be the naive
 * reference's, ggml's rule (a NaN element gives d = +0). */
static void iq4nl_edge_case(int64_t ne0, int64_t nr, bool set_rows, bool wide) {
    char name[96];
    snprintf(name, sizeof name, "IQ4_NL edge blocks: %s of %lld x %lld%s", set_rows ? "SET_ROWS" : "CPY",
             (long long)ne0, (long long)nr, wide ? " (wide)" : "");
    n_cases++;
    const int64_t n = ne0 * nr, nb = n / 32;
    float *x = malloc(sizeof(float) * (size_t)n), *rev = malloc(sizeof(float) * (size_t)n);
    uint8_t *want = malloc((size_t)nb * 18), *got = malloc((size_t)nb * 18);
    int32_t *ix = malloc(sizeof(int32_t) * (size_t)nr);
    CHECK(x && rev && want && got && ix);
    ct_context_params cp = {.mem_size = 8 * ct_tensor_overhead() + ct_graph_overhead(8), .no_alloc = true};
    ct_context *ctx = x && rev && want && got && ix ? ct_context_new(cp) : NULL;
    ct_buffer *buf = NULL;
    if (ctx) {
        for (int64_t b = 0; b < nb; b++) {
            if (b % 2 == 0) tu_iq4_nl_edge_block(x + 32 * b, (int)((b / 2) % TU_IQ4_NL_EDGE_KINDS));
            else for (int j = 0; j < 32; j++) x[32 * b + j] = tu_rand_normal();
            tu_iq4_nl_naive(x + 32 * b, want + 18 * b);
        }
        for (int64_t r = 0; r < nr; r++) ix[r] = (int32_t)(nr - 1 - r);
        ct_tensor *src = ct_tensor_new_2d(ctx, CT_TYPE_F32, ne0, nr);
        ct_tensor *dst = ct_tensor_new_2d(ctx, CT_TYPE_IQ4_NL, ne0, nr);
        ct_tensor *idx = set_rows ? ct_tensor_new_1d(ctx, CT_TYPE_I32, nr) : NULL;
        ct_tensor *out = set_rows ? ct_set_rows(ctx, dst, src, idx) : ct_cpy(ctx, src, dst);
        ct_graph *g = ct_graph_new(ctx, 8);
        bool ok = out && g && ct_graph_build_forward(g, out) == CT_OK &&
                  ct_context_alloc_tensors(ctx, ct_backend_buffer_type(ocl_be), &buf) == CT_OK;
        if (ok && set_rows) { /* source row r lands in row nr-1-r, so dst is x */
            for (int64_t r = 0; r < nr; r++) memcpy(rev + ix[r] * ne0, x + r * ne0, sizeof(float) * (size_t)ne0);
            ok = ct_tensor_set(src, rev, 0, sizeof(float) * (size_t)n) == CT_OK &&
                 ct_tensor_set(idx, ix, 0, sizeof(int32_t) * (size_t)nr) == CT_OK;
        } else if (ok) {
            ok = ct_tensor_set(src, x, 0, sizeof(float) * (size_t)n) == CT_OK;
        }
        const unsigned rows8_min = ct_ocl_device_of(ocl_dev)->rows8_min_log2;
        if (wide) ct_ocl_device_of(ocl_dev)->rows8_min_log2 = 16;
        ok = ok && ct_backend_graph_compute(ocl_be, g) == CT_OK;
        ct_ocl_device_of(ocl_dev)->rows8_min_log2 = rows8_min;
        ok = ok && ct_tensor_get(dst, got, 0, (size_t)nb * 18) == CT_OK;
        CHECK_MSG(ok, "%s: %s", name, ct_last_error());
        int64_t bad = 0, first = -1;
        for (int64_t b = 0; ok && b < nb; b++) {
            if (memcmp(got + 18 * b, want + 18 * b, 18) != 0 && bad++ == 0) first = b;
        }
        CHECK_MSG(bad == 0, "%s: %lld of %lld blocks differ from the naive reference, first %lld (edge kind %d): "
                  "d 0x%02x%02x, expected 0x%02x%02x", name, (long long)bad, (long long)nb, (long long)first,
                  (int)((first / 2) % TU_IQ4_NL_EDGE_KINDS), first >= 0 ? got[18 * first + 1] : 0,
                  first >= 0 ? got[18 * first] : 0, first >= 0 ? want[18 * first + 1] : 0,
                  first >= 0 ? want[18 * first] : 0);
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
    free(x);
    free(rev);
    free(want);
    free(got);
    free(ix);
}

static void test_iq4nl_edges(void) {
    iq4nl_edge_case(64, TU_IQ4_NL_EDGE_KINDS, false, false);
    iq4nl_edge_case(8192, 3, false, false);
    iq4nl_edge_case(4096, 513, false, true);
    iq4nl_edge_case(64, TU_IQ4_NL_EDGE_KINDS, true, false);
    iq4nl_edge_case(8192, 3, true, false);
    iq4nl_edge_case(131072, 2, true, true);
}

/* ---- the helper sources on their own: software division and quantizers ------------ */

static const char soft_kernels[] =
    "__kernel void t_div(__global const float *a, __global const float *b, __global float *q) {\n"
    "    size_t i = get_global_id(0); q[i] = ct_div(a[i], b[i]);\n"
    "}\n"
    "__kernel void t_quant(int t, __global const float *x, __global uchar *y, int ts) {\n"
    "    size_t i = get_global_id(0); float v[32];\n"
    "    for (int j = 0; j < 32; j++) v[j] = x[32 * i + j];\n"
    "    ct_quantize_block(t, v, y + ts * i);\n"
    "}\n"
    "__kernel void t_half(__global const ushort *h, __global float *f, __global const float *x, __global ushort *y) {\n"
    "    size_t i = get_global_id(0); f[i] = ct_half_to_float(h[i]); y[i] = ct_float_to_half(x[i]);\n"
    "}\n";

/* The helper sources every program starts with (kernel_args.h, common.cl, fp16.cl,
 * dequant.cl, quant.cl, ...: library.c), with CT_FP16_CONVERT = fp16 (the device's
 * conversions must be exact for 1), CT_HALF_BY_SCALE = scale (the device's multiply must
 * keep subnormal operands for 1) and CT_HAS_FP16 as the device has it. */
static char *common_source(int fp16, int scale) {
    size_t n_files, n = 0;
    const char *const *files = ct_ocl_helper_sources(&n_files);
    for (size_t i = 0; i < n_files; i++) {
        const char *text;
        size_t len;
        if (!ct_ocl_find_source(files[i], &text, &len)) return NULL;
        n += len;
    }
    const bool khr = ct_ocl_device_of(ocl_dev)->has_fp16;
    char prelude[512];
    snprintf(prelude, sizeof prelude,
             "#pragma OPENCL FP_CONTRACT OFF\n#define CT_HAS_SUBGROUPS 0\n#define CT_HAS_FP16 %d\n"
             "#define CT_FP16_CONVERT %d\n#define CT_HALF_BY_SCALE %d\n%s#define CT_HAS_FP64 0\n"
             "#define CT_HAS_INT_DOT 0\n#define CT_CORRECTLY_ROUNDED_DIV 0\n",
             khr ? 1 : 0, fp16, scale, khr ? "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n" : "");
    const size_t np = strlen(prelude);
    char *s = malloc(np + n + sizeof soft_kernels);
    if (!s) return NULL;
    memcpy(s, prelude, np);
    size_t at = np;
    for (size_t i = 0; i < n_files; i++) {
        const char *text;
        size_t len;
        ct_ocl_find_source(files[i], &text, &len);
        memcpy(s + at, text, len);
        at += len;
    }
    memcpy(s + at, soft_kernels, sizeof soft_kernels);
    return s;
}

/* The helper sources built on their own with the given CT_HAS_FP16 and options; NULL (a failed
 * check) when it does not build. */
static cl_program build_common(ct_ocl_device *d, int fp16, int scale, const char *options) {
    char *src = common_source(fp16, scale);
    CHECK(src != NULL);
    if (!src) return NULL;
    cl_int err;
    const char *srcs[1] = {src};
    cl_program prog = clCreateProgramWithSource(d->context, 1, srcs, NULL, &err);
    free(src);
    CHECK(err == CL_SUCCESS);
    if (err != CL_SUCCESS) return NULL;
    err = clBuildProgram(prog, 1, &d->device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(prog, d->device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "building the helper sources failed: %s\n", log);
        clReleaseProgram(prog);
        CHECK(err == CL_SUCCESS);
        return NULL;
    }
    return prog;
}

/* ct_half_to_float on every half and ct_float_to_half on every float whose top 16 bits
 * are any and low 16 bits one of a few (rounding ties both ways, sticky bits, zero), for
 * every way the device kernels convert (integer arithmetic; the device's conversions
 * where its probe found them exact; halves by scaling where its probe found a multiply
 * keeps subnormals), against the CPU's rows. */
static void test_half_conversions(void) {
    ct_ocl_device *d = ct_ocl_device_of(ocl_dev);
    enum { NH = 1 << 16, LOWS = 6, NX = NH * LOWS };
    static const uint16_t lows[LOWS] = {0x0000, 0x1000, 0x0FFF, 0x1001, 0xF000, 0x2000};
    uint16_t *h = malloc(NX * sizeof *h), *y = malloc(NX * sizeof *y), *want_y = malloc(NX * sizeof *want_y);
    float *f = malloc(NX * sizeof *f), *x = malloc(NX * sizeof *x), *want_f = malloc(NX * sizeof *want_f);
    CHECK(h && y && want_y && f && x && want_f);
    if (!(h && y && want_y && f && x && want_f)) goto out;
    for (uint32_t i = 0; i < NX; i++) {
        h[i] = (uint16_t)i; /* every half, then again */
        x[i] = tu_bits_f32(((i % NH) << 16) | lows[i / NH]);
    }
    CHECK(ct_fp16_to_fp32_row(h, want_f, NX) == CT_OK);
    CHECK(ct_fp32_to_fp16_row(x, want_y, NX) == CT_OK);
    static const char *const way_names[3] = {"integer", "the device's", "halves by scaling"};
    for (int way = 0; way < 3; way++) {
        if ((way == 1 && !d->has_fp16_exact) || (way == 2 && !d->has_half_scale)) continue;
        cl_program prog = build_common(d, way == 1, way == 2, "");
        if (!prog) continue;
        cl_int e[6];
        cl_command_queue q = clCreateCommandQueue(d->context, d->device, 0, &e[0]);
        cl_mem mh = clCreateBuffer(d->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, NX * sizeof *h, h, &e[1]);
        cl_mem mx = clCreateBuffer(d->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, NX * sizeof *x, x, &e[2]);
        cl_mem mf = clCreateBuffer(d->context, CL_MEM_WRITE_ONLY, NX * sizeof *f, NULL, &e[3]);
        cl_mem my = clCreateBuffer(d->context, CL_MEM_WRITE_ONLY, NX * sizeof *y, NULL, &e[4]);
        cl_kernel k = clCreateKernel(prog, "t_half", &e[5]);
        for (int i = 0; i < 6; i++) CHECK(e[i] == CL_SUCCESS);
        clSetKernelArg(k, 0, sizeof mh, &mh);
        clSetKernelArg(k, 1, sizeof mf, &mf);
        clSetKernelArg(k, 2, sizeof mx, &mx);
        clSetKernelArg(k, 3, sizeof my, &my);
        size_t gsz = NX;
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, NULL, 0, NULL, NULL) == CL_SUCCESS);
        CHECK(clEnqueueReadBuffer(q, mf, CL_TRUE, 0, NX * sizeof *f, f, 0, NULL, NULL) == CL_SUCCESS);
        CHECK(clEnqueueReadBuffer(q, my, CL_TRUE, 0, NX * sizeof *y, y, 0, NULL, NULL) == CL_SUCCESS);
        int bad_f = 0, bad_y = 0;
        for (uint32_t i = 0; i < NX; i++) {
            if (memcmp(&f[i], &want_f[i], sizeof f[i]) != 0 && bad_f++ < 3)
                fprintf(stderr, "ct_half_to_float(0x%04x) = 0x%08x, want 0x%08x\n", h[i], tu_f32_bits(f[i]),
                        tu_f32_bits(want_f[i]));
            if (y[i] != want_y[i] && bad_y++ < 3)
                fprintf(stderr, "ct_float_to_half(0x%08x) = 0x%04x, want 0x%04x\n", tu_f32_bits(x[i]), y[i], want_y[i]);
        }
        CHECK_MSG(bad_f == 0 && bad_y == 0, "half conversions (%s): %d of %d to float, %d of %d to half differ",
                  way_names[way], bad_f, (int)NX, bad_y, (int)NX);
        clReleaseKernel(k);
        clReleaseMemObject(mh);
        clReleaseMemObject(mx);
        clReleaseMemObject(mf);
        clReleaseMemObject(my);
        clReleaseCommandQueue(q);
        clReleaseProgram(prog);
    }
out:
    free(h);
    free(y);
    free(want_y);
    free(f);
    free(x);
    free(want_f);
}

static float div_operand(void) {
    switch (tu_rand_below(6)) {
    case 0: return tu_bits_f32(tu_rand_u32()); /* any bits: NaN, inf, subnormals */
    case 1: return tu_bits_f32(tu_rand_u32() & 0x807FFFFFu); /* subnormal */
    case 2: return (float)(tu_rand_below(255) - 127);
    case 3: return tu_rand_uniform(-1.0f, 1.0f) * 1e-30f;
    default: return tu_rand_normal();
    }
}

static void test_soft_div(void) {
    ct_ocl_device *d = ct_ocl_device_of(ocl_dev);
    cl_program prog = build_common(d, 0, 0, "-DCT_SOFT_DIV");
    if (!prog) return;
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(d->context, d->device, 0, &err);
    enum { N = 1 << 14, QB = 256 };
    float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float)), *r = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) {
        a[i] = div_operand();
        b[i] = div_operand();
    }
    a[0] = 1.0f, b[0] = 0.0f;
    a[1] = 0.0f, b[1] = 0.0f;
    a[2] = INFINITY, b[2] = INFINITY;
    a[3] = 1e-45f, b[3] = 2.0f;  /* ties at the bottom of the subnormals */
    a[4] = 3e-45f, b[4] = 2.0f;
    a[5] = 3e38f, b[5] = 1e-3f;  /* overflow */
    a[6] = 1.0f, b[6] = 3.0f;
    a[7] = 1.17549421e-38f, b[7] = 1.00000012f; /* rounds up to the smallest normal */
    cl_mem ma = clCreateBuffer(d->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof(float), a, &err);
    cl_mem mb = clCreateBuffer(d->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof(float), b, &err);
    cl_mem mr = clCreateBuffer(d->context, CL_MEM_WRITE_ONLY, N * sizeof(float), NULL, &err);
    cl_kernel k = clCreateKernel(prog, "t_div", &err);
    CHECK(err == CL_SUCCESS);
    clSetKernelArg(k, 0, sizeof ma, &ma);
    clSetKernelArg(k, 1, sizeof mb, &mb);
    clSetKernelArg(k, 2, sizeof mr, &mr);
    size_t gsz = N;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, NULL, 0, NULL, NULL) == CL_SUCCESS);
    CHECK(clEnqueueReadBuffer(q, mr, CL_TRUE, 0, N * sizeof(float), r, 0, NULL, NULL) == CL_SUCCESS);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        const volatile float x = a[i], y = b[i];
        const float want = x / y;
        if (!tu_same_f32(want, r[i]) && bad++ < 5)
            fprintf(stderr, "ct_div(%a, %a) = %a, want %a\n", (double)a[i], (double)b[i], (double)r[i], (double)want);
    }
    CHECK_MSG(bad == 0, "%d of %d software divisions differ", bad, N);
    clReleaseKernel(k);

    /* The quantizers with the software division, against ct_quantize_row. */
    static const ct_type qt[] = {CT_TYPE_Q8_0, CT_TYPE_Q4_0, CT_TYPE_Q4_1, CT_TYPE_Q5_0, CT_TYPE_Q5_1,
                                 CT_TYPE_IQ4_NL};
    float *x = malloc(QB * 32 * sizeof(float));
    uint8_t *want = malloc(QB * 34), *got = malloc(QB * 34);
    edge_blocks(x);
    for (int i = 32 * EDGE_BLOCKS; i < QB * 32; i++) x[i] = tu_rand_normal() * (float)(1 << (i / 32 % 16));
    cl_mem mx = clCreateBuffer(d->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, QB * 32 * sizeof(float), x, &err);
    cl_mem my = clCreateBuffer(d->context, CL_MEM_WRITE_ONLY, QB * 34, NULL, &err);
    k = clCreateKernel(prog, "t_quant", &err);
    for (size_t t = 0; t < sizeof qt / sizeof qt[0]; t++) {
        const cl_int type = (cl_int)qt[t], ts = (cl_int)ct_type_size(qt[t]);
        clSetKernelArg(k, 0, sizeof type, &type);
        clSetKernelArg(k, 1, sizeof mx, &mx);
        clSetKernelArg(k, 2, sizeof my, &my);
        clSetKernelArg(k, 3, sizeof ts, &ts);
        gsz = QB;
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, NULL, 0, NULL, NULL) == CL_SUCCESS);
        CHECK(clEnqueueReadBuffer(q, my, CL_TRUE, 0, (size_t)QB * (size_t)ts, got, 0, NULL, NULL) == CL_SUCCESS);
        CHECK(ct_quantize_row(qt[t], x, want, QB * 32) == CT_OK);
        int nb = 0;
        for (int i = 0; i < QB; i++) nb += memcmp(want + i * ts, got + i * ts, (size_t)ts) != 0;
        CHECK_MSG(nb == 0, "%s with software division: %d of %d blocks differ", ct_type_name(qt[t]), nb, QB);
    }
    clReleaseKernel(k);
    clReleaseMemObject(mx);
    clReleaseMemObject(my);
    clReleaseMemObject(ma);
    clReleaseMemObject(mb);
    clReleaseMemObject(mr);
    clReleaseCommandQueue(q);
    clReleaseProgram(prog);
    free(x);
    free(want);
    free(got);
    free(a);
    free(b);
    free(r);
}

int main(void) {
    tu_init("test_opencl_rows");
    ct_backend_reg *reg = ct_backend_reg_by_name("OpenCL");
    if (!reg || ct_backend_reg_dev_count(reg) == 0) {
        printf("SKIP: no OpenCL device\n");
        return SKIP;
    }
    if (ct_backend_cpu_init(&cpu_be) != CT_OK) {
        fprintf(stderr, "CPU backend init failed: %s\n", ct_last_error());
        return 1;
    }
    int n_devices = 0;
    for (size_t i = 0; i < ct_backend_reg_dev_count(reg); i++) {
        ocl_dev = ct_backend_reg_dev_get(reg, i);
        if (!tu_opencl_device_selected(ocl_dev)) continue;
        n_devices++;
        if (ct_device_init_backend(ocl_dev, NULL, &ocl_be) != CT_OK) {
            CHECK_MSG(false, "%s: backend init failed: %s", ct_device_name(ocl_dev), ct_last_error());
            continue;
        }
        printf("device %s: %s\n", ct_device_name(ocl_dev), ct_device_description(ocl_dev));
        n_cases = 0;
        test_get_rows();
        test_set_rows();
        test_cpy();
        test_quant_edges();
        test_iq4nl_edges();
        test_soft_div();
        test_half_conversions();
        printf("%s: %d cases\n", ct_device_name(ocl_dev), n_cases);
        ct_backend_free(ocl_be);
    }
    CHECK_MSG(n_devices > 0, "CT_TEST_OPENCL_DEVICE=%s names no OpenCL device",
              getenv("CT_TEST_OPENCL_DEVICE") ? getenv("CT_TEST_OPENCL_DEVICE") : "");
    ct_backend_free(cpu_be);
    return tu_finish();
}

#endif

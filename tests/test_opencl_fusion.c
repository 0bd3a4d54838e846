/* OpenCL fusion (docs/BACKENDS.md, "Fusion"): RMS_NORM + MUL by its weight, and the ADD
 * after that MUL, in one kernel.
 * Each graph is computed on the CPU backend and on two OpenCL backends, one with fusion
 * off (CT_OPENCL_FUSION=0 is read at backend creation; the test clears the backend's
 * switch instead). Checked for every graph:
 *   - the fused and unfused OpenCL results are the same bytes, every node's result the
 *     caller can read (the final node, and each node the graph says must be written);
 *   - the OpenCL results are within the norms' threshold of the CPU's;
 *   - the backend fused exactly the pairs expected (its n_fused count).
 * Graphs fused: the weight as the MUL's src0 and src1, a weight broadcast over rows, over
 * dims 2-3 and along dim 0 (one value a row), strided rows of x and a strided destination,
 * long and short rows, a model's layer loop, the ADD after the MUL with either operand
 * order. Where nothing may be fused: a second consumer of the norm, the norm flagged
 * output, a view of the norm, MUL(norm, norm), an F16 weight, a weight with strided
 * elements, the graph given as a view, another node between the norm and its MUL, an
 * abort callback (each node handed over on its own). Where the ADD stays apart: its other
 * operand broadcast, the product consumed again or flagged output; before the norm, an
 * operand broadcast or strided. A result placed over an input: fused row for row, apart when
 * shifted by a row or over a SWIGLU's weight.
 * Exits 77 (skipped) without an OpenCL device. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CT_HAVE_OPENCL

int main(void) {
    tu_init("test_opencl_fusion");
    printf("SKIP: ctensor was built without OpenCL (CT_OPENCL=OFF)\n");
    return 77;
}

#else

#include "opencl/opencl_internal.h"

enum { SKIP = 77, MAX_T = 64 };
#define CT_ARRAY_LEN_(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct fx {
    ct_context *ctx;
    ct_graph *g;
    ct_tensor *check[8]; /* results compared: the outputs the graph promises */
    int n_check;
    int want_fused;      /* pairs the fusing backend should take */
    bool view_graph;     /* computed as ct_graph_view of the whole graph */
    /* placed's bytes moved to host's at host_offset once the leaves are filled: a result
     * over an input's memory, as an allocator reusing a dead input's block puts it */
    ct_tensor *placed, *host;
    size_t host_offset;
} fx;

/* A case: builds its graph into a fresh fx (once per backend), with parameters p. */
typedef void (*build_fn)(fx *f, const void *p);

static ct_backend *cpu, *ocl, *ocl_off;

static ct_tensor *leaf(fx *f, ct_type t, int64_t n0, int64_t n1, int64_t n2, int64_t n3) {
    return ct_tensor_new_4d(f->ctx, t, n0, n1, n2, n3);
}

static void out(fx *f, ct_tensor *t) {
    f->check[f->n_check++] = t;
    if (t) CHECK(ct_graph_build_forward(f->g, t) == CT_OK);
}

/* Builds the case, fills every leaf (the same values on every backend), computes on be and
 * reads the checked results into res; *fused: the pairs be fused. */
static bool compute(build_fn build, const void *p, ct_backend *be, float **res, uint64_t *fused, int *want) {
    fx f;
    memset(&f, 0, sizeof f);
    f.ctx = ct_context_new((ct_context_params){.mem_size = MAX_T * ct_tensor_overhead() + 2 * ct_graph_overhead(MAX_T),
                                               .no_alloc = true});
    f.g = f.ctx ? ct_graph_new(f.ctx, MAX_T) : NULL;
    if (f.g) build(&f, p);
    bool ok = f.g != NULL && f.n_check > 0;
    for (int i = 0; i < f.n_check; i++) ok = ok && f.check[i];
    CHECK_MSG(ok, "building: %s", ct_last_error());
    ct_buffer *buf = NULL;
    ct_status st = ok ? ct_context_alloc_tensors(f.ctx, ct_backend_buffer_type(be), &buf) : CT_INVALID_ARGUMENT;
    CHECK_MSG(!ok || st == CT_OK, "alloc on %s: %s", ct_backend_name(be), ct_last_error());
    int li = 0;
    for (ct_tensor *t = ok ? ct_context_first_tensor(f.ctx) : NULL; t && st == CT_OK;
         t = ct_context_next_tensor(f.ctx, t)) {
        if (t->view_src || !t->data) continue;
        const size_t n = ct_nbytes(t);
        uint8_t *bytes = malloc(n ? n : 1);
        if (!bytes) continue;
        memset(bytes, 0xFF, n); /* results: unwritten elements read as NaN */
        if (t->op == CT_OP_NONE) {
            for (size_t i = 0; i < n / 4 && t->type == CT_TYPE_F32; i++) {
                const float v = (float)((double)(((i + 1) * 2654435761u + (size_t)li * 40503u) % 2001) / 1000.0 - 1.0);
                memcpy(bytes + 4 * i, &v, 4);
            }
            for (size_t i = 0; i < n / 2 && t->type == CT_TYPE_F16; i++) {
                const uint16_t h = (uint16_t)((0x3000 + (i * 7 + (size_t)li) % 0x0c00) | ((i & 1) << 15));
                memcpy(bytes + 2 * i, &h, 2);
            }
            if (ct_type_is_quantized(t->type)) tu_fill_quantized(t->type, bytes, ct_nelements(t), (unsigned)li);
            li++;
        }
        ct_tensor_set(t, bytes, 0, n);
        free(bytes);
    }
    if (f.placed && st == CT_OK) {
        f.placed->data = (char *)f.host->data + f.host_offset;
        f.placed->buffer = f.host->buffer;
    }
    ct_graph *g = f.view_graph && st == CT_OK ? ct_graph_view(f.ctx, f.g, 0, ct_graph_n_nodes(f.g)) : f.g;
    const uint64_t fused0 = ct_backend_is_cpu(be) ? 0 : ((ct_ocl_backend *)be->context)->n_fused;
    if (st == CT_OK) {
        st = g ? ct_backend_graph_compute(be, g) : CT_OUT_OF_MEMORY;
        CHECK_MSG(st == CT_OK, "compute on %s: %s", ct_backend_name(be), ct_last_error());
    }
    if (fused) *fused = ct_backend_is_cpu(be) ? 0 : ((ct_ocl_backend *)be->context)->n_fused - fused0;
    *want = f.want_fused;
    for (int i = 0; i < f.n_check && st == CT_OK; i++) {
        res[i] = malloc(ct_nbytes(f.check[i]));
        if (res[i]) ct_tensor_get(f.check[i], res[i], 0, ct_nbytes(f.check[i]));
        else st = CT_OUT_OF_MEMORY;
    }
    ct_buffer_free(buf);
    ct_context_free(f.ctx);
    return st == CT_OK;
}

/* The elements of result i of a case (all F32: the cases check F32 results). */
static size_t n_floats(build_fn build, const void *p, int i) {
    fx f;
    memset(&f, 0, sizeof f);
    f.ctx = ct_context_new((ct_context_params){.mem_size = MAX_T * ct_tensor_overhead() + 2 * ct_graph_overhead(MAX_T),
                                               .no_alloc = true});
    f.g = f.ctx ? ct_graph_new(f.ctx, MAX_T) : NULL;
    if (f.g) build(&f, p);
    const size_t n = i < f.n_check && f.check[i] ? (size_t)ct_nelements(f.check[i]) : 0;
    ct_context_free(f.ctx);
    return n;
}

/* Computes the case on the three backends and checks what the header says. */
static void run(const char *what, build_fn build, const void *p) {
    float *rc[8] = {0}, *rf[8] = {0}, *ru[8] = {0};
    uint64_t n_fused = 0, n_unfused = 0;
    int want = 0;
    const bool done = compute(build, p, cpu, rc, NULL, &want) && compute(build, p, ocl, rf, &n_fused, &want) &&
                      compute(build, p, ocl_off, ru, &n_unfused, &want);
    CHECK_MSG(done, "%s: not computed", what);
    if (done) {
        CHECK_MSG(n_fused == (uint64_t)want, "%s: %llu pairs fused, expected %d", what, (unsigned long long)n_fused,
                  want);
        CHECK_MSG(n_unfused == 0, "%s: fused with fusion off", what);
        for (int i = 0; i < 8 && rc[i]; i++) {
            const size_t n = n_floats(build, p, i);
            CHECK_MSG(memcmp(rf[i], ru[i], n * sizeof(float)) == 0, "%s: result %d differs fused and unfused", what, i);
            double err = 0, ref = 0;
            for (size_t k = 0; k < n; k++) {
                err += ((double)rf[i][k] - rc[i][k]) * ((double)rf[i][k] - rc[i][k]);
                ref += (double)rc[i][k] * rc[i][k];
            }
            CHECK_MSG(isfinite(err) && err <= 1e-7 * (ref > 0 ? ref : 1), "%s: result %d: nmse %g against the CPU", what,
                      i, ref > 0 ? err / ref : err);
        }
    }
    for (int i = 0; i < 8; i++) free(rc[i]), free(rf[i]), free(ru[i]);
}

/* rms_norm(x) * w, x [n0..n3], w of type wt and shape w0..w3; w_first: MUL(w, norm). */
typedef struct nm_case {
    int64_t n[4], w[4];
    ct_type wt;
    bool w_first;
    int want;
} nm_case;

static void build_norm_mul(fx *f, const void *pv) {
    const nm_case *p = pv;
    ct_tensor *x = leaf(f, CT_TYPE_F32, p->n[0], p->n[1], p->n[2], p->n[3]);
    ct_tensor *w = leaf(f, p->wt, p->w[0], p->w[1], p->w[2], p->w[3]);
    ct_tensor *n = x ? ct_rms_norm(f->ctx, x, 1e-6f) : NULL;
    ct_tensor *m = n && w ? (p->w_first ? ct_mul(f->ctx, w, n) : ct_mul(f->ctx, n, w)) : NULL;
    /* an F16 product (F16 weight first) is compared as F32 */
    out(f, m && m->type != CT_TYPE_F32 ? ct_cast(f->ctx, m, CT_TYPE_F32) : m);
    f->want_fused = p->want;
}

static void norm_mul(const char *what, int64_t n0, int64_t n1, int64_t n2, int64_t n3, ct_type wt, int64_t w0, int64_t w1,
                     int64_t w2, int64_t w3, bool w_first, int want) {
    const nm_case p = {{n0, n1, n2, n3}, {w0, w1, w2, w3}, wt, w_first, want};
    run(what, build_norm_mul, &p);
}

/* strided x rows, the product copied into a strided destination */
static void build_strided(fx *f, const void *p) {
    (void)p;
    ct_tensor *xb = leaf(f, CT_TYPE_F32, 200, 6, 1, 1), *w = leaf(f, CT_TYPE_F32, 128, 1, 1, 1);
    ct_tensor *x = xb ? ct_view_2d(f->ctx, xb, 128, 6, xb->nb[1], 0) : NULL;
    ct_tensor *db = leaf(f, CT_TYPE_F32, 150, 6, 1, 1);
    ct_tensor *d = db ? ct_view_2d(f->ctx, db, 128, 6, db->nb[1], 8) : NULL;
    ct_tensor *m = x && w ? ct_mul(f->ctx, ct_rms_norm(f->ctx, x, 1e-5f), w) : NULL;
    out(f, m && d ? ct_cpy(f->ctx, m, d) : NULL);
    f->want_fused = 1;
}

/* a model's layer loop: h = h + rms_norm(h) * w_l, four times */
static void build_layers(fx *f, const void *p) {
    (void)p;
    ct_tensor *h = leaf(f, CT_TYPE_F32, 640, 1, 1, 1);
    for (int l = 0; l < 4 && h; l++) {
        ct_tensor *wl = leaf(f, CT_TYPE_F32, 640, 1, 1, 1);
        ct_tensor *m = wl ? ct_mul(f->ctx, ct_rms_norm(f->ctx, h, 1e-6f), wl) : NULL;
        h = m ? ct_add(f->ctx, h, m) : NULL;
    }
    out(f, h);
    f->want_fused = 8; /* RMS_NORM + MUL + ADD(h, product) each */
}

/* rms_norm(x) * w, then ADD with r: r_first: ADD(r, product); r0..r3: r's shape; extra: the
 * product also consumed later (by a second ADD), or flagged output (2) */
typedef struct nma_case {
    int64_t r[4];
    bool r_first;
    int extra, want;
} nma_case;

static void build_norm_mul_add(fx *f, const void *pv) {
    const nma_case *p = pv;
    ct_tensor *x = leaf(f, CT_TYPE_F32, 256, 3, 2, 1), *w = leaf(f, CT_TYPE_F32, 256, 1, 1, 1);
    ct_tensor *r = leaf(f, CT_TYPE_F32, p->r[0], p->r[1], p->r[2], p->r[3]);
    ct_tensor *m = x && w ? ct_mul(f->ctx, ct_rms_norm(f->ctx, x, 1e-6f), w) : NULL;
    if (m && p->extra == 2) ct_set_output(m);
    ct_tensor *a = m && r ? (p->r_first ? ct_add(f->ctx, r, m) : ct_add(f->ctx, m, r)) : NULL;
    if (a && p->extra == 1) a = ct_add(f->ctx, a, m);
    out(f, a);
    if (p->extra == 2) out(f, m);
    f->want_fused = p->want;
}

/* ADD then RMS_NORM of the sum and its MUL (a pre-norm model's residual and the next norm):
 * h = x + y, out rms_norm(h) * w, h consumed again (h + 1 * product) so the sum is written;
 * post: an ADD after the MUL too; bcast: y one row (the ADD apart); strided: y a transposed
 * view (the ADD apart); flag: h flagged output. Rows of n0 floats, 3 of them. */
typedef struct pre_case {
    int64_t n0;
    bool post, bcast, strided, flag;
    int want;
} pre_case;

static void build_pre_add(fx *f, const void *pv) {
    const pre_case *p = pv;
    ct_tensor *x = leaf(f, CT_TYPE_F32, p->n0, 3, 1, 1), *w = leaf(f, CT_TYPE_F32, p->n0, 1, 1, 1);
    ct_tensor *y = leaf(f, CT_TYPE_F32, p->strided ? 3 : p->n0, p->bcast ? 1 : p->strided ? p->n0 : 3, 1, 1);
    if (y && p->strided) y = ct_transpose(f->ctx, y);
    ct_tensor *h = x && y ? ct_add(f->ctx, x, y) : NULL;
    if (h && p->flag) ct_set_output(h);
    ct_tensor *m = h && w ? ct_mul(f->ctx, ct_rms_norm(f->ctx, h, 1e-6f), w) : NULL;
    if (m && p->post) m = ct_add(f->ctx, m, x);
    out(f, m ? ct_add(f->ctx, h, ct_scale(f->ctx, m, 1.0f)) : NULL);
    if (p->flag) out(f, h);
    f->want_fused = p->want;
}

/* a pre-norm model's layers: h = h + scale(rms_norm(h) * w_l), four times; each layer's
 * residual ADD takes the next layer's norm and MUL */
static void build_pre_norm_layers(fx *f, const void *p) {
    (void)p;
    ct_tensor *h = leaf(f, CT_TYPE_F32, 640, 2, 1, 1);
    for (int l = 0; l < 4 && h; l++) {
        ct_tensor *wl = leaf(f, CT_TYPE_F32, 640, 1, 1, 1);
        ct_tensor *m = wl ? ct_mul(f->ctx, ct_rms_norm(f->ctx, h, 1e-6f), wl) : NULL;
        h = m ? ct_add(f->ctx, h, ct_scale(f->ctx, m, 0.5f)) : NULL;
    }
    out(f, h);
    f->want_fused = 1 + 3 * 2; /* the first norm + MUL; three ADD + RMS_NORM + MUL */
}

/* A feed-forward's gate and up for one token and their GLU: g = wg . y, u = wu . y, glu(g, u)
 * (up_first: u is computed first and the GLU is glu(u, g), its src0 the second product).
 * Fused (ct_mul_mvq1_swiglu) for SWIGLU over two weights of one quantized type, one column. */
typedef struct ffn_case {
    ct_type tg, tu;
    int64_t m, n;
    ct_glu_op op;
    bool up_first, g_again;
    int want;
} ffn_case;

static void build_ffn(fx *f, const void *pv) {
    const ffn_case *p = pv;
    ct_tensor *y = leaf(f, CT_TYPE_F32, 256, p->n, 1, 1);
    ct_tensor *wg = leaf(f, p->tg, 256, p->m, 1, 1), *wu = leaf(f, p->tu, 256, p->m, 1, 1);
    ct_tensor *g = y && wg ? ct_mul_mat(f->ctx, wg, y) : NULL, *u = y && wu ? ct_mul_mat(f->ctx, wu, y) : NULL;
    if (g && u && p->up_first) CHECK(ct_graph_build_forward(f->g, g) == CT_OK); /* g, u, then glu(u, g) */
    ct_tensor *h = g && u ? (p->up_first ? ct_glu_split(f->ctx, u, g, p->op) : ct_glu_split(f->ctx, g, u, p->op)) : NULL;
    out(f, h);
    if (p->g_again) out(f, h && g ? ct_add(f->ctx, h, g) : NULL);
    f->want_fused = p->want;
}

static void test_patterns(void) {
    norm_mul("weight a row", 640, 3, 1, 1, CT_TYPE_F32, 640, 1, 1, 1, false, 1);
    norm_mul("weight first", 640, 3, 1, 1, CT_TYPE_F32, 640, 3, 1, 1, true, 1);
    norm_mul("full weight", 256, 4, 2, 3, CT_TYPE_F32, 256, 4, 2, 3, false, 1);
    norm_mul("weight over dims 2-3", 96, 4, 2, 3, CT_TYPE_F32, 96, 4, 1, 1, false, 1);
    norm_mul("one weight a row", 100, 5, 1, 1, CT_TYPE_F32, 1, 5, 1, 1, false, 1);
    norm_mul("weight repeating in a row", 96, 2, 1, 1, CT_TYPE_F32, 32, 1, 1, 1, false, 1);
    norm_mul("short rows", 33, 7, 1, 1, CT_TYPE_F32, 33, 1, 1, 1, false, 1);
    norm_mul("long rows", 9000, 2, 1, 1, CT_TYPE_F32, 9000, 1, 1, 1, false, 1);
    /* an F16 weight: MUL(F16, F32) gives F16, computed apart */
    norm_mul("f16 weight", 640, 3, 1, 1, CT_TYPE_F16, 640, 3, 1, 1, true, 0);
    run("strided x and a copy after", build_strided, NULL);
    run("layer loop", build_layers, NULL);
    static const nma_case nma[] = {
        {{256, 3, 2, 1}, false, 0, 2}, /* ADD(product, r) */
        {{256, 3, 2, 1}, true, 0, 2},  /* ADD(r, product) */
        {{256, 1, 1, 1}, false, 0, 1}, /* r broadcast: the ADD apart */
        {{256, 3, 2, 1}, false, 1, 1}, /* the product consumed again: the ADD apart */
        {{256, 3, 2, 1}, false, 2, 1}, /* the product flagged output: the ADD apart */
    };
    for (int i = 0; i < CT_ARRAY_LEN_(nma); i++) {
        char what[64];
        snprintf(what, sizeof what, "norm, mul, add #%d", i);
        run(what, build_norm_mul_add, &nma[i]);
    }
    static const pre_case pre[] = {
        {640, false, false, false, false, 2},  /* registers (float4 rows kept) */
        {9000, false, false, false, false, 2}, /* float4 rows read again */
        {33, false, false, false, false, 2},   /* floats */
        {256, true, false, false, false, 3},   /* and the ADD after the MUL */
        {256, false, false, false, true, 2},   /* the sum flagged output */
        {256, false, true, false, false, 1},   /* y broadcast: the ADD apart */
        {64, false, false, true, false, 1},    /* y strided: the ADD apart */
    };
    for (int i = 0; i < CT_ARRAY_LEN_(pre); i++) {
        char what[64];
        snprintf(what, sizeof what, "add, norm, mul #%d", i);
        run(what, build_pre_add, &pre[i]);
    }
    run("pre-norm layer loop", build_pre_norm_layers, NULL);
    static const ffn_case ffn[] = {
        {CT_TYPE_Q4_0, CT_TYPE_Q4_0, 96, 1, CT_GLU_OP_SWIGLU, false, false, 2},
        {CT_TYPE_Q4_K, CT_TYPE_Q4_K, 70, 1, CT_GLU_OP_SWIGLU, false, false, 2}, /* a partial last group */
        {CT_TYPE_Q6_K, CT_TYPE_Q6_K, 64, 1, CT_GLU_OP_SWIGLU, true, false, 2},  /* glu(up, gate) */
        {CT_TYPE_Q8_0, CT_TYPE_Q8_0, 33, 1, CT_GLU_OP_SWIGLU, false, false, 2},
        {CT_TYPE_IQ4_NL, CT_TYPE_IQ4_NL, 40, 1, CT_GLU_OP_SWIGLU, false, false, 2}, /* a table in local memory */
        {CT_TYPE_Q4_0, CT_TYPE_Q8_0, 64, 1, CT_GLU_OP_SWIGLU, false, false, 0}, /* two types: apart */
        {CT_TYPE_Q4_0, CT_TYPE_Q4_0, 64, 2, CT_GLU_OP_SWIGLU, false, false, 0}, /* two columns */
        {CT_TYPE_Q4_0, CT_TYPE_Q4_0, 64, 1, CT_GLU_OP_GEGLU, false, false, 0},  /* not SWIGLU */
        {CT_TYPE_Q4_0, CT_TYPE_Q4_0, 64, 1, CT_GLU_OP_SWIGLU, false, true, 0},  /* g read again */
    };
    for (int i = 0; i < CT_ARRAY_LEN_(ffn); i++) {
        char what[64];
        snprintf(what, sizeof what, "gate, up, glu #%d", i);
        run(what, build_ffn, &ffn[i]);
    }
}

/* a second consumer after the MUL */
static void build_second_consumer(fx *f, const void *p) {
    (void)p;
    ct_tensor *x = leaf(f, CT_TYPE_F32, 256, 3, 1, 1), *w = leaf(f, CT_TYPE_F32, 256, 1, 1, 1);
    ct_tensor *n = x ? ct_rms_norm(f->ctx, x, 1e-6f) : NULL;
    ct_tensor *m = n && w ? ct_mul(f->ctx, n, w) : NULL;
    out(f, m ? ct_add(f->ctx, m, n) : NULL);
}

/* the norm flagged output, read after the compute */
static void build_output_flag(fx *f, const void *p) {
    (void)p;
    ct_tensor *x = leaf(f, CT_TYPE_F32, 256, 3, 1, 1), *w = leaf(f, CT_TYPE_F32, 256, 1, 1, 1);
    ct_tensor *n = x ? ct_set_output(ct_rms_norm(f->ctx, x, 1e-6f)) : NULL;
    out(f, n && w ? ct_mul(f->ctx, n, w) : NULL);
    out(f, n);
}

/* a view of the norm, consumed after the MUL */
static void build_view(fx *f, const void *p) {
    (void)p;
    ct_tensor *x = leaf(f, CT_TYPE_F32, 256, 3, 1, 1), *w = leaf(f, CT_TYPE_F32, 256, 1, 1, 1);
    ct_tensor *n = x ? ct_rms_norm(f->ctx, x, 1e-6f) : NULL;
    ct_tensor *m = n && w ? ct_mul(f->ctx, n, w) : NULL;
    ct_tensor *v = n ? ct_view_2d(f->ctx, n, 256, 1, n->nb[1], n->nb[1]) : NULL;
    out(f, m && v ? ct_add(f->ctx, m, v) : NULL);
}

/* MUL(norm, norm): one consumer in two source slots */
static void build_squared(fx *f, const void *p) {
    (void)p;
    ct_tensor *x = leaf(f, CT_TYPE_F32, 256, 3, 1, 1);
    ct_tensor *n = x ? ct_rms_norm(f->ctx, x, 1e-6f) : NULL;
    out(f, n ? ct_mul(f->ctx, n, n) : NULL);
}

/* weights with strided elements (a transposed view): not packed rows */
static void build_strided_weight(fx *f, const void *p) {
    (void)p;
    ct_tensor *x = leaf(f, CT_TYPE_F32, 64, 64, 1, 1), *wt = leaf(f, CT_TYPE_F32, 64, 64, 1, 1);
    ct_tensor *n = x ? ct_rms_norm(f->ctx, x, 1e-6f) : NULL;
    out(f, n && wt ? ct_mul(f->ctx, n, ct_transpose(f->ctx, wt)) : NULL);
}

/* a graph view: consumers outside it are unknown */
static void build_graph_view(fx *f, const void *p) {
    (void)p;
    ct_tensor *x = leaf(f, CT_TYPE_F32, 256, 3, 1, 1), *w = leaf(f, CT_TYPE_F32, 256, 1, 1, 1);
    out(f, x && w ? ct_mul(f->ctx, ct_rms_norm(f->ctx, x, 1e-6f), w) : NULL);
    f->view_graph = true;
}

/* another node between the norm and its MUL */
static void build_between(fx *f, const void *p) {
    (void)p;
    ct_tensor *x = leaf(f, CT_TYPE_F32, 256, 3, 1, 1), *w = leaf(f, CT_TYPE_F32, 256, 1, 1, 1);
    ct_tensor *n = x ? ct_rms_norm(f->ctx, x, 1e-6f) : NULL;
    ct_tensor *s = x ? ct_scale(f->ctx, x, 2.0f) : NULL;
    if (n && s) CHECK(ct_graph_build_forward(f->g, n) == CT_OK && ct_graph_build_forward(f->g, s) == CT_OK);
    ct_tensor *m = n && w ? ct_mul(f->ctx, n, w) : NULL;
    out(f, m && s ? ct_add(f->ctx, m, s) : NULL);
}

/* A result placed over an input (docs/BACKENDS.md, "Fusion"): x is rows 0..2 of a leaf of 4
 * rows, and the fused kernel's result lies at row `shift` of that leaf. Row for row (shift 0)
 * fuses; shifted by a row, a work-group would write a row another has yet to read, so the
 * nodes go apart. pre: x is an ADD's operand, the norm takes the sum. */
typedef struct place_case {
    int shift;
    bool pre;
    int want;
} place_case;

static void build_placed(fx *f, const void *pv) {
    const place_case *p = pv;
    ct_tensor *xb = leaf(f, CT_TYPE_F32, 512, 4, 1, 1), *w = leaf(f, CT_TYPE_F32, 512, 1, 1, 1);
    ct_tensor *y = leaf(f, CT_TYPE_F32, 512, 3, 1, 1);
    ct_tensor *x = xb ? ct_view_2d(f->ctx, xb, 512, 3, xb->nb[1], 0) : NULL;
    ct_tensor *h = x && y && p->pre ? ct_add(f->ctx, x, y) : x;
    ct_tensor *m = h && w ? ct_mul(f->ctx, ct_rms_norm(f->ctx, h, 1e-6f), w) : NULL;
    out(f, m);
    f->placed = m, f->host = xb, f->host_offset = xb ? (size_t)p->shift * xb->nb[1] : 0;
    f->want_fused = p->want;
}

/* The feed-forward's SWIGLU placed over the gate's weight: every work-group of the fused
 * kernel reads the whole weight while it writes. */
static void build_glu_over_weight(fx *f, const void *p) {
    (void)p;
    ct_tensor *y = leaf(f, CT_TYPE_F32, 256, 1, 1, 1);
    ct_tensor *wg = leaf(f, CT_TYPE_Q4_0, 256, 96, 1, 1), *wu = leaf(f, CT_TYPE_Q4_0, 256, 96, 1, 1);
    ct_tensor *h = y && wg && wu ? ct_glu_split(f->ctx, ct_mul_mat(f->ctx, wg, y), ct_mul_mat(f->ctx, wu, y),
                                                CT_GLU_OP_SWIGLU) : NULL;
    out(f, h);
    f->placed = h, f->host = wg, f->host_offset = 0;
}

static void test_placed_over_input(void) {
    static const place_case cases[] = {
        {0, false, 1}, {1, false, 0}, {0, true, 2}, {1, true, 1},
    };
    for (int i = 0; i < CT_ARRAY_LEN_(cases); i++) {
        char what[96];
        snprintf(what, sizeof what, "result over %s, %s", cases[i].pre ? "the ADD's operand" : "the norm's input",
                 cases[i].shift ? "shifted a row" : "row for row");
        run(what, build_placed, &cases[i]);
    }
    run("SWIGLU over the gate's weight", build_glu_over_weight, NULL);
}

static void test_must_not_fuse(void) {
    run("second consumer", build_second_consumer, NULL);
    run("norm flagged output", build_output_flag, NULL);
    run("view of the norm", build_view, NULL);
    run("norm squared", build_squared, NULL);
    run("strided weight elements", build_strided_weight, NULL);
    run("graph view", build_graph_view, NULL);
    run("a node between", build_between, NULL);
}

static bool abort_never(void *data) {
    (*(int *)data)++;
    return false;
}

/* With an abort callback every node is handed over on its own, and the callback sees each. */
static void test_abort_callback(void) {
    int calls = 0;
    ct_backend_set_abort_callback(ocl, abort_never, &calls);
    const nm_case p = {{256, 3, 1, 1}, {256, 1, 1, 1}, CT_TYPE_F32, false, 0};
    run("abort callback", build_norm_mul, &p);
    CHECK(calls == 2);
    ct_backend_set_abort_callback(ocl, NULL, NULL);
}

int main(void) {
    tu_init("test_opencl_fusion");
    ct_device *dev = tu_opencl_device();
    if (!dev) {
        printf("SKIP: no OpenCL device\n");
        return SKIP;
    }
    CHECK(ct_backend_cpu_init(&cpu) == CT_OK);
    CHECK(ct_device_init_backend(dev, NULL, &ocl) == CT_OK);
    CHECK(ct_device_init_backend(dev, NULL, &ocl_off) == CT_OK);
    if (!cpu || !ocl || !ocl_off) return tu_finish();
    CHECK(((ct_ocl_backend *)ocl->context)->fusion_enabled); /* unless CT_OPENCL_FUSION=0 */
    ((ct_ocl_backend *)ocl_off->context)->fusion_enabled = false;
    test_patterns();
    /* the unfused layer loop launches the same kernels on the same buffers again: play()
     * leaves the arguments a kernel already holds (docs/BACKENDS.md, "Fusion"), and the
     * results above were its */
    CHECK(((ct_ocl_backend *)ocl_off->context)->n_args_skipped > 0);
    test_must_not_fuse();
    test_placed_over_input();
    test_abort_callback();
    ct_backend_free(ocl_off);
    ct_backend_free(ocl);
    ct_backend_free(cpu);
    return tu_finish();
}

#endif

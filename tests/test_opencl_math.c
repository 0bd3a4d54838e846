/* The OpenCL MUL_MAT, NORM/RMS_NORM/L2_NORM/GROUP_NORM and SUM_ROWS/MEAN kernels
 * against the CPU backend (NMSE within test-backend-ops' thresholds) and against
 * a double-precision host reference (much tighter), on every kernel path: c4, the
 * mat-vec kernels (n = 1..9), the one-row kernel (strided src1), the tiled kernel
 * (partial tiles), broadcast batches, permuted src0, strided src1 rows, and long,
 * strided and permuted norm rows. MUL_MAT against one-hot src1 columns must return
 * src0's dequantized values exactly, or on the 8-bit path (quantized src0, int8 src1
 * blocks as the CPU makes them) the CPU's values exactly; that path must also match
 * the CPU to 1e-10 on random data, and on src1 blocks of NaN, inf, zeros and tiny
 * values. Runs on every OpenCL device, or on the one CT_TEST_OPENCL_DEVICE names.
 * Exits 77 (skipped) without an OpenCL device. */
#include "testutil.h"

#include "cpu/simd.h" /* ct_cpu_mul_mat_max_simd */
#include "opencl/encoder.h" /* CT_OCL_MM_MIN_NE11 */
#include "opencl/opencl_internal.h" /* CT_OCL_FEAT_MMA */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CT_HAVE_OPENCL

int main(void) {
    tu_init("test_opencl_math");
    printf("SKIP: ctensor was built without OpenCL (CT_OPENCL=OFF)\n");
    return 77;
}

#else

enum { SKIP = 77, MAX_FILL = 2 };

static ct_backend *cpu_be, *ocl_be;
static ct_device *ocl_dev;
static bool ocl_mma; /* the device runs the tensor-core kernels (docs/BACKENDS.md, Tensor cores) */
static int n_cases;
static double worst_cpu_mm, worst_ref_mm, worst_cpu_norm;

/* ---- the harness ------------------------------------------------------------------ */

typedef struct gcase {
    ct_tensor *fill[MAX_FILL];       /* roots whose bytes are set before compute */
    const void *fill_data[MAX_FILL]; /* explicit bytes, or NULL for random data */
    int n_fill;
    ct_tensor *a, *b; /* the op's sources (for the host reference) */
} gcase;

typedef ct_tensor *(*build_fn)(ct_context *ctx, const void *param, gcase *g);

static void add_fill(gcase *g, ct_tensor *t, const void *data) {
    g->fill[g->n_fill] = t;
    g->fill_data[g->n_fill] = data;
    g->n_fill++;
}

/* Scales of random exponent (exactness tests) instead of a narrow range (NMSE tests). */
static bool wild_scales;

/* Random bytes for a type: floats in [lo, hi), halves of them, or blocks of random
 * bytes whose fp16 scales are finite. */
static void gen_data(ct_type type, uint8_t *p, size_t n, float lo, float hi) {
    if (type == CT_TYPE_F32) {
        for (size_t i = 0; i + 4 <= n; i += 4) {
            const float f = tu_rand_uniform(lo, hi);
            memcpy(p + i, &f, 4);
        }
        return;
    }
    if (type == CT_TYPE_F16 || type == CT_TYPE_BF16) {
        for (size_t i = 0; i + 2 <= n; i += 2) {
            const float f = tu_rand_uniform(lo, hi);
            const uint16_t h = type == CT_TYPE_F16 ? ct_fp32_to_fp16(f) : ct_fp32_to_bf16(f);
            memcpy(p + i, &h, 2);
        }
        return;
    }
    tu_fill_bytes(p, n);
    static const struct {
        ct_type t;
        int offs[2];
    } scales[] = {
        {CT_TYPE_Q4_0, {0, -1}}, {CT_TYPE_Q4_1, {0, 2}}, {CT_TYPE_Q5_0, {0, -1}}, {CT_TYPE_Q5_1, {0, 2}},
        {CT_TYPE_Q8_0, {0, -1}}, {CT_TYPE_IQ4_NL, {0, -1}}, {CT_TYPE_Q4_K, {0, 2}}, {CT_TYPE_Q5_K, {0, 2}},
        {CT_TYPE_Q6_K, {208, -1}},
    };
    const size_t ts = ct_type_size(type);
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        if (scales[k].t != type) continue;
        for (size_t b = 0; b + ts <= n; b += ts)
            for (int f = 0; f < 2; f++) {
                uint8_t *h = p + b + scales[k].offs[f];
                if (scales[k].offs[f] < 0) continue;
                if (wild_scales) {
                    h[1] &= 0xBF; /* any exponent below 31: subnormal to 2^15 */
                } else {
                    /* a narrow range, so that no block dominates the CPU's int8 rounding of src1 */
                    const ct_fp16 d = ct_fp32_to_fp16(tu_rand_uniform(0.004f, 0.008f) * (tu_rand_below(2) ? 1 : -1));
                    memcpy(h, &d, sizeof d);
                }
            }
    }
}

typedef struct run {
    ct_context *ctx;
    ct_buffer *buf;
    ct_tensor *out;
    gcase g;
    ct_status status;
    float *res; /* out's values (out is contiguous) */
    size_t n;
    bool sentinel_ok;
} run;

static void run_free(run *r) {
    ct_buffer_free(r->buf);
    ct_context_free(r->ctx);
    free(r->res);
    memset(r, 0, sizeof *r);
}

/* Builds, allocates, fills (data[i] generated on the first call, reused after) and
 * computes on be. The context stays alive for the caller's reference. */
static bool run_on(ct_backend *be, build_fn build, const void *param, uint8_t *data[MAX_FILL], float lo, float hi,
                   run *r) {
    memset(r, 0, sizeof *r);
    ct_context_params cp = {.mem_size = 32 * ct_tensor_overhead() + ct_graph_overhead(8), .no_alloc = true};
    r->ctx = ct_context_new(cp);
    if (!r->ctx) return false;
    r->out = build(r->ctx, param, &r->g);
    ct_tensor *sentinel = ct_tensor_new_1d(r->ctx, CT_TYPE_F32, 256);
    ct_graph *graph = ct_graph_new(r->ctx, 8);
    bool ok = r->out && sentinel && graph && ct_graph_build_forward(graph, r->out) == CT_OK &&
              ct_context_alloc_tensors(r->ctx, ct_backend_buffer_type(be), &r->buf) == CT_OK;
    for (int i = 0; ok && i < r->g.n_fill; i++) {
        const size_t n = ct_nbytes(r->g.fill[i]);
        if (!data[i]) {
            data[i] = malloc(n ? n : 1);
            if (!data[i]) return false;
            if (r->g.fill_data[i]) memcpy(data[i], r->g.fill_data[i], n);
            else gen_data(r->g.fill[i]->type, data[i], n, lo, hi);
        }
        ok = ct_tensor_set(r->g.fill[i], data[i], 0, n) == CT_OK;
    }
    uint8_t pattern[1024];
    memset(pattern, 0xA5, sizeof pattern);
    ok = ok && ct_tensor_set(sentinel, pattern, 0, sizeof pattern) == CT_OK;
    if (!ok) return false;
    r->status = ct_backend_graph_compute(be, graph);
    r->n = (size_t)ct_nelements(r->out);
    r->res = malloc(r->n ? r->n * sizeof(float) : 1);
    uint8_t after[1024];
    ok = r->res && ct_tensor_get(r->out, r->res, 0, r->n * sizeof(float)) == CT_OK &&
         ct_tensor_get(sentinel, after, 0, sizeof after) == CT_OK;
    r->sentinel_ok = memcmp(after, pattern, sizeof after) == 0;
    return ok;
}

/* test-backend-ops' error: sum (a - b)^2 / sum a^2 with a the tested values; NaN on
 * either side only where both are NaN. */
static double nmse(const float *a, const float *b, size_t n, bool *nan_mismatch) {
    double num = 0.0, den = 0.0;
    *nan_mismatch = false;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            if (!(isnan(a[i]) && isnan(b[i]))) *nan_mismatch = true;
            continue;
        }
        const double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)a[i] * (double)a[i];
    }
    return den > 0.0 ? num / den : num;
}

/* Runs on both backends with the same inputs. ref (may be NULL) computes a host
 * reference from the OpenCL run's tensors into a buffer of r.n floats. */
typedef void (*ref_fn)(const run *r, float *out);

static void compare_case(const char *name, build_fn build, const void *param, float lo, float hi, double thr_cpu,
                         ref_fn ref, double thr_ref, double *worst_cpu, double *worst_ref) {
    uint8_t *data[MAX_FILL] = {NULL};
    run a, b;
    n_cases++;
    const bool ok_cpu = run_on(cpu_be, build, param, data, lo, hi, &a);
    const bool ok_ocl = ok_cpu && run_on(ocl_be, build, param, data, lo, hi, &b);
    CHECK_MSG(ok_cpu && ok_ocl, "%s: setting up the graph failed: %s", name, ct_last_error());
    if (ok_cpu && ok_ocl) {
        CHECK_MSG(ct_backend_supports_op(ocl_be, b.out), "%s: OpenCL does not support it", name);
        CHECK_MSG(a.status == CT_OK, "%s: CPU: %s", name, ct_status_str(a.status));
        CHECK_MSG(b.status == CT_OK, "%s: OpenCL: %s: %s", name, ct_status_str(b.status), ct_last_error());
        CHECK_MSG(b.sentinel_ok, "%s: OpenCL wrote past the tensors", name);
        bool nan_mm;
        const double e = nmse(b.res, a.res, b.n, &nan_mm);
        if (e > *worst_cpu) *worst_cpu = e;
        if (getenv("CT_TEST_VERBOSE")) printf("  %s: NMSE vs CPU %.3g\n", name, e);
        CHECK_MSG(!nan_mm && e <= thr_cpu, "%s: NMSE vs CPU %.3g (limit %.3g)%s", name, e, thr_cpu,
                  nan_mm ? ", NaN mismatch" : "");
        if (ref) {
            float *want = malloc(b.n ? b.n * sizeof(float) : 1);
            if (want) {
                ref(&b, want);
                const double er = nmse(b.res, want, b.n, &nan_mm);
                if (worst_ref && er > *worst_ref) *worst_ref = er;
                CHECK_MSG(!nan_mm && er <= thr_ref, "%s: NMSE vs the host reference %.3g (limit %.3g)", name, er,
                          thr_ref);
                free(want);
            }
        }
    }
    if (ok_cpu) run_free(&a);
    if (ok_ocl) run_free(&b);
    for (int i = 0; i < MAX_FILL; i++) free(data[i]);
}

static void get_bytes(const ct_tensor *t, uint8_t **out) {
    const size_t n = ct_nbytes(t);
    *out = malloc(n ? n : 1);
    if (*out && ct_tensor_get(t, *out, 0, n) != CT_OK) {
        free(*out);
        *out = NULL;
    }
}

static float ld_f32(const uint8_t *p) {
    float v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* ---- MUL_MAT ---------------------------------------------------------------------- */

typedef struct mm_p {
    ct_type ta;
    int64_t m, n, k;
    int bs0, bs1, nr0, nr1;
    bool a_perm; /* src0 batches permuted (nb01 > nb02) */
    int b_view;  /* 0 packed, 1 rows of a 2k-wide tensor at offset 1, 2 transposed (nb10 != 4) */
} mm_p;

static ct_tensor *build_b(ct_context *ctx, int b_view, int64_t k, int64_t n, int64_t n2, int64_t n3, gcase *g,
                          const void *data) {
    if (b_view == 1) {
        ct_tensor *root = ct_tensor_new_4d(ctx, CT_TYPE_F32, 2 * k, n, n2, n3);
        if (!root) return NULL;
        add_fill(g, root, data);
        return ct_view_4d(ctx, root, k, n, n2, n3, root->nb[1], root->nb[2], root->nb[3], sizeof(float));
    }
    if (b_view == 2) {
        ct_tensor *root = ct_tensor_new_4d(ctx, CT_TYPE_F32, n, k, n2, n3);
        if (!root) return NULL;
        add_fill(g, root, data);
        return ct_transpose(ctx, root);
    }
    ct_tensor *b = ct_tensor_new_4d(ctx, CT_TYPE_F32, k, n, n2, n3);
    if (b) add_fill(g, b, data);
    return b;
}

static ct_tensor *build_mm_with(ct_context *ctx, const mm_p *p, gcase *g, const void *bdata) {
    ct_tensor *a;
    if (p->a_perm) {
        ct_tensor *root = ct_tensor_new_4d(ctx, p->ta, p->k, p->bs0, p->m, p->bs1);
        if (!root) return NULL;
        add_fill(g, root, NULL);
        a = ct_permute(ctx, root, 0, 2, 1, 3);
    } else {
        a = ct_tensor_new_4d(ctx, p->ta, p->k, p->m, p->bs0, p->bs1);
        if (a) add_fill(g, a, NULL);
    }
    ct_tensor *b = build_b(ctx, p->b_view, p->k, p->n, (int64_t)p->bs0 * p->nr0, (int64_t)p->bs1 * p->nr1, g, bdata);
    if (!a || !b) return NULL;
    g->a = a;
    g->b = b;
    return ct_mul_mat(ctx, a, b);
}

static ct_tensor *build_mm(ct_context *ctx, const void *param, gcase *g) { return build_mm_with(ctx, param, g, NULL); }

/* build_mm with src1's values given */
typedef struct mm_fixed_b {
    const mm_p *mm;
    const float *b;
} mm_fixed_b;

static ct_tensor *build_mm_fixed_b(ct_context *ctx, const void *param, gcase *g) {
    const mm_fixed_b *p = param;
    return build_mm_with(ctx, p->mm, g, p->b);
}

/* sum_k deq(a)[k, i0, i2/r2, i3/r3] * b[k, i1, i2, i3] in double, from the tensors' bytes and strides. */
static void ref_mm(const run *r, float *out) {
    const ct_tensor *a = r->g.a, *b = r->g.b;
    uint8_t *ab = NULL, *bb = NULL;
    get_bytes(a, &ab);
    get_bytes(b, &bb);
    const int64_t k = a->ne[0];
    float *row = malloc((size_t)(k ? k : 1) * sizeof(float));
    if (!ab || !bb || !row) {
        for (size_t i = 0; i < r->n; i++) out[i] = NAN;
        goto done;
    }
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    for (int64_t i3 = 0; i3 < b->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < b->ne[2]; i2++)
            for (int64_t i0 = 0; i0 < a->ne[1]; i0++) {
                const uint8_t *ar = ab + i0 * a->nb[1] + (i2 / r2) * a->nb[2] + (i3 / r3) * a->nb[3];
                if (ct_dequantize_row(a->type, ar, row, k) != CT_OK) {
                    for (int64_t j = 0; j < k; j++) row[j] = NAN;
                }
                for (int64_t i1 = 0; i1 < b->ne[1]; i1++) {
                    double s = 0.0;
                    for (int64_t j = 0; j < k; j++)
                        s += (double)row[j] *
                             (double)ld_f32(bb + j * b->nb[0] + i1 * b->nb[1] + i2 * b->nb[2] + i3 * b->nb[3]);
                    out[((i3 * b->ne[2] + i2) * b->ne[1] + i1) * a->ne[1] + i0] = (float)s;
                }
            }
done:
    free(ab);
    free(bb);
    free(row);
}

static const ct_type mm_types[] = {CT_TYPE_F32,  CT_TYPE_F16,  CT_TYPE_BF16,   CT_TYPE_Q4_0, CT_TYPE_Q4_1,
                                   CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_Q8_0,   CT_TYPE_IQ4_NL, CT_TYPE_Q4_K,
                                   CT_TYPE_Q5_K, CT_TYPE_Q6_K};
#define N_MM_TYPES (sizeof mm_types / sizeof mm_types[0])

static bool is_float(ct_type t) { return t == CT_TYPE_F32 || t == CT_TYPE_F16 || t == CT_TYPE_BF16; }

/* The case takes the OpenCL 8-bit path (encoders/mul_mat.c: mvq): quantized src0 in whole
 * 64-value units with word-aligned rows, packed src1 rows, a mat-vec batch. It
 * quantizes src1 to int8 blocks as the CPU does, so it must match the CPU to the
 * order of the block sums, and the exact reference only to the activations' rounding. */
static bool int8_path(const mm_p *p) {
    if (is_float(p->ta) || p->b_view == 2 || p->n >= 16 || p->k % 64 != 0) return false;
    size_t row = 0;
    return ct_row_size(p->ta, p->k, &row) == CT_OK && row % (p->ta == CT_TYPE_Q6_K ? 2 : 4) == 0;
}

/* Whether the case may run on the tensor cores, which round src1 to 16 bits (F16 for an F16
 * src0, else BF16, and a quantized src0's values to BF16): an F16 or BF16 src0 from 2
 * columns, a quantized one from CT_OCL_MM_MIN_NE11 (the encoder's plan may still pick the
 * fp32 kernels); never an F32 src0, transposed src1 (the row kernel) or k = 4 (c4). */
static bool tc_path(const mm_p *p) {
    if (!ocl_mma || p->ta == CT_TYPE_F32 || p->b_view == 2 || (is_float(p->ta) && p->k == 4)) return false;
    return is_float(p->ta) ? p->n >= 2 : p->n >= CT_OCL_MM_MIN_NE11;
}

static void mm_case(const mm_p *p) {
    char name[160];
    snprintf(name, sizeof name, "MUL_MAT %s m=%lld n=%lld k=%lld bs=[%d,%d] nr=[%d,%d]%s%s",
             ct_type_name(p->ta), (long long)p->m, (long long)p->n, (long long)p->k, p->bs0, p->bs1, p->nr0, p->nr1,
             p->a_perm ? " a permuted" : "", p->b_view == 1 ? " b strided rows" : p->b_view == 2 ? " b transposed" : "");
    const bool i8 = int8_path(p);
    /* the 8-bit path and the tensor cores match the exact reference to their rounding of src1 */
    compare_case(name, build_mm, p, -1.0f, 1.0f, i8 ? 1e-10 : 5e-4, ref_mm, i8 || tc_path(p) ? 5e-4 : 1e-9,
                 &worst_cpu_mm, &worst_ref_mm);
}

static void test_mul_mat(void) {
    for (size_t t = 0; t < N_MM_TYPES; t++) {
        const ct_type ta = mm_types[t];
        const int64_t blck = ct_type_block_size(ta);
        const int64_t k = blck == 256 ? 512 : blck == 32 ? 160 : 67; /* floats: a tail group of 3 */
        /* mat-vec: n = 1..9 (two groups of src1 rows at 9), a partial group of src0 rows;
         * 32-value blocks also in whole 64-value units (the 8-bit path), n = 15 past its groups of 8 */
        for (int64_t n = 1; n <= 9; n += (n < 3 ? 1 : 3))
            mm_case(&(mm_p){ta, 29, n, k, 1, 1, 1, 1, false, 0});
        if (blck == 32) {
            for (int64_t n = 1; n <= 15; n += 7) mm_case(&(mm_p){ta, 29, n, 192, 1, 1, 1, 1, false, 0});
            /* the 8-bit path with broadcast batches, permuted src0 and strided src1 rows */
            mm_case(&(mm_p){ta, 7, 2, 192, 2, 3, 2, 1, true, 1});
            mm_case(&(mm_p){ta, 5, 3, 128, 3, 2, 1, 2, false, 0});
        }
        /* broadcast batches, permuted src0, strided src1 rows */
        mm_case(&(mm_p){ta, 7, 2, k, 2, 3, 2, 1, true, 1});
        mm_case(&(mm_p){ta, 5, 3, k, 3, 2, 1, 2, false, 0});
        /* one-row kernel: src1 transposed */
        mm_case(&(mm_p){ta, 6, 3, k, 2, 1, 2, 1, false, 2});
        /* tiled kernel: partial tiles in both directions, batches, strided src1 rows */
        mm_case(&(mm_p){ta, 70, 67, k, 1, 1, 1, 1, false, 0});
        mm_case(&(mm_p){ta, 9, 16, k, 2, 1, 2, 1, true, 1});
        if (is_float(ta)) {
            /* c4: ne00 == 4, more rows than one work-group, n not a multiple of 4 */
            mm_case(&(mm_p){ta, 70, 5, 4, 3, 2, 2, 2, false, 0});
            mm_case(&(mm_p){ta, 3, 1, 4, 1, 1, 1, 1, true, 1});
            /* short rows on every path */
            mm_case(&(mm_p){ta, 5, 2, 1, 1, 1, 1, 1, false, 0});
            mm_case(&(mm_p){ta, 5, 20, 9, 1, 1, 1, 1, false, 0});
        }
    }
    /* k = 0: zeros */
    mm_case(&(mm_p){CT_TYPE_F32, 5, 3, 0, 1, 1, 1, 1, false, 0});
    mm_case(&(mm_p){CT_TYPE_Q4_0, 5, 20, 0, 1, 1, 1, 1, false, 0});
    mm_case(&(mm_p){CT_TYPE_Q4_0, 5, 3, 0, 1, 1, 1, 1, false, 0}); /* a mat-vec batch: not the 8-bit path */
    /* the 8-bit path's staging: rows of one full 32-unit chunk and a partial one, 9 rows
     * (two work-groups, a partial pair); K-quants of 11 super-blocks, so that Q6_K rows
     * alternate between 4- and 2-byte aligned starts. n = 4 and 9 take the kernels that
     * stage y as well (a full and a partial group of src1 rows), so the y stage is
     * refilled between chunks. */
    for (size_t t = 0; t < N_MM_TYPES; t++) {
        const ct_type ta = mm_types[t];
        if (is_float(ta)) continue;
        const int64_t k = ct_type_block_size(ta) == 256 ? 256 * 11 : 64 * 37;
        const int64_t ns[] = {1, 3, 4, 9};
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) mm_case(&(mm_p){ta, 9, ns[i], k, 1, 1, 1, 1, false, 0});
    }
    /* decode-like: long quantized rows, several rows per group, n = 1 and 4 */
    mm_case(&(mm_p){CT_TYPE_Q4_0, 64, 1, 4096, 1, 1, 1, 1, false, 0});
    mm_case(&(mm_p){CT_TYPE_Q4_K, 33, 4, 4096, 1, 1, 1, 1, false, 0});
    mm_case(&(mm_p){CT_TYPE_F16, 40, 1, 8192, 1, 1, 1, 1, false, 0});
}

/* src1 = one-hot columns: every output is one dequantized src0 value, which must
 * equal ct_dequantize_row's bit for bit (up to the sign of zero). */
typedef struct onehot_p {
    mm_p mm;
    int32_t col[256]; /* column c of src1 picks k = col[c] */
    float *bdata;     /* the src1 root's values, 2*k*n floats (enough for every b_view) */
} onehot_p;

static ct_tensor *build_onehot(ct_context *ctx, const void *param, gcase *g) {
    const onehot_p *p = param;
    const int64_t k = p->mm.k, n = p->mm.n;
    memset(p->bdata, 0, (size_t)(2 * k * n) * sizeof(float));
    for (int64_t c = 0; c < n; c++) {
        const int64_t j = p->col[c];
        if (p->mm.b_view == 0) p->bdata[c * k + j] = 1.0f;
        else if (p->mm.b_view == 1) p->bdata[c * 2 * k + 1 + j] = 1.0f;
        else p->bdata[j * n + c] = 1.0f;
    }
    return build_mm_with(ctx, &p->mm, g, p->bdata);
}

static void test_onehot(void) {
    for (size_t t = 0; t < N_MM_TYPES; t++) {
        const ct_type ta = mm_types[t];
        const int64_t blck = ct_type_block_size(ta);
        const int64_t k = blck == 256 ? 256 : blck == 32 ? 64 : 4;
        /* mat-vec (n = 8), one-row (transposed src1), tiled (n = 64); c4 for the float types (k = 4) */
        const int variants[3][2] = {{8, 0}, {5, 2}, {64, 1}};
        for (int v = 0; v < 3; v++) {
            onehot_p p = {.mm = {ta, 5, variants[v][0], k, 1, 1, 1, 1, false, variants[v][1]}};
            for (int c = 0; c < 256; c++) p.col[c] = (int32_t)tu_rand_below(k);
            p.bdata = malloc((size_t)(2 * k * p.mm.n) * sizeof(float));
            CHECK(p.bdata != NULL);
            if (!p.bdata) continue;
            uint8_t *data[MAX_FILL] = {NULL};
            run r;
            n_cases++;
            char name[96];
            snprintf(name, sizeof name, "one-hot MUL_MAT %s n=%lld b_view %d", ct_type_name(ta), (long long)p.mm.n,
                     p.mm.b_view);
            if (!run_on(ocl_be, build_onehot, &p, data, -1.0f, 1.0f, &r)) {
                CHECK_MSG(false, "%s: setting up the graph failed: %s", name, ct_last_error());
                for (int i = 0; i < MAX_FILL; i++) free(data[i]);
                free(p.bdata);
                continue;
            }
            CHECK_MSG(r.status == CT_OK, "%s: %s", name, ct_last_error());
            /* the 8-bit path rounds the one-hot src1 blocks (d = 1/127, q = 127) as the CPU does,
             * and every output is that one block's term: equal to the portable CPU kernels'; the
             * tensor cores take a quantized src0's value rounded to BF16 (1 is exact in 16 bits) */
            const bool i8 = int8_path(&p.mm), tc = tc_path(&p.mm);
            run rc = {0};
            ct_cpu_mul_mat_max_simd(CT_CPU_SIMD_PORTABLE); /* the SIMD kernels multiply in another order */
            const bool ok_cpu = i8 && run_on(cpu_be, build_onehot, &p, data, -1.0f, 1.0f, &rc);
            ct_cpu_mul_mat_max_simd(CT_CPU_SIMD_AVX512);
            CHECK_MSG(!i8 || (ok_cpu && rc.status == CT_OK), "%s: CPU: %s", name, ct_last_error());
            float *deq = malloc((size_t)(k * p.mm.m) * sizeof(float));
            size_t bad = 0, first = 0;
            if (deq && ct_dequantize_row(ta, data[0], deq, k * p.mm.m) == CT_OK && (!i8 || ok_cpu)) {
                for (int64_t c = 0; c < p.mm.n; c++)
                    for (int64_t i0 = 0; i0 < p.mm.m; i0++) {
                        const float want = i8 ? rc.res[c * p.mm.m + i0] : deq[i0 * k + p.col[c]];
                        const float got = r.res[c * p.mm.m + i0];
                        const bool tc_ok = tc && ct_bf16_to_fp32(ct_fp32_to_bf16(want)) == got;
                        if (!(want == got || tc_ok || (isnan(want) && isnan(got)))) {
                            if (!bad) first = (size_t)(c * p.mm.m + i0);
                            bad++;
                        }
                    }
            } else {
                bad = 1;
            }
            CHECK_MSG(bad == 0, "%s: %zu values differ from the %s, first at %zu", name, bad,
                      i8 ? "CPU's" : "dequantized src0", first);
            if (ok_cpu) run_free(&rc);
            free(deq);
            run_free(&r);
            for (int i = 0; i < MAX_FILL; i++) free(data[i]);
            free(p.bdata);
        }
    }
}

/* The 8-bit path on src1 blocks the quantizer treats specially: a NaN (the row is NaN),
 * infinities of both signs, zeros, values below 2^-64 (scaled up; subnormals too), and
 * exact rounding ties (amax 127, so q = x): OpenCL must match the CPU's portable
 * kernels (its expression per block) position by position (NaN for NaN, the same
 * infinity), finite values to 1e-10 NMSE per row. */
static void test_int8_specials(void) {
    static const ct_type types[] = {CT_TYPE_Q4_0, CT_TYPE_Q8_0, CT_TYPE_Q5_1, CT_TYPE_Q6_K};
    enum { K = 256, N = 6, M = 9 };
    static float b[N * K];
    for (int i = 0; i < N * K; i++) b[i] = tu_rand_uniform(-1.0f, 1.0f);
    b[1 * K + 5] = NAN;                                        /* row 1: NaN in block 0 */
    b[2 * K + 40] = INFINITY, b[2 * K + 41] = -INFINITY;       /* row 2: +-inf in block 1 */
    for (int i = 0; i < K; i++) b[3 * K + i] = 0.0f;           /* row 3: zeros */
    for (int i = 0; i < K; i++) /* row 4: tiny: block 0 all subnormal, then below 2^-64 with subnormals */
        b[4 * K + i] = (i < 32 || i % 3 ? 1e-40f : -3e-21f) * (float)(1 + i % 7);
    for (int i = 0; i < K; i++) b[5 * K + i] = (float)(i % 8) - 3.5f; /* row 5: halves ... */
    for (int i = 0; i < K; i += 32) b[5 * K + i] = 127.0f;      /* ... with amax 127: ties */
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const mm_p p = {types[t], M, N, K, 1, 1, 1, 1, false, 0};
        char name[96];
        snprintf(name, sizeof name, "MUL_MAT %s special src1 blocks", ct_type_name(p.ta));
        CHECK_MSG(int8_path(&p), "%s: not on the 8-bit path", name);
        uint8_t *data[MAX_FILL] = {NULL};
        run ro, rc;
        n_cases++;
        const bool ok_o = run_on(ocl_be, build_mm_fixed_b, &(mm_fixed_b){&p, b}, data, -1.0f, 1.0f, &ro);
        ct_cpu_mul_mat_max_simd(CT_CPU_SIMD_PORTABLE); /* the SIMD kernels give NaN for the inf block: inf * 0 lanes */
        const bool ok_c = ok_o && run_on(cpu_be, build_mm_fixed_b, &(mm_fixed_b){&p, b}, data, -1.0f, 1.0f, &rc);
        ct_cpu_mul_mat_max_simd(CT_CPU_SIMD_AVX512);
        CHECK_MSG(ok_o && ok_c, "%s: setting up the graph failed: %s", name, ct_last_error());
        if (ok_o && ok_c) {
            CHECK_MSG(ro.status == CT_OK && rc.status == CT_OK, "%s: %s", name, ct_last_error());
            for (int c = 0; c < N; c++) {
                double num = 0.0, den = 0.0;
                int mismatch = 0;
                for (int i = 0; i < M; i++) {
                    const float o = ro.res[c * M + i], w = rc.res[c * M + i];
                    if (isnan(o) || isnan(w) || isinf(o) || isinf(w)) {
                        mismatch += !((isnan(o) && isnan(w)) || o == w);
                        continue;
                    }
                    num += ((double)o - w) * ((double)o - w);
                    den += (double)w * w;
                }
                const double e = den > 0.0 ? num / den : num;
                CHECK_MSG(mismatch == 0 && e <= 1e-10, "%s: src1 row %d: %d NaN/inf mismatches, NMSE %.3g", name, c,
                          mismatch, e);
            }
        }
        if (ok_o) run_free(&ro);
        if (ok_c) run_free(&rc);
        for (int i = 0; i < MAX_FILL; i++) free(data[i]);
    }
}

static ct_tensor *build_mm_plain(ct_context *ctx, ct_type ta, ct_type tb) {
    ct_tensor *a = ct_tensor_new_2d(ctx, ta, 256, 4);
    ct_tensor *b = ct_tensor_new_2d(ctx, tb, 256, 2);
    return a && b ? ct_mul_mat(ctx, a, b) : NULL;
}

/* What supports_op refuses, and that compute refuses it too. */
static void test_refused(void) {
    ct_context_params cp = {.mem_size = 64 * ct_tensor_overhead() + ct_graph_overhead(8), .no_alloc = true};
    ct_context *ctx = ct_context_new(cp);
    CHECK(ctx != NULL);
    if (!ctx) return;
    static const ct_type no_kernel[] = {CT_TYPE_IQ2_XXS, CT_TYPE_IQ3_S, CT_TYPE_IQ1_M};
    for (size_t i = 0; i < sizeof no_kernel / sizeof no_kernel[0]; i++) {
        ct_tensor *mm = build_mm_plain(ctx, no_kernel[i], CT_TYPE_F32);
        if (mm) CHECK_MSG(!ct_device_supports_op(ocl_dev, mm), "MUL_MAT %s x f32", ct_type_name(no_kernel[i]));
    }
    ct_tensor *mm16 = build_mm_plain(ctx, CT_TYPE_F16, CT_TYPE_BF16);
    if (mm16) CHECK(!ct_device_supports_op(ocl_dev, mm16));

    /* an F32 src1 view starting 2 bytes into its buffer: the kernels' float loads need 4 */
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 8, 3);
    ct_tensor *root = ct_tensor_new_1d(ctx, CT_TYPE_F32, 64);
    ct_tensor *bv = a && root ? ct_view_2d(ctx, root, 8, 2, 8 * sizeof(float), 2) : NULL;
    ct_tensor *mmv = bv ? ct_mul_mat(ctx, a, bv) : NULL;
    if (mmv) CHECK(!ct_device_supports_op(ocl_dev, mmv));

    /* compute refuses an unsupported node with CT_UNSUPPORTED */
    ct_tensor *q2 = ct_tensor_new_2d(ctx, CT_TYPE_IQ2_XXS, 256, 4), *y = ct_tensor_new_2d(ctx, CT_TYPE_F32, 256, 2);
    ct_tensor *mq = q2 && y ? ct_mul_mat(ctx, q2, y) : NULL;
    ct_graph *graph = ct_graph_new(ctx, 8);
    ct_buffer *buf = NULL;
    if (mq && graph && ct_graph_build_forward(graph, mq) == CT_OK &&
        ct_context_alloc_tensors(ctx, ct_backend_buffer_type(ocl_be), &buf) == CT_OK) {
        CHECK(ct_backend_graph_compute(ocl_be, graph) == CT_UNSUPPORTED);
        CHECK_ERROR(CT_UNSUPPORTED, "MUL_MAT");
    } else {
        CHECK_MSG(false, "setting up the unsupported graph failed: %s", ct_last_error());
    }
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* ---- norms ------------------------------------------------------------------------- */

typedef struct norm_p {
    ct_op op;
    int64_t ne[4];
    int view; /* 0 packed, 1 rows of a wider tensor (strided rows), 2 permuted (nb00 != 4) */
    float eps;
    int n_groups;
} norm_p;

static ct_tensor *build_norm(ct_context *ctx, const void *param, gcase *g) {
    const norm_p *p = param;
    ct_tensor *a;
    if (p->view == 1) {
        ct_tensor *root = ct_tensor_new_4d(ctx, CT_TYPE_F32, p->ne[0] + 3, p->ne[1], p->ne[2], p->ne[3]);
        if (!root) return NULL;
        add_fill(g, root, NULL);
        a = ct_view_4d(ctx, root, p->ne[0], p->ne[1], p->ne[2], p->ne[3], root->nb[1], root->nb[2], root->nb[3],
                       2 * sizeof(float));
    } else if (p->view == 2) {
        ct_tensor *root = ct_tensor_new_4d(ctx, CT_TYPE_F32, p->ne[1], p->ne[0], p->ne[2], p->ne[3]);
        if (!root) return NULL;
        add_fill(g, root, NULL);
        a = ct_transpose(ctx, root);
    } else {
        a = ct_tensor_new_4d(ctx, CT_TYPE_F32, p->ne[0], p->ne[1], p->ne[2], p->ne[3]);
        if (a) add_fill(g, a, NULL);
    }
    if (!a) return NULL;
    g->a = a;
    switch (p->op) {
    case CT_OP_NORM: return ct_norm(ctx, a, p->eps);
    case CT_OP_RMS_NORM: return ct_rms_norm(ctx, a, p->eps);
    case CT_OP_L2_NORM: return ct_l2_norm(ctx, a, p->eps);
    case CT_OP_GROUP_NORM: return ct_group_norm(ctx, a, p->n_groups, p->eps);
    case CT_OP_SUM_ROWS: return ct_sum_rows(ctx, a);
    case CT_OP_MEAN: return ct_mean(ctx, a);
    default: return NULL;
    }
}

static void norm_case(const norm_p *p, float lo, float hi) {
    char name[128];
    snprintf(name, sizeof name, "%s ne=[%lld,%lld,%lld,%lld] view %d eps %g groups %d", ct_op_name(p->op),
             (long long)p->ne[0], (long long)p->ne[1], (long long)p->ne[2], (long long)p->ne[3], p->view,
             (double)p->eps, p->n_groups);
    compare_case(name, build_norm, p, lo, hi, 1e-7, NULL, 0.0, &worst_cpu_norm, NULL);
}

static void test_norms(void) {
    static const ct_op row_ops[] = {CT_OP_NORM, CT_OP_RMS_NORM, CT_OP_L2_NORM, CT_OP_SUM_ROWS, CT_OP_MEAN};
    /* 8192: the longest row the norms keep in registers at 256 work-items; 8196: one float4
     * more, read again by each pass; 4097: no float4 path */
    static const int64_t shapes[][4] = {{64, 5, 4, 3}, {1, 7, 1, 1}, {7, 3, 2, 1}, {300, 3, 1, 2}, {8192, 3, 1, 1},
                                        {8196, 2, 1, 1}, {4097, 2, 1, 1}};
    for (size_t o = 0; o < sizeof row_ops / sizeof row_ops[0]; o++) {
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int view = 0; view < 3; view++) {
                if (view == 2 && shapes[s][0] > 300) continue; /* permuted long rows: slow, nothing new */
                norm_p p = {row_ops[o], {shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]}, view, 1e-5f, 0};
                norm_case(&p, row_ops[o] == CT_OP_RMS_NORM ? -10.0f : -1.0f, row_ops[o] == CT_OP_RMS_NORM ? 10.0f : 1.0f);
            }
    }
    /* eps 0; L2_NORM where sqrt(sum x^2) < eps, so y = x / eps */
    norm_case(&(norm_p){CT_OP_NORM, {64, 5, 4, 3}, 0, 0.0f, 0}, -1.0f, 1.0f);
    norm_case(&(norm_p){CT_OP_L2_NORM, {16, 3, 1, 1}, 0, 1.0f, 0}, -1e-3f, 1e-3f);
    norm_case(&(norm_p){CT_OP_L2_NORM, {16, 3, 1, 1}, 0, 1e-12f, 0}, -1e-3f, 1e-3f);
    norm_case(&(norm_p){CT_OP_SUM_ROWS, {0, 3, 2, 1}, 0, 0.0f, 0}, -1.0f, 1.0f);
    /* GROUP_NORM: even groups, a truncated last group, more groups than channels, ne03 > 1, views */
    static const struct {
        int64_t ne[4];
        int groups, view;
    } gn[] = {
        {{9, 9, 64, 1}, 32, 0}, {{7, 5, 30, 3}, 4, 0}, {{3, 1, 7, 2}, 3, 0}, {{4, 4, 3, 1}, 5, 0},
        {{8, 8, 12, 2}, 5, 1},  {{6, 5, 9, 2}, 4, 2},  {{64, 64, 40, 1}, 8, 0},
    };
    for (size_t i = 0; i < sizeof gn / sizeof gn[0]; i++) {
        norm_p p = {CT_OP_GROUP_NORM, {gn[i].ne[0], gn[i].ne[1], gn[i].ne[2], gn[i].ne[3]}, gn[i].view, 1e-6f,
                    gn[i].groups};
        norm_case(&p, -1.0f, 1.0f);
    }
}

int main(void) {
    tu_init("test_opencl_math");
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
        ocl_mma = (ct_ocl_device_of(ocl_dev)->features & CT_OCL_FEAT_MMA) != 0;
        n_cases = 0;
        worst_cpu_mm = worst_ref_mm = worst_cpu_norm = 0.0;
        wild_scales = true;
        test_onehot();
        test_int8_specials();
        wild_scales = false;
        test_mul_mat();
        test_norms();
        test_refused();
        printf("%s: %d cases; worst NMSE: MUL_MAT vs CPU %.3g, vs host reference %.3g; norms and sums vs CPU %.3g\n",
               ct_device_name(ocl_dev), n_cases, worst_cpu_mm, worst_ref_mm, worst_cpu_norm);
        ct_backend_free(ocl_be);
        ocl_be = NULL;
    }
    CHECK_MSG(n_devices > 0, "CT_TEST_OPENCL_DEVICE=%s names no OpenCL device",
              getenv("CT_TEST_OPENCL_DEVICE") ? getenv("CT_TEST_OPENCL_DEVICE") : "");
    ct_backend_free(cpu_be);
    return tu_finish();
}

#endif

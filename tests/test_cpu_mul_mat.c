/* The CPU backend's MUL_MAT (src/cpu/mul_mat.c) called directly, against a
 * naive double-precision reference written here: src0 rows dequantized with
 * ct_dequantize_row, every element addressed through its strides. Each case
 * runs the AVX-512 and AVX2 kernels (where the CPU has them) and the portable
 * ones, and checks each against the reference (NMSE, docs/TESTING.md, How ct-ops test compares) and against each
 * other. Multi-thread runs go through the CPU thread pool. */
#include "testutil.h"

#include "cpu/cpu_ops.h"
#include "cpu/simd.h"
#include "cpu/threadpool.h"
#include "types/types_internal.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#if defined(__SANITIZE_ADDRESS__)
#  define UNDER_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define UNDER_ASAN 1
#  endif
#endif
#ifndef UNDER_ASAN
#  define UNDER_ASAN 0
#endif

static const ct_type all_types[] = {
    CT_TYPE_F32,  CT_TYPE_F16,  CT_TYPE_BF16,   CT_TYPE_Q8_0, CT_TYPE_Q4_0, CT_TYPE_Q4_1,
    CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_IQ4_NL, CT_TYPE_Q4_K, CT_TYPE_Q5_K, CT_TYPE_Q6_K,
    CT_TYPE_Q2_K, CT_TYPE_Q3_K, CT_TYPE_IQ4_XS,
};

/* Offset of a super-block's d (and dmin where it has one, 2 bytes after it) for the
 * types filled with random bytes. */
static size_t d_offset(ct_type t, bool *has_min) {
    *has_min = t == CT_TYPE_Q4_K || t == CT_TYPE_Q5_K || t == CT_TYPE_Q2_K;
    switch (t) {
    case CT_TYPE_Q6_K: return offsetof(block_q6_K, d);
    case CT_TYPE_Q2_K: return offsetof(block_q2_K, d);
    case CT_TYPE_Q3_K: return offsetof(block_q3_K, d);
    case CT_TYPE_IQ4_XS: return offsetof(block_iq4_xs, d);
    default: return offsetof(block_q4_K, d); /* Q4_K, Q5_K; 0 for the 32-blocks too */
    }
}

static bool is_float(ct_type t) { return t == CT_TYPE_F32 || t == CT_TYPE_F16 || t == CT_TYPE_BF16; }
/* src1 is quantized to int8 blocks for quantized src0 only; float src0 dots stay in float. */
static double max_nmse(ct_type t) { return is_float(t) ? 1e-10 : 5e-4; }

/* A tensor with its own storage. */
typedef struct tbuf {
    ct_tensor t;
    unsigned char *mem;
} tbuf;

/* Logical shape ne stored as ggml's test does for a permutation: created with
 * dims ne_s[per[i]] = ne[i] and permuted back. pad0 extra elements per stored
 * row (a view of a wider tensor); the data starts `misalign` bytes past an
 * aligned address. */
static bool make_tensor(tbuf *tb, ct_type type, const int64_t ne[4], const int per[4], int64_t pad0,
                        size_t misalign) {
    memset(tb, 0, sizeof *tb);
    int64_t ne_s[4];
    for (int i = 0; i < 4; i++) ne_s[per[i]] = ne[i];
    ne_s[0] += pad0;
    const int64_t blck = ct_type_block_size(type);
    size_t nb_s[4];
    nb_s[0] = ct_type_size(type);
    nb_s[1] = nb_s[0] * (size_t)(ne_s[0] / blck);
    for (int i = 2; i < 4; i++) nb_s[i] = nb_s[i - 1] * (size_t)ne_s[i - 1];
    const size_t size = nb_s[3] * (size_t)ne_s[3];
    tb->mem = malloc(size + misalign + 64);
    if (!tb->mem) return false;
    memset(tb->mem, 0, size + misalign + 64);
    tb->t.type = type;
    for (int i = 0; i < 4; i++) {
        tb->t.ne[i] = ne[i];
        tb->t.nb[i] = nb_s[per[i]];
    }
    /* mem from malloc is 16-aligned; misalign counts from there */
    tb->t.data = tb->mem + misalign;
    return true;
}

static char *row_ptr(const ct_tensor *t, int64_t i1, int64_t i2, int64_t i3) {
    return (char *)t->data + (size_t)i1 * t->nb[1] + (size_t)i2 * t->nb[2] + (size_t)i3 * t->nb[3];
}

static float get_f32(const ct_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    float v;
    memcpy(&v, row_ptr(t, i1, i2, i3) + (size_t)i0 * t->nb[0], sizeof v);
    return v;
}

static void set_f32(ct_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
    memcpy(row_ptr(t, i1, i2, i3) + (size_t)i0 * t->nb[0], &v, sizeof v);
}

/* Random src0 rows: quantized from uniform floats where the type layer can
 * quantize; K-quants get random bytes with finite, modest scales. */
static void fill_src0(ct_tensor *a) {
    const int64_t k = a->ne[0];
    float *tmp = malloc(sizeof(float) * (size_t)(k ? k : 1));
    size_t row_size = 0;
    CHECK(ct_row_size(a->type, k, &row_size) == CT_OK);
    unsigned char *qrow = malloc(row_size + 1);
    const size_t bs = ct_type_size(a->type);
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1]; i1++) {
                char *row = row_ptr(a, i1, i2, i3);
                if (ct_type_can_quantize(a->type)) {
                    /* quantized aligned, then copied: rows may sit at odd addresses */
                    tu_fill_uniform(tmp, (size_t)k, -1.0f, 1.0f);
                    CHECK(ct_quantize_row(a->type, tmp, qrow, k) == CT_OK);
                    memcpy(row, qrow, row_size);
                    continue;
                }
                tu_fill_bytes(row, row_size);
                for (size_t off = 0; off < row_size; off += bs) {
                    const ct_fp16 d = ct_fp32_to_fp16(tu_rand_uniform(-0.02f, 0.02f));
                    const ct_fp16 dmin = ct_fp32_to_fp16(tu_rand_uniform(-0.02f, 0.02f));
                    bool has_min;
                    const size_t at = d_offset(a->type, &has_min);
                    memcpy(row + off + at, &d, 2);
                    if (has_min) memcpy(row + off + at + 2, &dmin, 2);
                }
            }
    free(qrow);
    free(tmp);
}

static void fill_src1(ct_tensor *b, float scale) {
    for (int64_t i3 = 0; i3 < b->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < b->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < b->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < b->ne[0]; i0++)
                    set_f32(b, i0, i1, i2, i3, tu_rand_uniform(-1.0f, 1.0f) * scale);
}

/* dst[i0,i1,i2,i3] in double, row-major over dst's logical shape; and in
 * bound, the most any element may be off: the int8 conversion of src1 moves
 * each b value by at most half a step (amax/254 of its 32-block, or of its
 * 256 values for the types whose blocks share a scale: ct_qy_group), and float
 * accumulation adds at most (k/8 + 8) roundings of sum |a*b|. */
static double *reference(const ct_tensor *a, const ct_tensor *b, double **bound, double **rbound) {
    const int64_t k = a->ne[0], m = a->ne[1];
    const int64_t n1 = b->ne[1], n2 = b->ne[2], n3 = b->ne[3];
    const int64_t r2 = n2 / a->ne[2], r3 = n3 / a->ne[3];
    const size_t total = (size_t)(m * n1 * n2 * n3 + 1);
    double *ref = malloc(sizeof(double) * total);
    double *bnd = malloc(sizeof(double) * total);
    double *rbnd = malloc(sizeof(double) * total);
    float *arow = malloc(sizeof(float) * (size_t)(k + 1));
    double *step = malloc(sizeof(double) * (size_t)(k + 1));
    const bool quant = !is_float(a->type);
    const int64_t gl = 32 * (int64_t)ct_qy_group(a->type); /* values sharing one int8 scale */
    for (int64_t i3 = 0; i3 < n3; i3++)
        for (int64_t i2 = 0; i2 < n2; i2++)
            for (int64_t i1 = 0; i1 < n1; i1++) {
                for (int64_t kk = 0; kk < k; kk += gl) {
                    double amax = 0.0;
                    for (int64_t j = kk; j < kk + gl && j < k; j++) amax = fmax(amax, fabs(get_f32(b, j, i1, i2, i3)));
                    for (int64_t j = kk; j < kk + gl && j < k; j++) step[j] = quant ? amax / 254.0 : 0.0;
                }
                for (int64_t i0 = 0; i0 < m; i0++) {
                    CHECK(ct_dequantize_row(a->type, row_ptr(a, i0, i2 / r2, i3 / r3), arow, k) == CT_OK);
                    double s = 0.0, sabs = 0.0, serr = 0.0;
                    for (int64_t kk = 0; kk < k; kk++) {
                        const double x = arow[kk], y = get_f32(b, kk, i1, i2, i3);
                        s += x * y;
                        sabs += fabs(x * y);
                        serr += fabs(x) * step[kk];
                    }
                    const size_t o = (size_t)(((i3 * n2 + i2) * n1 + i1) * m + i0);
                    ref[o] = s;
                    rbnd[o] = (sabs + serr) * (double)(k / 8 + 8) * 0x1p-23;
                    bnd[o] = serr * 1.0001 + rbnd[o];
                }
            }
    free(step);
    free(arow);
    *bound = bnd;
    *rbound = rbnd;
    return ref;
}

/* Elements outside their bound (NaN counts as outside). */
static int64_t out_of_bound(const ct_tensor *dst, const double *ref, const double *bound) {
    const int64_t n = dst->ne[0] * dst->ne[1] * dst->ne[2] * dst->ne[3];
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += !(fabs(((const float *)dst->data)[i] - ref[i]) <= bound[i]);
    return bad;
}

/* The SIMD and portable kernels see the same converted src1, so they may
 * differ by float rounding only: twice the rounding bound. */
static int64_t cross_out_of_bound(const float *x, const float *y, const double *rbound, int64_t n) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += !(fabs((double)x[i] - y[i]) <= 2.0 * rbound[i]);
    return bad;
}

static void init_dst(tbuf *d, ct_tensor *a, ct_tensor *b) {
    const int64_t ne[4] = {a->ne[1], b->ne[1], b->ne[2], b->ne[3]};
    const int per[4] = {0, 1, 2, 3};
    CHECK(make_tensor(d, CT_TYPE_F32, ne, per, 0, 0));
    d->t.op = CT_OP_MUL_MAT;
    d->t.src[0] = a;
    d->t.src[1] = b;
    /* NaN everywhere, so an element the kernel forgets shows */
    for (int64_t i = 0; i < ne[0] * ne[1] * ne[2] * ne[3]; i++) ((float *)d->t.data)[i] = NAN;
}

/* Runs on one thread, no pool, as the backend does with n_threads = 1. */
static void run_direct(ct_tensor *dst, ct_cpu_simd simd) {
    ct_cpu_mul_mat_max_simd(simd);
    const size_t ws = ct_cpu_mul_mat_work_size(dst, 1);
    void *w = ws ? aligned_alloc(64, (ws + 63) / 64 * 64) : NULL;
    ct_cpu_params p = {.ith = 0, .nth = 1, .wdata = w, .wsize = ws, .pool = NULL};
    ct_clear_error();
    ct_cpu_mul_mat(&p, dst);
    CHECK_MSG(ct_last_status() == CT_OK, "%s", ct_last_error());
    free(w);
    ct_cpu_mul_mat_max_simd(CT_CPU_SIMD_AVX512);
}

typedef struct pool_job {
    ct_tensor *dst;
    void *wdata;
    size_t wsize;
} pool_job;

static void pool_fn(ct_cpu_threadpool *pool, int ith, void *arg) {
    pool_job *job = arg;
    ct_cpu_params p = {.ith = ith, .nth = ct_cpu_threadpool_n_threads(pool), .wdata = job->wdata,
                       .wsize = job->wsize, .pool = pool};
    ct_cpu_mul_mat(&p, job->dst);
}

static void run_pool(ct_cpu_threadpool *pool, ct_tensor *dst) {
    pool_job job = {dst, NULL, ct_cpu_mul_mat_work_size(dst, ct_cpu_threadpool_n_threads(pool))};
    job.wdata = job.wsize ? aligned_alloc(64, (job.wsize + 63) / 64 * 64) : NULL;
    ct_cpu_threadpool_run(pool, pool_fn, &job);
    ct_status st;
    const char *msg;
    CHECK_MSG(ct_cpu_threadpool_error(pool, &st, &msg) < 0, "%s", msg);
    free(job.wdata);
}

/* NMSE of dst against ref, as docs/TESTING.md, How ct-ops test compares (but against the exact reference). */
static double nmse(const ct_tensor *dst, const double *ref) {
    const int64_t n = dst->ne[0] * dst->ne[1] * dst->ne[2] * dst->ne[3];
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double v = ((const float *)dst->data)[i];
        if (!isfinite(v)) return INFINITY;
        num += (v - ref[i]) * (v - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? num / den : num;
}

static double nmse_f(const float *x, const float *y, int64_t n) {
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < n; i++) {
        num += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
        den += (double)y[i] * y[i];
    }
    return den > 0 ? num / den : num;
}

typedef struct mm_case {
    ct_type type;
    int64_t m, n, k;
    int64_t bs[2], nr[2];
    int per_a[4], per_b[4];
    bool v;          /* src1 a view of a tensor with 2k columns */
    size_t mis_a, mis_b;
    float scale_b;
} mm_case;

static ct_cpu_threadpool *g_pool;
static double g_worst[CT_TYPE_COUNT];

static void run_case(const mm_case *c) {
    tbuf a, b, d;
    const int64_t ne_a[4] = {c->k, c->m, c->bs[0], c->bs[1]};
    const int64_t ne_b[4] = {c->k, c->n, c->bs[0] * c->nr[0], c->bs[1] * c->nr[1]};
    if (!make_tensor(&a, c->type, ne_a, c->per_a, 0, c->mis_a) ||
        !make_tensor(&b, CT_TYPE_F32, ne_b, c->per_b, c->v ? c->k : 0, c->mis_b)) {
        CHECK(!"out of memory");
        free(a.mem);
        return;
    }
    fill_src0(&a.t);
    fill_src1(&b.t, c->scale_b);
    init_dst(&d, &a.t, &b.t);
    ct_tensor *dst = &d.t;
    CHECK(ct_cpu_mul_mat_supported(dst));
    double *bound, *rbound;
    double *ref = reference(&a.t, &b.t, &bound, &rbound);
    const int64_t total = dst->ne[0] * dst->ne[1] * dst->ne[2] * dst->ne[3];
    float *fast = malloc(sizeof(float) * (size_t)(total + 1));
    float *avx2 = malloc(sizeof(float) * (size_t)(total + 1));

    /* the best path (AVX-512 where the CPU has it), the AVX2 one, the portable one */
    run_direct(dst, CT_CPU_SIMD_AVX512);
    const double e_fast = nmse(dst, ref);
    int64_t nbad = out_of_bound(dst, ref, bound);
    memcpy(fast, dst->data, sizeof(float) * (size_t)total);
    for (int64_t i = 0; i < total; i++) ((float *)dst->data)[i] = NAN;
    run_direct(dst, CT_CPU_SIMD_AVX2);
    const double e_avx2 = nmse(dst, ref);
    nbad += out_of_bound(dst, ref, bound);
    memcpy(avx2, dst->data, sizeof(float) * (size_t)total);
    for (int64_t i = 0; i < total; i++) ((float *)dst->data)[i] = NAN;
    run_direct(dst, CT_CPU_SIMD_PORTABLE);
    const double e_port = nmse(dst, ref);
    nbad += out_of_bound(dst, ref, bound);
    double e_cross = 0.0;
    if (total >= 16) {
        const double e1 = nmse_f(fast, dst->data, total), e2 = nmse_f(avx2, dst->data, total);
        e_cross = e1 > e2 ? e1 : e2;
    }
    nbad += cross_out_of_bound(fast, dst->data, rbound, total);
    nbad += cross_out_of_bound(avx2, dst->data, rbound, total);
    double e_pool = 0.0;
    if (g_pool) {
        for (int64_t i = 0; i < total; i++) ((float *)dst->data)[i] = NAN;
        run_pool(g_pool, dst);
        /* the thread split does not change any element's arithmetic */
        e_pool = memcmp(fast, dst->data, sizeof(float) * (size_t)total) == 0 ? 0.0 : 1.0;
    }
    /* the NMSE of one or two elements says little (one small dot can be far off
     * relatively): the suite's limit applies from 16 outputs on, the bound to all */
    const double lim = total >= 16 ? max_nmse(c->type) : INFINITY;
    CHECK_MSG(e_fast <= lim && e_avx2 <= lim && e_port <= lim && e_cross <= 1e-9 && e_pool == 0.0 && nbad == 0,
              "%s m=%lld n=%lld k=%lld bs={%lld,%lld} nr={%lld,%lld} per_a={%d,%d,%d,%d} per_b={%d,%d,%d,%d} v=%d: "
              "nmse fast %.3g avx2 %.3g portable %.3g simd-vs-portable %.3g threads-differ %g, %lld outside the bound",
              ct_type_name(c->type), (long long)c->m, (long long)c->n, (long long)c->k, (long long)c->bs[0],
              (long long)c->bs[1], (long long)c->nr[0], (long long)c->nr[1], c->per_a[0], c->per_a[1], c->per_a[2],
              c->per_a[3], c->per_b[0], c->per_b[1], c->per_b[2], c->per_b[3], (int)c->v, e_fast, e_avx2, e_port, e_cross,
              e_pool, (long long)nbad);
    if (total >= 16 && e_fast > g_worst[c->type]) g_worst[c->type] = e_fast;
    if (total >= 16 && e_avx2 > g_worst[c->type]) g_worst[c->type] = e_avx2;
    if (total >= 16 && e_port > g_worst[c->type]) g_worst[c->type] = e_port;
    free(fast);
    free(avx2);
    free(bound);
    free(rbound);
    free(ref);
    free(a.mem);
    free(b.mem);
    free(d.mem);
}

static mm_case base_case(ct_type t, int64_t m, int64_t n, int64_t k) {
    mm_case c = {t, m, n, k, {1, 1}, {1, 1}, {0, 1, 2, 3}, {0, 1, 2, 3}, false, 0, 0, 1.0f};
    return c;
}

static void test_shapes(void) {
    for (size_t ti = 0; ti < CT_ARRAY_LEN(all_types); ti++) {
        const ct_type t = all_types[ti];
        const int64_t blck = ct_type_block_size(t);
        const int64_t ks[3] = {is_float(t) ? 5 : blck, 256, 1024 + blck};
        const int64_t ms[3] = {1, 7, 33};
        const int64_t ns[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16};
        for (int ki = 0; ki < 3; ki++)
            for (int mi = 0; mi < 3; mi++)
                for (int ni = 0; ni < 10; ni++) {
                    if (ki != 1 && ni % 3 != 0) continue; /* every n at k = 256; some at the other k */
                    mm_case c = base_case(t, ms[mi], ns[ni], ks[ki]);
                    run_case(&c);
                }
    }
}

/* Long k (over several 1024-element chunks of the batched float path), with
 * b-row counts that leave partial groups of 4 and tiles of 16. */
static void test_long_k(void) {
    static const int64_t ns[] = {2, 3, 5, 8, 13, 21};
    for (size_t ti = 0; ti < CT_ARRAY_LEN(all_types); ti++) {
        const ct_type t = all_types[ti];
        const int64_t k = is_float(t) ? 2 * 1024 + 7 : 2 * 4096 + 256;
        for (size_t ni = 0; ni < CT_ARRAY_LEN(ns); ni++) {
            mm_case c = base_case(t, ni % 2 ? 9 : 2, ns[ni], k);
            if (ni == 2) c.bs[0] = 2, c.nr[0] = 2; /* groups cut where the a matrix changes */
            if (ni == 4) c.v = true;
            run_case(&c);
        }
    }
}

static void test_broadcast_permute(void) {
    static const int64_t bsnr[][4] = {{1, 1, 2, 1}, {1, 1, 1, 2}, {3, 1, 1, 1}, {3, 1, 2, 1},
                                      {3, 2, 1, 1}, {3, 2, 2, 1}, {3, 2, 1, 2}, {3, 2, 2, 2}};
    static const int pers[][4] = {{0, 2, 1, 3}, {0, 1, 3, 2}, {0, 3, 2, 1}};
    for (size_t ti = 0; ti < CT_ARRAY_LEN(all_types); ti++) {
        const ct_type t = all_types[ti];
        const int64_t k = 256;
        for (size_t i = 0; i < CT_ARRAY_LEN(bsnr); i++) {
            const int64_t n = i % 2 ? 1 : 16;
            mm_case c = base_case(t, 7, n, k);
            c.bs[0] = bsnr[i][0], c.bs[1] = bsnr[i][1], c.nr[0] = bsnr[i][2], c.nr[1] = bsnr[i][3];
            run_case(&c);
        }
        for (size_t i = 0; i < CT_ARRAY_LEN(pers); i++) {
            const int64_t ns[3] = {1, 8, 16};
            for (int ni = 0; ni < 3; ni++) {
                mm_case c = base_case(t, 9, ns[ni], k);
                c.bs[0] = 2, c.bs[1] = 3;
                memcpy(c.per_a, pers[i], sizeof c.per_a);
                memcpy(c.per_b, pers[i], sizeof c.per_b);
                run_case(&c);
            }
        }
        /* src1 a view with strided rows; src1 transposed (dim 0 not packed);
         * unaligned data; one-element dims; tiny src1 (below 2^-64) */
        mm_case c = base_case(t, 5, 3, 256);
        c.v = true;
        c.bs[0] = 2, c.nr[1] = 2;
        run_case(&c);
        c = base_case(t, 4, 6, 256);
        c.per_b[0] = 1, c.per_b[1] = 0;
        run_case(&c);
        c = base_case(t, 6, 5, 256);
        c.mis_a = 3, c.mis_b = 2;
        run_case(&c);
        c = base_case(t, 1, 1, ct_type_block_size(t));
        run_case(&c);
        c = base_case(t, 3, 2, 512);
        c.scale_b = 1e-30f;
        run_case(&c);
    }
    /* F16 specials of the reference suite (docs/TESTING.md, Case lists: MUL_MAT group 4) */
    mm_case c = base_case(CT_TYPE_F16, 83, 2, 64);
    c.bs[0] = 8, c.nr[0] = 4;
    run_case(&c);
    c = base_case(CT_TYPE_F16, 1056, 1, 67);
    c.nr[0] = 4;
    c.per_a[1] = 2, c.per_a[2] = 1, c.per_b[1] = 2, c.per_b[2] = 1;
    run_case(&c);
    c = base_case(CT_TYPE_F16, 129, 1, 1057);
    c.bs[0] = 2, c.nr[0] = 4, c.v = true;
    run_case(&c);
}

/* Non-finite inputs reach the output: a NaN or inf in src1 column j makes
 * dst[:, j] non-finite; a NaN scale in src0 row i makes dst[i, :] non-finite;
 * everything else stays finite and correct. */
static void test_nonfinite(void) {
    static const float bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t ti = 0; ti < CT_ARRAY_LEN(all_types); ti++) {
        const ct_type t = all_types[ti];
        for (size_t bi = 0; bi < CT_ARRAY_LEN(bad); bi++) {
            for (int simd = CT_CPU_SIMD_PORTABLE; simd <= CT_CPU_SIMD_AVX512; simd++) {
                tbuf a, b, d;
                const int64_t k = 512, m = 5, n = 4;
                const int64_t ne_a[4] = {k, m, 1, 1}, ne_b[4] = {k, n, 1, 1};
                const int per[4] = {0, 1, 2, 3};
                CHECK(make_tensor(&a, t, ne_a, per, 0, 0) && make_tensor(&b, CT_TYPE_F32, ne_b, per, 0, 0));
                fill_src0(&a.t);
                fill_src1(&b.t, 1.0f);
                /* src1 column 1: one bad value amid finite ones; column 3: subnormals */
                set_f32(&b.t, 37, 1, 0, 0, bad[bi]);
                for (int64_t i = 0; i < k; i++) set_f32(&b.t, i, 3, 0, 0, tu_rand_uniform(-1, 1) * 1e-39f);
                /* src0 row 2: a NaN value (float) or a NaN block scale (quantized) */
                if (t == CT_TYPE_F32) {
                    const float x = bad[bi];
                    memcpy(row_ptr(&a.t, 2, 0, 0) + 4 * 100, &x, 4);
                } else if (t == CT_TYPE_F16 || t == CT_TYPE_BF16) {
                    const uint16_t h = t == CT_TYPE_F16 ? ct_fp32_to_fp16(bad[bi]) : ct_fp32_to_bf16(bad[bi]);
                    memcpy(row_ptr(&a.t, 2, 0, 0) + 2 * 100, &h, 2);
                } else {
                    const ct_fp16 h = ct_fp32_to_fp16(bad[bi]);
                    bool has_min;
                    const size_t off = ct_type_block_size(t) == 256 ? d_offset(t, &has_min) : 0;
                    memcpy(row_ptr(&a.t, 2, 0, 0) + ct_type_size(t) + off, &h, 2);
                }
                init_dst(&d, &a.t, &b.t);
                double *bound, *rbound;
                double *ref = reference(&a.t, &b.t, &bound, &rbound);
                run_direct(&d.t, (ct_cpu_simd)simd);
                double num = 0.0, den = 0.0;
                int wrong = 0;
                for (int64_t j = 0; j < n; j++)
                    for (int64_t i = 0; i < m; i++) {
                        const float v = ((float *)d.t.data)[j * m + i];
                        const double r = ref[j * m + i];
                        if (i == 2 || j == 1) {
                            wrong += isfinite(v) != 0;
                        } else if (!isfinite(v)) {
                            wrong++;
                        } else if (j != 3) {
                            num += (v - r) * (v - r);
                            den += r * r;
                        }
                    }
                CHECK_MSG(wrong == 0 && num <= max_nmse(t) * den, "%s bad=%g simd=%d: %d misplaced non-finite, nmse %g",
                          ct_type_name(t), (double)bad[bi], simd, wrong, num / den);
                /* the subnormal column stays finite and close in absolute terms */
                for (int64_t i = 0; i < m; i++) {
                    if (i == 2) continue;
                    const float v = ((float *)d.t.data)[3 * m + i];
                    CHECK_MSG(isfinite(v) && fabs(v - ref[3 * m + i]) < 1e-37, "%s subnormal column: %g vs %g",
                              ct_type_name(t), (double)v, ref[3 * m + i]);
                }
                free(bound);
                free(rbound);
                free(ref);
                free(a.mem);
                free(b.mem);
                free(d.mem);
            }
        }
    }
}

/* The AVX2 and portable src1 conversions give the same bytes, a d per block or per
 * group of CT_QY_GROUP blocks: group 0 (blocks 0-7) holds the special blocks (a
 * NaN, infinities: a d per block, as with group 1), group 1 tiny values (below
 * 2^-64, scaled up), group 2 one large block among small ones. */
static void test_quantize_same(void) {
    ct_quantize_qy_fn q = ct_cpu_quantize_qy_avx2();
    if (!q) {
        printf("no AVX2: conversion comparison skipped\n");
        return;
    }
    enum { NB = 64 };
    float x[NB * CT_QY_BLOCK];
    for (int round = 0; round < 40; round++) {
        const int group = round % 2 ? CT_QY_GROUP : 1;
        tu_fill_uniform(x, CT_ARRAY_LEN(x), -2.0f, 2.0f);
        /* ties: amax 127 makes id = 1, so halves stay halves */
        for (int j = 0; j < 32; j++) x[j] = (float)(j - 16) + 0.5f;
        x[5] = 127.0f;
        for (int j = 32; j < 64; j++) x[j] = 0.0f;
        for (int j = 64; j < 96; j++) x[j] = tu_rand_uniform(-1, 1) * 1e-40f;
        for (int j = 96; j < 128; j++) x[j] = tu_rand_uniform(-1, 1) * 1e-25f;
        x[128 + tu_rand_below(32)] = NAN;
        x[160 + tu_rand_below(32)] = INFINITY;
        x[192 + tu_rand_below(32)] = -INFINITY;
        x[200] = NAN;
        x[224] = FLT_MAX;
        x[225] = -FLT_MAX;
        for (int j = 256; j < 512; j++) x[j] = tu_rand_uniform(-1, 1) * 3e-21f;
        for (int j = 512; j < 768; j++) x[j] *= j < 544 ? 1000.0f : 1e-3f;
        ct_block_qy ya[NB], yp[NB];
        memset(ya, 0xAA, sizeof ya);
        memset(yp, 0x55, sizeof yp);
        q(x, ya, NB, group);
        ct_cpu_quantize_qy_portable(x, yp, NB, group);
        int diff = 0;
        for (int i = 0; i < NB; i++) {
            diff += !tu_same_f32(ya[i].d, yp[i].d) || ya[i].s != yp[i].s || memcmp(ya[i].qs, yp[i].qs, 32) != 0;
        }
        CHECK_MSG(diff == 0, "round %d, group %d: %d blocks differ", round, group, diff);
        /* the finite groups' blocks share d = the group's largest |x| / 127 */
        for (int g = CT_QY_GROUP; g < NB; g += group) {
            float amax = 0.0f;
            for (int j = g * 32; j < (g + group) * 32; j++) amax = fmaxf(amax, fabsf(x[j]));
            for (int i = g; i < g + group; i++)
                CHECK_MSG(yp[i].d == amax / 127.0f, "round %d, group %d: block %d: d %g, the group's amax %g",
                          round, group, i, (double)yp[i].d, (double)amax);
        }
        /* the conversion itself: every value within half a step, s the sum */
        for (int i = 0; i < NB; i++) {
            if (!isfinite(yp[i].d)) continue;
            int32_t s = 0;
            bool ok = true;
            for (int j = 0; j < 32; j++) {
                s += yp[i].qs[j];
                const double e = fabs((double)x[i * 32 + j] - (double)yp[i].d * yp[i].qs[j]);
                /* a subnormal d has lost bits: allow its rounding times |q| */
                ok &= e <= (0.5 + 2e-5) * yp[i].d + 128 * 0x1p-149 && yp[i].qs[j] >= -127;
            }
            CHECK_MSG(ok && s == yp[i].s, "round %d block %d: bad conversion", round, i);
        }
        CHECK(yp[0].qs[0] == -16 && yp[0].qs[1] == -14 && yp[0].qs[16] == 0 && yp[0].qs[17] == 2); /* ties to even */
        CHECK(yp[1].d == 0.0f && yp[1].s == 0);
        CHECK(isnan(yp[4].d) && isnan(yp[6].d) && yp[5].d == INFINITY);
    }
}

static void test_support(void) {
    tbuf a, b, d;
    const int64_t ne_a[4] = {64, 3, 2, 1}, ne_b[4] = {64, 5, 4, 1};
    const int per[4] = {0, 1, 2, 3};
    CHECK(make_tensor(&a, CT_TYPE_Q4_0, ne_a, per, 0, 0) && make_tensor(&b, CT_TYPE_F32, ne_b, per, 0, 0));
    init_dst(&d, &a.t, &b.t);
    ct_tensor *dst = &d.t;
    CHECK(ct_cpu_mul_mat_supported(dst));
    CHECK(ct_cpu_mul_mat_work_size(dst, 2) == 20 * 2 * sizeof(ct_block_qy));
    static const ct_type refused[] = {CT_TYPE_IQ2_XXS, CT_TYPE_Q8_1, CT_TYPE_I32, CT_TYPE_Q8_K};
    for (size_t i = 0; i < CT_ARRAY_LEN(refused); i++) {
        a.t.type = refused[i];
        a.t.nb[0] = ct_type_size(refused[i]);
        CHECK_MSG(!ct_cpu_mul_mat_supported(dst), "%s accepted", ct_type_name(refused[i]));
        CHECK(ct_cpu_mul_mat_work_size(dst, 1) == 0);
    }
    a.t.type = CT_TYPE_Q4_0;
    a.t.nb[0] = ct_type_size(CT_TYPE_Q4_0);
    b.t.type = CT_TYPE_F16; /* widened to F32, then quantized as F32 src1 */
    CHECK(ct_cpu_mul_mat_supported(dst));
    CHECK(ct_cpu_mul_mat_work_size(dst, 2) == 20 * 2 * sizeof(ct_block_qy));
    b.t.type = CT_TYPE_BF16;
    CHECK(!ct_cpu_mul_mat_supported(dst));
    b.t.type = CT_TYPE_F32;
    dst->type = CT_TYPE_F16;
    CHECK(!ct_cpu_mul_mat_supported(dst));
    dst->type = CT_TYPE_F32;
    dst->op = CT_OP_CPY;
    CHECK(!ct_cpu_mul_mat_supported(dst));
    dst->op = CT_OP_MUL_MAT;
    dst->ne[1] = 4; /* wrong result shape */
    CHECK(!ct_cpu_mul_mat_supported(dst));
    dst->ne[1] = 5;
    b.t.ne[2] = 3; /* not a multiple of a's 2 */
    CHECK(!ct_cpu_mul_mat_supported(dst));
    b.t.ne[2] = 4;
    b.t.ne[0] = 32; /* K mismatch */
    CHECK(!ct_cpu_mul_mat_supported(dst));
    b.t.ne[0] = 64;
    a.t.nb[0] = 36; /* blocks of a row not packed */
    CHECK(!ct_cpu_mul_mat_supported(dst));
    a.t.nb[0] = ct_type_size(CT_TYPE_Q4_0);
    dst->src[1] = NULL;
    CHECK(!ct_cpu_mul_mat_supported(dst));
    dst->src[1] = &b.t;
    CHECK(!ct_cpu_mul_mat_supported(NULL));
    b.t.ne[1] = INT64_MAX / 2; /* the scratch size overflows */
    dst->ne[1] = INT64_MAX / 2;
    CHECK(!ct_cpu_mul_mat_supported(dst));
    b.t.ne[1] = 5;
    dst->ne[1] = 5;

    /* The compute calls ct_cpu_mul_mat only for a node ct_cpu_mul_mat_supported accepted,
     * with ct_cpu_work_size bytes of scratch (it asserts both); the refusal through
     * ct_backend_graph_compute is checked in test_backend. */
    free(a.mem);
    free(b.mem);
    free(d.mem);
}

/* Empty results do nothing; K = 0 gives zeros. */
static void test_empty(void) {
    const int per[4] = {0, 1, 2, 3};
    tbuf a, b, d;
    const int64_t ne_a[4] = {0, 3, 1, 1}, ne_b[4] = {0, 2, 1, 1};
    CHECK(make_tensor(&a, CT_TYPE_F32, ne_a, per, 0, 0) && make_tensor(&b, CT_TYPE_F32, ne_b, per, 0, 0));
    init_dst(&d, &a.t, &b.t);
    CHECK(ct_cpu_mul_mat_supported(&d.t));
    run_direct(&d.t, CT_CPU_SIMD_AVX512);
    for (int i = 0; i < 6; i++) CHECK(((float *)d.t.data)[i] == 0.0f);
    free(a.mem);
    free(b.mem);
    free(d.mem);
    /* and on the batched path (several b-rows), quantized, on both kernel sets */
    const int64_t ne_a1[4] = {0, 3, 1, 1}, ne_b1[4] = {0, 5, 1, 1};
    for (int simd = CT_CPU_SIMD_PORTABLE; simd <= CT_CPU_SIMD_AVX512; simd++) {
        CHECK(make_tensor(&a, CT_TYPE_Q4_0, ne_a1, per, 0, 0) && make_tensor(&b, CT_TYPE_F32, ne_b1, per, 0, 0));
        init_dst(&d, &a.t, &b.t);
        CHECK(ct_cpu_mul_mat_supported(&d.t));
        run_direct(&d.t, (ct_cpu_simd)simd);
        for (int i = 0; i < 15; i++) CHECK(((float *)d.t.data)[i] == 0.0f);
        free(a.mem);
        free(b.mem);
        free(d.mem);
    }
    const int64_t ne_a2[4] = {32, 0, 1, 1}, ne_b2[4] = {32, 2, 0, 1};
    CHECK(make_tensor(&a, CT_TYPE_Q8_0, ne_a2, per, 0, 0) && make_tensor(&b, CT_TYPE_F32, ne_b2, per, 0, 0));
    init_dst(&d, &a.t, &b.t);
    b.t.ne[2] = 0;
    d.t.ne[2] = 0;
    CHECK(ct_cpu_mul_mat_supported(&d.t));
    run_direct(&d.t, CT_CPU_SIMD_AVX512);
    free(a.mem);
    free(b.mem);
    free(d.mem);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Informational: the decode case n = 1, 4096 x 14336, on the pool's threads. */
static void perf_decode(void) {
    static const ct_type types[] = {CT_TYPE_Q4_0, CT_TYPE_Q8_0, CT_TYPE_F16};
    const int64_t k = 4096, m = UNDER_ASAN ? 1024 : 14336;
    for (size_t ti = 0; ti < CT_ARRAY_LEN(types); ti++) {
        tbuf a, b, d;
        const int64_t ne_a[4] = {k, m, 1, 1}, ne_b[4] = {k, 1, 1, 1};
        const int per[4] = {0, 1, 2, 3};
        if (!make_tensor(&a, types[ti], ne_a, per, 0, 0) || !make_tensor(&b, CT_TYPE_F32, ne_b, per, 0, 0)) {
            free(a.mem);
            printf("perf: out of memory, skipped\n");
            return;
        }
        const size_t bytes = a.t.nb[1] * (size_t)m;
        memset(a.t.data, 0x3A, bytes); /* finite fp16 scales, any quants */
        fill_src1(&b.t, 1.0f);
        init_dst(&d, &a.t, &b.t);
        double best = 1e9;
        for (int rep = 0; rep < 3; rep++) {
            const double t0 = now_s();
            if (g_pool) run_pool(g_pool, &d.t);
            else run_direct(&d.t, CT_CPU_SIMD_AVX512);
            const double dt = now_s() - t0;
            best = dt < best ? dt : best;
        }
        printf("perf: %s n=1 %lldx%lld, %d threads: %.2f ms, %.1f GB/s\n", ct_type_name(types[ti]), (long long)k,
               (long long)m, g_pool ? ct_cpu_threadpool_n_threads(g_pool) : 1, best * 1e3, (double)bytes / best * 1e-9);
        free(a.mem);
        free(b.mem);
        free(d.mem);
    }
}

int main(void) {
    tu_init("test_cpu_mul_mat");
    printf("AVX2 kernels: %s, AVX-512 kernels: %s\n", ct_cpu_dot_q_avx2(CT_TYPE_Q4_0) ? "yes" : "no",
           ct_cpu_dot_q_avx512(CT_TYPE_Q4_0) ? "yes" : "no");
    if (ct_cpu_threadpool_new("test_cpu_mul_mat", 2, &g_pool) != CT_OK) {
        printf("no thread pool: multi-thread runs skipped\n");
        g_pool = NULL;
    }
    test_support();
    test_empty();
    test_quantize_same();
    test_shapes();
    test_long_k();
    test_broadcast_permute();
    test_nonfinite();
    for (size_t ti = 0; ti < CT_ARRAY_LEN(all_types); ti++)
        printf("worst nmse (16+ outputs) %-7s %.3g\n", ct_type_name(all_types[ti]), g_worst[all_types[ti]]);
    perf_decode();
    ct_cpu_threadpool_free(g_pool);
    return tu_finish();
}

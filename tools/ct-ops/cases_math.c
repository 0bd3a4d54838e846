/* ct-ops cases of the math ops SQR, SQRT, SIN, COS, LOG, CLAMP, LEAKY_RELU and FILL
 * (docs/TESTING.md, Case lists): ggml's test-backend-ops shapes, edges (strided and
 * permuted sources, odd, empty and one-element dims, in place, edge values), perf.
 * fam_i[0]: in place; fam_f[0], fam_f[1]: the op's float parameters.
 * Two families by compare rule: SQR, CLAMP, LEAKY_RELU and FILL are one correctly rounded
 * float operation or none, so every backend gives the same bytes, NaNs included (exact,
 * with edge values); SQRT, SIN, COS and LOG go through each backend's math library
 * (NMSE, on inputs that give no NaN, which that rule cannot compare). */
#include "ct_ops.h"

#include <math.h>

static const cto_kind math_kinds[] = {CTO_SQR, CTO_SQRT, CTO_SIN, CTO_COS, CTO_LOG, CTO_CLAMP, CTO_LEAKY_RELU, CTO_FILL};

static bool is_fn(cto_kind kind) {
    return kind == CTO_SQRT || kind == CTO_SIN || kind == CTO_COS || kind == CTO_LOG;
}

static bool math_owns(cto_kind kind) {
    return kind == CTO_SQR || kind == CTO_CLAMP || kind == CTO_LEAKY_RELU || kind == CTO_FILL;
}

static bool math_fn_owns(cto_kind kind) { return is_fn(kind); }

static void math_name(const cto_case *c, char *buf, size_t n) {
    char ne[96], per[32];
    cto_fmt_ne(ne, sizeof ne, c->ne);
    cto_fmt_per(per, sizeof per, c->per);
    int k = snprintf(buf, n, "type=%s,ne=%s", ct_type_name(c->ta), ne);
    if (k < 0 || (size_t)k >= n) return;
    if (c->kind == CTO_CLAMP) k += snprintf(buf + k, n - (size_t)k, ",min=%g,max=%g", (double)c->fam_f[0], (double)c->fam_f[1]);
    else if (c->kind == CTO_LEAKY_RELU) k += snprintf(buf + k, n - (size_t)k, ",negative_slope=%g", (double)c->fam_f[0]);
    else if (c->kind == CTO_FILL) k += snprintf(buf + k, n - (size_t)k, ",c=%g", (double)c->fam_f[0]);
    if (k < 0 || (size_t)k >= n) return;
    snprintf(buf + k, n - (size_t)k, "%s%s%s%s%s", c->v ? ",strided" : "", c->use_per ? ",per=" : "",
             c->use_per ? per : "", c->fam_i[0] ? ",inplace" : "", c->edge ? ",edge" : "");
}

/* The input range ggml's tests use for each op: positive for SQRT and LOG. */
static void add_math(cto_case_list *l, cto_kind kind, ct_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                     bool v, bool per, bool inplace, bool edge) {
    cto_case c = cto_case_base(kind);
    c.ta = t;
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.v = v;
    if (per) { cto_setp(c.per, 0, 2, 1, 3); c.use_per = true; }
    c.fam_i[0] = inplace;
    c.edge = edge;
    switch (kind) {
    case CTO_SQRT: case CTO_LOG: c.lo = edge ? 0.0f : 0.1f; c.hi = edge ? 1e30f : 10.0f; c.edge = false; break;
    case CTO_SIN: case CTO_COS: c.lo = edge ? -1e4f : -6.5f; c.hi = edge ? 1e4f : 6.5f; c.edge = false; break;
    case CTO_CLAMP: c.fam_f[0] = -0.5f; c.fam_f[1] = 0.5f; break;
    case CTO_LEAKY_RELU: c.fam_f[0] = 0.1f; break;
    case CTO_FILL: c.fam_f[0] = 2.5f; break;
    default: break;
    }
    cto_case_add(l, c);
}

/* The cases of the kinds for which want(kind) holds. */
static void test_cases_of(cto_case_list *l, bool (*want)(cto_kind)) {
    static const ct_type types[2] = {CT_TYPE_F16, CT_TYPE_F32};
    for (int k = 0; k < CTO_N_OF(math_kinds); k++) {
        const cto_kind kind = math_kinds[k];
        if (!want(kind)) continue;
        for (int ti = 0; ti < 2; ti++) {
            const ct_type t = types[ti];
            /* ggml's: the default shape, {7, 1, 5, 3}, {1024, 1024, 1, 1} */
            add_math(l, kind, t, 10, 5, 4, 3, false, false, kind == CTO_LEAKY_RELU, false);
            add_math(l, kind, t, 7, 1, 5, 3, false, false, kind == CTO_LEAKY_RELU, false);
            add_math(l, kind, t, 1024, 1024, 1, 1, false, false, kind == CTO_LEAKY_RELU, false);
            /* edges: one element, odd rows, a strided view, a permuted source, in place (also
             * on a view), edge values (zeros, infinities, NaN, subnormals, past f16's range) */
            add_math(l, kind, t, 1, 1, 1, 1, false, false, false, false);
            add_math(l, kind, t, 1, 7, 1, 2, false, false, false, false);
            add_math(l, kind, t, 257, 3, 2, 1, false, false, false, false);
            add_math(l, kind, t, 33, 6, 4, 2, true, false, false, false);
            add_math(l, kind, t, 16, 5, 3, 2, false, true, false, false);
            add_math(l, kind, t, 67, 5, 3, 1, false, false, true, false);
            add_math(l, kind, t, 33, 6, 4, 2, true, false, true, false);
            add_math(l, kind, t, 300, 9, 1, 1, false, false, false, true);
            add_math(l, kind, t, 0, 3, 1, 1, false, false, false, false);
        }
    }
    if (want == math_fn_owns) return;
    /* other parameters: an empty clamp range (min > max), a negative slope above 1, FILL of -inf */
    for (int ti = 0; ti < 2; ti++) {
        cto_case c = cto_case_base(CTO_CLAMP);
        c.ta = types[ti];
        cto_set4(c.ne, 64, 3, 2, 1);
        c.fam_f[0] = 0.25f, c.fam_f[1] = -0.25f;
        cto_case_add(l, c);
        c.edge = true;
        c.fam_f[0] = -2.0f, c.fam_f[1] = 3.0f;
        cto_case_add(l, c);
        c = cto_case_base(CTO_LEAKY_RELU);
        c.ta = types[ti];
        cto_set4(c.ne, 64, 3, 2, 1);
        c.fam_f[0] = 1.5f;
        c.edge = true;
        cto_case_add(l, c);
        c = cto_case_base(CTO_FILL);
        c.ta = types[ti];
        cto_set4(c.ne, 64, 3, 2, 1);
        c.fam_f[0] = -INFINITY;
        cto_case_add(l, c);
    }
}

static void math_test_cases(cto_case_list *l) { test_cases_of(l, math_owns); }
static void math_fn_test_cases(cto_case_list *l) { test_cases_of(l, math_fn_owns); }

static void math_perf_cases(cto_case_list *l, double s) {
    const int64_t rows = cto_scaled(4096, s, 1, 1);
    for (int ti = 0; ti < 2; ti++) {
        const ct_type t = ti ? CT_TYPE_F16 : CT_TYPE_F32;
        add_math(l, CTO_SQR, t, 4096, rows, 1, 1, false, false, false, false);
        add_math(l, CTO_CLAMP, t, 4096, rows, 1, 1, false, false, false, false);
    }
    const int64_t tokens = cto_scaled(512, s, 1, 1);
    add_math(l, CTO_LEAKY_RELU, CT_TYPE_F32, 17408, tokens, 1, 1, false, false, true, false);
    add_math(l, CTO_FILL, CT_TYPE_F32, 4096, rows, 1, 1, false, false, true, false);
}

static void math_fn_perf_cases(cto_case_list *l, double s) {
    const int64_t rows = cto_scaled(4096, s, 1, 1);
    add_math(l, CTO_SQRT, CT_TYPE_F32, 4096, rows, 1, 1, false, false, false, false);
    add_math(l, CTO_SIN, CT_TYPE_F32, 4096, rows, 1, 1, false, false, false, false);
    add_math(l, CTO_COS, CT_TYPE_F32, 4096, rows, 1, 1, false, false, false, false);
    add_math(l, CTO_LOG, CT_TYPE_F32, 4096, rows, 1, 1, false, false, false, false);
    add_math(l, CTO_LOG, CT_TYPE_F16, 4096, rows, 1, 1, false, false, false, false);
}

static ct_tensor *math_op(ct_context *ctx, const cto_case *c, ct_tensor *x) {
    const bool ip = c->fam_i[0] != 0;
    const float p0 = c->fam_f[0], p1 = c->fam_f[1];
    switch (c->kind) {
    case CTO_SQR: return ip ? ct_sqr_inplace(ctx, x) : ct_sqr(ctx, x);
    case CTO_SQRT: return ip ? ct_sqrt_inplace(ctx, x) : ct_sqrt(ctx, x);
    case CTO_SIN: return ip ? ct_sin_inplace(ctx, x) : ct_sin(ctx, x);
    case CTO_COS: return ip ? ct_cos_inplace(ctx, x) : ct_cos(ctx, x);
    case CTO_LOG: return ip ? ct_ln_inplace(ctx, x) : ct_ln(ctx, x);
    case CTO_CLAMP: return ip ? ct_clamp_inplace(ctx, x, p0, p1) : ct_clamp(ctx, x, p0, p1);
    case CTO_LEAKY_RELU: return ct_leaky_relu(ctx, x, p0, ip);
    case CTO_FILL: return ip ? ct_fill_inplace(ctx, x, p0) : ct_fill(ctx, x, p0);
    default: return NULL;
    }
}

static void math_build(const cto_case *c, cto_builder *b, int n_rep, ct_tensor **outs) {
    ct_context *ctx = b->ctx;
    const int64_t *ne = c->ne;
    ct_tensor *x;
    if (c->v) { /* rows of ne0 inside rows twice as long, every other plane */
        x = cto_new4(b, c->ta, 2 * ne[0] + 1, ne[1], 2 * ne[2], ne[3], c->lo, c->hi);
        if (x) x = cto_chk(b, ct_view_4d(ctx, x, ne[0], ne[1], ne[2], ne[3], x->nb[1], 2 * x->nb[2], x->nb[3], 0));
    } else if (c->use_per) { /* created [ne0, ne2, ne1, ne3], permuted back: dims 1 and 2 strided */
        x = cto_permute(b, cto_new4(b, c->ta, ne[0], ne[2], ne[1], ne[3], c->lo, c->hi), c->per);
    } else {
        x = cto_new_tensor(b, c->ta, ne, c->lo, c->hi);
    }
    if (x && c->edge) cto_set_init(b, x->view_src ? x->view_src : x, CTO_INIT_EDGE, 0);
    for (int i = 0; x && i < n_rep; i++) outs[i] = cto_chk(b, math_op(ctx, c, x));
}

const cto_family cto_family_math = {
    .owns = math_owns,
    .exact = true,
    .max_nmse = 0.0,
    .name = math_name,
    .test_cases = math_test_cases,
    .perf_cases = math_perf_cases,
    .build = math_build,
};

const cto_family cto_family_math_fn = {
    .owns = math_fn_owns,
    .exact = false,
    .max_nmse = 1e-6,
    .name = math_name,
    .test_cases = math_fn_test_cases,
    .perf_cases = math_fn_perf_cases,
    .build = math_build,
};

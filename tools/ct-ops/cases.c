/* ct-ops case lists (docs/TESTING.md, Case lists) and the graphs they build. */
#include "ct_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[CTO_KIND_COUNT] = {
#define CTO_KIND_NAME(id, name, is_view, family) name,
    CT_OP_LIST(CTO_KIND_NAME)
#undef CTO_KIND_NAME
    "CAST", "CHAIN",
};

const char *cto_kind_name(cto_kind kind) {
    return (unsigned)kind < CTO_KIND_COUNT ? kind_names[kind] : "INVALID";
}

bool cto_kind_listed(cto_kind kind) {
    return (unsigned)kind < CTO_KIND_COUNT && !((int)kind < CT_OP_COUNT && ct_op_is_view((ct_op)kind));
}

bool cto_kind_from_name(const char *name, cto_kind *kind) {
    for (int i = 0; i < CTO_KIND_COUNT; i++) {
        if (cto_kind_listed((cto_kind)i) && cto_streq_ci(name, kind_names[i])) {
            *kind = (cto_kind)i;
            return true;
        }
    }
    return false;
}

static const cto_family *const families[] = {
#define CTO_FAMILY(f) &cto_family_##f,
#include "families.def"
#undef CTO_FAMILY
};

/* The family file that owns kind's cases; NULL for the lists kept in this file. */
static const cto_family *family_of(cto_kind kind) {
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (families[i]->owns(kind)) return families[i];
    return NULL;
}

bool cto_kind_exact(cto_kind kind) {
    const cto_family *f = family_of(kind);
    if (f) return f->exact;
    switch (kind) {
    case CTO_GET_ROWS: case CTO_SET_ROWS: case CTO_CPY: case CTO_DUP: case CTO_CONT: case CTO_CAST:
        return true;
    /* float arithmetic, one rounding, x86's NaN rules on every backend: the same bits */
    case CTO_ADD: case CTO_SUB: case CTO_MUL: case CTO_DIV: case CTO_ADD1:
        return true;
    default:
        return false;
    }
}

/* docs/TESTING.md, Thresholds. */
double cto_kind_max_nmse(cto_kind kind) {
    const cto_family *f = family_of(kind);
    if (f) return f->max_nmse;
    switch (kind) {
    case CTO_CPY: case CTO_CAST: return 1e-6;
    case CTO_MUL_MAT: return 5e-4;
    case CTO_SOFT_MAX: return 1e-6;
    default: return 1e-7;
    }
}

static const ct_type all_types[] = {
    CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_BF16, CT_TYPE_Q4_0, CT_TYPE_Q4_1, CT_TYPE_Q5_0, CT_TYPE_Q5_1,
    CT_TYPE_Q8_0, CT_TYPE_Q2_K, CT_TYPE_Q3_K, CT_TYPE_Q4_K, CT_TYPE_Q5_K, CT_TYPE_Q6_K, CT_TYPE_IQ2_XXS,
    CT_TYPE_IQ2_XS, CT_TYPE_IQ2_S, CT_TYPE_IQ3_XXS, CT_TYPE_IQ1_S, CT_TYPE_IQ1_M, CT_TYPE_IQ4_NL,
    CT_TYPE_IQ3_S, CT_TYPE_IQ4_XS,
};
static const ct_type base_types[] = {
    CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_Q8_0, CT_TYPE_Q4_0, CT_TYPE_Q4_1, CT_TYPE_Q4_K, CT_TYPE_IQ2_XXS,
};
static const ct_type other_types[] = {
    CT_TYPE_Q4_1, CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_Q8_0, CT_TYPE_Q2_K, CT_TYPE_Q3_K, CT_TYPE_Q5_K,
    CT_TYPE_Q6_K, CT_TYPE_IQ2_XS, CT_TYPE_IQ2_S, CT_TYPE_IQ3_XXS, CT_TYPE_IQ1_S, CT_TYPE_IQ1_M,
    CT_TYPE_IQ4_NL, CT_TYPE_IQ3_S, CT_TYPE_IQ4_XS, CT_TYPE_BF16,
};
/* the super-block formats with a quantizer, and edge ranges of values for them */
static const ct_type k_quant_types[] = {
    CT_TYPE_Q2_K, CT_TYPE_Q3_K, CT_TYPE_Q4_K, CT_TYPE_Q5_K, CT_TYPE_Q6_K, CT_TYPE_Q8_K, CT_TYPE_IQ4_XS,
};
static const float k_quant_ranges[][2] = {
    {0.0f, 0.0f}, {0.75f, 0.75f}, {2.0f, 3.0f}, {-3.0f, -2.0f}, {-1e-20f, 1e-20f}, {-1e-38f, 1e-38f}, {-1e20f, 1e20f},
};
#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- names ---------------------------------------------------------------- */

int cto_fmt_ne(char *buf, size_t n, const int64_t ne[4]) {
    return snprintf(buf, n, "[%lld,%lld,%lld,%lld]", (long long)ne[0], (long long)ne[1], (long long)ne[2],
                    (long long)ne[3]);
}

int cto_fmt_per(char *buf, size_t n, const int per[4]) {
    return snprintf(buf, n, "[%d,%d,%d,%d]", per[0], per[1], per[2], per[3]);
}

static void case_name(cto_case *c) {
    char ne[96], p1[32], p2[32], body[512];
    cto_fmt_ne(ne, sizeof ne, c->ne);
    cto_fmt_per(p1, sizeof p1, c->per);
    cto_fmt_per(p2, sizeof p2, c->per2);
    const char *ta = ct_type_name(c->ta), *tb = ct_type_name(c->tb);
    const cto_family *f = family_of(c->kind);
    if (f) {
        f->name(c, body, sizeof body);
        snprintf(c->name, sizeof c->name, "%s(%s)", cto_kind_name(c->kind), body);
        return;
    }
    /* copies and SET_ROWS name a range other than the default [-1, 1] */
    char range[64] = "";
    if (c->lo != -1.0f || c->hi != 1.0f) snprintf(range, sizeof range, ",range=[%g,%g]", (double)c->lo, (double)c->hi);
    switch (c->kind) {
    case CTO_GET_ROWS:
        snprintf(body, sizeof body, "type=%s,n=%lld,m=%lld,r=%lld,b=%lld,v=%d", ta, (long long)c->n,
                 (long long)c->m, (long long)c->r, (long long)c->b, c->v);
        break;
    case CTO_SET_ROWS: {
        char extra[64] = "";
        if (c->tb != CT_TYPE_F32 || c->ti != CT_TYPE_I64)
            snprintf(extra, sizeof extra, ",type_src=%s,type_idx=%s", tb, ct_type_name(c->ti));
        snprintf(body, sizeof body, "type=%s%s,ne=%s,nr23=[%d,%d],r=%lld,v=%d%s", ta, extra, ne, c->nr[0], c->nr[1],
                 (long long)c->r, c->v, range);
        break;
    }
    case CTO_MUL_MAT:
        snprintf(body, sizeof body, "type_a=%s,type_b=%s,m=%lld,n=%lld,k=%lld,bs=[%d,%d],nr=[%d,%d],per=%s,v=%d", ta,
                 tb, (long long)c->m, (long long)c->n, (long long)c->k, c->bs[0], c->bs[1], c->nr[0], c->nr[1], p1,
                 c->v);
        break;
    case CTO_CPY:
        snprintf(body, sizeof body, "type_src=%s,type_dst=%s,ne=%s,permute_src=%s,permute_dst=%s%s", ta, tb, ne, p1,
                 p2, range);
        break;
    case CTO_CAST:
        snprintf(body, sizeof body, "type_src=%s,type_dst=%s,ne=%s,permute=%s", ta, tb, ne, p1);
        break;
    case CTO_DUP:
        snprintf(body, sizeof body, "type=%s,ne=%s,permute=%s", ta, ne, p1);
        break;
    case CTO_CONT:
        snprintf(body, sizeof body, "type=%s,ne=%s", ta, ne);
        break;
    case CTO_NORM: case CTO_RMS_NORM:
        snprintf(body, sizeof body, "type=%s,ne=%s,v=%d,eps=%g", ta, ne, c->v, (double)c->eps);
        break;
    case CTO_L2_NORM:
        snprintf(body, sizeof body, "type=%s,ne=%s,eps=%g", ta, ne, (double)c->eps);
        break;
    case CTO_GROUP_NORM:
        snprintf(body, sizeof body, "type=%s,ne=%s,num_groups=%d,eps=%g", ta, ne, c->n_groups, (double)c->eps);
        break;
    case CTO_SUM_ROWS: case CTO_MEAN:
        if (c->use_per) snprintf(body, sizeof body, "type=%s,ne=%s,permute=%s", ta, ne, p1);
        else snprintf(body, sizeof body, "type=%s,ne=%s", ta, ne);
        break;
    case CTO_UNARY:
        snprintf(body, sizeof body, "op=%s,type=%s,ne=%s,v=%d,permute=%s,range=[%g,%g]", ct_unary_op_name((ct_unary_op)c->uop),
                 ta, ne, c->v, p1, (double)c->lo, (double)c->hi);
        break;
    case CTO_SCALE:
        snprintf(body, sizeof body, "type=%s,ne=%s,v=%d,scale=%g,bias=%g", ta, ne, c->v, (double)c->s, (double)c->bias);
        break;
    case CTO_ADD: case CTO_SUB: case CTO_MUL: case CTO_DIV: case CTO_ADD1: {
        char rp[32];
        cto_fmt_per(rp, sizeof rp, c->rep);
        snprintf(body, sizeof body, "type=%s,type_b=%s,ne=%s,nr=%s,perm1=%d,v=%d,overlap=%d,edge=%d", ta, tb, ne, rp,
                 c->use_per, c->v, c->r == 1, c->edge);
        break;
    }
    case CTO_SOFT_MAX: {
        char extra[96] = "";
        if (c->mask_inf || c->v || c->use_per || c->r)
            snprintf(extra, sizeof extra, ",inf=%d,v=%d,permute=%s,mask_rows=+%lld", c->mask_inf, c->v, p1,
                     (long long)c->r);
        snprintf(body, sizeof body, "type=%s,ne=%s,mask=%d,sinks=%d,m_prec=%s,nr23=[%d,%d],scale=%f,max_bias=%f%s", ta,
                 ne, c->mask, c->sinks, tb, c->nr[0], c->nr[1], (double)c->scale, (double)c->max_bias, extra);
        break;
    }
    case CTO_CHAIN:
        snprintf(body, sizeof body, "op=RMS_NORM,ne0=%lld,nodes=%lld", (long long)c->ne[0], (long long)c->n);
        break;
    default:
        snprintf(body, sizeof body, "?");
    }
    snprintf(c->name, sizeof c->name, "%s(%s)", cto_kind_name(c->kind), body);
}

/* ---- list building -------------------------------------------------------- */

cto_case cto_case_base(cto_kind kind) {
    cto_case c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.ta = c.tb = CT_TYPE_F32;
    c.ti = CT_TYPE_I64;
    for (int i = 0; i < 4; i++) {
        c.ne[i] = 1;
        c.per[i] = c.per2[i] = i;
    }
    c.bs[0] = c.bs[1] = c.nr[0] = c.nr[1] = 1;
    c.lo = -1.0f;
    c.hi = 1.0f;
    return c;
}

void cto_case_add(cto_case_list *l, cto_case c) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        cto_case *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "ct-ops: out of host memory\n");
            exit(CTO_EXIT_FAIL);
        }
        l->v = v;
        l->cap = cap;
    }
    case_name(&c);
    l->v[l->n++] = c;
}

void cto_case_list_free(cto_case_list *l) {
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

void cto_set4(int64_t dst[4], int64_t a, int64_t b, int64_t c, int64_t d) {
    dst[0] = a; dst[1] = b; dst[2] = c; dst[3] = d;
}

void cto_setp(int dst[4], int a, int b, int c, int d) {
    dst[0] = a; dst[1] = b; dst[2] = c; dst[3] = d;
}

static void add_get_rows(cto_case_list *l, ct_type t, int64_t n, int64_t m, int64_t r, int64_t b, bool v) {
    cto_case c = cto_case_base(CTO_GET_ROWS);
    c.ta = t;
    c.ti = CT_TYPE_I32;
    c.n = n; c.m = m; c.r = r; c.b = b; c.v = v;
    cto_case_add(l, c);
}

static void add_set_rows(cto_case_list *l, ct_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, int nr0,
                         int nr1, int64_t r, bool v, ct_type tsrc, ct_type tidx) {
    cto_case c = cto_case_base(CTO_SET_ROWS);
    c.ta = t; c.tb = tsrc; c.ti = tidx;
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.nr[0] = nr0; c.nr[1] = nr1;
    c.r = r; c.v = v;
    cto_case_add(l, c);
}

static void add_mul_mat(cto_case_list *l, ct_type ta, ct_type tb, int64_t m, int64_t n, int64_t k, int bs0, int bs1,
                        int nr0, int nr1, const int *per, bool v) {
    cto_case c = cto_case_base(CTO_MUL_MAT);
    c.ta = ta; c.tb = tb;
    c.m = m; c.n = n; c.k = k;
    c.bs[0] = bs0; c.bs[1] = bs1; c.nr[0] = nr0; c.nr[1] = nr1;
    if (per) {
        cto_setp(c.per, per[0], per[1], per[2], per[3]);
        c.use_per = per[0] != 0 || per[1] != 1 || per[2] != 2 || per[3] != 3;
    }
    c.v = v;
    c.flops = n > 8;
    cto_case_add(l, c);
}

static void add_cpy(cto_case_list *l, ct_type ts, ct_type td, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                    const int *ps, const int *pd) {
    cto_case c = cto_case_base(CTO_CPY);
    c.ta = ts; c.tb = td;
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    if (ps) { cto_setp(c.per, ps[0], ps[1], ps[2], ps[3]); c.use_per = true; }
    if (pd) { cto_setp(c.per2, pd[0], pd[1], pd[2], pd[3]); c.use_per2 = true; }
    cto_case_add(l, c);
}

static void add_simple(cto_case_list *l, cto_kind kind, ct_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                       const int *per) {
    cto_case c = cto_case_base(kind);
    c.ta = t;
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    if (per) { cto_setp(c.per, per[0], per[1], per[2], per[3]); c.use_per = true; }
    cto_case_add(l, c);
}

static void add_cast(cto_case_list *l, ct_type ts, ct_type td, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                     const int *per) {
    cto_case c = cto_case_base(CTO_CAST);
    c.ta = ts; c.tb = td;
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    if (per) { cto_setp(c.per, per[0], per[1], per[2], per[3]); c.use_per = true; }
    cto_case_add(l, c);
}

static void add_norm(cto_case_list *l, cto_kind kind, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, bool v,
                     float eps) {
    cto_case c = cto_case_base(kind);
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.v = v;
    c.eps = eps;
    if (kind == CTO_RMS_NORM) { c.lo = -10.0f; c.hi = 10.0f; }
    cto_case_add(l, c);
}

static void add_group_norm(cto_case_list *l, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, int groups,
                           float eps) {
    cto_case c = cto_case_base(CTO_GROUP_NORM);
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.n_groups = groups;
    c.eps = eps;
    cto_case_add(l, c);
}

static void add_unary(cto_case_list *l, int uop, ct_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, bool v,
                      const int *per, float lo, float hi) {
    cto_case c = cto_case_base(CTO_UNARY);
    c.ta = t;
    c.uop = uop;
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.v = v;
    if (per) { cto_setp(c.per, per[0], per[1], per[2], per[3]); c.use_per = true; }
    c.lo = lo;
    c.hi = hi;
    cto_case_add(l, c);
}

static void add_scale(cto_case_list *l, ct_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, bool v, float s,
                      float bias) {
    cto_case c = cto_case_base(CTO_SCALE);
    c.ta = t;
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.v = v;
    c.s = s;
    c.bias = bias;
    c.lo = -4.0f;
    c.hi = 4.0f;
    cto_case_add(l, c);
}

/* A binary op: src1 of shape ne, src0 of ne repeated rep times; perm1 builds src1
 * permuted (dims {1, 2, 0, 3}), v views src0's rows out of rows twice as long, overlap
 * takes src0 and src1 as overlapping views of one tensor (ne3 >= 3, rep all 1). */
static void add_binary(cto_case_list *l, cto_kind kind, ct_type ta, ct_type tb, int64_t ne0, int64_t ne1, int64_t ne2,
                       int64_t ne3, int r0, int r1, int r2, int r3, bool perm1, bool v, bool overlap, bool edge) {
    cto_case c = cto_case_base(kind);
    c.ta = ta; c.tb = tb;
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    cto_setp(c.rep, r0, r1, r2, r3);
    if (perm1) { cto_setp(c.per, 1, 2, 0, 3); c.use_per = true; }
    c.v = v;
    c.r = overlap;
    c.edge = edge;
    cto_case_add(l, c);
}

static void add_binary4(cto_case_list *l, ct_type ta, ct_type tb, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                        int r0, int r1, int r2, int r3, bool perm1, bool v, bool overlap, bool edge) {
    static const cto_kind kinds[4] = {CTO_ADD, CTO_SUB, CTO_MUL, CTO_DIV};
    for (int k = 0; k < 4; k++)
        add_binary(l, kinds[k], ta, tb, ne0, ne1, ne2, ne3, r0, r1, r2, r3, perm1, v, overlap, edge);
}

static cto_case soft_max_case(int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, bool mask, bool sinks,
                              ct_type m_prec, int nr0, int nr1, float scale, float max_bias) {
    cto_case c = cto_case_base(CTO_SOFT_MAX);
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.mask = mask;
    c.sinks = sinks;
    c.tb = m_prec;
    c.nr[0] = nr0; c.nr[1] = nr1;
    c.scale = scale;
    c.max_bias = max_bias;
    return c;
}

static void add_soft_max(cto_case_list *l, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, bool mask, bool sinks,
                         ct_type m_prec, int nr0, int nr1, float scale, float max_bias) {
    cto_case_add(l, soft_max_case(ne0, ne1, ne2, ne3, mask, sinks, m_prec, nr0, nr1, scale, max_bias));
}

void cto_cases_test(cto_case_list *l) {
    static const int P0213[4] = {0, 2, 1, 3}, P0132[4] = {0, 1, 3, 2}, P0321[4] = {0, 3, 2, 1};
    static const int P0312[4] = {0, 3, 1, 2}, P1023[4] = {1, 0, 2, 3}, P1203[4] = {1, 2, 0, 3};
    static const int P0123[4] = {0, 1, 2, 3};

    /* GET_ROWS */
    add_get_rows(l, CT_TYPE_F32, 1, 8, 2, 1, false);
    for (int i = 0; i < N_OF(all_types); i++)
        for (int b = 1; b <= 7; b += 6)
            for (int v = 0; v <= 1; v++) add_get_rows(l, all_types[i], 256, 5, 4, b, v);
    for (int b = 1; b <= 7; b += 6)
        for (int v = 0; v <= 1; v++) add_get_rows(l, CT_TYPE_I32, 256, 5, 4, b, v);
    /* edges: one-element dims, odd rows, one source row, no rows at all */
    add_get_rows(l, CT_TYPE_F32, 1, 1, 1, 1, false);
    add_get_rows(l, CT_TYPE_F16, 33, 7, 5, 3, false);
    add_get_rows(l, CT_TYPE_BF16, 31, 2, 9, 2, true);
    add_get_rows(l, CT_TYPE_Q4_0, 64, 1, 3, 1, false);
    add_get_rows(l, CT_TYPE_Q8_0, 32, 300, 64, 2, false);
    add_get_rows(l, CT_TYPE_F32, 256, 5, 0, 2, false);
    /* the vector row kernels: rows in two segments, many one-vector rows, long block rows */
    add_get_rows(l, CT_TYPE_F32, 4100, 3, 2, 1, false);
    add_get_rows(l, CT_TYPE_F16, 4, 9, 300, 1, false);
    add_get_rows(l, CT_TYPE_Q4_K, 17 * 256, 3, 5, 1, true);
    add_get_rows(l, CT_TYPE_Q8_0, 129 * 32, 3, 5, 2, false);
    /* jobs large enough for 2 and 4 vectors a work-item */
    add_get_rows(l, CT_TYPE_F32, 4096, 64, 300, 1, false);
    add_get_rows(l, CT_TYPE_Q4_K, 4096, 16, 160, 1, false);
    add_get_rows(l, CT_TYPE_F16, 1024, 16, 1200, 1, true);

    /* SET_ROWS */
    add_set_rows(l, CT_TYPE_F32, 1, 8, 1, 3, 1, 1, 2, false, CT_TYPE_F32, CT_TYPE_I64);
    for (int i = 0; i < N_OF(all_types); i++) {
        ct_type t = all_types[i];
        int64_t blck = ct_type_block_size(t);
        for (int b = 1; b <= 7; b += 6) {
            for (int v = 0; v <= 1; v++) {
                add_set_rows(l, t, 256, 5, b, 3, 1, 1, 1, v, CT_TYPE_F32, CT_TYPE_I64);
                add_set_rows(l, t, 256, 11, 1, b, 2, 3, 7, v, CT_TYPE_F32, CT_TYPE_I64);
                add_set_rows(l, t, 3 * blck, 3, b, 1, 2, 3, 2, v, CT_TYPE_F32, CT_TYPE_I64);
                if (blck == 1) {
                    add_set_rows(l, t, 31, 3, b, 1, 2, 3, 2, v, CT_TYPE_F32, CT_TYPE_I64);
                    add_set_rows(l, t, 33, 5, 1, b, 2, 3, 1, v, CT_TYPE_F32, CT_TYPE_I64);
                }
            }
        }
    }
    /* edges: every row rewritten, one-element rows, F16 source and I32 indices (the header allows both) */
    add_set_rows(l, CT_TYPE_Q8_0, 64, 9, 1, 1, 1, 1, 9, false, CT_TYPE_F32, CT_TYPE_I64);
    add_set_rows(l, CT_TYPE_F16, 1, 4, 1, 1, 1, 1, 3, false, CT_TYPE_F32, CT_TYPE_I64);
    add_set_rows(l, CT_TYPE_F32, 33, 5, 2, 1, 1, 1, 4, false, CT_TYPE_F16, CT_TYPE_I64);
    add_set_rows(l, CT_TYPE_Q4_0, 64, 6, 1, 2, 1, 1, 5, false, CT_TYPE_F32, CT_TYPE_I32);
    add_set_rows(l, CT_TYPE_IQ4_NL, 96, 7, 3, 1, 1, 1, 6, true, CT_TYPE_F32, CT_TYPE_I64);
    /* the team quantizers and vector row kernels: long rows, many short rows, F16 sources, broadcasts */
    add_set_rows(l, CT_TYPE_Q8_0, 4128, 4, 1, 1, 1, 1, 3, false, CT_TYPE_F32, CT_TYPE_I64);
    add_set_rows(l, CT_TYPE_IQ4_NL, 32, 300, 1, 1, 1, 1, 200, false, CT_TYPE_F16, CT_TYPE_I32);
    add_set_rows(l, CT_TYPE_Q5_1, 64, 40, 2, 3, 1, 2, 33, false, CT_TYPE_F16, CT_TYPE_I64);
    add_set_rows(l, CT_TYPE_F16, 4100, 3, 1, 1, 1, 1, 2, false, CT_TYPE_F32, CT_TYPE_I64);
    add_set_rows(l, CT_TYPE_BF16, 8, 300, 1, 1, 1, 1, 250, false, CT_TYPE_F16, CT_TYPE_I32);
    add_set_rows(l, CT_TYPE_F16, 4096, 300, 1, 1, 1, 1, 300, false, CT_TYPE_F32, CT_TYPE_I64);
    add_set_rows(l, CT_TYPE_F32, 2048, 300, 1, 1, 1, 1, 260, false, CT_TYPE_F16, CT_TYPE_I32);
    add_set_rows(l, CT_TYPE_Q4_0, 4096, 300, 1, 1, 1, 1, 80, false, CT_TYPE_F32, CT_TYPE_I64);
    /* the super-block quantizers (docs/QUANTIZATION.md): Q8_K (not in ggml's lists), F16 sources,
     * I32 indices, broadcasts, long rows, and rows of zeros, constants, tiny and huge values */
    for (int i = 0; i < N_OF(k_quant_types); i++) {
        const ct_type t = k_quant_types[i];
        if (t == CT_TYPE_Q8_K) {
            add_set_rows(l, t, 256, 5, 7, 3, 1, 1, 1, true, CT_TYPE_F32, CT_TYPE_I64);
            add_set_rows(l, t, 256, 11, 1, 7, 2, 3, 7, false, CT_TYPE_F32, CT_TYPE_I64);
        }
        add_set_rows(l, t, 512, 6, 2, 1, 1, 2, 4, false, CT_TYPE_F16, CT_TYPE_I32);
        add_set_rows(l, t, 4096, 8, 1, 1, 1, 1, 5, false, CT_TYPE_F32, CT_TYPE_I64);
        for (int k = 0; k < N_OF(k_quant_ranges); k++) {
            cto_case c = cto_case_base(CTO_SET_ROWS);
            c.ta = t;
            cto_set4(c.ne, 768, 4, 1, 1);
            c.r = 3;
            c.lo = k_quant_ranges[k][0];
            c.hi = k_quant_ranges[k][1];
            cto_case_add(l, c);
        }
    }

    /* MUL_MAT */
    for (int i = 0; i < N_OF(all_types); i++)
        for (int n = 1; n <= 9; n++) add_mul_mat(l, all_types[i], CT_TYPE_F32, 16, n, 256, 1, 1, 1, 1, NULL, false);
    static const int bsnr[9][4] = {
        {1, 1, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 2}, {3, 1, 1, 1}, {3, 1, 2, 1},
        {3, 2, 1, 1}, {3, 2, 2, 1}, {3, 2, 1, 2}, {3, 2, 2, 2},
    };
    const int *pers[3] = {P0213, P0132, P0321};
    for (int i = 0; i < N_OF(base_types); i++) {
        ct_type ta = base_types[i];
        for (int j = 0; j < 2; j++) {
            ct_type tb = j ? CT_TYPE_F16 : CT_TYPE_F32;
            for (int kk = 0; kk < 2; kk++) {
                int64_t k = kk ? 4 : 256;
                if (k == 4 && ct_type_block_size(ta) != 1) continue;
                for (int n = 1; n <= 16; n += 15)
                    for (int s = 0; s < 9; s++)
                        add_mul_mat(l, ta, tb, 16, n, k, bsnr[s][0], bsnr[s][1], bsnr[s][2], bsnr[s][3], NULL, false);
                static const int ns[3] = {1, 8, 16};
                for (int ni = 0; ni < 3; ni++)
                    for (int p = 0; p < 3; p++) add_mul_mat(l, ta, tb, 16, ns[ni], k, 2, 3, 1, 1, pers[p], false);
            }
            add_mul_mat(l, ta, tb, 16, 1, 1024, 3, 2, 1, 1, NULL, false);
            add_mul_mat(l, ta, tb, 16, 8, 1024, 3, 2, 1, 1, NULL, false);
            add_mul_mat(l, ta, tb, 16, 16, 1024, 3, 2, 1, 1, NULL, false);
        }
    }
    for (int i = 0; i < N_OF(other_types); i++) {
        ct_type t = other_types[i];
        if (ct_type_block_size(t) != 256)
            add_mul_mat(l, t, CT_TYPE_F32, 16, 1, ct_type_block_size(t), 1, 1, 1, 1, NULL, false);
        add_mul_mat(l, t, CT_TYPE_F32, 16, 1, 256, 1, 1, 1, 1, NULL, false);
        /* F16 src1: mat-vec, 8-bit path, tiles, a strided src1 view and a permuted, broadcast one */
        add_mul_mat(l, t, CT_TYPE_F16, 16, 1, 256, 1, 1, 1, 1, NULL, false);
        add_mul_mat(l, t, CT_TYPE_F16, 16, 5, 512, 1, 1, 1, 1, NULL, false);
        add_mul_mat(l, t, CT_TYPE_F16, 16, 16, 256, 3, 2, 1, 1, NULL, false);
        add_mul_mat(l, t, CT_TYPE_F16, 16, 4, 256, 1, 1, 1, 1, NULL, true);
        add_mul_mat(l, t, CT_TYPE_F16, 16, 8, 256, 2, 3, 1, 1, P0213, false);
    }
    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, 64, 2, 128, 8, 1, 1, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, 83, 2, 128, 8, 1, 4, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, 64, 2, 64, 8, 1, 4, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, 83, 2, 64, 8, 1, 4, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, 64, 45, 128, 8, 1, 4, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, 128, 45, 64, 8, 1, 4, 1, NULL, false);
    /* tiles over an odd k: src1's 16-bit copy for the tensor cores is padded to whole groups of 8 */
    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, 83, 16, 67, 2, 1, 1, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_BF16, CT_TYPE_F16, 83, 16, 67, 2, 1, 1, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, 1056, 1, 193, 1, 1, 4, 1, P0213, false);
    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, 1056, 1, 67, 1, 1, 4, 1, P0213, false);
    for (int bs = 1; bs <= 8; bs *= 2)
        for (int nr = 1; nr <= 4; nr += 3)
            for (int dm = 0; dm <= 1; dm++)
                for (int dk = 0; dk <= 1; dk++) {
                    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, 1056 + dm, 1, 128 + dk, bs, 1, nr, 1, P0213, false);
                    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, 128 + dm, 1, 1056 + dk, bs, 1, nr, 1, P0123, true);
                }
    /* edges: one-element everything, odd k for plain types, a vector times a vector */
    add_mul_mat(l, CT_TYPE_F32, CT_TYPE_F32, 1, 1, 1, 1, 1, 1, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_F32, CT_TYPE_F32, 7, 3, 33, 1, 1, 1, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_BF16, CT_TYPE_F32, 5, 3, 17, 2, 1, 1, 1, NULL, false);
    /* 128x128 tiles (ne01 >= 128, ne11 >= 64) for every OpenCL src0 type: partial tiles in both dims,
     * broadcasts, row views; float types also k past the last full 16-step and rows not 16-byte aligned */
    static const ct_type mm128_types[15] = {
        CT_TYPE_F32,  CT_TYPE_F16,  CT_TYPE_BF16, CT_TYPE_Q4_0, CT_TYPE_Q4_1,   CT_TYPE_Q5_0,
        CT_TYPE_Q5_1, CT_TYPE_Q8_0, CT_TYPE_IQ4_NL, CT_TYPE_Q4_K, CT_TYPE_Q5_K, CT_TYPE_Q6_K,
        CT_TYPE_Q2_K, CT_TYPE_Q3_K, CT_TYPE_IQ4_XS,
    };
    for (int i = 0; i < N_OF(mm128_types); i++) {
        ct_type t = mm128_types[i];
        int64_t blck = ct_type_block_size(t), k = blck == 256 ? 512 : 96;
        add_mul_mat(l, t, CT_TYPE_F32, 130, 67, k, 1, 1, 1, 1, NULL, false);
        add_mul_mat(l, t, CT_TYPE_F32, 128, 64, k, 1, 1, 1, 1, NULL, false);
        add_mul_mat(l, t, CT_TYPE_F32, 257, 129, k, 2, 1, 2, 1, NULL, true);
        add_mul_mat(l, t, CT_TYPE_F16, 130, 67, k, 1, 1, 1, 1, NULL, false);
        if (blck == 1) {
            add_mul_mat(l, t, CT_TYPE_F32, 130, 67, 100, 1, 1, 1, 1, NULL, false);
            add_mul_mat(l, t, CT_TYPE_F32, 200, 70, 33, 1, 2, 1, 2, NULL, false);
            add_mul_mat(l, t, CT_TYPE_F32, 129, 65, 7, 1, 1, 1, 1, NULL, true);
        }
    }
    add_mul_mat(l, CT_TYPE_F32, CT_TYPE_F32, 256, 192, 1000, 3, 2, 1, 2, NULL, false);
    add_mul_mat(l, CT_TYPE_Q4_0, CT_TYPE_F32, 384, 130, 1024, 2, 1, 2, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_Q4_0, CT_TYPE_F32, 128, 64, 0, 1, 1, 1, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_F32, CT_TYPE_F32, 128, 64, 0, 1, 1, 1, 1, NULL, false);

    /* CPY */
    for (int i = 0; i < N_OF(all_types); i++) {
        ct_type t = all_types[i];
        int64_t blck = ct_type_block_size(t);
        for (int k = 1; k <= 3; k++) {
            add_cpy(l, t, t, k * blck, 2, 3, 4, NULL, NULL);
            add_cpy(l, t, t, k * blck, 2, 3, 4, P0213, NULL);
            add_cpy(l, t, t, k * blck, 2, 3, 4, P0312, P0213);
        }
    }
    static const ct_type cpy_src[3] = {CT_TYPE_F16, CT_TYPE_BF16, CT_TYPE_F32};
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < N_OF(all_types); i++) {
            add_cpy(l, cpy_src[s], all_types[i], 256, 4, 4, 4, NULL, NULL);
            add_cpy(l, cpy_src[s], all_types[i], 256, 2, 3, 4, P0213, NULL);
        }
    for (int i = 0; i < N_OF(all_types); i++) {
        add_cpy(l, all_types[i], CT_TYPE_F32, 256, 4, 4, 4, NULL, NULL);
        add_cpy(l, all_types[i], CT_TYPE_F32, 256, 2, 3, 4, P0213, NULL);
    }
    for (int s = 0; s < 2; s++)
        for (int d = 0; d < 2; d++) {
            ct_type ts = s ? CT_TYPE_F16 : CT_TYPE_F32, td = d ? CT_TYPE_F16 : CT_TYPE_F32;
            add_cpy(l, ts, td, 256, 2, 3, 4, P1023, NULL);
        }
    /* edges: different shapes with equal counts, odd sizes, an empty tensor */
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F16, 1, 1, 1, 1, NULL, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F32, 7, 5, 3, 1, P1203, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F32, 0, 4, 2, 1, NULL, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_BF16, 33, 3, 1, 1, NULL, P1023);
    /* transposes large enough for the CPU's 8x16 register tiles, with ragged edges */
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F32, 75, 45, 2, 1, P1023, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F32, 64, 600, 1, 1, P1023, NULL);
    /* the fast paths at their edges: a partial last vector, rows in two segments, tiles of 2-byte and
     * converted elements, a one-element dim */
    add_cpy(l, CT_TYPE_F16, CT_TYPE_F32, 37, 3, 1, 1, NULL, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F32, 4100, 3, 2, 1, P0213, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_Q4_0, 4096, 3, 1, 1, NULL, NULL);
    add_cpy(l, CT_TYPE_BF16, CT_TYPE_IQ4_NL, 64, 5, 3, 1, P0213, NULL);
    add_cpy(l, CT_TYPE_Q6_K, CT_TYPE_F16, 17 * 256, 2, 1, 1, NULL, NULL);
    add_cpy(l, CT_TYPE_F16, CT_TYPE_F16, 100, 70, 1, 1, P1023, NULL);
    add_cpy(l, CT_TYPE_BF16, CT_TYPE_F32, 33, 65, 2, 1, P1023, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F32, 1, 40, 3, 1, P1023, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F16, 1024, 1024, 1, 1, NULL, NULL);
    add_cpy(l, CT_TYPE_Q4_0, CT_TYPE_F32, 4096, 160, 1, 1, NULL, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F32, 2048, 150, 2, 1, P0213, NULL);
    add_cpy(l, CT_TYPE_F16, CT_TYPE_F16, 4096, 300, 2, 1, P0213, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_Q8_0, 4096, 100, 1, 1, NULL, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F32, 600, 500, 1, 1, P1023, NULL);
    /* the super-block quantizers: Q8_K both ways, a transposed source, long rows, and rows of
     * zeros, constants, tiny and huge values */
    for (int i = 0; i < N_OF(k_quant_types); i++) {
        const ct_type t = k_quant_types[i];
        if (t == CT_TYPE_Q8_K) {
            for (int s = 0; s < 3; s++) add_cpy(l, cpy_src[s], t, 256, 4, 4, 4, NULL, NULL);
            add_cpy(l, CT_TYPE_F32, t, 256, 2, 3, 4, P0213, NULL);
            add_cpy(l, t, CT_TYPE_F32, 256, 4, 4, 4, NULL, NULL);
            add_cpy(l, t, t, 512, 2, 3, 4, P0213, NULL);
        }
        add_cpy(l, CT_TYPE_F32, t, 256, 512, 1, 1, P1023, NULL);
        add_cpy(l, CT_TYPE_F16, t, 4096, 12, 1, 1, NULL, NULL);
        for (int k = 0; k < N_OF(k_quant_ranges); k++) {
            cto_case c = cto_case_base(CTO_CPY);
            c.ta = CT_TYPE_F32;
            c.tb = t;
            cto_set4(c.ne, 768, 3, 2, 1);
            c.lo = k_quant_ranges[k][0];
            c.hi = k_quant_ranges[k][1];
            cto_case_add(l, c);
        }
    }

    /* DUP */
    static const ct_type dup_types[4] = {CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_I32, CT_TYPE_I16};
    for (int i = 0; i < 4; i++) add_simple(l, CTO_DUP, dup_types[i], 10, 10, 20, 1, NULL);
    for (int i = 0; i < 2; i++) {
        add_simple(l, CTO_DUP, dup_types[i], 10, 10, 5, 1, P0213);
        add_simple(l, CTO_DUP, dup_types[i], 10, 10, 5, 1, P1023);
    }
    add_simple(l, CTO_DUP, CT_TYPE_I16, 10, 8, 3, 1, P0213);
    add_simple(l, CTO_DUP, CT_TYPE_I16, 10, 8, 3, 1, P1203);
    add_simple(l, CTO_DUP, CT_TYPE_BF16, 9, 7, 3, 2, P0321);
    add_simple(l, CTO_DUP, CT_TYPE_Q4_0, 64, 3, 2, 1, NULL);
    add_simple(l, CTO_DUP, CT_TYPE_F32, 1, 1, 1, 1, NULL);

    /* CONT (of a transposed source) */
    static const ct_type cont_types[3] = {CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_BF16};
    add_simple(l, CTO_CONT, CT_TYPE_F32, 10, 10, 10, 1, NULL);
    for (int i = 0; i < 3; i++) {
        add_simple(l, CTO_CONT, cont_types[i], 2, 1, 1, 1, NULL);
        add_simple(l, CTO_CONT, cont_types[i], 2, 1, 3, 5, NULL);
        add_simple(l, CTO_CONT, cont_types[i], 2, 3, 5, 7, NULL);
    }
    add_simple(l, CTO_CONT, CT_TYPE_F32, 33, 17, 1, 1, NULL);
    add_simple(l, CTO_CONT, CT_TYPE_I32, 5, 3, 2, 1, NULL);

    /* CAST */
    static const ct_type cast_pairs[][2] = {
        {CT_TYPE_F32, CT_TYPE_F16}, {CT_TYPE_F16, CT_TYPE_F32}, {CT_TYPE_F32, CT_TYPE_BF16},
        {CT_TYPE_BF16, CT_TYPE_F32}, {CT_TYPE_F16, CT_TYPE_BF16}, {CT_TYPE_F32, CT_TYPE_Q8_0},
        {CT_TYPE_F32, CT_TYPE_Q4_0}, {CT_TYPE_F32, CT_TYPE_IQ4_NL}, {CT_TYPE_Q4_0, CT_TYPE_F32},
        {CT_TYPE_Q6_K, CT_TYPE_F32}, {CT_TYPE_F32, CT_TYPE_F32},
    };
    for (int i = 0; i < N_OF(cast_pairs); i++) {
        add_cast(l, cast_pairs[i][0], cast_pairs[i][1], 256, 3, 2, 1, NULL);
        add_cast(l, cast_pairs[i][0], cast_pairs[i][1], 256, 3, 2, 1, P0213);
    }
    add_cast(l, CT_TYPE_F32, CT_TYPE_F16, 5, 7, 1, 1, P1023);

    /* the norms */
    static const float eps_list[4] = {0.0f, 1e-6f, 1e-4f, 1e-1f};
    for (int e = 0; e < 4; e++) {
        for (int v = 0; v <= 1; v++) {
            add_norm(l, CTO_NORM, 64, 5, 4, 3, v, eps_list[e]);
            add_norm(l, CTO_RMS_NORM, 64, 5, 4, 3, v, eps_list[e]);
        }
        add_norm(l, CTO_L2_NORM, 64, 5, 4, 3, false, eps_list[e]);
    }
    add_norm(l, CTO_L2_NORM, 64, 5, 4, 3, false, 1e-12f);
    /* edges: one-element and odd rows */
    add_norm(l, CTO_NORM, 1, 3, 1, 1, false, 1e-5f);
    add_norm(l, CTO_RMS_NORM, 1, 3, 1, 1, false, 1e-5f);
    add_norm(l, CTO_L2_NORM, 1, 3, 1, 1, false, 1e-5f);
    add_norm(l, CTO_NORM, 4097, 3, 1, 1, false, 1e-5f);
    add_norm(l, CTO_RMS_NORM, 4097, 3, 1, 1, false, 1e-5f);
    add_norm(l, CTO_L2_NORM, 33, 2, 2, 1, false, 1e-5f);
    add_group_norm(l, 64, 64, 320, 1, 32, 1e-6f);
    add_group_norm(l, 9, 9, 1280, 1, 32, 1e-6f);
    /* edges: ne03 > 1 and a truncated last group */
    add_group_norm(l, 8, 8, 64, 3, 32, 1e-6f);
    add_group_norm(l, 5, 5, 30, 1, 4, 1e-6f);
    add_group_norm(l, 3, 1, 7, 2, 3, 1e-5f);

    /* SUM_ROWS and MEAN */
    add_simple(l, CTO_SUM_ROWS, CT_TYPE_F32, 10, 5, 4, 3, NULL);
    add_simple(l, CTO_MEAN, CT_TYPE_F32, 10, 5, 4, 3, NULL);
    add_simple(l, CTO_SUM_ROWS, CT_TYPE_F32, 1, 1, 1, 1, NULL);
    add_simple(l, CTO_MEAN, CT_TYPE_F32, 1, 1, 1, 1, NULL);
    add_simple(l, CTO_SUM_ROWS, CT_TYPE_F32, 4097, 3, 1, 1, NULL);
    add_simple(l, CTO_MEAN, CT_TYPE_F32, 4097, 3, 1, 1, NULL);
    add_simple(l, CTO_SUM_ROWS, CT_TYPE_F32, 10, 5, 4, 3, P1023);
    add_simple(l, CTO_MEAN, CT_TYPE_F32, 10, 5, 4, 3, P0213);
    add_simple(l, CTO_SUM_ROWS, CT_TYPE_F32, 0, 3, 2, 1, NULL);

    /* UNARY: every sub-op on F32 and F16, packed, a view with strided rows, rows of a
     * permuted tensor, odd and one-element rows; ranges that reach GELU's +-10 cut-offs,
     * SOFTPLUS's 20 and (F32) large exponents */
    for (int op = 0; op < CT_UNARY_OP_COUNT; op++) {
        for (int ti = 0; ti < 2; ti++) {
            const ct_type t = ti ? CT_TYPE_F16 : CT_TYPE_F32;
            const bool exp_like = op == CT_UNARY_OP_EXP || op == CT_UNARY_OP_EXPM1;
            const float r = exp_like && t == CT_TYPE_F16 ? 10.0f : 4.0f;
            add_unary(l, op, t, 128, 2, 2, 2, false, NULL, -r, r);
            add_unary(l, op, t, 5, 7, 11, 3, true, NULL, -r, r);
            add_unary(l, op, t, 10, 5, 4, 3, false, P0213, -r, r);
            add_unary(l, op, t, 1, 3, 1, 1, false, NULL, -r, r);
            add_unary(l, op, t, 4097, 3, 1, 1, false, NULL, exp_like && t == CT_TYPE_F16 ? -10.0f : -25.0f,
                      exp_like && t == CT_TYPE_F16 ? 10.0f : 25.0f);
        }
    }
    add_unary(l, CT_UNARY_OP_EXP, CT_TYPE_F32, 256, 3, 1, 1, false, NULL, -80.0f, 80.0f);
    add_unary(l, CT_UNARY_OP_GELU, CT_TYPE_F32, 256, 3, 1, 1, false, P0321, -150.0f, 150.0f);
    add_unary(l, CT_UNARY_OP_GELU_QUICK, CT_TYPE_F16, 256, 3, 1, 1, false, NULL, -150.0f, 150.0f);
    add_unary(l, CT_UNARY_OP_SILU, CT_TYPE_F32, 0, 3, 2, 1, false, NULL, -4.0f, 4.0f);

    /* SCALE: with and without bias, F32 and F16, views, odd and one-element rows */
    add_scale(l, CT_TYPE_F32, 10, 10, 10, 10, false, 2.0f, 0.0f);
    add_scale(l, CT_TYPE_F32, 10, 10, 10, 10, false, 2.0f, 1.0f);
    add_scale(l, CT_TYPE_F32, 100, 10, 10, 10, false, 0.5f, 0.0f);
    add_scale(l, CT_TYPE_F32, 33, 6, 4, 2, true, -1.5f, 0.25f);
    add_scale(l, CT_TYPE_F16, 10, 10, 10, 10, false, 2.0f, 1.0f);
    add_scale(l, CT_TYPE_F16, 33, 6, 4, 2, true, 0.125f, -3.0f);
    add_scale(l, CT_TYPE_F32, 1, 5, 1, 1, false, 3.0f, -1.0f);
    add_scale(l, CT_TYPE_F32, 4097, 3, 1, 1, false, 1e-3f, 0.0f);
    add_scale(l, CT_TYPE_F32, 0, 3, 1, 1, false, 2.0f, 1.0f);
    /* ADD, SUB, MUL, DIV: ggml's broadcast shapes over the three type pairs, src1 permuted */
    static const ct_type bin_types[3][2] = {
        {CT_TYPE_F32, CT_TYPE_F32}, {CT_TYPE_F16, CT_TYPE_F16}, {CT_TYPE_F16, CT_TYPE_F32}};
    static const int bin_shapes[][8] = {
        {1, 1, 8, 1, 1, 1, 1, 1},   {1, 1, 1, 1, 32, 1, 1, 1}, {10, 5, 1, 1, 1, 1, 1, 1},
        {10, 5, 4, 3, 1, 1, 1, 1},  {10, 5, 4, 3, 2, 1, 1, 1}, {10, 5, 4, 3, 1, 2, 1, 1},
        {10, 5, 4, 3, 1, 1, 2, 1},  {10, 5, 4, 3, 1, 1, 1, 2}, {10, 5, 4, 3, 1, 1, 2, 2},
        {10, 5, 4, 3, 1, 2, 2, 2},  {10, 5, 4, 3, 2, 2, 2, 2},
    };
    for (int t = 0; t < 3; t++)
        for (int i = 0; i < N_OF(bin_shapes); i++)
            for (int p = 0; p <= 1; p++) {
                const int *sh = bin_shapes[i];
                add_binary4(l, bin_types[t][0], bin_types[t][1], sh[0], sh[1], sh[2], sh[3], sh[4], sh[5], sh[6],
                            sh[7], p, false, false, false);
            }
    for (int t = 0; t < 3; t++) {
        const ct_type ta = bin_types[t][0], tb = bin_types[t][1];
        /* the transformer rows: [n, tokens] op [n, 1], and a per-row scalar [1, tokens] */
        add_binary4(l, ta, tb, 4096, 1, 1, 1, 1, 7, 1, 1, false, false, false, false);
        add_binary4(l, ta, tb, 1, 7, 1, 1, 4096, 1, 1, 1, false, false, false, false);
        /* odd rows, a non-contiguous src0, edge values (zeros, infinities, NaN, subnormals) */
        add_binary4(l, ta, tb, 33, 3, 2, 1, 3, 1, 1, 2, false, true, false, false);
        add_binary4(l, ta, tb, 37, 5, 3, 2, 1, 2, 1, 1, true, false, false, true);
        add_binary4(l, ta, tb, 1280, 1, 1, 1, 1, 16, 2, 1, false, true, false, true);
        add_binary4(l, ta, tb, 1, 1, 1, 1, 1, 1, 1, 1, false, false, false, true);
        /* one-element dims everywhere but one, and an empty src0 and src1 */
        add_binary4(l, ta, tb, 1, 1, 65, 1, 5, 1, 1, 1, false, false, false, false);
        add_binary4(l, ta, tb, 0, 3, 1, 1, 1, 1, 1, 1, false, false, false, false);
    }
    /* src0 and src1 overlapping views of one tensor */
    add_binary4(l, CT_TYPE_F32, CT_TYPE_F32, 10, 5, 4, 6, 1, 1, 1, 1, false, false, true, false);
    add_binary4(l, CT_TYPE_F16, CT_TYPE_F16, 1, 1, 120, 120, 1, 1, 1, 1, false, false, true, false);
    /* ADD1 */
    for (int t = 0; t < 3; t++) {
        add_binary(l, CTO_ADD1, bin_types[t][0], bin_types[t][1], 10, 5, 4, 3, 1, 1, 1, 1, false, false, false,
                   false);
        add_binary(l, CTO_ADD1, bin_types[t][0], bin_types[t][1], 4097, 3, 1, 1, 1, 1, 1, 1, false, false, false,
                   true);
        add_binary(l, CTO_ADD1, bin_types[t][0], bin_types[t][1], 1, 1, 1, 1, 1, 1, 1, 1, false, false, false, true);
    }
    /* SOFT_MAX: ggml's list (the in-place cases are ordinary ones here; the plugin runs ggml's) */
    for (int mask = 0; mask <= 1; mask++)
        for (int sinks = 0; sinks <= 1; sinks++) {
            for (int bi = 0; bi < 2; bi++) {
                const float max_bias = bi ? 8.0f : 0.0f;
                if (!mask && max_bias > 0.0f) continue;
                for (int si = 0; si < 2; si++) {
                    const float scale = si ? 0.1f : 1.0f;
                    static const int64_t sizes[2] = {16, 1024};
                    for (int i0 = 0; i0 < 2; i0++)
                        for (int i1 = 0; i1 < 2; i1++) {
                            const int64_t ne0 = sizes[i0], ne1 = sizes[i1];
                            if (!mask) {
                                add_soft_max(l, ne0, ne1, 1, 1, false, sinks, CT_TYPE_F32, 1, 1, scale, max_bias);
                                add_soft_max(l, ne0 - 1, ne1 - 1, 1, 1, false, sinks, CT_TYPE_F32, 1, 1, scale,
                                             max_bias);
                                continue;
                            }
                            for (int mp = 0; mp < 2; mp++) {
                                const ct_type m_prec = mp ? CT_TYPE_F16 : CT_TYPE_F32;
                                add_soft_max(l, ne0, ne1, 1, 1, true, sinks, m_prec, 1, 1, scale, max_bias);
                                add_soft_max(l, ne0 - 1, ne1 - 1, 1, 1, true, sinks, m_prec, 1, 1, scale, max_bias);
                                if (ne0 <= 32 && ne1 <= 32) {
                                    add_soft_max(l, ne0, ne1, 1, 3, true, sinks, m_prec, 3, 1, scale, max_bias);
                                    add_soft_max(l, ne0 - 1, ne1 - 1, 1, 1, true, sinks, m_prec, 2, 3, scale,
                                                 max_bias);
                                }
                            }
                        }
                }
            }
            add_soft_max(l, 16, 2, 32, 1, mask, sinks, CT_TYPE_F32, 1, 1, 0.1f, 0.0f);
            add_soft_max(l, 16, 2, 32, 1, mask, sinks, CT_TYPE_F16, 1, 1, 0.1f, 0.0f);
        }
    add_soft_max(l, 16, 2, 32, 1, true, true, CT_TYPE_F32, 1, 1, 0.1f, 0.0f);
    add_soft_max(l, 16, 2, 32, 1, true, false, CT_TYPE_F16, 1, 1, 0.1f, 0.0f);
    add_soft_max(l, 16, 2, 32, 1, false, true, CT_TYPE_F32, 1, 1, 0.1f, 0.0f);
    add_soft_max(l, 32, 2, 32, 1, true, true, CT_TYPE_F32, 1, 1, 0.1f, 0.0f);
    add_soft_max(l, 32, 2, 32, 1, true, false, CT_TYPE_F16, 1, 1, 0.1f, 0.0f);
    add_soft_max(l, 32, 2, 32, 1, true, true, CT_TYPE_F32, 1, 1, 0.1f, 8.0f);
    add_soft_max(l, 32, 2, 32, 1, true, true, CT_TYPE_F16, 1, 1, 0.1f, 8.0f);
    add_soft_max(l, 200001, 2, 3, 1, true, true, CT_TYPE_F32, 1, 1, 0.1f, 8.0f);
    add_soft_max(l, 200001, 2, 3, 1, true, true, CT_TYPE_F16, 1, 1, 0.1f, 8.0f);
    add_soft_max(l, 200000, 1, 1, 1, false, false, CT_TYPE_F32, 1, 1, 1.0f, 0.0f);
    add_soft_max(l, 200000, 4, 1, 1, false, false, CT_TYPE_F32, 1, 1, 1.0f, 0.0f);
    add_soft_max(l, 4, 1, 1, 1, false, false, CT_TYPE_F32, 1, 1, 1.0f, 0.0f);
    add_soft_max(l, 4, 1023, 1, 1, false, false, CT_TYPE_F32, 1, 1, 1.0f, 0.0f);
    add_soft_max(l, 643251, 3, 1, 1, false, false, CT_TYPE_F32, 1, 1, 1.0f, 0.0f);
    /* edges: one-element rows and dims, empty rows, ALiBi over 5, 12 and 40 heads (n_head_log2 below
     * n_head), causal -INFINITY masks (F32 and F16) taller than a, whole -INFINITY rows with sinks,
     * strided and permuted a, wide inputs, negative scale, a negative max_bias (no ALiBi) */
    add_soft_max(l, 1, 1, 1, 1, false, false, CT_TYPE_F32, 1, 1, 1.0f, 0.0f);
    add_soft_max(l, 1, 7, 3, 2, true, true, CT_TYPE_F16, 1, 1, 0.5f, 0.0f);
    add_soft_max(l, 0, 3, 2, 1, true, true, CT_TYPE_F32, 1, 1, 1.0f, 0.0f);
    add_soft_max(l, 33, 4, 5, 2, true, false, CT_TYPE_F32, 1, 1, 0.3f, 8.0f);
    add_soft_max(l, 64, 3, 12, 1, true, true, CT_TYPE_F16, 1, 1, 1.0f, 4.0f);
    add_soft_max(l, 17, 2, 8, 1, true, false, CT_TYPE_F32, 5, 1, 1.0f, 2.0f); /* 40 heads, mask over 8 */
    for (int mp = 0; mp < 2; mp++) {
        const ct_type m_prec = mp ? CT_TYPE_F16 : CT_TYPE_F32;
        cto_case c = soft_max_case(256, 32, 4, 1, true, false, m_prec, 2, 1, 0.125f, 0.0f); /* causal, n_kv 256 */
        c.mask_inf = 1;
        c.r = 3; /* the mask has 3 rows more than a (ggml pads it) */
        cto_case_add(l, c);
        c = soft_max_case(4096, 5, 2, 1, true, false, m_prec, 4, 1, 0.088f, 0.0f);
        c.mask_inf = 1;
        cto_case_add(l, c);
        c = soft_max_case(100, 9, 2, 1, true, true, m_prec, 2, 1, 1.0f, 0.0f); /* whole -INF rows, sinks */
        c.mask_inf = 2;
        cto_case_add(l, c);
        c = soft_max_case(4096, 6, 2, 1, true, true, m_prec, 1, 1, 1.0f, 8.0f);
        c.mask_inf = 2;
        cto_case_add(l, c);
    }
    {
        cto_case c = soft_max_case(40, 6, 3, 2, true, true, CT_TYPE_F16, 1, 1, 0.7f, 0.0f);
        c.v = true; /* a's rows 43 floats apart */
        cto_case_add(l, c);
        c = soft_max_case(1000, 6, 3, 1, true, false, CT_TYPE_F32, 1, 1, 1.0f, 0.0f);
        c.v = true;
        cto_case_add(l, c);
        c = soft_max_case(24, 5, 4, 2, true, true, CT_TYPE_F32, 1, 1, 1.0f, 0.0f);
        cto_setp(c.per, 0, 2, 1, 3); /* a [24, 4, 5, 2] permuted to [24, 5, 4, 2]: heads and tokens swap */
        c.use_per = true;
        cto_case_add(l, c);
        c = soft_max_case(8, 12, 4, 1, false, false, CT_TYPE_F32, 1, 1, 1.0f, 0.0f);
        cto_setp(c.per, 1, 0, 2, 3); /* transposed: a's elements 12 floats apart */
        c.use_per = true;
        cto_case_add(l, c);
        c = soft_max_case(300, 7, 2, 1, true, true, CT_TYPE_F32, 1, 1, 1.0f, 0.0f);
        c.lo = -100.0f; c.hi = 100.0f;
        cto_case_add(l, c);
        add_soft_max(l, 129, 3, 2, 1, true, false, CT_TYPE_F16, 1, 1, -1.5f, -1.0f);
        add_soft_max(l, 4097, 3, 1, 1, false, true, CT_TYPE_F32, 1, 1, 1.0f, 0.0f);
        add_soft_max(l, 2048, 64, 8, 1, true, false, CT_TYPE_F16, 4, 1, 0.088f, 0.0f);
    }
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) families[i]->test_cases(l);
}

/* ---- perf list ------------------------------------------------------------ */

/* x scaled, rounded down to a multiple of mult, at least lo. */
int64_t cto_scaled(int64_t x, double s, int64_t mult, int64_t lo) {
    int64_t v = (int64_t)((double)x * s);
    v -= v % mult;
    return v < lo ? lo : v;
}

void cto_cases_perf(cto_case_list *l, double s) {
    static const int P0213[4] = {0, 2, 1, 3}, P1023[4] = {1, 0, 2, 3}, P0123[4] = {0, 1, 2, 3};
    static const ct_type set_types[] = {
        CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_BF16, CT_TYPE_Q8_0, CT_TYPE_Q4_0,
        CT_TYPE_Q4_1, CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_IQ4_NL,
    };
    static const ct_type get_types[] = {
        CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_Q8_0, CT_TYPE_Q4_0, CT_TYPE_Q4_K, CT_TYPE_Q6_K,
    };

    int64_t dst_rows = cto_scaled(65536, s, 1, 64);
    static const int64_t set_r[3] = {1, 32, 16384};
    for (int i = 0; i < N_OF(set_types); i++)
        for (int j = 0; j < 3; j++) {
            int64_t r = set_r[j] > 32 ? cto_scaled(set_r[j], s, 1, 32) : set_r[j];
            if (r > dst_rows) r = dst_rows;
            add_set_rows(l, set_types[i], 4096, dst_rows, 1, 1, 1, 1, r, false, CT_TYPE_F32, CT_TYPE_I64);
        }

    int64_t src_rows = cto_scaled(32768, s, 1, 64);
    for (int i = 0; i < N_OF(get_types); i++) {
        add_get_rows(l, get_types[i], 4096, src_rows, 1, 1, false);
        add_get_rows(l, get_types[i], 4096, src_rows, cto_scaled(16384, s, 1, 32), 1, false);
    }

    int64_t cpy_rows = cto_scaled(4096, s, 1, 16);
    static const ct_type cpy_pairs[][2] = {
        {CT_TYPE_F32, CT_TYPE_F16}, {CT_TYPE_F32, CT_TYPE_BF16}, {CT_TYPE_F32, CT_TYPE_Q8_0},
        {CT_TYPE_F32, CT_TYPE_Q4_0}, {CT_TYPE_Q4_0, CT_TYPE_F32}, {CT_TYPE_F16, CT_TYPE_F32},
    };
    for (int i = 0; i < N_OF(cpy_pairs); i++)
        add_cpy(l, cpy_pairs[i][0], cpy_pairs[i][1], 4096, cpy_rows, 1, 1, NULL, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F32, 4096, cpy_rows, 1, 1, P1023, NULL);
    /* the super-block quantizers: their scale searches are compute-bound (CPU and REF only) */
    static const ct_type cpy_k[3] = {CT_TYPE_Q4_K, CT_TYPE_Q6_K, CT_TYPE_Q8_K};
    for (int i = 0; i < N_OF(cpy_k); i++)
        add_cpy(l, CT_TYPE_F32, cpy_k[i], 4096, cto_scaled(512, s, 1, 4), 1, 1, NULL, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F16, 512, cto_scaled(3072, s, 1, 16), 1, 1, NULL, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F32, 8192, cto_scaled(512, s, 1, 4), 2, 1, P0213, NULL);
    add_cpy(l, CT_TYPE_F32, CT_TYPE_F32, 3072, cto_scaled(512, s, 1, 4), 2, 1, P0213, NULL);

    static const cto_kind norm_kinds[5] = {CTO_RMS_NORM, CTO_NORM, CTO_L2_NORM, CTO_SUM_ROWS, CTO_MEAN};
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 2; j++) {
            cto_case c = cto_case_base(norm_kinds[i]);
            if (j == 0) cto_set4(c.ne, 8192, cto_scaled(8192, s, 1, 16), 1, 1);
            else cto_set4(c.ne, 4096, 1, 1, 1);
            c.eps = 1e-6f;
            cto_case_add(l, c);
        }
    }
    add_simple(l, CTO_MEAN, CT_TYPE_F32, 256, 256, 3, 1, NULL);

    /* MUL_MAT: ggml's test-backend-ops list over all types (docs/TESTING.md, Case lists),
     * then the big square F32/F16/Q4_0 ones */
    /* binary ops: the transformer's [n_embd, n_tokens] op [n_embd, 1], same shapes, F16 */
    static const cto_kind bin_kinds[2] = {CTO_ADD, CTO_MUL};
    for (int i = 0; i < 2; i++) {
        add_binary(l, bin_kinds[i], CT_TYPE_F32, CT_TYPE_F32, 4096, 1, 1, 1, 1, (int)cto_scaled(4096, s, 1, 16), 1, 1, false,
                   false, false, false);
        add_binary(l, bin_kinds[i], CT_TYPE_F32, CT_TYPE_F32, 4096, cto_scaled(4096, s, 1, 16), 1, 1, 1, 1, 1, 1, false,
                   false, false, false);
        add_binary(l, bin_kinds[i], CT_TYPE_F32, CT_TYPE_F32, 4096, 1, 1, 1, 1, 1, 1, 1, false, false, false, false);
    }
    add_binary(l, CTO_ADD, CT_TYPE_F16, CT_TYPE_F32, 4096, 1, 1, 1, 1, (int)cto_scaled(4096, s, 1, 16), 1, 1, false, false,
               false, false);
    add_binary(l, CTO_DIV, CT_TYPE_F32, CT_TYPE_F32, 4096, 1, 1, 1, 1, (int)cto_scaled(4096, s, 1, 16), 1, 1, false, false,
               false, false);
    /* SOFT_MAX on attention scores [n_kv, n_tokens, n_head]: F16 causal mask broadcast over the heads */
    static const int64_t sm_shapes[4][3] = {{4096, 32, 32}, {512, 512, 32}, {4096, 1, 32}, {32, 32, 32}};
    for (int i = 0; i < 4; i++) {
        cto_case c = soft_max_case(sm_shapes[i][0], cto_scaled(sm_shapes[i][1], s, 1, 1), 1, 1, true, false, CT_TYPE_F16,
                                   (int)sm_shapes[i][2], 1, 0.088f, 0.0f);
        c.mask_inf = 1;
        cto_case_add(l, c);
    }

    /* MUL_MAT: SPEC's list over all types, then the big square F32/F16/Q4_0 ones */
    static const int64_t mm_n[7] = {1, 2, 3, 4, 5, 8, 512};
    int64_t mm_m = cto_scaled(4096, s, 16, 16);
    for (int ni = 0; ni < 7; ni++)
        for (int i = 0; i < N_OF(all_types); i++)
            add_mul_mat(l, all_types[i], CT_TYPE_F32, mm_m, mm_n[ni], 14336, 1, 1, 1, 1, NULL, false);
    /* issue 5's mat-vec list again on 16384 x 16384 weights */
    static const ct_type mv_types[13] = {CT_TYPE_F16,  CT_TYPE_BF16, CT_TYPE_Q8_0,   CT_TYPE_Q4_0, CT_TYPE_Q4_1,
                                         CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_IQ4_NL, CT_TYPE_Q4_K, CT_TYPE_Q6_K,
                                         CT_TYPE_Q2_K, CT_TYPE_Q3_K, CT_TYPE_IQ4_XS};
    static const int64_t mv_n[4] = {1, 2, 4, 8};
    for (int ni = 0; ni < 4; ni++)
        for (int i = 0; i < N_OF(mv_types); i++)
            add_mul_mat(l, mv_types[i], CT_TYPE_F32, cto_scaled(16384, s, 16, 16), mv_n[ni], cto_scaled(16384, s, 256, 256), 1, 1, 1,
                        1, NULL, false);
    /* a Llama-3-8B layer's decode mat-vecs in its weight types: q and o (4096 x 4096), k and v
     * (1024 x 4096), gate and up (14336 x 4096); down is SPEC's 4096 x 14336 above */
    static const int64_t layer_mk[3][2] = {{4096, 4096}, {1024, 4096}, {14336, 4096}};
    static const ct_type layer_types[4] = {CT_TYPE_Q4_0, CT_TYPE_Q8_0, CT_TYPE_Q4_K, CT_TYPE_Q6_K};
    for (int si = 0; si < 3; si++)
        for (int i = 0; i < 4; i++)
            add_mul_mat(l, layer_types[i], CT_TYPE_F32, cto_scaled(layer_mk[si][0], s, 16, 16), 1,
                        cto_scaled(layer_mk[si][1], s, 256, 256), 1, 1, 1, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, cto_scaled(16416, s, 16, 16), 1, 128, 8, 1, 4, 1, P0213, false);
    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F32, 128, 1, cto_scaled(16416, s, 32, 32), 8, 1, 4, 1, P0123, true);
    /* an F16 src1 (widened first) at the decode and batch shapes */
    add_mul_mat(l, CT_TYPE_Q4_K, CT_TYPE_F16, cto_scaled(4096, s, 16, 16), 1, 14336, 1, 1, 1, 1, NULL, false);
    add_mul_mat(l, CT_TYPE_F16, CT_TYPE_F16, cto_scaled(4096, s, 16, 16), 512, 4096, 1, 1, 1, 1, NULL, false);
    static const ct_type sq_types[3] = {CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_Q4_0};
    for (int i = 0; i < 3; i++)
        add_mul_mat(l, sq_types[i], CT_TYPE_F32, cto_scaled(16384, s, 16, 16), 512, cto_scaled(16384, s, 256, 256), 1, 1, 1, 1, NULL,
                    false);

    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) families[i]->perf_cases(l, s);

    cto_case c = cto_case_base(CTO_CHAIN);
    cto_set4(c.ne, 64, 1, 1, 1);
    c.n = 1000;
    cto_case_add(l, c);
}

/* ---- graphs --------------------------------------------------------------- */

ct_context *cto_case_context(int n_rep) {
    size_t nodes = (size_t)n_rep * 4 + 1200;
    ct_context_params p;
    p.mem_size = ct_tensor_overhead() * (nodes * 2 + 256) + ct_graph_overhead(nodes) * 2 +
                 nodes * ct_graph_overhead(1) + ((size_t)1 << 20);
    p.mem_buffer = NULL;
    p.no_alloc = true;
    return ct_context_new(p);
}

ct_tensor *cto_chk(cto_builder *b, ct_tensor *t) {
    if (!t && !b->err[0]) snprintf(b->err, sizeof b->err, "%s", ct_last_error());
    return t;
}

static ct_tensor *sentinel(cto_builder *b) {
    ct_tensor *s = cto_chk(b, ct_tensor_new_1d(b->ctx, CT_TYPE_F32, 1024));
    if (!s) return NULL;
    ct_tensor_set_name(s, "sent");
    if (b->n_leaf < CTO_MAX_LEAF) {
        cto_leaf *lf = &b->leaf[b->n_leaf++];
        lf->t = s;
        lf->init = CTO_INIT_SENTINEL;
        lf->lo = -1.0f;
        lf->hi = 1.0f;
        lf->m = 0;
    }
    return s;
}

/* A new input tensor (uniform init in [lo, hi]) followed by a sentinel. */
ct_tensor *cto_new_tensor(cto_builder *b, ct_type type, const int64_t ne[4], float lo, float hi) {
    ct_tensor *t = cto_chk(b, ct_tensor_new(b->ctx, type, 4, ne));
    if (!t) return NULL;
    if (b->n_leaf >= CTO_MAX_LEAF - 1) {
        snprintf(b->err, sizeof b->err, "ct-ops: too many tensors in one case");
        return NULL;
    }
    cto_leaf *lf = &b->leaf[b->n_leaf++];
    lf->t = t;
    lf->init = CTO_INIT_UNIFORM;
    lf->lo = lo;
    lf->hi = hi;
    lf->m = 0;
    if (b->sentinels && !sentinel(b)) return NULL;
    return t;
}

ct_tensor *cto_new4(cto_builder *b, ct_type type, int64_t a, int64_t c, int64_t d, int64_t e, float lo, float hi) {
    int64_t ne[4] = {a, c, d, e};
    return cto_new_tensor(b, type, ne, lo, hi);
}

void cto_set_init(cto_builder *b, ct_tensor *t, int init, int64_t m) {
    for (int i = 0; i < b->n_leaf; i++) {
        if (b->leaf[i].t == t) {
            b->leaf[i].init = init;
            b->leaf[i].m = m;
        }
    }
}

const cto_leaf *cto_builder_leaf(const cto_builder *b, const ct_tensor *t) {
    for (int i = 0; i < b->n_leaf; i++)
        if (b->leaf[i].t == t) return &b->leaf[i];
    return NULL;
}

bool cto_builder_finish(cto_builder *b) {
    return !b->sentinels || sentinel(b) != NULL;
}

ct_tensor *cto_permute(cto_builder *b, ct_tensor *t, const int per[4]) {
    if (!t) return NULL;
    return cto_chk(b, ct_permute(b->ctx, t, per[0], per[1], per[2], per[3]));
}

ct_tensor *cto_new_f32_source(const cto_case *c, cto_builder *b, int variant) {
    const int64_t *ne = c->ne;
    ct_tensor *x;
    switch (variant) {
    case CTO_SRC_PERMUTED: return cto_permute(b, cto_new_tensor(b, CT_TYPE_F32, ne, c->lo, c->hi), c->per);
    case CTO_SRC_STRIDED:
        x = cto_new4(b, CT_TYPE_F32, ne[0] + 3, ne[1] + 1, ne[2], ne[3], c->lo, c->hi);
        return x ? cto_chk(b, ct_view_4d(b->ctx, x, ne[0], ne[1], ne[2], ne[3], x->nb[1], x->nb[2], x->nb[3],
                                         x->nb[0])) : NULL;
    case CTO_SRC_TRANSPOSED:
        x = cto_new4(b, CT_TYPE_F32, ne[1], ne[0], ne[2], ne[3], c->lo, c->hi);
        return x ? cto_chk(b, ct_transpose(b->ctx, x)) : NULL;
    case CTO_SRC_EDGE:
        x = cto_new_tensor(b, CT_TYPE_F32, ne, c->lo, c->hi);
        if (x) cto_set_init(b, x, CTO_INIT_EDGE, 0);
        return x;
    case CTO_SRC_TIES:
        x = cto_new_tensor(b, CT_TYPE_F16, ne, c->lo, c->hi);
        return x ? cto_chk(b, ct_cast(b->ctx, x, CT_TYPE_F32)) : NULL;
    default: return cto_new_tensor(b, CT_TYPE_F32, ne, c->lo, c->hi);
    }
}

bool cto_case_build(const cto_case *c, cto_builder *b, int n_rep, ct_tensor **outs) {
    ct_context *ctx = b->ctx;
    ct_tensor *x = NULL, *y = NULL, *z = NULL;
    float lo = c->lo, hi = c->hi;
    if (b->sentinels && !sentinel(b)) return false;
    for (int i = 0; i < n_rep; i++) outs[i] = NULL;

    const cto_family *f = family_of(c->kind);
    switch (f ? CTO_KIND_COUNT : c->kind) {
    case CTO_KIND_COUNT: /* a family file's kind */
        f->build(c, b, n_rep, outs);
        break;
    case CTO_GET_ROWS:
        x = cto_new4(b, c->ta, c->n, c->m, c->b, 1, lo, hi);
        y = cto_new4(b, c->ti, c->r, c->b, 1, 1, lo, hi);
        if (!x || !y) break;
        cto_set_init(b, y, CTO_INIT_INDEX_MOD, c->m);
        if (c->v) y = cto_chk(b, ct_view_2d(ctx, y, c->r / 2, c->b, y->nb[1], 0));
        for (int i = 0; y && i < n_rep; i++) outs[i] = cto_chk(b, ct_get_rows(ctx, x, y));
        break;
    case CTO_SET_ROWS: {
        int64_t ne2 = c->ne[2] * c->nr[0], ne3 = c->ne[3] * c->nr[1];
        x = cto_new4(b, c->ta, c->ne[0], c->ne[1], ne2, ne3, lo, hi);
        y = cto_new4(b, c->tb, c->ne[0], c->r, ne2, ne3, lo, hi);
        z = cto_new4(b, c->ti, c->r, c->ne[2], c->ne[3], 1, lo, hi);
        if (!x || !y || !z) break;
        cto_set_init(b, z, CTO_INIT_INDEX_PERM, c->ne[1]);
        if (c->v) {
            y = cto_chk(b, ct_view_4d(ctx, y, c->ne[0], c->r / 2, ne2, ne3, y->nb[1], y->nb[2], y->nb[3], 0));
            z = cto_chk(b, ct_view_3d(ctx, z, c->r / 2, c->ne[2], c->ne[3], z->nb[1], z->nb[2], 0));
        }
        for (int i = 0; y && z && i < n_rep; i++) outs[i] = cto_chk(b, ct_set_rows(ctx, x, y, z));
        break;
    }
    case CTO_MUL_MAT: {
        int64_t na[4] = {c->k, c->m, c->bs[0], c->bs[1]};
        int64_t nb[4] = {c->k, c->n, (int64_t)c->bs[0] * c->nr[0], (int64_t)c->bs[1] * c->nr[1]};
        if (c->use_per) {
            int64_t pa[4], pb[4];
            for (int i = 0; i < 4; i++) {
                pa[i] = na[c->per[i]];
                pb[i] = nb[c->per[i]];
            }
            x = cto_permute(b, cto_new_tensor(b, c->ta, pa, lo, hi), c->per);
            y = cto_permute(b, cto_new_tensor(b, c->tb, pb, lo, hi), c->per);
        } else if (c->v) {
            x = cto_new4(b, c->ta, 2 * c->k, na[1], na[2], na[3], lo, hi);
            y = cto_new4(b, c->tb, 2 * c->k, nb[1], nb[2], nb[3], lo, hi);
            if (x) x = cto_chk(b, ct_view_4d(ctx, x, c->k, na[1], na[2], na[3], x->nb[1], x->nb[2], x->nb[3], 0));
            if (y) y = cto_chk(b, ct_view_4d(ctx, y, c->k, nb[1], nb[2], nb[3], y->nb[1], y->nb[2], y->nb[3], 0));
        } else {
            x = cto_new_tensor(b, c->ta, na, lo, hi);
            y = cto_new_tensor(b, c->tb, nb, lo, hi);
        }
        for (int i = 0; x && y && i < n_rep; i++) outs[i] = cto_chk(b, ct_mul_mat(ctx, x, y));
        break;
    }
    case CTO_CPY:
        x = cto_new_tensor(b, c->ta, c->ne, lo, hi);
        if (x && c->use_per) x = cto_permute(b, x, c->per);
        if (x) y = cto_new_tensor(b, c->tb, x->ne, lo, hi);
        if (y && c->use_per2) y = cto_permute(b, y, c->per2);
        for (int i = 0; x && y && i < n_rep; i++) outs[i] = cto_chk(b, ct_cpy(ctx, x, y));
        break;
    case CTO_DUP: case CTO_CAST: case CTO_SUM_ROWS: case CTO_MEAN:
        x = cto_new_tensor(b, c->ta, c->ne, lo, hi);
        if (x && c->use_per) x = cto_permute(b, x, c->per);
        for (int i = 0; x && i < n_rep; i++) {
            if (c->kind == CTO_DUP) outs[i] = cto_chk(b, ct_dup(ctx, x));
            else if (c->kind == CTO_CAST) outs[i] = cto_chk(b, ct_cast(ctx, x, c->tb));
            else if (c->kind == CTO_SUM_ROWS) outs[i] = cto_chk(b, ct_sum_rows(ctx, x));
            else outs[i] = cto_chk(b, ct_mean(ctx, x));
        }
        break;
    case CTO_CONT:
        x = cto_new_tensor(b, c->ta, c->ne, lo, hi);
        if (x) x = cto_chk(b, ct_transpose(ctx, x));
        for (int i = 0; x && i < n_rep; i++) outs[i] = cto_chk(b, ct_cont(ctx, x));
        break;
    case CTO_NORM: case CTO_RMS_NORM: case CTO_L2_NORM: case CTO_GROUP_NORM:
        x = cto_new_tensor(b, c->ta, c->ne, lo, hi);
        if (x && c->v)
            x = cto_chk(b, ct_view_4d(ctx, x, x->ne[0] / 2, x->ne[1] / 2, x->ne[2] / 2, x->ne[3] / 2, x->nb[1], x->nb[2],
                                  x->nb[3], 0));
        for (int i = 0; x && i < n_rep; i++) {
            if (c->kind == CTO_NORM) outs[i] = cto_chk(b, ct_norm(ctx, x, c->eps));
            else if (c->kind == CTO_RMS_NORM) outs[i] = cto_chk(b, ct_rms_norm(ctx, x, c->eps));
            else if (c->kind == CTO_L2_NORM) outs[i] = cto_chk(b, ct_l2_norm(ctx, x, c->eps));
            else outs[i] = cto_chk(b, ct_group_norm(ctx, x, c->n_groups, c->eps));
        }
        break;
    case CTO_UNARY: case CTO_SCALE:
        x = cto_new_tensor(b, c->ta, c->ne, lo, hi);
        if (x && c->v)
            x = cto_chk(b, ct_view_4d(ctx, x, (x->ne[0] + 1) / 2, (x->ne[1] + 1) / 2, (x->ne[2] + 1) / 2,
                                  (x->ne[3] + 1) / 2, x->nb[1], x->nb[2], x->nb[3], 0));
        if (x && c->use_per) x = cto_permute(b, x, c->per);
        for (int i = 0; x && i < n_rep; i++) {
            if (c->kind == CTO_SCALE) outs[i] = cto_chk(b, ct_scale_bias(ctx, x, c->s, c->bias));
            else if (c->uop == CT_UNARY_OP_XIELU) outs[i] = cto_chk(b, ct_xielu(ctx, x, 0.8f, 0.8f, 0.5f, -1e-6f));
            else outs[i] = cto_chk(b, ct_unary(ctx, x, (ct_unary_op)c->uop));
        }
        break;
    case CTO_ADD: case CTO_SUB: case CTO_MUL: case CTO_DIV: case CTO_ADD1: {
        int64_t na[4];
        for (int i = 0; i < 4; i++) na[i] = c->kind == CTO_ADD1 ? c->ne[i] : c->ne[i] * c->rep[i];
        if (c->r == 1) { /* overlapping views of one tensor */
            x = cto_new_tensor(b, c->ta, c->ne, lo, hi);
            if (x) {
                const int64_t n3 = 2 * (c->ne[3] / 3);
                y = cto_chk(b, ct_view_4d(ctx, x, c->ne[0], c->ne[1], c->ne[2], n3, x->nb[1], x->nb[2], x->nb[3],
                                      (size_t)(c->ne[3] / 3) * x->nb[3]));
                x = cto_chk(b, ct_view_4d(ctx, x, c->ne[0], c->ne[1], c->ne[2], n3, x->nb[1], x->nb[2], x->nb[3], 0));
            }
        } else {
            if (c->v) {
                x = cto_new4(b, c->ta, 2 * na[0] + 1, na[1], na[2], na[3], lo, hi);
                if (x) x = cto_chk(b, ct_view_4d(ctx, x, na[0], na[1], na[2], na[3], x->nb[1], x->nb[2], x->nb[3],
                                             ct_type_size(c->ta)));
            } else {
                x = cto_new_tensor(b, c->ta, na, lo, hi);
            }
            if (c->edge) cto_set_init(b, x && x->view_src ? x->view_src : x, CTO_INIT_EDGE, 0);
            if (c->kind == CTO_ADD1) {
                y = cto_new4(b, c->tb, 1, 1, 1, 1, lo, hi);
            } else if (c->use_per) {
                int64_t pb[4];
                for (int i = 0; i < 4; i++) pb[i] = c->ne[c->per[i]];
                y = cto_permute(b, cto_new_tensor(b, c->tb, pb, lo, hi), c->per);
            } else {
                y = cto_new_tensor(b, c->tb, c->ne, lo, hi);
            }
            if (c->edge && y) cto_set_init(b, y->view_src ? y->view_src : y, CTO_INIT_EDGE, 0);
        }
        for (int i = 0; x && y && i < n_rep; i++) {
            if (c->kind == CTO_ADD) outs[i] = cto_chk(b, ct_add(ctx, x, y));
            else if (c->kind == CTO_SUB) outs[i] = cto_chk(b, ct_sub(ctx, x, y));
            else if (c->kind == CTO_MUL) outs[i] = cto_chk(b, ct_mul(ctx, x, y));
            else if (c->kind == CTO_DIV) outs[i] = cto_chk(b, ct_div(ctx, x, y));
            else outs[i] = cto_chk(b, ct_add1(ctx, x, y));
        }
        break;
    }
    case CTO_SOFT_MAX: {
        const int64_t ne[4] = {c->ne[0], c->ne[1], c->ne[2] * c->nr[0], c->ne[3] * c->nr[1]};
        if (c->use_per) {
            int64_t pe[4]; /* created in the permuted order, then permuted back to ne */
            for (int i = 0; i < 4; i++) pe[i] = ne[c->per[i]];
            x = cto_permute(b, cto_new_tensor(b, CT_TYPE_F32, pe, lo, hi), c->per);
        } else if (c->v) {
            x = cto_new4(b, CT_TYPE_F32, ne[0] + 3, ne[1], ne[2], ne[3], lo, hi);
            if (x) x = cto_chk(b, ct_view_4d(ctx, x, ne[0], ne[1], ne[2], ne[3], x->nb[1], x->nb[2], x->nb[3], 0));
        } else {
            x = cto_new_tensor(b, CT_TYPE_F32, ne, lo, hi);
        }
        if (c->mask) {
            y = cto_new4(b, c->tb, c->ne[0], c->ne[1] + c->r, c->ne[2], c->ne[3], -1.0f, 1.0f);
            if (y && c->mask_inf) cto_set_init(b, y, CTO_INIT_MASK, c->mask_inf);
        }
        if (c->sinks) z = cto_new4(b, CT_TYPE_F32, ne[2], 1, 1, 1, -1.0f, 1.0f);
        const bool ok = x && (!c->mask || y) && (!c->sinks || z);
        for (int i = 0; ok && i < n_rep; i++)
            outs[i] = cto_chk(b, ct_soft_max_ext(ctx, x, y, z, c->scale, c->max_bias));
        break;
    }
    case CTO_CHAIN:
        x = cto_new_tensor(b, CT_TYPE_F32, c->ne, lo, hi);
        for (int64_t i = 0; x && i < c->n; i++) x = cto_chk(b, ct_rms_norm(ctx, x, 1e-6f));
        outs[0] = x;
        for (int i = 1; i < n_rep; i++) outs[i] = x;
        break;
    default:
        snprintf(b->err, sizeof b->err, "ct-ops: unknown case kind %d", (int)c->kind);
        return false;
    }
    for (int i = 0; i < n_rep; i++) {
        if (!outs[i]) {
            if (!b->err[0]) snprintf(b->err, sizeof b->err, "%s", ct_last_error());
            return false;
        }
    }
    return true;
}

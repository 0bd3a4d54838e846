/* ct-ops cases of the shape ops REPEAT, CONCAT, PAD, ARANGE and ACC (docs/TESTING.md, Case
 * lists): ggml's test-backend-ops cases, edges (types of every size, strided, permuted and
 * viewed sources, one-element and empty dims, circular padding, in place), perf. Every
 * backend moves the same bytes (ARANGE and ACC: one float operation a value), so results are
 * compared exactly. Parameters: REPEAT fam_i[0..3] the repeats; CONCAT fam_i[0] dim, [1] b's
 * size in dim, [2] ggml's view flags (1: a viewed, 2: b viewed); PAD fam_i[0..7] the pads, r
 * circular; ARANGE fam_f[0..2] start, stop, step; ACC fam_i[0..3] b's shape, [4] ggml's
 * stride_dim (b a view at an offset), [5] the window's offset in elements, r in place;
 * use_per: the source transposed (dims 0 and 1), v: its rows strided. */
#include "ct_ops.h"

#include <string.h>

static bool shape_owns(cto_kind kind) {
    return kind == CTO_REPEAT || kind == CTO_CONCAT || kind == CTO_PAD || kind == CTO_ARANGE || kind == CTO_ACC;
}

static void shape_name(const cto_case *c, char *buf, size_t n) {
    char ne[96];
    const int *p = c->fam_i;
    cto_fmt_ne(ne, sizeof ne, c->ne);
    switch (c->kind) {
    case CTO_REPEAT:
        snprintf(buf, n, "type=%s,ne=%s,nr=[%d,%d,%d,%d]%s%s", ct_type_name(c->ta), ne, p[0], p[1], p[2], p[3],
                 c->use_per ? ",transposed" : "", c->v ? ",strided" : "");
        break;
    case CTO_CONCAT:
        snprintf(buf, n, "type=%s,ne_a=%s,ne_b_d=%d,dim=%d,v=%d%s", ct_type_name(c->ta), ne, p[1], p[0], p[2],
                 c->use_per ? ",permuted" : "");
        break;
    case CTO_PAD:
        snprintf(buf, n, "ne=%s,pads=[%d,%d,%d,%d,%d,%d,%d,%d],circular=%d%s", ne, p[0], p[1], p[2], p[3], p[4], p[5],
                 p[6], p[7], (int)c->r, c->use_per ? ",transposed" : "");
        break;
    case CTO_ARANGE:
        snprintf(buf, n, "start=%g,stop=%g,step=%g", (double)c->fam_f[0], (double)c->fam_f[1], (double)c->fam_f[2]);
        break;
    default:
        snprintf(buf, n, "ne_a=%s,ne_b=[%d,%d,%d,%d],stride_dim=%d,offset=%d,inplace=%d", ne, p[0], p[1], p[2], p[3],
                 p[4], p[5], (int)c->r);
        break;
    }
}

static void add_repeat(cto_case_list *l, ct_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, int r0, int r1,
                       int r2, int r3, bool per, bool v) {
    cto_case c = cto_case_base(CTO_REPEAT);
    c.ta = t;
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.fam_i[0] = r0, c.fam_i[1] = r1, c.fam_i[2] = r2, c.fam_i[3] = r3;
    c.use_per = per;
    c.v = v;
    cto_case_add(l, c);
}

static void add_concat(cto_case_list *l, ct_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, int ne_b_d,
                       int dim, int v, bool per) {
    cto_case c = cto_case_base(CTO_CONCAT);
    c.ta = t;
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.fam_i[0] = dim, c.fam_i[1] = ne_b_d, c.fam_i[2] = v;
    c.use_per = per;
    cto_case_add(l, c);
}

static void add_pad(cto_case_list *l, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, const int p[8], bool circ,
                    bool per) {
    cto_case c = cto_case_base(CTO_PAD);
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    memcpy(c.fam_i, p, 8 * sizeof(int));
    c.r = circ;
    c.use_per = per;
    cto_case_add(l, c);
}

static void add_arange(cto_case_list *l, float start, float stop, float step) {
    cto_case c = cto_case_base(CTO_ARANGE);
    c.fam_f[0] = start, c.fam_f[1] = stop, c.fam_f[2] = step;
    cto_case_add(l, c);
}

static void add_acc(cto_case_list *l, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int b0, int b1, int b2, int b3,
                    int stride_dim, int offset, bool inplace) {
    cto_case c = cto_case_base(CTO_ACC);
    cto_set4(c.ne, a0, a1, a2, a3);
    c.fam_i[0] = b0, c.fam_i[1] = b1, c.fam_i[2] = b2, c.fam_i[3] = b3, c.fam_i[4] = stride_dim, c.fam_i[5] = offset;
    c.r = inplace;
    cto_case_add(l, c);
}

static void shape_test_cases(cto_case_list *l) {
    /* REPEAT: ggml's, then other types, a transposed and a strided source, one element, empty */
    for (int ne3 = 1; ne3 <= 2; ne3++) {
        add_repeat(l, CT_TYPE_F32, 10, 5, 4, ne3, 1, 1, 1, 1, false, false);
        add_repeat(l, CT_TYPE_F32, 10, 5, 4, ne3, 2, 1, 1, 1, false, false);
        add_repeat(l, CT_TYPE_F32, 10, 5, 4, ne3, 1, 2, 1, 1, false, false);
        add_repeat(l, CT_TYPE_F32, 10, 5, 4, ne3, 1, 1, 2, 1, false, false);
        add_repeat(l, CT_TYPE_F32, 10, 5, 4, ne3, 1, 1, 1, 2, false, false);
        add_repeat(l, CT_TYPE_F16, 10, 5, 4, ne3, 2, 1, 1, 1, false, false);
        add_repeat(l, CT_TYPE_I32, 10, 5, 4, ne3, 2, 1, 1, 1, false, false);
        add_repeat(l, CT_TYPE_I16, 10, 5, 4, ne3, 1, 1, 1, 2, false, false);
        add_repeat(l, CT_TYPE_BF16, 10, 5, 4, ne3, 2, 1, 1, 1, false, false);
    }
    add_repeat(l, CT_TYPE_I8, 7, 3, 2, 1, 3, 2, 1, 2, false, false);
    add_repeat(l, CT_TYPE_I64, 7, 3, 2, 1, 2, 1, 3, 1, false, false);
    add_repeat(l, CT_TYPE_F32, 6, 4, 2, 1, 2, 3, 1, 2, true, false);
    add_repeat(l, CT_TYPE_F16, 9, 4, 3, 2, 2, 2, 2, 1, false, true);
    add_repeat(l, CT_TYPE_F32, 1, 1, 1, 1, 64, 3, 2, 1, false, false);
    add_repeat(l, CT_TYPE_F32, 4, 1, 1, 1, 0, 1, 1, 1, false, false);
    /* CONCAT: ggml's list, then a permuted source and block types' edge shapes */
    static const ct_type ct7[7] = {CT_TYPE_F32, CT_TYPE_F16, CT_TYPE_BF16, CT_TYPE_I8, CT_TYPE_I16, CT_TYPE_I32, CT_TYPE_I64};
    for (int v = 0; v < 4; v++)
        for (int dim = 0; dim < 4; dim++)
            for (int t = 0; t < 7; t++) add_concat(l, ct7[t], 11, 12, 13, 14, 7, dim, v, false);
    static const ct_type qt[5] = {CT_TYPE_Q4_0, CT_TYPE_Q4_1, CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_Q8_0};
    for (int t = 0; t < 5; t++)
        for (int dim = 0; dim < 4; dim++) add_concat(l, qt[t], 128, 12, 3, 2, dim == 0 ? 256 : 7, dim, dim % 2 ? 2 : 0, false);
    for (int dim = 0; dim < 4; dim++) {
        add_concat(l, CT_TYPE_F32, 6, 5, 4, 3, 2, dim, 0, true);
        add_concat(l, CT_TYPE_F16, 1, 1, 1, 1, 1, dim, 3, false);
        add_concat(l, CT_TYPE_F32, 5, 3, 2, 2, 0, dim, 0, false);
    }
    /* PAD: ggml's, then every dim both sides, circular past a dim's size, a transposed source, empty */
    static const int p_def[8] = {0, 1, 0, 1, 0, 0, 0, 0};
    add_pad(l, 512, 512, 1, 1, p_def, false, false);
    static const int p_c[8] = {4, 3, 3, 4, 0, 0, 0, 0};
    add_pad(l, 33, 17, 2, 1, p_c, true, false);
    static const int p_ext[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    add_pad(l, 512, 512, 3, 1, p_ext, false, false);
    static const int lr[][2] = {{1, 0}, {1, 0}, {0, 1}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0},
                                {100, 0}, {0, 100}, {50, 50}};
    static const int64_t sz[][2] = {{1024, 1}, {1024, 2}, {1024, 16}, {1023, 1}, {1023, 8}, {1025, 1}, {1025, 8},
                                    {2048, 1}, {2048, 4}, {2049, 1}, {100, 1}, {100, 1}, {100, 100}};
    for (int i = 0; i < CTO_N_OF(lr); i++) {
        const int p[8] = {lr[i][0], lr[i][1], lr[i][0], lr[i][1], 0, 0, 0, 0};
        add_pad(l, sz[i][0], sz[i][1], 1, 1, p, false, false);
    }
    static const int p_all[8] = {2, 1, 0, 3, 1, 1, 2, 0};
    add_pad(l, 7, 5, 3, 2, p_all, false, false);
    add_pad(l, 7, 5, 3, 2, p_all, true, false);
    add_pad(l, 7, 5, 3, 2, p_all, false, true);
    add_pad(l, 7, 5, 3, 2, p_all, true, true);
    static const int p_wrap[8] = {9, 11, 5, 0, 0, 4, 3, 3};
    add_pad(l, 3, 2, 1, 2, p_wrap, true, false);
    add_pad(l, 0, 2, 1, 1, p_def, false, false);
    /* ARANGE: ggml's, then fractional steps and a non-integral count */
    add_arange(l, 0.0f, 10.0f, 1.0f);
    add_arange(l, 0.0f, 1048576.0f, 1.0f);
    add_arange(l, -3.5f, 7.25f, 0.3f);
    add_arange(l, 1e6f, 1e6f + 100.0f, 0.7f);
    add_arange(l, 0.0f, 1.0f, 4.0f);
    /* ACC: ggml's list, then in place, an offset, one element */
    add_acc(l, 256, 17, 1, 1, 256, 16, 1, 1, -1, 0, false);
    add_acc(l, 256, 17, 2, 3, 256, 16, 2, 3, -1, 0, false);
    add_acc(l, 256, 17, 2, 3, 128, 16, 2, 3, -1, 0, false);
    add_acc(l, 256, 17, 2, 3, 256, 16, 2, 3, 1, 0, false);
    add_acc(l, 256, 17, 2, 3, 128, 16, 2, 3, 2, 0, false);
    add_acc(l, 256, 17, 2, 3, 64, 16, 2, 3, 3, 0, false);
    add_acc(l, 256, 17, 2, 3, 64, 16, 2, 3, 3, 0, true);
    add_acc(l, 33, 9, 2, 1, 7, 5, 2, 1, -1, 33 * 2 + 5, false);
    add_acc(l, 33, 9, 2, 1, 7, 5, 2, 1, 2, 33 * 2 + 5, true);
    add_acc(l, 5, 1, 1, 1, 1, 1, 1, 1, -1, 4, false);
    add_acc(l, 5, 3, 1, 1, 0, 2, 1, 1, -1, 0, false);
}

static void shape_perf_cases(cto_case_list *l, double s) {
    const int64_t tok = cto_scaled(512, s, 1, 1);
    add_repeat(l, CT_TYPE_F32, 4096, 1, 1, 1, 1, (int)tok, 1, 1, false, false);
    add_repeat(l, CT_TYPE_F16, 128, 8, tok, 1, 1, 1, 4, 1, false, false); /* GQA-style: KV heads repeated */
    add_concat(l, CT_TYPE_F32, 4096, tok, 1, 1, (int)tok, 1, 0, false);
    add_concat(l, CT_TYPE_F16, 64, 8, tok, 1, 64, 0, 0, false);
    static const int p[8] = {0, 0, 0, 1, 0, 0, 0, 0};
    add_pad(l, 4096, tok, 1, 1, p, false, false);
    add_arange(l, 0.0f, 1048576.0f, 1.0f);
    add_acc(l, 4096, tok, 1, 1, 2048, (int)tok, 1, 1, -1, 1024, false);
}

static void shape_build(const cto_case *c, cto_builder *b, int n_rep, ct_tensor **outs) {
    ct_context *ctx = b->ctx;
    const int64_t *ne = c->ne;
    const int *p = c->fam_i;
    const float lo = c->lo, hi = c->hi;
    static const int T[4] = {1, 0, 2, 3};
    ct_tensor *x = NULL, *y = NULL;
    switch (c->kind) {
    case CTO_REPEAT:
    case CTO_PAD:
        if (c->use_per) {
            x = cto_permute(b, cto_new4(b, c->ta, ne[1], ne[0], ne[2], ne[3], lo, hi), T);
        } else if (c->v) {
            x = cto_new4(b, c->ta, 2 * ne[0] + 1, ne[1], ne[2], ne[3], lo, hi);
            if (x) x = cto_chk(b, ct_view_4d(ctx, x, ne[0], ne[1], ne[2], ne[3], x->nb[1], x->nb[2], x->nb[3], 0));
        } else {
            x = cto_new_tensor(b, c->ta, ne, lo, hi);
        }
        break;
    case CTO_CONCAT: {
        int64_t nb_[4] = {ne[0], ne[1], ne[2], ne[3]};
        nb_[p[0]] = p[1];
        if (c->use_per) { /* a created with dims 1 and 2 swapped, permuted back */
            static const int P[4] = {0, 2, 1, 3};
            x = cto_permute(b, cto_new4(b, c->ta, ne[0], ne[2], ne[1], ne[3], lo, hi), P);
        } else if (p[2] & 1) {
            x = cto_new4(b, c->ta, 2 * ne[0], 4 * ne[1], 3 * ne[2], ne[3], lo, hi);
            if (x) x = cto_chk(b, ct_view_4d(ctx, x, ne[0], ne[1], ne[2], ne[3], x->nb[1], x->nb[2], x->nb[3], 0));
        } else {
            x = cto_new_tensor(b, c->ta, ne, lo, hi);
        }
        if (p[2] & 2) {
            y = cto_new4(b, c->ta, 3 * nb_[0], 2 * nb_[1], 4 * nb_[2], nb_[3], lo, hi);
            if (y) y = cto_chk(b, ct_view_4d(ctx, y, nb_[0], nb_[1], nb_[2], nb_[3], y->nb[1], y->nb[2], y->nb[3], 0));
        } else {
            y = cto_new4(b, c->ta, nb_[0], nb_[1], nb_[2], nb_[3], lo, hi);
        }
        if (!y) return;
        break;
    }
    case CTO_ACC: {
        x = cto_new_tensor(b, CT_TYPE_F32, ne, lo, hi);
        const int sd = p[4];
        if (sd >= 1 && sd <= 3) { /* b a view of a larger tensor, one row (of dim sd) in */
            int64_t np[4] = {p[0], p[1], p[2], p[3]};
            np[sd] += 1;
            y = cto_new4(b, CT_TYPE_F32, np[0], np[1], np[2], np[3], lo, hi);
            if (y) y = cto_chk(b, ct_view_4d(ctx, y, p[0], p[1], p[2], p[3], y->nb[1], y->nb[2], y->nb[3], y->nb[1]));
        } else {
            y = cto_new4(b, CT_TYPE_F32, p[0], p[1], p[2], p[3], lo, hi);
        }
        if (!y) return;
        break;
    }
    default: break;
    }
    if (!x && c->kind != CTO_ARANGE) return;
    for (int i = 0; i < n_rep; i++) {
        ct_tensor *r = NULL;
        switch (c->kind) {
        case CTO_REPEAT: r = ct_repeat_4d(ctx, x, ne[0] * p[0], ne[1] * p[1], ne[2] * p[2], ne[3] * p[3]); break;
        case CTO_CONCAT: r = ct_concat(ctx, x, y, p[0]); break;
        case CTO_PAD:
            r = c->r ? ct_pad_ext_circular(ctx, x, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7])
                     : ct_pad_ext(ctx, x, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
            break;
        case CTO_ARANGE: r = ct_arange(ctx, c->fam_f[0], c->fam_f[1], c->fam_f[2]); break;
        case CTO_ACC: {
            const size_t off = (size_t)p[5] * sizeof(float);
            r = c->r ? ct_acc_inplace(ctx, x, y, x->nb[1], x->nb[2], x->nb[3], off)
                     : ct_acc(ctx, x, y, x->nb[1], x->nb[2], x->nb[3], off);
            break;
        }
        default: break;
        }
        outs[i] = cto_chk(b, r);
    }
}

const cto_family cto_family_shape = {
    .owns = shape_owns,
    .exact = true,
    .max_nmse = 0.0,
    .name = shape_name,
    .test_cases = shape_test_cases,
    .perf_cases = shape_perf_cases,
    .build = shape_build,
};

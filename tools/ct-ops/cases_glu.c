/* ct-ops cases of GLU (docs/TESTING.md, Case lists): ggml's test_glu, test_glu_split,
 * test_swiglu_oai and test_swiglu_clamp lists on F32 and F16, edges, perf.
 * fam_i: [0] the ct_glu_op, [1] split, [2] swapped, [3] v (rows of a wider tensor, as
 * ggml's v = 1); fam_f: [0] alpha, [1] limit. c->ne is a's (and b's) shape; use_per:
 * the sources are created with dims 1 and 2 swapped and permuted back. */
#include "ct_ops.h"

static bool glu_owns(cto_kind kind) { return kind == CTO_GLU; }

static void glu_name(const cto_case *c, char *buf, size_t n) {
    char ne[96], extra[96] = "";
    cto_fmt_ne(ne, sizeof ne, c->ne);
    const int op = c->fam_i[0];
    if (op == CT_GLU_OP_SWIGLU_OAI) snprintf(extra, sizeof extra, ",alpha=%g,limit=%g", (double)c->fam_f[0], (double)c->fam_f[1]);
    if (op == CT_GLU_OP_SWIGLU_CLAMP) snprintf(extra, sizeof extra, ",limit=%g", (double)c->fam_f[1]);
    snprintf(buf, n, "op=%s,type=%s,ne_a=%s,v=%d,swapped=%d%s%s%s,range=[%g,%g]", ct_glu_op_name((ct_glu_op)op),
             ct_type_name(c->ta), ne, c->fam_i[3], c->fam_i[2], c->fam_i[1] ? ",split" : "", extra,
             c->use_per ? ",permuted" : "", (double)c->lo, (double)c->hi);
}

static void add_glu(cto_case_list *l, int op, ct_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, bool split,
                    bool swapped, int v, float alpha, float limit, bool per, float lo, float hi) {
    cto_case c = cto_case_base(CTO_GLU);
    c.ta = c.tb = t;
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.fam_i[0] = op, c.fam_i[1] = split, c.fam_i[2] = swapped, c.fam_i[3] = v;
    c.fam_f[0] = alpha, c.fam_f[1] = limit;
    if (per) {
        cto_setp(c.per, 0, 2, 1, 3);
        c.use_per = true;
    }
    c.lo = lo, c.hi = hi;
    cto_case_add(l, c);
}

static void glu_test_cases(cto_case_list *l) {
    static const ct_type types[2] = {CT_TYPE_F32, CT_TYPE_F16};
    /* ggml's lists: every sub-op but SWIGLU_OAI and SWIGLU_CLAMP fused (both halves' orders)
     * and split, packed and as rows of a wider tensor, inputs in [-150, 150] */
    for (int ti = 0; ti < 2; ti++)
        for (int v = 0; v <= 1; v++)
            for (int op = 0; op < CT_GLU_OP_COUNT; op++) {
                if (op == CT_GLU_OP_SWIGLU_OAI || op == CT_GLU_OP_SWIGLU_CLAMP) continue;
                for (int sw = 0; sw <= 1; sw++) {
                    add_glu(l, op, types[ti], 128, 2, 2, 2, false, sw, v, 0, 0, false, -150.0f, 150.0f);
                    add_glu(l, op, types[ti], 5, 7, 11, 13, false, sw, v, 0, 0, false, -150.0f, 150.0f);
                }
                add_glu(l, op, types[ti], 128, 2, 2, 2, true, false, v, 0, 0, false, -150.0f, 150.0f);
                add_glu(l, op, types[ti], 5, 7, 11, 13, true, false, v, 0, 0, false, -150.0f, 150.0f);
            }
    for (int v = 0; v <= 1; v++)
        for (int ai = 0; ai < 2; ai++)
            for (int li = 0; li < 2; li++)
                add_glu(l, CT_GLU_OP_SWIGLU_OAI, CT_TYPE_F32, 128, 2, 2, 2, true, false, v, ai ? 1.702f : 0.5f,
                        li ? 7.0f : 2.0f, false, -150.0f, 150.0f);
    for (int ti = 0; ti < 2; ti++)
        for (int v = 0; v <= 1; v++)
            for (int li = 0; li < 2; li++)
                add_glu(l, CT_GLU_OP_SWIGLU_CLAMP, types[ti], 128, 2, 2, 2, true, false, v, 0.0f, li ? 10.0f : 2.0f,
                        false, -150.0f, 150.0f);
    /* edges, every sub-op on both types: inputs near 0 (where the activations bend), SWIGLU_OAI
     * and SWIGLU_CLAMP fused (swapped too: ct_glu with ggml_glu's zero alpha and limit) and on
     * F16, odd and one-element dims, a one-element row (fused: an empty result), permuted
     * sources, zeros, rows longer than the CPU's chunk */
    for (int ti = 0; ti < 2; ti++) {
        const ct_type t = types[ti];
        for (int op = 0; op < CT_GLU_OP_COUNT; op++) {
            add_glu(l, op, t, 64, 3, 2, 1, false, false, 0, 1.702f, 7.0f, false, -4.0f, 4.0f);
            add_glu(l, op, t, 64, 3, 2, 1, false, true, 1, 0.0f, 0.0f, false, -4.0f, 4.0f);
            add_glu(l, op, t, 33, 3, 1, 2, true, false, 1, 0.5f, 2.0f, false, -4.0f, 4.0f);
            add_glu(l, op, t, 2, 1, 1, 1, false, false, 0, 1.702f, 7.0f, false, -4.0f, 4.0f);
            add_glu(l, op, t, 1, 3, 1, 1, true, false, 0, 1.702f, 7.0f, false, -4.0f, 4.0f);
            add_glu(l, op, t, 1, 3, 1, 1, false, false, 0, 1.702f, 7.0f, false, -4.0f, 4.0f);
            add_glu(l, op, t, 20, 5, 6, 1, false, true, 0, 1.702f, 7.0f, true, -4.0f, 4.0f);
            add_glu(l, op, t, 20, 5, 6, 1, true, false, 0, 1.702f, 7.0f, true, -4.0f, 4.0f);
            add_glu(l, op, t, 1030, 3, 1, 1, true, false, 0, 1.702f, 7.0f, false, -10.0f, 10.0f);
            add_glu(l, op, t, 8, 2, 1, 1, true, false, 0, 1.702f, 7.0f, false, 0.0f, 0.0f);
        }
    }
    /* F32 past fp16's range: products overflow to inf alike on every backend (not GEGLU_QUICK,
     * whose fp16 table turns such x into NaN on the CPU as in ggml-cpu) */
    static const int big[5] = {CT_GLU_OP_REGLU, CT_GLU_OP_GEGLU, CT_GLU_OP_SWIGLU, CT_GLU_OP_GEGLU_ERF,
                               CT_GLU_OP_SWIGLU_OAI};
    for (int i = 0; i < 5; i++)
        add_glu(l, big[i], CT_TYPE_F32, 256, 2, 1, 1, true, false, 0, 1.702f, 7.0f, false, -1e20f, 1e20f);
    /* empty */
    add_glu(l, CT_GLU_OP_SWIGLU, CT_TYPE_F32, 0, 3, 2, 1, true, false, 0, 0, 0, false, -1.0f, 1.0f);
    add_glu(l, CT_GLU_OP_GEGLU, CT_TYPE_F16, 6, 0, 2, 1, false, false, 0, 0, 0, false, -1.0f, 1.0f);
}

static void glu_perf_cases(cto_case_list *l, double s) {
    /* FFN gates: Gemma 3 270M's GEGLU (n_ff 2048) and a Llama 8B SWIGLU (14336), split, over a
     * 512-token batch and one decode token; a fused SWIGLU; F16 */
    const int64_t tokens = cto_scaled(512, s, 1, 1);
    add_glu(l, CT_GLU_OP_GEGLU, CT_TYPE_F32, 2048, tokens, 1, 1, true, false, 0, 0, 0, false, -4.0f, 4.0f);
    add_glu(l, CT_GLU_OP_SWIGLU, CT_TYPE_F32, 14336, tokens, 1, 1, true, false, 0, 0, 0, false, -4.0f, 4.0f);
    add_glu(l, CT_GLU_OP_SWIGLU, CT_TYPE_F32, 14336, 1, 1, 1, true, false, 0, 0, 0, false, -4.0f, 4.0f);
    add_glu(l, CT_GLU_OP_SWIGLU, CT_TYPE_F32, 2 * 14336, tokens, 1, 1, false, false, 0, 0, 0, false, -4.0f, 4.0f);
    add_glu(l, CT_GLU_OP_SWIGLU, CT_TYPE_F16, 14336, tokens, 1, 1, true, false, 0, 0, 0, false, -4.0f, 4.0f);
    add_glu(l, CT_GLU_OP_SWIGLU_OAI, CT_TYPE_F32, 2880, tokens, 1, 1, true, false, 0, 1.702f, 7.0f, false, -4.0f, 4.0f);
}

/* One source of the case: packed, rows of a tensor three times as wide (v), or created
 * with dims 1 and 2 swapped and permuted back. */
static ct_tensor *glu_src(const cto_case *c, cto_builder *b) {
    const int64_t *ne = c->ne;
    if (c->fam_i[3]) {
        ct_tensor *t = cto_new4(b, c->ta, 3 * ne[0], ne[1], ne[2], ne[3], c->lo, c->hi);
        return t ? cto_chk(b, ct_view_4d(b->ctx, t, ne[0], ne[1], ne[2], ne[3], t->nb[1], t->nb[2], t->nb[3], 0)) : NULL;
    }
    if (c->use_per) return cto_permute(b, cto_new4(b, c->ta, ne[0], ne[2], ne[1], ne[3], c->lo, c->hi), c->per);
    return cto_new_tensor(b, c->ta, ne, c->lo, c->hi);
}

static void glu_build(const cto_case *c, cto_builder *b, int n_rep, ct_tensor **outs) {
    const int op = c->fam_i[0];
    const bool split = c->fam_i[1], swapped = c->fam_i[2];
    ct_tensor *x = glu_src(c, b), *g = split ? glu_src(c, b) : NULL;
    if (!x || (split && !g)) return;
    const float alpha = c->fam_f[0], limit = c->fam_f[1];
    for (int i = 0; i < n_rep; i++) {
        ct_tensor *r;
        if (op == CT_GLU_OP_SWIGLU_OAI && !swapped)
            r = ct_swiglu_oai(b->ctx, x, g, alpha, limit);
        else if (op == CT_GLU_OP_SWIGLU_CLAMP && !swapped)
            r = ct_swiglu_clamp(b->ctx, x, g, limit);
        else
            r = split ? ct_glu_split(b->ctx, x, g, (ct_glu_op)op) : ct_glu(b->ctx, x, (ct_glu_op)op, swapped);
        outs[i] = cto_chk(b, r);
    }
}

const cto_family cto_family_glu = {
    .owns = glu_owns,
    .exact = false,
    .max_nmse = 1e-7,
    .name = glu_name,
    .test_cases = glu_test_cases,
    .perf_cases = glu_perf_cases,
    .build = glu_build,
};

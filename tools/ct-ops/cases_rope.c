/* ct-ops cases of ROPE (docs/TESTING.md, Case lists): ggml's test_rope list, edges, perf. */
#include "ct_ops.h"

static bool rope_owns(cto_kind kind) {
    return kind == CTO_ROPE;
}

static void rope_name(const cto_case *c, char *buf, size_t n) {
    char ne[96];
    cto_fmt_ne(ne, sizeof ne, c->ne);
    snprintf(buf, n, "type=%s,ne_a=%s,n_dims=%d,mode=%d,n_ctx=%d,fs=%f,ef=%f,af=%f,ff=%d,v=%d,inplace=%d,n_offs=%d%s",
             ct_type_name(c->ta), ne, c->rope.n_dims, c->rope.mode, c->rope.n_ctx, (double)c->rope.fs, (double)c->rope.ef,
             (double)c->rope.af, c->rope.ff, c->rope.view, c->rope.inplace, c->rope.n_offs,
             c->rope.per ? ",permuted" : "");
}

static void add_rope(cto_case_list *l, ct_type t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, int n_dims,
                     int mode, int n_ctx, float fs, float ef, float af, bool ff, int view, bool inplace, int n_offs,
                     bool per) {
    cto_case c = cto_case_base(CTO_ROPE);
    c.ta = t;
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.rope.n_dims = n_dims, c.rope.mode = mode, c.rope.n_ctx = n_ctx, c.rope.view = view, c.rope.n_offs = n_offs;
    c.rope.fs = fs, c.rope.ef = ef, c.rope.af = af, c.rope.ff = ff, c.rope.inplace = inplace, c.rope.per = per;
    cto_case_add(l, c);
}

/* ggml's test_rope list (forward only), then edges. */
static void rope_test_cases(cto_case_list *l) {
    enum { N = CT_ROPE_TYPE_NORMAL, X = CT_ROPE_TYPE_NEOX, M = CT_ROPE_TYPE_MROPE, V = CT_ROPE_TYPE_VISION,
           I = CT_ROPE_TYPE_IMROPE };
    static const ct_type types[2] = {CT_TYPE_F32, CT_TYPE_F16};
    bool all = true;
    for (int fsi = 0; fsi < 2; fsi++)
        for (int efi = 0; efi < 2; efi++)
            for (int afi = 0; afi < 2; afi++)
                for (int ti = 0; ti < 2; ti++) {
                    const float fs = fsi ? 1.4245f : 1.0f, ef = efi ? 0.7465f : 0.0f, af = afi ? 1.4245f : 1.0f;
                    const ct_type t = types[ti];
                    for (int ff = 0; ff <= 1; ff++) {
                        for (int v = 0; v <= 1; v++) {
#define R(a, b, cc, d, nd, md) add_rope(l, t, a, b, cc, d, nd, md, 512, fs, ef, af, ff, v, false, 0, false)
                            R(128, 32, 2, 1, 128, N);
                            if (all) {
                                R(128, 40, 2, 1, 128, N); R(128, 52, 2, 1, 128, N); R(128, 64, 2, 1, 128, N);
                                R(16, 16, 8192, 1, 16, N);
                                R(64, 1, 2, 1, 64, X); R(64, 71, 2, 1, 64, X); R(64, 8, 2, 1, 64, X);
                                R(80, 32, 2, 1, 20, N); R(80, 32, 2, 1, 32, N); R(80, 32, 4, 1, 32, N);
                                R(80, 32, 2, 1, 20, X); R(80, 32, 2, 1, 32, X); R(80, 32, 4, 1, 32, X);
                                R(16, 16, 8192, 1, 16, X);
                                R(128, 12, 2, 1, 128, M); R(128, 28, 2, 1, 128, M); R(128, 12, 2, 1, 20, M);
                                R(128, 28, 2, 1, 32, M); R(128, 12, 2, 1, 128, I); R(128, 28, 2, 1, 128, I);
                                R(128, 12, 2, 1, 20, I); R(128, 28, 2, 1, 32, I); R(80, 16, 2, 1, 80, V);
                                R(128, 16, 2, 1, 128, I); R(16, 16, 8192, 1, 16, I);
                            }
                            R(64, 128, 2, 1, 64, X);
#undef R
                        }
                        static const int modes[5] = {N, X, M, I, V};
                        for (int m = 0; m < 5; m++)
                            add_rope(l, t, 36, 16, 2457, 1, 36, modes[m], 512, fs, ef, af, ff, 2, false, 0, false);
                    }
                    all = false;
                }
    static const int modes[5] = {N, X, M, I, V};
    for (int ti = 0; ti < 2; ti++) {
        for (int m = 0; m < 5; m++)
            for (int ff = 0; ff <= 1; ff++) {
                add_rope(l, types[ti], 128, 32, 2, 1, 128, modes[m], 512, 1.4245f, 0.7465f, 1.4245f, ff, 0, true, 0, false);
                add_rope(l, types[ti], 128, 32, 2, 1, 128, modes[m], 512, 1.4245f, 0.7465f, 1.4245f, ff, 1, true, 0, false);
                add_rope(l, types[ti], 128, 32, 2, 3, 128, modes[m], 512, 1.4245f, 0.7465f, 1.4245f, ff, 1, true, 0, false);
            }
        for (int ff = 0; ff <= 1; ff++) {
            add_rope(l, types[ti], 128, 32, 2, 1, 32, N, 512, 1.4245f, 0.7465f, 1.4245f, ff, 0, false, 32, false);
            add_rope(l, types[ti], 128, 32, 2, 1, 32, X, 512, 1.4245f, 0.7465f, 1.4245f, ff, 0, false, 32, false);
            add_rope(l, types[ti], 128, 12, 2, 1, 24, M, 512, 1.4245f, 0.7465f, 1.4245f, ff, 0, false, 32, false);
            add_rope(l, types[ti], 128, 12, 2, 1, 24, I, 512, 1.4245f, 0.7465f, 1.4245f, ff, 0, false, 32, false);
        }
        add_rope(l, types[ti], 128, 32, 2, 1, 32, X, 512, 1.4245f, 0.7465f, 1.4245f, false, 0, true, 32, false);
    }
    add_rope(l, CT_TYPE_F32, 256, 8, 512, 1, 64, I, 512, 1.0f, 0.0f, 1.0f, false, 0, false, 0, false);
    add_rope(l, CT_TYPE_F32, 256, 8, 512, 1, 256, X, 512, 1.0f, 0.0f, 1.0f, false, 0, false, 0, false);
    add_rope(l, CT_TYPE_F32, 512, 8, 512, 1, 128, X, 512, 1.0f, 0.0f, 1.0f, true, 0, false, 0, false);
    /* edges: one head, one token, two pairs, odd rows with copied tails, ne3 > 1, far
     * positions, a YaRN context, the source permuted (heads and tokens swapped) */
    for (int ti = 0; ti < 2; ti++) {
        const ct_type t = types[ti];
        add_rope(l, t, 2, 1, 1, 1, 2, N, 512, 1.0f, 0.0f, 1.0f, false, 0, false, 0, false);
        add_rope(l, t, 4, 1, 1, 1, 4, X, 512, 1.0f, 0.7465f, 1.0f, true, 0, false, 0, false);
        add_rope(l, t, 33, 3, 5, 2, 20, N, 512, 1.0f, 0.0f, 1.0f, false, 0, false, 6, false);
        add_rope(l, t, 33, 3, 5, 2, 20, X, 512, 1.4245f, 0.7465f, 1.0f, true, 0, false, 2, false);
        add_rope(l, t, 64, 7, 9, 3, 64, X, 131072, 1.0f, 0.0f, 1.0f, false, 0, false, 0, false);
        add_rope(l, t, 64, 7, 9, 3, 48, N, 131072, 0.25f, 1.0f, 1.0f, true, 0, false, 0, false);
        add_rope(l, t, 64, 5, 6, 1, 64, N, 512, 1.0f, 0.0f, 1.0f, false, 0, false, 0, true);
        add_rope(l, t, 64, 5, 6, 1, 32, X, 512, 1.4245f, 0.7465f, 1.4245f, true, 0, false, 0, true);
        add_rope(l, t, 64, 5, 6, 1, 64, M, 512, 1.4245f, 0.7465f, 1.4245f, true, 0, false, 0, true);
        add_rope(l, t, 40, 3, 2, 1, 40, V, 512, 1.0f, 0.7465f, 1.0f, true, 1, false, 0, false);
    }
}


static void rope_perf_cases(cto_case_list *l, double s) {
    /* a 4096-token prefill of 32 heads of 128 (NORMAL and NEOX, F32 and F16), one decode token */
    for (int ti = 0; ti < 2; ti++) {
        const ct_type t = ti ? CT_TYPE_F16 : CT_TYPE_F32;
        const int64_t tokens = cto_scaled(4096, s, 1, 1);
        add_rope(l, t, 128, 32, tokens, 1, 128, CT_ROPE_TYPE_NORMAL, 4096, 1.0f, 0.0f, 1.0f, false, 0, false, 0, false);
        add_rope(l, t, 128, 32, tokens, 1, 128, CT_ROPE_TYPE_NEOX, 4096, 1.0f, 0.0f, 1.0f, false, 0, false, 0, false);
    }
    add_rope(l, CT_TYPE_F32, 128, 32, 1, 1, 128, CT_ROPE_TYPE_NEOX, 4096, 1.0f, 0.0f, 1.0f, false, 0, false, 0, false);
}

static void rope_build(const cto_case *c, cto_builder *b, int n_rep, ct_tensor **outs) {
    ct_context *ctx = b->ctx;
    ct_tensor *x = NULL, *y = NULL, *z = NULL;
    const float lo = c->lo, hi = c->hi;
    const int64_t *ne = c->ne;
    const int mode = c->rope.mode, nd = c->rope.n_dims;
    const bool multi = (mode & CT_ROPE_TYPE_MROPE) != 0, vision = mode == CT_ROPE_TYPE_VISION;
    if (c->rope.view == 1) {
        x = cto_new4(b, c->ta, 2 * ne[0], 4 * ne[1], 3 * ne[2], ne[3], lo, hi);
        if (x) x = cto_chk(b, ct_view_4d(ctx, x, ne[0], ne[1], ne[2], ne[3], x->nb[1], x->nb[2], x->nb[3], 0));
    } else if (c->rope.view == 2) {
        x = cto_new4(b, c->ta, 2 * ne[0], ne[1], ne[2], ne[3], lo, hi);
        if (x)
            x = cto_chk(b, ct_view_4d(ctx, x, ne[0], ne[1], ne[2], ne[3], x->nb[1], x->nb[2], x->nb[3],
                                      (size_t)ne[0] * ct_type_size(c->ta)));
    } else if (c->rope.per) {
        static const int P0213[4] = {0, 2, 1, 3};
        x = cto_permute(b, cto_new4(b, c->ta, ne[0], ne[2], ne[1], ne[3], lo, hi), P0213);
    } else {
        x = cto_new_tensor(b, c->ta, ne, lo, hi);
    }
    y = cto_new4(b, CT_TYPE_I32, ne[2] * (multi ? 4 : 1), 1, 1, 1, lo, hi);
    if (y) cto_set_init(b, y, CTO_INIT_INDEX_MOD, c->rope.n_ctx);
    if (c->rope.ff) z = cto_new4(b, CT_TYPE_F32, nd / 2, 1, 1, 1, 0.9f, 1.1f);
    if (!x || !y || (c->rope.ff && !z)) return;
    const float fs = c->rope.fs, ef = c->rope.ef, af = c->rope.af;
    /* far positions (n_ctx > 512) come with a YaRN context: n_ctx_orig 4096, betas 32 and 1 */
    const int orig = c->rope.n_ctx > 512 ? 4096 : 0;
    const float bf = orig ? 32.0f : 1.0f;
    for (int i = 0; i < n_rep; i++) {
        ct_tensor *r;
        if (multi) {
            const int sec[4] = {vision ? nd / 4 : nd / 3, vision ? nd / 4 : nd / 3, vision ? 0 : nd / 3, 0};
            const int n = vision ? nd / 2 : nd;
            r = c->rope.inplace
                    ? ct_rope_multi_inplace(ctx, x, y, z, n, sec, mode, orig, 10000.0f, fs, ef, af, bf, 1.0f)
                    : ct_rope_multi(ctx, x, y, z, n, sec, mode, orig, 10000.0f, fs, ef, af, bf, 1.0f);
        } else {
            r = c->rope.inplace ? ct_rope_ext_inplace(ctx, x, y, z, nd, mode, orig, 10000.0f, fs, ef, af, bf, 1.0f)
                                : ct_rope_ext(ctx, x, y, z, nd, mode, orig, 10000.0f, fs, ef, af, bf, 1.0f);
        }
        if (r && c->rope.n_offs) r = ct_rope_set_offset(r, c->rope.n_offs);
        outs[i] = cto_chk(b, r);
    }
}

const cto_family cto_family_rope = {
    .owns = rope_owns,
    .exact = false,
    .max_nmse = 1e-7,
    .name = rope_name,
    .test_cases = rope_test_cases,
    .perf_cases = rope_perf_cases,
    .build = rope_build,
};

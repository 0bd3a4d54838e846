/* ct-ops cases of ARGMAX, ARGSORT and TOP_K (docs/TESTING.md, Case lists): ggml's
 * test_argmax, test_argsort and test_top_k lists, edges (ties, NaNs and infinities,
 * signed zeros, views, permuted and transposed sources, one-element rows), perf. Compared
 * byte for byte: every backend orders by the same total order (docs/TENSORS.md). */
#include "ct_ops.h"

/* fam_i[0]: how the source is made (CTO_SRC_*); fam_i[1]: the sort order; fam_i[2]: TOP_K's k */

static bool argsort_owns(cto_kind kind) { return kind == CTO_ARGMAX || kind == CTO_ARGSORT || kind == CTO_TOP_K; }

static void argsort_name(const cto_case *c, char *buf, size_t n) {
    char ne[96], per[32] = "", extra[48] = "";
    cto_fmt_ne(ne, sizeof ne, c->ne);
    if (c->fam_i[0] == CTO_SRC_PERMUTED) cto_fmt_per(per, sizeof per, c->per);
    if (c->kind == CTO_ARGSORT) snprintf(extra, sizeof extra, ",order=%d", c->fam_i[1]);
    if (c->kind == CTO_TOP_K) snprintf(extra, sizeof extra, ",k=%d", c->fam_i[2]);
    snprintf(buf, n, "type=%s,ne=%s%s,v=%d%s%s", ct_type_name(c->ta), ne, extra, c->fam_i[0],
             *per ? ",permute=" : "", per);
}

static void add(cto_case_list *l, cto_kind kind, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, int v,
                int order, int k) {
    cto_case c = cto_case_base(kind);
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.fam_i[0] = v, c.fam_i[1] = order, c.fam_i[2] = k;
    c.lo = -100.0f, c.hi = 100.0f;
    if (v == CTO_SRC_TIES) c.lo = 1.0f, c.hi = 1.0625f; /* 64 distinct F16 values */
    if (v == CTO_SRC_PERMUTED) cto_setp(c.per, 0, 2, 1, 3);
    cto_case_add(l, c);
}

static void argsort_test_cases(cto_case_list *l) {
    /* ggml's test_argmax list, then edges (ARGMAX takes matrices) */
    static const int64_t am[][2] = {{32, 1}, {32, 513}, {100, 10}, {1024, 10}, {1024, 12}, {2000, 10}, {5438, 3}};
    for (int i = 0; i < CTO_N_OF(am); i++) add(l, CTO_ARGMAX, am[i][0], am[i][1], 1, 1, CTO_SRC_PLAIN, 0, 0);
    add(l, CTO_ARGMAX, 1, 7, 1, 1, CTO_SRC_PLAIN, 0, 0);
    add(l, CTO_ARGMAX, 0, 3, 1, 1, CTO_SRC_PLAIN, 0, 0);
    add(l, CTO_ARGMAX, 1, 64, 1, 1, CTO_SRC_EDGE, 0, 0);
    add(l, CTO_ARGMAX, 2, 64, 1, 1, CTO_SRC_EDGE, 0, 0);
    add(l, CTO_ARGMAX, 7, 200, 1, 1, CTO_SRC_EDGE, 0, 0);
    add(l, CTO_ARGMAX, 3000, 20, 1, 1, CTO_SRC_EDGE, 0, 0);
    add(l, CTO_ARGMAX, 1000, 9, 1, 1, CTO_SRC_TIES, 0, 0);
    add(l, CTO_ARGMAX, 37, 5, 1, 1, CTO_SRC_STRIDED, 0, 0);
    add(l, CTO_ARGMAX, 37, 5, 1, 1, CTO_SRC_TRANSPOSED, 0, 0);
    add(l, CTO_ARGMAX, 262144, 2, 1, 1, CTO_SRC_PLAIN, 0, 0);

    /* ggml's test_argsort list (its power-of-two sizes in ascending order only) */
    for (int64_t i = 4; i <= 1024 * 1024; i *= 2) {
        add(l, CTO_ARGSORT, i - 1, 1, 1, 1, CTO_SRC_PLAIN, 0, 0);
        add(l, CTO_ARGSORT, i, 1, 1, 1, CTO_SRC_PLAIN, 0, 0);
    }
    static const int64_t as[][4] = {{16, 10, 10, 10}, {60, 10, 10, 10}, {1023, 2, 1, 3}, {1024, 2, 1, 3},
                                    {1025, 2, 1, 3},  {1025, 256, 1, 1}, {2047, 2, 1, 3}, {2048, 2, 1, 3},
                                    {2049, 2, 1, 3},  {2, 8, 8192, 1},   {2048, 512, 1, 1}};
    for (int o = 0; o < 2; o++)
        for (int i = 0; i < CTO_N_OF(as); i++)
            add(l, CTO_ARGSORT, as[i][0], as[i][1], as[i][2], as[i][3], CTO_SRC_PLAIN, o, 0);
    /* edges, both orders: one element, ties, NaNs/infinities/signed zeros, views, long rows */
    for (int o = 0; o < 2; o++) {
        add(l, CTO_ARGSORT, 1, 5, 1, 1, CTO_SRC_PLAIN, o, 0);
        add(l, CTO_ARGSORT, 3, 5, 2, 1, CTO_SRC_PLAIN, o, 0);
        add(l, CTO_ARGSORT, 300, 7, 1, 1, CTO_SRC_TIES, o, 0);
        add(l, CTO_ARGSORT, 5000, 3, 1, 1, CTO_SRC_TIES, o, 0);
        add(l, CTO_ARGSORT, 9, 50, 1, 1, CTO_SRC_EDGE, o, 0);
        add(l, CTO_ARGSORT, 3001, 4, 1, 1, CTO_SRC_EDGE, o, 0);
        add(l, CTO_ARGSORT, 33, 5, 6, 3, CTO_SRC_PERMUTED, o, 0);
        add(l, CTO_ARGSORT, 37, 5, 3, 2, CTO_SRC_STRIDED, o, 0);
        add(l, CTO_ARGSORT, 37, 5, 3, 2, CTO_SRC_TRANSPOSED, o, 0);
        add(l, CTO_ARGSORT, 200000, 2, 1, 1, CTO_SRC_PLAIN, o, 0);
    }

    /* ggml's test_top_k list (its ties cases here with F16 ties; the widest rows with fewer k) */
    for (int n = 1; n < 5; ++n)
        for (int k = 1; k <= n; ++k) add(l, CTO_TOP_K, n, 2, 1, 3, CTO_SRC_TIES, 0, k);
    static const int ks[] = {1, 2, 3, 7, 15, 100, 500, 1023, 9999};
    for (int i = 0; i < 20; ++i)
        for (int j = 0; j < CTO_N_OF(ks); j++) {
            if (ks[j] > 1 << i || (i > 16 && ks[j] != 1 && ks[j] != 500 && ks[j] != 9999)) continue; /* time */
            add(l, CTO_TOP_K, 1 << i, 1, 1, 1, CTO_SRC_PLAIN, 0, ks[j]);
            add(l, CTO_TOP_K, (1 << i) + 11, 1, 2, 1, CTO_SRC_PLAIN, 0, ks[j]);
            add(l, CTO_TOP_K, (1 << i) + 11, 1, 2, 1, CTO_SRC_TIES, 0, ks[j]);
        }
    static const int ks2[] = {4, 32};
    static const int nrs[] = {1, 16};
    for (int j = 0; j < 2; j++)
        for (int r = 0; r < 2; r++) {
            add(l, CTO_TOP_K, 202048, nrs[r], 1, 1, CTO_SRC_PLAIN, 0, ks2[j]);
            add(l, CTO_TOP_K, 8193, nrs[r], 1, 1, CTO_SRC_PLAIN, 0, ks2[j]);
            add(l, CTO_TOP_K, 8192, nrs[r], 1, 1, CTO_SRC_TIES, 0, ks2[j]);
        }
    static const int ks3[] = {1, 2, 3, 7, 15};
    for (int j = 0; j < CTO_N_OF(ks3); j++) {
        add(l, CTO_TOP_K, 16, 10, 10, 10, CTO_SRC_PLAIN, 0, ks3[j]);
        add(l, CTO_TOP_K, 60, 10, 10, 10, CTO_SRC_PLAIN, 0, ks3[j]);
        add(l, CTO_TOP_K, 1025, 2, 1, 3, CTO_SRC_PLAIN, 0, ks3[j]);
        add(l, CTO_TOP_K, 2049, 2, 1, 3, CTO_SRC_PLAIN, 0, ks3[j]);
    }
    add(l, CTO_TOP_K, 1024, 1, 1, 1, CTO_SRC_PLAIN, 0, 1024);
    add(l, CTO_TOP_K, 2048, 2, 1, 1, CTO_SRC_PLAIN, 0, 1024);
    add(l, CTO_TOP_K, 4096, 1, 1, 1, CTO_SRC_PLAIN, 0, 2048);
    add(l, CTO_TOP_K, 8192, 2, 1, 1, CTO_SRC_PLAIN, 0, 2051);
    add(l, CTO_TOP_K, 33024, 4, 1, 1, CTO_SRC_PLAIN, 0, 2051);
    add(l, CTO_TOP_K, 8192, 2, 1, 1, CTO_SRC_TIES, 0, 2051);
    add(l, CTO_TOP_K, 33024, 4, 1, 1, CTO_SRC_TIES, 0, 2051);
    /* edges: k = 0, NaNs/infinities, views, MoE router shapes */
    add(l, CTO_TOP_K, 7, 3, 1, 1, CTO_SRC_PLAIN, 0, 0);
    add(l, CTO_TOP_K, 9, 50, 1, 1, CTO_SRC_EDGE, 0, 4);
    add(l, CTO_TOP_K, 3001, 4, 1, 1, CTO_SRC_EDGE, 0, 100);
    add(l, CTO_TOP_K, 33, 5, 6, 3, CTO_SRC_PERMUTED, 0, 5);
    add(l, CTO_TOP_K, 37, 5, 3, 2, CTO_SRC_STRIDED, 0, 8);
    add(l, CTO_TOP_K, 37, 5, 3, 2, CTO_SRC_TRANSPOSED, 0, 8);
    add(l, CTO_TOP_K, 128, 512, 1, 1, CTO_SRC_PLAIN, 0, 8);
    add(l, CTO_TOP_K, 60, 512, 1, 1, CTO_SRC_PLAIN, 0, 4);
}

static void argsort_perf_cases(cto_case_list *l, double s) {
    add(l, CTO_ARGMAX, 32000, cto_scaled(512, s, 1, 1), 1, 1, CTO_SRC_PLAIN, 0, 0);
    add(l, CTO_ARGMAX, 262144, 1, 1, 1, CTO_SRC_PLAIN, 0, 0);
    add(l, CTO_ARGSORT, 128, cto_scaled(512, s, 1, 1), 1, 1, CTO_SRC_PLAIN, 1, 0);
    add(l, CTO_ARGSORT, 65000, cto_scaled(16, s, 1, 1), 1, 1, CTO_SRC_PLAIN, 0, 0);
    add(l, CTO_ARGSORT, 200000, 1, 1, 1, CTO_SRC_PLAIN, 0, 0);
    add(l, CTO_TOP_K, 128, cto_scaled(512, s, 1, 1), 1, 1, CTO_SRC_PLAIN, 0, 8);
    add(l, CTO_TOP_K, 151936, 1, 1, 1, CTO_SRC_PLAIN, 0, 40);
}

static void argsort_build(const cto_case *c, cto_builder *b, int n_rep, ct_tensor **outs) {
    ct_tensor *x = cto_new_f32_source(c, b, c->fam_i[0]);
    if (!x) return;
    for (int i = 0; i < n_rep; i++) {
        ct_tensor *r = c->kind == CTO_ARGMAX    ? ct_argmax(b->ctx, x)
                       : c->kind == CTO_ARGSORT ? ct_argsort(b->ctx, x, (ct_sort_order)c->fam_i[1])
                                                : ct_top_k(b->ctx, x, c->fam_i[2]);
        outs[i] = cto_chk(b, r);
    }
}

const cto_family cto_family_argsort = {
    .owns = argsort_owns,
    .exact = true,
    .max_nmse = 0.0,
    .name = argsort_name,
    .test_cases = argsort_test_cases,
    .perf_cases = argsort_perf_cases,
    .build = argsort_build,
};

/* ct-ops cases of SUM and CUMSUM (docs/TESTING.md, Case lists): ggml's test_sum and
 * test_cumsum lists, edges (views, permuted and transposed sources, one-element and empty
 * dims, zeros, ties), perf. NMSE-compared: the OpenCL sums are float trees. ARGMAX,
 * ARGSORT and TOP_K, compared byte for byte, are in cases_argsort.c. */
#include "ct_ops.h"

/* fam_i[0]: how the source is made (CTO_SRC_*, cto_new_f32_source) */

static bool reduce_owns(cto_kind kind) { return kind == CTO_SUM || kind == CTO_CUMSUM; }

static void reduce_name(const cto_case *c, char *buf, size_t n) {
    char ne[96], per[32] = "";
    cto_fmt_ne(ne, sizeof ne, c->ne);
    if (c->fam_i[0] == CTO_SRC_PERMUTED) cto_fmt_per(per, sizeof per, c->per);
    snprintf(buf, n, "type=%s,ne=%s,v=%d%s%s,range=[%g,%g]", ct_type_name(c->ta), ne, c->fam_i[0],
             *per ? ",permute=" : "", per, (double)c->lo, (double)c->hi);
}

static void add(cto_case_list *l, cto_kind kind, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, int v,
                const int per[4], float lo, float hi) {
    cto_case c = cto_case_base(kind);
    cto_set4(c.ne, ne0, ne1, ne2, ne3);
    c.fam_i[0] = v;
    if (per) cto_setp(c.per, per[0], per[1], per[2], per[3]);
    c.lo = lo, c.hi = hi;
    cto_case_add(l, c);
}

static void reduce_test_cases(cto_case_list *l) {
    static const int P0213[4] = {0, 2, 1, 3}, P0321[4] = {0, 3, 2, 1}, P0132[4] = {0, 1, 3, 2}, P1023[4] = {1, 0, 2, 3};
    /* ggml's test_sum list: values in [-0.9, 1.1) */
    const float lo = -0.9f, hi = 1.1f;
    add(l, CTO_SUM, 10, 5, 4, 3, CTO_SRC_PLAIN, NULL, lo, hi);
    add(l, CTO_SUM, 11, 5, 6, 3, CTO_SRC_PERMUTED, P0213, lo, hi);
    add(l, CTO_SUM, 11, 5, 6, 3, CTO_SRC_PERMUTED, P0321, lo, hi);
    add(l, CTO_SUM, 11, 5, 6, 3, CTO_SRC_PERMUTED, P0132, lo, hi);
    add(l, CTO_SUM, 33, 1, 1, 1, CTO_SRC_PLAIN, NULL, lo, hi);
    add(l, CTO_SUM, 33, 1024, 1, 1, CTO_SRC_PLAIN, NULL, lo, hi);
    add(l, CTO_SUM, 33, 256, 1, 1, CTO_SRC_PLAIN, NULL, lo, hi);
    add(l, CTO_SUM, 33, 256, 1, 1, CTO_SRC_PERMUTED, P1023, lo, hi);
    /* edges: one element, empty dims, zeros, strided and transposed sources, ties, a long row */
    add(l, CTO_SUM, 1, 1, 1, 1, CTO_SRC_PLAIN, NULL, lo, hi);
    add(l, CTO_SUM, 0, 3, 1, 1, CTO_SRC_PLAIN, NULL, lo, hi);
    add(l, CTO_SUM, 7, 0, 2, 1, CTO_SRC_PLAIN, NULL, lo, hi);
    add(l, CTO_SUM, 64, 7, 3, 2, CTO_SRC_PLAIN, NULL, 0.0f, 0.0f);
    add(l, CTO_SUM, 17, 5, 3, 2, CTO_SRC_STRIDED, NULL, lo, hi);
    add(l, CTO_SUM, 17, 5, 3, 2, CTO_SRC_TRANSPOSED, NULL, lo, hi);
    add(l, CTO_SUM, 300, 7, 1, 1, CTO_SRC_TIES, NULL, 1.0f, 1.0625f);
    add(l, CTO_SUM, 262144, 3, 1, 1, CTO_SRC_PLAIN, NULL, lo, hi);
    /* ggml's test_cumsum list: values in [-1, 1) */
    static const int64_t rows[] = {10, 127, 128, 255, 256, 511, 512, 1023, 1024, 2047, 2048};
    for (int i = 0; i < CTO_N_OF(rows); i++) add(l, CTO_CUMSUM, rows[i], 5, 4, 3, CTO_SRC_PLAIN, NULL, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, 128, 128, 4, 4, CTO_SRC_PLAIN, NULL, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, 201 * 1204, 1, 1, 1, CTO_SRC_PLAIN, NULL, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, 312 * 1205, 1, 1, 1, CTO_SRC_PLAIN, NULL, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, 20481, 4, 1, 1, CTO_SRC_PLAIN, NULL, -1.0f, 1.0f);
    /* edges */
    add(l, CTO_CUMSUM, 1, 1, 1, 1, CTO_SRC_PLAIN, NULL, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, 1, 9, 2, 1, CTO_SRC_PLAIN, NULL, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, 0, 3, 1, 1, CTO_SRC_PLAIN, NULL, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, 64, 7, 3, 2, CTO_SRC_PLAIN, NULL, 0.0f, 0.0f);
    add(l, CTO_CUMSUM, 33, 5, 6, 3, CTO_SRC_PERMUTED, P0213, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, 33, 5, 6, 3, CTO_SRC_PERMUTED, P0321, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, 37, 5, 3, 2, CTO_SRC_STRIDED, NULL, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, 37, 5, 3, 2, CTO_SRC_TRANSPOSED, NULL, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, 1000, 7, 1, 1, CTO_SRC_TIES, NULL, 1.0f, 1.0625f);
}

static void reduce_perf_cases(cto_case_list *l, double s) {
    add(l, CTO_SUM, cto_scaled(4096, s, 1, 1), 512, 1, 1, CTO_SRC_PLAIN, NULL, -0.9f, 1.1f);
    add(l, CTO_CUMSUM, 128, 128, 4, 4, CTO_SRC_PLAIN, NULL, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, 2048, 16, 5, 4, CTO_SRC_PLAIN, NULL, -1.0f, 1.0f);
    add(l, CTO_CUMSUM, cto_scaled(20000, s, 1, 1), 10, 4, 1, CTO_SRC_PLAIN, NULL, -1.0f, 1.0f);
}

static void reduce_build(const cto_case *c, cto_builder *b, int n_rep, ct_tensor **outs) {
    ct_tensor *x = cto_new_f32_source(c, b, c->fam_i[0]);
    if (!x) return;
    for (int i = 0; i < n_rep; i++) outs[i] = cto_chk(b, c->kind == CTO_SUM ? ct_sum(b->ctx, x) : ct_cumsum(b->ctx, x));
}

const cto_family cto_family_reduce = {
    .owns = reduce_owns,
    .exact = false,
    .max_nmse = 1e-7,
    .name = reduce_name,
    .test_cases = reduce_test_cases,
    .perf_cases = reduce_perf_cases,
    .build = reduce_build,
};

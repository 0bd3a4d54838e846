/* Graphs: topological order on random DAGs, duplicates, leafs, a full graph
 * left unchanged, a deep chain without recursion, graph views, use counts. */
#include "testutil.h"
#include "tensor/tensor_internal.h"

#include <stdlib.h>

static ct_context *new_ctx(size_t size) {
    ct_context *ctx = ct_context_new((ct_context_params){.mem_size = size, .mem_buffer = NULL, .no_alloc = true});
    CHECK(ctx != NULL);
    return ctx;
}

/* Position of t among the graph's nodes, or -1. */
static int node_pos(const ct_graph *g, const ct_tensor *t) {
    for (int i = 0; i < ct_graph_n_nodes(g); i++) {
        if (ct_graph_node(g, i) == t) return i;
    }
    return -1;
}

static int leaf_pos(const ct_graph *g, const ct_tensor *t) {
    for (int i = 0; i < ct_graph_n_leafs(g); i++) {
        if (ct_graph_leaf(g, i) == t) return i;
    }
    return -1;
}

/* Generic checks: every entry once; leafs have no op and nodes one; each
 * dependency (src[], view_src) of a node is in the graph and, if a node, earlier. */
static int check_topological(const ct_graph *g) {
    int bad = 0;
    const int nn = ct_graph_n_nodes(g), nl = ct_graph_n_leafs(g);
    for (int i = 0; i < nn; i++) {
        const ct_tensor *t = ct_graph_node(g, i);
        bad += t->op == CT_OP_NONE;
        bad += node_pos(g, t) != i || leaf_pos(g, t) != -1;
        for (int k = 0; k <= CT_MAX_SRC; k++) {
            const ct_tensor *s = k < CT_MAX_SRC ? t->src[k] : t->view_src;
            if (s == NULL || s == t) continue;
            int p = node_pos(g, s);
            if (p >= 0) {
                bad += p >= i;
            } else {
                bad += leaf_pos(g, s) < 0;
            }
        }
    }
    for (int i = 0; i < nl; i++) {
        const ct_tensor *t = ct_graph_leaf(g, i);
        bad += t->op != CT_OP_NONE;
        bad += leaf_pos(g, t) != i;
    }
    return bad;
}

enum { N_RANDOM = 160 };

/* Random DAGs of small square F32 tensors built with several ops (two sources,
 * one source, views, in-place writes through view_src). The graph must hold
 * exactly the tensors reachable from the chosen outputs, in a valid order. */
static void test_random_dags(void) {
    for (int round = 0; round < 8; round++) {
        ct_context *ctx = new_ctx(8 << 20);
        ct_tensor *all[N_RANDOM];
        int n = 0;
        const int n_leafs = 2 + (int)tu_rand_below(6);
        for (; n < n_leafs; n++) all[n] = ct_tensor_new_2d(ctx, CT_TYPE_F32, 4, 4);
        ct_tensor *idx = ct_tensor_new_1d(ctx, CT_TYPE_I64, 4);
        all[n++] = idx;
        while (n < N_RANDOM) {
            ct_tensor *x = all[tu_rand_below(n)], *y = all[tu_rand_below(n)];
            if (x == idx || y == idx) continue;
            ct_tensor *t = NULL;
            switch (tu_rand_below(6)) {
            case 0: t = ct_mul_mat(ctx, x, y); break;
            case 1: t = ct_rms_norm(ctx, x, 1e-6f); break;
            case 2: t = ct_view_tensor(ctx, x); break;
            case 3: t = ct_cpy(ctx, x, y); break;
            case 4: t = ct_set_rows(ctx, x, y, idx); break;
            default: t = ct_cast(ctx, x, CT_TYPE_F32); break;
            }
            CHECK(t != NULL);
            if (t) all[n++] = t;
        }
        ct_graph *g = ct_graph_new(ctx, N_RANDOM);
        CHECK(g != NULL);
        if (!g) {
            ct_context_free(ctx);
            continue;
        }
        /* Reachability by hand: sources always precede their users in all[]. */
        bool reach[N_RANDOM] = {false};
        const int n_out = 1 + (int)tu_rand_below(3);
        for (int o = 0; o < n_out; o++) {
            int pick = N_RANDOM - 1 - (int)tu_rand_below(20);
            reach[pick] = true;
            CHECK(ct_graph_build_forward(g, all[pick]) == CT_OK);
            CHECK(ct_graph_node(g, -1) == all[pick] || node_pos(g, all[pick]) >= 0);
        }
        for (int i = N_RANDOM - 1; i >= 0; i--) {
            if (!reach[i]) continue;
            for (int k = 0; k <= CT_MAX_SRC; k++) {
                const ct_tensor *s = k < CT_MAX_SRC ? all[i]->src[k] : all[i]->view_src;
                for (int j = 0; s && j < i; j++) {
                    if (all[j] == s) reach[j] = true;
                }
            }
        }
        int want_nodes = 0, want_leafs = 0, missing = 0;
        for (int i = 0; i < N_RANDOM; i++) {
            if (!reach[i]) {
                missing += node_pos(g, all[i]) >= 0 || leaf_pos(g, all[i]) >= 0;
                continue;
            }
            if (all[i]->op == CT_OP_NONE) {
                want_leafs++;
                missing += leaf_pos(g, all[i]) < 0;
            } else {
                want_nodes++;
                missing += node_pos(g, all[i]) < 0;
            }
        }
        CHECK(missing == 0);
        CHECK(ct_graph_n_nodes(g) == want_nodes && ct_graph_n_leafs(g) == want_leafs);
        CHECK_MSG(check_topological(g) == 0, "round %d", round);
        ct_context_free(ctx);
    }
}

static void test_small_graphs(void) {
    ct_context *ctx = new_ctx(1 << 20);
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 8, 8);
    ct_tensor *b = ct_norm(ctx, a, 0.0f);
    ct_tensor *c = ct_rms_norm(ctx, a, 0.0f);
    ct_tensor *d = ct_mul_mat(ctx, b, c); /* diamond: a is needed twice */
    ct_graph *g = ct_graph_new(ctx, 16);
    CHECK(ct_graph_build_forward(g, d) == CT_OK);
    CHECK(ct_graph_n_nodes(g) == 3 && ct_graph_n_leafs(g) == 1);
    CHECK(ct_graph_leaf(g, 0) == a && ct_graph_node(g, 0) == b && ct_graph_node(g, 1) == c);
    CHECK(ct_graph_node(g, 2) == d && ct_graph_node(g, -1) == d && ct_graph_node(g, -3) == b);
    /* Rebuilding from the same output or one of its inputs adds nothing. */
    CHECK(ct_graph_build_forward(g, d) == CT_OK && ct_graph_build_forward(g, b) == CT_OK);
    CHECK(ct_graph_build_forward(g, a) == CT_OK);
    CHECK(ct_graph_n_nodes(g) == 3 && ct_graph_n_leafs(g) == 1);
    /* A second output appends after what is there. */
    ct_tensor *e = ct_sum_rows(ctx, d);
    CHECK(ct_graph_build_forward(g, e) == CT_OK);
    CHECK(ct_graph_n_nodes(g) == 4 && ct_graph_node(g, 3) == e);
    /* A graph of one leaf. */
    ct_graph *g1 = ct_graph_new(ctx, 1);
    CHECK(ct_graph_build_forward(g1, a) == CT_OK && ct_graph_n_nodes(g1) == 0 && ct_graph_n_leafs(g1) == 1);

    /* Index errors. */
    CHECK(ct_graph_node(g, 4) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_graph_node: i=4 but the graph has 4 nodes");
    CHECK(ct_graph_node(g, -5) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_graph_node: i=-5");
    CHECK(ct_graph_leaf(g, 1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_graph_leaf: i=1 but the graph has 1 leafs");
    CHECK(ct_graph_leaf(g, -1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_graph_leaf: i=-1");
    CHECK(ct_graph_build_forward(NULL, a) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_graph_build_forward: graph is NULL");
    CHECK(ct_graph_build_forward(g, NULL) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_graph_build_forward: out is NULL");
    CHECK(ct_graph_new(NULL, 4) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_graph_new: ctx is NULL");
    CHECK(ct_graph_n_nodes(NULL) == 0 && ct_graph_n_leafs(NULL) == 0);

    /* In-place writers: SET_ROWS depends on the producer of its destination
     * through view_src; CPY through src[1]; a cast names itself and is visited once. */
    ct_tensor *cache = ct_dup(ctx, a);
    ct_tensor *rows = ct_tensor_new_2d(ctx, CT_TYPE_F32, 8, 2);
    ct_tensor *idx = ct_tensor_new_1d(ctx, CT_TYPE_I64, 2);
    ct_tensor *s = ct_set_rows(ctx, cache, rows, idx);
    ct_tensor *cast = ct_cast(ctx, s, CT_TYPE_F16);
    ct_tensor *cp = ct_cpy(ctx, cast, ct_tensor_new_2d(ctx, CT_TYPE_F32, 8, 8));
    ct_graph *g2 = ct_graph_new(ctx, 16);
    CHECK(ct_graph_build_forward(g2, cp) == CT_OK);
    CHECK(ct_graph_n_nodes(g2) == 4 && ct_graph_n_leafs(g2) == 4);
    CHECK(node_pos(g2, cache) == 0 && node_pos(g2, s) == 1 && node_pos(g2, cast) == 2 && node_pos(g2, cp) == 3);
    CHECK(check_topological(g2) == 0);
    ct_context_free(ctx);
}

/* A full graph reports CT_OUT_OF_MEMORY and keeps exactly its previous content. */
static void test_full_graph(void) {
    ct_context *ctx = new_ctx(1 << 20);
    ct_tensor *x = ct_tensor_new_1d(ctx, CT_TYPE_F32, 4);
    ct_tensor *chain[10];
    chain[0] = ct_norm(ctx, x, 0.0f);
    for (int i = 1; i < 10; i++) chain[i] = ct_norm(ctx, chain[i - 1], 0.0f);
    ct_graph *g = ct_graph_new(ctx, 5);
    CHECK(ct_graph_build_forward(g, chain[2]) == CT_OK && ct_graph_n_nodes(g) == 3);
    CHECK(ct_graph_build_forward(g, chain[9]) == CT_OUT_OF_MEMORY);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_graph_build_forward: graph full: max_nodes=5");
    CHECK(ct_graph_n_nodes(g) == 3 && ct_graph_n_leafs(g) == 1);
    for (int i = 0; i < 3; i++) CHECK(ct_graph_node(g, i) == chain[i]);
    CHECK(ct_graph_leaf(g, 0) == x);
    /* The visited set was restored: what fits still goes in, once. */
    CHECK(ct_graph_build_forward(g, chain[4]) == CT_OK && ct_graph_n_nodes(g) == 5);
    for (int i = 0; i < 5; i++) CHECK(ct_graph_node(g, i) == chain[i]);
    CHECK(ct_graph_build_forward(g, chain[5]) == CT_OUT_OF_MEMORY && ct_graph_n_nodes(g) == 5);
    CHECK(ct_graph_build_forward(g, chain[3]) == CT_OK && ct_graph_n_nodes(g) == 5);
    CHECK(check_topological(g) == 0);

    /* Leafs are bounded too: three inputs in a graph of two. */
    ct_tensor *l[3];
    for (int i = 0; i < 3; i++) l[i] = ct_tensor_new_2d(ctx, CT_TYPE_F32, 4, 4);
    ct_tensor *s = ct_mul_mat(ctx, ct_mul_mat(ctx, l[0], l[1]), l[2]);
    ct_graph *g2 = ct_graph_new(ctx, 2);
    CHECK(ct_graph_build_forward(g2, s) == CT_OUT_OF_MEMORY);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "needs more than 2 leafs");
    CHECK(ct_graph_n_nodes(g2) == 0 && ct_graph_n_leafs(g2) == 0);
    /* A graph of no nodes holds nothing. */
    ct_graph *g0 = ct_graph_new(ctx, 0);
    CHECK(g0 != NULL && ct_graph_build_forward(g0, x) == CT_OUT_OF_MEMORY && ct_graph_n_leafs(g0) == 0);

    /* Arena accounting: a graph takes exactly ct_graph_overhead. */
    size_t before = ct_context_used(ctx);
    CHECK(ct_graph_new(ctx, 100) != NULL && ct_context_used(ctx) - before == ct_graph_overhead(100));
    CHECK(ct_graph_overhead(100) < ct_graph_overhead(1000));
    CHECK(ct_graph_overhead(SIZE_MAX) == SIZE_MAX);
    CHECK(ct_graph_new(ctx, SIZE_MAX) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_graph_new: max_nodes=");
    ct_context_free(ctx);

    ctx = new_ctx(ct_graph_overhead(64));
    CHECK(ct_graph_new(ctx, 65) == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_graph_new: context arena full: graph needs");
    CHECK(ct_graph_new(ctx, 64) != NULL);
    ct_context_free(ctx);
}

/* 10^5 nodes in a chain: the walk must not recurse on the C stack. */
static void test_deep_chain(void) {
    enum { N = 100000 };
    ct_context *ctx = new_ctx((N + 8) * ct_tensor_overhead() + ct_graph_overhead(N));
    ct_tensor *x = ct_tensor_new_1d(ctx, CT_TYPE_F32, 4);
    ct_tensor *t = x;
    ct_tensor *mid = NULL;
    for (int i = 0; i < N; i++) {
        t = (i & 1) ? ct_view_tensor(ctx, t) : ct_l2_norm(ctx, t, 1e-6f);
        CHECK_MSG(t != NULL, "%s", ct_last_error());
        if (!t) break;
        if (i == N / 2) mid = t;
    }
    ct_graph *g = ct_graph_new(ctx, N);
    CHECK(g != NULL);
    if (g && t) {
        CHECK(ct_graph_build_forward(g, t) == CT_OK);
        CHECK(ct_graph_n_nodes(g) == N && ct_graph_n_leafs(g) == 1 && ct_graph_leaf(g, 0) == x);
        int bad = 0;
        const ct_tensor *prev = x;
        for (int i = 0; i < N; i++) {
            const ct_tensor *n = ct_graph_node(g, i);
            bad += n->src[0] != prev;
            prev = n;
        }
        CHECK(bad == 0 && ct_graph_node(g, N / 2) == mid && ct_graph_node(g, -1) == t);
    }
    ct_context_free(ctx);
}

static void test_graph_view(void) {
    ct_context *ctx = new_ctx(1 << 20);
    ct_tensor *t = ct_tensor_new_1d(ctx, CT_TYPE_F32, 4);
    ct_tensor *n[6];
    for (int i = 0; i < 6; i++) t = n[i] = ct_rms_norm(ctx, t, 1e-5f);
    ct_graph *g = ct_graph_new(ctx, 8);
    CHECK(ct_graph_build_forward(g, t) == CT_OK && ct_graph_n_nodes(g) == 6);
    ct_graph *v = ct_graph_view(ctx, g, 2, 5);
    CHECK(v && ct_graph_n_nodes(v) == 3 && ct_graph_n_leafs(v) == 0);
    for (int i = 0; i < 3; i++) CHECK(ct_graph_node(v, i) == n[2 + i]);
    CHECK(ct_graph_node(v, -1) == n[4]);
    CHECK(ct_graph_node(v, 3) == NULL);
    ct_graph *one = ct_graph_view(ctx, g, 5, 6);
    CHECK(one && ct_graph_n_nodes(one) == 1 && ct_graph_node(one, 0) == n[5]);
    ct_graph *empty = ct_graph_view(ctx, g, 6, 6);
    CHECK(empty && ct_graph_n_nodes(empty) == 0);
    CHECK(ct_graph_view(ctx, g, 3, 2) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_graph_view: [i0, i1)=[3, 2) is not inside [0, 6)");
    CHECK(ct_graph_view(ctx, g, -1, 2) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "[i0, i1)=[-1, 2)");
    CHECK(ct_graph_view(ctx, g, 0, 7) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "[i0, i1)=[0, 7)");
    CHECK(ct_graph_view(NULL, g, 0, 1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_graph_view: ctx is NULL");
    CHECK(ct_graph_view(ctx, NULL, 0, 1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_graph_view: graph is NULL");
    /* A view is read-only. */
    CHECK(ct_graph_build_forward(v, n[0]) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_graph_build_forward: graph is a view");
    CHECK(ct_graph_n_nodes(v) == 3);
    ct_context_free(ctx);
}

/* ct_graph_count_uses: each src[] slot counts, a view source counts (once more when it is
 * also src[0]), leafs are counted too, an unconsumed result counts 0; a view graph knows
 * nothing of the consumers outside it. */
static void test_use_counts(void) {
    ct_context *ctx = new_ctx(64 * ct_tensor_overhead() + 2 * ct_graph_overhead(32));
    ct_graph *g = ctx ? ct_graph_new(ctx, 32) : NULL;
    ct_tensor *x = ctx ? ct_tensor_new_2d(ctx, CT_TYPE_F32, 8, 2) : NULL;
    ct_tensor *w = ctx ? ct_tensor_new_1d(ctx, CT_TYPE_F32, 8) : NULL;
    ct_tensor *n = x ? ct_rms_norm(ctx, x, 1e-6f) : NULL;
    ct_tensor *sq = n ? ct_mul(ctx, n, n) : NULL;    /* n twice */
    ct_tensor *m = n && w ? ct_mul(ctx, n, w) : NULL; /* n, w */
    ct_tensor *v = m ? ct_view_1d(ctx, m, 8, 0) : NULL; /* m as src[0] and view source */
    ct_tensor *a = sq && m ? ct_add(ctx, sq, m) : NULL; /* sq, m */
    bool ok = g && a && v;
    CHECK(ok);
    if (!ok) {
        ct_context_free(ctx);
        return;
    }
    CHECK(ct_graph_build_forward(g, a) == CT_OK && ct_graph_build_forward(g, v) == CT_OK);
    int32_t *uses = calloc(g->hash_size, sizeof *uses);
    CHECK(uses && ct_graph_count_uses(g, uses));
    if (uses) {
        CHECK(uses[ct_graph_slot(g, x)] == 1);
        CHECK(uses[ct_graph_slot(g, w)] == 1);
        CHECK(uses[ct_graph_slot(g, n)] == 3);
        CHECK(uses[ct_graph_slot(g, sq)] == 1);
        CHECK(uses[ct_graph_slot(g, m)] == 3);
        CHECK(uses[ct_graph_slot(g, a)] == 0);
        CHECK(uses[ct_graph_slot(g, v)] == 0);
        ct_graph *gv = ct_graph_view(ctx, g, 0, ct_graph_n_nodes(g));
        CHECK(gv && !ct_graph_count_uses(gv, uses));
    }
    free(uses);
    ct_context_free(ctx);
}

int main(void) {
    tu_init("test_graph");
    test_use_counts();
    test_random_dags();
    test_small_graphs();
    test_full_graph();
    test_deep_chain();
    test_graph_view();
    return tu_finish();
}

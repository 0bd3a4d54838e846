/* Graphs: nodes in topological order plus leafs, built depth first with an
 * explicit stack (deep chains must not exhaust the C stack) and a pointer hash
 * set (each tensor once, in O(1) per visit). Everything lives in the arena. */
#include "tensor/tensor_internal.h"

#include <limits.h>
#include <string.h>

/* Keeps every int count and every size product far from overflow. */
#define GRAPH_MAX_NODES ((size_t)INT_MAX / 8)

typedef struct graph_layout {
    size_t hash_size;
    size_t off_nodes, off_leafs, off_hash, off_stack, total;
} graph_layout;

static bool add_array(size_t *off, size_t count, size_t elem) {
    size_t bytes;
    return ct_mul_size(count, elem, &bytes) && ct_align_up(bytes, CT_MEM_ALIGN, &bytes) &&
           ct_add_size(*off, bytes, off);
}

static bool graph_layout_of(size_t max_nodes, graph_layout *l) {
    if (max_nodes > GRAPH_MAX_NODES) return false;
    l->hash_size = 16;
    while (l->hash_size < 4 * max_nodes) l->hash_size *= 2; /* load factor at most 1/2 */
    size_t off = 0;
    bool ok = add_array(&off, 1, sizeof(ct_graph));
    l->off_nodes = off;
    ok = ok && add_array(&off, max_nodes, sizeof(ct_tensor *));
    l->off_leafs = off;
    ok = ok && add_array(&off, max_nodes, sizeof(ct_tensor *));
    l->off_hash = off;
    ok = ok && add_array(&off, l->hash_size, sizeof(ct_tensor *));
    l->off_stack = off;
    ok = ok && add_array(&off, 2 * max_nodes, sizeof(ct_graph_frame));
    l->total = off;
    return ok;
}

size_t ct_graph_overhead(size_t max_nodes) {
    graph_layout l;
    return graph_layout_of(max_nodes, &l) ? l.total : SIZE_MAX;
}

ct_graph *ct_graph_new(ct_context *ctx, size_t max_nodes) {
    if (ctx == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_graph_new: ctx is NULL");
    graph_layout l;
    if (!graph_layout_of(max_nodes, &l)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_graph_new: max_nodes=%zu exceeds %zu", max_nodes,
                            GRAPH_MAX_NODES);
    }
    uint8_t *p = ct_context_alloc(ctx, l.total, "ct_graph_new", "graph");
    if (p == NULL) return NULL;
    ct_graph *g = (ct_graph *)p;
    memset(g, 0, sizeof *g);
    g->size = (int)max_nodes;
    g->nodes = (ct_tensor **)(p + l.off_nodes);
    g->leafs = (ct_tensor **)(p + l.off_leafs);
    g->hash = (ct_tensor **)(p + l.off_hash);
    g->hash_size = l.hash_size;
    g->stack = (ct_graph_frame *)(p + l.off_stack);
    memset(g->hash, 0, l.hash_size * sizeof *g->hash);
    return g;
}

static size_t hash_slot(const ct_graph *g, const ct_tensor *t) {
    uint64_t h = (uint64_t)(uintptr_t)t;
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    return (size_t)h & (g->hash_size - 1);
}

static bool hash_contains(const ct_graph *g, const ct_tensor *t) {
    for (size_t i = hash_slot(g, t);; i = (i + 1) & (g->hash_size - 1)) {
        if (g->hash[i] == t) return true;
        if (g->hash[i] == NULL) return false;
    }
}

/* Callers keep the set at most half full, so a free slot always exists. */
static void hash_insert(ct_graph *g, ct_tensor *t) {
    size_t i = hash_slot(g, t);
    while (g->hash[i] != NULL && g->hash[i] != t) i = (i + 1) & (g->hash_size - 1);
    g->hash[i] = t;
}

/* Restores the set to exactly the committed nodes and leafs (after a failed build). */
static void hash_rebuild(ct_graph *g) {
    memset(g->hash, 0, g->hash_size * sizeof *g->hash);
    for (int i = 0; i < g->n_nodes; i++) hash_insert(g, g->nodes[i]);
    for (int i = 0; i < g->n_leafs; i++) hash_insert(g, g->leafs[i]);
}

ct_status ct_graph_build_forward(ct_graph *g, ct_tensor *out) {
    if (g == NULL) return ct_fail(CT_INVALID_ARGUMENT, "ct_graph_build_forward: graph is NULL");
    if (out == NULL) return ct_fail(CT_INVALID_ARGUMENT, "ct_graph_build_forward: out is NULL");
    if (g->is_view) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_graph_build_forward: graph is a view (ct_graph_view) and is read-only");
    }
    if (hash_contains(g, out)) return CT_OK;

    /* New nodes and leafs are written past the committed counts and become part
     * of the graph only at the end, so a failure leaves the graph as it was. */
    int n_nodes = g->n_nodes, n_leafs = g->n_leafs;
    int pend_nodes = 0, pend_leafs = 0; /* pushed so far; each will be appended */
    int depth = 0;
    ct_tensor *push = out;
    for (;;) {
        if (push != NULL) {
            /* Visited on push, so self-references (ct_cast's src[1]) end the walk. */
            if (push->op == CT_OP_NONE ? ++pend_leafs > g->size - g->n_leafs : ++pend_nodes > g->size - g->n_nodes) {
                hash_rebuild(g);
                return ct_fail(CT_OUT_OF_MEMORY,
                               "ct_graph_build_forward: graph full: max_nodes=%d but %s needs more than %d %s",
                               g->size, ct_tensor_label(out, "out").s, g->size,
                               push->op == CT_OP_NONE ? "leafs" : "nodes");
            }
            hash_insert(g, push);
            g->stack[depth].tensor = push;
            g->stack[depth].next = 0;
            depth++;
            push = NULL;
        }
        if (depth == 0) break;
        ct_graph_frame *f = &g->stack[depth - 1];
        ct_tensor *t = f->tensor;
        if (f->next <= CT_MAX_SRC) {
            /* view_src last: SET_ROWS writes into it without naming it as a source. */
            ct_tensor *child = f->next < CT_MAX_SRC ? t->src[f->next] : t->view_src;
            f->next++;
            if (child != NULL && !hash_contains(g, child)) push = child;
            continue;
        }
        depth--;
        if (t->op == CT_OP_NONE) {
            g->leafs[n_leafs++] = t;
        } else {
            g->nodes[n_nodes++] = t;
        }
    }
    g->n_nodes = n_nodes;
    g->n_leafs = n_leafs;
    return CT_OK;
}

int ct_graph_n_nodes(const ct_graph *g) { return g ? g->n_nodes : 0; }
int ct_graph_n_leafs(const ct_graph *g) { return g ? g->n_leafs : 0; }

ct_tensor *ct_graph_node(const ct_graph *g, int i) {
    if (g == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_graph_node: graph is NULL");
    int j = i < 0 ? g->n_nodes + i : i;
    if (j < 0 || j >= g->n_nodes) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_graph_node: i=%d but the graph has %d nodes", i, g->n_nodes);
    }
    return g->nodes[j];
}

ct_tensor *ct_graph_leaf(const ct_graph *g, int i) {
    if (g == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_graph_leaf: graph is NULL");
    if (i < 0 || i >= g->n_leafs) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_graph_leaf: i=%d but the graph has %d leafs", i, g->n_leafs);
    }
    return g->leafs[i];
}

size_t ct_graph_slot(const ct_graph *g, const ct_tensor *t) {
    size_t i = hash_slot(g, t);
    while (g->hash[i] != t) {
        CT_ASSERT(g->hash[i] != NULL); /* t is a node or leaf of g */
        i = (i + 1) & (g->hash_size - 1);
    }
    return i;
}

bool ct_graph_count_uses(const ct_graph *g, int32_t *uses) {
    if (g->is_view) return false;
    memset(uses, 0, g->hash_size * sizeof *uses);
    for (int i = 0; i < g->n_nodes; i++) {
        const ct_tensor *n = g->nodes[i];
        for (int k = 0; k < CT_MAX_SRC; k++)
            if (n->src[k]) uses[ct_graph_slot(g, n->src[k])]++;
        if (n->view_src) uses[ct_graph_slot(g, n->view_src)]++;
    }
    return true;
}

ct_graph *ct_graph_view(ct_context *ctx, const ct_graph *g, int i0, int i1) {
    if (ctx == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_graph_view: ctx is NULL");
    if (g == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_graph_view: graph is NULL");
    if (i0 < 0 || i0 > i1 || i1 > g->n_nodes) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_graph_view: [i0, i1)=[%d, %d) is not inside [0, %d)", i0, i1,
                            g->n_nodes);
    }
    ct_graph *v = ct_context_alloc(ctx, sizeof *v, "ct_graph_view", "graph view");
    if (v == NULL) return NULL;
    memset(v, 0, sizeof *v);
    v->size = i1 - i0;
    v->n_nodes = i1 - i0;
    v->nodes = g->nodes + i0;
    v->is_view = true;
    return v;
}

/* ct-ops cases of MUL_MAT_ID and ADD_ID (docs/TESTING.md, Case lists): a selection of
 * ggml's test_mul_mat_id and test_add_id lists over every src0 type, edges, perf.
 *
 * MUL_MAT_ID: ta the experts' type, tb b's; fam_i: [0] n_as, [1] n_used, [2] b broadcast
 * (one b row for all used experts), [3] m, [4] n (tokens), [5] k, [6] variant (V_*),
 * [7] m_v (rows of each expert in memory, > m: the experts strided; 0: packed).
 * ADD_ID: ta a's and b's type; fam_i: [0] ne0, [1] n_used, [2] n_tokens, [3] n_as,
 * [6] variant. */
#include "ct_ops.h"

enum {
    V_PLAIN,    /* ids: each token's experts distinct (ggml's draw) */
    V_REPEAT,   /* ids drawn with repeats: an expert twice for one token */
    V_OUTSIDE,  /* ids drawn from [0, n_as + 3): some outside, rows of zeros (nothing added) */
    V_STRIDED,  /* b (MUL_MAT_ID) or a (ADD_ID) a strided view */
    V_EDGE,     /* ADD_ID: a with edge values (zeros, infinities, NaN, subnormals) */
};

static bool mmid_owns(cto_kind kind) { return kind == CTO_MUL_MAT_ID; }
static bool addid_owns(cto_kind kind) { return kind == CTO_ADD_ID; }

static void mmid_name(const cto_case *c, char *buf, size_t n) {
    static const char *const vn[] = {"", ",ids=repeat", ",ids=outside", ",strided", ",edge"};
    const int v = c->fam_i[6] >= 0 && c->fam_i[6] < 5 ? c->fam_i[6] : 0;
    if (c->kind == CTO_ADD_ID) {
        snprintf(buf, n, "type=%s,n_embd=%d,n_used=%d,n_tokens=%d,n_experts=%d%s", ct_type_name(c->ta), c->fam_i[0],
                 c->fam_i[1], c->fam_i[2], c->fam_i[3], vn[v]);
        return;
    }
    snprintf(buf, n, "type_a=%s,type_b=%s,n_mats=%d,n_used=%d,b=%d,m=%d,n=%d,k=%d,m_v=%d%s", ct_type_name(c->ta),
             ct_type_name(c->tb), c->fam_i[0], c->fam_i[1], c->fam_i[2], c->fam_i[3], c->fam_i[4], c->fam_i[5],
             c->fam_i[7], vn[v]);
}

static void add_mmid(cto_case_list *l, ct_type ta, ct_type tb, int n_as, int n_used, bool bc, int m, int n, int k,
                     int variant, int m_v) {
    cto_case c = cto_case_base(CTO_MUL_MAT_ID);
    c.ta = ta, c.tb = tb;
    c.fam_i[0] = n_as, c.fam_i[1] = n_used, c.fam_i[2] = bc, c.fam_i[3] = m, c.fam_i[4] = n, c.fam_i[5] = k;
    c.fam_i[6] = variant, c.fam_i[7] = m_v;
    c.flops = n > 8;
    cto_case_add(l, c);
}

static void add_addid(cto_case_list *l, ct_type t, int ne0, int n_used, int n_tokens, int n_as, int variant) {
    cto_case c = cto_case_base(CTO_ADD_ID);
    c.ta = c.tb = t;
    c.fam_i[0] = ne0, c.fam_i[1] = n_used, c.fam_i[2] = n_tokens, c.fam_i[3] = n_as, c.fam_i[6] = variant;
    cto_case_add(l, c);
}

/* Every type with a dequantizer: a backend's MUL_MAT_ID takes what its MUL_MAT takes, and
 * ct-ops skips the rest there. */
static int dequantizable_types(ct_type *out) {
    int n = 0;
    for (int t = 0; t < CT_TYPE_COUNT; t++)
        if (ct_type_can_dequantize((ct_type)t) && ct_type_block_size((ct_type)t) > 0) out[n++] = (ct_type)t;
    return n;
}

static void mmid_test_cases(cto_case_list *l) {
    ct_type types[CT_TYPE_COUNT];
    const int nt = dequantizable_types(types);
    /* ggml's main list shape over every type: 4 of 8 experts and 2 of 8, b broadcast or
     * not, a decode token and a small batch (one whole block row of k = 256) */
    for (int ti = 0; ti < nt; ti++) {
        const ct_type t = types[ti];
        const int k = (int)(ct_type_block_size(t) > 256 ? ct_type_block_size(t) : 256);
        add_mmid(l, t, CT_TYPE_F32, 8, 4, false, 64, 1, k, V_PLAIN, 0);
        add_mmid(l, t, CT_TYPE_F32, 8, 2, true, 64, 7, k, V_PLAIN, 0);
        add_mmid(l, t, CT_TYPE_F32, 4, 4, false, 33, 17, k, V_PLAIN, 0);
        add_mmid(l, t, CT_TYPE_F32, 16, 4, false, 128, 40, k, V_PLAIN, 0);
    }
    /* ggml's token-tile boundaries: every token to every expert */
    static const ct_type tile_types[3] = {CT_TYPE_Q4_K, CT_TYPE_F16, CT_TYPE_Q8_0};
    static const int tile_n[10] = {1, 15, 16, 17, 31, 32, 33, 47, 48, 49};
    for (int ti = 0; ti < 3; ti++) {
        for (int i = 0; i < 10; i++) add_mmid(l, tile_types[ti], CT_TYPE_F32, 4, 4, false, 512, tile_n[i], 256, V_PLAIN, 0);
        add_mmid(l, tile_types[ti], CT_TYPE_F32, 8, 1, false, 512, 1, 256, V_PLAIN, 0); /* experts with no rows */
    }
    /* F32 and F16 experts, b broadcast or not, prefill sizes that reach the tiled kernels */
    for (int bc = 0; bc <= 1; bc++) {
        add_mmid(l, CT_TYPE_F32, CT_TYPE_F32, 16, 16, bc, 50, 200, 64, V_PLAIN, 0);
        add_mmid(l, CT_TYPE_F16, CT_TYPE_F32, 16, 16, bc, 50, 200, 64, V_PLAIN, 0);
        add_mmid(l, CT_TYPE_BF16, CT_TYPE_F32, 16, 16, bc, 32, 64, 16, V_PLAIN, 0);
        add_mmid(l, CT_TYPE_Q4_0, CT_TYPE_F32, 32, 4, bc, 256, 96, 256, V_PLAIN, 0);
    }
    /* F16 b where MUL_MAT takes it (skipped elsewhere) */
    add_mmid(l, CT_TYPE_F16, CT_TYPE_F16, 8, 2, false, 64, 5, 256, V_PLAIN, 0);
    add_mmid(l, CT_TYPE_Q4_0, CT_TYPE_F16, 8, 2, false, 64, 5, 256, V_PLAIN, 0);
    /* edges: one expert, one row, odd sizes, strided experts (ggml's m_v), repeated and
     * outside ids, strided b, k of 4 (F32's c4 shape) */
    add_mmid(l, CT_TYPE_F32, CT_TYPE_F32, 1, 1, false, 1, 1, 4, V_PLAIN, 0);
    add_mmid(l, CT_TYPE_F32, CT_TYPE_F32, 4, 2, false, 8, 1, 64, V_PLAIN, 64);
    add_mmid(l, CT_TYPE_F16, CT_TYPE_F32, 4, 2, false, 8, 16, 64, V_PLAIN, 64);
    add_mmid(l, CT_TYPE_Q4_K, CT_TYPE_F32, 4, 2, false, 40, 20, 256, V_PLAIN, 48);
    add_mmid(l, CT_TYPE_F32, CT_TYPE_F32, 5, 3, false, 7, 3, 13, V_PLAIN, 0);
    add_mmid(l, CT_TYPE_F32, CT_TYPE_F32, 6, 4, false, 20, 9, 36, V_REPEAT, 0);
    add_mmid(l, CT_TYPE_Q8_0, CT_TYPE_F32, 6, 4, false, 70, 40, 64, V_REPEAT, 0);
    add_mmid(l, CT_TYPE_F32, CT_TYPE_F32, 6, 4, false, 20, 9, 36, V_OUTSIDE, 0);
    add_mmid(l, CT_TYPE_Q4_0, CT_TYPE_F32, 6, 4, true, 70, 40, 64, V_OUTSIDE, 0);
    add_mmid(l, CT_TYPE_F32, CT_TYPE_F32, 8, 2, false, 24, 6, 48, V_STRIDED, 0);
    add_mmid(l, CT_TYPE_Q4_0, CT_TYPE_F32, 8, 4, false, 64, 33, 64, V_STRIDED, 0);
    add_mmid(l, CT_TYPE_F32, CT_TYPE_F32, 4, 2, false, 8, 2, 4, V_PLAIN, 0);
    /* many tokens (OpenCL's grouped path from 16 rows an expert): 128x128 tiles (65 rows an expert,
     * partial in m and in the rows) over the OpenCL types, IQ4_NL's and IQ4_XS's tables included */
    static const ct_type big_types[9] = {CT_TYPE_F32,  CT_TYPE_F16,  CT_TYPE_BF16,   CT_TYPE_Q4_0,  CT_TYPE_Q8_0,
                                         CT_TYPE_Q4_K, CT_TYPE_Q6_K, CT_TYPE_IQ4_NL, CT_TYPE_IQ4_XS};
    for (int ti = 0; ti < 9; ti++) add_mmid(l, big_types[ti], CT_TYPE_F32, 4, 2, false, 130, 130, 256, V_PLAIN, 0);
    /* an expert named several times a token: lists longer than the tokens (the tiles loop),
     * in 64x64 and 128x128 tiles; ids outside [0, n_as) in both tile sizes */
    add_mmid(l, CT_TYPE_Q4_0, CT_TYPE_F32, 2, 4, false, 70, 40, 64, V_REPEAT, 0);
    add_mmid(l, CT_TYPE_F32, CT_TYPE_F32, 2, 8, false, 130, 100, 32, V_REPEAT, 0);
    add_mmid(l, CT_TYPE_F16, CT_TYPE_F32, 8, 4, false, 70, 33, 64, V_OUTSIDE, 0);
    add_mmid(l, CT_TYPE_F32, CT_TYPE_F32, 3, 3, true, 150, 96, 32, V_OUTSIDE, 0);
    /* F16 b over both paths and tile sizes, strided b, k of 1 and 65, 512 experts (1.25 rows
     * each: the mat-vec) */
    add_mmid(l, CT_TYPE_F16, CT_TYPE_F16, 4, 2, false, 64, 40, 256, V_PLAIN, 0);
    add_mmid(l, CT_TYPE_Q4_K, CT_TYPE_F16, 8, 4, true, 130, 64, 256, V_PLAIN, 0);
    add_mmid(l, CT_TYPE_F32, CT_TYPE_F16, 4, 4, false, 200, 100, 64, V_PLAIN, 0);
    add_mmid(l, CT_TYPE_Q8_0, CT_TYPE_F16, 4, 2, false, 64, 5, 64, V_STRIDED, 0);
    add_mmid(l, CT_TYPE_F32, CT_TYPE_F32, 2, 2, false, 200, 130, 48, V_STRIDED, 0);
    add_mmid(l, CT_TYPE_F32, CT_TYPE_F32, 2, 2, false, 20, 20, 1, V_PLAIN, 0);
    add_mmid(l, CT_TYPE_F16, CT_TYPE_F32, 1, 1, false, 8, 16, 65, V_PLAIN, 0);
    add_mmid(l, CT_TYPE_Q4_0, CT_TYPE_F32, 512, 10, false, 256, 64, 128, V_PLAIN, 0);
}

static void addid_test_cases(cto_case_list *l) {
    /* ADD_ID: ggml's list (n_embd 129, 4/8 of 8 and 32 experts, 1 and 11 tokens), F32 and F16 */
    static const ct_type at[2] = {CT_TYPE_F32, CT_TYPE_F16};
    for (int ti = 0; ti < 2; ti++) {
        for (int na = 8; na <= 32; na *= 4)
            for (int nu = 4; nu <= 8; nu *= 2)
                for (int nt = 1; nt <= 11; nt += 10) add_addid(l, at[ti], 129, nu, nt, na, V_PLAIN);
        add_addid(l, at[ti], 1, 1, 1, 1, V_PLAIN);
        add_addid(l, at[ti], 33, 3, 5, 4, V_REPEAT);
        add_addid(l, at[ti], 33, 3, 5, 4, V_OUTSIDE);
        add_addid(l, at[ti], 64, 4, 7, 16, V_STRIDED);
        add_addid(l, at[ti], 64, 4, 7, 16, V_EDGE);
    }
    add_addid(l, CT_TYPE_F32, 2880, 4, 32, 128, V_PLAIN);
}

static void mmid_perf_cases(cto_case_list *l, double s) {
    /* decode: 8 of 64 experts of 2048 x 768 (qwen3-moe's FFN), weights Q4_K, Q8_0 and F16 */
    static const ct_type dt[3] = {CT_TYPE_Q4_K, CT_TYPE_Q8_0, CT_TYPE_F16};
    for (int i = 0; i < 3; i++) add_mmid(l, dt[i], CT_TYPE_F32, 64, 8, true, 768, 1, 2048, V_PLAIN, 0);
    /* prefill batches (the grouped path on OpenCL): qwen3-moe's 64 and 128 experts, F16 and
     * Q8_0 weights, gpt-oss's 4 of 32 experts of 2880 x 2880 */
    const int np = (int)cto_scaled(512, s, 1, 8);
    for (int i = 0; i < 3; i++) add_mmid(l, dt[i], CT_TYPE_F32, 64, 8, true, 768, np, 2048, V_PLAIN, 0);
    add_mmid(l, CT_TYPE_Q4_K, CT_TYPE_F32, 128, 8, true, 768, np, 2048, V_PLAIN, 0);
    add_mmid(l, CT_TYPE_Q8_0, CT_TYPE_F32, 32, 4, true, 2880, np, 2880, V_PLAIN, 0);
}

static void addid_perf_cases(cto_case_list *l, double s) {
    /* gpt-oss's bias add */
    add_addid(l, CT_TYPE_F32, 2880, 4, (int)cto_scaled(512, s, 1, 1), 128, V_PLAIN);
}

static ct_tensor *new_ids(cto_builder *b, int n_used, int n_tokens, int n_as, int variant) {
    /* ggml's view of the first n_used columns of an [n_as, n_tokens] tensor */
    const int wide = variant == V_PLAIN && n_as > n_used ? n_as : n_used;
    ct_tensor *ids = cto_new4(b, CT_TYPE_I32, wide, n_tokens, 1, 1, 0.0f, 1.0f);
    if (!ids) return NULL;
    if (variant == V_PLAIN) {
        cto_set_init(b, ids, CTO_INIT_INDEX_PERM, n_as);
    } else {
        cto_set_init(b, ids, CTO_INIT_INDEX_MOD, variant == V_OUTSIDE ? n_as + 3 : n_as);
    }
    if (wide != n_used) ids = cto_chk(b, ct_view_2d(b->ctx, ids, n_used, n_tokens, ids->nb[1], 0));
    return ids;
}

static void mmid_build(const cto_case *c, cto_builder *b, int n_rep, ct_tensor **outs) {
    ct_context *ctx = b->ctx;
    const float lo = c->lo, hi = c->hi;
    const int variant = c->fam_i[6];
    if (c->kind == CTO_ADD_ID) {
        const int ne0 = c->fam_i[0], nu = c->fam_i[1], nt = c->fam_i[2], na = c->fam_i[3];
        ct_tensor *a;
        if (variant == V_STRIDED) {
            a = cto_new4(b, c->ta, 2 * ne0 + 3, nu, nt, 1, lo, hi);
            if (a) a = cto_chk(b, ct_view_3d(ctx, a, ne0, nu, nt, a->nb[1], a->nb[2], 3 * ct_type_size(c->ta)));
        } else {
            a = cto_new4(b, c->ta, ne0, nu, nt, 1, lo, hi);
            if (a && variant == V_EDGE) cto_set_init(b, a, CTO_INIT_EDGE, 0);
        }
        ct_tensor *bias = cto_new4(b, c->tb, ne0, na, 1, 1, lo, hi);
        ct_tensor *ids = new_ids(b, nu, nt, na, variant);
        if (!a || !bias || !ids) return;
        for (int i = 0; i < n_rep; i++) outs[i] = cto_chk(b, ct_add_id(ctx, a, bias, ids));
        return;
    }
    const int na = c->fam_i[0], nu = c->fam_i[1], m = c->fam_i[3], n = c->fam_i[4], k = c->fam_i[5];
    const int mv = c->fam_i[7];
    const int nb1 = c->fam_i[2] ? 1 : nu;
    ct_tensor *as = cto_new4(b, c->ta, k, mv > m ? mv : m, na, 1, lo, hi);
    if (as && mv > m) as = cto_chk(b, ct_view_3d(ctx, as, k, m, na, as->nb[1], as->nb[2], 0));
    ct_tensor *y;
    if (variant == V_STRIDED) {
        /* rows of 2k values, the second half used; tokens one row apart further */
        y = cto_new4(b, c->tb, 2 * k, nb1 + 1, n, 1, lo, hi);
        if (y) y = cto_chk(b, ct_view_3d(ctx, y, k, nb1, n, y->nb[1], y->nb[2], (size_t)k * ct_type_size(c->tb)));
    } else {
        y = cto_new4(b, c->tb, k, nb1, n, 1, lo, hi);
        if (y && variant == V_EDGE) cto_set_init(b, y, CTO_INIT_EDGE, 0);
    }
    ct_tensor *ids = new_ids(b, nu, n, na, variant);
    if (!as || !y || !ids) return;
    for (int i = 0; i < n_rep; i++) outs[i] = cto_chk(b, ct_mul_mat_id(ctx, as, y, ids));
}

const cto_family cto_family_mul_mat_id = {
    .owns = mmid_owns,
    .exact = false,
    .max_nmse = 5e-4, /* MUL_MAT's: the CPU quantizes b to 8 bits for quantized experts */
    .name = mmid_name,
    .test_cases = mmid_test_cases,
    .perf_cases = mmid_perf_cases,
    .build = mmid_build,
};

const cto_family cto_family_add_id = {
    .owns = addid_owns,
    .exact = true, /* one float add, rounded once: every backend gives the same bytes */
    .max_nmse = 0.0,
    .name = mmid_name,
    .test_cases = addid_test_cases,
    .perf_cases = addid_perf_cases,
    .build = mmid_build,
};

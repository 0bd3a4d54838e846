/* ct-ops cases of FLASH_ATTN_EXT (docs/TESTING.md, Case lists): a selection of ggml's
 * test_flash_attn_ext list (head sizes, GQA, ne3 broadcast, mask, sinks, ALiBi, softcap, K/V
 * types, permuted and viewed K/V), edges, and prefill/decode perf shapes.
 * fam_i: [0] Dk, [1] Dv, [2] n_kv, [3] n_q, [4] kv heads, [5] GQA ratio (q heads = [4]*[5]),
 * [6] ne3, [7] flags (FA_*); fam_f: [0] max_bias, [1] logit_softcap, [2] scale (0: 1/sqrt(Dk));
 * ta: K's type, tb: V's type. */
#include "ct_ops.h"

#include <math.h>

enum {
    FA_MASK = 1,     /* an F16 mask [n_kv, n_q, 1, ne3], causal -inf (mask mode 1) */
    FA_SINKS = 2,
    FA_PERM = 4,     /* q, k, v created permuted (0, 2, 1, 3) as ggml's permute cases */
    FA_VIEW = 8,     /* k, v views of a cache twice as long */
    FA_VOFK = 16,    /* v a view of k's first Dv elements (MLA) */
    FA_MASKH = 32,   /* the mask per head ([n_kv, n_q, n_head, ne3]) */
    FA_MASKROWS = 64,/* mask mode 2: every third query row wholly masked */
    FA_BIG = 128,    /* q in [-64, 64): logits far apart, the running max replaced often */
    FA_PAD = 256,    /* the mask longer than n_kv (n_kv + 3) and n_q (+ 2) */
};

static bool fa_owns(cto_kind kind) { return kind == CTO_FLASH_ATTN_EXT; }

static void fa_name(const cto_case *c, char *buf, size_t n) {
    const int *p = c->fam_i;
    snprintf(buf, n,
             "hsk=%d,hsv=%d,nh=%d,nr23=[%d,%d],kv=%d,nb=%d,mask=%d,sinks=%d,max_bias=%g,logit_softcap=%g,type_K=%s,"
             "type_V=%s%s%s%s%s%s%s%s",
             p[0], p[1], p[4], p[5], p[6], p[2], p[3], (p[7] & FA_MASK) != 0, (p[7] & FA_SINKS) != 0,
             (double)c->fam_f[0], (double)c->fam_f[1], ct_type_name(c->ta), ct_type_name(c->tb),
             p[7] & FA_PERM ? ",permute=[0,2,1,3]" : "", p[7] & FA_VIEW ? ",kv_view" : "",
             p[7] & FA_VOFK ? ",v_is_view_of_k" : "", p[7] & FA_MASKH ? ",mask_per_head" : "",
             p[7] & FA_MASKROWS ? ",masked_rows" : "", p[7] & FA_BIG ? ",big_q" : "", p[7] & FA_PAD ? ",mask_pad" : "");
}

static void add_fa(cto_case_list *l, int hsk, int hsv, int nh, int nr2, int nr3, int kv, int nb, int flags,
                   float max_bias, float softcap, ct_type tk, ct_type tv) {
    cto_case c = cto_case_base(CTO_FLASH_ATTN_EXT);
    c.ta = tk, c.tb = tv;
    const int f[8] = {hsk, hsv, kv, nb, nh, nr2, nr3, flags};
    for (int i = 0; i < 8; i++) c.fam_i[i] = f[i];
    c.fam_f[0] = max_bias, c.fam_f[1] = softcap, c.fam_f[2] = 0.0f;
    c.flops = nb > 1; /* the one-token decode reads the cache: GB/s */
    cto_case_add(l, c);
}

static void fa_test_cases(cto_case_list *l) {
    const int M = FA_MASK, S = FA_SINKS, V = FA_VIEW;
    static const ct_type kv_types[9] = {CT_TYPE_F32,  CT_TYPE_F16,  CT_TYPE_BF16, CT_TYPE_Q8_0,  CT_TYPE_Q5_1,
                                        CT_TYPE_Q5_0, CT_TYPE_Q4_1, CT_TYPE_Q4_0, CT_TYPE_IQ4_NL};
    /* every K/V type at head size 64: mask, sinks, ALiBi, GQA, ne3 broadcast, decode and prefill */
    for (int t = 0; t < 9; t++) {
        const ct_type ty = kv_types[t];
        add_fa(l, 64, 64, 4, 1, 1, 113, 3, M | V, 0.0f, 0.0f, ty, ty);
        add_fa(l, 64, 64, 4, 4, 3, 256, 1, M | S | V, 0.0f, 0.0f, ty, ty);
        add_fa(l, 64, 64, 4, 1, 3, 113, 9, M | V, 8.0f, 0.0f, ty, ty);
        add_fa(l, 64, 64, 4, 4, 1, 130, 19, S | V, 0.0f, 0.0f, ty, ty);
        add_fa(l, 72, 72, 4, 1, 1, 113, 9, M | S | V | FA_PERM, 0.0f, 0.0f, ty, ty);
    }
    /* head sizes (F16 K/V) as ggml's list pairs them, Dk != Dv included */
    static const int hs[][2] = {{40, 40},   {64, 64},   {72, 72},   {80, 80},   {96, 64},  {96, 96},  {112, 112},
                                {128, 128}, {192, 128}, {192, 192}, {256, 256}, {320, 256}, {512, 512}, {576, 512}};
    for (int i = 0; i < CTO_N_OF(hs); i++) {
        const int k = hs[i][0], v = hs[i][1];
        const int vofk = k == 576 ? FA_VOFK : 0;
        add_fa(l, k, v, 2, 1, 1, 113, 9, M | V | vofk, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
        add_fa(l, k, v, 2, 1, 1, 300, 1, M | S | V | vofk, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
        add_fa(l, k, v, 2, 1, 1, 61, 17, S | V | vofk | FA_PERM, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    }
    add_fa(l, 576, 512, 1, 20, 1, 256, 3, M | V | FA_VOFK, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 320, 256, 1, 32, 1, 256, 2, M | S | V, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 128, 128, 4, 12, 1, 256, 3, M | V, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    /* softcap (Gemma 2), with ALiBi and sinks */
    add_fa(l, 128, 128, 4, 1, 1, 113, 9, M | S | V, 8.0f, 10.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 128, 128, 4, 1, 1, 600, 1, V, 0.0f, 10.0f, CT_TYPE_F16, CT_TYPE_F16);
    /* odd sizes and mixed types (ggml's asymmetric and mixed cases) */
    add_fa(l, 65, 67, 4, 1, 1, 113, 19, M | S | V, 8.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 65, 67, 4, 1, 1, 17, 19, V, 0.0f, 1.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 72, 64, 4, 1, 1, 256, 2, M | V, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 64, 72, 4, 1, 1, 256, 2, M | V, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 64, 64, 4, 1, 1, 128, 2, M | V, 0.0f, 0.0f, CT_TYPE_Q8_0, CT_TYPE_Q4_0);
    add_fa(l, 64, 64, 4, 1, 1, 128, 2, M | V, 0.0f, 0.0f, CT_TYPE_Q4_0, CT_TYPE_F16);
    add_fa(l, 64, 64, 4, 1, 1, 96, 2, M | V, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F32);
    add_fa(l, 64, 64, 2, 4, 1, 300, 64, M | V, 0.0f, 0.0f, CT_TYPE_Q4_0, CT_TYPE_Q4_0);
    /* edges: one key, one row, one head, small odd head sizes, the mask per head and longer than
     * n_kv/n_q, wholly masked rows (with and without sinks), no keys, Q with edge values */
    add_fa(l, 64, 64, 1, 1, 1, 1, 1, M, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 3, 5, 2, 3, 2, 7, 5, M | S | FA_MASKH, 8.0f, 0.0f, CT_TYPE_F32, CT_TYPE_F16);
    add_fa(l, 1, 1, 1, 1, 1, 1, 1, 0, 0.0f, 0.0f, CT_TYPE_F32, CT_TYPE_F32);
    add_fa(l, 64, 64, 3, 2, 2, 77, 9, M | FA_MASKH | FA_PAD, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_BF16);
    add_fa(l, 64, 64, 2, 1, 1, 40, 9, M | FA_MASKROWS, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 64, 64, 2, 1, 1, 40, 9, M | S | FA_MASKROWS, 0.0f, 0.0f, CT_TYPE_Q8_0, CT_TYPE_Q8_0);
    add_fa(l, 64, 64, 2, 1, 1, 0, 3, M, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 64, 64, 2, 1, 1, 0, 3, S, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 64, 64, 2, 1, 1, 50, 4, M | FA_BIG, 0.0f, 0.0f, CT_TYPE_F32, CT_TYPE_F32);
    add_fa(l, 32, 32, 2, 2, 1, 300, 20, M | S | FA_PERM, 0.0f, 0.0f, CT_TYPE_Q4_1, CT_TYPE_Q5_0);
    /* 16 query rows and more (the tensor-core kernel's prefill shapes): softcap with ALiBi
     * and sinks over a partial second row block, wholly masked rows, the mask per head and
     * padded, the keys split over work-groups, Gemma's head size, logits far apart, no keys */
    add_fa(l, 128, 128, 4, 1, 1, 113, 40, M | S | V, 8.0f, 10.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 64, 64, 2, 1, 1, 40, 33, M | FA_MASKROWS, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 64, 64, 3, 2, 2, 77, 33, M | FA_MASKH | FA_PAD, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 80, 80, 1, 4, 1, 1000, 20, M | S, 0.0f, 0.0f, CT_TYPE_Q8_0, CT_TYPE_Q8_0);
    add_fa(l, 256, 256, 1, 4, 1, 200, 48, M, 0.0f, 0.0f, CT_TYPE_Q4_0, CT_TYPE_F16);
    add_fa(l, 64, 64, 2, 1, 1, 50, 20, M | FA_BIG, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    add_fa(l, 64, 64, 2, 1, 1, 0, 17, S, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    /* F16 K and V from 64 query rows: the CPU keeps Q in fp32 there (ggml-cpu's tiled path) */
    add_fa(l, 128, 128, 2, 2, 1, 160, 70, M | S | V, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
}

static void fa_perf_cases(cto_case_list *l, double s) {
    /* prefill: 512 tokens over 512 keys, 32 heads of 128 (8 kv heads); decode: one token over
     * 4096 keys; F16 and Q8_0 caches */
    const int t = (int)cto_scaled(512, s, 1, 8), n = (int)cto_scaled(4096, s, 32, 64);
    static const ct_type types[2] = {CT_TYPE_F16, CT_TYPE_Q8_0};
    for (int i = 0; i < 2; i++) {
        add_fa(l, 128, 128, 8, 4, 1, t, t, FA_MASK, 0.0f, 0.0f, types[i], types[i]);
        add_fa(l, 128, 128, 8, 4, 1, n, 1, FA_MASK, 0.0f, 0.0f, types[i], types[i]);
    }
    add_fa(l, 256, 256, 1, 4, 1, n, 1, FA_MASK, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
    /* Gemma 3 270M's prefill: 4 heads of 256 over one kv head */
    add_fa(l, 256, 256, 1, 4, 1, t, t, FA_MASK, 0.0f, 0.0f, CT_TYPE_F16, CT_TYPE_F16);
}

/* A [ne0, ne1, ne2, ne3] input of type ty, created permuted (0, 2, 1, 3) or as a view of a
 * tensor twice as long in dim 1 as the flags say. */
static ct_tensor *fa_input(cto_builder *b, ct_type ty, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, int flags,
                           bool view, float lo, float hi) {
    static const int P0213[4] = {0, 2, 1, 3};
    const bool per = (flags & FA_PERM) != 0;
    /* ne_perm[per[i]] = ne[i] */
    const int64_t a1 = per ? ne2 : ne1, a2 = per ? ne1 : ne2;
    ct_tensor *t;
    if (view) {
        ct_tensor *t0 = cto_new4(b, ty, ne0, 2 * a1, a2, ne3, lo, hi);
        if (!t0) return NULL;
        t = cto_chk(b, ct_view_4d(b->ctx, t0, ne0, a1, a2, ne3, t0->nb[1], t0->nb[2], t0->nb[3], 0));
    } else {
        t = cto_new4(b, ty, ne0, a1, a2, ne3, lo, hi);
    }
    return per ? cto_permute(b, t, P0213) : t;
}

static void fa_build(const cto_case *c, cto_builder *b, int n_rep, ct_tensor **outs) {
    const int *p = c->fam_i;
    /* head sizes padded to the K and V block sizes, as ggml's test pads them */
    const int bk = (int)ct_type_block_size(c->ta), bv = (int)ct_type_block_size(c->tb);
    const int hsk = (p[0] + bk - 1) / bk * bk, hsv = (p[1] + bv - 1) / bv * bv, kv = p[2], nb = p[3], nh = p[4], nr2 = p[5], nr3 = p[6], fl = p[7];
    const int nhq = nh * nr2;
    const bool view = (fl & FA_VIEW) != 0;
    const float qr = fl & FA_BIG ? 64.0f : 1.0f;
    ct_tensor *q = fa_input(b, CT_TYPE_F32, hsk, nb, nhq, nr3, fl, false, -qr, qr);
    ct_tensor *k = fa_input(b, c->ta, hsk, kv, nh, nr3, fl, view, -1.0f, 1.0f), *v = NULL;
    if (!q || !k) return;
    if (fl & FA_VOFK) {
        v = cto_chk(b, ct_view_4d(b->ctx, k, hsv, kv, nh, nr3, k->nb[1], k->nb[2], k->nb[3], 0));
    } else {
        v = fa_input(b, c->tb, hsv, kv, nh, nr3, fl, view, -1.0f, 1.0f);
    }
    ct_tensor *m = NULL, *s = NULL;
    if (fl & FA_MASK) {
        const int pad = fl & FA_PAD ? 1 : 0;
        m = cto_new4(b, CT_TYPE_F16, kv + 3 * pad, nb + 2 * pad, fl & FA_MASKH ? nhq : 1, nr3, -1.0f, 1.0f);
        if (m) cto_set_init(b, m, CTO_INIT_MASK, fl & FA_MASKROWS ? 2 : 1);
    }
    if (fl & FA_SINKS) s = cto_new4(b, CT_TYPE_F32, nhq, 1, 1, 1, -10.0f, 10.0f);
    if (!v || ((fl & FA_MASK) && !m) || ((fl & FA_SINKS) && !s)) return;
    const float scale = c->fam_f[2] != 0.0f ? c->fam_f[2] : 1.0f / sqrtf((float)hsk);
    for (int i = 0; i < n_rep; i++) {
        ct_tensor *r = ct_flash_attn_ext(b->ctx, q, k, v, m, scale, c->fam_f[0], c->fam_f[1]);
        if (r && s) r = ct_flash_attn_ext_add_sinks(r, s);
        if (r) r = ct_flash_attn_ext_set_prec(r, CT_PREC_F32);
        outs[i] = cto_chk(b, r);
    }
}

const cto_family cto_family_flash_attn = {
    .owns = fa_owns,
    .exact = false,
    .max_nmse = 1e-6,
    .name = fa_name,
    .test_cases = fa_test_cases,
    .perf_cases = fa_perf_cases,
    .build = fa_build,
};

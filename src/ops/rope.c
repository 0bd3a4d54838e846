/* ROPE constructors (docs/TENSORS.md, ROPE): ggml_rope_ext, ggml_rope_multi and their
 * in-place forms, with ggml's op_params layout, and ct_rope_set_offset. */
#include "tensor/tensor_internal.h"

#include <string.h>

static bool rope_mode_multi(int mode) {
    return mode == CT_ROPE_TYPE_MROPE || mode == CT_ROPE_TYPE_VISION || mode == CT_ROPE_TYPE_IMROPE;
}

static ct_tensor *rope_impl(const char *F, ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *c, int n_dims,
                            const int sections[4], int mode, int n_ctx_orig, const float f[6], bool inplace) {
    if (ct_op_check_args(F, ctx, a, "a", b, "positions (b)", NULL, NULL) != CT_OK) return NULL;
    const ct_label la = ct_tensor_label(a, "a"), lb = ct_tensor_label(b, "positions");
    const bool multi = sections != NULL;
    if (multi ? !rope_mode_multi(mode) : (mode != CT_ROPE_TYPE_NORMAL && mode != CT_ROPE_TYPE_NEOX)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: mode=%d but must be %s", F, mode,
                            multi ? "8 (MROPE), 24 (VISION) or 40 (IMROPE)" : "0 (NORMAL) or 2 (NEOX)");
    }
    if (a->type != CT_TYPE_F32 && a->type != CT_TYPE_F16) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32 or f16", F, la.s,
                            ct_type_name(a->type));
    }
    if (b->type != CT_TYPE_I32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be i32", F, lb.s, ct_type_name(b->type));
    }
    if (b->ne[1] != 1 || b->ne[2] != 1 || b->ne[3] != 1) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne=[%lld, %lld, %lld, %lld] but must be a vector", F, lb.s,
                            (long long)b->ne[0], (long long)b->ne[1], (long long)b->ne[2], (long long)b->ne[3]);
    }
    const int64_t want = multi ? 4 * a->ne[2] : a->ne[2];
    if (b->ne[0] != want) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[0]=%lld but must be %s%s ne[2]=%lld", F, lb.s,
                            (long long)b->ne[0], multi ? "4 x " : "", la.s, (long long)a->ne[2]);
    }
    if (n_dims <= 0 || n_dims % 2 != 0 || n_dims > a->ne[0]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: n_dims=%d but must be even, > 0 and <= %s ne[0]=%lld", F,
                            n_dims, la.s, (long long)a->ne[0]);
    }
    if (mode == CT_ROPE_TYPE_VISION && 2 * (int64_t)n_dims != a->ne[0]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: VISION needs n_dims=%d == %s ne[0]/2 (ne[0]=%lld)", F, n_dims,
                            la.s, (long long)a->ne[0]);
    }
    if (multi) {
        for (int i = 0; i < 4; i++)
            if (sections[i] < 0)
                return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: sections[%d]=%d but must be >= 0", F, i, sections[i]);
        if (sections[0] <= 0 && sections[1] <= 0 && sections[2] <= 0) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: sections={%d, %d, %d, %d} but one of the first three must be > 0",
                                F, sections[0], sections[1], sections[2], sections[3]);
        }
        const int64_t sum = (int64_t)sections[0] + sections[1] + sections[2] + sections[3];
        if (sum > a->ne[0]) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: sections add up to %lld but must be <= %s ne[0]=%lld", F,
                                (long long)sum, la.s, (long long)a->ne[0]);
        }
    }
    if (c != NULL) {
        const ct_label lc = ct_tensor_label(c, "freq factors (c)");
        const int64_t need = mode == CT_ROPE_TYPE_VISION ? n_dims : n_dims / 2;
        if (c->type != CT_TYPE_F32) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32", F, lc.s, ct_type_name(c->type));
        }
        if (c->ne[0] < need) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne[0]=%lld but must be >= %lld", F, lc.s,
                                (long long)c->ne[0], (long long)need);
        }
        if (ct_is_empty(c)) { /* its first row is read: it must hold one */
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne=[%lld,%lld,%lld,%lld] has no elements", F, lc.s,
                                (long long)c->ne[0], (long long)c->ne[1], (long long)c->ne[2], (long long)c->ne[3]);
        }
    }
    ct_tensor *t = inplace ? ct_view_impl(ctx, F, a, a->ne, a->nb, 0) : ct_tensor_new_impl(ctx, F, a->type, a->ne);
    if (t == NULL) return NULL;
    memset(t->op_params, 0, sizeof t->op_params);
    t->op = CT_OP_ROPE;
    t->op_params[1] = n_dims;
    t->op_params[2] = mode;
    t->op_params[4] = n_ctx_orig;
    memcpy(&t->op_params[5], f, 6 * sizeof(float));
    if (multi) memcpy(&t->op_params[11], sections, 4 * sizeof(int32_t));
    t->src[0] = a;
    t->src[1] = b;
    t->src[2] = c;
    if (inplace) ct_tensor_name_from(t, a, " (view)");
    return t;
}

bool ct_rope_node_valid(const ct_tensor *op) {
    if (!op || op->op != CT_OP_ROPE) return false;
    const ct_tensor *a = op->src[0], *b = op->src[1], *c = op->src[2];
    if (!a || !b || (a->type != CT_TYPE_F32 && a->type != CT_TYPE_F16) || op->type != a->type ||
        !ct_are_same_shape(a, op))
        return false;
    const int n_dims = op->op_params[1], mode = op->op_params[2], n_offs = op->op_params[15];
    const bool multi = rope_mode_multi(mode);
    if (!multi && mode != CT_ROPE_TYPE_NORMAL && mode != CT_ROPE_TYPE_NEOX) return false;
    if (n_dims <= 0 || n_dims % 2 != 0 || n_dims > a->ne[0]) return false;
    if (n_offs < 0 || n_offs % 2 != 0 || (int64_t)n_offs + n_dims > a->ne[0]) return false;
    if (mode == CT_ROPE_TYPE_VISION && (n_offs != 0 || 2 * (int64_t)n_dims != a->ne[0])) return false;
    if (b->type != CT_TYPE_I32 || b->ne[0] < (multi ? 4 : 1) * a->ne[2]) return false;
    if (c && (c->type != CT_TYPE_F32 || c->ne[0] < (mode == CT_ROPE_TYPE_VISION ? n_dims : n_dims / 2) ||
              ct_is_empty(c)))
        return false;
    if (multi) {
        const int32_t *s = &op->op_params[11];
        if (s[0] < 0 || s[1] < 0 || s[2] < 0 || s[3] < 0 || (s[0] == 0 && s[1] == 0 && s[2] == 0)) return false;
        if ((int64_t)s[0] + s[1] + s[2] + s[3] > a->ne[0]) return false;
    }
    return true;
}

#define ROPE_FLOATS {freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow}

ct_tensor *ct_rope_ext(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *c, int n_dims, int mode,
                       int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor,
                       float beta_fast, float beta_slow) {
    const float f[6] = ROPE_FLOATS;
    return rope_impl("ct_rope_ext", ctx, a, b, c, n_dims, NULL, mode, n_ctx_orig, f, false);
}

ct_tensor *ct_rope_ext_inplace(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *c, int n_dims, int mode,
                               int n_ctx_orig, float freq_base, float freq_scale, float ext_factor,
                               float attn_factor, float beta_fast, float beta_slow) {
    const float f[6] = ROPE_FLOATS;
    return rope_impl("ct_rope_ext_inplace", ctx, a, b, c, n_dims, NULL, mode, n_ctx_orig, f, true);
}

ct_tensor *ct_rope_multi(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *c, int n_dims,
                         const int sections[4], int mode, int n_ctx_orig, float freq_base, float freq_scale,
                         float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    const float f[6] = ROPE_FLOATS;
    if (ctx && a && b && !sections) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_rope_multi: sections is NULL");
    return rope_impl("ct_rope_multi", ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, f, false);
}

ct_tensor *ct_rope_multi_inplace(ct_context *ctx, ct_tensor *a, ct_tensor *b, ct_tensor *c, int n_dims,
                                 const int sections[4], int mode, int n_ctx_orig, float freq_base,
                                 float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                 float beta_slow) {
    const float f[6] = ROPE_FLOATS;
    if (ctx && a && b && !sections)
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_rope_multi_inplace: sections is NULL");
    return rope_impl("ct_rope_multi_inplace", ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, f, true);
}

ct_tensor *ct_rope_set_offset(ct_tensor *t, int n_offs) {
    const char *F = "ct_rope_set_offset";
    if (t == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: t is NULL", F);
    const ct_label lt = ct_tensor_label(t, "t");
    if (t->op != CT_OP_ROPE) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s op=%s but must be ROPE", F, lt.s, ct_op_name(t->op));
    }
    const int n_dims = t->op_params[1], mode = t->op_params[2];
    if (mode == CT_ROPE_TYPE_VISION && n_offs != 0) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: n_offs=%d but VISION takes no offset", F, n_offs);
    }
    if (n_offs < 0 || n_offs % 2 != 0 || (int64_t)n_offs + n_dims > t->ne[0]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: n_offs=%d but must be even, >= 0 and n_offs + n_dims (%d) <= ne[0]=%lld",
                            F, n_offs, n_dims, (long long)t->ne[0]);
    }
    t->op_params[15] = n_offs;
    return t;
}

/* FLASH_ATTN_EXT constructor (docs/TENSORS.md, FLASH_ATTN_EXT): ggml_flash_attn_ext with its
 * optional mask (src[3]), sinks (src[4], ct_flash_attn_ext_add_sinks) and precision
 * (ct_flash_attn_ext_set_prec); ct_flash_attn_node_valid is every backend's shared check. */
#include "tensor/tensor_internal.h"

#include <math.h>
#include <string.h>

bool ct_flash_attn_kv_type(ct_type t) {
    switch (t) {
    case CT_TYPE_F32:
    case CT_TYPE_F16:
    case CT_TYPE_BF16:
    case CT_TYPE_Q8_0:
    case CT_TYPE_Q4_0:
    case CT_TYPE_Q4_1:
    case CT_TYPE_Q5_0:
    case CT_TYPE_Q5_1:
    case CT_TYPE_IQ4_NL: return true;
    default: return false;
    }
}

ct_type ct_flash_attn_q_type(const ct_tensor *op) {
    const ct_tensor *q = op->src[0], *k = op->src[1], *v = op->src[2];
    switch (k->type) {
    case CT_TYPE_F32: return CT_TYPE_F32;
    case CT_TYPE_F16: return v->type == CT_TYPE_F16 && q->ne[1] >= 64 ? CT_TYPE_F32 : CT_TYPE_F16;
    case CT_TYPE_BF16: return CT_TYPE_BF16;
    default: return CT_TYPE_Q8_0;
    }
}

static float param_f32(const ct_tensor *t, int i) {
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

bool ct_flash_attn_node_valid(const ct_tensor *op) {
    if (!op || op->op != CT_OP_FLASH_ATTN_EXT || op->type != CT_TYPE_F32) return false;
    const ct_tensor *q = op->src[0], *k = op->src[1], *v = op->src[2], *mask = op->src[3], *sinks = op->src[4];
    if (!q || !k || !v || q->type != CT_TYPE_F32 || !ct_flash_attn_kv_type(k->type) || !ct_flash_attn_kv_type(v->type))
        return false;
    if (k->ne[0] != q->ne[0] || v->ne[1] != k->ne[1] || k->ne[3] != q->ne[3] || v->ne[3] != q->ne[3]) return false;
    if (k->ne[2] < 1 || v->ne[2] < 1 || q->ne[2] % k->ne[2] != 0 || q->ne[2] % v->ne[2] != 0) return false;
    if (op->ne[0] != v->ne[0] || op->ne[1] != q->ne[2] || op->ne[2] != q->ne[1] || op->ne[3] != q->ne[3]) return false;
    if (mask) {
        if (mask->type != CT_TYPE_F16 || mask->ne[0] < k->ne[1] || mask->ne[1] < q->ne[1]) return false;
        if (mask->ne[2] < 1 || mask->ne[3] < 1 || q->ne[2] % mask->ne[2] != 0 || q->ne[3] % mask->ne[3] != 0)
            return false;
    } else if (param_f32(op, 1) > 0.0f) {
        return false;
    }
    if (sinks && (sinks->type != CT_TYPE_F32 || sinks->ne[0] != q->ne[2])) return false;
    const int prec = op->op_params[3];
    return prec == CT_PREC_DEFAULT || prec == CT_PREC_F32;
}

ct_tensor *ct_flash_attn_ext(ct_context *ctx, ct_tensor *q, ct_tensor *k, ct_tensor *v, ct_tensor *mask,
                             float scale, float max_bias, float logit_softcap) {
    static const char *const F = "ct_flash_attn_ext";
    if (ct_op_check_args(F, ctx, q, "q", k, "k", v, "v") != CT_OK) return NULL;
    const ct_label lq = ct_tensor_label(q, "q"), lk = ct_tensor_label(k, "k"), lv = ct_tensor_label(v, "v");
    if (q->type != CT_TYPE_F32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32", F, lq.s, ct_type_name(q->type));
    }
    if (!ct_flash_attn_kv_type(k->type) || !ct_flash_attn_kv_type(v->type)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                            "%s: %s type=%s, %s type=%s but each must be f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, "
                            "q5_1 or iq4_nl",
                            F, lk.s, ct_type_name(k->type), lv.s, ct_type_name(v->type));
    }
    if (!isfinite(scale) || !isfinite(max_bias) || !isfinite(logit_softcap)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: scale=%g, max_bias=%g, logit_softcap=%g but all must be finite",
                            F, (double)scale, (double)max_bias, (double)logit_softcap);
    }
    if (k->ne[0] != q->ne[0]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne0=%lld but must be %s ne0=%lld (the K head size)", F, lk.s,
                            (long long)k->ne[0], lq.s, (long long)q->ne[0]);
    }
    if (v->ne[1] != k->ne[1]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne1=%lld but must be %s ne1=%lld (n_kv)", F, lv.s,
                            (long long)v->ne[1], lk.s, (long long)k->ne[1]);
    }
    if (k->ne[3] != q->ne[3] || v->ne[3] != q->ne[3]) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s ne3=%lld, %s ne3=%lld but both must be %s ne3=%lld", F, lk.s,
                            (long long)k->ne[3], lv.s, (long long)v->ne[3], lq.s, (long long)q->ne[3]);
    }
    if (k->ne[2] < 1 || v->ne[2] < 1 || q->ne[2] % k->ne[2] != 0 || q->ne[2] % v->ne[2] != 0) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                            "%s: %s ne2=%lld, %s ne2=%lld but each must be >= 1 and divide %s ne2=%lld (n_head)", F,
                            lk.s, (long long)k->ne[2], lv.s, (long long)v->ne[2], lq.s, (long long)q->ne[2]);
    }
    if (mask != NULL) {
        if (ct_op_check_args(F, ctx, mask, "mask", NULL, NULL, NULL, NULL) != CT_OK) return NULL;
        const ct_label lm = ct_tensor_label(mask, "mask");
        if (mask->type != CT_TYPE_F16 || !ct_is_contiguous(mask)) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s%s but must be f16 and contiguous", F, lm.s,
                                ct_type_name(mask->type), ct_is_contiguous(mask) ? "" : " (not contiguous)");
        }
        if (mask->ne[0] < k->ne[1] || mask->ne[1] < q->ne[1]) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                                "%s: %s ne0=%lld, ne1=%lld but must have ne0 >= n_kv=%lld and ne1 >= n_q=%lld", F,
                                lm.s, (long long)mask->ne[0], (long long)mask->ne[1], (long long)k->ne[1],
                                (long long)q->ne[1]);
        }
        if (mask->ne[2] < 1 || mask->ne[3] < 1 || q->ne[2] % mask->ne[2] != 0 || q->ne[3] % mask->ne[3] != 0) {
            return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                                "%s: %s ne2=%lld, ne3=%lld but must be >= 1 and divide %s ne2=%lld, ne3=%lld", F,
                                lm.s, (long long)mask->ne[2], (long long)mask->ne[3], lq.s, (long long)q->ne[2],
                                (long long)q->ne[3]);
        }
    } else if (max_bias > 0.0f) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: max_bias=%g > 0 (ALiBi) but mask is NULL", F, (double)max_bias);
    }
    const int64_t ne[4] = {v->ne[0], q->ne[2], q->ne[1], q->ne[3]};
    ct_tensor *t = ct_tensor_new_impl(ctx, F, CT_TYPE_F32, ne);
    if (t == NULL) return NULL;
    t->op = CT_OP_FLASH_ATTN_EXT;
    t->src[0] = q;
    t->src[1] = k;
    t->src[2] = v;
    t->src[3] = mask;
    ct_tensor_set_param_f32(t, 0, scale);
    ct_tensor_set_param_f32(t, 1, max_bias);
    ct_tensor_set_param_f32(t, 2, logit_softcap);
    t->op_params[3] = CT_PREC_DEFAULT;
    t->op_params[4] = 0;
    return t;
}

static ct_tensor *check_node(const char *F, ct_tensor *t) {
    if (t == NULL) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: t is NULL", F);
    if (t->op != CT_OP_FLASH_ATTN_EXT) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s op=%s but must be FLASH_ATTN_EXT", F,
                            ct_tensor_label(t, "t").s, ct_op_name(t->op));
    }
    return t;
}

ct_tensor *ct_flash_attn_ext_add_sinks(ct_tensor *t, ct_tensor *sinks) {
    static const char *const F = "ct_flash_attn_ext_add_sinks";
    if (!check_node(F, t)) return NULL;
    if (sinks == NULL) {
        t->src[4] = NULL;
        return t;
    }
    const ct_label ls = ct_tensor_label(sinks, "sinks");
    if (t->src[4] != NULL) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s has sinks already", F, ct_tensor_label(t, "t").s);
    }
    if (sinks->type != CT_TYPE_F32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: %s type=%s but must be f32", F, ls.s, ct_type_name(sinks->type));
    }
    const ct_tensor *q = t->src[0];
    if (sinks->ne[0] != q->ne[2] || ct_is_empty(sinks)) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT,
                            "%s: %s ne=[%lld, %lld, %lld, %lld] but must have ne0 == q's ne2=%lld (one per head) and "
                            "no empty dim",
                            F, ls.s, (long long)sinks->ne[0], (long long)sinks->ne[1], (long long)sinks->ne[2],
                            (long long)sinks->ne[3], (long long)q->ne[2]);
    }
    t->src[4] = sinks;
    return t;
}

ct_tensor *ct_flash_attn_ext_set_prec(ct_tensor *t, int prec) {
    static const char *const F = "ct_flash_attn_ext_set_prec";
    if (!check_node(F, t)) return NULL;
    if (prec != CT_PREC_DEFAULT && prec != CT_PREC_F32) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "%s: prec=%d but must be %d (CT_PREC_DEFAULT) or %d (CT_PREC_F32)", F,
                            prec, CT_PREC_DEFAULT, CT_PREC_F32);
    }
    t->op_params[3] = prec;
    return t;
}

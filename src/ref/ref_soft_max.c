/* SOFT_MAX on F32 rows with an optional F16/F32 mask and F32 sinks, with the CPU reference's
 * arithmetic: w = x*scale + slope*mask in float, M = max(max w, sink), exp(w - M) in float
 * summed in double (plus exp(sink - M)), then y = exp(w - M) * (float)(1/sum). */
#include "ref/ref_ops.h"

#include <math.h>
#include <string.h>

bool ct_ref_soft_max_supported(const ct_tensor *op) {
    const ct_tensor *a = op->src[0], *mask = op->src[1], *sinks = op->src[2];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_F32 || !ct_are_same_shape(a, op)) return false;
    if (mask) {
        if (mask->type != CT_TYPE_F32 && mask->type != CT_TYPE_F16) return false;
        if (mask->ne[0] != a->ne[0] || mask->ne[1] < a->ne[1] || mask->ne[2] < 1 || mask->ne[3] < 1) return false;
        if (a->ne[2] % mask->ne[2] != 0 || a->ne[3] % mask->ne[3] != 0) return false;
    } else if (ct_op_param_f32(op, 1) > 0.0f) {
        return false;
    }
    if (sinks && (sinks->type != CT_TYPE_F32 || sinks->ne[0] != a->ne[2])) return false;
    return true;
}

/* ALiBi's slope of head h of n_head, as ggml computes it (1 without a bias). */
static float alibi_slope(float max_bias, int64_t n_head, int64_t h) {
    if (!(max_bias > 0.0f)) return 1.0f;
    const uint32_t n_head_log2 = 1u << (uint32_t)floor(log2((double)n_head));
    const float m0 = powf(2.0f, -(max_bias) / (float)n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / (float)n_head_log2);
    return (uint64_t)h < n_head_log2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - (int64_t)n_head_log2) + 1));
}

static ct_status soft_max(ct_tensor *dst, float *w, float *m) {
    const ct_tensor *a = dst->src[0], *mask = dst->src[1], *sinks = dst->src[2];
    const float scale = ct_op_param_f32(dst, 0), max_bias = ct_op_param_f32(dst, 1);
    const int64_t n = a->ne[0];
    ct_status st;
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2]; i2++) {
            const float slope = alibi_slope(max_bias, a->ne[2], i2);
            float sink = 0.0f;
            if (sinks) {
                const char *p = ct_ref_addr(sinks, i2, 0, 0, 0);
                memcpy(&sink, p, sizeof sink);
            }
            for (int64_t i1 = 0; i1 < a->ne[1]; i1++) {
                if ((st = ct_ref_read_row(a, i1, i2, i3, w)) != CT_OK) return st;
                for (int64_t i = 0; i < n; i++) w[i] *= scale;
                if (mask) {
                    if ((st = ct_ref_read_row(mask, i1, i2 % mask->ne[2], i3 % mask->ne[3], m)) != CT_OK) return st;
                    for (int64_t i = 0; i < n; i++) w[i] += slope * m[i];
                }
                float max = -INFINITY;
                for (int64_t i = 0; i < n; i++) max = max > w[i] ? max : w[i];
                if (sinks) max = max > sink ? max : sink;
                double sum = 0.0;
                for (int64_t i = 0; i < n; i++) {
                    w[i] = expf(w[i] - max);
                    sum += (double)w[i];
                }
                if (sinks) sum += (double)expf(sink - max);
                const float inv = (float)(1.0 / sum);
                for (int64_t i = 0; i < n; i++) w[i] *= inv;
                if ((st = ct_ref_write_row(dst, i1, i2, i3, w)) != CT_OK) return st;
            }
        }
    return CT_OK;
}

ct_status ct_ref_soft_max(ct_tensor *dst) {
    const int64_t n = dst->src[0]->ne[0];
    float *w = ct_ref_alloc_floats(n, dst);
    if (!w) return ct_last_status();
    float *m = ct_ref_alloc_floats(n, dst);
    if (!m) {
        ct_free(w);
        return ct_last_status();
    }
    const ct_status st = soft_max(dst, w, m);
    ct_free(w);
    ct_free(m);
    return st;
}

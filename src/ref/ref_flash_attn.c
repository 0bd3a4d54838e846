/* FLASH_ATTN_EXT, plainly: for each query row, Q rounded through ct_flash_attn_q_type as
 * ggml-cpu rounds it, every score s_j = scale * (q . k_j) in float (softcap, slope * mask),
 * M = max(max s_j, sink), then out = sum_j exp(s_j - M) v_j / (sum_j exp(s_j - M) + exp(sink - M))
 * with both sums in double (a two-pass softmax, not the backends' online one). */
#include "ref/ref_ops.h"
#include "tensor/tensor_internal.h"

#include <math.h>
#include <string.h>

bool ct_ref_flash_attn_supported(const ct_tensor *op) { return ct_flash_attn_node_valid(op); }

static float alibi_slope(float max_bias, int64_t n_head, int64_t h) {
    if (!(max_bias > 0.0f)) return 1.0f;
    const uint32_t n_head_log2 = 1u << (uint32_t)floor(log2((double)n_head));
    const float m0 = powf(2.0f, -(max_bias) / (float)n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / (float)n_head_log2);
    return (uint64_t)h < n_head_log2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - (int64_t)n_head_log2) + 1));
}

typedef struct fa_bufs {
    float *q, *kr, *vr, *s;
    double *o;
    void *qq; /* q in its rounding type */
} fa_bufs;

static ct_status flash_attn(ct_tensor *dst, const fa_bufs *b) {
    const ct_tensor *q = dst->src[0], *k = dst->src[1], *v = dst->src[2], *mask = dst->src[3], *sinks = dst->src[4];
    float scale = ct_op_param_f32(dst, 0);
    const float max_bias = ct_op_param_f32(dst, 1), softcap = ct_op_param_f32(dst, 2);
    if (softcap != 0.0f) scale /= softcap;
    const int64_t dk = q->ne[0], dv = v->ne[0], n_kv = k->ne[1], n_head = q->ne[2];
    const ct_type qt = ct_flash_attn_q_type(dst);
    ct_status st;
    for (int64_t i3 = 0; i3 < q->ne[3]; i3++)
        for (int64_t h = 0; h < n_head; h++) {
            const float slope = alibi_slope(max_bias, n_head, h);
            const int64_t hk = h / (n_head / k->ne[2]), hv = h / (n_head / v->ne[2]);
            for (int64_t i1 = 0; i1 < q->ne[1]; i1++) {
                if ((st = ct_ref_read_row(q, i1, h, i3, b->q)) != CT_OK) return st;
                if (qt != CT_TYPE_F32) {
                    if ((st = ct_quantize_row(qt, b->q, b->qq, dk)) != CT_OK) return st;
                    if ((st = ct_dequantize_row(qt, b->qq, b->q, dk)) != CT_OK) return st;
                }
                float m = -INFINITY;
                for (int64_t j = 0; j < n_kv; j++) {
                    float mv = 0.0f;
                    if (mask) {
                        ct_fp16 h16;
                        memcpy(&h16, ct_ref_addr(mask, j, i1, h % mask->ne[2], i3 % mask->ne[3]), sizeof h16);
                        mv = slope * ct_fp16_to_fp32(h16);
                    }
                    if (mv == -INFINITY) {
                        b->s[j] = -INFINITY;
                        continue;
                    }
                    if ((st = ct_ref_read_row(k, j, hk, i3, b->kr)) != CT_OK) return st;
                    float s = 0.0f;
                    for (int64_t i = 0; i < dk; i++) s += b->q[i] * b->kr[i];
                    s *= scale;
                    if (softcap != 0.0f) s = softcap * tanhf(s);
                    s += mv;
                    b->s[j] = s;
                    m = s > m ? s : m;
                }
                float sink = -INFINITY;
                if (sinks) memcpy(&sink, ct_ref_addr(sinks, h, 0, 0, 0), sizeof sink);
                m = sink > m ? sink : m;
                double sum = sinks && m != -INFINITY ? exp((double)sink - (double)m) : 0.0;
                for (int64_t i = 0; i < dv; i++) b->o[i] = 0.0;
                for (int64_t j = 0; j < n_kv; j++) {
                    if (b->s[j] == -INFINITY) continue;
                    const double p = exp((double)b->s[j] - (double)m);
                    sum += p;
                    if ((st = ct_ref_read_row(v, j, hv, i3, b->vr)) != CT_OK) return st;
                    for (int64_t i = 0; i < dv; i++) b->o[i] += p * (double)b->vr[i];
                }
                const double inv = sum == 0.0 ? 0.0 : 1.0 / sum;
                for (int64_t i = 0; i < dv; i++) b->vr[i] = (float)(b->o[i] * inv);
                /* dst row (i0 over dv) at head h, query i1: dst's dims 1 and 2 are (head, query) */
                if ((st = ct_ref_write_row(dst, h, i1, i3, b->vr)) != CT_OK) return st;
            }
        }
    return CT_OK;
}

ct_status ct_ref_flash_attn(ct_tensor *dst) {
    const ct_tensor *q = dst->src[0], *k = dst->src[1], *v = dst->src[2];
    const int64_t dk = q->ne[0], dv = v->ne[0], n_kv = k->ne[1];
    fa_bufs b = {0};
    /* s holds n_kv floats, o dv doubles, qq dk elements of at most 4 bytes */
    b.q = ct_ref_alloc_floats(dk + 1, dst);
    b.kr = b.q ? ct_ref_alloc_floats(dk + 1, dst) : NULL;
    b.vr = b.kr ? ct_ref_alloc_floats(dv + 1, dst) : NULL;
    b.s = b.vr ? ct_ref_alloc_floats(n_kv + 1, dst) : NULL;
    b.o = b.s ? (double *)ct_ref_alloc_floats(2 * dv + 2, dst) : NULL;
    b.qq = b.o ? (void *)ct_ref_alloc_floats(dk + 1, dst) : NULL;
    const ct_status st = b.qq ? flash_attn(dst, &b) : ct_last_status();
    ct_free(b.q);
    ct_free(b.kr);
    ct_free(b.vr);
    ct_free(b.s);
    ct_free(b.o);
    ct_free(b.qq);
    return st;
}

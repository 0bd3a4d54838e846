/* FLASH_ATTN_EXT on the CPU, with ggml-cpu's online softmax: a task is a tile of up to FA_QT
 * query rows of one head (and ne3 index); per key, the K row (F32/F16/BF16 read as it is,
 * the quantized types dequantized once per tile) is dotted with each row's Q, which is first
 * rounded through ct_flash_attn_q_type as ggml-cpu rounds it; a row whose mask is -inf skips
 * the key. The running max M, sum S and the F32 accumulator follow ggml-cpu's update (scaled
 * by exp(Mold - M) when the max grows). Tasks go to the threads in turn; when there are fewer
 * tasks than threads and n_kv is long (the one-token decode), each task's keys are split into
 * chunks whose (M, S, acc) partials are merged after a barrier, as ggml-cpu's split-kv path. */
#include "cpu/cpu_ops.h"
#include "cpu/simd.h"
#include "tensor/tensor_internal.h"
#include "types/types_internal.h"

#include <math.h>
#include <string.h>

#define FA_QT 8

/* A row's accumulator after one more key: acc * ms + v where the max grew (ms = exp(Mold - M)),
 * else acc + vs * v (vs = exp(s - M)); a multiply and an add an element (no FMA: the library
 * builds with -ffp-contract=off), so the AVX2 forms write the same bytes as the plain loop. v is
 * V's row as floats; acc_key_f16_avx2 takes an F16 row as it is (its conversion is exact). */
typedef void (*fa_acc_fn)(float *restrict acc, const void *restrict v, bool grew, float f, int64_t n);

static void acc_key(float *restrict acc, const void *restrict vp, bool grew, float f, int64_t n) {
    const float *v = vp;
    if (grew) {
        for (int64_t i = 0; i < n; i++) acc[i] = acc[i] * f + v[i];
    } else {
        for (int64_t i = 0; i < n; i++) acc[i] += f * v[i];
    }
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2 1
#define AVX2 __attribute__((target("avx2,f16c")))

/* acc_key's two loops, 8 elements a step, V's 8 values from LOAD_V */
#define ACC_KEY_STEPS(LOAD_V)                                                                              \
    if (grew) {                                                                                          \
        for (; i + 8 <= n; i += 8)                                                                       \
            _mm256_storeu_ps(acc + i, _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(acc + i), vf), LOAD_V)); \
    } else {                                                                                             \
        for (; i + 8 <= n; i += 8)                                                                       \
            _mm256_storeu_ps(acc + i, _mm256_add_ps(_mm256_loadu_ps(acc + i), _mm256_mul_ps(vf, LOAD_V))); \
    }

AVX2 static void acc_key_avx2(float *restrict acc, const void *restrict vp, bool grew, float f, int64_t n) {
    const float *v = vp;
    const __m256 vf = _mm256_set1_ps(f);
    int64_t i = 0;
    ACC_KEY_STEPS(_mm256_loadu_ps(v + i))
    acc_key(acc + i, v + i, grew, f, n - i);
}

AVX2 static void acc_key_f16_avx2(float *restrict acc, const void *restrict vp, bool grew, float f, int64_t n) {
    const uint16_t *v = vp;
    const __m256 vf = _mm256_set1_ps(f);
    int64_t i = 0;
    ACC_KEY_STEPS(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(v + i))))
    for (; i < n; i++) {
        const float x = ct_fp16_to_fp32_inline(v[i]);
        acc[i] = grew ? acc[i] * f + x : acc[i] + f * x;
    }
}
#endif

bool ct_cpu_flash_attn_supported(const ct_tensor *op) {
    if (!ct_flash_attn_node_valid(op)) return false;
    const ct_tensor *q = op->src[0], *k = op->src[1], *v = op->src[2], *mask = op->src[3];
    /* rows packed (ggml-cpu asserts the same); dst unpermuted */
    if (q->nb[0] != sizeof(float) || k->nb[0] != ct_type_size(k->type) || v->nb[0] != ct_type_size(v->type))
        return false;
    if (mask && mask->nb[0] != sizeof(uint16_t)) return false;
    return op->nb[0] == sizeof(float);
}

typedef struct fa_plan {
    int64_t n_tiles, n_tasks, n_split, chunk;
    size_t per_thread; /* floats */
} fa_plan;

static fa_plan make_plan(const ct_tensor *dst, int nth) {
    const ct_tensor *q = dst->src[0], *k = dst->src[1], *v = dst->src[2];
    const int64_t dk = q->ne[0], dv = v->ne[0], n_kv = k->ne[1];
    fa_plan p;
    p.n_tiles = (q->ne[1] + FA_QT - 1) / FA_QT;
    p.n_tasks = p.n_tiles * q->ne[2] * q->ne[3];
    p.n_split = 1;
    if (nth > 1 && p.n_tasks < nth && n_kv >= 256) {
        p.n_split = (nth + p.n_tasks - 1) / p.n_tasks;
        if (p.n_split > n_kv / 128) p.n_split = n_kv / 128;
        if (p.n_split < 1) p.n_split = 1;
    }
    p.chunk = (n_kv + p.n_split - 1) / p.n_split;
    /* Qf, qq, Kf: dk each (qf FA_QT rows); Vf dv; acc FA_QT * dv; M, S, mv: FA_QT each */
    p.per_thread = (size_t)(FA_QT * dk + 2 * dk + dv + FA_QT * dv + 3 * FA_QT + 16 + 15) / 16 * 16;
    return p;
}

static size_t partial_floats(const ct_tensor *dst) { return (size_t)FA_QT * (size_t)(2 + dst->src[2]->ne[0]); }

size_t ct_cpu_flash_attn_work_size(const ct_tensor *dst, int n_threads) {
    if (!ct_cpu_flash_attn_supported(dst)) return 0;
    const fa_plan p = make_plan(dst, n_threads < 1 ? 1 : n_threads);
    size_t n = p.per_thread * (size_t)(n_threads < 1 ? 1 : n_threads);
    if (p.n_split > 1) n += (size_t)(p.n_tasks * p.n_split) * partial_floats(dst);
    return n * sizeof(float);
}

static float param_f32(const ct_tensor *t, int i) {
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

typedef struct fa_ctx {
    const ct_tensor *q, *k, *v, *mask, *sinks;
    ct_tensor *dst;
    float scale, softcap, max_bias, m0, m1;
    uint32_t n_head_log2;
    ct_type qt;
    ct_dot_f_fn dot;      /* for K's type (F32/F16/BF16) or F32 (dequantized K) */
    bool k_float;         /* K read as it is */
    ct_dequantize_fn deq_k, deq_v;
    ct_quantize_fn quant_q;
    ct_dequantize_fn deq_q;
    fa_acc_fn acc_key; /* takes V's rows as floats (deq_v's, where V is not F32) */
    bool acc_f16;      /* acc_key takes F16 rows as they are (no deq_v) */
} fa_ctx;

static ct_dot_f_fn dot_for(ct_type t) {
    ct_dot_f_fn f = ct_cpu_dot_f_avx2(t);
    return f ? f : ct_cpu_dot_f_portable(t);
}

typedef struct fa_scratch {
    float *qf, *qq, *kf, *vf, *acc, *M, *S, *mv;
} fa_scratch;

/* Keys [j0, j1) of task t into the scratch's M, S, acc (rows nr). */
static void run_task(const fa_ctx *c, const fa_scratch *w, int64_t t, int64_t j0, int64_t j1, int *nr_out,
                     int64_t *i1_out, int64_t *h_out, int64_t *i3_out) {
    const ct_tensor *q = c->q, *k = c->k, *v = c->v, *mask = c->mask;
    const int64_t dk = q->ne[0], dv = v->ne[0], n_head = q->ne[2];
    const int64_t n_tiles = (q->ne[1] + FA_QT - 1) / FA_QT;
    const int64_t tile = t % n_tiles, h = (t / n_tiles) % n_head, i3 = t / (n_tiles * n_head);
    const int64_t i1 = tile * FA_QT;
    const int nr = (int)(q->ne[1] - i1 < FA_QT ? q->ne[1] - i1 : FA_QT);
    *nr_out = nr, *i1_out = i1, *h_out = h, *i3_out = i3;
    const int64_t hk = h / (n_head / k->ne[2]), hv = h / (n_head / v->ne[2]);
    const float slope = c->max_bias > 0.0f ? ((uint32_t)h < c->n_head_log2
                                                  ? powf(c->m0, (float)(h + 1))
                                                  : powf(c->m1, (float)(2 * (h - (int64_t)c->n_head_log2) + 1)))
                                           : 1.0f;
    for (int r = 0; r < nr; r++) {
        const float *src = (const float *)((const char *)q->data + (size_t)(i1 + r) * q->nb[1] + (size_t)h * q->nb[2] +
                                           (size_t)i3 * q->nb[3]);
        float *qr = w->qf + (size_t)r * dk;
        if (c->qt == CT_TYPE_F32) {
            memcpy(qr, src, (size_t)dk * sizeof(float));
        } else {
            c->quant_q(src, w->qq, dk);
            c->deq_q(w->qq, qr, dk);
        }
        w->M[r] = -INFINITY;
        w->S[r] = 0.0f;
        memset(w->acc + (size_t)r * dv, 0, (size_t)dv * sizeof(float));
    }
    const char *kbase = (const char *)k->data + (size_t)hk * k->nb[2] + (size_t)i3 * k->nb[3];
    const char *vbase = (const char *)v->data + (size_t)hv * v->nb[2] + (size_t)i3 * v->nb[3];
    const char *mbase = mask ? (const char *)mask->data + (size_t)(h % mask->ne[2]) * mask->nb[2] +
                                   (size_t)(i3 % mask->ne[3]) * mask->nb[3]
                             : NULL;
    for (int64_t j = j0; j < j1; j++) {
        bool any = false;
        for (int r = 0; r < nr; r++) {
            float mv = 0.0f;
            if (mbase) {
                uint16_t hm;
                memcpy(&hm, mbase + (size_t)(i1 + r) * mask->nb[1] + (size_t)j * sizeof(uint16_t), sizeof hm);
                mv = slope * ct_fp16_to_fp32_inline(hm);
            }
            w->mv[r] = mv;
            any |= mv != -INFINITY;
        }
        if (!any) continue;
        const char *kr = kbase + (size_t)j * k->nb[1];
        const void *kx = kr;
        if (!c->k_float) {
            c->deq_k(kr, w->kf, dk);
            kx = w->kf;
        }
        float s[FA_QT];
        for (int r0 = 0; r0 < nr; r0 += CT_DOT_NY) {
            const int ny = nr - r0 < CT_DOT_NY ? nr - r0 : CT_DOT_NY;
            const void *ys[CT_DOT_NY];
            for (int y = 0; y < ny; y++) ys[y] = w->qf + (size_t)(r0 + y) * dk;
            c->dot(dk, kx, 0, 1, ys, ny, s + r0);
        }
        const char *vr = vbase + (size_t)j * v->nb[1];
        const void *vf = vr;
        if (c->deq_v && !c->acc_f16) {
            c->deq_v(vr, w->vf, dv);
            vf = w->vf;
        }
        for (int r = 0; r < nr; r++) {
            if (w->mv[r] == -INFINITY) continue;
            float x = s[r] * c->scale;
            if (c->softcap != 0.0f) x = c->softcap * tanhf(x);
            x += w->mv[r];
            const float Mold = w->M[r];
            float ms = 1.0f, vs = 1.0f;
            const bool grew = x > Mold;
            if (grew) {
                w->M[r] = x;
                ms = expf(Mold - x);
            } else {
                vs = expf(x - Mold);
            }
            c->acc_key(w->acc + (size_t)r * dv, vf, grew, grew ? ms : vs, dv);
            w->S[r] = w->S[r] * ms + vs;
        }
    }
}

/* Adds the sink to row r and writes it out. */
static void finish_row(const fa_ctx *c, float M, float S, float *acc, int64_t i1, int64_t h, int64_t i3) {
    const int64_t dv = c->v->ne[0];
    if (c->sinks) {
        float s;
        memcpy(&s, (const char *)c->sinks->data + (size_t)h * c->sinks->nb[0], sizeof s);
        float ms = 1.0f, vs = 1.0f;
        if (s > M) {
            ms = expf(M - s);
            for (int64_t i = 0; i < dv; i++) acc[i] *= ms;
        } else {
            vs = expf(s - M);
        }
        S = S * ms + vs;
    }
    const float inv = S == 0.0f ? 0.0f : 1.0f / S;
    ct_tensor *d = c->dst;
    float *out = (float *)((char *)d->data + (size_t)h * d->nb[1] + (size_t)i1 * d->nb[2] + (size_t)i3 * d->nb[3]);
    for (int64_t i = 0; i < dv; i++) out[i] = acc[i] * inv;
}

void ct_cpu_flash_attn(const ct_cpu_params *params, ct_tensor *dst) {
    if (ct_is_empty(dst)) return;
    fa_ctx c = {.q = dst->src[0], .k = dst->src[1], .v = dst->src[2], .mask = dst->src[3], .sinks = dst->src[4],
                .dst = dst};
    c.scale = param_f32(dst, 0), c.max_bias = param_f32(dst, 1), c.softcap = param_f32(dst, 2);
    if (c.softcap != 0.0f) c.scale /= c.softcap;
    c.n_head_log2 = 1u << (uint32_t)floor(log2((double)c.q->ne[2]));
    c.m0 = powf(2.0f, -(c.max_bias) / (float)c.n_head_log2);
    c.m1 = powf(2.0f, -(c.max_bias / 2.0f) / (float)c.n_head_log2);
    c.qt = ct_flash_attn_q_type(dst);
    c.k_float = ct_type_is_float(c.k->type);
    c.dot = dot_for(c.k_float ? c.k->type : CT_TYPE_F32);
    c.deq_k = c.k_float ? NULL : ct_get_dequantize_fn(c.k->type);
    c.deq_v = c.v->type == CT_TYPE_F32 ? NULL : ct_get_dequantize_fn(c.v->type);
    c.quant_q = c.qt == CT_TYPE_F32 ? NULL : ct_get_quantize_fn(c.qt);
    c.deq_q = c.qt == CT_TYPE_F32 ? NULL : ct_get_dequantize_fn(c.qt);
    c.acc_key = acc_key;
#ifdef HAVE_AVX2
    if (ct_types_use_avx2()) {
        c.acc_f16 = c.v->type == CT_TYPE_F16;
        c.acc_key = c.acc_f16 ? acc_key_f16_avx2 : acc_key_avx2;
    }
#endif
    const int64_t dk = c.q->ne[0], dv = c.v->ne[0], n_kv = c.k->ne[1];
    const fa_plan p = make_plan(dst, params->nth);
    float *base = (float *)params->wdata + (size_t)params->ith * p.per_thread;
    fa_scratch w;
    w.qf = base;
    w.qq = w.qf + FA_QT * dk;
    w.kf = w.qq + dk;
    w.vf = w.kf + dk;
    w.acc = w.vf + dv;
    w.M = w.acc + FA_QT * dv;
    w.S = w.M + FA_QT;
    w.mv = w.S + FA_QT;
    int nr;
    int64_t i1, h, i3;
    if (p.n_split == 1) {
        for (int64_t t = params->ith; t < p.n_tasks; t += params->nth) {
            run_task(&c, &w, t, 0, n_kv, &nr, &i1, &h, &i3);
            for (int r = 0; r < nr; r++) finish_row(&c, w.M[r], w.S[r], w.acc + (size_t)r * dv, i1 + r, h, i3);
        }
        return;
    }
    /* split keys: item (task, chunk) writes its partial rows [M, S, acc] */
    const size_t pf = partial_floats(dst);
    float *partials = (float *)params->wdata + (size_t)params->nth * p.per_thread;
    for (int64_t it = params->ith; it < p.n_tasks * p.n_split; it += params->nth) {
        const int64_t t = it / p.n_split, ch = it % p.n_split;
        const int64_t j0 = ch * p.chunk, j1 = j0 + p.chunk < n_kv ? j0 + p.chunk : n_kv;
        run_task(&c, &w, t, j0 < n_kv ? j0 : n_kv, j1, &nr, &i1, &h, &i3);
        float *part = partials + (size_t)it * pf;
        for (int r = 0; r < nr; r++) {
            float *pr = part + (size_t)r * (2 + dv);
            pr[0] = w.M[r];
            pr[1] = w.S[r];
            memcpy(pr + 2, w.acc + (size_t)r * dv, (size_t)dv * sizeof(float));
        }
    }
    ct_cpu_barrier(params);
    for (int64_t t = params->ith; t < p.n_tasks; t += params->nth) {
        const int64_t n_tiles = p.n_tiles, n_head = c.q->ne[2];
        const int64_t tile = t % n_tiles;
        h = (t / n_tiles) % n_head, i3 = t / (n_tiles * n_head), i1 = tile * FA_QT;
        nr = (int)(c.q->ne[1] - i1 < FA_QT ? c.q->ne[1] - i1 : FA_QT);
        for (int r = 0; r < nr; r++) {
            float M = -INFINITY, S = 0.0f;
            float *acc = w.acc;
            memset(acc, 0, (size_t)dv * sizeof(float));
            for (int64_t ch = 0; ch < p.n_split; ch++) {
                const float *pr = partials + (size_t)(t * p.n_split + ch) * pf + (size_t)r * (2 + dv);
                if (pr[1] == 0.0f) continue;
                const float Mn = fmaxf(M, pr[0]);
                const float so = expf(M - Mn), sn = expf(pr[0] - Mn);
                for (int64_t i = 0; i < dv; i++) acc[i] = acc[i] * so + pr[2 + i] * sn;
                S = S * so + pr[1] * sn;
                M = Mn;
            }
            finish_row(&c, M, S, acc, i1 + r, h, i3);
        }
    }
}

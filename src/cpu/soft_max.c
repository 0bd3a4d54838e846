/* SOFT_MAX on F32 rows with an optional F16/F32 mask and F32 sinks (docs/TENSORS.md), with the
 * CPU reference's arithmetic: w = x*scale + slope*mask in float, M = max(max w, sink),
 * exp(w - M) in float summed in double (plus exp(sink - M)), y = exp(w - M) * (float)(1/sum).
 * Rows are split over the threads. Each pass works element by element in the dst row (w, then
 * the exponentials, then y), so dst may alias src0 (ggml's in-place softmax). Packed rows take
 * AVX2 loops where the CPU has them: the exponential there is a polynomial within 2 ulp of
 * expf (0 below -87.3, where expf is subnormal), sums in double lanes. */
#include "cpu/cpu_ops.h"
#include "cpu/vexp.h"
#include "types/types_internal.h"

#include <math.h>
#include <string.h>

bool ct_cpu_soft_max_supported(const ct_tensor *op) {
    if (!op || op->op != CT_OP_SOFT_MAX) return false;
    const ct_tensor *a = op->src[0], *mask = op->src[1], *sinks = op->src[2];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_F32 || !ct_are_same_shape(a, op)) return false;
    if (op->nb[0] != sizeof(float)) return false; /* the passes run in the dst row */
    if (mask) {
        if (mask->type != CT_TYPE_F32 && mask->type != CT_TYPE_F16) return false;
        if (mask->ne[0] != a->ne[0] || mask->ne[1] < a->ne[1] || mask->ne[2] < 1 || mask->ne[3] < 1) return false;
        if (a->ne[2] % mask->ne[2] != 0 || a->ne[3] % mask->ne[3] != 0) return false;
    } else if (ct_op_param_f32(op, 1) > 0.0f) {
        return false;
    }
    return !sinks || (sinks->type == CT_TYPE_F32 && sinks->ne[0] == a->ne[2]);
}

static float alibi_slope(float max_bias, int64_t n_head, int64_t h) {
    if (!(max_bias > 0.0f)) return 1.0f;
    const uint32_t n_head_log2 = 1u << (uint32_t)floor(log2((double)n_head));
    const float m0 = powf(2.0f, -(max_bias) / (float)n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / (float)n_head_log2);
    return (uint64_t)h < n_head_log2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - (int64_t)n_head_log2) + 1));
}

static inline float ld(const char *p) {
    float v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline float ld_mask(const char *p, bool f16) {
    if (!f16) return ld(p);
    ct_fp16 h;
    memcpy(&h, p, sizeof h);
    return ct_fp16_to_fp32_inline(h);
}

/* y = x*scale (+ slope*m), returns the max of y. */
static float pass_w(const char *x, size_t sx, const char *m, size_t sm, bool f16, float scale, float slope, float *y,
                    int64_t n) {
    float max = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        float w = ld(x + (size_t)i * sx) * scale;
        if (m) w += slope * ld_mask(m + (size_t)i * sm, f16);
        y[i] = w;
        max = max > w ? max : w;
    }
    return max;
}

static double pass_exp(float *y, float max, int64_t n) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        y[i] = expf(y[i] - max);
        sum += (double)y[i];
    }
    return sum;
}

static void pass_scale(float *y, float s, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] *= s;
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2 1
#define AVX2 __attribute__((target("avx2,f16c")))

AVX2 static float hmax8(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

/* pass_w on packed rows (m packed too, or NULL). A NaN anywhere makes the row NaN in the
 * later passes whatever the max, so the max's NaN handling does not matter. */
AVX2 static float pass_w_avx2(const float *x, const void *m, bool f16, float scale, float slope, float *y,
                              int64_t n) {
    const __m256 vs = _mm256_set1_ps(scale), vb = _mm256_set1_ps(slope);
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 w = _mm256_mul_ps(_mm256_loadu_ps(x + i), vs);
        if (m) {
            const __m256 mv = f16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)m + i)))
                                  : _mm256_loadu_ps((const float *)m + i);
            w = _mm256_add_ps(w, _mm256_mul_ps(vb, mv));
        }
        _mm256_storeu_ps(y + i, w);
        vmax = _mm256_max_ps(vmax, w);
    }
    float max = hmax8(vmax);
    for (; i < n; i++) {
        float w = x[i] * scale;
        if (m) w += slope * (f16 ? ct_fp16_to_fp32_inline(((const ct_fp16 *)m)[i]) : ((const float *)m)[i]);
        y[i] = w;
        max = max > w ? max : w;
    }
    return max;
}

AVX2 static double pass_exp_avx2(float *y, float max, int64_t n) {
    const __m256 vm = _mm256_set1_ps(max);
    __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = ct_exp_neg_avx2(_mm256_sub_ps(_mm256_loadu_ps(y + i), vm));
        _mm256_storeu_ps(y + i, e);
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    double acc[8];
    _mm256_storeu_pd(acc, s0);
    _mm256_storeu_pd(acc + 4, s1);
    double sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; i++) {
        y[i] = expf(y[i] - max);
        sum += (double)y[i];
    }
    return sum;
}

AVX2 static void pass_scale_avx2(float *y, float s, int64_t n) {
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), vs));
    for (; i < n; i++) y[i] *= s;
}
#endif

void ct_cpu_soft_max(const ct_cpu_params *params, ct_tensor *dst) {
    if (ct_is_empty(dst)) return;
    const ct_tensor *a = dst->src[0], *mask = dst->src[1], *sinks = dst->src[2];
    const int64_t ne00 = a->ne[0], ne01 = a->ne[1], ne02 = a->ne[2];
    const float scale = ct_op_param_f32(dst, 0), max_bias = ct_op_param_f32(dst, 1);
    const bool f16 = mask && mask->type == CT_TYPE_F16;
    const size_t msz = f16 ? sizeof(ct_fp16) : sizeof(float);
    const int64_t ne12 = mask ? mask->ne[2] : 1, ne13 = mask ? mask->ne[3] : 1;
#ifdef HAVE_AVX2
    const bool avx2 = ct_types_use_avx2();
    const bool packed = a->nb[0] == sizeof(float) && (!mask || mask->nb[0] == msz);
#endif

    int64_t r0, r1;
    ct_cpu_split(ct_nrows(a), params, &r0, &r1);
    ct_cpu_row i = ct_cpu_row_at(r0, ne01, ne02);
    /* the head's ALiBi slope and sink, again when i2 moves */
    float slope = alibi_slope(max_bias, ne02, i.i2);
    float sink = sinks ? ld((const char *)sinks->data + (size_t)i.i2 * sinks->nb[0]) : 0.0f;
    for (int64_t r = r0; r < r1; r++) {
        const char *x = (const char *)a->data + (size_t)i.i1 * a->nb[1] + (size_t)i.i2 * a->nb[2] +
                        (size_t)i.i3 * a->nb[3];
        float *y = (float *)(void *)((char *)dst->data + (size_t)i.i1 * dst->nb[1] + (size_t)i.i2 * dst->nb[2] +
                                     (size_t)i.i3 * dst->nb[3]);
        const char *m = mask ? (const char *)mask->data + (size_t)i.i1 * mask->nb[1] +
                                   (size_t)(i.i2 % ne12) * mask->nb[2] + (size_t)(i.i3 % ne13) * mask->nb[3]
                             : NULL;
        float max;
        double sum;
#ifdef HAVE_AVX2
        if (avx2) {
            const bool aligned = ((uintptr_t)x % sizeof(float)) == 0 && (!m || (uintptr_t)m % msz == 0);
            max = packed && aligned ? pass_w_avx2((const float *)(const void *)x, m, f16, scale, slope, y, ne00)
                         : pass_w(x, a->nb[0], m, mask ? mask->nb[0] : 0, f16, scale, slope, y, ne00);
            if (sinks) max = max > sink ? max : sink;
            sum = pass_exp_avx2(y, max, ne00);
        } else
#endif
        {
            max = pass_w(x, a->nb[0], m, mask ? mask->nb[0] : 0, f16, scale, slope, y, ne00);
            if (sinks) max = max > sink ? max : sink;
            sum = pass_exp(y, max, ne00);
        }
        if (sinks) sum += (double)expf(sink - max);
        const float inv = (float)(1.0 / sum);
#ifdef HAVE_AVX2
        if (avx2) pass_scale_avx2(y, inv, ne00);
        else
#endif
            pass_scale(y, inv, ne00);
        if (ct_cpu_row_next(&i, ne01, ne02) != CT_CPU_ROW_I1) {
            slope = alibi_slope(max_bias, ne02, i.i2);
            if (sinks) sink = ld((const char *)sinks->data + (size_t)i.i2 * sinks->nb[0]);
        }
    }
}

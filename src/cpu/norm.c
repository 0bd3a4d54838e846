/* NORM, RMS_NORM, L2_NORM, GROUP_NORM on F32 rows, with the CPU reference's
 * arithmetic: double sums of floats (of float products), float scale. */
#include "cpu/cpu_ops.h"
#include "cpu/stream.h"
#include "types/types_internal.h"

#include <math.h>
#include <string.h>

bool ct_cpu_norm_supported(const ct_tensor *op) {
    if (!op) return false;
    if (op->op != CT_OP_NORM && op->op != CT_OP_RMS_NORM && op->op != CT_OP_L2_NORM && op->op != CT_OP_GROUP_NORM)
        return false;
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_F32 || !ct_are_same_shape(a, op)) return false;
    return op->op != CT_OP_GROUP_NORM || op->op_params[0] > 0;
}

static float param_f32(const ct_tensor *t, int i) {
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

/* Eight double lanes (in a fixed order, so results do not depend on the thread
 * count) instead of one chain: the sum of floats in double differs from the
 * sequential one only in the last bits of the double. Elements are sx bytes
 * apart; the callers pass a literal 4 for packed rows so that the inlined loop
 * has constant strides. */
#define LANES 8

static inline float ld(const char *p) {
    float v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Sum of float((x - c)^2), or of x when square is false, in double lanes. */
static inline double lane_sum(const char *x, size_t sx, float c, bool square, int64_t n) {
    double acc[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++) {
            const float v = ld(x + (size_t)(i + k) * sx) - c;
            acc[k] += square ? (double)(v * v) : (double)v;
        }
    for (int k = 0; i < n; i++, k++) {
        const float v = ld(x + (size_t)i * sx) - c;
        acc[k] += square ? (double)(v * v) : (double)v;
    }
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* y = (x - c) * scale: the reference's stored float difference, then its float scale
 * (x - 0 is x for every x, -0 and NaN included). */
static inline void shift_scale(const char *x, size_t sx, float c, float scale, char *y, size_t sy, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const float v = (ld(x + (size_t)i * sx) - c) * scale;
        memcpy(y + (size_t)i * sy, &v, sizeof v);
    }
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2 1

/* lane_sum on packed rows with the eight double lanes in two registers: lane k still
 * adds elements k, k+8, ... in order, so the result is lane_sum's to the bit. */
__attribute__((target("avx2"))) static double lane_sum_avx2(const float *x, float c, bool square, int64_t n,
                                                         const char *next) {
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    const __m256 vc = _mm256_set1_ps(c);
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        if (next && i % 16 == 0) __builtin_prefetch(next + i * 4);
        __m256 v = _mm256_sub_ps(_mm256_loadu_ps(x + i), vc);
        if (square) v = _mm256_mul_ps(v, v);
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    }
    double acc[LANES];
    _mm256_storeu_pd(acc, a0);
    _mm256_storeu_pd(acc + 4, a1);
    for (int k = 0; i < n; i++, k++) {
        const float v = x[i] - c;
        acc[k] += square ? (double)(v * v) : (double)v;
    }
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* stream: non-temporal stores from the first 32-byte boundary of y on, for outputs
 * larger than the caches: a normal store first reads the line it writes, a third
 * stream of memory traffic beside the row read and the row written. */
__attribute__((target("avx2"))) static void shift_scale_avx2(const float *x, float c, float scale, float *y,
                                                             int64_t n, bool stream) {
    const __m256 vc = _mm256_set1_ps(c), vs = _mm256_set1_ps(scale);
    int64_t i = 0;
    if (stream) {
        for (; i < n && (uintptr_t)(y + i) % 32 != 0; i++) y[i] = (x[i] - c) * scale;
        for (; i + 8 <= n; i += 8)
            _mm256_stream_ps(y + i, _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vc), vs));
        ct_cpu_stream_fence();
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vc), vs));
    for (; i < n; i++) y[i] = (x[i] - c) * scale;
}
#endif

/* Packed rows of aligned floats take the AVX2 loops where the CPU has them (same bits). */
static bool packed_f32(const char *x, size_t sx) { return sx == sizeof(float) && (uintptr_t)x % _Alignof(float) == 0; }

/* next: a packed row of n floats to prefetch meanwhile (NORM's second pass runs from cache
 * and would otherwise leave the memory idle), or NULL. */
static double row_sum(const char *x, size_t sx, float c, bool square, int64_t n, const char *next) {
#ifdef HAVE_AVX2
    if (packed_f32(x, sx) && ct_types_use_avx2())
        return lane_sum_avx2((const float *)(const void *)x, c, square, n, next);
#else
    (void)next;
#endif
    return sx == sizeof(float) ? lane_sum(x, sizeof(float), c, square, n) : lane_sum(x, sx, c, square, n);
}

static void row_shift_scale(const char *x, size_t sx, float c, float scale, char *y, size_t sy, int64_t n,
                            bool stream) {
#ifdef HAVE_AVX2
    if (packed_f32(x, sx) && packed_f32(y, sy) && ct_types_use_avx2()) {
        shift_scale_avx2((const float *)(const void *)x, c, scale, (float *)(void *)y, n, stream);
        return;
    }
#else
    (void)stream;
#endif
    if (sx == sizeof(float) && sy == sizeof(float)) shift_scale(x, sizeof(float), c, scale, y, sizeof(float), n);
    else shift_scale(x, sx, c, scale, y, sy, n);
}

static void group_norm(const ct_cpu_params *params, ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    const int64_t ne00 = a->ne[0], ne01 = a->ne[1], ne02 = a->ne[2], ne03 = a->ne[3];
    const size_t nb00 = a->nb[0], nb0 = dst->nb[0];
    const int64_t n_groups = dst->op_params[0];
    const float eps = param_f32(dst, 1);
    const int64_t per_group = (ne02 + n_groups - 1) / n_groups;
    const bool stream = ct_nbytes(dst) >= CT_CPU_STREAM_MIN_BYTES;
    /* Work items are (i03, group) pairs, so batches spread over threads too. */
    int64_t w0, w1;
    ct_cpu_split(ne03 * n_groups, params, &w0, &w1);
    for (int64_t w = w0; w < w1; w++) {
        const int64_t i03 = w / n_groups, g = w % n_groups;
        const int64_t c0 = g * per_group;
        const int64_t c1 = c0 + per_group < ne02 ? c0 + per_group : ne02;
        if (c0 >= c1) continue; /* empty groups past the last channel */
        const double count = (double)(ne00 * ne01 * (c1 - c0));
        const char *x3 = (const char *)a->data + (size_t)i03 * a->nb[3];
        char *y3 = (char *)dst->data + (size_t)i03 * dst->nb[3];

        double sum = 0.0;
        for (int64_t i02 = c0; i02 < c1; i02++)
            for (int64_t i01 = 0; i01 < ne01; i01++)
                sum += row_sum(x3 + (size_t)i01 * a->nb[1] + (size_t)i02 * a->nb[2], nb00, 0.0f, false, ne00, NULL);
        const float mean = (float)(sum / count);

        double sum2 = 0.0;
        for (int64_t i02 = c0; i02 < c1; i02++)
            for (int64_t i01 = 0; i01 < ne01; i01++)
                sum2 += row_sum(x3 + (size_t)i01 * a->nb[1] + (size_t)i02 * a->nb[2], nb00, mean, true, ne00, NULL);
        const float variance = (float)(sum2 / count);
        const float scale = 1.0f / sqrtf(variance + eps);

        for (int64_t i02 = c0; i02 < c1; i02++)
            for (int64_t i01 = 0; i01 < ne01; i01++)
                row_shift_scale(x3 + (size_t)i01 * a->nb[1] + (size_t)i02 * a->nb[2], nb00, mean, scale,
                                y3 + (size_t)i01 * dst->nb[1] + (size_t)i02 * dst->nb[2], nb0, ne00, stream);
    }
}

void ct_cpu_norm(const ct_cpu_params *params, ct_tensor *dst) {
    if (ct_is_empty(dst)) return;
    if (dst->op == CT_OP_GROUP_NORM) {
        group_norm(params, dst);
        return;
    }
    const ct_tensor *a = dst->src[0];
    const int64_t ne00 = a->ne[0], ne01 = a->ne[1], ne02 = a->ne[2];
    const size_t nb00 = a->nb[0], nb01 = a->nb[1], nb02 = a->nb[2], nb03 = a->nb[3];
    const size_t nb0 = dst->nb[0], nb1 = dst->nb[1], nb2 = dst->nb[2], nb3 = dst->nb[3];
    const float eps = param_f32(dst, 0);
    const ct_op op = dst->op;

    int64_t r0, r1;
    ct_cpu_split(ct_nrows(a), params, &r0, &r1);
    ct_cpu_row i = ct_cpu_row_at(r0, ne01, ne02);
    const bool stream = ct_nbytes(dst) >= CT_CPU_STREAM_MIN_BYTES;
    for (int64_t r = r0; r < r1; r++, ct_cpu_row_next(&i, ne01, ne02)) {
        const char *x = (const char *)a->data + (size_t)i.i1 * nb01 + (size_t)i.i2 * nb02 + (size_t)i.i3 * nb03;
        char *y = (char *)dst->data + (size_t)i.i1 * nb1 + (size_t)i.i2 * nb2 + (size_t)i.i3 * nb3;
        if (op == CT_OP_NORM) {
            /* the next row of this thread, when rows are packed one after another */
            const char *next = r + 1 < r1 && i.i1 + 1 < ne01 && nb00 == sizeof(float) ? x + nb01 : NULL;
            const float mean = (float)(row_sum(x, nb00, 0.0f, false, ne00, NULL) / (double)ne00);
            const float variance = (float)(row_sum(x, nb00, mean, true, ne00, next) / (double)ne00);
            row_shift_scale(x, nb00, mean, 1.0f / sqrtf(variance + eps), y, nb0, ne00, stream);
        } else if (op == CT_OP_RMS_NORM) {
            const float mean = (float)(row_sum(x, nb00, 0.0f, true, ne00, NULL) / (double)ne00);
            row_shift_scale(x, nb00, 0.0f, 1.0f / sqrtf(mean + eps), y, nb0, ne00, stream);
        } else {
            const float s = (float)row_sum(x, nb00, 0.0f, true, ne00, NULL);
            row_shift_scale(x, nb00, 0.0f, 1.0f / fmaxf(sqrtf(s), eps), y, nb0, ne00, stream);
        }
    }
}

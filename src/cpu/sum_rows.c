/* SUM_ROWS and MEAN of F32 rows: a double sum rounded to float (MEAN then divides in float). */
#include "cpu/cpu_ops.h"
#include "types/types_internal.h"

#include <string.h>

bool ct_cpu_sum_rows_supported(const ct_tensor *op) {
    if (!op || (op->op != CT_OP_SUM_ROWS && op->op != CT_OP_MEAN)) return false;
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_F32) return false;
    return op->ne[0] == 1 && op->ne[1] == a->ne[1] && op->ne[2] == a->ne[2] && op->ne[3] == a->ne[3];
}

/* Eight double lanes in a fixed order, as in norm.c: equal to the sequential
 * double sum up to the last bits of the double. */
#define LANES 8

static double sum_packed(const float *restrict x, int64_t n) {
    double acc[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++) acc[k] += (double)x[i + k];
    for (int k = 0; i < n; i++, k++) acc[k] += (double)x[i];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2 1

/* sum_packed with the eight double lanes in two registers, each lane in its own order: same bits. */
__attribute__((target("avx2"))) static double sum_packed_avx2(const float *x, int64_t n) {
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        const __m256 v = _mm256_loadu_ps(x + i);
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    }
    double acc[LANES];
    _mm256_storeu_pd(acc, a0);
    _mm256_storeu_pd(acc + 4, a1);
    for (int k = 0; i < n; i++, k++) acc[k] += (double)x[i];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}
#endif

static double sum_strided(const char *x, size_t nb00, int64_t n) {
    double acc[LANES] = {0};
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++) {
            float v;
            memcpy(&v, x + (size_t)(i + k) * nb00, sizeof v);
            acc[k] += (double)v;
        }
    for (int k = 0; i < n; i++, k++) {
        float v;
        memcpy(&v, x + (size_t)i * nb00, sizeof v);
        acc[k] += (double)v;
    }
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

void ct_cpu_sum_rows(const ct_cpu_params *params, ct_tensor *dst) {
    if (ct_is_empty(dst)) return;
    const ct_tensor *a = dst->src[0];
    const int64_t ne00 = a->ne[0], ne01 = a->ne[1], ne02 = a->ne[2];
    const size_t nb00 = a->nb[0], nb01 = a->nb[1], nb02 = a->nb[2], nb03 = a->nb[3];
    const size_t nb1 = dst->nb[1], nb2 = dst->nb[2], nb3 = dst->nb[3];
    const bool mean = dst->op == CT_OP_MEAN;
    const bool packed = nb00 == sizeof(float) && ((uintptr_t)a->data | nb01 | nb02 | nb03) % _Alignof(float) == 0;
#ifdef HAVE_AVX2
    double (*const sum)(const float *, int64_t) = ct_types_use_avx2() ? sum_packed_avx2 : sum_packed;
#else
    double (*const sum)(const float *, int64_t) = sum_packed;
#endif

    int64_t r0, r1;
    ct_cpu_split(ct_nrows(a), params, &r0, &r1);
    ct_cpu_row i = ct_cpu_row_at(r0, ne01, ne02);
    for (int64_t r = r0; r < r1; r++, ct_cpu_row_next(&i, ne01, ne02)) {
        const char *x = (const char *)a->data + (size_t)i.i1 * nb01 + (size_t)i.i2 * nb02 + (size_t)i.i3 * nb03;
        float s = (float)(packed ? sum((const float *)(const void *)x, ne00) : sum_strided(x, nb00, ne00));
        if (mean) s /= (float)ne00;
        memcpy((char *)dst->data + (size_t)i.i1 * nb1 + (size_t)i.i2 * nb2 + (size_t)i.i3 * nb3, &s, sizeof s);
    }
}

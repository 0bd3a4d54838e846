/* AVX2+F16C row conversions and dequantizers, compiled through function attributes
 * and chosen at run time (ct_types_use_avx2); the block quantizers are in
 * quantize_avx2.c. Each gives the bytes of its portable twin in fp16.c, quantize.c,
 * dequantize*.c: the same float
 * operations with the same operands in the same order, each one rounded (SIMD
 * IEEE arithmetic rounds exactly as scalar does); only independent elements run
 * side by side. tests/test_quantize.c and test_fp16.c compare the two paths. */
#include "core/cpu_features.h"
#include "types/types_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma,f16c")))

/* ---- fp16 / bf16 ---------------------------------------------------------- */

/* F16C rounds to nearest even as fp16.c does; a NaN lane is first replaced by the
 * quiet NaN with no payload, which F16C turns into sign|0x7E00. */
AVX2 static inline __m128i f32x8_to_f16(__m256 x) {
    const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
    const __m256 sign = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN)));
    const __m256 canon = _mm256_or_ps(sign, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000)));
    return _mm256_cvtps_ph(_mm256_blendv_ps(x, canon, nan), _MM_FROUND_TO_NEAREST_INT);
}

AVX2 static void f32_to_f16_row(const float *restrict x, void *restrict y, int64_t n) {
    uint8_t *out = y;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i a = f32x8_to_f16(_mm256_loadu_ps(x + i));
        const __m128i b = f32x8_to_f16(_mm256_loadu_ps(x + i + 8));
        _mm256_storeu_si256((__m256i *)(void *)(out + 2 * i), _mm256_set_m128i(b, a));
    }
    for (; i < n; i++) {
        const ct_fp16 h = ct_fp32_to_fp16_inline(x[i]);
        memcpy(out + 2 * i, &h, sizeof h);
    }
}

/* F16C decodes exactly, NaN as sign|0x7FC00000|payload<<13 like fp16.c. */
AVX2 static void f16_to_f32_row(const void *restrict x, float *restrict y, int64_t n) {
    const uint8_t *in = x;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(in + 2 * i));
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm256_castsi256_si128(h)));
        _mm256_storeu_ps(y + i + 8, _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1)));
    }
    for (; i < n; i++) {
        ct_fp16 h;
        memcpy(&h, in + 2 * i, sizeof h);
        y[i] = ct_fp16_to_fp32_inline(h);
    }
}

/* 8 int32 lanes, each <= 0xFFFF, as 8 uint16 */
AVX2 static inline __m128i pack_u16(__m256i v) {
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(v, v), 0x08));
}

AVX2 static inline __m128i f32x8_to_bf16(__m256i u) {
    const __m256i abs = _mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF));
    const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7F800000));
    const __m256i hi = _mm256_srli_epi32(u, 16);
    const __m256i odd = _mm256_and_si256(hi, _mm256_set1_epi32(1));
    const __m256i rne = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), odd), 16);
    const __m256i quiet = _mm256_or_si256(hi, _mm256_set1_epi32(0x40));
    return pack_u16(_mm256_blendv_epi8(rne, quiet, nan));
}

AVX2 static void f32_to_bf16_row(const float *restrict x, void *restrict y, int64_t n) {
    uint8_t *out = y;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i a = f32x8_to_bf16(_mm256_loadu_si256((const __m256i *)(const void *)(x + i)));
        const __m128i b = f32x8_to_bf16(_mm256_loadu_si256((const __m256i *)(const void *)(x + i + 8)));
        _mm256_storeu_si256((__m256i *)(void *)(out + 2 * i), _mm256_set_m128i(b, a));
    }
    for (; i < n; i++) {
        const ct_bf16 h = ct_fp32_to_bf16_inline(x[i]);
        memcpy(out + 2 * i, &h, sizeof h);
    }
}

AVX2 static void bf16_to_f32_row(const void *restrict x, float *restrict y, int64_t n) {
    const uint8_t *in = x;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(in + 2 * i));
        const __m256i lo = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(h)), 16);
        const __m256i hi = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(h, 1)), 16);
        _mm256_storeu_si256((__m256i *)(void *)(y + i), lo);
        _mm256_storeu_si256((__m256i *)(void *)(y + i + 8), hi);
    }
    for (; i < n; i++) {
        ct_bf16 h;
        memcpy(&h, in + 2 * i, sizeof h);
        y[i] = ct_bf16_to_fp32_inline(h);
    }
}

/* ---- dequantizers ---------------------------------------------------------- */

/* 8 signed bytes as floats */
AVX2 static inline __m256 i8x8_ps(__m128i b) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)); }

AVX2 static void dequantize_q8_0(const void *restrict src, float *restrict y, int64_t n) {
    const block_q8_0 *x = src;
    for (int64_t i = 0; i < n / CT_QK8_0; i++, y += CT_QK8_0) {
        const __m256 d = _mm256_set1_ps(ct_fp16_to_fp32_inline(x[i].d));
        const __m256i q = _mm256_loadu_si256((const __m256i *)(const void *)x[i].qs);
        const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
        _mm256_storeu_ps(y, _mm256_mul_ps(i8x8_ps(lo), d));
        _mm256_storeu_ps(y + 8, _mm256_mul_ps(i8x8_ps(_mm_srli_si128(lo, 8)), d));
        _mm256_storeu_ps(y + 16, _mm256_mul_ps(i8x8_ps(hi), d));
        _mm256_storeu_ps(y + 24, _mm256_mul_ps(i8x8_ps(_mm_srli_si128(hi, 8)), d));
    }
}

AVX2 static void dequantize_q4_0(const void *restrict src, float *restrict y, int64_t n) {
    const block_q4_0 *x = src;
    const __m128i f = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
    for (int64_t i = 0; i < n / CT_QK4_0; i++, y += CT_QK4_0) {
        const __m256 d = _mm256_set1_ps(ct_fp16_to_fp32_inline(x[i].d));
        const __m128i q = _mm_loadu_si128((const __m128i *)(const void *)x[i].qs);
        const __m128i lo = _mm_sub_epi8(_mm_and_si128(q, f), eight);
        const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(q, 4), f), eight);
        _mm256_storeu_ps(y, _mm256_mul_ps(i8x8_ps(lo), d));
        _mm256_storeu_ps(y + 8, _mm256_mul_ps(i8x8_ps(_mm_srli_si128(lo, 8)), d));
        _mm256_storeu_ps(y + 16, _mm256_mul_ps(i8x8_ps(hi), d));
        _mm256_storeu_ps(y + 24, _mm256_mul_ps(i8x8_ps(_mm_srli_si128(hi, 8)), d));
    }
}

static inline void scale_min_k4(int j, const uint8_t *restrict q, uint8_t *restrict d, uint8_t *restrict m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t)((q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

/* 32 unsigned bytes (values < 128) times dl minus ml, into y[0..31] */
AVX2 static inline void dl_q_minus_ml(__m256i q, __m256 dl, __m256 ml, float *y) {
    const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
    _mm256_storeu_ps(y, _mm256_sub_ps(_mm256_mul_ps(dl, i8x8_ps(lo)), ml));
    _mm256_storeu_ps(y + 8, _mm256_sub_ps(_mm256_mul_ps(dl, i8x8_ps(_mm_srli_si128(lo, 8))), ml));
    _mm256_storeu_ps(y + 16, _mm256_sub_ps(_mm256_mul_ps(dl, i8x8_ps(hi)), ml));
    _mm256_storeu_ps(y + 24, _mm256_sub_ps(_mm256_mul_ps(dl, i8x8_ps(_mm_srli_si128(hi, 8))), ml));
}

AVX2 static void dequantize_q4_K(const void *restrict src, float *restrict y, int64_t n) {
    const block_q4_K *x = src;
    const __m256i f = _mm256_set1_epi8(0x0F);
    for (int64_t i = 0; i < n / CT_QK_K; i++) {
        const uint8_t *q = x[i].qs;
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        const float min = ct_fp16_to_fp32_inline(x[i].dmin);
        for (int is = 0; is < 8; is += 2, q += 32, y += 64) {
            uint8_t sc, m;
            scale_min_k4(is, x[i].scales, &sc, &m);
            const float d1 = d * (float)sc, m1 = min * (float)m;
            scale_min_k4(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * (float)sc, m2 = min * (float)m;
            const __m256i qv = _mm256_loadu_si256((const __m256i *)(const void *)q);
            dl_q_minus_ml(_mm256_and_si256(qv, f), _mm256_set1_ps(d1), _mm256_set1_ps(m1), y);
            dl_q_minus_ml(_mm256_and_si256(_mm256_srli_epi16(qv, 4), f), _mm256_set1_ps(d2), _mm256_set1_ps(m2),
                          y + 32);
        }
    }
}

/* 16 signed bytes times (d * sc), as dequantize_k.c's d * (float)sc * (float)q */
AVX2 static inline void dsc_q16(__m128i q, float dsc, float *y) {
    const __m256 s = _mm256_set1_ps(dsc);
    _mm256_storeu_ps(y, _mm256_mul_ps(s, i8x8_ps(q)));
    _mm256_storeu_ps(y + 8, _mm256_mul_ps(s, i8x8_ps(_mm_srli_si128(q, 8))));
}

AVX2 static void dequantize_q6_K(const void *restrict src, float *restrict y, int64_t n) {
    const block_q6_K *x = src;
    const __m256i f = _mm256_set1_epi8(0x0F), three = _mm256_set1_epi8(3), off = _mm256_set1_epi8(32);
    for (int64_t i = 0; i < n / CT_QK_K; i++) {
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        const uint8_t *ql = x[i].ql;
        const uint8_t *qh = x[i].qh;
        const int8_t *sc = x[i].scales;
        for (int half = 0; half < 2; half++, y += 128, ql += 64, qh += 32, sc += 8) {
            const __m256i la = _mm256_loadu_si256((const __m256i *)(const void *)ql);
            const __m256i lb = _mm256_loadu_si256((const __m256i *)(const void *)(ql + 32));
            const __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)qh);
            const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(h, three), 4);
            const __m256i h1 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2), three), 4);
            const __m256i h2 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 4), three), 4);
            const __m256i h3 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 6), three), 4);
            __m256i q[4];
            q[0] = _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(la, f), h0), off);
            q[1] = _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(lb, f), h1), off);
            q[2] = _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(la, 4), f), h2), off);
            q[3] = _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lb, 4), f), h3), off);
            for (int k = 0; k < 4; k++) {
                /* y[32k + l] uses sc[2k + l/16] */
                dsc_q16(_mm256_castsi256_si128(q[k]), d * (float)sc[2 * k], y + 32 * k);
                dsc_q16(_mm256_extracti128_si256(q[k], 1), d * (float)sc[2 * k + 1], y + 32 * k + 16);
            }
        }
    }
}

ct_quantize_fn ct_quantize_fn_avx2(ct_type type) {
    switch (type) {
    case CT_TYPE_F16: return f32_to_f16_row;
    case CT_TYPE_BF16: return f32_to_bf16_row;
    default: return ct_quantize_block_fn_avx2(type);
    }
}

ct_dequantize_fn ct_dequantize_fn_avx2(ct_type type) {
    switch (type) {
    case CT_TYPE_F16: return f16_to_f32_row;
    case CT_TYPE_BF16: return bf16_to_f32_row;
    case CT_TYPE_Q8_0: return dequantize_q8_0;
    case CT_TYPE_Q4_0: return dequantize_q4_0;
    case CT_TYPE_Q4_K: return dequantize_q4_K;
    case CT_TYPE_Q6_K: return dequantize_q6_K;
    default: return NULL;
    }
}

#else

ct_quantize_fn ct_quantize_fn_avx2(ct_type type) {
    (void)type;
    return NULL;
}

ct_dequantize_fn ct_dequantize_fn_avx2(ct_type type) {
    (void)type;
    return NULL;
}

#endif

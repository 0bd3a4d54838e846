/* AVX2+F16C row conversions, quantizers and dequantizers, compiled through
 * function attributes and chosen at run time (ct_types_use_avx2). Each gives the
 * bytes of its portable twin in fp16.c, quantize.c, dequantize*.c: the same float
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

/* ---- helpers of the block quantizers -------------------------------------- */

AVX2 static inline float hmax_ps(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

AVX2 static inline float hmin_ps(__m256 v) {
    __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_min_ps(m, _mm_movehl_ps(m, m));
    m = _mm_min_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

AVX2 static inline uint32_t mask32(__m256 m0, __m256 m1, __m256 m2, __m256 m3) {
    return (uint32_t)_mm256_movemask_ps(m0) | (uint32_t)_mm256_movemask_ps(m1) << 8 |
           (uint32_t)_mm256_movemask_ps(m2) << 16 | (uint32_t)_mm256_movemask_ps(m3) << 24;
}

/* The low bytes of 32 int32 lanes, in order. */
AVX2 static inline __m256i low_bytes_32(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i ff = _mm256_set1_epi32(0xFF);
    const __m256i ab = _mm256_packus_epi32(_mm256_and_si256(a, ff), _mm256_and_si256(b, ff));
    const __m256i cd = _mm256_packus_epi32(_mm256_and_si256(c, ff), _mm256_and_si256(d, ff));
    const __m256i bytes = _mm256_packus_epi16(ab, cd); /* a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7 */
    return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* The low bytes of 16 int32 lanes, in order. */
AVX2 static inline __m128i low_bytes_16(__m256i a, __m256i b) {
    const __m256i ff = _mm256_set1_epi32(0xFF);
    const __m256i ab = _mm256_packus_epi32(_mm256_and_si256(a, ff), _mm256_and_si256(b, ff));
    const __m256i p = _mm256_permute4x64_epi64(ab, 0xD8); /* a0-7 | b0-7 as uint16 */
    const __m256i bytes = _mm256_packus_epi16(p, p);
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(bytes, 0x08));
}

/* quantize.c's round_low_byte as int32 (only the low byte is kept): roundf, ties away,
 * by trunc and the exact fraction; NaN and values outside int32 give 0. */
AVX2 static inline __m256i round_i32(__m256 v) {
    const __m256 ok = _mm256_and_ps(_mm256_cmp_ps(v, _mm256_set1_ps(-2147483648.0f), _CMP_GE_OQ),
                                    _mm256_cmp_ps(v, _mm256_set1_ps(2147483648.0f), _CMP_LT_OQ));
    const __m256 vs = _mm256_and_ps(v, ok);
    const __m256i i = _mm256_cvttps_epi32(vs);
    const __m256 frac = _mm256_sub_ps(vs, _mm256_cvtepi32_ps(i));
    const __m256i up = _mm256_castps_si256(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ));
    const __m256i dn = _mm256_castps_si256(_mm256_cmp_ps(frac, _mm256_set1_ps(-0.5f), _CMP_LE_OQ));
    return _mm256_and_si256(_mm256_sub_epi32(_mm256_add_epi32(i, dn), up), _mm256_castps_si256(ok));
}

/* trunc_low_byte: cvttps gives INT32_MIN for NaN and out-of-range values, as quantize.c pins. */
AVX2 static inline __m256i trunc_i32(__m256 v) { return _mm256_cvttps_epi32(v); }

/* trunc_int8_min: the low byte read as int8, then MIN(hi, .) */
AVX2 static inline __m256i trunc_int8_min(__m256 v, int hi) {
    const __m256i b = _mm256_srai_epi32(_mm256_slli_epi32(_mm256_cvttps_epi32(v), 24), 24);
    return _mm256_min_epi32(b, _mm256_set1_epi32(hi));
}

/* Bit 4 of each of 32 lanes, element j at bit j. */
AVX2 static inline uint32_t bit4_32(__m256i a, __m256i b, __m256i c, __m256i d) {
    return mask32(_mm256_castsi256_ps(_mm256_slli_epi32(a, 27)), _mm256_castsi256_ps(_mm256_slli_epi32(b, 27)),
                  _mm256_castsi256_ps(_mm256_slli_epi32(c, 27)), _mm256_castsi256_ps(_mm256_slli_epi32(d, 27)));
}

/* Element j (0..15) in the low nibble of byte j, element j+16 in the high one; q0..q3 hold elements 0-7,
 * 8-15, 16-23, 24-31. Nibbles keep whatever bits their int32 has above bit 3 when `mask` is false, as
 * ggml's (xi0 | xi1 << 4) does for Q4_0 and Q4_1. */
AVX2 static inline __m128i nibbles(__m256i q0, __m256i q1, __m256i q2, __m256i q3, bool mask) {
    if (mask) {
        const __m256i f = _mm256_set1_epi32(0x0F);
        q0 = _mm256_and_si256(q0, f);
        q1 = _mm256_and_si256(q1, f);
        q2 = _mm256_and_si256(q2, f);
        q3 = _mm256_and_si256(q3, f);
    }
    return low_bytes_16(_mm256_or_si256(q0, _mm256_slli_epi32(q2, 4)), _mm256_or_si256(q1, _mm256_slli_epi32(q3, 4)));
}

static inline void store_u32(uint8_t *p, uint32_t v) {
    for (int k = 0; k < 4; k++) p[k] = (uint8_t)(v >> (8 * k));
}

/* |x| of a block and whether all 32 are finite (the fast paths below need no NaN and no inf). */
AVX2 static inline bool abs_finite(const __m256 v[4], __m256 a[4]) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)), inf = _mm256_set1_ps(INFINITY);
    __m256 fin = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    for (int k = 0; k < 4; k++) {
        a[k] = _mm256_and_ps(v[k], abs_mask);
        fin = _mm256_and_ps(fin, _mm256_cmp_ps(a[k], inf, _CMP_LT_OQ));
    }
    return _mm256_movemask_ps(fin) == 0xFF;
}

/* Zeroes the NaN lanes of |x|, so that tree maxima skip them as the strict scalar compares do. */
AVX2 static inline void abs_drop_nan(const __m256 v[4], __m256 a[4]) {
    for (int k = 0; k < 4; k++) a[k] = _mm256_and_ps(a[k], _mm256_cmp_ps(v[k], v[k], _CMP_ORD_Q));
}

/* quantize.c's signed_absmax from |x| without NaN: the first x of largest |x|, +0.0 when all are 0. */
AVX2 static inline float signed_absmax(const float *x, const __m256 a[4]) {
    const float amax = hmax_ps(_mm256_max_ps(_mm256_max_ps(a[0], a[1]), _mm256_max_ps(a[2], a[3])));
    if (!(amax > 0.0f)) return 0.0f;
    const __m256 m = _mm256_set1_ps(amax);
    const uint32_t eq = mask32(_mm256_cmp_ps(a[0], m, _CMP_EQ_OQ), _mm256_cmp_ps(a[1], m, _CMP_EQ_OQ),
                               _mm256_cmp_ps(a[2], m, _CMP_EQ_OQ), _mm256_cmp_ps(a[3], m, _CMP_EQ_OQ));
    return x[__builtin_ctz(eq)];
}

/* quantize.c's block_min_max: values by trees (NaN lanes made neutral unless `finite`), clamped to
 * the scan's starting values; a zero result takes the sign of the first zero, which is what the
 * strict sequential scan keeps. */
AVX2 static inline void block_min_max(const float *x, const __m256 v[4], bool finite, float *min_out,
                                      float *max_out) {
    __m256 mn[4], mx[4];
    for (int k = 0; k < 4; k++) {
        if (finite) {
            mn[k] = mx[k] = v[k];
        } else {
            const __m256 ord = _mm256_cmp_ps(v[k], v[k], _CMP_ORD_Q);
            mn[k] = _mm256_blendv_ps(_mm256_set1_ps(FLT_MAX), v[k], ord);
            mx[k] = _mm256_blendv_ps(_mm256_set1_ps(-FLT_MAX), v[k], ord);
        }
    }
    float min = hmin_ps(_mm256_min_ps(_mm256_min_ps(mn[0], mn[1]), _mm256_min_ps(mn[2], mn[3])));
    float max = hmax_ps(_mm256_max_ps(_mm256_max_ps(mx[0], mx[1]), _mm256_max_ps(mx[2], mx[3])));
    /* the scan starts from +-FLT_MAX, which an infinity never replaces */
    if (min > FLT_MAX) min = FLT_MAX;
    if (max < -FLT_MAX) max = -FLT_MAX;
    if (min == 0.0f || max == 0.0f) {
        int j = 0;
        while (x[j] != 0.0f) j++;
        if (min == 0.0f) min = x[j];
        if (max == 0.0f) max = x[j];
    }
    *min_out = min;
    *max_out = max;
}

AVX2 static inline void load_block(const float *x, __m256 v[4]) {
    for (int k = 0; k < 4; k++) v[k] = _mm256_loadu_ps(x + 8 * k);
}

/* round_i32 where every lane is known to be a number within int32 range. */
AVX2 static inline __m256i round_i32_fast(__m256 v) {
    const __m256i i = _mm256_cvttps_epi32(v);
    const __m256 frac = _mm256_sub_ps(v, _mm256_cvtepi32_ps(i));
    const __m256i up = _mm256_castps_si256(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ));
    const __m256i dn = _mm256_castps_si256(_mm256_cmp_ps(frac, _mm256_set1_ps(-0.5f), _CMP_LE_OQ));
    return _mm256_sub_epi32(_mm256_add_epi32(i, dn), up);
}

/* The fast paths: a block of finite values and a finite id keep every |x*id| near or below
 * the format's largest level (x*id + 8.5 stays within [0.49, 16.51] for Q4_0 and so on), far
 * inside int8, where the pinned conversions of quantize.c reduce to plain truncation. */

/* ---- block quantizers ------------------------------------------------------ */

/* Blocks go in groups of 8: a first pass finds each block's extremes, the scales of the group
 * come from vector divisions (the same IEEE results as scalar ones) off the per-block critical
 * path, and a second pass quantizes. */
#define GROUP 8

/* d = num / div, id = d != 0 ? 1/d : 0, and fp16(d), for 8 blocks */
AVX2 static inline void group_scales(const float num[GROUP], float div, float id[GROUP], ct_fp16 dh[GROUP]) {
    const __m256 d = _mm256_div_ps(_mm256_loadu_ps(num), _mm256_set1_ps(div));
    const __m256 nz = _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_NEQ_UQ);
    _mm256_storeu_ps(id, _mm256_and_ps(_mm256_div_ps(_mm256_set1_ps(1.0f), d), nz));
    _mm_storeu_si128((__m128i *)(void *)dh, f32x8_to_f16(d));
}

AVX2 static void quantize_q8_0(const float *restrict x, void *restrict vy, int64_t n) {
    block_q8_0 *y = vy;
    const int64_t nb = n / CT_QK8_0;
    for (int64_t i0 = 0; i0 < nb; i0 += GROUP) {
        const int m = nb - i0 < GROUP ? (int)(nb - i0) : GROUP;
        float amax[GROUP] = {0}, id[GROUP];
        ct_fp16 dh[GROUP];
        bool finite[GROUP];
        for (int b = 0; b < m; b++) {
            const float *xb = x + (i0 + b) * CT_QK8_0;
            __m256 v[4], a[4];
            load_block(xb, v);
            finite[b] = abs_finite(v, a);
            bool nan = false;
            if (!finite[b]) {
                const __m256 unord = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(v[0], v[0], _CMP_UNORD_Q),
                                                               _mm256_cmp_ps(v[1], v[1], _CMP_UNORD_Q)),
                                                  _mm256_or_ps(_mm256_cmp_ps(v[2], v[2], _CMP_UNORD_Q),
                                                               _mm256_cmp_ps(v[3], v[3], _CMP_UNORD_Q)));
                nan = _mm256_movemask_ps(unord) != 0;
            }
            if (!nan) {
                amax[b] = hmax_ps(_mm256_max_ps(_mm256_max_ps(a[0], a[1]), _mm256_max_ps(a[2], a[3])));
            } else {
                /* ggml's MAX() restarts after a NaN: its sequential order matters here */
                float am = 0.0f;
                for (int j = 0; j < CT_QK8_0; j++) {
                    const float av = __builtin_fabsf(xb[j]);
                    am = am > av ? am : av;
                }
                amax[b] = am;
            }
        }
        group_scales(amax, 127, id, dh);
        for (int b = 0; b < m; b++) {
            __m256 v[4];
            load_block(x + (i0 + b) * CT_QK8_0, v);
            const __m256 vid = _mm256_set1_ps(id[b]);
            __m256i q[4];
            if (finite[b] && id[b] <= FLT_MAX) {
                for (int k = 0; k < 4; k++) q[k] = round_i32_fast(_mm256_mul_ps(v[k], vid));
            } else {
                for (int k = 0; k < 4; k++) q[k] = round_i32(_mm256_mul_ps(v[k], vid));
            }
            y[i0 + b].d = dh[b];
            _mm256_storeu_si256((__m256i *)(void *)y[i0 + b].qs, low_bytes_32(q[0], q[1], q[2], q[3]));
        }
    }
}

/* Q4_0 (div -8, off 8.5, hi 15, 4 bits) and Q5_0 (-16, 16.5, 31, 5 bits) */
AVX2 static inline void quantize_x_0(const float *restrict x, uint8_t *restrict y, int64_t nb, size_t bs, float div,
                                     float off, int hi) {
    for (int64_t i0 = 0; i0 < nb; i0 += GROUP) {
        const int m = nb - i0 < GROUP ? (int)(nb - i0) : GROUP;
        float max[GROUP] = {0}, id[GROUP];
        ct_fp16 dh[GROUP];
        bool finite[GROUP];
        for (int b = 0; b < m; b++) {
            const float *xb = x + (i0 + b) * 32;
            __m256 v[4], a[4];
            load_block(xb, v);
            finite[b] = abs_finite(v, a);
            if (!finite[b]) abs_drop_nan(v, a);
            max[b] = signed_absmax(xb, a);
        }
        group_scales(max, div, id, dh);
        for (int b = 0; b < m; b++) {
            __m256 v[4];
            load_block(x + (i0 + b) * 32, v);
            const __m256 vid = _mm256_set1_ps(id[b]), voff = _mm256_set1_ps(off);
            __m256i q[4];
            if (finite[b] && id[b] <= FLT_MAX) {
                for (int k = 0; k < 4; k++)
                    q[k] = _mm256_min_epi32(_mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(v[k], vid), voff)),
                                            _mm256_set1_epi32(hi));
            } else {
                for (int k = 0; k < 4; k++) q[k] = trunc_int8_min(_mm256_add_ps(_mm256_mul_ps(v[k], vid), voff), hi);
            }
            uint8_t *yb = y + (size_t)(i0 + b) * bs;
            memcpy(yb, &dh[b], sizeof dh[b]);
            if (hi == 15) {
                _mm_storeu_si128((__m128i *)(void *)(yb + 2), nibbles(q[0], q[1], q[2], q[3], false));
            } else {
                store_u32(yb + 2, bit4_32(q[0], q[1], q[2], q[3]));
                _mm_storeu_si128((__m128i *)(void *)(yb + 6), nibbles(q[0], q[1], q[2], q[3], true));
            }
        }
    }
}

AVX2 static void quantize_q4_0(const float *restrict x, void *restrict vy, int64_t n) {
    quantize_x_0(x, vy, n / CT_QK4_0, sizeof(block_q4_0), -8, 8.5f, 15);
}

AVX2 static void quantize_q5_0(const float *restrict x, void *restrict vy, int64_t n) {
    quantize_x_0(x, vy, n / CT_QK5_0, sizeof(block_q5_0), -16, 16.5f, 31);
}

/* Q4_1 (div 15, clamped to 15) and Q5_1 (div 31, no clamp, 5 bits) */
AVX2 static inline void quantize_x_1(const float *restrict x, uint8_t *restrict y, int64_t nb, size_t bs, float div,
                                     bool five) {
    for (int64_t i0 = 0; i0 < nb; i0 += GROUP) {
        const int m = nb - i0 < GROUP ? (int)(nb - i0) : GROUP;
        float range[GROUP] = {0}, min[GROUP] = {0}, id[GROUP];
        ct_fp16 dh[GROUP], mh[GROUP];
        bool finite[GROUP];
        for (int b = 0; b < m; b++) {
            const float *xb = x + (i0 + b) * 32;
            __m256 v[4], a[4];
            load_block(xb, v);
            finite[b] = abs_finite(v, a);
            float max;
            block_min_max(xb, v, finite[b], &min[b], &max);
            range[b] = max - min[b];
        }
        group_scales(range, div, id, dh);
        _mm_storeu_si128((__m128i *)(void *)mh, f32x8_to_f16(_mm256_loadu_ps(min)));
        for (int b = 0; b < m; b++) {
            __m256 v[4];
            load_block(x + (i0 + b) * 32, v);
            const __m256 vid = _mm256_set1_ps(id[b]), vmin = _mm256_set1_ps(min[b]), off = _mm256_set1_ps(0.5f);
            const bool fast = finite[b] && range[b] <= FLT_MAX && id[b] <= FLT_MAX;
            __m256i q[4];
            for (int k = 0; k < 4; k++) {
                const __m256 t = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(v[k], vmin), vid), off);
                if (five) q[k] = trunc_i32(t);
                else if (fast) q[k] = _mm256_min_epi32(_mm256_cvttps_epi32(t), _mm256_set1_epi32(15));
                else q[k] = trunc_int8_min(t, 15);
            }
            uint8_t *yb = y + (size_t)(i0 + b) * bs;
            memcpy(yb, &dh[b], sizeof dh[b]);
            memcpy(yb + 2, &mh[b], sizeof mh[b]);
            if (!five) {
                _mm_storeu_si128((__m128i *)(void *)(yb + 4), nibbles(q[0], q[1], q[2], q[3], false));
            } else {
                store_u32(yb + 4, bit4_32(q[0], q[1], q[2], q[3]));
                _mm_storeu_si128((__m128i *)(void *)(yb + 8), nibbles(q[0], q[1], q[2], q[3], true));
            }
        }
    }
}

AVX2 static void quantize_q4_1(const float *restrict x, void *restrict vy, int64_t n) {
    quantize_x_1(x, vy, n / CT_QK4_1, sizeof(block_q4_1), 15, false);
}

AVX2 static void quantize_q5_1(const float *restrict x, void *restrict vy, int64_t n) {
    quantize_x_1(x, vy, n / CT_QK5_1, sizeof(block_q5_1), 31, true);
}

/* ---- IQ4_NL ------------------------------------------------------------------ */


#define IQ4NL_GROUP_MAX_EPS 1e-15f

/* Blocks in groups of 8: the indices per element as in quantize.c's iq4nl_best_index;
 * the two sequential sums of each block run in one SIMD lane per block (transposed),
 * element by element in order, so each lane adds exactly what the scalar loop adds. */
AVX2 static void quantize_iq4_nl(const float *restrict x, void *restrict vy, int64_t n) {
    block_iq4_nl *y = vy;
    const int64_t nb = n / CT_QK4_NL;
    static const float kv[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    /* the table as bytes, in both 128-bit lanes, for byte shuffles */
    const __m256i kv8 = _mm256_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
                                         -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
    __m256 kvs[16];
    for (int t = 0; t < 16; t++) kvs[t] = _mm256_set1_ps(kv[t]);
    for (int64_t i0 = 0; i0 < nb; i0 += 8) {
        const int nbl = nb - i0 < 8 ? (int)(nb - i0) : 8;
        float wqx[8][CT_QK4_NL], wqq[8][CT_QK4_NL], max[8] = {0}, id[8];
        bool zero[8];
        for (int b = 0; b < nbl; b++) {
            const float *xb = x + (i0 + b) * CT_QK4_NL;
            __m256 v[4], a[4];
            load_block(xb, v);
            if (!abs_finite(v, a)) abs_drop_nan(v, a);
            max[b] = signed_absmax(xb, a);
            zero[b] = __builtin_fabsf(max[b]) < IQ4NL_GROUP_MAX_EPS;
        }
        /* d0 = max / -127 and id = 1 / d0 for the 8 blocks at once */
        const __m256 d0 = _mm256_div_ps(_mm256_loadu_ps(max), _mm256_set1_ps(kv[0]));
        _mm256_storeu_ps(id, _mm256_div_ps(_mm256_set1_ps(1.0f), d0));
        for (int b = 0; b < 8; b++) {
            if (b >= nbl || zero[b]) {
                memset(wqx[b], 0, sizeof wqx[b]);
                memset(wqq[b], 0, sizeof wqq[b]);
                if (b < nbl) {
                    y[i0 + b].d = 0;
                    memset(y[i0 + b].qs, 0x88, sizeof y[i0 + b].qs);
                }
                continue;
            }
            __m256 v[4];
            load_block(x + (i0 + b) * CT_QK4_NL, v);
            const __m256 vid = _mm256_set1_ps(id[b]);
            __m256i L[4];
            for (int k = 0; k < 4; k++) {
                const __m256 al = _mm256_mul_ps(vid, v[k]);
                /* mu = 1 + #{t in 1..14 : !(al < kv[t])}, unrolled in two chains */
                __m256i m0 = _mm256_set1_epi32(1), m1 = _mm256_setzero_si256();
#pragma GCC unroll 7
                for (int t = 1; t < 15; t += 2) {
                    m0 = _mm256_sub_epi32(m0, _mm256_castps_si256(_mm256_cmp_ps(al, kvs[t], _CMP_NLT_UQ)));
                    m1 = _mm256_sub_epi32(m1, _mm256_castps_si256(_mm256_cmp_ps(al, kvs[t + 1], _CMP_NLT_UQ)));
                }
                const __m256i mu = _mm256_add_epi32(m0, m1);
                /* kv[mu - 1] and kv[mu]: a byte shuffle of the table, then the byte sign-extended */
                const __m256i both = _mm256_shuffle_epi8(kv8, _mm256_or_si256(_mm256_sub_epi32(mu, _mm256_set1_epi32(1)),
                                                                              _mm256_slli_epi32(mu, 8)));
                const __m256 below_v = _mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(both, 24), 24));
                const __m256 above_v = _mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(both, 16), 24));
                const __m256 lower = _mm256_cmp_ps(_mm256_sub_ps(al, below_v), _mm256_sub_ps(above_v, al), _CMP_LT_OQ);
                L[k] = _mm256_add_epi32(mu, _mm256_castps_si256(lower));
                const __m256 q = _mm256_blendv_ps(above_v, below_v, lower);
                const __m256 w = _mm256_mul_ps(v[k], v[k]);
                const __m256 wq = _mm256_mul_ps(w, q);
                _mm256_storeu_ps(wqx[b] + 8 * k, _mm256_mul_ps(wq, v[k]));
                _mm256_storeu_ps(wqq[b] + 8 * k, _mm256_mul_ps(wq, q));
            }
            _mm_storeu_si128((__m128i *)(void *)y[i0 + b].qs, nibbles(L[0], L[1], L[2], L[3], false));
        }
        __m256 sumqx = _mm256_setzero_ps(), sumq2 = _mm256_setzero_ps();
        for (int t = 0; t < CT_QK4_NL / 8; t++) {
            __m256 cx[8], cq[8];
            for (int b = 0; b < 8; b++) {
                cx[b] = _mm256_loadu_ps(wqx[b] + 8 * t);
                cq[b] = _mm256_loadu_ps(wqq[b] + 8 * t);
            }
            ct_avx2_transpose8(cx);
            ct_avx2_transpose8(cq);
            for (int j = 0; j < 8; j++) {
                sumqx = _mm256_add_ps(sumqx, cx[j]);
                sumq2 = _mm256_add_ps(sumq2, cq[j]);
            }
        }
        ct_fp16 dh[8];
        __m256 d = _mm256_div_ps(sumqx, sumq2);
        /* NaN scales become the one canonical NaN (see quantize.c) */
        const __m256 nan_lanes = _mm256_cmp_ps(d, d, _CMP_UNORD_Q);
        d = _mm256_blendv_ps(d, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000)), nan_lanes);
        _mm_storeu_si128((__m128i *)(void *)dh, f32x8_to_f16(d));
        for (int b = 0; b < nbl; b++)
            if (!zero[b]) y[i0 + b].d = dh[b];
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
    case CT_TYPE_Q8_0: return quantize_q8_0;
    case CT_TYPE_Q4_0: return quantize_q4_0;
    case CT_TYPE_Q4_1: return quantize_q4_1;
    case CT_TYPE_Q5_0: return quantize_q5_0;
    case CT_TYPE_Q5_1: return quantize_q5_1;
    case CT_TYPE_IQ4_NL: return quantize_iq4_nl;
    default: return NULL;
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

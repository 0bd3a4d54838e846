/* The AVX2 exponential of SOFT_MAX (soft_max.c) and SwiGLU (glu.c), compiled
 * through a function attribute; callers check ct_types_use_avx2() first (AVX2, FMA
 * and F16C). The polynomial runs on FMA: a shorter dependency chain than separate
 * multiplies and adds, which is what bounds these loops. */
#ifndef CT_CPU_VEXP_H
#define CT_CPU_VEXP_H

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>

#define CT_HAVE_VEXP 1
#define CT_VEXP_AVX2 __attribute__((target("avx2,fma,f16c")))

/* Cephes' expf reduction and polynomial for W-bit vectors (256 or 512), one definition for
 * both widths so that they compute the same values: from x0 (clamped) and k = round(x0 /
 * ln 2), p = e^(x0 - k ln 2); the caller scales p by 2^k. */
#define CT_EXP_CORE(W, x0, k, p)                                                                         \
    do {                                                                                                 \
        __m##W x_ = _mm##W##_fnmadd_ps(k, _mm##W##_set1_ps(0.693359375f), x0);                           \
        x_ = _mm##W##_fnmadd_ps(k, _mm##W##_set1_ps(-2.12194440e-4f), x_);                               \
        p = _mm##W##_set1_ps(1.9875691500e-4f);                                                          \
        p = _mm##W##_fmadd_ps(p, x_, _mm##W##_set1_ps(1.3981999507e-3f));                                \
        p = _mm##W##_fmadd_ps(p, x_, _mm##W##_set1_ps(8.3334519073e-3f));                                \
        p = _mm##W##_fmadd_ps(p, x_, _mm##W##_set1_ps(4.1665795894e-2f));                                \
        p = _mm##W##_fmadd_ps(p, x_, _mm##W##_set1_ps(1.6666665459e-1f));                                \
        p = _mm##W##_fmadd_ps(p, x_, _mm##W##_set1_ps(5.0000001201e-1f));                                \
        p = _mm##W##_fmadd_ps(p, _mm##W##_mul_ps(x_, x_), _mm##W##_add_ps(x_, _mm##W##_set1_ps(1.0f)));  \
    } while (0)

/* exp(v) for v <= 0 (or NaN): Cephes' expf reduction and polynomial, 2^k through the
 * exponent bits; 0 below -87.3 (where 2^k would leave the normal range), NaN kept. */
CT_VEXP_AVX2 static inline __m256 ct_exp_neg_avx2(__m256 v) {
    const __m256 lo = _mm256_set1_ps(-87.3f);
    const __m256 small = _mm256_cmp_ps(v, lo, _CMP_LT_OQ);
    const __m256 x0 = _mm256_max_ps(v, lo); /* NaN becomes lo here; restored below */
    const __m256 k = _mm256_round_ps(_mm256_mul_ps(x0, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 p;
    CT_EXP_CORE(256, x0, k, p);
    /* 2^k through its exponent bits (k >= -126 here: a normal float) */
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
    __m256 r = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
    r = _mm256_andnot_ps(small, r);
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    return _mm256_blendv_ps(r, v, nan);
}

/* The same exponential 16 lanes wide, for CPUs with AVX-512 (ct_cpu_has_avx512_vnni):
 * the same operations lane by lane, so the same values, but p times 2^k in one scalef
 * (both round p * 2^k once, so the product is the same). */
#define CT_VEXP_AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))

CT_VEXP_AVX512 static inline __m512 ct_exp_neg_avx512(__m512 v) {
    const __m512 lo = _mm512_set1_ps(-87.3f);
    const __mmask16 small = _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ);
    const __m512 x0 = _mm512_max_ps(v, lo); /* NaN becomes lo here; restored below */
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x0, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 p;
    CT_EXP_CORE(512, x0, k, p);
    const __m512 r = _mm512_maskz_scalef_ps((__mmask16)~small, p, k);
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), r, v);
}

#endif
#endif

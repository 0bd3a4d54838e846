/* CPU features that select SIMD code paths at run time. */
#ifndef CT_CPU_FEATURES_H
#define CT_CPU_FEATURES_H

#include <stdbool.h>

/* AVX2, FMA and F16C present and the YMM state saved by the OS (cached after the first call). */
bool ct_cpu_has_avx2_f16c(void);
/* That, and AVX512F, AVX512BW, AVX512VL and AVX512_VNNI with the ZMM and opmask state saved by the OS. */
bool ct_cpu_has_avx512_vnni(void);


#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* Transposes 8 rows of 8 floats in registers (shared by the AVX2 conversion
 * and copy paths). Only call where ct_cpu_has_avx2_f16c() is true. */
__attribute__((target("avx2"))) static inline void ct_avx2_transpose8(__m256 r[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
    r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
    r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
    r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
    r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}
#endif

#endif

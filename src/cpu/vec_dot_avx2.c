/* AVX2 dot products of MUL_MAT, compiled for AVX2+FMA+F16C through function
 * attributes and chosen at run time, so the library still runs on older x86.
 * The integer parts are exact; only the float combination order differs from
 * the portable kernels (vec_dot.c). */
#include "cpu/simd.h"
#include "types/types_internal.h"

#include <float.h>
#include <stddef.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)

#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>

#define AVX2 __attribute__((target("avx2,fma,f16c")))

/* CPUID directly: not every compiler's __builtin_cpu_supports knows f16c.
 * XGETBV confirms that the OS saves the YMM registers. */
static bool detect_avx2(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const unsigned need = 1u << 12 | 1u << 27 | 1u << 28 | 1u << 29; /* FMA, OSXSAVE, AVX, F16C */
    if ((c & need) != need) return false;
    unsigned xlo, xhi;
    __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    (void)xhi;
    if ((xlo & 6u) != 6u) return false;
    if (__get_cpuid_max(0, NULL) < 7) return false;
    __cpuid_count(7, 0, a, b, c, d);
    return (b & 1u << 5) != 0; /* AVX2 */
}

static bool cpu_has_avx2(void) {
    static atomic_int state; /* 0 unknown, 1 yes, 2 no */
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (s == 0) {
        s = detect_avx2() ? 1 : 2;
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return s == 1;
}

AVX2 static inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

AVX2 static inline float fp16_f32(ct_fp16 h) { return _cvtsh_ss(h); }

/* unsigned x signed bytes, pairwise, then to 8 int32 */
AVX2 static inline __m256i dot_u8i8(__m256i u, __m256i s) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

/* signed x signed bytes (y in [-127, 127]) */
AVX2 static inline __m256i dot_i8i8(__m256i x, __m256i y) {
    return dot_u8i8(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
}

/* 32 nibbles: bytes 0..15 are the low nibbles, 16..31 the high ones */
AVX2 static inline __m256i nibbles_32(const uint8_t *qs) {
    const __m128i q = _mm_loadu_si128((const __m128i *)qs);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(0x0F));
}

/* byte j = 0xFF where bit j of the 32 bits is set */
AVX2 static inline __m256i bits_32(const uint8_t *p) {
    uint32_t x32;
    memcpy(&x32, p, sizeof x32);
    const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
    __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32((int)x32), shuf);
    bytes = _mm256_or_si256(bytes, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe));
    return _mm256_cmpeq_epi8(bytes, _mm256_set1_epi64x(-1));
}

AVX2 static inline __m256i load_qy(const ct_block_qy *y) { return _mm256_loadu_si256((const __m256i *)y->qs); }

/* ---- float rows --------------------------------------------------------- */

#define DOT_F_BODY(LOAD8, LOAD1)                                                              \
    const unsigned char *x = vx, *y = vy;                                                     \
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                               \
    int64_t i = 0;                                                                            \
    for (; i + 32 <= k; i += 32) {                                                            \
        a0 = _mm256_fmadd_ps(LOAD8(i + 0), _mm256_loadu_ps((const float *)(y + 4 * (i + 0))), a0);   \
        a1 = _mm256_fmadd_ps(LOAD8(i + 8), _mm256_loadu_ps((const float *)(y + 4 * (i + 8))), a1);   \
        a2 = _mm256_fmadd_ps(LOAD8(i + 16), _mm256_loadu_ps((const float *)(y + 4 * (i + 16))), a2); \
        a3 = _mm256_fmadd_ps(LOAD8(i + 24), _mm256_loadu_ps((const float *)(y + 4 * (i + 24))), a3); \
    }                                                                                         \
    for (; i + 8 <= k; i += 8) a0 = _mm256_fmadd_ps(LOAD8(i), _mm256_loadu_ps((const float *)(y + 4 * i)), a0); \
    float sum = hsum_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));         \
    for (; i < k; i++) {                                                                      \
        float yv;                                                                             \
        memcpy(&yv, y + 4 * i, sizeof yv);                                                    \
        sum += LOAD1(i) * yv;                                                                 \
    }                                                                                         \
    return sum;

#define LD8_F32(i) _mm256_loadu_ps((const float *)(x + 4 * (i)))
#define LD8_F16(i) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + 2 * (i))))
#define LD8_BF16(i) \
    _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(x + 2 * (i)))), 16))

AVX2 static inline float ld1_f32(const unsigned char *p) { float f; memcpy(&f, p, sizeof f); return f; }
AVX2 static inline uint16_t ld1_u16(const unsigned char *p) { uint16_t h; memcpy(&h, p, sizeof h); return h; }
#define LD1_F32(i) ld1_f32(x + 4 * (i))
#define LD1_F16(i) fp16_f32(ld1_u16(x + 2 * (i)))
#define LD1_BF16(i) ct_bf16_to_fp32_inline(ld1_u16(x + 2 * (i)))

AVX2 static float dot_f32(int64_t k, const void *vx, const void *vy) { DOT_F_BODY(LD8_F32, LD1_F32) }
AVX2 static float dot_f16(int64_t k, const void *vx, const void *vy) { DOT_F_BODY(LD8_F16, LD1_F16) }
AVX2 static float dot_bf16(int64_t k, const void *vx, const void *vy) { DOT_F_BODY(LD8_BF16, LD1_BF16) }

/* ---- 32-element blocks --------------------------------------------------- */

/* Offsets (-8 of Q4_0, -16 of Q5_0) and mins go through the block sum s, so the
 * byte products stay unsigned x signed. The 4-bit kernels take two blocks per
 * step: [block i | block i+1] halves share one register, which halves the
 * unpacking and scale work that bounds the decode case. */

/* lo: elements 0..15 of both blocks, hi: elements 16..31 */
AVX2 static inline void nibbles_pair(const uint8_t *qs0, const uint8_t *qs1, __m256i *lo, __m256i *hi) {
    const __m256i q = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)qs1), _mm_loadu_si128((const __m128i *)qs0));
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    *lo = _mm256_and_si256(q, m4);
    *hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
}

/* y's bytes in the same pair order */
AVX2 static inline void qy_pair(const ct_block_qy *y, __m256i *ylo, __m256i *yhi) {
    const __m256i y0 = load_qy(y), y1 = load_qy(y + 1);
    *ylo = _mm256_permute2x128_si256(y0, y1, 0x20);
    *yhi = _mm256_permute2x128_si256(y0, y1, 0x31);
}

/* [x0*yd0, x1*yd1, 0, 0] for two fp16 factors of x; *s = [ys0, ys1, ys0, ys1] */
AVX2 static inline __m128 pair_scales(ct_fp16 h0, ct_fp16 h1, const ct_block_qy *y, __m128 *s) {
    const __m128 ds = _mm_unpacklo_ps(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)&y[0])),
                                      _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)&y[1])));
    const __m128 xd = _mm_cvtph_ps(_mm_cvtsi32_si128((int)((uint32_t)h0 | (uint32_t)h1 << 16)));
    *s = _mm_movehl_ps(ds, ds);
    return _mm_mul_ps(xd, ds);
}

/* [a0 x4 | a1 x4] */
AVX2 static inline __m256 bcast_pair(__m128 a) {
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(a), _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
}

AVX2 static inline float hsum128(__m128 s) {
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

AVX2 static inline __m256i pair_dot_u4(__m256i lo, __m256i hi, const ct_block_qy *y) {
    __m256i ylo, yhi;
    qy_pair(y, &ylo, &yhi);
    /* |sum| <= 4*15*127 fits int16 */
    const __m256i p16 = _mm256_add_epi16(_mm256_maddubs_epi16(lo, ylo), _mm256_maddubs_epi16(hi, yhi));
    return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

AVX2 static float dot_q4_0(int64_t nb, const void *vx, const ct_block_qy *y) {
    const block_q4_0 *x = vx;
    __m256 acc = _mm256_setzero_ps();
    __m128 corr = _mm_setzero_ps();
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        __m256i lo, hi;
        __m128 s;
        nibbles_pair(x[i].qs, x[i + 1].qs, &lo, &hi);
        const __m256i p = pair_dot_u4(lo, hi, y + i);
        const __m128 dd = pair_scales(x[i].d, x[i + 1].d, y + i, &s);
        acc = _mm256_fmadd_ps(bcast_pair(dd), _mm256_cvtepi32_ps(p), acc);
        corr = _mm_fmadd_ps(dd, s, corr);
    }
    float c = hsum128(corr);
    for (; i < nb; i++) {
        const float d0 = fp16_f32(x[i].d) * y[i].d;
        const __m256i p0 = dot_u8i8(nibbles_32(x[i].qs), load_qy(&y[i]));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d0), _mm256_cvtepi32_ps(p0), acc);
        c += d0 * y[i].s;
    }
    return hsum_ps(acc) - 8.0f * c;
}

AVX2 static float dot_q4_1(int64_t nb, const void *vx, const ct_block_qy *y) {
    const block_q4_1 *x = vx;
    __m256 acc = _mm256_setzero_ps();
    __m128 corr = _mm_setzero_ps();
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        __m256i lo, hi;
        __m128 s;
        nibbles_pair(x[i].qs, x[i + 1].qs, &lo, &hi);
        const __m256i p = pair_dot_u4(lo, hi, y + i);
        const __m128 dd = pair_scales(x[i].d, x[i + 1].d, y + i, &s);
        const __m128 md = pair_scales(x[i].m, x[i + 1].m, y + i, &s);
        acc = _mm256_fmadd_ps(bcast_pair(dd), _mm256_cvtepi32_ps(p), acc);
        corr = _mm_fmadd_ps(md, s, corr);
    }
    float c = hsum128(corr);
    for (; i < nb; i++) {
        const float d0 = fp16_f32(x[i].d) * y[i].d;
        const __m256i p0 = dot_u8i8(nibbles_32(x[i].qs), load_qy(&y[i]));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d0), _mm256_cvtepi32_ps(p0), acc);
        c += fp16_f32(x[i].m) * y[i].d * y[i].s;
    }
    return hsum_ps(acc) + c;
}

AVX2 static inline __m256i q5_values(const uint8_t *qs, const uint8_t *qh) {
    return _mm256_or_si256(nibbles_32(qs), _mm256_and_si256(bits_32(qh), _mm256_set1_epi8(0x10)));
}

AVX2 static float dot_q5_0(int64_t nb, const void *vx, const ct_block_qy *y) {
    const block_q5_0 *x = vx;
    __m256 acc = _mm256_setzero_ps();
    float corr = 0.0f;
    for (int64_t i = 0; i < nb; i++) {
        const float d0 = fp16_f32(x[i].d) * y[i].d;
        const __m256i p = dot_u8i8(q5_values(x[i].qs, x[i].qh), load_qy(&y[i]));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d0), _mm256_cvtepi32_ps(p), acc);
        corr += d0 * y[i].s;
    }
    return hsum_ps(acc) - 16.0f * corr;
}

AVX2 static float dot_q5_1(int64_t nb, const void *vx, const ct_block_qy *y) {
    const block_q5_1 *x = vx;
    __m256 acc = _mm256_setzero_ps();
    float corr = 0.0f;
    for (int64_t i = 0; i < nb; i++) {
        const float d0 = fp16_f32(x[i].d) * y[i].d;
        const __m256i p = dot_u8i8(q5_values(x[i].qs, x[i].qh), load_qy(&y[i]));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d0), _mm256_cvtepi32_ps(p), acc);
        corr += fp16_f32(x[i].m) * y[i].d * y[i].s;
    }
    return hsum_ps(acc) + corr;
}

AVX2 static float dot_q8_0(int64_t nb, const void *vx, const ct_block_qy *y) {
    const block_q8_0 *x = vx;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        const __m256i p0 = dot_i8i8(_mm256_loadu_si256((const __m256i *)x[i].qs), load_qy(&y[i]));
        const __m256i p1 = dot_i8i8(_mm256_loadu_si256((const __m256i *)x[i + 1].qs), load_qy(&y[i + 1]));
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(fp16_f32(x[i].d) * y[i].d), _mm256_cvtepi32_ps(p0), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_set1_ps(fp16_f32(x[i + 1].d) * y[i + 1].d), _mm256_cvtepi32_ps(p1), acc1);
    }
    for (; i < nb; i++) {
        const __m256i p0 = dot_i8i8(_mm256_loadu_si256((const __m256i *)x[i].qs), load_qy(&y[i]));
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(fp16_f32(x[i].d) * y[i].d), _mm256_cvtepi32_ps(p0), acc0);
    }
    return hsum_ps(_mm256_add_ps(acc0, acc1));
}

AVX2 static float dot_iq4_nl(int64_t nb, const void *vx, const ct_block_qy *y) {
    const block_iq4_nl *x = vx;
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)ct_kvalues_iq4nl));
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; i++) {
        const __m256i v = _mm256_shuffle_epi8(table, nibbles_32(x[i].qs));
        const __m256i p = dot_i8i8(v, load_qy(&y[i]));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(fp16_f32(x[i].d) * y[i].d), _mm256_cvtepi32_ps(p), acc);
    }
    return hsum_ps(acc);
}

/* ---- 256-element super-blocks (y: 8 blocks each) ------------------------- */

static inline void scales_mins_k4(const uint8_t *q, uint8_t *sc, uint8_t *m) {
    for (int j = 0; j < 4; j++) {
        sc[j] = q[j] & 63;
        m[j] = q[j + 4] & 63;
        sc[j + 4] = (uint8_t)((q[j + 8] & 15) | ((q[j] >> 6) << 4));
        m[j + 4] = (uint8_t)((q[j + 8] >> 4) | ((q[j + 4] >> 6) << 4));
    }
}

/* Q4_K and Q5_K share everything but the fifth bit (hb: NULL for Q4_K). */
AVX2 static inline float dot_k4(const uint8_t *scales, ct_fp16 hd, ct_fp16 hdmin, const uint8_t *qs,
                                const uint8_t *qh, const ct_block_qy *y, __m256 *acc) {
    uint8_t sc[8], m[8];
    scales_mins_k4(scales, sc, m);
    const float d = fp16_f32(hd), dmin = fp16_f32(hdmin);
    const __m256i m4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
    __m256i hb = qh ? _mm256_loadu_si256((const __m256i *)qh) : _mm256_setzero_si256();
    float corr = 0.0f;
    for (int c = 0; c < 4; c++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * c));
        __m256i lo = _mm256_and_si256(q, m4);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
        if (qh) {
            lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(hb, one), 4));
            hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 1), one), 4));
            hb = _mm256_srli_epi16(hb, 2);
        }
        const ct_block_qy *y0 = y + 2 * c, *y1 = y0 + 1;
        const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load_qy(y0)), _mm256_set1_epi16(sc[2 * c]));
        const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load_qy(y1)), _mm256_set1_epi16(sc[2 * c + 1]));
        *acc = _mm256_fmadd_ps(_mm256_set1_ps(d * y0->d), _mm256_cvtepi32_ps(p0), *acc);
        *acc = _mm256_fmadd_ps(_mm256_set1_ps(d * y1->d), _mm256_cvtepi32_ps(p1), *acc);
        corr += y0->d * ((float)m[2 * c] * y0->s) + y1->d * ((float)m[2 * c + 1] * y1->s);
    }
    return dmin * corr;
}

AVX2 static float dot_q4_K(int64_t nb, const void *vx, const ct_block_qy *y) {
    const block_q4_K *x = vx;
    __m256 acc = _mm256_setzero_ps();
    float corr = 0.0f;
    for (int64_t i = 0; i < nb / 8; i++) corr += dot_k4(x[i].scales, x[i].d, x[i].dmin, x[i].qs, NULL, y + 8 * i, &acc);
    return hsum_ps(acc) - corr;
}

AVX2 static float dot_q5_K(int64_t nb, const void *vx, const ct_block_qy *y) {
    const block_q5_K *x = vx;
    __m256 acc = _mm256_setzero_ps();
    float corr = 0.0f;
    for (int64_t i = 0; i < nb / 8; i++)
        corr += dot_k4(x[i].scales, x[i].d, x[i].dmin, x[i].qs, x[i].qh, y + 8 * i, &acc);
    return hsum_ps(acc) - corr;
}

AVX2 static float dot_q6_K(int64_t nb, const void *vx, const ct_block_qy *y) {
    const block_q6_K *x = vx;
    const __m256i m4 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(3), off = _mm256_set1_epi8(32);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb / 8; i++) {
        const float d = fp16_f32(x[i].d);
        for (int h = 0; h < 2; h++) {
            const uint8_t *ql = x[i].ql + 64 * h, *qh = x[i].qh + 32 * h;
            const int8_t *sc = x[i].scales + 8 * h;
            const ct_block_qy *yb = y + 8 * i + 4 * h;
            const __m256i l0 = _mm256_loadu_si256((const __m256i *)ql);
            const __m256i l1 = _mm256_loadu_si256((const __m256i *)(ql + 32));
            const __m256i hv = _mm256_loadu_si256((const __m256i *)qh);
            __m256i v[4];
            v[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(hv, m3), 4));
            v[1] = _mm256_or_si256(_mm256_and_si256(l1, m4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hv, 2), m3), 4));
            v[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hv, 4), m3), 4));
            v[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hv, 6), m3), 4));
            for (int k = 0; k < 4; k++) {
                const __m256i s = _mm256_sub_epi8(v[k], off);
                const __m256i yq = load_qy(&yb[k]);
                const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(s, s), _mm256_sign_epi8(yq, s));
                const __m256i scv = _mm256_set_m128i(_mm_set1_epi16(sc[2 * k + 1]), _mm_set1_epi16(sc[2 * k]));
                const __m256i p = _mm256_madd_epi16(p16, scv);
                acc = _mm256_fmadd_ps(_mm256_set1_ps(d * yb[k].d), _mm256_cvtepi32_ps(p), acc);
            }
        }
    }
    return hsum_ps(acc);
}

/* ---- src1 conversion: same bytes as the portable one ---------------------- */

AVX2 static void quantize_qy(const float *x, ct_block_qy *y, int64_t nb) {
    const __m256 sign = _mm256_set1_ps(-0.0f), big = _mm256_set1_ps(FLT_MAX);
    for (int64_t i = 0; i < nb; i++, x += CT_QY_BLOCK) {
        __m256 v[4], amax = _mm256_setzero_ps();
        int nonfinite = 0;
        for (int j = 0; j < 4; j++) {
            v[j] = _mm256_loadu_ps(x + 8 * j);
            const __m256 ax = _mm256_andnot_ps(sign, v[j]);
            nonfinite |= _mm256_movemask_ps(_mm256_cmp_ps(ax, big, _CMP_NLE_UQ));
            amax = _mm256_max_ps(amax, ax);
        }
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        m = _mm_max_ss(m, _mm_movehdup_ps(m));
        const float am = _mm_cvtss_f32(m);
        if (nonfinite || am < 0x1p-64f) {
            ct_cpu_quantize_qy_portable(x, y + i, 1);
            continue;
        }
        const __m256 id = _mm256_set1_ps(127.0f / am);
        __m256i q[4];
        for (int j = 0; j < 4; j++)
            q[j] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[j], id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        const __m256i s32 = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(s32), _mm256_extracti128_si256(s32, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
        /* packs work per 128-bit lane; the permute restores element order */
        const __m256i a = _mm256_packs_epi32(q[0], q[1]);
        const __m256i b = _mm256_packs_epi32(q[2], q[3]);
        const __m256i p8 = _mm256_packs_epi16(a, b);
        const __m256i ord = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)y[i].qs, ord);
        y[i].d = am / 127.0f;
        y[i].s = (float)_mm_cvtsi128_si32(s);
    }
}

ct_dot_f_fn ct_cpu_dot_f_avx2(ct_type type) {
    if (!cpu_has_avx2()) return NULL;
    switch (type) {
    case CT_TYPE_F32: return dot_f32;
    case CT_TYPE_F16: return dot_f16;
    case CT_TYPE_BF16: return dot_bf16;
    default: return NULL;
    }
}

ct_dot_q_fn ct_cpu_dot_q_avx2(ct_type type) {
    if (!cpu_has_avx2()) return NULL;
    switch (type) {
    case CT_TYPE_Q4_0: return dot_q4_0;
    case CT_TYPE_Q4_1: return dot_q4_1;
    case CT_TYPE_Q5_0: return dot_q5_0;
    case CT_TYPE_Q5_1: return dot_q5_1;
    case CT_TYPE_Q8_0: return dot_q8_0;
    case CT_TYPE_IQ4_NL: return dot_iq4_nl;
    case CT_TYPE_Q4_K: return dot_q4_K;
    case CT_TYPE_Q5_K: return dot_q5_K;
    case CT_TYPE_Q6_K: return dot_q6_K;
    default: return NULL;
    }
}

ct_quantize_qy_fn ct_cpu_quantize_qy_avx2(void) { return cpu_has_avx2() ? quantize_qy : NULL; }

#else /* not x86 with GCC/Clang */

ct_dot_f_fn ct_cpu_dot_f_avx2(ct_type type) {
    (void)type;
    return NULL;
}
ct_dot_q_fn ct_cpu_dot_q_avx2(ct_type type) {
    (void)type;
    return NULL;
}
ct_quantize_qy_fn ct_cpu_quantize_qy_avx2(void) { return NULL; }

#endif

/* AVX2+F16C block quantizers (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL), chosen at run
 * time through ct_quantize_fn_avx2. Each gives the bytes of its portable twin in
 * quantize.c for every input:
 * - every float operation the portable code rounds (x*id, + 8.5, x - min, the
 *   divisions, the IQ4_NL products and sums) is the same IEEE operation with the
 *   same operands, in the same order where order matters; SIMD rounds as scalar does;
 * - only steps whose result does not depend on evaluation order are reorganized: the
 *   max/min scans run as trees (a finite block's max and min are order-free; zero
 *   signs and ties in |x| are resolved by the first-occurrence scans below), and two
 *   integer shortcuts replace float sequences where the exhaustive checks quoted at
 *   each one show that they agree for every input;
 * - a block holding NaN or inf, or whose scale is subnormal (where the portable
 *   conversions of out-of-range values come into play), is quantized by the
 *   portable code itself.
 * Blocks go in groups of 8: the first pass reduces each block's extremes into one
 * lane per block, the scales of the group come from one vector division, and a
 * second pass quantizes. tests/test_quantize_avx2.c compares both paths byte for byte. */
#include "core/cpu_features.h"
#include "types/types_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)

#include <immintrin.h>

/* No FMA in the target: the compiler cannot fuse a product into a sum. */
#define AVX2 __attribute__((target("avx2,f16c")))
#define G 8
#define QK 32

/* ---- lane-per-block reductions ---------------------------------------------- */

/* Lane b of the result reduces the 8 lanes of r[b] (three levels of shuffles and OP). */
#define REDUCE8(OP, CAST_PS, CAST_T)                                                                       \
    __m256 m4[4], m2[2];                                                                                   \
    for (int p = 0; p < 4; p++) {                                                                          \
        const __m256 a = CAST_PS(r[2 * p]), b = CAST_PS(r[2 * p + 1]);                                     \
        m4[p] = CAST_PS(OP(CAST_T(_mm256_unpacklo_ps(a, b)), CAST_T(_mm256_unpackhi_ps(a, b))));          \
    }                                                                                                      \
    for (int p = 0; p < 2; p++) {                                                                          \
        const __m256 a = m4[2 * p], b = m4[2 * p + 1];                                                     \
        m2[p] = CAST_PS(OP(CAST_T(_mm256_shuffle_ps(a, b, 0x44)), CAST_T(_mm256_shuffle_ps(a, b, 0xEE)))); \
    }                                                                                                      \
    return OP(CAST_T(_mm256_permute2f128_ps(m2[0], m2[1], 0x20)),                                         \
              CAST_T(_mm256_permute2f128_ps(m2[0], m2[1], 0x31)));

#define ID_PS(v) (v)
AVX2 static inline __m256 reduce8_max_ps(const __m256 r[G]) { REDUCE8(_mm256_max_ps, ID_PS, ID_PS) }
AVX2 static inline __m256 reduce8_min_ps(const __m256 r[G]) { REDUCE8(_mm256_min_ps, ID_PS, ID_PS) }
AVX2 static inline __m256i reduce8_max_epi32(const __m256i r[G]) {
    REDUCE8(_mm256_max_epi32, _mm256_castsi256_ps, _mm256_castps_si256)
}

AVX2 static inline void load_block(const float *x, __m256 v[4]) {
    for (int k = 0; k < 4; k++) v[k] = _mm256_loadu_ps(x + 8 * k);
}

/* Per-block max and min trees, and bit b of *nan set when block b holds a NaN. */
AVX2 static inline void group_max_min(const float *x, __m256 *hi, __m256 *lo, unsigned *nan) {
    __m256 h[G], l[G];
    unsigned nm = 0;
    for (int b = 0; b < G; b++) {
        __m256 v[4];
        load_block(x + b * QK, v);
        h[b] = _mm256_max_ps(_mm256_max_ps(v[0], v[1]), _mm256_max_ps(v[2], v[3]));
        l[b] = _mm256_min_ps(_mm256_min_ps(v[0], v[1]), _mm256_min_ps(v[2], v[3]));
        const __m256 un =
            _mm256_or_ps(_mm256_cmp_ps(v[0], v[1], _CMP_UNORD_Q), _mm256_cmp_ps(v[2], v[3], _CMP_UNORD_Q));
        nm |= (unsigned)(_mm256_movemask_ps(un) != 0) << b;
    }
    *hi = reduce8_max_ps(h);
    *lo = reduce8_min_ps(l);
    *nan = nm;
}

AVX2 static inline unsigned mask8(__m256 m) { return (unsigned)_mm256_movemask_ps(m); }

/* Lanes whose d is subnormal: there 1/d loses the accuracy that bounds |x*id| below. */
AVX2 static inline __m256 subnormal_lanes(__m256 d) {
    const __m256 ad = _mm256_and_ps(d, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
    return _mm256_and_ps(_mm256_cmp_ps(ad, _mm256_set1_ps(FLT_MIN), _CMP_LT_OQ),
                         _mm256_cmp_ps(ad, _mm256_setzero_ps(), _CMP_NEQ_OQ));
}

/* quantize.c's signed_absmax for 8 finite blocks from their max and min: the value of larger
 * magnitude; +0.0 for an all-zero block (the scan never replaces its initial +0.0); where
 * max = -min != 0 both signs reach |x|max and the first one in the block wins. */
AVX2 static inline __m256 group_signed_absmax(const float *x, __m256 hi, __m256 lo, unsigned skip) {
    const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN)), zero = _mm256_setzero_ps();
    const __m256 nlo = _mm256_xor_ps(lo, sign);
    __m256 m = _mm256_blendv_ps(hi, lo, _mm256_cmp_ps(nlo, hi, _CMP_GT_OQ));
    m = _mm256_and_ps(m, _mm256_cmp_ps(m, zero, _CMP_NEQ_UQ));
    unsigned tie = mask8(_mm256_and_ps(_mm256_cmp_ps(nlo, hi, _CMP_EQ_OQ), _mm256_cmp_ps(hi, zero, _CMP_NEQ_OQ)));
    tie &= ~skip;
    if (tie) {
        float mv[G], hv[G];
        _mm256_storeu_ps(mv, m);
        _mm256_storeu_ps(hv, hi);
        for (; tie; tie &= tie - 1) {
            const int b = __builtin_ctz(tie);
            const float *xb = x + b * QK;
            int j = 0;
            while (fabsf(xb[j]) != hv[b]) j++; /* hv[b] = |x|max occurs, and no NaN here */
            mv[b] = xb[j];
        }
        m = _mm256_loadu_ps(mv);
    }
    return m;
}

/* The group PREFETCH_GROUPS ahead is requested while this one computes, so that the
 * compute of a group overlaps the memory traffic of the next ones. */
#define PREFETCH_GROUPS 4
static inline void prefetch_group(const float *p) {
    for (int k = 0; k < G * QK; k += 16) _mm_prefetch((const char *)(p + k), _MM_HINT_T0);
}

/* Runs a group function over a row: whole groups in place, the last partial group through a
 * zero-padded copy (zero blocks are finite and independent, so the real blocks are unchanged). */
#define ROW_OF_GROUPS(group, bs)                                                              \
    const int64_t nb = n / QK;                                                                \
    uint8_t *out = vy;                                                                        \
    int64_t i = 0;                                                                            \
    for (; i + G <= nb; i += G) {                                                             \
        if (i + (PREFETCH_GROUPS + 1) * G <= nb) prefetch_group(x + (i + PREFETCH_GROUPS * G) * QK); \
        group(x + i * QK, out + (size_t)i * (bs));                                            \
    }                                                                                         \
    if (i < nb) {                                                                             \
        float xt[G * QK] = {0};                                                               \
        uint8_t yt[G * (bs)];                                                                 \
        const size_t m = (size_t)(nb - i);                                                    \
        memcpy(xt, x + i * QK, m * QK * sizeof(float));                                       \
        group(xt, yt);                                                                        \
        memcpy(out + (size_t)i * (bs), yt, m * (bs));                                         \
    }

/* Blocks the portable code quantizes (NaN, inf, subnormal scales). */
#define PORTABLE_BLOCKS(mask, fn, bs)                                             \
    for (unsigned s_ = (mask); s_; s_ &= s_ - 1) {                                \
        const int b_ = __builtin_ctz(s_);                                         \
        fn(x + b_ * QK, y + (size_t)b_ * (bs), QK);                               \
    }

/* ---- packing ------------------------------------------------------------------ */

/* 32 int32 in [-128, 127] (elements 0-7, 8-15, 16-23, 24-31) as 32 bytes in order. */
AVX2 static inline __m256i pack_i8_inorder(__m256i q0, __m256i q1, __m256i q2, __m256i q3) {
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));
    return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* 32 int32 in [0, 255] as bytes in the order of the dwords e0-3 e16-19 e8-11 e24-27 |
 * e4-7 e20-23 e12-15 e28-31, which puts element j and j+16 in one 64-bit lane. */
AVX2 static inline __m256i pack_u8_pairs(__m256i q0, __m256i q1, __m256i q2, __m256i q3) {
    return _mm256_packus_epi16(_mm256_packus_epi32(q0, q2), _mm256_packus_epi32(q1, q3));
}

/* Bytes <= 15 in pairs order to the 16 nibble bytes: element j low, j+16 high. The 64-bit
 * shift by 28 moves the upper dword's bytes onto the lower's, 4 bits up. */
AVX2 static inline __m128i pairs_to_nibbles(__m256i p) {
    const __m256i r = _mm256_or_si256(p, _mm256_srli_epi64(p, 28));
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(r, _mm256_setr_epi32(0, 4, 2, 6, 0, 4, 2, 6)));
}

/* Bytes <= 31 in pairs order: bit 4 of element j at bit j of *qh, the nibbles as above.
 * The byte mask holds elements 0-3, 16-19, 8-11, 24-27, 4-7, 20-23, 12-15, 28-31 in its
 * nibbles: swapping nibbles 1 and 4, and 3 and 6, puts them in order. */
AVX2 static inline __m128i pairs_to_5bit(__m256i p, uint32_t *qh) {
    const uint32_t m = (uint32_t)_mm256_movemask_epi8(_mm256_slli_epi16(p, 3));
    const uint32_t t = ((m >> 12) ^ m) & 0x0000F0F0u;
    *qh = m ^ t ^ (t << 12);
    return pairs_to_nibbles(_mm256_and_si256(p, _mm256_set1_epi8(0x0F)));
}

static inline void store_u16(uint8_t *p, uint16_t v) { memcpy(p, &v, sizeof v); }
static inline void store_u32(uint8_t *p, uint32_t v) {
    for (int k = 0; k < 4; k++) p[k] = (uint8_t)(v >> (8 * k));
}

/* ---- Q8_0 ------------------------------------------------------------------------ */

/* In a fast block d = amax/127 is normal, so |x*id| <= amax*id < 127.5 and round gives
 * |q| <= 127: the conversions of quantize.c reduce to roundf, and the pack needs no
 * wrap-around. roundf (ties away) of v is sign(v)*trunc(|v| + 0x1.fffffep-2f): adding
 * the float just below 0.5 never rounds up across an integer, and checked against
 * quantize.c's round_low_byte for every |v| < 2^31. sign_epi32 applies v's sign bit
 * (and leaves 0 at 0). */
AVX2 static inline __m256i round_away(__m256 v) {
    const __m256 av = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
    const __m256i t = _mm256_cvttps_epi32(_mm256_add_ps(av, _mm256_set1_ps(0x1.fffffep-2f)));
    return _mm256_sign_epi32(t, _mm256_castps_si256(v));
}

AVX2 static inline void q8_0_group(const float *restrict x, uint8_t *restrict y) {
    enum { BS = sizeof(block_q8_0) };
    const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF);
    __m256i m[G];
    for (int b = 0; b < G; b++) {
        __m256i a[4];
        for (int k = 0; k < 4; k++)
            a[k] = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(x + b * QK + 8 * k)), absm);
        m[b] = _mm256_max_epi32(_mm256_max_epi32(a[0], a[1]), _mm256_max_epi32(a[2], a[3]));
    }
    /* |x| bits order as the values do; NaN and inf bits are the largest */
    const __m256i amax_i = reduce8_max_epi32(m);
    const __m256 amax = _mm256_castsi256_ps(amax_i);
    const __m256 d = _mm256_div_ps(amax, _mm256_set1_ps(127.0f));
    const __m256 id = _mm256_and_ps(_mm256_div_ps(_mm256_set1_ps(1.0f), d),
                                    _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_NEQ_UQ));
    const unsigned special = mask8(_mm256_or_ps(
        _mm256_castsi256_ps(_mm256_cmpgt_epi32(amax_i, _mm256_set1_epi32(0x7F7FFFFF))), subnormal_lanes(d)));
    float ids[G];
    uint16_t dh[G];
    _mm256_storeu_ps(ids, id);
    _mm_storeu_si128((__m128i *)(void *)dh, _mm256_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT));
    for (int b = 0; b < G; b++) {
        const __m256 vid = _mm256_broadcast_ss(&ids[b]);
        __m256 v[4];
        __m256i q[4];
        load_block(x + b * QK, v);
        for (int k = 0; k < 4; k++) q[k] = round_away(_mm256_mul_ps(v[k], vid));
        uint8_t *yb = y + (size_t)b * BS;
        store_u16(yb, dh[b]);
        _mm256_storeu_si256((__m256i *)(void *)(yb + 2), pack_i8_inorder(q[0], q[1], q[2], q[3]));
    }
    PORTABLE_BLOCKS(special, ct_quantize_q8_0_portable, BS)
}

AVX2 static void quantize_q8_0(const float *restrict x, void *restrict vy, int64_t n) {
    ROW_OF_GROUPS(q8_0_group, sizeof(block_q8_0))
}

/* ---- Q4_0, Q5_0 -------------------------------------------------------------------- */

/* In a fast block d is normal, so |x*id| <= 8*(1 + 2^-22) (16 for Q5_0) and x*id + off lies
 * in (0, hi + 2): truncation gives 0..hi+1, which min(hi, .) clamps as quantize.c does. */
AVX2 static inline void x_0_group(const float *restrict x, uint8_t *restrict y, size_t bs, float div, float off,
                                  int hi, void (*portable)(const float *restrict, void *restrict, int64_t)) {
    __m256 vhi, vlo;
    unsigned nan;
    group_max_min(x, &vhi, &vlo, &nan);
    const __m256 mx = group_signed_absmax(x, vhi, vlo, nan);
    const __m256 d = _mm256_div_ps(mx, _mm256_set1_ps(div));
    const __m256 id = _mm256_and_ps(_mm256_div_ps(_mm256_set1_ps(1.0f), d),
                                    _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_NEQ_UQ));
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    const unsigned special =
        nan | mask8(_mm256_or_ps(_mm256_cmp_ps(_mm256_and_ps(mx, absm), _mm256_set1_ps(FLT_MAX), _CMP_NLE_UQ),
                                 subnormal_lanes(d)));
    float ids[G];
    uint16_t dh[G];
    _mm256_storeu_ps(ids, id);
    _mm_storeu_si128((__m128i *)(void *)dh, _mm256_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT));
    const __m256 voff = _mm256_set1_ps(off);
    const __m256i vhi8 = _mm256_set1_epi8((char)hi);
    for (int b = 0; b < G; b++) {
        const __m256 vid = _mm256_broadcast_ss(&ids[b]);
        __m256 v[4];
        __m256i q[4];
        load_block(x + b * QK, v);
        for (int k = 0; k < 4; k++) q[k] = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(v[k], vid), voff));
        const __m256i p = _mm256_min_epu8(pack_u8_pairs(q[0], q[1], q[2], q[3]), vhi8);
        uint8_t *yb = y + (size_t)b * bs;
        store_u16(yb, dh[b]);
        if (hi == 15) {
            _mm_storeu_si128((__m128i *)(void *)(yb + 2), pairs_to_nibbles(p));
        } else {
            uint32_t qh;
            const __m128i nib = pairs_to_5bit(p, &qh);
            store_u32(yb + 2, qh);
            _mm_storeu_si128((__m128i *)(void *)(yb + 6), nib);
        }
    }
    PORTABLE_BLOCKS(special, portable, bs)
}

AVX2 static inline void q4_0_group(const float *restrict x, uint8_t *restrict y) {
    x_0_group(x, y, sizeof(block_q4_0), -8.0f, 8.5f, 15, ct_quantize_q4_0_portable);
}

AVX2 static inline void q5_0_group(const float *restrict x, uint8_t *restrict y) {
    x_0_group(x, y, sizeof(block_q5_0), -16.0f, 16.5f, 31, ct_quantize_q5_0_portable);
}

AVX2 static void quantize_q4_0(const float *restrict x, void *restrict vy, int64_t n) {
    ROW_OF_GROUPS(q4_0_group, sizeof(block_q4_0))
}

AVX2 static void quantize_q5_0(const float *restrict x, void *restrict vy, int64_t n) {
    ROW_OF_GROUPS(q5_0_group, sizeof(block_q5_0))
}

/* ---- Q4_1, Q5_1 -------------------------------------------------------------------- */

/* In a fast block (finite max - min, normal d) 0 <= x - min <= max - min, so
 * (x - min)*id + 0.5 lies in [0.5, levels + 0.5 + 2^-18): truncation gives 0..levels.
 * A zero min or max takes the sign of the block's first zero, as quantize.c's strict
 * sequential compares keep it. */
AVX2 static inline void x_1_group(const float *restrict x, uint8_t *restrict y, size_t bs, float levels, bool five,
                                  void (*portable)(const float *restrict, void *restrict, int64_t)) {
    __m256 vmax, vmin;
    unsigned nan;
    group_max_min(x, &vmax, &vmin, &nan);
    const __m256 zero = _mm256_setzero_ps();
    unsigned zs = mask8(_mm256_or_ps(_mm256_cmp_ps(vmin, zero, _CMP_EQ_OQ), _mm256_cmp_ps(vmax, zero, _CMP_EQ_OQ)));
    zs &= ~nan;
    if (zs) {
        float mn[G], mx[G];
        _mm256_storeu_ps(mn, vmin);
        _mm256_storeu_ps(mx, vmax);
        for (; zs; zs &= zs - 1) {
            const int b = __builtin_ctz(zs);
            const float *xb = x + b * QK;
            int j = 0;
            while (xb[j] != 0.0f) j++;
            if (mn[b] == 0.0f) mn[b] = xb[j];
            if (mx[b] == 0.0f) mx[b] = xb[j];
        }
        vmin = _mm256_loadu_ps(mn);
        vmax = _mm256_loadu_ps(mx);
    }
    const __m256 range = _mm256_sub_ps(vmax, vmin);
    const __m256 d = _mm256_div_ps(range, _mm256_set1_ps(levels));
    const __m256 id = _mm256_and_ps(_mm256_div_ps(_mm256_set1_ps(1.0f), d), _mm256_cmp_ps(d, zero, _CMP_NEQ_UQ));
    /* range inf or NaN also catches inf in the block */
    const unsigned special =
        nan | mask8(_mm256_or_ps(_mm256_cmp_ps(range, _mm256_set1_ps(FLT_MAX), _CMP_NLE_UQ), subnormal_lanes(d)));
    float ids[G], mins[G];
    uint16_t dh[G], mh[G];
    _mm256_storeu_ps(ids, id);
    _mm256_storeu_ps(mins, vmin);
    _mm_storeu_si128((__m128i *)(void *)dh, _mm256_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128((__m128i *)(void *)mh, _mm256_cvtps_ph(vmin, _MM_FROUND_TO_NEAREST_INT));
    const __m256 half = _mm256_set1_ps(0.5f);
    for (int b = 0; b < G; b++) {
        const __m256 vid = _mm256_broadcast_ss(&ids[b]), vm = _mm256_broadcast_ss(&mins[b]);
        __m256 v[4];
        __m256i q[4];
        load_block(x + b * QK, v);
        for (int k = 0; k < 4; k++)
            q[k] = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(v[k], vm), vid), half));
        const __m256i p = pack_u8_pairs(q[0], q[1], q[2], q[3]);
        uint8_t *yb = y + (size_t)b * bs;
        store_u16(yb, dh[b]);
        store_u16(yb + 2, mh[b]);
        if (!five) {
            _mm_storeu_si128((__m128i *)(void *)(yb + 4), pairs_to_nibbles(_mm256_min_epu8(p, _mm256_set1_epi8(15))));
        } else {
            uint32_t qh;
            const __m128i nib = pairs_to_5bit(p, &qh);
            store_u32(yb + 4, qh);
            _mm_storeu_si128((__m128i *)(void *)(yb + 8), nib);
        }
    }
    PORTABLE_BLOCKS(special, portable, bs)
}

AVX2 static inline void q4_1_group(const float *restrict x, uint8_t *restrict y) {
    x_1_group(x, y, sizeof(block_q4_1), 15.0f, false, ct_quantize_q4_1_portable);
}

AVX2 static inline void q5_1_group(const float *restrict x, uint8_t *restrict y) {
    x_1_group(x, y, sizeof(block_q5_1), 31.0f, true, ct_quantize_q5_1_portable);
}

AVX2 static void quantize_q4_1(const float *restrict x, void *restrict vy, int64_t n) {
    ROW_OF_GROUPS(q4_1_group, sizeof(block_q4_1))
}

AVX2 static void quantize_q5_1(const float *restrict x, void *restrict vy, int64_t n) {
    ROW_OF_GROUPS(q5_1_group, sizeof(block_q5_1))
}

/* ---- IQ4_NL ---------------------------------------------------------------------- */

/* The index. quantize.c's best-index search with its float differences equals
 * L = #{k : a >= m_k}, m_k the midpoints (v[k] + v[k+1])/2 of the value table (checked
 * for every float a). 2m_k are integers and a + a is exact, so a >= m_k is
 * t >= 2m_k with t = floor(a + a), and L is a step function of t. A fast block keeps
 * |a| <= 127.0001, so t is in [-256, 255]; each 32-value range of t (t >> 5, as a 4-bit
 * table index) holds at most two of the 2m_k, and
 * L = BASE[t >> 5] + (t & 31 > TH1[t >> 5]) + (t & 31 > TH2[t >> 5])
 * (checked for every t in range). Index 8..15 are t = -256..-1. */
#define IQ4NL_BASE 8, 9, 11, 12, 13, 14, 14, 15, 0, 1, 1, 2, 3, 4, 5, 7
#define IQ4NL_TH1 13, 5, 26, 25, 29, 31, 9, 31, 24, 31, 4, 11, 13, 11, 6, 22
#define IQ4NL_TH2 31, 30, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31
/* The table values as floats, whose low 16 bits are all 0: bytes 3 and 2 of each. */
#define IQ4NL_VALUES_B3 0xC2, 0xC2, 0xC2, 0xC2, 0xC2, 0xC2, 0xC1, 0xC1, 0x3F, 0x41, 0x41, 0x42, 0x42, 0x42, 0x42, 0x42
#define IQ4NL_VALUES_B2 0xFE, 0xD0, 0xA6, 0x82, 0x44, 0x0C, 0xB0, 0x20, 0x80, 0x50, 0xC8, 0x18, 0x54, 0x8A, 0xB2, 0xE2

#define IQ4NL_GROUP_MAX_EPS 1e-15f

typedef struct {
    __m256 xt[QK]; /* lane b of xt[j] is element j of block b */
    __m256 id2, sumqx, sumq2;
    __m256i first[4], nib[4];
    unsigned special, zero;
} iq4nl_group;

/* Transposes 8 blocks and finds their scales. */
AVX2 static inline void iq4_nl_setup(const float *restrict x, iq4nl_group *h) {
    __m256 vhi = _mm256_set1_ps(-INFINITY), vlo = _mm256_set1_ps(INFINITY), un = _mm256_setzero_ps();
    for (int c = 0; c < QK / 8; c++) {
        __m256 r[G];
        for (int b = 0; b < G; b++) r[b] = _mm256_loadu_ps(x + b * QK + 8 * c);
        ct_avx2_transpose8(r);
        for (int j = 0; j < 8; j += 2) {
            vhi = _mm256_max_ps(vhi, _mm256_max_ps(r[j], r[j + 1]));
            vlo = _mm256_min_ps(vlo, _mm256_min_ps(r[j], r[j + 1]));
            un = _mm256_or_ps(un, _mm256_cmp_ps(r[j], r[j + 1], _CMP_UNORD_Q));
        }
        for (int j = 0; j < 8; j++) h->xt[8 * c + j] = r[j];
    }
    const unsigned nan = mask8(un);
    const __m256 mx = group_signed_absmax(x, vhi, vlo, nan);
    const __m256 amax = _mm256_and_ps(mx, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
    h->special = nan | mask8(_mm256_cmp_ps(amax, _mm256_set1_ps(FLT_MAX), _CMP_NLE_UQ));
    h->zero = mask8(_mm256_cmp_ps(amax, _mm256_set1_ps(IQ4NL_GROUP_MAX_EPS), _CMP_LT_OQ)) & ~h->special;
    /* d0 = max/-127 is normal for 1e-15 <= |max| <= FLT_MAX, so id is accurate and |a| <= 127.0001.
     * (2id)*x is 2(id*x) exactly but where it is subnormal; there floor gives -1 or 0 either
     * way, which lie in one index interval. */
    const __m256 id = _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_div_ps(mx, _mm256_set1_ps(-127.0f)));
    h->id2 = _mm256_add_ps(id, id);
    h->sumqx = h->sumq2 = _mm256_setzero_ps();
}

/* Elements 4i..4i+3 of the 8 blocks: indices, their values, the two sums. */
AVX2 static inline void iq4_nl_step(iq4nl_group *h, int i) {
    const __m256i tbase = _mm256_setr_epi8(IQ4NL_BASE, IQ4NL_BASE), tth1 = _mm256_setr_epi8(IQ4NL_TH1, IQ4NL_TH1);
    const __m256i tth2 = _mm256_setr_epi8(IQ4NL_TH2, IQ4NL_TH2);
    const __m256i tv3 = _mm256_setr_epi8((char)IQ4NL_VALUES_B3, (char)IQ4NL_VALUES_B3);
    const __m256i tv2 = _mm256_setr_epi8((char)IQ4NL_VALUES_B2, (char)IQ4NL_VALUES_B2);
    /* per 128-bit lane, a 4x4 byte transpose: rows of 4 elements into rows of 4 blocks */
    const __m256i tr4 = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                         0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m256i t[4];
    for (int k = 0; k < 4; k++) {
        const __m256 a2 = _mm256_mul_ps(h->id2, h->xt[4 * i + k]);
        t[k] = _mm256_cvttps_epi32(_mm256_round_ps(a2, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
    }
    const __m256i t01 = _mm256_packs_epi32(t[0], t[1]), t23 = _mm256_packs_epi32(t[2], t[3]);
    /* bytes: lane 0 holds elements 0-3 of blocks 0-3 (element-major), lane 1 blocks 4-7 */
    const __m256i th = _mm256_and_si256(_mm256_packs_epi16(_mm256_srai_epi16(t01, 5), _mm256_srai_epi16(t23, 5)),
                                        _mm256_set1_epi8(0x0F));
    const __m256i tl = _mm256_packs_epi16(_mm256_and_si256(t01, _mm256_set1_epi16(31)),
                                          _mm256_and_si256(t23, _mm256_set1_epi16(31)));
    __m256i l = _mm256_sub_epi8(_mm256_shuffle_epi8(tbase, th), _mm256_cmpgt_epi8(tl, _mm256_shuffle_epi8(tth1, th)));
    l = _mm256_sub_epi8(l, _mm256_cmpgt_epi8(tl, _mm256_shuffle_epi8(tth2, th)));
    if (i < 4) h->first[i] = l;
    else h->nib[i - 4] = _mm256_shuffle_epi8(_mm256_or_si256(h->first[i - 4], _mm256_slli_epi16(l, 4)), tr4);
    /* q = value[L] as floats, one element of the 8 blocks per vector: the upper 16 bits of
     * each float from two byte lookups, interleaved above 16 zero bits */
    const __m256i v2 = _mm256_shuffle_epi8(tv2, l), v3 = _mm256_shuffle_epi8(tv3, l), z = _mm256_setzero_si256();
    const __m256i w01 = _mm256_unpacklo_epi8(v2, v3), w23 = _mm256_unpackhi_epi8(v2, v3);
    const __m256 q[4] = {_mm256_castsi256_ps(_mm256_unpacklo_epi16(z, w01)),
                         _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, w01)),
                         _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, w23)),
                         _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, w23))};
    for (int k = 0; k < 4; k++) {
        const __m256 v = h->xt[4 * i + k];
        const __m256 wq = _mm256_mul_ps(_mm256_mul_ps(v, v), q[k]);
        h->sumqx = _mm256_add_ps(h->sumqx, _mm256_mul_ps(wq, v));
        h->sumq2 = _mm256_add_ps(h->sumq2, _mm256_mul_ps(wq, q[k]));
    }
}

/* The scales and nibbles of the 8 blocks; zero and special blocks last. */
AVX2 static inline void iq4_nl_finish(const float *restrict x, uint8_t *restrict y, const iq4nl_group *h) {
    enum { BS = sizeof(block_iq4_nl) };
    /* nib[i] holds, per block, the bytes of elements 4i..4i+3 (with 4i+16.. in the high
     * nibbles) as one dword: a 4x8 dword transpose gives each block its 16 bytes */
    const __m256i a01 = _mm256_unpacklo_epi32(h->nib[0], h->nib[1]), b01 = _mm256_unpackhi_epi32(h->nib[0], h->nib[1]);
    const __m256i a23 = _mm256_unpacklo_epi32(h->nib[2], h->nib[3]), b23 = _mm256_unpackhi_epi32(h->nib[2], h->nib[3]);
    const __m256i o[4] = {_mm256_unpacklo_epi64(a01, a23), _mm256_unpackhi_epi64(a01, a23),
                          _mm256_unpacklo_epi64(b01, b23), _mm256_unpackhi_epi64(b01, b23)};
    for (int b = 0; b < 4; b++) {
        _mm_storeu_si128((__m128i *)(void *)(y + (size_t)b * BS + 2), _mm256_castsi256_si128(o[b]));
        _mm_storeu_si128((__m128i *)(void *)(y + (size_t)(b + 4) * BS + 2), _mm256_extracti128_si256(o[b], 1));
    }
    /* ggml's `sumq2 > 0 ? sumqx/sumq2 : 0` (NaN blocks are special and never get here) */
    const __m256 d = _mm256_and_ps(_mm256_div_ps(h->sumqx, h->sumq2),
                                   _mm256_cmp_ps(h->sumq2, _mm256_setzero_ps(), _CMP_GT_OQ));
    __m128i dh = _mm256_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT);
    /* a NaN d (huge finite x overflows the products) is stored as the canonical NaN */
    const __m256i dnan = _mm256_castps_si256(_mm256_cmp_ps(d, d, _CMP_UNORD_Q));
    const __m128i nan_d = _mm_packs_epi32(_mm256_castsi256_si128(dnan), _mm256_extracti128_si256(dnan, 1));
    dh = _mm_blendv_epi8(dh, _mm_set1_epi16((short)CT_IQ4_NL_NAN_SCALE), nan_d);
    uint16_t dv[G];
    _mm_storeu_si128((__m128i *)(void *)dv, dh);
    for (int b = 0; b < G; b++) store_u16(y + (size_t)b * BS, dv[b]);
    for (unsigned z = h->zero; z; z &= z - 1) {
        uint8_t *yb = y + (size_t)__builtin_ctz(z) * BS;
        store_u16(yb, 0);
        memset(yb + 2, 0x88, QK / 2);
    }
    PORTABLE_BLOCKS(h->special, ct_quantize_iq4_nl_portable, BS)
}

AVX2 static inline void iq4_nl_group(const float *restrict x, uint8_t *restrict y) {
    iq4nl_group h;
    iq4_nl_setup(x, &h);
    for (int i = 0; i < QK / 4; i++) iq4_nl_step(&h, i);
    iq4_nl_finish(x, y, &h);
}

AVX2 static void quantize_iq4_nl(const float *restrict x, void *restrict vy, int64_t n) {
    ROW_OF_GROUPS(iq4_nl_group, sizeof(block_iq4_nl))
}

ct_quantize_fn ct_quantize_block_fn_avx2(ct_type type) {
    switch (type) {
    case CT_TYPE_Q8_0: return quantize_q8_0;
    case CT_TYPE_Q4_0: return quantize_q4_0;
    case CT_TYPE_Q4_1: return quantize_q4_1;
    case CT_TYPE_Q5_0: return quantize_q5_0;
    case CT_TYPE_Q5_1: return quantize_q5_1;
    case CT_TYPE_IQ4_NL: return quantize_iq4_nl;
    default: return NULL;
    }
}

#else

ct_quantize_fn ct_quantize_block_fn_avx2(ct_type type) {
    (void)type;
    return NULL;
}

#endif

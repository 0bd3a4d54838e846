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

#include "core/cpu_features.h"

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma,f16c")))

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

/* Kernels are written once for ny rows (NY constant after inlining, so the
 * per-row accumulators live in registers); x is loaded and unpacked once per
 * block for all rows. */
#define ALWAYS_INLINE __attribute__((always_inline)) inline
#define UNROLL_NY _Pragma("GCC unroll 4")
#define UNROLL_2 _Pragma("GCC unroll 2")
/* bytes of src0 fetched ahead of the kernels (a prefetch past the row's end is harmless) */
#define PREFETCH_AHEAD 1024
#define UNROLL_4 _Pragma("GCC unroll 4")
/* Accumulators per y row of the super-block kernels with a float scale per 32-value
 * block (Q2_K, Q3_K, IQ4_XS): with one FMA chain a row, a mat-vec (one or two rows)
 * waits on the FMA's latency at every block. */
#define CHAINS(NY) ((NY) == 1 ? 4 : (NY) == 2 ? 2 : 1)

AVX2 static inline __m256 sum_chains(const __m256 *acc, int na) {
    return na == 4 ? _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]))
         : na == 2 ? _mm256_add_ps(acc[0], acc[1])
                   : acc[0];
}

/* ---- float rows --------------------------------------------------------- */

enum { F_F32, F_F16, F_BF16 };

AVX2 static ALWAYS_INLINE __m256 load8_f(const unsigned char *x, int64_t i, int kind) {
    if (kind == F_F32) return _mm256_loadu_ps((const float *)(x + 4 * i));
    const __m128i h = _mm_loadu_si128((const __m128i *)(x + 2 * i));
    if (kind == F_F16) return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

AVX2 static ALWAYS_INLINE float load1_f(const unsigned char *x, int64_t i, int kind) {
    if (kind == F_F32) {
        float f;
        memcpy(&f, x + 4 * i, sizeof f);
        return f;
    }
    uint16_t h;
    memcpy(&h, x + 2 * i, sizeof h);
    return kind == F_F16 ? fp16_f32(h) : ct_bf16_to_fp32_inline(h);
}

/* Two accumulator chains per dot when ny <= 2 (the FMA latency needs them),
 * one when more rows give enough chains; two x rows halve the y loads, which
 * bound the kernel otherwise. */
AVX2 static ALWAYS_INLINE void dot_f_n(int64_t k, const void *vx, size_t bx, const int NX, const void *const *vy,
                                       const int NY, float *out, int kind) {
    const unsigned char *x[2] = {vx, (const unsigned char *)vx + (NX > 1 ? bx : 0)};
    const int NA = NY <= 2 ? 2 : 1;
    const float *y[CT_DOT_NY];
    __m256 acc[2][CT_DOT_NY][2];
    UNROLL_NY for (int j = 0; j < NY; j++) {
        y[j] = vy[j];
        UNROLL_2 for (int r = 0; r < 2; r++) acc[r][j][0] = acc[r][j][1] = _mm256_setzero_ps();
    }
    const int64_t xs = kind == F_F32 ? 4 : 2;
    int64_t i = 0;
    for (; i + 8 * NA <= k; i += 8 * NA) {
        _mm_prefetch((const char *)x[0] + xs * i + PREFETCH_AHEAD, _MM_HINT_T0);
        if (NX > 1) _mm_prefetch((const char *)x[1] + xs * i + PREFETCH_AHEAD, _MM_HINT_T0);
        UNROLL_2 for (int a = 0; a < NA; a++) {
            __m256 xv[2];
            UNROLL_2 for (int r = 0; r < NX; r++) xv[r] = load8_f(x[r], i + 8 * a, kind);
            UNROLL_NY for (int j = 0; j < NY; j++) {
                const __m256 yv = _mm256_loadu_ps(y[j] + i + 8 * a);
                UNROLL_2 for (int r = 0; r < NX; r++) acc[r][j][a] = _mm256_fmadd_ps(xv[r], yv, acc[r][j][a]);
            }
        }
    }
    for (; i + 8 <= k; i += 8) {
        __m256 xv[2];
        UNROLL_2 for (int r = 0; r < NX; r++) xv[r] = load8_f(x[r], i, kind);
        UNROLL_NY for (int j = 0; j < NY; j++) {
            const __m256 yv = _mm256_loadu_ps(y[j] + i);
            UNROLL_2 for (int r = 0; r < NX; r++) acc[r][j][0] = _mm256_fmadd_ps(xv[r], yv, acc[r][j][0]);
        }
    }
    UNROLL_2 for (int r = 0; r < NX; r++) {
        UNROLL_NY for (int j = 0; j < NY; j++) {
            float sum = hsum_ps(NA > 1 ? _mm256_add_ps(acc[r][j][0], acc[r][j][1]) : acc[r][j][0]);
            for (int64_t t = i; t < k; t++) {
                float yv;
                memcpy(&yv, y[j] + t, sizeof yv);
                sum += load1_f(x[r], t, kind) * yv;
            }
            out[r * NY + j] = sum;
        }
    }
}

/* nx > 2 rows: pairs, then one */
#define MULTI_F(name, kind)                                                                                  \
    AVX2 static void name(int64_t k, const void *x, size_t bx, int nx, const void *const *y, int ny, float *out) { \
        for (; nx > 2; nx -= 2, x = (const unsigned char *)x + 2 * bx, out += 2 * ny)                     \
            name(k, x, bx, 2, y, ny, out);                                                                   \
        if (nx > 1) {                                                                                        \
            switch (ny) {                                                                                    \
            case 1: dot_f_n(k, x, bx, 2, y, 1, out, kind); return;                                           \
            case 2: dot_f_n(k, x, bx, 2, y, 2, out, kind); return;                                           \
            case 3: dot_f_n(k, x, bx, 2, y, 3, out, kind); return;                                           \
            default: dot_f_n(k, x, bx, 2, y, 4, out, kind); return;                                          \
            }                                                                                                \
        }                                                                                                    \
        switch (ny) {                                                                                        \
        case 1: dot_f_n(k, x, bx, 1, y, 1, out, kind); return;                                               \
        case 2: dot_f_n(k, x, bx, 1, y, 2, out, kind); return;                                               \
        case 3: dot_f_n(k, x, bx, 1, y, 3, out, kind); return;                                               \
        default: dot_f_n(k, x, bx, 1, y, 4, out, kind); return;                                              \
        }                                                                                                    \
    }
MULTI_F(dot_f32, F_F32)
MULTI_F(dot_f16, F_F16)
MULTI_F(dot_bf16, F_BF16)

/* One entry point per kernel; the switch instantiates the NY variants. */
#define MULTI(name, yt, body)                                                                                \
    AVX2 static void name(int64_t n, const void *vx, size_t bx, int nx, const yt *const *y, int ny, float *out) { \
        for (int r = 0; r < nx; r++) {                                                                       \
            const unsigned char *x = (const unsigned char *)vx + (size_t)r * bx;                             \
            float *o = out + r * ny;                                                                         \
            switch (ny) {                                                                                    \
            case 1: body(n, x, y, 1, o); break;                                                              \
            case 2: body(n, x, y, 2, o); break;                                                              \
            case 3: body(n, x, y, 3, o); break;                                                              \
            default: body(n, x, y, 4, o); break;                                                             \
            }                                                                                                \
        }                                                                                                    \
    }


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

/* [x0, x1, 0, 0] for two fp16 factors of x */
AVX2 static inline __m128 pair_x(ct_fp16 h0, ct_fp16 h1) {
    return _mm_cvtph_ps(_mm_cvtsi32_si128((int)((uint32_t)h0 | (uint32_t)h1 << 16)));
}

/* [x0*yd0, x1*yd1, 0, 0] for xd = pair_x(); *s = [ys0, ys1, ys0, ys1] */
AVX2 static inline __m128 pair_scales(__m128 xd, const ct_block_qy *y, __m128 *s) {
    const __m128 ds = _mm_unpacklo_ps(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)&y[0])),
                                      _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)&y[1])));
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

AVX2 static inline __m256i q5_values(const uint8_t *qs, const uint8_t *qh) {
    return _mm256_or_si256(nibbles_32(qs), _mm256_and_si256(bits_32(qh), _mm256_set1_epi8(0x10)));
}

/* 5-bit values of a pair of blocks in nibbles_pair's order: bit 4 from qh */
AVX2 static inline void q5_pair(const uint8_t *qs0, const uint8_t *qh0, const uint8_t *qs1, const uint8_t *qh1,
                                __m256i *lo, __m256i *hi) {
    nibbles_pair(qs0, qs1, lo, hi);
    const __m256i b4 = _mm256_set1_epi8(0x10);
    const __m256i h0 = _mm256_and_si256(bits_32(qh0), b4), h1 = _mm256_and_si256(bits_32(qh1), b4);
    *lo = _mm256_or_si256(*lo, _mm256_permute2x128_si256(h0, h1, 0x20));
    *hi = _mm256_or_si256(*hi, _mm256_permute2x128_si256(h0, h1, 0x31));
}

/* Q4_0, Q4_1, Q5_0 and Q5_1: d, then the min m (has_m), then qh (q5), then qs; the
 * offset -8 (Q4_0) or -16 (Q5_0) goes through the block sum. pair_dot_u4's int16
 * sums hold 5-bit values too (4 * 31 * 127 < 2^15). */
AVX2 static ALWAYS_INLINE void dot_q45_n(int64_t nb, const void *vx, const ct_block_qy *const *y, const int NY,
                                         float *out, int has_m, int q5) {
    const size_t bs = q5 ? (has_m ? sizeof(block_q5_1) : sizeof(block_q5_0))
                         : (has_m ? sizeof(block_q4_1) : sizeof(block_q4_0));
    const size_t qh_at = has_m ? offsetof(block_q5_1, qh) : offsetof(block_q5_0, qh);
    const size_t qs_at = q5 ? (has_m ? offsetof(block_q5_1, qs) : offsetof(block_q5_0, qs))
                            : (has_m ? offsetof(block_q4_1, qs) : offsetof(block_q4_0, qs));
    const float off = q5 ? 16.0f : 8.0f;
    const unsigned char *xb = vx;
    __m256 acc[CT_DOT_NY];
    __m128 corr[CT_DOT_NY];
    UNROLL_NY for (int j = 0; j < NY; j++) {
        acc[j] = _mm256_setzero_ps();
        corr[j] = _mm_setzero_ps();
    }
#define QB(i) (xb + (size_t)(i) * bs)
#define Q_D(i) (((const block_q4_0 *)QB(i))->d)  /* d first in all four */
#define Q_M(i) (((const block_q4_1 *)QB(i))->m)  /* m second in Q4_1 and Q5_1 (asserted below) */
#define Q_QS(i) (QB(i) + qs_at)
#define Q_QH(i) (QB(i) + qh_at)
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        __m256i lo, hi;
        _mm_prefetch((const char *)xb + (size_t)i * bs + PREFETCH_AHEAD, _MM_HINT_T0);
        if (q5) q5_pair(Q_QS(i), Q_QH(i), Q_QS(i + 1), Q_QH(i + 1), &lo, &hi);
        else nibbles_pair(Q_QS(i), Q_QS(i + 1), &lo, &hi);
        const __m128 xd = pair_x(Q_D(i), Q_D(i + 1));
        const __m128 xm = has_m ? pair_x(Q_M(i), Q_M(i + 1)) : xd;
        UNROLL_NY for (int j = 0; j < NY; j++) {
            __m128 s;
            const __m256i p = pair_dot_u4(lo, hi, y[j] + i);
            const __m128 dd = pair_scales(xd, y[j] + i, &s);
            acc[j] = _mm256_fmadd_ps(bcast_pair(dd), _mm256_cvtepi32_ps(p), acc[j]);
            corr[j] = _mm_fmadd_ps(has_m ? pair_scales(xm, y[j] + i, &s) : dd, s, corr[j]);
        }
    }
    UNROLL_NY for (int j = 0; j < NY; j++) {
        float c = hsum128(corr[j]);
        __m256 a = acc[j];
        for (int64_t t = i; t < nb; t++) {
            const ct_block_qy *yt = y[j] + t;
            const float d0 = fp16_f32(Q_D(t)) * yt->d;
            const __m256i v = q5 ? q5_values(Q_QS(t), Q_QH(t)) : nibbles_32(Q_QS(t));
            const __m256i p0 = dot_u8i8(v, load_qy(yt));
            a = _mm256_fmadd_ps(_mm256_set1_ps(d0), _mm256_cvtepi32_ps(p0), a);
            c += has_m ? fp16_f32(Q_M(t)) * yt->d * yt->s : d0 * yt->s;
        }
        out[j] = has_m ? hsum_ps(a) + c : hsum_ps(a) - off * c;
    }
#undef QB
#undef Q_D
#undef Q_M
#undef Q_QS
#undef Q_QH
}

_Static_assert(offsetof(block_q5_1, m) == offsetof(block_q4_1, m), "Q_M reads Q5_1's m as Q4_1's");

#define DOT_Q4_0_N(n, x, y, NY, out) dot_q45_n(n, x, y, NY, out, 0, 0)
#define DOT_Q4_1_N(n, x, y, NY, out) dot_q45_n(n, x, y, NY, out, 1, 0)
#define DOT_Q5_0_N(n, x, y, NY, out) dot_q45_n(n, x, y, NY, out, 0, 1)
#define DOT_Q5_1_N(n, x, y, NY, out) dot_q45_n(n, x, y, NY, out, 1, 1)
MULTI(dot_q4_0, ct_block_qy, DOT_Q4_0_N)
MULTI(dot_q4_1, ct_block_qy, DOT_Q4_1_N)
MULTI(dot_q5_0, ct_block_qy, DOT_Q5_0_N)
MULTI(dot_q5_1, ct_block_qy, DOT_Q5_1_N)

/* Q8_0 (iq = 0) and IQ4_NL (iq = 1, signed table values) */
AVX2 static ALWAYS_INLINE __m256i s8_values(const void *vx, int64_t i, int iq, __m256i table, float *xd) {
    if (iq) {
        const block_iq4_nl *x = (const block_iq4_nl *)vx + i;
        *xd = fp16_f32(x->d);
        return _mm256_shuffle_epi8(table, nibbles_32(x->qs));
    }
    const block_q8_0 *x = (const block_q8_0 *)vx + i;
    *xd = fp16_f32(x->d);
    return _mm256_loadu_si256((const __m256i *)x->qs);
}

/* |x| and sign(x) once per block; even and odd blocks in two chains per row */
AVX2 static ALWAYS_INLINE void dot_s8_n(int64_t nb, const void *vx, const ct_block_qy *const *y, const int NY,
                                        float *out, int iq) {
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)ct_kvalues_iq4nl));
    __m256 acc0[CT_DOT_NY], acc1[CT_DOT_NY];
    UNROLL_NY for (int j = 0; j < NY; j++) {
        acc0[j] = _mm256_setzero_ps();
        acc1[j] = acc0[j];
    }
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        float xd0, xd1;
        _mm_prefetch((const char *)vx + (size_t)i * (iq ? sizeof(block_iq4_nl) : sizeof(block_q8_0)) + PREFETCH_AHEAD,
                     _MM_HINT_T0);
        const __m256i v0 = s8_values(vx, i, iq, table, &xd0), v1 = s8_values(vx, i + 1, iq, table, &xd1);
        const __m256i a0 = _mm256_sign_epi8(v0, v0), a1 = _mm256_sign_epi8(v1, v1);
        const __m256 xv0 = _mm256_set1_ps(xd0), xv1 = _mm256_set1_ps(xd1);
        UNROLL_NY for (int j = 0; j < NY; j++) {
            const ct_block_qy *yi = y[j] + i;
            const __m256i p0 = dot_u8i8(a0, _mm256_sign_epi8(load_qy(yi), v0));
            const __m256i p1 = dot_u8i8(a1, _mm256_sign_epi8(load_qy(yi + 1), v1));
            acc0[j] = _mm256_fmadd_ps(_mm256_mul_ps(xv0, _mm256_broadcast_ss(&yi[0].d)), _mm256_cvtepi32_ps(p0), acc0[j]);
            acc1[j] = _mm256_fmadd_ps(_mm256_mul_ps(xv1, _mm256_broadcast_ss(&yi[1].d)), _mm256_cvtepi32_ps(p1), acc1[j]);
        }
    }
    if (i < nb) {
        float xd0;
        const __m256i v0 = s8_values(vx, i, iq, table, &xd0), a0 = _mm256_sign_epi8(v0, v0);
        const __m256 xv0 = _mm256_set1_ps(xd0);
        UNROLL_NY for (int j = 0; j < NY; j++) {
            const ct_block_qy *yi = y[j] + i;
            const __m256i p0 = dot_u8i8(a0, _mm256_sign_epi8(load_qy(yi), v0));
            acc0[j] = _mm256_fmadd_ps(_mm256_mul_ps(xv0, _mm256_broadcast_ss(&yi->d)), _mm256_cvtepi32_ps(p0), acc0[j]);
        }
    }
    UNROLL_NY for (int j = 0; j < NY; j++) out[j] = hsum_ps(_mm256_add_ps(acc0[j], acc1[j]));
}

#define DOT_Q8_0_N(n, x, y, NY, out) dot_s8_n(n, x, y, NY, out, 0)
#define DOT_IQ4_NL_N(n, x, y, NY, out) dot_s8_n(n, x, y, NY, out, 1)
MULTI(dot_q8_0, ct_block_qy, DOT_Q8_0_N)
MULTI(dot_iq4_nl, ct_block_qy, DOT_IQ4_NL_N)

/* ---- 256-element super-blocks (y: 8 blocks each) ------------------------- */

/* A K4 super-block's eight 6-bit scales and mins (12 bytes, the ggml layout) as bytes
 * sc[0..7] and m[0..7], by 32-bit words: scales 0-3 are the low 6 bits of bytes 0-3,
 * mins 0-3 of bytes 4-7; scales 4-7 take the low nibbles of bytes 8-11 and the top 2
 * bits of bytes 0-3, mins 4-7 the high nibbles and the top 2 bits of bytes 4-7. */
static inline void scales_mins_k4(const uint8_t *q, uint64_t *sc, uint64_t *m) {
    uint32_t w[3];
    memcpy(w, q, sizeof w);
    const uint32_t low6 = 0x3F3F3F3Fu, nib = 0x0F0F0F0Fu, top2 = 0x03030303u;
    const uint32_t sc_lo = w[0] & low6, m_lo = w[1] & low6;
    const uint32_t sc_hi = (w[2] & nib) | (((w[0] >> 6) & top2) << 4);
    const uint32_t m_hi = ((w[2] >> 4) & nib) | (((w[1] >> 6) & top2) << 4);
    *sc = (uint64_t)sc_lo | ((uint64_t)sc_hi << 32);
    *m = (uint64_t)m_lo | ((uint64_t)m_hi << 32);
}

/* Of 8 consecutive blocks: [y0.d, ..., y7.d] into *d and [y0.d*y0.s, ..., y7.d*y7.s]
 * (the mins term of a super-block) into *ds. */
AVX2 static inline void ds8(const ct_block_qy *y, __m256 *d, __m256 *ds) {
    __m128i p[4];
    for (int t = 0; t < 4; t++)
        p[t] = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)&y[2 * t]),
                                  _mm_loadl_epi64((const __m128i *)&y[2 * t + 1]));
    const __m256 a = _mm256_castsi256_ps(_mm256_set_m128i(p[2], p[0])); /* d0 s0 d1 s1 | d4 s4 d5 s5 */
    const __m256 b = _mm256_castsi256_ps(_mm256_set_m128i(p[3], p[1])); /* d2 s2 d3 s3 | d6 s6 d7 s7 */
    *d = _mm256_shuffle_ps(a, b, 0x88);
    *ds = _mm256_mul_ps(*d, _mm256_shuffle_ps(a, b, 0xDD));
}

/* Whether the eight y blocks of a super-block share one finite d, as the quantizer
 * makes them for Q4_K, Q5_K and Q6_K unless a NaN or an infinity is among them
 * (ct_qy_group); integer compares of the bits, off the vector ports. */
static inline bool same_d(const ct_block_qy *y) {
    uint32_t d[CT_QY_GROUP], diff = 0;
    for (int b = 0; b < CT_QY_GROUP; b++) memcpy(&d[b], &y[b].d, sizeof d[b]);
    for (int b = 1; b < CT_QY_GROUP; b++) diff |= d[b] ^ d[0];
    return diff == 0 && (d[0] & 0x7F800000u) != 0x7F800000u;
}

/* same_d from the eight d already in a register (no loads: those of a kernel with
 * several y rows compete with its block loads). */
AVX2 static inline bool same_d8(__m256 d8) {
    const __m256 d0 = _mm256_permutevar8x32_ps(d8, _mm256_setzero_si256());
    const __m256 abs0 = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), d0);
    const __m256 finite = _mm256_cmp_ps(abs0, _mm256_set1_ps(FLT_MAX), _CMP_LE_OQ);
    return _mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(d8, d0, _CMP_EQ_OQ), finite)) == 0xFF;
}

/* A row with a super-block whose y blocks do not share one d: the portable kernel's
 * per-block sums (out of the kernels' loops, whose registers a call would spill). */
static float dot_row_portable(ct_type type, int64_t nb, const void *x, const ct_block_qy *y) {
    float v;
    ct_cpu_dot_q_portable(type)(nb, x, 0, 1, &y, 1, &v);
    return v;
}

/* Q4_K and Q5_K share everything but the fifth bit (q5 = 1 reads qh). The y blocks of
 * a super-block share one d, so the eight sub-blocks' int32 sums, each times its
 * integer scale (a 16-bit lane shuffled out of one register), add up exactly before
 * one float multiply; the mins term takes each block's d * s. */
AVX2 static ALWAYS_INLINE void dot_k4_n(int64_t nb, const void *vx, const ct_block_qy *const *y, const int NY,
                                        float *out, int q5) {
    const size_t bs = q5 ? sizeof(block_q5_K) : sizeof(block_q4_K);
    const __m256i m4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
    __m256 acc[CT_DOT_NY];
    int split[CT_DOT_NY]; /* a super-block's y blocks with unequal d: the row goes the per-block way */
    UNROLL_NY for (int j = 0; j < NY; j++) {
        acc[j] = _mm256_setzero_ps();
        split[j] = 0;
    }
    for (int64_t i = 0; i < nb / 8; i++) {
        const unsigned char *b = (const unsigned char *)vx + (size_t)i * bs;
        const uint8_t *scales, *qs, *qh = NULL;
        for (size_t o = 0; o < bs; o += 64) _mm_prefetch((const char *)b + PREFETCH_AHEAD + o, _MM_HINT_T0);
        ct_fp16 hd, hdmin;
        if (q5) {
            const block_q5_K *x = (const block_q5_K *)b;
            scales = x->scales, qs = x->qs, qh = x->qh, hd = x->d, hdmin = x->dmin;
        } else {
            const block_q4_K *x = (const block_q4_K *)b;
            scales = x->scales, qs = x->qs, hd = x->d, hdmin = x->dmin;
        }
        uint64_t sc8, m8;
        scales_mins_k4(scales, &sc8, &m8);
        const float dx = fp16_f32(hd);
        /* dmin * m per sub-block */
        const __m256i m32 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)&m8));
        const __m256 mv = _mm256_mul_ps(_mm256_set1_ps(fp16_f32(hdmin)), _mm256_cvtepi32_ps(m32));
        /* the eight scales as 16-bit lanes, in both halves */
        const __m256i scw = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)&sc8)));
        __m256i isum[CT_DOT_NY];
        UNROLL_NY for (int j = 0; j < NY; j++) {
            __m256 d8, ds;
            ds8(y[j] + 8 * i, &d8, &ds);
            split[j] |= !same_d8(d8);
            acc[j] = _mm256_fnmadd_ps(mv, ds, acc[j]);
            isum[j] = _mm256_setzero_si256();
        }
        __m256i hb = q5 ? _mm256_loadu_si256((const __m256i *)qh) : _mm256_setzero_si256();
        UNROLL_4 for (int c = 0; c < 4; c++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * c));
            __m256i lo = _mm256_and_si256(q, m4);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            if (q5) {
                lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(hb, one), 4));
                hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 1), one), 4));
                hb = _mm256_srli_epi16(hb, 2);
            }
            /* 16-bit lane k of scw to every lane: bytes 2k, 2k + 1 */
            const __m256i s0 = _mm256_shuffle_epi8(scw, _mm256_set1_epi16((short)(0x0100 * (4 * c + 1) + 4 * c)));
            const __m256i s1 = _mm256_shuffle_epi8(scw, _mm256_set1_epi16((short)(0x0100 * (4 * c + 3) + 4 * c + 2)));
            UNROLL_NY for (int j = 0; j < NY; j++) {
                const ct_block_qy *y0 = y[j] + 8 * i + 2 * c, *y1 = y0 + 1;
                const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load_qy(y0)), s0);
                const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load_qy(y1)), s1);
                isum[j] = _mm256_add_epi32(isum[j], _mm256_add_epi32(p0, p1));
            }
        }
        UNROLL_NY for (int j = 0; j < NY; j++)
            acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(dx * y[j][8 * i].d), _mm256_cvtepi32_ps(isum[j]), acc[j]);
    }
    UNROLL_NY for (int j = 0; j < NY; j++)
        out[j] = split[j] ? dot_row_portable(q5 ? CT_TYPE_Q5_K : CT_TYPE_Q4_K, nb, vx, y[j]) : hsum_ps(acc[j]);
}

#define DOT_Q4_K_N(n, x, y, NY, out) dot_k4_n(n, x, y, NY, out, 0)
#define DOT_Q5_K_N(n, x, y, NY, out) dot_k4_n(n, x, y, NY, out, 1)
MULTI(dot_q4_K, ct_block_qy, DOT_Q4_K_N)
MULTI(dot_q5_K, ct_block_qy, DOT_Q5_K_N)

/* Byte shuffles of scale_pair: for k, bytes 4k, 4k + 1 repeated in the low 16 bytes,
 * 4k + 2, 4k + 3 in the high 16 (a table: GCC builds the constant in registers
 * at every use otherwise). */
static const uint8_t scale_pair_ctl[4][32] __attribute__((aligned(32))) = {
#define SP_HALF(a) a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1
    {SP_HALF(0), SP_HALF(2)}, {SP_HALF(4), SP_HALF(6)}, {SP_HALF(8), SP_HALF(10)}, {SP_HALF(12), SP_HALF(14)},
#undef SP_HALF
};

/* Of eight 16-bit scales in both 128-bit halves of sc16: scale 2k to every 16-bit
 * lane of the low half, scale 2k + 1 to the high half (the two 16-value halves of
 * 32-value block k). */
AVX2 static ALWAYS_INLINE __m256i scale_pair(__m256i sc16, int k) {
    return _mm256_shuffle_epi8(sc16, _mm256_load_si256((const __m256i *)scale_pair_ctl[k]));
}

/* Q6_K: values less 32 through the sign trick, each 16-value half times its int8
 * scale; a super-block's sums add up exactly before one float multiply (same_d). */
AVX2 static ALWAYS_INLINE void dot_q6_K_n(int64_t nb, const void *vx, const ct_block_qy *const *y, const int NY,
                                          float *out) {
    const block_q6_K *x = vx;
    const __m256i m4 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(3), off = _mm256_set1_epi8(32);
    __m256 acc[CT_DOT_NY];
    int split[CT_DOT_NY]; /* as in dot_k4_n */
    UNROLL_NY for (int j = 0; j < NY; j++) {
        acc[j] = _mm256_setzero_ps();
        split[j] = 0;
    }
    for (int64_t i = 0; i < nb / 8; i++) {
        const float dx = fp16_f32(x[i].d);
        for (size_t o = 0; o < sizeof *x; o += 64) _mm_prefetch((const char *)&x[i] + PREFETCH_AHEAD + o, _MM_HINT_T0);
        __m256i isum[CT_DOT_NY];
        UNROLL_NY for (int j = 0; j < NY; j++) {
            split[j] |= !same_d(y[j] + 8 * i);
            isum[j] = _mm256_setzero_si256();
        }
        for (int h = 0; h < 2; h++) {
            const uint8_t *ql = x[i].ql + 64 * h, *qh = x[i].qh + 32 * h;
            /* the half's eight scales as 16-bit lanes, in both 128-bit halves */
            const __m256i sc16 =
                _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(x[i].scales + 8 * h))));
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
            UNROLL_4 for (int k = 0; k < 4; k++) {
                const __m256i sv = _mm256_sub_epi8(v[k], off), as = _mm256_sign_epi8(sv, sv);
                const __m256i scv = scale_pair(sc16, k);
                UNROLL_NY for (int j = 0; j < NY; j++) {
                    const ct_block_qy *yb = y[j] + 8 * i + 4 * h + k;
                    const __m256i p16 = _mm256_maddubs_epi16(as, _mm256_sign_epi8(load_qy(yb), sv));
                    isum[j] = _mm256_add_epi32(isum[j], _mm256_madd_epi16(p16, scv));
                }
            }
        }
        UNROLL_NY for (int j = 0; j < NY; j++)
            acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(dx * y[j][8 * i].d), _mm256_cvtepi32_ps(isum[j]), acc[j]);
    }
    UNROLL_NY for (int j = 0; j < NY; j++)
        out[j] = split[j] ? dot_row_portable(CT_TYPE_Q6_K, nb, vx, y[j]) : hsum_ps(acc[j]);
}

MULTI(dot_q6_K, ct_block_qy, dot_q6_K_n)

/* Q2_K and Q3_K: y block s of a super-block is bits 2(s % 4).. of the 32 bytes
 * qs[32(s/4)..], and its two halves take scales 2s and 2s + 1 (16 elements each),
 * applied to the int16 pair sums as 16-bit lanes. Q3_K's values (-4..3, bit s of
 * hmask clear subtracts 4) go through the sign trick of Q6_K; Q2_K's (0..3) are
 * unsigned, and its mins meet a second sum of y's halves. */
AVX2 static ALWAYS_INLINE void dot_q2_K_n(int64_t nb, const void *vx, const ct_block_qy *const *y, const int NY,
                                          float *out) {
    const block_q2_K *x = vx;
    const __m256i m3 = _mm256_set1_epi8(3), ones = _mm256_set1_epi8(1);
    const int NA = CHAINS(NY) > 2 ? 2 : CHAINS(NY); /* acc and corr: two chains already */
    __m256 acc[CT_DOT_NY][4], corr[CT_DOT_NY][4];
    UNROLL_NY for (int j = 0; j < NY; j++)
        UNROLL_4 for (int a = 0; a < NA; a++) acc[j][a] = corr[j][a] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb / 8; i++) {
        for (size_t o = 0; o < sizeof *x; o += 64) _mm_prefetch((const char *)&x[i] + PREFETCH_AHEAD + o, _MM_HINT_T0);
        const __m256 dv = _mm256_set1_ps(fp16_f32(x[i].d)), mv = _mm256_set1_ps(fp16_f32(x[i].dmin));
        for (int h = 0; h < 2; h++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * h));
            /* halves 8h..8h + 7 as 16-bit lanes: scales (low nibbles), mins (high nibbles) */
            const __m128i b8 = _mm_loadl_epi64((const __m128i *)(x[i].scales + 8 * h)), m4x = _mm_set1_epi8(0x0F);
            const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_and_si128(b8, m4x)));
            const __m256i mn16 =
                _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(b8, 4), m4x)));
            UNROLL_4 for (int k = 0; k < 4; k++) {
                const int s = 4 * h + k;
                const __m256i v = _mm256_and_si256(_mm256_srli_epi16(q, 2 * k), m3);
                const __m256i scv = scale_pair(sc16, k), mnv = scale_pair(mn16, k);
                UNROLL_NY for (int j = 0; j < NY; j++) {
                    const ct_block_qy *yb = y[j] + 8 * i + s;
                    const __m256i yq = load_qy(yb);
                    const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(v, yq), scv);
                    const __m256i m = _mm256_madd_epi16(_mm256_maddubs_epi16(ones, yq), mnv);
                    const __m256 yd = _mm256_broadcast_ss(&yb->d);
                    __m256 *a = &acc[j][k % NA], *c = &corr[j][k % NA];
                    *a = _mm256_fmadd_ps(_mm256_mul_ps(dv, yd), _mm256_cvtepi32_ps(p), *a);
                    *c = _mm256_fmadd_ps(_mm256_mul_ps(mv, yd), _mm256_cvtepi32_ps(m), *c);
                }
            }
        }
    }
    UNROLL_NY for (int j = 0; j < NY; j++)
        out[j] = hsum_ps(_mm256_sub_ps(sum_chains(acc[j], NA), sum_chains(corr[j], NA)));
}

MULTI(dot_q2_K, ct_block_qy, dot_q2_K_n)

AVX2 static ALWAYS_INLINE void dot_q3_K_n(int64_t nb, const void *vx, const ct_block_qy *const *y, const int NY,
                                          float *out) {
    const block_q3_K *x = vx;
    const __m256i m3 = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1), four = _mm256_set1_epi8(4);
    const int NA = CHAINS(NY);
    __m256 acc[CT_DOT_NY][4];
    UNROLL_NY for (int j = 0; j < NY; j++) UNROLL_4 for (int a = 0; a < NA; a++) acc[j][a] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb / 8; i++) {
        for (size_t o = 0; o < sizeof *x; o += 64) _mm_prefetch((const char *)&x[i] + PREFETCH_AHEAD + o, _MM_HINT_T0);
        const __m256 dv = _mm256_set1_ps(fp16_f32(x[i].d));
        /* the 16 6-bit scales, less 32, as bytes: low 4 bits from the nibbles of bytes 0-7
         * (scale j < 8: byte j's low nibble, j >= 8: byte j - 8's high one), top 2 bits
         * from bits 2(j / 4).. of byte 8 + j % 4 */
        __m128i sc8;
        {
            const __m128i m4x = _mm_set1_epi8(0x0F), b8 = _mm_loadl_epi64((const __m128i *)x[i].scales);
            const __m128i lo = _mm_unpacklo_epi64(_mm_and_si128(b8, m4x), _mm_and_si128(_mm_srli_epi16(b8, 4), m4x));
            uint32_t w;
            memcpy(&w, x[i].scales + 8, sizeof w);
            const __m128i hi =
                _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32((int)w), _mm_setr_epi32(0, 2, 4, 6)), _mm_set1_epi8(3));
            sc8 = _mm_sub_epi8(_mm_or_si128(lo, _mm_slli_epi16(hi, 4)), _mm_set1_epi8(32));
        }
        const __m256i sc16[2] = {_mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(sc8)),
                                 _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_srli_si128(sc8, 8)))};
        const __m256i hm = _mm256_loadu_si256((const __m256i *)x[i].hmask);
        for (int h = 0; h < 2; h++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * h));
            UNROLL_4 for (int k = 0; k < 4; k++) {
                const int s = 4 * h + k;
                const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(hm, s), one);
                const __m256i v = _mm256_sub_epi8(
                    _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 2 * k), m3), _mm256_slli_epi16(hb, 2)), four);
                const __m256i av = _mm256_sign_epi8(v, v);
                const __m256i scv = scale_pair(sc16[h], k);
                UNROLL_NY for (int j = 0; j < NY; j++) {
                    const ct_block_qy *yb = y[j] + 8 * i + s;
                    const __m256i p16 = _mm256_maddubs_epi16(av, _mm256_sign_epi8(load_qy(yb), v));
                    const __m256i p = _mm256_madd_epi16(p16, scv);
                    __m256 *a = &acc[j][k % NA];
                    *a = _mm256_fmadd_ps(_mm256_mul_ps(dv, _mm256_broadcast_ss(&yb->d)), _mm256_cvtepi32_ps(p), *a);
                }
            }
        }
    }
    UNROLL_NY for (int j = 0; j < NY; j++) out[j] = hsum_ps(sum_chains(acc[j], NA));
}

MULTI(dot_q3_K, ct_block_qy, dot_q3_K_n)

/* IQ4_XS: IQ4_NL's table lookup and sign trick per 32-value sub-block, with its 6-bit scale. */
AVX2 static ALWAYS_INLINE void dot_iq4_xs_n(int64_t nb, const void *vx, const ct_block_qy *const *y, const int NY,
                                            float *out) {
    const block_iq4_xs *x = vx;
    const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)ct_kvalues_iq4nl));
    const int NA = CHAINS(NY);
    __m256 acc[CT_DOT_NY][4];
    UNROLL_NY for (int j = 0; j < NY; j++) UNROLL_4 for (int a = 0; a < NA; a++) acc[j][a] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb / 8; i++) {
        for (size_t o = 0; o < sizeof *x; o += 64) _mm_prefetch((const char *)&x[i] + PREFETCH_AHEAD + o, _MM_HINT_T0);
        const float d = fp16_f32(x[i].d);
        const unsigned sh = x[i].scales_h;
        _Pragma("GCC unroll 8") for (int s = 0; s < 8; s++) {
            const int ls = ((x[i].scales_l[s / 2] >> 4 * (s % 2)) & 0x0F) | (int)((sh >> 2 * s) & 3) << 4;
            const __m256i v = _mm256_shuffle_epi8(table, nibbles_32(x[i].qs + 16 * s));
            const __m256i av = _mm256_sign_epi8(v, v);
            const __m256 xs = _mm256_set1_ps(d * (float)(ls - 32));
            UNROLL_NY for (int j = 0; j < NY; j++) {
                const ct_block_qy *yb = y[j] + 8 * i + s;
                const __m256i p = dot_u8i8(av, _mm256_sign_epi8(load_qy(yb), v));
                __m256 *a = &acc[j][s % NA];
                *a = _mm256_fmadd_ps(_mm256_mul_ps(xs, _mm256_broadcast_ss(&yb->d)), _mm256_cvtepi32_ps(p), *a);
            }
        }
    }
    UNROLL_NY for (int j = 0; j < NY; j++) out[j] = hsum_ps(sum_chains(acc[j], NA));
}

MULTI(dot_iq4_xs, ct_block_qy, dot_iq4_xs_n)

/* ---- src1 conversion: same bytes as the portable one ---------------------- */

/* One block of 32 values at id = 127 / amax (amax of its group, finite and >= 2^-64), d = amax / 127. */
AVX2 static inline void quantize_qy_block(const float *x, __m256 id, float d, ct_block_qy *y) {
    __m256i q[4];
    for (int j = 0; j < 4; j++)
        q[j] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * j), id),
                                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m256i s32 = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(s32), _mm256_extracti128_si256(s32, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    /* packs work per 128-bit lane; the permute restores element order */
    const __m256i a = _mm256_packs_epi32(q[0], q[1]);
    const __m256i b = _mm256_packs_epi32(q[2], q[3]);
    const __m256i p8 = _mm256_packs_epi16(a, b);
    const __m256i ord = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)y->qs, ord);
    y->d = d;
    y->s = (float)_mm_cvtsi128_si32(s);
}

AVX2 static void quantize_qy(const float *x, ct_block_qy *y, int64_t nb, int group) {
    const __m256 sign = _mm256_set1_ps(-0.0f), big = _mm256_set1_ps(FLT_MAX);
    for (int64_t g = 0; g < nb; g += group, x += group * CT_QY_BLOCK) {
        __m256 amax = _mm256_setzero_ps();
        int nonfinite = 0;
        for (int j = 0; j < 4 * group; j++) {
            const __m256 ax = _mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * j));
            nonfinite |= _mm256_movemask_ps(_mm256_cmp_ps(ax, big, _CMP_NLE_UQ));
            amax = _mm256_max_ps(amax, ax);
        }
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        m = _mm_max_ss(m, _mm_movehdup_ps(m));
        const float am = _mm_cvtss_f32(m);
        if (nonfinite || am < 0x1p-64f) {
            ct_cpu_quantize_qy_portable(x, y + g, group, group);
            continue;
        }
        const __m256 id = _mm256_set1_ps(127.0f / am);
        for (int b = 0; b < group; b++)
            quantize_qy_block(x + b * CT_QY_BLOCK, id, am / 127.0f, y + g + b);
    }
}

ct_dot_f_fn ct_cpu_dot_f_avx2(ct_type type) {
    if (!ct_cpu_has_avx2_f16c()) return NULL;
    switch (type) {
    case CT_TYPE_F32: return dot_f32;
    case CT_TYPE_F16: return dot_f16;
    case CT_TYPE_BF16: return dot_bf16;
    default: return NULL;
    }
}

ct_dot_q_fn ct_cpu_dot_q_avx2(ct_type type) {
    if (!ct_cpu_has_avx2_f16c()) return NULL;
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
    case CT_TYPE_Q2_K: return dot_q2_K;
    case CT_TYPE_Q3_K: return dot_q3_K;
    case CT_TYPE_IQ4_XS: return dot_iq4_xs;
    default: return NULL;
    }
}

ct_quantize_qy_fn ct_cpu_quantize_qy_avx2(void) { return ct_cpu_has_avx2_f16c() ? quantize_qy : NULL; }

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

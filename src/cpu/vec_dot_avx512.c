/* AVX-512 dot products of MUL_MAT for F16, BF16, Q4_0 and Q8_0 src0, compiled
 * through function attributes and chosen at run time where the CPU has AVX512F,
 * BW, VL and VNNI (ct_cpu_has_avx512_vnni); other types and CPUs take the AVX2
 * or portable kernels. The integer dots are exact; only the float combination
 * order differs from the other paths. */
#include "cpu/simd.h"
#include "types/types_internal.h"

#include <stddef.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)

#include "core/cpu_features.h"

#include <immintrin.h>

#define AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#define ALWAYS_INLINE __attribute__((always_inline)) inline
#define UNROLL_NY _Pragma("GCC unroll 4")
#define UNROLL_2 _Pragma("GCC unroll 2")
#define UNROLL_NX _Pragma("GCC unroll 8")
/* bytes of src0 fetched ahead of the kernels (a prefetch past the row's end is harmless) */
#define PREFETCH_AHEAD 1024

/* ---- float rows: F16 and BF16 x, F32 y ----------------------------------- */

enum { F_F16, F_BF16 };

/* 16 elements of x from i on, the lanes at and above n zero (masked loads do not fault) */
AVX512 static ALWAYS_INLINE __m512 load16_f(const unsigned char *x, int64_t i, __mmask16 m, int kind) {
    const __m256i h = _mm256_maskz_loadu_epi16(m, x + 2 * i);
    if (kind == F_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* As the AVX2 kernel, 16 lanes wide: one x load for all y rows and one y load for all
 * x rows; the last k % 16 elements through masked loads. The y rows come from L2 at
 * n >= 2 (F32, 4 bytes an element against x's 2), so one y load feeds as many x rows
 * as the 32 registers allow: 8 rows for ny <= 2, 4 for ny = 3, 4. One accumulator
 * chain per dot, two for ny = 1 (8 chains in flight either way with 4 or more rows).
 * A row's sums depend on NY only (NA is NY's; NX only picks how many rows share a pass). */
#define MAX_NX_F 8
AVX512 static ALWAYS_INLINE void dot_f_n(int64_t k, const void *vx, size_t bx, const int NX, const void *const *vy,
                                         const int NY, float *out, int kind) {
    const unsigned char *x[MAX_NX_F];
    const int NA = NY == 1 ? 2 : 1;
    const float *y[CT_DOT_NY];
    __m512 acc[MAX_NX_F][CT_DOT_NY][2];
    UNROLL_NX for (int r = 0; r < NX; r++) x[r] = (const unsigned char *)vx + (size_t)r * bx;
    UNROLL_NY for (int j = 0; j < NY; j++) {
        y[j] = vy[j];
        UNROLL_NX for (int r = 0; r < NX; r++) acc[r][j][0] = acc[r][j][1] = _mm512_setzero_ps();
    }
    const __mmask16 all = 0xFFFF;
    int64_t i = 0;
    for (; i + 16 * NA <= k; i += 16 * NA) {
        UNROLL_NX for (int r = 0; r < NX; r++) _mm_prefetch((const char *)x[r] + 2 * i + PREFETCH_AHEAD, _MM_HINT_T0);
        UNROLL_2 for (int a = 0; a < NA; a++) {
            __m512 xv[MAX_NX_F];
            UNROLL_NX for (int r = 0; r < NX; r++) xv[r] = load16_f(x[r], i + 16 * a, all, kind);
            UNROLL_NY for (int j = 0; j < NY; j++) {
                const __m512 yv = _mm512_loadu_ps(y[j] + i + 16 * a);
                UNROLL_NX for (int r = 0; r < NX; r++) acc[r][j][a] = _mm512_fmadd_ps(xv[r], yv, acc[r][j][a]);
            }
        }
    }
    for (; i < k; i += 16) {
        const __mmask16 m = k - i >= 16 ? all : (__mmask16)((1u << (k - i)) - 1);
        __m512 xv[MAX_NX_F];
        UNROLL_NX for (int r = 0; r < NX; r++) xv[r] = load16_f(x[r], i, m, kind);
        UNROLL_NY for (int j = 0; j < NY; j++) {
            const __m512 yv = _mm512_maskz_loadu_ps(m, y[j] + i);
            UNROLL_NX for (int r = 0; r < NX; r++) acc[r][j][0] = _mm512_fmadd_ps(xv[r], yv, acc[r][j][0]);
        }
    }
    UNROLL_NX for (int r = 0; r < NX; r++) {
        UNROLL_NY for (int j = 0; j < NY; j++)
            out[r * NY + j] = _mm512_reduce_add_ps(NA > 1 ? _mm512_add_ps(acc[r][j][0], acc[r][j][1]) : acc[r][j][0]);
    }
}

/* nx rows in passes of 8 (ny <= 2) or 4 (ny = 3, 4), the rest in one pass */
#define DOT_F_NX(k, x, bx, nx, y, NY, out, kind)                 \
    switch (nx) {                                                \
    case 1: dot_f_n(k, x, bx, 1, y, NY, out, kind); break;       \
    case 2: dot_f_n(k, x, bx, 2, y, NY, out, kind); break;       \
    case 3: dot_f_n(k, x, bx, 3, y, NY, out, kind); break;       \
    case 4: dot_f_n(k, x, bx, 4, y, NY, out, kind); break;       \
    case 5: dot_f_n(k, x, bx, 5, y, NY, out, kind); break;       \
    case 6: dot_f_n(k, x, bx, 6, y, NY, out, kind); break;       \
    case 7: dot_f_n(k, x, bx, 7, y, NY, out, kind); break;       \
    default: dot_f_n(k, x, bx, 8, y, NY, out, kind); break;      \
    }
#define DOT_F_NX4(k, x, bx, nx, y, NY, out, kind)                \
    switch (nx) {                                                \
    case 1: dot_f_n(k, x, bx, 1, y, NY, out, kind); break;       \
    case 2: dot_f_n(k, x, bx, 2, y, NY, out, kind); break;       \
    case 3: dot_f_n(k, x, bx, 3, y, NY, out, kind); break;       \
    default: dot_f_n(k, x, bx, 4, y, NY, out, kind); break;      \
    }
#define MULTI_F(name, kind)                                                                                      \
    AVX512 static void name(int64_t k, const void *x, size_t bx, int nx, const void *const *y, int ny, float *out) { \
        const int step = ny <= 2 ? 8 : 4;                                                                        \
        for (; nx > 0; nx -= step, x = (const unsigned char *)x + (size_t)step * bx, out += step * ny) {         \
            switch (ny) {                                                                                        \
            case 1: DOT_F_NX(k, x, bx, nx, y, 1, out, kind) break;                                               \
            case 2: DOT_F_NX(k, x, bx, nx, y, 2, out, kind) break;                                               \
            case 3: DOT_F_NX4(k, x, bx, nx, y, 3, out, kind) break;                                              \
            default: DOT_F_NX4(k, x, bx, nx, y, 4, out, kind) break;                                             \
            }                                                                                                    \
        }                                                                                                        \
    }
MULTI_F(dot_f16, F_F16)
MULTI_F(dot_bf16, F_BF16)

/* ---- Q4_0 and Q8_0 x, 8-bit y blocks ------------------------------------- */

/* One register holds two blocks in y's element order. x's signed values v go
 * into VNNI's unsigned operand as |v|, their signs onto y's bytes (y's qs are
 * never -128; |-128| is 0x80, 128 unsigned), so every product is exact. Four
 * blocks per step: the two registers' int32 sums are folded into one (lanes of
 * blocks [0 2 0 2 0 2 0 2 1 3 1 3 1 3 1 3]), which then takes one conversion
 * and one FMA with x.d * y.d in the same lane order. */

/* v of blocks i and i + 1 (Q4_0: low nibbles are elements 0..15, high 16..31; minus 8) */
AVX512 static ALWAYS_INLINE __m512i values_pair(const unsigned char *xb, size_t bs, int q4) {
    if (q4) {
        const size_t qs = offsetof(block_q4_0, qs);
        const __m256i q0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(xb + qs)));
        const __m256i q1 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(xb + bs + qs)));
        const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
        /* 16-bit shift counts 0 on the low 16 bytes of each block, 4 on the high 16 */
        const __m512i sh = _mm512_set_epi64(0x0004000400040004, 0x0004000400040004, 0, 0, 0x0004000400040004,
                                            0x0004000400040004, 0, 0);
        const __m512i u = _mm512_and_si512(_mm512_srlv_epi16(q, sh), _mm512_set1_epi8(0x0F));
        return _mm512_sub_epi8(u, _mm512_set1_epi8(8));
    }
    const size_t qs = offsetof(block_q8_0, qs);
    const __m256i v0 = _mm256_loadu_si256((const __m256i *)(xb + qs));
    const __m256i v1 = _mm256_loadu_si256((const __m256i *)(xb + bs + qs));
    return _mm512_inserti64x4(_mm512_castsi256_si512(v0), v1, 1);
}

AVX512 static ALWAYS_INLINE __m512i qy_pair(const ct_block_qy *y) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)y[0].qs)),
                              _mm256_loadu_si256((const __m256i *)y[1].qs), 1);
}

/* One block's exact integer dot (the tail, nb % 4 blocks); v as values_pair's.
 * Not inlined into the AVX-512 code: gcc 12 vectorized the signed x signed byte
 * loop there with the unsigned x signed VNNI instruction (wrong sums, measured). */
__attribute__((noinline)) static int32_t block_dot(const unsigned char *xb, const ct_block_qy *y, int q4) {
    int32_t s = 0;
    for (int t = 0; t < CT_QY_BLOCK; t++) {
        int v;
        if (q4) {
            const uint8_t b = xb[offsetof(block_q4_0, qs) + t % 16];
            v = (t < 16 ? b & 0x0F : b >> 4) - 8;
        } else {
            v = (int8_t)xb[offsetof(block_q8_0, qs) + t];
        }
        s += v * y->qs[t];
    }
    return s;
}

static inline ct_fp16 block_d(const unsigned char *xb) {
    ct_fp16 h; /* d first in both */
    memcpy(&h, xb, sizeof h);
    return h;
}

/* NX (1 or 2) rows at x, x + bx against NY y rows: each row's arithmetic is the one-row
 * kernel's (the y blocks and their scales are loaded once for both rows). */
AVX512 static ALWAYS_INLINE void dot_s8_n(int64_t nb, const void *vx, size_t bx, const int NX,
                                          const ct_block_qy *const *y, const int NY, float *out, int q4) {
    const size_t bs = q4 ? sizeof(block_q4_0) : sizeof(block_q8_0);
    const unsigned char *xr[2] = {vx, vx};
    if (NX > 1) xr[1] += bx;
    const __m512i fold = _mm512_setr_epi32(0, 2, 0, 2, 0, 2, 0, 2, 1, 3, 1, 3, 1, 3, 1, 3);
    const __m512i zero = _mm512_setzero_si512();
    __m512 acc[2][CT_DOT_NY];
    for (int r = 0; r < NX; r++) UNROLL_NY for (int j = 0; j < NY; j++) acc[r][j] = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 4 <= nb; i += 4) {
        __m512i a01[2], a23[2];
        __mmask64 n01[2], n23[2];
        __m128 xd[2];
        for (int r = 0; r < NX; r++) {
            const unsigned char *b = xr[r] + (size_t)i * bs;
            _mm_prefetch((const char *)b + PREFETCH_AHEAD, _MM_HINT_T0);
            _mm_prefetch((const char *)b + PREFETCH_AHEAD + 64, _MM_HINT_T0);
            const __m512i v01 = values_pair(b, bs, q4), v23 = values_pair(b + 2 * bs, bs, q4);
            a01[r] = _mm512_abs_epi8(v01), a23[r] = _mm512_abs_epi8(v23);
            n01[r] = _mm512_movepi8_mask(v01), n23[r] = _mm512_movepi8_mask(v23);
            const uint64_t h = (uint64_t)block_d(b) | (uint64_t)block_d(b + bs) << 16 |
                               (uint64_t)block_d(b + 2 * bs) << 32 | (uint64_t)block_d(b + 3 * bs) << 48;
            xd[r] = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)h));
        }
        UNROLL_NY for (int j = 0; j < NY; j++) {
            const ct_block_qy *yi = y[j] + i;
            const __m512i y01 = qy_pair(yi), y23 = qy_pair(yi + 2);
            const __m128 yd = _mm_setr_ps(yi[0].d, yi[1].d, yi[2].d, yi[3].d);
            for (int r = 0; r < NX; r++) {
                const __m512i p01 = _mm512_dpbusd_epi32(zero, a01[r], _mm512_mask_sub_epi8(y01, n01[r], zero, y01));
                const __m512i p23 = _mm512_dpbusd_epi32(zero, a23[r], _mm512_mask_sub_epi8(y23, n23[r], zero, y23));
                const __m512i p = _mm512_add_epi32(_mm512_unpacklo_epi32(p01, p23), _mm512_unpackhi_epi32(p01, p23));
                const __m512 sc = _mm512_permutexvar_ps(fold, _mm512_castps128_ps512(_mm_mul_ps(xd[r], yd)));
                acc[r][j] = _mm512_fmadd_ps(sc, _mm512_cvtepi32_ps(p), acc[r][j]);
            }
        }
    }
    for (int r = 0; r < NX; r++) {
        UNROLL_NY for (int j = 0; j < NY; j++) {
            float tail = 0.0f;
            for (int64_t t = i; t < nb; t++) {
                const unsigned char *b = xr[r] + (size_t)t * bs;
                tail += ct_fp16_to_fp32_inline(block_d(b)) * y[j][t].d * (float)block_dot(b, y[j] + t, q4);
            }
            out[r * NY + j] = _mm512_reduce_add_ps(acc[r][j]) + tail;
        }
    }
}

/* Rows in pairs for two or more y rows, the last one alone where nx is odd; one at a time
 * for one y row (no y loads to share: pairs measured no faster there). */
#define MULTI_Q(name, q4)                                                                                     \
    AVX512 static void name(int64_t nb, const void *x, size_t bx, int nx, const ct_block_qy *const *y, int ny, \
                            float *out) {                                                                     \
        for (int r = 0; r < nx;) {                                                                            \
            const unsigned char *xr = (const unsigned char *)x + (size_t)r * bx;                              \
            float *o = out + r * ny;                                                                          \
            const int two = ny > 1 && nx - r >= 2;                                                            \
            r += two ? 2 : 1;                                                                                 \
            switch (ny) {                                                                                     \
            case 1: dot_s8_n(nb, xr, bx, 1, y, 1, o, q4); break;                                              \
            case 2: two ? dot_s8_n(nb, xr, bx, 2, y, 2, o, q4) : dot_s8_n(nb, xr, bx, 1, y, 2, o, q4); break; \
            case 3: two ? dot_s8_n(nb, xr, bx, 2, y, 3, o, q4) : dot_s8_n(nb, xr, bx, 1, y, 3, o, q4); break; \
            default: two ? dot_s8_n(nb, xr, bx, 2, y, 4, o, q4) : dot_s8_n(nb, xr, bx, 1, y, 4, o, q4); break; \
            }                                                                                                 \
        }                                                                                                     \
    }
MULTI_Q(dot_q8_0, 0)
MULTI_Q(dot_q4_0, 1)

ct_dot_f_fn ct_cpu_dot_f_avx512(ct_type type) {
    if (!ct_cpu_has_avx512_vnni()) return NULL;
    switch (type) {
    case CT_TYPE_F16: return dot_f16;
    case CT_TYPE_BF16: return dot_bf16;
    default: return NULL;
    }
}

ct_dot_q_fn ct_cpu_dot_q_avx512(ct_type type) {
    if (!ct_cpu_has_avx512_vnni()) return NULL;
    switch (type) {
    case CT_TYPE_Q4_0: return dot_q4_0;
    case CT_TYPE_Q8_0: return dot_q8_0;
    default: return NULL;
    }
}

#else /* not x86 with GCC/Clang */

ct_dot_f_fn ct_cpu_dot_f_avx512(ct_type type) {
    (void)type;
    return NULL;
}
ct_dot_q_fn ct_cpu_dot_q_avx512(ct_type type) {
    (void)type;
    return NULL;
}

#endif

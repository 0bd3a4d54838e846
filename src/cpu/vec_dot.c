/* Portable dot products of MUL_MAT, written as independent lanes so that the
 * compiler can vectorize them; they are the reference for the AVX2 kernels.
 * Quantized rows are unpacked one block at a time into small integers v with
 * x = a*v + b per 32-element sub-block, so every type shares one exact integer
 * dot and one float combination per sub-block. */
#include "cpu/simd.h"
#include "types/types_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

static inline float load_f32(const unsigned char *p) {
    float f;
    memcpy(&f, p, sizeof f);
    return f;
}

static inline uint16_t load_u16(const unsigned char *p) {
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return h;
}

#define LANES 8

static inline float sum_lanes(const float *acc) {
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

static inline float conv_f32(const unsigned char *p) { return load_f32(p); }
static inline float conv_f16(const unsigned char *p) { return ct_fp16_to_fp32_inline(load_u16(p)); }
static inline float conv_bf16(const unsigned char *p) { return ct_bf16_to_fp32_inline(load_u16(p)); }

/* x converted once per lane group, then used by every y row */
static inline __attribute__((always_inline)) void dot_f_generic(int64_t k, const unsigned char *x,
                                                                const void *const *vy, int ny, float *out,
                                                                float (*conv)(const unsigned char *), size_t xs) {
    float acc[CT_DOT_NY][LANES] = {{0}};
    int64_t i = 0;
    for (; i + LANES <= k; i += LANES) {
        float xv[LANES];
        for (int l = 0; l < LANES; l++) xv[l] = conv(x + xs * (size_t)(i + l));
        for (int j = 0; j < ny; j++) {
            const unsigned char *y = (const unsigned char *)vy[j] + 4 * i;
            for (int l = 0; l < LANES; l++) acc[j][l] += xv[l] * load_f32(y + 4 * l);
        }
    }
    for (; i < k; i++) {
        const float xv = conv(x + xs * (size_t)i);
        for (int j = 0; j < ny; j++) acc[j][i % LANES] += xv * load_f32((const unsigned char *)vy[j] + 4 * i);
    }
    for (int j = 0; j < ny; j++) out[j] = sum_lanes(acc[j]);
}

static void dot_f32(int64_t k, const void *x, size_t bx, int nx, const void *const *y, int ny, float *out) {
    for (int r = 0; r < nx; r++) dot_f_generic(k, (const unsigned char *)x + r * bx, y, ny, out + r * ny, conv_f32, 4);
}
static void dot_f16(int64_t k, const void *x, size_t bx, int nx, const void *const *y, int ny, float *out) {
    for (int r = 0; r < nx; r++) dot_f_generic(k, (const unsigned char *)x + r * bx, y, ny, out + r * ny, conv_f16, 2);
}
static void dot_bf16(int64_t k, const void *x, size_t bx, int nx, const void *const *y, int ny, float *out) {
    for (int r = 0; r < nx; r++) dot_f_generic(k, (const unsigned char *)x + r * bx, y, ny, out + r * ny, conv_bf16, 2);
}

ct_dot_f_fn ct_cpu_dot_f_portable(ct_type type) {
    switch (type) {
    case CT_TYPE_F32: return dot_f32;
    case CT_TYPE_F16: return dot_f16;
    case CT_TYPE_BF16: return dot_bf16;
    default: return NULL;
    }
}

/* ---- src1 conversion ---------------------------------------------------- */

/* Ties to even, as _mm256_round_ps does, so both paths give the same bytes
 * (|v| <= 127.5 here). */
static inline int32_t round_even(float v) {
    return (int32_t)(ct_f32_bits(v + 12582912.0f) - UINT32_C(0x4B400000));
}

/* n blocks (n * 32 values) sharing one d; a NaN or an infinity among them gives each
 * block its own d instead. */
static void quantize_qy_blocks(const float *x, ct_block_qy *y, int n) {
    float amax = 0.0f;
    bool nan = false, inf = false;
    for (int j = 0; j < n * CT_QY_BLOCK; j++) {
        const float ax = fabsf(x[j]);
        nan |= ax != ax;
        inf |= ax > FLT_MAX;
        amax = ax > amax ? ax : amax;
    }
    if ((nan || inf) && n > 1) {
        for (int b = 0; b < n; b++) quantize_qy_blocks(x + b * CT_QY_BLOCK, y + b, 1);
        return;
    }
    int32_t s = 0;
    if (nan || inf) {
        /* Non-finite inputs must reach the output: a NaN block gives d = NaN; an
         * inf block is exact relative to inf (±127 at the infs, 0 elsewhere). */
        for (int j = 0; j < CT_QY_BLOCK; j++) {
            const int q = nan ? 0 : x[j] > FLT_MAX ? 127 : x[j] < -FLT_MAX ? -127 : 0;
            y->qs[j] = (int8_t)q;
            s += q;
        }
        y->d = nan ? NAN : INFINITY;
        y->s = (float)s;
        return;
    }
    /* Scale tiny blocks up so that 127/amax stays finite. */
    const float scale = amax < 0x1p-64f ? 0x1p64f : 1.0f;
    const float am = amax * scale;
    const float id = am > 0.0f ? 127.0f / am : 0.0f;
    for (int b = 0; b < n; b++, x += CT_QY_BLOCK) {
        s = 0;
        for (int j = 0; j < CT_QY_BLOCK; j++) {
            const int32_t q = round_even((x[j] * scale) * id);
            y[b].qs[j] = (int8_t)q;
            s += q;
        }
        y[b].d = (am / 127.0f) / scale;
        y[b].s = (float)s;
    }
}

void ct_cpu_quantize_qy_portable(const float *x, ct_block_qy *y, int64_t nb, int group) {
    for (int64_t i = 0; i < nb; i += group) quantize_qy_blocks(x + i * CT_QY_BLOCK, y + i, group);
}

/* ---- quantized rows ------------------------------------------------------ */

/* Unpacks one src0 block into v (32 values per sub-block) and the per-sub-block
 * affine map x = a*v + b; returns nothing, the caller knows the sub-block count. */
typedef void (*unpack_fn)(const unsigned char *blk, int16_t *v, float *a, float *b);

static inline void unpack_nibbles(const uint8_t *qs, int16_t *v, int off) {
    for (int j = 0; j < 16; j++) {
        v[j] = (int16_t)((qs[j] & 15) - off);
        v[j + 16] = (int16_t)((qs[j] >> 4) - off);
    }
}

static void unpack_q4_0(const unsigned char *blk, int16_t *v, float *a, float *b) {
    const block_q4_0 *x = (const block_q4_0 *)blk;
    unpack_nibbles(x->qs, v, 8);
    a[0] = ct_fp16_to_fp32_inline(x->d);
    b[0] = 0.0f;
}

static void unpack_q4_1(const unsigned char *blk, int16_t *v, float *a, float *b) {
    const block_q4_1 *x = (const block_q4_1 *)blk;
    unpack_nibbles(x->qs, v, 0);
    a[0] = ct_fp16_to_fp32_inline(x->d);
    b[0] = ct_fp16_to_fp32_inline(x->m);
}

static inline void unpack_5bit(const uint8_t *qs, const uint8_t *qh4, int16_t *v, int off) {
    uint32_t qh;
    memcpy(&qh, qh4, sizeof qh);
    for (int j = 0; j < 16; j++) {
        v[j] = (int16_t)(((qs[j] & 15) | (((qh >> j) & 1) << 4)) - off);
        v[j + 16] = (int16_t)(((qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - off);
    }
}

static void unpack_q5_0(const unsigned char *blk, int16_t *v, float *a, float *b) {
    const block_q5_0 *x = (const block_q5_0 *)blk;
    unpack_5bit(x->qs, x->qh, v, 16);
    a[0] = ct_fp16_to_fp32_inline(x->d);
    b[0] = 0.0f;
}

static void unpack_q5_1(const unsigned char *blk, int16_t *v, float *a, float *b) {
    const block_q5_1 *x = (const block_q5_1 *)blk;
    unpack_5bit(x->qs, x->qh, v, 0);
    a[0] = ct_fp16_to_fp32_inline(x->d);
    b[0] = ct_fp16_to_fp32_inline(x->m);
}

static void unpack_q8_0(const unsigned char *blk, int16_t *v, float *a, float *b) {
    const block_q8_0 *x = (const block_q8_0 *)blk;
    for (int j = 0; j < 32; j++) v[j] = x->qs[j];
    a[0] = ct_fp16_to_fp32_inline(x->d);
    b[0] = 0.0f;
}

static void unpack_iq4_nl(const unsigned char *blk, int16_t *v, float *a, float *b) {
    const block_iq4_nl *x = (const block_iq4_nl *)blk;
    for (int j = 0; j < 16; j++) {
        v[j] = ct_kvalues_iq4nl[x->qs[j] & 15];
        v[j + 16] = ct_kvalues_iq4nl[x->qs[j] >> 4];
    }
    a[0] = ct_fp16_to_fp32_inline(x->d);
    b[0] = 0.0f;
}

static inline void scale_min_k4(int j, const uint8_t *q, int *sc, int *m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

/* Q4_K and Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins. */
static void k4_affine(const uint8_t *scales, ct_fp16 hd, ct_fp16 hdmin, float *a, float *b) {
    const float d = ct_fp16_to_fp32_inline(hd), dmin = ct_fp16_to_fp32_inline(hdmin);
    for (int s = 0; s < 8; s++) {
        int sc, m;
        scale_min_k4(s, scales, &sc, &m);
        a[s] = d * (float)sc;
        b[s] = -(dmin * (float)m);
    }
}

static void unpack_q4_K(const unsigned char *blk, int16_t *v, float *a, float *b) {
    const block_q4_K *x = (const block_q4_K *)blk;
    for (int c = 0; c < 4; c++) {
        const uint8_t *q = x->qs + 32 * c;
        for (int l = 0; l < 32; l++) {
            v[64 * c + l] = (int16_t)(q[l] & 15);
            v[64 * c + 32 + l] = (int16_t)(q[l] >> 4);
        }
    }
    k4_affine(x->scales, x->d, x->dmin, a, b);
}

static void unpack_q5_K(const unsigned char *blk, int16_t *v, float *a, float *b) {
    const block_q5_K *x = (const block_q5_K *)blk;
    for (int c = 0; c < 4; c++) {
        const uint8_t *q = x->qs + 32 * c;
        for (int l = 0; l < 32; l++) {
            v[64 * c + l] = (int16_t)((q[l] & 15) | (((x->qh[l] >> (2 * c)) & 1) << 4));
            v[64 * c + 32 + l] = (int16_t)((q[l] >> 4) | (((x->qh[l] >> (2 * c + 1)) & 1) << 4));
        }
    }
    k4_affine(x->scales, x->d, x->dmin, a, b);
}

/* Q6_K's scales cover 16 elements, so they are folded into v (|v| <= 128*32). */
static void unpack_q6_K(const unsigned char *blk, int16_t *v, float *a, float *b) {
    const block_q6_K *x = (const block_q6_K *)blk;
    for (int h = 0; h < 2; h++) {
        const uint8_t *ql = x->ql + 64 * h, *qh = x->qh + 32 * h;
        const int8_t *sc = x->scales + 8 * h;
        int16_t *o = v + 128 * h;
        for (int l = 0; l < 32; l++) {
            const int is = l / 16;
            const int q1 = ((ql[l] & 15) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = ((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            o[l] = (int16_t)(q1 * sc[is + 0]);
            o[l + 32] = (int16_t)(q2 * sc[is + 2]);
            o[l + 64] = (int16_t)(q3 * sc[is + 4]);
            o[l + 96] = (int16_t)(q4 * sc[is + 6]);
        }
    }
    const float d = ct_fp16_to_fp32_inline(x->d);
    for (int s = 0; s < 8; s++) {
        a[s] = d;
        b[s] = 0.0f;
    }
}

/* Q3_K: 16 signed 6-bit scales (minus 32) of 16 elements each, folded into v as Q6_K's
 * (|v| <= 32*4). Element e of the block: bits 2(e/32 % 4).. of qs[32(e/128) + e%32], minus 4
 * where bit e/32 of hmask[e%32] is clear; scale e/16. */
static void unpack_q3_K(const unsigned char *blk, int16_t *v, float *a, float *b) {
    const block_q3_K *x = (const block_q3_K *)blk;
    int sc[16];
    for (int j = 0; j < 16; j++) {
        const int lo = j < 8 ? (x->scales[j] & 0x0F) : (x->scales[j - 8] >> 4);
        const int hi = (x->scales[8 + j % 4] >> (2 * (j / 4))) & 3;
        sc[j] = (lo | hi << 4) - 32;
    }
    for (int e = 0; e < 256; e++) {
        const int s = e / 32, l = e % 32;
        const int q = ((x->qs[32 * (s / 4) + l] >> (2 * (s % 4))) & 3) - ((x->hmask[l] >> s) & 1 ? 0 : 4);
        v[e] = (int16_t)(q * sc[e / 16]);
    }
    const float d = ct_fp16_to_fp32_inline(x->d);
    for (int s = 0; s < 8; s++) {
        a[s] = d;
        b[s] = 0.0f;
    }
}

/* IQ4_XS: 8 sub-blocks of 32 with 6-bit scales (minus 32) and IQ4_NL's values. */
static void unpack_iq4_xs(const unsigned char *blk, int16_t *v, float *a, float *b) {
    const block_iq4_xs *x = (const block_iq4_xs *)blk;
    const float d = ct_fp16_to_fp32_inline(x->d);
    for (int s = 0; s < 8; s++) {
        const uint8_t *q = x->qs + 16 * s;
        for (int j = 0; j < 16; j++) {
            v[32 * s + j] = ct_kvalues_iq4nl[q[j] & 15];
            v[32 * s + j + 16] = ct_kvalues_iq4nl[q[j] >> 4];
        }
        const int ls = ((x->scales_l[s / 2] >> 4 * (s % 2)) & 0x0F) | (int)((x->scales_h >> 2 * s) & 3) << 4;
        a[s] = d * (float)(ls - 32);
        b[s] = 0.0f;
    }
}

/* Q2_K: 16 scales and mins of 16 elements (4 bits each), so the mins cannot go
 * through y's 32-value sum: the scales fold into v (<= 45), the mins into a second
 * integer dot with y. Element e: bits 2(e/32 % 4).. of qs[32(e/128) + e%32];
 * scale and min e/16. */
static void dot_q2_K_row(int64_t nb, const void *vx, const ct_block_qy *const *y, int ny, float *out) {
    const block_q2_K *x = vx;
    int16_t v[256];
    float acc[CT_DOT_NY] = {0};
    for (int64_t i = 0; i < nb; i += 8, x++) {
        for (int e = 0; e < 256; e++) {
            const int s = e / 32, l = e % 32;
            v[e] = (int16_t)(((x->qs[32 * (s / 4) + l] >> (2 * (s % 4))) & 3) * (x->scales[e / 16] & 15));
        }
        const float d = ct_fp16_to_fp32_inline(x->d), dmin = ct_fp16_to_fp32_inline(x->dmin);
        for (int j = 0; j < ny; j++) {
            for (int s = 0; s < 8; s++) {
                const ct_block_qy *yb = y[j] + i + s;
                int32_t isum = 0, m0 = 0, m1 = 0;
                for (int l = 0; l < 32; l++) isum += (int32_t)v[32 * s + l] * yb->qs[l];
                for (int l = 0; l < 16; l++) {
                    m0 += yb->qs[l];
                    m1 += yb->qs[l + 16];
                }
                const int32_t msum = m0 * (x->scales[2 * s] >> 4) + m1 * (x->scales[2 * s + 1] >> 4);
                acc[j] += yb->d * (d * (float)isum - dmin * (float)msum);
            }
        }
    }
    for (int j = 0; j < ny; j++) out[j] = acc[j];
}

/* The integer sums are exact (|sum| < 2^24, so also exact as float). */
static inline __attribute__((always_inline)) void dot_q_generic(int64_t nb, const unsigned char *x,
                                                                const ct_block_qy *const *y, int ny, float *out,
                                                                unpack_fn unpack, size_t bsize, int nsub) {
    int16_t v[256];
    float a[8], b[8];
    float acc[CT_DOT_NY] = {0};
    for (int64_t i = 0; i < nb; i += nsub, x += bsize) {
        unpack(x, v, a, b);
        for (int j = 0; j < ny; j++) {
            for (int s = 0; s < nsub; s++) {
                const ct_block_qy *yb = y[j] + i + s;
                int32_t isum = 0;
                for (int l = 0; l < 32; l++) isum += (int32_t)v[32 * s + l] * yb->qs[l];
                acc[j] += yb->d * (a[s] * (float)isum + b[s] * yb->s);
            }
        }
    }
    for (int j = 0; j < ny; j++) out[j] = acc[j];
}

/* ct_dot_q_fn over nx rows, one at a time */
#define DOT_Q_ROWS(name, row_fn)                                                                             \
    static void dot_##name(int64_t nb, const void *x, size_t bx, int nx, const ct_block_qy *const *y, int ny, \
                           float *out) {                                                                     \
        for (int r = 0; r < nx; r++) row_fn(nb, (const unsigned char *)x + (size_t)r * bx, y, ny, out + r * ny); \
    }
#define DOT_Q(name, block, nsub)                                                                           \
    static void dot_##name##_row(int64_t nb, const void *x, const ct_block_qy *const *y, int ny, float *out) { \
        dot_q_generic(nb, x, y, ny, out, unpack_##name, sizeof(block), nsub);                              \
    }                                                                                                      \
    DOT_Q_ROWS(name, dot_##name##_row)
DOT_Q_ROWS(q2_K, dot_q2_K_row)
DOT_Q(q4_0, block_q4_0, 1)
DOT_Q(q4_1, block_q4_1, 1)
DOT_Q(q5_0, block_q5_0, 1)
DOT_Q(q5_1, block_q5_1, 1)
DOT_Q(q8_0, block_q8_0, 1)
DOT_Q(iq4_nl, block_iq4_nl, 1)
DOT_Q(q4_K, block_q4_K, 8)
DOT_Q(q5_K, block_q5_K, 8)
DOT_Q(q6_K, block_q6_K, 8)
DOT_Q(q3_K, block_q3_K, 8)
DOT_Q(iq4_xs, block_iq4_xs, 8)

ct_dot_q_fn ct_cpu_dot_q_portable(ct_type type) {
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

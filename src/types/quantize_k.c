/* Quantizers of the 256-element super-block formats (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K,
 * IQ4_XS) with the arithmetic of ggml's reference quantizers (quantize_row_<type>_ref),
 * bit for bit: docs/QUANTIZATION.md, The K formats. Every float operation is its own
 * rounding in ggml's order (the library is built with -ffp-contract=off); every
 * conversion that C leaves undefined or implementation-defined is written out. */
#include "core/internal.h"
#include "types/types_internal.h"

#include <math.h>
#include <string.h>

/* ggml's GROUP_MAX_EPS: groups with max |x| below it count as all zero. */
#define K_GROUP_EPS 1e-15f

/* Round to nearest, ties to even, through the float adder: v + 1.5*2^23 puts the
 * integer in the low mantissa bits (ggml's nearest_int). Outside |v| < 2^22 the result
 * is what those bits give, as in ggml; never undefined behaviour (NaN included). */
static inline int k_round(float v) {
    const float s = v + 12582912.0f;
    uint32_t bits;
    memcpy(&bits, &s, sizeof bits);
    return (int)(bits & 0x7FFFFFu) - 0x400000;
}

static inline int k_clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* An int stored into int8_t or uint8_t the way gcc and clang store it: its low byte. */
static inline int8_t k_low_i8(int v) {
    const int b = (int)((unsigned)v & 0xFFu);
    return (int8_t)(b < 128 ? b : b - 256);
}
static inline uint8_t k_low_u8(int v) { return (uint8_t)((unsigned)v & 0xFFu); }

/* ---- scale searches ------------------------------------------------------------------ */

/* The asymmetric fit of Q2_K, Q4_K and Q5_K (ggml's make_qkx2_quants): levels 0..nmax
 * with value scale*l - neg_min, neg_min >= 0. A first fit from the range, then nstep+1
 * trial scales (rmin + rdelta*is + nmax)/(max - min), each refitted by weighted least
 * squares and kept when its weighted error (|diff| with mad, else diff^2) is smaller;
 * the trials after an improvement measure from the improved offset.
 * L gets the levels; the return value is the scale and *neg_min the negated offset. */
static float k_fit_affine(int n, int nmax, const float *x, const float *w, uint8_t *L, float *neg_min, float rmin,
                          float rdelta, int nstep, bool mad) {
    uint8_t trial[32];
    float lo = x[0], hi = x[0];
    float sw = w[0];
    float sx = sw * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
        sw += w[i];
        sx += w[i] * x[i];
    }
    if (lo > 0) lo = 0;
    if (hi == lo) {
        memset(L, 0, (size_t)n);
        *neg_min = -lo;
        return 0.0f;
    }
    float inv = (float)nmax / (hi - lo);
    float scale = 1 / inv;
    float err_best = 0;
    for (int i = 0; i < n; i++) {
        const int l = k_clamp(k_round(inv * (x[i] - lo)), 0, nmax);
        L[i] = (uint8_t)l;
        float e = scale * (float)l + lo - x[i];
        e = mad ? fabsf(e) : e * e;
        err_best += w[i] * e;
    }
    for (int is = 0; is <= nstep; is++) {
        /* lo is the offset of the best fit so far, as in ggml */
        inv = (rmin + rdelta * (float)is + (float)nmax) / (hi - lo);
        float s_l = 0, s_l2 = 0, s_xl = 0;
        for (int i = 0; i < n; i++) {
            const int l = k_clamp(k_round(inv * (x[i] - lo)), 0, nmax);
            trial[i] = (uint8_t)l;
            const float wl = w[i] * (float)l;
            s_l += wl;
            s_l2 += wl * (float)l;
            s_xl += wl * x[i];
        }
        const float det = sw * s_l2 - s_l * s_l;
        if (!(det > 0)) continue;
        float t_scale = (sw * s_xl - sx * s_l) / det;
        float t_min = (s_l2 * sx - s_l * s_xl) / det;
        if (t_min > 0) {
            t_min = 0;
            t_scale = s_xl / s_l2;
        }
        float err = 0;
        for (int i = 0; i < n; i++) {
            float e = t_scale * (float)trial[i] + t_min - x[i];
            e = mad ? fabsf(e) : e * e;
            err += w[i] * e;
        }
        if (err < err_best) {
            memcpy(L, trial, (size_t)n);
            err_best = err;
            scale = t_scale;
            lo = t_min;
        }
    }
    *neg_min = -lo;
    return scale;
}

/* The largest |x| of n values and the signed value there (first one wins, strict >). */
static inline float k_signed_absmax(int n, const float *x, float *amax_out) {
    float amax = 0, max = 0;
    for (int i = 0; i < n; i++) {
        const float a = fabsf(x[i]);
        if (a > amax) {
            amax = a;
            max = x[i];
        }
    }
    *amax_out = amax;
    return max;
}

/* Q3_K's symmetric fit of 16 values to levels -4..3 (ggml's make_q3_quants with rmse):
 * levels from -4/max, then up to five passes that move one level at a time to the
 * least-squares optimum (weights x^2) while that raises sumlx^2/suml2. L gets level + 4. */
static float k_fit_q3(const float *x, int8_t *L) {
    enum { N = 16, NMAX = 4 };
    float amax;
    const float max = k_signed_absmax(N, x, &amax);
    if (amax < K_GROUP_EPS) {
        memset(L, 0, N);
        return 0.0f;
    }
    const float inv = (float)-NMAX / max;
    float slx = 0, sl2 = 0;
    for (int i = 0; i < N; i++) {
        const int l = k_clamp(k_round(inv * x[i]), -NMAX, NMAX - 1);
        L[i] = (int8_t)l;
        const float w = x[i] * x[i];
        slx += w * x[i] * (float)l;
        sl2 += w * (float)l * (float)l;
    }
    for (int pass = 0; pass < 5; pass++) {
        int moved = 0;
        for (int i = 0; i < N; i++) {
            const float w = x[i] * x[i];
            float slx_i = slx - w * x[i] * (float)L[i];
            if (!(slx_i > 0)) continue;
            float sl2_i = sl2 - w * (float)L[i] * (float)L[i];
            const int l = k_clamp(k_round(x[i] * sl2_i / slx_i), -NMAX, NMAX - 1);
            if (l == L[i]) continue;
            slx_i += w * x[i] * (float)l;
            sl2_i += w * (float)l * (float)l;
            if (sl2_i > 0 && slx_i * slx_i * sl2 > slx * slx * sl2_i) {
                L[i] = (int8_t)l;
                slx = slx_i;
                sl2 = sl2_i;
                moved++;
            }
        }
        if (moved == 0) break;
    }
    for (int i = 0; i < N; i++) L[i] = (int8_t)(L[i] + NMAX);
    return sl2 > 0.0f ? slx / sl2 : 0.0f;
}

/* Q6_K's symmetric fit of 16 values to levels -32..31 (ggml's make_qx_quants with
 * rmse_type 1, no quant weights): levels from -32/max, then the trial scales
 * -(32 + 0.1*is)/max for is = -9..9 (not 0), each kept when it raises sumlx^2/suml2
 * (weights x^2). L gets level + 32. */
static float k_fit_q6(const float *x, int8_t *L) {
    enum { N = 16, NMAX = 32 };
    float amax;
    const float max = k_signed_absmax(N, x, &amax);
    if (amax < K_GROUP_EPS) {
        memset(L, 0, N);
        return 0.0f;
    }
    float inv = (float)-NMAX / max;
    float slx = 0, sl2 = 0;
    for (int i = 0; i < N; i++) {
        const int l = k_clamp(k_round(inv * x[i]), -NMAX, NMAX - 1);
        L[i] = (int8_t)(l + NMAX);
        const float w = x[i] * x[i];
        slx += w * x[i] * (float)l;
        sl2 += w * (float)l * (float)l;
    }
    float scale = sl2 != 0.0f ? slx / sl2 : 0.0f;
    float best = scale * slx;
    for (int is = -9; is <= 9; is++) {
        if (is == 0) continue;
        inv = -((float)NMAX + 0.1f * (float)is) / max;
        slx = sl2 = 0;
        for (int i = 0; i < N; i++) {
            const int l = k_clamp(k_round(inv * x[i]), -NMAX, NMAX - 1);
            const float w = x[i] * x[i];
            slx += w * x[i] * (float)l;
            sl2 += w * (float)l * (float)l;
        }
        if (sl2 > 0 && slx * slx > best * sl2) {
            for (int i = 0; i < N; i++) L[i] = (int8_t)(k_clamp(k_round(inv * x[i]), -NMAX, NMAX - 1) + NMAX);
            scale = slx / sl2;
            best = scale * slx;
        }
    }
    return scale;
}

/* ---- Q2_K ------------------------------------------------------------------------------ */

/* Packs 256 2-bit levels: byte l of each 32-byte half holds elements l, l+32, l+64, l+96
 * of that half's 128, from the low bits up. */
static void k_pack2(const uint8_t *L, uint8_t *qs) {
    for (int h = 0; h < 2; h++) {
        const uint8_t *Lh = L + 128 * h;
        for (int l = 0; l < 32; l++) {
            qs[32 * h + l] = (uint8_t)(Lh[l] | Lh[l + 32] << 2 | Lh[l + 64] << 4 | Lh[l + 96] << 6);
        }
    }
}

static void quantize_q2_K(const float *restrict x, void *restrict vy, int64_t n) {
    block_q2_K *y = vy;
    for (int64_t ib = 0; ib < n / CT_QK_K; ib++, x += CT_QK_K) {
        block_q2_K *b = &y[ib];
        uint8_t L[CT_QK_K];
        float w[16], sc[16], mn[16];
        float max_sc = 0, max_mn = 0;
        for (int g = 0; g < 16; g++) {
            for (int l = 0; l < 16; l++) w[l] = fabsf(x[16 * g + l]);
            sc[g] = k_fit_affine(16, 3, x + 16 * g, w, L + 16 * g, &mn[g], -0.5f, 0.1f, 15, true);
            if (sc[g] > max_sc) max_sc = sc[g];
            if (mn[g] > max_mn) max_mn = mn[g];
        }
        if (max_sc > 0) {
            const float inv = 15.0f / max_sc;
            for (int g = 0; g < 16; g++) b->scales[g] = k_low_u8(k_round(inv * sc[g]));
            b->d = ct_fp32_to_fp16_inline(max_sc / 15.0f);
        } else {
            memset(b->scales, 0, sizeof b->scales);
            b->d = ct_fp32_to_fp16_inline(0.0f);
        }
        if (max_mn > 0) {
            const float inv = 15.0f / max_mn;
            for (int g = 0; g < 16; g++) b->scales[g] |= (uint8_t)(((unsigned)k_round(inv * mn[g]) << 4) & 0xF0u);
            b->dmin = ct_fp32_to_fp16_inline(max_mn / 15.0f);
        } else {
            b->dmin = ct_fp32_to_fp16_inline(0.0f);
        }
        /* the levels again, against the stored (fp16, 4-bit) scale and min */
        const float d_all = ct_fp16_to_fp32_inline(b->d), m_all = ct_fp16_to_fp32_inline(b->dmin);
        for (int g = 0; g < 16; g++) {
            const float d = d_all * (float)(b->scales[g] & 15);
            if (d == 0.0f) continue;
            const float dm = m_all * (float)(b->scales[g] >> 4);
            for (int l = 0; l < 16; l++) L[16 * g + l] = (uint8_t)k_clamp(k_round((x[16 * g + l] + dm) / d), 0, 3);
        }
        k_pack2(L, b->qs);
    }
}

/* ---- Q3_K ------------------------------------------------------------------------------ */

static void quantize_q3_K(const float *restrict x, void *restrict vy, int64_t n) {
    block_q3_K *y = vy;
    for (int64_t ib = 0; ib < n / CT_QK_K; ib++, x += CT_QK_K) {
        block_q3_K *b = &y[ib];
        int8_t L[CT_QK_K];
        float sc[16];
        float max_sc = 0, amax = 0;
        for (int g = 0; g < 16; g++) {
            sc[g] = k_fit_q3(x + 16 * g, L + 16 * g);
            const float a = fabsf(sc[g]);
            if (a > amax) {
                amax = a;
                max_sc = sc[g];
            }
        }
        memset(b->scales, 0, sizeof b->scales);
        if (max_sc != 0.0f) {
            const float inv = -32.0f / max_sc;
            for (int g = 0; g < 16; g++) {
                const int l = k_clamp(k_low_i8(k_round(inv * sc[g])), -32, 31) + 32;
                if (g < 8) {
                    b->scales[g] = (uint8_t)(l & 15);
                } else {
                    b->scales[g - 8] |= (uint8_t)((l & 15) << 4);
                }
                b->scales[8 + g % 4] |= (uint8_t)((l >> 4) << (2 * (g / 4)));
            }
            b->d = ct_fp32_to_fp16_inline(1 / inv);
        } else {
            b->d = ct_fp32_to_fp16_inline(0.0f);
        }
        const float d_all = ct_fp16_to_fp32_inline(b->d);
        for (int g = 0; g < 16; g++) {
            const int lo = g < 8 ? b->scales[g] & 15 : b->scales[g - 8] >> 4;
            const int s = (lo | ((b->scales[8 + g % 4] >> (2 * (g / 4))) & 3) << 4) - 32;
            const float d = d_all * (float)s;
            if (d == 0.0f) continue;
            for (int l = 0; l < 16; l++) L[16 * g + l] = (int8_t)(k_clamp(k_round(x[16 * g + l] / d), -4, 3) + 4);
        }
        /* the high bit of level j goes to bit j / 32 of hmask[j % 32] */
        memset(b->hmask, 0, sizeof b->hmask);
        uint8_t L2[CT_QK_K];
        for (int j = 0; j < CT_QK_K; j++) {
            int l = L[j];
            if (l > 3) {
                b->hmask[j % 32] |= (uint8_t)(1u << (j / 32));
                l -= 4;
            }
            L2[j] = (uint8_t)l;
        }
        k_pack2(L2, b->qs);
    }
}

/* ---- Q4_K and Q5_K ----------------------------------------------------------------------- */

/* The shared part of Q4_K and Q5_K: 8 groups of 32 fitted with weights av + |x|
 * (av = the group's rms), the 6-bit scales and mins packed as get_scale_min_k4 reads
 * them, then the levels 0..nmax again against the stored scale and min. */
static void k_quantize_q45(const float *x, int nmax, float rmin, int nstep, ct_fp16 *d_out, ct_fp16 *dmin_out,
                           uint8_t *scales, uint8_t *L) {
    float w[32], sc[8], mn[8];
    float max_sc = 0, max_mn = 0;
    for (int g = 0; g < 8; g++) {
        const float *xg = x + 32 * g;
        float s2 = 0;
        for (int l = 0; l < 32; l++) s2 += xg[l] * xg[l];
        const float av = sqrtf(s2 / 32);
        for (int l = 0; l < 32; l++) w[l] = av + fabsf(xg[l]);
        sc[g] = k_fit_affine(32, nmax, xg, w, L + 32 * g, &mn[g], rmin, 0.1f, nstep, false);
        if (sc[g] > max_sc) max_sc = sc[g];
        if (mn[g] > max_mn) max_mn = mn[g];
    }
    const float inv_sc = max_sc > 0 ? 63.0f / max_sc : 0.0f;
    const float inv_mn = max_mn > 0 ? 63.0f / max_mn : 0.0f;
    for (int g = 0; g < 8; g++) {
        uint8_t ls = k_low_u8(k_round(inv_sc * sc[g]));
        uint8_t lm = k_low_u8(k_round(inv_mn * mn[g]));
        if (ls > 63) ls = 63;
        if (lm > 63) lm = 63;
        if (g < 4) {
            scales[g] = ls;
            scales[g + 4] = lm;
        } else {
            scales[g + 4] = (uint8_t)((ls & 15) | (lm & 15) << 4);
            scales[g - 4] |= (uint8_t)((ls >> 4) << 6);
            scales[g] |= (uint8_t)((lm >> 4) << 6);
        }
    }
    *d_out = ct_fp32_to_fp16_inline(max_sc / 63.0f);
    *dmin_out = ct_fp32_to_fp16_inline(max_mn / 63.0f);
    const float d_all = ct_fp16_to_fp32_inline(*d_out), m_all = ct_fp16_to_fp32_inline(*dmin_out);
    for (int g = 0; g < 8; g++) {
        int s, m;
        if (g < 4) {
            s = scales[g] & 63;
            m = scales[g + 4] & 63;
        } else {
            s = (scales[g + 4] & 15) | (scales[g - 4] >> 6) << 4;
            m = (scales[g + 4] >> 4) | (scales[g] >> 6) << 4;
        }
        const float d = d_all * (float)s;
        if (d == 0.0f) continue;
        const float dm = m_all * (float)m;
        for (int l = 0; l < 32; l++) {
            L[32 * g + l] = (uint8_t)k_clamp(k_round((x[32 * g + l] + dm) / d), 0, nmax);
        }
    }
}

static void quantize_q4_K(const float *restrict x, void *restrict vy, int64_t n) {
    block_q4_K *y = vy;
    for (int64_t ib = 0; ib < n / CT_QK_K; ib++, x += CT_QK_K) {
        block_q4_K *b = &y[ib];
        uint8_t L[CT_QK_K];
        ct_fp16 d, dmin;
        k_quantize_q45(x, 15, -1.0f, 20, &d, &dmin, b->scales, L);
        b->d = d;
        b->dmin = dmin;
        /* each run of 64: element l in the low nibble of byte l, element l + 32 in the high */
        for (int r = 0; r < 4; r++) {
            for (int l = 0; l < 32; l++) b->qs[32 * r + l] = (uint8_t)(L[64 * r + l] | L[64 * r + l + 32] << 4);
        }
    }
}

static void quantize_q5_K(const float *restrict x, void *restrict vy, int64_t n) {
    block_q5_K *y = vy;
    for (int64_t ib = 0; ib < n / CT_QK_K; ib++, x += CT_QK_K) {
        block_q5_K *b = &y[ib];
        uint8_t L[CT_QK_K];
        ct_fp16 d, dmin;
        k_quantize_q45(x, 31, -0.5f, 15, &d, &dmin, b->scales, L);
        b->d = d;
        b->dmin = dmin;
        /* as Q4_K, with the fifth bit of run r's low (high) element in bit 2r (2r+1) of qh */
        memset(b->qh, 0, sizeof b->qh);
        for (int r = 0; r < 4; r++) {
            for (int l = 0; l < 32; l++) {
                const int lo = L[64 * r + l], hi = L[64 * r + l + 32];
                b->qh[l] |= (uint8_t)((lo >> 4) << (2 * r) | (hi >> 4) << (2 * r + 1));
                b->qs[32 * r + l] = (uint8_t)((lo & 15) | (hi & 15) << 4);
            }
        }
    }
}

/* ---- Q6_K ------------------------------------------------------------------------------ */

static void quantize_q6_K(const float *restrict x, void *restrict vy, int64_t n) {
    block_q6_K *y = vy;
    for (int64_t ib = 0; ib < n / CT_QK_K; ib++, x += CT_QK_K) {
        block_q6_K *b = &y[ib];
        int8_t L[CT_QK_K];
        float sc[16];
        float max_sc = 0, amax = 0;
        for (int g = 0; g < 16; g++) {
            sc[g] = k_fit_q6(x + 16 * g, L + 16 * g);
            const float a = fabsf(sc[g]);
            if (a > amax) {
                amax = a;
                max_sc = sc[g];
            }
        }
        if (amax < K_GROUP_EPS) {
            memset(b, 0, sizeof *b);
            b->d = ct_fp32_to_fp16_inline(0.0f);
            continue;
        }
        const float inv = -128.0f / max_sc;
        b->d = ct_fp32_to_fp16_inline(1 / inv);
        for (int g = 0; g < 16; g++) {
            const int s = k_round(inv * sc[g]);
            b->scales[g] = k_low_i8(s < 127 ? s : 127);
        }
        const float d_all = ct_fp16_to_fp32_inline(b->d);
        for (int g = 0; g < 16; g++) {
            const float d = d_all * (float)b->scales[g];
            if (d == 0.0f) continue;
            for (int l = 0; l < 16; l++) L[16 * g + l] = (int8_t)(k_clamp(k_round(x[16 * g + l] / d), -32, 31) + 32);
        }
        /* each half of 128: ql[l] = elements l | l+64 << 4, ql[l+32] = l+32 | l+96 << 4,
         * qh[l] = the high 2 bits of l, l+32, l+64, l+96 from the bottom up */
        for (int h = 0; h < 2; h++) {
            const int8_t *Lh = L + 128 * h;
            uint8_t *ql = b->ql + 64 * h, *qh = b->qh + 32 * h;
            for (int l = 0; l < 32; l++) {
                const unsigned a = (uint8_t)Lh[l], c = (uint8_t)Lh[l + 32], e = (uint8_t)Lh[l + 64],
                               f = (uint8_t)Lh[l + 96];
                ql[l] = (uint8_t)((a & 15) | (e & 15) << 4);
                ql[l + 32] = (uint8_t)((c & 15) | (f & 15) << 4);
                qh[l] = (uint8_t)((a >> 4) | (c >> 4) << 2 | (e >> 4) << 4 | (f >> 4) << 6);
            }
        }
    }
}

/* ---- Q8_K ------------------------------------------------------------------------------ */

static void quantize_q8_K(const float *restrict x, void *restrict vy, int64_t n) {
    block_q8_K *y = vy;
    for (int64_t ib = 0; ib < n / CT_QK_K; ib++, x += CT_QK_K) {
        block_q8_K *b = &y[ib];
        float amax;
        const float max = k_signed_absmax(CT_QK_K, x, &amax);
        if (amax == 0.0f) {
            /* ggml leaves bsums as they were here; ctensor writes zeros */
            memset(b, 0, sizeof *b);
            continue;
        }
        const float inv = -127.0f / max;
        for (int j = 0; j < CT_QK_K; j++) {
            const int v = k_round(inv * x[j]);
            b->qs[j] = k_low_i8(v < 127 ? v : 127);
        }
        for (int g = 0; g < 16; g++) {
            int sum = 0;
            for (int l = 0; l < 16; l++) sum += b->qs[16 * g + l];
            b->bsums[g] = (int16_t)sum; /* |sum| <= 16 * 128 */
        }
        b->d = 1 / inv;
    }
}

/* ---- IQ4_XS ----------------------------------------------------------------------------- */

static const float k_iq4_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

/* The index of the table value nearest to a (ggml's best_index_int8): exact ties go up,
 * a NaN gives 15. */
static inline int k_iq4_index(float a) {
    int mu = 1;
    for (int k = 1; k < 15; k++) mu += !(a < k_iq4_values[k]);
    return a - k_iq4_values[mu - 1] < k_iq4_values[mu] - a ? mu - 1 : mu;
}

/* ggml's quantize_iq4_xs without importance weights (quantize_row_iq4_nl_impl with a
 * 256 super-block, weights x^2 and ntry = 7): per 32 elements a scale from the table
 * fit and 15 trial scales (itry - 127)/max, then one fp16 super scale -max_scale/32,
 * 6-bit sub-scales, and the indices again against the rounded sub-scale. */
static void quantize_iq4_xs(const float *restrict x, void *restrict vy, int64_t n) {
    block_iq4_xs *y = vy;
    for (int64_t ib = 0; ib < n / CT_QK_K; ib++, x += CT_QK_K) {
        block_iq4_xs *b = &y[ib];
        float sc[8];
        float max_sc = 0, amax_sc = 0;
        for (int s = 0; s < 8; s++) {
            const float *xb = x + 32 * s;
            float w[32];
            for (int j = 0; j < 32; j++) w[j] = xb[j] * xb[j];
            float amax;
            const float max = k_signed_absmax(32, xb, &amax);
            if (amax < K_GROUP_EPS) {
                sc[s] = 0;
                continue;
            }
            float d = -max / k_iq4_values[0];
            float id = 1 / d;
            float sqx = 0, sq2 = 0;
            for (int j = 0; j < 32; j++) {
                const float q = k_iq4_values[k_iq4_index(id * xb[j])];
                sqx += w[j] * q * xb[j];
                sq2 += w[j] * q * q;
            }
            d = sq2 > 0 ? sqx / sq2 : 0.0f;
            float best = d * sqx;
            for (int t = -7; t <= 7; t++) {
                id = (float)(t - 127) / max;
                sqx = sq2 = 0;
                for (int j = 0; j < 32; j++) {
                    const float q = k_iq4_values[k_iq4_index(id * xb[j])];
                    sqx += w[j] * q * xb[j];
                    sq2 += w[j] * q * q;
                }
                if (sq2 > 0 && sqx * sqx > best * sq2) {
                    d = sqx / sq2;
                    best = d * sqx;
                }
            }
            sc[s] = d;
            if (fabsf(d) > amax_sc) {
                amax_sc = fabsf(d);
                max_sc = d;
            }
        }
        const float d = -max_sc / 32;
        b->d = ct_fp32_to_fp16_inline(d);
        const float id = d != 0.0f ? 1 / d : 0.0f;
        uint16_t sh = 0;
        for (int s = 0; s < 8; s++) {
            const int l = k_clamp(k_round(id * sc[s]), -32, 31);
            const float dl = d * (float)l;
            const float idl = dl != 0.0f ? 1 / dl : 0.0f;
            const float *xb = x + 32 * s;
            uint8_t *qs = b->qs + 16 * s;
            for (int j = 0; j < 16; j++) {
                qs[j] = (uint8_t)(k_iq4_index(idl * xb[j]) | k_iq4_index(idl * xb[j + 16]) << 4);
            }
            const int u = l + 32;
            if (s % 2 == 0) {
                b->scales_l[s / 2] = (uint8_t)(u & 15);
            } else {
                b->scales_l[s / 2] |= (uint8_t)((u & 15) << 4);
            }
            sh |= (uint16_t)((u >> 4) << (2 * s));
        }
        b->scales_h = sh;
    }
}

ct_quantize_fn ct_quantize_fn_k(ct_type type) {
    switch (type) {
    case CT_TYPE_Q2_K: return quantize_q2_K;
    case CT_TYPE_Q3_K: return quantize_q3_K;
    case CT_TYPE_Q4_K: return quantize_q4_K;
    case CT_TYPE_Q5_K: return quantize_q5_K;
    case CT_TYPE_Q6_K: return quantize_q6_K;
    case CT_TYPE_Q8_K: return quantize_q8_K;
    case CT_TYPE_IQ4_XS: return quantize_iq4_xs;
    default: return NULL;
    }
}

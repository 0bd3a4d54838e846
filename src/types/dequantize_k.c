/* Dequantization of the 256-element blocks (docs/QUANTIZATION.md,
 * Dequantization: 256-element blocks): K-quants, Q8_K and
 * IQ4_XS, bit for bit as ggml's dequantize_row_*. Scales are multiplied into d
 * first (dl = d*sc), then by the quant, as the reference does. */
#include "core/internal.h"
#include "types/types_internal.h"

void ct_dequantize_row_q2_K(const void *restrict src, float *restrict y, int64_t n) {
    const block_q2_K *x = src;
    const int64_t nb = n / CT_QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        const float min = ct_fp16_to_fp32_inline(x[i].dmin);
        const uint8_t *q = x[i].qs;
        int is = 0;
        for (int half = 0; half < 2; half++, q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int g = 0; g < 2; g++) {
                    const uint8_t sc = x[i].scales[is++];
                    const float dl = d * (float)(sc & 0x0F);
                    const float ml = min * (float)(sc >> 4);
                    for (int l = 0; l < 16; l++) y[l] = dl * (float)((q[l + 16 * g] >> shift) & 3) - ml;
                    y += 16;
                }
            }
        }
    }
}

/* The 16 signed 6-bit scales of a Q3_K block, minus 32. */
static void q3_K_scales(const uint8_t *restrict s, int *restrict out) {
    for (int j = 0; j < 16; j++) {
        const int lo = j < 8 ? (s[j] & 0x0F) : (s[j - 8] >> 4);
        const int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
        out[j] = (lo | hi << 4) - 32;
    }
}

void ct_dequantize_row_q3_K(const void *restrict src, float *restrict y, int64_t n) {
    const block_q3_K *x = src;
    const int64_t nb = n / CT_QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d_all = ct_fp16_to_fp32_inline(x[i].d);
        const uint8_t *q = x[i].qs;
        const uint8_t *hm = x[i].hmask;
        int scales[16];
        q3_K_scales(x[i].scales, scales);
        int is = 0;
        unsigned m = 1;
        for (int half = 0; half < 2; half++, q += 32) {
            for (int shift = 0; shift < 8; shift += 2, m <<= 1) {
                for (int g = 0; g < 2; g++) {
                    const float dl = d_all * (float)scales[is++];
                    for (int l = 0; l < 16; l++) {
                        const int v = ((q[l + 16 * g] >> shift) & 3) - ((hm[l + 16 * g] & m) ? 0 : 4);
                        y[l] = dl * (float)v;
                    }
                    y += 16;
                }
            }
        }
    }
}

static inline void get_scale_min_k4(int j, const uint8_t *restrict q, uint8_t *restrict d, uint8_t *restrict m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t)((q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

void ct_dequantize_row_q4_K(const void *restrict src, float *restrict y, int64_t n) {
    const block_q4_K *x = src;
    const int64_t nb = n / CT_QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *q = x[i].qs;
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        const float min = ct_fp16_to_fp32_inline(x[i].dmin);
        for (int is = 0; is < 8; is += 2, q += 32) {
            uint8_t sc, m;
            get_scale_min_k4(is, x[i].scales, &sc, &m);
            const float d1 = d * (float)sc, m1 = min * (float)m;
            get_scale_min_k4(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * (float)sc, m2 = min * (float)m;
            for (int l = 0; l < 32; l++) y[l] = d1 * (float)(q[l] & 0x0F) - m1;
            for (int l = 0; l < 32; l++) y[l + 32] = d2 * (float)(q[l] >> 4) - m2;
            y += 64;
        }
    }
}

void ct_dequantize_row_q5_K(const void *restrict src, float *restrict y, int64_t n) {
    const block_q5_K *x = src;
    const int64_t nb = n / CT_QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *ql = x[i].qs;
        const uint8_t *qh = x[i].qh;
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        const float min = ct_fp16_to_fp32_inline(x[i].dmin);
        unsigned u1 = 1, u2 = 2;
        for (int is = 0; is < 8; is += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
            uint8_t sc, m;
            get_scale_min_k4(is, x[i].scales, &sc, &m);
            const float d1 = d * (float)sc, m1 = min * (float)m;
            get_scale_min_k4(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * (float)sc, m2 = min * (float)m;
            for (int l = 0; l < 32; l++) y[l] = d1 * (float)((ql[l] & 0x0F) + ((qh[l] & u1) ? 16 : 0)) - m1;
            for (int l = 0; l < 32; l++) y[l + 32] = d2 * (float)((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
            y += 64;
        }
    }
}

void ct_dequantize_row_q6_K(const void *restrict src, float *restrict y, int64_t n) {
    const block_q6_K *x = src;
    const int64_t nb = n / CT_QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        const uint8_t *ql = x[i].ql;
        const uint8_t *qh = x[i].qh;
        const int8_t *sc = x[i].scales;
        for (int half = 0; half < 2; half++, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; l++) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0x0F) | ((qh[l] >> 0) & 3) << 4) - 32;
                const int q2 = ((ql[l + 32] & 0x0F) | ((qh[l] >> 2) & 3) << 4) - 32;
                const int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
                const int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
                y[l] = d * (float)sc[is] * (float)q1;
                y[l + 32] = d * (float)sc[is + 2] * (float)q2;
                y[l + 64] = d * (float)sc[is + 4] * (float)q3;
                y[l + 96] = d * (float)sc[is + 6] * (float)q4;
            }
        }
    }
}

void ct_dequantize_row_q8_K(const void *restrict src, float *restrict y, int64_t n) {
    const block_q8_K *x = src;
    const int64_t nb = n / CT_QK_K;
    for (int64_t i = 0; i < nb; i++, y += CT_QK_K) {
        const float d = x[i].d;
        for (int j = 0; j < CT_QK_K; j++) y[j] = d * (float)x[i].qs[j];
    }
}

void ct_dequantize_row_iq4_xs(const void *restrict src, float *restrict y, int64_t n) {
    const block_iq4_xs *x = src;
    const int64_t nb = n / CT_QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *qs = x[i].qs;
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        const unsigned scales_h = x[i].scales_h;
        for (int ib = 0; ib < CT_QK_K / 32; ib++, y += 32, qs += 16) {
            const int ls = ((x[i].scales_l[ib / 2] >> 4 * (ib % 2)) & 0x0F) | (int)((scales_h >> 2 * ib) & 3) << 4;
            const float dl = d * (float)(ls - 32);
            for (int j = 0; j < 16; j++) {
                y[j] = dl * (float)ct_kvalues_iq4nl[qs[j] & 0x0F];
                y[j + 16] = dl * (float)ct_kvalues_iq4nl[qs[j] >> 4];
            }
        }
    }
}

/* Dequantization of the plain types and the 32-element blocks (docs/QUANTIZATION.md,
 * Dequantization),
 * bit for bit as ggml's dequantize_row_*: d widened to float, then the products
 * in the reference's order (no FMA: the library is built with -ffp-contract=off). */
#include "core/internal.h"
#include "types/types_internal.h"

#include <math.h>
#include <string.h>

void ct_dequantize_row_f32(const void *restrict src, float *restrict dst, int64_t n) {
    memcpy(dst, src, (size_t)n * sizeof(float));
}

/* src may be unaligned: 16 elements at a time through an aligned copy, which
 * also lets the conversion vectorize. */
#define HALF_ROW(conv)                                                                 \
    const uint8_t *s = src;                                                            \
    int64_t i = 0;                                                                     \
    for (; i + 16 <= n; i += 16) {                                                     \
        uint16_t tmp[16];                                                              \
        memcpy(tmp, s + 2 * i, sizeof tmp);                                            \
        for (int k = 0; k < 16; k++) dst[i + k] = conv(tmp[k]);                        \
    }                                                                                  \
    for (; i < n; i++) {                                                               \
        uint16_t h;                                                                    \
        memcpy(&h, s + 2 * i, sizeof h);                                               \
        dst[i] = conv(h);                                                              \
    }

void ct_dequantize_row_f16(const void *restrict src, float *restrict dst, int64_t n) {
    HALF_ROW(ct_fp16_to_fp32_inline)
}

void ct_dequantize_row_bf16(const void *restrict src, float *restrict dst, int64_t n) {
    HALF_ROW(ct_bf16_to_fp32_inline)
}

void ct_dequantize_row_q4_0(const void *restrict src, float *restrict y, int64_t n) {
    const block_q4_0 *x = src;
    const int64_t nb = n / CT_QK4_0;
    for (int64_t i = 0; i < nb; i++, y += CT_QK4_0) {
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        for (int j = 0; j < CT_QK4_0 / 2; j++) {
            const int x0 = (x[i].qs[j] & 0x0F) - 8;
            const int x1 = (x[i].qs[j] >> 4) - 8;
            y[j] = (float)x0 * d;
            y[j + CT_QK4_0 / 2] = (float)x1 * d;
        }
    }
}

/* x * d + m with x86's rule for two NaN operands, the first: x * d. The compiler may
 * emit a float add either way round (gcc does in part of the vectorized loops
 * below), so the rare blocks where both terms can be NaN (m NaN and d NaN or
 * infinite: 0 * inf) take this path; the OpenCL kernels' ct_xadd agrees. */
static float xd_plus_m(int x, float d, float m) {
    const float p = (float)x * d;
    return p != p ? p : p + m;
}

static bool both_terms_may_be_nan(float d, float m) { return isnan(m) && !isfinite(d); }

void ct_dequantize_row_q4_1(const void *restrict src, float *restrict y, int64_t n) {
    const block_q4_1 *x = src;
    const int64_t nb = n / CT_QK4_1;
    for (int64_t i = 0; i < nb; i++, y += CT_QK4_1) {
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        const float m = ct_fp16_to_fp32_inline(x[i].m);
        if (both_terms_may_be_nan(d, m)) {
            for (int j = 0; j < CT_QK4_1 / 2; j++) {
                y[j] = xd_plus_m(x[i].qs[j] & 0x0F, d, m);
                y[j + CT_QK4_1 / 2] = xd_plus_m(x[i].qs[j] >> 4, d, m);
            }
            continue;
        }
        for (int j = 0; j < CT_QK4_1 / 2; j++) {
            const int x0 = x[i].qs[j] & 0x0F;
            const int x1 = x[i].qs[j] >> 4;
            y[j] = (float)x0 * d + m;
            y[j + CT_QK4_1 / 2] = (float)x1 * d + m;
        }
    }
}

void ct_dequantize_row_q5_0(const void *restrict src, float *restrict y, int64_t n) {
    const block_q5_0 *x = src;
    const int64_t nb = n / CT_QK5_0;
    for (int64_t i = 0; i < nb; i++, y += CT_QK5_0) {
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        const uint32_t qh = (uint32_t)x[i].qh[0] | (uint32_t)x[i].qh[1] << 8 | (uint32_t)x[i].qh[2] << 16 |
                            (uint32_t)x[i].qh[3] << 24;
        for (int j = 0; j < CT_QK5_0 / 2; j++) {
            const int xh0 = (int)((qh >> j) << 4) & 0x10;
            const int xh1 = (int)(qh >> (j + 12)) & 0x10;
            const int x0 = ((x[i].qs[j] & 0x0F) | xh0) - 16;
            const int x1 = ((x[i].qs[j] >> 4) | xh1) - 16;
            y[j] = (float)x0 * d;
            y[j + CT_QK5_0 / 2] = (float)x1 * d;
        }
    }
}

void ct_dequantize_row_q5_1(const void *restrict src, float *restrict y, int64_t n) {
    const block_q5_1 *x = src;
    const int64_t nb = n / CT_QK5_1;
    for (int64_t i = 0; i < nb; i++, y += CT_QK5_1) {
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        const float m = ct_fp16_to_fp32_inline(x[i].m);
        const uint32_t qh = (uint32_t)x[i].qh[0] | (uint32_t)x[i].qh[1] << 8 | (uint32_t)x[i].qh[2] << 16 |
                            (uint32_t)x[i].qh[3] << 24;
#define Q5_1_VALUES                                             \
    const int xh0 = (int)((qh >> j) << 4) & 0x10;               \
    const int xh1 = (int)(qh >> (j + 12)) & 0x10;               \
    const int x0 = (x[i].qs[j] & 0x0F) | xh0;                   \
    const int x1 = (x[i].qs[j] >> 4) | xh1;
        if (both_terms_may_be_nan(d, m)) {
            for (int j = 0; j < CT_QK5_1 / 2; j++) {
                Q5_1_VALUES
                y[j] = xd_plus_m(x0, d, m);
                y[j + CT_QK5_1 / 2] = xd_plus_m(x1, d, m);
            }
            continue;
        }
        for (int j = 0; j < CT_QK5_1 / 2; j++) {
            Q5_1_VALUES
            y[j] = (float)x0 * d + m;
            y[j + CT_QK5_1 / 2] = (float)x1 * d + m;
        }
#undef Q5_1_VALUES
    }
}

void ct_dequantize_row_q8_0(const void *restrict src, float *restrict y, int64_t n) {
    const block_q8_0 *x = src;
    const int64_t nb = n / CT_QK8_0;
    for (int64_t i = 0; i < nb; i++, y += CT_QK8_0) {
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        for (int j = 0; j < CT_QK8_0; j++) y[j] = (float)x[i].qs[j] * d;
    }
}

void ct_dequantize_row_iq4_nl(const void *restrict src, float *restrict y, int64_t n) {
    const block_iq4_nl *x = src;
    const int64_t nb = n / CT_QK4_NL;
    for (int64_t i = 0; i < nb; i++, y += CT_QK4_NL) {
        const float d = ct_fp16_to_fp32_inline(x[i].d);
        for (int j = 0; j < CT_QK4_NL / 2; j++) {
            y[j] = d * (float)ct_kvalues_iq4nl[x[i].qs[j] & 0x0F];
            y[j + CT_QK4_NL / 2] = d * (float)ct_kvalues_iq4nl[x[i].qs[j] >> 4];
        }
    }
}

static ct_dequantize_fn portable_fn(ct_type type) {
    switch (type) {
    case CT_TYPE_F32: return ct_dequantize_row_f32;
    case CT_TYPE_F16: return ct_dequantize_row_f16;
    case CT_TYPE_BF16: return ct_dequantize_row_bf16;
    case CT_TYPE_Q4_0: return ct_dequantize_row_q4_0;
    case CT_TYPE_Q4_1: return ct_dequantize_row_q4_1;
    case CT_TYPE_Q5_0: return ct_dequantize_row_q5_0;
    case CT_TYPE_Q5_1: return ct_dequantize_row_q5_1;
    case CT_TYPE_Q8_0: return ct_dequantize_row_q8_0;
    case CT_TYPE_IQ4_NL: return ct_dequantize_row_iq4_nl;
    case CT_TYPE_Q2_K: return ct_dequantize_row_q2_K;
    case CT_TYPE_Q3_K: return ct_dequantize_row_q3_K;
    case CT_TYPE_Q4_K: return ct_dequantize_row_q4_K;
    case CT_TYPE_Q5_K: return ct_dequantize_row_q5_K;
    case CT_TYPE_Q6_K: return ct_dequantize_row_q6_K;
    case CT_TYPE_Q8_K: return ct_dequantize_row_q8_K;
    case CT_TYPE_IQ4_XS: return ct_dequantize_row_iq4_xs;
    default: return NULL;
    }
}

ct_dequantize_fn ct_get_dequantize_fn(ct_type type) {
    if (ct_types_use_avx2()) {
        const ct_dequantize_fn fn = ct_dequantize_fn_avx2(type);
        if (fn) return fn;
    }
    return portable_fn(type);
}

bool ct_type_can_dequantize(ct_type type) { return ct_get_dequantize_fn(type) != NULL; }

ct_status ct_dequantize_row(ct_type type, const void *src, float *dst, int64_t n) {
    ct_status st = ct_type_check("ct_dequantize_row", type);
    if (st != CT_OK) return st;
    const ct_dequantize_fn fn = ct_get_dequantize_fn(type);
    if (fn == NULL) {
        return ct_fail(CT_UNSUPPORTED, "ct_dequantize_row: type %s (%d) cannot be dequantized", ct_type_name(type),
                       (int)type);
    }
    const int64_t blck = ct_type_block_size(type);
    if (n < 0) return ct_fail(CT_INVALID_ARGUMENT, "ct_dequantize_row: n=%lld is negative (type %s)", (long long)n,
                              ct_type_name(type));
    if (n % blck != 0) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_dequantize_row: n=%lld is not a multiple of %s's block size %lld",
                       (long long)n, ct_type_name(type), (long long)blck);
    }
    size_t bytes;
    st = ct_row_size(type, n, &bytes);
    if (st != CT_OK) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_dequantize_row: n=%lld elements of %s overflow size_t", (long long)n,
                       ct_type_name(type));
    }
    size_t out_bytes;
    if (!ct_mul_size((size_t)n, sizeof(float), &out_bytes)) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_dequantize_row: n=%lld floats of dst overflow size_t", (long long)n);
    }
    if (n == 0) return CT_OK;
    if (src == NULL || dst == NULL) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_dequantize_row: %s is NULL (type %s, n=%lld)",
                       src == NULL ? "src" : "dst", ct_type_name(type), (long long)n);
    }
    fn(src, dst, n);
    return CT_OK;
}

/* Row quantizers with ggml's reference arithmetic (quantize_row_*_ref; docs/QUANTIZATION.md,
 * The formats), bit for bit: every product and sum is its own float rounding (the
 * library is built with -ffp-contract=off), in ggml's order. docs/QUANTIZATION.md
 * lists the few places where ctensor pins down what ggml leaves undefined. */
#include "core/cpu_features.h"
#include "core/internal.h"
#include "types/types_internal.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

/* ggml's GROUP_MAX_EPS: IQ4_NL blocks with max |x| below it are all zero. */
#define IQ4NL_GROUP_MAX_EPS 1e-15f

/* ggml converts with (int8_t)f / (uint8_t)f, undefined in C when f is NaN, infinite
 * or out of range (a subnormal d makes 1/d infinite). x86 compilers emit cvttss2si
 * and keep the low byte (out of int32 range gives INT32_MIN, low byte 0); numpy
 * does the same. Written out so the bytes never depend on compiler or CPU. */
static inline uint8_t trunc_low_byte(float v) {
    const int32_t i = (v >= -2147483648.0f && v < 2147483648.0f) ? (int32_t)v : INT32_MIN;
    return (uint8_t)(uint32_t)i;
}

/* (int8_t)roundf(v) the same way: roundf (ties away from zero) done on the
 * truncated integer, exact because v - trunc(v) is exact. */
static inline uint8_t round_low_byte(float v) {
    const bool ok = v >= -2147483648.0f && v < 2147483648.0f;
    const float vs = ok ? v : 0.0f;
    int32_t i = (int32_t)vs;
    const float frac = vs - (float)i;
    i += (frac >= 0.5f) - (frac <= -0.5f);
    return ok ? (uint8_t)(uint32_t)i : 0;
}

/* The low byte read as int8_t, without an implementation-defined conversion. */
static inline int low_byte_as_int8(uint8_t b) { return b < 128 ? (int)b : (int)b - 256; }

/* MIN(hi, (int8_t)v) as ggml computes it, converted to uint8_t as ggml stores it. */
static inline uint8_t trunc_int8_min(float v, int hi) {
    const int i = low_byte_as_int8(trunc_low_byte(v));
    return (uint8_t)(i < hi ? i : hi);
}

void ct_quantize_q8_0_portable(const float *restrict x, void *restrict vy, int64_t n) {
    block_q8_0 *y = vy;
    const int64_t nb = n / CT_QK8_0;
    for (int64_t i = 0; i < nb; i++, x += CT_QK8_0) {
        float amax = 0.0f;
        for (int j = 0; j < CT_QK8_0; j++) {
            const float av = fabsf(x[j]);
            amax = amax > av ? amax : av; /* ggml's MAX(): a NaN is replaced by the next value */
        }
        const float d = amax / 127;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = ct_fp32_to_fp16_inline(d);
        for (int j = 0; j < CT_QK8_0; j++) {
            const float x0 = x[j] * id;
            y[i].qs[j] = (int8_t)low_byte_as_int8(round_low_byte(x0));
        }
    }
}

/* The signed value with the largest |x|, first occurrence (strict <); +0.0 when all are zero. */
static inline float signed_absmax(const float *x) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    return max;
}

void ct_quantize_q4_0_portable(const float *restrict x, void *restrict vy, int64_t n) {
    block_q4_0 *y = vy;
    const int64_t nb = n / CT_QK4_0;
    for (int64_t i = 0; i < nb; i++, x += CT_QK4_0) {
        const float d = signed_absmax(x) / -8; /* an all-zero block gives d = -0.0, as in ggml */
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = ct_fp32_to_fp16_inline(d);
        for (int j = 0; j < CT_QK4_0 / 2; j++) {
            const float x0 = x[j] * id;
            const float x1 = x[j + CT_QK4_0 / 2] * id;
            const uint8_t xi0 = trunc_int8_min(x0 + 8.5f, 15);
            const uint8_t xi1 = trunc_int8_min(x1 + 8.5f, 15);
            y[i].qs[j] = (uint8_t)(xi0 | (unsigned)xi1 << 4);
        }
    }
}

void ct_quantize_q5_0_portable(const float *restrict x, void *restrict vy, int64_t n) {
    block_q5_0 *y = vy;
    const int64_t nb = n / CT_QK5_0;
    for (int64_t i = 0; i < nb; i++, x += CT_QK5_0) {
        const float d = signed_absmax(x) / -16;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = ct_fp32_to_fp16_inline(d);
        uint32_t qh = 0;
        for (int j = 0; j < CT_QK5_0 / 2; j++) {
            const float x0 = x[j] * id;
            const float x1 = x[j + CT_QK5_0 / 2] * id;
            const uint8_t xi0 = trunc_int8_min(x0 + 16.5f, 31);
            const uint8_t xi1 = trunc_int8_min(x1 + 16.5f, 31);
            y[i].qs[j] = (uint8_t)((xi0 & 0x0Fu) | (xi1 & 0x0Fu) << 4);
            qh |= (uint32_t)((xi0 & 0x10u) >> 4) << j;
            qh |= (uint32_t)((xi1 & 0x10u) >> 4) << (j + CT_QK5_0 / 2);
        }
        for (int k = 0; k < 4; k++) y[i].qh[k] = (uint8_t)(qh >> (8 * k));
    }
}

/* min and max from +-FLT_MAX with strict compares, as ggml (NaN is skipped). */
static inline void block_min_max(const float *x, float *min_out, float *max_out) {
    float min = FLT_MAX, max = -FLT_MAX;
    for (int j = 0; j < 32; j++) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    *min_out = min;
    *max_out = max;
}

void ct_quantize_q4_1_portable(const float *restrict x, void *restrict vy, int64_t n) {
    block_q4_1 *y = vy;
    const int64_t nb = n / CT_QK4_1;
    for (int64_t i = 0; i < nb; i++, x += CT_QK4_1) {
        float min, max;
        block_min_max(x, &min, &max);
        const float d = (max - min) / 15;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = ct_fp32_to_fp16_inline(d);
        y[i].m = ct_fp32_to_fp16_inline(min);
        for (int j = 0; j < CT_QK4_1 / 2; j++) {
            const float x0 = (x[j] - min) * id;
            const float x1 = (x[j + CT_QK4_1 / 2] - min) * id;
            const uint8_t xi0 = trunc_int8_min(x0 + 0.5f, 15);
            const uint8_t xi1 = trunc_int8_min(x1 + 0.5f, 15);
            y[i].qs[j] = (uint8_t)(xi0 | (unsigned)xi1 << 4);
        }
    }
}

void ct_quantize_q5_1_portable(const float *restrict x, void *restrict vy, int64_t n) {
    block_q5_1 *y = vy;
    const int64_t nb = n / CT_QK5_1;
    for (int64_t i = 0; i < nb; i++, x += CT_QK5_1) {
        float min, max;
        block_min_max(x, &min, &max);
        const float d = (max - min) / 31;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = ct_fp32_to_fp16_inline(d);
        y[i].m = ct_fp32_to_fp16_inline(min);
        uint32_t qh = 0;
        for (int j = 0; j < CT_QK5_1 / 2; j++) {
            const float x0 = (x[j] - min) * id;
            const float x1 = (x[j + CT_QK5_1 / 2] - min) * id;
            const uint8_t xi0 = trunc_low_byte(x0 + 0.5f); /* no clamp, as ggml */
            const uint8_t xi1 = trunc_low_byte(x1 + 0.5f);
            y[i].qs[j] = (uint8_t)((xi0 & 0x0Fu) | (xi1 & 0x0Fu) << 4);
            qh |= (uint32_t)((xi0 & 0x10u) >> 4) << j;
            qh |= (uint32_t)((xi1 & 0x10u) >> 4) << (j + CT_QK5_1 / 2);
        }
        for (int k = 0; k < 4; k++) y[i].qh[k] = (uint8_t)(qh >> (8 * k));
    }
}

/* ct_kvalues_iq4nl as floats, so the compares need no conversions */
static const float kvalues_f[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

/* ggml's best_index_int8 for the 16 IQ4_NL values, for a block at once and without
 * branches: its binary search ends at mu = 1 + #{k in 1..14 : !(a < v[k])}, and its
 * early returns for a <= v[0] and a >= v[15] give what the final compare gives there.
 * Ties go to the upper neighbour; a NaN ends at 15, as in ggml. */
static inline void iq4nl_best_index(const float *a, uint8_t *L) {
    int32_t mu[CT_QK4_NL];
    for (int j = 0; j < CT_QK4_NL; j++) mu[j] = 1;
    for (int k = 1; k < 15; k++) {
        for (int j = 0; j < CT_QK4_NL; j++) mu[j] += !(a[j] < kvalues_f[k]);
    }
    for (int j = 0; j < CT_QK4_NL; j++) {
        const int m = mu[j];
        L[j] = (uint8_t)(a[j] - kvalues_f[m - 1] < kvalues_f[m] - a[j] ? m - 1 : m);
    }
}

/* quantize_row_iq4_nl_impl with one 32-block, weights x^2 and ntry = -1 (no scale
 * search). With max |x| >= 1e-15 the largest element alone adds x^2*127^2 >= 1.6e-26
 * to sumq2, so sumq2 > 0 unless an element is NaN (then sumq2 is NaN and d = 0, as in
 * ggml; docs/QUANTIZATION.md). */
void ct_quantize_iq4_nl_portable(const float *restrict x, void *restrict vy, int64_t n) {
    block_iq4_nl *y = vy;
    const int64_t nb = n / CT_QK4_NL;
    for (int64_t i = 0; i < nb; i++, x += CT_QK4_NL) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < CT_QK4_NL; j++) {
            const float ax = fabsf(x[j]);
            if (ax > amax) {
                amax = ax;
                max = x[j];
            }
        }
        if (amax < IQ4NL_GROUP_MAX_EPS) {
            /* ggml packs stale indices here; ctensor fixes them to 8 (value 1, times d = 0):
             * docs/QUANTIZATION.md, IQ4_NL. */
            y[i].d = ct_fp32_to_fp16_inline(0.0f);
            memset(y[i].qs, 0x88, sizeof y[i].qs);
            continue;
        }
        const float d0 = max / kvalues_f[0];
        const float id = 1 / d0;
        float sumqx = 0.0f, sumq2 = 0.0f;
        float al[CT_QK4_NL];
        uint8_t L[CT_QK4_NL];
        for (int j = 0; j < CT_QK4_NL; j++) al[j] = id * x[j];
        iq4nl_best_index(al, L);
        for (int j = 0; j < CT_QK4_NL; j++) {
            const float w = x[j] * x[j];
            const float q = kvalues_f[L[j]];
            const float wq = w * q;
            const float wqx = wq * x[j];
            const float wqq = wq * q;
            sumqx += wqx;
            sumq2 += wqq;
        }
        /* ggml's `sumq2 > 0 ? sumqx/sumq2 : 0`: a NaN element makes sumq2 NaN and d +0 */
        const float d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
        /* The sign of a NaN d (inf or huge input) depends on the CPU's NaN rules and on
         * operand order: one canonical NaN makes the block the same everywhere. */
        y[i].d = d != d ? CT_IQ4_NL_NAN_SCALE : ct_fp32_to_fp16_inline(d);
        for (int j = 0; j < CT_QK4_NL / 2; j++) {
            y[i].qs[j] = (uint8_t)(L[j] | L[j + CT_QK4_NL / 2] << 4);
        }
    }
}

static void quantize_f32(const float *restrict x, void *restrict y, int64_t n) {
    memcpy(y, x, (size_t)n * sizeof(float));
}

/* dst may be unaligned (a view at an odd offset): 16 halves at a time through an
 * aligned buffer, which also lets the conversion vectorize. */
#define HALF_ROW(conv)                                                                 \
    uint8_t *out = y;                                                                  \
    int64_t i = 0;                                                                     \
    for (; i + 16 <= n; i += 16) {                                                     \
        uint16_t tmp[16];                                                              \
        for (int k = 0; k < 16; k++) tmp[k] = conv(x[i + k]);                          \
        memcpy(out + 2 * i, tmp, sizeof tmp);                                          \
    }                                                                                  \
    for (; i < n; i++) {                                                               \
        const uint16_t h = conv(x[i]);                                                 \
        memcpy(out + 2 * i, &h, sizeof h);                                             \
    }

static void quantize_f16(const float *restrict x, void *restrict y, int64_t n) {
    HALF_ROW(ct_fp32_to_fp16_inline)
}

static void quantize_bf16(const float *restrict x, void *restrict y, int64_t n) {
    HALF_ROW(ct_fp32_to_bf16_inline)
}

static ct_quantize_fn portable_fn(ct_type type) {
    switch (type) {
    case CT_TYPE_F32: return quantize_f32;
    case CT_TYPE_F16: return quantize_f16;
    case CT_TYPE_BF16: return quantize_bf16;
    case CT_TYPE_Q8_0: return ct_quantize_q8_0_portable;
    case CT_TYPE_Q4_0: return ct_quantize_q4_0_portable;
    case CT_TYPE_Q4_1: return ct_quantize_q4_1_portable;
    case CT_TYPE_Q5_0: return ct_quantize_q5_0_portable;
    case CT_TYPE_Q5_1: return ct_quantize_q5_1_portable;
    case CT_TYPE_IQ4_NL: return ct_quantize_iq4_nl_portable;
    default: return ct_quantize_fn_k(type);
    }
}

static atomic_bool force_portable;

void ct_types_force_portable(bool portable) {
    atomic_store_explicit(&force_portable, portable, memory_order_relaxed);
}

bool ct_types_use_avx2(void) {
    return !atomic_load_explicit(&force_portable, memory_order_relaxed) && ct_cpu_has_avx2_f16c();
}

ct_quantize_fn ct_get_quantize_fn(ct_type type) {
    if (ct_types_use_avx2()) {
        const ct_quantize_fn fn = ct_quantize_fn_avx2(type);
        if (fn) return fn;
    }
    return portable_fn(type);
}

bool ct_type_can_quantize(ct_type type) {
    switch (type) {
    case CT_TYPE_F32:
    case CT_TYPE_F16:
    case CT_TYPE_BF16:
    case CT_TYPE_Q8_0:
    case CT_TYPE_Q4_0:
    case CT_TYPE_Q4_1:
    case CT_TYPE_Q5_0:
    case CT_TYPE_Q5_1:
    case CT_TYPE_IQ4_NL:
    case CT_TYPE_Q2_K:
    case CT_TYPE_Q3_K:
    case CT_TYPE_Q4_K:
    case CT_TYPE_Q5_K:
    case CT_TYPE_Q6_K:
    case CT_TYPE_Q8_K:
    case CT_TYPE_IQ4_XS:
        return true;
    default:
        return false;
    }
}

ct_status ct_quantize_row(ct_type type, const float *src, void *dst, int64_t n) {
    if (!ct_type_is_valid(type)) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_quantize_row: type %d is not a valid type id (n=%lld)", (int)type,
                       (long long)n);
    }
    const char *name = ct_type_name(type);
    if (!ct_type_can_quantize(type)) {
        return ct_fail(CT_UNSUPPORTED, "ct_quantize_row: type %s has no quantizer (n=%lld)", name, (long long)n);
    }
    const int64_t blck = ct_type_block_size(type);
    if (n < 0) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_quantize_row: type %s n=%lld is negative", name, (long long)n);
    }
    if (n % blck != 0) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_quantize_row: type %s n=%lld is not a multiple of the block size %lld",
                       name, (long long)n, (long long)blck);
    }
    size_t bytes;
    if (!ct_mul_size((size_t)(n / blck), ct_type_size(type), &bytes) ||
        !ct_mul_size((size_t)n, sizeof(float), &bytes)) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_quantize_row: type %s n=%lld overflows size_t", name, (long long)n);
    }
    if (n == 0) return CT_OK;
    if (src == NULL || dst == NULL) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_quantize_row: %s is NULL (type %s, n=%lld)",
                       src == NULL ? "src" : "dst", name, (long long)n);
    }
    ct_get_quantize_fn(type)(src, dst, n);
    return CT_OK;
}

/* fp16 and bf16 conversion (docs/QUANTIZATION.md, fp16 and bf16 conversion), scalar and by rows. */
#include "core/internal.h"
#include "types/types_internal.h"

ct_fp16 ct_fp32_to_fp16(float x) { return ct_fp32_to_fp16_inline(x); }
float ct_fp16_to_fp32(ct_fp16 h) { return ct_fp16_to_fp32_inline(h); }
ct_bf16 ct_fp32_to_bf16(float x) { return ct_fp32_to_bf16_inline(x); }
float ct_bf16_to_fp32(ct_bf16 h) { return ct_bf16_to_fp32_inline(h); }

static ct_status check_row(const char *func, const void *src, const void *dst, int64_t n) {
    if (n < 0) return ct_fail(CT_INVALID_ARGUMENT, "%s: n=%lld is negative", func, (long long)n);
    if (n > 0 && (src == NULL || dst == NULL)) {
        return ct_fail(CT_INVALID_ARGUMENT, "%s: %s is NULL with n=%lld", func, src == NULL ? "src" : "dst",
                       (long long)n);
    }
    return CT_OK;
}

/* The row converters are the F16/BF16 entries of the quantize and dequantize
 * tables, which pick the AVX2 or the portable loop. */
ct_status ct_fp32_to_fp16_row(const float *src, ct_fp16 *dst, int64_t n) {
    ct_status st = check_row("ct_fp32_to_fp16_row", src, dst, n);
    if (st == CT_OK) ct_get_quantize_fn(CT_TYPE_F16)(src, dst, n);
    return st;
}

ct_status ct_fp16_to_fp32_row(const ct_fp16 *src, float *dst, int64_t n) {
    ct_status st = check_row("ct_fp16_to_fp32_row", src, dst, n);
    if (st == CT_OK) ct_get_dequantize_fn(CT_TYPE_F16)(src, dst, n);
    return st;
}

ct_status ct_fp32_to_bf16_row(const float *src, ct_bf16 *dst, int64_t n) {
    ct_status st = check_row("ct_fp32_to_bf16_row", src, dst, n);
    if (st == CT_OK) ct_get_quantize_fn(CT_TYPE_BF16)(src, dst, n);
    return st;
}

ct_status ct_bf16_to_fp32_row(const ct_bf16 *src, float *dst, int64_t n) {
    ct_status st = check_row("ct_bf16_to_fp32_row", src, dst, n);
    if (st == CT_OK) ct_get_dequantize_fn(CT_TYPE_BF16)(src, dst, n);
    return st;
}

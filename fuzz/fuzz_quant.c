/* libFuzzer target for ct_quantize_row, ct_dequantize_row, ct_row_size and the
 * fp16/bf16 row converters. Buffers are heap blocks of exactly the size the
 * call may touch, so AddressSanitizer catches any overrun. A valid type and n
 * (a whole number of blocks) must succeed; anything else must return a status
 * with a message naming the function, touching nothing. Quantization must be
 * deterministic, and F32/F16/BF16 must round-trip as the scalar converters do. */
#include "ctensor.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ELEMENTS = 1 << 14 };

#define FUZZ_ASSERT(cond, ...)                                                          \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "fuzz_quant: %s:%d: %s: ", __FILE__, __LINE__, #cond);      \
            fprintf(stderr, __VA_ARGS__);                                               \
            fprintf(stderr, " (last error: %s: %s)\n", ct_status_str(ct_last_status()), \
                    ct_last_error());                                                   \
            __builtin_trap();                                                           \
        }                                                                               \
    } while (0)

static bool failed_with_message(ct_status st, const char *fn) {
    return (st == CT_INVALID_ARGUMENT || st == CT_UNSUPPORTED) && ct_last_status() == st &&
           strncmp(ct_last_error(), fn, strlen(fn)) == 0;
}

static int64_t pick_n(const uint8_t *d, size_t size, int64_t block) {
    uint8_t b = size > 1 ? d[1] : 0;
    uint8_t v = size > 2 ? d[2] : 0;
    switch (b & 7) {
    case 0: return -(int64_t)v - 1;
    case 1: return (int64_t)v;                    /* mostly not whole blocks */
    case 2: return INT64_MAX - v;
    case 3: return ((int64_t)1 << 62) + block * v; /* whole blocks, overflowing sizes */
    default: return block * (int64_t)(v % 64);    /* whole blocks, small */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static bool quiet;
    if (!quiet) {
        ct_log_set_level(CT_LOG_NONE);
        quiet = true;
    }
    ct_type type = (ct_type)(int8_t)data[0];
    if (data[0] < 200) type = (ct_type)(data[0] % 40);
    int64_t bs = ct_type_block_size(type);
    int64_t n = pick_n(data, size, bs > 0 ? bs : 1);
    const uint8_t *payload = size > 3 ? data + 3 : data;
    size_t payload_size = size > 3 ? size - 3 : 0;

    size_t row = 0;
    ct_status rs = ct_row_size(type, n, &row);
    bool whole = ct_type_is_valid(type) && n >= 0 && bs > 0 && n % bs == 0;
    if (rs == CT_OK) {
        FUZZ_ASSERT(whole && row == (size_t)(n / bs) * ct_type_size(type), "ct_row_size(%d, %lld) = %zu", (int)type,
                    (long long)n, row);
    } else {
        FUZZ_ASSERT(failed_with_message(rs, "ct_row_size"), "ct_row_size(%d, %lld)", (int)type, (long long)n);
    }
    bool small = rs == CT_OK && n <= MAX_ELEMENTS;

    /* quantize: n floats in, row bytes out */
    {
        bool expect_ok = small && ct_type_can_quantize(type);
        size_t n_src = expect_ok ? (size_t)n : 1;
        float *src = malloc(n_src * sizeof(float));
        uint8_t *dst = malloc(expect_ok && row ? row : 1);
        uint8_t *dst2 = malloc(expect_ok && row ? row : 1);
        if (!src || !dst || !dst2) goto q_done;
        for (size_t i = 0; i < n_src; i++) {
            uint32_t bits = 0;
            for (int k = 0; k < 4 && payload_size; k++) {
                bits |= (uint32_t)payload[(i * 4 + (size_t)k) % payload_size] << (8 * k);
            }
            memcpy(&src[i], &bits, 4);
        }
        if (expect_ok) {
            FUZZ_ASSERT(ct_quantize_row(type, src, dst, n) == CT_OK, "quantize %s n=%lld", ct_type_name(type),
                        (long long)n);
            FUZZ_ASSERT(ct_quantize_row(type, src, dst2, n) == CT_OK, "quantize again");
            FUZZ_ASSERT(memcmp(dst, dst2, row) == 0, "quantize %s is not deterministic", ct_type_name(type));
            if (type == CT_TYPE_F32) FUZZ_ASSERT(memcmp(dst, src, row) == 0, "f32 copy");
            for (int64_t i = 0; i < n && (type == CT_TYPE_F16 || type == CT_TYPE_BF16); i++) {
                uint16_t h;
                memcpy(&h, dst + 2 * i, 2);
                uint16_t want = type == CT_TYPE_F16 ? ct_fp32_to_fp16(src[i]) : ct_fp32_to_bf16(src[i]);
                FUZZ_ASSERT(h == want, "%s element %lld", ct_type_name(type), (long long)i);
            }
            /* and back, where the type can be read */
            if (ct_type_can_dequantize(type) && n > 0) {
                float *back = malloc((size_t)n * sizeof(float));
                if (back) {
                    FUZZ_ASSERT(ct_dequantize_row(type, dst, back, n) == CT_OK, "dequantize after quantize");
                    if (type == CT_TYPE_F32) FUZZ_ASSERT(memcmp(back, src, (size_t)n * 4) == 0, "f32 round trip");
                    free(back);
                }
            }
        } else if (rs == CT_OK && n <= MAX_ELEMENTS) {
            FUZZ_ASSERT(failed_with_message(ct_quantize_row(type, src, dst, n), "ct_quantize_row"),
                        "quantize of unquantizable %d", (int)type);
        } else if (rs != CT_OK) {
            /* an invalid type or n: refused before touching the 1-element buffers */
            ct_status st = ct_quantize_row(type, src, dst, n);
            FUZZ_ASSERT(failed_with_message(st, "ct_quantize_row"), "quantize type %d n=%lld gave %s", (int)type,
                        (long long)n, ct_status_str(st));
        }
        if (n > 0) {
            FUZZ_ASSERT(failed_with_message(ct_quantize_row(type, NULL, dst, n), "ct_quantize_row"), "NULL src");
            FUZZ_ASSERT(failed_with_message(ct_quantize_row(type, src, NULL, n), "ct_quantize_row"), "NULL dst");
        }
    q_done:
        free(src);
        free(dst);
        free(dst2);
    }

    /* dequantize: row bytes (from the input, cycled) in, n floats out */
    {
        bool expect_ok = small && ct_type_can_dequantize(type);
        size_t n_src = expect_ok && row ? row : 1;
        uint8_t *src = malloc(n_src);
        float *dst = malloc(expect_ok && n ? (size_t)n * sizeof(float) : sizeof(float));
        if (!src || !dst) goto d_done;
        for (size_t i = 0; i < n_src; i++) src[i] = payload_size ? payload[i % payload_size] : (uint8_t)i;
        bool expect_refusal = rs != CT_OK || !ct_type_can_dequantize(type);
        ct_status st = expect_ok || expect_refusal ? ct_dequantize_row(type, src, dst, n) : CT_OK;
        if (expect_ok) {
            FUZZ_ASSERT(st == CT_OK, "dequantize %s n=%lld", ct_type_name(type), (long long)n);
            for (int64_t i = 0; i < n && type == CT_TYPE_F16; i++) {
                uint16_t h;
                memcpy(&h, src + 2 * i, 2);
                float want = ct_fp16_to_fp32(h);
                FUZZ_ASSERT(memcmp(&dst[i], &want, 4) == 0, "f16 element %lld", (long long)i);
            }
        } else if (expect_refusal) {
            FUZZ_ASSERT(failed_with_message(st, "ct_dequantize_row"), "dequantize type %d n=%lld gave %s", (int)type,
                        (long long)n, ct_status_str(st));
        }
        if (n > 0) {
            FUZZ_ASSERT(failed_with_message(ct_dequantize_row(type, NULL, dst, n), "ct_dequantize_row"), "NULL src");
            FUZZ_ASSERT(failed_with_message(ct_dequantize_row(type, src, NULL, n), "ct_dequantize_row"), "NULL dst");
        }
    d_done:
        free(src);
        free(dst);
    }

    /* the plain converters with negative counts */
    if (n < 0) {
        float f = 0;
        uint16_t h = 0;
        FUZZ_ASSERT(failed_with_message(ct_fp32_to_fp16_row(&f, &h, n), "ct_fp32_to_fp16_row"), "negative n");
        FUZZ_ASSERT(failed_with_message(ct_bf16_to_fp32_row(&h, &f, n), "ct_bf16_to_fp32_row"), "negative n");
    }
    return 0;
}

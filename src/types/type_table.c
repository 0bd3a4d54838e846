/* The type table (docs/QUANTIZATION.md, Type table): names, block sizes and bytes per block. */
#include "core/internal.h"
#include "types/types_internal.h"

#include <string.h>

typedef struct type_traits {
    const char *name; /* NULL: removed id */
    int64_t blck;
    size_t size;
    bool quantized;
} type_traits;

static const type_traits traits[CT_TYPE_COUNT] = {
    [CT_TYPE_F32] = {"f32", 1, sizeof(float), false},
    [CT_TYPE_F16] = {"f16", 1, sizeof(ct_fp16), false},
    [CT_TYPE_Q4_0] = {"q4_0", CT_QK4_0, sizeof(block_q4_0), true},
    [CT_TYPE_Q4_1] = {"q4_1", CT_QK4_1, sizeof(block_q4_1), true},
    [CT_TYPE_Q5_0] = {"q5_0", CT_QK5_0, sizeof(block_q5_0), true},
    [CT_TYPE_Q5_1] = {"q5_1", CT_QK5_1, sizeof(block_q5_1), true},
    [CT_TYPE_Q8_0] = {"q8_0", CT_QK8_0, sizeof(block_q8_0), true},
    [CT_TYPE_Q8_1] = {"q8_1", CT_QK8_1, sizeof(block_q8_1), true},
    [CT_TYPE_Q2_K] = {"q2_K", CT_QK_K, sizeof(block_q2_K), true},
    [CT_TYPE_Q3_K] = {"q3_K", CT_QK_K, sizeof(block_q3_K), true},
    [CT_TYPE_Q4_K] = {"q4_K", CT_QK_K, sizeof(block_q4_K), true},
    [CT_TYPE_Q5_K] = {"q5_K", CT_QK_K, sizeof(block_q5_K), true},
    [CT_TYPE_Q6_K] = {"q6_K", CT_QK_K, sizeof(block_q6_K), true},
    [CT_TYPE_Q8_K] = {"q8_K", CT_QK_K, sizeof(block_q8_K), true},
    [CT_TYPE_IQ2_XXS] = {"iq2_xxs", CT_QK_K, sizeof(block_iq2_xxs), true},
    [CT_TYPE_IQ2_XS] = {"iq2_xs", CT_QK_K, sizeof(block_iq2_xs), true},
    [CT_TYPE_IQ3_XXS] = {"iq3_xxs", CT_QK_K, sizeof(block_iq3_xxs), true},
    [CT_TYPE_IQ1_S] = {"iq1_s", CT_QK_K, sizeof(block_iq1_s), true},
    [CT_TYPE_IQ4_NL] = {"iq4_nl", CT_QK4_NL, sizeof(block_iq4_nl), true},
    [CT_TYPE_IQ3_S] = {"iq3_s", CT_QK_K, sizeof(block_iq3_s), true},
    [CT_TYPE_IQ2_S] = {"iq2_s", CT_QK_K, sizeof(block_iq2_s), true},
    [CT_TYPE_IQ4_XS] = {"iq4_xs", CT_QK_K, sizeof(block_iq4_xs), true},
    [CT_TYPE_I8] = {"i8", 1, sizeof(int8_t), false},
    [CT_TYPE_I16] = {"i16", 1, sizeof(int16_t), false},
    [CT_TYPE_I32] = {"i32", 1, sizeof(int32_t), false},
    [CT_TYPE_I64] = {"i64", 1, sizeof(int64_t), false},
    [CT_TYPE_F64] = {"f64", 1, sizeof(double), false},
    [CT_TYPE_IQ1_M] = {"iq1_m", CT_QK_K, sizeof(block_iq1_m), true},
    [CT_TYPE_BF16] = {"bf16", 1, sizeof(ct_bf16), false},
    [CT_TYPE_TQ1_0] = {"tq1_0", CT_QK_K, sizeof(block_tq1_0), true},
    [CT_TYPE_TQ2_0] = {"tq2_0", CT_QK_K, sizeof(block_tq2_0), true},
};

const int8_t ct_kvalues_iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

/* Unsigned compare so that negative enum values (an int underneath) are rejected. */
bool ct_type_is_valid(ct_type type) {
    return (unsigned)type < (unsigned)CT_TYPE_COUNT && traits[type].name != NULL;
}

ct_status ct_type_check(const char *func, ct_type type) {
    if (ct_type_is_valid(type)) return CT_OK;
    if ((unsigned)type < (unsigned)CT_TYPE_COUNT) {
        return ct_fail(CT_INVALID_ARGUMENT, "%s: type %d is a removed type id", func, (int)type);
    }
    return ct_fail(CT_INVALID_ARGUMENT, "%s: type %d is not a type id (valid ids are 0..%d)", func, (int)type,
                   CT_TYPE_COUNT - 1);
}

const char *ct_type_name(ct_type type) { return ct_type_is_valid(type) ? traits[type].name : "invalid"; }

int64_t ct_type_block_size(ct_type type) { return ct_type_is_valid(type) ? traits[type].blck : 0; }

size_t ct_type_size(ct_type type) { return ct_type_is_valid(type) ? traits[type].size : 0; }

bool ct_type_is_quantized(ct_type type) { return ct_type_is_valid(type) && traits[type].quantized; }

/* ASCII case-insensitive equality, independent of the locale. */
static bool name_eq_ci(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char ca = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char cb = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (ca != cb) return false;
    }
    return *a == *b;
}

ct_status ct_type_from_name(const char *name, ct_type *type) {
    if (name == NULL || type == NULL) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_type_from_name: %s is NULL", name == NULL ? "name" : "type");
    }
    for (int t = 0; t < CT_TYPE_COUNT; t++) {
        if (traits[t].name != NULL && name_eq_ci(traits[t].name, name)) {
            *type = (ct_type)t;
            return CT_OK;
        }
    }
    return ct_fail(CT_INVALID_ARGUMENT, "ct_type_from_name: unknown type name \"%s\"", name);
}

ct_status ct_row_size(ct_type type, int64_t n, size_t *size) {
    if (size == NULL) return ct_fail(CT_INVALID_ARGUMENT, "ct_row_size: size is NULL");
    ct_status st = ct_type_check("ct_row_size", type);
    if (st != CT_OK) return st;
    const type_traits *tt = &traits[type];
    if (n < 0) return ct_fail(CT_INVALID_ARGUMENT, "ct_row_size: n=%lld is negative", (long long)n);
    if (n % tt->blck != 0) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_row_size: n=%lld is not a multiple of %s's block size %lld",
                       (long long)n, tt->name, (long long)tt->blck);
    }
    uint64_t bytes;
    if (__builtin_mul_overflow((uint64_t)(n / tt->blck), (uint64_t)tt->size, &bytes) || bytes > SIZE_MAX) {
        return ct_fail(CT_INVALID_ARGUMENT, "ct_row_size: n=%lld elements of %s overflow size_t", (long long)n,
                       tt->name);
    }
    *size = (size_t)bytes;
    return CT_OK;
}

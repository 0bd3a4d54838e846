/* The type table against docs/QUANTIZATION.md, Type table, name lookups and ct_row_size. */
#include "testutil.h"

#include <stdint.h>
#include <string.h>

typedef struct expected_type {
    int id;
    const char *name;
    int64_t blck;
    size_t size;
    bool quantized;
} expected_type;

/* docs/QUANTIZATION.md, Type table, written out independently of the library's table. */
static const expected_type expected[] = {
    {0, "f32", 1, 4, false},          {1, "f16", 1, 2, false},          {2, "q4_0", 32, 18, true},
    {3, "q4_1", 32, 20, true},        {6, "q5_0", 32, 22, true},        {7, "q5_1", 32, 24, true},
    {8, "q8_0", 32, 34, true},        {9, "q8_1", 32, 36, true},        {10, "q2_K", 256, 84, true},
    {11, "q3_K", 256, 110, true},     {12, "q4_K", 256, 144, true},     {13, "q5_K", 256, 176, true},
    {14, "q6_K", 256, 210, true},     {15, "q8_K", 256, 292, true},     {16, "iq2_xxs", 256, 66, true},
    {17, "iq2_xs", 256, 74, true},    {18, "iq3_xxs", 256, 98, true},   {19, "iq1_s", 256, 50, true},
    {20, "iq4_nl", 32, 18, true},     {21, "iq3_s", 256, 110, true},    {22, "iq2_s", 256, 82, true},
    {23, "iq4_xs", 256, 136, true},   {24, "i8", 1, 1, false},          {25, "i16", 1, 2, false},
    {26, "i32", 1, 4, false},         {27, "i64", 1, 8, false},         {28, "f64", 1, 8, false},
    {29, "iq1_m", 256, 56, true},     {30, "bf16", 1, 2, false},        {34, "tq1_0", 256, 54, true},
    {35, "tq2_0", 256, 66, true},
};
static const int removed[] = {4, 5, 31, 32, 33, 36, 37, 38};

static void test_table(void) {
    CHECK(CT_TYPE_COUNT == 39);
    bool seen[CT_TYPE_COUNT] = {false};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const expected_type *e = &expected[i];
        const ct_type t = (ct_type)e->id;
        seen[e->id] = true;
        CHECK_MSG(ct_type_is_valid(t), "id %d", e->id);
        CHECK_MSG(strcmp(ct_type_name(t), e->name) == 0, "id %d: %s vs %s", e->id, ct_type_name(t), e->name);
        CHECK_MSG(ct_type_block_size(t) == e->blck, "id %d (%s): block %lld", e->id, e->name,
                  (long long)ct_type_block_size(t));
        CHECK_MSG(ct_type_size(t) == e->size, "id %d (%s): size %zu", e->id, e->name, ct_type_size(t));
        CHECK_MSG(ct_type_is_quantized(t) == e->quantized, "id %d (%s)", e->id, e->name);
        CHECK(e->size % 2 == 0 || e->size == 1); /* blocks are 2-aligned; i8 is the one 1-byte type */

        ct_type back = CT_TYPE_COUNT;
        CHECK(ct_type_from_name(e->name, &back) == CT_OK && back == t);

        /* one and three blocks, and zero elements */
        size_t sz = 12345;
        CHECK(ct_row_size(t, 0, &sz) == CT_OK && sz == 0);
        CHECK(ct_row_size(t, e->blck, &sz) == CT_OK && sz == e->size);
        CHECK(ct_row_size(t, 3 * e->blck, &sz) == CT_OK && sz == 3 * e->size);
        if (e->blck > 1) {
            ct_clear_error();
            CHECK(ct_row_size(t, e->blck + 1, &sz) == CT_INVALID_ARGUMENT);
            char msg[128];
            snprintf(msg, sizeof msg, "not a multiple of %s's block size %lld", e->name, (long long)e->blck);
            CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
            CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_row_size");
        }
    }
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
        CHECK(!seen[removed[i]]);
        seen[removed[i]] = true;
    }
    for (int i = 0; i < CT_TYPE_COUNT; i++) CHECK_MSG(seen[i], "id %d neither listed nor removed", i);
}

static void check_invalid(int id, const char *what) {
    const ct_type t = (ct_type)id;
    CHECK_MSG(!ct_type_is_valid(t), "id %d", id);
    CHECK(strcmp(ct_type_name(t), "invalid") == 0);
    CHECK(ct_type_block_size(t) == 0);
    CHECK(ct_type_size(t) == 0);
    CHECK(!ct_type_is_quantized(t));
    CHECK(!ct_type_can_dequantize(t));
    size_t sz = 777;
    char msg[96];
    snprintf(msg, sizeof msg, "ct_row_size: type %d %s", id, what);
    ct_clear_error();
    CHECK(ct_row_size(t, 32, &sz) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, msg);
    CHECK(sz == 777);
}

static void test_invalid(void) {
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) check_invalid(removed[i], "is a removed type id");
    check_invalid(39, "is not a type id");
    check_invalid(1000, "is not a type id");
    check_invalid(-1, "is not a type id");
    check_invalid(INT32_MIN, "is not a type id");
}

static void test_from_name(void) {
    ct_type t = CT_TYPE_F32;
    /* any case finds the type; ct_type_name keeps ggml's spelling */
    const struct {
        const char *name;
        ct_type type;
        const char *canonical;
    } good[] = {{"Q8_0", CT_TYPE_Q8_0, "q8_0"}, {"q4_k", CT_TYPE_Q4_K, "q4_K"}, {"Q4_K", CT_TYPE_Q4_K, "q4_K"},
                {"F32", CT_TYPE_F32, "f32"}, {"Iq4_Nl", CT_TYPE_IQ4_NL, "iq4_nl"}, {"BF16", CT_TYPE_BF16, "bf16"},
                {"q6_K", CT_TYPE_Q6_K, "q6_K"}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        t = CT_TYPE_COUNT;
        CHECK_MSG(ct_type_from_name(good[i].name, &t) == CT_OK && t == good[i].type, "\"%s\": %s (got %d)",
                  good[i].name, ct_last_error(), (int)t);
        CHECK_MSG(strcmp(ct_type_name(t), good[i].canonical) == 0, "\"%s\" -> %s, want %s", good[i].name,
                  ct_type_name(t), good[i].canonical);
    }
    const char *bad[] = {"invalid", "", "INVALID", "q4_2", "Q4_2", "f32 ", " F32", "float", "q8_0x", "q8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ct_clear_error();
        t = CT_TYPE_Q8_0;
        CHECK_MSG(ct_type_from_name(bad[i], &t) == CT_INVALID_ARGUMENT, "\"%s\"", bad[i]);
        CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_type_from_name: unknown type name");
        CHECK(t == CT_TYPE_Q8_0); /* untouched on failure */
    }
    CHECK(ct_type_from_name(NULL, &t) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_type_from_name: name is NULL");
    CHECK(ct_type_from_name("f32", NULL) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_type_from_name: type is NULL");
}

static void test_row_size_errors(void) {
    size_t sz = 5;
    CHECK(ct_row_size(CT_TYPE_F32, -1, &sz) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_row_size: n=-1 is negative");
    CHECK(ct_row_size(CT_TYPE_Q4_0, INT64_MIN, &sz) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "is negative");
    CHECK(ct_row_size(CT_TYPE_Q4_0, 33, &sz) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_row_size: n=33 is not a multiple of q4_0's block size 32");
    CHECK(ct_row_size(CT_TYPE_Q4_K, 128, &sz) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "n=128 is not a multiple of q4_K's block size 256");
    CHECK(sz == 5);
    CHECK(ct_row_size(CT_TYPE_F32, 1, NULL) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_row_size: size is NULL");

    /* overflow: the byte count does not fit size_t */
    CHECK(ct_row_size(CT_TYPE_F32, INT64_MAX, &sz) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overflow");
    CHECK(ct_row_size(CT_TYPE_F64, INT64_MAX / 2, &sz) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "of f64 overflow");
    CHECK(sz == 5);
    if (SIZE_MAX >= UINT64_MAX) {
        /* the largest counts that still fit: 2^64 - 2 bytes of f16, 2^64 - 4 of f32 */
        CHECK(ct_row_size(CT_TYPE_I8, INT64_MAX, &sz) == CT_OK && sz == (size_t)INT64_MAX);
        CHECK(ct_row_size(CT_TYPE_F16, INT64_MAX, &sz) == CT_OK && sz == (size_t)INT64_MAX * 2);
        CHECK(ct_row_size(CT_TYPE_F32, INT64_MAX / 2, &sz) == CT_OK && sz == (size_t)(INT64_MAX / 2) * 4);
        CHECK(ct_row_size(CT_TYPE_F32, INT64_MAX / 2 + 1, &sz) == CT_INVALID_ARGUMENT);
        CHECK_ERROR(CT_INVALID_ARGUMENT, "of f32 overflow");
        /* block types: at most 292/256 bytes per element, so every whole-block count fits */
        const int64_t max_q80 = INT64_MAX / 32 * 32, max_k = INT64_MAX / 256 * 256;
        CHECK(ct_row_size(CT_TYPE_Q8_0, max_q80, &sz) == CT_OK && sz == (size_t)(max_q80 / 32) * 34);
        CHECK(ct_row_size(CT_TYPE_Q8_K, max_k, &sz) == CT_OK && sz == (size_t)(max_k / 256) * 292);
    }
}

int main(void) {
    tu_init("test_types");
    test_table();
    test_invalid();
    test_from_name();
    test_row_size_errors();
    return tu_finish();
}

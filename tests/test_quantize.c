/* ct_quantize_row: IQ4_NL against a naive reference written from docs/QUANTIZATION.md (IQ4_NL)
 * and hand-worked blocks; known-answer blocks of the other formats (ties, zero
 * blocks); round trips through ct_dequantize_row within each format's bound;
 * NaN/inf without writing past the row; the plain types against the scalar
 * converters; argument errors. The byte-for-byte comparison of Q8_0/Q4_x/Q5_x
 * with gguf and a float32 reference is tests/python/test_quant_gguf.py. */
#include "testutil.h"

#include "core/cpu_features.h"
#include "types/types_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#define QK 32
#define GUARD 64
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const int8_t kvalues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

typedef struct {
    ct_type type;
    size_t bytes;  /* per block */
} qtype;

static const qtype qtypes[] = {
    {CT_TYPE_Q8_0, 34}, {CT_TYPE_Q4_0, 18}, {CT_TYPE_Q4_1, 20},
    {CT_TYPE_Q5_0, 22}, {CT_TYPE_Q5_1, 24}, {CT_TYPE_IQ4_NL, 18},
};

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static void print_block(const char *what, const uint8_t *b, size_t n) {
    fprintf(stderr, "  %s:", what);
    for (size_t i = 0; i < n; i++) fprintf(stderr, " %02x", b[i]);
    fputc('\n', stderr);
}

/* One block of random data from one of several shapes. */
static void random_block(float *x, int kind) {
    const float scale = powf(10.0f, tu_rand_uniform(-12.0f, 12.0f));
    for (int j = 0; j < QK; j++) {
        switch (kind % 8) {
        case 0: x[j] = tu_rand_normal(); break;
        case 1: x[j] = tu_rand_uniform(-1.0f, 1.0f) * scale; break;
        case 2: x[j] = tu_rand_uniform(0.0f, 4.0f); break;
        case 3: x[j] = tu_rand_normal() * powf(10.0f, tu_rand_uniform(-8.0f, 8.0f)); break; /* per element */
        case 4: x[j] = (float)(tu_rand_below(255) - 127) * 0.5f; break;                    /* half-integers */
        case 5: x[j] = tu_rand_normal() / (tu_rand_uniform(0.01f, 1.0f));  break;          /* heavy tails */
        case 6: x[j] = (float)kvalues[tu_rand_below(16)] * scale; break;                   /* on the grid */
        default: {                                   /* IQ4_NL ties: d0 = 2^e, midpoints of the table */
            const int k = (int)tu_rand_below(15);
            x[j] = ldexpf(0.5f * (float)(kvalues[k] + kvalues[k + 1]), kind % 40 - 20);
            break;
        }
        }
    }
    if (kind % 8 == 7) x[tu_rand_below(QK)] = ldexpf(tu_rand_u32() & 1 ? -127.0f : 127.0f, kind % 40 - 20);
    if (kind % 11 == 3) x[tu_rand_below(QK)] = 0.0f;
}

static void test_iq4nl_naive(void) {
    enum { NB = 512, ROUNDS = 40 };
    float *x = malloc(sizeof(float) * QK * NB);
    uint8_t *q = malloc(18 * NB);
    int mismatches = 0;
    for (int r = 0; r < ROUNDS; r++) {
        for (int b = 0; b < NB; b++) random_block(x + b * QK, r * NB + b);
        CHECK(ct_quantize_row(CT_TYPE_IQ4_NL, x, q, QK * NB) == CT_OK);
        for (int b = 0; b < NB; b++) {
            uint8_t exp[18];
            tu_iq4_nl_naive(x + b * QK, exp);
            if (memcmp(exp, q + 18 * b, 18) != 0 && mismatches++ < 5) {
                fprintf(stderr, "iq4_nl block %d of round %d differs from the naive reference\n", b, r);
                print_block("ct   ", q + 18 * b, 18);
                print_block("naive", exp, 18);
            }
        }
    }
    CHECK_MSG(mismatches == 0, "%d of %d iq4_nl blocks differ from the naive reference", mismatches, NB * ROUNDS);
    printf("iq4_nl: %d random blocks equal to the naive reference\n", NB * ROUNDS);
    free(x);
    free(q);
}

static void expect_block(ct_type type, const float *x, const uint8_t *exp, size_t bytes, const char *what) {
    uint8_t got[34];
    CHECK(ct_quantize_row(type, x, got, QK) == CT_OK);
    if (memcmp(got, exp, bytes) != 0) {
        tu_checks++;
        tu_failures++;
        fprintf(stderr, "%s: %s block differs\n", what, ct_type_name(type));
        print_block("got", got, bytes);
        print_block("exp", exp, bytes);
    } else {
        tu_checks++;
    }
}

static void test_iq4nl_hand(void) {
    float x[QK];
    uint8_t exp[18];

    /* A: x_j = kvalues[j % 16]. max = -127 (j = 0), d0 = 1, id = 1, so every x_j
     * sits on its own table value: index j % 16. q = x, so (w*q)*x and (w*q)*q are
     * the same float: sumqx == sumq2 and d = 1.0 exactly -> fp16 0x3C00.
     * qs[j] = (j) | (j) << 4 = 0x00, 0x11, ..., 0xFF. */
    for (int j = 0; j < QK; j++) x[j] = kvalues[j % 16];
    exp[0] = 0x00; exp[1] = 0x3C;
    for (int j = 0; j < 16; j++) exp[2 + j] = (uint8_t)(j * 0x11);
    expect_block(CT_TYPE_IQ4_NL, x, exp, 18, "hand block A");

    /* B: x = kvalues/2. d0 = 0.5, id = 2, same indices. w = v^2/4 and w*q = v^3/4
     * are exact; (w*q)*x = fl(v^4)/8 and (w*q)*q = fl(v^4)/4, so every partial sum of
     * sumqx is exactly half of sumq2's: d = 0.5 -> 0x3800. */
    for (int j = 0; j < QK; j++) x[j] = 0.5f * kvalues[j % 16];
    exp[0] = 0x00; exp[1] = 0x38;
    expect_block(CT_TYPE_IQ4_NL, x, exp, 18, "hand block B");

    /* C: negative max. x = -kvalues[j % 16]: max = +127, d0 = -1, id = -1, a = -x =
     * kvalues[j % 16], same indices; q = -x gives sumqx = -sumq2: d = -1 -> 0xBC00. */
    for (int j = 0; j < QK; j++) x[j] = -(float)kvalues[j % 16];
    exp[0] = 0x00; exp[1] = 0xBC;
    expect_block(CT_TYPE_IQ4_NL, x, exp, 18, "hand block C");

    /* D: ties go to the upper neighbour. x0 = -127 fixes d0 = 1, id = 1.
     *   x1 = -115.5, midway -127|-104 -> index 1 (-104)
     *   x2 = 7,      midway 1|13      -> index 9 (13)
     *   x3 = 101,    midway 89|113    -> index 15 (113)
     *   x4 = -4.5,   midway -10|1     -> index 8 (1)
     *   x16 = 50,    no tie (38|53)   -> index 12 (53)
     *   zeros: 0 - (-10) = 10 is not < 1 - 0 -> index 8, and w = 0 adds nothing.
     * sumqx = sum x^3 q = 260144641 + 160243083 + 4459 + 116424013 - 91.125 + 6625000
     *       ~ 543441105 (float sums round at ~16, relative 3e-8);
     * sumq2 = sum x^2 q^2 = 260144641 + 144288144 + 8281 + 130256569 + 20.25 + 7022500
     *       ~ 541720155;
     * d ~ 1.0031768. fp16 steps of 2^-10 above 1: 1.0029297 (3) and 1.0039063 (4),
     * midpoint 1.0034180, far from d -> 1 + 3*2^-10 = 0x3C03.
     * qs[0] = 0 | 12<<4 = 0xC0, qs[1] = 0x81, qs[2] = 0x89, qs[3] = 0x8F, rest 0x88. */
    memset(x, 0, sizeof x);
    x[0] = -127.0f; x[1] = -115.5f; x[2] = 7.0f; x[3] = 101.0f; x[4] = -4.5f; x[16] = 50.0f;
    exp[0] = 0x03; exp[1] = 0x3C;
    memset(exp + 2, 0x88, 16);
    exp[2] = 0xC0; exp[3] = 0x81; exp[4] = 0x89; exp[5] = 0x8F;
    expect_block(CT_TYPE_IQ4_NL, x, exp, 18, "hand block D (ties)");

    /* E: only x0 = 1e-15 (just at the threshold) and elements whose squares
     * underflow to 0: the block is quantized, only x0 weighs. d0 = 1e-15/-127 < 0,
     * a0 = -127 -> index 0; d = (w q x0)/(w q q) ~ -7.9e-18, below the smallest
     * fp16 subnormal -> -0 = 0x8000. The others: a ~ -1.3e-8 -> index 8. */
    for (int j = 0; j < QK; j++) x[j] = 1e-30f;
    x[0] = 1e-15f;
    exp[0] = 0x00; exp[1] = 0x80;
    memset(exp + 2, 0x88, 16);
    exp[2] = 0x80;
    expect_block(CT_TYPE_IQ4_NL, x, exp, 18, "hand block E (1e-15)");

    /* max |x| < 1e-15: d = 0 and every nibble 8, also after a non-zero block in
     * the same row (ggml would pack that block's stale indices). */
    static const float tiny[] = {0.0f, -0.0f, 1e-16f, -9.99e-16f, 1e-40f, 1.4e-45f};
    float row[2 * QK];
    uint8_t got[36];
    exp[0] = exp[1] = 0;
    memset(exp + 2, 0x88, 16);
    for (size_t t = 0; t < ARRAY_LEN(tiny); t++) {
        for (int j = 0; j < QK; j++) row[j] = kvalues[j % 16];
        for (int j = 0; j < QK; j++) row[QK + j] = (j % 3 == 0) ? tiny[t] : tiny[t] * 0.5f;
        row[QK + 7] = -tiny[t];
        CHECK(ct_quantize_row(CT_TYPE_IQ4_NL, row, got, 2 * QK) == CT_OK);
        CHECK_MSG(memcmp(got + 18, exp, 18) == 0, "tiny block %g: d=%04x qs[0]=%02x", (double)tiny[t],
                  rd16(got + 18), got[20]);
        uint8_t naive[18];
        tu_iq4_nl_naive(row + QK, naive);
        CHECK(memcmp(naive, got + 18, 18) == 0);
    }
    /* and NaN-only blocks: no element passes the max scan */
    for (int j = 0; j < QK; j++) row[j] = NAN;
    CHECK(ct_quantize_row(CT_TYPE_IQ4_NL, row, got, QK) == CT_OK);
    CHECK(memcmp(got, exp, 18) == 0);
}

/* An IQ4_NL scale that comes out NaN (inf or huge finite input) is stored as the one
 * canonical NaN 0x7E00, on both the AVX2 and the portable path, so the bytes do
 * not depend on the processor's NaN sign rules; a NaN element gives d = +0 (ggml's
 * `sumq2 > 0` test), not a NaN scale. */
static void test_iq4nl_nan_scale(void) {
    const float inf = 1.0f / 0.0f, nan = tu_bits_f32(0xFFC00001u);
    int nan_blocks = 0;
    for (int portable = 0; portable <= 1; portable++) {
        ct_types_force_portable(portable);
        for (int kind = 0; kind < 4; kind++) {
            float x[32];
            for (int j = 0; j < 32; j++) x[j] = tu_rand_uniform(-1.0f, 1.0f);
            if (kind == 0) x[3] = inf;
            if (kind == 1) { x[0] = -inf; x[9] = inf; }
            if (kind == 2) x[17] = nan; /* d = +0: checked by test_iq4nl_ggml_rule */
            if (kind == 3) for (int j = 0; j < 32; j++) x[j] = j % 2 ? -inf : inf;
            uint8_t q[18];
            CHECK(ct_quantize_row(CT_TYPE_IQ4_NL, x, q, 32) == CT_OK);
            const uint16_t d = (uint16_t)(q[0] | q[1] << 8);
            if ((d & 0x7C00) == 0x7C00 && (d & 0x03FF) != 0) {
                nan_blocks++;
                CHECK_MSG(d == 0x7E00, "kind %d portable %d: NaN scale 0x%04x", kind, portable, d);
            }
        }
    }
    ct_types_force_portable(false);
    CHECK_MSG(nan_blocks >= 2, "only %d blocks had a NaN scale", nan_blocks);
}

/* IQ4_NL blocks with NaN, inf and huge finite values (tu_iq4_nl_edge_block), one at a
 * time and mixed into rows with ordinary blocks, on the portable and the AVX2 path:
 * the bytes are the naive reference's (ggml's rule), and the rule's consequences hold
 * directly: a block with a NaN element (and max |x| >= 1e-15) has d = +0, its NaN
 * elements index 15, and it reads back as zeros; d is NaN (0x7E00) exactly where
 * 127^2 * max^2 overflows. */
static void test_iq4nl_ggml_rule(void) {
    enum { NB = 3 * TU_IQ4_NL_EDGE_KINDS };
    static float x[QK * NB];
    static uint8_t got[18 * NB];
    uint8_t exp[18];
    float back[QK];
    int mism = 0, nan_blocks = 0;
    for (int round = 0; round < 20; round++) {
        for (int b = 0; b < NB; b++) {
            /* every third block an ordinary one, so AVX2 groups of 8 mix both */
            if (b % 3 == 2) {
                for (int j = 0; j < QK; j++) x[b * QK + j] = tu_rand_normal();
            } else {
                tu_iq4_nl_edge_block(x + b * QK, (b / 3 * 2 + b % 3 + round) % TU_IQ4_NL_EDGE_KINDS);
            }
        }
        for (int portable = 0; portable <= 1; portable++) {
            ct_types_force_portable(portable);
            CHECK(ct_quantize_row(CT_TYPE_IQ4_NL, x, got, QK * NB) == CT_OK);
            for (int b = 0; b < NB; b++) {
                const float *xb = x + b * QK;
                const uint8_t *q = got + 18 * b;
                tu_iq4_nl_naive(xb, exp);
                if (memcmp(exp, q, 18) != 0 && mism++ < 4) {
                    fprintf(stderr, "iq4_nl edge block %d (portable %d) differs from the naive reference\n", b,
                            portable);
                    print_block("got     ", q, 18);
                    print_block("expected", exp, 18);
                }
                bool has_nan = false;
                float amax = 0.0f;
                for (int j = 0; j < QK; j++) {
                    has_nan = has_nan || xb[j] != xb[j];
                    if (fabsf(xb[j]) > amax) amax = fabsf(xb[j]);
                }
                const uint16_t d = rd16(q);
                if (has_nan && amax >= 1e-15f) {
                    nan_blocks++;
                    CHECK_MSG(d == 0x0000, "block %d with a NaN element: d = 0x%04x, ggml stores 0x0000", b, d);
                    for (int j = 0; j < QK; j++) {
                        const int l = j < 16 ? q[2 + j] & 15 : q[2 + j - 16] >> 4;
                        CHECK_MSG(xb[j] == xb[j] || l == 15, "block %d: NaN element %d has index %d", b, j, l);
                    }
                    CHECK(ct_dequantize_row(CT_TYPE_IQ4_NL, q, back, QK) == CT_OK);
                    bool zeros = true;
                    for (int j = 0; j < QK; j++) zeros = zeros && back[j] == 0.0f;
                    CHECK_MSG(zeros, "block %d with a NaN element does not read back as zeros", b);
                } else if (!has_nan && isfinite(amax) && amax >= 1e-15f) {
                    const double big = (double)amax * 127.0 * (double)amax * 127.0; /* ~ the largest sumq2 term */
                    if (big < 0.5 * FLT_MAX) CHECK_MSG((d & 0x7FFF) <= 0x7C00, "block %d: d = 0x%04x", b, d);
                }
            }
        }
    }
    ct_types_force_portable(false);
    CHECK_MSG(mism == 0, "%d iq4_nl edge blocks differ from the naive reference", mism);
    /* the overflow threshold of docs/QUANTIZATION.md, one large element in a small block */
    for (int side = 0; side < 2; side++) {
        for (int j = 0; j < QK; j++) x[j] = (float)(j - 13) * 0.37f;
        x[3] = side ? 0x1.020408p+57f : 0x1.020406p+57f;
        CHECK(ct_quantize_row(CT_TYPE_IQ4_NL, x, got, QK) == CT_OK);
        const uint16_t d = rd16(got);
        CHECK_MSG(side ? d == 0x7E00 : (d & 0x7FFF) == 0x7C00, "max %a: d = 0x%04x", (double)x[3], d);
    }
    printf("iq4_nl: %d blocks with NaN elements stored with d = +0, as ggml\n", nan_blocks);
}

/* Known answers of the linear formats: exact ties, zero blocks, packing. */
static void test_known_answers(void) {
    float x[QK];
    uint8_t exp[34];

    /* Q8_0: amax 127 -> d = 1 (0x3C00), id = 1; roundf rounds ties away from zero:
     * 2.5 -> 3, -2.5 -> -3, 0.5 -> 1, -0.5 -> -1, 126.5 -> 127 (x0 = 127). */
    memset(x, 0, sizeof x);
    x[0] = 127.0f; x[1] = 2.5f; x[2] = -2.5f; x[3] = 0.5f; x[4] = -0.5f; x[5] = 126.5f; x[6] = 1.49f; x[7] = -0.0f;
    memset(exp, 0, sizeof exp);
    exp[1] = 0x3C;
    exp[2] = 127; exp[3] = 3; exp[4] = (uint8_t)-3; exp[5] = 1; exp[6] = (uint8_t)-1; exp[7] = 127; exp[8] = 1;
    expect_block(CT_TYPE_Q8_0, x, exp, 34, "q8_0 ties");

    /* Q4_0: max = -8 -> d = 1 (0x3C00), id = 1. x + 8.5 truncated, clamped to 15:
     * x = -8 -> 0, 7.5 -> 16 -> 15, 7.49 -> 15, -0.5 -> 8, 0.5 -> 9, -7.5 -> 1, 3 -> 11.
     * The high nibbles (x16..31) are 0 -> 8. The first of two equal |max| wins:
     * x0 = -8 before x1 = 8. */
    memset(x, 0, sizeof x);
    x[0] = -8.0f; x[1] = 8.0f; x[2] = 7.5f; x[3] = 7.49f; x[4] = -0.5f; x[5] = 0.5f; x[6] = -7.5f; x[7] = 3.0f;
    memset(exp, 0, sizeof exp);
    exp[1] = 0x3C;
    const uint8_t lo4[16] = {0, 15, 15, 15, 8, 9, 1, 11, 8, 8, 8, 8, 8, 8, 8, 8};
    for (int j = 0; j < 16; j++) exp[2 + j] = (uint8_t)(lo4[j] | 8 << 4);
    expect_block(CT_TYPE_Q4_0, x, exp, 18, "q4_0 ties");

    /* Q5_0: max = 16 (positive) -> d = -1 (0xBC00), id = -1: xi = trunc(-x + 16.5),
     * clamped to 31. x = 16 -> 0, -16 -> 32 -> 31, 0.5 -> 16, -0.5 -> 17, 15.5 -> 1.
     * Zeros -> 16 (qh bit set, nibble 0). */
    memset(x, 0, sizeof x);
    x[0] = 16.0f; x[1] = -16.0f; x[2] = 0.5f; x[3] = -0.5f; x[4] = 15.5f;
    memset(exp, 0, sizeof exp);
    exp[0] = 0x00; exp[1] = 0xBC;
    const int q5[32] = {0, 31, 16, 17, 1, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
                        16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16};
    uint32_t qh = 0;
    for (int j = 0; j < 32; j++) qh |= (uint32_t)(q5[j] >> 4 & 1) << j;
    for (int k = 0; k < 4; k++) exp[2 + k] = (uint8_t)(qh >> (8 * k));
    for (int j = 0; j < 16; j++) exp[6 + j] = (uint8_t)((q5[j] & 15) | (q5[j + 16] & 15) << 4);
    expect_block(CT_TYPE_Q5_0, x, exp, 22, "q5_0 ties");

    /* Q4_1: min = -1, max = 14 -> d = 1, m = -1 (0xBC00); xi = trunc(x + 1 + 0.5):
     * x = 0.5 -> 2, -0.5 -> 1, 13.5 -> 15 (15.0 exact), 14 -> 15 (15.5 -> 15). */
    for (int j = 0; j < QK; j++) x[j] = 0.0f;
    x[0] = -1.0f; x[1] = 14.0f; x[2] = 0.5f; x[3] = -0.5f; x[4] = 13.5f;
    memset(exp, 0, sizeof exp);
    exp[1] = 0x3C; exp[2] = 0x00; exp[3] = 0xBC;
    const uint8_t q41[16] = {0, 15, 2, 1, 15, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    for (int j = 0; j < 16; j++) exp[4 + j] = (uint8_t)(q41[j] | 1 << 4);
    expect_block(CT_TYPE_Q4_1, x, exp, 20, "q4_1 ties");

    /* Q5_1: min = 0, max = 31 -> d = 1, m = 0; xi = trunc(x + 0.5), no clamp:
     * 30.5 -> 31, 31 -> 31, 0.49 -> 0, 16 -> 16 (qh bit). */
    memset(x, 0, sizeof x);
    x[0] = 31.0f; x[1] = 30.5f; x[2] = 0.49f; x[3] = 16.0f; x[20] = 17.0f;
    memset(exp, 0, sizeof exp);
    exp[1] = 0x3C;
    int q51[32] = {31, 31, 0, 16};
    q51[20] = 17;
    qh = 0;
    for (int j = 0; j < 32; j++) qh |= (uint32_t)(q51[j] >> 4 & 1) << j;
    for (int k = 0; k < 4; k++) exp[4 + k] = (uint8_t)(qh >> (8 * k));
    for (int j = 0; j < 16; j++) exp[8 + j] = (uint8_t)((q51[j] & 15) | (q51[j + 16] & 15) << 4);
    expect_block(CT_TYPE_Q5_1, x, exp, 24, "q5_1 ties");

    /* All-zero blocks. Q4_0/Q5_0 keep ggml's max = +0.0, so d = +0/-8 = -0.0 (0x8000). */
    memset(x, 0, sizeof x);
    memset(exp, 0, sizeof exp);
    expect_block(CT_TYPE_Q8_0, x, exp, 34, "q8_0 zero");
    expect_block(CT_TYPE_Q4_1, x, exp, 20, "q4_1 zero");
    expect_block(CT_TYPE_Q5_1, x, exp, 24, "q5_1 zero");
    exp[1] = 0x80;
    memset(exp + 2, 0x88, 16);
    expect_block(CT_TYPE_Q4_0, x, exp, 18, "q4_0 zero");
    memset(exp + 2, 0xFF, 4);
    memset(exp + 6, 0x00, 16);
    expect_block(CT_TYPE_Q5_0, x, exp, 22, "q5_0 zero");
    exp[1] = 0x00;
    memset(exp + 2, 0x88, 16);
    expect_block(CT_TYPE_IQ4_NL, x, exp, 18, "iq4_nl zero");
    /* and all -0.0: same bytes for Q4_0 (max stays +0.0); Q4_1 takes m = x0 = -0.0 */
    for (int j = 0; j < QK; j++) x[j] = -0.0f;
    memset(exp, 0, sizeof exp);
    exp[1] = 0x80;
    memset(exp + 2, 0x88, 16);
    expect_block(CT_TYPE_Q4_0, x, exp, 18, "q4_0 -0");
    memset(exp, 0, sizeof exp);
    exp[3] = 0x80;
    expect_block(CT_TYPE_Q4_1, x, exp, 20, "q4_1 -0");

    /* Tiny blocks: d = amax/127 is subnormal and 1/d = inf, so x*id is +-inf or NaN;
     * ggml's conversion is undefined there, ctensor takes x86's (low byte of
     * INT32_MIN = 0). Q8_0 with amax = 1e-38: every q = 0, d = fp16(7.9e-41) = 0. */
    for (int j = 0; j < QK; j++) x[j] = (j & 1 ? -1e-38f : 1e-38f) * (float)(j + 1) / 32.0f;
    memset(exp, 0, sizeof exp);
    expect_block(CT_TYPE_Q8_0, x, exp, 34, "q8_0 tiny");
}

/* dequantize(quantize(x)) stays within each format's step plus the fp16 error of
 * d (and m); the true d is recomputed here from the formula. */
static void test_round_trip(void) {
    enum { NB = 256 };
    float *x = malloc(sizeof(float) * QK * NB);
    float *y = malloc(sizeof(float) * QK * NB);
    uint8_t *q = malloc(34 * NB);
    for (size_t t = 0; t < ARRAY_LEN(qtypes); t++) {
        const ct_type type = qtypes[t].type;
        int bad = 0;
        double worst = 0.0;
        for (int r = 0; r < 8; r++) {
            for (int b = 0; b < NB; b++) {
                const float scale = powf(10.0f, tu_rand_uniform(-3.0f, 3.0f));
                for (int j = 0; j < QK; j++) {
                    x[b * QK + j] = (b % 2 ? tu_rand_normal() : tu_rand_uniform(-0.2f, 1.0f)) * scale;
                }
            }
            CHECK(ct_quantize_row(type, x, q, QK * NB) == CT_OK);
            CHECK(ct_dequantize_row(type, q, y, QK * NB) == CT_OK);
            for (int b = 0; b < NB; b++) {
                const float *xb = x + b * QK;
                const uint8_t *qb = q + qtypes[t].bytes * (size_t)b;
                const float d16 = ct_fp16_to_fp32(rd16(qb));
                float amax = 0.0f, max = 0.0f, mn = FLT_MAX, mx = -FLT_MAX;
                for (int j = 0; j < QK; j++) {
                    if (fabsf(xb[j]) > amax) { amax = fabsf(xb[j]); max = xb[j]; }
                    mn = fminf(mn, xb[j]);
                    mx = fmaxf(mx, xb[j]);
                }
                double bound;
                switch (type) {
                case CT_TYPE_Q8_0: { const double d = amax / 127.0f; bound = d / 2 + 127 * fabs(d - d16); break; }
                /* the element at -max lands on +8 (+16) and is clamped to 7 (15): a full step */
                case CT_TYPE_Q4_0: { const double d = max / -8.0f; bound = fabs(d) + 8 * fabs(d - d16); break; }
                case CT_TYPE_Q5_0: { const double d = max / -16.0f; bound = fabs(d) + 16 * fabs(d - d16); break; }
                case CT_TYPE_Q4_1:
                case CT_TYPE_Q5_1: {
                    const double levels = type == CT_TYPE_Q4_1 ? 15 : 31;
                    const double d = (mx - mn) / (float)levels;
                    const double m16 = ct_fp16_to_fp32(rd16(qb + 2));
                    bound = d / 2 + levels * fabs(d - d16) + fabs(mn - m16);
                    break;
                }
                default: { /* IQ4_NL: half the widest gap (24) of the table, or 127 -> 113 */
                    const double d0 = max / -127.0f;
                    bound = 14 * fabs(d0) + 127 * fabs(d0 - d16);
                    break;
                }
                }
                bound += 1e-6 * amax; /* float rounding of x*id */
                for (int j = 0; j < QK; j++) {
                    const double err = fabs((double)xb[j] - (double)y[b * QK + j]);
                    if (amax > 0) worst = fmax(worst, err / amax);
                    if (!(err <= bound) && bad++ < 3) {
                        fprintf(stderr, "%s round trip: x=%.9g y=%.9g err=%.3g bound=%.3g\n", ct_type_name(type),
                                (double)xb[j], (double)y[b * QK + j], err, bound);
                    }
                }
            }
        }
        CHECK_MSG(bad == 0, "%s: %d elements outside the round-trip bound", ct_type_name(type), bad);
        printf("%s: round trip of %d blocks, worst error %.4f of max|x|\n", ct_type_name(type), 8 * NB, worst);
    }
    free(x);
    free(y);
    free(q);
}

/* Rows are independent: a row equals its blocks quantized one by one, at any
 * (unaligned) dst address. */
static void test_row_independence(void) {
    enum { NB = 37 };
    float x[QK * NB];
    uint8_t row[34 * NB + 1], one[34];
    for (int b = 0; b < NB; b++) random_block(x + b * QK, b);
    for (int j = 0; j < QK; j++) x[5 * QK + j] = 0.0f;
    for (size_t t = 0; t < ARRAY_LEN(qtypes); t++) {
        const size_t sz = qtypes[t].bytes;
        CHECK(ct_quantize_row(qtypes[t].type, x, row + 1, QK * NB) == CT_OK);
        for (int b = 0; b < NB; b++) {
            CHECK(ct_quantize_row(qtypes[t].type, x + b * QK, one, QK) == CT_OK);
            CHECK_MSG(memcmp(one, row + 1 + sz * (size_t)b, sz) == 0, "%s block %d", ct_type_name(qtypes[t].type), b);
        }
    }
}

/* NaN and inf never crash or write past the row; guard bytes stay intact. */
static void test_nonfinite(void) {
    enum { NB = 16 };
    float x[QK * NB];
    uint8_t buf[34 * NB + GUARD];
    const float specials[] = {NAN, -NAN, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, 1e-45f, 65520.0f};
    for (size_t t = 0; t < ARRAY_LEN(qtypes); t++) {
        for (int r = 0; r < 20; r++) {
            for (int b = 0; b < NB; b++) {
                random_block(x + b * QK, r + b);
                const int k = (int)tu_rand_below(QK + 1);
                for (int i = 0; i < k; i++) {
                    x[b * QK + tu_rand_below(QK)] = specials[tu_rand_below((int64_t)ARRAY_LEN(specials))];
                }
            }
            for (int j = 0; j < QK; j++) x[j] = NAN;
            memset(buf, 0xA5, sizeof buf);
            const size_t row = qtypes[t].bytes * NB;
            CHECK(ct_quantize_row(qtypes[t].type, x, buf, QK * NB) == CT_OK);
            bool intact = true;
            for (size_t i = row; i < sizeof buf; i++) intact = intact && buf[i] == 0xA5;
            CHECK_MSG(intact, "%s wrote past the row", ct_type_name(qtypes[t].type));
            if (qtypes[t].type == CT_TYPE_IQ4_NL) {
                for (int b = 0; b < NB; b++) {
                    uint8_t naive[18];
                    tu_iq4_nl_naive(x + b * QK, naive);
                    /* equal, or both d NaN with the same qs (NaN sign follows the CPU) */
                    const bool same = memcmp(naive, buf + 18 * b, 18) == 0 ||
                                      ((rd16(naive) & 0x7FFF) > 0x7C00 && (rd16(buf + 18 * b) & 0x7FFF) > 0x7C00 &&
                                       memcmp(naive + 2, buf + 18 * b + 2, 16) == 0);
                    CHECK(same);
                }
            }
        }
    }
}

static void test_plain(void) {
    enum { N = 4099 };
    float *x = malloc(sizeof(float) * (N + 1));
    uint16_t *h = malloc(sizeof(uint16_t) * N + GUARD);
    float *f = malloc(sizeof(float) * N + GUARD);
    for (int i = 0; i < N; i++) x[i] = tu_bits_f32(tu_rand_u32());
    const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 65504.0f, 65520.0f, 65519.996f, 0x1p-25f,
                             0x1.8p-25f, 0x1p-24f, 1e-45f, FLT_MAX, 3.3961776e38f};
    for (size_t i = 0; i < ARRAY_LEN(special); i++) x[i] = special[i];

    memset(h, 0xA5, sizeof(uint16_t) * N + GUARD);
    CHECK(ct_quantize_row(CT_TYPE_F16, x, h, N) == CT_OK);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += h[i] != ct_fp32_to_fp16(x[i]);
    CHECK_MSG(bad == 0, "f16: %d of %d differ from ct_fp32_to_fp16", bad, N);
    CHECK(((uint8_t *)h)[2 * N] == 0xA5 && ((uint8_t *)h)[2 * N + GUARD - 1] == 0xA5);

    memset(h, 0xA5, sizeof(uint16_t) * N + GUARD);
    CHECK(ct_quantize_row(CT_TYPE_BF16, x, h, N) == CT_OK);
    bad = 0;
    for (int i = 0; i < N; i++) bad += h[i] != ct_fp32_to_bf16(x[i]);
    CHECK_MSG(bad == 0, "bf16: %d of %d differ from ct_fp32_to_bf16", bad, N);
    CHECK(((uint8_t *)h)[2 * N] == 0xA5);

    memset(f, 0xA5, sizeof(float) * N + GUARD);
    CHECK(ct_quantize_row(CT_TYPE_F32, x, f, N) == CT_OK);
    CHECK(memcmp(f, x, sizeof(float) * N) == 0);
    CHECK(((uint8_t *)f)[4 * N] == 0xA5);
    /* one-element rows */
    CHECK(ct_quantize_row(CT_TYPE_F16, x + 5, h, 1) == CT_OK && h[0] == 0x7BFF);
    free(x);
    free(h);
    free(f);
}

static void test_errors(void) {
    float x[64] = {0};
    uint8_t q[64];
    CHECK(ct_quantize_row(CT_TYPE_Q4_0, x, q, 33) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_quantize_row: type q4_0 n=33");
    CHECK(ct_quantize_row(CT_TYPE_Q4_0, x, q, -32) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "n=-32");
    CHECK(ct_quantize_row(CT_TYPE_IQ4_NL, x, q, 16) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "iq4_nl n=16 is not a multiple of the block size 32");
    CHECK(ct_quantize_row(CT_TYPE_Q8_0, NULL, q, 32) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_quantize_row: src is NULL (type q8_0, n=32)");
    CHECK(ct_quantize_row(CT_TYPE_F16, x, NULL, 1) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "dst is NULL (type f16, n=1)");
    CHECK(ct_quantize_row(CT_TYPE_IQ2_XXS, x, q, 256) == CT_UNSUPPORTED);
    CHECK_ERROR(CT_UNSUPPORTED, "ct_quantize_row: type iq2_xxs has no quantizer");
    CHECK(ct_quantize_row(CT_TYPE_Q4_K, x, q, 128) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "q4_K n=128 is not a multiple of the block size 256");
    CHECK(ct_quantize_row(CT_TYPE_I32, x, q, 4) == CT_UNSUPPORTED);
    CHECK_ERROR(CT_UNSUPPORTED, "i32");
    CHECK(ct_quantize_row((ct_type)4, x, q, 32) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_quantize_row: type 4 is not a valid type id (n=32)");
    CHECK(ct_quantize_row((ct_type)CT_TYPE_COUNT, x, q, 32) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "type 39");
    CHECK(ct_quantize_row((ct_type)-1, x, q, 32) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "type -1");
    /* n = 0 needs no buffers; a failed call leaves dst alone */
    CHECK(ct_quantize_row(CT_TYPE_Q4_0, NULL, NULL, 0) == CT_OK);
    memset(q, 0x5A, sizeof q);
    CHECK(ct_quantize_row(CT_TYPE_Q4_0, x, q, 40) == CT_INVALID_ARGUMENT);
    CHECK(q[0] == 0x5A && q[17] == 0x5A);
    CHECK(ct_quantize_row(CT_TYPE_Q8_0, x, q, INT64_MAX - 31) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overflows");

    int n_can = 0;
    for (int t = -2; t < CT_TYPE_COUNT + 2; t++) {
        const bool can = ct_type_can_quantize((ct_type)t);
        n_can += can;
        if (can) CHECK(ct_type_is_valid((ct_type)t));
    }
    CHECK(n_can == 16);
    CHECK(ct_type_can_quantize(CT_TYPE_IQ4_NL) && ct_type_can_quantize(CT_TYPE_BF16));
    CHECK(ct_type_can_quantize(CT_TYPE_Q4_K) && ct_type_can_quantize(CT_TYPE_IQ4_XS));
    CHECK(!ct_type_can_quantize(CT_TYPE_Q8_1) && !ct_type_can_quantize(CT_TYPE_IQ2_XXS));
}

/* ---------------------------------------------------------------------------
 * The AVX2 kernels against the portable C code, byte for byte, on large rows of
 * random blocks mixed with edge blocks: NaN with payloads and both signs, inf,
 * subnormals and subnormal scales, signed zeros, exact ties, values one ulp off
 * ties, all-NaN and near-zero blocks; misaligned source and destination.
 * ------------------------------------------------------------------------- */
static void edge_block(float *x, int kind) {
    const float scale = kind % 3 == 0 ? 1.0f : kind % 3 == 1 ? 1e-38f : 3e37f;
    for (int j = 0; j < QK; j++) x[j] = tu_rand_normal() * scale;
    switch (kind % 11) {
    case 0: /* NaN payloads, both signs, at random places */
        for (int k = 0; k < 3; k++)
            x[tu_rand_below(QK)] = tu_bits_f32(0x7F800001u | (tu_rand_u32() & 0x807FFFFFu));
        break;
    case 1: /* infinities; some blocks all of one sign (min or max never leaves its starting +-FLT_MAX) */
        if (tu_rand_below(2)) {
            const float inf = tu_rand_below(2) ? INFINITY : -INFINITY;
            for (int j = 0; j < QK; j++) x[j] = inf;
        } else {
            x[tu_rand_below(QK)] = tu_rand_below(2) ? INFINITY : -INFINITY;
        }
        break;
    case 2: /* signed zeros, some blocks all zero */
        for (int j = 0; j < QK; j++)
            if (tu_rand_below(2) || kind % 4 == 0) x[j] = tu_rand_below(2) ? 0.0f : -0.0f;
        break;
    case 3: /* Q8_0 ties: amax 127 gives id 1, so x*id is k + 0.5 exactly, or one ulp off */
        for (int j = 0; j < QK; j++) {
            const float t = (float)(tu_rand_below(253) - 126) + 0.5f;
            x[j] = tu_rand_below(3) == 0 ? nextafterf(t, tu_rand_below(2) ? 1e9f : -1e9f) : t;
        }
        x[tu_rand_below(QK)] = tu_rand_below(2) ? 127.0f : -127.0f;
        x[tu_rand_below(QK)] = 0.49999997f;
        break;
    case 4: /* Q4_x ties: small integers and halves against max 8 or 16 */
        for (int j = 0; j < QK; j++) x[j] = (float)(tu_rand_below(33) - 16) * 0.5f;
        break;
    case 5: for (int j = 0; j < QK; j++) x[j] = tu_bits_f32(tu_rand_u32()); break;
    case 6: for (int j = 0; j < QK; j++) x[j] = tu_bits_f32(tu_rand_u32() & 0x807FFFFFu); break; /* subnormals */
    case 7: for (int j = 0; j < QK; j++) x[j] = tu_bits_f32(0x7FC00000u | tu_rand_u32()); break; /* all NaN */
    case 8: for (int j = 0; j < QK; j++) x[j] = tu_rand_normal() * 1e-16f; break; /* IQ4_NL near zero */
    case 9: x[tu_rand_below(QK)] = FLT_MAX; x[tu_rand_below(QK)] = -FLT_MAX; break; /* max - min overflows */
    default: { /* repeated |max| with both signs: the first one wins */
        const float m = tu_rand_uniform(0.5f, 4.0f);
        x[tu_rand_below(QK)] = -m;
        x[tu_rand_below(QK)] = m;
        x[tu_rand_below(QK)] = -m;
    } break;
    }
}

static void test_avx2_matches_portable(void) {
    printf("AVX2+F16C %s\n", ct_cpu_has_avx2_f16c() ? "present: comparing with the portable path" : "absent");
    enum { NB = 1021, N = NB * QK };
    float *x = malloc(sizeof(float) * (N + 1));
    uint8_t *a = malloc(N * 4 + 8), *b = malloc(N * 4 + 8);
    float *fa = malloc(sizeof(float) * (N + 1)), *fb = malloc(sizeof(float) * (N + 1));
    CHECK(x && a && b && fa && fb);
    if (!x || !a || !b || !fa || !fb) goto done;
    static const ct_type qt[] = {CT_TYPE_F16, CT_TYPE_BF16, CT_TYPE_Q8_0, CT_TYPE_Q4_0,
                                 CT_TYPE_Q4_1, CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_IQ4_NL};
    for (int rep = 0; rep < 2; rep++) {
        float *xs = x + rep; /* misaligned source on the second pass */
        for (int i = 0; i < NB; i++) {
            if (tu_rand_below(3) == 0) edge_block(xs + i * QK, (int)tu_rand_below(33));
            else random_block(xs + i * QK, (int)tu_rand_below(40));
        }
        for (size_t t = 0; t < ARRAY_LEN(qt); t++) {
            const size_t bytes = (size_t)N / (size_t)ct_type_block_size(qt[t]) * ct_type_size(qt[t]);
            memset(a, 0xA5, N * 4 + 8);
            memset(b, 0x5A, N * 4 + 8);
            ct_types_force_portable(true);
            CHECK(ct_quantize_row(qt[t], xs, a + 1 + rep, N) == CT_OK);
            ct_types_force_portable(false);
            CHECK(ct_quantize_row(qt[t], xs, b + 1 + rep, N) == CT_OK);
            int bad = -1;
            for (size_t k = 0; k < bytes && bad < 0; k++)
                if (a[1 + rep + k] != b[1 + rep + k]) bad = (int)k;
            CHECK_MSG(bad < 0, "%s: AVX2 and portable bytes differ at byte %d", ct_type_name(qt[t]), bad);
            if (bad >= 0) {
                const size_t bs = ct_type_size(qt[t]), blk = (size_t)bad / bs;
                print_block("portable", a + 1 + rep + blk * bs, bs);
                print_block("avx2", b + 1 + rep + blk * bs, bs);
            }
            CHECK(a[0] == 0xA5 && a[1 + rep + bytes] == 0xA5 && b[1 + rep + bytes] == 0x5A);
        }
    }
    /* dequantizers on random bytes (NaN and inf scales included), misaligned source */
    static const ct_type dt[] = {CT_TYPE_F16, CT_TYPE_BF16, CT_TYPE_Q8_0, CT_TYPE_Q4_0, CT_TYPE_Q4_1, CT_TYPE_Q5_0,
                                 CT_TYPE_Q5_1, CT_TYPE_IQ4_NL, CT_TYPE_Q4_K, CT_TYPE_Q6_K, CT_TYPE_Q2_K};
    for (size_t t = 0; t < ARRAY_LEN(dt); t++) {
        const int64_t n = 256 * 61;
        const size_t bytes = (size_t)n / (size_t)ct_type_block_size(dt[t]) * ct_type_size(dt[t]);
        tu_fill_bytes(a, bytes + 1);
        ct_types_force_portable(true);
        CHECK(ct_dequantize_row(dt[t], a + 1, fa, n) == CT_OK);
        ct_types_force_portable(false);
        CHECK(ct_dequantize_row(dt[t], a + 1, fb, n) == CT_OK);
        CHECK_MSG(memcmp(fa, fb, sizeof(float) * (size_t)n) == 0, "%s: AVX2 and portable floats differ",
                  ct_type_name(dt[t]));
    }
done:
    ct_types_force_portable(false);
    free(x);
    free(a);
    free(b);
    free(fa);
    free(fb);
}

int main(void) {
    tu_init("test_quantize");
    test_iq4nl_naive();
    test_iq4nl_hand();
    test_iq4nl_nan_scale();
    test_iq4nl_ggml_rule();
    test_known_answers();
    test_round_trip();
    test_row_independence();
    test_nonfinite();
    test_plain();
    test_errors();
    test_avx2_matches_portable();
    return tu_finish();
}

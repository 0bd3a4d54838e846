/* ct_dequantize_row against deliberately naive per-element formulas written
 * from docs/QUANTIZATION.md (Block layouts, Dequantization): byte offsets instead of the library's block
 * structs, an ldexp-based fp16 decode, one element at a time. Bit for bit, NaN
 * equal to NaN. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>

/* The reference's products and sums must round one at a time, as the library's
 * (built with -ffp-contract=off); clang contracts to FMA by default. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

static const int8_t kv[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

static float h16(const uint8_t *p) {
    const int h = p[0] | p[1] << 8;
    const int e = (h >> 10) & 31, m = h & 1023;
    const float s = (h & 0x8000) ? -1.0f : 1.0f;
    if (e == 0) return s * (float)ldexp(m, -24);
    if (e == 31) return m ? NAN : s * INFINITY;
    return s * (float)ldexp(1024 + m, e - 25);
}
static uint32_t u32le(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
/* element j < 32 of a Q4_0-style nibble run at qs */
static int nib32(const uint8_t *qs, int j) { return j < 16 ? qs[j] & 15 : qs[j - 16] >> 4; }

static void scale_min_k4(const uint8_t *s, int j, int *sc, int *m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* Element j of one block b. */
static float ref_elem(ct_type t, const uint8_t *b, int j) {
    switch (t) {
    case CT_TYPE_F32: return tu_bits_f32(u32le(b));
    case CT_TYPE_F16: return h16(b);
    case CT_TYPE_BF16: return tu_bits_f32((uint32_t)(b[0] | b[1] << 8) << 16);
    case CT_TYPE_Q4_0: return (float)(nib32(b + 2, j) - 8) * h16(b);
    case CT_TYPE_Q4_1: return (float)nib32(b + 4, j) * h16(b) + h16(b + 2);
    case CT_TYPE_Q5_0: {
        const int q = nib32(b + 6, j) | (int)((u32le(b + 2) >> j) & 1) << 4;
        return (float)(q - 16) * h16(b);
    }
    case CT_TYPE_Q5_1: {
        const int q = nib32(b + 8, j) | (int)((u32le(b + 4) >> j) & 1) << 4;
        return (float)q * h16(b) + h16(b + 2);
    }
    case CT_TYPE_Q8_0: return (float)(int8_t)b[2 + j] * h16(b);
    case CT_TYPE_IQ4_NL: return h16(b) * (float)kv[nib32(b + 2, j)];
    case CT_TYPE_Q2_K: {
        const int half = j / 128, r = j % 128, s = r / 32, g = (r % 32) / 16, l = r % 16;
        const int q = (b[16 + half * 32 + g * 16 + l] >> (2 * s)) & 3;
        const int sc = b[half * 8 + s * 2 + g];
        const float dl = h16(b + 80) * (float)(sc & 15), ml = h16(b + 82) * (float)(sc >> 4);
        return dl * (float)q - ml;
    }
    case CT_TYPE_Q3_K: {
        const int half = j / 128, r = j % 128, s = r / 32, g = (r % 32) / 16, l = r % 16;
        const int is = half * 8 + s * 2 + g;
        const uint8_t *sb = b + 96;
        const int lo = is < 8 ? sb[is] & 15 : sb[is - 8] >> 4;
        const int hi = (sb[8 + is % 4] >> (2 * (is / 4))) & 3;
        const int scale = (lo | hi << 4) - 32;
        int q = (b[32 + half * 32 + g * 16 + l] >> (2 * s)) & 3;
        if (!((b[g * 16 + l] >> (half * 4 + s)) & 1)) q -= 4;
        return (h16(b + 108) * (float)scale) * (float)q;
    }
    case CT_TYPE_Q4_K:
    case CT_TYPE_Q5_K: {
        const bool q5 = t == CT_TYPE_Q5_K;
        const uint8_t *qs = b + (q5 ? 48 : 16);
        const int c = j / 64, r = j % 64, idx = 2 * c + (r >= 32), l = r % 32;
        int q = r < 32 ? qs[32 * c + l] & 15 : qs[32 * c + l] >> 4;
        if (q5 && ((b[16 + l] >> idx) & 1)) q += 16;
        int sc, m;
        scale_min_k4(b + 4, idx, &sc, &m);
        return (h16(b) * (float)sc) * (float)q - h16(b + 2) * (float)m;
    }
    case CT_TYPE_Q6_K: {
        const int half = j / 128, r = j % 128, k = r / 32, l = r % 32;
        const uint8_t lq = b[half * 64 + (k & 1) * 32 + l];
        const int nib = k < 2 ? lq & 15 : lq >> 4;
        const int hb = (b[128 + half * 32 + l] >> (2 * k)) & 3;
        const int sc = (int8_t)b[192 + half * 8 + l / 16 + 2 * k];
        return (h16(b + 208) * (float)sc) * (float)((nib | hb << 4) - 32);
    }
    case CT_TYPE_Q8_K: return tu_bits_f32(u32le(b)) * (float)(int8_t)b[4 + j];
    case CT_TYPE_IQ4_XS: {
        const int ib = j / 32, r = j % 32;
        const int sh = b[2] | b[3] << 8;
        const int ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 15) | ((sh >> (2 * ib)) & 3) << 4;
        const float dl = h16(b) * (float)(ls - 32);
        return dl * (float)kv[nib32(b + 8 + 16 * ib, r)];
    }
    default: return NAN;
    }
}

typedef struct tcase {
    ct_type type;
    int blck, size;
    int scale_offs[2]; /* byte offsets of the fp16 scales (-1: none) */
} tcase;

static const tcase cases[] = {
    {CT_TYPE_F32, 1, 4, {-1, -1}},      {CT_TYPE_F16, 1, 2, {0, -1}},       {CT_TYPE_BF16, 1, 2, {-1, -1}},
    {CT_TYPE_Q4_0, 32, 18, {0, -1}},    {CT_TYPE_Q4_1, 32, 20, {0, 2}},     {CT_TYPE_Q5_0, 32, 22, {0, -1}},
    {CT_TYPE_Q5_1, 32, 24, {0, 2}},     {CT_TYPE_Q8_0, 32, 34, {0, -1}},    {CT_TYPE_IQ4_NL, 32, 18, {0, -1}},
    {CT_TYPE_Q2_K, 256, 84, {80, 82}},  {CT_TYPE_Q3_K, 256, 110, {108, -1}}, {CT_TYPE_Q4_K, 256, 144, {0, 2}},
    {CT_TYPE_Q5_K, 256, 176, {0, 2}},   {CT_TYPE_Q6_K, 256, 210, {208, -1}}, {CT_TYPE_Q8_K, 256, 292, {-1, -1}},
    {CT_TYPE_IQ4_XS, 256, 136, {0, -1}},
};

/* fp16 scales worth forcing: NaN, +-inf, subnormals, +-0, max, smallest normal */
static const uint16_t special_h[] = {0x7E00, 0x7C01, 0xFE00, 0x7C00, 0xFC00, 0x0001, 0x83FF, 0x0200,
                                     0x0000, 0x8000, 0x7BFF, 0x0400, 0x3C00};

static void test_type(const tcase *tc) {
    const ct_type t = tc->type;
    CHECK(ct_type_can_dequantize(t));
    CHECK(ct_type_block_size(t) == tc->blck && ct_type_size(t) == (size_t)tc->size);
    const int nblocks = tc->blck == 256 ? 600 : tc->blck == 32 ? 3000 : 50003; /* odd: a tail after the 16-wide loops */
    const int64_t n = (int64_t)nblocks * tc->blck;
    const size_t bytes = (size_t)nblocks * (size_t)tc->size;
    uint8_t *raw = malloc(bytes + 1);
    float *out = malloc(sizeof(float) * ((size_t)n + 4));
    CHECK(raw && out);
    if (!raw || !out) goto done;
    uint8_t *src = raw + 1; /* blocks need not be aligned */
    tu_fill_bytes(src, bytes);
    for (int i = 0; i < nblocks; i++) {
        uint8_t *b = src + (size_t)i * (size_t)tc->size;
        const int mode = i % 4; /* 0: random bytes; 1: tame scales; 2, 3: one special scale */
        for (int s = 0; s < 2; s++) {
            const int o = tc->scale_offs[s];
            if (o < 0 || tc->blck == 1 || mode == 0) continue;
            uint16_t h = mode == 1 ? (uint16_t)(0x2000 + tu_rand_below(0x2000)) /* about 2^-7 .. 2 */
                                   : special_h[tu_rand_below((int64_t)(sizeof special_h / sizeof special_h[0]))];
            if (mode == 1 && (tu_rand_u32() & 1)) h |= 0x8000;
            b[o] = (uint8_t)h;
            b[o + 1] = (uint8_t)(h >> 8);
        }
        if (t == CT_TYPE_Q8_K && mode != 0) { /* float d: tame or special */
            const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, 3e38f};
            const float d = mode == 1 ? tu_rand_normal() * 0.01f : specials[tu_rand_below(7)];
            memcpy(b, &d, 4);
        }
    }
    for (int64_t i = 0; i < 4; i++) out[n + i] = 12345.0f;
    CHECK(ct_dequantize_row(t, src, out, n) == CT_OK);
    CHECK_MSG(out[n] == 12345.0f && out[n + 3] == 12345.0f, "%s wrote past n", ct_type_name(t));
    int bad = 0;
    long nan_count = 0;
    for (int i = 0; i < nblocks; i++) {
        const uint8_t *b = src + (size_t)i * (size_t)tc->size;
        for (int j = 0; j < tc->blck; j++) {
            const float want = ref_elem(t, b, j), got = out[(int64_t)i * tc->blck + j];
            nan_count += isnan(want);
            if (!tu_same_f32(got, want) && bad++ < 5) {
                fprintf(stderr, "%s block %d element %d: got %a (%08x), want %a (%08x)\n", ct_type_name(t), i, j,
                        (double)got, tu_f32_bits(got), (double)want, tu_f32_bits(want));
            }
        }
    }
    CHECK_MSG(bad == 0, "%s: %d mismatches", ct_type_name(t), bad);
    /* one block alone gives the same values */
    float one[256];
    CHECK(ct_dequantize_row(t, src + tc->size, one, tc->blck) == CT_OK);
    CHECK(memcmp(one, out + tc->blck, sizeof(float) * (size_t)tc->blck) == 0);
    printf("  %-7s %6d blocks, %ld NaN results\n", ct_type_name(t), nblocks, nan_count);
done:
    free(raw);
    free(out);
}

static void test_errors(void) {
    float out[64];
    uint8_t in[64] = {0};
    CHECK(ct_dequantize_row(CT_TYPE_Q4_0, in, out, 33) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_dequantize_row: n=33 is not a multiple of q4_0's block size 32");
    CHECK(ct_dequantize_row(CT_TYPE_Q4_K, in, out, 32) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "n=32 is not a multiple of q4_K's block size 256");
    CHECK(ct_dequantize_row(CT_TYPE_F16, in, out, -1) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_dequantize_row: n=-1 is negative (type f16)");
    CHECK(ct_dequantize_row(CT_TYPE_Q8_0, in, out, INT64_MIN) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "is negative");
    CHECK(ct_dequantize_row(CT_TYPE_F32, in, out, INT64_MAX) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overflow");
    CHECK(ct_dequantize_row(CT_TYPE_IQ2_XXS, in, out, 256) == CT_UNSUPPORTED);
    CHECK_ERROR(CT_UNSUPPORTED, "ct_dequantize_row: type iq2_xxs (16) cannot be dequantized");
    CHECK(ct_dequantize_row(CT_TYPE_I32, in, out, 4) == CT_UNSUPPORTED);
    CHECK_ERROR(CT_UNSUPPORTED, "i32");
    CHECK(ct_dequantize_row((ct_type)4, in, out, 32) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_dequantize_row: type 4 is a removed type id");
    CHECK(ct_dequantize_row((ct_type)39, in, out, 32) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_dequantize_row: type 39 is not a type id");
    CHECK(ct_dequantize_row((ct_type)-5, in, out, 32) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "type -5 is not a type id");
    CHECK(ct_dequantize_row(CT_TYPE_Q8_0, NULL, out, 32) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_dequantize_row: src is NULL (type q8_0, n=32)");
    CHECK(ct_dequantize_row(CT_TYPE_Q8_0, in, NULL, 32) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_dequantize_row: dst is NULL (type q8_0, n=32)");
    CHECK(ct_dequantize_row(CT_TYPE_Q8_0, NULL, NULL, 0) == CT_OK);

    /* exactly the listed types are dequantizable */
    const int yes[] = {0, 1, 30, 2, 3, 6, 7, 8, 20, 10, 11, 12, 13, 14, 15, 23};
    for (int id = -1; id <= CT_TYPE_COUNT; id++) {
        bool want = false;
        for (size_t k = 0; k < sizeof yes / sizeof yes[0]; k++) want = want || yes[k] == id;
        CHECK_MSG(ct_type_can_dequantize((ct_type)id) == want, "id %d", id);
    }
}

/* Q4_1 / Q5_1 blocks whose x * d + m has two NaN candidates (m NaN with d NaN, or
 * with d infinite and x = 0): every element is the first, x * d, as x86 evaluates
 * the expression written in that order (the OpenCL kernels' rule), at every
 * position of a row of 4 blocks, whatever order the compiler put the add's
 * operands in (gcc's vectorized loop has both). */
static void test_nan_pairs(void) {
    static const uint16_t d_bits[] = {0x7C2A, 0xFE01, 0x7C00, 0xFC00};
    static const uint16_t m_bits[] = {0xFD9F, 0x7E00, 0x7C01};
    /* the NaN this machine makes of 0 * inf (x86: 0xFFC00000) */
    volatile float zero = 0.0f, inf = INFINITY;
    const uint32_t default_nan = tu_f32_bits(zero * inf);
    for (int t = 0; t < 2; t++) {
        const ct_type type = t ? CT_TYPE_Q5_1 : CT_TYPE_Q4_1;
        const size_t bs = t ? 24 : 20, qs_at = t ? 8 : 4;
        for (size_t a = 0; a < sizeof d_bits / sizeof d_bits[0]; a++) {
            for (size_t b = 0; b < sizeof m_bits / sizeof m_bits[0]; b++) {
                uint8_t row[4 * 24];
                tu_fill_bytes(row, sizeof row);
                for (size_t k = 0; k < 4; k++) {
                    uint8_t *blk = row + k * bs;
                    blk[0] = (uint8_t)d_bits[a], blk[1] = (uint8_t)(d_bits[a] >> 8);
                    blk[2] = (uint8_t)m_bits[b], blk[3] = (uint8_t)(m_bits[b] >> 8);
                    blk[qs_at + k] &= 0xF0; /* an element with x = 0 (Q5_1: its high bit too) */
                    if (t) blk[4] &= (uint8_t)~(1u << k);
                }
                float y[128];
                CHECK(ct_dequantize_row(type, row, y, 128) == CT_OK);
                const bool d_nan = (d_bits[a] & 0x3FF) != 0;
                /* fp16 NaN -> float: payload << 13, quieted */
                const uint32_t d_q = ((uint32_t)(d_bits[a] & 0x8000) << 16) | 0x7FC00000u |
                                     ((uint32_t)(d_bits[a] & 0x3FF) << 13);
                const uint32_t m_q = ((uint32_t)(m_bits[b] & 0x8000) << 16) | 0x7FC00000u |
                                     ((uint32_t)(m_bits[b] & 0x3FF) << 13);
                for (int j = 0; j < 128; j++) {
                    const uint8_t *blk = row + (size_t)(j / 32) * bs;
                    const int x = nib32(blk + qs_at, j % 32) | (t ? (int)((u32le(blk + 4) >> (j % 32)) & 1) << 4 : 0);
                    const uint32_t want = d_nan ? d_q : x == 0 ? default_nan : m_q;
                    CHECK_MSG(tu_f32_bits(y[j]) == want, "%s d=%04x m=%04x element %d (x=%d): %08x, want %08x",
                              ct_type_name(type), d_bits[a], m_bits[b], j, x, tu_f32_bits(y[j]), want);
                }
            }
        }
    }
}

int main(void) {
    tu_init("test_dequantize");
    test_nan_pairs();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_type(&cases[i]);
    test_errors();
    return tu_finish();
}

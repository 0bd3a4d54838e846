/* fp16 and bf16 conversion against independent references written here in
 * double arithmetic: ldexp decodes, and nearest-even rounding via nearbyint on
 * an exactly scaled double. */
#include "testutil.h"

#include "core/cpu_features.h"
#include "types/types_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/* ---- references ---- */

static double ref_fp16_decode(uint16_t h) {
    const int e = (h >> 10) & 31, m = h & 1023;
    const double s = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 0) return s * ldexp(m, -24);
    if (e == 31) return m ? NAN : s * INFINITY;
    return s * ldexp(1024 + m, e - 25);
}

static uint16_t ref_fp16_encode(float x) {
    const uint16_t sign = (tu_f32_bits(x) & 0x80000000u) ? 0x8000 : 0;
    if (isnan(x)) return sign | 0x7E00;
    const double a = fabs((double)x);
    if (a >= 65536.0) return sign | 0x7C00; /* also inf */
    if (a < 0x1p-14) {
        const double r = nearbyint(a * 0x1p24); /* exact scaling; RTNE */
        return (uint16_t)(sign | (uint16_t)r);  /* r = 1024 is the smallest normal */
    }
    int k;
    (void)frexp(a, &k);
    const int E = k - 1; /* a in [2^E, 2^(E+1)) */
    const double r = nearbyint(ldexp(a, 10 - E)); /* in [1024, 2048] */
    /* a carry (r = 2048) bumps the exponent; from 65520 up that gives 0x7C00 */
    return (uint16_t)(sign | (uint16_t)(((E + 15) << 10) + (int)r - 1024));
}

static uint16_t ref_bf16_encode(float x) {
    const uint32_t bits = tu_f32_bits(x);
    const uint16_t sign = (bits & 0x80000000u) ? 0x8000 : 0;
    if (isnan(x)) return (uint16_t)((bits >> 16) | 0x0040);
    if (isinf(x)) return sign | 0x7F80;
    const double a = fabs((double)x);
    if (a == 0.0) return sign;
    if (a < 0x1p-126) return (uint16_t)(sign | (uint16_t)nearbyint(a * 0x1p133));
    int k;
    (void)frexp(a, &k);
    const int E = k - 1;
    const double r = nearbyint(ldexp(a, 7 - E)); /* in [128, 256] */
    int v = ((E + 127) << 7) + (int)r - 128;
    if (v > 0x7F80) v = 0x7F80;
    return (uint16_t)(sign | v);
}

/* ---- fp16 ---- */

static void test_fp16_all_patterns(void) {
    int bad = 0;
    for (uint32_t u = 0; u < 65536; u++) {
        const uint16_t h = (uint16_t)u;
        const float f = ct_fp16_to_fp32(h);
        const double ref = ref_fp16_decode(h);
        if (isnan(ref)) {
            /* the reference's decode: payload shifted left by 13, quiet bit set */
            const uint32_t want = ((uint32_t)(h & 0x8000) << 16) | 0x7FC00000u | (uint32_t)(h & 0x3FF) << 13;
            if (tu_f32_bits(f) != want && bad++ < 10) fprintf(stderr, "fp16 %04x -> %08x, want %08x\n", h, tu_f32_bits(f), want);
            const uint16_t back = ct_fp32_to_fp16(f);
            if (back != ((h & 0x8000) | 0x7E00) && bad++ < 10) fprintf(stderr, "NaN %04x -> %04x\n", h, back);
        } else {
            const float want = (float)ref;
            if (tu_f32_bits(f) != tu_f32_bits(want) && bad++ < 10)
                fprintf(stderr, "fp16 %04x -> %a, want %a\n", h, (double)f, (double)want);
            const uint16_t back = ct_fp32_to_fp16(f);
            if (back != h && bad++ < 10) fprintf(stderr, "round trip %04x -> %04x\n", h, back);
        }
    }
    CHECK_MSG(bad == 0, "%d mismatches over all fp16 patterns", bad);
}

static int check_fp16_encode(float x, int *bad) {
    const uint16_t got = ct_fp32_to_fp16(x), want = ref_fp16_encode(x);
    if (got != want) {
        if ((*bad)++ < 10) fprintf(stderr, "fp32 %08x (%a) -> fp16 %04x, want %04x\n", tu_f32_bits(x), (double)x, got, want);
        return 0;
    }
    return 1;
}

static void test_fp16_halfway(void) {
    /* every midpoint between neighbouring halves (exact in float), and one float ulp either side */
    int bad = 0;
    for (uint32_t h = 0; h < 0x7C00; h++) {
        const double lo = ref_fp16_decode((uint16_t)h);
        const double hi = h == 0x7BFF ? 65536.0 : ref_fp16_decode((uint16_t)(h + 1));
        const float mid = (float)((lo + hi) / 2);
        CHECK((double)mid == (lo + hi) / 2);
        for (int s = 0; s < 2; s++) {
            const float sg = s ? -1.0f : 1.0f;
            const uint16_t sb = s ? 0x8000 : 0;
            /* the tie goes to the even pattern (from 0x7BFF: 0x7C00 = inf) */
            const uint16_t even = (uint16_t)(sb | ((h & 1) ? h + 1 : h));
            const uint16_t got = ct_fp32_to_fp16(sg * mid);
            if (got != even && bad++ < 10) fprintf(stderr, "tie %a -> %04x want %04x\n", (double)(sg * mid), got, even);
            check_fp16_encode(sg * mid, &bad);
            const float below = nextafterf(mid, 0.0f), above = nextafterf(mid, INFINITY);
            if (ct_fp32_to_fp16(sg * below) != (sb | h) && bad++ < 10) fprintf(stderr, "below tie %a\n", (double)below);
            if (ct_fp32_to_fp16(sg * above) != (sb | (h + 1)) && bad++ < 10) fprintf(stderr, "above tie %a\n", (double)above);
            check_fp16_encode(sg * below, &bad);
            check_fp16_encode(sg * above, &bad);
        }
    }
    CHECK_MSG(bad == 0, "%d mismatches at fp16 halfway points", bad);
}

static void test_fp16_edges(void) {
    const struct { uint32_t f; uint16_t h; } cases[] = {
        {0x00000000u, 0x0000}, {0x80000000u, 0x8000},              /* +-0 */
        {0x3F800000u, 0x3C00}, {0xBF800000u, 0xBC00},              /* +-1 */
        {0x477FE000u, 0x7BFF},                                     /* 65504, max half */
        {0x477FEFFFu, 0x7BFF},                                     /* just below 65520 */
        {0x477FF000u, 0x7C00}, {0xC77FF000u, 0xFC00},              /* 65520 ties to inf */
        {0x47800000u, 0x7C00},                                     /* 65536 */
        {0x7F7FFFFFu, 0x7C00}, {0xFF7FFFFFu, 0xFC00},              /* FLT_MAX */
        {0x7F800000u, 0x7C00}, {0xFF800000u, 0xFC00},              /* inf */
        {0x33800000u, 0x0001}, {0xB3800000u, 0x8001},              /* 2^-24 */
        {0x33000000u, 0x0000}, {0xB3000000u, 0x8000},              /* 2^-25 ties to even 0 */
        {0x33000001u, 0x0001},                                     /* 2^-25 + tiny */
        {0x32FFFFFFu, 0x0000},                                     /* just below 2^-25 */
        {0x33C00000u, 0x0002},                                     /* 1.5 * 2^-24 ties to 2 */
        {0x34200000u, 0x0002},                                     /* 2.5 * 2^-24 ties to 2 */
        {0x387FC000u, 0x03FF},                                     /* largest subnormal */
        {0x387FE000u, 0x0400},                                     /* its tie rounds up into normal */
        {0x38800000u, 0x0400},                                     /* 2^-14 */
        {0x00000001u, 0x0000}, {0x80000001u, 0x8000},              /* float subnormals */
        {0x007FFFFFu, 0x0000},
        {0x7F800001u, 0x7E00}, {0xFF800001u, 0xFE00},              /* signalling NaNs */
        {0x7FC00000u, 0x7E00}, {0xFFC00000u, 0xFE00},              /* quiet NaNs */
        {0x7FFFFFFFu, 0x7E00}, {0x7F802000u, 0x7E00}, {0xFFFFE000u, 0xFE00},
        {0x3F801000u, 0x3C00},                                     /* 1 + half ulp: tie to even 1 */
        {0x3F803000u, 0x3C02},                                     /* 1 + 1.5 ulp: tie to even 1+2ulp */
        {0x3F801001u, 0x3C01},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const float x = tu_bits_f32(cases[i].f);
        const uint16_t got = ct_fp32_to_fp16(x);
        CHECK_MSG(got == cases[i].h, "fp32 %08x -> %04x, want %04x", cases[i].f, got, cases[i].h);
        CHECK_MSG(ref_fp16_encode(x) == cases[i].h, "reference: fp32 %08x", cases[i].f);
    }
}

static void test_fp16_random(void) {
    int bad = 0;
    for (int i = 0; i < 1000000; i++) check_fp16_encode(tu_bits_f32(tu_rand_u32()), &bad);
    /* exponents around the half range, where uniform bit patterns rarely land */
    for (int i = 0; i < 1000000; i++) {
        const uint32_t u = tu_rand_u32();
        const uint32_t e = 97 + (uint32_t)tu_rand_below(48); /* 2^-30 .. 2^17 */
        check_fp16_encode(tu_bits_f32((u & 0x807FFFFFu) | e << 23), &bad);
    }
    CHECK_MSG(bad == 0, "%d mismatches over random floats", bad);
}

/* ---- bf16 ---- */

static void test_bf16(void) {
    int bad = 0;
    for (uint32_t u = 0; u < 65536; u++) {
        const uint16_t h = (uint16_t)u;
        const float f = ct_bf16_to_fp32(h);
        if (tu_f32_bits(f) != u << 16 && bad++ < 10) fprintf(stderr, "bf16 %04x -> %08x\n", h, tu_f32_bits(f));
        const uint16_t back = ct_fp32_to_bf16(f);
        const uint16_t want = isnan(f) ? (uint16_t)(h | 0x0040) : h;
        if (back != want && bad++ < 10) fprintf(stderr, "bf16 round trip %04x -> %04x\n", h, back);
        /* midpoints to the next pattern of the same sign, and one ulp either side */
        if ((h & 0x7F80) != 0x7F80 && (h & 0x7FFF) != 0x7F7F) {
            const double lo = f, hi = ct_bf16_to_fp32((uint16_t)(h + 1));
            const float mid = (float)((lo + hi) / 2);
            const uint16_t even = (uint16_t)((h & 1) ? h + 1 : h);
            if (ct_fp32_to_bf16(mid) != even && bad++ < 10) fprintf(stderr, "bf16 tie %04x\n", h);
            if (ct_fp32_to_bf16(nextafterf(mid, (float)lo)) != h && bad++ < 10) fprintf(stderr, "bf16 below %04x\n", h);
            if (ct_fp32_to_bf16(nextafterf(mid, (float)hi)) != (uint16_t)(h + 1) && bad++ < 10)
                fprintf(stderr, "bf16 above %04x\n", h);
            if (ref_bf16_encode(mid) != even && bad++ < 10) fprintf(stderr, "bf16 reference tie %04x\n", h);
        }
    }
    for (int i = 0; i < 1000000; i++) {
        const float x = tu_bits_f32(tu_rand_u32());
        const uint16_t got = ct_fp32_to_bf16(x), want = ref_bf16_encode(x);
        if (got != want && bad++ < 10) fprintf(stderr, "fp32 %08x -> bf16 %04x, want %04x\n", tu_f32_bits(x), got, want);
    }
    const struct { uint32_t f; uint16_t h; } cases[] = {
        {0x7F7FFFFFu, 0x7F80}, {0xFF7FFFFFu, 0xFF80}, /* FLT_MAX rounds to inf */
        {0x7F7F7FFFu, 0x7F7F}, {0x7F7F8000u, 0x7F80}, /* just below / at the tie to inf */
        {0x00000001u, 0x0000}, {0x00008000u, 0x0000}, {0x00008001u, 0x0001}, {0x00018000u, 0x0002},
        {0x7F800000u, 0x7F80}, {0x80000000u, 0x8000},
        {0x7F800001u, 0x7FC0}, {0xFF812345u, 0xFFC1}, {0x7FFFFFFFu, 0x7FFF}, /* NaN: truncated, quiet bit on */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const float x = tu_bits_f32(cases[i].f);
        CHECK_MSG(ct_fp32_to_bf16(x) == cases[i].h, "fp32 %08x -> bf16 %04x, want %04x", cases[i].f,
                  ct_fp32_to_bf16(x), cases[i].h);
        CHECK_MSG(ref_bf16_encode(x) == cases[i].h, "reference: fp32 %08x", cases[i].f);
    }
    CHECK_MSG(bad == 0, "%d bf16 mismatches", bad);
}

/* ---- rows ---- */

static void test_rows(void) {
    const int64_t sizes[] = {0, 1, 2, 7, 16, 33, 1000, 4099};
    enum { MAXN = 4099 + 3 };
    float *f = malloc(sizeof(float) * MAXN), *g = malloc(sizeof(float) * MAXN);
    uint16_t *h = malloc(sizeof(uint16_t) * MAXN), *h2 = malloc(sizeof(uint16_t) * MAXN);
    CHECK(f && g && h && h2);
    if (!f || !g || !h || !h2) goto done;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const int64_t n = sizes[si];
        const int off = (int)tu_rand_below(3); /* misaligned starts */
        for (int64_t i = 0; i < n + off; i++) {
            /* mix of plain values, specials and random bit patterns */
            const int k = (int)tu_rand_below(4);
            f[i] = k == 0 ? tu_bits_f32(tu_rand_u32()) : k == 1 ? tu_rand_normal() * 1e-5f : tu_rand_normal() * 1000.0f;
            h[i] = (uint16_t)tu_rand_u32();
        }
        if (n > 3) { f[off] = NAN; f[off + 1] = -INFINITY; f[off + 2] = 65520.0f; }
        int bad = 0;
        CHECK(ct_fp32_to_fp16_row(f + off, h2 + off, n) == CT_OK);
        for (int64_t i = 0; i < n; i++) bad += h2[off + i] != ct_fp32_to_fp16(f[off + i]);
        CHECK(ct_fp16_to_fp32_row(h + off, g + off, n) == CT_OK);
        for (int64_t i = 0; i < n; i++) bad += tu_f32_bits(g[off + i]) != tu_f32_bits(ct_fp16_to_fp32(h[off + i]));
        CHECK(ct_fp32_to_bf16_row(f + off, h2 + off, n) == CT_OK);
        for (int64_t i = 0; i < n; i++) bad += h2[off + i] != ct_fp32_to_bf16(f[off + i]);
        CHECK(ct_bf16_to_fp32_row(h + off, g + off, n) == CT_OK);
        for (int64_t i = 0; i < n; i++) bad += tu_f32_bits(g[off + i]) != tu_f32_bits(ct_bf16_to_fp32(h[off + i]));
        CHECK_MSG(bad == 0, "n=%lld: %d row/scalar mismatches", (long long)n, bad);
    }

    /* errors */
    CHECK(ct_fp32_to_fp16_row(f, h, -1) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_fp32_to_fp16_row: n=-1 is negative");
    CHECK(ct_fp16_to_fp32_row(NULL, f, 4) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_fp16_to_fp32_row: src is NULL with n=4");
    CHECK(ct_fp32_to_bf16_row(f, NULL, 1) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_fp32_to_bf16_row: dst is NULL with n=1");
    CHECK(ct_bf16_to_fp32_row(h, f, INT64_MIN) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_bf16_to_fp32_row: n=");
    /* n = 0 needs no buffers */
    CHECK(ct_fp32_to_fp16_row(NULL, NULL, 0) == CT_OK);
    CHECK(ct_fp16_to_fp32_row(NULL, NULL, 0) == CT_OK);
    CHECK(ct_fp32_to_bf16_row(NULL, NULL, 0) == CT_OK);
    CHECK(ct_bf16_to_fp32_row(NULL, NULL, 0) == CT_OK);
done:
    free(f);
    free(g);
    free(h);
    free(h2);
}

/* ---- AVX2+F16C rows against the portable rows ---- */

/* Every half decoded, and floats around every half's rounding boundaries (the exact
 * midpoints, one ulp either side), subnormals, NaN payloads and random bit patterns
 * encoded: the dispatched rows must give the portable rows' bits. */
static void test_avx2_rows(void) {
    printf("AVX2+F16C %s\n", ct_cpu_has_avx2_f16c() ? "present: comparing with the portable rows" : "absent");
    enum { NH = 65536, NF = 65536 * 4 + 4096 };
    uint16_t *h = malloc(sizeof(uint16_t) * (NF + 1)), *ha = malloc(sizeof(uint16_t) * (NF + 1));
    uint16_t *hb = malloc(sizeof(uint16_t) * (NF + 1));
    float *f = malloc(sizeof(float) * (NF + 1)), *fa = malloc(sizeof(float) * (NF + 1));
    float *fb = malloc(sizeof(float) * (NF + 1));
    CHECK(h && ha && hb && f && fa && fb);
    if (!h || !ha || !hb || !f || !fa || !fb) goto done;
    for (int i = 0; i < NH; i++) h[i + 1] = (uint16_t)i;
    for (int bf = 0; bf < 2; bf++) {
        ct_status (*dec)(const uint16_t *, float *, int64_t) = bf ? ct_bf16_to_fp32_row : ct_fp16_to_fp32_row;
        ct_types_force_portable(true);
        CHECK(dec(h + 1, fa, NH) == CT_OK);
        ct_types_force_portable(false);
        CHECK(dec(h + 1, fb + 1, NH) == CT_OK); /* misaligned destination */
        CHECK_MSG(memcmp(fa, fb + 1, sizeof(float) * NH) == 0, "%s decode: AVX2 and portable differ",
                  bf ? "bf16" : "fp16");
    }
    /* encode inputs: for each half h (non-NaN), its value, the midpoint to the next half, and a ulp either side */
    int64_t n = 0;
    for (int i = 0; i < NH; i++) {
        if ((i & 0x7FFF) >= 0x7C00) continue;
        const float v = ct_fp16_to_fp32((uint16_t)i);
        const float next = (i & 0x7FFF) == 0x7BFF ? (i & 0x8000 ? -65536.0f : 65536.0f)
                                                  : ct_fp16_to_fp32((uint16_t)(i + 1));
        const float mid = v + (next - v) * 0.5f;
        f[1 + n++] = v;
        f[1 + n++] = mid;
        f[1 + n++] = nextafterf(mid, 0.0f);
        f[1 + n++] = nextafterf(mid, 2.0f * mid);
    }
    while (n < NF) {
        const uint32_t r = tu_rand_u32();
        const int k = (int)tu_rand_below(4);
        f[1 + n++] = tu_bits_f32(k == 0 ? r : k == 1 ? (r & 0x807FFFFFu) | 0x7F800000u /* inf, NaN payloads */
                                 : k == 2 ? r & 0x807FFFFFu                           /* subnormals */
                                          : (r & 0x87FFFFFFu) | 0x30000000u);         /* around fp16's range */
    }
    for (int bf = 0; bf < 2; bf++) {
        ct_status (*enc)(const float *, uint16_t *, int64_t) = bf ? ct_fp32_to_bf16_row : ct_fp32_to_fp16_row;
        ct_types_force_portable(true);
        CHECK(enc(f + 1, ha, n) == CT_OK); /* misaligned source */
        ct_types_force_portable(false);
        CHECK(enc(f + 1, hb + 1, n) == CT_OK);
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++)
            if (ha[i] != hb[1 + i]) bad = i;
        CHECK_MSG(bad < 0, "%s encode: AVX2 and portable differ for %08x: %04x vs %04x", bf ? "bf16" : "fp16",
                  bad < 0 ? 0u : tu_f32_bits(f[1 + bad]), bad < 0 ? 0u : ha[bad], bad < 0 ? 0u : hb[1 + bad]);
    }
done:
    ct_types_force_portable(false);
    free(h);
    free(ha);
    free(hb);
    free(f);
    free(fa);
    free(fb);
}

int main(void) {
    tu_init("test_fp16");
    test_fp16_all_patterns();
    test_fp16_halfway();
    test_fp16_edges();
    test_fp16_random();
    test_bf16();
    test_rows();
    test_avx2_rows();
    return tu_finish();
}

/* ct-ops selfcheck: the type table and the formats' round trips. */
#include "ct_ops.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct checker {
    const cto_opts *o;
    int passed, failed;
} checker;

static void check(checker *k, bool ok, const char *name, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void check(checker *k, bool ok, const char *name, const char *fmt, ...) {
    char detail[512] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
    }
    if (ok) k->passed++;
    else k->failed++;
    if (k->o->json) {
        cto_json_rec("check");
        printf(",\"name\":");
        cto_json_str(stdout, name);
        printf(",\"ok\":%s,\"detail\":", ok ? "true" : "false");
        cto_json_str(stdout, detail);
        printf("}\n");
    } else if (!ok || k->o->verbose) {
        printf("  %s: %s%s%s\n", name, ok ? "OK" : "FAIL", detail[0] ? ": " : "", detail);
    }
}

static float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* An independent fp32 -> fp16 in double arithmetic with rint (round to nearest
 * even), to check the library's integer algorithm against. */
static uint16_t ref_fp16(float x) {
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    if (isnan(x)) return sign | 0x7E00;
    double a = fabs((double)x);
    if (a >= 65520.0) return sign | 0x7C00;
    if (a < ldexp(1.0, -14)) return sign | (uint16_t)rint(ldexp(a, 24));
    int e;
    frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    e -= 1;
    double q = rint(ldexp(a, 10 - e)); /* in [1024, 2048] */
    return sign | (uint16_t)(((e + 15) << 10) + (int)q - 1024);
}

static uint16_t ref_bf16(float x) {
    uint32_t u = f32_bits(x);
    if (isnan(x)) return (uint16_t)((u >> 16) | 0x0040);
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs((double)x);
    if (isinf(x)) return sign | 0x7F80;
    if (a < ldexp(1.0, -126)) return sign | (uint16_t)rint(ldexp(a, 133));
    int e;
    frexp(a, &e);
    e -= 1;
    double q = rint(ldexp(a, 7 - e)); /* in [128, 256] */
    uint32_t bits = (uint32_t)(((e + 127) << 7) + (int)q - 128);
    return sign | (uint16_t)(bits >= 0x7F80 ? 0x7F80 : bits);
}

static void check_fp16(checker *k, cto_rng *rng) {
    /* constants of IEEE binary16 */
    static const struct { float x; uint16_t h; } known[] = {
        {0.0f, 0x0000}, {-0.0f, 0x8000}, {1.0f, 0x3C00}, {-2.0f, 0xC000}, {0.5f, 0x3800},
        {65504.0f, 0x7BFF}, {65519.0f, 0x7BFF}, {65520.0f, 0x7C00}, {-65520.0f, 0xFC00},
        {0x1p-14f, 0x0400}, {0x1p-24f, 0x0001}, {0x1p-25f, 0x0000}, {0x1.8p-24f, 0x0002},
        {0x1.002p0f, 0x3C00}, {0x1.006p0f, 0x3C02}, {0x1.003p0f, 0x3C01}, {0x1.0018p0f, 0x3C00}, {0.1f, 0x2E66},
        {FLT_MAX, 0x7C00}, {INFINITY, 0x7C00}, {-INFINITY, 0xFC00}, {0x1p-149f, 0x0000},
        {0x1.ffcp-15f, 0x0400}, {0x1.ff8p-15f, 0x03FF}, {0x1.ff0p-15f, 0x03FE}, {-0x1p-24f, 0x8001},
    };
    int bad = 0;
    char first[160] = "";
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        uint16_t h = ct_fp32_to_fp16(known[i].x);
        if (h != known[i].h || ref_fp16(known[i].x) != known[i].h) {
            if (!bad++)
                snprintf(first, sizeof first, "fp16(%a) = 0x%04X (independent 0x%04X), expected 0x%04X",
                         (double)known[i].x, h, ref_fp16(known[i].x), known[i].h);
        }
    }
    check(k, bad == 0, "fp16 known values", "%s", first);

    uint16_t nan_h = ct_fp32_to_fp16(NAN), nnan_h = ct_fp32_to_fp16(-NAN);
    uint16_t snan_h = ct_fp32_to_fp16(bits_f32(0x7F800001u));
    check(k, nan_h == 0x7E00 && nnan_h == 0xFE00 && snan_h == 0x7E00, "fp16 NaN canonical",
          "NaN -> 0x%04X, -NaN -> 0x%04X, sNaN -> 0x%04X", nan_h, nnan_h, snan_h);

    /* every fp16 pattern: exact to fp32 and back */
    bad = 0;
    first[0] = '\0';
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = ct_fp16_to_fp32((ct_fp16)h);
        bool is_nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF);
        bool ok = is_nan ? isnan(f) && (!signbit(f)) == !(h & 0x8000) : ct_fp32_to_fp16(f) == h && ref_fp16(f) == h;
        if (!ok && !bad++) snprintf(first, sizeof first, "0x%04X -> %a -> 0x%04X", h, (double)f, ct_fp32_to_fp16(f));
    }
    check(k, bad == 0, "fp16 all 65536 patterns round trip", "%d bad%s%s", bad, bad ? ", first " : "", first);

    /* random floats across the whole range and near the fp16 range, against the independent rounding */
    bad = 0;
    first[0] = '\0';
    for (int i = 0; i < 200000; i++) {
        uint32_t u = (uint32_t)cto_rng_u64(rng);
        if (i & 1) u = (u & 0x80000000u) | (0x33000000u + (u & 0x0FFFFFFFu) % 0x0C000000u); /* 2^-25 .. 2^17 */
        float f = bits_f32(u);
        if (isnan(f)) continue;
        uint16_t h = ct_fp32_to_fp16(f), r = ref_fp16(f);
        if (h != r && !bad++) snprintf(first, sizeof first, "fp16(%a) = 0x%04X, expected 0x%04X", (double)f, h, r);
    }
    check(k, bad == 0, "fp16 random values vs independent rounding", "%d bad%s%s", bad, bad ? ", first " : "",
          first);

    /* the row converters agree with the scalar ones */
    enum { N = 1000 };
    float src[N], back[N];
    ct_fp16 row[N];
    for (int i = 0; i < N; i++) src[i] = cto_rng_float(rng, -70000.0f, 70000.0f) * (i % 3 ? 1e-4f : 1.0f);
    bool ok = ct_fp32_to_fp16_row(src, row, N) == CT_OK && ct_fp16_to_fp32_row(row, back, N) == CT_OK;
    for (int i = 0; ok && i < N; i++)
        ok = row[i] == ct_fp32_to_fp16(src[i]) && f32_bits(back[i]) == f32_bits(ct_fp16_to_fp32(row[i]));
    check(k, ok, "fp16 row converters match scalar", NULL);
}

static void check_bf16(checker *k, cto_rng *rng) {
    static const struct { uint32_t x; uint16_t h; } known[] = {
        {0x00000000u, 0x0000}, {0x80000000u, 0x8000}, {0x3F800000u, 0x3F80}, {0x3F808000u, 0x3F80},
        {0x3F818000u, 0x3F82}, {0x3F808001u, 0x3F81}, {0x7F7FFFFFu, 0x7F80}, {0x7F800000u, 0x7F80},
        {0xFF800000u, 0xFF80}, {0x00000001u, 0x0000}, {0x00008000u, 0x0000}, {0x00018000u, 0x0002},
        {0x007FFFFFu, 0x0080}, {0x7FC00000u, 0x7FC0}, {0x7F800001u, 0x7FC0}, {0xFFC00001u, 0xFFC0},
    };
    int bad = 0;
    char first[160] = "";
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        float f = bits_f32(known[i].x);
        uint16_t h = ct_fp32_to_bf16(f);
        if (h != known[i].h || ref_bf16(f) != known[i].h) {
            if (!bad++)
                snprintf(first, sizeof first, "bf16(0x%08X) = 0x%04X (independent 0x%04X), expected 0x%04X",
                         known[i].x, h, ref_bf16(f), known[i].h);
        }
    }
    check(k, bad == 0, "bf16 known values", "%s", first);

    bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = ct_bf16_to_fp32((ct_bf16)h);
        if (f32_bits(f) != h << 16) bad++;
        else if (!isnan(f) && ct_fp32_to_bf16(f) != h) bad++;
    }
    check(k, bad == 0, "bf16 all 65536 patterns exact (bits << 16) and round trip", "%d bad", bad);

    bad = 0;
    first[0] = '\0';
    for (int i = 0; i < 200000; i++) {
        float f = bits_f32((uint32_t)cto_rng_u64(rng));
        uint16_t h = ct_fp32_to_bf16(f), r = ref_bf16(f);
        if (h != r && !bad++) snprintf(first, sizeof first, "bf16(0x%08X) = 0x%04X, expected 0x%04X", f32_bits(f), h, r);
    }
    check(k, bad == 0, "bf16 random values vs independent rounding", "%d bad%s%s", bad, bad ? ", first " : "", first);
}

/* Per-block bound on max |x - y| as a fraction of the block's max |x|, from
 * each format's step (half a step, or a whole step at the clamped end) plus
 * the fp16 rounding of its scales. */
static double block_bound(ct_type t) {
    switch (t) {
    case CT_TYPE_F32: return 0.0;
    case CT_TYPE_F16: return 0x1p-11;
    case CT_TYPE_BF16: return 0x1p-8;
    case CT_TYPE_Q8_0: return 1.0 / 254 + 0x1p-10;
    case CT_TYPE_Q4_0: return 1.0 / 8 + 0x1p-9;
    case CT_TYPE_Q4_1: return 2.0 / 30 + 0x1p-8;
    case CT_TYPE_Q5_0: return 1.0 / 16 + 0x1p-9;
    case CT_TYPE_Q5_1: return 2.0 / 62 + 0x1p-8;
    case CT_TYPE_IQ4_NL: return 0.2; /* the least-squares scale refit loosens the grid bound */
    /* the super-block formats: a step of their levels plus the 6- or 4-bit sub-scales */
    case CT_TYPE_Q8_K: return 1.0 / 254 + 0x1p-20;
    case CT_TYPE_Q6_K: return 0.1; /* the least-squares scale may clip the largest element */
    /* the least-squares search over scale and min may trade the block's extremes for its
     * squared error: up to 0.103 over 2000 seeds (the bytes are ggml's: test_ggml_quants) */
    case CT_TYPE_Q5_K: return 0.15;
    case CT_TYPE_Q4_K: return 2.0 / 15 + 0x1p-5;
    case CT_TYPE_IQ4_XS: return 0.25;
    case CT_TYPE_Q3_K: return 0.4;
    case CT_TYPE_Q2_K: return 0.6;
    default: return 1.0;
    }
}

/* Absolute slack for a tiny block whose fp16 scale is subnormal: the largest
 * quant times the subnormal step 2^-24 (half a step, doubled for margin). */
static double abs_slack(ct_type t) {
    switch (t) {
    case CT_TYPE_F16: return 0x1p-25;
    case CT_TYPE_Q8_0: case CT_TYPE_IQ4_NL: return 127 * 0x1p-24;
    case CT_TYPE_Q4_0: case CT_TYPE_Q4_1: return 16 * 0x1p-24;
    case CT_TYPE_Q5_0: case CT_TYPE_Q5_1: return 32 * 0x1p-24;
    default: return 0.0;
    }
}

/* NMSE bound for uniform data: about step^2/12 over the signal's 1/3, with margin. */
static double nmse_bound(ct_type t) {
    switch (t) {
    case CT_TYPE_F32: return 0.0;
    case CT_TYPE_F16: return 1e-6;
    case CT_TYPE_BF16: return 1e-4;
    case CT_TYPE_Q8_0: return 1e-4;
    case CT_TYPE_Q5_0: return 5e-3;
    case CT_TYPE_Q5_1: return 4e-3;
    case CT_TYPE_Q8_K: return 1e-4;
    case CT_TYPE_Q6_K: return 1e-3;
    case CT_TYPE_Q5_K: return 5e-3;
    case CT_TYPE_Q3_K: return 6e-2;
    case CT_TYPE_Q2_K: return 0.15;
    default: return 2e-2;
    }
}

static void check_quant(checker *k, cto_rng *rng, ct_type t) {
    enum { N = 4096 };
    const char *name = ct_type_name(t);
    char label[96];
    size_t bytes = 0;
    if (ct_row_size(t, N, &bytes) != CT_OK) {
        snprintf(label, sizeof label, "%s row size", name);
        check(k, false, label, "%s", ct_last_error());
        return;
    }
    float *x = cto_xmalloc(sizeof(float) * N), *y = cto_xmalloc(sizeof(float) * N);
    uint8_t *q1 = cto_xmalloc(bytes), *q2 = cto_xmalloc(bytes);
    int64_t blck = ct_type_block_size(t);
    /* blocks of different magnitudes, an all-zero block and a block with one spike */
    for (int i = 0; i < N; i++) {
        int blk = (int)(i / blck);
        float scale = blk % 4 == 0 ? 1.0f : blk % 4 == 1 ? 1e-3f : blk % 4 == 2 ? 100.0f : 0.5f;
        x[i] = blk == 5 ? 0.0f : cto_rng_float(rng, -1.0f, 1.0f) * scale;
    }
    if (blck * 7 < N) x[blck * 6 + 3] = 7.0f;

    ct_status s1 = ct_quantize_row(t, x, q1, N), s2 = ct_quantize_row(t, x, q2, N);
    snprintf(label, sizeof label, "%s quantize twice gives equal bytes", name);
    check(k, s1 == CT_OK && s2 == CT_OK && memcmp(q1, q2, bytes) == 0, label, "%s",
          s1 == CT_OK ? "" : ct_last_error());

    ct_status s3 = ct_dequantize_row(t, q1, y, N);
    double bound = block_bound(t), worst = 0.0, err = 0.0, ref = 0.0;
    int64_t worst_i = -1;
    for (int64_t b0 = 0; s3 == CT_OK && b0 < N; b0 += blck) {
        double amax = 0.0;
        int64_t w = blck > 1 ? blck : 1;
        /* plain types are bounded per element, relative to the element */
        for (int64_t i = b0; i < b0 + w; i++) amax = fmax(amax, fabs((double)x[i]));
        for (int64_t i = b0; i < b0 + w; i++) {
            double d = fabs((double)x[i] - (double)y[i]);
            d = fmax(0.0, d - abs_slack(t));
            double rel = amax > 0 ? d / amax : (d > 0 ? INFINITY : 0.0);
            if (!isfinite(y[i])) rel = INFINITY;
            if (rel > worst) {
                worst = rel;
                worst_i = i;
            }
            err += d * d;
            ref += (double)x[i] * x[i];
        }
    }
    snprintf(label, sizeof label, "%s quantize -> dequantize error bound", name);
    if (s3 != CT_OK)
        check(k, false, label, "ct_dequantize_row: %s", ct_last_error());
    else
        check(k, worst <= bound && err <= nmse_bound(t) * ref, label,
              "max |x-y|/max|block| = %.3g (bound %.3g, at %lld), nmse %.3g (bound %.3g)", worst, bound,
              (long long)worst_i, ref > 0 ? err / ref : 0.0, nmse_bound(t));

    /* all-zero input: zero bytes of value, dequantized back to exact zeros */
    for (int i = 0; i < N; i++) x[i] = 0.0f;
    bool zero_ok = ct_quantize_row(t, x, q1, N) == CT_OK && ct_dequantize_row(t, q1, y, N) == CT_OK;
    for (int i = 0; zero_ok && i < N; i++) zero_ok = y[i] == 0.0f;
    snprintf(label, sizeof label, "%s zeros round trip to zeros", name);
    check(k, zero_ok, label, NULL);

    /* n not a whole number of blocks is refused */
    if (blck > 1) {
        ct_clear_error();
        ct_status st = ct_quantize_row(t, x, q1, blck + 1);
        snprintf(label, sizeof label, "%s partial block refused", name);
        check(k, st == CT_INVALID_ARGUMENT, label, "status %s: %s", ct_status_str(st), ct_last_error());
    }
    free(x);
    free(y);
    free(q1);
    free(q2);
}

/* Formats with a dequantizer and no quantizer: zero blocks read back as zeros. */
static void check_dequant_only(checker *k, ct_type t) {
    int64_t blck = ct_type_block_size(t);
    size_t bsz = ct_type_size(t);
    uint8_t *q = cto_xcalloc(4, bsz);
    float *y = cto_xmalloc(sizeof(float) * (size_t)(4 * blck));
    for (int64_t i = 0; i < 4 * blck; i++) y[i] = 1.0f;
    bool ok = ct_dequantize_row(t, q, y, 4 * blck) == CT_OK;
    for (int64_t i = 0; ok && i < 4 * blck; i++) ok = y[i] == 0.0f;
    char label[96];
    snprintf(label, sizeof label, "%s zero blocks dequantize to zeros", ct_type_name(t));
    check(k, ok, label, "%s", ok ? "" : ct_last_error());
    free(q);
    free(y);
}

int cto_cmd_selfcheck(const cto_opts *o) {
    checker k = {o, 0, 0};
    cto_rng rng;
    uint64_t seed = o->seed_set ? o->seed : (uint64_t)(cto_now() * 1e6);
    cto_rng_seed(&rng, seed);

    if (o->json) {
        cto_json_run("selfcheck");
        printf(",\"seed\":%llu}\n", (unsigned long long)seed);
    }
    else printf("seed: %llu\n%4s %-8s %6s %6s %-9s %-8s %-10s\n", (unsigned long long)seed, "id", "name", "block",
                "bytes", "quantized", "quantize", "dequantize");
    int n_valid = 0, table_bad = 0;
    char table_err[256] = "";
    for (int id = 0; id < CT_TYPE_COUNT; id++) {
        ct_type t = (ct_type)id;
        if (!ct_type_is_valid(t)) {
            if (ct_type_block_size(t) != 0 || ct_type_size(t) != 0) {
                if (!table_bad++) snprintf(table_err, sizeof table_err, "removed id %d has a size", id);
            }
            continue;
        }
        n_valid++;
        const char *name = ct_type_name(t);
        int64_t blck = ct_type_block_size(t);
        size_t bsz = ct_type_size(t), row = 0;
        ct_type back = CT_TYPE_COUNT;
        bool q = ct_type_is_quantized(t), cq = ct_type_can_quantize(t), cd = ct_type_can_dequantize(t);
        if (ct_type_from_name(name, &back) != CT_OK || back != t || blck <= 0 || bsz == 0 ||
            ct_row_size(t, blck, &row) != CT_OK || row != bsz || q != (blck > 1)) {
            if (!table_bad++) snprintf(table_err, sizeof table_err, "type %d (%s) is inconsistent", id, name);
        }
        if (o->json) {
            cto_json_rec("type");
            printf(",\"id\":%d,\"name\":", id);
            cto_json_str(stdout, name);
            printf(",\"block_size\":%lld,\"bytes\":%zu,\"quantized\":%s,\"can_quantize\":%s,\"can_dequantize\":%s}\n",
                   (long long)blck, bsz, q ? "true" : "false", cq ? "true" : "false", cd ? "true" : "false");
        } else {
            printf("%4d %-8s %6lld %6zu %-9s %-8s %-10s\n", id, name, (long long)blck, bsz, q ? "yes" : "no",
                   cq ? "yes" : "no", cd ? "yes" : "no");
        }
    }
    ct_type dummy;
    bool bad_name_refused = ct_type_from_name("no_such_type", &dummy) != CT_OK;
    check(&k, table_bad == 0 && n_valid == 31 && bad_name_refused, "type table consistent", "%d valid types%s%s",
          n_valid, table_err[0] ? "; " : "", table_err);

    check_fp16(&k, &rng);
    check_bf16(&k, &rng);
    for (int id = 0; id < CT_TYPE_COUNT; id++) {
        ct_type t = (ct_type)id;
        if (!ct_type_is_valid(t)) continue;
        if (ct_type_can_quantize(t)) {
            if (!ct_type_can_dequantize(t)) {
                check(&k, false, ct_type_name(t), "can quantize but not dequantize");
                continue;
            }
            check_quant(&k, &rng, t);
        } else if (ct_type_can_dequantize(t) && ct_type_is_quantized(t)) {
            check_dequant_only(&k, t);
        }
    }

    if (o->json) {
        cto_json_rec("summary");
        printf(",\"passed\":%d,\"failed\":%d}\n", k.passed, k.failed);
    }
    else printf("%d passed, %d failed\n", k.passed, k.failed);
    return k.failed ? CTO_EXIT_FAIL : CTO_EXIT_OK;
}

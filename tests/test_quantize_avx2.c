/* The AVX2 block quantizers (src/types/quantize_avx2.c) against the portable ones in
 * quantize.c, byte for byte: millions of random blocks from many distributions (uniform
 * and normal at scales from subnormal to FLT_MAX, elements on and one ulp beside every
 * rounding boundary of each format, all-equal, all-zero and signed-zero blocks, ties in
 * |x|, subnormal scales, range overflow, NaN and inf at every position), rows of every
 * length mod 8 blocks, misaligned source and destination; and sweeps of every float near
 * the boundaries of each format at unit scale, where x*id is x itself. Exits 77 (skipped)
 * where the CPU has no AVX2+F16C. */
#include "testutil.h"

#include "core/cpu_features.h"
#include "types/types_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#define QK 32
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const ct_type qtypes[] = {CT_TYPE_Q8_0, CT_TYPE_Q4_0, CT_TYPE_Q4_1,
                                 CT_TYPE_Q5_0, CT_TYPE_Q5_1, CT_TYPE_IQ4_NL};
static const float kvalues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

static long long blocks_compared[ARRAY_LEN(qtypes)];
static int reported;

static void print_block(const char *what, const uint8_t *b, size_t n) {
    fprintf(stderr, "  %s:", what);
    for (size_t i = 0; i < n; i++) fprintf(stderr, " %02x", b[i]);
    fputc('\n', stderr);
}

/* Quantizes n blocks both ways into misaligned buffers and demands the same bytes and
 * untouched guard bytes. */
static void compare(size_t t, const float *x, int64_t nblocks, uint8_t *a, uint8_t *b, size_t off) {
    const ct_type type = qtypes[t];
    const size_t bs = ct_type_size(type), bytes = (size_t)nblocks * bs;
    memset(a, 0xA5, bytes + off + 1);
    memset(b, 0x5A, bytes + off + 1);
    ct_types_force_portable(true);
    CHECK(ct_quantize_row(type, x, a + off, nblocks * QK) == CT_OK);
    ct_types_force_portable(false);
    CHECK(ct_quantize_row(type, x, b + off, nblocks * QK) == CT_OK);
    blocks_compared[t] += nblocks;
    CHECK(a[off + bytes] == 0xA5 && b[off + bytes] == 0x5A && (off == 0 || b[off - 1] == 0x5A));
    if (memcmp(a + off, b + off, bytes) == 0) return;
    size_t k = 0;
    while (a[off + k] == b[off + k]) k++;
    const size_t blk = k / bs;
    CHECK_MSG(false, "%s: AVX2 and portable bytes differ in block %zu of %lld", ct_type_name(type), blk,
              (long long)nblocks);
    if (reported++ < 8) {
        fprintf(stderr, "  x:");
        for (int j = 0; j < QK; j++) fprintf(stderr, " %a", (double)x[blk * QK + (size_t)j]);
        fputc('\n', stderr);
        print_block("portable", a + off + blk * bs, bs);
        print_block("avx2    ", b + off + blk * bs, bs);
    }
}

static float rand_sign(void) { return tu_rand_below(2) ? 1.0f : -1.0f; }

/* 10^e for e uniform in [lo, hi], as a float (may be subnormal, zero or inf at the ends) */
static float rand_scale(float lo, float hi) { return (float)pow(10.0, (double)tu_rand_uniform(lo, hi)); }

/* v moved k floats up (k > 0) or down, through zero as one point; v finite */
static float step_ulps(float v, int k) {
    const uint32_t u = tu_f32_bits(v);
    int64_t key = u & 0x80000000u ? -(int64_t)(u & 0x7FFFFFFFu) : (int64_t)u;
    key += k;
    return tu_bits_f32(key < 0 ? 0x80000000u | (uint32_t)-key : (uint32_t)key);
}

/* Elements on and within 2 ulps of the rounding boundaries of one format at scale 2^e:
 * the block's extreme fixes d = 2^e exactly, so x*id (or (x - min)*id) is x*2^-e. */
static void boundary_block(float *x, int fmt, int e) {
    const float s = ldexpf(1.0f, e);
    for (int j = 0; j < QK; j++) {
        float t;
        switch (fmt) {
        case 0: t = ((float)tu_rand_below(255) - 127.0f + 0.5f) * rand_sign(); break; /* Q8_0: k + 0.5 */
        case 1: t = (float)tu_rand_below(18) - 8.5f; break;                            /* Q4_0: m - 8.5 */
        case 2: t = (float)tu_rand_below(34) - 16.5f; break;                           /* Q5_0 */
        case 3: t = (float)tu_rand_below(16) + 0.5f; break;                            /* Q4_1: m + 0.5 over min 0 */
        case 4: t = (float)tu_rand_below(32) + 0.5f; break;                            /* Q5_1 */
        default: {                                                                     /* IQ4_NL midpoints and values */
            const int k = (int)tu_rand_below(15);
            t = tu_rand_below(3) ? 0.5f * (kvalues[k] + kvalues[k + 1]) : kvalues[k];
        } break;
        }
        x[j] = step_ulps(t, (int)tu_rand_below(5) - 2) * s;
    }
    switch (fmt) {
    case 0: x[tu_rand_below(QK)] = 127.0f * s * rand_sign(); break;
    case 1: x[tu_rand_below(QK)] = -8.0f * s; break;
    case 2: x[tu_rand_below(QK)] = -16.0f * s; break;
    case 3: x[tu_rand_below(QK)] = 0.0f; x[tu_rand_below(QK)] = 15.0f * s; break;
    case 4: x[tu_rand_below(QK)] = 0.0f; x[tu_rand_below(QK)] = 31.0f * s; break;
    default: x[tu_rand_below(QK)] = -127.0f * s; break;
    }
}

/* Elements whose x*id, with id from the same float operations as the quantizers, lands
 * on or one ulp beside k + 0.5 for a random (not power-of-two) Q8_0 scale. */
static void q8_tie_block(float *x) {
    const float amax = tu_rand_uniform(0.5f, 4.0f) * rand_scale(-20, 20);
    const float d = amax / 127, id = 1.0f / d;
    for (int j = 0; j < QK; j++) {
        const float t = ((float)tu_rand_below(254) - 126.5f);
        x[j] = step_ulps(t / id, (int)tu_rand_below(3) - 1);
        if (!(fabsf(x[j]) <= amax)) x[j] = 0.0f;
    }
    x[tu_rand_below(QK)] = amax * rand_sign();
}

static uint32_t special_bits(void) {
    static const uint32_t s[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFBFFFFFu, 0x7FA00000u,
                                 0x7F800000u, 0xFF800000u};
    return s[tu_rand_below(ARRAY_LEN(s))];
}

/* One block from one of the distributions. */
static void random_block(float *x, int kind) {
    switch (kind) {
    case 0: { /* uniform, subnormal to beyond FLT_MAX (inf, and NaN from inf - inf) */
        const float s = rand_scale(-45, 38.5f);
        for (int j = 0; j < QK; j++) x[j] = tu_rand_uniform(-s, s);
    } break;
    case 1: {
        const float s = rand_scale(-8, 8);
        for (int j = 0; j < QK; j++) x[j] = tu_rand_normal() * s;
    } break;
    case 2: for (int j = 0; j < QK; j++) x[j] = tu_rand_normal(); break;
    case 3: { /* one sign with signed zeros: zero min or max (ReLU-like) */
        const float s = rand_scale(-40, 38), sg = rand_sign();
        for (int j = 0; j < QK; j++)
            x[j] = tu_rand_below(3) ? sg * tu_rand_uniform(0, s) : (tu_rand_below(2) ? 0.0f : -0.0f);
    } break;
    case 4: boundary_block(x, (int)tu_rand_below(6), (int)tu_rand_below(60) - 30); break;
    case 5: boundary_block(x, (int)tu_rand_below(6), (int)tu_rand_below(260) - 140); break; /* 2^-140..2^119 */
    case 6: q8_tie_block(x); break;
    case 7: { /* all equal, all +0 or all -0 */
        const float z = tu_rand_below(2) ? 0.0f : -0.0f;
        const float c = tu_rand_below(4) ? tu_rand_normal() * rand_scale(-40, 38) : z;
        for (int j = 0; j < QK; j++) x[j] = c;
    } break;
    case 8: for (int j = 0; j < QK; j++) x[j] = tu_bits_f32(tu_rand_u32() & 0x807FFFFFu); break; /* subnormals */
    case 9: for (int j = 0; j < QK; j++) x[j] = rand_sign() * FLT_MAX * tu_rand_uniform(0.5f, 1.0f); break;
    case 10: { const float s = rand_scale(-40, -34); /* scales that are subnormal for some formats */
        for (int j = 0; j < QK; j++) x[j] = tu_rand_uniform(-s, s);
    } break;
    case 11: { /* ties in |x|: +-m several times, in random order */
        const float m = tu_rand_uniform(0.5f, 4.0f) * rand_scale(-10, 10);
        for (int j = 0; j < QK; j++) x[j] = tu_rand_uniform(-m, m);
        for (int k = 0; k < 3; k++) x[tu_rand_below(QK)] = m * rand_sign();
    } break;
    case 12: for (int j = 0; j < QK; j++) x[j] = (float)(tu_rand_below(65) - 32) * 0.5f; break; /* halves */
    case 13: { const float s = rand_scale(-16, -14); /* IQ4_NL around max|x| = 1e-15 */
        for (int j = 0; j < QK; j++) x[j] = tu_rand_uniform(-s, s);
        x[tu_rand_below(QK)] = step_ulps(1e-15f, (int)tu_rand_below(5) - 2) * rand_sign();
    } break;
    case 14: for (int j = 0; j < QK; j++) x[j] = tu_bits_f32(tu_rand_u32()); break; /* any bits, NaN included */
    default: { /* a NaN or inf somewhere in an ordinary block */
        const float s = rand_scale(-30, 30);
        for (int j = 0; j < QK; j++) x[j] = tu_rand_normal() * s;
        x[tu_rand_below(QK)] = tu_bits_f32(special_bits());
        if (tu_rand_below(4) == 0) x[tu_rand_below(QK)] = tu_bits_f32(special_bits());
    } break;
    }
}

enum { CHUNK = 4096, NKINDS = 16 };

static void test_random(int chunks) {
    float *x = malloc(sizeof(float) * (CHUNK * QK + 1));
    uint8_t *a = malloc(CHUNK * 34 + 16), *b = malloc(CHUNK * 34 + 16);
    CHECK(x && a && b);
    if (!x || !a || !b) goto done;
    for (int c = 0; c < chunks && tu_failures == 0; c++) {
        float *xs = x + (c & 1); /* misaligned source every other chunk */
        for (int i = 0; i < CHUNK; i++) random_block(xs + (size_t)i * QK, (int)tu_rand_below(NKINDS));
        /* rows of 1..40 blocks cover every group tail; then the chunk as one row */
        for (size_t t = 0; t < ARRAY_LEN(qtypes); t++) {
            int64_t i = 0;
            while (i < CHUNK) {
                int64_t nb = 1 + tu_rand_below(40);
                if (nb > CHUNK - i) nb = CHUNK - i;
                compare(t, xs + i * QK, nb, a, b, (size_t)tu_rand_below(4));
                i += nb;
            }
            compare(t, xs, CHUNK, a, b, 1);
        }
    }
done:
    free(x);
    free(a);
    free(b);
}

/* Every float within `radius` ulps of each boundary t (both signs where `both`), 31 to a
 * block whose first element pins the scale to 2^e, for the formats given by `types`. */
static void sweep(const char *what, const float *bounds, size_t nbounds, int radius, const float *pin, int npin,
                  const size_t *types, size_t ntypes, int e) {
    const size_t per = QK - (size_t)npin;
    const size_t nvals = nbounds * (size_t)(2 * radius + 1);
    const int64_t nb = (int64_t)((nvals + per - 1) / per);
    float *x = malloc(sizeof(float) * (size_t)nb * QK);
    uint8_t *a = malloc((size_t)nb * 34 + 16), *b = malloc((size_t)nb * 34 + 16);
    CHECK(x && a && b);
    if (x && a && b) {
        const float s = ldexpf(1.0f, e);
        size_t v = 0;
        for (int64_t i = 0; i < nb; i++) {
            for (int k = 0; k < npin; k++) x[i * QK + k] = pin[k] * s;
            for (size_t j = (size_t)npin; j < QK; j++, v++) {
                const size_t bi = v / (size_t)(2 * radius + 1) % nbounds;
                const int u = (int)(v % (size_t)(2 * radius + 1)) - radius;
                x[i * QK + (int64_t)j] = step_ulps(bounds[bi], u) * s;
            }
        }
        for (size_t t = 0; t < ntypes; t++) compare(types[t], x, nb, a, b, 0);
        printf("%s sweep at 2^%d: %lld blocks\n", what, e, (long long)nb);
    }
    free(x);
    free(a);
    free(b);
}

static void test_sweeps(void) {
    enum { R = 2048 };
    float bounds[512];
    size_t n;
    static const int exps[] = {0, -20, 17, -126, -133};
    for (size_t ei = 0; ei < ARRAY_LEN(exps); ei++) {
        const int e = exps[ei];
        /* Q8_0: x*id = +-(k + 0.5), pinned by 127 */
        n = 0;
        for (int k = 0; k < 127; k++) {
            bounds[n++] = (float)k + 0.5f;
            bounds[n++] = -(float)k - 0.5f;
        }
        static const float pin8[] = {127.0f};
        static const size_t t8[] = {0};
        sweep("q8_0", bounds, n, R, pin8, 1, t8, 1, e);
        /* Q4_0 and Q5_0: x*id + 8.5 (16.5) = m, pinned by -8 (-16) */
        static const float pin40[] = {-8.0f}, pin50[] = {-16.0f};
        static const size_t t40[] = {1}, t50[] = {3};
        n = 0;
        for (int m = 1; m <= 16; m++) bounds[n++] = (float)m - 8.5f; /* |x| stays below the pin */
        sweep("q4_0", bounds, n, R, pin40, 1, t40, 1, e);
        n = 0;
        for (int m = 1; m <= 32; m++) bounds[n++] = (float)m - 16.5f;
        sweep("q5_0", bounds, n, R, pin50, 1, t50, 1, e);
        /* Q4_1 and Q5_1: (x - 0)*id + 0.5 = m, pinned by min 0 and max 15 (31) */
        static const float pin41[] = {0.0f, 15.0f}, pin51[] = {0.0f, 31.0f};
        static const size_t t41[] = {2}, t51[] = {4};
        n = 0;
        for (int m = 1; m <= 15; m++) bounds[n++] = (float)m - 0.5f;
        sweep("q4_1", bounds, n, R, pin41, 2, t41, 1, e);
        n = 0;
        for (int m = 1; m <= 31; m++) bounds[n++] = (float)m - 0.5f;
        sweep("q5_1", bounds, n, R, pin51, 2, t51, 1, e);
        /* IQ4_NL: id*x = x at the table values, the midpoints and 0, pinned by max -127 */
        static const float pin_nl[] = {-127.0f};
        static const size_t tnl[] = {5};
        n = 0;
        for (int k = 1; k < 16; k++) bounds[n++] = kvalues[k];
        for (int k = 0; k < 15; k++) bounds[n++] = 0.5f * (kvalues[k] + kvalues[k + 1]);
        bounds[n++] = 0.0f;
        bounds[n++] = -126.0f;
        bounds[n++] = 126.0f;
        sweep("iq4_nl", bounds, n, R * 4, pin_nl, 1, tnl, 1, e);
    }
}

/* A NaN, inf or -inf at each position of otherwise ordinary blocks (the portable code takes
 * these blocks), next to finite blocks of the same group. */
static void test_nonfinite_positions(void) {
    static const uint32_t specials[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0x7F800000u, 0xFF800000u};
    enum { NB = 2 * 5 * QK + 3 };
    float *x = malloc(sizeof(float) * NB * QK);
    uint8_t *a = malloc(NB * 34 + 16), *b = malloc(NB * 34 + 16);
    CHECK(x && a && b);
    if (x && a && b) {
        for (int rep = 0; rep < 20; rep++) {
            for (int i = 0; i < NB; i++) random_block(x + i * QK, (int)tu_rand_below(3));
            int i = 0;
            for (size_t s = 0; s < ARRAY_LEN(specials); s++)
                for (int p = 0; p < QK; p++, i += 2) x[i * QK + p] = tu_bits_f32(specials[s]);
            for (size_t t = 0; t < ARRAY_LEN(qtypes); t++) compare(t, x, NB, a, b, (size_t)rep % 3);
        }
    }
    free(x);
    free(a);
    free(b);
}

/* IQ4_NL edge blocks (NaN, inf, sums that overflow: tu_iq4_nl_edge_block) in groups of 8
 * with ordinary blocks, at every group position: both paths give the naive reference's
 * bytes, which follow ggml's `sumq2 > 0 ? sumqx/sumq2 : 0` (a NaN element gives d = +0). */
static void test_iq4nl_edges(void) {
    enum { NB = 8 * TU_IQ4_NL_EDGE_KINDS + 5 };
    float *x = malloc(sizeof(float) * NB * QK);
    uint8_t *a = malloc(NB * 18 + 16), *b = malloc(NB * 18 + 16);
    const size_t t = ARRAY_LEN(qtypes) - 1; /* IQ4_NL */
    int mism = 0;
    CHECK(x && a && b && qtypes[t] == CT_TYPE_IQ4_NL);
    if (x && a && b) {
        for (int rep = 0; rep < 8; rep++) {
            for (int i = 0; i < NB; i++) random_block(x + i * QK, (int)tu_rand_below(3));
            for (int k = 0; k < TU_IQ4_NL_EDGE_KINDS; k++) tu_iq4_nl_edge_block(x + (8 * k + rep) * QK, k);
            compare(t, x, NB, a, b, (size_t)rep % 3);
            const size_t off = (size_t)rep % 3;
            for (int i = 0; i < NB; i++) {
                uint8_t exp[18];
                tu_iq4_nl_naive(x + i * QK, exp);
                if (memcmp(exp, b + off + 18 * i, 18) != 0 && mism++ < 4) {
                    fprintf(stderr, "  iq4_nl block %d of rep %d differs from the naive reference\n", i, rep);
                    print_block("avx2    ", b + off + 18 * i, 18);
                    print_block("expected", exp, 18);
                }
            }
        }
    }
    CHECK_MSG(mism == 0, "%d iq4_nl edge blocks differ from the naive reference (ggml's rule)", mism);
    free(x);
    free(a);
    free(b);
}

int main(void) {
    tu_init("test_quantize_avx2");
    if (!ct_cpu_has_avx2_f16c()) {
        printf("skipped: the CPU has no AVX2+F16C\n");
        return 77;
    }
    test_sweeps();
    test_nonfinite_positions();
    test_iq4nl_edges();
    const char *env = getenv("CT_QUANT_AVX2_CHUNKS");
    test_random(env ? atoi(env) : 256);
    for (size_t t = 0; t < ARRAY_LEN(qtypes); t++)
        printf("%s: %lld blocks compared\n", ct_type_name(qtypes[t]), blocks_compared[t]);
    ct_types_force_portable(false);
    return tu_finish();
}

/*
 * ct_quantize_row against ggml's own reference quantizers (quantize_row_<type>_ref, exported
 * by the pinned build's libggml-base), byte for byte, for the super-block formats Q2_K,
 * Q3_K, Q4_K, Q5_K, Q6_K, Q8_K and IQ4_XS, and for the 32-element formats as a control.
 * Rows: random values of many distributions and magnitudes, and edge rows (all zeros, one
 * non-zero, constant, groups of zeros among others, exact ties, small integers, subnormals,
 * tiny and huge magnitudes, values at ggml's 1e-15 group threshold). No NaN or inf: for
 * those ggml's conversions are undefined behaviour in C (docs/QUANTIZATION.md).
 *
 * Usage: test_ggml_quants [blocks per type and distribution] (default 200).
 * Built only with CT_GGML_BUILD_DIR (ggml/CMakeLists.txt); a ctest test there.
 */
#include "ctensor.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ggml-base exports these (ggml-quants.h, not installed); y is the block array. */
void quantize_row_q2_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q3_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q4_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q5_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q6_K_ref(const float *x, void *y, int64_t k);
void quantize_row_q8_K_ref(const float *x, void *y, int64_t k);
void quantize_row_iq4_xs_ref(const float *x, void *y, int64_t k);
void quantize_row_q4_0_ref(const float *x, void *y, int64_t k);
void quantize_row_q8_0_ref(const float *x, void *y, int64_t k);

typedef void (*ggml_ref_fn)(const float *x, void *y, int64_t k);

static const struct {
    ct_type type;
    ggml_ref_fn ref;
} k_types[] = {
    {CT_TYPE_Q2_K, quantize_row_q2_K_ref}, {CT_TYPE_Q3_K, quantize_row_q3_K_ref},
    {CT_TYPE_Q4_K, quantize_row_q4_K_ref}, {CT_TYPE_Q5_K, quantize_row_q5_K_ref},
    {CT_TYPE_Q6_K, quantize_row_q6_K_ref}, {CT_TYPE_Q8_K, quantize_row_q8_K_ref},
    {CT_TYPE_IQ4_XS, quantize_row_iq4_xs_ref}, {CT_TYPE_Q4_0, quantize_row_q4_0_ref},
    {CT_TYPE_Q8_0, quantize_row_q8_0_ref},
};

enum { QK = 256 };

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static float uni(void) { return (float)((double)(rnd() >> 11) * 0x1p-53 * 2.0 - 1.0); } /* [-1, 1) */
static float gauss(void) {
    double u = ((double)(rnd() >> 11) + 0.5) * 0x1p-53, v = (double)(rnd() >> 11) * 0x1p-53;
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}
static float bits_f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Fills one 256-element block with distribution `kind`; returns the number of kinds. */
enum { N_KINDS = 24 };
static const char *fill(float *x, int kind) {
    const float mag = powf(10.0f, (float)((int)(rnd() % 61) - 30)); /* 1e-30 .. 1e30 */
    switch (kind) {
    case 0: for (int i = 0; i < QK; i++) x[i] = uni(); return "uniform [-1, 1)";
    case 1: for (int i = 0; i < QK; i++) x[i] = gauss(); return "gaussian";
    case 2: for (int i = 0; i < QK; i++) x[i] = gauss() * mag; return "gaussian times 1e-30..1e30";
    case 3: for (int i = 0; i < QK; i++) x[i] = fabsf(uni()) * mag; return "positive";
    case 4: for (int i = 0; i < QK; i++) x[i] = -fabsf(uni()) * mag; return "negative";
    case 5: for (int i = 0; i < QK; i++) x[i] = uni() + 3.0f; return "offset, all positive";
    case 6:
        for (int i = 0; i < QK; i++) x[i] = gauss() * 0.02f;
        for (int k = 0; k < 3; k++) x[rnd() % QK] = uni() * 40.0f;
        return "gaussian with outliers";
    case 7: for (int i = 0; i < QK; i++) x[i] = (float)((int)(rnd() % 33) - 16); return "integers -16..16";
    case 8: for (int i = 0; i < QK; i++) x[i] = (float)((int)(rnd() % 17) - 8) * 0.5f; return "half-integers";
    case 9: for (int i = 0; i < QK; i++) x[i] = (float)((int)(rnd() % 5) - 2); return "integers -2..2";
    case 10: {
        const float v[4] = {1.0f, -1.0f, 0.5f, 0.25f};
        for (int i = 0; i < QK; i++) x[i] = v[rnd() % 4];
        return "four values";
    }
    case 11:
        for (int i = 0; i < QK; i++) x[i] = uni();
        for (int g = 0; g < 16; g++)
            if (rnd() % 2)
                for (int l = 0; l < 16; l++) x[16 * g + l] = 0.0f;
        return "zero groups of 16 among random ones";
    case 12:
        for (int i = 0; i < QK; i++) x[i] = uni() * (float)(1 + (int)(i / 32)) * (i / 32 % 2 ? 1e-3f : 1.0f);
        return "groups of 32 of different magnitude";
    case 13: for (int i = 0; i < QK; i++) x[i] = uni() * 1e-15f; return "at the 1e-15 group threshold";
    case 14: for (int i = 0; i < QK; i++) x[i] = bits_f((uint32_t)(rnd() % 0x800000u) | (rnd() % 2 ? 0x80000000u : 0)); return "subnormals";
    case 15:
        for (int i = 0; i < QK; i++) x[i] = uni() * 1e-38f;
        return "tiny (around FLT_MIN)";
    case 16: for (int i = 0; i < QK; i++) x[i] = uni() * 1e18f; return "huge (1e18)";
    case 17: {
        const float c = uni() * mag;
        for (int i = 0; i < QK; i++) x[i] = c;
        return "constant";
    }
    case 18:
        memset(x, 0, sizeof(float) * QK);
        x[rnd() % QK] = uni() * mag;
        return "one non-zero";
    case 19:
        for (int i = 0; i < QK; i++) x[i] = (rnd() % 8 == 0) ? uni() * mag : 0.0f;
        return "sparse";
    case 20:
        for (int i = 0; i < QK; i++) x[i] = rnd() % 2 ? 0.0f : -0.0f;
        return "signed zeros";
    case 21:
        /* values from a random float bit pattern with a limited exponent range */
        for (int i = 0; i < QK; i++) x[i] = bits_f((uint32_t)(rnd() & 0x80000000u) | (uint32_t)(0x30000000u + rnd() % 0x1E000000u));
        return "random exponents";
    case 22:
        for (int i = 0; i < QK; i++) x[i] = gauss() * (float)FLT_MAX * 1e-3f;
        return "near FLT_MAX / 1000";
    default:
        for (int i = 0; i < QK; i++) x[i] = (float)((int)(rnd() % 9) - 4) * mag;
        return "integers -4..4 times 1e-30..1e30";
    }
}

static double now_s(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_block(const char *who, const uint8_t *b, size_t n) {
    fprintf(stderr, "  %-8s", who);
    for (size_t i = 0; i < n; i++) fprintf(stderr, "%02x%s", b[i], i % 32 == 31 ? "\n          " : "");
    fprintf(stderr, "\n");
}

int main(int argc, char **argv) {
    const long per_kind = argc > 1 ? strtol(argv[1], NULL, 10) : 200;
    if (per_kind <= 0) {
        fprintf(stderr, "usage: test_ggml_quants [blocks per type and distribution]\n");
        return 2;
    }
    const int64_t n = QK * 8; /* rows of 8 blocks */
    float *x = malloc(sizeof(float) * (size_t)n);
    uint8_t *a = malloc(400 * 8), *b = malloc(400 * 8);
    if (!x || !a || !b) return 2;
    long failed = 0, blocks = 0;
    for (size_t t = 0; t < sizeof k_types / sizeof k_types[0]; t++) {
        const ct_type type = k_types[t].type;
        const size_t bs = ct_type_size(type);
        const int64_t blck = ct_type_block_size(type);
        size_t bytes = 0;
        if (ct_row_size(type, n, &bytes) != CT_OK || bytes > 400 * 8) return 2;
        long type_failed = 0, type_blocks = 0;
        double t_ggml = 0, t_ct = 0;
        for (int kind = 0; kind < N_KINDS; kind++) {
            const char *what = "";
            for (long r = 0; r < (per_kind + 7) / 8; r++) {
                for (int k = 0; k < 8; k++) what = fill(x + QK * k, kind);
                /* zeroed first: ggml leaves Q8_K's bsums of an all-zero block as they were */
                memset(a, 0, bytes);
                memset(b, 0, bytes);
                double t0 = now_s();
                k_types[t].ref(x, a, n);
                double t1 = now_s();
                const ct_status st = ct_quantize_row(type, x, b, n);
                t_ggml += t1 - t0;
                t_ct += now_s() - t1;
                if (st != CT_OK) {
                    fprintf(stderr, "%s: ct_quantize_row failed: %s\n", ct_type_name(type), ct_last_error());
                    return 1;
                }
                type_blocks += n / blck;
                if (memcmp(a, b, bytes) == 0) continue;
                for (size_t off = 0; off < bytes; off += bs) {
                    if (memcmp(a + off, b + off, bs) == 0) continue;
                    if (type_failed++ < 3) {
                        fprintf(stderr, "%s, %s: block %zu differs\n", ct_type_name(type), what, off / bs);
                        print_block("ggml", a + off, bs);
                        print_block("ctensor", b + off, bs);
                        const float *xb = x + (off / bs) * (size_t)blck;
                        fprintf(stderr, "  x[0..7] = %a %a %a %a %a %a %a %a\n", xb[0], xb[1], xb[2], xb[3], xb[4],
                                xb[5], xb[6], xb[7]);
                    }
                }
            }
        }
        printf("%-7s %8ld blocks, %ld differ (us a block: ggml %.2f, ctensor %.2f)\n", ct_type_name(type), type_blocks,
               type_failed, 1e6 * t_ggml / (double)type_blocks, 1e6 * t_ct / (double)type_blocks);
        failed += type_failed;
        blocks += type_blocks;
    }
    printf("%ld blocks compared, %ld differ\n", blocks, failed);
    free(x);
    free(a);
    free(b);
    return failed ? 1 : 0;
}

/* A minimal test harness: CHECK macros that count failures and keep going, a
 * seeded random generator (seed printed, CT_TEST_SEED overrides), and helpers
 * for comparing bit patterns. */
#ifndef CT_TESTUTIL_H
#define CT_TESTUTIL_H

#include "ctensor.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern _Atomic int tu_failures;
extern _Atomic int tu_checks;

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        tu_checks++;                                                                       \
        if (!(cond)) {                                                                     \
            tu_failures++;                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);       \
        }                                                                                  \
    } while (0)

#define CHECK_MSG(cond, ...)                                                               \
    do {                                                                                   \
        tu_checks++;                                                                       \
        if (!(cond)) {                                                                     \
            tu_failures++;                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
        }                                                                                  \
    } while (0)

/* Checks that the last call failed with `status` and that ct_last_error()
 * contains `substring`. */
#define CHECK_ERROR(status, substring)                                                     \
    do {                                                                                   \
        tu_checks++;                                                                       \
        if (ct_last_status() != (status) || !strstr(ct_last_error(), (substring))) {       \
            tu_failures++;                                                                 \
            fprintf(stderr, "%s:%d: expected %s with \"%s\", got %s: \"%s\"\n", __FILE__,  \
                    __LINE__, ct_status_str(status), (substring),                          \
                    ct_status_str(ct_last_status()), ct_last_error());                     \
        }                                                                                  \
    } while (0)

/* Prints the seed; call once at the start of main. */
void tu_init(const char *test_name);
/* Prints the summary and returns the exit code for main. */
int tu_finish(void);

uint64_t tu_rand_u64(void);
uint32_t tu_rand_u32(void);
/* Uniform in [lo, hi). */
float tu_rand_uniform(float lo, float hi);
/* Standard normal. */
float tu_rand_normal(void);
/* An integer in [0, n). */
int64_t tu_rand_below(int64_t n);
/* Fills with uniform floats in [lo, hi). */
void tu_fill_uniform(float *x, size_t n, float lo, float hi);
/* Fills with random bytes. */
void tu_fill_bytes(void *p, size_t n);
/* Writes count values of a fixed pattern in [-1, 1] (salt varies it) quantized to block type
 * t into out, so every block is valid and each run and backend gets the same weights;
 * zeros when that fails (out of memory). */
void tu_fill_quantized(ct_type t, void *out, int64_t count, unsigned salt);
/* Whether an OpenCL test runs on dev: every device, or only the one the environment
 * variable CT_TEST_OPENCL_DEVICE names. */
bool tu_opencl_device_selected(const ct_device *dev);
/* The first OpenCL device the OpenCL tests run on (tu_opencl_device_selected), or NULL. */
ct_device *tu_opencl_device(void);
/* The system's page size. */
size_t tu_page_size(void);
/* Runs this program again (/proc/self/exe) with args (NULL-terminated, at most 6) and the
 * environment variable `name` set to value (removed when value is NULL), for what must
 * happen in a fresh process (settings read once, at device discovery) or may crash; CHECKs
 * that it exits 0, a signal or another code being a failure that names `what`. */
void tu_run_self(const char *what, const char *name, const char *value, const char *const *args);

/* One IQ4_NL block of 32 floats, naively, from docs/QUANTIZATION.md (ggml's
 * quantize_row_iq4_nl_ref): weights x^2, d0 = max/-127, nearest table value by a linear
 * scan (ties to the upper value, NaN to 15), sequential float sums, d = sumq2 > 0 ?
 * sumqx/sumq2 : 0 as fp16 (a NaN d as 0x7E00); max|x| < 1e-15 gives d = 0, nibbles 8. */
void tu_iq4_nl_naive(const float *x, uint8_t out[18]);

/* IQ4_NL blocks where ggml's d rule matters (kind 0 .. TU_IQ4_NL_EDGE_KINDS - 1): NaN at
 * several places and with payloads, +inf, -inf, both, inf with NaN, all NaN, NaN among
 * tiny values, and finite blocks whose sums overflow (docs/QUANTIZATION.md); the rest
 * of each block random. */
enum { TU_IQ4_NL_EDGE_KINDS = 20 };
void tu_iq4_nl_edge_block(float *x, int kind);

static inline uint32_t tu_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float tu_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
/* Equal bit patterns, or both NaN. */
static inline bool tu_same_f32(float a, float b) { return tu_f32_bits(a) == tu_f32_bits(b) || (a != a && b != b); }

#endif

#include "testutil.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

_Atomic int tu_failures = 0;
_Atomic int tu_checks = 0;
static const char *tu_name = "test";
/* Atomic so that tests may draw random numbers and CHECK from several threads. */
static _Atomic uint64_t tu_state;

void tu_init(const char *test_name) {
    tu_name = test_name;
    const char *env = getenv("CT_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) ^ (uint64_t)clock() << 20);
    tu_state = seed ? seed : 1;
    printf("%s: seed %llu (set CT_TEST_SEED to repeat)\n", tu_name, (unsigned long long)seed);
}

int tu_finish(void) {
    printf("%s: %d checks, %d failed\n", tu_name, tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}

/* splitmix64: small, fast, good enough for test data */
uint64_t tu_rand_u64(void) {
    uint64_t z = atomic_fetch_add(&tu_state, 0x9E3779B97F4A7C15ull) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t tu_rand_u32(void) { return (uint32_t)(tu_rand_u64() >> 32); }

float tu_rand_uniform(float lo, float hi) {
    double u = (double)(tu_rand_u64() >> 11) * (1.0 / 9007199254740992.0);
    return (float)(lo + (hi - lo) * u);
}

float tu_rand_normal(void) {
    double u1 = ((double)(tu_rand_u64() >> 11) + 1.0) * (1.0 / 9007199254740993.0);
    double u2 = (double)(tu_rand_u64() >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

int64_t tu_rand_below(int64_t n) { return n > 0 ? (int64_t)(tu_rand_u64() % (uint64_t)n) : 0; }

void tu_fill_uniform(float *x, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++) x[i] = tu_rand_uniform(lo, hi);
}

void tu_fill_bytes(void *p, size_t n) {
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)tu_rand_u64();
}

bool tu_opencl_device_selected(const ct_device *dev) {
    const char *only = getenv("CT_TEST_OPENCL_DEVICE");
    return !only || strcmp(only, ct_device_name(dev)) == 0;
}
